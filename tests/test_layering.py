"""Dependencies between the subpackages run one way.

    calibration  ->  live  ->  platforms          (and live -> topologies, for routes)
         |                          ^
         +--------------------------+
    live -> calibration.parsers only: the one reader of each third-party tool's output,
            which imports nothing of live and nothing of calibration beyond the parsers
            and their Measurement record, so the edge closes no cycle.

Every import statement is read from the source (the ones inside functions too, which a
run would only meet on some paths) and resolved to an absolute module name.
"""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def imported_modules(source: str, module: str) -> set[str]:
    """Absolute names of every module `source` (the module `module`) imports, and of every
    name it imports from a package (`from .. import calibration` names hopsim.calibration)."""
    package = module.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module
            found.add(origin)
            found.update(f"{origin}.{alias.name}" for alias in node.names)
    return found


def within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def forbidden(names: set[str], package: str = "hopsim.calibration",
              allowed: tuple[str, ...] = ()) -> list[str]:
    return sorted(n for n in names if within(n, package)
                  and not any(within(n, a) for a in allowed))


def module_name(path: Path) -> str:
    """hopsim.<folder>.<module> for a subpackage's file, hopsim.<module> for python/'s; a
    package's __init__ keeps its name so that its relative imports start at itself."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[0] == "python":
        parts = parts[1:]
    return ".".join(["hopsim", *parts])


def files(folder: str) -> list[Path]:
    return sorted(p for p in (ROOT / folder).rglob("*.py") if "__pycache__" not in p.parts)


MODULES = {module_name(p).removesuffix(".__init__"): p
           for folder in ("python", "platforms", "topologies", "calibration", "live", "scenarios")
           for p in files(folder)}


def imports_of(path: Path) -> set[str]:
    return imported_modules(path.read_text(encoding="utf-8"), module_name(path))


def reached(start: set[str]) -> set[str]:
    """The hopsim modules an import of `start` loads: each module's imports and the
    packages above it (importing a.b.c runs a/__init__ and a/b/__init__ first)."""
    seen, todo = set(), list(start)
    while todo:
        name = todo.pop()
        parts = name.split(".")
        for k in range(1, len(parts) + 1):
            prefix = ".".join(parts[:k])
            if prefix in MODULES and prefix not in seen:
                seen.add(prefix)
                todo.extend(imports_of(MODULES[prefix]))
    return seen


# What each subpackage's files may not import (beyond the names allowed for it).
RULES = {
    "platforms": [("hopsim.calibration", ()), ("hopsim.live", ()), ("hopsim.scenarios", ())],
    "topologies": [("hopsim.calibration", ()), ("hopsim.live", ()), ("hopsim.scenarios", ())],
    "live": [("hopsim.calibration", ("hopsim.calibration.parsers",)), ("hopsim.scenarios", ())],
}
CASES = [(folder, p) for folder in RULES for p in files(folder)]


def test_the_checker_sees_every_form_of_import():
    module = "hopsim.platforms.derive"
    src = ("import os\nfrom ..calibration.solve import solve\n"
           "def f():\n    from .. import calibration\n    import hopsim.calibration.fit\n")
    assert forbidden(imported_modules(src, module)) == [
        "hopsim.calibration", "hopsim.calibration.fit", "hopsim.calibration.solve",
        "hopsim.calibration.solve.solve"]
    # Its own package's modules and the root package's are allowed.
    assert forbidden(imported_modules("from .solve import solve\nfrom ..errors import InputError\n",
                                      module)) == []
    # live may name the parsers, and nothing else of calibration, even through their package.
    src = ("from ..calibration.parsers import parse_text\nfrom ..calibration import parsers\n"
           "from ..calibration.fit import fit_all\n")
    assert forbidden(imported_modules(src, "hopsim.live.mpirun"),
                     allowed=("hopsim.calibration.parsers",)) == [
        "hopsim.calibration", "hopsim.calibration.fit", "hopsim.calibration.fit.fit_all"]


@pytest.mark.parametrize("folder, path", CASES, ids=[str(p.relative_to(ROOT)) for _, p in CASES])
def test_a_subpackage_imports_only_what_lies_below_it(folder, path):
    names = imports_of(path)
    bad = [n for package, allowed in RULES[folder] for n in forbidden(names, package, allowed)]
    assert not bad, f"{path.relative_to(ROOT)} imports {', '.join(bad)}"


def test_the_parsers_live_imports_close_no_cycle():
    # Everything of calibration an import from live loads: the parsers, their Measurement
    # record and the packages' __init__ files, none of which imports live back.
    from_live = {n for _, p in CASES if p.is_relative_to(ROOT / "live") for n in imports_of(p)
                 if within(n, "hopsim.calibration")}
    assert from_live, "live reads third-party outputs with calibration's parsers"
    loaded = {m for m in reached(from_live) if within(m, "hopsim.calibration")}
    assert loaded <= {"hopsim.calibration", "hopsim.calibration.measurement"} | {
        m for m in MODULES if within(m, "hopsim.calibration.parsers")}, sorted(loaded)
    back = {m: sorted(n for n in imports_of(MODULES[m]) if within(n, "hopsim.live"))
            for m in loaded}
    assert not {m: names for m, names in back.items() if names}


def test_the_walk_resolves_packages_and_their_modules():
    assert "hopsim.calibration.parsers.imb" in reached({"hopsim.calibration.parsers"})
    assert "hopsim.calibration" in reached({"hopsim.calibration.parsers.imb"})
    assert "hopsim.live.mpirun" in reached({"hopsim.live.smpi"})


@pytest.mark.parametrize("folder", ["platforms", "topologies", "live"])
def test_the_walk_found_each_package(folder):
    assert len(files(folder)) >= 5  # the package's folder, not an empty one
