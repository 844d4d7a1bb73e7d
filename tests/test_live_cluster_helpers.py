"""live/cluster.py's process handling and its context manager, checked without root or
namespaces (tests/test_live_cluster.py builds real clusters, and skips without them)."""
import os
import subprocess
import sys
import time

import pytest

from hopsim.live.cluster import EmulatedCluster, _alive


def test_a_running_process_is_alive_and_a_zombie_or_a_missing_one_is_not():
    assert _alive(os.getpid())  # state R (running) or S (sleeping), not Z
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # exited but not reaped: a zombie (state Z)
        with open(f"/proc/{child.pid}/stat") as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                break
        time.sleep(0.01)
    assert not _alive(child.pid)
    child.wait()
    assert not _alive(child.pid)


def test_waiting_reaps_dead_children_and_returns_when_there_are_none():
    # In a fresh interpreter: a child that exits is reaped (its /proc entry goes), then
    # the process has no child left, which ends the wait instead of raising.
    script = ("import os, sys\n"
              "from hopsim.live.cluster import _wait_gone\n"
              "pid = os.fork()\n"
              "if pid == 0:\n    os._exit(0)\n"
              "_wait_gone([pid], 10)\n"
              "print(os.path.exists(f'/proc/{pid}'))\n"
              "_wait_gone([], 0)\n"
              "print('done')\n")
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert (p.returncode, p.stdout, p.stderr) == (0, "False\ndone\n", "")


def test_an_error_inside_the_cluster_block_is_raised_after_the_teardown():
    c = EmulatedCluster.__new__(EmulatedCluster)  # no namespaces: set-up and teardown noted
    torn = []
    c.up = lambda: None
    c.teardown = lambda: torn.append(True)
    with pytest.raises(ValueError, match="inside"):
        with c:
            raise ValueError("inside")
    assert torn == [True]
