"""The tensor and khr routes agree on a device: cm2-gemm and cm2-program cases run through tensor layouts
and their twins through OpCooperativeMatrixLoadKHR / StoreKHR on the same data (each family's
``route_twins``), both judged, the outputs compared bit for bit (a GEMM's D as a matrix, whatever its
memory layout; a program's output buffers, which the twins lay out alike).

    python bench/khr_route_agreement.py [--backend vulkan] [--count 100] [--seed 1]

Prints, per family, the pairs drawn, those where both routes pass, and those whose outputs are
bitwise equal; names each pair that does not. Exit 0 when every pair passes and agrees, 1 otherwise,
2 when the device has no tensor route (cooperativeMatrixTensorAddressing) to compare.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

from ctsgen.backends.registry import open_backend
from ctsgen.core.family import Case, StrategyOptions
from ctsgen.core.verdict import Status
from ctsgen.device.profile import ProfileLacksError, drawing_profile
from ctsgen.errors import CtsgenError
from ctsgen.execute.run import drawn, run_cases
from ctsgen.families.cm2_gemm.strategy import route_twins as gemm_twins
from ctsgen.families.cm2_program.strategy import route_twins as program_twins
from ctsgen.strategies.sampling import draw_examples
from ctsgen.toolchain.variants import compile_variant

TWINS = {"cm2-gemm": gemm_twins, "cm2-program": program_twins}


def outputs_of(case: Case, out: list[np.ndarray]) -> bytes:
    """What the two routes must agree on: a GEMM's D as an M x N matrix, a program's every output buffer."""
    if case.family == "cm2-gemm":
        return case.d_matrix(out[3]).tobytes()
    return b"".join(np.ascontiguousarray(b).tobytes() for (name, _), b in
                    zip(case.shader.program.buffers(), out) if not name.startswith("in_"))


def _pairs(text: str) -> int:
    n = int(text)
    if n < 1:
        raise argparse.ArgumentTypeError(f"{n} pairs: ask for at least 1")
    return n


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backend", default="reference")
    p.add_argument("--count", type=_pairs, default=100, help="pairs per family (default 100)")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    try:
        backend = open_backend(a.backend, "none")
    except CtsgenError as exc:
        print(f"khr_route_agreement.py: {exc}", file=sys.stderr)
        return 2
    bad = 0
    try:
        options = StrategyOptions(profile=drawing_profile(backend.profile()))
        shaders: dict[str, object] = {}
        for family, twins in TWINS.items():
            try:
                pairs = draw_examples(twins(options), a.count, a.seed)
            except ProfileLacksError as exc:
                print(f"{family}: {exc}", file=sys.stderr)
                return 2
            passed = equal = 0
            for pair in pairs:
                got = []
                for case in pair:
                    v = case.variant()
                    if v.id not in shaders:
                        shaders[v.id] = compile_variant(v, family, validation="if-installed")
                    done = run_cases(backend, shaders[v.id], [drawn(case, case.data())], 30.0)
                    result = done.results[0]
                    got.append(None if result.status is not Status.Pass else outputs_of(case, done.outputs[0]))
                if None in got:
                    print(f"{family}: not both Pass: {pair[0].name()} / {pair[1].name()}")
                    continue
                passed += 1
                if got[0] == got[1]:
                    equal += 1
                else:
                    print(f"{family}: outputs differ: {pair[0].name()} / {pair[1].name()}")
            print(f"{family} on {backend.profile().name}: {len(pairs)} pairs, both routes Pass in {passed}, "
                  f"bitwise equal outputs in {equal}")
            bad += len(pairs) - equal
    finally:
        backend.close()
    return 1 if bad else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # the reader closed stdout early (| head): no traceback, the lines it read stand
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
