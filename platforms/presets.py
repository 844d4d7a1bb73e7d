"""Built-in platforms (presets/*.toml, one file per preset named after it) and load()."""
from __future__ import annotations

from pathlib import Path

from .. import bounds
from ..errors import InputError
from .parse import load_file, parse_platform
from .platform import Platform
from .platform_file import platform_toml

PRESET_DIR = Path(__file__).resolve().parent / "presets"


def list_presets() -> list[str]:
    """Names of the built-in platforms, sorted."""
    return sorted(p.stem for p in PRESET_DIR.glob("*.toml"))


def load_preset(name: str) -> Platform:
    path = PRESET_DIR / f"{name}.toml"
    if name not in list_presets():
        raise InputError(f"unknown platform {name!r}: not a file and not a preset "
                         f"(presets: {', '.join(list_presets())})")
    return parse_platform(bounds.read_text(path, "preset"), f"preset {name}")


def preset_path(name: str) -> Path:
    load_preset(name)  # the unknown-name message
    return PRESET_DIR / f"{name}.toml"


def show(name_or_path: str) -> str:
    """A platform's whole TOML as `hopsim platforms show` prints it: where it comes from,
    the file as written (its comments and [provenance]), then every value in effect with
    the provenance the file gives it or "default" (keys the file leaves out)."""
    platform = load(name_or_path)
    is_file = Path(str(name_or_path)).is_file() or "/" in str(name_or_path) or str(name_or_path).endswith(".toml")
    path = Path(name_or_path) if is_file else preset_path(name_or_path)
    text = bounds.read_text(path, "platform file")
    head = (f"# {'file' if is_file else 'preset'} {name_or_path}: {path}\n"
            f"# values hash {platform.values_hash()}\n")
    effective = platform_toml(platform, ["every value in effect (file values and defaults)"])
    effective = "".join(f"# | {line}\n" if line else "# |\n" for line in effective.splitlines())
    return head + text + ("" if text.endswith("\n") else "\n") + "\n" + effective


def load(name_or_path: str | Path | Platform) -> Platform:
    """A preset by name, a platform file by path, or a Platform as it is.

    A string that names an existing file, or looks like a path (has a '/' or ends in
    .toml), is read as a file; anything else must be a preset name.
    """
    if isinstance(name_or_path, Platform):
        return name_or_path
    if isinstance(name_or_path, Path):
        return load_file(name_or_path)
    if not isinstance(name_or_path, str) or not name_or_path:
        raise InputError(f"platform: expected a preset name, a file or a Platform, "
                         f"got {name_or_path!r}")
    text = name_or_path
    if Path(text).is_file() or "/" in text or text.endswith(".toml"):
        return load_file(text)
    return load_preset(text)
