"""coopmat-kernel: each mutant changes the kernel its ``killed_by`` names (and leaves a kernel without
its construct alone), cases pass on the reference backend batched, a pack's coverage holds every
construct, and the case's JSON, words and locator."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ctsgen.backends.reference import ReferenceBackend
from ctsgen.core.family import StrategyOptions
from ctsgen.core.verdict import Status
from ctsgen.device.profile import load_profile
from ctsgen.execute.run import drawn, run_cases
from ctsgen.families import get_family
from ctsgen.families.coopmat_kernel.case import KernelCase, KernelVariant
from ctsgen.families.coopmat_kernel.coverage import CONSTRUCTS
from ctsgen.families.coopmat_kernel.mutants import MUTANTS
from ctsgen.families.coopmat_kernel.strategy import constructs_of
from ctsgen.kernel import ir
from ctsgen.kernel.ir import Kernel, Kind, Ref
from ctsgen.model.types import ComponentType, MatrixType, MatrixUse, Scope
from ctsgen.ops.khr_addressing import Layout
from ctsgen.strategies.sampling import draw_examples
from ctsgen.toolchain.variants import compile_variant

FAMILY = get_family("coopmat-kernel")
LAVAPIPE = load_profile(Path(__file__).resolve().parents[3] / "device" / "profiles" / "mesa-lavapipe-26.2.6.txt")
ROW = Layout.RowMajor
LOADS = (ir.Load(Ref("a0")), ir.Load(Ref("b0")), ir.Load(Ref("c0")), ir.Load(Ref("c1")))


def variant(body: tuple[ir.Stmt, ...], *, S: int = 2, array: int = 0,
            functions: tuple[ir.Function, ...] = (), k: int = 8) -> KernelVariant:
    m = lambda rows, cols, use, t: MatrixType(t, Scope.Subgroup, rows, cols, use, 8)  # noqa: E731
    F16, F32 = ComponentType.float16, ComponentType.float32
    return KernelVariant(Kernel(m(8, k, MatrixUse.A, F16), m(k, 8, MatrixUse.B, F16), m(8, 8, MatrixUse.Accumulator, F32),
                                S, (1, 1, 2), array, (ROW, ROW, ROW), (None, None), functions, body))


MUL = ir.MulAdd(Ref("c0"), Ref("a0"), Ref("b0"), Ref("c0"))
OUT_FN = ir.Function((Kind.a, Kind.b, Kind.c, Kind.c), ("in", "in", "in", "out"),
                     (ir.MulAdd(Ref("p3"), Ref("p0"), Ref("p1"), Ref("p2")),))
#: For each mutant: a case its fault changes (words), and one without its construct.
SHOWS = {
    "kernel-loop-carry-first": (variant(LOADS + (ir.Loop((ir.Load(Ref("a0")), MUL), 3),)), (2,)),
    "kernel-merge-other-side": (variant(LOADS + (ir.If((MUL,), ()),)), (1,)),
    "kernel-missing-barrier": (variant(LOADS + (ir.Load(Ref("a0"), True, 0), MUL)), ()),
    "kernel-shared-offset-zero": (variant(LOADS + (ir.Exchange(Ref("c0"), 1),)), ()),
    "kernel-array-neighbour-alias": (variant(LOADS + (ir.Load(Ref("r0", 0)), ir.Load(Ref("r0", 1)),
                                                      ir.Copy(Ref("r0", 0), Ref("c0"))), array=2), ()),
    "kernel-inout-not-written-back": (variant(LOADS + (ir.Call(0, (Ref("a0"), Ref("b0"), Ref("c0"), Ref("c1"))),),
                                              functions=(OUT_FN,)), ()),
    "kernel-element-mapping-differs": (variant(LOADS + (ir.ElementZip(Ref("c0"), Ref("c0"), Ref("c1")),)), ()),
    # c0 in [3, 7] after the map; the stale read sees Workgroup memory's previous contents (zeros): 0 < 1
    "kernel-read-back-stale": (variant(LOADS + (ir.ElementMap(Ref("c0"), 1, 5),
                                                ir.If((ir.Copy(Ref("c0"), Ref("c1")),), (), probe=Ref("c0")))), (1,)),
    "lavapipe-muladd-accumulator": (variant(LOADS + (ir.MulAdd(Ref("c0"), Ref("a0"), Ref("b0"), Ref("c1")),), k=16), ()),
}
PLAIN = (variant(LOADS + (MUL,)), ())


def outputs(v: KernelVariant, words: tuple[int, ...]) -> np.ndarray:
    case = KernelCase(v, words, seed=5)
    data = case.data()
    assert data.expected[3] is not None
    return data.expected[3]


def test_the_lavapipe_mutant_clobbers_c_by_every_k_granule_but_the_last() -> None:
    """K = 16 (two 8-wide granules): the stored C is C + A[:, 0:8] x B[0:8, :]; D stays right; K = 8: no change."""
    (mutant,) = [m for m in MUTANTS if m.name == "lavapipe-muladd-accumulator"]
    v, _ = SHOWS[mutant.name]
    case = KernelCase(v, (), seed=9)
    a, b, c = (x.astype(np.float64) for x in case.inputs)
    A, B = a[:8 * 16].reshape(8, 16), b[:16 * 8].reshape(16, 8)
    c1 = c[2 * 8 * 8:3 * 8 * 8].reshape(8, 8)  # the second Accumulator variable's tile, subgroup 0 of 2
    with mutant.applied():
        out = case.data().expected[3]
    tile = lambda slot: out[(2 * slot) * 64:(2 * slot + 1) * 64].reshape(8, 8).astype(np.float64)  # noqa: E731
    assert np.array_equal(tile(0), A @ B + c1) and np.array_equal(tile(1), c1 + A[:, :8] @ B[:8, :])
    short = variant(LOADS + (ir.MulAdd(Ref("c0"), Ref("a0"), Ref("b0"), Ref("c1")),), k=8)  # one granule
    plain = KernelCase(short, (), 2).data().expected[3]
    with mutant.applied():
        assert np.array_equal(KernelCase(short, (), 2).data().expected[3], plain)


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_each_mutant_changes_the_kernel_of_its_construct_and_no_other(mutant) -> None:
    assert set(SHOWS) == {m.name for m in MUTANTS}
    v, words = SHOWS[mutant.name]
    before, plain = outputs(v, words), outputs(*PLAIN)
    with mutant.applied():
        after, plain_after = outputs(v, words), outputs(*PLAIN)
    assert not np.array_equal(before, after), mutant.name
    assert np.array_equal(plain, plain_after), mutant.name


def test_drawn_cases_pass_on_the_reference_backend_batched() -> None:
    opts = StrategyOptions(profile=LAVAPIPE)
    backend = ReferenceBackend()
    for v in draw_examples(FAMILY.variants(opts), 4, 7):
        cases = draw_examples(FAMILY.cases_for(v, opts), 5, 7)
        results = run_cases(backend, compile_variant(v, FAMILY.name), [drawn(c, c.data()) for c in cases], 30.0).results
        assert {r.status for r in results} == {Status.Pass}, [r.detail for r in results]


def test_a_pack_of_the_strata_covers_every_construct() -> None:
    opts = StrategyOptions(profile=LAVAPIPE)
    cases = []
    for stratum in FAMILY.strata():
        cases += draw_examples(FAMILY.cases(opts, **stratum), 6, 1)
    tables = FAMILY.coverage([c.to_json() for c in cases])
    held = tables[0]
    # subgroup branches and exchanges need two subgroups, unroll a loop: drawn, not forced, by a stratum
    forced = {"loop", "branch", "call", "shared", "element", "readback", "size not 16x16"}
    assert {c for c in CONSTRUCTS if held.counts[(c, "cases")]} >= forced
    assert not held.counts[("struct", "cases")]  # the hazardous group's


def test_the_hazardous_group_is_kernels_holding_a_struct_of_matrices() -> None:
    opts = StrategyOptions(profile=LAVAPIPE, include_hazardous=True)
    assert FAMILY.hazardous is not None
    for case in draw_examples(FAMILY.hazardous(opts, []), 4, 3):
        assert case.shader.kernel.members and "struct" in constructs_of(case.shader.kernel)
        assert KernelCase.from_json(case.to_json()) == case


def test_a_case_round_trips_and_refuses_words_it_does_not_have() -> None:
    v, words = SHOWS["kernel-loop-carry-first"]
    case = KernelCase(v, words, 3)
    assert KernelCase.from_json(case.to_json()) == case and case.name() == KernelCase.from_json(case.to_json()).name()
    with pytest.raises(ValueError, match="1 run-time words was given 2"):
        KernelCase(v, (1, 2))
    with pytest.raises(ValueError, match="unsigned 32-bit"):
        KernelCase(v, (-1,))


def test_the_locator_names_the_stored_value_subgroup_row_and_column() -> None:
    v, _ = SHOWS["kernel-merge-other-side"]
    case = KernelCase(v, (1,))
    # slot 1 (c1), subgroup 0 (2 subgroups of 8 x 8 tiles): element 2 * 64 + 3 * 8 + 5
    assert case.locate(3, 2 * 64 + 3 * 8 + 5) == {"value": "c1", "subgroup": 0, "row": 3, "col": 5}
    assert case.locate(0, 0) == {}
