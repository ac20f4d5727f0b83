"""The baseline the fuzzer is measured against: one case at a time.

For ``--time`` seconds: draw a case (same strategies as ``ctsgen fuzz``),
compile its shader from GLSL without any cache, build a fresh pipeline,
dispatch that one case, read back and judge it. Prints cases per second;
docs/validation.md puts it beside ``ctsgen fuzz``'s figure from the same
device call.

    CTSGEN_GLSLANG_LIBRARY=... python bench/naive_loop.py --backend vulkan --time 60
"""

from __future__ import annotations

import argparse
import time

from ctsgen.backends.registry import open_backend
from ctsgen.core.shader import ShaderVariant
from ctsgen.device.profile import drawing_profile
from ctsgen.families import DEFAULT_FAMILY, get_family
from ctsgen.execute.run import drawn, run_cases
from ctsgen.core.family import StrategyOptions
from ctsgen.strategies.sampling import draw_examples
from ctsgen.toolchain import glslang
from ctsgen.toolchain.variants import variant_spirv


def naive_loop(backend, family_name: str, seconds: float, seed: int = 0) -> tuple[int, float, int]:
    """Run the naive loop on ``backend`` for ``seconds``: (cases, wall seconds, failures)."""
    profile = drawing_profile(backend.profile())
    family = get_family(family_name)
    strategy = family.cases(StrategyOptions(profile=profile))
    start, n, failures, chunk = time.monotonic(), 0, 0, 0
    while time.monotonic() - start < seconds:
        for case in draw_examples(strategy, 50, seed + chunk):
            if time.monotonic() - start >= seconds:
                break
            v = case.variant()
            if profile.unsupported_reason(v.requirements()):
                continue
            spirv = variant_spirv(v, glslang.compile_glsl)  # glslang itself: no cache, on purpose
            sv = ShaderVariant(f"{v.id}#{n}", spirv, v.local_size_x, v.buffers(), v.requirements(),
                               case.family, v.to_json())  # a new id: a new pipeline, on purpose
            r = run_cases(backend, sv, [drawn(case, case.data())], 10.0).results[0]
            failures += r.status.is_failure
            n += 1
        chunk += 1
    return n, time.monotonic() - start, failures


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--backend", default="reference", choices=["reference", "vulkan"])
    p.add_argument("--family", default=DEFAULT_FAMILY)
    p.add_argument("--time", type=float, default=60.0)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    backend = open_backend(a.backend, isolation="none")
    n, wall, failures = naive_loop(backend, a.family, a.time, a.seed)
    backend.close()
    print(f"naive loop on {a.backend}: {n} cases in {wall:.1f}s = {n / wall:.1f} cases/s "
          f"({failures} failed; each case compiled and got a pipeline of its own)")


if __name__ == "__main__":
    main()
