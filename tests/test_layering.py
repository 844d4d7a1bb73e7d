"""Dependencies run one way: hopsim.calibration uses hopsim.platforms, never the reverse.

Every import statement in platforms/ is read from the source (the ones inside functions
too, which a run would only meet on some paths), resolved to an absolute module name,
and none may name hopsim.calibration.
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


def forbidden(names: set[str], package: str = "hopsim.calibration") -> list[str]:
    return sorted(n for n in names if n == package or n.startswith(package + "."))


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


PLATFORM_FILES = sorted((ROOT / "platforms").rglob("*.py"))


@pytest.mark.parametrize("path", PLATFORM_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_platforms_do_not_import_calibration(path):
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1] + ["__init__"]  # a package's relative imports start at itself
    module = ".".join(["hopsim", *parts])
    bad = forbidden(imported_modules(path.read_text(encoding="utf-8"), module))
    assert not bad, f"{path.relative_to(ROOT)} imports {', '.join(bad)}"


def test_platforms_has_python_files():
    assert len(PLATFORM_FILES) >= 5  # the walk found the package, not an empty folder
