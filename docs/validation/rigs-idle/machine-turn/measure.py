"""latency_checker on 2 hosts at 2 ranks per host (4 ranks on this machine's 2 cores),
at 0 B and 4000 B, on each rig's links: the 2-host runs that show a rank's turn.

    python docs/validation/rigs-idle/machine-turn/measure.py \\
        --out docs/validation/rigs-idle/machine-turn --tools /tmp/scratch-rigs/bin \\
        --trials 3 --rigs A,B,C,D,E,F,G,H,I,J
"""
import sys

from hopsim.calibration import rigs

rigs.CASES = tuple(
    rigs.Case(tool, "latency_checker", "latency_checker", 2, 2, "block",
              ("-message-size", size, "-exchanges", "300"))
    for tool, size in (("latency_checker-0B", "0"), ("latency_checker", "4000")))
# Only the runs: no NIC queue probe (rigs.main measures it after each rig's runs).
rigs.measure_nic_queue = lambda rig, out, log=None: None
sys.exit(rigs.main(sys.argv[1:]))
