"""The NVIDIA H100's float arithmetic inside cooperative-matrix and cooperative-vector
instructions, as pure vectorised numpy (docs/spec-decisions.md, device-numeric-models).

* **MMA (cm2-gemm's MulAdd)**, after Microsoft's MMA-Sim description of the H100's fp16, bf16
  and tf32 MMA (Xie et al., "MMA-Sim: Bit-Accurate Reference Model of Tensor Cores and Matrix
  Cores", arXiv:2511.10909, 2025; and Fasi et al., "Numerical behavior of NVIDIA tensor cores",
  PeerJ CS 7:e330, 2021): one MMA step takes ``k_step`` products (exact) and the accumulator
  element as ``k_step + 1`` terms. Each term has an alignment exponent: a product's is the sum
  e_a + e_b of its factors' exponents (a subnormal factor counts as the format's smallest
  normal exponent, as in MMA-Sim; the fitted data has none), *not* the binade of the product
  (1.5 * 1.5 = 2.25 aligns by 0, not 1); the accumulator's is its own. Every term is truncated (toward zero) to ``frac_bits`` fractional
  bits below the largest alignment exponent E, i.e. to multiples of 2^(E - frac_bits) (25;
  fp8: 13), the truncated terms are added exactly, and the sum is rounded toward zero to fp32.
  A K-long dot product is a chain of such steps in K order (k_step = 16 for 16-bit inputs, 32
  for fp8), starting from a zero accumulator; the epilogue ``alpha * r + beta * C`` is
  ordinary fp32 arithmetic (RNE). Fitted on the H100 (docs/validation.md, "Device numeric
  models"): bit-exact on every float16 and bfloat16 -> float32 element of cm2-gemm seed 1501;
  aligning by the products' binades instead (``mma_alignment="magnitude"``, this module's rule
  before) keeps one bit fewer whenever the largest product's significand carries, and misses
  1.58% of the float16 elements.
* **An fp16 accumulator** (cm2-gemm float16 -> float16, coopvec fp16 MatMul / MatMulAdd): the
  same fused step into an fp16 accumulator (:func:`f16_step`, ``f16_acc="fused"``): 16 products
  and the accumulator (coopvec: starting at the bias) aligned and truncated to 25 bits below the
  largest exponent, the exact sum rounded to nearest fp16. **coopvec E4M3 / E5M2**: the same
  step over 16 products (``coopvec_block_fp8``) and 25 bits (not an fp8 MMA's 32 products and
  13 bits). Fitted on the H100 (docs/validation.md, "The
  remaining models"): bit-exact on every element; the binary32 block sum added to the fp16
  accumulator (``f16_acc="blocks"``, the earlier coopvec model) misses 6 of 100,352 coopvec fp16
  and 9 of 334,848 gemm float16 -> float16 elements, fp8 steps of 32 products 8-10%.
* **bfloat16 conversions** truncate (round toward zero) the source rounded to nearest float32,
  measured on the H100 (docs/validation.md: cm2-convert's bfloat16 results; a 32-bit integer's
  float32 rounding: docs/validation.md, "Confirmed on new seeds").
* **cm2-reduce float sums** follow the accumulator's fragment layout (:func:`reduce_fragment`):
  each invocation sums the elements it holds in register order, the lanes combine in a
  shuffle-xor tree, and the warps of a workgroup-scope matrix add their partials in warp
  order; every partial sum rounded to nearest in the component type. Fitted on the H100
  and confirmed on new seeds (docs/validation.md), where the split of a workgroup's matrix
  over its subgroups was measured for all 27 multi-subgroup shapes (:func:`warp_grid`).

Every knob a mutant turns is a field of :class:`H100Params`, so a mutated model is
``dataclasses.replace(H100, ...)``. bench/fit_numeric_model.py (at commit adeb587) replays dumped device outputs
against it and its one-knob variations (docs/validation.md, "Device numeric models").
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np

from ctsgen.model.types import ComponentType
from ctsgen.oracle.numeric import accumulate_blocks_f16, float_format, neighbours, round_to_nearest_even
from ctsgen.oracle import numeric


@dataclass(frozen=True)
class H100Params:
    """The model's knobs (their H100 values by default)."""

    frac_bits: int = 25            # fractional bits kept below the largest alignment exponent
    frac_bits_fp8: int = 13
    mma_alignment: str = "exponents"  # a product's alignment exponent: "exponents" (e_a + e_b)
                                      # or "magnitude" (floor(log2 |a * b|), one bit fewer on a carry)
    mma_rounding: str = "rtz"      # rounding of an MMA step's sum to fp32: "rtz" or "rne"
    coopvec_block: int = 16        # products per step of coopvec's fp16 path
    coopvec_reverse: bool = False  # blocks taken in reverse K order (a mutant)
    bf16_rounding: str = "rtz"     # float -> bfloat16 conversions
    bf16_source: str = "float32"   # what a "rtz" conversion to bfloat16 truncates: the source rounded to
                                   # nearest float32 first ("float32": the H100, where a 32-bit
                                   # integer can round up to the next bfloat16) or the exact value ("exact")
    f16_acc: str = "fused"         # an fp16 accumulator's MMA step, cm2-gemm float16 -> float16 and coopvec:
                                   # "fused" (products and accumulator aligned and truncated as in the fp32
                                   # step, the exact sum rounded to fp16 by ``f16_rounding``: the H100) or
                                   # "blocks" (binary32 sum of the step's products added to the fp16
                                   # accumulator, rounded to nearest: a mutant, the earlier coopvec model)
    f16_rounding: str = "rne"      # a fused fp16 step's rounding: "rne", "rtz", or "rtz-rne" (toward zero
                                   # to fp32, then to nearest fp16: a float32 MMA converted)
    f16_acc_k_step: int = 16       # products per step into cm2-gemm's fp16 accumulator (8: an m16n8k8 MMA;
                                   # 32: a whole TILE_K-32 coopMatMulAdd before the rounding)
    coopvec_block_fp8: int = 16    # products per step of coopvec's E4M3 / E5M2 paths (32: an fp8 MMA's K)
    reduce_order: str = "fragment"  # cm2-reduce float sums: "fragment" (the accumulator's lane layout,
                                    # :func:`reduce_fragment`: the H100), or over each result's terms in the
                                    # spec oracle's order: "halving" (x_i + x_(i+n/2), recursively),
                                    # "pairwise" (adjacent pairs), "sequential", "exact"
    reduce_width: str = "type"     # partial sums rounded to the component type, or held at "float32"


H100 = H100Params()

#: Knob values (a typo is an error, not a silent default).
F16_ACCS = ("blocks", "fused")
F16_ROUNDINGS = ("rne", "rtz", "rtz-rne")
REDUCE_ORDERS = ("fragment", "halving", "pairwise", "sequential", "exact")
REDUCE_WIDTHS = ("type", "float32")
BF16_SOURCES = ("float32", "exact")

#: MMA K-step per input type (products per fused sum).
K_STEP = {ComponentType.float16: 16, ComponentType.bfloat16: 16}
K_STEP_FP8 = 32


def round_to(x: np.ndarray, component: ComponentType, rounding: str) -> np.ndarray:
    """float64 values rounded to a float ``component`` (as float64): to nearest even ("rne"),
    toward zero ("rtz"), or toward zero to fp32 and then to nearest in ``component`` ("rtz-rne":
    a float32 MMA result converted)."""
    if rounding == "rne":
        return round_to_nearest_even(x, component).astype(np.float64)
    if rounding == "rtz-rne":
        return round_to(round_to(x, ComponentType.float32, "rtz"), component, "rne")
    if rounding != "rtz":
        raise ValueError(f"rounding {rounding!r} -> use one of rne, rtz, rtz-rne")
    lo, hi = neighbours(x, component)
    return np.where(x < 0, hi, lo)


#: Alignment exponent of a zero term: below any real one, so a zero never sets E.
ZERO_EXPONENT = -(1 << 20)

#: ``mma_alignment`` values.
ALIGNMENTS = ("exponents", "magnitude")


def exponents_of(x: np.ndarray, emin: int) -> np.ndarray:
    """floor(log2 |x|) of float64 values, at least ``emin`` (a subnormal's exponent is the format's
    smallest normal one, its significand below 1); :data:`ZERO_EXPONENT` for zeros. int64."""
    x = np.asarray(x, dtype=np.float64)
    _, e = np.frexp(np.where(x != 0, x, 1.0))  # |x| in [2^(e-1), 2^e)
    return np.where(x != 0, np.maximum(e.astype(np.int64) - 1, emin), ZERO_EXPONENT)


def mma_step(products: np.ndarray, acc: np.ndarray, frac_bits: int, rounding: str,
             exponents: np.ndarray | None = None, acc_type: ComponentType = ComponentType.float32) -> np.ndarray:
    """One fused MMA step: ``products`` (..., k) exact, ``acc`` (...) values of ``acc_type``
    (float32, or float16 for an fp16 accumulator's fused step), float64.

    ``exponents`` (..., k) are the products' alignment exponents (e_a + e_b; :func:`gemm` forms
    them); None aligns each product by its binade floor(log2 |product|). With E the largest
    alignment exponent of the products and the accumulator (fp32's own binade), every term,
    the accumulator included, is truncated toward zero to a multiple of 2^(E - frac_bits); the
    exact sum is rounded to ``acc_type`` (:func:`round_to`). Exact in float64: a product's
    significand is below 4, so a truncated term is an integer below 2^(frac_bits + 2) times that
    power of two, and k + 1 <= 33 of them sum below 2^(frac_bits + 8) <= 2^33 of it."""
    if exponents is None:
        exponents = exponents_of(products, ZERO_EXPONENT + 1)
    exponents = np.where(products != 0, exponents, ZERO_EXPONENT)
    big = np.maximum(exponents.max(axis=-1), exponents_of(acc, float_format(acc_type)[1]))
    big = np.where(big > ZERO_EXPONENT, big, 0)  # every term zero: any grid gives 0
    grid = np.ldexp(1.0, big - frac_bits)[..., None]
    terms = np.concatenate([products, acc[..., None]], axis=-1)
    s = (np.trunc(terms / grid) * grid).sum(axis=-1)
    return round_to(s, acc_type, rounding)


def f16_step(products: np.ndarray, exponents: np.ndarray | None, acc: np.ndarray, frac_bits: int,
             params: H100Params) -> np.ndarray:
    """One MMA step into an fp16 accumulator ``acc`` (float64 values of fp16), by ``params.f16_acc``:
    "fused" (the H100) is :func:`mma_step` with an fp16 accumulator, rounded by
    ``params.f16_rounding``; "blocks" (a mutant: the earlier coopvec model, docs/validation.md
    "coopvec accumulation model", which differs from "fused" only near ties) adds the binary32
    (RNE) sum of the step's products and rounds to nearest fp16."""
    if params.f16_acc not in F16_ACCS:
        raise ValueError(f"H100Params.f16_acc {params.f16_acc!r} -> use one of {', '.join(F16_ACCS)}")
    if params.f16_acc == "blocks":
        block = round_to(products.sum(axis=-1), ComponentType.float32, "rne")
        return round_to(acc + block, ComponentType.float16, "rne")
    return mma_step(products, acc, frac_bits, params.f16_rounding, exponents, ComponentType.float16)


def gemm(a: np.ndarray, b: np.ndarray, a_type: ComponentType, params: H100Params = H100,
         c_type: ComponentType = ComponentType.float32) -> np.ndarray:
    """A (M x K) times B (K x N) as a chain of MMA steps in K order from a zero accumulator of
    ``c_type`` (float64 array of its values); products aligned by ``params.mma_alignment``. A
    float16 accumulator takes :func:`f16_step` (docs/validation.md, "The remaining models, fitted on the H100")."""
    if params.mma_alignment not in ALIGNMENTS:
        raise ValueError(f"H100Params.mma_alignment {params.mma_alignment!r} -> use one of {', '.join(ALIGNMENTS)}")
    af, bf = a.astype(np.float64), b.astype(np.float64)
    k_step = params.f16_acc_k_step if c_type is ComponentType.float16 else K_STEP.get(a_type, K_STEP_FP8)
    frac = params.frac_bits if a_type in K_STEP else params.frac_bits_fp8
    prods = af[:, None, :] * bf.T[None, :, :]  # M x N x K, exact
    exps = None
    if params.mma_alignment == "exponents":
        emin = float_format(a_type)[1]
        exps = exponents_of(af, emin)[:, None, :] + exponents_of(bf, emin).T[None, :, :]
    acc = np.zeros(prods.shape[:2])
    for k0 in range(0, prods.shape[-1], k_step):  # one iteration per MMA step, vectorised over the tile
        ks = slice(k0, k0 + k_step)
        step_exps = None if exps is None else exps[..., ks]
        if c_type is ComponentType.float16:
            acc = f16_step(prods[..., ks], step_exps, acc, frac, params)
        else:
            acc = mma_step(prods[..., ks], acc, frac, params.mma_rounding, step_exps)
    return acc


def gemm_epilogue(r: np.ndarray, c: np.ndarray, alpha: float, beta: float,
                  c_type: ComponentType = ComponentType.float32) -> np.ndarray:
    """``alpha * r + beta * c`` in ``c_type`` (fp32 or fp16; each operation rounded to nearest
    even), float64 values."""
    f = c_type.dtype.type
    return (f(alpha) * r.astype(f) + f(beta) * c.astype(f)).astype(np.float64)


def coopvec_f16(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, params: H100Params = H100,
                fp8: np.dtype | None = None) -> np.ndarray:
    """fp16-result MatMul / MatMulAdd (invocations x M, float64 values of fp16): ``x`` and ``w`` are
    fp16 values, or values of the 8-bit float type ``fp8`` (ml_dtypes' E4M3 / E5M2; steps of
    ``coopvec_block_fp8`` products, ``frac_bits`` as the fp16 path).
    The accumulator starts at the bias; each step is :func:`f16_step` (blocks in reverse K order with
    ``coopvec_reverse``, a mutant)."""
    block = params.coopvec_block if fp8 is None else params.coopvec_block_fp8
    n_blocks = -(-w.shape[-1] // block)
    order = np.arange(n_blocks)[::-1] if params.coopvec_reverse else np.arange(n_blocks)
    if params.f16_acc == "blocks":
        return accumulate_blocks_f16(x, w, bias, block, order)
    frac = params.frac_bits
    emin = float_format(ComponentType.float16)[1] if fp8 is None else int(ml_dtypes.finfo(fp8).minexp)
    xf, wf = x.astype(np.float64), w.astype(np.float64)
    ex, ew = exponents_of(xf, emin), exponents_of(wf, emin)
    acc = np.zeros((x.shape[0], w.shape[0])) + (0 if bias is None else bias.astype(np.float64))
    for blk in order:  # one step per iteration, vectorised over invocations and rows
        ks = slice(blk * block, (blk + 1) * block)
        prods = xf[:, None, ks] * wf[None, :, ks]
        acc = f16_step(prods, ex[:, None, ks] + ew[None, :, ks], acc, frac, params)
    return acc


def reduce_sum(domains: np.ndarray, component: ComponentType, params: H100Params = H100) -> np.ndarray:
    """cm2-reduce float sums: ``domains`` (a, b, n), the n values combined into result element
    (a, b) in the spec oracle's order (ctsgen.ops.cm2_reduce.reduction_domains),
    summed in ``params.reduce_order`` with every partial sum rounded to nearest even in
    ``component`` (or in float32, ``reduce_width``, then once to ``component``). Mutants of the
    H100's order (:func:`reduce_fragment`); each order is a binary tree of roundings, so every
    one lies within the spec's any-order bound (cm2-float-sum-bound)."""
    if params.reduce_order not in REDUCE_ORDERS or params.reduce_order == "fragment":
        raise ValueError(f"reduce_sum order {params.reduce_order!r} -> use one of {', '.join(REDUCE_ORDERS[1:])} "
                         "(the fragment order needs the matrix: reduce_fragment)")
    if params.reduce_width not in REDUCE_WIDTHS:
        raise ValueError(f"H100Params.reduce_width {params.reduce_width!r} -> use one of {', '.join(REDUCE_WIDTHS)}")
    x = np.asarray(domains, dtype=np.float64)
    width = ComponentType.float32 if params.reduce_width == "float32" else component
    if params.reduce_order == "exact":
        return round_to(x.sum(axis=-1), component, "rne")
    if params.reduce_order == "sequential":
        return round_to(_sequential(x, width), component, "rne")
    while x.shape[-1] > 1:  # one tree level per iteration; an odd level gets a zero (exact) partner
        half = -(-x.shape[-1] // 2)
        if x.shape[-1] % 2:
            x = np.concatenate([x, np.zeros(x.shape[:-1] + (1,))], axis=-1)
        pairs = (x[..., :half], x[..., half:]) if params.reduce_order == "halving" else (x[..., 0::2], x[..., 1::2])
        x = round_to(pairs[0] + pairs[1], width, "rne")
    return round_to(x[..., 0], component, "rne")


def warp_grid(rows: int, cols: int, subgroups: int, mode: str) -> tuple[int, int] | None:
    """The grid (rows of subgroups, columns of subgroups) a workgroup-scope reduce of a
    ``rows`` x ``cols`` accumulator over ``subgroups`` subgroups is split into, as the H100's
    sums show it; None where the rule places no whole 16 x 8 tiles (a shape not modelled).

    * ``row``: ``subgroups`` x 1 where the rows hold that many 16-row blocks, else 2 x
      (subgroups / 2), else 1 x subgroups.
    * ``column`` and ``row_column``: 1 x 2 for two subgroups, 2 x (subgroups / 2) for more.

    Fitted on the H100 (docs/validation.md, "Confirmed on new seeds": every grid each
    shape allows, replayed on dumped cm2-reduce cases): every one of the
    profile's 27 multi-subgroup shapes, each seen in one mode or more, and only these grids
    reproduce every element. A Row sum of 32 x 32 over two subgroups matches 2 x 1 and its
    Column sum 1 x 2, so the split depends on the mode, not on the shape alone."""
    if subgroups == 1:
        return 1, 1
    tried = (subgroups, 2, 1) if mode == "row" else (min(2, subgroups // 2),)
    for wr in tried:
        wc = subgroups // wr
        if wr * wc == subgroups and rows % (16 * wr) == 0 and cols % (8 * wc) == 0:
            return wr, wc
    return None


def _add(a: np.ndarray, b: np.ndarray, width: ComponentType) -> np.ndarray:
    return round_to(a + b, width, "rne")


def _sequential(x: np.ndarray, width: ComponentType) -> np.ndarray:
    """Fold the last axis left to right."""
    acc = x[..., 0]
    for i in range(1, x.shape[-1]):
        acc = _add(acc, x[..., i], width)
    return acc


def _butterfly(x: np.ndarray, width: ComponentType) -> np.ndarray:
    """A shuffle-xor tree over the last axis (a power of two): lanes l and l ^ 1, then l ^ 2, ..."""
    while x.shape[-1] > 1:
        x = _add(x[..., 0::2], x[..., 1::2], width)
    return x[..., 0]


def reduce_fragment(matrix: np.ndarray, mode: str, component: ComponentType, subgroups: int,
                    params: H100Params = H100, grid: tuple[int, int] | None = None) -> np.ndarray | None:
    """cm2-reduce float sum of ``matrix`` (rows x cols, float64 values of ``component``) in the
    H100's order, from the accumulator fragment layout of an m16n8 MMA: in a 16 x 8 tile, lane
    4g + t holds rows g and g + 8 (h = 0, 1), columns 2t and 2t + 1 (e = 0, 1); a subgroup's
    matrix is a grid of such tiles (I, J), each lane holding the same positions in every tile;
    a workgroup's matrix is split into contiguous blocks, one per subgroup, in the grid
    :func:`warp_grid` gives (``grid`` overrides it: bench/fit_warp_grids.py at commit adeb587).

    * ``row``: per lane and e, the lane's tiles J in order (sequential); lanes t in a shuffle-xor
      tree (t ^ 1, then t ^ 2); then e = 0 + e = 1; then the subgroups along the row in order.
    * ``column``: per lane, its elements (I, h) in order, I major; lanes g in a shuffle-xor tree
      (g ^ 1, g ^ 2, g ^ 4); then the subgroups along the column in order.
    * ``row_column``: per lane and e, all its elements (I, h, J) in order; the 32 lanes in a
      shuffle-xor tree (lane ^ 1, ^ 2, ..., ^ 16); then e; then the subgroups in order (row-major).
    * ``2x2``: (r0c0 + r0c1) + (r1c0 + r1c1) (a lane's pair, then lane ^ 4).

    Every partial sum is rounded to nearest in ``component`` (``params.reduce_width`` "float32":
    in binary32, then once to ``component``). Returns the reduced values ((rows, 1), (1, cols),
    (1, 1) or (rows / 2, cols / 2)), or None for a workgroup shape :func:`warp_grid` cannot
    split. Fitted on the H100 and confirmed on new seeds (docs/validation.md, "Device numeric models": bit-exact
    on every measured element); each order is a binary tree of roundings, within the spec's
    any-order bound."""
    if params.reduce_width not in REDUCE_WIDTHS:
        raise ValueError(f"H100Params.reduce_width {params.reduce_width!r} -> use one of {', '.join(REDUCE_WIDTHS)}")
    width = ComponentType.float32 if params.reduce_width == "float32" else component
    x = np.asarray(matrix, dtype=np.float64)
    rows, cols = x.shape
    if mode == "2x2":
        q = x.reshape(rows // 2, 2, cols // 2, 2)
        red = _add(_add(q[:, 0, :, 0], q[:, 0, :, 1], width), _add(q[:, 1, :, 0], q[:, 1, :, 1], width), width)
        return round_to(red, component, "rne")
    grid = grid or warp_grid(rows, cols, subgroups, mode)
    if grid is None:
        return None
    wr, wc = grid
    n_i, n_j = rows // (16 * wr), cols // (8 * wc)
    # (wi, I, h, g, wj, J, t, e): row = wi*Rb + 16 I + 8 h + g, col = wj*Cb + 8 J + 2 t + e
    f = x.reshape(wr, n_i, 2, 8, wc, n_j, 4, 2)
    if mode == "row":  # -> (wi, I, h, g, wj, e, t, J)
        lane = _sequential(f.transpose(0, 1, 2, 3, 4, 7, 6, 5), width)
        pair = _butterfly(lane, width)                              # (..., wj, e)
        red = _sequential(_add(pair[..., 0], pair[..., 1], width), width).reshape(rows, 1)
    elif mode == "column":  # -> (wj, J, t, e, wi, g, I, h)
        lane = _sequential(f.transpose(4, 5, 6, 7, 0, 3, 1, 2).reshape(wc, n_j, 4, 2, wr, 8, 2 * n_i), width)
        red = _sequential(_butterfly(lane, width), width).reshape(1, cols)
    elif mode == "row_column":  # -> (wi, wj, e, g, t, I, h, J)
        lane = _sequential(f.transpose(0, 4, 7, 3, 6, 1, 2, 5).reshape(wr, wc, 2, 32, 2 * n_i * n_j), width)
        pair = _butterfly(lane, width)                              # (wi, wj, e)
        red = _sequential(_add(pair[..., 0], pair[..., 1], width).reshape(-1), width).reshape(1, 1)
    else:
        raise ValueError(f"reduce mode {mode!r} -> use one of row, column, row_column, 2x2")
    return round_to(red, component, "rne")


def convert_values(values: np.ndarray, src: ComponentType, dst: ComponentType, params: H100Params = H100
                   ) -> np.ndarray:
    """Conversions as the H100 performs them: any -> bfloat16 rounds the source to nearest
    float32 and truncates that (``bf16_rounding`` "rtz", ``bf16_source`` "float32"), so a 32-bit
    integer is rounded twice: 0x78ffffe8 (2030043112) becomes 2^30 * 1.890625 through float32's
    2030043136, not the truncation 2^30 * 1.8828125 of the exact value (both are faithful;
    docs/validation.md, "Confirmed on new seeds"). Everything else as :func:`ctsgen.oracle.numeric.convert`
    (round to nearest even)."""
    if params.bf16_source not in BF16_SOURCES:
        raise ValueError(f"H100Params.bf16_source {params.bf16_source!r} -> use one of {', '.join(BF16_SOURCES)}")
    if dst is ComponentType.bfloat16 and params.bf16_rounding == "rtz":
        x = np.asarray(values, dtype=src.dtype)
        x = (x.astype(np.float32) if params.bf16_source == "float32" else x).astype(np.float64)
        lo, hi = neighbours(x, ComponentType.bfloat16)
        return np.where(x < 0, hi, lo).astype(dst.dtype)
    return numeric.convert(values, src, dst)
