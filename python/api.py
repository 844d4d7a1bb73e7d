"""hopsim.simulate(): one simulation from Python."""
from __future__ import annotations

import time

from . import bounds, platforms
from .errors import InputError
from .result import Result
from .workload import COLLECTIVES, Workload, engine_family, make_workload


def prepare(platform, workload: str, ranks: int = 2, ranks_per_node: int = 1, seed: int | str = 1,
            **params) -> tuple[platforms.Platform, Workload, dict]:
    """Validate everything a run needs without running it.

    Returns the Platform, the Workload and the engine's platform dict (with a
    reception override applied). Raises InputError naming the offending parameter:
    bounds (hopsim.bounds), placement, the overlay's size, and the run's memory.
    """
    plat = platforms.load(platform)
    nodes = params.pop("nodes", None)
    if nodes is not None:  # the platform's node count, bounded as the file key is
        bounds.check("nodes.count", nodes, "nodes")
        plat = plat.replace(nodes=nodes)
    transport = params.pop("transport", None)
    if transport is not None:  # validated by the Platform, as the file key would be
        plat = plat.replace(transport=transport)
    bounds.check_parameters(dict(params, ranks=ranks, ranks_per_node=ranks_per_node, seed=seed))
    reception = params.pop("reception", None)
    placement = params.pop("placement", None)
    if workload in COLLECTIVES:
        # MPI's progress engine takes any message that arrived; a platform's round-robin
        # reception is RayPlatform's own polling loop, not MPI's (docs/workloads.md).
        if reception not in (None, "any-source"):
            raise InputError(f"reception: {workload} matches any source (MPI's progress "
                             f"engine); round-robin applies to roundtrip only")
        reception = "any-source"
    if reception is not None and reception not in platforms.RECEPTIONS:
        raise InputError(f"reception: must be one of {', '.join(platforms.RECEPTIONS)}, "
                         f"got {reception!r}")
    work = make_workload(workload, ranks, ranks_per_node, seed, placement, **params)
    work.check_fits(plat)
    bounds.check_memory(plat.nodes, work.ranks, work.kind, work.exchanges,
                        engine_family(work.overlay, work.seed), transport=plat.transport)
    return plat, work, plat.to_engine_dict(reception)


def simulate(platform, workload: str, ranks: int = 2, ranks_per_node: int = 1, seed: int | str = 1,
             *, progress=None, trace: bool = False, **params) -> Result:
    """Simulate one workload on one platform.

    platform: a Platform, a preset name (hopsim.platforms.list_presets()) or a TOML file.
    workload: "pingpong" (osu_latency), "roundtrip" (latency_checker / Ray network test),
    "exchange" (IMB Exchange), "bandwidth" (osu_bw), "pingping" (IMB PingPing) or
    "sendrecv" (IMB Sendrecv). Ranks are placed by placement: "block" (default, Open
    MPI's --map-by slot: ranks_per_node consecutive ranks per node), "cyclic" (--map-by
    node), a rankfile or hostfile, or a list of node indices (hopsim.placement).
    params: sizes, iterations, warmup (pingpong); sizes, iterations, warmup, window
    (bandwidth); sizes,
    repetitions (exchange, pingping, sendrecv); request_bytes,
    reply_bytes, exchanges, destinations ("independent"/"shared"), overlay (family name
    or networkx graph), degree (roundtrip; seed="ray" with overlay="random" builds
    RayPlatform's own random graph and routes); reception ("any-source"/"round-robin",
    overrides the platform's), transport ("flow"/"queue", overrides the platform's
    network.transport, docs/model.md) and nodes (overrides nodes.count) for any workload.
    Collectives (alltoall, allreduce, allgather, bcast, reduce, barrier): sizes,
    repetitions, algorithm (an Open MPI coll/tuned name; default its decision rules).
    progress: a callable taking the fraction of the run done (0 to 1), called by the engine
    at most every 0.2 s while it runs and with 1 at the end (hopsim.progress draws it).
    trace: record every transfer (Result.trace: one row per message, rendezvous request
    or answer, and per hop; docs/workloads.md, "Trace"). A row per transfer: for runs of
    thousands of messages, not millions.
    Raises InputError (a ValueError) on bad input, including specs the engine rejects.
    """
    plat, work, platform_spec = prepare(platform, workload, ranks, ranks_per_node, seed, **params)
    from . import _engine  # deferred: platforms and validation work without the engine

    workload_spec = work.to_engine_dict()
    if trace:
        workload_spec["trace"] = True
    start = time.perf_counter()
    try:
        out = _engine.simulate(platform_spec, workload_spec, progress)
    except ValueError as e:
        raise InputError(str(e)) from None
    return _result(plat, work, platform_spec, out, time.perf_counter() - start)


class RunInputError(InputError):
    """simulate_batch: run `index` (in the requests' order) has bad input."""

    def __init__(self, message: str, index: int):
        super().__init__(message)
        self.index = index


def simulate_batch(requests: list[dict], jobs: int = 1, progress=None) -> list[Result]:
    """Several independent simulations, up to `jobs` at once (each in a child process of
    its own, all forked from this thread): [simulate(**r) for r in requests], the same
    results for any jobs. The first request (in order) with bad input raises
    RunInputError naming its index; later ones are not run. progress: as simulate()'s,
    for the whole batch."""
    if not requests:
        return []
    prepared = []
    for k, r in enumerate(requests):
        r = dict(r)
        try:
            prepared.append(prepare(r.pop("platform"), r.pop("workload"), **r))
        except InputError as e:
            raise RunInputError(str(e), k) from None
    from . import _engine

    start = time.perf_counter()
    try:
        outs = _engine.simulate_batch([(spec, work.to_engine_dict()) for _, work, spec in prepared],
                                      jobs, progress)
    except ValueError as e:
        raise InputError(str(e)) from None
    wall = time.perf_counter() - start
    for k, out in enumerate(outs):
        if isinstance(out, tuple):
            kind, message = out
            if kind == "invalid":
                raise RunInputError(message, k)
            raise RuntimeError(message)
    # The batch's wall time, shared out: its runs overlapped.
    return [_result(plat, work, spec, out, wall / len(outs))
            for (plat, work, spec), out in zip(prepared, outs)]


def _result(plat, work, platform_spec, out, wall) -> Result:
    from . import _engine

    node_map = _engine.place_ranks(work.to_engine_dict())
    results = out["results"]
    built = work.overlay_built()
    if built is not None:  # the overlay actually built (docs/overlays.md)
        results = {**results, "overlay": built}
    parameters = work.parameters()
    parameters["reception"] = platform_spec["reception"]
    parameters["transport"] = platform_spec["transport"]
    parameters["placement"] = work.placement_record()
    return Result(platform=plat.name, workload=work.kind, ranks=work.ranks,
                  ranks_per_node=work.ranks_per_node, seed=work.seed,
                  simulated_seconds=out["simulated_seconds"], wall_seconds=wall,
                  messages=out["messages"], results=results,
                  per_rank=dict(out.get("per_rank", {}), node=node_map), parameters=parameters,
                  platform_nodes=plat.nodes, platform_hash=plat.values_hash(),
                  trace=out.get("trace"))
