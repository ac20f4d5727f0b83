"""A decode-vector repro keeps DecodeVectorFunc: its baked shader goes through the same rewrite."""

from __future__ import annotations

import struct
from pathlib import Path

from ctsgen.core.family import StrategyOptions
from ctsgen.families.decode_vector import FAMILY
from ctsgen.repro import export_case
from ctsgen.strategies.sampling import draw_examples

OP_CAPABILITY = 17
DECODE_VECTOR_CAPABILITY = 5447


def test_exported_repro_declares_decode_vector_and_bakes_its_parameters(tmp_path: Path) -> None:
    case = draw_examples(FAMILY.cases(StrategyOptions()), 1, 5)[0]
    out = export_case(case, tmp_path / "repro")
    words = struct.unpack(f"<{(out / 'repro.spv').stat().st_size // 4}I", (out / "repro.spv").read_bytes())
    caps = {words[i + 1] for i in range(len(words) - 1) if words[i] == (2 << 16 | OP_CAPABILITY)}
    assert DECODE_VECTOR_CAPABILITY in caps
    assert "const uint BAKED" in (out / "repro.comp").read_text()
