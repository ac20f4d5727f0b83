"""The seams between ctsgen's parts, checked on the source.

* No ctsgen module reaches into another module's private (``_name``) names.
* No import cycle among ctsgen modules, counting every import: at module
  level, inside functions and under ``TYPE_CHECKING`` (a deferred import
  hides a cycle, it does not remove it), and the parent packages an import
  runs.
* The pytest plugin does not import the command line, even indirectly.
* Every ctsgen ``*Error`` derives from the one base, :class:`ctsgen.errors.CtsgenError`.

Test modules (``tests/`` folders) are left out: a test may look inside what it tests.
"""

from __future__ import annotations

import ast
import importlib
from functools import cache
from pathlib import Path

import ctsgen
from ctsgen.errors import CtsgenError

ROOT = Path(ctsgen.__file__).parent


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def modules() -> dict[str, Path]:
    """Every ctsgen module but the tests, by dotted name."""
    return {_module_name(p): p for p in sorted(ROOT.rglob("*.py")) if "tests" not in p.relative_to(ROOT).parts}


@cache
def tree(name: str) -> ast.Module:
    return ast.parse(modules()[name].read_text(), str(modules()[name]))


def _imported(name: str, node: ast.Import | ast.ImportFrom) -> list[tuple[str, str | None]]:
    """(module, imported name or None) for each name ``node`` imports, relative imports resolved."""
    if isinstance(node, ast.Import):
        return [(a.name, None) for a in node.names]
    if node.level:
        package = name.split(".") if modules()[name].name == "__init__.py" else name.split(".")[:-1]
        base = ".".join(package[:len(package) - node.level + 1] + ([node.module] if node.module else []))
    else:
        base = node.module or ""
    return [(base, a.name) for a in node.names]


def imports(name: str) -> set[str]:
    """The ctsgen modules that importing or running module ``name`` imports, directly: each
    imported module, or the module an imported name is, and the packages above it."""
    out = set()
    for node in ast.walk(tree(name)):
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        for module, attr in _imported(name, node):
            target = f"{module}.{attr}" if attr and f"{module}.{attr}" in modules() else module
            parts = target.split(".")
            for i in range(2, len(parts) + 1):
                dep = ".".join(parts[:i])
                if dep in modules() and dep != name and not name.startswith(dep + "."):
                    out.add(dep)
    return out


def import_cycles() -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    graph = {m: imports(m) for m in modules()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for m in graph:
        if m not in index:
            visit(m)
    return cycles


def test_the_import_graph_sees_deferred_and_type_checking_imports() -> None:
    """The checker itself: the kinds of import a cycle can hide behind are edges."""
    assert "ctsgen.backends.supervise" in imports("ctsgen.backends.registry")  # inside a function
    assert "ctsgen.core.family" in imports("ctsgen.toolchain.variants")  # under TYPE_CHECKING
    assert "ctsgen.core" in imports("ctsgen.runner.run")  # the package an import runs
    assert "ctsgen.core.verdict" in imports("ctsgen.runner.run")  # a relative-free from-import


def test_no_import_cycles_among_ctsgen_modules() -> None:
    assert import_cycles() == []


def private_reaches() -> list[str]:
    """``module: name`` for every private name of another ctsgen module that a module uses:
    ``from ctsgen.x import _y``, or ``x._y`` on a ctsgen module it imported as ``x``."""
    found = []
    for name in modules():
        aliases: dict[str, str] = {}
        for node in ast.walk(tree(name)):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for (module, attr), alias in zip(_imported(name, node), node.names):
                    if not module.startswith("ctsgen"):
                        continue
                    if attr is None:
                        aliases[alias.asname or module.split(".")[0]] = module
                    elif f"{module}.{attr}" in modules():
                        aliases[alias.asname or attr] = f"{module}.{attr}"
                    elif attr.startswith("_") and not attr.startswith("__") and module != name:
                        found.append(f"{name}: from {module} import {attr}")
        for node in ast.walk(tree(name)):
            if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
                chain = node.value
                dotted = []
                while isinstance(chain, ast.Attribute):
                    dotted.append(chain.attr)
                    chain = chain.value
                if isinstance(chain, ast.Name) and chain.id in aliases:
                    module = ".".join([aliases[chain.id], *reversed(dotted)])
                    if module in modules() and module != name:
                        found.append(f"{name}: {module}.{node.attr}")
    return sorted(found)


def test_no_module_uses_another_modules_private_names() -> None:
    assert private_reaches() == []


def test_the_pytest_plugin_does_not_import_the_command_line() -> None:
    """Not directly, not through anything it imports (at any depth, deferred imports included)."""
    seen, todo = set(), ["ctsgen.pytest_plugin"]
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo.extend(imports(m))
    assert "ctsgen.cli" not in seen
    assert "ctsgen.backends.registry" in seen  # where it gets its backend instead


def test_every_ctsgen_error_derives_from_the_one_base() -> None:
    errors = []
    for name in modules():
        for node in ast.walk(tree(name)):
            if isinstance(node, ast.ClassDef) and node.name.endswith("Error"):
                errors.append(getattr(importlib.import_module(name), node.name))
    assert len(errors) >= 12  # the toolchain's, the pack's, the backends', the model's, ...
    assert [e.__qualname__ for e in errors if not issubclass(e, CtsgenError)] == []


#: The layers, lowest first: a module imports only from its own layer or a lower one (docs/architecture.md,
#: "Layers"). The key is the top-level folder or module under ctsgen/.
LAYERS = [
    {"errors", "timing", "progress", "signals"},
    {"model"},
    {"device"},
    {"core", "oracle"},
    {"strategies", "templates", "toolchain", "ops"},
    {"families"},
    {"backends"},
    {"mutants"},
    {"pack", "execute"},
    {"runner", "results"},
    {"fuzz", "repro"},
    {"campaign", "testing", "doctor"},
    {"pytest_plugin", "xdist_schedule"},
    {"cli"},
    {"__main__", ""},  # "": the package root, whose lazy attributes are the public API
]


def layer(module: str) -> int:
    key = module.split(".")[1] if "." in module else ""
    found = [i for i, names in enumerate(LAYERS) if key in names]
    assert found, f"{module}: its folder {key!r} is in no layer of LAYERS -> add it where it belongs"
    return found[0]


def test_every_import_runs_down_the_layers() -> None:
    upward = sorted(f"{m} -> {d}" for m in modules() for d in imports(m) if layer(d) > layer(m))
    assert upward == []


def test_the_contract_imports_only_the_vocabulary_below_it() -> None:
    allowed = ("ctsgen.core", "ctsgen.model", "ctsgen.device", "ctsgen.errors")
    reaches = sorted(f"{m} -> {d}" for m in modules() if m.startswith("ctsgen.core")
                     for d in imports(m) if not d.startswith(allowed))
    assert reaches == []


def test_backends_import_no_family() -> None:
    """The reference backend finds a variant's semantics through the registry (ctsgen.families),
    never by importing a family's package."""
    reaches = sorted(f"{m} -> {d}" for m in modules() if m.startswith("ctsgen.backends")
                     for d in imports(m) if d.startswith("ctsgen.families."))
    assert reaches == []


def test_the_command_line_is_imported_only_by_main() -> None:
    importers = sorted(m for m in modules() if not m.startswith("ctsgen.cli") and m != "ctsgen.__main__"
                       and any(d == "ctsgen.cli" or d.startswith("ctsgen.cli.") for d in imports(m)))
    assert importers == []
