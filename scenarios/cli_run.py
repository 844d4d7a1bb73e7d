"""`hopsim run`: check, estimate, run (resumably), assemble.

Exit status: 0 every point finished; 2 bad input (nothing run, nothing written); 3 some
points failed (each reported on stderr with its parameters; results hold the others and
their records stay in OUT/points, so the same command retries only the failed ones);
130 interrupted (finished points stay recorded).
"""
from __future__ import annotations

import sys

from .. import __version__
from ..machine import cores
from ..errors import InputError
from .. import scenarios
from .estimate import LIMIT_SECONDS, duration
from .parallel import Inline, Processes, available_budget
from .records import Records, fingerprint
from .runner import run_plan
from .sweep import forecast, plan

EXIT_FAILED_POINTS = 3
MAX_JOBS = 1024  # worker processes, each an interpreter: far beyond any one machine's cores


def _is_file_like(text: str) -> bool:
    from pathlib import Path
    return Path(text).is_file() or "/" in text or text.endswith(".toml")


def run(args) -> int:
    if getattr(args, "list", False):
        from . import reproductions
        if args.scenario is not None:
            raise InputError(f"--list: lists every reproduction; give it alone, not with "
                             f"{args.scenario!r}")
        sys.stdout.write(reproductions.listing())
        sys.stdout.write(f"(packaged scenarios: {', '.join(scenarios.list_packaged())}; "
                         f"or a scenario TOML file)\n")
        return 0
    if args.scenario and not _is_file_like(args.scenario):
        from . import reproductions
        if reproductions.find(args.scenario) is not None:
            from .study import run_reproduction
            return run_reproduction(args)
        if args.scenario not in scenarios.list_packaged():
            raise InputError(f"{args.scenario}: not a scenario file, a reproduction "
                             f"({', '.join(reproductions.names())}) or a packaged scenario "
                             f"({', '.join(scenarios.list_packaged())})")
    for flag, value in (("--seed", getattr(args, "seed", None)),
                        ("--quick", getattr(args, "quick", False) or None)):
        if value is not None:
            raise InputError(f"{flag}: applies to reproductions only (hopsim run --list); "
                             f"a scenario file sets its seeds itself")
    if args.out is None:
        args.out = "out"
    if args.jobs is not None and not 1 <= args.jobs <= MAX_JOBS:
        raise InputError(f"--jobs: must be 1 to {MAX_JOBS} worker processes, got {args.jobs}")
    if args.dask is not None and args.jobs is not None:
        raise InputError("--jobs: has no effect with --dask (the cluster's workers run the "
                         "points); give one of them")
    if args.dask is not None and not args.dask.strip():
        raise InputError("--dask: empty address (tcp://HOST:PORT)")
    scenario = scenarios.load(args.scenario) if args.scenario else scenarios.default()
    # Refused before any run: a bad path should not cost the whole scenario.
    if args.plot is not None:
        from . import figures
        figures.kind(scenario)
    scenarios.check_out(args.out, args.plot)
    the_plan = plan(scenario)
    key = fingerprint(scenario, the_plan.points, the_plan.platforms, __version__)
    records = Records(args.out, key, scenario.name, len(the_plan.points), __version__)
    done = records.check()
    pending = [k for k in range(1, len(the_plan.points) + 1) if k not in done]
    terminal = sys.stderr.isatty()

    backend, budget = None, None
    if args.dask is not None:
        from .dask_backend import Dask
        backend = Dask(args.dask, key)
    try:
        jobs = backend.slots if backend is not None else (args.jobs or cores())
        line, seconds = forecast(the_plan, pending, jobs)
        if seconds > LIMIT_SECONDS and not args.yes:
            raise InputError(f"{line}; refused: estimated above {duration(LIMIT_SECONDS)} "
                             f"(run it with --yes)")
        if terminal:
            sys.stderr.write(line + "\n")
            sys.stderr.flush()
        if backend is None:
            jobs = min(jobs, max(len(pending), 1))
            backend = Inline() if jobs <= 1 else Processes(jobs)
            budget = available_budget(jobs)
    except BaseException:
        if backend is not None:
            backend.close(interrupted=True)
        raise
    outcome = run_plan(the_plan, backend=backend, records=records, done=done,
                       progress=terminal, budget=budget)
    if outcome.points:
        paths = scenarios.write_outputs(outcome, args.out, args.plot)
        if not outcome.failures:
            records.remove()
        sys.stdout.write(scenarios.table(outcome))
        sys.stdout.write(f"wrote {paths[0]} and {paths[1]}\n")
        if args.plot is not None:
            sys.stdout.write(f"wrote {paths[2]}\n")
    if outcome.failures:
        n = len(the_plan.points)
        sys.stderr.write(f"hopsim: {len(outcome.failures)} of {n} points failed "
                         f"(listed above); the same command reruns only them "
                         f"(finished points are kept in {records.folder})\n")
        return EXIT_FAILED_POINTS
    return 0
