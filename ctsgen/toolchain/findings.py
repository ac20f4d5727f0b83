"""A toolchain finding written as a repro folder: the modules, the reduced module, REPORT.md.

A route's optimizer or word patch made a module the validator rejects, or failed on a module it
was given (:class:`~ctsgen.toolchain.routes.ToolchainFinding`). The folder holds the variant's
GLSL (``source.comp``), the producer's module (``produced.spv``, valid: the route's input), the
module the validator rejected (``output.spv``), ``interesting.py`` and, where ``spirv-reduce``
finished within its bound, ``reduced.spv``: the smallest input it found whose route output
``spirv-val --target-env vulkan1.3`` still rejects with the same message (numbers and quoted
names aside: the ids change as the module shrinks), or on which the optimizer still fails the
same way. spirv-reduce keeps every candidate valid, so it reduces the route's input, never the
invalid output (GraphicsFuzz's way of reducing an optimizer bug).
"""

from __future__ import annotations

import hashlib
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

from ctsgen.toolchain import spirv_opt, spirv_val
from ctsgen.toolchain.errors import SpirvValidationError, ToolchainError
from ctsgen.toolchain.routes import SLANG, ToolchainFinding, get_route
from ctsgen.toolchain.spirv_opt import OptimizerError

#: spirv-reduce's bounds: steps, and seconds of the whole reduction (each step runs the route and
#: the validator, ~20 ms); a reduction cut short leaves the unreduced modules and says so.
STEP_LIMIT = 500
REDUCE_S = 60.0
TARGET_ENV = "vulkan1.3"
_NUMBER = re.compile(r"\d+")
_QUOTED = re.compile(r"'[^']*'")


def message_key(messages: str) -> str:
    """The first error line of a validator's or optimizer's messages, with numbers and quoted names
    blanked: what must stay the same while the module is reduced."""
    lines = [ln.strip() for ln in messages.splitlines() if ln.strip()]
    first = next((ln for ln in lines if ln.lower().startswith("error")), lines[0] if lines else "")
    return _QUOTED.sub("'_'", _NUMBER.sub("N", first))


def route_failure(route_name: str, module: bytes) -> str | None:
    """The message key of how ``route_name`` fails on ``module`` (its optimizer's error, or
    spirv-val's rejection of its output), or None when it makes a valid module."""
    route = get_route(route_name)
    try:
        out = route.transform(module)
    except OptimizerError as exc:
        return f"{exc.kind}: {message_key(exc.messages)}"
    try:
        spirv_val.validate(out, TARGET_ENV)
    except SpirvValidationError as exc:
        return f"invalid: {message_key(exc.messages)}"
    return None


def _interesting_script(route: str, key: str) -> str:
    root = Path(__file__).resolve().parents[2]
    return (f"#!{sys.executable}\n"
            "# spirv-reduce's interestingness test: exit 0 when the route still fails the same way on the module\n"
            "import sys\n"
            f"sys.path.insert(0, {str(root)!r})\n"
            "from pathlib import Path\n"
            "from ctsgen.toolchain.findings import route_failure\n"
            f"sys.exit(0 if route_failure({route!r}, Path(sys.argv[-1]).read_bytes()) == {key!r} else 1)\n")


def reduce_command(folder: Path) -> list[str]:
    """The spirv-reduce command line a finding's folder records and runs."""
    return [str(spirv_val.tool_path("spirv-reduce", "the SPIR-V reducer")), "produced.spv", "-o", "reduced.spv",
            f"--step-limit={STEP_LIMIT}", "--temp-file-prefix=reduce-tmp/step", "--", "./interesting.py"]


def source_name(finding: ToolchainFinding) -> str:
    """The variant's source as its route's producer read it: ``source.slang`` along Slang, else GLSL."""
    return "source.slang" if get_route(finding.route).producer == SLANG else "source.comp"


def write_finding(finding: ToolchainFinding, out_dir: Path, reduce_s: float = REDUCE_S) -> Path:
    """Write ``finding`` as a repro folder under ``out_dir``; returns the folder. The same finding
    (route and input module) goes to the same folder, written again."""
    digest = hashlib.sha256(finding.route.encode() + finding.produced).hexdigest()[:12]
    folder = Path(out_dir) / f"toolchain-{finding.route}-{digest}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / source_name(finding)).write_text(finding.glsl)
    (folder / "produced.spv").write_bytes(finding.produced)
    if finding.output is not None:
        (folder / "output.spv").write_bytes(finding.output)
    key = route_failure(finding.route, finding.produced) if finding.kind != "hang" else None
    reduced = "not tried: a hang is not reduced (each step would wait for the bound)" if finding.kind == "hang" \
        else "not tried: spirv-val --target-env vulkan1.3 accepts the route's output (only the in-process " \
             "validator rejected it)" if key is None else _reduce(folder, finding.route, key, reduce_s)
    (folder / "REPORT.md").write_text(_report(finding, folder, key, reduced))
    return folder


def _reduce(folder: Path, route: str, key: str, reduce_s: float) -> str:
    """Run spirv-reduce in ``folder``; what came of it, for REPORT.md."""
    script = folder / "interesting.py"
    script.write_text(_interesting_script(route, key))
    script.chmod(0o755)
    (folder / "reduce-tmp").mkdir(exist_ok=True)
    try:
        argv = reduce_command(folder)
    except ToolchainError as exc:
        return f"not run: {exc}"
    try:
        done = subprocess.run(argv, cwd=folder, capture_output=True, text=True, timeout=reduce_s, check=False)
    except subprocess.TimeoutExpired:
        return f"cut short after {reduce_s:g} s: produced.spv is the smallest input kept"
    finally:
        for tmp in (folder / "reduce-tmp").glob("*"):
            tmp.unlink()
        (folder / "reduce-tmp").rmdir()
    out = folder / "reduced.spv"
    if done.returncode != 0 or not out.is_file():
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["(no message)"]
        return f"spirv-reduce exit {done.returncode}: {tail[0]}"
    before, after = (folder / "produced.spv").stat().st_size // 4, out.stat().st_size // 4
    return f"reduced.spv: {after} words (from {before})"


def _report(finding: ToolchainFinding, folder: Path, key: str | None, reduced: str) -> str:
    route = get_route(finding.route)
    val = str(spirv_val.tool_path("spirv-val", "the SPIR-V validator"))
    if route.passes:
        transform = shlex.join(spirv_opt.command(route.passes, "produced.spv", "output.spv"))
    else:
        transform = (f"{shlex.quote(sys.executable)} -c \"import sys; sys.path.insert(0, "
                     f"{str(Path(__file__).resolve().parents[2])!r}); from pathlib import Path; "
                     f"from ctsgen.toolchain.routes import get_route; Path('output.spv').write_bytes("
                     f"get_route({finding.route!r}).transform(Path('produced.spv').read_bytes()))\"")
    lines = [
        f"# Toolchain finding: route {finding.route}, {finding.family} variant {finding.variant_id}", "",
        f"- route: `{finding.route}`: {route.description}",
        f"- recipe: {route.recipe}",
        f"- stage: {finding.stage} ({finding.kind})",
        f"- message: `{message_key(finding.messages) or '(none)'}`",
        f"- reduction: {reduced}", "",
        "## Files", "",
        f"- `{source_name(finding)}`: the variant's source; `produced.spv`: the route's producer's module "
        "(valid; the input of the route's transforms)",
        "- `output.spv`: the module the validator rejected" if finding.output is not None else
        "- no `output.spv`: the transform made none",
        "- `interesting.py`: spirv-reduce's test (the route still fails the same way on its argument)"
        if key is not None else "", "",
        "## Commands (run in this folder)", "", "```",
        transform,
        f"{shlex.quote(val)} --target-env {TARGET_ENV} output.spv",
    ]
    if key is not None:
        lines += [shlex.join(reduce_command(folder)),
                  "# the reduced input through the route, then the validator:",
                  transform.replace("produced.spv", "reduced.spv").replace("output.spv", "reduced-output.spv"),
                  f"{shlex.quote(val)} --target-env {TARGET_ENV} reduced-output.spv"]
    lines += ["```", "", "## Messages", "", "```", finding.messages.strip() or "(none)", "```", ""]
    return "\n".join(lines) + "\n"
