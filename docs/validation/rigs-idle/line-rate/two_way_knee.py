"""IMB Exchange on every capped rig, 1 rank per host: each size's t_avg over the time its
bytes take at the tbf's rate (2 messages of s bytes leave each host per repetition), from
the first trial's files. Run from hopsim's source folder:

    python docs/validation/rigs-idle/line-rate/two_way_knee.py
"""
from pathlib import Path

RIGS = Path("docs/validation/rigs-idle")
RATES = {"A": 100e6, "B": 1e9, "D": 400e6, "E": 250e6, "F": 700e6, "G": 500e6, "H": 500e6}


def ratios(path: Path, rate: float) -> list[tuple[int, float]]:
    out = []
    for line in path.read_text().splitlines():
        f = line.split()
        # IMB's rows: #bytes #repetitions t_min t_max t_avg Mbytes/sec
        if len(f) == 6 and f[0].isdigit() and int(f[0]) >= 4096:
            size, t_avg = int(f[0]), float(f[4])
            out.append((size, t_avg / (2 * size * 8 / rate * 1e6)))
    return out


def main() -> None:
    sizes = None
    for rig, rate in RATES.items():
        for shape in ("2x1-block", "4x1-block"):
            row = ratios(RIGS / rig / f"imb-exchange-{shape}-t1.txt", rate)
            if sizes is None:
                sizes = [s for s, _ in row]
                print("| rig | hosts | " + " | ".join(f"{s // 1024} KiB" for s in sizes) + " |")
                print("|---|---|" + "---|" * len(sizes))
            print(f"| {rig} | {shape[0]} | " + " | ".join(f"{r:.2f}" for _, r in row) + " |")


if __name__ == "__main__":
    main()
