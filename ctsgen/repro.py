"""Standalone repros: one case out of a pack, ready for a bug report.

A repro directory is a one-case pack (``ctsgen run REPRO --backend B``
replays it) plus ``repro.comp``/``repro.spv``, the shader with every
run-time parameter baked in as constants (bind the case's .npy buffers at
bindings 1..n and dispatch one workgroup), and ``REPORT.md``: the
parameters in the spec's vocabulary, the first wrong elements when a
results file says the case failed, and the commands that replay it. For a
Fail of a family with intermediates (cm2-program) and the failing backend at
hand, REPORT.md also names the first differing node found by a debug re-run
(``debug.comp``, :mod:`ctsgen.runner.debug_run`).
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ctsgen.backends.base import Backend
from ctsgen.backends.supervise import WORKER_LAUNCHER_ENV
from ctsgen.families import get_family
from ctsgen.core.family import Case
from ctsgen.pack.lock import OutputLockedError
from ctsgen.pack.read import Pack, PackError
from ctsgen.pack.write import write_pack
from ctsgen.results.results_file import case_record
from ctsgen.runner.debug_run import DebugRun, debug_rerun
from ctsgen.core.verdict import CaseResult, Status
from ctsgen.toolchain import toolchain_versions
from ctsgen.toolchain.variants import compile_variant


def _bullets(obj: dict[str, Any]) -> list[str]:
    return [f"- `{k}`: `{json.dumps(obj[k], sort_keys=True)}`" for k in sorted(obj)]


def ctsgen_command() -> list[str]:
    """How this ctsgen was started, as the words of a line a user pastes: through the launcher it
    runs under (``CTSGEN_WORKER_LAUNCHER``, a command line that lavapipe's ``PREFIX/run`` exports;
    the launcher takes the interpreter: docs/lavapipe.md), else plain ``ctsgen``."""
    launcher = shlex.split(os.environ.get(WORKER_LAUNCHER_ENV, ""))
    return [*launcher, "python", "-m", "ctsgen"] if launcher else ["ctsgen"]


def replay_command(out_dir: Path, backend: str, expect_deviations: Sequence[str] = (),
                   build_budget_s: float | None = None) -> str:
    """The ``ctsgen run`` line that replays a repro as it was judged (with its expected deviations, and
    the session's ``--build-budget`` where it set one: a BuildTimeout replays only under its budget),
    through the launcher ctsgen runs under (:func:`ctsgen_command`), every word shell-quoted."""
    budget = [] if build_budget_s is None else ["--build-budget", f"{build_budget_s:g}"]
    return shlex.join([*ctsgen_command(), "run", str(out_dir), "--backend", backend,
                       *(arg for name in expect_deviations for arg in ("--expect-deviation", name)), *budget])


def debug_section(run: DebugRun, glsl: str, backend: str) -> list[str]:
    """REPORT.md's node-by-node section: the computation as readable lines, the first differing
    node the debug re-run found, and the repro's GLSL."""
    return ["## Node by node", "", "```", *run.listing, "```", "",
            f"Debug re-run on `{backend}` (`debug.comp`: the same shader storing every node's value to "
            "a debug buffer), compared with the oracle node by node:", "", f"**{run.line()}**", "",
            "The shader (`repro.comp`, every parameter baked in):", "", "```glsl", glsl.rstrip("\n"), "```", ""]


def report_text(case: Case, state: dict[str, Any] | None, failure: dict[str, Any] | None, out_dir: Path,
                backend: str = "vulkan", expect_deviations: Sequence[str] = (),
                debug: list[str] | None = None, build_budget_s: float | None = None) -> str:
    """REPORT.md for ``case`` (``debug``: the node-by-node section, :func:`debug_section`;
    ``build_budget_s``: as in :func:`replay_command`)."""
    v = case.variant()
    params = {k: val for k, val in case.to_json().items() if k not in ("variant", "family")}
    lines = [f"# ctsgen repro: {case.name()}", "",
             f"Shader variant `{v.id}` (compile-time signature):", "", *_bullets(v.to_json()), "",
             "Run-time parameters, in the spec's vocabulary (null: the instruction is not executed):", "",
             *_bullets(params), ""]
    if state:
        lines += ["State the oracle used:", "", *_bullets(state), ""]
    if failure:
        lines += [f"Observed: **{failure.get('status')}**: {failure.get('detail', '')}", ""]
        mism = failure.get("mismatches") or []
        if mism:
            keys = [k for k in ("buffer", "element", "row", "col", "tensorCoord", "tensorElement", "storedBy")
                    if any(k in m for m in mism)]
            lines += ["| " + " | ".join(keys + ["expected", "actual"]) + " |",
                      "|" + "---|" * (len(keys) + 2)]
            for m in mism:
                cells = [str(m.get(k, "")) for k in keys]
                cells += [f"{m['expected']['value']} ({m['expected']['bits']})" if m.get("expected") else "",
                          f"{m['actual']['value']} ({m['actual']['bits']})" if m.get("actual") else ""]
                lines.append("| " + " | ".join(cells) + " |")
            lines.append("")
    lines += debug or []
    lines += ["Replay:", "", "```sh", replay_command(out_dir, backend, expect_deviations, build_budget_s), "```", "",
              "Or without ctsgen: `repro.spv` has every parameter baked in; bind "
              "`cases/*/<buffer>.initial.npy` at bindings 1..n (binding 0 is unused), dispatch one "
              "workgroup and compare with `<buffer>.expected.npy` (docs/pack-format.md).", ""]
    return "\n".join(lines)


def export_case(case: Case, out_dir: Path, *, failure: dict[str, Any] | None = None,
                origin: dict[str, Any] | None = None, backend: str = "vulkan", overwrite: bool = False,
                expect_deviations: Sequence[str] = (), debug_backend: Backend | None = None,
                final_dir: Path | None = None, build_budget_s: float | None = None) -> Path:
    """Write the standalone repro of ``case`` (with the observed ``failure``
    record, as in a results file, when there is one) to ``out_dir``. The repro's
    expected buffers are the spec's; ``expect_deviations`` (the session's
    ``--expect-deviation`` names) go into REPORT.md's replay line, which names
    ``final_dir`` when the repro is written aside and then moved there.

    ``debug_backend``: the backend that failed, still open. For a Fail of a family that
    declares intermediates (cm2-program) the case's debug variant runs on it once
    (:func:`ctsgen.runner.debug_run.debug_rerun`) and REPORT.md names the first differing
    node; the debug shader is written as ``debug.comp``."""
    v = case.variant()
    baked = [0] * len(v.buffers()) + [int(w) for w in case.data().params]
    glsl = v.glsl(baked)
    # a repro is written where the failure was found, maybe a GPU host without a validator
    spirv = compile_variant(v, case.family, baked=baked, validation="if-installed",
                            validator=get_family(case.family).validator).spirv
    describe = getattr(case, "describe", None)
    versions = toolchain_versions(required=False)
    header = {"seed": None, "count": 1, "families": [case.family], "repro_of": origin or {},
              "toolchain": {k: v for k, v in versions.items() if not k.endswith("_path")}}
    extra: dict[str, Any] = {"repro.comp": glsl, "repro.spv": spirv}
    debug = None
    if debug_backend is not None and failure is not None and failure.get("status") == Status.Fail.value:
        run = debug_rerun(get_family(case.family), case, debug_backend, expect_deviations)
        if run is not None:
            extra["debug.comp"] = run.glsl
            debug = debug_section(run, glsl, backend)
    extra["REPORT.md"] = report_text(case, describe() if describe else None, failure, final_dir or out_dir,
                                     backend, expect_deviations, debug, build_budget_s)
    return write_pack([case], out_dir, header=header, require_validator=False, overwrite=overwrite,
                      extra_files=extra)


def export_repro(pack: Pack, name: str, out_dir: Path, *, results: Path | None = None,
                 overwrite: bool = False, backend: str = "vulkan", debug_backend: Backend | None = None) -> Path:
    """Write the repro of case ``name`` of ``pack`` to ``out_dir`` (``debug_backend``: as in
    :func:`export_case`)."""
    source, target = Path(pack.root).resolve(), Path(out_dir).resolve()
    if not target.name:
        raise PackError(f"--out {out_dir}: a filesystem root cannot be an output directory -> name a directory "
                        "below it, e.g. --out ./repro")
    if target == source or source in target.parents:
        raise PackError(f"--out {out_dir}: the repro would be written over or inside its source pack {pack.root} "
                        "-> choose a directory outside the pack")
    if target in source.parents:
        raise PackError(f"--out {out_dir}: holds the source pack {pack.root}, which replacing it would delete -> "
                        "choose a directory outside the pack")
    match = [c for c in pack.cases if c.name == name]
    if not match:
        raise PackError(f"{pack.root}: no case named {name!r} -> use a case name listed in its manifest.json")
    record = match[0].record
    case = get_family(record["family"]).case_from_json(record["parameters"])
    failure = None if results is None else case_record(results, name)
    if results is not None and failure is None:  # before --out is written: a REPORT.md without the verdict asked for
        raise PackError(f"--results {results}: holds no record of case {name} -> name the results file of the run "
                        "in which it failed, or leave --results out")
    return export_case(case, out_dir, failure=failure,
                       origin={"pack": str(pack.root), "case": name}, overwrite=overwrite, backend=backend,
                       debug_backend=debug_backend)


def export_failures(failures: Sequence[tuple[Case, CaseResult]], repro_dir: Path, *, backend: str,
                    origin: dict[str, Any], expect_deviations: Sequence[str] = (),
                    debug_backend: Backend | None = None, build_budget_s: float | None = None) -> list[Path]:
    """The repro of each failure a fuzz session found, written to ``repro_dir/CASE`` (replaced: a
    fuzzer re-finding a case rewrites its repro), in order; ``debug_backend`` as in
    :func:`export_case`. A repro directory another fuzz worker holds (workers sharing ``repro_dir``
    found the same case: its name carries its hash) is left to that worker, and listed all the same."""
    out = []
    for case, result in failures:
        target = Path(repro_dir) / case.name()
        try:
            export_case(case, target, failure=result.to_json(), backend=backend, overwrite=True, origin=origin,
                        expect_deviations=expect_deviations, debug_backend=debug_backend,
                        build_budget_s=build_budget_s)
        except OutputLockedError:
            pass
        out.append(target)
    return out
