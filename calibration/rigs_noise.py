"""The noise floor of a rig's predictions: how well one trial of a case is predicted by
the other trials of the same case, measured against measured.

A model cannot be expected to predict a file closer than the machine repeats itself: on
a shared 2-core machine the small-message times of one trial differ from the next by
more than any mechanism hopsim models. For each predicted file, each of its cases (size)
is compared with the median of the same case in the other trials' files; the file's
noise floor is the median |difference| in percent, comparable to its prediction error.
"""
from __future__ import annotations

import re
import statistics

_TRIAL = re.compile(r"-t\d+\.txt$")


def case_group(file_name: str) -> str:
    """imb-exchange-4x1-block-t5.txt -> imb-exchange-4x1-block: the case, any trial."""
    return _TRIAL.sub("", file_name)


def noise_floor(rows: list[dict]) -> dict[str, float | None]:
    """rows: the baseline's per-file rows, each with 'file' and 'per_case' (dicts with
    workload, ranks, bytes, measured_us). Returns {file: median |measured / median of the
    other trials - 1| in %}, None where no other trial of the case exists."""
    measured: dict[str, dict[tuple, float]] = {
        r["file"]: {(c["workload"], c["ranks"], c["bytes"]): c["measured_us"] for c in r["per_case"]}
        for r in rows}
    floors = {}
    for name, cases in measured.items():
        others = [m for other, m in measured.items()
                  if other != name and case_group(other) == case_group(name)]
        diffs = []
        for key, value in cases.items():
            peers = [m[key] for m in others if key in m and m[key] > 0]
            if peers and value > 0:
                diffs.append(abs(value / statistics.median(peers) - 1) * 100)
        floors[name] = round(statistics.median(diffs), 1) if diffs else None
    return floors
