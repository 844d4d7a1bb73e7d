"""The joint fit with the engine in the loop (calibration/joint.py, structure.py,
determine.py, holdout.py): it recovers known parameters from the engine's own outputs,
decides mechanisms the data can decide, says what they cannot, and cross-validates.

The measurement files are hopsim JSON written by `hopsim.simulate` on a known platform,
so the truth is known exactly and every difference is the fit's.
"""
import json
import math
import subprocess
import sys

import numpy as np
import pytest

from hopsim import platforms
from hopsim.calibration.calibrate import calibrate_files
from hopsim.calibration.joint import F_SCALE, JointFit, fit_joint, weights
from hopsim.calibration.parsers import parse_file
from hopsim.calibration.structure import BIC_MARGIN, decide
from hopsim.calibration.validate import cases_of
from hopsim.platforms.platform import Platform
from simulated_runs import write_run

# A known platform with a token bucket and a per-node NIC message cost.
TRUTH = Platform(name="truth", nodes=4, cores=2, latency_us=20.0, bandwidth_gbps=2.0,
                 bucket_gbps=0.5, bucket_burst_bytes=100000.0, nic_message_us=3.0)
PP_SIZES = [0, 1000, 4000, 16000, 64000, 150000, 300000, 600000, 1000000]
EX_SIZES = [0, 1000, 10000, 100000]


_write = write_run


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("truth")
    pp = _write(d, "pp.json", TRUTH, "pingpong", ranks=2, sizes=PP_SIZES, iterations=10)
    ex2 = _write(d, "ex-4x2.json", TRUTH, "exchange", ranks=4, ranks_per_node=2, sizes=EX_SIZES,
                 repetitions=10)
    ex1 = _write(d, "ex-4x1.json", TRUTH, "exchange", ranks=4, ranks_per_node=1, sizes=EX_SIZES,
                 repetitions=10)
    return {"pp": pp, "ex2": ex2, "ex1": ex1}


def _cases(paths):
    return cases_of([m for f in paths for m in parse_file(f)])[0]


def test_joint_fit_recovers_known_parameters_from_a_wrong_start(files):
    # Start 40% off in every free parameter: only the engine-in-the-loop fit brings them back.
    cases = _cases([files["pp"], files["ex2"]])
    start = TRUTH.replace(latency_us=28.0, bandwidth_gbps=1.2, bucket_gbps=0.7,
                          bucket_burst_bytes=60000.0, nic_message_us=4.2)
    free = ["latency_us", "bandwidth_gbps", "bucket_gbps", "bucket_burst_bytes", "nic_message_us"]
    j = fit_joint(start, cases, free, cap=None, max_nfev=40)
    p = j.platform
    assert p.latency_us == pytest.approx(20.0, rel=0.02)
    assert p.bandwidth_gbps == pytest.approx(2.0, rel=0.02)
    assert p.bucket_gbps == pytest.approx(0.5, rel=0.02)
    assert p.bucket_burst_bytes == pytest.approx(100000.0, rel=0.05)
    assert p.nic_message_us == pytest.approx(3.0, rel=0.05)
    assert j.median_abs_error_pct() < 0.5
    assert j.undetermined == []


def test_calibrate_joint_recovers_the_platform_and_decides_its_mechanisms(files):
    r = calibrate_files([files["pp"], files["ex2"]], nodes=4, joint=True, cap=None)
    p = r.fit.platform
    assert p.latency_us == pytest.approx(20.0, rel=0.03)
    assert p.bucket_gbps == pytest.approx(0.5, rel=0.03)
    assert p.nic_message_us == pytest.approx(3.0, rel=0.1)
    text = r.text
    # Decided with evidence, not left undecided.
    bucket = next(l for l in text.splitlines() if l.strip().startswith("token bucket:"))
    assert "cases they move apart: token bucket (BIC" in bucket and "undecided" not in bucket
    line = next(l for l in text.splitlines() if l.strip().startswith("NIC message cost:"))
    assert line.rstrip().endswith(": per-node NIC cost")
    # Provenance: the joint fit, its files and the SE, for a fitted value; the decision
    # with its BIC for a mechanism's key.
    prov = p.provenance
    assert "joint fit" in prov["network.bucket_gbps"] and "relative SE" in prov["network.bucket_gbps"]
    assert files["ex2"] in prov["network.nic_message_us"]
    assert "structure: NIC message cost" in prov["network.nic_message_us"] or \
        "structure" in prov["network.bucket_burst_bytes"]


def test_a_parameter_no_case_sees_is_reported_not_determined(files):
    # One rank per node on both sides: an intra-node rate never enters these cases.
    cases = _cases([files["pp"]])
    start = TRUTH.replace(intra_bandwidth_gbps=50.0, intra_latency_us=0.5)
    j = fit_joint(start, cases, ["latency_us", "intra_bandwidth_gbps"], cap=None, max_nfev=5)
    assert "intra_bandwidth_gbps" in j.undetermined
    assert math.isinf(j.se_rel["intra_bandwidth_gbps"])
    assert "latency_us" not in j.undetermined


def test_undetermined_parameter_left_at_base_with_the_reason(files, tmp_path):
    base = TRUTH.replace(name="b", nic_message_us=1.5)
    # A ping-pong alone (one rank per node) cannot separate the NIC cost from the
    # latency; the structure step offers no NIC alternative and --base's stays.
    r = calibrate_files([files["pp"]], base=base, nodes=4, joint=True, cap=None)
    p = r.fit.platform
    assert p.nic_message_us == 1.5
    assert not any(l.strip().startswith("NIC message cost:") for l in r.text.splitlines())


def test_bic_and_weights_by_hand():
    # Two files, one with 3 cases and one with 1: weights sqrt(n / (F n_f)).
    class C:
        def __init__(self, f):
            self.file = f
    w = weights([C("a"), C("a"), C("a"), C("b")])
    assert w == pytest.approx([math.sqrt(4 / 6)] * 3 + [math.sqrt(2)])
    # Residuals small against the soft_l1 scale: the robust cost is ~ RSS / 2.
    res = np.array([0.001, -0.002, 0.0, 0.002])
    z = (res / F_SCALE) ** 2
    cost = float(0.5 * F_SCALE ** 2 * np.sum(2 * (np.sqrt(1 + z) - 1)))
    j = JointFit(TRUTH, ["latency_us"], [], res, cost)
    assert 2 * cost == pytest.approx(9e-6, rel=1e-3)
    # Laplace: BIC = 2 n ln(mean |r|) + k ln n; mean |r| = 0.005 / 4, n = 4, k = 1.
    assert j.bic == pytest.approx(8 * math.log(0.00125) + math.log(4), rel=1e-9)
    assert j.aic == pytest.approx(8 * math.log(0.00125) + 2, rel=1e-9)
    # Where residuals are large the evidence grows with their mean, not its square root:
    # a fit missing by 30% everywhere against one within 5% over 20 cases, 2 parameters
    # apart, is 2 x 20 x ln 6 - 2 ln 20 = 65.7 worse.
    far = JointFit(TRUTH, ["latency_us"], [], np.full(20, 0.3), 0.0)
    near = JointFit(TRUTH, ["latency_us", "bucket_gbps", "bucket_burst_bytes"], [],
                    np.full(20, -0.05), 0.0)
    assert far.bic - near.bic == pytest.approx(40 * math.log(6) - 2 * math.log(20), rel=1e-9)


def test_structure_undecided_when_the_data_cannot_tell(files):
    # Two ranks only: per-connection and per-link pacing give the same ping-pong when
    # every message is paced, so the pacing decision is left as --base has it.
    cases = _cases([files["pp"]])
    start = TRUTH.replace(nic_message_us=0.0)
    base = Platform(name="b", nodes=4, cores=2, latency_us=1.0, bandwidth_gbps=1.0)
    sf = decide(start, base, cases, cap=None, max_nfev=6)
    pacing = next(d for d in sf.decisions if d.mechanism == "pacing")
    (_, a), (_, b) = pacing.fits
    if abs(a.bic - b.bic) < BIC_MARGIN:
        assert pacing.undecided and pacing.chosen == "per-link"
        assert "undecided" in pacing.line()


def _hopsim(*args, cwd):
    return subprocess.run([sys.executable, "-m", "hopsim", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True)


def test_cli_holdout_prints_measured_vs_predicted_and_records_it(files, tmp_path):
    out = tmp_path / "fit.toml"
    p = _hopsim("calibrate", files["pp"], files["ex2"], "--nodes", 4, "--holdout", files["ex1"],
                "--out", out, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    # The threshold was screened (a 2-per-node exchange, no --eager-limit): the user is told
    # what gives Open MPI's own.
    assert "the threshold is screened from the data" in p.stderr
    assert "--eager-limit 65480 gives its own" in p.stderr
    assert "held out: measured vs predicted" in p.stdout
    assert "median over files" in p.stdout
    loaded = platforms.load_file(out)
    assert files["ex1"] in loaded.provenance["validation.holdout"]
    # The engine's own outputs, held out, are predicted closely by a fit of the same engine.
    row = next(l for l in p.stdout.splitlines() if l.strip().startswith(files["ex1"]))
    assert float(row.split()[-1]) < 2.0


def test_cli_leave_one_out_table(files, tmp_path):
    out = tmp_path / "fit.toml"
    base = tmp_path / "base.toml"
    base.write_text('name = "b"\n[nodes]\ncount = 4\ncores = 2\n[network]\nlatency_us = 20.0\n'
                    'bandwidth_gbps = 2.0\n')
    p = _hopsim("calibrate", files["pp"], files["ex2"], "--base", base, "--leave-one-out",
                "--fit-iterations", 10, "--out", out, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "leave one file out" in p.stdout
    assert all(any(l.strip().startswith(f) for l in p.stdout.splitlines())
               for f in (files["pp"], files["ex2"]))
    assert "validation.leave_one_out" in out.read_text()


@pytest.mark.parametrize("args, message", [
    (["--holdout", "{pp}"], "every file is held out"),
    (["--closed-form", "--holdout", "{ex1}"], "need the joint fit"),
    (["--closed-form", "--eager-limit", "65480"], "need the joint fit"),
    (["--eager-limit", "-1"], "--eager-limit"),
    (["--eager-limit", "64k"], "--eager-limit"),
    (["--leave-one-out"], "two FILES"),
    # Read before the fit: the one line comes with no fit's progress before it.
    (["--holdout", "{bad}"], "recognised none"),
    (["--holdout", "{ex1}", "{missing}"], "cannot read measurement file"),
])
def test_cli_cross_validation_errors_exit_2_and_write_nothing(files, tmp_path, args, message):
    (tmp_path.parent / "bad.txt").write_text("not a benchmark's output\n")
    names = {**files, "bad": tmp_path.parent / "bad.txt", "missing": tmp_path.parent / "no-such.txt"}
    args = [str(a).format(**names) for a in args]
    p = _hopsim("calibrate", files["pp"], *args, "--out", tmp_path / "x.toml", cwd=tmp_path)
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert message in p.stderr
    assert list(tmp_path.iterdir()) == []


def test_files_of_different_tools_are_not_trials_for_the_noise_fit():
    # osu_latency and two NetPIPE versions differ by their own overheads: three files,
    # but at most two of one tool, so no noise is fitted (it was, from their offsets).
    from pathlib import Path
    data = Path(__file__).resolve().parent / "data"
    r = calibrate_files([str(data / "osu" / "osu_latency-7.4-tcp.txt"),
                         str(data / "netpipe" / "np37-tcp.out"), str(data / "netpipe" / "np5-tcp.out")],
                        ranks_per_node=1)
    assert "noise" in dict(r.fit.skipped)
    assert r.fit.platform.noise_scope == "off"


def test_the_joint_fit_takes_each_trials_delay_off_before_fitting(tmp_path):
    # Three ping-pong trials of one wire, each run delayed as a new pair of hosts would be:
    # latencies 20, 25 and 30 us. The noise fitter models the delays over the fastest trial
    # (5 and 10 us) and puts the latency at the fastest trial; the joint fit must then see
    # every trial less its delay, i.e. three copies of the 20 us line, and keep 20 us
    # (fitting the trials as measured would pull the latency to about their mean, 25 us).
    base = Platform(name="wire", nodes=2, cores=1, latency_us=20.0, bandwidth_gbps=2.0)
    paths = [_write(tmp_path, f"pp-t{i}.json", base.replace(latency_us=lat), "pingpong",
                    ranks=2, sizes=PP_SIZES, iterations=2)
             for i, lat in enumerate((20.0, 25.0, 30.0), 1)]
    p = calibrate_files(paths, joint=True, cap=None).fit.platform
    assert p.noise_scope == "run"
    assert p.latency_us == pytest.approx(20.0, abs=0.2)
    assert p.bandwidth_gbps == pytest.approx(2.0, rel=0.02)


def test_a_free_value_at_zero_is_named_when_the_fit_refuses_it():
    # The joint fit moves log-parameters: a free value of 0 cannot start; the message
    # names it (pass_us is 0 by default, latency_us is not).
    with pytest.raises(ValueError, match=r"must start above 0: \['pass_us'\]"):
        fit_joint(Platform(name="z", nodes=2, cores=1, latency_us=1.0, bandwidth_gbps=1.0), [],
                  ["latency_us", "pass_us"])


def test_cli_eager_limit_is_the_only_threshold_the_fit_weighs(files, tmp_path):
    out = tmp_path / "fit.toml"
    p = _hopsim("calibrate", files["pp"], files["ex1"], "--base", "two-nodes", "--nodes", 4,
                "--eager-limit", 50000, "--fit-iterations", 10, "--out", out, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    line = next(l for l in p.stdout.splitlines() if l.strip().startswith("eager/rendezvous ("))
    assert "as given by --eager-limit" in line and "host.eager_threshold_bytes" in out.read_text()
    assert "screened from the data" not in p.stderr
    thresholds = {w for w in line.replace(",", " ").split() if w.isdigit() and int(w) > 1000}
    assert thresholds == {"50000"}, line


def test_live_runs_on_an_emulated_cluster_are_given_open_mpis_tcp_limit():
    # hopsim runs Open MPI over TCP there (btl tcp,vader,self), so its limit is known;
    # on a real cluster (a hostfile) or from files, the transport is not: screened.
    from argparse import Namespace

    from hopsim.calibration.cli import eager_limit_of

    live = dict(eager_limit=None, live=True, emulate_cluster=3, closed_form=False)
    given = eager_limit_of(Namespace(**live), {})
    assert given["eager_limit"] == 65480 and "emulated hosts" in given["eager_limit_from"]
    assert eager_limit_of(Namespace(**live), {"OMPI_MCA_btl_tcp_eager_limit": "4194304"}) \
        == {"eager_limit": None}
    assert eager_limit_of(Namespace(**{**live, "emulate_cluster": None}), {}) == {"eager_limit": None}
    assert eager_limit_of(Namespace(**{**live, "live": False}), {}) == {"eager_limit": None}
    assert eager_limit_of(Namespace(**{**live, "closed_form": True}), {}) == {"eager_limit": None}
    assert eager_limit_of(Namespace(**{**live, "eager_limit": 4000}), {}) == {"eager_limit": 4000}


def test_every_bound_of_the_joint_fit_is_a_value_the_platform_file_takes():
    # H's fit with its 2x2 files once stopped at nic_message_us = 0.00074 us, under the
    # platform's 1 ns minimum, and failed after half an hour: each bound, both ends, must
    # pass the platform's own check.
    from hopsim import bounds
    from hopsim.calibration import joint

    for field_, (lo, hi) in joint.BOUNDS.items():
        key = joint.key(field_)
        for value in (lo, hi):
            bounds.check(key, float(value), key)


@pytest.mark.parametrize("truth_h, fitted", [(120.0, 120.0), (400.0, 2 * 66 + 32)])
def test_a_buckets_header_charge_is_fitted_up_to_one_packets_headers_each_way(tmp_path, truth_h,
                                                                            fitted):
    # A small bucket that small messages drain: their headers show. A charge within one
    # packet's headers each way plus Open MPI's (164 B) is recovered; more is a per-message
    # CPU cost, not bytes, and the fit stops at the headers' bound (rig O's 2-host files
    # had taken 429 B).
    truth = TRUTH.replace(bucket_burst_bytes=5000.0, bucket_message_bytes=truth_h)
    pp = _write(tmp_path, "pp.json", truth, "pingpong", ranks=2,
                sizes=[0, 64, 256, 1000, 4000, 16000, 64000], iterations=50)
    start = truth.replace(bucket_message_bytes=132.0)
    j = fit_joint(start, _cases([pp]), ["bucket_message_bytes"], cap=None, max_nfev=20)
    assert j.platform.bucket_message_bytes == pytest.approx(fitted, rel=0.03)
