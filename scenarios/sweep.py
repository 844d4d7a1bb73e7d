"""The sweep loop: which point runs next, what is kept as it finishes, what the user sees.

plan() checks every point before anything runs and resolves its platform (so a worker,
local or remote, gets the values, not a path). execute() hands points to a backend
(hopsim.scenarios.parallel, hopsim.scenarios.dask_backend), at most its slots at once and,
with a memory budget, only while the running points' estimated peaks fit in it; each
finished point is recorded (hopsim.scenarios.records) before it counts as done. A point
that fails is reported with its parameters and the others go on.

Points are independent simulations with their own seeds, so the order they finish in
changes nothing in the results: outputs are assembled in point order at the end.
"""
from __future__ import annotations

import dataclasses
import json
import sys
from dataclasses import dataclass

from .. import platforms
from ..api import prepare
from ..errors import InputError
from . import estimate
from .scenario import Scenario


@dataclass(frozen=True)
class Plan:
    scenario: Scenario
    points: list[dict]
    calls: list[dict]          # hopsim.simulate's arguments, the platform as wire_platform()
    platforms: list            # each point's Platform
    memory: list[int]          # each point's estimated peak bytes
    messages: list[int]        # each point's message count (hopsim.scenarios.estimate)


@dataclass(frozen=True)
class Failure:
    number: int
    label: str
    parameters: dict
    error: str


def label(scenario: Scenario, index: int, point: dict) -> str:
    # Linked sweep tables may set different keys (complete points have no degree).
    swept = ", ".join(f"{k}={point[k]}" for k in scenario.swept_keys() if k in point)
    return f"point {index + 1}" + (f" ({swept})" if swept else "")


def call_args(scenario: Scenario, point: dict) -> dict:
    args = dict(point)
    args["platform"] = platforms.load(scenario.platform_ref(point["platform"]))
    if "placement" in point:
        args["placement"] = scenario.placement_ref(point["placement"])
    if scenario.platform_overrides:
        try:
            args["platform"] = args["platform"].replace(**scenario.platform_overrides)
        except InputError as e:
            raise InputError(f"platform_overrides: {e}") from None
    return args


def wire_platform(plat) -> dict:
    """A Platform as plain fields (its provenance is a read-only mapping, which pickle,
    and so a worker process or a Dask worker, cannot take); worker.run_point rebuilds it."""
    out = {f.name: getattr(plat, f.name) for f in dataclasses.fields(plat)}
    out["provenance"] = dict(plat.provenance)
    return out


def plan(scenario: Scenario) -> Plan:
    """Every point validated (platform, placement, parameters, memory) before any runs."""
    points = scenario.points()
    calls, plats, memory, messages = [], [], [], []
    for i, point in enumerate(points):
        try:
            args = call_args(scenario, point)
            plat, work, _ = prepare(**args)
            memory.append(estimate.memory(plat, work))
            messages.append(estimate.messages(work))
        except InputError as e:
            raise InputError(f"{scenario.source}: {label(scenario, i, point)}: {e}") from None
        calls.append(dict(args, platform=wire_platform(args["platform"])))
        plats.append(plat)
    return Plan(scenario, points, calls, plats, memory, messages)


def forecast(plan: Plan, pending: list[int], slots: int) -> tuple[str, float]:
    """The line printed before a sweep runs, and its estimated wall seconds."""
    n = len(plan.points)
    if not pending:
        return f"{plan.scenario.name}: all {n} points already finished", 0.0
    cal = _calibration(plan, pending)
    per_point = [estimate.seconds(cal, plan.messages[k - 1]) for k in pending]
    jobs = min(slots, len(pending))
    wall = max(sum(per_point) / jobs, max(per_point))
    peaks = sorted((plan.memory[k - 1] for k in pending), reverse=True)
    resumed = f" ({n - len(pending)} already finished)" if len(pending) < n else ""
    text = (f"{plan.scenario.name}: {n} points{resumed}; about {estimate.duration(wall)} on "
            f"{jobs} job{'s' * (jobs > 1)} (engine calibrated here: "
            f"{cal.messages_per_second:,.0f} messages/s, {cal.fixed_seconds * 1000:.0f} ms a run); "
            f"peak memory {estimate.size(peaks[0])} a point, "
            f"{estimate.size(sum(peaks[:jobs]))} for {jobs} at once")
    return text, wall


def _calibration(plan: Plan, pending: list[int]) -> estimate.Calibration:
    k = max(pending, key=lambda k: plan.messages[k - 1])
    args = plan.calls[k - 1]
    plat = plan.platforms[k - 1]
    if plan.points[k - 1]["workload"] == "roundtrip":
        per_exchange = plan.messages[k - 1] // args.get("exchanges", 1000)
        if per_exchange <= estimate.PROBE_MESSAGES:
            return estimate.calibrate_on(plat, dict(args, platform=plat))
    return estimate.calibrate(plan.platforms[pending[0] - 1])


class _Progress:
    """tqdm on a terminal: points done, running, failed, elapsed and remaining time."""

    def __init__(self, total: int, done: int, enabled: bool):
        self.bar = None
        if enabled:
            from tqdm import tqdm

            tqdm.monitor_interval = 0  # no monitor thread
            self.bar = tqdm(total=total, initial=done, file=sys.stderr, mininterval=0.2,
                            desc="0 running, 0 failed",
                            dynamic_ncols=True, unit="pt", leave=False,
                            bar_format="{n_fmt}/{total_fmt} points done, {desc} |{bar}| "
                                       "{elapsed} elapsed, {remaining} left{postfix}")

    def update(self, finished: int, running: int, failed: int, started: str) -> None:
        if self.bar is not None:
            self.bar.set_description_str(f"{running} running, {failed} failed", refresh=False)
            self.bar.set_postfix_str(f"started {started}", refresh=False)
            self.bar.update(finished)
            self.bar.refresh()

    def report(self, line: str) -> None:
        if self.bar is not None:
            self.bar.write(line, file=sys.stderr)
        else:
            sys.stderr.write(line + "\n")
            sys.stderr.flush()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def execute(plan: Plan, backend, records=None, done: dict | None = None,
            progress: bool = False, budget: int | None = None):
    """Run the points not in done (number -> record) on backend. Returns (records by
    point number, failures). records (hopsim.scenarios.records.Records) or None."""
    done = dict(done or {})
    scenario = plan.scenario
    pending = [k for k in range(1, len(plan.points) + 1) if k not in done]
    running: dict[int, int] = {}
    failures: list[Failure] = []
    bar = _Progress(len(plan.points), len(done), progress)
    started = "-"
    recording = False
    try:
        while pending or running:
            in_use = sum(running.values())
            for k in list(pending):
                if len(running) >= backend.slots:
                    break
                need = plan.memory[k - 1]
                if budget is not None and running and in_use + need > budget:
                    continue  # a smaller point further on may fit now
                backend.submit(k, plan.calls[k - 1])
                running[k] = need
                in_use += need
                pending.remove(k)
                started = label(scenario, k - 1, plan.points[k - 1])
            bar.update(0, len(running), len(failures), started)
            finished = backend.wait(0.25)
            for k, out in finished:
                running.pop(k, None)
                name = label(scenario, k - 1, plan.points[k - 1])
                if out["ok"]:
                    result = json.loads(json.dumps(out["result"]))  # as a record reads back
                    if records is not None:
                        if not recording:
                            recording = True
                            records.start()
                        records.write(k, plan.points[k - 1], result)
                    done[k] = {"point": k, "parameters": plan.points[k - 1], "result": result}
                else:
                    failures.append(Failure(k, name, plan.points[k - 1], out["error"]))
                    bar.report(f"hopsim: {scenario.source}: {name} failed: {out['error']}")
            # Also without news: the elapsed and remaining times move on.
            bar.update(len(finished), len(running), len(failures), started)
    except BaseException:
        bar.close()
        backend.close(interrupted=True)
        if records is not None and recording:
            records.discard_if_empty()
        raise
    bar.close()
    backend.close()
    return done, failures

