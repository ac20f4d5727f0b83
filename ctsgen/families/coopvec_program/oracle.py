"""Expected results of a coopvec-program: the single-operation families' oracles, node by node.

Each node's value comes from the oracle of the family that tests that
instruction alone, nothing re-implemented, vectorised over the invocations:

* load / store: ``ops.coopvec_elementwise.load`` / ``store``
  (OpCooperativeVectorLoadNV / StoreNV at 16-aligned byte offsets);
* matmuladd: the input conversion ``ops.coopvec.convert_input``, the
  matrix and bias read by the layer's operands
  (``ops.coopvec_matrix.CoopVecSignature.read_matrix`` / ``read_bias``: RowMajor / ColumnMajor at
  MatrixOffset and MatrixStride, an optimal layout from its row-major
  source), and ``ops.coopvec.matmul`` (OpCooperativeVectorMatrixMulAddNV);
* act, convert: ``ops.coopvec_elementwise.apply`` (3.42.11-3.42.14), the
  scalars broadcast to vectors as the shader does;
* outer, reducesum (a training step): ``ops.coopvec.accumulate_f16`` of the
  ``ops.coopvec_matrix.outer_terms`` (OpCooperativeVectorOuterProductAccumulateNV)
  or of the vectors themselves (...ReduceSumAccumulateNV): one fp16 add per
  invocation, one order the relaxed atomic adds may take.

Controlled nodes (program.Ctl; docs/spec-decisions.md "coopvec-program-divergence")
are evaluated for every invocation at once and selected with masks: an
``if`` takes the node's value where the invocation's control word has bit 0
set and its else side elsewhere (``np.where``); a ``loop`` applies the node
once per trip up to the most trips of any invocation, each invocation
keeping its value once its own count is done. A partial subgroup's oracle
runs its ``local`` invocations only: the lanes past the workgroup are never
stored, so their results keep the poison.

In the program's exact domain (program.py) every value is an integer within
its limit, so these oracles' results are exact in any summation order and
the tolerances they derive for general data are not needed.

Each node kind is evaluated by a module-level ``eval_<kind>`` function looked
up when it runs, so a composition mutant (mutants.py) can replace one.
"""

from __future__ import annotations


import numpy as np

from ctsgen.ops.straight_line import ProgramRun
from ctsgen.ops import coopvec as matmul_oracle
from ctsgen.ops.coopvec_matrix import outer_terms
from ctsgen.ops import coopvec_elementwise as element_oracle
from ctsgen.ops.coopvec_elementwise_ops import OPS
from ctsgen.ops.coopvec_elementwise_ops import Op as ElementOp
from ctsgen.errors import UserError
from ctsgen.families.coopvec_program.program import MAX_TRIPS, Ctl, Program
from ctsgen.oracle.values import from_bits

#: the run-time words of a MatMulAdd node, then an activation's
W_MOFF, W_STRIDE, W_BOFF = 0, 1, 2
W_S, W_T = 0, 1


class Run(ProgramRun):
    """One case's evaluation of a coopvec-program (:class:`ProgramRun`; ``values[i]``:
    invocations x components)."""

    program: Program

    def scalar(self, i: int, k: int) -> np.generic:
        """Scalar k (s or t) of activation node i, of the node's component type."""
        c = self.program.nodes[i].type.component
        return from_bits(self.word(i, k), element_oracle.component(c))[()]

    def arg(self, i: int) -> np.ndarray:
        """The value node i reads: the previous node's."""
        return self.values[i - 1]

    def buffer(self, name: str) -> np.ndarray:
        """This case's part of a buffer (from its element offset on)."""
        b = self.program.buffer_index(name)
        return self.buffers[b][int(self.offsets[b]):]

    def vector_offsets(self, name: str, stride: int) -> np.ndarray:
        """Byte offsets of every invocation's vector in buffer ``name``: one per ``stride`` bytes."""
        b = self.program.buffer_index(name)
        return int(self.offsets[b]) * self.buffers[b].dtype.itemsize + np.arange(self.program.local) * stride

    def control(self, i: int) -> np.ndarray:
        """Controlled node i's word of every invocation (``control`` holds invocations x controlled nodes)."""
        p = self.program
        d = len(p.ctl_nodes)
        return self.buffer("control")[:p.local * d].reshape(p.local, d)[:, p.ctl_nodes.index(i)]


def eval_load(run: Run, i: int) -> np.ndarray:
    t = run.program.nodes[i].type
    return element_oracle.load(run.buffers[run.program.buffer_index("input")],
                               run.vector_offsets("input", t.stride), t.n)


def eval_store(run: Run, i: int) -> None:
    t = run.program.nodes[i].type
    element_oracle.store(run.buffers[run.program.buffer_index("output")],
                         run.vector_offsets("output", t.stride), run.arg(i))


def layer_operands(run: Run, i: int, *, moff: int | None = None, stride: int | None = None,
                   boff: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The effective M x K matrix and the bias of MatMulAdd node i, read by the coopvec family's
    variant of the layer from the node's buffers at its MatrixOffset / MatrixStride / BiasOffset
    (a keyword replaces one: what a composition mutant reads instead)."""
    L = run.program.nodes[i].layer
    v = L.variant()
    j = run.program.layer_of(i)
    w = v.read_matrix(run.buffer(f"matrix{j}"), run.word(i, W_MOFF) if moff is None else moff,
                      run.word(i, W_STRIDE) if stride is None else stride)
    b = v.read_bias(run.buffer("bias"), run.word(i, W_BOFF) if boff is None else boff)
    return w, b


def eval_matmuladd(run: Run, i: int) -> np.ndarray:
    """OpCooperativeVectorMatrixMulAddNV: the input converted to InputInterpretation, W x + b."""
    L = run.program.nodes[i].layer
    x = matmul_oracle.convert_input(run.arg(i), L.inputType, L.inputInterpretation)
    w, b = layer_operands(run, i)
    return matmul_oracle.matmul(x, w, b, L.resultType)


def act_operands(run: Run, i: int, x: np.ndarray) -> tuple[list[np.ndarray], float]:
    """The activation's operand vectors (x, then s and t broadcast) and its scalar s."""
    n = run.program.nodes[i]
    dt = n.type.component.dtype
    s, t = run.scalar(i, 0), run.scalar(i, 1)
    extra = [np.full(x.shape, s, dt), np.full(x.shape, t, dt)][:OPS[n.fn].arity - 1]
    return [x, *extra], float(s)


def eval_act(run: Run, i: int) -> np.ndarray:
    """One element-wise instruction of the activation on the previous value and the scalars."""
    n = run.program.nodes[i]
    operands, s = act_operands(run, i, run.arg(i))
    return element_oracle.apply(n.fn, operands, s, n.type.component, n.type.component)


def eval_convert(run: Run, i: int) -> np.ndarray:
    src = run.program.nodes[i - 1].type.component
    return element_oracle.apply(ElementOp.convert, [run.arg(i)], 0.0, src, run.program.nodes[i].type.component)


def gradient_operands(run: Run) -> tuple[np.ndarray, np.ndarray]:
    """A training step's y (the stored value: the gradient of 1/2 |y|^2) and the last layer's input h."""
    y, h = run.program.gradient_nodes()
    return run.values[y], run.values[h]


def eval_outer(run: Run, i: int) -> None:
    """dW += y h^T, summed over the invocations into the M x K float16 matrix (its row-major source:
    the backend converts it to TrainingOptimal and back)."""
    y, h = gradient_operands(run)
    dw = run.buffer("grad_matrix")[:y.shape[1] * h.shape[1]].reshape(y.shape[1], h.shape[1])
    dw[:] = matmul_oracle.accumulate_f16(dw, outer_terms(y, h))


def eval_reducesum(run: Run, i: int) -> None:
    """db += y, summed over the invocations into the M float16 components."""
    y, _ = gradient_operands(run)
    db = run.buffer("grad_bias")[:y.shape[1]]
    db[:] = matmul_oracle.accumulate_f16(db, y)


def body(run: Run, i: int, x: np.ndarray) -> np.ndarray:
    """Node i's own instruction (``eval_<kind>``, looked up now) on operand ``x`` instead of the
    previous node's value: one side of an ``if``, one trip of a ``loop``."""
    saved = run.values[i - 1]
    run.values[i - 1] = x
    try:
        return globals()[f"eval_{run.program.nodes[i].op.value}"](run, i)
    finally:
        run.values[i - 1] = saved


def else_side(run: Run, i: int, x: np.ndarray, like: np.ndarray) -> np.ndarray:
    """An ``if``'s value where its condition fails: max / min of the operand against 0 (``alt``),
    the operand itself (a node that keeps the type), or the zero vector (a MatMulAdd that changes it)."""
    n = run.program.nodes[i]
    if n.alt is not None:
        c = n.type.component
        return element_oracle.apply(n.alt, [x, np.zeros_like(x)], 0.0, c, c)
    return x if n.keeps else np.zeros_like(like)


def eval_branch(run: Run, i: int) -> np.ndarray:
    """``if (c & 1) node else ...``: both sides for every invocation, each invocation's own taken."""
    x = run.arg(i)
    then = body(run, i, x)
    taken = (run.control(i) & 1).astype(bool)
    return np.where(taken[:, None], then, else_side(run, i, x, then))


def eval_loop(run: Run, i: int) -> np.ndarray:
    """``repeat c times``: one trip for all invocations at once, up to the most trips; an invocation
    whose own count is done keeps its value (0 trips: the operand)."""
    v = run.arg(i)
    trips = run.control(i)
    most = int(trips.max(initial=0))
    if most > MAX_TRIPS:  # a hand-edited control buffer: refuse it rather than loop ~2^32 times
        raise UserError(f"loop node {i}: control word {most} is past the {MAX_TRIPS} trips the exact domain "
                        "bounds -> regenerate the case (its control words are drawn from its seed)")
    for k in range(most):
        v = np.where((trips > k)[:, None], body(run, i, v), v)
    return v


def eval_node(run: Run, i: int) -> np.ndarray | None:
    """Node i's value, by the ``eval_<kind>`` function of its kind (looked up now); a controlled
    node's by ``eval_branch`` / ``eval_loop`` around it."""
    n = run.program.nodes[i]
    if n.ctl is Ctl.branch:
        return globals()["eval_branch"](run, i)
    if n.ctl is Ctl.loop:
        return globals()["eval_loop"](run, i)
    return globals()[f"eval_{n.op.value}"](run, i)


def evaluate(run: Run) -> list[np.ndarray | None]:
    """Evaluate every node in order; the store writes into ``run.buffers``. Returns the values."""
    for i in range(len(run.values), len(run.program.nodes)):
        run.values.append(eval_node(run, i))
    return run.values
