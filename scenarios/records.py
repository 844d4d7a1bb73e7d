"""Per-point records: what makes a sweep resumable.

Each finished point is one file, OUT/points/NNNNNN.json, written through a temporary file
in the same folder and renamed, so a kill at any moment (SIGKILL included) leaves either
the whole record or none; a temporary left by a kill starts with "." and is removed by the
next run. OUT/points/sweep.json names the sweep the records belong to by a fingerprint:
the hopsim version, the scenario's points and every platform's engine values, so a record
is reused only by the same computation. Records are removed once results.json and
results.csv hold every point; they stay while points are missing (interrupted or failed).
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from ..errors import InputError

FOLDER = "points"
MANIFEST = "sweep.json"


def fingerprint(scenario, points: list[dict], platforms_used: list, version: str) -> str:
    """sha256 over what decides the results: hopsim's version, each point's parameters and
    its platform's engine values (a platform file edited between runs changes it)."""
    doc = {"hopsim": version, "name": scenario.name,
           "points": [dict(p, platform=[plat.name, plat.to_engine_dict(None)])
                      for p, plat in zip(points, platforms_used)]}
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), default=_plain)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _plain(value):
    if isinstance(value, (tuple, set, frozenset)):
        return list(value)
    return repr(value)


def atomic_write(path: Path, text: str) -> None:
    """path holds text whole, or is untouched: a temporary in the same folder, renamed."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())  # a rename that outlives a power cut names written data
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


class Records:
    """The records folder of one output folder, for one sweep (its fingerprint)."""

    def __init__(self, out: Path, key: str, name: str, count: int, version: str):
        self.out = Path(out)
        self.folder = self.out / FOLDER
        self.key, self.name, self.count, self.version = key, name, count, version
        self.created: list[Path] = []  # folders this sweep made, innermost first

    def check(self) -> dict[int, dict]:
        """The finished points already recorded (number -> record); InputError when the
        folder holds another sweep's records. Reads only; writes nothing."""
        manifest = self.folder / MANIFEST
        if not self.folder.exists():
            return {}
        if not self.folder.is_dir():
            raise InputError(f"--out {self.out}: {self.folder} exists and is not a folder")
        try:
            theirs = json.loads(manifest.read_text(encoding="utf-8"))
        except FileNotFoundError:
            if not any(self.folder.glob("[0-9]*.json")):
                return {}  # an empty folder (a run stopped before its first record)
            theirs = None
        except (OSError, ValueError) as e:
            raise InputError(f"--out {self.out}: unreadable {manifest}: {e}") from None
        if not isinstance(theirs, dict) or theirs.get("fingerprint") != self.key:
            what = (f"scenario {theirs.get('scenario')!r} ({theirs.get('points')} points, "
                    f"hopsim {theirs.get('hopsim')})" if isinstance(theirs, dict)
                    else "points of an unknown sweep")
            raise InputError(f"--out {self.out}: holds unfinished {what}, not this one; "
                             f"use another --out or remove {self.folder}")
        done = {}
        for path in sorted(self.folder.glob("[0-9]*.json")):
            try:
                record = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue  # not ours or damaged by hand: the point runs again
            if (isinstance(record, dict) and record.get("fingerprint") == self.key
                    and path.stem == f"{record.get('point', 0):06d}"):
                done[record["point"]] = record
        return done

    def start(self) -> None:
        """Create the folder and the manifest (before the first record is written) and
        remove temporaries a killed run left."""
        try:
            self._start()
        except OSError as e:
            raise InputError(f"--out {self.out}: cannot write results: {e.strerror or e}") from None

    def _start(self) -> None:
        for p in (self.folder, self.out, *self.out.parents):
            if p.exists():
                break
            self.created.append(p)
        self.folder.mkdir(parents=True, exist_ok=True)
        for stale in self.folder.glob(".*.tmp"):
            stale.unlink()
        manifest = {"fingerprint": self.key, "scenario": self.name, "points": self.count,
                    "hopsim": self.version}
        atomic_write(self.folder / MANIFEST, json.dumps(manifest, indent=2) + "\n")

    def write(self, number: int, parameters: dict, result: dict) -> None:
        record = {"fingerprint": self.key, "point": number, "parameters": parameters,
                  "result": result}
        try:
            atomic_write(self.folder / f"{number:06d}.json", json.dumps(record) + "\n")
        except OSError as e:
            raise InputError(f"--out {self.out}: cannot write results: {e.strerror or e}") from None

    def remove(self) -> None:
        """Every record and the manifest: results.json and results.csv now hold them."""
        for path in self.folder.glob("[0-9]*.json"):
            path.unlink()
        (self.folder / MANIFEST).unlink(missing_ok=True)
        try:
            self.folder.rmdir()
        except OSError:
            pass  # something else is in there: left alone

    def discard_if_empty(self) -> None:
        """After an interrupt or an error before any point finished: nothing left behind."""
        if any(self.folder.glob("[0-9]*.json")):
            return
        (self.folder / MANIFEST).unlink(missing_ok=True)
        for folder in [self.folder] + [p for p in self.created if p != self.folder]:
            try:
                folder.rmdir()
            except OSError:
                break
