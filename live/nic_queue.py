"""What an emulated host keeps queued in its NIC: its tbf's backlog, sampled while a run goes.

A rendezvous's control message (Open MPI's PUT, its FIN) leaves its host behind whatever
that host's NIC queue holds of its other connections' bytes; the engine bounds the wait
with network.nic_queue_bytes (docs/model.md, "Protocol"). Linux's TCP small queues would
keep two 64 KiB segments per connection there, but under a tbf BBR measures the veth's
speed in the bucket's bursts and paces far above the tbf's rate, so each connection keeps
up to its congestion window in the queue instead: hundreds of KiB, measured here rather
than derived. `hopsim live --sample-nic-queue` asks each host's egress qdisc for its
backlog about every millisecond (one `tc -s -j -b -` per host: batch mode, one netlink
dump per question) while mpirun runs, and records the samples' count, largest, 99th and
90th percentiles, the median of the nonzero ones and the fraction that were nonzero.
calibrate takes the 99th percentile: the level the queue reaches, steadier from run to
run than the largest sample (748-842 KB on rig D's links in two runs, against 603-609).
"""
from __future__ import annotations

import os
import re
import select
import subprocess
import threading
import time

from ..reaper import die_with_parent

PERIOD_S = 0.001
# Busy-polling ranks hold every core: the sampler and its tc run at a raised priority so
# that their questions and answers are not left waiting behind them.
NICE = -10
# JSON (-j): the backlog in bytes (tc's text prints exact multiples of 1 KiB as "283Kb").
_BACKLOG = re.compile(rb'"backlog":(\d+)')


def _raise_priority(tid: int = 0) -> None:
    try:
        os.setpriority(os.PRIO_PROCESS, tid, NICE)
    except OSError:
        pass  # not root: sampled less often, still sampled


def _raised() -> None:
    die_with_parent()
    _raise_priority()


class NicQueueSampler:
    """`with NicQueueSampler(cluster): run...`, then .record(): the samples' summary."""

    def __init__(self, cluster, period_s: float = PERIOD_S):
        self.devices = [(ns, f"{cluster.tag}i{i}") for i, ns in enumerate(cluster.namespaces)]
        self.period_s = period_s
        self.samples: list[int] = []
        self._procs: list[subprocess.Popen] = []
        self._pending: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self):
        try:
            for ns, _ in self.devices:
                self._procs.append(subprocess.Popen(
                    ["ip", "netns", "exec", ns, "tc", "-s", "-j", "-b", "-"], stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0,
                    start_new_session=True, preexec_fn=_raised))
                self._pending.append(b"")
        except BaseException:
            self._close()
            raise
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(5)
        self._close()
        return False

    def _close(self):
        for p in self._procs:
            if p.poll() is None:
                p.kill()
            p.wait()
            for f in (p.stdin, p.stdout):
                try:
                    f.close()
                except OSError:
                    pass  # a pipe the killed tc left half-written

    def _ask(self, i: int) -> int | None:
        """Host i's backlog now; None once its tc is gone or silent for a second."""
        proc, device = self._procs[i], self.devices[i][1]
        try:
            os.write(proc.stdin.fileno(), f"qdisc show dev {device}\n".encode())
        except OSError:
            return None
        # Raw reads and a bound on each wait: whatever tc does, the sampler never blocks
        # the run's end.
        fd = proc.stdout.fileno()
        while (m := _BACKLOG.search(self._pending[i])) is None:
            if not select.select([fd], [], [], 1.0)[0]:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                return None
            self._pending[i] += chunk
        self._pending[i] = self._pending[i][m.end():]
        return int(m.group(1))

    def _loop(self):
        _raise_priority(threading.get_native_id())
        while not self._stop.is_set():
            for i in range(len(self._procs)):
                v = self._ask(i)
                if v is None:
                    return
                self.samples.append(v)
            time.sleep(self.period_s)

    def record(self) -> dict:
        """The summary the live JSON keeps under live.nic_queue (bytes)."""
        v = sorted(self.samples)
        nonzero = [x for x in v if x > 0]

        def q(xs, f):
            return xs[min(len(xs) - 1, int(f * len(xs)))] if xs else 0

        return {"samples": len(v), "hosts": len(self.devices), "period_ms": self.period_s * 1e3,
                "max_bytes": v[-1] if v else 0, "p99_bytes": q(v, 0.99), "p90_bytes": q(v, 0.9),
                "median_nonzero_bytes": q(nonzero, 0.5),
                "nonzero_fraction": round(len(nonzero) / len(v), 4) if v else 0.0}
