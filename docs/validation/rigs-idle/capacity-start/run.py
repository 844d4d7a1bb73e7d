"""Experiment: the shared capacity's alternatives get one more start, from the one-way
rate (the closed-form start's bucket rate) with the capacity at the both-ways cases'
throughput there (structure._capacity_start on that platform). Run from the repository
root (S's command names its files from there)."""
import json, shlex, sys
from pathlib import Path
from hopsim.calibration import structure as st
from hopsim.calibration.joint import fit_joint, FIT_CAP
HERE = Path(__file__).resolve().parent
START = {}
orig_decide, orig_shared = st.decide, st._shared
def decide(start, *a, **k):
    START["p"] = start
    return orig_decide(start, *a, **k)
def shared(p, base, cases):
    made = orig_shared(p, base, cases)
    if made is None:
        return None
    alts, label = made
    s = START["p"]
    if not (s.bucket_gbps > 0 and p.bucket_gbps > 0):
        return made
    q = p.replace(bucket_gbps=s.bucket_gbps, limiter_gbps=0.0, backbone_gbps=0.0)
    loaded = st._both_ways(cases)
    fit_joint(q, loaded, [], cap=FIT_CAP)
    d, nodes = st._capacity_start(q, loaded)
    print(f"EXPERIMENT: one-way bucket {s.bucket_gbps:.4g} (fit's {p.bucket_gbps:.4g}), capacity start {d:.4g}", file=sys.stderr, flush=True)
    for a in alts:
        if a.label == st.LIMITER:
            a.starts.append((f"started at limiter_gbps = {d:.4g} on the one-way rate", q.replace(limiter_gbps=float(f"{d:.6g}"))))
        elif a.label == st.BACKBONE:
            b = d * nodes / 2
            a.starts.append((f"started at backbone_gbps = {b:.4g} on the one-way rate", q.replace(backbone_gbps=float(f"{b:.6g}"))))
    return alts, label
st._shared = shared
st.MECHANISMS = tuple((n, shared if f is orig_shared else f) for n, f in st.MECHANISMS)
# calibrate imports structure.decide when it runs: this one.
st.decide = decide
commands = json.loads((HERE.parent / "S" / "baseline.json").read_text())["commands"]
cmd = next(c for c in commands if c.startswith("hopsim calibrate docs/validation/rigs-idle/S/"))
args = shlex.split(cmd)[2:]
args[args.index("--out") + 1] = str(HERE / "fit.toml")
from hopsim.cli import main
sys.exit(main(["calibrate", *args]))
