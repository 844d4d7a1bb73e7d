"""Experiment: S's calibrate command with the last shared-capacity step ("limiter scope":
a capacity on rendezvous messages only, against none) given the machine-wide form, a
backbone that serves rendezvous messages only (network.backbone_scope = "rendezvous"),
instead of the per-node limiter. On 2 hosts the two carry the same bytes; on 4 they part.
Nothing else changed. Run from the repository root (S's command names its files from
there)."""
import json
import shlex
import sys
from pathlib import Path

from hopsim.calibration import structure as st

HERE = Path(__file__).resolve().parent
orig = st._limiter_scope


def limiter_scope(p, base, cases):
    made = orig(p, base, cases)
    if made is None or p.limiter_gbps > 0:
        return made
    alternatives, label = made
    out = []
    for a in alternatives:
        if a.label == st.RENDEZVOUS_ONLY:
            d0 = a.platform.limiter_gbps
            a = st.Alternative("backbone, rendezvous messages only",
                               p.replace(backbone_gbps=d0, backbone_scope="rendezvous"),
                               ["backbone_gbps"], nests=st.NO_LIMITER,
                               scan=("backbone_gbps", tuple(float(f"{d0 * f:.6g}") for f in st.SCAN_FACTORS),
                                     {"backbone_scope": "rendezvous"}))
        out.append(a)
    return out, label


st._limiter_scope = limiter_scope
st.MECHANISMS = tuple((n, limiter_scope if f is orig else f) for n, f in st.MECHANISMS)
commands = json.loads((HERE.parent / "S" / "baseline.json").read_text())["commands"]
cmd = next(c for c in commands if c.startswith("hopsim calibrate docs/validation/rigs-idle/S/"))
args = shlex.split(cmd)[2:]
args[args.index("--out") + 1] = str((HERE / "fit.toml").relative_to(Path.cwd()))
from hopsim.cli import main  # noqa: E402

sys.exit(main(["calibrate", *args]))
