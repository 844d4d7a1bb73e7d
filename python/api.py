"""hopsim.simulate(): one simulation from Python."""
from __future__ import annotations

import time

from . import bounds, platforms
from .errors import InputError
from .result import Result
from .workload import Workload, make_workload


def prepare(platform, workload: str, ranks: int = 2, ranks_per_node: int = 1, seed: int = 1,
            **params) -> tuple[platforms.Platform, Workload, dict]:
    """Validate everything a run needs without running it.

    Returns the Platform, the Workload and the engine's platform dict (with a
    reception override applied). Raises InputError naming the offending parameter:
    bounds (hopsim.bounds), placement, the overlay's size, and the run's memory.
    """
    plat = platforms.load(platform)
    bounds.check_parameters(dict(params, ranks=ranks, ranks_per_node=ranks_per_node, seed=seed))
    reception = params.pop("reception", None)
    if reception is not None and reception not in platforms.RECEPTIONS:
        raise InputError(f"reception: must be one of {', '.join(platforms.RECEPTIONS)}, "
                         f"got {reception!r}")
    work = make_workload(workload, ranks, ranks_per_node, seed, **params)
    work.check_fits(plat)
    _check_overlay_shape(work)
    bounds.check_memory(plat.nodes, work.ranks, work.kind, work.exchanges, work.overlay)
    return plat, work, plat.to_engine_dict(reception)


def _check_overlay_shape(work: Workload) -> None:
    # The engine would refuse a family that does not fit the ranks only once it runs;
    # asking it here is cheap, so a scenario's every point is checked before the first runs.
    if not work.overlay or work.overlay == "user":
        return
    from . import _engine

    try:
        _engine.overlay_shape(work.overlay, work.ranks, work.degree)
    except ValueError as e:
        raise InputError(f"overlay: {e}") from None


def simulate(platform, workload: str, ranks: int = 2, ranks_per_node: int = 1, seed: int = 1,
             **params) -> Result:
    """Simulate one workload on one platform.

    platform: a Platform, a preset name (hopsim.platforms.list_presets()) or a TOML file.
    workload: "pingpong" (osu_latency), "roundtrip" (latency_checker / Ray network test)
    or "exchange" (IMB Exchange). Ranks are placed block-wise, ranks_per_node per node.
    params: sizes, iterations (pingpong); sizes, repetitions (exchange); request_bytes,
    reply_bytes, exchanges, destinations ("independent"/"shared"), overlay (family name
    or networkx graph), degree (roundtrip); reception ("any-source"/"round-robin",
    overrides the platform's) for any workload.
    Raises InputError (a ValueError) on bad input, including specs the engine rejects.
    """
    plat, work, platform_spec = prepare(platform, workload, ranks, ranks_per_node, seed, **params)
    from . import _engine  # deferred: platforms and validation work without the engine

    start = time.perf_counter()
    try:
        out = _engine.simulate(platform_spec, work.to_engine_dict())
    except ValueError as e:
        raise InputError(str(e)) from None
    wall = time.perf_counter() - start
    parameters = work.parameters()
    parameters["reception"] = platform_spec["reception"]
    return Result(platform=plat.name, workload=work.kind, ranks=work.ranks,
                  ranks_per_node=work.ranks_per_node, seed=work.seed,
                  simulated_seconds=out["simulated_seconds"], wall_seconds=wall,
                  messages=out["messages"], results=out["results"],
                  per_rank=out.get("per_rank", {}), parameters=parameters)
