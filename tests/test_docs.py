"""The repository documents itself: no tracked file sends the reader to notes outside the
repository, and every link and docs/ reference in the documentation and the code resolves.
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Spelled in two pieces so that this file does not match its own check.
OUTSIDE_NOTES = "shared" + "/reference"


def tracked_files() -> list[Path]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
    return [ROOT / name for name in out.stdout.decode().split("\0") if name]


def doc_pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_there_are_tracked_files_and_pages():
    # The checks below would pass vacuously on an empty list.
    names = {p.relative_to(ROOT).as_posix() for p in tracked_files()}
    assert {"README.md", "docs/model.md", "docs/platforms.md", "python/cli.py"} <= names


def test_no_tracked_file_points_outside_the_repository():
    offenders = []
    for path in tracked_files():
        if not path.is_file():  # deleted in the work tree, not yet committed
            continue
        for n, line in enumerate(path.read_bytes().decode("utf-8", "replace").splitlines(), 1):
            if OUTSIDE_NOTES in line:
                offenders.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:100]}")
    assert not offenders, ("these lines send the reader to files that are not in the "
                           "repository; point them into docs/ instead:\n" + "\n".join(offenders))


# [text](target) and [text](target "title"); images too.
_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def relative_links(text: str) -> list[str]:
    links = []
    for target in _LINK.findall(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE) or target.startswith("#"):
            continue  # https:, mailto:, an anchor in the same page
        links.append(target.split("#", 1)[0])
    return links


def test_link_extraction():
    text = ("See [the model](docs/model.md#mechanisms), ![fig](img/a.png \"A\"), "
            "[web](https://simgrid.org), [here](#keys) and [up](../README.md).")
    assert relative_links(text) == ["docs/model.md", "img/a.png", "../README.md"]


@pytest.mark.parametrize("page", doc_pages(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_point_to_existing_files(page):
    if not page.is_file():
        pytest.fail(f"{page.relative_to(ROOT)} is missing")
    text = page.read_text(encoding="utf-8")
    dead = [t for t in relative_links(text) if not (page.parent / t).exists()]
    assert not dead, f"{page.relative_to(ROOT)}: dead links {dead}"


_DOCS_MENTION = re.compile(r"\bdocs/([A-Za-z0-9_-]+\.md)\b")
# docs/overlays.md, "An explicit degree": a named section of a page.
_SECTION_MENTION = re.compile(r"\bdocs/([A-Za-z0-9_-]+\.md),? \"([^\"]+)\"")


def _words(text: str) -> str:
    return " ".join(re.sub(r"[*`#]", "", text).lower().split())


def test_every_docs_page_a_tracked_file_names_exists():
    missing, sections = [], []
    for path in tracked_files():
        if not path.is_file() or path.suffix in (".png", ".gz"):
            continue
        text = path.read_bytes().decode("utf-8", "replace")
        for name in set(_DOCS_MENTION.findall(text)):
            if not (ROOT / "docs" / name).is_file():
                missing.append(f"{path.relative_to(ROOT)}: docs/{name}")
        for name, section in set(_SECTION_MENTION.findall(text)):
            page = ROOT / "docs" / name
            # A heading or a paragraph's lead-in: the words must be on the page.
            if page.is_file() and _words(section) not in _words(page.read_text()):
                sections.append(f"{path.relative_to(ROOT)}: docs/{name}, \"{section}\"")
    assert not missing, "references to pages docs/ does not have:\n" + "\n".join(missing)
    assert not sections, "references to sections the page does not have:\n" + "\n".join(sections)


# simulator/nic.hpp, tests/data/ray, bench/memory.py: a path into the repository's own folders.
_REPO_PATH = re.compile(r"(?:^|[\s(`])((?:tests|simulator|bench|python|calibration|topologies|"
                        r"platforms|scenarios)/[A-Za-z0-9_./-]*[A-Za-z0-9_])")


@pytest.mark.parametrize("page", doc_pages(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_files_the_documentation_names_exist(page):
    if not page.is_file():
        pytest.fail(f"{page.relative_to(ROOT)} is missing")
    named = set(_REPO_PATH.findall(page.read_text(encoding="utf-8")))
    missing = sorted(p for p in named if not (ROOT / p).exists())
    assert not missing, f"{page.relative_to(ROOT)} names files that do not exist: {missing}"
