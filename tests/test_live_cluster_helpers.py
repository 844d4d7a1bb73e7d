"""live/cluster.py's process handling and its context manager, checked without root or
namespaces (tests/test_live_cluster.py builds real clusters, and skips without them)."""
import os
import subprocess
import sys
import time
from pathlib import Path

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


def test_a_burst_below_one_gso_packet_gets_the_cut_packets_note():
    from hopsim.live.cluster import GSO_PACKET_BYTES, cut_packets_note

    # 64 KiB of TCP data in 46 MTU segments, 66 header bytes each beyond the first:
    # G's 65536 B burst cuts such a packet, H's 72000 B passes it whole (measured:
    # docs/validation/rigs-idle/gso-burst/README.md).
    assert GSO_PACKET_BYTES == 68506
    note = cut_packets_note(500e6, 65536)
    assert note is not None and "65536 B" in note and "68506 B" in note
    assert cut_packets_note(500e6, GSO_PACKET_BYTES - 1) is not None
    assert cut_packets_note(500e6, GSO_PACKET_BYTES) is None
    assert cut_packets_note(500e6, 72000) is None
    assert cut_packets_note(None, None) is None  # uncapped: no tbf


def test_the_watchers_teardown_command_runs_for_the_campaign_and_live_alike():
    # hopsim.reaper runs this command when hopsim dies mid-run; it must import and find
    # nothing to do for a tag no cluster has (it once named a module that had moved).
    from hopsim.live.cluster import teardown_command

    p = subprocess.run(teardown_command("hsmabc123"), capture_output=True, text=True, timeout=60)
    assert (p.returncode, p.stderr) == (0, "")
    for path in ("live/mpirun.py", "calibration/campaign.py"):
        source = (Path(__file__).parent.parent / path).read_text()
        assert "teardown_command(" in source and "import teardown_tag" not in source
