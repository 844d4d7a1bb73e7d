"""Each rig's fit with one machine of 2 cores and a turn fitted from its 2-host runs at
2 ranks per host (measure.py), against the rig's 4-host files, counted as the rigs
report counts them (calibration/latency_bound.py).

    python docs/validation/rigs-idle/machine-turn/evaluate.py --rigs A,...,J

turn_us: Brent's method (scipy brentq) over the engine, so that the fit, as one machine
of 2 cores, gives the median of the 0-byte 2x2 runs' averages of averages. Writes
machine-turn/R/turn-fit.toml and machine-turn/results.json; prints one line per rig.
"""
import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from scipy.optimize import brentq

from hopsim.calibration.latency_bound import counted_flags, rig_half_length
from hopsim.calibration.parsers import parse_file
from hopsim.platforms import load
from hopsim.platforms.platform_file import platform_toml

HERE = Path(__file__).resolve().parent
RIGS = HERE.parent
MACHINE_CORES = 2
GROUPS = (("1", "block", "4x1-block"), ("2", "block", "4x2-block"), ("2", "cyclic", "4x2-node"))


def validate(plat: Path, files, nodes: str, rpn: str, placement: str = "block") -> list[dict]:
    """hopsim validate's cases of FILES on PLAT (the replay and seeds validate uses)."""
    out = subprocess.run([sys.executable, "-m", "hopsim", "validate", "--platform", str(plat),
                          "--nodes", nodes, "--ranks-per-node", rpn, "--placement", placement,
                          *map(str, files), "--json"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["cases"]


def two_by_two(plat: Path, files) -> tuple[float, float]:
    """(measured, simulated): medians over FILES, 2 hosts at 2 ranks each."""
    cases = validate(plat, files, "2", "2")
    return (statistics.median(c["measured_us"] for c in cases),
            statistics.median(c["simulated_us"] for c in cases))


def written(platform, path: Path, header: list[str]) -> Path:
    path.write_text(platform_toml(platform, header))
    return path


def per_file(plat: Path, rig: str) -> dict:
    d = RIGS / rig
    n_half = rig_half_length(sorted(d.glob("imb-pingpong-2x1-*.txt")))
    meds = {}
    for rpn, placement, pattern in GROUPS:
        files = sorted(str(p) for p in d.glob(f"*-{pattern}-t*.txt")
                       if p.name.startswith(("imb-exchange", "latency_checker")))
        cases = validate(plat, files, "4", rpn, placement)
        for c, n in zip(cases, counted_flags(cases, MACHINE_CORES, n_half)):
            if n:
                meds.setdefault(Path(c["file"]).name, []).append(abs(c["error_pct"]))
    return {f: round(statistics.median(v), 1) for f, v in sorted(meds.items())}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rigs", default="A,B,C,D,E,F,G,H,I,J")
    args = ap.parse_args()
    results = {}
    for rig in args.rigs.split(","):
        fit = load(str(RIGS / rig / "baseline-fit.toml"))
        here = HERE / rig
        zeros = sorted(here.glob("latency_checker-0B-2x2-block-t*.txt"))
        fours = sorted(here.glob("latency_checker-2x2-block-t*.txt"))
        with tempfile.TemporaryDirectory() as tmp:
            def at(t):
                p = fit.replace(machine_cores=MACHINE_CORES, turn_us=float(t))
                return written(p, Path(tmp) / "t.toml", [])
            zero, zero_fit = two_by_two(RIGS / rig / "baseline-fit.toml", zeros)
            turn = brentq(lambda t: two_by_two(at(t), zeros)[1] - zero, 0.0, 100.0, xtol=1e-3)
        turned = fit.replace(machine_cores=MACHINE_CORES, turn_us=round(turn, 3))
        out = written(turned, here / "turn-fit.toml", [
            f"{rig}'s baseline-fit.toml, with one machine of {MACHINE_CORES} cores and a turn of "
            f"{turned.turn_us} us: Brent's method over the engine so that 4 ranks (2 per host on "
            f"2 hosts) give the 0-byte latency_checker runs' median, {zero:.2f} us "
            f"(machine-turn/evaluate.py)"])
        four, four_fit = two_by_two(RIGS / rig / "baseline-fit.toml", fours)
        four_turn = two_by_two(out, fours)[1]
        before, after = per_file(RIGS / rig / "baseline-fit.toml", rig), per_file(out, rig)
        row = {"turn_us": turned.turn_us, "zero_2x2_live_us": round(zero, 2),
               "zero_2x2_fit_us": round(zero_fit, 2), "lc_2x2_4000_live_us": round(four, 2),
               "lc_2x2_4000_fit_us": round(four_fit, 2), "lc_2x2_4000_turn_us": round(four_turn, 2),
               "before": before, "after": after}
        for key, files in (("before", before), ("after", after)):
            row[f"median_{key}"] = round(statistics.median(files.values()), 1)
            row[f"worst_{key}"] = max(files.values())
        results[rig] = row
        print(f"{rig}: turn {turned.turn_us} us; 2x2 0 B live {zero:.1f}, fit {row['zero_2x2_fit_us']}; "
              f"2x2 4000 B live {four:.1f}, fit {row['lc_2x2_4000_fit_us']}, turned {row['lc_2x2_4000_turn_us']}; "
              f"4-host counted {row['median_before']} ({row['worst_before']}) -> "
              f"{row['median_after']} ({row['worst_after']})", flush=True)
    path = HERE / "results.json"
    old = json.loads(path.read_text()) if path.is_file() else {}
    path.write_text(json.dumps({**old, **results}, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
