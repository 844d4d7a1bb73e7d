"""Resumable sweeps: a sweep killed at any moment (SIGKILL, SIGTERM, SIGINT) keeps every
finished point as a whole record, leaves no half-written file, and the same command
resumes it to results byte for byte those of an uninterrupted run (wall times aside)."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hopsim import __version__
from hopsim.scenarios import parse_scenario, records
from hopsim.scenarios.sweep import plan

HOPSIM = [sys.executable, "-m", "hopsim"]

SWEEP = """\
name = "resume"
platform = "two-nodes"
workload = "roundtrip"
exchanges = 40
[platform_overrides]
nodes = 256
[sweep]
ranks = [64, 128, 256]
seed = [1, 2, 3, 4]
"""


def hopsim(*args, cwd, **kw):
    return subprocess.run(HOPSIM + [str(a) for a in args], cwd=cwd, capture_output=True,
                          text=True, timeout=600, **kw)


def without_wall(text: str) -> list[str]:
    return [line for line in text.splitlines() if '"wall_seconds"' not in line]


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The uninterrupted run's results."""
    d = tmp_path_factory.mktemp("ref")
    (d / "s.toml").write_text(SWEEP)
    p = hopsim("run", "s.toml", "--out", "ref", "--jobs", "1", cwd=d)
    assert p.returncode == 0, p.stderr
    assert not (d / "ref" / "points").exists()  # records go once results hold every point
    return (d / "ref" / "results.csv").read_bytes(), (d / "ref" / "results.json").read_text()


def _records(folder: Path) -> list[Path]:
    return sorted(folder.glob("[0-9]*.json")) if folder.is_dir() else []


def _descendants(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-e", "-o", "pid=,ppid="], capture_output=True, text=True).stdout
    children = {}
    for line in out.splitlines():
        p, pp = map(int, line.split())
        children.setdefault(pp, []).append(p)
    found, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            found.append(c)
            todo.append(c)
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1][0] not in "ZX"
    except FileNotFoundError:
        return False


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
def test_killed_sweep_keeps_finished_points_and_resumes_to_the_same_bytes(sig, tmp_path,
                                                                          reference):
    (tmp_path / "s.toml").write_text(SWEEP)
    proc = subprocess.Popen(HOPSIM + ["run", "s.toml", "--out", "out", "--jobs", "2"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    folder = tmp_path / "out" / "points"
    deadline = time.monotonic() + 300
    while len(_records(folder)) < 3 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    assert proc.poll() is None, "the sweep ended before it could be interrupted"
    family = _descendants(proc.pid)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == (-signal.SIGKILL if sig == signal.SIGKILL else 130), err
    if sig != signal.SIGKILL:
        assert err.strip().splitlines()[-1] == "hopsim: interrupted", err
        assert "Traceback" not in err
    # Workers and their simulations die with the sweep, however it was killed.
    deadline = time.monotonic() + 10
    while any(map(_alive, family)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [p for p in family if _alive(p)]
    # Every record is whole (it parses and names its point); nothing else is visible.
    kept = _records(folder)
    assert len(kept) >= 3
    for path in kept:
        record = json.loads(path.read_text())
        assert path.name == f"{record['point']:06d}.json" and "rtt_us" in record["result"]["results"]
    visible = {p.name for p in folder.iterdir() if not p.name.startswith(".")}
    assert visible == {p.name for p in kept} | {"sweep.json"}
    assert not (tmp_path / "out" / "results.csv").exists()
    walls = {json.loads(p.read_text())["point"]: json.loads(p.read_text())["result"]["wall_seconds"]
             for p in kept}

    p = hopsim("run", "s.toml", "--out", "out", "--jobs", "2", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    csv_bytes, json_text = reference
    assert (tmp_path / "out" / "results.csv").read_bytes() == csv_bytes
    resumed = (tmp_path / "out" / "results.json").read_text()
    assert without_wall(resumed) == without_wall(json_text)
    # The recorded points were not run again: their wall times are the records' own.
    for point in json.loads(resumed)["points"]:
        if point["point"] in walls:
            assert point["result"]["wall_seconds"] == walls[point["point"]]
    assert sorted(x.name for x in (tmp_path / "out").iterdir()) == ["results.csv", "results.json"]


def test_a_different_scenario_in_the_folder_is_refused(tmp_path):
    (tmp_path / "s.toml").write_text(SWEEP)
    (tmp_path / "t.toml").write_text(SWEEP.replace("exchanges = 40", "exchanges = 41"))
    s = parse_scenario(SWEEP, "s.toml")
    p = plan(s)
    rec = records.Records(tmp_path / "out", records.fingerprint(s, p.points, p.platforms,
                                                                __version__),
                          s.name, len(p.points), __version__)
    rec.start()
    rec.write(1, p.points[0], {"x": 1})
    before = {f.name: f.read_bytes() for f in (tmp_path / "out" / "points").iterdir()}
    r = hopsim("run", "t.toml", "--out", "out", cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert ("--out out: holds unfinished scenario 'resume' (12 points, hopsim "
            f"{__version__}), not this one") in r.stderr
    after = {f.name: f.read_bytes() for f in (tmp_path / "out" / "points").iterdir()}
    assert after == before and sorted(x.name for x in (tmp_path / "out").iterdir()) == ["points"]


def test_fingerprint_follows_version_points_and_platform_values():
    s = parse_scenario(SWEEP, "s.toml")
    p = plan(s)
    key = records.fingerprint(s, p.points, p.platforms, "1.0")
    assert key == records.fingerprint(s, p.points, p.platforms, "1.0")
    assert key != records.fingerprint(s, p.points, p.platforms, "1.1")
    assert key != records.fingerprint(s, p.points[::-1], p.platforms[::-1], "1.0")
    faster = [plat.replace(latency_us=plat.latency_us * 2) for plat in p.platforms]
    assert key != records.fingerprint(s, p.points, faster, "1.0")


def test_a_record_is_whole_or_absent(tmp_path, monkeypatch):
    path = tmp_path / "000001.json"
    path.write_text("old\n")

    def interrupted(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(records.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        records.atomic_write(path, "new and longer\n")
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["000001.json"]  # no temporary left


def test_temporaries_a_kill_left_are_removed_and_never_read(tmp_path):
    s = parse_scenario(SWEEP, "s.toml")
    p = plan(s)
    key = records.fingerprint(s, p.points, p.platforms, __version__)
    rec = records.Records(tmp_path, key, s.name, 12, __version__)
    rec.start()
    rec.write(2, p.points[1], {"r": 2})
    (rec.folder / ".000003.json.abc.tmp").write_text('{"fingerprint": "')  # cut by a kill
    (rec.folder / "000004.json").write_text('{"fingerprint": "' + key + '", "point": 4')
    assert sorted(rec.check()) == [2]  # a damaged record is run again, not trusted
    rec.start()
    assert not list(rec.folder.glob(".*.tmp"))


def test_an_empty_records_folder_is_no_other_sweep(tmp_path):
    (tmp_path / "s.toml").write_text(SWEEP.replace("seed = [1, 2, 3, 4]", "seed = [1]"))
    (tmp_path / "out" / "points").mkdir(parents=True)
    p = hopsim("run", "s.toml", "--out", "out", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert sorted(x.name for x in (tmp_path / "out").iterdir()) == ["results.csv", "results.json"]
