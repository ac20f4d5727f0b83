"""What the trust tests share: a usage error is one line, exit 2, naming the fix (docs: errors.py)."""

from __future__ import annotations

import pytest

from ctsgen.cli import main


def fails_with(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """Run ``ctsgen argv``: it must exit 2 with one ``ctsgen: error: WHAT -> FIX`` line; that line."""
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    err = [ln for ln in capsys.readouterr().err.replace("\r", "\n").splitlines() if ln.startswith("ctsgen")]
    assert len(err) == 1 and err[0].startswith("ctsgen: error: ") and " -> " in err[0], err
    return err[0]
