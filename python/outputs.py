"""Every file a hopsim command writes goes through here: whole, together, never clobbering.

    with outputs.Outputs() as out:
        toml = out.file(args.out, "--out")                 # checked now, before any work
        out.text(toml, result.toml)                        # staged: a temp file beside it
        out.write(out.file(args.plot, "--plot"), lambda tmp: draw(tmp))
    # leaving the block without an exception renames every staged file onto its target;
    # an exception (a refusal, an interrupt) removes every temp file and every folder
    # this transaction created, so the command leaves nothing behind.

The rules (README, "Bad input"):
- Only regular files are written. A target that exists and is not a regular file (a
  folder, a device such as /dev/full, a FIFO, a socket) is refused before any work.
- A symbolic link to a regular file is followed: the file it points to is replaced and the
  link stays a link (as `cp` and shell redirection treat it). A link to anything else, or a
  dangling link, is refused.
- Each file is written to a temporary file in its target's folder (same file system) and
  renamed onto the target, so a reader sees the old file or the new one, never half.
- All outputs of one command are staged first and renamed last: a failure while writing
  any of them leaves none. (A SIGKILL between two renames can still leave the first; a
  SIGKILL while staging leaves a hidden `.NAME.hopsim-*` temp file.)
- Files get mode 0666 less the umask, as `open()` would give them (mkstemp's 0600 would
  differ from one command to the next).
"""
from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
from pathlib import Path

from .errors import InputError

# A name taken from a file's content (a platform's name) becomes part of a path only when
# it is an identifier: no separators, no "..", no leading dot or dash.
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]{0,127}")


def safe_name(name, what: str = "name") -> str:
    """name, if it can be a file name stem; InputError otherwise."""
    if not isinstance(name, str) or not _NAME.fullmatch(name) or ".." in name:
        raise InputError(f"{what}: {name!r} cannot name a file (letters, digits, _ . + - "
                         f"only, at most 128, not starting with . or -)")
    return name


def umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def target(path, flag: str) -> Path:
    """The regular file a path will be written to (a symlink followed), checked."""
    if path is None or str(path) == "":
        raise InputError(f"{flag}: expected a file name, got an empty string")
    p = Path(path)
    if os.path.islink(p):
        real = Path(os.path.realpath(p))
        if not real.exists():
            raise InputError(f"{flag} {path}: a symbolic link to {real}, which does not exist")
        p = real
    try:
        st = os.stat(p)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise InputError(f"{flag} {path}: {e.strerror}") from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        kind = "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise InputError(f"{flag} {path}: exists and is {kind}; hopsim writes only regular files")
    return p


class Outputs:
    """One command's outputs: checked up front, staged, then renamed all together."""

    def __init__(self):
        self._targets: dict[Path, str] = {}   # final path -> flag
        self._folders: list[tuple[Path, str]] = []
        self._staged: dict[Path, str] = {}    # final path -> temp path
        self._created: list[Path] = []

    # --- declaring targets (before any work) -------------------------------------------

    def file(self, path, flag: str, suffix: str | None = None) -> Path:
        """Declare a file target; refused now if it could not be written."""
        p = target(path, flag)
        if suffix is not None and p.suffix.lower() != suffix:
            raise InputError(f"{flag} {path}: give a file name ending in {suffix}")
        if p.absolute() in {t.absolute() for t in self._targets}:
            raise InputError(f"{flag} {path}: also named by {self._targets[p]}")
        folder = _existing_folder(p.parent, flag, path)
        if folder != p.parent.absolute() and not self._declared_folder(p.parent):
            raise InputError(f"{flag} {path}: folder {p.parent} does not exist")
        _probe(folder, flag, path)
        self._targets[p] = flag
        return p

    def folder(self, path, flag: str) -> Path:
        """Declare a folder (created, with its missing parents, at staging time)."""
        if path is None or str(path) == "":
            raise InputError(f"{flag}: expected a folder name, got an empty string")
        p = Path(path)
        if p.exists() and not p.is_dir():
            raise InputError(f"{flag} {path}: exists and is not a folder")
        _probe(_existing_folder(p, flag, path), flag, path)
        self._folders.append((p, flag))
        return p

    def _declared_folder(self, p: Path) -> bool:
        p = p.absolute()
        return any(f.absolute() == p or f.absolute() in p.parents for f, _ in self._folders)

    # --- staging -------------------------------------------------------------------------

    def write(self, path: Path, writer) -> None:
        """Stage path: writer(tmp) fills a temp file beside it (renamed at commit)."""
        path = Path(path)
        if path not in self._targets:
            path = self.file(path, "output")
        self._make_folder(path.parent)
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.hopsim-", suffix=path.suffix,
                                       dir=path.parent)
            self._staged[path] = tmp
            os.fchmod(fd, 0o666 & ~umask())
            os.close(fd)
            writer(tmp)
        except OSError as e:
            raise InputError(f"{self._targets[path]} {path}: cannot write: {e.strerror or e}") from None
        if not stat.S_ISREG(os.lstat(tmp).st_mode):
            raise InputError(f"{self._targets[path]} {path}: the writer did not leave a file")

    def text(self, path: Path, content: str) -> None:
        self.write(path, lambda tmp: Path(tmp).write_text(content, encoding="utf-8"))

    def _make_folder(self, folder: Path) -> None:
        missing = [p for p in (folder, *folder.parents) if not p.exists()]
        for p in reversed(missing):
            try:
                p.mkdir()
            except OSError as e:
                raise InputError(f"cannot create the folder {p}: {e.strerror}") from None
            self._created.append(p)

    # --- commit / abort --------------------------------------------------------------------

    def commit(self) -> list[Path]:
        for final, tmp in list(self._staged.items()):
            os.replace(tmp, final)
            del self._staged[final]
        for folder, _ in self._folders:
            self._make_folder(folder)  # a declared folder exists even with no file in it
        self._created.clear()
        return list(self._targets)

    def abort(self) -> None:
        for tmp in self._staged.values():
            try:
                os.unlink(tmp)
            except OSError:
                pass
        self._staged.clear()
        for p in reversed(self._created):
            shutil.rmtree(p, ignore_errors=True)
        self._created.clear()

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        if kind is None:
            try:
                self.commit()
            except BaseException:
                self.abort()
                raise
        else:
            self.abort()
        return False


def _existing_folder(p: Path, flag: str, path) -> Path:
    """The nearest existing folder at or above p, which must be a folder."""
    q = p.absolute()
    while not q.exists() and q != q.parent:
        if q.is_symlink():
            raise InputError(f"{flag} {path}: {q} is a dangling symbolic link")
        q = q.parent
    if not q.is_dir():
        raise InputError(f"{flag} {path}: {q} is not a folder")
    return q


def _probe(folder: Path, flag: str, path) -> None:
    # os.access says yes to root on a read-only file system (/proc): create and remove.
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".hopsim-probe-")
    except OSError as e:
        raise InputError(f"{flag} {path}: cannot create files in {folder}: {e.strerror}") from None
    os.close(fd)
    os.unlink(tmp)


def write_all(files: dict, flags: dict | None = None) -> list[Path]:
    """Convenience: {path: text or writer(tmp)} written together."""
    with Outputs() as out:
        for path, content in files.items():
            p = out.file(path, (flags or {}).get(path, "output"))
            if callable(content):
                out.write(p, content)
            else:
                out.text(p, content)
    return [Path(p) for p in files]
