"""Scenario files (TOML) and their expansion into points.

A scenario sets run parameters at top level (the names of hopsim.simulate's arguments)
and may sweep any of them in a [sweep] table:

    name = "ranks-per-node"
    platform = "ec2-10gbe"          # a preset, or a file relative to the scenario
    workload = "roundtrip"
    ranks = 10
    exchanges = 1000
    [sweep]
    reception = ["any-source", "round-robin"]
    placement = ["block", "cyclic"]  # or a rankfile / hostfile next to the scenario
    # An axis whose values are tables sets several parameters together (a linked axis):
    scale = [{ranks = 10, ranks_per_node = 1}, {ranks = 20, ranks_per_node = 2}]

A [platform_overrides] table changes the platform's fields for every point (a what-if:
the same machine, scaled), through Platform.replace, so they are validated like a
platform file's values. Keys are Platform's field names (hopsim.platforms.Platform):

    [platform_overrides]
    nodes = 256                     # 256 nodes instead of the preset's 64
    pass_us = 0.5

`plot = "overlays"` (grouped bars per overlay family) or `plot = "degree"` (round trip
against degree) chooses the figure `hopsim run --plot FILE.png` draws; without it the
figure follows what is swept (degree alone: "degree"; overlay: "overlays").

Points are the cross product of the axes, the first axis outermost, each axis in the
order its values are written: the same file always gives the same points in the same order.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field, fields
from pathlib import Path

from .. import bounds
from ..errors import InputError
from ..platforms import Platform
from ..workload import PARAMETERS

# Every key a point may set, in the order they appear in tables and CSV columns.
POINT_KEYS = ("platform", "workload", "ranks", "ranks_per_node", "placement", "seed",
              "reception") + PARAMETERS
_DEFAULTS = {"ranks_per_node": 1, "seed": 1}
_REQUIRED = ("platform", "workload", "ranks")
# The figures `hopsim run --plot` draws (hopsim.scenarios.figures); "" = inferred.
PLOTS = ("", "overlays", "degree")
# Platform fields a scenario may override (not its identity or bookkeeping).
OVERRIDE_KEYS = tuple(f.name for f in fields(Platform)
                      if f.name not in ("name", "description", "provenance", "source"))


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    fixed: dict                  # parameter -> value, for every point
    sweep: tuple                 # ((axis, (value, ...)), ...): a value is a parameter's
                                 # value, or for a linked axis a dict of parameters
    source: str = "scenario"
    base_dir: Path | None = None  # platform files are resolved against it
    platform_overrides: dict = field(default_factory=dict)  # Platform field -> value
    plot: str = ""               # the figure --plot draws ("overlays", "degree"); "" = inferred

    def swept_keys(self) -> list[str]:
        """Parameters that vary between points, in POINT_KEYS order."""
        keys = set()
        for axis, values in self.sweep:
            keys.update(k for v in values for k in (v if isinstance(v, dict) else {axis: v}))
        return [k for k in POINT_KEYS if k in keys]

    def points(self) -> list[dict]:
        """Every point's full parameters (defaults filled), in the expansion order."""
        axes = [[v if isinstance(v, dict) else {axis: v} for v in values]
                for axis, values in self.sweep]
        out = []
        for combo in itertools.product(*axes):
            point = dict(_DEFAULTS, **self.fixed)
            for part in combo:
                point.update(part)
            out.append({k: point[k] for k in POINT_KEYS if k in point})
        return out

    def placement_ref(self, value):
        """A placement as written in the file -> what hopsim.simulate takes: block,
        cyclic and lists as they are; a rankfile or hostfile ("FILE", "block:FILE",
        "cyclic:FILE") relative to the scenario's folder."""
        if not isinstance(value, str) or value in ("block", "cyclic"):
            return value
        policy, _, path = value.partition(":")
        if policy not in ("block", "cyclic") or not path:
            policy, path = "", value
        if self.base_dir is not None and not Path(path).is_absolute():
            path = str(self.base_dir / path)
        return f"{policy}:{path}" if policy else path

    def platform_ref(self, value: str) -> str:
        """A platform as written in the file -> what hopsim.platforms.load() takes."""
        if not isinstance(value, str) or not value:
            raise InputError(f"platform: must be a preset name or a platform file, got {value!r}")
        looks_like_file = "/" in value or value.endswith(".toml")
        if looks_like_file and self.base_dir is not None and not Path(value).is_absolute():
            return str(self.base_dir / value)
        return value


def parse_scenario(text: str, source: str, base_dir: Path | None = None) -> Scenario:
    doc = bounds.load_toml(text, source)
    name = doc.pop("name", Path(source).stem)
    description = doc.pop("description", "")
    plot = doc.pop("plot", "")
    if plot not in PLOTS:
        raise InputError(f"{source}: plot: must be one of {', '.join(map(repr, PLOTS))}, "
                         f"got {plot!r}")
    for key, value in (("name", name), ("description", description)):
        if not isinstance(value, str):
            raise InputError(f"{source}: {key}: must be a string")
    overrides = doc.pop("platform_overrides", {})
    if not isinstance(overrides, dict):
        raise InputError(f"{source}: platform_overrides: must be a table ([platform_overrides])")
    for key in overrides:
        if key not in OVERRIDE_KEYS:
            raise InputError(f"{source}: unknown key platform_overrides.{key} "
                             f"(platform fields: {', '.join(OVERRIDE_KEYS)})")
    sweep_table = doc.pop("sweep", {})
    if not isinstance(sweep_table, dict):
        raise InputError(f"{source}: sweep: must be a table ([sweep])")
    fixed = {}
    for key, value in doc.items():
        _check_key(key, source)
        fixed[key] = value
    sweep = tuple((axis, _axis_values(axis, values, fixed, source))
                  for axis, values in sweep_table.items())
    owner = {}
    for axis, values in sweep:
        for key in {k for v in values for k in (v if isinstance(v, dict) else {axis: v})}:
            if key in owner:
                raise InputError(f"{source}: sweep.{axis}: {key} is also swept by "
                                 f"sweep.{owner[key]}; sweep it in one axis")
            owner[key] = axis
    scenario = Scenario(name, description, fixed, sweep, source, base_dir, dict(overrides), plot)
    set_somewhere = set(fixed) | set(scenario.swept_keys())
    for key in _REQUIRED:
        if key not in set_somewhere:
            raise InputError(f"{source}: missing key {key}")
    return scenario


def load_scenario(path: str | Path) -> Scenario:
    path = Path(path)
    text = bounds.read_text(path, "scenario file")
    return parse_scenario(text, str(path), path.resolve().parent)


def _check_key(key: str, source: str, where: str = ""):
    if key not in POINT_KEYS:
        raise InputError(f"{source}: unknown key {where}{key} "
                         f"(parameters: {', '.join(POINT_KEYS)})")


def _axis_values(axis: str, values, fixed: dict, source: str) -> tuple:
    if not isinstance(values, list) or not values:
        raise InputError(f"{source}: sweep.{axis}: must be a non-empty list of values")
    linked = [isinstance(v, dict) for v in values]
    if any(linked) and not all(linked):
        raise InputError(f"{source}: sweep.{axis}: mixes tables and plain values")
    if all(linked):
        for v in values:
            if not v:
                raise InputError(f"{source}: sweep.{axis}: an empty table sets nothing")
            for key in v:
                _check_key(key, source, f"sweep.{axis}.")
                _check_unset(key, fixed, source, f"sweep.{axis}")
    else:
        _check_key(axis, source, "sweep.")
        _check_unset(axis, fixed, source, f"sweep.{axis}")
    return tuple(values)


def _check_unset(key: str, fixed: dict, source: str, where: str):
    if key in fixed:
        raise InputError(f"{source}: {where}: {key} is also set at top level; set it in one place")
