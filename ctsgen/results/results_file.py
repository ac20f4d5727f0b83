"""The results file of ``ctsgen run``, end to end: its header, its records, the CTS-style text
beside it, reading both back, and writing them so that no earlier file is ever lost.

The format is documented in docs/pack-format.md ("Results"). In short: JSON lines, the first
a **header** record (:func:`make_header`) saying what was judged (the pack's manifest hash), by
what (backend, device, driver), by which ctsgen and Hypothesis, under which verdict-changing
options; then one record per case (``name``, ``status``, ``detail``, ...). Beside it, the
CTS-style ``.txt`` (``name,status,detail`` in CSV, the header as a ``# header`` comment line).

A run holds a lock on the results path (a second run on it is refused), writes into
``FILE.partial``, and on success writes the ``.txt`` and renames both into place (then the
caller's CSV files, a stop signal held until all are in place) before it prints anything, so
neither a closed stdout nor a Ctrl-C can leave them disagreeing. A crash or an interrupt
leaves an earlier ``FILE`` as it was; ``--resume`` continues ``FILE.partial`` when an
interrupted run left one, else a copy of ``FILE``, and only when its header is the one this run
would write. Only a ctsgen results file is ever replaced: anything else at that path is refused.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import shutil
import stat
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import hypothesis

from ctsgen.version import __version__
from ctsgen.core.textlines import read_lines
from ctsgen.errors import CtsgenError, UserError
from ctsgen.pack.lock import out_lock, write_beside
from ctsgen.core.verdict import CaseResult, Status
from ctsgen.signals import stops_held

#: The header record's ``format`` and ``format_version``.
FORMAT, FORMAT_VERSION = "ctsgen-results", 1
#: How the CTS-style text carries the header: one comment line, this prefix and the JSON.
TXT_HEADER = "# header "
#: How the CTS-style text of ``ctsgen run`` begins: its title comment (``results_title``).
TITLE_PREFIX = "# ctsgen results"


class NotResultsError(UserError):
    """A path given as a results file holds something else."""


class ResultsError(CtsgenError, ValueError):
    """A results file cannot be read, or does not fit what it is used for; the message names the file and the fix."""


@dataclass(frozen=True)
class Verdict:
    status: Status
    detail: str = ""


@dataclass(frozen=True)
class Results:
    """A results file read back: its header (None: written before results had one, or a CTS
    text without it) and each case's verdict (the last record of a name wins)."""

    header: dict[str, Any] | None
    verdicts: dict[str, Verdict]


# -- the header -------------------------------------------------------------------

def manifest_sha256(pack_root: Path) -> str:
    """The pack's identity: the SHA-256 of its manifest.json (which lists every shader's hash and case)."""
    return hashlib.sha256((Path(pack_root) / "manifest.json").read_bytes()).hexdigest()


#: VkPhysicalDeviceProperties::vendorID of the vendors whose driverVersion packing is known
NVIDIA, AMD, INTEL, MESA = 0x10DE, 0x1002, 0x8086, 0x10005


def driver_version_name(raw: int | None, vendor_id: int | None) -> str | None:
    """``driverVersion`` as its vendor spells it; None where the packing is not known. The Vulkan spec
    leaves the packing to the vendor: NVIDIA packs major.minor.secondary.tertiary in 10.8.8.6 bits
    (2435301632 is 580.159.4; the tertiary is left out when 0); Mesa's drivers (RADV, ANV, NVK,
    lavapipe; AMD's and Intel's vendor IDs on Linux) use VK_MAKE_VERSION(major, minor, patch),
    10.10.12 bits (109060102 is 26.2.6)."""
    if raw is None or vendor_id is None or not 0 <= raw < 1 << 32:
        return None
    if vendor_id == NVIDIA:
        parts = [raw >> 22, (raw >> 14) & 0xFF, (raw >> 6) & 0xFF] + ([raw & 0x3F] if raw & 0x3F else [])
        return ".".join(map(str, parts))
    if vendor_id in (MESA, AMD, INTEL):
        return f"{raw >> 22}.{(raw >> 12) & 0x3FF}.{raw & 0xFFF}"
    return None


def make_header(pack_sha256: str, backend: str, device: str, driver_version: int | None,
                expect_deviations: Sequence[str], numerics: str | None, explain_deviations: Sequence[str] = (),
                vendor_id: int | None = None) -> dict[str, Any]:
    """The header record of a results file (docs/pack-format.md, "Results"): ``explain_deviation``
    names the deviations whose explanations the case records carry (a baseline's ``deviation:``
    rules); ``driver_version_name`` is the raw number as its vendor spells it (:func:`driver_version_name`)."""
    return {"format": FORMAT, "format_version": FORMAT_VERSION,
            "pack": {"manifest_sha256": pack_sha256},
            "backend": backend,
            "device": {"name": device, "driver_version": driver_version,
                       "driver_version_name": driver_version_name(driver_version, vendor_id)},
            "generator": {"ctsgen": __version__, "hypothesis": hypothesis.__version__},
            "options": {"expect_deviation": sorted(expect_deviations), "numerics": numerics,
                        "explain_deviation": sorted(explain_deviations)}}


def explained_deviations(path: Path) -> list[str]:
    """The deviations a results file's run recorded explanations for (its header's
    ``explain_deviation``; none without a header)."""
    header = read_header(path)
    return list(((header or {}).get("options") or {}).get("explain_deviation") or [])


def is_header(rec: object) -> bool:
    return isinstance(rec, dict) and rec.get("format") == FORMAT


def _flat(obj: object, prefix: str = "") -> dict[str, object]:
    if not isinstance(obj, dict):
        return {prefix: obj}
    out: dict[str, object] = {}
    for key, value in obj.items():
        out.update(_flat(value, f"{prefix}.{key}" if prefix else str(key)))
    return out


def header_differences(have: dict[str, Any], want: dict[str, Any]) -> list[str]:
    """``field: have -> want`` for each field of two headers that differs."""
    a, b = _flat(have), _flat(want)
    return [f"{k}: {a.get(k)!r} -> {b.get(k)!r}" for k in sorted(a.keys() | b.keys()) if a.get(k) != b.get(k)]


def pack_of(header: dict[str, Any] | None) -> str | None:
    """The manifest hash of the pack a header's file judged (None: no header)."""
    return _flat(header).get("pack.manifest_sha256") if header is not None else None


def describe_header(header: dict[str, Any] | None) -> str:
    """One line saying what a results file judged."""
    if header is None:
        return "no header (written by a ctsgen before results files had one)"
    device, opts = header.get("device") or {}, header.get("options") or {}
    driver = device.get("driver_version_name") or device.get("driver_version")
    return (f"pack {str(pack_of(header))[:12]}, backend {header.get('backend')}, device {device.get('name')}"
            + (f" (driver {driver})" if driver is not None else "")
            + f", ctsgen {(header.get('generator') or {}).get('ctsgen')}"
            + (f", --expect-deviation {','.join(opts['expect_deviation'])}" if opts.get("expect_deviation") else "")
            + (f", --numerics {opts['numerics']}" if opts.get("numerics") else ""))


# -- records ----------------------------------------------------------------------

class JsonLinesSink:
    """The results-file sink: one JSON line per verdict (sorted keys), flushed at once, so an
    interrupted run keeps what it finished (:func:`recover_results` reads it back)."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out

    def __call__(self, result: CaseResult) -> None:
        self.out.write(json.dumps(result.to_json(), sort_keys=True) + "\n")
        self.out.flush()


def case_verdict(rec: object) -> tuple[str, Status]:
    """(name, status) of a case record; ValueError unless it is one (a name string, a CTS status)."""
    if not isinstance(rec, dict) or not isinstance(rec.get("name"), str):
        raise ValueError("no 'name' string")
    return rec["name"], Status(rec.get("status"))


def recover_results(path: Path) -> dict[str, Status]:
    """The verdicts a results file already holds (name -> status), for ``--resume``.

    A run killed mid-write can leave a torn last line; the file is rewritten
    (atomically) without it, so appending continues a valid file. Any other line that is
    no record is refused: dropping it would lose a verdict silently.
    """
    try:
        lines = Path(path).read_text().splitlines()
    except FileNotFoundError:
        return {}
    done = {}
    for n, line in enumerate(lines, 1):
        try:
            rec = json.loads(line)
            if not (n == 1 and is_header(rec)):
                name, status = case_verdict(rec)
                done[name] = status
        except ValueError as exc:
            if n < len(lines):
                raise ResultsError(f"{path}:{n}: not a ctsgen result record ({exc}) -> run without --resume, or "
                                   "choose another --results") from None
            os.replace(write_beside(Path(path), "".join(g + "\n" for g in lines[:-1])), path)
    return done


# -- reading ----------------------------------------------------------------------

def case_record(path: Path, name: str) -> dict[str, Any] | None:
    """The last record of case ``name`` in a JSON-lines results file (its verdict, detail and
    mismatches, for a repro's REPORT.md), or None when the file holds none."""
    found = None
    with open(path) as fh:
        for line in fh:
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(rec, dict) and not is_header(rec) and rec.get("name") == name:
                found = rec
    return found


def load_results(path: str | Path) -> Results:
    """A JSON-lines or CTS-style text results file, read back."""
    path = Path(path)
    fix = "-> name a file `ctsgen run PACK` wrote (PACK/results-BACKEND.jsonl or .txt)"
    try:
        lines = read_lines(path)  # a BOM and CRLF line ends dropped, as every line-based input
    except FileNotFoundError:
        raise ResultsError(f"{path}: no such results file {fix}") from None
    except IsADirectoryError:
        raise ResultsError(f"{path}: a directory, not a results file {fix}") from None
    except UnicodeDecodeError:
        raise ResultsError(f"{path}: not a ctsgen results file (not UTF-8 text) {fix}") from None
    header = None
    for line in lines:
        if line.startswith(TXT_HEADER):
            header = _json_header(path, line[len(TXT_HEADER):])
    body = [(n, line) for n, line in enumerate(lines, 1) if line.strip() and not line.startswith("#")]
    out: dict[str, Verdict] = {}
    if body and body[0][1].lstrip().startswith("{"):
        for n, line in body:
            try:
                rec = json.loads(line)
                if is_header(rec):
                    header = rec
                    continue
                name, status = case_verdict(rec)
                out[name] = Verdict(status, str(rec.get("detail", "")))
            except ValueError as exc:
                raise ResultsError(f"{path}:{n}: not a ctsgen result record ({exc}) -> name a results file "
                                   "written by `ctsgen run`") from None
        return Results(header, out)
    for n, line in body:
        row = next(csv.reader([line]))
        if len(row) < 2:
            raise ResultsError(f"{path}:{n}: expected 'name,status,detail', got {line[:60]!r} -> name a results "
                               "file written by `ctsgen run`")
        try:
            out[row[0]] = Verdict(Status(row[1]), row[2] if len(row) > 2 else "")
        except ValueError:
            raise ResultsError(f"{path}:{n}: unknown status {row[1][:40]!r} -> a status is one of "
                               f"{', '.join(s.value for s in Status)}") from None
    return Results(header, out)


def _json_header(path: Path, text: str) -> dict[str, Any]:
    try:
        rec = json.loads(text)
    except ValueError:
        rec = None
    if not is_header(rec):
        raise ResultsError(f"{path}: its '{TXT_HEADER.strip()}' line is not a ctsgen results header -> name a "
                           "results file written by `ctsgen run`")
    return rec


def read_header(path: Path) -> dict[str, Any] | None:
    """The header record a JSON-lines results file begins with (None: it has none); the rest,
    a torn last line included, is not read."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        first = fh.readline().lstrip("\ufeff")
    try:
        rec = json.loads(first)
    except ValueError:
        return None
    return rec if is_header(rec) else None


# -- the CTS-style text -----------------------------------------------------------

def format_cts(results: dict[str, Verdict], title: str = "", header: dict[str, Any] | None = None) -> str:
    """The CTS-style text (see ctsgen.results.report's docstring), sorted by case name."""
    buf = io.StringIO()
    if title:
        buf.write(f"# {title}\n")
    if header is not None:
        buf.write(TXT_HEADER + json.dumps(header, sort_keys=True) + "\n")
    w = csv.writer(buf, lineterminator="\n")
    for name in sorted(results):
        v = results[name]
        w.writerow([name, v.status.value, " ".join(v.detail.split())])
    return buf.getvalue()


def results_title(pack: str | Path, backend: str) -> str:
    """The first comment of a run's CTS-style text: what it holds (:data:`TITLE_PREFIX`)."""
    return f"{TITLE_PREFIX[2:]}: pack {pack}, backend {backend}"


def cts_path(results: Path) -> Path:
    """Where the CTS-style text of ``results`` goes (``.txt``; ``.cts.txt`` beside a ``.txt``)."""
    return results.with_suffix(".cts.txt" if results.suffix == ".txt" else ".txt")


# -- writing ----------------------------------------------------------------------

def safe_name(backend: str) -> str:
    """A backend name as it appears in a file name (``mutant:X`` -> ``mutant-X``: no ':' in names)."""
    return "".join(c if c.isalnum() or c in "._-" else "-" for c in backend)


def partial_path(path: Path) -> Path:
    return path.with_name(path.name + ".partial")


def check_results_file(path: Path) -> None:
    """Refuse ``path`` unless it is absent, empty, or a ctsgen results file (a regular file: a run
    renames its results over ``path``, which must never replace a device such as /dev/null)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISDIR(mode):
        raise NotResultsError(f"{path} is a directory, not a ctsgen results file -> name a .jsonl file "
                              "with --results")
    if not stat.S_ISREG(mode):
        raise NotResultsError(f"{path} is a device, pipe or socket, not a ctsgen results file -> name a .jsonl "
                              "file with --results (a run replaces it when it ends)")
    data = Path(path).read_bytes()
    fix = "-> choose another --results path (ctsgen replaces only its own results files)"
    try:
        lines = [ln for ln in data.decode("utf-8").splitlines() if ln.strip()]
    except UnicodeDecodeError:
        raise NotResultsError(f"{path} is not a ctsgen results file (not UTF-8 text) {fix}") from None
    for n, line in enumerate(lines[:-1] if len(lines) > 1 else lines, 1):  # the last may be torn
        try:
            rec = json.loads(line)
            ok = (n == 1 and is_header(rec)) or bool(case_verdict(rec))
        except ValueError:
            ok = False
        if not ok:
            raise NotResultsError(f"{path} is not a ctsgen results file (line {n} is not a result record) {fix}")


def check_cts_file(path: Path) -> None:
    """Refuse ``path``, where the CTS-style text of a run goes (:func:`cts_path`), unless it is absent,
    empty, or a text ctsgen wrote (its first lines: the ``# ctsgen results`` title or the header)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    fix = "-> move it out of the way, or choose another --results (its .txt goes beside it)"
    if not stat.S_ISREG(mode):
        raise NotResultsError(f"{path} is not a plain file, so the run will not replace it with its CTS-style text "
                              f"{fix}")
    with open(path, "rb") as fh:
        head = fh.read(4096).decode("utf-8", errors="replace").splitlines()[:2]
    if head and not any(ln.startswith((TITLE_PREFIX, TXT_HEADER)) for ln in head):
        raise NotResultsError(f"{path} is not a CTS-style text ctsgen wrote, so the run will not replace it {fix}")


def _resume_source(path: Path, header: dict[str, Any]) -> Path | None:
    """The file ``--resume`` continues (None: nothing to continue), refused unless its header is ``header``."""
    partial = partial_path(path)
    source = partial if partial.exists() else path if path.exists() else None
    if source is None:
        return None
    have = read_header(source)
    if have is None:
        raise ResultsError(f"{source}: no header saying what it judged (written by an older ctsgen) -> run "
                           "without --resume, or choose another --results")
    differ = header_differences(have, header)
    if differ:
        raise ResultsError(f"{source} judged something else than this run would ({'; '.join(differ)}) -> run "
                           "without --resume, or choose another --results")
    return source


@contextmanager
def results_output(path: Path, resume: bool, header: dict[str, Any], title: str,
                   recover: Callable[[Path], dict[str, Status]] = recover_results,
                   then: Callable[[], None] = lambda: None) -> Iterator[tuple[IO[str], dict]]:
    """Own the results of a run at ``path``: hold its lock, yield (file to append records to,
    verdicts already there for ``--resume``). When the block ends without an exception the
    records and their CTS-style text (``title``: its first comment) replace ``path`` and
    :func:`cts_path` together, and ``then()`` writes what is judged from them (a run's CSV files),
    with Ctrl-C and SIGTERM held until all are in place; otherwise ``path`` is left as it was and
    ``FILE.partial`` holds the cases run so far."""
    path = Path(path)
    partial = partial_path(path)
    with out_lock(path, "--results"):
        check_results_file(path)
        check_results_file(partial)
        check_cts_file(cts_path(path))
        done: dict[str, Status] = {}
        source = _resume_source(path, header) if resume else None
        if source is not None:
            done = recover(source)
            if source == path:
                shutil.copyfile(path, partial)
        with open(partial, "a" if source is not None else "w") as fh:
            if source is None:
                fh.write(json.dumps(header, sort_keys=True) + "\n")
            yield fh, done
        with stops_held():
            results = load_results(partial)
            text = write_beside(cts_path(path), format_cts(results.verdicts, title, results.header))
            try:
                os.replace(partial, path)
                os.replace(text, cts_path(path))
            except BaseException:
                text.unlink(missing_ok=True)
                raise
            then()
