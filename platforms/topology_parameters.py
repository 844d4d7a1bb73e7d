"""Node counts of SimGrid's cluster topologies, from their parameter strings.

The strings are those of SimGrid's <cluster topo_parameters="...">, which the engine
hands to SimGrid unchanged:
    fat-tree   "LEVELS;DOWN_1,...,DOWN_L;UP_1,...,UP_L;PARALLEL_1,...,PARALLEL_L"
               nodes = DOWN_1 * ... * DOWN_L            (e.g. "2;4,4;1,2;1,2": 16)
    torus      "X,Y,..."  nodes = X * Y * ...              (e.g. "4,4,4": 64)
    dragonfly  "GROUPS,LINKS;CHASSIS,LINKS;ROUTERS,LINKS;NODES"
               nodes = GROUPS * CHASSIS * ROUTERS * NODES (e.g. "3,4;4,3;5,1;2": 120)
Checked here so that a wrong string is a one-line error before any simulation starts.
"""
from math import prod


def _counts(text: str, what: str) -> list[int]:
    try:
        values = [int(x) for x in text.split(",")]
    except ValueError:
        raise ValueError(f"{what}: expected comma-separated integers, got {text!r}") from None
    if any(v < 1 for v in values):
        raise ValueError(f"{what}: every count must be at least 1, got {text!r}")
    return values


def nodes_of_topology(topology: str, parameters: str) -> int:
    """The number of nodes the topology holds; ValueError if the string is malformed."""
    if not parameters:
        raise ValueError(f"{topology} needs SimGrid's parameter string")
    if topology == "torus":
        return prod(_counts(parameters, "torus dimensions"))
    parts = parameters.split(";")
    if topology == "fat-tree":
        if len(parts) != 4:
            raise ValueError("fat-tree: expected 'LEVELS;DOWN,...;UP,...;PARALLEL,...', "
                             f"got {parameters!r}")
        levels = _counts(parts[0], "fat-tree levels")
        if len(levels) != 1:
            raise ValueError(f"fat-tree levels: expected one integer, got {parts[0]!r}")
        levels = levels[0]
        lists = [_counts(p, f"fat-tree {n}") for p, n in zip(parts[1:], ("down", "up", "parallel"))]
        if any(len(x) != levels for x in lists):
            raise ValueError(f"fat-tree: each list needs {levels} values (one per level), "
                             f"got {parameters!r}")
        return prod(lists[0])
    if topology == "dragonfly":
        if len(parts) != 4:
            raise ValueError("dragonfly: expected 'GROUPS,LINKS;CHASSIS,LINKS;ROUTERS,LINKS;NODES', "
                             f"got {parameters!r}")
        pairs = [_counts(p, f"dragonfly {n}") for p, n in zip(parts[:3], ("groups", "chassis", "routers"))]
        if any(len(x) != 2 for x in pairs):
            raise ValueError("dragonfly: groups, chassis and routers each take 'COUNT,LINKS', "
                             f"got {parameters!r}")
        nodes = _counts(parts[3], "dragonfly nodes")
        if len(nodes) != 1:
            raise ValueError(f"dragonfly nodes: expected one integer, got {parts[3]!r}")
        return pairs[0][0] * pairs[1][0] * pairs[2][0] * nodes[0]
    raise ValueError(f"unknown topology {topology!r}")
