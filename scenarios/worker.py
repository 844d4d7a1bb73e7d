"""What a worker process runs for one point: importable by name, so that local worker
processes and Dask workers run the same function (on a Dask worker it must be the same
hopsim version: hopsim.scenarios.dask_backend checks)."""
from __future__ import annotations

import ctypes
import os
import signal
import time

PR_SET_PDEATHSIG = 1


def run_point(args: dict) -> dict:
    """One point: {"ok": True, "result": Result.to_dict()} or {"ok": False, "error": text}.
    A failure is data, not an exception, so one point's engine error or out-of-memory
    kill never stops the sweep."""
    from ..api import simulate
    from ..platforms import Platform

    start = time.perf_counter()
    try:
        result = simulate(**dict(args, platform=Platform(**args["platform"])))
    except Exception as e:  # noqa: BLE001 - every failure of a point is reported, not raised
        return {"ok": False, "error": " ".join(f"{type(e).__name__}: {e}".split()),
                "seconds": time.perf_counter() - start}
    return {"ok": True, "result": result.to_dict(), "seconds": time.perf_counter() - start}


def version() -> str:
    from .. import __version__
    return __version__


def init_local_worker(parent: int) -> None:
    """A local worker dies with the sweep: SIGKILL when its parent dies (even by
    SIGKILL), and Ctrl-C is the parent's to handle (it kills the workers)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # Born with them blocked (parallel._ctrl_c_held): a kill of the worker itself works again.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGHUP})
