"""Suite-wide set-up."""
import signal

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
