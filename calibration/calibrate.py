"""calibrate_files(): measurement files -> a fitted Platform, its file and its report.

    from hopsim.calibration.calibrate import calibrate_files
    r = calibrate_files(["osu.txt", "np.out"], base="two-nodes", ranks_per_node=1)
    r.fit.platform      # the Platform; r.toml, r.simgrid_xml, r.smpi_flags, r.text
"""
from __future__ import annotations

import dataclasses
import re
import shlex
import statistics
from dataclasses import dataclass, field

from ..errors import InputError
from ..platforms.platform import FILE_KEYS, UNDETERMINED, Platform
from .fit import FitReport, calibrate, trial_offsets
from .measurement import NIC_QUEUE_STATISTIC
from . import file_placement
from ..platforms.platform_file import platform_toml
from ..platforms.simgrid import simgrid_texts
from .joint import FIT_CAP, MAX_NFEV
from .validate import MAX_STATEFUL_ITERATIONS, Case, _simulate_group, cases_of

# What a platform needs that no measurement here can give: placeholders only while the
# fit runs; any of them not fitted and not from --base makes calibrate refuse.
_NEEDS = ("network.latency_us", "network.bandwidth_gbps")


@dataclass
class CalibrationResult:
    fit: FitReport
    toml: str
    simgrid_xml: str
    smpi_flags: str
    text: str
    simulated: dict[int, float]
    holdout: object = None        # holdout.HoldoutTable when files were held out
    # (slug, platform file text) for each mechanism the files leave undecided: the fit
    # with the runner-up in place (calibrate writes them beside --out).
    alternatives: list = field(default_factory=list)


# Undecided.mechanism of the capacity's form, besides structure.MECHANISM_FIELDS' names.
CAPACITY_FORM = "shared capacity's form"
# The campaign's checks (campaign.checks): their table's title, and the median |error|
# above which the report says runs placed like them will be that far off (issue 16's
# per-file target).
CHECK_TITLE = "the campaign's check (measured, neither fitted nor used to decide)"
CHECK_WARN_PCT = 15.0


def slug_of(mechanism: str) -> str:
    """A mechanism's name as it goes into a runner-up's file name."""
    return re.sub(r"[^a-z0-9]+", "-", mechanism.lower().replace("'s", "")).strip("-")


def possible_slugs() -> list[str]:
    """Every slug a runner-up can have, so that its target is checked before the fit."""
    from .structure import MECHANISM_FIELDS

    return [slug_of(m) for m in (*MECHANISM_FIELDS, CAPACITY_FORM)]


@dataclass(frozen=True)
class Undecided:
    """A mechanism the fitted files leave undecided: the platform has `chosen` (--base's
    alternative, or the shared capacity's form written); `other` is the runner-up, whose
    own joint fit set `changes` (field -> value). Both fit the files alike; what they
    predict elsewhere may differ, so either held-out files decide (--holdout) or both
    are written."""
    mechanism: str
    chosen: str
    other: str
    changes: tuple            # ((field, value), ...)
    verdict: str              # the decision's line in the report

    @property
    def slug(self) -> str:
        return slug_of(self.mechanism)

    def on(self, p: Platform) -> Platform:
        return p.replace(**dict(self.changes))


def _nodes_needed(m) -> int:
    """Nodes a measured run used: its recorded map's, else ranks / ranks per node."""
    placed = dict(m.replay).get("placement")
    if isinstance(placed, tuple):
        return max(placed) + 1
    return -(-m.ranks // m.ranks_per_node)


def _base(base, name: str, nodes, ranks_per_node) -> tuple[Platform, set[str]]:
    from .. import platforms

    if base is not None:
        p = platforms.load(base)
        given = set(FILE_KEYS.values())
        label = base if isinstance(base, str) else p.name
        prov = {k: f"from --base {label}: {v}" for k, v in p.provenance.items()}
        p = p.replace(name=name, provenance=prov,
                      description=f"calibrated by hopsim calibrate, rest from {p.name}")
    else:
        p = Platform(name=name, nodes=2, cores=1, latency_us=1.0, bandwidth_gbps=1.0,
                     description="calibrated by hopsim calibrate")
        given = set()
    changes = {}
    if nodes is not None:
        changes["nodes"] = nodes
    if ranks_per_node is not None and ranks_per_node > p.cores:
        changes["cores"] = ranks_per_node
    return (p.replace(**changes) if changes else p), given


def _one_machine(p: Platform, cores: int, measurements) -> Platform:
    """p with every node on one machine of `cores` cores (--machine-cores), its turn at
    --base's value (0 without one) until MachineTurn solves it."""
    if any(m.workload == "roundtrip" and m.ranks > cores for m in measurements):
        how = "to be solved from the round trips with more ranks than these cores"
    else:
        how = (f"not fitted: no round-trip run (latency_checker, Ray) has more ranks than "
               f"{cores}, the only runs that show it")
    turn = p.turn_us or 0.0
    return p.replace(machine_cores=cores, turn_us=turn, provenance={
        **p.provenance,
        "nodes.machine_cores": f"given by --machine-cores: every measured node ran on one "
                               f"machine of {cores} cores (an emulated cluster)",
        "host.turn_us": f"{how}; {turn}" + (" (--base's)" if p.turn_us else " (no turn)")})


def _turned(p: Platform, case) -> bool:
    return bool(p.machine_cores) and case.workload == "roundtrip" and case.ranks > p.machine_cores


def _turn_on(fitted: Platform, measurements, ranks_per_node, n: int) -> tuple[Platform, str]:
    """The machine's turn solved again on the joint fit's platform (fit.MachineTurn);
    (platform, the report's line)."""
    from .fit import Data, MachineTurn

    k = FILE_KEYS["turn_us"]
    out, why = MachineTurn().fit(Data.of(measurements, ranks_per_node), fitted, {})
    if not out:
        return fitted, (f"machine's turn: {n} case(s) with more ranks than the machine's "
                        f"{fitted.machine_cores} cores fit the turn only, and it stays "
                        f"{fitted.turn_us} (the closed form's): {why}")
    x = out[0].value
    prov = (out[0].provenance.replace("fit: ", "fit on the network the other runs fitted "
                                      "(--base's where none did): ", 1)
            + f"; the {n} case(s) with more ranks than the machine's cores fit the turn "
              f"only (their time is the scheduler's), not the network")
    return (fitted.replace(turn_us=x, provenance={**fitted.provenance, k: prov}),
            f"machine's turn: {k} = {x}    ({prov})")


def _with_machine(p: Platform, machine, files, ranks_per_node, placement):
    """(platform, report lines): the machine's capacity applied (machine_capacity.apply),
    and what it changes on the fitted files, simulated both ways as validate would."""
    from .holdout import predict
    from .machine_capacity import apply
    from .validate import cases_of

    q, line = apply(p, machine)
    if q is p:
        return p, [line]
    # The files validate can replay (a NIC-queue sample has no case to compare).
    replayable = [f for f in files
                  if cases_of(*file_placement.read([f], ranks_per_node, placement))[0]]
    before, after = (predict(x, replayable, ranks_per_node, placement=placement)
                     for x in (p, q))
    pairs = [(a, b) for x, y in zip(before.predictions, after.predictions)
             for a, b in zip(x.cases, y.cases)]
    if not pairs:
        return q, [line]
    moved = sum(1 for a, b in pairs if abs(b.simulated_us / a.simulated_us - 1) * 100 > MACHINE_MOVES_PCT)
    why = ("" if moved else ": these runs never reach it; only runs on more nodes, or "
           "faster links, can")
    return q, [line, f"  on the fitted files, median over files {before.median_over_files():.1f}% "
                     f"without it, {after.median_over_files():.1f}% with it; it moves {moved} of "
                     f"their {len(pairs)} cases by more than {MACHINE_MOVES_PCT:g}%{why}"]


# The machine's capacity "moves" a fitted case beyond this (in %).
MACHINE_MOVES_PCT = 2.0

# A run the turn was not fitted to is explained by it within this (in %).
TURN_EXPLAINS_PCT = 10.0


def _turn_checks(fitted: Platform, turned) -> tuple[list[str], list[str]]:
    """The runs beyond the machine's cores that the turn was not fitted to (larger
    messages: fit.MachineTurn takes the smallest), each simulated with the turn and
    without it against the median of its trials: whether the turn explains what it did
    not see. A turn whose scheduler adds to transfers that live overlap it predicts them
    slow (docs/validation/rigs-idle/machine-turn/). On the platform as written, noise
    and all, replayed as validate replays it (the median of its seeds' runs). (lines,
    the runs that contradict the turn: more than TURN_EXPLAINS_PCT off with it, and
    further off than without it)."""
    from .fit import turn_run
    from .validate import simulate_cases

    if not fitted.turn_us:
        return [], []
    groups: dict = {}
    for c in turned:
        groups.setdefault((c.label(), c.statistic), []).append(c)
    fitted_on = turn_run(turned, size=lambda c: c.bytes)
    lines, against = [], []
    for (label, statistic), cs in groups.items():
        if (label, statistic) == (fitted_on.label(), fitted_on.statistic):
            continue
        target = statistics.median(c.measured_us for c in cs)
        probe = dataclasses.replace(cs[0], run=dict(cs[0].run), distribution=[], replayed=None)
        simulate_cases(fitted, [probe])
        with_turn = probe.simulated_us
        simulate_cases(fitted.replace(turn_us=0.0), [probe])
        without = probe.simulated_us
        e1, e0 = (100 * (v - target) / target for v in (with_turn, without))
        if abs(e1) <= TURN_EXPLAINS_PCT:
            verdict = f"within {TURN_EXPLAINS_PCT:g}%"
        elif abs(e1) > abs(e0):
            verdict = "the turn does not explain it (further off than without it)"
            against.append(f"{label} ({e1:+.1f}% with the turn, {e0:+.1f}% without)")
        else:
            verdict = f"closer than without the turn, still more than {TURN_EXPLAINS_PCT:g}% off"
        lines.append(f"machine's turn, checked on runs it was not fitted to: {label} "
                     f"{statistic}: measured {target:.6g} us (median of {len(cs)} trial(s)), "
                     f"with the turn {with_turn:.6g} us ({e1:+.1f}%), without {without:.6g} us "
                     f"({e0:+.1f}%): {verdict}")
    return lines, against


def checked_turn(fitted: Platform, turned) -> tuple[Platform, list[str]]:
    """fitted (its turn solved, noise in place) checked on the runs beyond the cores the
    turn was not fitted to (_turn_checks); where some contradict it, the turn is not
    written (0: the machine's cores stay, its turns cost nothing) and its provenance says
    why. (platform, report lines)."""
    checks, against = _turn_checks(fitted, turned)
    if not against:
        return fitted, checks
    # A turn that meets its own run and makes the others worse is a mechanism these files
    # contradict (on rigs A and B it made the 4-host predictions worse; docs/calibration.md).
    k = FILE_KEYS["turn_us"]
    why = (f"contradicted by the files: the turn fitted on the smallest message's run "
           f"({fitted.turn_us} us) predicts {'; '.join(against)}: not written, the network "
           f"alone is closer; {fitted.provenance[k]}")
    return (fitted.replace(turn_us=0.0, provenance={**fitted.provenance, k: why}),
            checks + [f"machine's turn: {k} = 0.0    ({why})"])


# What --hold may keep out of the joint fit: the continuous values it frees.
HOLDABLE = ("network.latency_us", "network.bandwidth_gbps", "intranode.latency_us",
            "intranode.bandwidth_gbps", "host.pass_us")


def _held_fields(hold, base) -> tuple[str, ...]:
    if not hold:
        return ()
    if base is None:
        raise InputError("--hold: keeps --base values out of the fit; give --base")
    by_key = {k: f for f, k in FILE_KEYS.items()}
    for k in hold:
        if k not in HOLDABLE:
            raise InputError(f"--hold: {k!r} is not a value the joint fit moves "
                             f"(one of {', '.join(HOLDABLE)})")
    return tuple(by_key[k] for k in hold)


def _joint(p: Platform, measurements, base_platform, base_label, ranks_per_node, cap, progress,
           eager, offsets, hold=(), eager_limit=None, eager_limit_from="given by --eager-limit"):
    """The closed-form platform p refitted jointly; (platform, report lines)."""
    from .determine import determine
    from .structure import decide

    if p.noise_scope == "run" and offsets:
        # The noise is each trial's delay over the fastest trial: the noiseless model the
        # joint fit adjusts must meet the trials with that delay taken off, or the latency
        # would absorb the typical delay and the noise add it again.
        # Times only: a tool's rate column (IMB's MB/s) is no time to take a delay from;
        # and a row faster than its trial's typical delay (the offset is a median over
        # sizes) shows none of it: it is kept as measured.
        measurements = [dataclasses.replace(m, value=m.value - offsets[m.source])
                        if m.source in offsets and m.workload == "pingpong"
                        and m.statistic.endswith("_us") and m.value > offsets[m.source] else m
                        for m in measurements]
    cases, _ = cases_of(measurements, ranks_per_node)
    if not cases:
        raise InputError("--joint: no file holds a case hopsim simulates")
    # Round trips with more ranks than the one machine has cores are the scheduler's
    # turns: they fit the turn alone, on the network fitted from the other runs, whose
    # parameters they would otherwise bend to a scheduler the model has only as n turns.
    turned = [c for c in cases if _turned(p, c)]
    cases = [c for c in cases if not _turned(p, c)]
    # The mechanisms --base has (or, without it, none: every mechanism off).
    reference = base_platform if base_platform is not None else Platform(
        name="none", nodes=p.nodes, cores=p.cores, latency_us=p.latency_us,
        bandwidth_gbps=p.bandwidth_gbps)
    # The joint fit simulates without noise: the noise fitter's trials are its own.
    start = p.replace(noise_scope="off", noise_median_us=0.0, noise_sigma=0.0, noise_values_us=(),
                      noise_distribution="lognormal") if p.noise_scope != "off" else p
    if cases:
        sf = decide(start, reference, cases, eager, cap=cap, max_nfev=MAX_NFEV,
                    progress=progress, hold=hold, eager_limit=eager_limit,
                    eager_limit_from=eager_limit_from)
        d = determine(sf, start, base_platform, base_label, dict(p.provenance), cap, MAX_NFEV)
        if progress:
            progress(f"joint fit: {d.evaluations} simulations of every case in {d.seconds:.0f} s")
        fitted, lines, fit_prov, open_ = d.fit.platform, d.lines, d.provenance, undecided
    else:
        # Only runs beyond the machine's cores: the turn onto the network as it stands
        # (--base's, or the closed form's), which these runs cannot fit.
        fitted, fit_prov, open_ = start, {}, None
        lines = [f"joint fit: every case has more ranks than the machine's {p.machine_cores} "
                 f"cores: the network is left as the closed form has it (--base's where the "
                 f"files fit nothing), and those cases fit the turn"]
    if turned:
        fitted, line = _turn_on(fitted, measurements, ranks_per_node, len(turned))
        lines.append(line)
        fit_prov[FILE_KEYS["turn_us"]] = fitted.provenance[FILE_KEYS["turn_us"]]
    if p.noise_scope != "off":
        fitted = fitted.replace(**{f: getattr(p, f) for f in ("noise_scope", "noise_distribution",
                                                              "noise_median_us", "noise_sigma",
                                                              "noise_values_us")})
        lines.append("noise: kept from the closed-form fit (the joint fit simulates without it)")
    if turned:
        fitted, checks = checked_turn(fitted, turned)
        lines += checks
        fit_prov[FILE_KEYS["turn_us"]] = fitted.provenance[FILE_KEYS["turn_us"]]
    prov = dict(p.provenance)
    prov.update(fit_prov)
    fitted = fitted.replace(provenance=prov)
    return fitted, lines, (open_(fitted, sf) if open_ else [])


def undecided(fitted: Platform, sf) -> list[Undecided]:
    """Each decision the files leave open whose runner-up would write other values: the
    shared capacity's form (the other form at the value its own joint fit gave), and
    every mechanism left as --base has it where some case moves (the lowest-BIC
    alternative of the others, its mechanism's values from its own fit)."""
    from .structure import ALTERNATIVE_FIELDS, BACKBONE, LIMITER

    out = []
    for d in sf.decisions:
        fits = dict(d.fits)
        if d.form_undecided:
            other = BACKBONE if d.chosen == LIMITER else LIMITER
            changes = ((("limiter_gbps", 0.0), ("backbone_gbps", fits[BACKBONE].platform.backbone_gbps))
                       if other == BACKBONE else
                       (("backbone_gbps", 0.0), ("limiter_gbps", fits[LIMITER].platform.limiter_gbps)))
            out.append(Undecided(CAPACITY_FORM, d.chosen, other, changes, d.line()))
            continue
        if not d.undecided or len(d.fits) < 2 or d.compared == 0:
            # Where no case moves, the runner-up's values are its start, not the data's.
            continue
        others = sorted((d.bics.get(label, j.bic), label) for label, j in d.fits if label != d.chosen)
        label = others[0][1]
        changes = tuple((f, getattr(fits[label].platform, f)) for f in ALTERNATIVE_FIELDS[d.mechanism]
                        if getattr(fits[label].platform, f) != getattr(fitted, f))
        if not changes:
            continue
        u = Undecided(d.mechanism, _as_written(d, fits, fitted), label, changes, d.line())
        try:
            u.on(fitted)
        except InputError:
            continue    # needs what a later decision turned off: no platform to write
        out.append(u)
    return out


def _as_written(d, fits: dict, fitted: Platform) -> str:
    """What a runner-up replaces: the decision's choice, and what a later decision put
    into the same fields (rig A: no shared capacity at its step, then the limiter scope's
    step gave a per-node limiter, which the backbone runner-up drops)."""
    from .structure import ALTERNATIVE_FIELDS

    later = [f"{f} = {getattr(fitted, f):g}" for f in ALTERNATIVE_FIELDS[d.mechanism]
             if isinstance(getattr(fitted, f), float)
             and not getattr(fits[d.chosen].platform, f) and getattr(fitted, f)]
    return d.chosen + (f" (with {', '.join(later)} from a later step)" if later else "")


def _form(p: Platform) -> str:
    return (f"per-node limiter {p.limiter_gbps} Gbit/s" if p.limiter_gbps > 0 else
            f"backbone {p.backbone_gbps} Gbit/s")


def _by_holdout(p: Platform, open_: list[Undecided], holdout, ranks_per_node, placement):
    """Each decision the fitted files left open, decided by the held-out ones, in the
    order the fit decided them: the alternative whose median |error| over the held-out
    files is lower (both printed; a tie keeps what the fit wrote)."""
    from .holdout import predict

    def error(q):
        return predict(q, holdout, ranks_per_node, placement=placement).median_over_files()

    lines, a = [], None
    for u in open_:
        try:
            other = u.on(p)
        except InputError as e:
            # The runner-up needs what an earlier one taken here turned off.
            lines.append(f"  {u.mechanism} by held-out error: {u.other} not weighed ({e})")
            continue
        a = error(p) if a is None else a
        b = error(other)
        if u.mechanism == "shared capacity's form":
            names = (_form(p), _form(other))
        else:
            names = (u.chosen, u.other)
        win = names[0] if a <= b else names[1]
        line = (f"{u.mechanism} by held-out error: {names[0]} {a:.1f}% vs {names[1]} {b:.1f}% "
                f"(median |error| over the held-out files): {win}")
        if b < a:
            p, a = other, b
        keys = [FILE_KEYS[f] for f, _ in u.changes]
        p = p.replace(provenance={**p.provenance,
                                  **{k: f"{p.provenance.get(k, '')}; {line}" for k in keys}})
        lines.append("  " + line)
    return p, lines


def _alternative_toml(p: Platform, u: Undecided, argv) -> str:
    """The fitted platform with the runner-up of a decision the files left open."""
    line = (f"the fitted platform written beside this file, with {u.mechanism} as {u.other} "
            f"instead of {u.chosen}: the files leave it undecided ({u.verdict})")
    q = u.on(p)
    q = q.replace(provenance={**q.provenance,
                              **{FILE_KEYS[f]: f"undecided alternative: {line}" for f, _ in u.changes}})
    header = ["Written by: hopsim " + " ".join(shlex.quote(a) for a in (argv or [])),
              f"This is {line}.",
              "Both fit the files alike: simulate with both to see what the choice changes."]
    return platform_toml(q, header)


def calibrate_files(files, base=None, nodes=None, ranks_per_node=None, name="calibrated",
                    argv=None, joint=False, cap=FIT_CAP, progress=None,
                    holdout=None, leave_one_out=None, placement=None,
                    hold=(), eager_limit=None, checks=None,
                    eager_limit_from="given by --eager-limit",
                    machine_cores=None, machine=None) -> CalibrationResult:
    """joint=True: after the closed-form fitters, the joint fit over the engine's simulations
    (calibration/joint.py, structure.py, determine.py) over every case of every file.
    placement: for files that record none (third-party tools), how their ranks were placed.
    hold: file keys (HOLDABLE) kept at --base's value by the joint fit: a vendor
    specification that the files must not move. eager_limit: the MPI's eager limit
    between nodes in bytes of data, when known: the only rendezvous threshold weighed
    (eager_limit_from: who says so, for the report). machine_cores: every measured node
    ran on one machine of that many cores (an emulated cluster): round trips with more
    ranks than that fit the machine's turn (host.turn_us) and nothing else. machine: that
    machine's capacity (machine_capacity.MachineCapacity, --machine-gbps), applied to the
    fitted platform as its backbone and reported with what it changes on FILES. checks: files
    predicted on the fitted platform and reported, as --holdout's are, but never used to
    decide a mechanism (the campaign's checks: campaign.checks)."""
    held = _held_fields(hold, base)
    platform, given = _base(base, name, nodes, ranks_per_node)
    # FILE@K[,cyclic] files keep their own placement; ranks_per_node becomes None then.
    measurements, ranks_per_node = file_placement.read(files, ranks_per_node, placement)
    if machine_cores is not None:
        platform = _one_machine(platform, machine_cores, measurements)
    base_platform = platform if base is not None else None
    # Runs that placed several ranks per node (hopsim and live JSON record it) must fit
    # the platform they are replayed on: room for their placement, as a fact of the data.
    placed = [m for m in measurements if m.ranks_per_node and m.ranks_per_node >= 2
              and m.ranks > m.ranks_per_node and m.rank is None]
    if placed:
        cores = max(m.ranks_per_node for m in placed)
        need = max(_nodes_needed(m) for m in placed)
        changes = {k: v for k, v in (("cores", cores), ("nodes", need))
                   if v > getattr(platform, k) and not (k == "nodes" and nodes is not None)}
        if changes:
            platform = platform.replace(**changes)
    if base is not None and not isinstance(base, str):
        base = getattr(base, "name", str(base))
    fit = calibrate(measurements, platform, ranks_per_node)
    fitted_keys = {f.key for f in fit.fitted}
    missing = [k for k in _NEEDS if k not in fitted_keys and k not in given]
    if fit.data.intranode:
        missing = [k for k in missing if k not in ("network.latency_us", "network.bandwidth_gbps")]
    if missing:
        raise InputError(f"the files determine no {', '.join(missing)}; give --base PLATFORM "
                         f"for what the data cannot fit")
    p = fit.platform
    prov = dict(p.provenance)
    for f, key in FILE_KEYS.items():
        if "." not in key or key in fitted_keys or key in prov or getattr(p, f, None) is None:
            continue
        prov[key] = "from --base " + base if base else UNDETERMINED
    if fit.data.intranode and "network.latency_us" not in fitted_keys and not base:
        for k in ("network.latency_us", "network.bandwidth_gbps"):
            prov[k] = ("not determined: the data measured the intra-node path only; "
                       "placeholder 1.0, replace before simulating across nodes")
    p = p.replace(provenance=prov)
    held_field = {FILE_KEYS[f]: f for f in held}
    if held:
        # --hold keeps --base's value: a closed-form fit above may have replaced it.
        p = p.replace(**{f: getattr(base_platform, f) for f in held},
                      provenance={**p.provenance, **{k: f"held at --base (--hold): "
                                                     f"{base_platform.provenance.get(k, 'from --base ' + base)}"
                                                     for k in held_field}})
    joint_lines: list[str] = []
    open_: list[Undecided] = []
    if joint:
        eager = p.eager_threshold_bytes if "host.eager_threshold_bytes" in fitted_keys else None
        p, joint_lines, open_ = _joint(p, measurements, base_platform, base, ranks_per_node, cap,
                                       progress, eager, trial_offsets(fit.data.pingpong), held,
                                       eager_limit, eager_limit_from)
        if held:
            joint_lines.insert(1, "held at --base (--hold): " + ", ".join(hold))
    if open_ and holdout:
        p, decided_lines = _by_holdout(p, open_, holdout, ranks_per_node, placement)
        joint_lines += decided_lines
        open_ = []
    if open_:
        joint_lines.append("undecided by these files, each runner-up written beside --out (the "
                           "fit with it in place; --holdout files on other runs would decide):")
        joint_lines += [f"  {u.slug}: {u.mechanism} as {u.other} instead of {u.chosen}"
                        for u in open_]
    machine_lines: list[str] = []
    if machine is not None:
        p, machine_lines = _with_machine(p, machine, files, ranks_per_node, placement)
    fit.platform = p

    # Residual per size and per round-trip case, from the engine on the fitted platform.
    simulated = {}
    lines = [f"calibrated {p.name} from {len(measurements)} measurements in {len(files)} file(s)"]
    if fit.data.pingpong:
        rpn = 2 if fit.data.intranode else 1
        # As many iterations as the files ran (the fewest of them; 50 when none says): a
        # token bucket makes the count matter.
        iterations = min(min((pt.m.repetitions for pt in fit.data.pingpong if pt.m.repetitions),
                             default=50), MAX_STATEFUL_ITERATIONS)
        cases = [Case(pt.m.source, pt.m.line, pt.m.tool, "pingpong", 2, rpn, pt.size,
                      pt.m.statistic, pt.value, {"sizes": [pt.size], "iterations": iterations})
                 for pt in fit.data.pingpong]
        _simulate_group(p, cases)
        simulated = {c.bytes: c.simulated_us for c in cases}
    lines += machine_lines
    if joint_lines:
        lines += joint_lines
        lines.append("closed-form fit (the joint fit's start; values above replace these):")
    lines.append("fitted:")
    for f in fit.fitted:
        # A held value the closed form also fitted: shown, but --base's is the one written.
        note = (f"; not written: held at --base's {getattr(p, held_field[f.key])} (--hold)"
                if f.key in held_field else "")
        lines.append(f"  {f.key} = {f.value}    ({f.provenance}){note}")
    lines.append("not fitted:")
    for name_, why in fit.skipped:
        lines.append(f"  {name_}: {why}")
    machine_key = {"network.backbone_gbps"} if machine is not None and \
        p.provenance.get("network.backbone_gbps", "").startswith(machine.how) else set()
    kept = [k for k in prov if k not in fitted_keys and "." in k and k not in machine_key]
    lines.append(f"  kept from {'--base ' + base if base else 'defaults'}: {', '.join(sorted(kept))}")
    if fit.segments and not fit.platform.pacing_gbps:
        lines.append("per-size segments of the ping-pong curve (segmented least squares, BIC):")
        for s in fit.segments:
            lines.append(f"  {s.first_bytes:>9}..{s.last_bytes:<9} B  t = {s.intercept_us:.4g} us + "
                         f"s / {s.bandwidth_gbps:.4g} Gbit/s   (rms {100 * s.rms_rel:.1f}%)")
        for b in fit.breaks:
            lines.append(f"  break between {b.below_bytes} and {b.above_bytes} B: {b.kind} "
                         f"(jump {b.jump_us:+.3g} us)")
    if simulated:
        lines.append("residual per size (engine on the fitted platform vs measured):")
        lines.append(f"  {'bytes':>9} {'measured_us':>12} {'simulated_us':>12} {'residual_%':>10}  source")
        for pt in sorted(fit.data.pingpong, key=lambda q: (q.size, q.m.source)):
            sim = simulated[pt.size]
            lines.append(f"  {pt.size:>9} {pt.value:>12.3f} {sim:>12.3f} "
                         f"{100 * (sim - pt.value) / pt.value:>+10.1f}  {pt.m.where}")
    unused = [m for m in fit.data.unused if m.statistic != NIC_QUEUE_STATISTIC]
    if unused:
        what = sorted({f"{m.tool} {m.statistic}" for m in unused})
        lines.append(f"not used by any fitter: {', '.join(what)}")
    table = None
    if holdout:
        from .holdout import predict
        table = predict(p, holdout, ranks_per_node, placement=placement)
        each = ", ".join(f"{x.file} (median |error| {x.median_abs_error_pct:.1f}%)"
                         for x in table.predictions)
        p = p.replace(provenance={**p.provenance, "validation.holdout": (
            f"held out of the fit and predicted: {each}; median over files "
            f"{table.median_over_files():.1f}%")})
        fit.platform = p
        lines += table.text().rstrip("\n").splitlines()
    if checks:
        from .holdout import predict
        check = predict(p, checks, ranks_per_node, placement=placement)
        check.title = CHECK_TITLE
        worst = max(check.predictions, key=lambda x: x.median_abs_error_pct)
        p = p.replace(provenance={**p.provenance, "validation.campaign_check": (
            "measured by the campaign, neither fitted nor used to decide, predicted: "
            + ", ".join(f"{x.file} (median |error| {x.median_abs_error_pct:.1f}%)"
                        for x in check.predictions))})
        fit.platform = p
        lines += check.text().rstrip("\n").splitlines()
        if worst.median_abs_error_pct > CHECK_WARN_PCT:
            lines.append(f"note: the campaign's check misses by {worst.median_abs_error_pct:.1f}% "
                         f"(median |error|, {worst.file}): expect predictions of runs placed "
                         f"like it to be off by as much at the sizes its rows above miss "
                         f"(docs/calibration.md, \"The campaign's check\")")
    if leave_one_out is not None:
        table = leave_one_out
        if table.predictions:
            each = ", ".join(f"{x.file} (median |error| {x.median_abs_error_pct:.1f}%)"
                             for x in table.predictions)
            p = p.replace(provenance={**p.provenance, "validation.leave_one_out": (
                f"each file predicted by the joint fit on the others: {each}; median over "
                f"files {table.median_over_files():.1f}%")})
            fit.platform = p
        lines += table.text(per_case=False).rstrip("\n").splitlines()
    text = "\n".join(lines) + "\n"

    # The written platform's protocol (the joint fit's decision, else the closed form's).
    xml, flags = simgrid_texts(p, fit.segments, p.eager_threshold_bytes)
    header = ["Written by: hopsim " + " ".join(shlex.quote(a) for a in (argv or [])),
              "Every value's origin is in [provenance]. The fit's report:", ""] + \
             [l for l in lines]
    alternatives = [(u.slug, _alternative_toml(p, u, argv)) for u in open_]
    return CalibrationResult(fit, platform_toml(p, header), xml, flags, text, simulated, table,
                             alternatives)
