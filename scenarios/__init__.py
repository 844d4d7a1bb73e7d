"""Scenarios: a platform, a workload and sweep axes, expanded into points and run.

    s = hopsim.scenarios.load("study.toml")      # or hopsim.scenarios.default()
    outcome = hopsim.scenarios.run(s)
    print(hopsim.scenarios.table(outcome))
    hopsim.scenarios.write_outputs(outcome, "out")  # results.json, results.csv

The file format is described in hopsim.scenarios.scenario.
"""
from pathlib import Path

from .runner import Outcome, check, csv_text, flat_rows, json_text, run, table, write_outputs
from .scenario import POINT_KEYS, Scenario, load_scenario, parse_scenario

DEFAULT_FILE = Path(__file__).resolve().parent / "default.toml"


def load(path) -> Scenario:
    """A scenario from a TOML file."""
    return load_scenario(path)


def default() -> Scenario:
    """The embedded default scenario (the main job `hopsim run` does without a file)."""
    return parse_scenario(DEFAULT_FILE.read_text(encoding="utf-8"), "default scenario")


__all__ = ["Scenario", "Outcome", "load", "default", "parse_scenario", "check", "run",
           "table", "flat_rows", "csv_text", "json_text", "write_outputs", "POINT_KEYS",
           "DEFAULT_FILE"]
