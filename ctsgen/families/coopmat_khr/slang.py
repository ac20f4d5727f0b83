"""coopmat-khr's operations in Slang (the ``slang`` route, docs/spec-decisions.md "compiler-routes"):
a pointee's Slang type, the element a load or store starts at, and the operation's expression."""

from __future__ import annotations

from ctsgen.families.coopmat_khr.operation import GLSL, Op
from ctsgen.model.types import ComponentType, MatrixType
from ctsgen.ops.khr_addressing import Pointee

#: Slang's scalar of each pointee lane type (numpy's names, ops/khr_addressing.py).
_LANES = {**{t.dtype.name: t.slang for t in ComponentType}, "bfloat16": "BFloat16", "int16": "int16_t",
          "uint16": "uint16_t"}

#: Slang 2026.12 aborts converting an unsigned integer matrix to a signed one of another width
#: (docs/repros/slang-unsigned-to-signed): such a conversion goes through the result width's unsigned type.
_VIA_UNSIGNED = {ComponentType.sint8: ComponentType.uint8, ComponentType.sint32: ComponentType.uint32}


def pointee(p: Pointee) -> str:
    """The Slang type of one array element: ``half``, ``vector<half, 4>``."""
    lane = _LANES[p.scalar]
    return lane if p.lanes == 1 else f"vector<{lane}, {p.lanes}>"


def element(base: str, lanes: int, offset: str) -> str:
    """The array element a case's matrix starts at (templates/khr.glsl.j2 ``element``): the batch's
    offset ``base`` in host-array elements, in pointee elements (exact: the batch aligns it to 16
    bytes), plus the drawn ``offset``."""
    return f"({base}{f' / {lanes}u' if lanes > 1 else ''} + {offset})"


def expression(op: Op, source: MatrixType, result: MatrixType, saturating: bool) -> str:
    """The result over operands a, b, c (and scalar s) as Slang writes it."""
    if op is Op.muladd:
        return f"coopMatMulAdd<{result.component.slang}, {'true' if saturating else 'false'}>(a, b, c)"
    if op is Op.convert:
        s, r = source.component, result.component
        if not s.is_float and not r.is_float and s.dtype.kind == "u" and r in _VIA_UNSIGNED and s.size != r.size:
            via = MatrixType(_VIA_UNSIGNED[r], result.scope, result.rows, result.cols, result.use,
                             result.workgroup_size)
            return f"MR({via.slang}(a))"
        return "MR(a)"
    return GLSL[op]
