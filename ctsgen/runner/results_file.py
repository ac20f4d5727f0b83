"""Where ``ctsgen run`` writes its results, so that no earlier file is ever lost.

A run writes into ``FILE.partial`` and renames it over ``FILE`` only when it
has finished, so a crash or an interrupt leaves an earlier ``FILE`` as it
was. ``--resume`` continues ``FILE.partial`` when an interrupted run left
one, else a copy of ``FILE``. Only a ctsgen results file (JSON lines, each
a record with ``name`` and ``status``; the last may be torn) is ever
replaced: anything else at that path is refused.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from ctsgen.errors import UserError


class NotResultsError(UserError):
    """A path given as a results file holds something else."""


def safe_name(backend: str) -> str:
    """A backend name as it appears in a file name (``mutant:X`` -> ``mutant-X``: no ':' in names)."""
    return "".join(c if c.isalnum() or c in "._-" else "-" for c in backend)


def partial_path(path: Path) -> Path:
    return path.with_name(path.name + ".partial")


def check_results_file(path: Path) -> None:
    """Refuse ``path`` unless it is absent, empty, or a ctsgen results file."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        return
    except IsADirectoryError:
        raise NotResultsError(f"{path} is a directory, not a ctsgen results file -> name a .jsonl file "
                              "with --results") from None
    fix = "-> choose another --results path (ctsgen replaces only its own results files)"
    try:
        lines = [ln for ln in data.decode("utf-8").splitlines() if ln.strip()]
    except UnicodeDecodeError:
        raise NotResultsError(f"{path} is not a ctsgen results file (not UTF-8 text) {fix}") from None
    for n, line in enumerate(lines[:-1] if len(lines) > 1 else lines, 1):  # the last may be torn
        try:
            rec = json.loads(line)
            ok = isinstance(rec, dict) and "name" in rec and "status" in rec
        except ValueError:
            ok = False
        if not ok:
            raise NotResultsError(f"{path} is not a ctsgen results file (line {n} is not a result record) {fix}")


@contextmanager
def results_output(path: Path, resume: bool, recover) -> Iterator[tuple[IO[str], dict]]:
    """Open the results of a run at ``path``; yields (file to append records to, verdicts
    already there for ``--resume``, from ``recover(path)``). The records reach ``path``
    only when the block ends without an exception."""
    path = Path(path)
    partial = partial_path(path)
    check_results_file(path)
    check_results_file(partial)
    done = {}
    if resume:
        source = partial if partial.exists() else path
        done = recover(source)
        if source == path and path.exists():
            shutil.copyfile(path, partial)
    with open(partial, "a" if resume else "w") as fh:
        yield fh, done
    os.replace(partial, path)
