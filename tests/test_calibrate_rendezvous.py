"""The eager/rendezvous switch decided by the joint fit from the cases that show it: a
both-ways exchange, where a rendezvous's handshake waits behind the other direction's
data from one size on (a ping-pong pays one round trip and hides it). The threshold is
screened over every interval between the exchange's sizes (structure._screen)."""
from types import SimpleNamespace as C

import pytest

from hopsim.calibration import structure
from hopsim.calibration.calibrate import calibrate_files
from hopsim.platforms.parse import parse_platform
from hopsim.platforms.platform import Platform


def test_every_interval_between_the_both_ways_sizes_is_a_threshold():
    C_ = lambda w, b, rpn=1: C(workload=w, bytes=b, ranks=2, ranks_per_node=rpn, measured_us=1.0)
    cases = [C_("exchange", b) for b in (0, 1024, 65536, 1024)] + [C_("pingpong", 4096),
                                                                   C_("exchange", 8192, rpn=2)]
    # 64 KiB messages the first rendezvous: 65535, Open MPI's eager limit with its header.
    assert structure.rendezvous_thresholds(cases) == [1023, 65535]
    assert structure.rendezvous_thresholds([C_("pingpong", 4096)]) == []


SIZES = [0, 1024, 4096, 16384, 32768, 65536, 131072, 262144, 524288, 1048576]


RUNS = (("pp.json", "pingpong", dict(iterations=5)), ("ex.json", "exchange", dict(repetitions=3)))


def _decision(text):
    return next(l.strip() for l in text.splitlines() if l.strip().startswith("eager/rendezvous:"))


def test_open_mpis_rendezvous_is_found_from_the_exchange_and_its_first_fragment_told(engine_runs):
    # Rig A's kind: a bucket per direction under a node's in + out capacity. A rank answers
    # its second request once its first message is in: meanwhile one direction idles, and
    # the bucket keeps the other from taking the capacity it leaves (12-20% from 64 KiB).
    truth = Platform(name="t", nodes=2, cores=1, latency_us=4.0, bandwidth_gbps=0.19,
                     bucket_gbps=0.093, bucket_burst_bytes=15000.0, limiter_gbps=0.188,
                     eager_threshold_bytes=65535, rendezvous_first_bytes=65535)
    base = truth.replace(name="b", eager_threshold_bytes=None, rendezvous_first_bytes=0)
    r = calibrate_files(engine_runs(truth, SIZES, RUNS), base=base, joint=True, cap=None)
    assert _decision(r.text).endswith(": rendezvous above 65535 B, first 65535 B with the request")
    fitted = parse_platform(r.toml, "fit")
    assert (fitted.eager_threshold_bytes, fitted.rendezvous_first_bytes) == (65535, 65535)
    assert fitted.limiter_gbps == pytest.approx(0.188, rel=0.05)
    assert "async-small-thresh:65535" in r.smpi_flags


def test_no_rendezvous_where_there_is_none(engine_runs):
    truth = Platform(name="t", nodes=2, cores=1, latency_us=4.0, bandwidth_gbps=0.19,
                     bucket_gbps=0.093, bucket_burst_bytes=15000.0, limiter_gbps=0.188)
    r = calibrate_files(engine_runs(truth, SIZES, RUNS), base=truth.replace(name="b"), joint=True, cap=None)
    assert "eager/rendezvous:" not in r.text or _decision(r.text).endswith("eager only")
    assert parse_platform(r.toml, "fit").eager_threshold_bytes is None
