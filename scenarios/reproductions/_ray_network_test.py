"""Ray's network test run for the overlay reproductions (ray-routing, whatif-4096).

One `Case` is one `hopsim.simulate` call: Ray's network test (docs/workloads.md,
"roundtrip: any-to-any round trips": 4000-byte request, empty reply, independent per-rank
destinations) on a platform, an overlay and a reception policy. The engine routes, relays and computes
every statistic (Ray's AverageForAllRanks and StandardDeviation, the per-rank integer
means, hops, relay events, connections); this module only places the ranks, runs the
cases on the machine's cores and hands the engine's numbers back.
"""
from __future__ import annotations

import math
import multiprocessing
import signal
from dataclasses import dataclass, field

from ...machine import cores

# Ray's network test (docs/workloads.md): a 4000-byte request, an empty reply.
REQUEST_BYTES, REPLY_BYTES = 4000, 0
# The queue transport: per-link FIFO queues, validated against fair sharing on the
# emulated cluster (docs/validation.md, "Which transport": within the trial spread) and
# 10 to 400 times faster (docs/performance.md). Star platforms only.
TRANSPORT = "queue"


@dataclass(frozen=True)
class Case:
    """One run. overlay "" is no routing (every message straight to its destination;
    the engine gives the complete graph's numbers for it); seed "ray" with overlay
    "random" is RayPlatform's own random graph (its destinations then use seed 1)."""

    platform: object            # a hopsim Platform (study.platform's)
    ranks: int
    per_node: int               # ranks per node, filled in blocks (the last node may hold fewer)
    overlay: str
    reception: str
    exchanges: int
    seed: int | str = 1
    degree: int = 0
    per_rank: bool = False      # keep the per-rank integer means (ray_mean_us)
    transport: str = TRANSPORT
    tags: dict = field(default_factory=dict, compare=False)

    @property
    def nodes(self) -> int:
        """The nodes the run needs; never fewer than the preset has (unused nodes idle)."""
        return max(self.platform.nodes, -(-self.ranks // self.per_node))

    @property
    def placement(self):
        """Open MPI's --map-by slot, per_node ranks per node. When per_node does not
        divide the ranks, the same block fill as an explicit node map (the last node
        partly filled), which block placement refuses."""
        if self.ranks % self.per_node == 0:
            return "block"
        return [r // self.per_node for r in range(self.ranks)]

    def simulate_kwargs(self) -> dict:
        kw = dict(request_bytes=REQUEST_BYTES, reply_bytes=REPLY_BYTES,
                  exchanges=self.exchanges, reception=self.reception, transport=self.transport,
                  nodes=self.nodes, placement=self.placement)
        if self.overlay:
            kw["overlay"] = self.overlay
            if self.degree:
                kw["degree"] = self.degree
        return kw

    def argv(self) -> list[str] | None:
        """The `hopsim simulate` command that reruns this case; None for a partly filled
        last node, which only a rankfile or hostfile gives on the command line."""
        if self.placement != "block":
            return None
        argv = ["hopsim", "simulate", "--platform", self.platform.name, "--workload",
                "roundtrip", "--ranks", self.ranks, "--ranks-per-node", self.per_node]
        if self.nodes != self.platform.nodes:
            argv += ["--nodes", self.nodes]
        argv += ["--request-bytes", REQUEST_BYTES, "--reply-bytes", REPLY_BYTES,
                 "--exchanges", self.exchanges, "--reception", self.reception,
                 "--transport", self.transport, "--seed", self.seed]
        if self.overlay:
            argv += ["--overlay", self.overlay]
            if self.degree:
                argv += ["--degree", self.degree]
        return [str(a) for a in argv]


def run_case(case: Case) -> dict:
    """The engine's results for one case, with its transfers, wall time and (per_rank)
    the ranks' integer means as Ray computes them."""
    from ...api import simulate

    r = simulate(case.platform, "roundtrip", ranks=case.ranks, ranks_per_node=case.per_node,
                 seed=case.seed, **case.simulate_kwargs())
    out = {"results": r.results, "messages": r.messages, "wall_seconds": r.wall_seconds,
           "nodes": case.nodes, "round_trips": case.ranks * case.exchanges}
    if case.per_rank:
        out["ray_mean_us"] = list(r.per_rank["ray_mean_us"])
    return out


def run_cases(study, cases: list[Case], desc: str) -> list[dict]:
    """run_case over the cases, in order, on up to as many worker processes as this
    process may use cores (each engine run is a child process of its worker). The
    results do not depend on the worker count: each case is one deterministic run."""
    global _CASES
    jobs = min(len(cases), cores())
    if jobs <= 1:
        return [run_case(c) for c in study.progress(cases, desc)]
    _CASES = list(cases)
    # Forked workers inherit the cases (a Platform is not pickled); they ignore Ctrl-C,
    # which reaches this process, whose `finally` terminates them: nothing is left behind.
    pool = multiprocessing.get_context("fork").Pool(jobs, _ignore_sigint)
    try:
        return list(study.progress(pool.imap(_run_index, range(len(cases)), chunksize=1), desc,
                                   total=len(cases)))
    finally:
        pool.terminate()
        pool.join()
        _CASES = []


def error_percent(simulated: float | None, published: float | None) -> float | None:
    """(hopsim - published) / published in percent; None where either is missing."""
    if simulated is None or published is None or published == 0:
        return None
    return 100.0 * (simulated - published) / published


def per_hop_us(results: dict) -> float:
    """Mean round trip over the hops a round trip takes (request and reply each take
    the mean hops): what one hop costs on this platform, waits included."""
    hops = results.get("hops", {}).get("mean", 1.0)
    return results["rtt_us"]["mean"] / (2.0 * hops)


_CASES: list[Case] = []


def _run_index(i: int) -> dict:
    return run_case(_CASES[i])


def _ignore_sigint():
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def finite(x) -> float | None:
    return None if x is None or (isinstance(x, float) and not math.isfinite(x)) else x
