"""Per file: the tool's statistic, and per round trip (over all ranks) the mean of all
round trips, the time outside them, the wall time, and how many reached 1000 us."""
import re
import sys
from pathlib import Path

ROW = re.compile(r"^XRank (\d+) wall (\d+) sum (\d+) gaps (\d+) dropped (\d+) dropsum (\d+)")
EXCHANGES = 300

print("| file | latency_checker's average (us) | mean of all round trips | outside them | wall | of 1000 us or more |")
print("|---|---|---|---|---|---|")
for folder in map(Path, sys.argv[1:]):
    for f in sorted(folder.glob("latency_checker-*.txt")):
        text = f.read_text()
        rows = [tuple(map(int, m.groups()[1:])) for m in map(ROW.match, text.splitlines()) if m]
        avg = re.search(r"average of average roundtrip latencies: ([\d.]+)", text)
        if not rows or not avg:
            continue
        n = len(rows) * EXCHANGES
        wall, total, gaps, dropped = (sum(r[i] for r in rows) for i in range(4))
        print(f"| {folder.name}/{f.stem} | {float(avg.group(1)):.1f} | {total / n:.1f} | {gaps / n:.1f} "
              f"| {wall / n:.1f} | {dropped} of {n} |")
