"""Every dotted `hopsim.X.Y` a reader is pointed to exists.

The README, docs/*.md, the packages' docstrings and comments, bench/ and the C/C++
sources name modules and functions (`hopsim.live.mpirun.run_live`, `python -m
hopsim.calibration.rigs`); after a module moves, a name left behind sends the reader to
nothing. Each name is resolved as Python would: the longest importable module prefix,
then attributes. A path such as docs/hopsim.json is not a name (preceded by / or a word).
"""
import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAME = re.compile(r"(?<![\w/.-])hopsim(?:\.[A-Za-z_]\w*)+")
PACKAGES = ("python", "platforms", "topologies", "calibration", "live", "scenarios")


def sources() -> list[Path]:
    found = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
             *sorted((ROOT / "bench").glob("*.py"))]
    for folder in PACKAGES:
        found += sorted(p for p in (ROOT / folder).rglob("*.py") if "__pycache__" not in p.parts)
    for pattern in ("*.c", "*.h", "*.cpp", "*.hpp"):
        found += sorted((ROOT / "live").rglob(pattern)) + sorted((ROOT / "simulator").rglob(pattern))
    return found


def names(text: str) -> set[str]:
    return {m.group(0) for m in NAME.finditer(text)}


def resolves(name: str) -> bool:
    parts = name.split(".")
    for k in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:k]))
        except ImportError:
            continue
        try:
            for attr in parts[k:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return False
        return True
    return False


def test_the_reader_finds_names_and_resolves_them():
    text = ("see `hopsim.live.mpirun.run_live`, python -m hopsim.calibration.rigs.\n"
            "docs/hopsim.json and myhopsim.x are not names")
    assert names(text) == {"hopsim.live.mpirun.run_live", "hopsim.calibration.rigs"}
    assert resolves("hopsim.live.mpirun.run_live") and resolves("hopsim.platforms")
    assert not resolves("hopsim.calibration.live")         # the module that moved to live/
    assert not resolves("hopsim.live.mpirun.no_such_function")


def test_every_name_in_the_docs_and_sources_exists():
    files = sources()
    assert len(files) > 50  # the walk found the tree, not an empty folder
    missing = sorted(f"{path.relative_to(ROOT)}: {name}" for path in files
                     for name in names(path.read_text(encoding="utf-8", errors="replace"))
                     if not resolves(name))
    assert not missing, "\n".join(missing)
