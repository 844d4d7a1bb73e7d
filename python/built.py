"""Where the programs CMake built for this install live.

CMake installs the compiled parts (the _engine module, hopbench, bare_s4u) into
site-packages beside each other, whatever the install mode; in an editable install the
Python sources are read from the source tree, so a path taken from a source file's
__file__ would miss them. Paths here are taken from the _engine module's location.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path


def built_path(*parts: str) -> Path:
    """The installed file at hopsim/<parts...> beside the compiled engine."""
    spec = importlib.util.find_spec("hopsim._engine")
    if spec is None or spec.origin is None:
        raise ImportError("hopsim._engine is not installed: run `pip install .` first")
    return Path(spec.origin).resolve().parent.joinpath(*parts)
