"""A reproduction ("study"): what `hopsim run NAME` hands to a reproduction's run().

A reproduction module (scenarios/reproductions/NAME.py) fills a Study with explanation,
tables and figures; the framework then writes OUT/KEY.csv, OUT/KEY.png, OUT/results.json
and OUT/report.html together through hopsim.outputs (all of them or none) and prints
each table. Nothing written depends on the clock or the machine, so the same seed gives
byte-identical files (docs/scenarios.md, "Reproductions").
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import sys
from pathlib import Path

from .. import __version__
from ..errors import InputError
from ..outputs import safe_name


class Study:
    def __init__(self, name: str, title: str, out, seed: int = 1, quick: bool = False):
        self.name, self.title = name, title
        self.out, self.seed, self.quick = Path(out), int(seed), bool(quick)
        self.blocks: list[tuple[str, object]] = []   # ("text"|"table"|"figure", payload)
        self.tables: dict[str, dict] = {}
        self.figures: dict[str, dict] = {}
        self.platforms: dict[str, dict] = {}
        self.commands: list[list[str]] = []

    # --- what a reproduction calls ---------------------------------------------------

    def text(self, markdown: str) -> None:
        """A paragraph (or several, blank-line separated) of explanation for the report."""
        self.blocks.append(("text", str(markdown)))

    def platform(self, name_or_path):
        """Load a preset or platform file, record its provenance for the report."""
        from .. import platforms
        plat = platforms.load(name_or_path)
        if plat.name not in self.platforms:
            self.platforms[plat.name] = {
                "source": str(name_or_path) if isinstance(name_or_path, (str, Path))
                else plat.name,
                "description": plat.description,
                "summary": plat.summary(),
                "values_hash": plat.values_hash(),
                "provenance": dict(sorted(plat.provenance.items())),
            }
        return plat

    def table(self, key: str, columns: list[str], rows: list[list], caption: str) -> None:
        key = self._key(key, "table")
        columns = [str(c) for c in columns]
        clean = []
        for r in rows:
            r = list(r)
            if len(r) != len(columns):
                raise InputError(f"table {key}: a row has {len(r)} cells for "
                                 f"{len(columns)} columns")
            clean.append([_value(v) for v in r])
        self.tables[key] = {"caption": str(caption), "columns": columns, "rows": clean}
        self.blocks.append(("table", key))

    def figure(self, key: str, fig, caption: str) -> None:
        """A matplotlib Figure, rendered now (Agg, no metadata) and closed."""
        key = self._key(key, "figure")
        buf = io.BytesIO()
        # No Software/date metadata: the same figure gives the same bytes.
        fig.savefig(buf, format="png", dpi=100, metadata={"Software": None})
        if getattr(fig.canvas, "manager", None) is not None:   # made by pyplot
            import matplotlib.pyplot as plt
            plt.close(fig)
        self.figures[key] = {"caption": str(caption), "png": buf.getvalue()}
        self.blocks.append(("figure", key))

    def command(self, argv: list[str]) -> None:
        self.commands.append([str(a) for a in argv])

    def progress(self, iterable, desc: str, total: int | None = None):
        """total: for an iterator with no len() (a worker pool's results)."""
        if not sys.stderr.isatty():
            return iterable
        from tqdm import tqdm
        return tqdm(iterable, desc=desc, leave=False, total=total)

    # --- additions beyond the contract ----------------------------------------------------

    def derive_seed(self, *labels) -> int:
        """A seed for one part of the study (a trial, a platform), derived from --seed and
        the labels: distinct parts get independent streams, the same --seed the same ones."""
        text = "\x1f".join([str(self.seed), *map(str, labels)])
        return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1 or 1

    def rerun_command(self) -> list[str]:
        argv = ["hopsim", "run", self.name, "--seed", str(self.seed)]
        if self.quick:
            argv.append("--quick")
        return argv + ["--out", str(self.out)]

    def _key(self, key: str, what: str) -> str:
        key = safe_name(key, f"{what} key")
        used = self.tables if what == "table" else self.figures
        if key in used or (what == "table" and key == "results"):   # results.csv/json stay free
            raise InputError(f"{what} key {key!r}: already used in this study")
        return key

    # --- what the framework writes ----------------------------------------------------------

    def results(self) -> dict:
        return {
            "name": self.name, "title": self.title, "hopsim_version": __version__,
            "seed": self.seed, "quick": self.quick,
            "text": [b for kind, b in self.blocks if kind == "text"],
            "tables": {k: {**t, "file": f"{k}.csv"} for k, t in self.tables.items()},
            "figures": {k: {"caption": f["caption"], "file": f"{k}.png"}
                        for k, f in self.figures.items()},
            "platforms": self.platforms,
            "commands": [self.rerun_command(), *self.commands],
        }

    def files(self) -> dict[str, bytes | str]:
        """Every output, by file name inside OUT."""
        files: dict[str, bytes | str] = {}
        for k, t in self.tables.items():
            files[f"{k}.csv"] = csv_text(t["columns"], t["rows"])
        for k, f in self.figures.items():
            files[f"{k}.png"] = f["png"]
        files["results.json"] = json.dumps(self.results(), indent=2, ensure_ascii=False) + "\n"
        from .report import html
        files["report.html"] = html(self)
        return files

    def stdout_text(self) -> str:
        return "".join(f"{t['caption']}\n{text_table(t['columns'], t['rows'])}\n"
                       for t in self.tables.values())


def _value(v):
    """A table cell as JSON holds it: numbers, strings, None (NaN and infinities -> None)."""
    if v is None or isinstance(v, (bool, str)):
        return v
    if hasattr(v, "item"):          # numpy scalars
        v = v.item()
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    return str(v)


def show(v) -> str:
    """A cell as a reader sees it (report and stdout); the CSV keeps full precision."""
    if v is None:
        return "-"
    if isinstance(v, bool) or isinstance(v, (int, str)):
        return str(v)
    if v == 0 or abs(v) >= 0.1:
        return f"{v:.2f}"
    return f"{v:.3g}"


def csv_text(columns, rows) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    for r in rows:
        w.writerow(["" if v is None else repr(v) if isinstance(v, float) else v for v in r])
    return buf.getvalue()


def text_table(columns, rows) -> str:
    cells = [columns] + [[show(v) for v in r] for r in rows]
    widths = [max(len(str(r[i])) for r in cells) for i in range(len(columns))]
    lines = ["  ".join(str(c).rjust(w) for c, w in zip(r, widths)) for r in cells]
    return "\n".join(lines) + "\n"


SEED_MAX = 2**63 - 1


def run_reproduction(args) -> int:
    """`hopsim run NAME`: run the reproduction, then write every output or none."""
    from .. import outputs
    from . import reproductions

    mod = reproductions.load(args.scenario)
    for flag, value in (("--plot", args.plot), ("--jobs", args.jobs), ("--dask", args.dask)):
        if value is not None:
            raise InputError(f"{flag}: applies to scenario files, not to the reproduction "
                             f"{mod.NAME}")
    seed = 1 if args.seed is None else args.seed
    if not 0 <= seed <= SEED_MAX:
        raise InputError(f"--seed: must be 0 to {SEED_MAX}, got {seed}")
    out_dir = args.out if args.out is not None else f"reproduction-{mod.NAME}"
    with outputs.Outputs() as out:
        folder = out.folder(out_dir, "--out")   # refused now, before any simulation
        study = Study(mod.NAME, mod.TITLE, folder, seed=seed, quick=args.quick)
        mod.run(study)
        files = study.files()
        for fname, content in files.items():
            path = out.file(folder / fname, "--out")
            if isinstance(content, bytes):
                out.write(path, lambda tmp, c=content: Path(tmp).write_bytes(c))
            else:
                out.text(path, content)
    sys.stdout.write(study.stdout_text())
    sys.stdout.write(f"wrote {len(files)} files into {folder}/ (report: "
                     f"{folder / 'report.html'})\n")
    return 0
