"""Writing a pack: compile each variant once, write cases, publish atomically.

Everything goes into a temporary sibling directory first and is renamed
into place only when complete, so an interrupted or failed generate
leaves no half-written pack. An existing pack is replaced only with
``overwrite``, and only if it is a ctsgen pack (its manifest says so):
anything else at the output path belongs to the user and is refused.
Writers hold the output's lock (:mod:`ctsgen.pack.lock`). Output is byte-identical for the same cases: JSON with
sorted keys, no timestamps. With ``jobs`` > 1 the variants (each with its
cases) are compiled and written by worker processes; every file depends
only on its own variant or case, and the manifest is assembled in case
order, so the bytes do not depend on ``jobs``.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ctsgen.errors import CtsgenError
from ctsgen.core.family import Case, CaseData, Variant
from ctsgen.families import get_family
from ctsgen.pack import FORMAT, FORMAT_VERSION
from ctsgen.pack.arrays import save_array
from ctsgen.pack.reuse import generator_record
from ctsgen.pack.owned import foreign_files, is_ctsgen_pack, owned_files
from ctsgen.pack.lock import follow_umask, out_lock, remove_stale, temp_prefix
from ctsgen.pack.workers import in_order, worker_pool
from ctsgen.timing import Breakdown
from ctsgen.toolchain.errors import GlslCompileError, SpirvValidationError, ToolchainError
from ctsgen.toolchain.routes import DEFAULT_ROUTE, ToolchainFinding
from ctsgen.toolchain.variants import SPIRV_VAL, compile_variant


class PackExistsError(CtsgenError, FileExistsError):
    """The output directory exists and overwriting was not asked for (or it is not a ctsgen pack)."""


class VariantBuildError(CtsgenError):
    """A shader variant drawn for the pack does not compile or validate (in whichever process built it)."""


def _first_line(exc: ToolchainError) -> str:
    """The line of a compiler's or validator's report that says what is wrong (its first error)."""
    text = getattr(exc, "diagnostics", "") or getattr(exc, "messages", "") or str(exc)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("ERROR")] or lines or ["(no message)"]
    return errors[0]


def check_replaceable(out_dir: Path, overwrite: bool) -> None:
    """Refuse to write over ``out_dir`` unless it is absent, or ``overwrite`` and it holds only what
    ctsgen wrote there (:mod:`ctsgen.pack.owned`), or nothing."""
    if not out_dir.exists() and not out_dir.is_symlink():
        return
    if not overwrite:
        raise PackExistsError(f"{out_dir} already exists -> choose another --out, or pass --force to replace it")
    if out_dir.is_symlink() or not out_dir.is_dir() or (not is_ctsgen_pack(out_dir) and any(out_dir.iterdir())):
        raise PackExistsError(f"{out_dir} is not a ctsgen pack (no manifest.json written by ctsgen), so --force "
                              "will not replace it -> choose another --out, or move it away yourself")
    foreign = foreign_files(out_dir)
    if foreign:
        more = f" and {len(foreign) - 1} more" if len(foreign) > 1 else ""
        raise PackExistsError(f"{out_dir / foreign[0]}{more}: not written by ctsgen for this pack, so --force will "
                              f"not delete it with the pack -> move it out of {out_dir}, or choose another --out")


def _dump(obj: Any) -> str:
    return json.dumps(obj, indent=1, sort_keys=True) + "\n"


def variant_record(family: str, v: Variant, spirv: bytes, route: str = DEFAULT_ROUTE) -> dict[str, Any]:
    """The manifest entry of one shader variant (``route``: the compiler route that made ``spirv``,
    :mod:`ctsgen.toolchain.routes`)."""
    return {
        "family": family,
        "route": route,
        "signature": v.to_json(),
        "glsl": f"shaders/{v.id}.comp",
        "spirv": f"shaders/{v.id}.spv",
        "spirv_sha256": hashlib.sha256(spirv).hexdigest(),
        "local_size_x": v.local_size_x,
        "buffers": [{"binding": b.binding, "name": b.name, "dtype": b.dtype} for b in v.buffers()],
        "requirements": {
            "extensions": list(v.requirements().extensions),
            "features": list(v.requirements().features),
        },
    }


def case_record(case: Case, v: Variant, d: CaseData, data_files: dict[str, str]) -> dict[str, Any]:
    """The case file: parameters in spec vocabulary plus what a consumer needs to run it
    (``d``: the case's data, computed once by the caller)."""
    rec = {
        "name": case.name(),
        "family": case.family,
        "variant": v.id,
        "parameters": case.to_json(),
        "param_words": [int(x) for x in d.params],
        "compare": case.compare_rule().to_json(),
        "files": data_files,
        # what each buffer holds, so a reader can refuse a truncated or swapped array
        "elements": {spec.name: int(np.asarray(a).size) for spec, a in zip(v.buffers(), d.initial)},
    }
    describe = getattr(case, "describe", None)
    if describe is not None:
        rec["state"] = describe()
    return rec


def write_pack(cases: Sequence[Case], out_dir: Path, *, header: dict[str, Any],
               require_validator: bool = True, overwrite: bool = False,
               progress: Callable[[int, int], None] | None = None,
               extra_files: dict[str, str | bytes] | None = None, jobs: int = 1,
               times: Breakdown | None = None, route: str = DEFAULT_ROUTE) -> Path:
    """Write ``cases`` as a pack at ``out_dir``; returns ``out_dir``.

    ``header`` goes into the manifest (seed, options, toolchain versions).
    Each variant is compiled and validated once, by
    :func:`~ctsgen.toolchain.variants.compile_variant` (``require_validator=False``:
    a missing validator is not an error, e.g. a repro written on a GPU host).
    ``extra_files`` (relative path -> content) are written beside the
    manifest before the pack is published, e.g. a repro's report.
    ``jobs``: worker processes; ``times`` receives the per-stage seconds; ``route``: the compiler
    route every variant is compiled along (each variant's record names it).
    """
    out_dir = Path(out_dir)
    with out_lock(out_dir):
        check_replaceable(out_dir, overwrite)
        remove_stale(out_dir)
        try:
            tmp = Path(tempfile.mkdtemp(prefix=temp_prefix(out_dir), dir=out_dir.parent))
            follow_umask(tmp)
            _write_into(tmp, cases, header, require_validator, progress, jobs,
                        times if times is not None else Breakdown(), extra_files or {}, route)
            for rel, content in (extra_files or {}).items():
                target = tmp / rel
                if isinstance(content, bytes):
                    target.write_bytes(content)
                else:
                    target.write_text(content)
            _publish(tmp, out_dir)
        except BaseException:  # a signal may land before ``tmp`` is bound: remove what this process made
            for mine in out_dir.parent.glob(glob.escape(temp_prefix(out_dir)) + "*"):
                shutil.rmtree(mine, ignore_errors=True)
            raise
    return out_dir


def _write_into(root: Path, cases: Sequence[Case], header: dict[str, Any], require_validator: bool,
                progress: Callable[[int, int], None] | None, jobs: int, times: Breakdown,
                extra_files: dict[str, str | bytes], route: str) -> None:
    (root / "shaders").mkdir()
    (root / "cases").mkdir()
    groups: dict[str, list[tuple[int, Case]]] = {}  # variant id -> (case index, case), first-seen order
    for n, case in enumerate(cases):
        groups.setdefault(case.variant().id, []).append((n, case))
    work = [(root, group, require_validator, route) for group in groups.values()]
    variants: dict[str, dict[str, Any]] = {}
    entries: list[dict[str, Any] | None] = [None] * len(cases)
    done = 0

    def collect(result: tuple[str, dict[str, Any], list[tuple[int, dict[str, Any]]], dict[str, float]]) -> None:
        nonlocal done
        vid, record, written, seconds = result
        variants[vid] = record
        for n, entry in written:
            entries[n] = entry
        times.merge(seconds)
        done += len(written)
        if progress:
            progress(done, len(cases))

    if jobs > 1 and len(work) > 1:
        with worker_pool(min(jobs, len(work))) as pool:
            for result in in_order(pool, _write_variant, work, max(1, len(work) // (8 * jobs))):
                collect(result)
    else:
        for w in work:
            collect(_write_variant(w))
    manifest = {"format": FORMAT, "format_version": FORMAT_VERSION,
                "generator": generator_record(),
                **header, "variants": variants, "cases": entries}
    if extra_files:
        manifest["extra_files"] = sorted(extra_files)
    with times.stage("write"):
        (root / "manifest.json").write_text(_dump(manifest))


def _write_variant(work: tuple[Path, list[tuple[int, Case]], bool, str]
                   ) -> tuple[str, dict[str, Any], list[tuple[int, dict[str, Any]]], dict[str, float]]:
    """Compile, validate and write one variant and its cases (a top-level function: it runs
    in worker processes). Returns the variant's id and manifest record, each case's index
    and manifest entry, and the seconds per stage."""
    root, group, require_validator, route = work
    times = Breakdown()
    first = group[0][1]
    v = first.variant()
    validator = get_family(first.family).validator or SPIRV_VAL
    try:
        with times.stage("compile"):
            glsl = v.glsl()
        spirv = compile_variant(v, first.family, validation="required" if require_validator else "if-installed",
                                validator=validator, times=times, route=route).spirv
    except ToolchainFinding as exc:
        raise VariantBuildError(f"shader variant {v.id} ({first.family}) along route {route}: toolchain finding, "
                                f"{exc.stage} ({exc.kind}): {_first_line(exc)} -> the route's toolchain is at fault: 'ctsgen fuzz --route {route}' writes it as a "
                                "reduced repro; generate along another --route") from None
    except (GlslCompileError, SpirvValidationError) as exc:
        raise VariantBuildError(f"shader variant {v.id} ({first.family}) is invalid: {_first_line(exc)} -> "
                                "check the --profile's limits, or report the family's shader as a ctsgen "
                                "bug") from None
    with times.stage("write"):
        (root / "shaders" / f"{v.id}.comp").write_text(glsl)
        (root / "shaders" / f"{v.id}.spv").write_bytes(spirv)
    record = {**variant_record(first.family, v, spirv, route), "validator": validator.name}
    written = []
    for n, case in group:
        with times.stage("data+oracle"):
            d = case.data()
        with times.stage("write"):
            written.append((n, _write_case(root, case, v, d)))
    return v.id, record, written, times.seconds


def _write_case(root: Path, case: Case, v: Variant, d: CaseData) -> dict[str, Any]:
    """Write one case's directory; return its manifest entry."""
    name = case.name()
    case_dir = root / "cases" / name
    case_dir.mkdir()
    files: dict[str, str] = {}
    tolerance = d.tolerance or [None] * len(d.expected)
    for spec, initial, expected, tol in zip(v.buffers(), d.initial, d.expected, tolerance):
        if tol is not None:
            files[f"{spec.name}.tolerance"] = f"cases/{name}/{spec.name}.tolerance.npy"
            save_array(case_dir / f"{spec.name}.tolerance.npy", np.asarray(tol, dtype=np.float64))
        files[f"{spec.name}.initial"] = f"cases/{name}/{spec.name}.initial.npy"
        save_array(case_dir / f"{spec.name}.initial.npy", initial)
        if expected is not None:
            files[f"{spec.name}.expected"] = f"cases/{name}/{spec.name}.expected.npy"
            save_array(case_dir / f"{spec.name}.expected.npy", expected)
    (case_dir / "case.json").write_text(_dump(case_record(case, v, d, files)))
    entry = {"name": name, "family": case.family, "variant": v.id, "case": f"cases/{name}/case.json"}
    hazards = getattr(case, "hazards", lambda: [])()
    if hazards:
        entry["group"] = "hazardous"
        entry["hazards"] = hazards
    return entry


def _publish(tmp: Path, out_dir: Path) -> None:
    """Rename the finished pack into place. An old pack is moved aside first and checked again
    there, at the moment it is replaced: a file that appeared in it while the new pack was compiled
    and written (a user's note, the results of a run) is no file ctsgen wrote, so the old pack is
    put back and the new one refused, as before drawing (:func:`check_replaceable`). Of the old
    pack only the files its manifest lists are then deleted."""
    if not out_dir.exists() and not out_dir.is_symlink():
        os.replace(tmp, out_dir)
        return
    old = out_dir.with_name(f".{out_dir.name}.old-{os.getpid()}")
    os.replace(out_dir, old)
    foreign = foreign_files(old)
    if foreign:
        os.replace(old, out_dir)
        more = f" and {len(foreign) - 1} more" if len(foreign) > 1 else ""
        raise PackExistsError(f"{out_dir / foreign[0]}{more}: appeared while the new pack was made, not written "
                              f"by ctsgen, so --force will not delete it with the pack -> move it out of {out_dir} "
                              "and generate again")
    os.replace(tmp, out_dir)
    _remove_owned(old, out_dir)


def _remove_owned(old: Path, out_dir: Path) -> None:
    """Delete what the old pack's manifest lists, then its empty folders; a file that appeared in
    it since it was checked is moved into the new pack at the same place (never deleted)."""
    owned = owned_files(old)
    for dirpath, _, filenames in os.walk(old, topdown=False):
        for name in filenames:
            path = Path(dirpath, name)
            rel = os.path.relpath(path, old)
            if rel in owned:
                path.unlink()
            elif not (out_dir / rel).exists():
                (out_dir / rel).parent.mkdir(parents=True, exist_ok=True)
                os.replace(path, out_dir / rel)
        try:
            os.rmdir(dirpath)
        except OSError:
            pass  # something stays in it: never deleted
