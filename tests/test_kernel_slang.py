"""ctsgen/kernel/slang.py: the Slang emitter of the kernels ctsgen/kernel/glsl.py emits. Hand-made
kernels of each construct and drawn kernels on every fixture profile compile through Slang, pass
spirv-val (vulkan1.3), say what the statement says in SPIR-V (loop controls, barriers, element
length, SubgroupId), and keep the GLSL module's bindings."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from ctsgen.core.shader import ShaderVariant
from ctsgen.device.profile import load_profile
from ctsgen.kernel import glsl as kernel_glsl
from ctsgen.kernel import ir
from ctsgen.kernel import slang as kernel_slang
from ctsgen.kernel.ir import Kernel, Kind, Ref
from ctsgen.model.types import ComponentType, MatrixType, MatrixUse, Scope
from ctsgen.mutants.deviations import reaching
from ctsgen.ops.khr_addressing import Layout, Pointee
from ctsgen.strategies import kernel as kernel_strategies
from ctsgen.strategies.sampling import draw_examples
from ctsgen.toolchain import compile_glsl, validate_spirv
from ctsgen.toolchain.slang import compile_slang
from ctsgen.toolchain.spirv_patch import instructions, muladd_accumulator_reused, to_words

PROFILES = sorted((Path(__file__).resolve().parents[1] / "ctsgen" / "device" / "profiles").glob("*.txt"))
F16, F32, U8, U32, S8, S32 = (ComponentType.float16, ComponentType.float32, ComponentType.uint8,
                              ComponentType.uint32, ComponentType.sint8, ComponentType.sint32)
ROW, COL = Layout.RowMajor, Layout.ColumnMajor
OP_DECORATE, OP_LOOP_MERGE, OP_CONTROL_BARRIER, OP_VARIABLE, OP_LENGTH = 71, 246, 224, 59, 4460
DECORATION_BUILTIN, DECORATION_BINDING, BUILTIN_SUBGROUP_ID, WORKGROUP = 11, 33, 40, 4
UNROLL, DONT_UNROLL = 0x1, 0x2


def kernel(body: tuple[ir.Stmt, ...], *, S: int = 1, ab: ComponentType = F16, c: ComponentType = F32,
           counts: tuple[int, int, int] = (1, 1, 2), array: int = 0, functions: tuple[ir.Function, ...] = (),
           layouts: tuple[Layout, Layout, Layout] = (ROW, ROW, ROW),
           pointees: tuple[Pointee | None, Pointee | None] = (None, None)) -> Kernel:
    return Kernel(MatrixType(ab, Scope.Subgroup, 16, 16, MatrixUse.A, 32),
                  MatrixType(ab, Scope.Subgroup, 16, 16, MatrixUse.B, 32),
                  MatrixType(c, Scope.Subgroup, 16, 16, MatrixUse.Accumulator, 32), S, counts, array, layouts,
                  pointees, functions, body)


def prologue(counts: tuple[int, int, int] = (1, 1, 2)) -> tuple[ir.Stmt, ...]:
    return tuple(ir.Load(Ref(f"{kind}{j}")) for kind, n in zip("abc", counts) for j in range(n))


def module(k: Kernel, baked: list[int] | None = None) -> list[tuple[int, list[int]]]:
    """The kernel through Slang, validated: its instructions (opcode, operands)."""
    spirv = compile_slang(kernel_slang.slang(k, baked), f"{k.digest}.slang")
    validate_spirv(spirv)
    return [(op, operands) for _, op, operands in instructions(to_words(spirv))]


def bindings(spirv: bytes) -> set[int]:
    return {o[2] for _, op, o in instructions(to_words(spirv)) if op == OP_DECORATE and o[1] == DECORATION_BINDING}


MULADD = ir.MulAdd(Ref("c0"), Ref("a0"), Ref("b0"), Ref("c1"))


@pytest.mark.parametrize("unroll,control", [(None, 0), ("unroll", UNROLL), ("dont_unroll", DONT_UNROLL)])
def test_a_loop_keeps_its_unroll_attribute(unroll: str | None, control: int) -> None:
    k = kernel(prologue() + (ir.Loop((ir.Load(Ref("a0")), MULADD, ir.Break(), ir.Continue()), 3, unroll),))
    merges = [o for op, o in module(k) if op == OP_LOOP_MERGE]
    assert any(o[2] & (UNROLL | DONT_UNROLL) == control for o in merges), merges


def test_shared_loads_and_exchange_use_workgroup_arrays_between_barriers_and_subgroup_ids() -> None:
    body = prologue() + (ir.Load(Ref("b0"), shared=True, rot=1), MULADD, ir.Exchange(Ref("c0"), 1),
                         ir.If((ir.Copy(Ref("c1"), Ref("c0")),), (), per_subgroup=True))
    mod = module(kernel(body, S=2))
    assert sum(op == OP_CONTROL_BARRIER for op, _ in mod) == 4
    assert sum(op == OP_VARIABLE and o[2] == WORKGROUP for op, o in mod) == 2  # shb and shc
    assert any(op == OP_DECORATE and o[1:] == [DECORATION_BUILTIN, BUILTIN_SUBGROUP_ID] for op, o in mod)


def test_element_access_reads_the_matrix_length_and_the_array_takes_a_counter_index() -> None:
    body = prologue() + (ir.ElementMap(Ref("c0"), 2, 1), ir.ElementZip(Ref("c1"), Ref("c0"), Ref("c1"), minus=True),
                         ir.Loop((ir.Copy(Ref("r0", "i0"), Ref("c0")),
                                  ir.Binary(Ref("c0"), Ref("r0", 1), Ref("c1"))), 4))
    for ab, c in ((F16, F32), (F16, ComponentType.float16), (S8, S32), (U8, U32)):
        mod = module(kernel(body, ab=ab, c=c, array=2))
        assert any(op == OP_LENGTH for op, _ in mod)


def test_functions_take_in_out_and_inout_matrices_and_an_in_parameter_may_be_written() -> None:
    f = ir.Function((Kind.a, Kind.b, Kind.c, Kind.c), ("in", "in", "in", "out"),
                    (ir.MulAdd(Ref("p3"), Ref("p0"), Ref("p1"), Ref("p2")), ir.ElementMap(Ref("p2"), 2, 1),
                     ir.Binary(Ref("p2"), Ref("p2"), Ref("p3"))), "p2")
    g = ir.Function((Kind.a, Kind.b, Kind.c, Kind.c), ("in", "in", "inout", "inout"),
                    (ir.MulAdd(Ref("p3"), Ref("p0"), Ref("p1"), Ref("p2")),), None)
    body = prologue() + (ir.Call(0, (Ref("a0"), Ref("b0"), Ref("c1"), Ref("c0")), Ref("c1")),
                         ir.Call(1, (Ref("a0"), Ref("b0"), Ref("c0"), Ref("c1"))))
    k = kernel(body, functions=(f, g))
    source = kernel_slang.slang(k)
    assert "var p2 = p2_in;" in source and "out MC p3" in source and "inout MC p2" in source
    module(k)


@pytest.mark.parametrize("layouts", [(ROW, ROW, ROW), (COL, ROW, COL), (ROW, COL, ROW)])
def test_vector_pointees_and_layouts_keep_the_glsl_modules_bindings(layouts) -> None:
    """A vector pointee (GLSL's f16vec4/uvec4 buffers) is the same bytes in components in Slang."""
    k = kernel(prologue() + (ir.Load(Ref("a0"), shared=True), MULADD), layouts=layouts,
               pointees=(Pointee("float16", 4), Pointee("uint32", 4)))
    slang_spirv = compile_slang(kernel_slang.slang(k), "v.slang")
    validate_spirv(slang_spirv)
    assert bindings(slang_spirv) == bindings(compile_glsl(kernel_glsl.glsl(k))) == {0, 1, 2, 3, 4}


def test_a_baked_kernel_is_a_standalone_module() -> None:
    k = kernel(prologue() + (ir.If((MULADD,)),))
    baked = [0, 0, 0, 0, 1]
    assert "BAKED[5] = { 0u, 0u, 0u, 0u, 1u }" in kernel_slang.slang(k, baked)
    module(k, baked)


def test_a_component_type_slang_has_no_kernel_for_is_one_line() -> None:
    with pytest.raises(ValueError, match="no Slang scalar for a kernel of bfloat16"):
        kernel_slang.slang(kernel(prologue(), ab=ComponentType.bfloat16))


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.stem)
def test_drawn_kernels_compile_through_slang_validate_and_keep_their_bindings(profile: Path) -> None:
    prof = load_profile(profile)
    for k in draw_examples(kernel_strategies.kernels(prof), 6, 11):
        spirv = compile_slang(kernel_slang.slang(k), f"{k.digest}.slang")
        validate_spirv(spirv)
        assert bindings(spirv) == bindings(compile_glsl(kernel_glsl.glsl(k), f"{k.digest}.comp"))


@pytest.mark.parametrize("c", [F32, ComponentType.float16, S32, U32], ids=lambda c: c.name)
def test_a_probed_condition_stores_reads_back_between_two_barriers_in_both_languages(c: ComponentType) -> None:
    """A probed branch (workgroup and per subgroup) and a probed break: each a matrix store to the
    Workgroup array and a scalar read between two barriers, through glslang and Slang alike."""
    body = prologue() + (ir.If((ir.Copy(Ref("c0"), Ref("c1")),), (MULADD,), probe=Ref("c1"), at=7),
                         ir.If((ir.Copy(Ref("c1"), Ref("c0")),), (), per_subgroup=True, probe=Ref("c0"), at=255),
                         ir.Loop((MULADD, ir.Break(Ref("c0"), 3), ir.Continue(Ref("c1"), 1)), 3))
    k = kernel(body, S=2, ab=F16 if c.is_float else S8, c=c, layouts=(ROW, COL, COL))
    glsl_module = [(op, o) for _, op, o in instructions(to_words(compile_glsl(kernel_glsl.glsl(k))))]
    validate_spirv(compile_glsl(kernel_glsl.glsl(k)))
    for mod in (module(k), glsl_module):
        assert sum(op == OP_CONTROL_BARRIER for op, _ in mod) == 8
        assert sum(op == OP_VARIABLE and o[2] == WORKGROUP for op, o in mod) == 1  # shc alone


@pytest.mark.parametrize("name", ["mesa-lavapipe-26.2.6", "mesa-radv-gfx11-cm2", "mesa-anv-gfx9-cm2"])
def test_drawn_kernels_with_probes_compile_and_validate_through_glslang_and_slang(name: str) -> None:
    prof = load_profile(PROFILES[[p.stem for p in PROFILES].index(name)])
    for k in draw_examples(kernel_strategies.kernels(prof, ensure="readback"), 4, 13):
        assert any(getattr(s, "probe", None) is not None for s, _ in k.walk())
        validate_spirv(compile_slang(kernel_slang.slang(k), f"{k.digest}.slang"))
        validate_spirv(compile_glsl(kernel_glsl.glsl(k), f"{k.digest}.comp"))


def test_struct_members_are_read_and_written_in_loops_calls_exchanges_and_probes_in_both_languages() -> None:
    f = ir.Function((Kind.a, Kind.b, Kind.c, Kind.c), ("in", "in", "in", "inout"),
                    (ir.MulAdd(Ref("p3"), Ref("p0"), Ref("p1"), Ref("p2")),), "p3")
    body = prologue() + (ir.Load(Ref("s0.c0")), ir.Load(Ref("s0.b0")), ir.Load(Ref("s0.c1")),
                         ir.Loop((ir.MulAdd(Ref("s0.c0"), Ref("a0"), Ref("s0.b0"), Ref("s0.c0")),
                                  ir.Call(0, (Ref("a0"), Ref("s0.b0"), Ref("s0.c0"), Ref("s0.c1")), Ref("c0")),
                                  ir.ElementZip(Ref("s0.c1"), Ref("s0.c0"), Ref("c1"))), 3),
                         ir.Exchange(Ref("s0.c0"), 1),
                         ir.If((ir.Copy(Ref("s0.c1"), Ref("c0")),), (), probe=Ref("s0.c0"), at=3))
    k = replace(kernel(body, S=2, functions=(f,)), members=("c0", "b0", "c1"))
    for source in (kernel_glsl.glsl(k), kernel_slang.slang(k)):
        assert "struct S0 {" in source and "S0 s0;" in source
    module(k)
    validate_spirv(compile_glsl(kernel_glsl.glsl(k)))


# -- a deviation that shows in one shape of module -------------------------------------------------------
def test_lavapipes_muladd_deviation_reaches_slangs_module_and_not_glslangs() -> None:
    """lavapipe-muladd-accumulator changes the variable that held C: Slang's module reads C's SSA id
    again after the MulAdd (the store of c1), glslang's loads c1 from its variable again, where lavapipe
    gives C as it was (measured: docs/validation.md, "Every route on lavapipe"). So the deviation must
    reach a kernel's Slang module and not its glslang module, and the hand-written repro module."""
    k = kernel(prologue() + (MULADD,))
    glslang_module = compile_glsl(kernel_glsl.glsl(k))
    slang_module = compile_slang(kernel_slang.slang(k), f"{k.digest}.slang")
    assert not muladd_accumulator_reused(glslang_module)
    assert muladd_accumulator_reused(slang_module)
    repro = Path(__file__).resolve().parents[1] / "docs" / "repros" / "lavapipe-muladd-accumulator" / "muladd.spv"
    assert muladd_accumulator_reused(repro.read_bytes())
    name = "lavapipe-muladd-accumulator"
    def reaches(spirv: bytes) -> bool:
        return reaching([name], ShaderVariant("k", spirv, 32, ())) == (name,)
    assert reaches(slang_module) and not reaches(glslang_module)
