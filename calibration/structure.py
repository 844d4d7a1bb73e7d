"""Which mechanisms the data call for: each structural alternative fitted jointly, compared
by BIC on the robust log residuals (calibration/joint.py).

The mechanisms are decided one after the other (pacing, token bucket, per-node NIC cost,
eager/rendezvous threshold, probe visibility, transport), each from the platform the
previous decisions chose. An alternative wins when its BIC is at least BIC_MARGIN below
every other one (Kass and Raftery's "strong" evidence); otherwise the mechanism is
undecided and stays as --base has it (the fit of --base's alternative is kept).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..platforms.platform import Platform
from .joint import FIT_CAP, MAX_NFEV, JointFit, fit_joint, key

BIC_MARGIN = 6.0
# A rate or cost the data have not shown yet starts here (then the fit moves it).
START_NIC_FRACTION = 0.05       # of the network latency
START_BURST_BYTES = 65536


@dataclass
class Alternative:
    label: str
    platform: Platform
    free: list[str]


@dataclass
class Decision:
    mechanism: str
    fits: list[tuple[str, JointFit]]
    chosen: str
    base_label: str
    undecided: bool

    def line(self) -> str:
        ev = " vs ".join(f"{label} (BIC {j.bic:.1f}, median |error| {j.median_abs_error_pct():.1f}%)"
                         for label, j in self.fits)
        if len(self.fits) == 1:
            return f"{self.mechanism}: {ev}: the only alternative the data can test"
        if self.undecided:
            return (f"{self.mechanism}: {ev}: undecided (BIC difference under {BIC_MARGIN:g}); "
                    f"left as --base has it: {self.chosen}")
        return f"{self.mechanism}: {ev}: {self.chosen}"

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
        on = Alternative("token bucket", p, ["bucket_gbps", "bucket_burst_bytes"])
    else:
        rate = min(r for r in (p.bandwidth_gbps, p.pacing_gbps) if r > 0) / 2
        on = Alternative("token bucket", p.replace(bucket_gbps=rate,
                                                   bucket_burst_bytes=START_BURST_BYTES),
                         ["bucket_gbps", "bucket_burst_bytes"])
    off = Alternative("no bucket", p.replace(bucket_gbps=0.0, bucket_burst_bytes=0.0), [])
    return [on, off], ("token bucket" if base.bucket_gbps > 0 else "no bucket")


def _nic(p: Platform, base: Platform, cases):
    # One rank per node on both sides sees the cost as latency: only 2+ ranks on a node
    # that also talks across nodes can separate it.
    if not any(c.ranks_per_node >= 2 and c.ranks > c.ranks_per_node for c in cases):
        return None
    c0 = p.nic_message_us if p.nic_message_us > 0 else START_NIC_FRACTION * p.latency_us
    on = Alternative("per-node NIC cost",
                     p.replace(nic_message_us=c0, latency_us=max(p.latency_us - 2 * c0, 1e-3)),
                     ["nic_message_us"])
    off = Alternative("no NIC cost", p.replace(nic_message_us=0.0), [])
    return [on, off], ("per-node NIC cost" if base.nic_message_us > 0 else "no NIC cost")


def _eager(p: Platform, base: Platform, cases, candidate: int | None):
    threshold = candidate if candidate is not None else (p.eager_threshold_bytes
                                                         or base.eager_threshold_bytes)
    if threshold is None:
        return None
    on = Alternative(f"rendezvous above {threshold} B", p.replace(eager_threshold_bytes=int(threshold)), [])
    off = Alternative("eager only", p.replace(eager_threshold_bytes=None), [])
    return [on, off], (on.label if base.eager_threshold_bytes is not None else "eager only")


def _probe(p: Platform, base: Platform, cases):
    # The probe modes differ only when a rank polls (a pass cost) and messages compete.
    if not (p.pass_us > 0 and any(c.workload == "roundtrip" for c in cases)):
        return None
    return [Alternative(m, p.replace(probe=m), []) for m in ("arrival", "header", "post")], base.probe


def _transport(p: Platform, base: Platform, cases):
    if p.topology != "star" or not any(c.ranks > 2 for c in cases):
        return None
    return [Alternative(t, p.replace(transport=t), []) for t in ("flow", "queue")], base.transport


MECHANISMS = (("pacing", _pacing), ("token bucket", _bucket), ("NIC message cost", _nic),
              ("eager/rendezvous", _eager), ("probe visibility", _probe), ("transport", _transport))


def decide(start: Platform, base: Platform, cases, eager_candidate: int | None = None,
           cap: int | None = FIT_CAP, max_nfev: int = MAX_NFEV, progress=None,
           hold=()) -> StructureFit:
    """Fit the core parameters, then decide each mechanism in turn (module docstring).
    hold: fields no fit moves (calibrate --hold)."""
    t0 = time.perf_counter()
    core = [f for f in core_free(start, cases) if f not in hold]
    current = core_fit = fit_joint(start, cases, core, cap=cap, max_nfev=max_nfev)
    extra: list[str] = []
    decisions = []
    for name, make in MECHANISMS:
        args = (current.platform, base, cases) + ((eager_candidate,) if make is _eager else ())
        made = make(*args)
        if made is None:
            continue
        alternatives, base_label = made
        # An alternative that frees more values than there are cases fits them exactly
        # whatever they are: its BIC decides nothing, so --base's mechanism stays.
        keep_now = [f for f in extra if f not in hold]
        if any(len(core) + len(keep_now) + len([f for f in a.free if f not in hold]) > len(cases)
               for a in alternatives):
            continue
        fits = []
        for alt in alternatives:
            if progress:
                progress(f"{name}: fitting {alt.label}")
            keep = [f for f in extra if f not in _turned_off(alt)]
            # A discrete switch with nothing new to fit gets a shorter refit.
            nfev = max_nfev if alt.free else max(4, max_nfev // 2)
            free = [f for f in alt.free if f not in hold]
            fits.append((alt.label, fit_joint(alt.platform, cases, core + keep + free,
                                              cap=cap, max_nfev=nfev)))
        ranked = sorted(fits, key=lambda lf: lf[1].bic)
        undecided = len(ranked) > 1 and ranked[1][1].bic - ranked[0][1].bic < BIC_MARGIN
        chosen = base_label if undecided else ranked[0][0]
        if chosen not in dict(fits):   # --base's alternative was not among those tested
            chosen = ranked[0][0]
        decisions.append(Decision(name, fits, chosen, base_label, undecided))
        current = dict(fits)[chosen]
        current.restore()
        alt = next(a for a in alternatives if a.label == chosen)
        extra = [f for f in extra if f not in _turned_off(alt)] + [f for f in alt.free
                                                                   if f not in hold]
    evaluations = core_fit.evaluations + sum(j.evaluations for d in decisions for _, j in d.fits)
    return StructureFit(current, decisions, evaluations, time.perf_counter() - t0)


def _turned_off(alt: Alternative) -> set[str]:
    p = alt.platform
    off = set()
    if p.pacing_gbps == 0:
        off.add("pacing_gbps")
    if p.bucket_gbps == 0:
        off |= {"bucket_gbps", "bucket_burst_bytes"}
    if p.nic_message_us == 0:
        off.add("nic_message_us")
    return off


def mechanism_keys(name: str) -> list[str]:
    fields = {"pacing": ["pacing_gbps", "pacing_above_bytes"],
              "token bucket": ["bucket_gbps", "bucket_burst_bytes"],
              "NIC message cost": ["nic_message_us"],
              "eager/rendezvous": ["eager_threshold_bytes"], "probe visibility": ["probe"],
              "transport": ["transport"]}[name]
    return [key(f) for f in fields]
