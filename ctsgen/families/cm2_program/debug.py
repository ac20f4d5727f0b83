"""The debug re-run of a cm2-program case (FamilySpec.intermediates).

The program is re-emitted as its debug variant (``ProgramVariant(program, debug=True)``): every
value a node defines is also stored with OpCooperativeMatrixStoreKHR, row-major, stride 16, into
a debug buffer of its component type (``Program.debug_slots``), and the program's own stores
run as before. Compared node by node in program order with the composed oracle's intermediates
(oracle.py ``evaluate``: ``Run.values``), the first node whose value differs is the first place
the device departs from the spec; a store or view store node is compared on the tensor region
it owns in its output buffer (regions tile each output buffer in program order, case.py), so a
fault in a store itself is named too. A float-domain case compares each value within its
propagated bound (bounds.py), a store's region within the bounds of what it stored.
"""

from __future__ import annotations

import numpy as np

from ctsgen.core.family import CaseData, Intermediates
from ctsgen.families.cm2_program.bounds import node_bounds, stored_bounds
from ctsgen.families.cm2_program.case import ProgramCase, ProgramVariant
from ctsgen.families.cm2_program.oracle import Run, evaluate
from ctsgen.families.cm2_program.program import SIDE, SINKS, Program
from ctsgen.oracle.values import from_bits, sentinel_bits


def store_regions(program: Program, params: np.ndarray, sizes: list[int]) -> dict[int, tuple[int, int]]:
    """Sink i (a store, a view store or a KHR store) -> (start, length) of the region it owns in its output
    buffer: from the node's first word (the region's offset) to the next region of that buffer,
    or its end."""
    bases = program.word_bases
    starts = {i: int(params[bases[i]]) for i in program.memory_nodes()}
    out = {}
    for i in program.memory_nodes():
        if program.nodes[i].op not in SINKS:
            continue
        b = program.buffer_of(i)
        later = [s for j, s in starts.items() if program.buffer_of(j) == b and s > starts[i]]
        out[i] = (starts[i], min(later, default=sizes[b]) - starts[i])
    return out


def intermediates(case: ProgramCase, data: CaseData) -> Intermediates:
    """The debug re-run of ``case`` on its inputs ``data``: each node's expected value is the
    composed oracle's under the semantics in force (an expected deviation applied by the
    caller), each actual value is read from the debug buffers (a value) or from the region the
    node owns in its output buffer (a store). Positions come from ``data``, never from the
    case's layouts, so a deviation cannot move them."""
    p = case.shader.program
    slots = p.debug_slots()
    debug = []
    for name, comp in p.debug_buffers():
        count = sum(1 for i in slots if p.nodes[i].type.component is comp)
        debug.append(np.full(count * SIDE * SIDE, from_bits(sentinel_bits(comp), comp), dtype=comp.dtype))
    buffers = [np.array(b, copy=True) for b in data.initial]
    run = Run(p, np.asarray(data.params), buffers, np.zeros(len(buffers), np.int64))
    values = evaluate(run)
    floats = case.domain == "float"
    bounds = node_bounds(run) if floats else []
    stored = stored_bounds(run, bounds) if floats else []
    regions = store_regions(p, data.params, [b.size for b in data.initial])
    where: list[tuple[int, int, int, tuple[int, ...]]] = []  # (buffer, start, length, shape)
    expected: list[np.ndarray] = []
    tolerance: list[np.ndarray] = []
    for i, n in enumerate(p.nodes):
        if n.op in SINKS:
            b, (start, length) = p.buffer_of(i), regions[i]
            where.append((b, start, length, (length,)))
            expected.append(buffers[b][start:start + length].copy())
            if floats:
                tolerance.append(stored[b][start:start + length])
        else:
            b, at = slots[i]
            where.append((b, at, SIDE * SIDE, (SIDE, SIDE)))
            expected.append(values[i])
            if floats:
                tolerance.append(bounds[i])

    def actual(outputs: list[np.ndarray]) -> list[np.ndarray]:
        return [np.asarray(outputs[b][start:start + length]).reshape(shape) for b, start, length, shape in where]

    inputs = CaseData(data.params, [*data.initial, *debug], [*data.expected, *([None] * len(debug))])
    return Intermediates(variant=ProgramVariant(p, debug=True), data=inputs,
                         labels=[f"#{i} {n.op.value}" for i, n in enumerate(p.nodes)], expected=expected,
                         actual=actual, listing=[f"#{i:<3d} {line}" for i, line in enumerate(p.lines())],
                         tolerance=tolerance if floats else None)
