"""The float domain of coopvec-program: which programs take float data, and each node's error bound.

docs/spec-decisions.md, "program-float-domain". A float-domain case draws
full-mantissa float data (data.py) and is judged against the composed
oracle's values (oracle.py) with an absolute bound per stored component,
propagated node by node by ctsgen.oracle.propagation from the oracle's
(expected, not observed) values:

* load: 0 (data movement);
* matmuladd: sum_k |w_mk| e_k inherited plus the coopvec family's
  ``matmul_tolerance`` terms at the magnitude S the device's operands can
  reach: the accumulation model's error (``ops.coopvec.accumulation_error``:
  round-to-nearest partial sums, blocks of 16 at binary32, any order),
  u_r |y|, and one smallest normal per rounding of the partial sum (a flushed
  subnormal); plus float64's error in the exact sum;
* max / min / clamp against the scalars: exact, Lipschitz 1;
* x * s, x + s: one correctly rounded operation; fma: OpFMul then OpFAdd;
* a narrowing float conversion (float32 -> float16): one correctly rounded
  conversion; a widening one is exact;
* store: its operand's bound.

Only float programs take float data (:func:`float_domain_rule`): a
conversion to an integer (OpConvertFToS, or a MatMulAdd's saturating
float -> integer input conversion) is a step function, so an error of one
ulp before it can become a difference of one integer after it, which every
later layer multiplies; such programs stay in the exact domain, where no
value lies near a rounding boundary. So do layers whose InputInterpretation
or MatrixInterpretation is E4M3 / E5M2: SPV_NV_cooperative_vector leaves the
float16 -> 8-bit float input conversion implementation-dependent ("as
accurately as reasonably possible"), one spacing of 2-3 mantissa bits, and
that allowance, summed over K and carried through the later layers, hid
even a wrong matrix stride in a measurement (docs/spec-decisions.md). The
training step (OuterProductAccumulate,
ReduceSumAccumulate) and per-invocation control flow (program.Ctl) stay
exact-domain only as well.
"""

from __future__ import annotations

import numpy as np

from ctsgen.ops import coopvec as matmul_oracle
from ctsgen.families.coopvec_program.oracle import Run, layer_operands
from ctsgen.families.coopvec_program.program import ACT_NAME, Op, Program
from ctsgen.oracle import propagation as prop

#: unit roundoff of the float64 arithmetic that computes an exact sum of products
U_F64 = 2.0**-53


def float_domain_rule(p: Program) -> str | None:
    """None if ``p`` may take float-domain data, else why not."""
    if p.training:
        return "the training step stays in the exact domain"
    if p.ctl_nodes:  # a loop's bound would compound per trip; an if's is one side's per invocation
        return "per-invocation control flow stays in the exact domain"
    if not all(n.type.component.is_float for n in p.nodes):
        return "a value of integer type (a conversion to an integer is a step function)"
    for L in p.layers():
        if not (L.inputInterpretation.is_float and L.matrixInterpretation.is_float and L.resultType.is_float):
            return f"layer {L.interpretation} converts to or computes in integers"
        if L.inputInterpretation is not L.inputType or L.matrixInterpretation is not L.inputType:
            return (f"layer {L.interpretation} converts its input to an 8-bit float, whose implementation-dependent "
                    "rounding (one spacing: up to 2^-2 relative for E5M2) would leave bounds too loose to see a fault")
    return None


def matmuladd_bound(run: Run, i: int, err: np.ndarray) -> np.ndarray:
    """Bound of MatMulAdd node i whose operand (Input type) has bound ``err``."""
    L = run.program.nodes[i].layer
    x = run.values[i - 1].astype(np.float64)  # InputInterpretation is the Input type (float_domain_rule)
    w, b = layer_operands(run, i)
    k = w.shape[1]
    s = prop.dot_magnitude(w, x, err, b)
    f64 = matmul_oracle.gamma(k + 1, U_F64) * s  # the exact sum in float64, bias included
    r = matmul_oracle.accumulation_roundings(k, True)
    exact = x @ w.astype(np.float64).T + b.astype(np.float64)
    # the coopvec family's matmul_tolerance at the device's operands: the accumulation model's error,
    # u_r |y| (its allowance for the expected value's rounding, kept so that a device the coopvec family
    # passes on one MatMulAdd passes here too), and r smallest normals (a flushed subnormal partial sum)
    dt = L.resultType.dtype
    own = (matmul_oracle.accumulation_error(s, k, True, L.resultType) + prop.unit_roundoff(dt) * (np.abs(exact) + f64)
           + r * prop.smallest_normal(dt))
    return prop.rounded_step(exact, prop.dot_spread(w, err), run.values[i], dt, own=own + f64) + f64


def act_bound(run: Run, i: int, err: np.ndarray) -> np.ndarray:
    n = run.program.nodes[i]
    v, out, dt = run.values[i - 1].astype(np.float64), run.values[i], n.type.component.dtype
    s, t = float(run.scalar(i, 0)), float(run.scalar(i, 1))
    name = ACT_NAME[n.fn]
    if name in ("max", "min", "clamp"):
        return prop.exact_step(err)
    if name == "scale":
        return prop.scale_step(v, err, s, out, dt)
    if name == "add":
        return prop.add_step(v, err, s, out, dt)
    if name == "fma":
        return prop.fma_step(v, err, s, t, out, dt)
    raise ValueError(f"activation {n.fn.value} has no float-domain bound; it takes integers")


def node_bounds(run: Run) -> list[np.ndarray | None]:
    """Each node's bound (invocations x components; None for the store) on |device - oracle|,
    from an evaluated run (``run.values`` every node's oracle value)."""
    p = run.program
    out: list[np.ndarray | None] = []
    err = np.zeros(run.values[0].shape)
    for i, n in enumerate(p.nodes[:p.store_index + 1]):
        if n.op is Op.matmuladd:
            err = matmuladd_bound(run, i, err)
        elif n.op is Op.act:
            err = act_bound(run, i, err)
        elif n.op is Op.convert:
            src = p.nodes[i - 1].type.component
            narrowing = n.type.component.dtype.itemsize < src.dtype.itemsize
            err = prop.rounded_step(run.values[i - 1], err, run.values[i], n.type.component.dtype) if narrowing \
                else prop.exact_step(err)
        out.append(None if n.op is Op.store else err)
    return out


def store_bound(run: Run) -> np.ndarray:
    """The bound of the stored value (invocations x components)."""
    return node_bounds(run)[run.program.store_index - 1]
