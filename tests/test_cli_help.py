"""The command line's own surface: ``ctsgen --help`` names every command with a one-line summary, no help
text carries reST or Markdown markup, and ``ctsgen mutants`` prints aligned columns."""

from __future__ import annotations

import argparse
import re

import pytest

from ctsgen.cli import build_parser, main
from ctsgen.mutants.catalogue import catalogue


def _subparsers(parser: argparse.ArgumentParser) -> argparse._SubParsersAction:
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return action


def _every_parser(parser: argparse.ArgumentParser, path: tuple[str, ...] = ("ctsgen",)):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _every_parser(child, (*path, name))


def _top_level_help(capsys) -> str:
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    return capsys.readouterr().out


def test_top_level_help_names_every_command_with_a_summary(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    text = _top_level_help(capsys)
    commands = _subparsers(build_parser())
    summaries = {choice.dest: choice.help for choice in commands._choices_actions}
    assert set(commands.choices) >= {"generate", "run", "fuzz", "campaign", "mutants", "profile"}
    for name in commands.choices:
        summary = summaries.get(name)
        assert summary, f"command {name!r} has no one-line help= summary"
        line = next((ln for ln in text.splitlines() if ln.split()[:1] == [name]), None)
        assert line is not None, f"ctsgen --help does not list {name!r}"
        assert " ".join(summary.split()) in " ".join(line.split()), (name, line)


def test_no_help_text_carries_markup(capsys):
    assert "``" not in _top_level_help(capsys)
    for path, parser in _every_parser(build_parser()):
        text = parser.format_help()
        assert "`" not in text, f"{' '.join(path)} --help shows markup: " + \
            next(ln for ln in text.splitlines() if "`" in ln)
        assert not re.search(r":(func|class|mod|meth|ref):", text), " ".join(path)


def test_mutants_columns_line_up(capsys):
    assert main(["mutants"]) == 0
    rows = capsys.readouterr().out.splitlines()
    expected = list(catalogue().values())
    assert len(rows) == len(expected)
    family_at, description_at = set(), set()
    for row, mutant in zip(rows, expected):
        assert row.startswith(mutant.name + " "), row
        family_at.add(row.index(" " + mutant.family + " ", len(mutant.name)) + 1)
        description_at.add(row.rindex(mutant.description))
    assert len(family_at) == 1, f"the family column starts at offsets {sorted(family_at)}"
    assert len(description_at) == 1, f"the description column starts at offsets {sorted(description_at)}"
    (family_column,) = family_at
    assert family_column >= max(len(m.name) for m in expected) + 2  # at least two spaces after the longest name
