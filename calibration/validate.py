"""Measured versus simulated, case by case: the same workload, ranks, placement and sizes.

    from hopsim.calibration.validate import validate
    report = validate("my.toml", ["osu.txt", "imb.txt"], ranks_per_node=1)
    report.to_dict()   # {"cases": [...], "median_abs_error_pct", "max_abs_error_pct", ...}

A case is one measured value hopsim has a workload for: a one-way ping-pong time
(osu_latency, NetPIPE, IMB PingPong), an IMB Exchange or Sendrecv t_avg, an IMB PingPing
t, an IMB collective's t_avg (Alltoall, Allreduce, Allgather, Bcast, Reduce, Barrier),
osu_bw's bandwidth (compared as the time per message it implies, bytes / (MB/s) = us),
latency_checker's average of averages (shared destination sequence, as its
srand(time(NULL)) seeding gives), Ray's AverageForAllRanks (empty reply, per-rank
streams), or a hopsim result. The rest (other IMB benchmarks, per-rank values) is listed
as not simulated, with why.
"""
from __future__ import annotations

import dataclasses
import statistics
from dataclasses import dataclass, field

from ..errors import InputError
from ..workload import COLLECTIVES, KINDS, OSU_WINDOW
from . import replay_jobs
from .measurement import NIC_QUEUE_STATISTIC, Measurement

# Simulated repetitions per case at most. Without noise the engine repeats the same
# iteration exactly, so more only costs time; the measured count is used when lower.
MAX_ITERATIONS = 200
# A token bucket carries state from one iteration to the next (thousands of small messages
# drain it): on such a platform the measured counts are simulated, up to this many.
MAX_STATEFUL_ITERATIONS = 30000
MAX_EXCHANGES = 1000
# Seeds a case is simulated with on a noise-carrying platform (its distribution); the
# reported simulated value is their median.
NOISE_SEEDS = 20

_PINGPONG = {("osu_latency", "latency_us"), ("netpipe", "latency_us"), ("imb", "t_us"),
             ("hopsim", "latency_us")}
# IMB's periodic-chain benchmarks (and hopsim's results of them): the statistic compared.
# PingPing prints one time, the larger of its two ranks'.
_IMB_CHAIN = {"exchange": "t_avg_us", "sendrecv": "t_avg_us", "pingping": "t_us"}
# IMB's collectives (and hopsim's results of them): t_avg over the ranks, as Exchange.
_IMB_COLLECTIVE = {c: "t_avg_us" for c in COLLECTIVES}
_BANDWIDTH = {("osu_bw", "bandwidth_mbytes_per_sec"), ("hopsim", "bandwidth_mbytes_per_sec")}
# IMB Exchange's rate is Mbytes/sec = 4 * bytes / t_max (MB = 10^6, docs/workloads.md). A
# file that gives the rate without the times (a published figure, transcribed) is compared
# on that t_max; where the same row prints the times, the rate adds no case (cases_of).
_IMB_RATE = {"exchange": 4.0}
_RATE_STAT = "t_max_us"
# Simulated osu_bw windows per size at most (osu_bw's own count above 8 KiB); its files
# do not print their count. Without noise every window is the same.
MAX_WINDOWS = 20
# The statistic of a bandwidth case: bytes / bandwidth_mbytes_per_sec.
US_PER_MESSAGE = "us_per_message"
_ROUNDTRIP = {("latency_checker", "lc_average_of_averages_us"): "lc_average_of_averages_us",
              ("hopsim", "lc_average_of_averages_us"): "lc_average_of_averages_us",
              ("ray", "ray_average_for_all_ranks_us"): "ray_average_for_all_ranks_us"}


@dataclass
class Case:
    file: str
    line: int
    tool: str
    workload: str
    ranks: int
    ranks_per_node: int
    bytes: int
    statistic: str
    measured_us: float
    run: dict                      # hopsim.simulate keywords beyond platform/placement
    simulated_us: float | None = None
    measured_repetitions: int | None = None  # the tool's count, before any cap
    # Noise-carrying platforms: the case simulated with NOISE_SEEDS seeds.
    distribution: list[float] = field(default_factory=list)
    # The run as case_of made it, before any platform's caps (simulate_cases).
    replayed: dict | None = field(default=None, repr=False, compare=False)
    # Measured on one machine of few cores: whether the case counts (latency_bound.py);
    # None when the cores are not known.
    counted: bool | None = None

    @property
    def percentile(self) -> float | None:
        """Where the measured value falls in the simulated distribution: the percentage
        of simulated runs below it, ties counting half (None without a distribution)."""
        if not self.distribution:
            return None
        below = sum(v < self.measured_us for v in self.distribution)
        ties = sum(v == self.measured_us for v in self.distribution)
        return 100.0 * (below + 0.5 * ties) / len(self.distribution)

    @property
    def error_pct(self) -> float | None:
        if self.simulated_us is None or self.measured_us == 0:
            return None
        return 100.0 * (self.simulated_us - self.measured_us) / self.measured_us

    def label(self) -> str:
        placed = self.run.get("placement", "block")
        placed = "" if placed == "block" else f", {placed if isinstance(placed, str) else 'mapped'}"
        return (f"{self.tool} {self.workload} {self.ranks} ranks ({self.ranks_per_node} per "
                f"node{placed}) {self.bytes} B")

    def simulate(self, platform) -> float:
        """This case alone on platform (a Platform, a preset or a file)."""
        _simulate_group(platform, [self])
        return self.simulated_us

    def group_key(self):
        run = {k: v for k, v in self.run.items() if k != "sizes"}
        return (self.workload, self.ranks, self.ranks_per_node, tuple(sorted(run.items())))


def case_of(m: Measurement, ranks_per_node: int | None = None) -> Case | None:
    """The case that replays m, or None when hopsim has no workload for it. A placement
    in m.replay (a hopsim or live JSON's record, or with_placement's) goes with it."""
    case = _case_of(m, ranks_per_node)
    placed = dict(m.replay).get("placement")
    if case is not None and placed is not None:
        case.run["placement"] = placed
    return case


def with_placement(measurements: list[Measurement], placement) -> list[Measurement]:
    """The measurements, those that do not record a placement (third-party files) given
    `placement` (--placement: block, cyclic, a rankfile or hostfile, read per case)."""
    if placement is None:
        return measurements
    if isinstance(placement, list):
        placement = tuple(placement)
    return [m if "placement" in dict(m.replay)
            else dataclasses.replace(m, replay=m.replay + (("placement", placement),))
            for m in measurements]


def _case_of(m: Measurement, ranks_per_node: int | None = None) -> Case | None:
    if m.rank is not None:
        return None
    key = (m.tool, m.statistic)
    rpn = ranks_per_node or m.ranks_per_node or 1
    rpn = min(rpn, m.ranks)
    if m.ranks % rpn:
        raise InputError(f"{m.where}: {m.ranks} ranks cannot be placed {rpn} per node")
    common = dict(file=m.source, line=m.line, tool=m.tool, ranks=m.ranks, ranks_per_node=rpn,
                  statistic=m.statistic, measured_us=m.value, measured_repetitions=m.repetitions)
    reps = m.repetitions
    # osu's warm-up, when the file's suffix or a hopsim run gave it (file_placement.py).
    warmup = {k: v for k, v in m.replay if k == "warmup"}
    if key in _PINGPONG and m.workload == "pingpong":
        return Case(workload="pingpong", bytes=m.size, **common,
                    run={"sizes": [m.size], "iterations": min(reps or MAX_ITERATIONS, MAX_ITERATIONS),
                         **warmup})
    if (m.tool in ("imb", "hopsim") and m.workload in _IMB_CHAIN
            and m.statistic == _IMB_CHAIN[m.workload]):
        return Case(workload=m.workload, bytes=m.size, **common,
                    run={"sizes": [m.size], "repetitions": min(reps or MAX_ITERATIONS, MAX_ITERATIONS)})
    if m.tool == "imb" and m.workload in _IMB_RATE and m.statistic == "mbytes_per_sec":
        if not m.size or m.value <= 0:
            return None
        common.update(measured_us=_IMB_RATE[m.workload] * m.size / m.value, statistic=_RATE_STAT)
        return Case(workload=m.workload, bytes=m.size, **common,
                    run={"sizes": [m.size], "repetitions": min(reps or MAX_ITERATIONS, MAX_ITERATIONS)})
    if (m.tool in ("imb", "hopsim") and m.workload in _IMB_COLLECTIVE
            and m.statistic == _IMB_COLLECTIVE[m.workload]):
        run = {"repetitions": min(reps or MAX_ITERATIONS, MAX_ITERATIONS)}
        if m.workload != "barrier":
            run["sizes"] = [m.size]
        run.update({k: v for k, v in dict(m.replay).items() if k == "algorithm"})
        return Case(workload=m.workload, bytes=m.size or 0, **common, run=run)
    if key in _BANDWIDTH and m.workload == "bandwidth":
        if not m.size or m.value <= 0:
            return None
        # osu_bw's MB/s is bytes per microsecond: its inverse is the time per message.
        common.update(measured_us=m.size / m.value, statistic=US_PER_MESSAGE)
        replay = dict(m.replay)
        return Case(workload="bandwidth", bytes=m.size, **common,
                    run={"sizes": [m.size], "iterations": min(reps or MAX_WINDOWS, MAX_WINDOWS),
                         "window": replay.get("window", OSU_WINDOW), **warmup})
    if key in _ROUNDTRIP and m.size is not None:
        run = {"request_bytes": m.size,
               "reply_bytes": m.reply_size if m.reply_size is not None else m.size,
               "exchanges": min(reps or MAX_EXCHANGES, MAX_EXCHANGES),
               "destinations": "independent" if m.tool == "ray" else "shared"}
        if m.tool == "latency_checker":
            run["reception"] = "any-source"
        # A hopsim or live JSON says how it ran: its destinations, reception, overlay, seed.
        run.update(dict(m.replay))
        return Case(workload="roundtrip", bytes=m.size, **common, run=run)
    return None


_SIM_STAT = {"pingpong": "latency_us", **_IMB_CHAIN, **_IMB_COLLECTIVE}


def _simulate_group(platform, cases: list[Case], seed: int = 1, keep_seed: bool = True) -> None:
    """One simulation for cases that differ only in size; fills simulated_us. A case
    that carries its run's seed uses it (keep_seed), else seed."""
    result = _replay([_request(platform, cases, seed, keep_seed)], [cases])[0]
    for c, value in zip(cases, _values(cases, result)):
        c.simulated_us = value


def _request(platform, cases: list[Case], seed: int, keep_seed: bool) -> dict:
    """hopsim.simulate's arguments for one group of cases (one simulation, every size)."""
    first = cases[0]
    run = dict(first.run)
    own = run.pop("seed", seed)
    if "sizes" in run:
        run["sizes"] = sorted({c.bytes for c in cases})
    return dict(platform=platform, workload=first.workload, ranks=first.ranks,
                ranks_per_node=first.ranks_per_node, seed=own if keep_seed else seed, **run)


def _replay(requests: list[dict], groups: list[list[Case]], progress=None) -> list:
    """The engine's results of requests (replay_jobs.jobs() at once), a bad one named by
    the first case of its group."""
    from ..api import RunInputError, simulate_batch as batch

    try:
        return [r.results for r in batch(requests, replay_jobs.jobs(), progress)]
    except RunInputError as e:
        first = groups[e.index][0]
        raise InputError(f"{first.file}:{first.line}: cannot replay {first.label()}: {e} "
                         f"(--nodes, --ranks-per-node and --placement set the placement)") from None


def _values(cases: list[Case], result: dict) -> list[float]:
    first = cases[0]
    if first.workload == "bandwidth":
        by_size = {r["bytes"]: r["window_us"] / r["window"] for r in result["rows"]}
        return [float(by_size[c.bytes]) for c in cases]
    if first.workload in _SIM_STAT:
        by_size = {r["bytes"]: r for r in result["rows"]}
        return [float(by_size[c.bytes][_RATE_STAT if c.statistic == _RATE_STAT else _SIM_STAT[first.workload]])
                for c in cases]
    stat = _ROUNDTRIP[(first.tool, first.statistic)]
    return [float(result[stat]) for c in cases]


@dataclass
class Report:
    platform: str
    cases: list[Case]
    not_simulated: list[tuple[str, str, str]] = field(default_factory=list)  # file, what, why
    # The measuring machine's cores (count_cases), n½ and where n½ came from.
    machine_cores: int | None = None
    half_length: float | None = None
    half_length_from: str | None = None

    def errors(self) -> list[float]:
        return [abs(c.error_pct) for c in self.cases if c.error_pct is not None]

    def counted_errors(self) -> list[float]:
        """|error| of the cases that count (all of them when the cores are not known)."""
        return [abs(c.error_pct) for c in self.cases
                if c.error_pct is not None and c.counted is not False]

    def file_medians(self) -> dict[str, float | None]:
        """{file: median |error| of its counted cases, None when none counts}, the files
        in the order given."""
        by_file: dict[str, list[float]] = {}
        for c in self.cases:
            errors = by_file.setdefault(c.file, [])
            if c.error_pct is not None and c.counted is not False:
                errors.append(abs(c.error_pct))
        return {f: statistics.median(e) if e else None for f, e in by_file.items()}

    def _over_files(self) -> tuple[float | None, str | None]:
        """The median over the files that have a counted case, and the worst of them."""
        medians = {f: m for f, m in self.file_medians().items() if m is not None}
        if not medians:
            return None, None
        return statistics.median(medians.values()), max(medians, key=medians.get)

    @property
    def median_abs_error_pct(self) -> float | None:
        e = self.errors()
        return statistics.median(e) if e else None

    @property
    def max_abs_error_pct(self) -> float | None:
        e = self.errors()
        return max(e) if e else None

    def to_dict(self) -> dict:
        return {
            "platform": self.platform,
            "cases": [{"file": c.file, "line": c.line, "tool": c.tool, "workload": c.workload,
                       "ranks": c.ranks, "ranks_per_node": c.ranks_per_node,
                       "placement": _placement_record(c.run.get("placement", "block")),
                       "bytes": c.bytes,
                       "statistic": c.statistic, "measured_us": c.measured_us,
                       "simulated_us": c.simulated_us, "error_pct": c.error_pct,
                       **({"measured_mbytes_per_sec": c.bytes / c.measured_us,
                           "simulated_mbytes_per_sec": c.bytes / c.simulated_us}
                          if c.workload == "bandwidth" else {}),
                       **({"simulated_runs": len(c.distribution),
                           "simulated_min_us": min(c.distribution),
                           "simulated_max_us": max(c.distribution),
                           "measured_percentile": c.percentile} if c.distribution else {}),
                       **({"counted": c.counted} if c.counted is not None else {})}
                      for c in self.cases],
            "median_abs_error_pct": self.median_abs_error_pct,
            "max_abs_error_pct": self.max_abs_error_pct,
            **self._counts_dict(),
            "not_simulated": [{"file": f, "what": w, "why": y} for f, w, y in self.not_simulated],
        }

    def _counts_dict(self) -> dict:
        medians = self.file_medians()
        over, worst = self._over_files()
        out = {"files": [{"file": f, "median_abs_error_pct": m} for f, m in medians.items()],
               "median_over_files_pct": over,
               "worst_file": None if worst is None else {"file": worst,
                                                          "median_abs_error_pct": medians[worst]}}
        if self.machine_cores is not None:
            counted = self.counted_errors()
            out.update(machine_cores=self.machine_cores, half_length_bytes=self.half_length,
                       half_length_from=self.half_length_from,
                       counted_cases=len(counted),
                       counted_median_abs_error_pct=statistics.median(counted) if counted else None)
        return out

    def _count_lines(self) -> list[str]:
        lines = []
        if self.machine_cores is not None:
            counted, left = self.counted_errors(), sum(c.counted is False for c in self.cases)
            n_half = ("no one-size run needed n\u00bd" if self.half_length_from is None else
                      f"n\u00bd {self.half_length:.0f} B, from {self.half_length_from}"
                      if self.half_length is not None else
                      "no n\u00bd: runs of one size left out; give --pingpong FILE, the "
                      "2-host ping-pong measured beside them")
            median = f"median |error| {statistics.median(counted):.1f}%" if counted else "nothing"
            lines.append(f"counted: {median} over {len(counted)} of {len(self.errors())} cases; "
                         f"left out: {left} latency-bound with more ranks than the measuring "
                         f"machine's {self.machine_cores} cores (the scheduler's time; "
                         f"docs/validation.md, \"Counting\"; {n_half})")
        medians = self.file_medians()
        if len(medians) > 1:
            lines.append("per file" + (" (counted cases)" if self.machine_cores is not None
                                       else "") + ": median |error|")
            lines += [f"  {m:6.1f}%  {f}" if m is not None else f"  {'-':>7}  {f} (no case counts)"
                      for f, m in medians.items()]
            over, worst = self._over_files()
            if worst is not None:
                lines.append(f"median over files {over:.1f}%, worst file {medians[worst]:.1f}% "
                             f"({_short(worst)})")
        return lines

    def table(self) -> str:
        head = f"{'file':<28} {'workload':<9} {'ranks':>5} {'rpn':>3} {'bytes':>9} " \
               f"{'measured_us':>12} {'simulated_us':>12} {'error_%':>8}"
        noisy = any(c.distribution for c in self.cases)
        if noisy:
            head += f" {'simulated range (' + str(NOISE_SEEDS) + ' seeds)':>26} {'pctile':>6}"
        if self.machine_cores is not None:
            head += f" {'counted':>7}"
        lines = [head]
        for c in self.cases:
            err = "-" if c.error_pct is None else f"{c.error_pct:+.1f}"
            line = (f"{_short(c.file):<28} {c.workload:<9} {c.ranks:>5} {c.ranks_per_node:>3} "
                    f"{c.bytes:>9} {c.measured_us:>12.3f} {c.simulated_us:>12.3f} {err:>8}")
            if c.distribution:
                rng = f"{min(c.distribution):.3f}..{max(c.distribution):.3f}"
                line += f" {rng:>26} {c.percentile:>6.1f}"
            if c.counted is not None:
                line += f" {'yes' if c.counted else 'no':>7}"
            lines.append(line)
        if self.cases:
            worst = max((c for c in self.cases if c.error_pct is not None),
                        key=lambda c: abs(c.error_pct), default=None)
            if worst is not None:
                lines.append(f"median |error| {self.median_abs_error_pct:.1f}%, worst "
                             f"{self.max_abs_error_pct:.1f}% ({_short(worst.file)}:{worst.line}, "
                             f"{worst.label()}), {len(self.errors())} cases on {self.platform}"
                             + (" (simulated: the median of the seeds' runs; pctile: where the "
                                "measured value falls among them)" if noisy else ""))
            lines += self._count_lines()
        if any(c.workload == "bandwidth" for c in self.cases):
            lines.append("bandwidth: osu_bw's MB/s compared as the time per message it "
                         "implies, bytes / (MB/s) = us")
        for f, what, why in self.not_simulated:
            lines.append(f"not simulated: {_short(f)}: {what}: {why}")
        return "\n".join(lines) + "\n"


def _uncap(c: Case) -> None:
    """On a platform with a token bucket, iterations are not alike: the case runs the
    tool's own count (up to MAX_STATEFUL_ITERATIONS) instead of MAX_ITERATIONS."""
    if not c.measured_repetitions or c.workload == "bandwidth":
        return
    for key in ("iterations", "repetitions"):
        if key in c.run:
            c.run[key] = min(c.measured_repetitions, MAX_STATEFUL_ITERATIONS)


def _short(path: str) -> str:
    return path if len(path) <= 28 else "..." + path[-25:]


def _why_not(m: Measurement) -> str:
    if m.rank is not None:
        return "per-rank values (the file's all-rank figure is the case)"
    if m.statistic == NIC_QUEUE_STATISTIC:
        return "a sampled NIC queue, a platform value (calibrate's network.nic_queue_bytes), not a case"
    if m.workload in KINDS:
        if m.size is None:
            return "the file does not record the message sizes"
        if m.workload == "bandwidth" and m.statistic in {s for _, s in _BANDWIDTH}:
            return "a bandwidth printed as 0.00 MB/s (below the tool's resolution) or of 0 bytes"
        return f"{m.statistic} is not the statistic compared (see docs/validation.md)"
    return f"hopsim has no {m.workload} workload"


def _placement_record(value):
    return list(value) if isinstance(value, tuple) else value


def cases_of(measurements: list[Measurement], ranks_per_node: int | None = None):
    cases, skipped, seen = [], [], set()
    for m in measurements:
        c = case_of(m, ranks_per_node)
        if c is not None:
            cases.append(c)
            continue
        key = (m.source, m.workload, m.statistic if m.rank is None else "per-rank")
        if key not in seen:
            seen.add(key)
            skipped.append((m.source, f"{m.tool} {m.workload} {key[2]}", _why_not(m)))
    timed = {(c.file, c.line) for c in cases if c.statistic != _RATE_STAT}
    cases = [c for c in cases if c.statistic != _RATE_STAT or (c.file, c.line) not in timed]
    return cases, skipped


def simulate_cases(plat, cases: list[Case], seed: int = 1, progress=None,
                   cap: int | None = None) -> None:
    """Fill every case's simulated_us on plat (a Platform): the one way validate and the
    joint fit (calibration/joint.py) replay measured cases. cap: at most this many
    iterations, repetitions or round trips per rank per case (the joint fit's budget);
    None keeps validate's own caps. Each call starts from the case's run as case_of made
    it; c.run then holds what was simulated. progress: as hopsim.simulate's (the fraction
    of all the replays done)."""
    for c in cases:
        if c.replayed is None:
            c.replayed = dict(c.run)
        c.run = dict(c.replayed)
    _simulate_cases(plat, cases, seed, progress, cap)


def _simulate_cases(plat, cases, seed, progress, cap) -> None:
    for c in cases:
        c.distribution.clear()
        if plat.bucket_gbps > 0:
            _uncap(c)
        if cap is not None:
            for key in ("iterations", "repetitions", "exchanges"):
                if key in c.run:
                    c.run[key] = min(c.run[key], cap)
    groups: dict = {}
    for c in cases:
        groups.setdefault((c.file,) + c.group_key(), []).append(c)
    # Same inputs, different seeds on a noise-carrying platform: the spread repeated
    # trials would show; the value reported is their median.
    noisy = plat.noise_scope != "off"
    seeds = [(seed + k, False) for k in range(NOISE_SEEDS)] if noisy else [(seed, True)]
    tasks = [(group, s, keep) for group in groups.values() for s, keep in seeds]
    results = _replay([_request(plat, *t) for t in tasks], [g for g, _, _ in tasks], progress)
    for (group, _, _), result in zip(tasks, results):
        for c, v in zip(group, _values(group, result)):
            c.simulated_us = v
            if noisy:
                c.distribution.append(v)
    if noisy:
        for c in cases:
            c.simulated_us = statistics.median(c.distribution)


def count_cases(report: Report, cores: int, given_half_length: float | None = None) -> None:
    """Marks which cases count, for runs measured on one machine of `cores` cores (an
    emulated cluster): all but the latency-bound ones with more ranks than cores, whose
    time is the scheduler's (calibration/latency_bound.py, the rigs report's rule). A run
    of one size (latency_checker) is set against n\u00bd of the 2-host ping-pong measured
    beside it: given_half_length (half_length_of_files), else a ping-pong among the
    cases; without one such runs do not count (nothing measured places them)."""
    from . import latency_bound

    cases = [_count_dict(c) for c in report.cases]
    t0 = latency_bound.zero_byte_times(cases)
    needs = any(c["ranks"] > cores and (c["file"], c["workload"], c["statistic"]) not in t0
                for c in cases)
    n_half, source = None, None
    if needs and given_half_length is not None:
        n_half, source = given_half_length, "--pingpong"
    elif needs:
        n_half, source = latency_bound.pingpong_half_length(cases), "the ping-pong among the files"
    for c, flag in zip(report.cases, latency_bound.counted_flags(cases, cores, n_half)):
        c.counted = flag
    report.machine_cores, report.half_length, report.half_length_from = cores, n_half, source


def half_length_of_files(files) -> float:
    """n\u00bd of the 2-host ping-pong in files (validate's --pingpong)."""
    from .file_placement import read
    from .latency_bound import pingpong_half_length

    measured, _ = read(files, 1, None)
    n_half = pingpong_half_length([_count_dict(c) for c in cases_of(measured, 1)[0]])
    if n_half is None:
        raise InputError(f"--pingpong {' '.join(map(str, files))}: no ping-pong of 2 ranks with "
                         f"a zero-byte size whose time reaches twice it (IMB PingPong, "
                         f"osu_latency or NetPIPE)")
    return n_half


def _count_dict(c: Case) -> dict:
    return {"file": c.file, "workload": c.workload, "statistic": c.statistic, "bytes": c.bytes,
            "measured_us": c.measured_us, "ranks": c.ranks, "ranks_per_node": c.ranks_per_node}


def validate(platform, files, nodes: int | None = None, ranks_per_node: int | None = None,
             seed: int = 1, progress=None, placement=None,
             machine_cores: int | None = None, pingpong=None) -> Report:
    """Parse files, simulate every case on platform, and compare. machine_cores: the
    files were measured on one machine of that many cores (default: the platform's
    nodes.machine_cores, if any); the cases are then counted (count_cases, with the
    ping-pong files `pingpong`)."""
    from .. import platforms

    plat = platforms.load(platform)
    if nodes is not None:
        plat = plat.replace(nodes=nodes)
    from .file_placement import read

    cores = machine_cores if machine_cores is not None else plat.machine_cores
    if pingpong and cores is None:
        raise InputError("--pingpong decides which runs count on a machine of few cores: it "
                         "needs --machine-cores (or a platform with nodes.machine_cores)")
    n_half = half_length_of_files(pingpong) if pingpong else None
    measurements, ranks_per_node = read(files, ranks_per_node, placement)
    cases, skipped = cases_of(measurements, ranks_per_node)
    if not cases:
        raise InputError(f"nothing to validate: no file holds a case hopsim simulates "
                         f"({'; '.join(f'{w}: {y}' for _, w, y in skipped[:3])})")
    simulate_cases(plat, cases, seed, progress)
    report = Report(plat.name, cases, skipped)
    if cores is not None:
        count_cases(report, cores, n_half)
    return report
