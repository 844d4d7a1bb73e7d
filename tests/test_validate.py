"""validate: one case per measured value hopsim has a workload for, replayed with the
tool's semantics; exact agreement against hopsim's own outputs; the CLI's JSON and plot."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

import hopsim
from hopsim.calibration.parsers import parse_file, parse_text
from hopsim.calibration.validate import case_of, cases_of, validate
from hopsim.formats import latency_checker, ray_network_test
from hopsim.platforms import Platform

DATA = Path(__file__).parent / "data"
SPEC_KEYS = {"file", "workload", "ranks", "bytes", "measured_us", "simulated_us", "error_pct"}
# A platform with room for the real files' 4-rank blocks.
LOOP = Platform(name="loop", nodes=4, cores=2, latency_us=30.0, bandwidth_gbps=2.0)


@pytest.mark.parametrize("workload, params", [
    ("pingpong", dict(ranks=2, sizes=[0, 64, 4096, 65536], iterations=5)),
    ("exchange", dict(ranks=4, sizes=[0, 1024, 32768], repetitions=5)),
    ("exchange", dict(ranks=4, ranks_per_node=2, sizes=[0, 1024, 32768], repetitions=5))])
def test_hopsim_output_validated_on_its_own_platform_has_no_error(tmp_path, workload, params):
    r = hopsim.simulate(LOOP, workload, **params)
    f = tmp_path / "sim.json"
    f.write_text(r.to_json())
    report = validate(LOOP, [str(f)])
    assert len(report.cases) == len(params["sizes"])
    assert {c.ranks_per_node for c in report.cases} == {params.get("ranks_per_node", 1)}
    assert report.max_abs_error_pct < 1e-9


def test_latency_checker_file_replays_with_its_seeding_and_statistic(tmp_path):
    r = hopsim.simulate(LOOP, "roundtrip", ranks=4, exchanges=300, destinations="shared",
                        reception="any-source")
    f = tmp_path / "lc.txt"
    f.write_text(latency_checker(r))
    (case,) = [c for c in (case_of(m) for m in parse_file(f)) if c]
    assert case.run == {"request_bytes": 4000, "reply_bytes": 4000, "exchanges": 300,
                        "destinations": "shared", "reception": "any-source"}
    assert case.statistic == "lc_average_of_averages_us"
    report = validate(LOOP, [str(f)])
    # The file prints the average with 6 decimals.
    assert abs(report.cases[0].simulated_us - report.cases[0].measured_us) < 1e-5


def test_ray_file_replays_with_an_empty_reply_and_per_rank_streams(tmp_path):
    r = hopsim.simulate(LOOP, "roundtrip", ranks=8, ranks_per_node=2, exchanges=100,
                        reply_bytes=0, overlay="complete")
    ms = parse_text(ray_network_test(r), "NetworkTest.txt")
    (case,) = [c for c in (case_of(m, 2) for m in ms) if c]
    assert case.run["reply_bytes"] == 0 and case.run["destinations"] == "independent"
    assert case.simulate(LOOP) == pytest.approx(r.results["ray_average_for_all_ranks_us"], rel=1e-9)


def test_real_imb_file_gives_one_case_per_block_and_size():
    path = DATA / "imb" / "IMB-MPI1-p2p-np4-tcp.txt"
    ms = parse_file(path)
    cases, skipped = cases_of(ms)
    compared = (("pingpong", "t_us"), ("pingping", "t_us"), ("sendrecv", "t_avg_us"),
                ("exchange", "t_avg_us"))
    expected = {(m.workload, m.ranks, m.size) for m in ms if (m.workload, m.statistic) in compared}
    assert {(c.workload, c.ranks, c.bytes) for c in cases} == expected
    assert len(cases) == len(expected)
    assert {c.ranks for c in cases if c.workload == "exchange"} == {2, 4}
    assert {c.ranks for c in cases if c.workload == "sendrecv"} == {2, 4}
    assert {c.ranks for c in cases if c.workload == "pingping"} == {2}
    # Only the statistics not compared (the bandwidth columns, t_min and t_max) are left.
    whats = [w for _, w, _ in skipped]
    assert all(w.endswith(("mbytes_per_sec", "t_min_us", "t_max_us")) for w in whats), whats


def test_validate_cli_json_and_plot_on_real_files(tmp_path):
    png = tmp_path / "v.png"
    plat = tmp_path / "loop.toml"
    plat.write_text('name = "loop"\n[nodes]\ncount = 4\ncores = 2\n[network]\n'
                    'latency_us = 30.0\nbandwidth_gbps = 2.0\n')
    p = subprocess.run([sys.executable, "-m", "hopsim", "validate", "--platform", str(plat),
                        str(DATA / "imb" / "IMB-MPI1-exchange-np2-tcp.txt"),
                        str(DATA / "latency_checker" / "lc-np2-tcp.txt"), "--json", "--plot", str(png)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["cases"] and all(SPEC_KEYS <= set(c) for c in doc["cases"])
    errors = sorted(abs(c["error_pct"]) for c in doc["cases"])
    assert doc["max_abs_error_pct"] == pytest.approx(errors[-1])
    n = len(errors)
    median = errors[n // 2] if n % 2 else (errors[n // 2 - 1] + errors[n // 2]) / 2
    assert doc["median_abs_error_pct"] == pytest.approx(median)
    for c in doc["cases"]:
        assert c["error_pct"] == pytest.approx(100 * (c["simulated_us"] - c["measured_us"]) / c["measured_us"])
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_validate_refuses_what_it_cannot_simulate_or_place(tmp_path):
    png = tmp_path / "v.png"
    p = subprocess.run([sys.executable, "-m", "hopsim", "validate", "--platform", "two-nodes",
                        str(DATA / "imb" / "IMB-MPI1-allreduce-np4-shm.txt"), "--plot", str(png)],
                       capture_output=True, text=True)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "allreduce" in p.stderr
    assert not png.exists()
    p = subprocess.run([sys.executable, "-m", "hopsim", "validate", "--platform", "two-nodes",
                        str(DATA / "imb" / "IMB-MPI1-exchange-np2-tcp.txt"), "--plot",
                        str(tmp_path / "missing" / "v.png")], capture_output=True, text=True)
    assert p.returncode == 2 and "--plot" in p.stderr
    # 4 ranks at 1 per node on the 2-node preset: refused, with the fix in the message.
    p = subprocess.run([sys.executable, "-m", "hopsim", "validate", "--platform", "two-nodes",
                        str(DATA / "imb" / "IMB-MPI1-p2p-np4-tcp.txt")], capture_output=True, text=True)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "Traceback" not in p.stderr


def test_a_roundtrip_json_replays_from_its_parameters(tmp_path):
    # Independent destinations, round-robin reception and seed 7: none of them the
    # latency_checker defaults, all of them read back from the JSON's parameters.
    r = hopsim.simulate(LOOP, "roundtrip", ranks=4, exchanges=50, destinations="independent",
                        reception="round-robin", request_bytes=512, reply_bytes=64, seed=7)
    f = tmp_path / "rt.json"
    f.write_text(r.to_json())
    report = validate(LOOP, [str(f)])
    (case,) = [c for c in report.cases if c.statistic == "lc_average_of_averages_us"]
    assert case.run["destinations"] == "independent" and case.run["reception"] == "round-robin"
    assert case.run["seed"] == 7 and case.bytes == 512 and case.run["reply_bytes"] == 64
    assert case.simulated_us == r.results["lc_average_of_averages_us"]
    assert report.max_abs_error_pct == 0.0


def test_noise_platform_places_the_measurement_in_the_simulated_distribution(tmp_path):
    from hopsim.calibration import validate as val
    noisy = LOOP.replace(noise_scope="run", noise_median_us=20.0, noise_sigma=0.5)
    sims = []
    for seed in (1001, 1002, 1003):
        r = hopsim.simulate(noisy, "pingpong", ranks=2, sizes=[0, 1024], iterations=3, seed=seed)
        f = tmp_path / f"pp{seed}.json"
        f.write_text(r.to_json())
        sims.append(r.results["rows"][0]["latency_us"])
    report = validate(noisy, [str(tmp_path / "pp1001.json")], seed=1)
    c = next(c for c in report.cases if c.bytes == 0)
    assert len(c.distribution) == val.NOISE_SEEDS
    assert len(set(c.distribution)) > 1   # different seeds, different runs
    # The reported value is the runs' median: the two middle runs of 20, averaged. A
    # lognormal's runs are skewed, so their mean differs and the check can tell.
    runs = sorted(c.distribution)
    assert val.NOISE_SEEDS == 20 and c.simulated_us == (runs[9] + runs[10]) / 2
    assert abs(sum(runs) / len(runs) - c.simulated_us) > 1e-6 * c.simulated_us
    below = sum(v < c.measured_us for v in c.distribution)
    assert c.percentile == pytest.approx(100 * below / val.NOISE_SEEDS, abs=100 / val.NOISE_SEEDS)
    d = report.to_dict()["cases"][0]
    assert {"simulated_runs", "simulated_min_us", "simulated_max_us", "measured_percentile"} <= set(d)
    assert "pctile" in report.table()
    # A measurement far above every run sits at the 100th percentile.
    far = tmp_path / "far.json"
    doc = json.loads((tmp_path / "pp1001.json").read_text())
    doc["results"]["rows"][0]["latency_us"] = 1e6
    far.write_text(json.dumps(doc))
    c = next(c for c in validate(noisy, [str(far)]).cases if c.bytes == 0)
    assert c.percentile == 100.0


def test_error_is_simulated_minus_measured_over_measured_by_hand(tmp_path):
    # LOOP's one-way time is L + 8 s / B = 30 us + s x 0.004 us (2 Gbit/s): 30 us at 0 B,
    # 34 us at 1000 B. Measured 24 and 40: errors +25% (6/24) and -15% (-6/40); median
    # |error| 20%, worst 25%.
    f = tmp_path / "hand.txt"
    f.write_text("# OSU MPI Latency Test v5.3.2\n# Size          Latency (us)\n"
                 "0                      24.00\n1000                   40.00\n")
    report = validate(LOOP, [str(f)])
    assert [c.bytes for c in report.cases] == [0, 1000]
    assert [c.simulated_us for c in report.cases] == [pytest.approx(30.0), pytest.approx(34.0)]
    assert [c.error_pct for c in report.cases] == [pytest.approx(25.0), pytest.approx(-15.0)]
    assert report.median_abs_error_pct == pytest.approx(20.0)
    assert report.max_abs_error_pct == pytest.approx(25.0)
    assert "median |error| 20.0%, worst 25.0%" in report.table()


def test_own_output_on_another_platform_gives_the_hand_computed_error(tmp_path):
    # Simulated on LOOP (30 us, 2 Gbit/s), validated on a platform with twice the
    # latency: at 0 B 30 us against 60 us (+100%); at 65536 B 30 + 262.144 = 292.144 us
    # against 322.144 us (+30/292.144 = +10.269%).
    r = hopsim.simulate(LOOP, "pingpong", ranks=2, sizes=[0, 65536], iterations=5)
    f = tmp_path / "sim.json"
    f.write_text(r.to_json())
    report = validate(LOOP.replace(latency_us=60.0), [str(f)])
    by = {c.bytes: c for c in report.cases}
    assert by[0].measured_us == pytest.approx(30.0) and by[0].error_pct == pytest.approx(100.0)
    assert by[65536].measured_us == pytest.approx(292.144)
    assert by[65536].error_pct == pytest.approx(100 * 30 / 292.144)


def test_a_calibrations_default_cores_say_what_to_give_when_ranks_do_not_fit():
    # 2 ranks per node on a platform whose one core is calibrate's default (its files ran
    # one rank per node) names the way out; the same core count given by a platform's
    # author is a plain refusal.
    from hopsim.errors import InputError
    from hopsim.platforms.platform import UNDETERMINED, Platform

    given = Platform(name="p", nodes=4, cores=1, latency_us=5.0, bandwidth_gbps=1.0)
    calibrated = given.replace(provenance={"nodes.cores": UNDETERMINED})
    for platform, hint in ((calibrated, True), (given, False)):
        with pytest.raises(InputError) as e:
            hopsim.simulate(platform, "exchange", ranks=8, ranks_per_node=2, sizes=[0])
        assert "exceed the cores" in str(e.value)
        assert ("could not know the nodes' cores" in str(e.value)) == hint
