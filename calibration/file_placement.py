"""FILE@K[,block|cyclic]: how the ranks of one file sat, for files that do not say.

IMB-MPI1's, the OSU benchmarks' and latency_checker's outputs give the number of ranks,
not where they ran. `--ranks-per-node K` and `--placement` say it for every file of a
command; a file run another way says its own after an @:

    hopsim calibrate pingpong-2x1.txt exchange-2x1.txt exchange-2x2.txt@2 \\
        exchange-2x2-bynode.txt@2,cyclic --nodes 4 --out p.toml

`@2` is 2 ranks per node in blocks (Open MPI's `--map-by ppr:2:node`, SLURM's block),
`@2,cyclic` round-robin over the nodes (`--map-by node`, SLURM's cyclic). A file given
that way keeps it whatever --ranks-per-node and --placement say (they then cover the
other files). hopsim's own and live JSON record their placement; a suffix that says
otherwise is an error. A path that exists as given, @ included, is a path.

osu_latency and osu_bw print no loop counts (7.x only with -f), yet on a platform with a
token bucket a run of 50 round trips is not one of 10000: `@iterations=N,warmup=M` says
what the run's -i and -x were (osu's -i alone keeps its own warm-up of 100 round trips,
10 above 8192 bytes; give both), alone or after K:

    hopsim calibrate osu_latency.txt@iterations=50,warmup=5 osu_bw.txt@1,iterations=20,warmup=2 ...
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

from .. import bounds
from ..errors import InputError
from .measurement import Measurement
from .parsers import parse_file
from .validate import with_placement

PLACEMENTS = ("block", "cyclic")


@dataclasses.dataclass(frozen=True)
class FileArg:
    path: str
    ranks_per_node: int | None = None
    placement: str | None = None
    iterations: int | None = None  # osu's -i
    warmup: int | None = None  # osu's -x


COUNTS = ("iterations", "warmup")
OSU_TOOLS = ("osu_latency", "osu_bw")


def parse_arg(arg) -> FileArg:
    """FILE, or FILE@ followed by K[,block|cyclic] and/or iterations=N,warmup=M."""
    text = str(arg)
    if "@" not in text or Path(text).exists():
        return FileArg(text)
    path, _, spec = text.rpartition("@")
    items = spec.split(",")
    fields: dict = {}
    if items[0] and "=" not in items[0]:
        try:
            k = int(items.pop(0))
        except ValueError:
            raise InputError(f"{text}: expected FILE@K or FILE@K,block|cyclic with K ranks per "
                             f"node, got {spec!r} after the @") from None
        fields["ranks_per_node"] = bounds.check("ranks_per_node", k, f"{text}: ranks per node")
        fields["placement"] = "block"
        if items and "=" not in items[0]:
            placement = items.pop(0)
            if placement not in PLACEMENTS:
                raise InputError(f"{text}: the placement after K must be block or cyclic, "
                                 f"got {placement!r}")
            fields["placement"] = placement
    for item in items:
        name, eq, value = item.partition("=")
        if not eq or name not in COUNTS or name in fields:
            raise InputError(f"{text}: after the @, expected K[,block|cyclic] then "
                             f"iterations=N,warmup=M (osu's -i and -x), got {item!r}")
        try:
            number = int(value)
        except ValueError:
            raise InputError(f"{text}: {name} must be a whole number, got {value!r}") from None
        fields[name] = bounds.check(name, number, f"{text}: {name}")
    if ("iterations" in fields) != ("warmup" in fields):
        raise InputError(f"{text}: give iterations=N and warmup=M together (osu's -i and -x; "
                         f"under -i alone osu warms up 100 round trips, 10 above 8192 bytes)")
    if fields.get("iterations") == 0:
        raise InputError(f"{text}: iterations must be at least 1 (osu's -i)")
    return FileArg(path, **fields)


def split_arg(arg) -> tuple[str, int | None, str | None]:
    """(path, ranks per node, placement) of FILE or FILE@K[,block|cyclic][,...]."""
    a = parse_arg(arg)
    return a.path, a.ranks_per_node, a.placement


def _with_counts(arg, a: FileArg, ms: list[Measurement]) -> list[Measurement]:
    """The measurements with the run's osu loop counts, which the file does not print."""
    if a.iterations is None:
        return ms
    others = sorted({m.tool for m in ms if m.tool not in OSU_TOOLS})
    if others:
        raise InputError(f"{arg}: iterations= and warmup= are osu_latency's and osu_bw's -i "
                         f"and -x; this {others[0]} file records its own counts")
    printed = {m.repetitions for m in ms if m.repetitions is not None}
    if printed and printed != {a.iterations}:
        raise InputError(f"{arg}: the file prints {min(printed)} iterations, not {a.iterations}")
    return [dataclasses.replace(m, repetitions=a.iterations,
                                replay=tuple((k, v) for k, v in m.replay if k != "warmup")
                                + (("warmup", a.warmup),)) for m in ms]


def read(files, ranks_per_node: int | None = None, placement=None) -> tuple[list[Measurement], int | None]:
    """Every file's measurements with its placement, and the ranks per node to pass on
    (case_of's override): --ranks-per-node's, or None when a file says its own (then
    --ranks-per-node is set on each other file's measurements instead)."""
    parsed = []
    for arg in files:
        a = parse_arg(arg)
        path, k, own = a.path, a.ranks_per_node, a.placement
        ms = _with_counts(arg, a, parse_file(path))
        if k is not None:
            recorded = {m.ranks_per_node for m in ms if m.ranks_per_node is not None}
            if recorded and recorded != {k}:
                raise InputError(f"{arg}: the file records {min(recorded)} rank(s) per node; "
                                 f"drop the @ suffix")
            ms = [dataclasses.replace(m, ranks_per_node=k, replay=tuple(
                (key, v) for key, v in m.replay if key != "placement") + (("placement", own),))
                  for m in ms]
        parsed.append((k, ms))
    if all(k is None for k, _ in parsed):
        return with_placement([m for _, ms in parsed for m in ms], placement), ranks_per_node
    out = []
    for k, ms in parsed:
        if k is None:
            ms = with_placement(ms, placement)
            if ranks_per_node is not None:
                ms = [dataclasses.replace(m, ranks_per_node=ranks_per_node) for m in ms]
        out += ms
    return out, None
