"""The gce and azure-econome reproductions: their mechanics against values derived by
hand from the presets and the model's rules (not against the published figures the
presets were fitted to, which would check nothing), and the calibration pieces behind
the azure-g5 / g5k-econome presets (an IMB rate-only file, calibrate --hold)."""
from __future__ import annotations

import math
import statistics

import pytest

from hopsim import platforms
from hopsim.calibration.calibrate import calibrate_files
from hopsim.calibration.validate import cases_of
from hopsim.calibration.parsers import parse_text
from hopsim.errors import InputError
from hopsim.platforms.platform import Platform
from hopsim.scenarios.reproductions import azure_econome, gce
from hopsim.scenarios.study import Study


# --- gce ---------------------------------------------------------------------------------

def test_gce_reads_the_published_trials_from_the_preset_data():
    # platforms.md's table, typed again here.
    assert gce.published("n1-standard-1") == [183.12, 172.57, 169.90]
    assert gce.published("n1-highcpu-4") == [205.00, 176.11, 159.95]


def test_gce_expected_mean_is_latency_plus_the_lognormal_mean():
    p = Platform(name="x", nodes=2, cores=1, latency_us=100.0, bandwidth_gbps=1.0,
                 noise_scope="run", noise_median_us=10.0, noise_sigma=0.5)
    # 100 + 10 * e^(0.5^2 / 2) = 100 + 10 * 1.1331485 (by hand)
    assert gce.expected_mean(p) == pytest.approx(111.331485, abs=1e-5)


def test_gce_simulated_trials_track_the_presets_noise_model(tmp_path):
    study = Study("gce", "t", tmp_path, seed=3)
    p = study.platform("gce-n1-highcpu-2")
    trials = gce.simulate_trials(study, "n1-highcpu-2", p, 300)
    assert len(set(trials)) == 300                  # every trial its own draw
    assert min(trials) >= p.latency_us              # the noise is a delay, never a gain
    # Lognormal mean and SD from the preset's median and sigma, by hand:
    mean = p.latency_us + p.noise_median_us * math.exp(p.noise_sigma ** 2 / 2)
    sd = p.noise_median_us * math.exp(p.noise_sigma ** 2 / 2) * math.sqrt(
        math.exp(p.noise_sigma ** 2) - 1)
    # 300 trials: the sample mean's standard error is sd / sqrt(300); allow 4 of them.
    assert statistics.fmean(trials) == pytest.approx(mean, abs=4 * sd / math.sqrt(300))
    assert statistics.stdev(trials) == pytest.approx(sd, rel=0.25)


def test_gce_trials_follow_the_seed(tmp_path):
    a, b = Study("gce", "t", tmp_path, seed=1), Study("gce", "t", tmp_path, seed=2)
    p = platforms.load("gce-n1-standard-1")
    assert gce.simulate_trials(a, "n1-standard-1", p, 3) == \
        gce.simulate_trials(a, "n1-standard-1", p, 3)
    assert gce.simulate_trials(a, "n1-standard-1", p, 3) != \
        gce.simulate_trials(b, "n1-standard-1", p, 3)


def test_gce_quick_fills_one_row_per_instance_type(tmp_path):
    study = Study("gce", gce.TITLE, tmp_path, quick=True)
    gce.run(study)
    rows = study.tables["latency"]["rows"]
    assert [r[0] for r in rows] == gce.KINDS
    assert set(study.platforms) == {f"gce-{k}" for k in gce.KINDS}
    for r in rows:   # error of the mean = (simulated - published) / published
        pub_mean, sim_mean, err = r[4], r[8], r[10]
        assert pub_mean == pytest.approx(sum(r[1:4]) / 3)
        assert err == pytest.approx(100 * (sim_mean - pub_mean) / pub_mean)


# --- azure-econome ---------------------------------------------------------------------------

def test_imb_rate_in_gbit_per_second():
    # 4 * 1000 bytes in 8 us = 500 MB/s = 4 Gbit/s (by hand).
    assert azure_econome.gbps(1000, 8.0) == pytest.approx(4.0)
    assert azure_econome.gbps(0, 5.0) == 0.0


def test_azure_reads_the_published_rates_from_the_preset_data():
    # platforms.md: about 3 Gbit/s (cluster) and 350 Mbit/s (cloud) at 32 KB.
    assert azure_econome.published_gbps() == pytest.approx({"g5k-econome": 3.0,
                                                            "azure-g5": 0.35})


@pytest.fixture(scope="module")
def azure_study(tmp_path_factory):
    study = Study("azure-econome", azure_econome.TITLE, tmp_path_factory.mktemp("az"),
                  quick=True)
    azure_econome.run(study)
    return study


def _column(study, name):
    t = study.tables["exchange"]
    i = t["columns"].index(name)
    return {r[0]: r[i] for r in t["rows"]}


def test_a_zero_byte_exchange_costs_one_network_latency(azure_study):
    # Both neighbours' empty messages leave at once; the ranks whose neighbour is on
    # another node wait one network latency L, the slowest of all: t_max = L.
    for name in ("g5k-econome", "azure-g5"):
        L = platforms.load(name).latency_us
        assert _column(azure_study, f"{name} t_max us")[0] == pytest.approx(L, rel=1e-6)


def test_the_cloud_jump_is_two_latencies_where_rendezvous_begins(azure_study):
    # Above the threshold a message needs a request and a clear-to-send first: two more
    # one-way latencies (3L + s/R instead of L + s/R, docs/model.md).
    L = platforms.load("azure-g5").latency_us
    t = _column(azure_study, "azure-g5 t_max us")
    assert 2 * L <= t[8192] - t[4096] <= 2 * L * 1.01
    eager = _column(azure_study, f"{azure_econome.WHAT_IF} t_max us")
    assert eager[8192] - eager[4096] < 0.01 * L     # no rendezvous, no jump
    cluster = _column(azure_study, "g5k-econome t_max us")
    assert cluster[8192] - cluster[4096] < 0.1 * platforms.load("g5k-econome").latency_us


def test_the_published_table_says_which_points_were_fitted(azure_study):
    rows = azure_study.tables["published"]["rows"]
    assert [r[0] for r in rows[:2]] == ["econome (cluster)", "Azure G5 (cloud)"]
    assert all(r[-1].startswith("yes") for r in rows[:2])
    assert rows[2][2] == pytest.approx(3.0 / 0.35)
    assert set(azure_study.platforms) == {"g5k-econome", "azure-g5"}


# --- the calibration pieces ----------------------------------------------------------------

_RATE_ONLY = """#----------------------------------------------------------------
# Benchmarking Exchange
# #processes = 4
#----------------------------------------------------------------
       #bytes   Mbytes/sec
        32768       100.00
"""

_FULL = """#----------------------------------------------------------------
# Benchmarking Exchange
# #processes = 4
#----------------------------------------------------------------
       #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]   Mbytes/sec
        32768         1000      1200.00      1310.72      1250.00       100.00
"""


def test_an_imb_rate_only_row_is_compared_on_its_t_max():
    cases, _ = cases_of(parse_text(_RATE_ONLY, "rate.txt"), 1)
    assert len(cases) == 1
    # IMB: Mbytes/sec = 4 * bytes / t_max -> t_max = 4 * 32768 / 100 = 1310.72 us
    assert cases[0].statistic == "t_max_us"
    assert cases[0].measured_us == pytest.approx(1310.72)


def test_a_row_with_its_times_adds_no_rate_case():
    cases, _ = cases_of(parse_text(_FULL, "full.txt"), 1)
    assert [(c.statistic, c.measured_us) for c in cases] == [("t_avg_us", 1250.0)]


def test_hold_is_refused_without_base_or_for_a_value_the_fit_does_not_move(tmp_path):
    f = tmp_path / "rate.txt"
    f.write_text(_RATE_ONLY)
    with pytest.raises(InputError, match="--hold: keeps --base values"):
        calibrate_files([str(f)], hold=("network.bandwidth_gbps",))
    with pytest.raises(InputError, match="not a value the joint fit moves"):
        calibrate_files([str(f)], base="two-nodes", hold=("nodes.count",))


def test_hold_on_the_command_line_is_one_line_and_writes_nothing(tmp_path):
    import subprocess
    import sys
    f = tmp_path / "rate.txt"
    f.write_text(_RATE_ONLY)
    p = subprocess.run([sys.executable, "-m", "hopsim", "calibrate", str(f), "--base",
                        "two-nodes", "--hold", "network.latency_us,nodes.cores", "--out",
                        str(tmp_path / "fit.toml")], capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.count("\n") == 1 and "'nodes.cores' is not a value" in p.stderr
    assert sorted(x.name for x in tmp_path.iterdir()) == ["rate.txt"]
