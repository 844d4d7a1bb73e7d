"""The published studies, packaged: `hopsim run NAME` runs scenarios/reproductions/NAME.py.

Discovered by pkgutil over this package (no registry: adding a module adds a
reproduction). NAME as typed maps dashes to underscores: `azure-econome` is
azure_econome.py. Each module has NAME, TITLE and run(study) (scenarios/study.py).
"""
from __future__ import annotations

import importlib
import pkgutil
import re

from ...errors import InputError

_MODULE = re.compile(r"[a-z][a-z0-9_]*")


def _modules() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(__path__)
                  if not m.ispkg and _MODULE.fullmatch(m.name) and not m.name.startswith("_"))


def names() -> list[str]:
    """Every reproduction's NAME as typed after `hopsim run`, sorted."""
    return sorted(m.replace("_", "-") for m in _modules())


def find(name: str):
    """The module for NAME, or None when there is no such reproduction."""
    module = str(name).replace("-", "_")
    if module not in _modules():
        return None
    return importlib.import_module(f"{__name__}.{module}")


def load(name: str):
    mod = find(name)
    if mod is None:
        raise InputError(f"{name}: no such reproduction (reproductions: {', '.join(names())})")
    return mod


def listing() -> str:
    """One line per reproduction: NAME and TITLE."""
    mods = [load(n) for n in names()]
    width = max((len(m.NAME) for m in mods), default=0)
    return "".join(f"{m.NAME:<{width}}  {m.TITLE}\n" for m in mods)
