"""Where this machine's 2 cores go while IMB Exchange moves 1 MiB messages on one rig's
links: 2 hosts at 2 ranks each against 4 hosts at 2 each (by node, then block), the
same bytes per node. /proc/stat's counters before and after each run: softirq (the
kernel's packet processing: veth, bridge, tbf, TCP), system (the ranks' system calls,
sched_yield's spinning among them), user; busy is all but idle and iowait, as shares
of both cores over the run.

    nice -n -15 .venv/bin/python docs/validation/rigs-idle/machine-cpu/measure.py G 2 > G.txt

The tools as the rigs have them (/tmp/scratch-rigs/bin/IMB-MPI1), Open MPI run as
calibration/rigs.py runs it (mpirun_command: mpi_yield_when_idle)."""
import subprocess
import sys
import time

from hopsim.calibration import rigs
from hopsim.live.cluster import EmulatedCluster

TOOL = "/tmp/scratch-rigs/bin/IMB-MPI1"
SHAPES = ((2, 2, "cyclic"), (4, 2, "cyclic"), (2, 2, "block"), (4, 2, "block"))


def cpu_counters():
    """user nice system idle iowait irq softirq steal, in clock ticks of all cores."""
    return list(map(int, open("/proc/stat").readline().split()[1:9]))


def main(name, trials):
    rig = rigs.RIGS[name]
    with EmulatedCluster(4, rig.link_rate, rig.burst, prefix="cpux") as cluster:
        for _ in range(trials):
            for hosts, per_host, placement in SHAPES:
                args = ("Exchange", "-msglog", "20:20", "-iter", "200,10", "-npmin", str(hosts * per_host))
                case = rigs.Case("imb-exchange", "imb", "IMB-MPI1", hosts, per_host, placement, args)
                cmd = rigs.mpirun_command(case, cluster.mpirun_args(),
                                          rigs._hostfile(cluster, hosts, per_host), TOOL)
                before, start = cpu_counters(), time.time()
                p = subprocess.run(cmd, capture_output=True, text=True, env=rigs._env(), timeout=600)
                d = [b - a for a, b in zip(before, cpu_counters())]
                total = sum(d)
                share = lambda ticks: 100 * ticks / total
                t_avg = [l.split()[4] for l in p.stdout.splitlines() if l.strip().startswith("1048576")]
                print(f"{name} {hosts}x{per_host} {placement:6s} t_avg {t_avg[0] if t_avg else '?':>10} us  "
                      f"busy {share(total - d[3] - d[4]):5.1f}%  softirq {share(d[6]):5.1f}%  "
                      f"system {share(d[2]):5.1f}%  user {share(d[0] + d[1]):5.1f}%  "
                      f"({time.time() - start:.1f} s)", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 2)
