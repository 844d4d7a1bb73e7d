"""The Workload value: which traffic, how many ranks where, and the tool's parameters.

make_workload() is the one place that turns user parameters (API keywords, CLI flags,
scenario keys: the same names everywhere) into a validated Workload, filling the real
tools' defaults. Messages name the parameter.
"""
from __future__ import annotations

from dataclasses import dataclass

from .errors import InputError

# IMB-MPI1's collectives, each a schedule of point-to-point messages in the engine
# (simulator/collectives/, docs/workloads.md "Collectives").
COLLECTIVES = ("alltoall", "allreduce", "allgather", "bcast", "reduce", "barrier")
# Reductions move whole MPI_FLOATs (IMB's red_data_type).
REDUCTIONS = ("allreduce", "reduce")
KINDS = ("pingpong", "roundtrip", "exchange", "bandwidth", "pingping", "sendrecv") + COLLECTIVES
# Kinds that run on exactly two ranks, with the tool each replays.
TWO_RANKS = {"pingpong": "osu_latency", "bandwidth": "osu_bw", "pingping": "IMB PingPing"}
DESTINATIONS = ("independent", "shared")
# simulator/overlay.hpp's families; "user" is reserved for graphs passed as overlay.
OVERLAY_FAMILIES = ("complete", "debruijn", "kautz", "random", "group", "polytope",
                    "hypercube", "torus")
# seed = "ray": RayPlatform's own random overlay (its fixed srand seeds); the workload's
# own draws then use seed 1.
RAY_SEED = "ray"
# osu_latency and IMB-MPI1 both sweep 0 and the powers of two up to 4 MiB.
TOOL_SIZES = (0,) + tuple(2**k for k in range(23))
# osu_bw starts at 1 byte (MIN_MESSAGE_SIZE).
OSU_BW_SIZES = TOOL_SIZES[1:]
# osu_bw's default window (WINDOW_SIZE_LARGE): non-blocking sends before each acknowledgement.
OSU_WINDOW = 64

_PARAMS_OF_KIND = {
    "pingpong": ("sizes", "iterations", "warmup"),
    "exchange": ("sizes", "repetitions"),
    "bandwidth": ("sizes", "iterations", "warmup", "window"),
    "pingping": ("sizes", "repetitions"),
    "sendrecv": ("sizes", "repetitions"),
    "roundtrip": ("request_bytes", "reply_bytes", "exchanges", "destinations", "overlay",
                  "degree"),
    **{c: ("sizes", "repetitions", "algorithm") for c in COLLECTIVES if c != "barrier"},
    "barrier": ("repetitions", "algorithm"),
}
PARAMETERS = tuple(sorted({p for ps in _PARAMS_OF_KIND.values() for p in ps}))


@dataclass(frozen=True)
class Workload:
    """One run's traffic. Fields mirror WorkloadSpec in simulator/spec.hpp.

    iterations / repetitions = 0 mean the real tool's own counts (osu_latency: 10000,
    1000 above 8192 bytes; osu_bw: 100 windows, 20 above 8192 bytes; IMB: its per-size
    repetition table); warmup = -1 means the tool's own warm-up (osu_latency: 100, 10
    above 8192 bytes; osu_bw: 10, 2) with its own counts and none with explicit
    iterations (osu's -x sets it whatever -i says); degree = 0 means RayPlatform's choice for the overlay family.
    """

    kind: str
    ranks: int
    ranks_per_node: int = 1
    placement: str = "block"  # "block", "cyclic" or "map" (hopsim.placement)
    node_map: tuple[int, ...] = ()  # placement "map": the node of each rank
    seed: int | str = 1  # or RAY_SEED
    sizes: tuple[int, ...] = ()
    iterations: int = 0
    warmup: int = -1  # untimed round trips (windows) first, OSU's -x; -1: as iterations say
    repetitions: int = 0
    request_bytes: int = 4000
    reply_bytes: int = 4000
    exchanges: int = 1000
    destinations: str = "independent"
    overlay: str = ""
    degree: int = 0
    overlay_arcs: tuple[tuple[int, int], ...] = ()
    window: int = OSU_WINDOW
    algorithm: str = ""  # collectives: Open MPI's algorithm name; "": its decision rules

    @property
    def nodes_used(self) -> int:
        """Nodes 0 .. the highest one a rank runs on."""
        return max(self.node_map) + 1 if self.placement == "map" else self.ranks // self.ranks_per_node

    def node_of_rank(self) -> list[int]:
        """The node of each rank, as the engine places them (simulator/placement.cpp)."""
        from . import _engine

        return _engine.place_ranks(self.to_engine_dict())

    def placement_record(self):
        """parameters.placement of a result: the policy's name, or the map it ran."""
        return list(self.node_map) if self.placement == "map" else self.placement

    def check_fits(self, platform) -> None:
        """InputError unless the ranks can be placed on the platform (the engine checks
        the same, simulator/placement.cpp; here the message names the parameter)."""
        where = f"platform {platform.name} ({platform.nodes} nodes x {platform.cores} cores)"
        if self.ranks_per_node > platform.cores and not platform.oversubscribe:
            what = ("placement: the map puts" if self.placement == "map"
                    else "ranks_per_node:")
            raise InputError(f"{what} {self.ranks_per_node} ranks per node exceed "
                             f"the cores of {where} (nodes.oversubscribe = true shares them)"
                             + _undetermined_cores(platform))
        if self.ranks > platform.nodes * platform.cores and not platform.oversubscribe:
            raise InputError(f"ranks: {self.ranks} ranks exceed the "
                             f"{platform.nodes * platform.cores} cores of {where}")
        if self.nodes_used > platform.nodes:
            if self.placement == "map":
                raise InputError(f"placement: the map uses node {self.nodes_used - 1}; {where} "
                                 f"(--nodes sets the node count)")
            raise InputError(f"ranks: {self.ranks} ranks at {self.ranks_per_node} per node "
                             f"need {self.nodes_used} nodes; {where}")

    def to_engine_dict(self) -> dict:
        """The engine's WorkloadSpec as a dict (simulator/spec.hpp field names)."""
        return {
            "kind": self.kind, "ranks": self.ranks, "ranks_per_node": self.ranks_per_node,
            "placement": self.placement, "node_map": list(self.node_map),
            "seed": 1 if self.seed == RAY_SEED else self.seed, "sizes": list(self.sizes),
            "iterations": self.iterations, "warmup": self.warmup,
            "repetitions": self.repetitions, "request_bytes": self.request_bytes,
            "reply_bytes": self.reply_bytes, "exchanges": self.exchanges,
            "destinations": self.destinations, "overlay": engine_family(self.overlay, self.seed),
            "degree": self.degree, "overlay_arcs": [list(a) for a in self.overlay_arcs],
            "window": self.window, "algorithm": self.algorithm,
            "trace": False,  # a run option, not the pattern's: simulate(trace=True) sets it
        }

    def overlay_built(self) -> dict | None:
        """The overlay the engine builds for this run: family, degree (the family's
        parameter), digits and a label such as "de Bruijn B(2, 10)"; None without one.
        With no degree given, this is RayPlatform's choice (docs/overlays.md)."""
        if not self.overlay:
            return None
        from . import _engine

        if self.overlay == "user":  # the engine's mean out-degree, rounded half up (llround)
            degree = (2 * len(self.overlay_arcs) + self.ranks) // (2 * self.ranks)
            return {"family": "user", "degree": degree, "digits": 1, "label": "user graph"}
        family = engine_family(self.overlay, self.seed)
        s = _engine.overlay_shape(family, self.ranks, self.degree)
        return {"family": "polytope" if family == "hypercube" else self.overlay,
                "degree": s.degree, "digits": s.digits,
                "label": _engine.overlay_label(family, s.degree, s.digits)}

    def parameters(self) -> dict:
        """The parameters that apply to this kind, as a user would write them."""
        out = {p: getattr(self, p) for p in _PARAMS_OF_KIND[self.kind]}
        if "sizes" in out:
            out["sizes"] = list(self.sizes)
        return out


def make_workload(kind, ranks, ranks_per_node=1, seed=1, placement=None, **params) -> Workload:
    """A validated Workload; params are those of the kind (see PARAMETERS). placement:
    "block" (default), "cyclic", a rankfile or hostfile path, a list of node indices or
    a hopsim.placement.Placement; with a map, ranks_per_node is the map's (its most
    loaded node)."""
    if kind not in KINDS:
        raise InputError(f"workload: must be one of {', '.join(KINDS)}, got {kind!r}")
    for name, value in params.items():
        if name not in PARAMETERS:
            raise InputError(f"unknown parameter {name!r} (known: {', '.join(PARAMETERS)})")
        if name not in _PARAMS_OF_KIND[kind]:
            raise InputError(f"{name}: does not apply to the {kind} workload "
                             f"(it takes {', '.join(_PARAMS_OF_KIND[kind])})")
    ranks = _int("ranks", ranks, minimum=1)
    ranks_per_node = _int("ranks_per_node", ranks_per_node, minimum=1)
    if seed == RAY_SEED:
        if params.get("overlay") != "random":
            raise InputError('seed: "ray" selects RayPlatform\'s own random overlay; it needs '
                             'overlay "random"')
    else:
        seed = _int("seed", seed, minimum=0)
        if seed >= 2**64:
            raise InputError(f"seed: must be below 2**64, got {seed}")
    from .placement import Placement, resolve

    placed = placement if isinstance(placement, Placement) else resolve(placement, ranks)
    if placed.policy == "map":
        if len(placed.node_map) != ranks:
            raise InputError(f"placement: the map has {len(placed.node_map)} entries for "
                             f"{ranks} ranks")
        ranks_per_node = placed.ranks_per_node()
    elif ranks % ranks_per_node:
        raise InputError(f"ranks: {ranks} ranks are not divisible by ranks_per_node "
                         f"{ranks_per_node}")
    fields = {"kind": kind, "ranks": ranks, "ranks_per_node": ranks_per_node, "seed": seed,
              "placement": placed.policy, "node_map": placed.node_map}
    if kind in TWO_RANKS and ranks != 2:
        raise InputError(f"ranks: {kind} ({TWO_RANKS[kind]}) runs on exactly 2 ranks, "
                         f"got {ranks}")
    if "sizes" in _PARAMS_OF_KIND[kind]:
        default = OSU_BW_SIZES if kind == "bandwidth" else TOOL_SIZES
        if kind in COLLECTIVES:
            default = imb_sizes(kind)
        fields["sizes"] = _sizes(params.get("sizes", default))
    if kind in REDUCTIONS:
        odd = [s for s in fields["sizes"] if s % 4]
        if odd:
            raise InputError(f"sizes: {kind} reduces whole MPI_FLOATs (4 bytes, as IMB): "
                             f"{odd[0]} is not a multiple of 4")
    if "algorithm" in params:
        fields["algorithm"] = _algorithm(kind, params["algorithm"], ranks)
    for name in ("iterations", "repetitions"):
        if name in params:
            fields[name] = _int(name, params[name], minimum=0)
    if "warmup" in params:
        fields["warmup"] = _int("warmup", params["warmup"], minimum=0)
    if "window" in params:
        fields["window"] = _int("window", params["window"], minimum=1)
    for name in ("request_bytes", "reply_bytes"):
        if name in params:
            fields[name] = _int(name, params[name], minimum=0)
    if "exchanges" in params:
        fields["exchanges"] = _int("exchanges", params["exchanges"], minimum=1)
    if "destinations" in params:
        fields["destinations"] = _choice("destinations", params["destinations"], DESTINATIONS)
    fields.update(_overlay(params.get("overlay"), params.get("degree"), ranks, seed))
    if isinstance(fields.get("overlay"), str) and fields["overlay"] != "user":
        _check_overlay_size(fields["overlay"], ranks, fields.get("degree", 0), seed)
    return Workload(**fields)


def imb_sizes(kind: str) -> tuple[int, ...]:
    """IMB-MPI1's sizes for a collective, as the engine sweeps them: 0 and the powers of
    two up to 4 MiB, from 4 bytes for the reductions."""
    from . import _engine

    return tuple(_engine.collectives.imb_sizes(kind))


def _algorithm(kind: str, name, ranks: int) -> str:
    from . import _engine

    known = _engine.collectives.algorithms(kind)
    if name not in known:
        raise InputError(f"algorithm: {kind} has no algorithm {name!r} (known: "
                         f"{', '.join(known)})")
    if name == "two_proc" and ranks != 2:
        raise InputError(f"algorithm: {kind} two_proc runs on exactly 2 ranks, got {ranks}")
    return name


def engine_family(overlay: str, seed) -> str:
    """The engine's family name: RayPlatform's random graph is "ray-random"."""
    return "ray-random" if overlay == "random" and seed == RAY_SEED else overlay


def _check_overlay_size(overlay: str, ranks: int, degree: int, seed) -> None:
    # The engine's own size rules, checked before anything runs; an explicit degree that
    # does not fit is refused there (docs/overlays.md, "An explicit degree").
    from . import _engine  # deferred: validation of other workloads works without it

    try:
        _engine.overlay_shape(engine_family(overlay, seed), ranks, degree)
    except ValueError as e:
        raise InputError(f"overlay: {e}") from None


def _overlay(overlay, degree, ranks: int, seed: int) -> dict:
    if overlay is None or overlay == "":
        if degree is not None:
            raise InputError("degree: only applies with an overlay")
        return {}
    out = {}
    if degree is not None:
        out["degree"] = _int("degree", degree, minimum=0)
    if isinstance(overlay, str):
        out["overlay"] = _choice("overlay", overlay, OVERLAY_FAMILIES)
        return out
    if hasattr(overlay, "nodes") and hasattr(overlay, "edges"):
        if degree is not None:
            raise InputError("degree: does not apply to a graph overlay")
        return {"overlay": "user", "overlay_arcs": _graph_arcs(overlay, ranks, seed)}
    raise InputError(f"overlay: expected a family name or a networkx graph, "
                     f"got {type(overlay).__name__}")


def _graph_arcs(graph, ranks: int, seed: int) -> tuple[tuple[int, int], ...]:
    """The arcs of a user graph, ranks numbered as hopsim.topologies.from_networkx does
    (sorted nodes; an undirected edge is an arc each way). Building the overlay here
    checks that every rank reaches every other before any simulation starts."""
    from .topologies import from_networkx  # needs the engine, as simulating does

    if graph.number_of_nodes() != ranks:
        raise InputError(f"overlay: the graph has {graph.number_of_nodes()} nodes but the run "
                         f"has {ranks} ranks")
    try:
        overlay = from_networkx(graph, seed=seed)
    except ValueError as e:
        raise InputError(f"overlay: {e}") from None
    return tuple(sorted((int(u), int(v)) for u, v in overlay.arcs()))


def _int(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{name}: must be an integer, got {value!r}")
    if value < minimum:
        raise InputError(f"{name}: must be at least {minimum}, got {value}")
    return value


def _choice(name: str, value, choices) -> str:
    if value not in choices:
        raise InputError(f"{name}: must be one of {', '.join(choices)}, got {value!r}")
    return value


def _sizes(value) -> tuple[int, ...]:
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise InputError(f"sizes: must be a list of byte counts, got {value!r}")
    sizes = tuple(_int("sizes", s, minimum=0) for s in value)
    if not sizes:
        raise InputError("sizes: must not be empty")
    return sizes


def _undetermined_cores(platform) -> str:
    """What to do when the cores are a calibration's default, not the nodes' own."""
    from .platforms.platform import UNDETERMINED

    if platform.provenance.get("nodes.cores") != UNDETERMINED:
        return ""
    return ("; hopsim calibrate could not know the nodes' cores from its files: set "
            "[nodes] cores, or calibrate with --base giving them and the on-node path "
            "(docs/calibration.md)")
