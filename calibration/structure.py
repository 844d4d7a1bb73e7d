"""Which mechanisms the data call for: each structural alternative fitted jointly, compared
by BIC on the robust log residuals (calibration/joint.py).

The mechanisms are decided one after the other (pacing, token bucket, its cost per
message, shared capacity, per-node NIC cost, gap between a rank's sends, eager/rendezvous
threshold, which bytes a per-node limiter serves, probe visibility, transport), each
from the platform the previous decisions chose. An alternative wins when its BIC is at
least BIC_MARGIN below every other one (Kass and Raftery's "strong" evidence); otherwise the mechanism is undecided and stays as --base
has it (the fit of --base's alternative is kept); where --base has none of the
alternatives (a limiter's scope, when --base has no limiter), the lowest BIC is written,
and the line says so; where the data reject --base's alternative (BIC_MARGIN above the
best) but leave the others open, the open one that changes least from it is written
(_rejected_base_verdict), still undecided.

Deciding one mechanism after another can leave a better fit behind: on an exchange
between 2 nodes a token bucket slowed below the ping-pong's rate and Open MPI's
rendezvous race can take a loss that a capacity on rendezvous messages explains better,
and both are decided before that capacity is weighed. So the limiter scope, decided
last of the capacities, also weighs that capacity with the race given back and the
bucket at the closed form's rate (_without_race).

An alternative that holds another as a limit (a shared capacity or a bucket's rate without
bound is none, a NIC cost or a gap of 0 is none) cannot fit worse than it; when its fit
stops at a higher cost and that limit wins, the optimiser fell short, not the mechanism
(a shared capacity's second start, _scanned, rules that out for it; a token bucket's
fit that stops there starts again from such a scan, Alternative.rescue): it is
undecided, with that reason.

Each mechanism is decided by the cases that can decide it: the BICs are computed over the
cases some two of its fitted alternatives simulate more than MOVED apart (a shared capacity
moves the large both-ways cases, not a ping-pong). Over every case, the residuals no
alternative changes (a ping-pong's small sizes hit by the scheduler on a shared machine)
set the likelihood's scale and drown a mechanism that acts on a tenth of the cases; a
mechanism that moves no case is undecided.

Shared capacity has two forms that only runs on more than two nodes can tell apart: a
per-node limiter (network.limiter_gbps: a node's sent + received bytes share one rate)
and a backbone (network.backbone_gbps: all node-to-node bytes of the machine share one).
On two nodes every byte crosses both nodes' limiters and the backbone alike, so the two
fit equally: when both beat "none" but not each other, the capacity is decided and its
form is not (Decision.form_undecided); the platform gets --base's form, else the
per-node limiter, and says so; `--holdout` files on more nodes then decide the form by
held-out error (calibrate.py).
"""
from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field

import numpy as np

from ..platforms.platform import OPEN_MPI_TCP_EAGER_LIMIT, Platform
from .joint import FIT_CAP, MAX_NFEV, JointFit, bic_of, fit_joint, key

BIC_MARGIN = 6.0
# Two alternatives tell a case apart when their simulated times differ by more than this
# (in log: 2%, under the replicate noise of the quietest runs).
MOVED = 0.02
LIMITER, BACKBONE = "per-node limiter", "backbone"
# From here a message is many packets on every rig: both-ways cases this large show a
# shared capacity (smaller ones are latency-bound).
LARGE_BYTES = 65536
# A rate or cost the data have not shown yet starts here (then the fit moves it).
START_NIC_FRACTION = 0.05       # of the network latency
START_BURST_BYTES = 65536
# Mean |log residual| below this (0.1%) is within what the tools print (two decimals).
RESOLUTION = 1e-3
# A shared capacity's fit also starts from "none"'s fit with the capacity at the best of
# these multiples of its first guess, one simulation of every case each (_scanned): from
# twice as tight to 16 times looser, where it binds no node and costs what "none"'s fit
# costs; the lower-cost fit of the two starts is kept, so the capacity's fit can no
# longer stop above the cost of "none", the limit it holds.
SCAN_FACTORS = tuple(2 ** (k / 2) for k in range(-2, 9))


@dataclass
class Alternative:
    label: str
    platform: Platform
    free: list[str]
    # Other starting points of the same structure (a multi-start: the lowest cost is kept).
    starts: list[tuple[str, Platform]] = field(default_factory=list)
    # The alternative this one holds as a limit (a capacity or a bucket's rate without
    # bound is none; a NIC cost of 0 is none): fitted well, it cannot cost more than that.
    nests: str | None = None
    # Discrete values chosen from the data before its fit (JointFit.chosen_k).
    chosen: int = 0
    # (field, values): a second start at the value at which the platform simulates the
    # cases at the least robust cost (_scanned).
    scan: tuple[str, tuple[float, ...]] | None = None
    # (field, values, fixed): the same, tried only when the fit from the other starts
    # stops above the cost of the alternative it nests (_stuck), with `fixed`'s fields set
    # too (a token bucket's burst beside its scanned rate).
    rescue: tuple[str, tuple[float, ...], dict] | None = None
    # The fit the scan starts on, where it is not the one this alternative nests (an
    # alternative that also gives back a mechanism the nested one keeps).
    scan_from: str | None = None


@dataclass
class Decision:
    mechanism: str
    fits: list[tuple[str, JointFit]]
    chosen: str
    base_label: str
    undecided: bool
    note: str = ""                  # replaces the verdict when set (shared capacity's form)
    form_undecided: bool = False    # shared capacity: decided against none, form undecided
    starts: dict = field(default_factory=dict)   # label -> the start that won a multi-start
    bics: dict = field(default_factory=dict)     # label -> BIC over the compared cases
    compared: int = 0                            # cases the alternatives move apart
    given: str = ""                 # what the decision was given, not found in the data

    def line(self) -> str:
        mechanism = self.mechanism + (f" ({self.given})" if self.given else "")
        ev = " vs ".join(f"{label} (BIC {self.bics.get(label, j.bic):.1f}, median |error| "
                         f"{j.median_abs_error_pct():.1f}%"
                         + (f", {self.starts[label]}" if label in self.starts else "") + ")"
                         for label, j in self.fits)
        if len(self.fits) > 1:
            ev = (f"on the {self.compared} of {len(self.fits[0][1].cases)} cases they move apart: "
                  + ev)
        if self.note:
            return f"{mechanism}: {ev}: {self.note}"
        if len(self.fits) == 1:
            return f"{mechanism}: {ev}: the only alternative the data can test"
        kept = (f"left as --base has it: {self.chosen}" if self.base_label in dict(self.fits)
                else f"--base has none of these to keep; written: {self.chosen}, the lowest BIC")
        if self.compared == 0:
            return f"{mechanism}: {ev}: undecided (no case moves); {kept}"
        if self.undecided:
            return f"{mechanism}: {ev}: undecided (BIC difference under {BIC_MARGIN:g}); {kept}"
        return f"{mechanism}: {ev}: {self.chosen}"

    def provenance(self) -> str:
        return "structure: " + self.line()


@dataclass
class StructureFit:
    fit: JointFit
    decisions: list[Decision] = field(default_factory=list)
    evaluations: int = 0
    seconds: float = 0.0


def _inter(cases) -> bool:
    return any(c.ranks > c.ranks_per_node for c in cases)


def _intra(cases) -> bool:
    return any(c.ranks_per_node >= 2 for c in cases)


def core_free(p: Platform, cases) -> list[str]:
    """The continuous parameters every alternative fits: what the cases can see."""
    free = []
    if _inter(cases):
        free += ["latency_us", "bandwidth_gbps"]
    if _intra(cases) and p.intra_latency_us is not None and p.intra_latency_us > 0:
        free += ["intra_latency_us", "intra_bandwidth_gbps"]
    if p.pass_us > 0 and any(c.workload == "roundtrip" for c in cases):
        free.append("pass_us")
    return free


def _pacing(p: Platform, base: Platform, cases) -> tuple[list[Alternative], str] | None:
    if not _inter(cases):
        return None
    if p.pacing_gbps > 0:
        conn = Alternative("per-connection", p, ["pacing_gbps"])
        # The paced rate bound on the whole link instead (no one-packet exception).
        link = Alternative("per-link", p.replace(pacing_gbps=0.0, pacing_above_bytes=0,
                                                 bandwidth_gbps=p.pacing_gbps), [])
    else:
        # Every message paced at the fitted rate per connection; the link's own rate (only
        # contention shows it) starts at --base's when faster, else ten times the paced.
        R = base.bandwidth_gbps if base.bandwidth_gbps > p.bandwidth_gbps else 10 * p.bandwidth_gbps
        conn = Alternative("per-connection", p.replace(pacing_gbps=p.bandwidth_gbps,
                                                       pacing_above_bytes=0, bandwidth_gbps=R),
                           ["pacing_gbps"])
        link = Alternative("per-link", p, [])
    return [conn, link], ("per-connection" if base.pacing_gbps > 0 else "per-link")


def _bucket(p: Platform, base: Platform, cases):
    if not _inter(cases):
        return None
    if p.bucket_gbps > 0:
        # A closed-form burst of 0 (a noisy curve) cannot start a fit on log(value).
        on = Alternative("token bucket", p if p.bucket_burst_bytes > 0 else
                         p.replace(bucket_burst_bytes=START_BURST_BYTES),
                         ["bucket_gbps", "bucket_burst_bytes"])
    else:
        rate = min(r for r in (p.bandwidth_gbps, p.pacing_gbps) if r > 0) / 2
        on = Alternative("token bucket", p.replace(bucket_gbps=rate,
                                                   bucket_burst_bytes=START_BURST_BYTES),
                         ["bucket_gbps", "bucket_burst_bytes"])
    on.starts = _bucket_starts(p, cases)
    on.nests = "no bucket"
    # From its own start the bucket's fit can stop above no bucket's cost (a curve bent by
    # something other than a bucket: rig C's uncapped links); then it starts again from no
    # bucket's fit with the rate at the best of a scan, up to 16 times its first guess,
    # where it binds nothing and costs what no bucket costs.
    r0 = on.platform.bucket_gbps
    on.rescue = ("bucket_gbps", tuple(float(f"{r0 * f:.6g}") for f in SCAN_FACTORS),
                 {"bucket_burst_bytes": on.platform.bucket_burst_bytes})
    off = Alternative("no bucket", p.replace(bucket_gbps=0.0, bucket_burst_bytes=0.0,
                                             bucket_message_bytes=0.0), [])
    return [on, off], ("token bucket" if base.bucket_gbps > 0 else "no bucket")


# A message's headers, as a start: Ethernet, IPv4 and TCP with timestamps (66 B), as many
# again for the acknowledgement that shares the bucket on the way back.
START_HEADER_BYTES = 132.0
# The second start: a bucket that charges little beyond the payload. Under the bound on
# the charge (joint.MAX_HEADER_BYTES), rig B's fit from 132 B climbed to the bound with a
# burst of 122 KB (its 2-host latency_checker then 170-200% slow); from 4 B it reaches
# the bound as well, at a lower cost, with 362 KB (117-145%).
LOW_START_HEADER_BYTES = 4.0


def _headers(p: Platform, base: Platform, cases):
    """A bucket's cost per message beyond its payload (network.bucket_message_bytes: the
    packets' headers). Small messages show it: a ping-pong of a few hundred bytes whose
    round trip refills fewer tokens than a message takes drains the bucket after as many
    round trips as its depth allows (how many the tool ran decides when), then runs at
    twice the bucket's rate per message plus headers."""
    if p.bucket_gbps <= 0 or not any(c.workload == "pingpong" and c.ranks > c.ranks_per_node
                                     for c in cases):
        return None
    h0 = p.bucket_message_bytes if p.bucket_message_bytes > 0 else START_HEADER_BYTES
    on = Alternative("headers", p.replace(bucket_message_bytes=h0), ["bucket_message_bytes"],
                     nests="no headers")
    # The charge trades against the burst (both drain the bucket of small messages): a fit
    # from either end can stop on its own side, so both are tried and the cheaper kept.
    if h0 > 2 * LOW_START_HEADER_BYTES:
        on.starts = [(f"started at bucket_message_bytes = {LOW_START_HEADER_BYTES:g}",
                      p.replace(bucket_message_bytes=LOW_START_HEADER_BYTES))]
    off = Alternative("no headers", p.replace(bucket_message_bytes=0.0), [])
    return [on, off], ("headers" if base.bucket_message_bytes > 0 else "no headers")


EVERY_BYTE, RENDEZVOUS_ONLY, NO_LIMITER = "every byte", "rendezvous messages only", "no limiter"
NO_RACE = "rendezvous messages only, no race"
# The limiter serving rendezvous messages only also starts at these fractions of its rate
# serving every byte: the same bytes of large messages then carry all of the slowdown.
SCOPE_START_FACTORS = (0.8, 0.65)


def _limiter_scope(p: Platform, base: Platform, cases, start: Platform | None = None):
    """Which bytes a per-node limiter serves (network.limiter_scope): every node-to-node
    byte, or only those of messages above the eager threshold. The both-ways cases with
    eager messages tell them apart (IMB Exchange below the eager limit, latency_checker's
    round trips): the limiter on every byte slows them, the other leaves them alone.
    Where the shared capacity found none (a limiter on every byte would slow the eager
    sizes that show no such thing), a limiter on rendezvous messages only against none,
    its rate started as the shared capacity's is (and scanned).

    Where the fit has Open MPI's rendezvous race (rate_jitter), one more alternative
    (_without_race): the exchange's loss that the race, and a bucket slowed below the
    ping-pong's rate, took before any capacity on rendezvous messages could be weighed
    (the token bucket and the protocol are decided first), explained by that capacity
    instead."""
    loaded = _both_ways(cases)
    if p.eager_threshold_bytes is None or p.backbone_gbps > 0 or not loaded:
        return None
    if p.limiter_gbps > 0:
        every = Alternative(EVERY_BYTE, p.replace(limiter_scope="all"), ["limiter_gbps"])
        rdv = Alternative(RENDEZVOUS_ONLY, p.replace(limiter_scope="rendezvous"), ["limiter_gbps"])
        rdv.starts = [(f"started at limiter_gbps = {p.limiter_gbps * f:.4g}",
                       rdv.platform.replace(limiter_gbps=float(f"{p.limiter_gbps * f:.6g}")))
                      for f in SCOPE_START_FACTORS]
        alternatives = [every, rdv] + _without_race(p, start, p.limiter_gbps, EVERY_BYTE)
        # --base without a limiter has no scope to keep (its limiter_scope is a default of
        # an absent field): undecided, the lower BIC is written (Decision.line says so).
        if base.limiter_gbps <= 0:
            return alternatives, ""
        return alternatives, (RENDEZVOUS_ONLY if base.limiter_scope == "rendezvous" else EVERY_BYTE)
    d0, _ = _capacity_start(p, loaded)
    none = Alternative(NO_LIMITER, p, [])
    rdv = Alternative(RENDEZVOUS_ONLY, p.replace(limiter_gbps=float(f"{d0:.6g}"), limiter_scope="rendezvous"),
                      ["limiter_gbps"], nests=NO_LIMITER,
                      scan=("limiter_gbps", tuple(float(f"{d0 * f:.6g}") for f in SCAN_FACTORS),
                            {"limiter_scope": "rendezvous"}))
    on = base.limiter_gbps > 0 and base.limiter_scope == "rendezvous"
    return [none, rdv] + _without_race(p, start, d0, NO_LIMITER), (RENDEZVOUS_ONLY if on else NO_LIMITER)


def _without_race(p: Platform, start: Platform | None, d0: float, scan_from: str) -> list[Alternative]:
    """[the limiter on rendezvous messages only, without the race, the bucket back at the
    closed form's rate] where the fit has the race, else []. Its rate is scanned on
    scan_from's fit (none's, or the limiter's on every byte) with those fields set. It
    gives back the race's jitter, a choice the eager/rendezvous decision counted as a
    parameter (chosen = -1: as many parameters as the race without a limiter). It nests
    nothing: without the limiter it is not scan_from's fit."""
    if p.rate_jitter <= 0:
        return []
    fields = {"limiter_scope": "rendezvous", "rate_jitter": 0.0}
    if p.bucket_gbps > 0 and start is not None and start.bucket_gbps > 0:
        fields["bucket_gbps"] = start.bucket_gbps
    return [Alternative(NO_RACE, p.replace(limiter_gbps=float(f"{d0:.6g}"), **fields),
                        ["limiter_gbps"], chosen=-1, scan_from=scan_from,
                        scan=("limiter_gbps", tuple(float(f"{d0 * f:.6g}") for f in SCAN_FACTORS),
                              fields))]


def _stream_gbps(cases) -> float | None:
    """osu_bw's streaming rate at its largest size (median over its files), Gbit/s: a
    window of messages back to back drains a token bucket that a ping-pong's pauses refill."""
    bw = [c for c in cases if c.workload == "bandwidth" and c.ranks > c.ranks_per_node]
    if not bw:
        return None
    top = max(c.bytes for c in bw)
    return float(np.median([c.bytes * 8 / 1000 / c.measured_us for c in bw if c.bytes == top]))


def _bucket_starts(p: Platform, cases) -> list[tuple[str, Platform]]:
    """A second start when osu_bw streams well below the rate the current fit sustains: the
    bucket's rate at the streaming rate, its burst the largest ping-pong message (the
    ping-pong then passes every size at the line rate, as it did when it showed no drop)."""
    stream = _stream_gbps(cases)
    sustained = min(r for r in (p.bandwidth_gbps, p.pacing_gbps, p.bucket_gbps) if r > 0)
    pp = [c.bytes for c in cases if c.workload == "pingpong" and c.ranks > c.ranks_per_node]
    if stream is None or not pp or stream > 0.8 * sustained:
        return []
    burst = float(max(pp))
    label = f"started from osu_bw's streaming rate {stream:.4g} Gbit/s, burst {burst:.0f} B"
    return [(label, p.replace(bucket_gbps=stream, bucket_burst_bytes=burst))]


def _both_ways(cases) -> list:
    """Cases that load both directions of node-to-node links at once with many bytes
    (IMB Exchange and the like; not a ping-pong, osu_bw's one-way stream or round trips)."""
    return [c for c in cases if c.workload not in ("pingpong", "bandwidth", "roundtrip")
            and c.ranks > c.ranks_per_node and c.bytes and c.bytes >= LARGE_BYTES]


def _nodes(c) -> int:
    placed = c.run.get("placement")
    if isinstance(placed, tuple) and placed and all(isinstance(n, int) for n in placed):
        return len(set(placed))
    return -(-c.ranks // c.ranks_per_node)


def _capacity_start(p: Platform, loaded) -> tuple[float, int]:
    """(rate, nodes): a node's in + out at the fitted one-way rate is 2r; the largest
    both-ways cases measured `slow` times what the current fit gives: start at 2r / slow.
    nodes: how many the largest of them ran on."""
    r = min(x for x in (p.bandwidth_gbps, p.pacing_gbps, p.bucket_gbps) if x > 0)
    top = max(c.bytes for c in loaded)
    big = [c for c in loaded if c.bytes == top and c.simulated_us and c.simulated_us > 0]
    slow = float(np.median([c.measured_us / c.simulated_us for c in big])) if big else 1.0
    return 2 * r / max(slow, 1.0), (max(_nodes(c) for c in big) if big else 2)


def _shared(p: Platform, base: Platform, cases):
    loaded = _both_ways(cases)
    if not loaded:
        return None
    d0, nodes = _capacity_start(p, loaded)
    none = Alternative("none", p.replace(limiter_gbps=0.0, backbone_gbps=0.0), [])
    lim = Alternative(LIMITER, p.replace(limiter_gbps=float(f"{d0:.6g}"), backbone_gbps=0.0),
                      ["limiter_gbps"], nests="none",
                      scan=("limiter_gbps", tuple(float(f"{d0 * f:.6g}") for f in SCAN_FACTORS)))
    # The backbone carries every node's share: nodes / 2 limiters' worth.
    b0 = d0 * nodes / 2
    bb = Alternative(BACKBONE, p.replace(backbone_gbps=float(f"{b0:.6g}"), limiter_gbps=0.0),
                     ["backbone_gbps"], nests="none",
                     scan=("backbone_gbps", tuple(float(f"{b0 * f:.6g}") for f in SCAN_FACTORS)))
    label = LIMITER if base.limiter_gbps > 0 else BACKBONE if base.backbone_gbps > 0 else "none"
    return [none, lim, bb], label


def _scanned(alt: Alternative, on: Platform, cases, cap, scan=None,
             origin: str | None = None) -> tuple[Platform, str, int]:
    """(start, how, simulations): `on` (the fit of the alternative alt holds as a limit)
    with the scan's field (alt.scan unless given: (field, values[, fixed fields])) at the
    scanned value that simulates the cases at the least robust cost (ties: the smaller
    value), no fit. A value that binds nothing costs what `on` costs, so the start, and
    the fit from it, cost no more than that limit's fit."""
    name, values, *fixed = scan or alt.scan
    fixed = fixed[0] if fixed else {}
    costs = {v: fit_joint(on.replace(**fixed, **{name: v}), cases, [], cap=cap).cost for v in values}
    best = min(values, key=lambda v: (costs[v], v))
    how = f"started at {name} = {best:.4g}, the best of {len(values)} scanned on {origin or alt.nests}'s fit"
    return on.replace(**fixed, **{name: best}), how, len(values)


def compare(fits) -> tuple[dict, int]:
    """({label: BIC over the compared cases}, how many): the cases some two fits simulate
    more than MOVED apart (module docstring). Too few of them for the largest fit's
    parameters: every case (the BIC as the fit reports it)."""
    if len(fits) < 2:
        return {label: j.bic for label, j in fits}, len(fits[0][1].cases) if fits else 0
    sims = np.log(np.maximum(np.array([j.simulated for _, j in fits], float), 1e-12))
    moved = (sims.max(axis=0) - sims.min(axis=0)) > MOVED
    n = int(moved.sum())
    if n == 0:
        return {label: j.bic for label, j in fits}, 0
    if n < max(j.k for _, j in fits) + 2:
        moved[:] = True
        n = len(moved)
    return {label: bic_of(j.residuals[moved], j.k) for label, j in fits}, n


def _capacity_verdict(bic: dict, base_label: str, cases):
    """(chosen, undecided, form_undecided, note) for shared capacity (module docstring)."""
    best = min(bic, key=bic.get)
    if best == "none" or bic["none"] - bic[best] < BIC_MARGIN:
        return None
    other = BACKBONE if best == LIMITER else LIMITER
    if bic[other] - bic[best] >= BIC_MARGIN:
        return None
    chosen = base_label if base_label in (LIMITER, BACKBONE) else LIMITER
    two = all(_nodes(c) <= 2 for c in _both_ways(cases))
    why = ("every case that loads both directions runs on 2 nodes, where all node-to-node "
           "bytes cross each node's limiter and the backbone alike: no 2-node run can tell "
           "them apart; runs on more nodes can (give them to --holdout)") if two else           "the files do not tell them apart"
    written = ("as --base has it" if base_label in (LIMITER, BACKBONE) else
               "the per-node form (it keeps each node's rate when nodes are added; the "
               "backbone's would be shared by them)")
    note = (f"a shared capacity (BIC {bic['none'] - bic[best]:.1f} below none); per-node "
            f"limiter or backbone: undecided (BIC difference {abs(bic[other] - bic[best]):.1f} "
            f"under {BIC_MARGIN:g}): {why}; written: {chosen}, {written}")
    return chosen, False, True, note


def _nic(p: Platform, base: Platform, cases):
    # One rank per node on both sides sees the cost as latency: only 2+ ranks on a node
    # that also talks across nodes can separate it.
    if not any(c.ranks_per_node >= 2 and c.ranks > c.ranks_per_node for c in cases):
        return None
    c0 = p.nic_message_us if p.nic_message_us > 0 else START_NIC_FRACTION * p.latency_us
    on = Alternative("per-node NIC cost",
                     p.replace(nic_message_us=c0, latency_us=max(p.latency_us - 2 * c0, 1e-3)),
                     ["nic_message_us"], nests="no NIC cost")
    off = Alternative("no NIC cost", p.replace(nic_message_us=0.0), [])
    return [on, off], ("per-node NIC cost" if base.nic_message_us > 0 else "no NIC cost")


def _streams(cases) -> list:
    """Cases in which one rank has several small messages in flight at once (osu_bw's
    window, IMB Exchange's two sends): where a per-message gap between a rank's sends
    shows, which a ping-pong (one message at a time) cannot separate from the latency."""
    return [c for c in cases if c.workload in ("bandwidth", "exchange") and c.bytes is not None
            and c.bytes < LARGE_BYTES and c.ranks > c.ranks_per_node]


def _gap(p: Platform, base: Platform, cases):
    small = _streams(cases)
    if not small:
        return None
    if p.gap_us > 0:
        g0 = p.gap_us
    else:
        # osu_bw's time per message at its smallest size is the gap, where a gap binds
        # (the wire then passes a few bytes in less); without osu_bw, half the latency.
        bw = [c for c in small if c.workload == "bandwidth"]
        top = min((c.bytes for c in bw), default=None)
        g0 = (float(np.median([c.measured_us for c in bw if c.bytes == top])) if bw
              else 0.5 * p.latency_us)
    on = Alternative("per-message gap", p.replace(gap_us=float(f"{g0:.6g}")), ["gap_us"],
                     nests="no gap")
    # A gap, a bucket's header charge and its burst all slow small messages: rig B's fit
    # came to the gap with the charge at its bound and a third of its burst, and from there
    # stayed (cost 3.39); started with the charge given back and the burst doubled, it
    # reached 1 B and 833 KB (cost 1.93, BIC 223 lower), where its fit had been before the
    # bound. The cheaper fit is kept (decide).
    if p.bucket_gbps > 0 and p.bucket_message_bytes > 2 * LOW_START_HEADER_BYTES:
        burst = 2 * p.bucket_burst_bytes
        on.starts = [(f"started with the header charge given back (bucket_message_bytes = "
                      f"{LOW_START_HEADER_BYTES:g}, burst doubled to {burst:.0f} B)",
                      on.platform.replace(bucket_message_bytes=LOW_START_HEADER_BYTES,
                                          bucket_burst_bytes=burst))]
    off = Alternative("no gap", p.replace(gap_us=0.0), [])
    return [on, off], ("per-message gap" if base.gap_us > 0 else "no gap")


# Workloads whose ranks send and receive at once: a rendezvous's handshake then waits
# behind the other direction's data, which a ping-pong never shows.
BOTH_WAYS = ("exchange", "pingping", "sendrecv")


def rendezvous_thresholds(cases, limit: int | None = None) -> list[int]:
    """Every threshold the both-ways cases between nodes (BOTH_WAYS) can tell apart: one
    per interval between their measured sizes, put just under the upper size (a
    rendezvous from it on; Open MPI's eager limit counts its header, so 64 KiB messages
    are its first rendezvous). With the MPI's own eager limit known (calibrate
    --eager-limit), that one alone, where such cases exist."""
    sizes = sorted({c.bytes for c in cases if c.workload in BOTH_WAYS and c.ranks > c.ranks_per_node})
    if limit is not None:
        return [int(limit)] if len(sizes) > 1 else []
    return [s - 1 for s in sizes[1:]]


# A rendezvous's race (docs/model.md, "Protocol"): of two ranks exchanging both ways, the
# one whose last byte arrives first answers first, and the other then serves that answer
# before its own, which waits behind a whole message. Which one wins comes from the
# directions' small timing differences, network.rate_jitter: scanned, not fitted (a
# repetition is lost or not, so the cost has no gradient in it). The screen tries each
# threshold without it and with JITTER_PROBE; the scan then picks it at the threshold.
JITTER_PROBE = 1e-3
JITTER_SCAN = (1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3)


def _screen(p: Platform, cases, cap, limit: int | None = None) -> tuple[int, int, float, int]:
    """(threshold, first bytes, race jitter, simulations): of every rendezvous_thresholds
    value, with an empty request and with its first bytes in it, without a race jitter and
    with JITTER_PROBE, the one whose platform simulates the cases at the least robust cost;
    then the jitter of 0 and JITTER_SCAN that does, at that threshold (no fit: one
    simulation of every case each)."""
    costs = {}
    for t in rendezvous_thresholds(cases, limit):
        for first in (0, t):
            for jitter in (0.0, JITTER_PROBE):
                costs[(t, first, jitter)] = fit_joint(
                    p.replace(eager_threshold_bytes=t, rendezvous_first_bytes=first, rate_jitter=jitter),
                    cases, [], cap=cap).cost
    t, first, _ = min(costs, key=lambda k: (costs[k], k))
    for jitter in JITTER_SCAN:
        if (t, first, jitter) not in costs:
            costs[(t, first, jitter)] = fit_joint(
                p.replace(eager_threshold_bytes=t, rendezvous_first_bytes=first, rate_jitter=jitter),
                cases, [], cap=cap).cost
    best = min((0.0,) + JITTER_SCAN, key=lambda j: (costs[(t, first, j)], j))
    return t, first, best, len(costs)


def _eager(p: Platform, base: Platform, cases, candidate: int | None, cap,
           limit: int | None = None):
    """Eager only against a rendezvous above a threshold, each with an empty request and
    with its first bytes in it (ob1): the closed form's threshold (a jump in the
    ping-pong) or --base's, and the both-ways cases' best screened one (_screen), whose
    choice counts as a parameter (JointFit.chosen_k). With the MPI's eager limit given
    (`limit`, calibrate --eager-limit), that threshold only, its race jitter scanned."""
    known = []
    for t in (() if limit is not None else
              (candidate if candidate is not None else base.eager_threshold_bytes,
               p.eager_threshold_bytes)):
        if t is not None and int(t) not in known:
            known.append(int(t))
    screened = None
    if rendezvous_thresholds(cases, limit):
        screened = _screen(p, cases, cap, limit)
    if not known and screened is None:
        return None
    alternatives = [Alternative("eager only", p.replace(eager_threshold_bytes=None,
                                                        rendezvous_first_bytes=0, rate_jitter=0.0), [])]
    tried = [(t, 0, 0.0) for t in known]
    if screened:
        t, _, jitter, _ = screened
        if t not in known:
            tried.append((t, 1, 0.0))
        if jitter > 0:
            tried.append((t, 2, jitter))   # the threshold and the jitter chosen from the data
    for t, chosen, jitter in tried:
        for first in (0, t):
            alternatives.append(Alternative(_label(t, first, jitter), p.replace(
                eager_threshold_bytes=t, rendezvous_first_bytes=first, rate_jitter=jitter),
                [], chosen=chosen))
    labels = [a.label for a in alternatives]
    t0 = base.eager_threshold_bytes
    base_label = ("eager only" if t0 is None else
                  _label(t0, base.rendezvous_first_bytes, base.rate_jitter))
    return alternatives, (base_label if base_label in labels else labels[0]), \
        (screened[3] if screened else 0)


def _label(threshold: int, first: int, jitter: float) -> str:
    return (f"rendezvous above {threshold} B" + (f", first {first} B with the request" if first else "")
            + (f", race jitter {jitter:g}" if jitter else ""))


def _request_verdict(alternatives, bic: dict, best: str):
    """(chosen, undecided, False, note) when a rendezvous wins and only its
    request's form (empty, or with its first bytes) is undecided: the two alternatives
    that differ in nothing else are each BIC_MARGIN below every other one, and within it
    of each other. The empty request is written: Open MPI 4.1's TCP transport sends its
    rendezvous that way (docs/calibration.md), as do MPICH and SMPI."""
    by = {a.label: a.platform for a in alternatives}
    b = by[best]
    if b.eager_threshold_bytes is None:
        return None
    twin = next((label for label, q in by.items() if label != best
                 and q.eager_threshold_bytes == b.eager_threshold_bytes
                 and q.rate_jitter == b.rate_jitter
                 and q.rendezvous_first_bytes != b.rendezvous_first_bytes), None)
    if twin is None or abs(bic[twin] - bic[best]) >= BIC_MARGIN:
        return None
    empty = best if b.rendezvous_first_bytes == 0 else twin
    if any(bic[label] - bic[empty] < BIC_MARGIN for label in bic if label not in (best, twin)):
        return None
    runner_up = min((label for label in bic if label not in (best, twin)), key=bic.get)
    note = (f"{empty} (BIC {bic[runner_up] - bic[empty]:.1f} below {runner_up}); the request "
            f"empty or with its first bytes: undecided (BIC difference "
            f"{abs(bic[twin] - bic[best]):.1f} under {BIC_MARGIN:g}); written: the empty request, "
            f"as Open MPI 4.1's TCP transport sends it")
    # Not Decision.form_undecided: that one is the shared capacity's (held-out files
    # decide it, calibrate._other_form); no file here tells the request's forms apart.
    return empty, False, False, note


def _rejected_base_verdict(mechanism: str, alternatives, bic: dict, kept: str):
    """(chosen, note) when the data leave a mechanism undecided among several alternatives
    but reject the one --base has (its BIC at least BIC_MARGIN above the best): keeping it
    would write what the files rule out. Written instead: of the alternatives within
    BIC_MARGIN of the best, the one that changes the fewest of the mechanism's fields from
    --base's (then the lower BIC). On eager/rendezvous with --base's eager only: a
    rendezvous, Open MPI's empty request and no race jitter where those are not rejected.
    Still undecided: the runner-up is written beside the fit as for any open decision.
    None when --base's alternative is not rejected."""
    best = min(bic, key=bic.get)
    if kept not in bic or bic[kept] - bic[best] < BIC_MARGIN:
        return None
    open_ = _least_change(mechanism, alternatives, bic, kept,
                          [label for label in bic if bic[label] - bic[best] < BIC_MARGIN])
    chosen = open_[0]
    note = (f"{kept}, as --base has it, rejected (BIC {bic[kept] - bic[best]:.1f} above "
            f"{best}); {' vs '.join(sorted(open_, key=bic.get))}: undecided (BIC difference "
            f"{max(bic[label] for label in open_) - bic[best]:.1f} under {BIC_MARGIN:g}); "
            f"written: {chosen}, the least change from --base's")
    return chosen, note


def _least_change(mechanism: str, alternatives, bic: dict, kept: str, labels) -> list[str]:
    """labels, the fewest of the fields the mechanism's alternatives set changed from
    kept's first, then by BIC."""
    by = {a.label: a.platform for a in alternatives}

    def changed(label):
        return sum(getattr(by[label], f) != getattr(by[kept], f) for f in ALTERNATIVE_FIELDS[mechanism])

    return sorted(labels, key=lambda label: (changed(label), bic[label]))


def _given_limit_verdict(alternatives, bic: dict, kept: str, limit_from: str):
    """(chosen, note) when the MPI's eager limit is given (--eager-limit, or hopsim's own
    Open MPI runs) and the data leave eager/rendezvous undecided with --base's eager only
    in place: the MPI itself moves a message above that limit by a rendezvous, so eager
    only would contradict a given fact that the data do not overrule. Written instead: of
    the rendezvous alternatives within BIC_MARGIN of the best, the least change from
    --base's (the plain rendezvous: the empty request Open MPI 4.1's TCP transport sends,
    no race jitter), then the lower BIC. Still undecided: the runner-up is written beside
    the fit. None when --base's alternative is a rendezvous or none is open."""
    by = {a.label: a.platform for a in alternatives}
    if kept not in bic or by[kept].eager_threshold_bytes is not None:
        return None
    best = min(bic, key=bic.get)
    open_ = [label for label in bic if bic[label] - bic[best] < BIC_MARGIN]
    rendezvous = [label for label in open_ if by[label].eager_threshold_bytes is not None]
    if not rendezvous:
        return None
    chosen = _least_change("eager/rendezvous", alternatives, bic, kept, rendezvous)[0]
    note = (f"{' vs '.join(sorted(open_, key=bic.get))}: undecided (BIC difference "
            f"{max(bic[label] for label in open_) - bic[best]:.1f} under {BIC_MARGIN:g}); "
            f"written: {chosen}, not --base's {kept}: the MPI sends a rendezvous above its "
            f"eager limit ({limit_from}), and these files do not rule that out")
    return chosen, note


def _probe(p: Platform, base: Platform, cases):
    # The probe modes differ only when a rank polls (a pass cost) and messages compete.
    if not (p.pass_us > 0 and any(c.workload == "roundtrip" for c in cases)):
        return None
    return [Alternative(m, p.replace(probe=m), []) for m in ("arrival", "header", "post")], base.probe


def _transport(p: Platform, base: Platform, cases):
    if p.topology != "star" or not any(c.ranks > 2 for c in cases):
        return None
    return [Alternative(t, p.replace(transport=t), []) for t in ("flow", "queue")], base.transport


# The protocol last but for the probe and the transport: in the engine a handshake slows
# a two-node exchange only where the directions share a capacity, and on small messages
# it would stand in for a missing gap (docs/calibration.md).
MECHANISMS = (("pacing", _pacing), ("token bucket", _bucket), ("bucket headers", _headers),
              ("shared capacity", _shared), ("NIC message cost", _nic), ("gap between sends", _gap),
              ("eager/rendezvous", _eager), ("limiter scope", _limiter_scope),
              ("probe visibility", _probe), ("transport", _transport))


def decide(start: Platform, base: Platform, cases, eager_candidate: int | None = None,
           cap: int | None = FIT_CAP, max_nfev: int = MAX_NFEV, progress=None,
           hold=(), eager_limit: int | None = None,
           eager_limit_from: str = "given by --eager-limit") -> StructureFit:
    """Fit the core parameters, then decide each mechanism in turn (module docstring).
    hold: fields no fit moves (calibrate --hold); eager_limit: the MPI's own eager limit
    (eager_limit_from: who says so, for the report),
    the only rendezvous threshold weighed (calibrate --eager-limit)."""
    t0 = time.perf_counter()
    core = [f for f in core_free(start, cases) if f not in hold]
    current = core_fit = fit_joint(start, cases, core, cap=cap, max_nfev=max_nfev)
    extra: list[str] = []
    decisions = []
    screened = 0    # simulations outside the fits: the eager threshold's screen, scans
    for name, make in MECHANISMS:
        args = (current.platform, base, cases) + ((eager_candidate, cap, eager_limit)
                                                  if make is _eager else
                                                  (start,) if make is _limiter_scope else ())
        made = make(*args)
        if made is None:
            continue
        if make is _eager:
            alternatives, base_label, n_screened = made
            screened += n_screened
            if progress and n_screened and eager_limit is None:
                # The screen picks stand-ins for small-message costs where the MPI's own
                # limit would do better (docs/calibration.md, "--eager-limit").
                progress(f"eager/rendezvous: the threshold is screened from the data; if the "
                         f"files come from Open MPI over TCP, --eager-limit "
                         f"{OPEN_MPI_TCP_EAGER_LIMIT} gives its own")
        else:
            alternatives, base_label = made
        # An alternative that frees more values than there are cases fits them exactly
        # whatever they are: its BIC decides nothing, so --base's mechanism stays.
        keep_now = [f for f in extra if f not in hold]
        if any(len(core) + len(keep_now) + len([f for f in a.free if f not in hold]) + a.chosen
               > len(cases) for a in alternatives):
            continue
        fits = []
        starts = {}
        for alt in alternatives:
            if progress:
                progress(f"{name}: fitting {alt.label}")
            keep = [f for f in extra if f not in _turned_off(alt)]
            # A discrete switch with nothing new to fit gets a shorter refit.
            nfev = max_nfev if alt.free else max(4, max_nfev // 2)
            free = [f for f in alt.free if f not in hold]
            # A start may only move what this fit frees (not what --hold keeps).
            more = [(how, o) for how, o in alt.starts
                    if _moved(alt.platform, o) <= set(core + keep + free)]
            origin = alt.scan_from or alt.nests
            if alt.scan and alt.scan[0] in free and origin in dict(fits):
                scanned, how, n_scanned = _scanned(alt, dict(fits)[origin].platform, cases, cap,
                                                   origin=origin)
                screened += n_scanned
                if scanned != alt.platform:
                    more.append((how, scanned))
            j = fit_joint(alt.platform, cases, core + keep + free, cap=cap, max_nfev=nfev)
            for how, other in more:
                if progress:
                    progress(f"{name}: fitting {alt.label}, {how}")
                k = fit_joint(other, cases, core + keep + free, cap=cap, max_nfev=nfev)
                k.evaluations += j.evaluations
                if k.cost < j.cost:
                    j, starts[alt.label] = k, how
                else:
                    j.evaluations = k.evaluations
            j.chosen_k = alt.chosen
            fits.append((alt.label, j))
        for i, (label, j) in enumerate(fits):
            alt = next(a for a in alternatives if a.label == label)
            if not (alt.rescue and alt.nests in dict(fits)
                    and _stuck([alt], dict(fits), alt.nests)):
                continue
            if progress:
                progress(f"{name}: fitting {label} again, from {alt.nests}'s fit")
            start, how, n_scanned = _scanned(alt, dict(fits)[alt.nests].platform, cases, cap,
                                             alt.rescue)
            screened += n_scanned
            keep = [f for f in extra if f not in _turned_off(alt)]
            k = fit_joint(start, cases, core + keep + [f for f in alt.free if f not in hold],
                          cap=cap, max_nfev=max_nfev)
            k.evaluations += j.evaluations
            k.chosen_k = alt.chosen
            if k.cost < j.cost:
                fits[i], starts[label] = (label, k), how + " (its first fit had stopped above it)"
            else:
                j.evaluations = k.evaluations
        bics, compared = compare(fits)
        ranked = sorted(fits, key=lambda lf: bics[lf[0]])
        stuck = _stuck(alternatives, dict(fits), ranked[0][0])
        undecided = len(ranked) > 1 and (compared == 0 or bool(stuck) or
                                         bics[ranked[1][0]] - bics[ranked[0][0]] < BIC_MARGIN)
        chosen = base_label if undecided else ranked[0][0]
        if chosen not in dict(fits):   # --base's alternative was not among those tested
            chosen = ranked[0][0]
        note, form_undecided = "", False
        if stuck:
            note = (f"undecided: {stuck}; left as --base has it: {chosen}")
        elif make is _shared and compared:
            verdict = _capacity_verdict(bics, base_label, cases)
            if verdict is not None:
                chosen, undecided, form_undecided, note = verdict
        elif make is _eager and undecided and compared:
            verdict = _request_verdict(alternatives, bics, ranked[0][0])
            if verdict is not None:
                chosen, undecided, form_undecided, note = verdict
        if undecided and compared and not stuck and not note:
            verdict = _rejected_base_verdict(name, alternatives, bics, chosen)
            if verdict is not None:
                chosen, note = verdict
        if make is _eager and eager_limit is not None and undecided and compared and not stuck and not note:
            verdict = _given_limit_verdict(alternatives, bics, chosen, eager_limit_from)
            if verdict is not None:
                chosen, note = verdict
        given = (f"the threshold weighed: {eager_limit} B, the MPI's eager limit as "
                 f"{eager_limit_from}, not screened" if make is _eager and eager_limit is not None
                 else "")
        decisions.append(Decision(name, fits, chosen, base_label, undecided, note, form_undecided,
                                  starts, bics, compared, given))
        current = dict(fits)[chosen]
        current.restore()
        alt = next(a for a in alternatives if a.label == chosen)
        extra = [f for f in extra if f not in _turned_off(alt)] + [f for f in alt.free
                                                                   if f not in hold]
    evaluations = (screened + core_fit.evaluations
                   + sum(j.evaluations for d in decisions for _, j in d.fits))
    return StructureFit(current, decisions, evaluations, time.perf_counter() - t0)


def _moved(a: Platform, b: Platform) -> set[str]:
    return {f.name for f in dataclasses.fields(Platform)
            if f.compare and getattr(a, f.name) != getattr(b, f.name)}


def _stuck(alternatives, fits: dict, winner: str) -> str:
    """Why the winner's win cannot be trusted, or "": an alternative that holds the winner
    as a limit fitted to a higher robust cost than it (the optimiser stopped short of its
    optimum within its evaluations), so its BIC is no evidence for the winner. (A win over
    a stuck alternative by another fitted properly stands.)"""
    for a in alternatives:
        if a.nests != winner or a.nests not in fits:
            continue
        j, limit = fits[a.label], fits[a.nests]
        # Short by more than half the BIC margin in bic_of's fit term alone, residuals
        # under the tools' printed resolution counting as exact (two fits within it are
        # never stuck: a gap at its lowest bound misses an exact file by 0.03%).
        scale = [math.log(max(float(np.mean(np.abs(f.residuals))), RESOLUTION)) for f in (j, limit)]
        if j.cost > limit.cost and 2 * j.n * (scale[0] - scale[1]) > BIC_MARGIN / 2:
            return (f"the fit of {a.label} stopped at a higher cost ({fits[a.label].cost:.4g}) "
                    f"than {a.nests} ({fits[a.nests].cost:.4g}), which it holds as a limit: "
                    f"the optimiser did not reach its optimum")
    return ""


def _turned_off(alt: Alternative) -> set[str]:
    p = alt.platform
    off = set()
    if p.pacing_gbps == 0:
        off.add("pacing_gbps")
    if p.bucket_gbps == 0:
        off |= {"bucket_gbps", "bucket_burst_bytes"}
    if p.bucket_message_bytes == 0:
        off.add("bucket_message_bytes")
    if p.nic_message_us == 0:
        off.add("nic_message_us")
    if p.limiter_gbps == 0:
        off.add("limiter_gbps")
    if p.backbone_gbps == 0:
        off.add("backbone_gbps")
    if p.gap_us == 0:
        off.add("gap_us")
    return off


# The platform fields each mechanism's alternatives set.
MECHANISM_FIELDS = {"pacing": ("pacing_gbps", "pacing_above_bytes"),
                    "token bucket": ("bucket_gbps", "bucket_burst_bytes"),
                    "bucket headers": ("bucket_message_bytes",),
                    "shared capacity": ("limiter_gbps", "backbone_gbps"),
                    "NIC message cost": ("nic_message_us",), "gap between sends": ("gap_us",),
                    "eager/rendezvous": ("eager_threshold_bytes", "rendezvous_first_bytes",
                                         "rate_jitter"),
                    "limiter scope": ("limiter_scope", "limiter_gbps"),
                    "probe visibility": ("probe",),
                    "transport": ("transport",)}


# What the limiter scope's alternative without the race sets beyond its mechanism's fields.
WITHOUT_RACE_FIELDS = ("rate_jitter", "bucket_gbps")
# What a runner-up sets (calibrate.undecided): its mechanism's fields, and for pacing the
# line too (per link, the paced rate is the line's; per connection, the line is faster).
ALTERNATIVE_FIELDS = {**MECHANISM_FIELDS,
                      "pacing": MECHANISM_FIELDS["pacing"] + ("bandwidth_gbps",),
                      "limiter scope": MECHANISM_FIELDS["limiter scope"] + WITHOUT_RACE_FIELDS}


def mechanism_keys(name: str) -> list[str]:
    return [key(f) for f in MECHANISM_FIELDS[name]]


def decision_keys(d: Decision) -> list[str]:
    """The keys whose values d set: its mechanism's, and where the limiter scope's
    alternative without the race won, the race's and the bucket's rate it gave back."""
    extra = WITHOUT_RACE_FIELDS if d.mechanism == "limiter scope" and d.chosen == NO_RACE else ()
    return mechanism_keys(d.mechanism) + [key(f) for f in extra]
