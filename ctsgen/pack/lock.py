"""Owning an output while writing it: a lock, stale temporaries, the user's umask, a file
written beside its place and renamed over it (:func:`write_beside`).

A writer holds an exclusive ``flock`` on ``.NAME.lock`` beside ``NAME`` for as
long as it writes, so a second ``ctsgen generate`` (or ``repro``) to the same
place fails at once instead of silently replacing the first one's pack. The
lock file is removed on release. Temporaries are named
``.NAME.tmp-<pid>-*`` and ``.NAME.old-<pid>``; under the lock, those whose
process is gone (killed by SIGKILL, a power cut) are removed.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ctsgen.errors import UserError

_HELD: set[Path] = set()


class OutputLockedError(UserError):
    """Another process is writing the same output directory."""


def lock_path(out: Path) -> Path:
    return out.with_name(f".{out.name}.lock")


@contextmanager
def out_lock(out: Path, flag: str = "--out") -> Iterator[None]:
    """Hold the write lock of ``out`` (re-entrant within one process); refuse if another holds it
    (``flag``: the option that named ``out``, for the message)."""
    out = Path(os.path.abspath(out))
    if not out.name:
        raise UserError(f"{out}: a filesystem root cannot be an output directory -> name a directory "
                        f"below it, e.g. {flag} ./out")
    if out in _HELD:
        yield
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    path = lock_path(out)
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise OutputLockedError(f"{out}: another ctsgen process is writing it (lock {path}) -> wait for it "
                                    f"to finish, or choose another {flag}") from None
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:  # else the holder removed the file as we opened it: lock the new one
            break
        os.close(fd)
    _HELD.add(out)
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        _HELD.discard(out)
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        os.close(fd)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    return True


def temp_prefix(out: Path) -> str:
    """The prefix of this process's temporary directory for ``out``."""
    return f".{out.name}.tmp-{os.getpid()}-"


def remove_stale(out: Path) -> list[Path]:
    """Remove ``.NAME.tmp-<pid>-*`` and ``.NAME.old-<pid>`` beside ``out`` whose process is gone
    (call with the lock held); returns what was removed."""
    out = Path(out)
    pattern = re.compile(rf"\.{re.escape(out.name)}\.(?:tmp|old)-(\d+)(?:-.*)?$")
    removed = []
    if not out.parent.is_dir():
        return removed
    for entry in out.parent.iterdir():
        m = pattern.match(entry.name)
        if not m or pid_alive(int(m.group(1))):
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
        removed.append(entry)
    return removed


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_beside(path: Path, text: str) -> Path:
    """Write ``text`` to a temporary file beside ``path``, with ``path``'s mode (or the one the umask
    asks for); returns it, for the caller to rename over ``path`` (removed if writing fails)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.tmp-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        if path.exists():
            shutil.copymode(path, tmp)
        else:
            os.chmod(tmp, 0o666 & ~current_umask())
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp)


def follow_umask(path: Path) -> None:
    """Give a directory made by ``tempfile.mkdtemp`` (always 0700) the mode the user's umask asks for."""
    os.chmod(path, 0o777 & ~current_umask())
