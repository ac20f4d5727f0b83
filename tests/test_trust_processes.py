"""Errors cross process boundaries, and no worker's failure or signal leaves ``generate`` hanging.

A compile error in a ``generate`` worker could not be pickled back to the parent: the pool's
result thread died and the command waited for good. Each test here failed (or hung) before
its fix.
"""

from __future__ import annotations

import importlib
import inspect
import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import ctsgen
from ctsgen.errors import CtsgenError

REPO = Path(__file__).resolve().parents[1]


def _every_error() -> list[type[CtsgenError]]:
    for path in sorted(Path(ctsgen.__file__).parent.rglob("*.py")):
        rel = path.relative_to(REPO).with_suffix("")
        if "tests" in rel.parts or rel.name == "__main__":
            continue
        importlib.import_module(".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts))
    seen, todo = [], [CtsgenError]
    while todo:
        cls = todo.pop()
        if cls not in seen:
            seen.append(cls)
            todo.extend(cls.__subclasses__())
    return seen


def _instance(cls: type[CtsgenError]) -> CtsgenError:
    """An instance built as its raisers build it: a string or a number for each parameter."""
    params = [p for p in inspect.signature(cls.__init__).parameters.values()
              if p.name != "self" and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
              and p.default is p.empty]
    keywords = {p.name: f"{p.name} text" for p in inspect.signature(cls.__init__).parameters.values()
                if p.kind is p.KEYWORD_ONLY and p.default is p.empty}  # ToolchainFinding's route, family, ...
    if not params:
        return cls("what is wrong -> the fix", **keywords)
    args = [1.5 if p.annotation in ("float", float) else f"{p.name} text" for p in params]
    return cls(*args, **keywords)


def test_every_ctsgen_error_survives_a_pickle_round_trip() -> None:
    errors = _every_error()
    assert len(errors) >= 20  # the toolchain's (GlslCompileError...), the pack's, the backends'...
    broken = []
    for cls in errors:
        exc = _instance(cls)
        try:
            back = pickle.loads(pickle.dumps(exc))
        except Exception as e:  # noqa: BLE001 (the failure is what the test reports)
            broken.append(f"{cls.__qualname__}: {type(e).__name__}: {e}")
            continue
        if type(back) is not cls or str(back) != str(exc) or vars(back) != vars(exc):
            broken.append(f"{cls.__qualname__}: came back as {type(back).__name__} {str(back)!r} {vars(back)}")
    assert broken == []


_GENERATE = """
import sys
from ctsgen.cli import main
import ctsgen.toolchain.variants as w
from ctsgen.toolchain.errors import GlslCompileError

class Odd(Exception):
    def __init__(self, a, b):
        super().__init__(f"{{a}}/{{b}}")

def refuse(v, *a, **k):
    {body}

w.variant_spirv = refuse
sys.exit(main(["generate", "--count", "24", "--seed", "1", "--jobs", "2", "--out", sys.argv[1]]))
"""


def _generate_in_a_child(tmp_path: Path, body: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", _GENERATE.format(body=body), str(tmp_path / "out")],
                            cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.slow
def test_a_worker_that_cannot_compile_ends_generate_with_one_line_naming_the_variant(tmp_path: Path) -> None:
    child = _generate_in_a_child(
        tmp_path, 'raise GlslCompileError("glslang could not compile " + v.id + ".comp (status 1):\\n"'
                  '"  ERROR: x.comp:3: bad\\n    3 | int x", "ERROR: x.comp:3: bad")')
    try:
        out, err = child.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        child.kill()
        pytest.fail("generate hung after a worker's compile error")
    lines = [ln for ln in err.splitlines() if ln.startswith("ctsgen")]  # beside the progress lines
    assert child.returncode == 2, err
    assert "Traceback" not in err
    assert len(lines) == 1 and lines[0].startswith("ctsgen: error: shader variant tensor_layout."), lines
    assert "ERROR: x.comp:3: bad" in lines[0] and " -> " in lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == [], "no .lock or .tmp left behind"


@pytest.mark.slow
def test_a_worker_error_that_cannot_be_unpickled_still_ends_generate(tmp_path: Path) -> None:
    """Not a ctsgen error: an exception whose constructor takes other parameters than its args."""
    child = _generate_in_a_child(tmp_path, "raise Odd('x', 'y')")
    try:
        out, err = child.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        child.kill()
        pytest.fail("generate hung after a worker's unpicklable error")
    lines = [ln for ln in err.splitlines() if ln.startswith("ctsgen")]
    assert child.returncode == 2 and "Traceback" not in err, err
    assert lines == ["ctsgen: error: a worker process failed with Odd: x/y -> a ctsgen bug: report it with the "
                     "command that gave it"]


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_signal_ends_generate_whose_workers_are_busy_within_seconds(tmp_path: Path, sig: int) -> None:
    child = _generate_in_a_child(tmp_path, "import time; time.sleep(600)")
    try:
        time.sleep(6)  # the workers are asleep in their first variant by now
        assert child.poll() is None, child.communicate()
        child.send_signal(sig)
        t0 = time.monotonic()
        out, err = child.communicate(timeout=20)
    finally:
        child.kill()
    assert time.monotonic() - t0 < 10
    assert child.returncode == 128 + sig, err
    assert err.strip().splitlines()[-1].startswith("ctsgen: interrupted"), err
    assert sorted(p.name for p in tmp_path.iterdir()) == []
