"""Each option several commands share is declared once (ctsgen.cli.options.SHARED): every command that
has it has that declaration's kind, type, choices and help, and no module of the command line spells it
out again. Each check is also run on a planted violation, so that it is seen to bite."""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

import pytest

from ctsgen.cli import build_parser, main
from ctsgen.cli.options import SHARED, add_options
from tests.test_cli_help import _every_parser

CLI = Path(__file__).resolve().parents[1] / "ctsgen" / "cli"


def _shape(action: argparse.Action) -> tuple:
    return type(action), action.help, action.type, action.choices, action.metavar, action.nargs, action.const


def drifted(parser: argparse.ArgumentParser) -> list[str]:
    """Each (command, option) whose action is not the shared declaration of that option."""
    out = []
    for path, sub in _every_parser(parser):
        for action in sub._actions:
            for flag in action.option_strings:
                name = flag.removeprefix("--")
                if name in SHARED:
                    declared = argparse.ArgumentParser().add_argument(flag, **SHARED[name])
                    if _shape(action) != _shape(declared):
                        out.append(f"{' '.join(path)} {flag}: {action.help!r}")
    return out


def declared_again(sources: dict[str, str]) -> list[str]:
    """Each ``add_argument("--NAME", ...)`` of a shared option in the given module sources."""
    out = []
    for where, text in sources.items():
        for node in ast.walk(ast.parse(text)):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "add_argument" and node.args and isinstance(node.args[0], ast.Constant)
                    and str(node.args[0].value).removeprefix("--") in SHARED):
                out.append(f"{where}:{node.lineno} {node.args[0].value}")
    return out


def _cli_sources() -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(CLI.glob("*.py"))}


def test_every_command_has_the_shared_declaration_of_a_shared_option():
    assert drifted(build_parser()) == []


def test_no_command_declares_a_shared_option_again():
    assert declared_again(_cli_sources()) == []


def test_the_shared_options_are_shared():
    """A declaration in SHARED that at most one command takes is no shared option; --backend is
    taken by every command that picks a backend."""
    users: dict[str, set[str]] = {}
    for path, sub in _every_parser(build_parser()):
        for action in sub._actions:
            for flag in action.option_strings:
                users.setdefault(flag.removeprefix("--"), set()).add(path[1] if len(path) > 1 else "")
    lonely = {name for name in SHARED if len(users.get(name, ())) < 2}
    # the selection options are shared with the pytest plugin (--ctsgen-include ...), not among commands
    assert lonely <= {"include", "exclude", "caselist", "fraction", "fraction-start", "skips", "batch-size",
                      "flake-retries"}
    assert users["backend"] == {"run", "repro", "fuzz", "campaign"}


def test_a_command_sets_its_own_default_under_the_shared_help():
    parser = argparse.ArgumentParser()
    add_options(parser, "shrink-time", shrink_time=60.0)
    assert parser.parse_args([]).shrink_time == 60.0
    assert "(default: 60.0)" in parser.format_help()
    assert drifted(parser) == []


def test_a_drifted_help_is_caught():
    """Planted: one command declares --backend with its own, shorter help (fuzz's omitted MODULE:CLASS)."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    planted = sub.add_parser("planted")
    planted.add_argument("--backend", default="reference", help="reference (default), vulkan or mutant:NAME")
    assert drifted(parser) == ["ctsgen planted --backend: 'reference (default), vulkan or mutant:NAME'"]


def test_a_drifted_type_is_caught():
    """Planted: --timeout with the shared help but no type (a string would reach RunOptions)."""
    parser = argparse.ArgumentParser(prog="ctsgen")
    parser.add_argument("--timeout", help=SHARED["timeout"]["help"])
    assert len(drifted(parser)) == 1


def test_a_second_declaration_is_caught_even_with_the_same_help():
    """Planted: a command module that spells --device out with the shared help word for word."""
    planted = ('def add_parser(sub, names):\n    p = sub.add_parser("x")\n'
               f'    p.add_argument("--device", help={SHARED["device"]["help"]!r})\n')
    assert declared_again({**_cli_sources(), "planted.py": planted}) == ["planted.py:3 --device"]


@pytest.mark.parametrize("argv", [
    ["--baseline", "/nonexistent/ctsgen-baseline.csv"],
    ["--expect-deviation", "no-such-mutant"],
    ["--min-batch", "300"],
])
def test_fuzz_checks_every_input_once_before_its_workers_start(argv, monkeypatch, capsys, tmp_path) -> None:
    """``fuzz --workers N`` checks its inputs in the one place every fuzz does: a bad one is one
    line and exit 2 from the parent, not one line from each worker."""
    started = []
    monkeypatch.setattr("ctsgen.cli.fuzz.run_workers", lambda *a: started.append(a) or 0)
    with pytest.raises(SystemExit) as exit_:
        main(["fuzz", "--workers", "2", "--database", "none", "--repro-dir", str(tmp_path / "r"), *argv])
    err = capsys.readouterr().err.strip().splitlines()
    assert exit_.value.code == 2 and len(err) == 1 and err[0].startswith("ctsgen: error: "), err
    assert started == []
    main(["fuzz", "--workers", "2", "--database", "none", "--repro-dir", str(tmp_path / "r")])
    assert len(started) == 1  # the same command with good inputs does start them
