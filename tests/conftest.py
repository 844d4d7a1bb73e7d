"""Suite-wide set-up."""
import fcntl
import signal
import tempfile
from pathlib import Path

import pytest

import hopsim

# A suite started in the background of a non-interactive shell (nohup, `&`) inherits
# SIGINT ignored, and exec passes an ignored signal on: every hopsim a test starts would
# then ignore the Ctrl-C the interrupt tests send, as the shell meant for its background
# jobs (hopsim keeps that convention). A handler, unlike SIG_IGN, is reset to the default
# by exec, so the commands the tests start take SIGINT as from a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def engine_runs(tmp_path):
    """write(truth, sizes, runs) -> paths: each of `runs` ((file name, workload, its
    parameters)) simulated by the engine on the known platform `truth` with 2 ranks and
    written as hopsim JSON, the files a calibration test fits."""
    def write(truth, sizes, runs):
        paths = []
        for name, workload, params in runs:
            r = hopsim.simulate(truth, workload, ranks=2, sizes=sizes, **params)
            (tmp_path / name).write_text(r.to_json() + "\n")
            paths.append(str(tmp_path / name))
        return paths
    return write


# The files whose tests start emulated clusters or live MPI runs, and check that none is
# left: pytest-xdist runs two files at once, and one's cluster is the other's leftover.
LIVE_FILES = {"test_live_cluster.py", "test_nic_queue.py", "test_calibrate_live.py",
              "test_campaign.py", "test_live_hopbench.py", "test_rigs.py"}
LIVE_LOCK = Path(tempfile.gettempdir()) / "hopsim-tests-live.lock"


@pytest.fixture(autouse=True)
def one_live_test_at_a_time(request):
    """A test of LIVE_FILES holds a lock shared by the workers while it runs (autouse
    fixtures come first, so its leftover checks run inside it)."""
    if request.node.path.name not in LIVE_FILES:
        yield
        return
    with open(LIVE_LOCK, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield
