"""validate --machine-cores: which cases of runs measured on one machine of few cores count
(issue 16's rule, calibration/latency_bound.py), and the per-file summary. The files are
rig D's real IMB-MPI1 and latency_checker outputs (docs/validation/rigs-idle/D, 400 Mbit/s
emulated links on this 2-core machine) with D's committed fit."""
import json
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from hopsim.calibration.latency_bound import pingpong_half_length, rig_half_length

D = Path(__file__).resolve().parent.parent / "docs" / "validation" / "rigs-idle" / "D"
FIT = D / "baseline-fit.toml"
EXCHANGE = D / "imb-exchange-4x2-block-t1.txt"
LC = [D / f"latency_checker-4x2-block-t{t}.txt" for t in (1, 2, 3)]
PINGPONG = sorted(D.glob("imb-pingpong-2x1-block-t*.txt"))


def hopsim(*args):
    return subprocess.run([sys.executable, "-m", "hopsim", *map(str, args)],
                          capture_output=True, text=True, timeout=600)


def validate_json(*args):
    done = hopsim("validate", "--platform", FIT, "--nodes", 4, "--ranks-per-node", 2, *args,
                  "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _pp(file, size, us, ranks=2, per_node=1):
    return {"file": file, "workload": "pingpong", "ranks": ranks, "ranks_per_node": per_node,
            "bytes": size, "measured_us": us}


def test_pingpong_half_length_takes_each_sizes_median_over_the_files():
    # Three files; per size the medians are 0 B: 10, 512 B: 15, 1024 B: 30 us, so twice
    # 10 us is reached between 512 and 1024 B: 512 + 512 * (20 - 15) / (30 - 15).
    cases = [_pp("a", 0, 9), _pp("b", 0, 10), _pp("c", 0, 50),
             _pp("a", 512, 15), _pp("b", 512, 14), _pp("c", 512, 16),
             _pp("a", 1024, 30), _pp("b", 1024, 29), _pp("c", 1024, 31),
             # not the inter-node ping-pong of 2 ranks: ignored
             _pp("d", 0, 1000, per_node=2), _pp("e", 1024, 1, ranks=4),
             {**_pp("f", 0, 1000), "workload": "exchange"}]
    assert pingpong_half_length(cases) == pytest.approx(512 + 512 * 5 / 15)
    assert pingpong_half_length(cases[9:]) is None


def test_an_exchange_case_counts_when_rate_bound_or_when_the_ranks_fit_the_cores():
    out = validate_json(EXCHANGE, "--machine-cores", 2, "--pingpong", *PINGPONG)
    cases = out["cases"]
    t0 = next(c["measured_us"] for c in cases if c["bytes"] == 0)
    # 8 ranks on 2 cores: a size counts only when its time is at least twice the 0 B time.
    assert [c["counted"] for c in cases] == [c["measured_us"] >= 2 * t0 for c in cases]
    assert sum(c["counted"] for c in cases) == 9  # the rigs report's count for this file
    assert out["counted_cases"] == 9 and out["machine_cores"] == 2
    # No run of one size here: n½ was not needed.
    assert out["half_length_bytes"] is None and out["half_length_from"] is None
    # Each of the 8 ranks fits a core of 8: everything counts.
    eight = validate_json(EXCHANGE, "--machine-cores", 8)
    assert all(c["counted"] for c in eight["cases"])
    assert eight["counted_median_abs_error_pct"] == pytest.approx(eight["median_abs_error_pct"])


def test_latency_checker_is_set_against_the_pingpong_given_beside_it():
    out = validate_json(EXCHANGE, *LC, "--machine-cores", 2, "--pingpong", *PINGPONG)
    assert out["half_length_bytes"] == pytest.approx(rig_half_length(PINGPONG))  # 928 B
    assert out["half_length_from"] == "--pingpong"
    lc = [c for c in out["cases"] if c["tool"] == "latency_checker"]
    assert len(lc) == 3 and all(c["counted"] for c in lc)  # 4000 B > 928 B
    # Each file's median over its counted cases, as the rigs report tabulates them
    # (docs/validation/rigs-idle/README.md, rig D's 4x2 block rows).
    medians = {Path(f["file"]).name: round(f["median_abs_error_pct"], 1) for f in out["files"]}
    assert medians == {EXCHANGE.name: 1.2, LC[0].name: 13.3, LC[1].name: 8.5, LC[2].name: 26.1}
    assert out["median_over_files_pct"] == pytest.approx(statistics.median(
        f["median_abs_error_pct"] for f in out["files"]))
    assert Path(out["worst_file"]["file"]).name == LC[2].name


def test_without_a_pingpong_a_run_of_one_size_does_not_count_and_the_table_says_why():
    done = hopsim("validate", "--platform", FIT, "--nodes", 4, "--ranks-per-node", 2, LC[0],
                  EXCHANGE, "--machine-cores", 2)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split()[-1] == "counted"
    lc_row = next(line for line in lines if "_checker-4x2-block-t1" in line and "4000" in line)
    assert lc_row.split()[-1] == "no"
    summary = next(line for line in lines if line.startswith("counted:"))
    assert "over 9 of 23 cases" in summary and "give --pingpong FILE" in summary
    # two files: the per-file summary, the one without a counted case named as such
    assert "(no case counts)" in done.stdout and "median over files 1.2%" in done.stdout


def test_the_platforms_machine_cores_are_the_default():
    # calibrate --machine-cores 2 wrote nodes.machine_cores = 2 into this fit.
    fit = D.parent / "machine-turn" / "D" / "calibrated-from-fit.toml"
    done = hopsim("validate", "--platform", fit, "--nodes", 4, "--ranks-per-node", 2, EXCHANGE,
                  "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["machine_cores"] == 2 and out["counted_cases"] == 9
    plain = validate_json(EXCHANGE)  # D's main fit has no machine: every case counts
    assert "counted" not in plain["cases"][0] and "machine_cores" not in plain


@pytest.mark.parametrize("args, says", [
    (["--machine-cores", "0"], "--machine-cores: must be at least 1"),
    (["--pingpong", str(PINGPONG[0])], "it needs --machine-cores"),
    (["--machine-cores", "2", "--pingpong", str(LC[0])], "no ping-pong of 2 ranks"),
])
def test_bad_counting_flags_are_one_line_and_status_2(args, says):
    done = hopsim("validate", "--platform", FIT, EXCHANGE, *args)
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and says in done.stderr, done.stderr
