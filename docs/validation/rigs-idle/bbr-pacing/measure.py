"""What bbr does to a 2-host IMB Exchange with four connections per host: the senders'
TCP state sampled with `ss -tin` every ~15 ms while IMB runs one size, bbr against cubic.

    nice -n -15 python docs/validation/rigs-idle/bbr-pacing/measure.py 1200mbit 393216 131072 \
        /tmp/scratch-rigs/bin/IMB-MPI1 docs/validation/rigs-idle/bbr-pacing/K-131072.json

One emulated cluster of 2 hosts per algorithm (hopsim's EmulatedCluster, the rigs' links),
2 ranks per host with --map-by node (each rank's two neighbours on the other host: four
connections leave each host), IMB Exchange at one size for 300 repetitions.
"""
import json
import os
import re
import statistics
import subprocess
import sys
import time

from hopsim.live.cluster import EmulatedCluster, rate_bits

FIELDS = ("cwnd", "rtt", "pacing_rate", "bytes_acked")


def sample(namespace: str, t0: float) -> list[dict]:
    text = subprocess.run(["ip", "netns", "exec", namespace, "ss", "-tinH", "state", "established"],
                          capture_output=True, text=True).stdout.splitlines()
    rows = []
    for head, info in zip(text[0::2], text[1::2]):
        peer = head.split()[3]
        if peer.startswith("127.") or peer.endswith(".254") or ".254:" in peer:
            continue
        row = {"t": round(time.time() - t0, 4), "conn": head.split()[2] + ">" + peer}
        for f in FIELDS:
            m = re.search(rf"\b{f}[: ]([\d.]+)", info)
            row[f] = float(m[1]) if m else None
        rows.append(row)
    return rows


def run(cc: str, rate: str, burst: int, size: int, imb: str) -> dict:
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    with EmulatedCluster(2, rate, burst=burst, congestion_control=cc) as c:
        log2 = size.bit_length() - 1
        cmd = ["mpirun", "-np", "4", *c.mpirun_args(), "--mca", "mpi_yield_when_idle", "1",
               "--hostfile", str(c.hostfile(2)), "--map-by", "node", imb, "Exchange", "-npmin", "4",
               "-msglog", f"{log2}:{log2}", "-iter", "300", "-iter_policy", "off"]
        t0 = time.time()
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        rows = []
        while p.poll() is None:
            rows += sample(c.namespaces[0], t0)
            time.sleep(0.01)
        out, _ = p.communicate()
    t_avg = [float(l.split()[4]) for l in out.splitlines() if re.match(rf"\s+{size}\s+\d+", l)]
    # the phase: samples where the data connections move bytes
    conns = sorted({r["conn"] for r in rows})
    link = rate_bits(rate)
    moving = [r for r in rows if r["bytes_acked"] and r["bytes_acked"] > 4 * size]
    paced = [r["pacing_rate"] for r in moving if r["pacing_rate"]]
    cwnd4 = sorted({round(r["t"], 1) for r in moving if r["cwnd"] and r["cwnd"] <= 4})
    return {"congestion_control": cc, "t_avg_us": t_avg[0] if t_avg else None,
            "the link's rate, bytes only (us per exchange)": round(4 * size * 8 / link * 1e6, 1),
            "connections": len(conns), "samples": len(moving),
            "pacing_rate_median_gbps": round(statistics.median(paced) / 1e9, 2) if paced else None,
            "samples_paced_below_the_link": round(sum(x < link for x in paced) / len(paced), 3) if paced else None,
            "samples_paced_below_a_quarter_of_it": round(sum(x < link / 4 for x in paced) / len(paced), 3) if paced else None,
            "lowest_pacing_rate_gbps": round(min(paced) / 1e9, 3) if paced else None,
            "cwnd_4_seconds": cwnd4, "command": " ".join(cmd)}


def main(argv: list[str]) -> int:
    rate, burst, size, imb, out = argv
    result = [run(cc, rate, int(burst), int(size), imb) for cc in ("bbr", "cubic")]
    with open(out, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    for r in result:
        print({k: v for k, v in r.items() if k != "command"})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
