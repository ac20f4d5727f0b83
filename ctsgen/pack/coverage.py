"""What a pack samples: the coverage tables of its cases, one section per family.

A pack's cases are grouped by family. A family whose ``FAMILY`` has a
``coverage`` hook (``FamilySpec.coverage``, conventionally ``tables`` from the
family's own ``coverage.py``, built from :mod:`ctsgen.core.coverage`) gets its
tables from it. A family without a hook gets the generic tables: cases per
value of each field of its shader variants' signatures.
"""

from __future__ import annotations

from typing import Any

from ctsgen.core.coverage import Table, format_table, one_way
from ctsgen.families import get_family
from ctsgen.pack.read import Pack, PackCase


def _flatten(obj: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in obj.items():
        if isinstance(v, dict):
            out.update(_flatten(v, f"{prefix}{k}."))
        elif not isinstance(v, list):
            out[f"{prefix}{k}"] = v
    return out


def generic_tables(cases: list[PackCase], pack: Pack) -> list[Table]:
    """Cases per value of each field of the cases' shader-variant signatures (families without a hook)."""
    sigs = [_flatten(pack.variants[c.variant_id].signature) for c in cases]
    keys = sorted({k for s in sigs for k in s})
    return [one_way(f"signature field {k}", k, [s.get(k, "-") for s in sigs]) for k in keys]


def _by_family(pack: Pack) -> dict[str, list[PackCase]]:
    out: dict[str, list[PackCase]] = {}
    for c in pack.cases:
        out.setdefault(c.record["family"], []).append(c)
    return out


def coverage_tables(pack: Pack) -> list[Table]:
    """The tables of ``pack``, section by section (one per family, in the order the pack first
    names them): the family's ``coverage`` hook on its cases' parameters, or :func:`generic_tables`."""
    out: list[Table] = []
    for name, cases in _by_family(pack).items():
        hook = getattr(get_family(name), "coverage", None)
        tables = hook([c.record["parameters"] for c in cases]) if hook else generic_tables(cases, pack)
        for t in tables:
            t.family = name
        out += tables
    return out


def format_tables(tables: list[Table], pack: Pack | None = None) -> str:
    """Plain-text tables, one section per family, each table followed by its empty cells."""
    out = [f"{pack.root}: {len(pack.cases)} cases, {len(pack.variants)} shader variants"] if pack else []
    sections = _by_family(pack) if pack else {}
    family = None
    for t in tables:
        if t.family != family:
            family = t.family
            cases = sections.get(family, [])
            size = f": {len(cases)} cases, {len({c.variant_id for c in cases})} shader variants" if cases else ""
            out.append(f"\n== {family or 'cases'}{size} ==")
        out += format_table(t)
    return "\n".join(out)


