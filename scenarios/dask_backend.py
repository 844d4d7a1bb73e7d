"""Points on an existing Dask distributed cluster (hopsim run --dask tcp://HOST:PORT).

hopsim does not start or size the cluster: it connects as a client, checks that every
worker imports the same hopsim version (a different engine could give different
results), and submits each point as one task running hopsim.scenarios.worker.run_point.
At most as many points are in flight as the workers have threads, so progress and
the order records are written in follow the points as they finish.
"""
from __future__ import annotations

from ..errors import InputError
from .worker import run_point, version

CONNECT_SECONDS = 10


class Dask:
    def __init__(self, address: str, key: str):
        try:
            import distributed
        except ImportError:
            raise InputError("--dask: dask.distributed is not installed "
                             "(pip install 'hopsim[dask]')") from None
        self._distributed = distributed
        try:
            # The default client: distributed.wait() finds the futures' client that way.
            self.client = distributed.Client(address, timeout=CONNECT_SECONDS)
        except (OSError, TimeoutError, ValueError) as e:
            raise InputError(f"--dask {address}: cannot reach the scheduler: "
                             f"{' '.join(str(e).split()) or type(e).__name__}") from None
        try:
            self.slots = self._check_workers(address)
        except BaseException:
            self.client.close()
            raise
        self._key = key[:16]
        self._futures: dict = {}

    def _check_workers(self, address: str) -> int:
        from .. import __version__

        workers = self.client.scheduler_info().get("workers", {})
        if not workers:
            raise InputError(f"--dask {address}: the scheduler has no workers")
        try:
            versions = self.client.run(version)
        except Exception as e:  # noqa: BLE001 - a worker without hopsim cannot unpickle it
            raise InputError(f"--dask {address}: a worker cannot run hopsim: "
                             f"{type(e).__name__}: {' '.join(str(e).split())}") from None
        for worker, theirs in sorted(versions.items()):
            if theirs != __version__:
                raise InputError(f"--dask {address}: worker {worker} runs hopsim {theirs}, "
                                 f"this is hopsim {__version__}; install the same version")
        return sum(w.get("nthreads", 1) for w in workers.values())

    def submit(self, number: int, args: dict) -> None:
        # The key names the sweep and point, so a resubmitted point is the same task.
        future = self.client.submit(run_point, args, key=f"hopsim-{self._key}-{number}",
                                    pure=False, retries=0)
        self._futures[future] = number

    def wait(self, timeout: float) -> list[tuple[int, dict]]:
        if not self._futures:
            return []
        try:
            done, _ = self._distributed.wait(list(self._futures), timeout=timeout,
                                             return_when="FIRST_COMPLETED")
        except self._distributed.TimeoutError:
            return []
        except TimeoutError:
            return []
        out = []
        for future in done:
            number = self._futures.pop(future)
            try:
                out.append((number, future.result()))
            except Exception as e:  # noqa: BLE001 - a lost worker, a killed task
                out.append((number, {"ok": False, "error": f"on the Dask cluster: "
                                                           f"{type(e).__name__}: {e}"}))
        return out

    def close(self, interrupted: bool = False) -> None:
        if interrupted and self._futures:
            self.client.cancel(list(self._futures))
        self._futures.clear()
        self.client.close()
