"""Rig A's 4-host files predicted by its sixth-session fit (A-fit-sixth-session.toml, here)
and by that fit with its line rate or its per-node limiter changed: which of the two
makes latency_checker at 4 hosts slow. Counted as the rigs report counts
(calibration/latency_bound.py). Run from hopsim's source folder (5-10 minutes):

    python docs/validation/rigs-idle/line-rate/variants.py
"""
import json
import statistics
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from hopsim.calibration.latency_bound import counted, rig_half_length, zero_byte_times
from hopsim.calibration.rigs_report import files_of

HERE = Path(__file__).parent
RIG = HERE.parent / "A"
VARIANTS = {
    "as fitted (line 0.189 Gbit/s, limiter 0.188)": {},
    "line 10 Gbit/s": {"bandwidth_gbps": 10.0},
    "no limiter": {"limiter_gbps": 0.0},
    "line 10 Gbit/s, no limiter": {"bandwidth_gbps": 10.0, "limiter_gbps": 0.0},
}


def variant(text: str, changes: dict) -> str:
    """The platform file with [network] values replaced (the other tables untouched)."""
    out, table = [], None
    for line in text.splitlines():
        if line.startswith("["):
            table = line.strip("[]")
        key = line.split(" = ")[0]
        if table == "network" and key in changes:
            line = f"{key} = {changes[key]}"
        out.append(line)
    return "\n".join(out) + "\n"


def per_file(platform: Path) -> dict[str, float]:
    n_half = rig_half_length([p for c, p in files_of(RIG, 2, 3)
                              if c.tool == "imb-pingpong" and c.per_host == 1])
    medians = {}
    for per_host, placement in ((1, "block"), (2, "block"), (2, "cyclic")):
        group = [f for c, f in files_of(RIG, 4, 3)
                 if c.per_host == per_host and c.placement == placement]
        cmd = [sys.executable, "-m", "hopsim", "validate", "--platform", str(platform), "--nodes",
               "4", "--ranks-per-node", str(per_host), "--placement", placement,
               *map(str, group), "--json"]
        cases = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)["cases"]
        for f in group:
            mine = [c for c in cases if Path(c["file"]).name == f.name]
            t0 = zero_byte_times(mine)
            errs = [abs(c["error_pct"]) for c in mine
                    if counted(c, 2, t0.get((c["file"], c["workload"], c.get("statistic"))), n_half)]
            if errs:
                medians[f.name] = statistics.median(errs)
    return medians


def main() -> None:
    text = (HERE / "A-fit-sixth-session.toml").read_text()
    tomllib.loads(text)
    print("| A's platform | latency_checker 4x1 (3 files) | IMB Exchange 4x1 (3 files) | "
          "median over files | worst file |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for label, changes in VARIANTS.items():
            path = Path(tmp) / "variant.toml"
            path.write_text(variant(text, changes))
            m = per_file(path)
            lc = [v for k, v in sorted(m.items()) if k.startswith("latency_checker-4x1")]
            ex = [v for k, v in sorted(m.items()) if k.startswith("imb-exchange-4x1")]
            print(f"| {label} | {', '.join(f'{v:.1f}' for v in lc)} | "
                  f"{', '.join(f'{v:.1f}' for v in ex)} | {statistics.median(m.values()):.1f} | "
                  f"{max(m.values()):.1f} |")


if __name__ == "__main__":
    main()
