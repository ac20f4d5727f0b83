"""``generate --count N`` gives N cases, and the same command again keeps the pack.

cm2-program has four alike (unseeded) strata that drew the same cases from the same seed:
``--count 200`` wrote 184 cases, and the same command again refused the pack as "generated
with other options". This test failed before its fix.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctsgen.cli import main


@pytest.mark.slow
def test_cm2_program_count_is_the_count_asked_and_a_second_run_is_a_no_op(tmp_path: Path, capsys,
                                                                            session_spirv_cache: Path) -> None:
    out = tmp_path / "p"
    argv = ["generate", "--family", "cm2-program", "--count", "200", "--seed", "0", "--out", str(out)]
    assert main(argv) == 0
    manifest = (out / "manifest.json").read_bytes()
    cases = json.loads(manifest)["cases"]
    assert len(cases) == len({c["name"] for c in cases}) == 200
    capsys.readouterr()
    assert main(argv) == 0
    assert "is up to date" in capsys.readouterr().out
    assert (out / "manifest.json").read_bytes() == manifest
