"""Coverage tables of coopvec-program packs (layer counts, which operation follows
which, interpretation chains, the named seed programs).

* layers (1-4) x origin (a named seed program or ``drawn``);
* layers x step: the forward pass alone, or with the training step (OuterProductAccumulate
  and ReduceSumAccumulate of the last layer's gradients);
* operation pair: for every node but the load, the kind of the node before it (row) x its own
  kind (column); activations by instruction (max, min, clamp, scale, add, fma, shr);
* interpretation chain: for every layer, its InputInterpretation / MatrixInterpretation ->
  Result Type (row) x the next layer's (column; ``end`` for the last layer); the domain is the
  combinations the embedded H100 profile advertises;
* one line per named seed program: the cases that run it;
* layers x data domain: ``exact`` (integers, bit-exact) or ``float`` (full-mantissa data within
  propagated bounds, float16 x float16 chains only: docs/spec-decisions.md "program-float-domain");
* controlled node: each MatMulAdd or activation under a per-invocation ``if`` or ``loop`` (kind x
  control flow; docs/spec-decisions.md "coopvec-program-divergence");
* control flow x workgroup: the per-invocation control flow a case holds (``none``, ``if``,
  ``loop``, ``if+loop``) x ``full`` (one subgroup of 32) or ``partial`` (fewer invocations).
"""

from __future__ import annotations

from typing import Any

from ctsgen.core.coverage import Table, grid, one_way
from ctsgen.device.profile import default_profile
from ctsgen.ops.coopvec_matrix import combinations
from ctsgen.families.coopvec_program.program import (ACT_NAME, LOCAL, MAX_LAYERS, MIN_LAYERS, Ctl, Node, Op,
                                                     Program, interpretation_label)
from ctsgen.families.coopvec_program.strategy import SEEDS

SEED_JSON = {name: p.to_json() for name, p in SEEDS.items()}
KINDS = ["load", "matmuladd", *dict.fromkeys(ACT_NAME.values()), "convert", "store", "outer", "reducesum"]
END = "end"
FLOWS = ["none", "if", "loop", "if+loop"]


def flow(nodes: list[Node]) -> str:
    """The per-invocation control flow a program holds: none, if, loop or if+loop."""
    kinds = [c.value for c in Ctl if any(n.ctl is c for n in nodes)]
    return "+".join(kinds) or "none"


def origin(program: list[dict[str, Any]]) -> str:
    return next((name for name, p in SEED_JSON.items() if p == program), "drawn")


def _interpretations() -> tuple[list[str], list[str]]:
    """Labels of the profile's combinations; those with a packed interpretation."""
    combos = combinations(default_profile())
    labels = list(dict.fromkeys(interpretation_label(c[1], c[2], c[4]) for c in combos))
    packed = [interpretation_label(c[1], c[2], c[4]) for c in combos if c[1].is_packed]
    return labels, packed


def _pair_rules() -> dict[tuple[str, str], str]:
    """The operation pairs a chain cannot hold, and why."""
    out: dict[tuple[str, str], str] = {}
    follows = {"load": "matmuladd", "store": "outer", "outer": "reducesum"}
    for before, only in follows.items():
        out.update({(before, k): f"{before} is followed by {only} only" for k in KINDS[1:] if k != only})
    for k in KINDS[:-1]:
        if k not in follows:
            out.update({(k, "outer"): "the outer product follows the store", (k, "reducesum"): "the reduce "
                        "sum follows the outer product"})
    return out


def tables(cases: list[dict[str, Any]]) -> list[Table]:
    """The tables for the ``parameters`` of coopvec-program cases."""
    progs = [p["variant"]["program"] for p in cases]
    nodes = [[Node.from_json(n) for n in prog] for prog in progs]
    layers = [[n.layer for n in ns if n.op is Op.matmuladd] for ns in nodes]
    counts = [(len(ls), origin(prog)) for ls, prog in zip(layers, progs)]
    steps = [(len(ls), "training" if any(n.op is Op.outer for n in ns) else "forward")
             for ls, ns in zip(layers, nodes)]
    pairs = [(ns[k - 1].kind, ns[k].kind) for ns in nodes for k in range(1, len(ns))]
    chains = [(L.interpretation, ls[j + 1].interpretation if j + 1 < len(ls) else END)
              for ls in layers for j, L in enumerate(ls)]
    domains = [(len(ls), p.get("domain", "exact")) for ls, p in zip(layers, cases)]
    controlled = [(n.op.value, n.ctl.value) for ns in nodes for n in ns if n.ctl is not None]
    flows = [(flow(ns), "partial" if int(p["variant"].get("local", LOCAL)) < LOCAL else "full")
             for ns, p in zip(nodes, cases)]
    labels, packed = _interpretations()
    n_layers = range(MIN_LAYERS, MAX_LAYERS + 1)
    seed_layers = {name: len(Program.from_json(p).layers()) for name, p in SEED_JSON.items()}
    return [
        grid("layers x origin", "layers", "origin", list(n_layers), list(SEEDS) + ["drawn"], counts,
             excluded={(n, name): "a seed program has one number of layers" for name, k in seed_layers.items()
                       for n in n_layers if n != k}),
        grid("layers x step", "layers", "step", list(n_layers), ["forward", "training"], steps),
        grid(f"operation pair: the node before x the node ({len(pairs)} pairs)", "before", "node",
             KINDS[:-1], KINDS[1:], pairs, partition=False,
             excluded=_pair_rules()),
        grid(f"interpretation chain: a layer x the next layer ({len(chains)} layers)", "layer", "next layer",
             labels, labels + [END], chains, partition=False,
             excluded={(a, b): "a packed interpretation reads the loaded input only" for a in labels
                       for b in packed}),
        one_way("named seed programs", "seed", [o for _, o in counts if o != "drawn"], list(SEEDS),
                partition=False),
        grid("layers x data domain", "layers", "domain", list(n_layers), ["exact", "float"], domains),
        grid(f"controlled node: kind x control flow ({len(controlled)} nodes)", "node", "control flow",
             ["matmuladd", "act"], [c.value for c in Ctl], controlled, partition=False),
        grid("control flow x workgroup", "control flow", "workgroup", FLOWS, ["full", "partial"], flows),
    ]
