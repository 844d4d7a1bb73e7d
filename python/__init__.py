"""hopsim: discrete-event simulation of MPI traffic on cluster and cloud networks.

    import hopsim
    r = hopsim.simulate("two-nodes", "pingpong", ranks=2, sizes=[0, 1024])
    print(r.to_json())

Subpackages: hopsim.platforms (platform files and presets), hopsim.scenarios (sweeps),
hopsim.topologies (software-routed overlays), hopsim.calibration (parsers, fits, validation),
hopsim.live (hopbench, the emulated cluster: live runs).
"""
from .api import prepare, simulate
from .errors import InputError
from .result import Result
from .workload import Workload, make_workload

__version__ = "0.1.0"
__all__ = ["simulate", "prepare", "Result", "Workload", "make_workload", "InputError"]
