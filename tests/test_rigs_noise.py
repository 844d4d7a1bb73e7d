"""The rigs' noise floor: a trial against the median of the other trials of its case."""
from hopsim.calibration.rigs_noise import case_group, noise_floor


def _row(name, values):
    return {"file": name, "per_case": [{"workload": "exchange", "ranks": 4, "bytes": b,
                                        "measured_us": v} for b, v in values.items()]}


def test_case_group_drops_only_the_trial():
    assert case_group("imb-exchange-4x2-node-t12.txt") == "imb-exchange-4x2-node"
    assert case_group("latency_checker-4x1-block-t3.txt") == "latency_checker-4x1-block"


def test_each_trial_against_the_median_of_the_others():
    rows = [_row("x-4x1-block-t1.txt", {1: 100, 2: 200}),
            _row("x-4x1-block-t2.txt", {1: 110, 2: 180}),
            _row("x-4x1-block-t3.txt", {1: 90, 2: 220}),
            _row("x-4x2-block-t1.txt", {1: 1000, 2: 5}),  # another case: never a peer
            _row("x-4x2-block-t2.txt", {1: 500})]         # size 2 missing: size 1 only
    floors = noise_floor(rows)
    # t1: peers' medians 100 and 200, exactly its own values.
    assert floors["x-4x1-block-t1.txt"] == 0.0
    # t2: 110 against median(100, 90) = 95 -> 15.79%; 180 against median(200, 220) = 210
    # -> 14.29%; the median of the two: 15.04%.
    assert floors["x-4x1-block-t2.txt"] == 15.0
    # t3: 90 / 105 -> 14.29%; 220 / 190 -> 15.79%.
    assert floors["x-4x1-block-t3.txt"] == 15.0
    # 4x2: 1000 against 500 only (size 2 has no peer): 100%; and 500 against 1000: 50%.
    assert floors["x-4x2-block-t1.txt"] == 100.0
    assert floors["x-4x2-block-t2.txt"] == 50.0


def test_a_lone_trial_has_no_floor():
    assert noise_floor([_row("y-4x1-block-t1.txt", {1: 5})]) == {"y-4x1-block-t1.txt": None}
