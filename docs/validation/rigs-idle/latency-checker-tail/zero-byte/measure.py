"""latency_checker at 0 B and 4000 B on a rig's links, every placement of the rigs.

    python docs/validation/rigs-idle/latency-checker-tail/zero-byte/measure.py \\
        --out docs/validation/rigs-idle/latency-checker-tail/zero-byte \\
        --tools /tmp/scratch-rigs/bin --trials 2 --rigs I,D

The rigs' own latency_checker cases (calibration/rigs.py), each followed by the same run
at -message-size 0 (files latency_checker-0B-*): the zero-byte round trip of the same
ranks on the same links, which the rigs' counting rule (calibration/latency_bound.py)
otherwise takes from the 2-host ping-pong.
"""
import sys

from hopsim.calibration import rigs

lc = [c for c in rigs.CASES if c.tool == "latency_checker"]
zero = [rigs.Case("latency_checker-0B", c.fmt, c.binary, c.hosts, c.per_host, c.placement,
                  ("-message-size", "0", "-exchanges", "300")) for c in lc]
rigs.CASES = tuple(x for pair in zip(lc, zero) for x in pair)
sys.exit(rigs.main(sys.argv[1:]))
