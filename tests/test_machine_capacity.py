"""calibrate --machine-gbps (calibration/machine_capacity.py): the emulating machine's
capacity read from a number or from live exchanges on uncapped links, applied to the
fitted platform as its backbone, and what it changes reported."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from hopsim.calibration import machine_capacity as mc
from hopsim.errors import InputError
from hopsim.platforms.platform import Platform

ROOT = Path(__file__).resolve().parent.parent
RUNS = ROOT / "docs" / "validation" / "rigs-idle" / "machine-capacity"
IMB = ROOT / "tests" / "data" / "imb"


@pytest.mark.parametrize("nodes, crossing", [
    ([0, 1], 4),            # 2 ranks: each sends both its messages to the other
    ([0, 1, 2, 3], 8),      # one rank per node: every message crosses
    ([0, 0, 1, 1], 4),      # block, 2 per node: 0-3, 1-2, 2-1, 3-0 cross; 0-1, 2-3 do not
    ([0, 1, 0, 1], 8),      # cyclic (--map-by node): every neighbour is on the other node
    ([0, 0, 0, 0], 0),
])
def test_crossing_messages_follow_imb_exchange_ring(nodes, crossing):
    assert mc.crossing_messages(nodes) == crossing


def test_a_committed_uncapped_run_gives_its_node_to_node_rate():
    # 2x1-t1 at 1 MiB: t_avg 1174.54 us; 4 messages of 1048576 B cross per repetition:
    # 4 * 1048576 * 8 bits / 1174.54 us = 28.57 Gbit/s.
    assert mc.gbps_of_run(RUNS / "2x1-t1" / "result.json") == pytest.approx(28.57, abs=0.01)
    # 4 hosts, one rank each (4x1-t1, 1 MiB in 2602.97 us): 8 messages cross: 25.78.
    assert mc.gbps_of_run(RUNS / "4x1-t1" / "result.json") == pytest.approx(25.78, abs=0.01)


def test_files_give_the_median_and_say_which():
    files = [RUNS / f"2x1-t{t}" / "result.json" for t in (1, 2, 3)]
    got = mc.parse(",".join(map(str, files)))
    # 28.57, 24.50, 26.69 Gbit/s: the middle one.
    assert got.gbps == pytest.approx(26.69, abs=0.01)
    assert "median over 3" in got.how and str(files[1]) in got.how


def test_a_number_is_taken_as_given():
    got = mc.parse("26")
    assert got.gbps == 26.0 and got.how == "given by --machine-gbps"


def _live(tmp_path, **changes):
    d = json.loads((RUNS / "2x1-t1" / "result.json").read_text())
    for k, v in changes.items():
        if k == "link_rate":
            d["live"]["link_rate"] = v
        else:
            d[k] = v
    p = tmp_path / "run.json"
    p.write_text(json.dumps(d))
    return str(p)


@pytest.mark.parametrize("text, says", [
    ("0", "above 0"), ("-3", "above 0"), ("inf", "above 0"), ("nan", "above 0"),
    ("no-such-file.json", "is not a file"), (",", "expected a rate"),
])
def test_bad_values_are_one_line_errors(text, says):
    with pytest.raises(InputError, match=says):
        mc.parse(text)


def test_a_capped_run_or_another_workload_is_refused(tmp_path):
    with pytest.raises(InputError, match="--link-rate none"):
        mc.parse(_live(tmp_path, link_rate="200mbit"))
    with pytest.raises(InputError, match="--workload exchange"):
        mc.parse(_live(tmp_path, workload="pingpong"))
    (tmp_path / "x.json").write_text("not json")
    with pytest.raises(InputError, match="not a JSON file"):
        mc.parse(str(tmp_path / "x.json"))


def test_apply_sets_the_backbone_unless_the_fit_has_a_smaller_one():
    p = Platform(name="p", nodes=4, cores=1, latency_us=5.0, bandwidth_gbps=8.0)
    got, line = mc.apply(p, mc.MachineCapacity(26.0, "given by --machine-gbps"))
    assert got.backbone_gbps == 26.0
    assert got.provenance["network.backbone_gbps"].startswith("given by --machine-gbps")
    assert "network.backbone_gbps = 26.0" in line
    small = p.replace(backbone_gbps=10.0)
    kept, line = mc.apply(small, mc.MachineCapacity(26.0, "given by --machine-gbps"))
    assert kept is small and "stays" in line


def _calibrate(tmp_path, *extra):
    out = tmp_path / "fit.toml"
    proc = subprocess.run([sys.executable, "-m", "hopsim", "calibrate",
                           IMB / "IMB-MPI1-p2p-np4-tcp.txt", IMB / "IMB-MPI1-exchange-np2-tcp.txt",
                           "--nodes", "4", "--closed-form", "--out", out, *extra],
                          capture_output=True, text=True, timeout=300)
    return proc, out


def test_calibrate_writes_it_and_reports_what_it_moves(tmp_path):
    # A machine far slower than these runs' links binds most of their cases; one far
    # faster binds none, and the report says why.
    proc, out = _calibrate(tmp_path, "--machine-gbps", "0.3")
    assert proc.returncode == 0, proc.stderr
    text = out.read_text()
    assert "\nbackbone_gbps = 0.3\n" in text
    moved = [l for l in proc.stdout.splitlines() if "on the fitted files" in l]
    assert moved and " moves 0 of " not in moved[0]
    proc, out = _calibrate(tmp_path, "--machine-gbps", "500")
    assert proc.returncode == 0, proc.stderr
    assert "moves 0 of their" in proc.stdout and "never reach it" in proc.stdout
    assert "\nbackbone_gbps = 500.0\n" in out.read_text()
    # Not listed as kept from defaults: it was given.
    kept = [l for l in proc.stdout.splitlines() if "kept from" in l][0]
    assert "network.backbone_gbps" not in kept


def test_calibrate_without_it_writes_no_backbone(tmp_path):
    proc, out = _calibrate(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "\nbackbone_gbps = 0.0\n" in out.read_text()
    assert "machine's capacity" not in proc.stdout


def test_a_bad_value_stops_calibrate_before_anything_is_written(tmp_path):
    proc, out = _calibrate(tmp_path, "--machine-gbps", str(tmp_path / "missing.json"))
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "--machine-gbps" in proc.stderr
    assert "Traceback" not in proc.stderr and not out.exists()


def test_leave_one_out_predicts_each_file_with_the_machine_in_place():
    from types import SimpleNamespace

    from hopsim.calibration.cli import _cross_validate

    files = [str(IMB / "IMB-MPI1-p2p-np4-tcp.txt"), str(IMB / "IMB-MPI1-exchange-np2-tcp.txt")]
    args = SimpleNamespace(leave_one_out=True, ranks_per_node=None, placement=None)
    medians = {}
    for x in (None, mc.MachineCapacity(0.3, "given by --machine-gbps")):
        kw = dict(nodes=4, joint=False, machine=x, progress=lambda m: None)
        table = _cross_validate(args, files, kw)
        medians[x] = [p.median_abs_error_pct for p in table.predictions]
    # A machine far slower than these links moves each held-out file's prediction.
    (none, slow), = [tuple(medians.values())]
    assert len(none) == len(slow) == 2 and all(a != b for a, b in zip(none, slow))
