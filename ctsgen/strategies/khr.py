"""Strategies for OpCooperativeMatrixLoadKHR / StoreKHR accesses (ctsgen.ops.khr_addressing).

Valid by construction, never filtered: Pointer and Stride are drawn as multiples of the alignment
VUID-RuntimeSpirv-OpCooperativeMatrixLoadKHR-08986 asks for (``alignment_unit``); a load's stride is
any such value >= 0 (0 repeats one line, a stride below the line length makes lines overlap); a
store's stride keeps lines disjoint (at least ``min_disjoint_stride``). Shrinks toward RowMajor, the
component's own pointee, offset 0 and the smallest disjoint stride (a packed, readable matrix).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from hypothesis import strategies as st

from ctsgen.model.types import ComponentType
from ctsgen.ops.khr_addressing import KhrAccess, Layout, Pointee, alignment_unit, min_disjoint_stride
from ctsgen.strategies.cached import integers, sampled

#: Pointees wider than a component that a shader may declare its buffer with (issue "Should we allow
#: the Pointer type and matrix component type to mismatch?": e.g. uvec4 for shared-memory staging).
WIDE_POINTEES = (Pointee("uint32"), Pointee("uint32", 2), Pointee("uint32", 4))


@functools.lru_cache(maxsize=None)  # one entry per ComponentType member and ``wide``
def pointee_choices(component: ComponentType, *, wide: bool = True) -> tuple[Pointee | None, ...]:
    """None (the component's own type) first, then each of :data:`WIDE_POINTEES` made of whole
    components and wider than one (with ``wide``)."""
    extra = tuple(p for p in WIDE_POINTEES if p.size > component.size and p.size % component.size == 0)
    return (None, *extra) if wide else (None,)


def khr_accesses(rows: int, cols: int, component: ComponentType, *, is_store: bool,
                 layouts: Sequence[Layout] = (Layout.RowMajor, Layout.ColumnMajor),
                 pointees: Sequence[Pointee | None] | None = None, max_offset_steps: int = 4,
                 max_extra_stride_steps: int = 4) -> st.SearchStrategy[KhrAccess]:
    """A valid load (``is_store`` False) or store of a rows x cols matrix of ``component``.

    ``layouts`` and ``pointees`` (default :func:`pointee_choices`) bound what is drawn;
    the element offset is 0..``max_offset_steps`` alignment steps, and the stride reaches
    ``max_extra_stride_steps`` steps past the smallest disjoint stride (a load also reaches every
    step below it, down to 0)."""
    if not layouts:
        raise ValueError("khr_accesses needs at least one layout")
    if pointees is not None and not pointees:
        raise ValueError("khr_accesses needs at least one pointee (None: the component's own type)")
    if max_offset_steps < 0 or max_extra_stride_steps < 0:
        raise ValueError("max_offset_steps and max_extra_stride_steps count steps: draw them >= 0")
    return _accesses_strategy(rows, cols, component, is_store, tuple(layouts),
                              tuple(pointee_choices(component) if pointees is None else pointees),
                              max_offset_steps, max_extra_stride_steps)


@functools.lru_cache(maxsize=4096)
def _accesses_strategy(rows: int, cols: int, component: ComponentType, is_store: bool,
                       layouts: tuple[Layout, ...], pointees: tuple[Pointee | None, ...], max_offset_steps: int,
                       max_extra_stride_steps: int) -> st.SearchStrategy[KhrAccess]:
    """:func:`_accesses` built (and validated by Hypothesis) once per arguments, with each
    (layout, pointee)'s alignment unit, packed stride and stride-step strategy worked out here
    rather than per draw: a case draws one access per matrix."""
    steps: dict[tuple[Layout, Pointee | None], tuple[int, int, st.SearchStrategy[int]]] = {}
    for layout in layouts:
        for pointee in pointees:
            p = pointee or Pointee.of(component)
            unit = alignment_unit(layout, rows, cols, component, p)
            packed = min_disjoint_stride(layout, rows, cols, component, p) // unit
            # a store keeps lines disjoint; a load's step shrinks toward the packed stride, not to 0
            steps[layout, pointee] = unit, packed, integers(0 if is_store else -packed, max_extra_stride_steps)
    return _accesses(sampled(layouts), sampled(pointees), steps, integers(0, max_offset_steps))


@st.composite
def _accesses(draw: st.DrawFn, layouts: st.SearchStrategy[Layout], pointees: st.SearchStrategy[Pointee | None],
              steps: dict[tuple[Layout, Pointee | None], tuple[int, int, st.SearchStrategy[int]]],
              offsets: st.SearchStrategy[int]) -> KhrAccess:
    """A layout, a pointee, then the stride and the element offset in alignment units."""
    layout = draw(layouts)
    pointee = draw(pointees)
    unit, packed, extra_steps = steps[layout, pointee]
    step = packed + draw(extra_steps)
    offset = draw(offsets)
    return KhrAccess(layout, step * unit, offset * unit, pointee)
