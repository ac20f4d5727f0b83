"""ctsgen.kernel: each statement's meaning against hand-worked values and exact integers, the
exact-domain bounds against every concrete value, JSON round trips, and drawn kernels valid by
construction (compiled by glslang, validated by spirv-val) on every fixture profile."""

from __future__ import annotations

import copy
import json
import pickle
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import find, given, settings
from hypothesis import strategies as st

from ctsgen.device.profile import load_profile
from ctsgen.kernel import evaluate as kernel_eval
from ctsgen.kernel import glsl as kernel_glsl
from ctsgen.kernel import ir
from ctsgen.kernel.ir import Kernel, Kind, Ref
from ctsgen.model.types import ComponentType, MatrixType, MatrixUse, Scope
from ctsgen.ops.khr_addressing import Layout
from ctsgen.strategies import kernel as kernel_strategies
from ctsgen.strategies.sampling import draw_examples
from ctsgen.toolchain import compile_glsl
from ctsgen.toolchain.variants import validate_module

F16, F32, U8, U32, S8, S32 = (ComponentType.float16, ComponentType.float32, ComponentType.uint8,
                              ComponentType.uint32, ComponentType.sint8, ComponentType.sint32)
PROFILES = sorted((Path(__file__).resolve().parents[1] / "ctsgen" / "device" / "profiles").glob("*.txt"))
ROW = Layout.RowMajor


def kernel(body: tuple[ir.Stmt, ...], *, S: int = 1, ab: ComponentType = F16, c: ComponentType = F32,
           counts: tuple[int, int, int] = (1, 1, 2), array: int = 0, functions: tuple[ir.Function, ...] = (),
           m: int = 2, n: int = 3, k: int = 4) -> Kernel:
    """A small hand-made kernel (sizes need not be a device's: the oracle does not care)."""
    return Kernel(MatrixType(ab, Scope.Subgroup, m, k, MatrixUse.A, 8), MatrixType(ab, Scope.Subgroup, k, n, MatrixUse.B, 8),
                  MatrixType(c, Scope.Subgroup, m, n, MatrixUse.Accumulator, 8), S, counts, array, (ROW, ROW, ROW),
                  (None, None), functions, body)


def prologue(k_counts: tuple[int, int, int] = (1, 1, 2)) -> tuple[ir.Stmt, ...]:
    return tuple(ir.Load(Ref(f"{kind}{j}")) for kind, n in zip("abc", k_counts) for j in range(n))


def memory(k: Kernel, words: list[int], seed: int = 1) -> kernel_eval.Memory:
    rng = np.random.default_rng(seed)
    ra, rb, rc = k.regions
    def draw(m: MatrixType, tiles: int) -> np.ndarray:
        n = tiles * k.subgroups * m.rows * m.cols
        if m.component.is_float:
            return rng.integers(-2, 3, n).astype(m.component.dtype)
        info = np.iinfo(m.component.dtype)
        return rng.integers(int(info.min), int(info.max), n, endpoint=True).astype(m.component.dtype)
    return kernel_eval.Memory(draw(k.a, ra), draw(k.b, rb), draw(k.c, rc), np.array(words, np.uint32))


def tile(mem: np.ndarray, index: int, m: MatrixType) -> np.ndarray:
    n = m.rows * m.cols
    return mem[index * n:(index + 1) * n].astype(np.float64 if m.component.is_float else np.int64).reshape(m.rows, m.cols)


# -- loops ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("trips", [0, 1, 2, 3])
def test_a_loop_carries_its_accumulator_through_every_iteration(trips: int) -> None:
    """c0 = A_i x B_i + c0 for i < trips, each iteration loading its own tiles: the sum of the products."""
    body = prologue() + (ir.Loop((ir.Load(Ref("a0")), ir.Load(Ref("b0")),
                                  ir.MulAdd(Ref("c0"), Ref("a0"), Ref("b0"), Ref("c0"))), 3),)
    k = kernel(body)
    mem = memory(k, [trips])
    want = tile(mem.c, 0, k.c)
    for i in range(trips):  # region 0 is the prologue's tile, the loop's region starts at tile 1
        want = want + tile(mem.a, 1 + i, k.a) @ tile(mem.b, 1 + i, k.b)
    got = kernel_eval.evaluate(k, mem)
    assert np.array_equal(got[0][0], want)


@pytest.mark.parametrize("jump,at,iterations", [("break", 1, 1), ("break", 5, 3), ("continue", 1, 2)])
def test_break_and_continue_leave_at_their_words_iteration(jump: str, at: int, iterations: int) -> None:
    """``if (i == w) break;`` before the MulAdd: iterations 0..w-1 count (w past the trips: all 3);
    ``continue`` at w skips that iteration's MulAdd only."""
    stmt = ir.Break() if jump == "break" else ir.Continue()
    body = prologue() + (ir.Loop((stmt, ir.MulAdd(Ref("c0"), Ref("a0"), Ref("b0"), Ref("c0"))), 3),)
    k = kernel(body)
    mem = memory(k, [3, at])
    got = kernel_eval.evaluate(k, mem)[0][0]
    want = tile(mem.c, 0, k.c) + iterations * (tile(mem.a, 0, k.a) @ tile(mem.b, 0, k.b))
    assert np.array_equal(got, want)


def test_nested_loops_read_one_tile_per_iteration_of_both() -> None:
    """A load in two loops of most trips 2 and 3 reads tile it = i0 * 3 + i1 of its region."""
    body = prologue() + (ir.Loop((ir.Loop((ir.Load(Ref("c1")), ir.Binary(Ref("c0"), Ref("c0"), Ref("c1"))), 3),), 2),)
    k = kernel(body)
    assert k.words == 2  # preorder: the outer loop's trip count, then the inner one's
    mem = memory(k, [2, 3])
    want = tile(mem.c, 0, k.c) + sum(tile(mem.c, 2 + it, k.c) for it in range(6))
    assert np.array_equal(kernel_eval.evaluate(k, mem)[0][0], want)


# -- branches -------------------------------------------------------------------------------------------------
def test_a_per_subgroup_branch_gives_each_subgroup_its_own_side() -> None:
    body = prologue() + (ir.If((ir.Binary(Ref("c0"), Ref("c0"), Ref("c1")),),
                               (ir.Binary(Ref("c0"), Ref("c0"), Ref("c1"), True),), per_subgroup=True),)
    k = kernel(body, S=3)
    mem = memory(k, [0b101])
    got = kernel_eval.evaluate(k, mem)[0]
    for s, plus in enumerate([True, False, True]):
        c0, c1 = tile(mem.c, s, k.c), tile(mem.c, 3 + s, k.c)
        assert np.array_equal(got[s], c0 + c1 if plus else c0 - c1)


# -- conditions read back from a matrix (probes) ----------------------------------------------------------------
def probed(taken: bool, v: float) -> int:
    """A float kernel's threshold word making ``v < threshold`` come out ``taken`` (an int32's bits)."""
    return (int(v) + (1 if taken else 0)) & 0xFFFFFFFF


@pytest.mark.parametrize("taken", [True, False])
def test_a_probed_branch_decides_the_whole_workgroup_on_subgroup_0s_element(taken: bool) -> None:
    """Element 4 of c0 (row-major 2 x 3: row 1, column 1) of subgroup 0 against the word: every
    subgroup takes the side subgroup 0's value picks, whatever its own c0 holds."""
    body = prologue() + (ir.If((ir.Copy(Ref("c0"), Ref("c1")),), (), probe=Ref("c0"), at=4),)
    k = kernel(body, S=3)
    mem0 = memory(k, [0])
    v = tile(mem0.c, 0, k.c)[1, 1]
    mem = memory(k, [probed(taken, v)])
    got = kernel_eval.evaluate(k, mem)[0]
    for s in range(3):
        assert np.array_equal(got[s], tile(mem.c, 3 + s if taken else s, k.c))


def test_a_per_subgroup_probe_reads_each_subgroups_own_element() -> None:
    """c0[sg] = sg-dependent data; threshold 0: subgroup s takes ``then`` (c0 - c1) where its own
    element 0 of c1 is negative."""
    body = prologue() + (ir.If((ir.Binary(Ref("c0"), Ref("c0"), Ref("c1"), True),), (), per_subgroup=True,
                               probe=Ref("c1"), at=0),)
    k = kernel(body, S=4)
    for seed in range(6):
        mem = memory(k, [0], seed)
        got = kernel_eval.evaluate(k, mem)[0]
        for s in range(4):
            c0, c1 = tile(mem.c, s, k.c), tile(mem.c, 4 + s, k.c)
            assert np.array_equal(got[s], c0 - c1 if c1[0, 0] < 0 else c0)


def test_a_probe_reads_its_element_in_the_accumulator_buffers_layout() -> None:
    """Column-major 2 x 3: element 1 of the stored tile is row 1, column 0."""
    body = prologue() + (ir.If((ir.Copy(Ref("c0"), Ref("c1")),), (), probe=Ref("c0"), at=1),)
    k = replace(kernel(body), layouts=(ROW, ROW, Layout.ColumnMajor))
    mem0 = memory(k, [0])
    v = mem0.c[:6].astype(np.float64).reshape(3, 2).T[1, 0]  # the tile as the buffer holds it
    for taken in (True, False):
        mem = memory(k, [probed(taken, v)])
        flat = mem.c.astype(np.float64)
        want = (flat[6:12] if taken else flat[:6]).reshape(3, 2).T
        assert np.array_equal(kernel_eval.evaluate(k, mem)[0][0], want)


def test_a_probed_break_leaves_the_loop_once_the_accumulator_passes_below_the_word() -> None:
    """c0 -= c1 each iteration (c1 = 1 everywhere: a load then x0 + 1), then ``if (c0[0] < w) break;``:
    the loop runs until c0[0] drops below w, at most 5 times."""
    body = prologue() + (ir.ElementMap(Ref("c1"), 0, 1),
                         ir.Loop((ir.Binary(Ref("c0"), Ref("c0"), Ref("c1"), True),
                                  ir.Break(probe=Ref("c0"), at=0)), 5))
    k = kernel(body)
    for w in (-6, -3, 0, 1, 2, 3):
        mem = memory(k, [5, w & 0xFFFFFFFF])
        c0 = tile(mem.c, 0, k.c)
        runs = 0
        while runs < 5:
            runs += 1
            if c0[0, 0] - runs < w:
                break
        assert np.array_equal(kernel_eval.evaluate(k, mem)[0][0], c0 - runs), w


@pytest.mark.parametrize("c,word,value,taken", [(U32, 2**31 + 5, 2**31 + 4, True), (U32, 3, 2**31, False),
                                                (S32, 0xFFFFFFFF, -2, True), (S32, 0xFFFFFFFE, -2, False)])
def test_an_integer_probe_compares_in_its_type(c: ComponentType, word: int, value: int, taken: bool) -> None:
    """The word is the threshold itself for an unsigned Accumulator, an int32 for a signed one."""
    body = prologue() + (ir.ElementMap(Ref("c0"), 0, value),
                         ir.If((ir.Copy(Ref("c0"), Ref("c1")),), (), probe=Ref("c0"), at=2))
    k = kernel(body, ab=S8 if c is S32 else U8, c=c)
    mem = memory(k, [word])
    want = tile(mem.c, 1, k.c) if taken else np.full((2, 3), value)
    assert np.array_equal(kernel_eval.evaluate(k, mem)[0][0], want)


def test_a_probe_keeps_older_kernels_json_and_round_trips_its_own() -> None:
    """New fields are left out at their defaults (an older pack's digest and case names stay)."""
    assert ir.Break().to_json() == {"op": "break"} and ir.Continue().to_json() == {"op": "continue"}
    assert ir.If((), ()).to_json() == {"op": "if", "then": [], "orelse": [], "per_subgroup": False}
    k = kernel(prologue() + (ir.If((), (), True, Ref("r0", "i0"), 3), ir.Loop((ir.Continue(Ref("c1"), 5),), 2)),
               array=2)
    again = Kernel.from_json(json.loads(json.dumps(k.to_json())))
    assert again == k and again.digest == k.digest
    for bad in ({"op": "break", "probe": "a0"}, {"op": "if", "then": [], "probe": "c0", "at": "3"},
                {"op": "continue", "at": -1}):
        with pytest.raises(ValueError, match="probe"):
            ir.Stmt.from_json(bad)


# -- structs ------------------------------------------------------------------------------------------------------
def test_struct_members_carry_through_a_loop_and_a_call_and_are_stored_last() -> None:
    """s0 = {a0: A, c0: Accumulator}: s0.c0 += s0.a0 x b0 in each of 2 iterations, then f(inout s0.c0)
    doubles it; slots: c0, c1, then s0.c0."""
    double = ir.Function((Kind.c,), ("inout",), (ir.Binary(Ref("p0"), Ref("p0"), Ref("p0")),))
    body = prologue() + (ir.Load(Ref("s0.a0")), ir.Load(Ref("s0.c0")),
                         ir.Loop((ir.MulAdd(Ref("s0.c0"), Ref("s0.a0"), Ref("b0"), Ref("s0.c0")),), 3),
                         ir.Call(0, (Ref("s0.c0"),)))
    k = replace(kernel(body, functions=(double,)), members=("a0", "c0"))
    assert [r.var for r in k.stores] == ["c0", "c1", "s0.c0"] and Ref("s0.a0").kind is Kind.a
    mem = memory(k, [2])
    a, b = tile(mem.a, 1, k.a), tile(mem.b, 0, k.b)  # A's regions: a0's tile 0, s0.a0's tile 1
    want = 2 * (tile(mem.c, 2, k.c) + 2 * (a @ b))   # Accumulator regions: c0, c1, then s0.c0's tile 2
    got = kernel_eval.evaluate(k, mem)
    assert np.array_equal(got[2][0], want) and np.array_equal(got[0][0], tile(mem.c, 0, k.c))


def test_a_struct_keeps_older_kernels_json_and_refuses_bad_members() -> None:
    k = kernel(prologue())
    assert "members" not in k.to_json()
    with_struct = replace(k, members=("c0", "b0"))
    again = Kernel.from_json(json.loads(json.dumps(with_struct.to_json())))
    assert again == with_struct and again.digest != k.digest
    for bad in (["c0", "c0"], ["x0"], ["c"], [3]):
        with pytest.raises(ValueError, match="struct members"):
            Kernel.from_json({**k.to_json(), "members": bad})


# -- Workgroup memory -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("rot", [0, 1, 3])
def test_a_shared_load_gives_subgroup_s_the_tile_of_subgroup_s_plus_rot(rot: int) -> None:
    body = prologue() + (ir.Load(Ref("a0"), shared=True, rot=rot), ir.MulAdd(Ref("c0"), Ref("a0"), Ref("b0"), Ref("c0")))
    k = kernel(body, S=4)
    mem = memory(k, [])
    got = kernel_eval.evaluate(k, mem)[0]
    for s in range(4):
        a = tile(mem.a, 4 + (s + rot) % 4, k.a)  # the shared load's region: tiles 4..7
        assert np.array_equal(got[s], tile(mem.c, s, k.c) + a @ tile(mem.b, s, k.b))


def test_an_exchange_hands_each_subgroup_its_neighbours_accumulator() -> None:
    k = kernel(prologue() + (ir.Exchange(Ref("c0"), 1),), S=3)
    mem = memory(k, [])
    got = kernel_eval.evaluate(k, mem)[0]
    assert [np.array_equal(got[s], tile(mem.c, (s + 1) % 3, k.c)) for s in range(3)] == [True] * 3


# -- arrays, calls, element access ----------------------------------------------------------------------------
def test_an_array_indexed_by_the_loop_counter_keeps_each_element_apart() -> None:
    """r0[i % 2] += c1 for i < 3: element 0 twice, element 1 once."""
    body = prologue() + (ir.Load(Ref("r0", 0)), ir.Load(Ref("r0", 1)),
                         ir.Loop((ir.Binary(Ref("r0", "i0"), Ref("r0", "i0"), Ref("c1")),), 3))
    k = kernel(body, array=2)
    mem = memory(k, [3])
    got = kernel_eval.evaluate(k, mem)
    c1 = tile(mem.c, 1, k.c)
    assert np.array_equal(got[2][0], tile(mem.c, 2, k.c) + 2 * c1)
    assert np.array_equal(got[3][0], tile(mem.c, 3, k.c) + c1)


@pytest.mark.parametrize("quals,changed", [(("in", "in", "in", "out"), [False, True]),
                                           (("in", "in", "inout", "inout"), [True, True])])
def test_a_call_writes_back_its_inout_and_out_parameters_only(quals: tuple[str, ...], changed: list[bool]) -> None:
    f = ir.Function((Kind.a, Kind.b, Kind.c, Kind.c), quals,
                    (ir.MulAdd(Ref("p3"), Ref("p0"), Ref("p1"), Ref("p2")), ir.Binary(Ref("p2"), Ref("p2"), Ref("p3"))))
    k = kernel(prologue() + (ir.Call(0, (Ref("a0"), Ref("b0"), Ref("c0"), Ref("c1"))),), functions=(f,))
    mem = memory(k, [])
    c0, c1 = tile(mem.c, 0, k.c), tile(mem.c, 1, k.c)
    prod = c0 + tile(mem.a, 0, k.a) @ tile(mem.b, 0, k.b)
    got = kernel_eval.evaluate(k, mem)
    assert np.array_equal(got[0][0], c0 + prod if changed[0] else c0)
    assert np.array_equal(got[1][0], prod if changed[1] else c1)


def test_element_access_is_the_same_function_whatever_the_mapping() -> None:
    """SPV_KHR_cooperative_matrix: "The mapping of components to invocations and indexes is
    implementation-dependent": a per-element map, and an element-wise loop over matrices of one type,
    give the same matrix under any one permutation of the elements applied to all of them."""
    body = prologue() + (ir.ElementMap(Ref("c0"), 2, -1), ir.ElementZip(Ref("c1"), Ref("c0"), Ref("c1"), True))
    k = kernel(body)
    mem = memory(k, [])
    got = kernel_eval.evaluate(k, mem)
    c0, c1 = tile(mem.c, 0, k.c), tile(mem.c, 1, k.c)
    assert np.array_equal(got[0][0], 2 * c0 - 1) and np.array_equal(got[1][0], (2 * c0 - 1) - c1)
    perm = np.random.default_rng(0).permutation(c0.size)
    flat = lambda x: x.ravel()[perm]  # noqa: E731
    assert np.array_equal(flat(2 * c0 - 1) - flat(c1), flat(got[1][0]))


# -- integers wrap ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("ab,c", [(U8, U32), (S8, S32)])
def test_integer_kernels_keep_the_low_order_bits_of_the_exact_result(ab: ComponentType, c: ComponentType) -> None:
    """OpCooperativeMatrixMulAddKHR without SaturatingAccumulation: "the low-order N bits of the correct
    result R"; computed here with Python's exact integers, modulo 2^32, after 4 MulAdds and a map."""
    body = prologue() + (ir.Loop((ir.MulAdd(Ref("c0"), Ref("a0"), Ref("b0"), Ref("c0")), ir.ElementMap(Ref("c0"), 3, -1)), 4),)
    k = kernel(body, ab=ab, c=c)
    mem = memory(k, [4])
    a, b = tile(mem.a, 0, k.a).tolist(), tile(mem.b, 0, k.b).tolist()
    acc = tile(mem.c, 0, k.c).tolist()
    for _ in range(4):
        acc = [[(acc[i][j] + sum(a[i][t] * b[t][j] for t in range(len(b)))) * 3 - 1 for j in range(len(b[0]))]
               for i in range(len(a))]
    want = np.array([[x % 2**32 for x in row] for row in acc], np.uint64).astype(np.uint32).view(c.dtype)
    assert np.array_equal(kernel_eval.evaluate(k, mem)[0][0].astype(c.dtype), want)


# -- exact-domain bounds ------------------------------------------------------------------------------------------
def test_the_bound_of_a_loop_is_its_most_trips_of_growth() -> None:
    """|c0| <= 2 + T * K * 2 * 2 after T MulAdds of K-long dot products of values in [-2, 2]."""
    body = prologue() + (ir.Loop((ir.MulAdd(Ref("c0"), Ref("a0"), Ref("b0"), Ref("c0")),), 3),)
    assert kernel_eval.peak_bound(kernel(body, k=4)) == 2 + 3 * 4 * 4


def test_a_branch_bound_is_the_join_of_its_sides() -> None:
    body = prologue() + (ir.If((ir.Binary(Ref("c0"), Ref("c0"), Ref("c1")),), (ir.ElementMap(Ref("c0"), 2, 1),)),)
    assert kernel_eval.peak_bound(kernel(body)) == 5  # max(2 + 2, 2 * 2 + 1)


def test_a_kernel_that_outgrows_float16_is_not_exact() -> None:
    doubling = prologue() + (ir.Loop((ir.Binary(Ref("c0"), Ref("c0"), Ref("c0")),), 4),) * 3
    assert kernel_eval.peak_bound(kernel(doubling, c=F16)) == 2 * 2**12
    assert not kernel_eval.exact(kernel(doubling, c=F16)) and kernel_eval.exact(kernel(doubling, c=F32))


LAVAPIPE = load_profile(PROFILES[[p.name for p in PROFILES].index("mesa-lavapipe-26.2.6.txt")])


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_every_concrete_value_of_a_drawn_float_kernel_lies_within_its_bound(data: st.DataObject) -> None:
    k = data.draw(kernel_strategies.kernels(LAVAPIPE))
    if not k.c.component.is_float:  # the same statements over float types (integer kernels wrap)
        k = replace(k, a=replace(k.a, component=F16), b=replace(k.b, component=F16), c=replace(k.c, component=F32),
                    pointees=(None, None))
    words = list(data.draw(kernel_strategies.words(k)))
    peak = 0.0
    original = kernel_eval.Evaluation.write

    def spy(self: kernel_eval.Evaluation, env: dict, ref: Ref, value: np.ndarray, counters: dict) -> None:
        nonlocal peak
        peak = max(peak, float(np.abs(value).max()))
        original(self, env, ref, value, counters)

    kernel_eval.Evaluation.write = spy  # type: ignore[method-assign]
    try:
        kernel_eval.evaluate(k, memory(k, words, seed=data.draw(st.integers(0, 2**16))))
    finally:
        kernel_eval.Evaluation.write = original  # type: ignore[method-assign]
    assert peak <= kernel_eval.peak_bound(k)


# -- drawn kernels: valid by construction --------------------------------------------------------------------
@pytest.mark.parametrize("profile", PROFILES, ids=[p.stem for p in PROFILES])
def test_drawn_kernels_compile_validate_and_keep_the_rules_of_their_place(profile: Path) -> None:
    prof = load_profile(profile)
    for k in draw_examples(kernel_strategies.kernels(prof), 6, 11):
        assert prof.supports_matrix(k.c) is None and kernel_eval.exact(k)
        assert kernel_glsl.shared_bytes(k) <= prof.properties.get("maxComputeSharedMemorySize", 16384)
        assert Kernel.from_json(json.loads(json.dumps(k.to_json()))).digest == k.digest
        _check_places(k.body, per_subgroup=False, loop_body=False)
        for s, _ in k.walk():  # no variable written back twice by one call (GLSL: copy-back order unspecified)
            if isinstance(s, ir.Call):
                f = k.functions[s.fn]
                written = [a.var for a, q in zip(s.args, f.quals) if q != "in"] + ([s.dst.var] if s.dst else [])
                assert len(written) == len(set(written)), s
        spirv = compile_glsl(kernel_glsl.glsl(k), f"{k.digest}.comp")
        assert validate_module(spirv)


def _check_places(body: tuple[ir.Stmt, ...], *, per_subgroup: bool, loop_body: bool) -> None:
    """Barriers only in workgroup-uniform control flow; break and continue only directly in a loop."""
    for s in body:
        if per_subgroup:  # a probe's read-back has barriers too
            assert not isinstance(s, ir.Exchange) and not (isinstance(s, ir.Load) and s.shared)
            assert getattr(s, "probe", None) is None
        if isinstance(s, (ir.Break, ir.Continue)):
            assert loop_body
        if isinstance(s, ir.Loop):
            _check_places(s.body, per_subgroup=per_subgroup, loop_body=True)
        if isinstance(s, ir.If):
            for side in (s.then, s.orelse):
                _check_places(side, per_subgroup=per_subgroup or s.per_subgroup, loop_body=False)


@pytest.mark.parametrize("name", ["mesa-radv-gfx11-cm2", "mesa-anv-gfx9-cm2"])
@pytest.mark.parametrize("construct", sorted(kernel_strategies.ENSURED))
def test_every_construct_generates_on_the_mesa_fixture_profiles(name: str, construct: str) -> None:
    """RADV (16x16x16 and flexible granules, wave64) and ANV (8x8x16 / 8x8x32 only, no flexible
    dimensions): a kernel drawn to hold each construct holds it, at the profile's own sizes."""
    prof = load_profile(PROFILES[[p.stem for p in PROFILES].index(name)])
    for k in draw_examples(kernel_strategies.kernels(prof, ensure=construct), 3, 5):
        assert any(kernel_strategies.ENSURED[construct](s) for s, _ in k.walk())
        assert prof.supports_matrix(k.a) is None and prof.supports_matrix(k.c) is None


def test_anv_kernels_keep_its_8x8_shapes() -> None:
    anv = load_profile(PROFILES[[p.name for p in PROFILES].index("mesa-anv-gfx9-cm2.txt")])
    sizes = {(k.a.rows, k.b.cols, k.a.cols) for k in draw_examples(kernel_strategies.kernels(anv), 12, 3)}
    listed = {(e["MSize"], e["NSize"], e["KSize"]) for e in anv.coopmat_khr}
    assert sizes and sizes <= listed


def test_shrinking_a_kernel_that_needs_a_loop_ends_at_one_small_loop() -> None:
    """Hypothesis's minimal kernel holding a loop: the prologue's loads, then the loop alone."""
    k = find(kernel_strategies.kernels(LAVAPIPE), lambda k: any(isinstance(s, ir.Loop) for s in k.body),
             settings=settings(max_examples=2000, database=None, derandomize=True))
    *loads, loop = k.body
    assert isinstance(loop, ir.Loop) and loop.body == () and loop.trips == 1 and loop.unroll is None, k.body
    assert all(isinstance(s, ir.Load) and not s.shared for s in loads) and k.subgroups == 1, k.body
    assert k.counts == (1, 1, 1) and k.array == 0


def test_a_case_trip_count_shrinks_to_one_then_zero() -> None:
    assert find(kernel_strategies.trip_count(4), lambda t: True) == 1
    assert find(kernel_strategies.trip_count(4), lambda t: t != 1) == 0


# -- copies -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("copier", [lambda k: pickle.loads(pickle.dumps(k)), copy.deepcopy], ids=["pickle", "deepcopy"])
def test_a_copied_kernel_plans_its_own_statements(copier) -> None:  # type: ignore[no-untyped-def]
    """A kernel handed to a worker process arrives as a copy: its plan must name the copy's statements, not
    the sender's (CI: `generate --jobs 2` of coopmat-kernel raised KeyError when the cached plan travelled)."""
    k = kernel(prologue() + (ir.Loop((ir.Load(Ref("a0")), ir.MulAdd(Ref("c0"), Ref("a0"), Ref("b0"), Ref("c0"))), 3),))
    words = k.words  # the sender's layout is computed (and cached) before the copy
    other = copier(k)
    assert other.words == words and other.regions == k.regions
    ran = kernel_eval.evaluate(other, memory(other, [3]))
    assert all(np.array_equal(x, y) for x, y in zip(ran, kernel_eval.evaluate(k, memory(k, [3]))))


def test_a_probed_condition_shrinks_to_the_plain_words() -> None:
    """Hypothesis's minimal kernel holding a branch has no probe; a threshold shrinks to 0, or to the
    middle of an unsigned type (where both sides stay reachable)."""
    k = find(kernel_strategies.kernels(LAVAPIPE), lambda k: any(isinstance(s, ir.If) for s in k.body),
             settings=settings(max_examples=2000, database=None, derandomize=True))
    assert [s.probe for s in k.body if isinstance(s, ir.If)] == [None]
    assert find(kernel_strategies.threshold(U32), lambda t: True) == 2**31
    assert find(kernel_strategies.threshold(S32), lambda t: True) == 0
    assert find(kernel_strategies.threshold(F32), lambda t: t >= 2**31) == 0xFFFFFFFF  # -1
