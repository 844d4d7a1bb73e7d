"""What a fit leaves unexplained in its own files (calibration/unexplained.py): a run of
sizes every trial misses the same way is named; noise (trials that disagree) and single
sizes are not."""
import json

import pytest

import hopsim
from hopsim.calibration.calibrate import calibrate_files
from hopsim.calibration.unexplained import LIMIT_PCT, missed_runs, report_lines
from hopsim.calibration.validate import Case
from hopsim.platforms.platform import Platform


def _case(bytes_, measured, trial, tool="imb", workload="exchange", ranks=2, placement="block",
          statistic="t_avg_us"):
    return Case(file=f"t{trial}.txt", line=bytes_ + 1, tool=tool, workload=workload, ranks=ranks,
                ranks_per_node=1, bytes=bytes_, statistic=statistic, measured_us=measured,
                run={"placement": placement})


def _series(errors_by_size, **kw):
    """Cases and simulated values: errors_by_size maps a size to one error (%) per trial."""
    cases, sim = [], []
    for b, errs in errors_by_size.items():
        for t, e in enumerate(errs):
            cases.append(_case(b, 100.0, t, **kw))
            sim.append(100.0 * (1 + e / 100.0))
    return cases, sim


def test_a_run_missed_the_same_way_in_every_trial_is_named_with_its_range():
    cases, sim = _series({1024: [1, -2, 3], 65536: [-20, -25, -22], 131072: [-30, -27, -28],
                          262144: [2, 1, -1]})
    (run,) = missed_runs(cases, sim)
    assert run["sizes"] == [65536, 131072] and run["trials"] == 3
    (head, line) = report_lines(cases, sim)
    assert "more than 10%" in head
    assert line.strip() == ("imb exchange 2 ranks (1 per node) t_avg_us: 65536..131072 B "
                            "(2 size(s) x 3 trial(s)), the model 20.0-30.0% fast")


def test_trials_that_disagree_are_noise_not_a_missing_mechanism():
    # The middle size: one trial the other way, so the run is broken and each half is a
    # single size.
    cases, sim = _series({1: [-20, -20, -20], 2: [-20, 15, -20], 4: [-20, -20, -20]})
    assert missed_runs(cases, sim) == []
    assert report_lines(cases, sim)[0].endswith(" none")


def test_the_limit_is_exceeded_not_reached():
    at = _series({1: [-LIMIT_PCT] * 2, 2: [-LIMIT_PCT] * 2})
    assert missed_runs(*at) == []
    over = _series({1: [-LIMIT_PCT - 0.5] * 2, 2: [-LIMIT_PCT - 0.5] * 2})
    assert len(missed_runs(*over)) == 1


def test_a_change_of_sign_starts_a_new_run():
    cases, sim = _series({1: [20, 25], 2: [21, 22], 4: [-20, -30], 8: [-15, -40]})
    runs = missed_runs(cases, sim)
    assert [r["sizes"] for r in runs] == [[1, 2], [4, 8]]
    assert report_lines(cases, sim)[1].endswith("the model 20.0-25.0% slow")


def test_one_size_counts_only_where_the_series_has_one_size_and_several_trials():
    # latency_checker: one size per file; three trials all 15% slow is a finding.
    lc = dict(tool="latency_checker", workload="roundtrip", statistic="lc_average_of_averages_us")
    assert len(missed_runs(*_series({4000: [15, 16, 18]}, **lc))) == 1
    assert missed_runs(*_series({4000: [15]}, **lc)) == []
    # A single size inside a sweep is not a run.
    assert missed_runs(*_series({1: [0, 0], 2: [30, 30], 4: [0, 0]})) == []


def test_placements_are_separate_series():
    block = _series({1: [-20, -20]})
    cyclic = _series({2: [-20, -20]}, placement="cyclic")
    cases, sim = block[0] + cyclic[0], block[1] + cyclic[1]
    # Merged, sizes 1 and 2 would make a run; apart, each is one size of a sweep of one.
    assert [r["series"] for r in missed_runs(cases, sim)] == [
        "imb exchange 2 ranks (1 per node) t_avg_us",
        "imb exchange 2 ranks (1 per node, cyclic) t_avg_us"]


TRUTH = Platform(name="truth", nodes=2, cores=1, latency_us=20.0, bandwidth_gbps=2.0)
SIZES = [0, 1000, 10000, 100000, 400000, 1000000]


def _file(path, bump=(), factor=1.0):
    r = json.loads(hopsim.simulate(TRUTH, "pingpong", ranks=2, sizes=SIZES, iterations=5).to_json())
    for row in r["results"]["rows"]:
        if row["bytes"] in bump:
            for k in row:
                if k.endswith("_us"):
                    row[k] *= factor
    path.write_text(json.dumps(r) + "\n")
    return str(path)


def test_calibrate_names_what_its_own_files_show_and_the_model_cannot(tmp_path):
    clean = calibrate_files([_file(tmp_path / "a.json"), _file(tmp_path / "b.json")],
                            joint=True, cap=None)
    assert any(l.startswith("not explained by the model") and l.endswith(" none")
               for l in clean.text.splitlines())
    # Two middle sizes 60% slower in both trials, the sizes around them on the line: a
    # bump no latency, rate or bucket makes, so the joint fit leaves it and says so.
    bump = (10000, 100000)
    bent = calibrate_files([_file(tmp_path / "c.json", bump, 1.6),
                            _file(tmp_path / "d.json", bump, 1.6)], joint=True, cap=None)
    lines = bent.text.splitlines()
    i = next(i for i, l in enumerate(lines) if l.startswith("not explained by the model"))
    assert not lines[i].endswith(" none")
    assert "pingpong" in lines[i + 1]
    assert "10000..100000 B (2 size(s) x 2 trial(s))" in lines[i + 1]
    assert lines[i + 1].rstrip().endswith("fast")
