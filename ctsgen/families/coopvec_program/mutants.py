"""Composition bugs only a chain of cooperative-vector layers can show.

Each mutant replaces ``eval_<kind>`` functions of the program interpreter
(ctsgen.families.coopvec_program.oracle), which the reference semantics
(ProgramVariant.execute) look up when they run. Every fault needs a chain in
one shader: a second MatMulAdd reading state the first one left (its result
register, its operands' offsets, stride or interpretation) or the values
between them, or a training step reading the wrong value of the forward
pass. So no single-operation family can see it: the coopvec and
coopvec-elementwise shaders hold one instruction, and their reference
semantics never reach this module.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ctsgen.families.coopvec_program.program import LOCAL, Op
from ctsgen.core.mutant import Mutant
from ctsgen.families.coopvec_program import oracle

ORACLE = "ctsgen.families.coopvec_program.oracle"
FAMILY = "coopvec-program"


def _oracle() -> Any:
    return oracle


def _quiet(fn: Any) -> Any:
    """``fn`` with numpy's floating-point warnings off: a faulty read may decode NaN or
    infinity bits, which later layers carry on (a wrong result, not an error)."""

    def quiet(run: Any, i: int) -> np.ndarray:
        with np.errstate(all="ignore"):
            return fn(run, i)

    return quiet


def _previous_layer(run: Any, i: int) -> int | None:
    """The MatMulAdd node before node ``i``, if any."""
    before = [j for j in run.program.layer_nodes() if j < i]
    return before[-1] if before else None


def _first_layer(run: Any, i: int) -> int | None:
    """The program's first MatMulAdd node, if it is not node ``i``."""
    first = run.program.layer_nodes()[0]
    return None if first == i else first


def _padded(run: Any, name: str, extra: int) -> tuple[int, np.ndarray]:
    """Swap buffer ``name`` for a copy with ``extra`` zero bytes after it (a faulty read past the
    case's region reads zeros, not an index error); returns (index, original) for the restore."""
    b = run.program.buffer_index(name)
    original = run.buffers[b]
    run.buffers[b] = np.concatenate([original, np.zeros(extra, original.dtype)])
    return b, original


def _reads_pre_activation() -> dict[str, Any]:
    """A MatMulAdd after another layer reads that layer's MatMulAdd result, converted along the
    same path, as if its activation had not run (the result register forwarded to the next layer)."""
    o = _oracle()
    original = o.eval_matmuladd

    def eval_matmuladd(run: Any, i: int) -> np.ndarray:
        p = _previous_layer(run, i)
        nodes = run.program.nodes
        if p is None or not any(nodes[k].op is Op.act for k in range(p + 1, i)):
            return original(run, i)
        saved = list(run.values)
        try:
            for k in range(p + 1, i):  # the activation skipped: each node passes its operand on
                run.values[k] = o.eval_convert(run, k) if nodes[k].op is Op.convert else run.values[k - 1]
            return original(run, i)
        finally:
            run.values[:] = saved

    return {f"{ORACLE}:eval_matmuladd": _quiet(eval_matmuladd)}


def _bias_offset_reused() -> dict[str, Any]:
    """A later MatMulAdd reads its bias at the first layer's BiasOffset (the bias pointer hoisted)."""
    o = _oracle()
    original = o.eval_matmuladd

    def eval_matmuladd(run: Any, i: int) -> np.ndarray:
        first = _first_layer(run, i)
        if first is None:
            return original(run, i)
        L = run.program.nodes[i].layer
        b, saved = _padded(run, "bias", L.M * L.biasInterpretation.dtype.itemsize)
        try:
            x = o.matmul_oracle.convert_input(run.arg(i), L.inputType, L.inputInterpretation)
            w, bias = o.layer_operands(run, i, boff=run.word(first, o.W_BOFF))
            return o.matmul_oracle.matmul(x, w, bias, L.resultType)
        finally:
            run.buffers[b] = saved

    return {f"{ORACLE}:eval_matmuladd": _quiet(eval_matmuladd)}


def _conversion_folded() -> dict[str, Any]:
    """The conversions between two layers are dropped: the MatMulAdd converts the activated value
    straight to its InputInterpretation (saturating), so a narrowing that should wrap does not."""
    o = _oracle()
    original = o.eval_matmuladd

    def eval_matmuladd(run: Any, i: int) -> np.ndarray:
        nodes = run.program.nodes
        k = i
        while nodes[k - 1].op is Op.convert:
            k -= 1
        if k == i or _previous_layer(run, i) is None:
            return original(run, i)
        L = nodes[i].layer
        x = o.matmul_oracle.convert_input(run.values[k - 1], nodes[k - 1].type.component, L.inputInterpretation)
        w, b = o.layer_operands(run, i)
        return o.matmul_oracle.matmul(x, w, b, L.resultType)

    return {f"{ORACLE}:eval_matmuladd": _quiet(eval_matmuladd)}


def _matrix_stride_reused() -> dict[str, Any]:
    """A later RowMajor / ColumnMajor MatMulAdd walks its matrix with the first layer's MatrixStride."""
    o = _oracle()
    original = o.eval_matmuladd

    def eval_matmuladd(run: Any, i: int) -> np.ndarray:
        first = _first_layer(run, i)
        L = run.program.nodes[i].layer
        if first is None or L.layout.optimal or run.program.nodes[first].layer.layout.optimal:
            return original(run, i)
        stride = run.word(first, o.W_STRIDE)
        j = run.program.layer_of(i)
        b, saved = _padded(run, f"matrix{j}", max(L.M, L.K) * max(stride, run.word(i, o.W_STRIDE)))
        try:
            x = o.matmul_oracle.convert_input(run.arg(i), L.inputType, L.inputInterpretation)
            w, bias = o.layer_operands(run, i, stride=stride)
            return o.matmul_oracle.matmul(x, w, bias, L.resultType)
        finally:
            run.buffers[b] = saved

    return {f"{ORACLE}:eval_matmuladd": _quiet(eval_matmuladd)}


def _matrix_interpretation_reused() -> dict[str, Any]:
    """A later MatMulAdd decodes its matrix with the first layer's MatrixInterpretation (where
    that interpretation allows the later layer's layout)."""
    o = _oracle()
    original = o.eval_matmuladd

    def eval_matmuladd(run: Any, i: int) -> np.ndarray:
        first = _first_layer(run, i)
        L = run.program.nodes[i].layer
        if first is None:
            return original(run, i)
        wrong = replace(L, matrixInterpretation=run.program.nodes[first].layer.matrixInterpretation)
        try:
            v = wrong.variant()
        except ValueError:  # e.g. an E4M3 interpretation on a RowMajor matrix: no such decode
            return original(run, i)
        j = run.program.layer_of(i)
        b, saved = _padded(run, f"matrix{j}", L.M * L.K * 4)
        try:
            x = o.matmul_oracle.convert_input(run.arg(i), L.inputType, L.inputInterpretation)
            w = v.read_matrix(run.buffer(f"matrix{j}"), run.word(i, o.W_MOFF), run.word(i, o.W_STRIDE))
            bias = v.read_bias(run.buffer("bias"), run.word(i, o.W_BOFF))
            return o.matmul_oracle.matmul(x, w, bias, L.resultType)
        finally:
            run.buffers[b] = saved

    return {f"{ORACLE}:eval_matmuladd": _quiet(eval_matmuladd)}


def _chained_bias_dropped() -> dict[str, Any]:
    """A MatMulAdd after another layer drops its bias (its accumulator starts at 0, not at the bias:
    the layer analogue of cm2-program's "a chained MulAdd drops its C"). In the float domain the bias is a full-mantissa
    value of magnitude 1/8 to 4 against results of up to 2^11, a small numeric error."""
    o = _oracle()
    original = o.eval_matmuladd

    def eval_matmuladd(run: Any, i: int) -> np.ndarray:
        if _previous_layer(run, i) is None:
            return original(run, i)
        L = run.program.nodes[i].layer
        x = o.matmul_oracle.convert_input(run.arg(i), L.inputType, L.inputInterpretation)
        w, _ = o.layer_operands(run, i)
        return o.matmul_oracle.matmul(x, w, None, L.resultType)

    return {f"{ORACLE}:eval_matmuladd": _quiet(eval_matmuladd)}


def _gradient_reads_pre_activation() -> dict[str, Any]:
    """The training step's outer product and reduce sum read the last MatMulAdd's result instead
    of the activated value the shader stored (y's register taken before the activation)."""
    o = _oracle()
    originals = {kind: getattr(o, f"eval_{kind}") for kind in ("outer", "reducesum")}

    def reading(kind: str) -> Any:
        def evaluate(run: Any, i: int) -> None:
            y, _ = run.program.gradient_nodes()
            saved = run.values[y]
            run.values[y] = run.values[run.program.layer_nodes()[-1]]
            try:
                return originals[kind](run, i)
            finally:
                run.values[y] = saved

        return evaluate

    return {f"{ORACLE}:eval_{kind}": _quiet(reading(kind)) for kind in originals}


def _branch_mask_ignored() -> dict[str, Any]:
    """A per-invocation ``if`` runs its node in every invocation: the condition's mask is dropped
    (the divergent branch executed as if it were uniform and taken)."""
    o = _oracle()

    def eval_branch(run: Any, i: int) -> np.ndarray:
        return o.body(run, i, run.arg(i))

    return {f"{ORACLE}:eval_branch": _quiet(eval_branch)}


def _loop_max_trips() -> dict[str, Any]:
    """A per-invocation loop runs the subgroup's most trips in every invocation (an invocation
    whose own count is done is not masked off: a reconvergence bug)."""
    o = _oracle()

    def eval_loop(run: Any, i: int) -> np.ndarray:
        v = run.arg(i)
        for _ in range(int(run.control(i).max(initial=0))):
            v = o.body(run, i, v)
        return v

    return {f"{ORACLE}:eval_loop": _quiet(eval_loop)}


def _partial_store_past_workgroup() -> dict[str, Any]:
    """In a partial subgroup the store writes the lanes past the workgroup too (its lane mask taken
    as the whole subgroup): lane l past the last invocation stores invocation l mod local's result."""
    o = _oracle()
    original = o.eval_store

    def eval_store(run: Any, i: int) -> None:
        p = run.program
        original(run, i)
        if not p.partial:
            return
        t = p.nodes[i].type
        lanes = np.arange(p.local, LOCAL)
        b = p.buffer_index("output")
        offs = int(run.offsets[b]) * run.buffers[b].dtype.itemsize + lanes * t.stride
        o.element_oracle.store(run.buffers[b], offs, run.arg(i)[lanes % p.local])

    return {f"{ORACLE}:eval_store": eval_store}


MUTANTS = [
    Mutant("cvprogram-reads-pre-activation", FAMILY,
           "a MatMulAdd reads the previous layer's MatMulAdd result, its activation skipped",
           _reads_pre_activation, "two layers, an activation that changes a value between them (e.g. max(x, 0))",
           kill_budget=300),
    Mutant("cvprogram-bias-offset-reused", FAMILY, "a later MatMulAdd reads its bias at the first layer's BiasOffset",
           _bias_offset_reused, "two layers whose biases differ", kill_budget=150),
    Mutant("cvprogram-conversion-folded", FAMILY,
           "the conversions between two layers are dropped; the MatMulAdd's input conversion saturates instead",
           _conversion_folded, "an integer layer, a narrowing conversion that wraps (sint32 -> sint8), a second layer",
           kill_budget=600),
    Mutant("cvprogram-matrix-stride-reused", FAMILY,
           "a later RowMajor / ColumnMajor MatMulAdd walks its matrix with the first layer's MatrixStride",
           _matrix_stride_reused, "two RowMajor / ColumnMajor layers with different MatrixStrides", kill_budget=500),
    Mutant("cvprogram-matrix-interpretation-reused", FAMILY,
           "a later MatMulAdd decodes its matrix with the first layer's MatrixInterpretation",
           _matrix_interpretation_reused, "a sint8 matrix layer, then a uint8 (or float16) matrix layer",
           kill_budget=150),
    Mutant("cvprogram-chained-bias-dropped", FAMILY, "a MatMulAdd after another layer drops its bias",
           _chained_bias_dropped, "two layers, a nonzero bias in the second", kill_budget=150),
    Mutant("cvprogram-gradient-reads-pre-activation", FAMILY,
           "the training step's outer product and reduce sum read the last MatMulAdd's result, not the "
           "activated value stored", _gradient_reads_pre_activation,
           "a float16 layer, an activation that changes a value, the training step", kill_budget=600),
    Mutant("cvprogram-branch-mask-ignored", FAMILY,
           "a per-invocation if runs its node in every invocation (the divergent condition's mask ignored)",
           _branch_mask_ignored, "an if around a MatMulAdd or an activation whose sides differ, some invocations "
           "not taking it", kill_budget=400),
    Mutant("cvprogram-loop-max-trips", FAMILY,
           "a per-invocation loop runs the subgroup's most trips in every invocation (reconvergence bug)",
           _loop_max_trips, "a loop whose trips differ between invocations, around a node that changes its value",
           kill_budget=450),
    Mutant("cvprogram-partial-store-past-workgroup", FAMILY,
           "in a partial subgroup the store writes the lanes past the workgroup (inactive invocations' results)",
           _partial_store_past_workgroup, "a workgroup smaller than a subgroup", kill_budget=250),
]
