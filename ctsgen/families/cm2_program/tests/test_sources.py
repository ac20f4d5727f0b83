"""cm2-program's view loads, decode loads and decode loads through a view
(docs/spec-decisions.md, cm2-program-view-and-decode-loads): hand-worked programs, the
small-integer blocks, every block format in one shader, and the two composition mutants only
these sources can show.

The expected values below are written out from the spec, not computed by the oracle under test:
a tensorViewNV<2, false, 1, 0> swaps the view's two coordinates (SPV_NV_tensor_addressing,
"Tensor Layout and View": the permutation maps view dimension i to layout dimension p[i]), so
a 16 x 16 row-major tensor loads transposed; outside the view's clip rectangle the load is
skipped and the element keeps the matrix's prior value (zero here). A DecodeFunc load of a
Q8_0 block computes d * qs[e] and of an MXFP4 block E2M1(code) * 2^(e - 127), where e is
coordInBlock linearised row-major over the block shape (SPV_NV_cooperative_matrix2, DecodeFunc;
docs/formats.md).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctsgen.mutants.backend import MutantBackend
from ctsgen.backends.reference import ReferenceBackend
from ctsgen.families.cm2_program import FAMILY
from ctsgen.families.cm2_program.case import (DecodeViewCase, ProgramCase, ProgramVariant, Scalars, expected_on,
                                              layout_variant)
from ctsgen.families.cm2_program.program import ACC32, TYPES, Node, Op, Program, decode_variant, view_variant
from ctsgen.families.cm2_program.strategy import (ATTR, DECODE_ATTRS, DECODE_VIEW_EVERY, KINDS, STEP, STORE,
                                                  build)
from ctsgen.families.cm2_program.tests.test_program import killed
from ctsgen.ops.decode_case import DecodeCase
from ctsgen.ops.decode import FORMATS, SMALL, dequantize, encode_small_blocks
from ctsgen.ops.tensor_layout_case import TensorLayoutCase
from ctsgen.ops.tensor_view_case import TensorViewCase
from ctsgen.model.tensor import ClampMode
from ctsgen.model.types import ComponentType
from ctsgen.oracle.values import from_bits, sentinel_bits
from ctsgen.runner.debug_run import debug_rerun
from ctsgen.testing import check_case
from ctsgen.toolchain import compile_glsl, validate_spirv

C = ClampMode
F32 = ComponentType.float32
POISON = from_bits(sentinel_bits(F32), F32)


def _layout(n: Node, dims: tuple[int, ...], blockSize: tuple[int, ...] | None = None) -> TensorLayoutCase:
    return TensorLayoutCase(layout_variant(n), dims, blockSize)


def _view(n: Node, clip: tuple[int, int, int, int] | None = None) -> TensorViewCase:
    return TensorViewCase(view_variant(n), _layout(n, (16, 16)), clip=clip)


def _store_layout() -> TensorLayoutCase:
    """A row-major 16 x 16 store."""
    return _layout(Node(Op.store, ACC32, (0,), C.Undefined, 2), (16, 16))


def _two_views(first: C) -> ProgramCase:
    """v0 = loadview <2, false, 1, 0> clipped to rows 0-7 (its clamp mode ``first``),
    v1 = loadview <2, false, 0, 1>, v2 = v0 + v1, stored row-major."""
    v0 = Node(Op.loadview, ACC32, (), first, 2, hasDimensions=False, permutation=(1, 0))
    v1 = Node(Op.loadview, ACC32, (), C.ClampToEdge, 2, hasDimensions=False, permutation=(0, 1))
    p = Program((v0, v1, Node(Op.add, ACC32, (0, 1)), Node(Op.store, ACC32, (2,), C.Undefined, 2)))
    return ProgramCase(ProgramVariant(p), (_view(v0, (0, 8, 0, 16)), _view(v1), None, _store_layout()), seed=5)


def test_hand_worked_view_loads() -> None:
    """Both views read one 16 x 16 region each: v0 is its tensor transposed in rows 0-7 and zero
    below (clipped), v1 its tensor as is; the store writes v0 + v1."""
    c = _two_views(C.ClampToEdge)
    d = c.data()
    a, b = (x.reshape(16, 16).astype(np.float64) for x in np.split(d.initial[0], 2))
    want = b.copy()
    want[:8] += a.T[:8]
    assert np.array_equal(d.expected[1].reshape(16, 16), want)
    assert check_case(ReferenceBackend(), c).status.value == "Pass"


def _blocks() -> np.ndarray:
    """16 Q8_0 blocks (block r: d = +1 for even r, -1 for odd; qs[j] = j % 5 - 2) then 8 MXFP4
    blocks (e = 127; byte j: low code 2 (1.0, element j), high code 12 (-2.0, element j + 16))."""
    q8 = np.zeros((16, 34), np.uint8)
    q8[:, 0:2] = np.where(np.arange(16)[:, None] % 2 == 0, [0x00, 0x3C], [0x00, 0xBC])  # f16 +-1.0
    q8[:, 2:] = (np.arange(32) % 5 - 2).astype(np.int8).view(np.uint8)
    mx = np.zeros((8, 17), np.uint8)
    mx[:, 0] = 127
    mx[:, 1:] = 0x2 | 0xC << 4
    raw = np.concatenate([q8.ravel(), mx.ravel()])  # 544 + 136 bytes: 136 + 34 words
    return raw.view(np.uint32)


def test_hand_worked_decode_loads() -> None:
    """v0: Q8_0 through a 16 x 16 layout with blockSize (1, 32): block r holds row r, element c
    is qs[c], so v0[r][c] = (+1 if r even else -1) * (c % 5 - 2). v1: MXFP4 with blockSize
    (2, 16): block r // 2, element (r % 2) * 16 + c, so v1[r][c] = 1.0 for even rows, -2.0 for
    odd. v2 = 2 * (v0 + v1), stored row-major."""
    n0 = Node(Op.loaddecode, ACC32, (), C.Undefined, 2, decoder="q8_0", blockShape=(1, 32))
    n1 = Node(Op.loaddecode, ACC32, (), C.ClampToEdge, 2, decoder="mxfp4", blockShape=(2, 16))
    p = Program((n0, n1, Node(Op.add, ACC32, (0, 1)), Node(Op.scale, ACC32, (2,)),
                 Node(Op.store, ACC32, (3,), C.Undefined, 2)))
    c = ProgramCase(ProgramVariant(p), (DecodeCase(decode_variant(n0), _layout(n0, (16, 16), (1, 32))),
                                        DecodeCase(decode_variant(n1), _layout(n1, (16, 16), (2, 16))),
                                        None, Scalars(2), _store_layout()))
    assert c.layout_regions() == ({0: 0, 1: 136, 4: 0}, [170, 256])
    initial = [_blocks(), np.full(256, POISON, np.float32)]
    r = np.arange(16)[:, None]
    v0 = np.where(r % 2 == 0, 1.0, -1.0) * (np.arange(16)[None, :] % 5 - 2)
    v1 = np.where(r % 2 == 0, 1.0, -2.0)
    out = expected_on(c, c.params(), initial)
    assert out[0] is None and np.array_equal(out[1].reshape(16, 16), 2 * (v0 + v1))


def test_small_blocks_decode_to_every_integer_in_range() -> None:
    """decision cm2-program-decode-small: every format's blocks decode (by the decode family's
    dequantize) to integers in [-2, 2], each of them reached."""
    for fmt in FORMATS.values():
        values = dequantize(fmt, encode_small_blocks(fmt, 64, 3))
        assert set(np.unique(values)) == set(range(-SMALL, SMALL + 1)), fmt.name


def test_a_decode_load_of_every_format_shares_one_shader() -> None:
    """Q4_K and Q5_K share a helper's name: each format's helpers are named for its pointee type."""
    nodes = [Node(Op.loaddecode, ACC32, (), C.Repeat, 2, decoder=f, blockShape=(2, fmt.K // 2))
             for f, fmt in FORMATS.items()]
    v = ProgramVariant(Program((*nodes, Node(Op.store, ACC32, (0,), C.Constant, 2))))
    validate_spirv(compile_glsl(v.glsl(), v.id))
    validate_spirv(compile_glsl(ProgramVariant(v.program, debug=True).glsl(), v.id + ".debug"))


def test_the_view_mutant_needs_two_views_and_a_permutation() -> None:
    """program-view-permutation-dropped: with another view in the shader, v0 loads untransposed."""
    assert killed("program-view-permutation-dropped", _two_views(C.ClampToEdge))
    assert not killed("program-view-permutation-dropped", _two_views(C.Undefined))  # not modelled


def _two_decodes(second: str, s0: int = 1, s1: int = 2) -> ProgramCase:
    """Q8_0 then ``second`` loads (blockSize (1, 32), block seeds s0, s1), v2 = v1 - v0, stored."""
    n0 = Node(Op.loaddecode, ACC32, (), C.Undefined, 2, decoder="q8_0", blockShape=(1, 32))
    n1 = Node(Op.loaddecode, ACC32, (), C.Undefined, 2, decoder=second, blockShape=(1, 32))
    p = Program((n0, n1, Node(Op.sub, ACC32, (1, 0)), Node(Op.store, ACC32, (2,), C.Undefined, 2)))
    return ProgramCase(ProgramVariant(p), (DecodeCase(decode_variant(n0), _layout(n0, (16, 16), (1, 32)), s0),
                                           DecodeCase(decode_variant(n1), _layout(n1, (16, 16), (1, 32)), s1),
                                           None, _store_layout()))


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1))
def test_the_decode_base_mutant_needs_two_decode_loads_of_one_format(s0: int, s1: int) -> None:
    """program-decode-base-hoisted: the second Q8_0 load reads the first one's blocks (two
    different random draws of 16 blocks differ); a Q4_0 load after a Q8_0 one is not touched."""
    assert killed("program-decode-base-hoisted", _two_decodes("q8_0", s0, s1)) == (s0 != s1)
    assert not killed("program-decode-base-hoisted", _two_decodes("q4_0", s0, s1))


@pytest.mark.parametrize("name, case, broken", [
    ("program-view-permutation-dropped", lambda: _two_views(C.ClampToEdge), 0),
    ("program-decode-base-hoisted", lambda: _two_decodes("q8_0"), 1)])
def test_the_debug_rerun_names_the_broken_load(name: str, case: Callable[[], ProgramCase], broken: int) -> None:
    """The debug re-run stores every value, view and decode loads too: the first differing
    node is the load the mutant breaks, and the debug shader compiles and validates."""
    c = case()
    backend = MutantBackend(name)
    assert check_case(backend, c).status.value == "Fail"
    run = debug_rerun(FAMILY, c, backend)
    assert run.first is not None and run.first.index == broken
    assert run.first.label == f"#{broken} {c.variant().program.nodes[broken].op.value}"
    validate_spirv(compile_glsl(run.glsl, f"{name}.debug"))
    assert debug_rerun(FAMILY, c, ReferenceBackend()).first is None


@settings(max_examples=12, deadline=None)
@given(st.lists(STEP, max_size=6), st.lists(STORE, min_size=1, max_size=3), ATTR, ATTR)
def test_sampled_programs_with_view_and_decode_loads_compile_and_validate(
        steps: list[tuple[int, int, int]], stores: list[tuple[int, int]], view: int, decode: int) -> None:
    """Programs the strategy builds with a view load and a decode load first (any view type and
    clamp mode, any format and block shape, through a view in a quarter of them), then drawn
    steps: the shader and its debug variant compile and validate."""
    p = build([(KINDS.index(Op.loadview), 0, view), (KINDS.index(Op.loaddecode), 0, decode), *steps], stores)
    ops = {n.op for n in p.nodes}
    assert Op.loadview in ops and ops & {Op.loaddecode, Op.loaddecodeview}
    for v in (ProgramVariant(p), ProgramVariant(p, debug=True)):
        validate_spirv(compile_glsl(v.glsl(), v.id))


def _decode_through_view(second_view: bool = False) -> ProgramCase:
    """v0 = Q8_0 decode load through a 16 x 16 layout with blockSize (1, 32) (block r holds tensor
    row r) and tensorViewNV<2, false, 1, 0> clipped to rows 0-7; with ``second_view`` v1 = a view
    load (identity) and the store writes v0 + v1, else v0."""
    n0 = Node(Op.loaddecodeview, ACC32, (), C.ClampToEdge, 2, hasDimensions=False, permutation=(1, 0),
              decoder="q8_0", blockShape=(1, 32))
    lc = _layout(n0, (16, 16), (1, 32))
    q0 = DecodeViewCase(DecodeCase(decode_variant(n0), lc), TensorViewCase(view_variant(n0), lc, clip=(0, 8, 0, 16)))
    if not second_view:
        p = Program((n0, Node(Op.store, ACC32, (0,), C.Undefined, 2)))
        return ProgramCase(ProgramVariant(p), (q0, _store_layout()))
    n1 = Node(Op.loadview, ACC32, (), C.ClampToEdge, 2, hasDimensions=False, permutation=(0, 1))
    p = Program((n0, n1, Node(Op.add, ACC32, (0, 1)), Node(Op.store, ACC32, (2,), C.Undefined, 2)))
    return ProgramCase(ProgramVariant(p), (q0, _view(n1), None, _store_layout()), seed=3)


def test_hand_worked_decode_load_through_a_view() -> None:
    """Without the view, element (r, c) would be block r's element c: (+1 if r even else -1) *
    (c % 5 - 2) (test_hand_worked_decode_loads). The permutation (1, 0) swaps the view's
    coordinates, so (r, c) decodes tensor coordinate (c, r): block c, element r, i.e.
    (+1 if c even else -1) * (r % 5 - 2); the clip keeps rows 0-7, rows 8-15 stay zero."""
    c = _decode_through_view()
    assert c.layout_regions() == ({0: 0, 1: 0}, [136, 256])
    initial = [_blocks()[:136], np.full(256, POISON, np.float32)]
    r, col = np.arange(16)[:, None], np.arange(16)[None, :]
    want = np.where(r < 8, np.where(col % 2 == 0, 1.0, -1.0) * (r % 5 - 2), 0.0)
    out = expected_on(c, c.params(), initial)
    assert out[0] is None and np.array_equal(out[1].reshape(16, 16), want)
    assert ProgramCase.from_json(c.to_json()) == c
    assert check_case(ReferenceBackend(), c).status.value == "Pass"


def test_the_debug_rerun_names_a_broken_decode_load_through_a_view() -> None:
    """program-view-permutation-dropped acts on a decode load through a view too (a view load):
    with a second view in the shader its permutation is dropped, and the debug re-run names it."""
    assert not killed("program-view-permutation-dropped", _decode_through_view())
    c = _decode_through_view(second_view=True)
    backend = MutantBackend("program-view-permutation-dropped")
    run = debug_rerun(FAMILY, c, backend)
    assert run.first is not None and run.first.index == 0 and run.first.label == "#0 loaddecodeview"
    validate_spirv(compile_glsl(run.glsl, "decode-view.debug"))
    assert debug_rerun(FAMILY, c, ReferenceBackend()).first is None


@settings(max_examples=12, deadline=None)
@given(st.lists(STEP, max_size=6), st.lists(STORE, min_size=1, max_size=3), st.integers(0, len(C) - 1),
       st.integers(0, len(DECODE_ATTRS) - 1), st.integers(0, 8))
def test_sampled_programs_with_a_decode_load_through_a_view_compile_and_validate(
        steps: list[tuple[int, int, int]], stores: list[tuple[int, int]], mode: int, decode: int, view: int) -> None:
    """Programs the strategy builds with a decode load through a view first (any clamp mode,
    format, block shape and view type over its Dim), then drawn steps: the shader and its debug
    variant compile and validate."""
    attr = mode + len(C) * (decode + len(DECODE_ATTRS) * (DECODE_VIEW_EVERY * view + DECODE_VIEW_EVERY - 1))
    p = build([(KINDS.index(Op.loaddecode), 0, len(TYPES) * attr + TYPES.index(ACC32)), *steps], stores)
    assert p.nodes[0].op is Op.loaddecodeview
    for v in (ProgramVariant(p), ProgramVariant(p, debug=True)):
        validate_spirv(compile_glsl(v.glsl(), v.id))
