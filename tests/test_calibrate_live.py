"""calibrate --live: a small two-host ping-pong on the emulated cluster, fitted in one
command, its raw outputs kept next to the platform; the flags' refusals."""
import json
import subprocess
import sys

import pytest

import hopsim
from hopsim import platforms

from hopsim.calibration.cli import LIVE_SIZES


def _hopsim(*args, cwd):
    return subprocess.run([sys.executable, "-m", "hopsim", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("args, expected", [
    (["--live", "x.txt"], "not both"),
    (["--emulate-cluster", "2", "x.txt"], "--emulate-cluster applies to --live"),
    ([], "give measurement FILES, or --live"),
])
def test_live_flags_are_refused_in_one_line(tmp_path, args, expected):
    (tmp_path / "x.txt").write_text("")
    p = _hopsim("calibrate", *args, "--out", "p.toml", cwd=tmp_path)
    assert p.returncode == 2 and expected in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr
    assert not (tmp_path / "p.toml").exists() and not (tmp_path / "p-live").exists()


def test_calibrate_live_measures_and_fits_in_one_command(tmp_path):
    from test_live_cluster import REASON, leftovers
    if REASON is not None:
        pytest.skip(REASON)
    p = _hopsim("calibrate", "--live", "--emulate-cluster", 2, "--link-rate", "200mbit",
                "--burst", 32768, "--iterations", 3,
                "--out", "emu.toml", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    raw = json.loads((tmp_path / "emu-live" / "result.json").read_text())
    assert raw["live"]["link_rate"] == "200mbit" and raw["ranks"] == 2
    assert raw["parameters"]["sizes"] == LIVE_SIZES and raw["parameters"]["iterations"] == 3
    assert (tmp_path / "emu-live" / "mpirun.cmd").is_file()
    fitted = platforms.load_file(tmp_path / "emu.toml")
    assert "emu-live/result.json" in fitted.provenance["network.latency_us"]
    # The fitted platform reproduces the measured large messages (the cap: 1 MiB at
    # 200 Mbit/s, 25 MB/s, with a 32 KiB burst): the engine on it within 25%.
    big = raw["results"]["rows"][-1]
    sim = hopsim.simulate(fitted, "pingpong", ranks=2, sizes=[big["bytes"]], iterations=3)
    assert sim.results["rows"][0]["latency_us"] == pytest.approx(big["latency_us"], rel=0.25)
    assert big["latency_us"] > big["bytes"] / 40.0   # the cap is in the data: under 40 MB/s
    assert (tmp_path / "emu.xml").is_file() and (tmp_path / "emu.smpi").is_file()
    assert leftovers() == ([], [], [])
