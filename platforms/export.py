"""`hopsim platforms export`: a platform written as PREFIX.xml and PREFIX.smpi.

The texts are hopsim.platforms.simgrid's (platform_xml, cfg_flags); this module writes
them, both or neither, and holds the command's arguments.
"""
from __future__ import annotations

import sys
from pathlib import Path

from ..errors import InputError
from ..outputs import Outputs, safe_name
from .presets import load
from .simgrid import SMPI_SUFFIX, cfg_flags, platform_xml


def export(platform, prefix: Path) -> tuple[Path, Path]:
    """Write PREFIX.xml and PREFIX.smpi (one --cfg flag per line), both or neither."""
    spec = load(platform).to_engine_dict()
    xml, flags = platform_xml(spec), cfg_flags(spec)
    prefix = Path(prefix)
    if prefix.name in ("", ".", ".."):
        raise InputError(f"--out: expected a file name prefix, got {str(prefix)!r}")
    with Outputs() as outputs:
        xml_path = outputs.file(prefix.with_name(prefix.name + ".xml"), "--out (its .xml)")
        cfg_path = outputs.file(prefix.with_name(prefix.name + SMPI_SUFFIX), f"--out (its {SMPI_SUFFIX})")
        outputs.text(xml_path, xml)
        outputs.text(cfg_path, "\n".join(flags) + "\n")
    return prefix.with_name(prefix.name + ".xml"), prefix.with_name(prefix.name + SMPI_SUFFIX)


def add_export_arguments(p) -> None:
    p.add_argument("action", nargs="?", choices=("export", "show"),
                   help="export: write a platform for SimGrid (see --format); show: print a "
                        "platform's whole TOML with the provenance of every value; default: "
                        "list the presets")
    p.add_argument("platform", nargs="?", metavar="NAME_OR_FILE",
                   help="with export or show: the preset name or platform TOML file")
    p.add_argument("--format", choices=("simgrid-xml",),
                   help="with export: the output format (default simgrid-xml: a SimGrid "
                        "platform XML and a file of SMPI --cfg flags, one per line)")
    p.add_argument("--out", metavar="PREFIX", help="with export: write PREFIX.xml and "
                                                   "PREFIX.smpi (default: the platform's "
                                                   "name, in the current folder)")


def run_export(args) -> int:
    if args.platform is None:
        raise InputError("platforms export: name a platform (a preset or a TOML file)")
    if args.out is None:
        # The default prefix comes from the file's content: a name, never a path.
        prefix = safe_name(load(args.platform).name, "the platform's name")
    elif args.out == "":
        raise InputError("--out: expected a file name prefix, got an empty string")
    else:
        prefix = args.out
    xml_path, cfg_path = export(args.platform, Path(prefix))
    sys.stdout.write(f"wrote {xml_path} and {cfg_path}\n"
                     f"run: smpirun -platform {xml_path} -hostfile HOSTFILE -np N "
                     f"$(cat {cfg_path}) PROGRAM\n")
    return 0
