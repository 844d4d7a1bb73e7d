"""Platform files (TOML) -> Platform: the structure check (sections, unknown keys).

Values are checked by Platform itself, so a file and a Python caller get the same
rules and the same messages.
"""
from __future__ import annotations

import difflib
from pathlib import Path

from .. import bounds
from ..errors import InputError
from .platform import FILE_KEYS, Platform

_FIELD_OF_KEY = {key: f for f, key in FILE_KEYS.items()}
_SECTIONS = ("nodes", "network", "intranode", "host", "noise")
_REQUIRED = ("name", "nodes.count", "nodes.cores", "network.latency_us",
             "network.bandwidth_gbps")


def parse_platform(text: str, source: str) -> Platform:
    """A Platform from the text of a platform file; source names it in messages."""
    doc = bounds.load_toml(text, source)
    fields = {}
    for key, value in doc.items():
        if key in _SECTIONS:
            if not isinstance(value, dict):
                raise InputError(f"{source}: {key}: must be a table ([{key}])")
            for sub, v in value.items():
                fields[_field(f"{key}.{sub}", source)] = v
        elif key == "provenance":
            continue
        elif isinstance(value, dict):
            raise InputError(f"{source}: unknown section [{key}] (sections: "
                             f"{', '.join(_SECTIONS)}, provenance)")
        else:
            fields[_field(key, source)] = value
    for key in _REQUIRED:
        if _FIELD_OF_KEY[key] not in fields:
            raise InputError(f"{source}: missing key {key}")
    provenance = _provenance(doc.get("provenance", {}), source)
    return Platform(**fields, provenance=provenance, source=source)


def load_file(path: str | Path) -> Platform:
    """A Platform from a platform file."""
    text = bounds.read_text(path, "platform file")
    return parse_platform(text, str(path))


def _field(key: str, source: str) -> str:
    if key not in _FIELD_OF_KEY:
        raise InputError(f"{source}: unknown key {key}{_suggest(key, FILE_KEYS.values())}")
    return _FIELD_OF_KEY[key]


def _suggest(key: str, known) -> str:
    close = difflib.get_close_matches(key, list(known), n=1)
    return f" (did you mean {close[0]}?)" if close else ""


# Provenance of the platform as a whole, not of one key: what calibrate held out of its
# fit and how well the fit predicted it (docs/calibration.md, cross-validation).
PROVENANCE_ONLY = ("validation.holdout", "validation.leave_one_out", "validation.campaign_check")


def _provenance(table, source: str) -> dict[str, str]:
    """[provenance] maps file keys to sources; nested tables are dotted keys in TOML."""
    if not isinstance(table, dict):
        raise InputError(f"{source}: provenance: must be a table ([provenance])")
    flat = {}

    def walk(prefix: str, node: dict):
        for k, v in node.items():
            key = f"{prefix}{k}"
            if isinstance(v, dict):
                walk(f"{key}.", v)
            elif key not in _FIELD_OF_KEY and key not in PROVENANCE_ONLY:
                raise InputError(f"{source}: provenance.{key}: not a platform key"
                                 f"{_suggest(key, FILE_KEYS.values())}")
            elif not isinstance(v, str) or not v.strip():
                raise InputError(f"{source}: provenance.{key}: must be a non-empty string")
            else:
                flat[key] = v
    walk("", table)
    return flat
