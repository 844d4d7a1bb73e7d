"""The gap between a rank's sends (LogGP's g, `host.gap_us`), decided and fitted by the
joint fit from a stream of small messages (osu_bw), which a ping-pong alone cannot tell
from the latency. The files are the engine's own outputs on a known platform."""
import pytest

import hopsim
from hopsim.calibration.calibrate import calibrate_files
from hopsim.platforms.parse import parse_platform
from hopsim.platforms.platform import Platform

SIZES = [1, 8, 64, 512, 4096, 32768, 262144, 1048576]


def _files(tmp_path, truth):
    out = []
    for name, wl, params in (("pp.json", "pingpong", dict(iterations=5)),
                             ("bw.json", "bandwidth", dict(iterations=3))):
        r = hopsim.simulate(truth, wl, ranks=2, sizes=SIZES, **params)
        (tmp_path / name).write_text(r.to_json() + "\n")
        out.append(str(tmp_path / name))
    return out


def _decision(text):
    return next(l.strip() for l in text.splitlines() if l.strip().startswith("gap between sends:"))


def test_a_gap_is_decided_and_recovered_from_a_small_message_stream(tmp_path):
    truth = Platform(name="t", nodes=2, cores=1, latency_us=5.0, bandwidth_gbps=10.0, gap_us=2.5)
    base = truth.replace(name="b", gap_us=0.0)
    r = calibrate_files(_files(tmp_path, truth), base=base, joint=True, cap=None)
    assert _decision(r.text).endswith(": per-message gap")
    fitted = parse_platform(r.toml, "fit")
    assert fitted.gap_us == pytest.approx(2.5, rel=0.05)
    assert fitted.latency_us == pytest.approx(5.0, rel=0.05)


def test_no_gap_is_found_where_there_is_none(tmp_path):
    truth = Platform(name="t", nodes=2, cores=1, latency_us=5.0, bandwidth_gbps=10.0)
    r = calibrate_files(_files(tmp_path, truth), base=truth.replace(name="b"), joint=True, cap=None)
    assert not _decision(r.text).endswith(": per-message gap")
    assert parse_platform(r.toml, "fit").gap_us == 0.0
