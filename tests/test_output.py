"""Output a person wants to read: help that lists the families and states
--timeout's grace, results file names without ':', a repro's replay line naming the backend that
failed, and no .hypothesis/ left in the user's directory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctsgen.cli import build_parser, main
from ctsgen.families import families

REPO = Path(__file__).resolve().parents[1]


def _help(*command: str) -> str:
    p = subprocess.run([sys.executable, "-m", "ctsgen", *command, "--help"], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "300"})
    assert p.returncode == 0, p.stderr
    return " ".join(p.stdout.split())


@pytest.mark.slow
def test_family_help_lists_the_families():
    for command in (("generate",), ("fuzz",)):
        text = _help(*command)
        for name in families():
            assert name in text, (command, name)


@pytest.mark.slow
def test_timeout_help_states_the_grace():
    for command in ("run", "fuzz"):
        assert "20 s more" in _help(command)


def test_no_hypothesis_directory_in_the_cwd(tmp_path, monkeypatch, session_spirv_cache):
    monkeypatch.chdir(tmp_path)
    assert main(["generate", "--count", "3", "--out", "p"]) == 0
    assert main(["fuzz", "--max-examples", "3", "--database", "none", "--repro-dir", "r"]) == 0
    assert not (tmp_path / ".hypothesis").exists()


def test_results_file_names_have_no_colon(tmp_path, session_spirv_cache):
    pack = tmp_path / "p"
    assert main(["generate", "--count", "3", "--out", str(pack)]) == 0
    mutant = "tensor-layout-clamp-ignored"
    from ctsgen.mutants.catalogue import catalogue
    if mutant not in catalogue():
        mutant = next(n for n, m in catalogue().items() if m.family == "tensor-layout")
    main(["run", str(pack), "--quiet", "--backend", f"mutant:{mutant}"])
    names = [p.name for p in pack.iterdir() if p.name.startswith("results-")]
    assert f"results-mutant-{mutant}.jsonl" in names, names
    assert not any(":" in n for n in names)


def test_repro_report_names_the_backend_of_the_results(tmp_path, capsys, session_spirv_cache):
    pack = tmp_path / "p"
    assert main(["generate", "--count", "3", "--out", str(pack)]) == 0
    assert main(["run", str(pack), "--quiet"]) == 0
    case = json.loads((pack / "manifest.json").read_text())["cases"][0]["name"]
    assert main(["repro", str(pack), case, "--out", str(tmp_path / "r"),
                 "--results", str(pack / "results-reference.jsonl")]) == 0
    assert "--backend reference" in (tmp_path / "r" / "REPORT.md").read_text()
    assert "--backend reference" in capsys.readouterr().out
    args = build_parser().parse_args(["repro", str(pack), case, "--out", "x", "--backend", "my_mod:B"])
    assert args.backend == "my_mod:B"
