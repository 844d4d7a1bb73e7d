"""A Platform as a platform file (TOML), every key with its provenance."""
from __future__ import annotations

import json

from .platform import FILE_KEYS


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)
    return json.dumps(v)


def platform_toml(platform, header_lines: list[str]) -> str:
    out = [f"# {l}" if l else "#" for l in header_lines]
    out += [f"name = {_toml_value(platform.name)}",
            f"description = {_toml_value(platform.description)}"]
    sections: dict[str, list[str]] = {}
    for f, key in FILE_KEYS.items():
        if "." not in key:
            continue
        v = getattr(platform, f, None)
        if v is None:
            continue
        section, sub = key.split(".", 1)
        sections.setdefault(section, []).append(f"{sub} = {_toml_value(v)}")
    for section, lines in sections.items():
        out += ["", f"[{section}]"] + lines
    out += ["", "[provenance]"]
    for key, text in sorted(platform.provenance.items()):
        out.append(f"{json.dumps(key)} = {json.dumps(text)}")
    return "\n".join(out) + "\n"
