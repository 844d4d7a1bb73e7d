"""Scenarios: a platform, a workload and sweep axes, expanded into points and run.

    s = hopsim.scenarios.load("study.toml")      # or hopsim.scenarios.default()
    s = hopsim.scenarios.load("overlays")        # a packaged scenario, by name
    outcome = hopsim.scenarios.run(s)
    print(hopsim.scenarios.table(outcome))
    hopsim.scenarios.write_outputs(outcome, "out")  # results.json, results.csv

The file format is described in hopsim.scenarios.scenario.
"""
from pathlib import Path

from ..errors import InputError
from .figures import plot
from .runner import Outcome, check, check_out, csv_text, flat_rows, json_text, run, table, write_outputs
from .scenario import POINT_KEYS, Scenario, load_scenario, parse_scenario

DEFAULT_FILE = Path(__file__).resolve().parent / "default.toml"


def list_packaged() -> list[str]:
    """Names of the scenarios shipped with hopsim (this folder's *.toml), sorted."""
    return sorted(p.stem for p in DEFAULT_FILE.parent.glob("*.toml"))


def load(path) -> Scenario:
    """A scenario from a TOML file, or a packaged one by name (list_packaged()).

    A name that is an existing file, or looks like a path (has a '/' or ends in
    .toml), is read as a file.
    """
    text = str(path)
    if not (Path(text).is_file() or "/" in text or text.endswith(".toml")):
        if text not in list_packaged():
            raise InputError(f"{text}: not a scenario file and not a packaged scenario "
                             f"(packaged: {', '.join(list_packaged())})")
        return load_scenario(DEFAULT_FILE.parent / f"{text}.toml")
    return load_scenario(path)


def default() -> Scenario:
    """The embedded default scenario (the main job `hopsim run` does without a file)."""
    return parse_scenario(DEFAULT_FILE.read_text(encoding="utf-8"), "default scenario")


__all__ = ["Scenario", "Outcome", "load", "default", "parse_scenario", "check", "run",
           "table", "check_out", "flat_rows", "csv_text", "json_text", "write_outputs", "POINT_KEYS",
           "DEFAULT_FILE", "list_packaged", "plot"]
