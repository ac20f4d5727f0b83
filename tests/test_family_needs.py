"""``Family.needs``: what every case of a family needs. A device without it runs none of the
family's cases, so the fuzzer leaves the family out and says why, instead of drawing and
compiling examples the device can only reject (decode-vector on the H100 profile drew for
10 s and checked 0 cases in bench/throughput.py)."""

from __future__ import annotations

import pytest

from ctsgen.backends.reference import ReferenceBackend
from ctsgen.cli import main
from ctsgen.device.profile import default_profile
from ctsgen.families import families, get_family
from ctsgen.core.family import StrategyOptions
from ctsgen.fuzz.loop import Fuzzer, FuzzOptions
from ctsgen.strategies.sampling import draw_examples


@pytest.mark.parametrize("name", sorted(families()))
def test_every_variant_requires_what_its_family_declares_it_needs(name: str) -> None:
    family = get_family(name)
    assert family.needs.extensions, f"{name} declares no extension it needs"
    for v in draw_examples(family.variants(StrategyOptions()), 8, 0):
        req = v.requirements()
        assert set(family.needs.extensions) <= set(req.extensions), (name, v.id, req)
        assert set(family.needs.features) <= set(req.features), (name, v.id, req)


def test_the_h100_profile_runs_every_family_but_decode_vector() -> None:
    h100 = default_profile()
    blocked = {n for n in families() if h100.unsupported_reason(get_family(n).needs)}
    assert blocked == {"decode-vector"}


def test_a_family_the_device_cannot_run_is_left_out_and_named() -> None:
    backend = ReferenceBackend()
    fuzzer = Fuzzer(backend, FuzzOptions(families=("tensor-layout", "decode-vector"), max_examples=4,
                                         database=None))
    assert [f.name for f in fuzzer.families] == ["tensor-layout"]
    assert "VK_NV_cooperative_matrix_decode_vector" in fuzzer.report.skipped["decode-vector"]
    report = fuzzer.run()
    assert report.examples > 0 and report.result is None


def test_fuzzing_only_families_the_device_cannot_run_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["fuzz", "--backend", "reference", "--family", "decode-vector", "--max-examples", "3",
              "--database", "none"])
    assert e.value.code == 2
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert len(err) == 1 and err[0].startswith("ctsgen: error: "), err
    assert "decode-vector" in err[0] and "is not exposed" in err[0]
    assert err[0].split(" -> ")[1].startswith("choose a family it runs: cm2-convert, ")


def test_the_fuzz_command_says_which_family_it_leaves_out(capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    code = main(["fuzz", "--backend", "reference", "--family", "cm2-convert", "--family", "decode-vector",
                 "--max-examples", "3", "--database", "none", "--repro-dir", str(tmp_path)])
    out = capsys.readouterr()
    assert code == 0
    assert "skipping decode-vector: device extension VK_NV_cooperative_matrix_decode_vector is not exposed" in out.err
    assert "fuzzed reference (cm2-convert):" in out.out
