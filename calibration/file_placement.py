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


def split_arg(arg) -> tuple[str, int | None, str | None]:
    """(path, ranks per node, placement) of FILE or FILE@K[,block|cyclic]."""
    text = str(arg)
    if "@" not in text or Path(text).exists():
        return text, None, None
    path, _, spec = text.rpartition("@")
    k_text, _, placement = spec.partition(",")
    try:
        k = int(k_text)
    except ValueError:
        raise InputError(f"{text}: expected FILE@K or FILE@K,block|cyclic with K ranks per "
                         f"node, got {spec!r} after the @") from None
    k = bounds.check("ranks_per_node", k, f"{text}: ranks per node")
    placement = placement or "block"
    if placement not in PLACEMENTS:
        raise InputError(f"{text}: the placement after K must be block or cyclic, got {placement!r}")
    return path, k, placement


def read(files, ranks_per_node: int | None = None, placement=None) -> tuple[list[Measurement], int | None]:
    """Every file's measurements with its placement, and the ranks per node to pass on
    (case_of's override): --ranks-per-node's, or None when a file says its own (then
    --ranks-per-node is set on each other file's measurements instead)."""
    parsed = []
    for arg in files:
        path, k, own = split_arg(arg)
        ms = parse_file(path)
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
