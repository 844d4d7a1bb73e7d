"""hopsim run --dask: points on a real Dask scheduler with worker processes (a
LocalCluster on 127.0.0.1), against a local run of the same scenario."""
import json
import signal
import subprocess
import sys
import time

import pytest

distributed = pytest.importorskip("distributed")

from test_sweep_resume import SWEEP, _records, without_wall  # noqa: E402

HOPSIM = [sys.executable, "-m", "hopsim"]


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", scheduler_port=0,
                                  dashboard_address=None) as c:
        yield c.scheduler_address


def hopsim(*args, cwd):
    return subprocess.run(HOPSIM + [str(a) for a in args], cwd=cwd, capture_output=True,
                          text=True, timeout=600)


def test_dask_gives_the_local_results_byte_for_byte(cluster, tmp_path):
    (tmp_path / "s.toml").write_text(SWEEP)
    local = hopsim("run", "s.toml", "--out", "local", "--jobs", "1", cwd=tmp_path)
    assert local.returncode == 0, local.stderr
    remote = hopsim("run", "s.toml", "--out", "remote", "--dask", cluster, cwd=tmp_path)
    assert remote.returncode == 0, remote.stderr
    assert remote.stderr == ""  # not a terminal: no estimate, no progress
    assert ((tmp_path / "remote" / "results.csv").read_bytes()
            == (tmp_path / "local" / "results.csv").read_bytes())
    assert (without_wall((tmp_path / "remote" / "results.json").read_text())
            == without_wall((tmp_path / "local" / "results.json").read_text()))
    # The printed table too, but for the folder name on the last line.
    assert remote.stdout.splitlines()[:-1] == local.stdout.splitlines()[:-1]


def test_a_dask_sweep_killed_resumes_to_the_same_bytes(cluster, tmp_path):
    (tmp_path / "s.toml").write_text(SWEEP)
    ref = hopsim("run", "s.toml", "--out", "ref", "--jobs", "2", cwd=tmp_path)
    assert ref.returncode == 0, ref.stderr
    proc = subprocess.Popen(HOPSIM + ["run", "s.toml", "--out", "out", "--dask", cluster],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300
    while (len(_records(tmp_path / "out" / "points")) < 2 and time.monotonic() < deadline
           and proc.poll() is None):
        time.sleep(0.02)
    assert proc.poll() is None
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    kept = _records(tmp_path / "out" / "points")
    assert 2 <= len(kept) < 12
    for path in kept:
        assert json.loads(path.read_text())["result"]["workload"] == "roundtrip"
    again = hopsim("run", "s.toml", "--out", "out", "--dask", cluster, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert ((tmp_path / "out" / "results.csv").read_bytes()
            == (tmp_path / "ref" / "results.csv").read_bytes())


@pytest.mark.parametrize("theirs", ["0.0.1", "999.0"])  # an older install, and a newer one
def test_a_worker_with_another_hopsim_version_is_refused(tmp_path, theirs):
    (tmp_path / "s.toml").write_text(SWEEP)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", scheduler_port=0,
                                  dashboard_address=None) as c:
        with distributed.Client(c.scheduler_address) as client:
            # The worker's hopsim reports another version, as another install would.
            client.run(lambda: setattr(__import__("hopsim"), "__version__", theirs))
            worker = next(iter(client.scheduler_info()["workers"]))
        p = hopsim("run", "s.toml", "--out", "out", "--dask", c.scheduler_address, cwd=tmp_path)
    assert p.returncode == 2 and p.stdout == "" and "Traceback" not in p.stderr
    from hopsim import __version__
    assert p.stderr == (f"hopsim: error: --dask {c.scheduler_address}: worker {worker} runs "
                        f"hopsim {theirs}, this is hopsim {__version__}; install the same version\n")
    assert not (tmp_path / "out").exists()


def test_an_unreachable_scheduler_is_one_line(tmp_path):
    (tmp_path / "s.toml").write_text(SWEEP)
    p = hopsim("run", "s.toml", "--out", "out", "--dask", "tcp://127.0.0.1:9", cwd=tmp_path)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.startswith("hopsim: error: --dask tcp://127.0.0.1:9: cannot reach the "
                               "scheduler: ") and p.stderr.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_jobs_and_dask_together_are_refused(tmp_path):
    (tmp_path / "s.toml").write_text(SWEEP)
    p = hopsim("run", "s.toml", "--jobs", "2", "--dask", "tcp://127.0.0.1:9", cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr == ("hopsim: error: --jobs: has no effect with --dask (the cluster's "
                        "workers run the points); give one of them\n")
