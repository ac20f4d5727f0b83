"""Expected results of a cm2-program: the existing families' oracles, composed node by node.

Each node's value comes from the oracle of the family that tests that
instruction alone, nothing re-implemented:

* load / store: ``ops.tensor_layout.expected_load`` / ``expected_store``, the
  layout state replayed from the node's words by ``ctsgen.ops.tensor_layout.decode_layout``;
* loadview: ``ops.tensor_view.expected_load_view`` onto a zero matrix (an element
  outside the clip keeps it), the view replayed by ``ctsgen.ops.tensor_view.decode_view``;
* storeview: ``ops.tensor_view.expected_store_view`` into the node's output region
  (clipped and out-of-bounds elements are skipped, the region keeps its poison there;
  it refuses a racing store, which the tensor-view family's strategy never draws);
* loaddecode: the decode family's ``DecodeVariant.expected`` (``expected_decode_load``)
  over the node's region of encoded blocks;
* loadkhr / storekhr: ``ops.khr_addressing.expected_load`` / ``expected_store`` (SPV_KHR_cooperative_matrix,
  "Cooperative Matrix Layout"), the access (the node's MemoryLayout, the Stride and the element
  offset from its words) replayed by :func:`khr_access_of`, over the node's region;
* loaddecodeview: the decode family's ``DecodeVariant.decoded_at`` at the addresses of
  ``oracle.addressing.tensor_addresses_with_view`` (the tensor-view family's addressing),
  onto a zero matrix (an element outside the clip keeps it);
* generate, perelement: ``ops.cm2_elementwise.expected_per_element``;
* muladd: ``ops.cm2_gemm.expected_tile`` (alpha = beta = 1, the whole tile);
* convert, transpose: ``ops.cm2_convert.expected_result``;
* reduce: ``ops.cm2_reduce.expected_reduce``.

The element-wise arithmetic (+, -, * of two matrices, OpMatrixTimesScalar) is
numpy's on exact integers. In the program's exact domain (program.py) every
value is an integer within its type's exact range, so each of these oracles'
results is exact and the tolerances they return are not needed. In the float
domain the same oracles give each node's value (rounded once from float64) and
bounds.py propagates each value's error bound instead.

Each node kind is evaluated by a module-level ``eval_<kind>`` function
looked up when it runs, so a composition mutant (mutants.py) can replace one.
"""

from __future__ import annotations


import numpy as np

from ctsgen.ops.straight_line import ProgramRun
from ctsgen.ops.cm2_convert import Kind
from ctsgen.ops import cm2_convert as cm2_convert_ops
from ctsgen.ops.cm2_elementwise import Op as ElementFn
from ctsgen.ops import cm2_elementwise as cm2_elementwise_ops
from ctsgen.ops import cm2_gemm as cm2_gemm_ops
from ctsgen.ops import khr_muladd
from ctsgen.families.cm2_program.program import (ARITH, LAYOUT_WORDS, VIEW_WORDS, W_C0, W_KHR_OFFSET, W_KHR_STRIDE,
                                                 W_R0, W_S, Op, Program, decode_variant, view_variant)
from ctsgen.ops import khr_addressing as khr
from ctsgen.ops.khr_addressing import KhrAccess
from ctsgen.ops import cm2_reduce as cm2_reduce_ops
from ctsgen.ops.tensor_layout import decode_layout
from ctsgen.ops.tensor_layout import expected_load, expected_store
from ctsgen.ops.tensor_view import decode_view
from ctsgen.ops.tensor_view import expected_load_view, expected_store_view
from ctsgen.model.tensor import TensorLayout, TensorView
from ctsgen.oracle.addressing import tensor_addresses_with_view
from ctsgen.oracle.values import from_bits


class Run(ProgramRun):
    """One case's evaluation of a cm2-program (:class:`ProgramRun`)."""

    program: Program

    def scalar(self, i: int) -> np.generic:
        comp = self.program.nodes[i].type.component
        return from_bits(self.word(i, W_S), comp)[()]

    def arg(self, i: int, k: int) -> np.ndarray:
        return self.values[self.program.nodes[i].args[k]]


def layout_of(run: Run, i: int) -> TensorLayout:
    """The state of node i's tensor-layout object after the shader's instruction sequence."""
    n = run.program.nodes[i]
    base = run.program.word_bases[i] + 1
    return decode_layout(run.words[base:base + LAYOUT_WORDS], n.Dim, n.clampMode)


def view_of(run: Run, i: int) -> TensorView:
    """The state of view load or view store i's tensor-view object after the shader's instruction sequence
    (its words follow the layout's, in the tensor-view family's format)."""
    base = run.program.word_bases[i] + 1
    return decode_view(run.words[base:base + VIEW_WORDS], view_variant(run.program.nodes[i]))


def tensor_region(run: Run, i: int, extent: int) -> np.ndarray:
    """The view of node i's tensor in its buffer (a load's input, a store's output)."""
    b = run.program.buffer_of(i)
    start = int(run.offsets[b]) + run.word(i, 0)
    return run.buffers[b][start:start + extent]


def khr_access_of(run: Run, i: int) -> KhrAccess:
    """KHR load or store i's access: the node's MemoryLayout, the Stride and element offset of its words."""
    return KhrAccess(run.program.nodes[i].layout, run.word(i, W_KHR_STRIDE), run.word(i, W_KHR_OFFSET))


def khr_region(run: Run, i: int, access: KhrAccess) -> np.ndarray:
    """The view of KHR node i's region: from the node's first word to the last element its access touches."""
    m = run.program.nodes[i].type
    return tensor_region(run, i, khr.extent_components(access, m.rows, m.cols, m.component))


def eval_loadkhr(run: Run, i: int) -> np.ndarray:
    a, m = khr_access_of(run, i), run.program.nodes[i].type
    return khr.expected_load(a, m.rows, m.cols, khr_region(run, i, a), m.component)


def eval_storekhr(run: Run, i: int) -> None:
    a = khr_access_of(run, i)
    region = khr_region(run, i, a)
    region[:] = khr.expected_store(a, run.arg(i, 0), region, run.program.nodes[i].type.component)


def eval_load(run: Run, i: int) -> np.ndarray:
    t, m = layout_of(run, i), run.program.nodes[i].type
    return expected_load(t, m.rows, m.cols, tensor_region(run, i, t.extent()), m.component)


def eval_loadview(run: Run, i: int) -> np.ndarray:
    t, v, m = layout_of(run, i), view_of(run, i), run.program.nodes[i].type
    zero = np.zeros((m.rows, m.cols), m.component.dtype)  # the shader's matrix before the load
    return expected_load_view(t, v, m.rows, m.cols, tensor_region(run, i, t.extent()), m.component, zero)


def eval_loaddecode(run: Run, i: int) -> np.ndarray:
    t, d = layout_of(run, i), decode_variant(run.program.nodes[i])
    return d.expected(t, tensor_region(run, i, d.input_words(t)))


def eval_loaddecodeview(run: Run, i: int) -> np.ndarray:
    t, v, d = layout_of(run, i), view_of(run, i), decode_variant(run.program.nodes[i])
    m = d.matrix
    a, in_clip = tensor_addresses_with_view(t, v, m.rows, m.cols, is_store=False)
    decoded = d.decoded_at(a, t, tensor_region(run, i, d.input_words(t)))
    return np.where(in_clip, decoded, np.zeros((m.rows, m.cols), m.component.dtype))  # the matrix before the load


def eval_store(run: Run, i: int) -> None:
    t = layout_of(run, i)
    region = tensor_region(run, i, t.extent())
    region[:] = expected_store(t, run.arg(i, 0), region)


def eval_storeview(run: Run, i: int) -> None:
    t, v = layout_of(run, i), view_of(run, i)
    region = tensor_region(run, i, t.extent())
    region[:] = expected_store_view(t, v, run.arg(i, 0), region)


def eval_const(run: Run, i: int) -> np.ndarray:
    m = run.program.nodes[i].type
    return np.full((m.rows, m.cols), run.scalar(i), dtype=m.component.dtype)


def eval_generate(run: Run, i: int) -> np.ndarray:
    m = run.program.nodes[i].type
    zero = np.zeros((m.rows, m.cols), m.component.dtype)
    return cm2_elementwise_ops.expected_per_element(ElementFn.select, zero, m.component, s=run.scalar(i),
                                                    r0=run.word(i, W_R0), c0=run.word(i, W_C0))


def eval_perelement(run: Run, i: int) -> np.ndarray:
    n = run.program.nodes[i]
    x = run.arg(i, 0)
    if n.fn == "affine":
        return cm2_elementwise_ops.expected_per_element(ElementFn.affine, x, n.type.component, s=run.scalar(i),
                                                        m=run.arg(i, 1))
    return cm2_elementwise_ops.expected_per_element(ElementFn.select, x, n.type.component, s=run.scalar(i),
                                                    r0=run.word(i, W_R0), c0=run.word(i, W_C0))


def eval_muladd(run: Run, i: int) -> np.ndarray:
    """D = A x B + C; C's node keeps its value (``khr_muladd.accumulator_after``, where a documented
    deviation changes it for the nodes that read C later)."""
    a, b, c = run.arg(i, 0), run.arg(i, 1), run.arg(i, 2)
    everything = slice(None)
    d, _ = cm2_gemm_ops.expected_tile(a, b, c, 1, 1, everything, everything, c, run.program.nodes[i].type.component)
    after = khr_muladd.accumulator_after(a, b, c)
    if after is not c:
        run.values[run.program.nodes[i].args[2]] = after
    return d


def eval_convert(run: Run, i: int) -> np.ndarray:
    n = run.program.nodes[i]
    src = run.program.nodes[n.args[0]].type
    kind = Kind.use if src.component is n.type.component else Kind.convert
    return cm2_convert_ops.expected_result(kind, run.arg(i, 0), src.component, n.type.component)[0]


def eval_transpose(run: Run, i: int) -> np.ndarray:
    c = run.program.nodes[i].type.component
    return cm2_convert_ops.expected_result(Kind.transpose, run.arg(i, 0), c, c)[0]


def eval_reduce(run: Run, i: int) -> np.ndarray:
    n = run.program.nodes[i]
    return cm2_reduce_ops.expected_reduce(run.arg(i, 0), n.mode, n.combine, n.type.component, n.type.rows,
                                          n.type.cols)[0]


def eval_arith(run: Run, i: int) -> np.ndarray:
    n = run.program.nodes[i]
    x, y = run.arg(i, 0).astype(np.float64), run.arg(i, 1).astype(np.float64)
    out = {Op.add: np.add, Op.sub: np.subtract, Op.mul: np.multiply}[n.op](x, y)
    return out.astype(n.type.component.dtype)


def eval_scale(run: Run, i: int) -> np.ndarray:
    n = run.program.nodes[i]
    return (run.arg(i, 0).astype(np.float64) * float(run.scalar(i))).astype(n.type.component.dtype)


def evaluate(run: Run) -> list[np.ndarray | None]:
    """Evaluate every node in order; stores write into ``run.buffers``. Returns the values."""
    g = globals()
    for i, n in enumerate(run.program.nodes):
        name = "eval_arith" if n.op in ARITH else f"eval_{n.op.value}"
        run.values.append(g[name](run, i))
    return run.values
