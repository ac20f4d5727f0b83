"""coopvec-elementwise: requirements against the H100 profile, strategy edges, every stratum compiles and
validates (with the instructions and execution modes it claims), data inside the domain, the reference
backend passes a pack, and each catalogued mutant fails a case that exposes it."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import find, given, settings

from ctsgen.backends.reference import ReferenceBackend
from ctsgen.device.profile import DeviceProfile, default_profile
from ctsgen.core.family import StrategyOptions
from ctsgen.families.coopvec_elementwise import FAMILY
from ctsgen.ops import coopvec_elementwise as oracle
from ctsgen.families.coopvec_elementwise.case import (
    LOCAL,
    ElementwiseCase,
    ElementwiseVariant,
)
from ctsgen.ops.coopvec_elementwise_ops import (
    EXT_INST,
    GROUPS,
    Op,
    conversions,
)
from ctsgen.model.types import CoopVecType as T
from ctsgen.mutants.backend import MutantBackend
from ctsgen.mutants.catalogue import catalogue
from ctsgen.pack.generate import draw_cases
from ctsgen.pack.read import load_pack
from ctsgen.pack.write import write_pack
from ctsgen.runner.run import run_pack
from ctsgen.strategies.sampling import draw_examples
from ctsgen.toolchain import compile_glsl, validate_spirv
from ctsgen.toolchain.spirv_patch import instructions, to_words

H100 = default_profile()  # the embedded H100 read-out (driver 580)
OPTS = StrategyOptions(profile=H100)
OP_EXT_INST, OP_EXECUTION_MODE = 12, 16


# -- requirements ---------------------------------------------------------------
def test_the_h100_reports_every_element_type() -> None:
    for t in (T.float16, T.float32, T.sint8, T.uint8, T.sint32, T.uint32):
        assert H100.unsupported_reason(ElementwiseVariant(Op.load_store, t, t, 4).requirements()) is None


def test_a_type_no_combination_reports_is_not_supported() -> None:
    """VUID-RuntimeSpirv-OpTypeCooperativeVector-10095: only types vkGetPhysicalDeviceCooperativeVector-
    PropertiesNV reports; a device whose combinations are all fp16 cannot take uint8 vectors."""
    f16_only = DeviceProfile(extensions=frozenset({"VK_NV_cooperative_vector"}), features={"cooperativeVector": 1},
                             coopvec_combinations=[dict(inputType=0, inputInterpretation=0, matrixInterpretation=0,
                                                        biasInterpretation=0, resultType=0, transpose=0)])
    assert f16_only.unsupported_reason(ElementwiseVariant(Op.fadd, T.float16, T.float16, 4).requirements()) is None
    reason = f16_only.unsupported_reason(ElementwiseVariant(Op.convert, T.float16, T.uint8, 4).requirements())
    assert reason is not None and "coopvecComponentType(7)" in reason


def test_ieee_variants_need_the_float_controls_properties() -> None:
    """The H100 read-out does not list VkPhysicalDeviceFloatControlsProperties, so an ieee variant
    is NotSupported there until a profile says the device preserves NaN/Inf and rounds to even."""
    reason = H100.unsupported_reason(ElementwiseVariant(Op.nmin, T.float16, T.float16, 4, True).requirements())
    assert reason is not None and "shaderSignedZeroInfNanPreserveFloat16" in reason
    able = replace(H100, features={**H100.features, "shaderSignedZeroInfNanPreserveFloat32": 1,
                                   "shaderRoundingModeRTEFloat32": 1})
    assert able.unsupported_reason(ElementwiseVariant(Op.nmin, T.float32, T.float32, 4, True).requirements()) is None


@pytest.mark.parametrize("bad", [
    dict(op=Op.fadd, componentType=T.sint8, resultType=T.sint8),
    dict(op=Op.convert, componentType=T.float16, resultType=T.float16),
    dict(op=Op.iadd, componentType=T.sint8, resultType=T.uint8),
    dict(op=Op.fma, componentType=T.float16, resultType=T.float16, ieee=True),
    dict(op=Op.load_store, componentType=T.uint8, resultType=T.uint8, ieee=True),
])
def test_invalid_signatures_are_refused(bad: dict) -> None:
    with pytest.raises(ValueError):
        ElementwiseVariant(N=4, **bad)


def test_offsets_must_be_16_byte_multiples() -> None:
    with pytest.raises(ValueError, match="10099"):
        ElementwiseCase(ElementwiseVariant(Op.load_store, T.float16, T.float16, 4), loadOffset=8)


# -- strategy ---------------------------------------------------------------------
def test_strata_cover_every_op_type_and_conversion() -> None:
    cells = FAMILY.strata()
    assert {c["op"] for c in cells} == set(Op)
    assert {(c["componentType"], c["resultType"]) for c in cells if c["op"] is Op.convert} == set(conversions())
    assert len(conversions()) == 30
    assert {c["componentType"] for c in cells if c.get("ieee")} == {T.float16, T.float32}
    assert set(GROUPS) and {op for ops in GROUPS.values() for op in ops} == set(Op)


VTS16 = dict(op=Op.vts, componentType=T.float16, ieee=True)


@pytest.mark.slow
@pytest.mark.parametrize("name, pinned, predicate", [
    ("one component", {}, lambda c: c.shader.N == 1),
    ("maxCooperativeVectorComponents", {}, lambda c: c.shader.N == 512),
    ("a large odd N", {}, lambda c: c.shader.N in (255, 511)),
    ("an offset at 16 mod 32", {}, lambda c: c.loadOffset % 32 == 16 and c.storeOffset % 32 == 16),
    ("NMin with NaN data", {}, lambda c: c.shader.op is Op.nmin and c.shader.ieee),
    ("fp16 -> int8", {}, lambda c: c.shader.op is Op.convert and (c.shader.componentType, c.shader.resultType)
     == (T.float16, T.sint8)),
    ("a 32-bit shift with edges", {}, lambda c: c.shader.op is Op.shr and c.shader.componentType is T.sint32
     and c.edges),
    ("a NaN scalar", VTS16, lambda c: np.isnan(c.shader.scalar(c.scalarBits))),
    ("an overflowing fp16 scalar", VTS16, lambda c: c.shader.scalar(c.scalarBits) == 4096.0),
    ("a scalar that is not a power of two", dict(op=Op.vts, componentType=T.float32),
     lambda c: abs(np.frexp(c.shader.scalar(c.scalarBits))[0]) not in (0.0, 0.5)),
])
def test_the_strategy_reaches_the_edge(name: str, pinned: dict, predicate) -> None:
    found = find(FAMILY.cases(OPTS, **pinned), predicate, settings=settings(max_examples=3000, database=None))
    assert predicate(found), name


@settings(max_examples=150, deadline=None)
@given(FAMILY.cases(OPTS))
def test_drawn_data_stay_inside_the_domain_and_round_trip(c: ElementwiseCase) -> None:
    """data() runs oracle.check_domain; the case survives JSON; H100 supports every non-ieee variant."""
    d = c.data()
    assert d.expected[1].size * d.expected[1].itemsize == c.storeOffset + LOCAL * c.shader.out_stride
    assert FAMILY.case_from_json(c.to_json()) == c
    assert c.shader.N <= H100.properties["maxCooperativeVectorComponents"]
    if not c.shader.ieee:
        assert H100.unsupported_reason(c.shader.requirements()) is None


def _operands(c: ElementwiseCase) -> list[np.ndarray]:
    v = c.shader
    src = c.data().initial[0]
    return [oracle.load(src, o, v.N) for o in v.operand_offsets(0, c.loadOffset)]


def test_float_to_integer_data_hold_no_subnormal() -> None:
    """A uniform fp16 source of fp16 -> uint8 that rounds below 2^-14 is 0, not a subnormal a device
    may flush (seed 24753 drew 1.76e-5 at invocation 17, and data() refused its own case)."""
    c = ElementwiseCase(ElementwiseVariant(Op.convert, T.float16, T.uint8, 4), loadOffset=80, storeOffset=80,
                        seed=24753)
    (a,) = _operands(c)
    assert a[17, 3] == 0
    assert (np.abs(a[a != 0].astype(np.float64)) >= np.finfo(np.float16).tiny).all()


def test_edges_lead_the_first_invocation() -> None:
    v = ElementwiseVariant(Op.idiv, T.sint8, T.sint8, 3)
    a, b = _operands(ElementwiseCase(v, seed=5, edges=True))
    assert (a[0].tolist(), b[0].tolist()) == ([-128, 127, 7], [1, -1, 2])


def test_ieee_data_hold_specials_and_default_data_none() -> None:
    for ieee in (True, False):
        c = ElementwiseCase(ElementwiseVariant(Op.nmax, T.float32, T.float32, 64, ieee), seed=9)
        vals = np.concatenate([o.ravel() for o in _operands(c)])
        assert np.isnan(vals).any() == ieee and np.isinf(vals).any() == ieee
        assert (np.abs(vals[np.isfinite(vals) & (vals != 0)]) >= np.finfo(np.float32).tiny).all()


def test_locate_names_invocation_component_and_padding() -> None:
    c = ElementwiseCase(ElementwiseVariant(Op.fadd, T.float16, T.float16, 5), storeOffset=32)
    assert c.locate(1, (32 + 16) // 2 + 4) == {"invocation": 1, "component": 4}
    assert c.locate(1, (32 + 16) // 2 + 5) == {"invocation": 1, "padding": 5}


# -- shaders --------------------------------------------------------------------------
def _stratum_variants() -> list[ElementwiseVariant]:
    return [draw_examples(FAMILY.variants(OPTS, **cell), 1, 100 + i)[0] for i, cell in enumerate(FAMILY.strata())]


@pytest.mark.slow
def test_every_stratum_compiles_and_validates_with_its_instructions() -> None:
    """glslang accepts every op x type (NMin/NMax/NClamp through GL_EXT_spirv_intrinsics), spirv-val
    accepts the module, and the module holds what the shader claims: the GLSL.std.450 N* number and,
    for ieee, SignedZeroInfNanPreserve (4461) and RoundingModeRTE (4462) for the float width."""
    for v in _stratum_variants():
        spirv = compile_glsl(v.glsl(), f"{v.id}.comp")
        validate_spirv(spirv)
        insts = list(instructions(to_words(spirv)))
        if v.op in EXT_INST:
            assert any(op == OP_EXT_INST and w[3] == EXT_INST[v.op][1] for _, op, w in insts), v.id
        modes = {(w[1], w[2]) for _, op, w in insts if op == OP_EXECUTION_MODE and len(w) == 3}
        bits = v.componentType.bits
        assert ({(4461, bits), (4462, bits)} <= modes) == v.ieee, v.id


# -- the reference backend and the mutants -----------------------------------------------------
@pytest.fixture(scope="module")
def pack_cases() -> list[ElementwiseCase]:
    return draw_cases(FAMILY, len(FAMILY.strata()), 7, OPTS, cases_per_variant=1)


@pytest.mark.slow
def test_the_reference_backend_passes_a_pack_of_every_stratum(pack_cases, tmp_path: Path) -> None:
    assert len({c.shader.id for c in pack_cases}) == len(FAMILY.strata())
    pack = load_pack(write_pack(pack_cases, tmp_path / "pack", header={"seed": 7}))
    assert run_pack(pack, ReferenceBackend()).counts == Counter({"Pass": len(pack_cases)})


#: mutant -> a stratum whose cases expose it
EXPOSED_BY = {
    "coopvec-elementwise-load-offset-32-aligned": dict(op=Op.fadd, componentType=T.float32),
    "coopvec-elementwise-store-whole-granules": dict(op=Op.load_store, componentType=T.uint8),
    "coopvec-elementwise-shift-masked-4-bits": dict(op=Op.shl, componentType=T.uint32),
    "coopvec-elementwise-f16-to-int-rounds": dict(op=Op.convert, componentType=T.float16, resultType=T.sint32),
    "coopvec-elementwise-vts-drops-last": dict(op=Op.vts, componentType=T.float16),
}


def test_every_mutant_of_the_family_is_listed() -> None:
    assert {n for n, m in catalogue().items() if m.family == FAMILY.name} == set(EXPOSED_BY)


@pytest.mark.parametrize("mutant", sorted(EXPOSED_BY))
def test_the_mutant_fails_cases_the_reference_passes(mutant: str, tmp_path: Path) -> None:
    cases = draw_examples(FAMILY.cases(OPTS, **EXPOSED_BY[mutant]), 6, 3)
    pack = load_pack(write_pack(cases, tmp_path / "pack", header={"seed": 3}))
    assert run_pack(pack, ReferenceBackend()).counts == Counter({"Pass": len(cases)})
    assert run_pack(pack, MutantBackend(mutant)).counts["Fail"] >= 1
