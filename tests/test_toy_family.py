"""docs/architecture.md's walk-through, run: a toy family added as files of its own only.

The ``toy-copy`` package below lives in a temporary directory, outside ctsgen, and is
registered under the ``ctsgen.families`` entry-point group; no ctsgen file names it. It
is then generated into a pack, read back, run on the reference backend (every case
passes) and on a backend that adds one to an element (the case fails, and the mismatch
report says what the family's ``locate`` says), and checked live with ``check_case``.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import ctsgen.families as registry
from ctsgen.backends.reference import ReferenceBackend
from ctsgen.device.profile import default_profile
from ctsgen.core.family import StrategyOptions, Validator
from ctsgen.pack.generate import draw_cases
from ctsgen.pack.read import PackError, load_pack, validate_shaders
from ctsgen.pack.write import write_pack
from ctsgen.runner.run import run_pack
from ctsgen.core.verdict import Status
from ctsgen.testing import check_case
from ctsgen.mutants.backend import MutantBackend
from ctsgen.mutants.catalogue import catalogue

CASE_PY = '''
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
from hypothesis import strategies as st

from ctsgen.core.shader import BufferSpec
from ctsgen.device.profile import Requirements
from ctsgen.core.family import CaseData, CompareRule, FamilySpec, case_name
from ctsgen.core.mutant import Mutant
from ctsgen.templates import render


def add(src, k):
    """The reference semantics of the copy: each element plus the addend."""
    return src + k


@dataclass(frozen=True)
class ToyVariant:
    """n uint32 elements per case, copied with a run-time addend (family word 0)."""
    n: int

    @property
    def id(self):
        return f"toy_copy.n{self.n}"

    @property
    def local_size_x(self):
        return 1

    def buffers(self):
        return (BufferSpec(1, "src", "uint32"), BufferSpec(2, "dst", "uint32"))

    def requirements(self):
        return Requirements()

    def glsl(self, baked=None):
        return render(Path(__file__).parent, "shader.comp.j2", v=self, baked=baked)

    def to_json(self):
        return {"n": self.n}

    @classmethod
    def from_json(cls, o):
        return cls(int(o["n"]))

    def execute(self, params, offsets, buffers):
        src, dst = buffers
        for words, (a, b) in zip(params, offsets):
            dst[b:b + self.n] = add(src[a:a + self.n], words[0])


@dataclass(frozen=True)
class ToyCase:
    family: ClassVar[str] = "toy-copy"
    shader: ToyVariant
    add: int
    seed: int

    def variant(self):
        return self.shader

    def name(self):
        return case_name(self.shader.id, self.to_json())

    def to_json(self):
        return {"variant": self.shader.to_json(), "add": self.add, "seed": self.seed}

    @classmethod
    def from_json(cls, o):
        return cls(ToyVariant.from_json(o["variant"]), int(o["add"]), int(o["seed"]))

    def data(self):
        src = np.random.default_rng(self.seed).integers(0, 1000, self.shader.n, dtype=np.uint32)
        return CaseData(np.array([self.add], np.uint32), [src, np.zeros(self.shader.n, np.uint32)],
                        [None, src + np.uint32(self.add)])

    def compare_rule(self):
        return CompareRule("bitwise")

    def locate(self, buffer, element):
        return {"copiedFrom": element}


def variants(options, n=None):
    return st.just(ToyVariant(n)) if n else st.builds(ToyVariant, st.sampled_from([4, 8]))


def cases_for(v, options):
    return st.builds(ToyCase, st.just(v), st.integers(0, 100), st.integers(0, 2**16))


MUTANTS = [Mutant("toy-addend-ignored", "toy-copy", "the copy drops the run-time addend",
                  lambda: {f"{__name__}:add": lambda src, k: src})]

FAMILY = FamilySpec(name="toy-copy", case_type=ToyCase, variant_type=ToyVariant,
                    strata_fn=lambda: [{"n": 4}, {"n": 8}], variants_fn=variants, cases_for_fn=cases_for,
                    mutants=tuple(MUTANTS))
'''

SHADER = '''{% import "common.glsl.j2" as common %}
{{ common.header(1) }}
// ctsgen {{ v.id }}
{{ common.params(3, baked) }}
{{ common.storage_buffer(1, "Source", "uint", "srcBuf") }}
{{ common.storage_buffer(2, "Result", "uint", "dstBuf") }}

void main()
{
    for (uint i = 0u; i < {{ v.n }}u; ++i) {
        dstBuf.x[P(1u) + i] = srcBuf.x[P(0u) + i] + P(2u);
    }
}
'''


class OffByOne(ReferenceBackend):
    """The reference backend, but the first output element of every case comes back one higher."""

    def run(self, dispatch, timeout_s):
        out = super().run(dispatch, timeout_s)
        for offset in dispatch.buffers[0].reshape(dispatch.workgroups, -1)[:, 1]:
            out[2][offset] += 1
        return out


@pytest.fixture
def toy_family(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    package = tmp_path / "toy_copy_family"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "family.py").write_text(CASE_PY)
    (package / "shader.comp.j2").write_text(SHADER)
    monkeypatch.syspath_prepend(str(tmp_path))

    def entry_points(group: str):
        assert group == "ctsgen.families"
        from toy_copy_family.family import FAMILY
        return [SimpleNamespace(name="toy-copy", load=lambda: FAMILY)]

    monkeypatch.setattr(registry, "entry_points", entry_points)
    registry.families.cache_clear()
    catalogue.cache_clear()
    yield registry.get_family("toy-copy")
    registry.families.cache_clear()
    catalogue.cache_clear()
    for name in [m for m in sys.modules if m.startswith("toy_copy_family")]:
        del sys.modules[name]


def test_a_family_added_as_its_own_files_generates_runs_and_fails_where_it_should(toy_family, tmp_path) -> None:
    cases = draw_cases(toy_family, 6, 0, StrategyOptions(profile=default_profile()))
    pack = load_pack(write_pack(cases, tmp_path / "pack", header={"seed": 0}))  # compiled and validated
    assert {v.family for v in pack.variants.values()} == {"toy-copy"} and len(pack.variants) == 2
    assert run_pack(pack, ReferenceBackend()).counts == {"Pass": 6}
    results = []
    run_pack(pack, OffByOne(), results.append)
    assert {r.status for r in results} == {Status.Fail}
    assert all(r.mismatches == [{"buffer": "dst", "element": 0, "copiedFrom": 0, "expected": r.mismatches[0]["expected"],
                                 "actual": r.mismatches[0]["actual"]}] for r in results)
    assert all(r.mismatches[0]["actual"]["value"] == r.mismatches[0]["expected"]["value"] + 1 for r in results)
    case = cases[0]
    assert check_case(ReferenceBackend(), case).status is Status.Pass
    failed = check_case(OffByOne(), case)
    assert failed.status is Status.Fail and failed.detail == f"1 of {case.shader.n} elements of 'dst' differ"
    assert np.array_equal(case.data().expected[1], case.data().initial[0] + np.uint32(case.add))


def test_an_entry_point_familys_mutants_join_the_catalogue_and_are_found(toy_family, tmp_path) -> None:
    """The catalogue reads FamilySpec.mutants, so a family registered from outside ctsgen brings its own."""
    assert catalogue()["toy-addend-ignored"].family == "toy-copy"
    cases = [c for c in draw_cases(toy_family, 6, 0, StrategyOptions(profile=default_profile())) if c.add != 0]
    pack = load_pack(write_pack(cases, tmp_path / "pack", header={"seed": 0}))
    assert run_pack(pack, MutantBackend("toy-addend-ignored")).counts == {"Fail": len(cases)}
    assert run_pack(pack, ReferenceBackend()).counts == {"Pass": len(cases)}  # the mutant was put back


def test_an_entry_point_family_declares_its_own_validator(toy_family, tmp_path, monkeypatch) -> None:
    """FamilySpec.validator is the extension point: a family whose modules need another validator
    declares it, and pack writing, its manifest and pack reading use it (no table in ctsgen names it).
    A manifest naming another validator than the family's is refused."""
    import toy_copy_family.family as module

    seen: list[tuple[int, bool]] = []

    def validate(spirv: bytes, required: bool) -> bool:
        seen.append((len(spirv), required))
        return True

    monkeypatch.setattr(module, "FAMILY", dataclasses.replace(module.FAMILY, validator=Validator("toy-val", validate)))
    registry.families.cache_clear()
    family = registry.get_family("toy-copy")
    cases = draw_cases(family, 6, 0, StrategyOptions(profile=default_profile()))
    pack = load_pack(write_pack(cases, tmp_path / "pack", header={"seed": 0}))
    assert {r["validator"] for r in pack.manifest["variants"].values()} == {"toy-val"}
    assert len(seen) == len(pack.variants) == 2 and all(n > 0 and required for n, required in seen)
    validate_shaders(pack)
    assert len(seen) == 4
    vid = next(iter(pack.variants))
    pack.manifest["variants"][vid]["validator"] = "spirv-val"
    with pytest.raises(PackError, match=f"{vid} names validator 'spirv-val', but this ctsgen validates toy-copy "
                                        "with 'toy-val'"):
        validate_shaders(pack)
