"""The rigs' cases as this folder measures them: rigs.CASES without NetPIPE and the
collectives (docs/validation/rigs/ has those), then rigs.main with the arguments given.

    nice -n -15 python docs/validation/rigs-idle/measure.py --out docs/validation/rigs-idle \\
        --tools /tmp/scratch-rigs/bin --trials 3 --rigs T
"""
import sys

from hopsim.calibration import rigs

rigs.CASES = tuple(c for c in rigs.CASES
                   if c.tool in ("imb-pingpong", "imb-exchange", "osu_latency", "osu_bw",
                                 "latency_checker"))
sys.exit(rigs.main(sys.argv[1:]))
