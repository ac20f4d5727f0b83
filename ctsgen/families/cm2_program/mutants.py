"""Composition bugs only a chain of operations can show.

Each mutant replaces one ``eval_*`` / ``layout_of`` / ``view_of`` / ``khr_access_of`` function of the program
interpreter (ctsgen.families.cm2_program.oracle), which the reference
semantics (ProgramVariant.execute) look up when they run. Every fault needs
two nodes in one shader (two tensor-layout objects, a producer and its
consumer), so no single-operation family can see it: their shaders hold one
operation and their reference semantics never reach this module.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ctsgen.families.cm2_program.program import SINKS, VIEW_OPS, VIEW_WORDS, Op, decode_variant, view_variant
from ctsgen.ops.tensor_view import decode_view
from ctsgen.model.tensor import ClampMode
from ctsgen.core.mutant import Mutant
from ctsgen.families.cm2_program import oracle
from ctsgen.ops.khr_addressing import Layout, component_indices

ORACLE = "ctsgen.families.cm2_program.oracle"
FAMILY = "cm2-program"


def _oracle() -> Any:
    return oracle


def _producer(run: Any, i: int, k: int) -> Any:
    return run.program.nodes[run.program.nodes[i].args[k]]


def _first_layout(run: Any, i: int) -> int | None:
    """The first tensor-layout node of the program, if it is not node ``i``."""
    first = next(iter(run.program.layout_nodes()), i)
    return None if first == i else first


def _layout_clamp_inherited() -> dict[str, Any]:
    """A second tensor-layout object takes the first one's clamp mode (state leaks between objects).
    An inherited Undefined mode is not modelled (its out-of-bounds result is not defined)."""
    o = _oracle()
    original = o.layout_of

    def layout_of(run: Any, i: int) -> Any:
        t = original(run, i)
        first = _first_layout(run, i)
        mode = None if first is None else run.program.nodes[first].clampMode
        return t if mode is None or mode is ClampMode.Undefined else replace(t, clampMode=mode)

    return {f"{ORACLE}:layout_of": layout_of}


def _layout_clamp_value_inherited() -> dict[str, Any]:
    """A second tensor-layout object takes the first one's clampValue."""
    o = _oracle()
    original = o.layout_of

    def layout_of(run: Any, i: int) -> Any:
        t = original(run, i)
        first = _first_layout(run, i)
        return t if first is None else replace(t, clampValue=original(run, first).clampValue)

    return {f"{ORACLE}:layout_of": layout_of}


def _chained_muladd_drops_c() -> dict[str, Any]:
    """A MulAdd whose C is another MulAdd's result accumulates onto zero (the chain drops a step)."""
    o = _oracle()
    original = o.eval_muladd

    def eval_muladd(run: Any, i: int) -> np.ndarray:
        if _producer(run, i, 2).op is not Op.muladd:
            return original(run, i)
        c_index = run.program.nodes[i].args[2]
        saved = run.values[c_index]
        run.values[c_index] = np.zeros_like(saved)
        try:
            return original(run, i)
        finally:
            run.values[c_index] = saved

    return {f"{ORACLE}:eval_muladd": eval_muladd}


def _reading_the_source(kind: str, producer: Op, operand: int = 0) -> dict[str, Any]:
    """eval_<kind> reads its producer's own operand ``operand`` when the producer is ``producer``."""
    o = _oracle()
    original = getattr(o, f"eval_{kind}")

    def evaluate(run: Any, i: int) -> Any:
        n = run.program.nodes[i]
        p = run.program.nodes[n.args[0]]
        if p.op is not producer:  # the producer's operand has the producer's type: same shape
            return original(run, i)
        saved = run.values[n.args[0]]
        run.values[n.args[0]] = run.values[p.args[operand]]
        try:
            return original(run, i)
        finally:
            run.values[n.args[0]] = saved

    return {f"{ORACLE}:eval_{kind}": evaluate}


def _convert_after_reduce_reads_source() -> dict[str, Any]:
    """A conversion after a reduction reads the pre-reduction value."""
    return _reading_the_source("convert", Op.reduce)


def _store_after_perelement_writes_source() -> dict[str, Any]:
    """A store (through a layout or a KHR pointer) after a per-element op writes the pre-op value."""
    return {**_reading_the_source("store", Op.perelement), **_reading_the_source("storekhr", Op.perelement)}


def _khr_column_major_as_row_major() -> dict[str, Any]:
    """KHR loads and stores ignore MemoryLayout: a ColumnMajor access is made as RowMajor (for a square
    matrix the same memory, transposed)."""
    o = _oracle()
    original = o.khr_access_of

    def khr_access_of(run: Any, i: int) -> Any:
        return replace(original(run, i), layout=Layout.RowMajor)

    return {f"{ORACLE}:khr_access_of": khr_access_of}


def _khr_store_takes_load_stride() -> dict[str, Any]:
    """A KHR store writes with the stride of the shader's first KHR load (one stride value reused for
    both): its lines may overlap (the last write wins) or leave its region (the writes are dropped)."""
    o = _oracle()

    def eval_storekhr(run: Any, i: int) -> None:
        loads = [j for j, n in enumerate(run.program.nodes) if n.op is Op.loadkhr]
        access = o.khr_access_of(run, i)
        region = o.khr_region(run, i, access)
        if loads:
            access = replace(access, stride=o.khr_access_of(run, loads[0]).stride)
        value = run.arg(i, 0)
        index = component_indices(access, *value.shape, run.program.nodes[i].type.component).ravel()
        inside = index < region.size
        region[index[inside]] = value.ravel()[inside]  # numpy: the last of repeated indices wins

    return {f"{ORACLE}:eval_storekhr": eval_storekhr}


def _reduce_after_muladd_reads_c() -> dict[str, Any]:
    """A reduction of a MulAdd result reduces the MulAdd's C (the accumulator before it)."""
    return _reading_the_source("reduce", Op.muladd, operand=2)


def _transpose_after_muladd_skipped() -> dict[str, Any]:
    """A transpose of a MulAdd result relabels the matrix as B without moving elements."""
    o = _oracle()
    original = o.eval_transpose

    def eval_transpose(run: Any, i: int) -> np.ndarray:
        if _producer(run, i, 0).op is Op.muladd:
            return run.arg(i, 0).copy()
        return original(run, i)

    return {f"{ORACLE}:eval_transpose": eval_transpose}


def _register_reused_too_early() -> dict[str, Any]:
    """An element-wise op's first operand reads the next value of its type defined after
    it (its register was given to that value while it was still live)."""
    o = _oracle()
    original = o.eval_arith

    def eval_arith(run: Any, i: int) -> np.ndarray:
        nodes = run.program.nodes
        a = nodes[i].args[0]
        later = [j for j in range(a + 1, i) if nodes[j].op not in SINKS and nodes[j].type == nodes[a].type
                 and j not in nodes[i].args]
        if not later:
            return original(run, i)
        saved = run.values[a]
        run.values[a] = run.values[later[0]]
        try:
            return original(run, i)
        finally:
            run.values[a] = saved

    return {f"{ORACLE}:eval_arith": eval_arith}


def _permutation_dropped(kinds: tuple[Op, ...], undefined: bool) -> dict[str, Any]:
    """A node of ``kinds`` (view loads or view stores) takes the identity permutation when another
    tensor-view object (a view load or a view store) is in the shader: the compiler keys the
    view's coordinate shuffle on the view type it saw first. ``undefined``: the mutant acts
    under an Undefined clamp mode too (only where the moved coordinates stay in bounds)."""
    o = _oracle()
    original = o.view_of

    def view_of(run: Any, i: int) -> Any:
        nodes = run.program.nodes
        n = nodes[i]
        others = [j for j, m in enumerate(nodes) if m.op in VIEW_OPS and j != i]
        if n.op not in kinds or not others or (n.clampMode is ClampMode.Undefined and not undefined):
            return original(run, i)
        base = run.program.word_bases[i] + 1
        identity = replace(n, permutation=tuple(range(len(n.permutation))))
        return decode_view(run.words[base:base + VIEW_WORDS], view_variant(identity))

    return {f"{ORACLE}:view_of": view_of}


def _view_permutation_dropped() -> dict[str, Any]:
    """A view load (a decode load through a view too) ignores its permutation when another
    tensor-view object is in the shader. Under an Undefined clamp mode the moved coordinates
    are not modelled (a load's view may read anywhere in the layout, so they may leave it)."""
    return _permutation_dropped((Op.loadview, Op.loaddecodeview), undefined=False)


def _view_store_permutation_dropped() -> dict[str, Any]:
    """A view store ignores its permutation when another tensor-view object is in the shader.
    Modelled under every clamp mode: a view store's elements reach distinct span indices below
    the span's element count for any order of peeling the view's coordinates (the tensor-view
    strategy's store-safe views: every view coordinate maps to a distinct index of the span),
    so the identity permutation keeps them race-free and, under Undefined, in bounds."""
    return _permutation_dropped((Op.storeview,), undefined=True)


def _decode_base_hoisted() -> dict[str, Any]:
    """A decode load reads its blocks through the base pointer of an earlier decode load of the
    same block format (the pointer to that pointee type hoisted and reused). The earlier
    region starts before this one in the same buffer, so the read stays inside it."""
    o = _oracle()
    original = o.eval_loaddecode

    def eval_loaddecode(run: Any, i: int) -> np.ndarray:
        nodes = run.program.nodes
        same = [j for j in range(i) if nodes[j].op is Op.loaddecode and nodes[j].decoder == nodes[i].decoder]
        if not same:
            return original(run, i)
        t, d = o.layout_of(run, i), decode_variant(nodes[i])
        b = run.program.buffer_of(i)
        start = int(run.offsets[b]) + run.word(same[0], 0)
        return d.expected(t, run.buffers[b][start:start + d.input_words(t)])

    return {f"{ORACLE}:eval_loaddecode": eval_loaddecode}


MUTANTS = [
    Mutant("program-layout-clamp-inherited", FAMILY,
           "a second tensor-layout object in a shader takes the first one's clamp mode", _layout_clamp_inherited,
           "two loads (or stores) with different clamp modes, the second out of bounds", kill_budget=650),
    Mutant("program-layout-clamp-value-inherited", FAMILY,
           "a second tensor-layout object takes the first one's clampValue", _layout_clamp_value_inherited,
           "two Constant-clamped layouts with different clampValues, the second loading out of bounds",
           kill_budget=1700),
    Mutant("program-muladd-chain-drops-c", FAMILY, "a chained MulAdd (C is a MulAdd result) drops its C",
           _chained_muladd_drops_c, "load A, load B, load C, MulAdd, MulAdd onto it, store", kill_budget=1900),
    Mutant("program-convert-after-reduce-reads-source", FAMILY,
           "a conversion after a reduction reads the pre-reduction value", _convert_after_reduce_reads_source,
           "load an Accumulator, reduce, convert, store", kill_budget=3350),
    Mutant("program-store-after-perelement-writes-source", FAMILY,
           "a store after a per-element op writes the pre-op value", _store_after_perelement_writes_source,
           "load, per-element op, store", kill_budget=1150),
    Mutant("program-khr-column-major-as-row-major", FAMILY,
           "KHR loads and stores ignore MemoryLayout: ColumnMajor is read and written as RowMajor",
           _khr_column_major_as_row_major, "a ColumnMajor KHR load or store of a non-symmetric matrix",
           kill_budget=450),
    Mutant("program-khr-store-takes-load-stride", FAMILY,
           "a KHR store writes with the stride of the shader's first KHR load", _khr_store_takes_load_stride,
           "a KHR load and a KHR store with different strides", kill_budget=450),
    Mutant("program-reduce-after-muladd-reads-c", FAMILY,
           "a reduction of a MulAdd result reduces the MulAdd's C", _reduce_after_muladd_reads_c,
           "load A, load B, load C, MulAdd, reduce, store", kill_budget=6550),
    Mutant("program-transpose-after-muladd-skipped", FAMILY,
           "a transpose of a MulAdd result keeps the element order", _transpose_after_muladd_skipped,
           "a float16 MulAdd, transpose, store", kill_budget=10700),
    Mutant("program-register-reused-too-early", FAMILY,
           "an element-wise op reads a value whose register was already given to the next value of its type",
           _register_reused_too_early, "two sources of one type, a third value of it, then add(v0, ...)",
           kill_budget=1250),
    Mutant("program-view-permutation-dropped", FAMILY,
           "a view load ignores its permutation when another tensor-view object is in the shader",
           _view_permutation_dropped, "two view loads, one with a non-identity permutation, clamped, stored",
           kill_budget=1750),
    Mutant("program-view-store-permutation-dropped", FAMILY,
           "a view store ignores its permutation when another tensor-view object is in the shader",
           _view_store_permutation_dropped,
           "a view load (or a second view store) and a view store with a non-identity permutation", kill_budget=750),
    Mutant("program-decode-base-hoisted", FAMILY,
           "a decode load reads through an earlier decode load's base pointer (same block format)",
           _decode_base_hoisted, "two decode loads of one format, the second's value stored", kill_budget=1250),
]
