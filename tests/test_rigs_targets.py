"""Issue 16's verdict per rig, from the counted per-case errors unrounded
(calibration/rigs_report.targets): rig L's worst file was 14.98%, within the target, where
its fit before left it at 15.01%, both shown as 15.0% by the rounded tables; its refit
with the osu runs' loop counts (2026-12-01) leaves it at 14.79%. And each rig's standing
as the README states it."""
import json
from pathlib import Path

import pytest

from hopsim.calibration.rigs_report import targets

RIGS = Path(__file__).resolve().parent.parent / "docs" / "validation" / "rigs-idle"


def _file(*errors, uncounted=()):
    cases = [{"error_pct": e, "counted": True} for e in errors]
    return {"per_case": cases + [{"error_pct": e, "counted": False} for e in uncounted]}


@pytest.mark.parametrize("files, verdict", [
    # Signs do not matter; the uncounted 8-rank cases (here -90%) do not enter.
    ([_file(-14.98, 14.98, 20.0, uncounted=(-90.0,)), _file(2.0)], "both"),
    ([_file(15.01), _file(2.0), _file(3.0)], "the median only"),
    ([_file(12.0), _file(-11.0), _file(14.0)], "every file only"),
    ([_file(20.0), _file(-30.0)], "neither"),
])
def test_verdict_from_unrounded_errors(files, verdict):
    assert targets({"files": files})[2] == verdict


def test_median_over_files_of_each_files_median():
    # Medians 14.98 (of 14.98, 14.98, 20.0) and 2.0: the median over files 8.49.
    median, worst, _ = targets({"files": [_file(-14.98, 14.98, 20.0), _file(2.0)]})
    assert (median, worst) == pytest.approx((8.49, 14.98))


def test_no_counted_case_is_no_verdict():
    assert targets({"files": [_file(uncounted=(5.0,))]}) is None


def test_rig_l_near_the_bound():
    result = json.loads((RIGS / "L" / "baseline.json").read_text())
    median, worst, verdict = targets(result)
    assert round(worst, 2) == 14.79 and round(median, 2) == 7.01 and verdict == "both"
    assert result["worst_counted_file_pct"] == 14.8


# The standing the README's "Where hopsim is still off" states, rig by rig, from the kept
# fits: a refit that moves a rig across a target fails here until the README is updated.
STANDING = {
    "both": "BEJKLMNPQU",
    "the median only": "ADFHIOT",
    "neither": "CGRS",
}


@pytest.mark.parametrize("rig, verdict", sorted(
    (rig, verdict) for verdict, rigs in STANDING.items() for rig in rigs))
def test_each_rigs_standing_as_documented(rig, verdict):
    result = json.loads((RIGS / rig / "baseline.json").read_text())
    assert targets(result)[2] == verdict
