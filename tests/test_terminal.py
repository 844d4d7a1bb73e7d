"""What a user sees on a terminal: progress and interrupts, through a pseudo-terminal
(pexpect), and what is left running when the parent is interrupted or killed."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pexpect
import pytest

HOPSIM = [sys.executable, "-m", "hopsim"]

# Linked sweep tables that set different keys: the complete point has no degree (the
# shape of the packaged overlays and degree_sweep scenarios), small enough to run fast.
LINKED = """\
name = "linked"
platform = "two-nodes"
workload = "roundtrip"
exchanges = 3
[platform_overrides]
nodes = 8
[sweep]
case = [{overlay = "complete", ranks = 4}, {overlay = "debruijn", degree = 2, ranks = 8}]
"""

# One point that runs for several seconds (the child is there to be interrupted).
SLOW = """\
name = "slow"
platform = "two-nodes"
workload = "roundtrip"
exchanges = 200
[platform_overrides]
nodes = 4096
[sweep]
ranks = [4096, 4096]
"""


def spawn(args, cwd):
    return pexpect.spawn(HOPSIM[0], HOPSIM[1:] + list(map(str, args)), cwd=str(cwd),
                         timeout=120, env=dict(os.environ, TERM="xterm"),
                         dimensions=(24, 200))  # wide enough for the progress line's point


def finish(child):
    child.expect(pexpect.EOF)
    child.close()
    return child.before.decode(errors="replace"), child.exitstatus


def test_progress_on_a_terminal_with_linked_tables_setting_different_keys(tmp_path):
    (tmp_path / "linked.toml").write_text(LINKED)
    child = spawn(["run", "linked.toml", "--out", "out", "--jobs", "1"], tmp_path)
    child.expect(r"0/2 points done, 1 running, 0 failed .* started point 1 \(ranks=4, "
                 r"overlay=complete\)")
    text, status = finish(child)
    assert status == 0, text
    assert "Traceback" not in text
    assert (tmp_path / "out" / "results.csv").is_file()


def test_progress_names_each_point_with_the_keys_it_sets(tmp_path):
    (tmp_path / "linked.toml").write_text(LINKED)
    child = spawn(["run", "linked.toml", "--out", "out", "--jobs", "1"], tmp_path)
    child.expect(r"1/2 points done, 1 running, 0 failed .* started point 2 \(ranks=8, degree=2, "
                 r"overlay=debruijn\)")
    text, status = finish(child)
    assert status == 0, text


def test_bad_point_in_linked_tables_is_one_line_on_a_terminal(tmp_path):
    bad = LINKED.replace('degree = 2, ranks = 8', 'degree = 2, ranks = 7')
    (tmp_path / "bad.toml").write_text(bad)
    child = spawn(["run", "bad.toml", "--out", "out"], tmp_path)
    text, status = finish(child)
    assert status == 2, text
    lines = [l for l in text.replace("\r", "\n").split("\n") if l.strip()]
    assert len(lines) == 1 and "point 2 (ranks=7, degree=2, overlay=debruijn)" in lines[0], text
    assert not (tmp_path / "out").exists()


def _children(pid):
    out = subprocess.run(["ps", "-o", "pid=,stat=", "--ppid", str(pid)], capture_output=True,
                         text=True).stdout
    return [int(p) for p, stat in (l.split() for l in out.splitlines()) if not stat.startswith("Z")]


def _running(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1][0] not in "ZX"
    except FileNotFoundError:
        return False


def _wait_for_child(pid, deadline=60):
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        kids = _children(pid)
        if kids:
            return kids[0]
        time.sleep(0.05)
    raise AssertionError("the simulation child never started")


def test_ctrl_c_on_a_terminal_is_clean_and_immediate(tmp_path):
    (tmp_path / "slow.toml").write_text(SLOW)
    child = spawn(["run", "slow.toml", "--out", "out"], tmp_path)
    child.expect(r"0/2 points done, 2 running")
    sim = _wait_for_child(child.pid)
    time.sleep(0.3)
    start = time.monotonic()
    child.sendintr()  # the terminal's Ctrl-C: SIGINT to the whole foreground group
    text, status = finish(child)
    elapsed = time.monotonic() - start
    assert status == 130, text
    tail = text.replace("\r", "\n").replace("\x1b[K", "").strip().splitlines()
    assert tail[-1].endswith("hopsim: interrupted"), text
    assert "Traceback" not in text and "Error" not in text, text
    # Far from the point's length (seconds): the parent does not wait for the child.
    assert elapsed < 5, elapsed
    assert not _running(sim)
    assert not (tmp_path / "out").exists()


def test_ctrl_c_during_topology_statistics_is_immediate(tmp_path):
    # The engine walks the complete graph's 16384^2 routes for about 4.6 s without
    # returning to Python; Ctrl-C a second in must not wait for it (without the worker
    # thread it took 3.5 s more), and no Ray file may appear.
    child = spawn(["topology", "complete", "--ranks", "16384", "--out", "ray"], tmp_path)
    time.sleep(1.0)
    start = time.monotonic()
    child.sendintr()
    text, status = finish(child)
    elapsed = time.monotonic() - start
    assert status == 130, text
    assert text.strip().splitlines()[-1].endswith("hopsim: interrupted"), text
    assert "Traceback" not in text, text
    assert elapsed < 2.5, elapsed
    assert not (tmp_path / "ray").exists()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_signal_to_the_parent_leaves_no_simulation_running(tmp_path, sig):
    (tmp_path / "slow.toml").write_text(SLOW)
    proc = subprocess.Popen(HOPSIM + ["run", "slow.toml", "--out", "out"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sim = _wait_for_child(proc.pid)
    time.sleep(0.3)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=30)
    end = time.monotonic() + 10
    while _running(sim) and time.monotonic() < end:
        time.sleep(0.05)
    assert not _running(sim), f"simulation {sim} outlived its parent ({sig.name})"
    if sig != signal.SIGKILL:  # SIGTERM stops a run as Ctrl-C does
        assert proc.returncode == 130 and err == "hopsim: interrupted\n", err
    assert not (tmp_path / "out").exists()
