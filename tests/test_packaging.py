"""The package mapping in pyproject.toml: every module of the root package is shipped,
and the development install reads the source tree."""
from __future__ import annotations

import tomllib
from pathlib import Path

import hopsim

REPO = Path(__file__).resolve().parent.parent


def _mapping() -> dict[str, str]:
    doc = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    return doc["tool"]["scikit-build"]["wheel"]["packages"]


def test_every_root_module_is_mapped():
    # scikit-build-core maps the root package file by file: a module added to python/
    # and not listed would be missing from the wheel and from the editable install.
    listed = {src for src in _mapping().values() if src.startswith("python/")}
    present = {f"python/{p.name}" for p in (REPO / "python").glob("*.py")}
    assert present - listed == set(), "add these to [tool.scikit-build.wheel.packages]"
    assert listed - present == set(), "these are listed but no longer exist"


def test_every_subpackage_is_mapped_to_its_folder():
    subpackages = {k: v for k, v in _mapping().items() if not k.endswith(".py")}
    folders = {p.parent.name for p in REPO.glob("*/__init__.py") if p.parent.name != "python"}
    assert subpackages == {f"hopsim/{f}": f for f in folders}


def test_the_development_install_is_the_source_tree():
    # bootstrap.sh installs in editable mode: the tests exercise what a reader edits.
    assert Path(hopsim.__file__).resolve() == REPO / "python" / "__init__.py"
