"""Diagnostic, not part of hopsim: a latency_checker patched outside the repository to also
print, per rank, how many of its round trips took 1000 us or more (its histogram drops them)
and the mean of all of them, run on rig A's links, 2x1 and 4x1.
Usage: measure.py RATE BURST TRIALS [BINARY]"""
import subprocess, sys
from hopsim.live.cluster import EmulatedCluster
rate, burst = sys.argv[1], int(sys.argv[2])
with EmulatedCluster(4, rate, burst=burst) as c:
    for hosts in (2, 4):
        for t in range(int(sys.argv[3]) if len(sys.argv) > 3 else 2):
            hf = c.hostfile(1, hosts)
            cmd = ["mpirun", "--allow-run-as-root", "-np", str(hosts), *c.mpirun_args(), "--mca", "mpi_yield_when_idle", "1",
                   "--hostfile", str(hf), "--map-by", "ppr:1:node", sys.argv[4] if len(sys.argv) > 4 else "/tmp/scratch-lc/latency_checker",
                   "-message-size", "4000", "-exchanges", "300"]
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            print(f"== {hosts}x1 trial {t + 1}")
            print("\n".join(l for l in p.stdout.splitlines() if "DIAG" in l or "average of" in l), flush=True)
            if p.returncode: print(p.stderr[-500:])
