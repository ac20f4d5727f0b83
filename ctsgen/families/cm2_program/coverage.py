"""Coverage tables of cm2-program packs (which operation follows which, program
lengths, tensor objects per shader, the named seed programs).

* operation pair: for every operand edge of every program, the producing node's
  kind (row) x the consuming node's kind (column); a store and a view store consume too;
* program length (nodes that are not sinks, 2-12) x origin (a named seed
  program or ``drawn``);
* tensor-layout objects per shader x distinct clamp modes among them;
* one line per named seed program (through tensor layouts, and through KHR loads and
  stores: "NAME khr"): the cases that run it;
* memory-access kind (a load through a layout, through a layout and a view, with a
  DecodeFunc, through a layout and a view with a DecodeFunc; a store through a layout,
  through a layout and a view; a KHR load and a KHR store) x how many of that kind share
  a shader;
* decode loads (through a view or not): block format x Dim;
* program length x data domain: ``exact`` (small integers, bit-exact) or ``float``
  (full-significand data within propagated bounds: docs/spec-decisions.md
  "cm2-program-float-domain").
"""

from __future__ import annotations

from typing import Any

from ctsgen.core.coverage import Table, grid, one_way
from ctsgen.families.cm2_program.case import DOMAINS
from ctsgen.families.cm2_program.program import DECODE_OPS, MEMORY_OPS, NO_OPERANDS, SINKS, Op
from ctsgen.families.cm2_program.strategy import DIMS, MAX_OPS, MAX_STORES, MIN_OPS, SEEDS, khr_route
from ctsgen.ops.decode import FORMATS

ORDER = [o.value for o in Op]
SINK_NAMES = [o.value for o in SINKS]
def _shape(program: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A program's JSON without its matrices' workgroup size (a seed program runs at the device's subgroup size)."""
    return [{**n, "type": {k: v for k, v in n["type"].items() if k != "workgroupSize"}} for n in program]


SEED_JSON = {**{name: _shape(p.to_json()) for name, p in SEEDS.items()},
             **{f"{name} khr": _shape(khr_route(p).to_json()) for name, p in SEEDS.items()}}
#: each named seed program's length (its KHR twin's is the same)
SEED_OPS = {name: SEEDS[name.removesuffix(" khr")].ops for name in SEED_JSON}


def origin(program: list[dict[str, Any]]) -> str:
    shape = _shape(program)
    return next((name for name, p in SEED_JSON.items() if p == shape), "drawn")


def tables(cases: list[dict[str, Any]]) -> list[Table]:
    """The tables for the ``parameters`` of cm2-program cases."""
    progs = [p["variant"]["program"] for p in cases]
    pairs = [(prog[a]["op"], n["op"]) for prog in progs for n in prog for a in n["args"]]
    lengths = [(sum(n["op"] not in SINK_NAMES for n in prog), origin(prog)) for prog in progs]
    layouts = [[n for n in prog if "clampMode" in n] for prog in progs]
    objects = [(len(ls), len({n["clampMode"] for n in ls})) for ls in layouts]
    producers = [o for o in ORDER if o not in SINK_NAMES]
    consumers = [o for o in ORDER if Op(o) not in NO_OPERANDS]
    kinds = [o.value for o in MEMORY_OPS]
    per_kind = [(k, n) for prog in progs for k in kinds if (n := sum(x["op"] == k for x in prog))]
    decodes = [(x["decoder"], x["Dim"]) for prog in progs for x in prog if Op(x["op"]) in DECODE_OPS]
    domains = [(n, p.get("domain", "exact")) for (n, _), p in zip(lengths, cases)]
    return [
        grid(f"operation pair: producer x consumer ({len(pairs)} operand edges)", "producer", "consumer",
             producers, consumers, pairs, partition=False),
        grid("program length x origin", "length", "origin", list(range(MIN_OPS, MAX_OPS + 1)),
             list(SEED_JSON) + ["drawn"], lengths,
             excluded={(n, name): "a seed program has one length" for name, ops in SEED_OPS.items()
                       for n in range(MIN_OPS, MAX_OPS + 1) if n != ops}),
        grid("tensor-layout objects per shader x distinct clamp modes", "objects", "clampModes",
             list(range(1, MAX_OPS + MAX_STORES + 1)), list(range(1, 6)), objects,
             excluded={(k, m): "more clamp modes than objects" for k in range(1, 6) for m in range(k + 1, 6)}),
        one_way("named seed programs", "seed", [o for _, o in lengths if o != "drawn"], list(SEED_JSON),
                partition=False),
        grid("memory-access kind x accesses of that kind per shader", "kind", "objects", kinds,
             list(range(1, MAX_OPS + MAX_STORES + 1)), per_kind, partition=False,
             excluded={(s, k): "at most 3 stores" for s in SINK_NAMES
                       for k in range(MAX_STORES + 1, MAX_OPS + MAX_STORES + 1)}),
        grid("decode loads: block format x Dim", "decoder", "Dim", list(FORMATS), sorted(DIMS), decodes,
             partition=False),
        grid("program length x data domain", "length", "domain", list(range(MIN_OPS, MAX_OPS + 1)), list(DOMAINS),
             domains),
    ]
