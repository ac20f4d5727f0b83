"""What each compiler route costs and changes (issue 42; docs/spec-decisions.md "compiler-routes").

    python bench/route_costs.py [--count 12] [--seed 1] [--repeat 3] [--cost-families coopmat-khr cm2-gemm]
                                [--count-families all]
    python bench/route_costs.py --cost-families coopmat-kernel --count-families coopmat-kernel   # slang

Two tables. **Cost**: per route, the compile and validate seconds per shader variant for each
cost family, every route from an empty SPIR-V cache and in-process memo (so a spirv-opt route pays
for glslang too, as on a first compile; each tool loaded once before the timing), validated as packs are (spirv-val --target-env
vulkan1.3); the baseline is the glslang route, timed in the same run. **Instructions**: per family,
the mean instruction count of its variants along glslang and along each optimizing route (a route
that cannot read a family's modules says "refused"). The ``slang`` route (Slang from the same wheel,
reading the family's Slang source) is timed only for a family that gives one (coopmat-kernel), its
compile being the Slang emitter and compiler against the GLSL emitter and glslang. Exit 0; 1 when a
route makes a toolchain finding (named).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import ctsgen.toolchain as toolchain
from ctsgen.core.family import StrategyOptions
from ctsgen.families import families, get_family
from ctsgen.strategies.sampling import draw_examples
from ctsgen.timing import Breakdown
from ctsgen.toolchain.routes import DEFAULT_ROUTE, RouteRefusedError, ToolchainFinding, real_routes
from ctsgen.toolchain.spirv_patch import instructions, to_words
from ctsgen.toolchain.variants import compile_variant, route_refusal


def _variants(family: str, count: int, seed: int) -> list:
    fam = get_family(family)
    drawn = draw_examples(fam.variants(StrategyOptions(profile=None)), count * 3, seed)
    return list({v.id: v for v in drawn}.values())[:count]


def cost_rows(family: str, count: int, seed: int, repeat: int) -> list[str]:
    fam = get_family(family)
    vs = _variants(family, count, seed)
    rows, base = [], None
    routes = [r for r in real_routes() if route_refusal(r, fam) is None]  # slang: a family with a Slang source
    with tempfile.TemporaryDirectory(prefix="route-costs-") as cache:  # warm up: load glslang, Slang, spirv-val once
        os.environ["CTSGEN_CACHE_DIR"] = cache
        for route in routes:
            compile_variant(vs[0], family, validator=fam.validator, route=route)
    best: dict[str, tuple[float, float]] = {}
    for _ in range(repeat):  # routes interleaved, each round's best kept: a shared machine's noise only adds
        for route in routes:
            with tempfile.TemporaryDirectory(prefix="route-costs-") as cache:
                os.environ["CTSGEN_CACHE_DIR"] = cache
                toolchain.clear_memory_cache()
                times = Breakdown()
                for v in vs:
                    compile_variant(v, family, validator=fam.validator, times=times, route=route)
            c, val = (times.seconds.get(s, 0.0) * 1000 / len(vs) for s in ("compile", "validate"))
            if route.name not in best or c + val < sum(best[route.name]):
                best[route.name] = (c, val)
    for route in routes:
        c, val = best[route.name]
        base = base or c + val
        rows.append(f"| {family} | {route.name} | {len(vs)} | {c:.1f} | {val:.1f} | {(c + val) / base:.2f} |")
    return rows


def count_row(family: str, count: int, seed: int, findings: list[str]) -> str:
    fam = get_family(family)
    vs = _variants(family, count, seed)
    cells = []
    for route in real_routes():
        total = 0
        try:
            for v in vs:
                spirv = compile_variant(v, family, validator=fam.validator, route=route).spirv
                total += sum(1 for _ in instructions(to_words(spirv)))
        except RouteRefusedError:
            cells.append("refused")
            continue
        except ToolchainFinding as exc:
            findings.append(str(exc).splitlines()[0])
            cells.append("finding")
            continue
        cells.append(f"{total / len(vs):.0f}")
    return f"| {family} | {len(vs)} | " + " | ".join(cells) + " |"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--count", type=int, default=12, help="shader variants per family (default 12)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--repeat", type=int, default=3, help="timing rounds, the best of each route kept (default 3)")
    p.add_argument("--cost-families", nargs="*", default=["coopmat-khr", "cm2-gemm"])
    p.add_argument("--count-families", nargs="*", default=["all"])
    a = p.parse_args()
    started = time.monotonic()
    print(f"## Cost per variant (ms; baseline {DEFAULT_ROUTE} in the same run)\n")
    print("| family | route | variants | compile ms | validate ms | x baseline |\n|---|---|---|---|---|---|")
    for family in a.cost_families:
        print("\n".join(cost_rows(family, a.count, a.seed, a.repeat)), flush=True)
    names = list(families()) if a.count_families == ["all"] else a.count_families
    findings: list[str] = []
    print("\n## Mean instructions per module\n")
    print("| family | variants | " + " | ".join(r.name for r in real_routes()) + " |")
    print("|---|---|" + "---|" * len(real_routes()))
    for family in names:
        print(count_row(family, a.count, a.seed, findings), flush=True)
    for line in findings:
        print(f"toolchain finding: {line}")
    print(f"\n({time.monotonic() - started:.0f} s)")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
