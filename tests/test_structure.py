"""The seams between ctsgen's parts, checked on the source: every rule docs/architecture.md states.

Each rule (``tests/structure.py``) holds on the real tree, and is proven to bite: a test plants one
violation in a copy of the tree and the rule names it. Also:

* The pytest plugin does not import the command line, even indirectly.
* Every ctsgen ``*Error`` derives from the one base, :class:`ctsgen.errors.CtsgenError`.
"""

from __future__ import annotations

import ast
import importlib
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

import ctsgen
from ctsgen.core.mutant import Mutant
from ctsgen.errors import CtsgenError
from ctsgen.mutants.catalogue import catalogue
from tests.structure import (Source, backend_family_reaches, backend_name_tests, backend_names,
                             command_line_importers, core_reaches, family_imports,
                             family_names_outside_their_family, import_cycles, local_import_reasons,
                             local_imports_without_a_reason, mutant_target_escapes, ops_family_reaches,
                             private_reaches, root_imports_above_the_bottom, signal_installs, upward_imports)

REAL = Source(Path(ctsgen.__file__).parent)

@pytest.fixture
def plant(tmp_path: Path) -> Callable[[str, str], Source]:
    """``plant(path, code)``: a copy of ctsgen's source (tests left out) with ``code`` appended to
    ``path`` (a new file where there is none), as a :class:`Source`."""
    root = tmp_path / "ctsgen"
    shutil.copytree(REAL.root, root, ignore=shutil.ignore_patterns("tests", "__pycache__", "*.pyc"))

    def planted(path: str, code: str) -> Source:
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text((target.read_text() if target.exists() else "") + "\n" + code + "\n")
        return Source(root)

    return planted


def test_the_import_graph_sees_every_kind_of_import() -> None:
    """The checker itself: the kinds of import a cycle or an upward reach can hide behind are edges."""
    assert "ctsgen.mutants.deviations" in REAL.imports("ctsgen.results.expectations")  # inside a function
    assert "ctsgen.core.family" in REAL.imports("ctsgen.toolchain.variants")  # under TYPE_CHECKING
    assert "ctsgen.core" in REAL.imports("ctsgen.runner.run")  # the package an import runs
    assert "ctsgen.core.verdict" in REAL.imports("ctsgen.runner.run")  # a from-import
    assert "ctsgen" not in REAL.imports("ctsgen.toolchain.variants")  # `from ctsgen import toolchain`: a module
    assert "ctsgen.testing" in REAL.imports("ctsgen")  # the root's lazy re-export
    assert not any("ctsgen" in REAL.imports(m) for m in REAL.modules if m != "ctsgen.__main__")


# --- the layers -----------------------------------------------------------------------------------

def test_every_import_runs_down_the_layers() -> None:
    assert upward_imports(REAL) == []


@pytest.mark.parametrize("path, code, found", [
    ("core/verdict.py", "from ctsgen.runner.run import run_pack", "ctsgen.core.verdict -> ctsgen.runner.run"),
    ("ops/cm2.py", "from ctsgen import check_case", "ctsgen.ops.cm2 -> ctsgen"),
    ("core/shader.py", "import ctsgen", "ctsgen.core.shader -> ctsgen"),
    ("model/types.py", "def f():\n    from ..device import profile", "ctsgen.model.types -> ctsgen.device.profile"),
])
def test_an_upward_import_is_found(plant, path: str, code: str, found: str) -> None:
    assert found in upward_imports(plant(path, code))


def test_the_root_package_imports_only_the_bottom_at_module_level(plant) -> None:
    """It runs before every ctsgen module: anything it imported eagerly would load for all of them."""
    assert root_imports_above_the_bottom(REAL) == []
    assert "ctsgen -> ctsgen.testing" in root_imports_above_the_bottom(plant("__init__.py", "from ctsgen import testing"))


def test_the_root_package_is_the_public_face() -> None:
    from ctsgen import testing, version

    assert (ctsgen.check_case, ctsgen.given_cases) == (testing.check_case, testing.given_cases)
    assert ctsgen.__version__ == version.__version__
    with pytest.raises(AttributeError, match="module 'ctsgen' has no attribute 'run_cases'"):
        ctsgen.run_cases  # noqa: B018 - the seams are imported from where they are defined


def test_no_import_cycles_among_ctsgen_modules(plant) -> None:
    assert import_cycles(REAL) == []
    plant("errors.py", "def f():\n    from . import signals")
    planted = plant("signals.py", "from ctsgen.errors import CtsgenError")
    assert ["ctsgen.errors", "ctsgen.signals"] in import_cycles(planted)


def test_no_module_uses_another_modules_private_names(plant) -> None:
    assert private_reaches(REAL) == []
    planted = plant("execute/run.py", "from ..signals import _private\nfrom ctsgen import timing\ntiming._x()")
    assert {"ctsgen.execute.run: from ctsgen.signals import _private",
            "ctsgen.execute.run: ctsgen.timing._x"} <= set(private_reaches(planted))


# --- the four rules that sharpen the layers, and the command line -----------------------------------

def test_no_family_imports_another_family() -> None:
    """A family imports the contract, the registry and what lives below the families (ops/, model/,
    oracle/, strategies/), never another family (docs/architecture.md): case models several
    families build on live in ops/, with no exception."""
    assert family_imports(REAL) == set()


@pytest.mark.parametrize("path, code", [
    ("families/cm2_gemm/case.py", "from ..cm2_reduce.case import ReduceCase"),
    ("families/cm2_gemm/strategy.py", "from .. import cm2_reduce"),
    ("families/cm2_gemm/case.py", "def f():\n    import ctsgen.families.cm2_reduce.case"),
    ("families/cm2_gemm/tests/test_planted.py", "from ctsgen.families.cm2_reduce import FAMILY"),
])
def test_a_family_importing_another_is_found(plant, path: str, code: str) -> None:
    assert family_imports(plant(path, code)) == {("cm2_gemm", "cm2_reduce")}


def test_a_family_importing_its_own_package_or_the_registry_is_not(plant) -> None:
    planted = plant("families/cm2_gemm/case.py", "from . import strategy\nfrom .. import gating\n"
                                                 "from ctsgen.families import families")
    assert family_imports(planted) == set()


def test_ops_import_no_family(plant) -> None:
    assert ops_family_reaches(REAL) == []
    planted = plant("ops/cm2.py", "def f():\n    from ..families.cm2_reduce import case")
    assert "ctsgen.ops.cm2 -> ctsgen.families.cm2_reduce.case" in ops_family_reaches(planted)


def test_backends_import_no_family(plant) -> None:
    assert backend_family_reaches(REAL) == []
    planted = plant("backends/reference.py", "from ctsgen.families.decode.mutants import MUTANTS")
    assert "ctsgen.backends.reference -> ctsgen.families.decode.mutants" in backend_family_reaches(planted)


@pytest.mark.parametrize("code, found", [
    ("from ctsgen import check_case", "ctsgen.core.verdict -> ctsgen"),
    ("from ..pack import read", "ctsgen.core.verdict -> ctsgen.pack.read"),
    ("from ctsgen.ops import cm2", "ctsgen.core.verdict -> ctsgen.ops.cm2"),
])
def test_the_contract_imports_only_the_vocabulary_below_it(plant, code: str, found: str) -> None:
    assert core_reaches(REAL) == []
    assert found in core_reaches(plant("core/verdict.py", code))


def test_the_command_line_is_imported_only_by_main(plant) -> None:
    assert command_line_importers(REAL) == []
    assert command_line_importers(plant("__init__.py", "def main():\n    from ctsgen.cli import main")) == ["ctsgen"]
    assert command_line_importers(plant("doctor.py", "from .cli import args")) == ["ctsgen", "ctsgen.doctor"]


def test_the_pytest_plugin_does_not_import_the_command_line() -> None:
    """Not directly, not through anything it imports (at any depth, deferred imports included)."""
    seen, todo = set(), ["ctsgen.pytest_plugin"]
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo.extend(REAL.imports(m))
    assert "ctsgen.cli" not in seen
    assert "ctsgen.backends.registry" in seen  # where it gets its backend instead


# --- the seams ------------------------------------------------------------------------------------

def test_only_signals_installs_signal_handlers(plant) -> None:
    assert signal_installs(REAL) == []
    planted = plant("pack/workers.py", "import signal as s\ndef f():\n    s.signal(s.SIGTERM, s.SIG_DFL)")
    assert any(f.startswith("ctsgen.pack.workers:") and f.endswith(" s.signal") for f in signal_installs(planted))
    planted = plant("fuzz/loop.py", "from signal import setitimer")
    assert any(f.startswith("ctsgen.fuzz.loop:") and f.endswith("from signal import setitimer")
               for f in signal_installs(planted))


@pytest.mark.parametrize("path, code", [
    ("runner/run.py", 'def f(backend):\n    return backend.name == "vulkan"'),
    ("runner/run.py", 'def f(args):\n    return args.backend in ("reference", "vulkan")'),
    ("runner/run.py", 'def f(backend_name):\n    return backend_name.startswith("mutant:")'),
    ("runner/run.py", 'def f(backend):\n    return "vulkan" != type(backend).__name__.lower()'),
    # whatever the compared value is called (issue 45): a name, a prefix, a table, a constant, a match
    ("execute/run.py", 'def f(b):\n    return b.name == "vulkan"'),
    ("execute/run.py", 'def f(b):\n    return b.split(":")[0] == "mutant"'),
    ("execute/run.py", 'def f(who):\n    return who.startswith(f"mutant:{0}")'),
    ("execute/run.py", 'def f(kind):\n    return kind not in {"reference": 1}'),
    ("execute/run.py", 'SOFT = "reference"\ndef f(kind):\n    return kind is SOFT'),
    ("execute/run.py", 'def f(b):\n    match b.name:\n        case "vulkan":\n            return 1'),
    ("cli/generate.py", 'def f(args):\n    return args.backend == REFERENCE_PROFILE'),  # the exemption is narrow
])
def test_no_code_asks_a_backend_its_name(plant, path: str, code: str) -> None:
    """A backend says what it can do through its capability attributes (docs/architecture.md,
    "Adding a backend"); only the registry reads names."""
    assert backend_name_tests(REAL) == []
    module = "ctsgen." + path.removesuffix(".py").replace("/", ".")
    found = backend_name_tests(plant(path, code))
    assert len(found) == 1 and found[0].startswith(f"{module}:"), found


def test_a_backend_the_registry_gains_is_covered(plant) -> None:
    """The names are the registry's (``BUILTIN``, ``BUILTIN_PREFIXED``), not a list in the rule."""
    assert backend_names(REAL) == ({"reference", "vulkan"}, {"mutant"})
    plant("backends/registry.py", 'BUILTIN = {"swiftshader": "my_pkg.backend:SwiftShader"}')
    found = backend_name_tests(plant("execute/run.py", 'def f(b):\n    return b.name == "swiftshader"'))
    assert [f for f in found if f.startswith("ctsgen.execute.run:")] != []


def test_a_name_shared_with_a_backend_is_no_test_of_one(plant) -> None:
    """Assignments and defaults name a backend without asking one which it is."""
    planted = plant("execute/run.py", 'def f(backend: str = "reference", n: str = f"mutant:{1}"):\n'
                                      '    name = "vulkan"\n    return {"vulkan": backend}')
    assert backend_name_tests(planted) == []


def test_every_import_inside_a_function_says_why() -> None:
    """An import belongs at the top of its module unless it breaks a cycle, defers an optional
    dependency or keeps a start-up light, and says which (``tests/structure.py``, LOCAL_IMPORT_REASONS)."""
    assert local_imports_without_a_reason(REAL) == []
    reasons = local_import_reasons(REAL)
    assert set(reasons) <= {"optional", "startup"} and len(reasons["optional"]) >= 10
    assert any(f.startswith("ctsgen.backends.vulkan:") and f.endswith("import vulkan_py") for f in reasons["optional"])


@pytest.mark.parametrize("path, code, module", [
    ("execute/run.py", "def f():\n    from ctsgen.errors import UserError", "ctsgen.execute.run"),
    ("ops/cm2.py", "def f():\n    if True:\n        import json  # imported here: rarely used", "ctsgen.ops.cm2"),
    ("families/decode/tests/test_decode.py", "def test_x():\n    g = lambda: __import__('os')\n    import os",
     "ctsgen.families.decode.tests.test_decode"),
    ("cli/run.py", "class C:\n    def m(self):\n        import numpy as np  # local: speed", "ctsgen.cli.run"),
])
def test_a_local_import_without_a_reason_is_found(plant, path: str, code: str, module: str) -> None:
    """Planted: a plain one, one under an ``if`` with a comment that is no reason, one in a test,
    a method's with an unknown reason."""
    found = local_imports_without_a_reason(plant(path, code))
    assert len(found) == 1 and found[0].startswith(f"{module}:"), found


def test_a_local_import_with_a_reason_is_not(plant) -> None:
    planted = plant("execute/run.py", "def f():\n    import matplotlib  # local: optional (the plot extra)\n"
                                      "    from ctsgen.errors import (UserError,\n"
                                      "                               CtsgenError)  # local: cycle\n"
                                      "import json\nif json:\n    import os")
    assert local_imports_without_a_reason(planted) == []


def test_every_ctsgen_error_derives_from_the_one_base() -> None:
    errors = []
    for name in REAL.modules:
        for node in REAL.nodes(name):
            if isinstance(node, ast.ClassDef) and node.name.endswith("Error"):
                errors.append(getattr(importlib.import_module(name), node.name))
    assert len(errors) >= 12  # the toolchain's, the pack's, the backends', the model's, ...
    assert [e.__qualname__ for e in errors if not issubclass(e, CtsgenError)] == []


def test_no_table_outside_a_family_names_a_family() -> None:
    assert family_names_outside_their_family(REAL) == []


@pytest.mark.parametrize("path, code, module, name", [
    ("toolchain/variants.py", 'VALIDATORS = {"decode-vector": "glslang-decode-vector"}', "ctsgen.toolchain.variants",
     "decode-vector"),
    ("fuzz/loop.py", 'def cap(family):\n    return 4 if family.name == "cm2-program" else None', "ctsgen.fuzz.loop",
     "cm2-program"),
    ("families/cm2_gemm/case.py", 'NEIGHBOUR = ("cm2-reduce",)', "ctsgen.families.cm2_gemm.case", "cm2-reduce"),
])
def test_a_family_named_outside_its_package_is_found(plant, path: str, code: str, module: str, name: str) -> None:
    """Planted: a validator table, a switch on a family's name, a family naming another family."""
    found = family_names_outside_their_family(plant(path, code))
    assert [f for f in found if f.startswith(module + ":") and f.endswith(repr(name))], found


def test_a_family_naming_itself_is_not(plant) -> None:
    planted = plant("families/decode_vector/case.py", 'ME = "decode-vector"')
    assert family_names_outside_their_family(planted) == []


# --- mutant targets -------------------------------------------------------------------------------

def _targets() -> set[str]:
    return {t for m in catalogue().values() for t in m.targets()}


def test_every_mutant_target_is_swapped_where_it_is_defined_and_bound_nowhere_else() -> None:
    """A mutant replaces a name in the one module that defines it; a copy bound elsewhere by import
    would run the original (docs/architecture.md, "Adding a family")."""
    targets = _targets()
    assert len(targets) >= 40 and "ctsgen.ops.cm2_reduce:expected_reduce" in targets
    assert "ctsgen.model.tensor:TensorLayout.set_block_size" in targets  # a method, replaced on its class
    assert mutant_target_escapes(REAL, targets) == []


@pytest.mark.parametrize("path, code, module", [
    ("families/coopmat_khr/case.py", "from ctsgen.ops.cm2_reduce import expected_reduce",
     "ctsgen.families.coopmat_khr.case"),
    ("families/cm2_reduce/case.py", "from ...ops.cm2_reduce import expected_reduce as reduce",
     "ctsgen.families.cm2_reduce.case"),
    ("ops/cm2_gemm.py", "def f():\n    from .cm2_reduce import Combine, expected_reduce", "ctsgen.ops.cm2_gemm"),
    ("strategies/planted.py", "from ctsgen.ops.cm2_reduce import expected_reduce", "ctsgen.strategies.planted"),
])
def test_a_mutant_target_bound_by_import_is_found(plant, path: str, code: str, module: str) -> None:
    """Planted: the import a new family would write, relative, aliased, deferred, outside the families."""
    found = mutant_target_escapes(plant(path, code), _targets())
    assert [f for f in found if f.startswith(f"ctsgen.ops.cm2_reduce:expected_reduce: {module}:")
            and f.endswith("from ctsgen.ops.cm2_reduce import expected_reduce")] == found != []


@pytest.mark.parametrize("target, found", [
    ("ctsgen.families.cm2_reduce.case:expected_reduce",
     "ctsgen.families.cm2_reduce.case does not define expected_reduce"),
    ("ctsgen.families.cm2_reduce.case:cm2_reduce_ops",
     "ctsgen.families.cm2_reduce.case does not define cm2_reduce_ops"),
    ("ctsgen.model.tensor:TensorLayout.no_such_method", "class TensorLayout of ctsgen.model.tensor does not define"),
    ("ctsgen.ops.no_such_module:expected_reduce", "no module ctsgen.ops.no_such_module"),
])
def test_a_mutant_naming_a_module_that_does_not_define_its_target_is_found(target: str, found: str) -> None:
    """Planted: a mutant patching a caller's copy (what cm2-reduce's did), a name the module only imports,
    a method its class lacks, a module that is not there."""
    planted = Mutant("planted", "cm2-reduce", "a planted mutant", lambda: {target: None})
    assert [f for f in mutant_target_escapes(REAL, _targets() | set(planted.targets())) if found in f] != []


@pytest.mark.parametrize("path, code, module", [
    ("families/coopmat_khr/case.py", "from ctsgen.ops import cm2_reduce as r\nTABLE = {'row': r.expected_reduce}",
     "ctsgen.families.coopmat_khr.case"),
    ("ops/cm2_gemm.py", "from . import cm2_reduce\ndef f(reduce=cm2_reduce.expected_reduce):\n    return reduce",
     "ctsgen.ops.cm2_gemm"),
])
def test_a_mutant_target_captured_at_import_is_found(plant, path: str, code: str, module: str) -> None:
    """Planted: a table and a default argument holding the function the module had when imported."""
    found = mutant_target_escapes(plant(path, code), _targets())
    assert len(found) == 1 and found[0].startswith(f"ctsgen.ops.cm2_reduce:expected_reduce: {module}:")
    assert found[0].endswith("evaluated at import")


def test_a_mutant_target_looked_up_when_called_is_not(plant) -> None:
    planted = plant("families/coopmat_khr/case.py", "from ctsgen.ops import cm2_reduce as r\n"
                    "def f(m):\n    return {'row': r.expected_reduce}['row'](m)\n"
                    "g = lambda m: r.expected_reduce(m)")
    assert mutant_target_escapes(planted, _targets()) == []
