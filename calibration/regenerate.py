"""Regenerate the presets that `hopsim calibrate` produces from published figures.

    python -m hopsim.calibration.regenerate [--check] [PRESET ...]

Each preset below is `hopsim calibrate` run on the measurement files under
platforms/data/ (the published figures, each file naming its source) over a base that
holds only what a vendor specifies, with provenance. The command writes
platforms/presets/PRESET.toml; `--check` writes nothing and exits 1 if a shipped preset
differs from what calibrate now produces (tests/test_presets_regenerate.py runs it).

gce-*   Google Compute Engine, 2 instances (2013): osu_latency 0-byte one-way latency,
        three trials per instance type, a new pair of instances per trial. The latency is
        fitted to the trials, their spread carried as per-run noise (docs/calibration.md).
        vCPUs per type are Google's machine-type specification; the bandwidth is not
        published and a 0-byte ping-pong cannot determine it: it stays at the base's
        stated default.

The older presets (ec2-10gbe, qlogic-ib, qdr-ib) are solved by
`python -m hopsim.platforms.derive`, which bisects one value per published figure.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path

from ..errors import InputError
from ..platforms.platform import Platform
from ..platforms.presets import PRESET_DIR
from .calibrate import calibrate_files

# The platforms package: its data/ holds the measurement files, its presets/ the output.
PACKAGE_DIR = PRESET_DIR.parent
DATA_DIR = PACKAGE_DIR / "data"

# Google Compute Engine's n1 machine types: vCPUs (Google's machine-type specification).
GCE_VCPUS = {"n1-standard-1": 1, "n1-standard-2": 2, "n1-standard-4": 4,
             "n1-highcpu-2": 2, "n1-highcpu-4": 4, "n1-highmem-2": 2, "n1-highmem-4": 4}
_GCE_BANDWIDTH_GBPS = 1.0


def gce_base(kind: str) -> Platform:
    cores = GCE_VCPUS[kind]
    return Platform(
        name=f"gce-{kind}", nodes=2, cores=cores, latency_us=1.0,
        bandwidth_gbps=_GCE_BANDWIDTH_GBPS,
        description=f"Google Compute Engine {kind}, 2 instances (2013)",
        provenance={
            "nodes.count": "published: the 2013 osu_latency runs used 2 instances",
            "nodes.cores": f"vendor specification: Google's {kind} machine type has {cores} vCPU"
                           f"{'s' if cores > 1 else ''}",
            "network.bandwidth_gbps": "not published; stated default 1 Gbit/s: a 0-byte "
                                      "ping-pong does not depend on it (replace it before "
                                      "simulating large messages)",
        })


def _gce_files(kind: str) -> list[str]:
    files = sorted(p.name for p in (DATA_DIR / "gce").glob(f"{kind}-t*.txt"))
    if len(files) != 3:
        raise InputError(f"gce-{kind}: expected 3 trials under platforms/data/gce, found {len(files)}")
    return [f"data/gce/{f}" for f in files]


@contextlib.contextmanager
def _in_package_dir():
    # Sources are recorded as given: relative to the package, the same on every machine.
    before = os.getcwd()
    os.chdir(PACKAGE_DIR)
    try:
        yield
    finally:
        os.chdir(before)


def produce(name: str) -> str:
    """The preset file's text, as `hopsim calibrate` writes it."""
    if not name.startswith("gce-") or name[4:] not in GCE_VCPUS:
        raise InputError(f"no regeneration for {name!r} (known: {', '.join(PRESETS)})")
    kind = name[4:]
    with _in_package_dir():
        files = _gce_files(kind)
        result = calibrate_files(files, base=gce_base(kind), name=name, joint=True,
                                 argv=["calibrate", *files, "--base", f"(vendor base for {kind})"])
    latency = result.fit.platform.provenance.get("network.latency_us", "")
    if latency.startswith("from --base"):
        # The base's latency is a placeholder: a preset must never ship it.
        raise InputError(f"{name}: calibrate determined no network.latency_us from {files}")
    return result.toml


PRESETS = [f"gce-{k}" for k in GCE_VCPUS]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m hopsim.calibration.regenerate",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("presets", nargs="*", metavar="PRESET",
                    help=f"one of {', '.join(PRESETS)} (default: all)")
    ap.add_argument("--check", action="store_true",
                    help="write nothing; exit 1 if a shipped preset differs")
    args = ap.parse_args(argv)
    for name in args.presets:
        if name not in PRESETS:
            ap.error(f"no regeneration for {name!r} (known: {', '.join(PRESETS)})")
    stale = []
    for name in args.presets or PRESETS:
        text = produce(name)
        path = PRESET_DIR / f"{name}.toml"
        if args.check:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(name)
            continue
        tmp = path.with_suffix(".toml.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
        sys.stdout.write(f"wrote {path.relative_to(PACKAGE_DIR.parent)}\n")
    if stale:
        sys.stdout.write(f"differ from what calibrate produces: {', '.join(stale)}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
