"""Running scenarios: the table, results.json and results.csv, determinism, atomicity."""
import csv
import json

import pytest

from hopsim import InputError, scenarios
from hopsim.scenarios import parse_scenario

SWEEP = """\
name = "small"
description = "two placements, two policies"
platform = "two-nodes"
workload = "roundtrip"
exchanges = 20
[sweep]
reception = ["any-source", "round-robin"]
placement = [{ranks = 1}, {ranks = 2}]
"""


@pytest.fixture(scope="module")
def outcome():
    return scenarios.run(parse_scenario(SWEEP, "small.toml"))


def test_outputs_cover_every_point_in_order(outcome, tmp_path):
    json_path, csv_path = scenarios.write_outputs(outcome, tmp_path / "deep" / "out")
    doc = json.loads(json_path.read_text())
    assert doc["scenario"] == "small"
    assert [(p["parameters"]["reception"], p["parameters"]["ranks"]) for p in doc["points"]] == \
        [("any-source", 1), ("any-source", 2), ("round-robin", 1), ("round-robin", 2)]
    assert all(list(p["result"]) == ["platform", "platform_nodes", "platform_hash", "workload",
                                     "ranks", "ranks_per_node", "seed",
                                     "simulated_seconds", "wall_seconds", "messages", "results", "parameters"]
               for p in doc["points"])
    rows = list(csv.DictReader(csv_path.open()))
    assert [r["point"] for r in rows] == ["1", "2", "3", "4"]
    assert "wall_seconds" not in rows[0]
    assert rows[1]["request_bytes"] == "4000" and rows[1]["exchanges"] == "20"
    assert float(rows[1]["rtt_mean_us"]) == doc["points"][1]["result"]["results"]["rtt_us"]["mean"]
    assert sorted(p.name for p in (tmp_path / "deep" / "out").iterdir()) == ["results.csv", "results.json"]


def test_table_has_one_row_per_point(outcome):
    lines = scenarios.table(outcome).splitlines()
    assert lines[0] == "# small: two placements, two policies"
    body = [line.split() for line in lines if not line.startswith("#")]
    assert body[0][:2] == ["ranks", "reception"]
    assert [row[:2] for row in body[1:]] == [["1", "any-source"], ["2", "any-source"],
                                              ["1", "round-robin"], ["2", "round-robin"]]


def test_same_scenario_twice_gives_identical_csv_and_json_apart_from_wall_time(tmp_path):
    texts = []
    for run in ("a", "b"):
        o = scenarios.run(parse_scenario(SWEEP, "small.toml"))
        j, c = scenarios.write_outputs(o, tmp_path / run)
        doc = json.loads(j.read_text())
        for p in doc["points"]:
            p["result"].pop("wall_seconds")
        texts.append((c.read_bytes(), json.dumps(doc)))
    assert texts[0] == texts[1]


def test_pingpong_and_exchange_give_a_row_per_size(tmp_path):
    s = parse_scenario('platform = "two-nodes"\nranks = 2\nsizes = [0, 64, 1024]\n'
                       "[sweep]\nworkload = ['pingpong', 'exchange']\n", "sizes.toml")
    o = scenarios.run(s)
    rows = list(csv.DictReader(scenarios.csv_text(o).splitlines()))
    assert [(r["workload"], r["bytes"]) for r in rows] == \
        [("pingpong", "0"), ("pingpong", "64"), ("pingpong", "1024"),
         ("exchange", "0"), ("exchange", "64"), ("exchange", "1024")]
    assert rows[0]["t_max_us"] == "" and rows[3]["latency_us"] == ""


def test_an_engine_rejection_mid_scenario_writes_nothing(tmp_path):
    # Kautz graphs start at K(2,2) = 6 ranks: only the engine knows which sizes fit.
    s = parse_scenario('platform = "two-nodes"\nworkload = "roundtrip"\nexchanges = 1\n'
                       "ranks = 2\n[sweep]\noverlay = ['complete', 'kautz']\n", "bad.toml")
    with pytest.raises(InputError, match="bad.toml: point 2"):
        scenarios.write_outputs(scenarios.run(s), tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_an_unwritable_output_is_an_input_error_and_leaves_no_temporary(tmp_path, outcome):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(InputError, match="is not a folder"):
        scenarios.write_outputs(outcome, blocker / "out")
    target = tmp_path / "out"
    (target / "results.csv").mkdir(parents=True)  # a folder where the file must go
    with pytest.raises(InputError, match="exists and is a folder"):
        scenarios.write_outputs(outcome, target)
    assert sorted(p.name for p in target.iterdir()) == ["results.csv"]
