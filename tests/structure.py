"""The rules of docs/architecture.md, read off a ctsgen source tree.

Each rule is a function of a :class:`Source` that returns its violations, one readable line each,
so ``tests/test_structure.py`` can hold it against the real tree (no violation) and against a copy
with one violation planted (that violation found). Imports are counted wherever they are written:
at module level, inside functions and under ``TYPE_CHECKING`` (a deferred import hides a cycle, it
does not remove it), absolute or relative, of a module, of a name in it, or of the bare root
package. Test modules (``tests/`` folders) are left out: a test may look inside what it tests.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

PACKAGE = "ctsgen"

#: The layers, lowest first: a module imports only from its own layer or a lower one (docs/architecture.md,
#: "The layers"). The key is the top-level folder or module under ctsgen/; "" is the root package, the
#: public face (``ctsgen.check_case``, ``ctsgen.given_cases``, ``ctsgen.__version__``), above everything.
LAYERS = [
    {"errors", "timing", "progress", "signals", "version"},
    {"model"},
    {"device"},
    {"core", "oracle"},
    {"strategies", "templates", "toolchain", "ops", "kernel"},
    {"families"},
    {"backends"},
    {"mutants"},
    {"pack", "execute"},
    {"runner", "results"},
    {"fuzz", "repro"},
    {"campaign", "testing", "doctor"},
    {"pytest_plugin", "xdist_schedule"},
    {"cli"},
    {"__main__", ""},
]

#: What a family may import of ``ctsgen.families`` besides its own package: the registry and the gate.
SHARED = {"ctsgen.families", "ctsgen.families.gating"}

#: The calls that install a signal handler or a timer signal: only ``ctsgen/signals.py`` makes them.
SIGNAL_INSTALLS = {"signal", "setitimer", "alarm", "pthread_sigmask", "siginterrupt", "set_wakeup_fd"}

#: The one module that turns backend names into backends, and so may compare them.
BACKEND_NAMES_OWNER = "ctsgen.backends.registry"

#: Strings outside a family's package that spell a family's name and are no table of families:
#: the default family's one declaration, a device read-out's section name (``coopvec feats``),
#: the JSON key of a program node's decode load, and the ``"family"`` tag of the three case models
#: other families embed (ops/*_case.py): it is the pack format, so each model writes its own.
FAMILY_NAME_SPELLINGS = {("ctsgen.families", "tensor-layout"), ("ctsgen.device.readout", "coopvec"),
                         ("ctsgen.families.cm2_program.case", "decode"),
                         ("ctsgen.ops.tensor_layout_case", "tensor-layout"),
                         ("ctsgen.ops.tensor_view_case", "tensor-view"), ("ctsgen.ops.decode_case", "decode")}


_NODES: dict[str, tuple[ast.AST, ...]] = {}


def _nodes(text: str, filename: str) -> tuple[ast.AST, ...]:
    """Every node of a module's source, parsed once per text wherever it lies: a planted copy
    parses only what was planted."""
    if text not in _NODES:
        _NODES[text] = tuple(ast.walk(ast.parse(text, filename)))
    return _NODES[text]


def _dotted(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@dataclass(frozen=True)
class Source:
    """A ctsgen tree on disk: ``root`` is its ``ctsgen/`` folder (the real one, or a planted copy)."""

    root: Path
    _imports: dict[str, set[str]] = field(default_factory=dict, compare=False, repr=False)

    @cached_property
    def modules(self) -> dict[str, Path]:
        """Every module but the tests, by dotted name."""
        return {_dotted(p, self.root): p for p in sorted(self.root.rglob("*.py"))
                if "tests" not in p.relative_to(self.root).parts}

    def nodes(self, name: str) -> tuple[ast.AST, ...]:
        return self.nodes_of(self.modules[name])

    def nodes_of(self, path: Path) -> tuple[ast.AST, ...]:
        return _nodes(path.read_text(), str(path))

    def resolve(self, name: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> list[str]:
        """The dotted targets one import names in module ``name``: each module imported, and for a
        from-import each ``module.attr`` (a submodule, or a name in the module), relative ones resolved."""
        if isinstance(node, ast.Import):
            return [a.name for a in node.names]
        if node.level:
            package = name.split(".") if is_package else name.split(".")[:-1]
            base = ".".join(package[:len(package) - node.level + 1] + ([node.module] if node.module else []))
        else:
            base = node.module or ""
        return [base] + [f"{base}.{a.name}" for a in node.names]

    def imports(self, name: str) -> set[str]:
        """The ctsgen modules that module ``name`` imports, directly: each module it names, the module
        an imported name is, the packages above it (they run first), and the root package where the
        import names it alone (``import ctsgen``, ``from ctsgen import check_case``): the root runs
        for every import, but only an import of the root itself takes what it re-exports."""
        if name in self._imports:
            return self._imports[name]
        out = set()
        is_package = self.modules[name].name == "__init__.py"
        for node in self.nodes(name):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            targets = self.resolve(name, is_package, node)
            named = [t for t in targets[1:] if t in self.modules] if isinstance(node, ast.ImportFrom) else []
            if isinstance(node, ast.ImportFrom) and len(named) < len(targets) - 1:
                named.append(targets[0])  # some name is not a submodule: it is taken from the module itself
            for target in named or targets:
                parts = target.split(".")
                first = 1 if target == PACKAGE else 2
                for i in range(first, len(parts) + 1):
                    dep = ".".join(parts[:i])
                    if dep in self.modules and dep != name and (dep == PACKAGE or not name.startswith(dep + ".")):
                        out.add(dep)
        self._imports[name] = out
        return out

    def layer(self, module: str) -> int:
        key = module.split(".")[1] if "." in module else ""
        found = [i for i, names in enumerate(LAYERS) if key in names]
        assert found, f"{module}: its folder {key!r} is in no layer of LAYERS -> add it where it belongs"
        return found[0]

    @property
    def families(self) -> list[Path]:
        return sorted(p for p in (self.root / "families").iterdir() if (p / "__init__.py").exists())


def upward_imports(src: Source) -> list[str]:
    return sorted(f"{m} -> {d}" for m in src.modules for d in src.imports(m) if src.layer(d) > src.layer(m))


def import_cycles(src: Source) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    graph = {m: src.imports(m) for m in src.modules}
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


def _private(attr: str) -> bool:
    return attr.startswith("_") and not attr.startswith("__")


def private_reaches(src: Source) -> list[str]:
    """``module: name`` for every private name of another ctsgen module that a module uses:
    ``from ctsgen.x import _y`` (relative or not), or ``x._y`` on a ctsgen module it imported as ``x``."""
    found = []
    for name, path in src.modules.items():
        aliases: dict[str, str] = {}
        is_package = path.name == "__init__.py"
        for node in src.nodes(name):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.split(".")[0] == PACKAGE:
                        aliases[a.asname or PACKAGE] = a.name if a.asname else PACKAGE
            elif isinstance(node, ast.ImportFrom):
                base, *targets = src.resolve(name, is_package, node)
                if base.split(".")[0] != PACKAGE:
                    continue
                for target, alias in zip(targets, node.names):
                    if target in src.modules:
                        aliases[alias.asname or alias.name] = target
                    elif _private(alias.name) and base != name:
                        found.append(f"{name}: from {base} import {alias.name}")
        for node in src.nodes(name):
            if isinstance(node, ast.Attribute) and _private(node.attr):
                chain, dotted = node.value, []
                while isinstance(chain, ast.Attribute):
                    dotted.append(chain.attr)
                    chain = chain.value
                if isinstance(chain, ast.Name) and chain.id in aliases:
                    module = ".".join([aliases[chain.id], *reversed(dotted)])
                    if module in src.modules and module != name:
                        found.append(f"{name}: {module}.{node.attr}")
    return sorted(found)


def reaches_from(src: Source, prefix: str, into: tuple[str, ...], allowed: tuple[str, ...] = ()) -> list[str]:
    """``module -> dependency`` for each import by a module under ``prefix`` of a module under one of
    ``into`` (dotted prefixes), those under ``allowed`` excepted."""
    def under(module: str, prefixes: tuple[str, ...]) -> bool:
        return any(module == p or module.startswith(p + ".") for p in prefixes)

    return sorted(f"{m} -> {d}" for m in src.modules if under(m, (prefix,))
                  for d in src.imports(m) if under(d, into) and not under(d, allowed))


def core_reaches(src: Source) -> list[str]:
    """What ``core/`` imports beyond the vocabulary below it (``model/``, ``device/``, ``errors``)."""
    return reaches_from(src, "ctsgen.core", (PACKAGE,),
                        allowed=("ctsgen.core", "ctsgen.model", "ctsgen.device", "ctsgen.errors"))


def ops_family_reaches(src: Source) -> list[str]:
    return reaches_from(src, "ctsgen.ops", ("ctsgen.families",))


def backend_family_reaches(src: Source) -> list[str]:
    """The reference backend finds a variant's semantics through the registry (``ctsgen.families``),
    never by importing a family's package."""
    return reaches_from(src, "ctsgen.backends", tuple(f"ctsgen.families.{p.name}" for p in src.families))


def command_line_importers(src: Source) -> list[str]:
    return sorted(m for m in src.modules if m != "ctsgen.__main__" and not m.startswith("ctsgen.cli")
                  and any(d == "ctsgen.cli" or d.startswith("ctsgen.cli.") for d in src.imports(m)))


def root_imports_above_the_bottom(src: Source) -> list[str]:
    """The root package runs first for every import of ctsgen, so at module level it imports only
    the bottom layer; what it re-exports from higher up it loads when asked (a module ``__getattr__``)."""
    found = []
    body = src.nodes(PACKAGE)[0].body
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for target in src.resolve(PACKAGE, True, node):
                if target in src.modules and src.layer(target) > 0:
                    found.append(f"{PACKAGE} -> {target}")
    return found


def family_imports(src: Source) -> set[tuple[str, str]]:
    """(family, other family) for each import of another family's package by a module of a family
    package, its tests included, written absolute or relative."""
    names = {p.name for p in src.families}
    edges = set()
    for package in src.families:
        for path in package.rglob("*.py"):
            module = _dotted(path, src.root)
            for node in src.nodes_of(path):
                if not isinstance(node, (ast.Import, ast.ImportFrom)):
                    continue
                for target in src.resolve(module, path.name == "__init__.py", node):
                    parts = target.split(".")
                    if target.startswith("ctsgen.families.") and target not in SHARED and parts[2] != package.name \
                            and parts[2] in names:
                        edges.add((package.name, parts[2]))
    return edges


def signal_installs(src: Source) -> list[str]:
    """``module:line`` for each handler or timer signal installed outside ``ctsgen/signals.py``, the one
    place that restores what it replaces (``on_stop``, ``alarm_at``, ``leave_interrupts_to_the_parent``)."""
    found = []
    for name in src.modules:
        if name == "ctsgen.signals":
            continue
        aliases = set()
        for node in src.nodes(name):
            if isinstance(node, ast.Import):
                aliases |= {a.asname or a.name for a in node.names if a.name == "signal"}
            elif isinstance(node, ast.ImportFrom) and node.module == "signal" and not node.level:
                found += [f"{name}:{node.lineno} from signal import {a.name}" for a in node.names
                          if a.name in SIGNAL_INSTALLS]
        for node in src.nodes(name):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in SIGNAL_INSTALLS and isinstance(node.func.value, ast.Name) \
                    and node.func.value.id in aliases:
                found.append(f"{name}:{node.lineno} {ast.unparse(node.func)}")
    return sorted(found)


#: Comparisons with a backend's name that ask something else, by (module, the compared expression): the
#: ``generate --profile reference`` profile (no device: every family), whose name is the reference
#: backend's on purpose, since it draws a pack for that backend; it names a profile, not a backend.
BACKEND_NAME_SPELLINGS = {("ctsgen.cli.generate", "args.profile")}


def backend_names(src: Source) -> tuple[set[str], set[str]]:
    """The registry's names, read off ``backends/registry.py`` of ``src`` (a new line there is covered):
    the built-in names (``BUILTIN``) and the prefixes of those with an argument (``BUILTIN_PREFIXED``)."""
    tables = {}
    for node in src.nodes(BACKEND_NAMES_OWNER)[0].body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(target, ast.Name) and target.id in ("BUILTIN", "BUILTIN_PREFIXED"):
                    tables[target.id] = set(ast.literal_eval(node.value))
    assert set(tables) == {"BUILTIN", "BUILTIN_PREFIXED"}, f"{BACKEND_NAMES_OWNER} lost BUILTIN or BUILTIN_PREFIXED"
    return tables["BUILTIN"], tables["BUILTIN_PREFIXED"]


def _spelled(node: ast.expr, constants: dict[str, ast.expr]) -> list[str]:
    """The strings ``node`` spells: a constant, a module-level constant's name, the literal head of an
    f-string, or each of a literal tuple, list, set or dict's keys."""
    if isinstance(node, ast.Name) and node.id in constants:
        return _spelled(constants[node.id], {})
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
        return [str(node.values[0].value)]
    elements = node.keys if isinstance(node, ast.Dict) else \
        node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else []
    return [s for e in elements if e is not None for s in _spelled(e, constants)]


def _module_constants(body: list[ast.stmt]) -> dict[str, ast.expr]:
    """The names a module binds once, at module level, to a string (or a literal of strings)."""
    constants = {}
    for node in body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(target, ast.Name):
                    constants[target.id] = node.value
    return constants


def backend_name_tests(src: Source) -> list[str]:
    """``module:line`` for each test of which backend is in hand by its name, outside the registry: a
    comparison (``==``, ``!=``, ``in``, ``not in``, ``is``) or a ``startswith``/``endswith`` against a
    registered name (``BUILTIN``'s ``reference``, ``vulkan``; ``BUILTIN_PREFIXED``'s ``mutant``,
    ``mutant:NAME``), spelled as a string, a literal of strings, an f-string's head, a module constant
    or a ``match`` case, whatever the compared value is called (``b.name == "vulkan"``,
    ``kind in ("reference",)``, ``x.startswith(f"mutant:")``): what a backend can do is its
    capability attributes (``backends/base.py``), asked for by name nowhere but the registry, which
    turns names into backends. Exempt, by module and compared expression, are the comparisons in
    ``BACKEND_NAME_SPELLINGS``, which compare something else that shares a name; assignments and
    defaults (``backend: str = "reference"``, a backend's own ``name = "vulkan"``) are no test."""
    builtin, prefixed = backend_names(src)

    def registered(text: str) -> bool:
        head = text.partition(":")[0]
        return text in builtin or head in prefixed

    found = []
    for name in src.modules:
        if name == BACKEND_NAMES_OWNER:
            continue
        nodes = src.nodes(name)
        constants = _module_constants(nodes[0].body)
        for node in nodes:
            if isinstance(node, ast.Compare):
                operands = [node.left, *node.comparators]
                named = [o for o in operands if any(registered(s) for s in _spelled(o, constants))]
                others = {ast.unparse(o) for o in operands if o not in named}
                if named and not (others and all((name, other) in BACKEND_NAME_SPELLINGS for other in others)):
                    found.append(f"{name}:{node.lineno} {ast.unparse(node)}")
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in ("startswith", "endswith", "removeprefix") and node.args \
                    and any(registered(s) for s in _spelled(node.args[0], constants)):
                found.append(f"{name}:{node.lineno} {ast.unparse(node)}")
            elif isinstance(node, ast.match_case):
                values = [p.value for p in ast.walk(node.pattern) if isinstance(p, ast.MatchValue)]
                if any(registered(s) for v in values for s in _spelled(v, constants)):
                    found.append(f"{name}:{node.pattern.lineno} case {ast.unparse(node.pattern)}")
    return sorted(found)


def family_names_outside_their_family(src: Source) -> list[str]:
    """``module:line name`` for each string that spells a family's name (its package's, ``_`` as
    ``-``) outside that family's package: a table, switch or default that names a family is
    edited by every new family; a family says what it needs in its own ``FamilySpec``."""
    packages = {p.name.replace("_", "-"): f"{PACKAGE}.families.{p.name}" for p in src.families}
    found = []
    for name in src.modules:
        for node in src.nodes(name):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in packages:
                own = packages[node.value]
                if name != own and not name.startswith(own + ".") and (name, node.value) not in FAMILY_NAME_SPELLINGS:
                    found.append(f"{name}:{node.lineno} {node.value!r}")
    return sorted(found)


def _defined_names(body: list[ast.stmt]) -> set[str]:
    """The names a module or class body defines itself (``def``, ``class``, assignment), not those it imports."""
    names: set[str] = set()
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return names


def _run_at_import(node: ast.AST) -> list[ast.AST]:
    """The nodes of ``node`` evaluated when its module is imported: all but what a function or
    lambda body runs when called (its defaults and decorators run at import)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        inner = [*node.decorator_list, *node.args.defaults, *(d for d in node.args.kw_defaults if d)]
    elif isinstance(node, ast.Lambda):
        inner = [*node.args.defaults, *(d for d in node.args.kw_defaults if d)]
    else:
        inner = list(ast.iter_child_nodes(node))
    return [node] + [n for child in inner for n in _run_at_import(child)]


def _module_aliases(src: Source, name: str) -> dict[str, str]:
    """The names module ``name`` binds to ctsgen modules by import (``import a.b as x``, ``from a import b``)."""
    aliases = {}
    for node in src.nodes(name):
        if isinstance(node, ast.Import):
            aliases |= {a.asname: a.name for a in node.names if a.asname}
        elif isinstance(node, ast.ImportFrom):
            targets = src.resolve(name, src.modules[name].name == "__init__.py", node)[1:]
            aliases |= {a.asname or a.name: t for a, t in zip(node.names, targets) if t in src.modules}
    return aliases


def mutant_target_escapes(src: Source, targets: set[str]) -> list[str]:
    """One line for each mutant target (``module:name`` or ``module:Class.attr``, ``core/mutant.py``)
    that its module does not define, for each import elsewhere in ctsgen that binds a module-level
    target's name (``from module import name``, relative or deferred), and for each reference to it
    evaluated at import (``TABLE = {...: module.name}``, a default argument): a mutant swaps the name
    in its defining module only, so a caller reaches it through that module when it calls
    (``module.name(...)``) and a copy bound earlier would run the original (docs/architecture.md, "Adding a family")."""
    found = []
    captures = _captured_at_import(src, targets)
    for target in sorted(targets):
        found += captures.get(target, [])
        module, path = target.split(":")
        first, *rest = path.split(".")
        if module not in src.modules:
            found.append(f"{target}: no module {module}")
            continue
        body = src.nodes(module)[0].body
        if first not in _defined_names(body):
            found.append(f"{target}: {module} does not define {first}")
            continue
        if rest:
            classes = [n for n in body if isinstance(n, ast.ClassDef) and n.name == first]
            if not classes or len(rest) > 1 or rest[0] not in _defined_names(classes[-1].body):
                found.append(f"{target}: class {first} of {module} does not define {'.'.join(rest)}")
            continue  # a class attribute is replaced on the class, which every importer shares
        for name, mpath in src.modules.items():
            if name == module:
                continue
            for node in src.nodes(name):
                if isinstance(node, ast.ImportFrom):
                    base = src.resolve(name, mpath.name == "__init__.py", node)[0]
                    found += [f"{target}: {name}:{node.lineno} from {base} import {a.name}"
                              for a in node.names if base == module and a.name == first]
    return found


def _captured_at_import(src: Source, targets: set[str]) -> dict[str, list[str]]:
    """target -> ``module:line`` for each ``alias.name`` of a module-level target evaluated at import."""
    wanted = {tuple(t.split(":")) for t in targets if "." not in t.split(":")[1]}
    found: dict[str, list[str]] = {}
    for name in src.modules:
        aliases = _module_aliases(src, name)
        for node in _run_at_import(src.nodes(name)[0]):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                    and (aliases.get(node.value.id), node.attr) in wanted:
                target = f"{aliases[node.value.id]}:{node.attr}"
                found.setdefault(target, []).append(f"{target}: {name}:{node.lineno} {ast.unparse(node)} "
                                                    "evaluated at import")
    return found


#: Why a module may import inside a function; the import says which in a trailing comment,
#: ``# local: REASON`` (on any of its lines), and every other import is at the top of its module:
#:
#: * ``cycle``: the two modules import each other at import time (``import_cycles`` counts deferred
#:   imports, so none among ctsgen's modules today).
#: * ``optional``: an optional dependency (the ``vulkan``, ``plot`` and ``redis`` extras: vulkan_py,
#:   matplotlib, redis), or a module that needs what ``ctsgen doctor`` reports as missing.
#: * ``startup``: keeps a module out of the start of a command: ``ctsgen --help``/``--version``
#:   (``python -X importtime -m ctsgen --help``), ``import ctsgen`` (the root's lazy re-exports), the
#:   pytest plugin every pytest session loads, or the Ctrl-C guard around loading the command line.
LOCAL_IMPORT_REASONS = ("cycle", "optional", "startup")


def _local_imports(tree: ast.AST, inside: bool = False) -> list[ast.Import | ast.ImportFrom]:
    """The imports inside a function (or lambda) body, at any depth."""
    found = []
    for node in ast.iter_child_nodes(tree):
        if inside and isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        found += _local_imports(node, inside or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))
    return found


def local_import_reasons(src: Source) -> dict[str, list[str]]:
    """Reason (one of ``LOCAL_IMPORT_REASONS``, or ``""`` for none) -> ``module:line import`` for each
    import inside a function of the tree, its ``tests/`` folders included."""
    found: dict[str, list[str]] = {}
    for path in sorted(src.root.rglob("*.py")):
        lines = path.read_text().splitlines()
        for node in _local_imports(src.nodes_of(path)[0]):
            said = " ".join(lines[node.lineno - 1:node.end_lineno]).partition("# local:")[2].split()
            reason = said[0].rstrip(",;:.") if said and said[0].rstrip(",;:.") in LOCAL_IMPORT_REASONS else ""
            found.setdefault(reason, []).append(f"{_dotted(path, src.root)}:{node.lineno} {ast.unparse(node)}")
    return found


def local_imports_without_a_reason(src: Source) -> list[str]:
    """``module:line import`` for each import inside a function that names none of ``LOCAL_IMPORT_REASONS``
    (``# local: startup``): a deferred import hides what a module needs and when it fails to load."""
    return sorted(local_import_reasons(src).get("", []))
