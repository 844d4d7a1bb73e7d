"""The ec2 reproduction (scenarios/reproductions/ec2.py): latency_checker's statistic taken
apart on crafted round trips, the NIC-sharing floor the report explains the curve with,
the fitted-or-predicted reading of provenance, and the CLI run's tables and determinism."""
from __future__ import annotations

import csv
import subprocess
import sys

import pytest

from hopsim import platforms
from hopsim._engine import statistics
from hopsim.scenarios.reproductions import ec2
from test_report_browser import CHROMIUM, _probe  # the headless-chromium probe


def _hopsim(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "hopsim", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def test_the_cut_and_the_zeros_on_crafted_round_trips():
    # Rank A keeps 100, 100, 300, 999 (1000 and 4000 are cut): mean 1499 / 4 = 374.75,
    # mode 100. Rank B keeps nothing (1000 and 1500): it reports 0. Rank C: 200.
    a = statistics.latency_checker_rank([100, 100, 300, 999, 1000, 4000])
    b = statistics.latency_checker_rank([1000, 1500])
    c = statistics.latency_checker_rank([200, 200, 200])
    assert a == (100, 374.75)          # (mode, average)
    assert b == (0, 0.0)
    assert c == (200, 200.0)
    parts = ec2.take_apart([a[1], b[1], c[1]])
    # Zeros included: (374.75 + 0 + 200) / 3; without them (374.75 + 200) / 2.
    assert parts["statistic"] == pytest.approx(574.75 / 3)
    assert parts["statistic"] == pytest.approx(
        statistics.latency_checker_average_of_averages([374.75, 0.0, 200.0]))
    assert parts["zeros"] == 1
    assert parts["kept_only"] == pytest.approx(287.375)
    # Without the cut the same round trips average 9599 / 11 = 872.6 us: the cut and the
    # zero together take the tool's figure down to 191.6 us.
    assert ec2.take_apart([None, 0.0]) == {"statistic": 0.0, "zeros": 2, "kept_only": None}


def _lab(latency=100.0, cores=4):
    return platforms.Platform(name="lab", nodes=10, cores=cores, latency_us=latency,
                              bandwidth_gbps=10.0)


def test_the_sharing_floor_by_hand():
    # 10 Gbit/s = 1250 bytes/us: 4000 B take 3.2 us; 4 ranks per instance share the NIC:
    # 2 x 100 + 2 x 4 x 3.2 = 225.6 us.
    assert ec2.sharing_floor_us(_lab(), 4) == pytest.approx(225.6)
    assert ec2.sharing_floor_us(_lab(), 1) == pytest.approx(206.4)


@pytest.mark.parametrize("per_instance", [1, 2, 4])
def test_with_the_shared_sequence_the_fastest_round_trip_is_the_sharing_floor(per_instance):
    # The mechanism the report gives for the rise: every rank of an instance sends at the
    # same instant, so even the fastest round trip shares the NIC k ways.
    r = ec2.simulate(_lab(), per_instance, 50, 1, "shared")
    assert r.results["rtt_us"]["min"] == pytest.approx(ec2.sharing_floor_us(_lab(), per_instance),
                                                       abs=1e-3)


def test_a_figure_cited_by_provenance_is_fitted_not_predicted():
    plat = _lab().replace(provenance={
        "network.latency_us": "calibration run: bisected so that latency_checker reproduces "
                              "the published 235.200785 us average of averages",
        "network.bandwidth_gbps": "vendor specification"})
    assert ec2.fitted_to(plat, 235.200785) == "network.latency_us"
    assert ec2.fitted_to(plat, 313.960899) is None
    rounded = _lab().replace(provenance={"host.pass_us": "fitted to 313.96 us at 20 ranks"})
    assert ec2.fitted_to(rounded, 313.960899) == "host.pass_us"
    checked = _lab().replace(provenance={"host.pass_us": "not fitted: 313.96 us is the check"})
    assert ec2.fitted_to(checked, 313.960899) is None


def _rows(path):
    with open(path, newline="") as f:
        return list(csv.reader(f))


@pytest.fixture(scope="module")
def quick_runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("ec2")
    for name, seed in (("a", 3), ("b", 3), ("c", 4)):
        (base / name).mkdir()
        # The same relative --out: the rerun command in results.json names it.
        p = _hopsim("run", "ec2", "--quick", "--seed", seed, "--out", "out", cwd=base / name)
        assert p.returncode == 0, p.stderr
        (base / name / "out").rename(base / name / "files")
    return {name: base / name / "files" for name in "abc"}


def test_quick_tables_have_their_columns_and_the_published_figures(quick_runs):
    rows = _rows(quick_runs["a"] / "ec2.csv")
    assert rows[0] == [
        "ranks", "ranks per instance", "exchanges per rank", "published us",
        "hopsim us (tool's statistic)", "error %", "published figure is",
        "mean without the cut us", "kept-only mean, zeros excluded us", "ranks reporting 0",
        "cut and zeros effect %", "min round trip us", "2L + 2ks/R us", "p99 us", "max us"]
    by_ranks = {int(r[0]): r for r in rows[1:]}
    assert sorted(by_ranks) == [10, 20, 40]
    assert float(by_ranks[10][3]) == 235.200785 and float(by_ranks[20][3]) == 313.960899
    assert by_ranks[40][3] == "" and by_ranks[40][5] == ""
    for k in (10, 20):
        pub, sim, err = (float(by_ranks[k][i]) for i in (3, 4, 5))
        assert err == pytest.approx(100 * (sim - pub) / pub)
    # ec2-10gbe's provenance cites the 10-rank figure (its latency was fitted to it).
    assert by_ranks[10][6].startswith("fitted")
    seeding = _rows(quick_runs["a"] / "seeding.csv")
    assert seeding[0][:5] == ["ranks", "ranks per instance", "exchanges per rank",
                              "shared sequence us (the tool)", "independent streams us"]
    whatif = _rows(quick_runs["a"] / "whatif.csv")
    assert whatif[0][:5] == ["ranks", "ranks per instance", "NIC cost c us (what-if)",
                             "exchanges per rank", "hopsim us (tool's statistic)"]
    assert {float(r[2]) for r in whatif[1:]} == set(ec2.QUICK_WHATIF_NIC_US)
    # The cut can only lower the tool's figure below the mean of every round trip (the
    # whole-microsecond clock aside).
    for r in rows[1:] + whatif[1:]:
        stat, mean = float(r[4]), float(r[7] if r in rows else r[5])
        assert stat <= mean + 1.0
    report = (quick_runs["a"] / "report.html").read_text()
    assert "not a prediction" in report and "ec2-10gbe" in report


def test_the_same_seed_gives_the_same_files_and_another_seed_other_numbers(quick_runs):
    for f in ("ec2.csv", "seeding.csv", "results.json", "report.html", "ec2.png"):
        assert (quick_runs["a"] / f).read_bytes() == (quick_runs["b"] / f).read_bytes(), f
    assert (quick_runs["a"] / "ec2.csv").read_bytes() != (quick_runs["c"] / "ec2.csv").read_bytes()


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_a_reader_sees_the_comparison_the_cut_and_both_figures(quick_runs, tmp_path):
    seen = _probe(quick_runs["a"] / "report.html", tmp_path)
    assert seen["title"].startswith("EC2 cc2.8xlarge 2013")
    text = seen["text"]
    assert "313.96" in text and "-22." in text and "not a prediction" in text
    assert "mean without the cut us" in text and "NIC cost c us (what-if)" in text
    assert "hopsim run ec2 --seed 3 --quick" in text
    assert len(seen["imgs"]) == 2
    for img in seen["imgs"]:
        assert img["complete"] and img["w"] > 0 and img["h"] > 0, img
    assert seen["fetched"] == []


def test_the_quick_reports_words_and_ranks_by_hand(tmp_path):
    # One quick run (10 instances; 1, 2 and 4 ranks per instance). Its tables count ranks
    # as 10 x per instance, and the report's sentences quote them and the figures.
    import html
    import re

    p = _hopsim("run", "ec2", "--quick", "--seed", 3, "--out", "out", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    out = tmp_path / "out"
    seeding, whatif, main = (_rows(out / f) for f in ("seeding.csv", "whatif.csv", "ec2.csv"))
    assert [r[:2] for r in seeding[1:]] == [["10", "1"], ["40", "4"]]
    assert [r[0] for r in whatif[1:]] == ["10", "20", "40"]
    text = html.unescape(re.sub(r"<[^>]+>", "", (out / "report.html").read_text()))
    # 4000 B at 10 Gbit/s (1250 B/us) is s/R = 3.2 us, twice that per rank per instance.
    assert "s/R = 3.2 us here: 6.4 us more per rank per instance" in text
    assert "10 ranks (235.200785 us): cited by the preset's" in text
    assert "20 ranks (313.960899 us): not used by the preset's provenance" in text
    stat = {int(r[0]): float(r[4]) for r in main[1:]}
    assert f"{stat[40]:.1f} us at 40 ranks. Mechanism by mechanism" in text
    assert "from 10 to 40 ranks" in text
    # At 20 ranks (not cited: a prediction) the second rank per instance costs hopsim its
    # 20-rank figure less its 10-rank one.
    assert ", a prediction): the second rank per instance costs " in text
    assert f"published, {stat[20] - stat[10]:.1f} us in hopsim" in text
    # The what-if's sentence: where the statistic ends (40 ranks) and its 20-rank step.
    nic = {int(r[0]): float(r[4]) for r in whatif[1:]}
    assert "at 40 ranks while the mean without the cut" in text
    assert f"its 20-rank value {nic[20] - nic[10]:+.0f} us from it" in text
