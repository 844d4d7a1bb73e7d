"""The table of gso-burst/README.md from runs/ (measure.sh's files): IMB Exchange's t_avg
per rate, burst, hosts and placement, median and range over the trials."""
import statistics
import sys
from collections import defaultdict
from pathlib import Path

runs = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent / "runs")
times = defaultdict(list)  # (rate, burst, hosts, how, bytes) -> t_avg of every run
for f in sorted(runs.glob("*.txt")):
    rate, burst, hosts, how, _ = f.stem.split("-")
    for line in f.read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        cols = line.split()
        times[(rate, int(burst), int(hosts), how, int(cols[0]))].append(float(cols[4]))


def cell(key):
    v = times.get(key)
    if not v:
        return "-"
    return f"{statistics.median(v) / 1000:.1f} ({min(v) / 1000:.1f}..{max(v) / 1000:.1f}, {len(v)})"


print("| rate | burst (B) | size | 2 hosts | 4 hosts, ring | two 2-host clusters at once |")
print("|---|---|---|---|---|---|")
for rate, burst in sorted({k[:2] for k in times}, key=lambda k: (int(k[0][:-4].replace("g", "000")) if k[0].endswith("mbit") else 1000, k[1])):
    for size in (131072, 1048576):
        print(f"| {rate} | {burst} | {size // 1024} KiB | {cell((rate, burst, 2, 'ring', size))} | "
              f"{cell((rate, burst, 4, 'ring', size))} | {cell((rate, burst, 4, 'pairs', size))} |")
