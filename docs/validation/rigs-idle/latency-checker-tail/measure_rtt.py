"""Diagnostic: latency_checker patched (outside the repository) to print every round
trip per rank, on a rig's links: 4x1 and 4x2 (block), trials each; writes RTT lists."""
import json, subprocess, sys
from hopsim.live.cluster import EmulatedCluster
rate, burst, trials, binary, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
res = {}
with EmulatedCluster(4, rate, burst=burst) as c:
    for per in (1, 2):
        for t in range(trials):
            hf = c.hostfile(per, 4)
            cmd = ["mpirun", "--allow-run-as-root", "-np", str(4 * per), *c.mpirun_args(), "--mca", "mpi_yield_when_idle", "1",
                   "--hostfile", str(hf), "--map-by", f"ppr:{per}:node", binary, "-message-size", "4000", "-exchanges", "300"]
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            rtts, avg = {}, None
            for l in p.stdout.splitlines():
                if l.startswith("RTT "):
                    _, r, v = l.split(); rtts.setdefault(int(r), []).append(int(v))
                if "average of average" in l:
                    avg = float(l.split(":")[1].split()[0])
            res[f"4x{per}-t{t+1}"] = {"average_of_averages": avg, "rtts": rtts}
            allv = [v for vs in rtts.values() for v in vs]
            print(f"4x{per} t{t+1}: avg-of-avgs {avg}, all {len(allv)}, >=1000: {sum(v >= 1000 for v in allv)}, mean all {sum(allv)/max(len(allv),1):.1f}", flush=True)
            if p.returncode: print(p.stderr[-400:])
json.dump(res, open(out, "w"))
