"""latency_checker, patched outside the repository to print one more line per rank,

    XRank R wall W sum S gaps G dropped N dropsum D

(W: microseconds from the rank's start of the test to its last round trip; S: the sum of
its 300 round trips; G: the time between one round trip's end and the next one's start,
summed, which the tool's statistic never sees; N, D: how many round trips reached 1000
us, the tool's histogram bound, and their sum), run as the rigs run it (rigs.CASES'
latency_checker cases: 2x1, 4x1, 4x2 block and cyclic, 4000 B, 300 exchanges):

    nice -n -15 .venv/bin/python docs/validation/rigs-idle/latency-checker-tail/gaps/measure.py \\
        --out OUT --tools DIR_WITH_PATCHED_latency_checker --trials 3 --rigs B,D,F,I

then `python gaps/summary.py OUT/B OUT/D ...`. The patch (in process.c): remember the
time the test starts (start_test) and each round trip's end, add the wait between an end
and the next request's start (test_network), and print the line in get_result.
"""
import sys

from hopsim.calibration import rigs

rigs.CASES = tuple(c for c in rigs.CASES if c.tool == "latency_checker")
sys.exit(rigs.main(sys.argv[1:]))
