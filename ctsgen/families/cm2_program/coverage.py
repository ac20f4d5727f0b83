"""Coverage tables of cm2-program packs (issue 16: which operation follows which, program
lengths, tensor objects per shader, the named seed programs).

* operation pair: for every operand edge of every program, the producing node's
  kind (row) x the consuming node's kind (column); a store consumes too;
* program length (nodes that are not stores, 2-12) x origin (a named seed
  program or ``drawn``);
* tensor-layout objects per shader x distinct clamp modes among them;
* one line per named seed program: the cases that run it.
"""

from __future__ import annotations

from typing import Any

from ctsgen.coverage import Table, grid, one_way
from ctsgen.families.cm2_program.program import Op
from ctsgen.families.cm2_program.strategy import MAX_OPS, MAX_STORES, MIN_OPS, SEEDS

ORDER = [o.value for o in Op]
SEED_JSON = {name: p.to_json() for name, p in SEEDS.items()}


def origin(program: list[dict[str, Any]]) -> str:
    return next((name for name, p in SEED_JSON.items() if p == program), "drawn")


def tables(cases: list[dict[str, Any]]) -> list[Table]:
    """The tables for the ``parameters`` of cm2-program cases."""
    progs = [p["variant"]["program"] for p in cases]
    pairs = [(prog[a]["op"], n["op"]) for prog in progs for n in prog for a in n["args"]]
    lengths = [(sum(n["op"] != "store" for n in prog), origin(prog)) for prog in progs]
    layouts = [[n for n in prog if "clampMode" in n] for prog in progs]
    objects = [(len(ls), len({n["clampMode"] for n in ls})) for ls in layouts]
    producers = [o for o in ORDER if o != "store"]
    consumers = [o for o in ORDER if o not in ("load", "const", "generate")]
    return [
        grid(f"operation pair: producer x consumer ({len(pairs)} operand edges)", "producer", "consumer",
             producers, consumers, pairs, partition=False),
        grid("program length x origin", "length", "origin", list(range(MIN_OPS, MAX_OPS + 1)),
             list(SEEDS) + ["drawn"], lengths,
             excluded={(n, name): "a seed program has one length" for name, prog in SEEDS.items()
                       for n in range(MIN_OPS, MAX_OPS + 1) if n != prog.ops}),
        grid("tensor-layout objects per shader x distinct clamp modes", "objects", "clampModes",
             list(range(1, MAX_OPS + MAX_STORES + 1)), list(range(1, 6)), objects,
             excluded={(k, m): "more clamp modes than objects" for k in range(1, 6) for m in range(k + 1, 6)}),
        one_way("named seed programs", "seed", [o for _, o in lengths if o != "drawn"], list(SEEDS),
                partition=False),
    ]
