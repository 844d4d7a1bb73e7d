"""The example commands of README.md and docs/*.md, run as written.

Extraction is generic, so new pages and a restructured README are covered without editing
this file: a command is a line of a fenced block or an indented (4-space) block that
starts with `hopsim ` (continuation lines ending in a backslash joined, trailing `# ...`
comments dropped). Each runs in a scratch folder holding the files the examples name
(FIXTURES) and must exit 0 with no traceback.

A command that takes minutes runs in REDUCED form: the same subcommand and options on a
smaller input, which exercises the same path. A command that cannot run here is listed
in EXCLUDED with the reason. A new slow or privileged example needs one line in either.
"""
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Subcommands (first words after `hopsim`) that do not run in the test suite, and why.
EXCLUDED = {
    "live": "runs real Open MPI ranks in network namespaces: needs root and minutes",
    "smpi": "builds and runs the real benchmarks under SimGrid's SMPI: minutes",
}

# calibrate and validate run on the real files the examples name (tests/data, and the
# demonstration's outputs under docs/validation); only their live forms cannot run here.
LIVE_FLAGS = {"--live": "measures live on an emulated cluster (network namespaces, tbf): "
                        "needs root and a minute",
              "--emulate-cluster": "measures live on an emulated cluster (network namespaces, "
                                   "tbf): needs root and a minute",
              "--dask": "sends the points to a running Dask scheduler (tests/test_sweep_dask.py "
                        "starts one on 127.0.0.1)"}
# Folders of the repository the examples read, linked into the scratch folder.
LINKED = ("tests", "docs")

# Reduced forms of the slow examples (whitespace-normalised command -> replacement).
_OVERLAYS_SMALL = """\
name = "overlays"
description = "the packaged overlays scenario on small sizes"
plot = "overlays"
platform = "qdr-ib"
workload = "roundtrip"
ranks_per_node = 4
reception = "round-robin"
request_bytes = 4000
reply_bytes = 0
exchanges = 2
[sweep]
case = [
  {overlay = "complete", ranks = 32},
  {overlay = "complete", ranks = 64},
  {overlay = "debruijn", degree = 2, ranks = 32},
  {overlay = "debruijn", degree = 2, ranks = 64},
  {overlay = "kautz", degree = 4, ranks = 20},
  {overlay = "kautz", degree = 7, ranks = 56},
  {overlay = "random", ranks = 32},
  {overlay = "random", ranks = 64},
]
"""
_DEGREE_SMALL = """\
name = "degree_sweep"
description = "the packaged degree sweep on small sizes"
plot = "degree"
platform = "qdr-ib"
workload = "roundtrip"
ranks_per_node = 4
reception = "round-robin"
request_bytes = 4000
reply_bytes = 0
exchanges = 2
[sweep]
case = [
  {overlay = "debruijn", degree = 2, ranks = 64},
  {overlay = "debruijn", degree = 4, ranks = 64},
  {overlay = "debruijn", degree = 8, ranks = 64},
  {overlay = "kautz", degree = 2, ranks = 48},
  {overlay = "kautz", degree = 7, ranks = 56},
  {overlay = "complete", ranks = 64},
]
"""
_E = "docs/validation/rigs-idle/E/imb-"
_PLACED = (f"{_E}pingpong-2x1-block-t1.txt {_E}exchange-2x1-block-t1.txt {_E}exchange-2x2-block-t1.txt@2 "
           f"{_E}exchange-2x2-node-t1.txt@2,cyclic --base docs/validation/rigs-idle/base-shm.toml --nodes 4")
REDUCED = {
    # Half an hour of joint fit: the same files and placements through the fitters alone.
    f"hopsim calibrate {_PLACED} --eager-limit 65480 --out e-placed.toml":
        (f"hopsim calibrate {_PLACED} --closed-form --out e-placed.toml", {}),
    "hopsim run overlays --plot overlays.png":
        ("hopsim run overlays_small.toml --plot overlays.png", {"overlays_small.toml": _OVERLAYS_SMALL}),
    "hopsim run degree_sweep --plot degree_sweep.png":
        ("hopsim run degree_small.toml --plot degree_sweep.png", {"degree_small.toml": _DEGREE_SMALL}),
    "hopsim run": ("hopsim run default_small.toml", {"default_small.toml": (
        'platform = "ec2-10gbe"\nworkload = "roundtrip"\ndestinations = "shared"\nexchanges = 5\n'
        "[sweep]\nplacement = [{ranks = 10, ranks_per_node = 1}, {ranks = 20, ranks_per_node = 2}]\n")}),
    # 142 IMB cases on a noisy platform (20 seeds each): the 4-rank file alone.
    "hopsim validate --platform docs/validation/loop.toml --nodes 4 "
    "tests/data/imb/IMB-MPI1-exchange-np2-tcp.txt tests/data/imb/IMB-MPI1-exchange-np2-tcp-nice.txt "
    "tests/data/imb/IMB-MPI1-p2p-np4-tcp.txt --json --plot loop-val.png":
        ("hopsim validate --platform docs/validation/loop.toml --nodes 4 "
         "tests/data/imb/IMB-MPI1-p2p-np4-tcp.txt --json --plot loop-val.png", {}),
    # Route statistics and Ray's files over all ordered pairs: 4096 ranks write 16M routes.
    "hopsim topology debruijn --ranks 4096 --out ray/": ("hopsim topology debruijn --ranks 256 --out ray/", {}),
    "hopsim topology kautz --ranks 4032": ("hopsim topology kautz --ranks 992", {}),
    # Twenty routed 4096-rank runs (about 100 s): the same command at 64 ranks.
    "hopsim advise --platform qdr-ib --ranks 4096 --ranks-per-node 16 --reception round-robin":
        ("hopsim advise --platform qdr-ib --ranks 64 --ranks-per-node 16 --reception round-robin "
         "--exchanges 2", {}),
}
# Exchanges that make a documented run long are cut to a few (same path, fewer repeats).
_FEWER = {"--exchanges": "5"}

# Files the examples name, as a user would have them.
FIXTURES = {
    "my.toml": ('name = "my"\n[nodes]\ncount = 8\ncores = 2\n'
                "[network]\nlatency_us = 5.0\nbandwidth_gbps = 10.0\n"),
    "study.toml": ('name = "study"\nplatform = "qlogic-ib"\nworkload = "roundtrip"\nranks = 36\n'
                   "ranks_per_node = 12\nexchanges = 5\n"
                   '[sweep]\nreception = ["any-source", "round-robin"]\n'),
}


def extract(text: str) -> list[str]:
    """`hopsim ...` lines of fenced and 4-space-indented blocks, continuations joined."""
    commands, fenced, pending = [], False, None
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        code = line.strip() if fenced else (line[4:] if line.startswith("    ") else None)
        if code is None:
            pending = None
            continue
        code = code.strip()
        if pending is not None:
            code = pending + " " + code
            pending = None
        elif code.startswith("$ "):
            code = code[2:]
        if not code.startswith("hopsim "):
            continue
        if code.endswith("\\"):
            pending = code[:-1].strip()
            continue
        commands.append(_strip_comment(code))
    return commands


def _strip_comment(code: str) -> str:
    return " ".join(shlex.split(code, comments=True))


def documented_commands() -> list[tuple[str, str]]:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    seen, out = set(), []
    for page in pages:
        if not page.is_file():
            continue
        for cmd in extract(page.read_text(encoding="utf-8")):
            if cmd not in seen:
                seen.add(cmd)
                out.append((page.name, cmd))
    return out


def test_extraction_finds_fenced_indented_and_continued_commands():
    text = ("Text hopsim run x\n\n    hopsim platforms   # list\n    hopsim simulate --a 1 \\\n"
            "        --b 2\n\n```sh\n$ hopsim topology kautz --ranks 12\nls\n```\n")
    assert extract(text) == ["hopsim platforms", "hopsim simulate --a 1 --b 2",
                             "hopsim topology kautz --ranks 12"]


COMMANDS = documented_commands()


def test_the_documentation_has_commands():
    assert len(COMMANDS) >= 5, COMMANDS


def test_the_reference_pages_examples_are_collected():
    # Each of these pages shows runnable examples; losing them (a changed block style the
    # extraction misses) would silently stop checking them.
    pages = {page for page, _ in COMMANDS}
    assert {"workloads.md", "overlays.md", "platforms.md", "live.md"} <= pages, pages


def _reproduction(word: str) -> bool:
    from hopsim.scenarios import reproductions
    return "--quick" != word and reproductions.find(word) is not None


@pytest.mark.parametrize("page, command", COMMANDS, ids=[c for _, c in COMMANDS])
def test_documented_command_runs(page, command, tmp_path):
    words = shlex.split(command)
    if len(words) > 1 and words[1] in EXCLUDED:
        pytest.skip(f"{page}: {EXCLUDED[words[1]]}")
    live = [w for w in words if w in LIVE_FLAGS]
    if live:
        pytest.skip(f"{page}: {LIVE_FLAGS[live[0]]}")
    for name in LINKED:
        (tmp_path / name).symlink_to(ROOT / name)
    files = dict(FIXTURES)
    if command in REDUCED:
        command, extra = REDUCED[command]
        files.update(extra)
        words = shlex.split(command)
    if words[1:2] == ["run"] and len(words) > 2 and _reproduction(words[2]):
        words.append("--quick")   # a reproduction's documented run, in its test-sized form
    for i, w in enumerate(words[:-1]):
        if w in _FEWER and int(words[i + 1]) > int(_FEWER[w]):
            words[i + 1] = _FEWER[w]
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    p = subprocess.run([sys.executable, "-m", "hopsim", *words[1:]], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, f"{page}: {command}\n{p.stderr}"
    assert "Traceback" not in p.stderr
