"""A watcher that outlives hopsim: whatever ends hopsim (SIGKILL included), the process
groups it started are killed and its temporary folders removed.

    with Reaper() as reaper:
        tmp = tempfile.mkdtemp(); reaper.folder(tmp)
        proc = subprocess.Popen(cmd, start_new_session=True, preexec_fn=die_with_parent)
        reaper.group(proc.pid)
        ...                      # hopsim's own clean-up runs as usual on the way out
        reaper.forget_group(proc.pid)  # once reaped, the group id may be reused

The watcher is this file run as a script (python -I -S, only the standard library, in a
session of its own so a terminal's Ctrl-C does not reach it). It reads orders from a
pipe whose only writer is hopsim; end of file without "done" means hopsim died, and the
watcher then SIGKILLs every group still registered, runs the registered clean-up
commands and removes the registered folders. die_with_parent() adds PR_SET_PDEATHSIG:
the kernel SIGKILLs the child the moment hopsim dies, before the watcher wakes up.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys

PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """preexec_fn: the child gets SIGKILL when the process that started it dies."""
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: the watcher still cleans up


class Reaper:
    def __init__(self):
        read, self._write = os.pipe()  # both ends close-on-exec: only the watcher inherits
        self._proc = subprocess.Popen([sys.executable, "-I", "-S", os.path.abspath(__file__)],
                                      stdin=read, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL, start_new_session=True)
        os.close(read)

    def _send(self, kind: str, value) -> None:
        os.write(self._write, (json.dumps([kind, value]) + "\n").encode())

    def folder(self, path) -> None:
        self._send("folder", os.path.abspath(path))

    def group(self, pgid: int) -> None:
        self._send("group", int(pgid))

    def forget_group(self, pgid: int) -> None:
        self._send("forget", int(pgid))

    def command(self, argv: list[str]) -> None:
        """A command to run if hopsim dies (after the groups are killed)."""
        self._send("command", list(argv))

    def close(self) -> None:
        """hopsim ended normally and cleaned up itself: the watcher exits doing nothing."""
        if self._write is None:
            return
        try:
            self._send("done", None)
        finally:
            os.close(self._write)
            self._write = None
            self._proc.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def _watch() -> None:
    for s in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM, signal.SIGPIPE):
        signal.signal(s, signal.SIG_IGN)
    groups, folders, commands, done = [], [], [], False
    with os.fdopen(0, "rb") as orders:
        for line in orders:
            kind, value = json.loads(line)
            if kind == "group":
                groups.append(value)
            elif kind == "forget" and value in groups:
                groups.remove(value)
            elif kind == "folder":
                folders.append(value)
            elif kind == "command":
                commands.append(value)
            elif kind == "done":
                done = True
    if done:
        return
    import time

    for pgid in groups:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except OSError:
            pass
    deadline = time.monotonic() + 2.0  # let the killed processes drop their open files
    while groups and time.monotonic() < deadline:
        try:
            os.killpg(groups[0], 0)
        except OSError:
            groups.pop(0)
            continue
        time.sleep(0.02)
    for argv in commands:
        try:
            subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=120)
        except (OSError, subprocess.SubprocessError):
            pass
    for path in folders:
        shutil.rmtree(path, ignore_errors=True)


if __name__ == "__main__":
    _watch()
