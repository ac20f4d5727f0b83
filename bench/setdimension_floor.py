"""Minimal repro of the H100's default-stride deviation (docs/validation.md).

OpTensorLayoutSetDimensionNV must set ``stride[i] = stride[i+1] *
ceiling(Dim[i+1] / blockSize[i+1])``; every failure of the first H100
tensor-layout run is explained by ``floor`` in place of ``ceiling``.

``make OUT`` (no GPU): Hypothesis *finds* the smallest load whose result
differs between the two rules (so the repro is as small as the shrinker
can make it) and exports it as a standalone repro with ``ctsgen repro``.
``run OUT`` (on the device): runs the repro's pack on the Vulkan backend
and also dispatches ``repro.spv`` (parameters baked in as constants), so
the report says whether the constant-folded path deviates too.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np


def floor_strides(dims: tuple[int, ...], blocks: tuple[int, ...]) -> tuple[int, ...]:
    s = [1] * len(dims)
    for i in range(len(dims) - 2, -1, -1):
        s[i] = s[i + 1] * (dims[i + 1] // blocks[i + 1])
    return tuple(s)


def make(out: Path) -> None:
    from hypothesis import HealthCheck, find, settings

    from ctsgen.families.tensor_layout.case import TensorLayoutCase
    from ctsgen.ops.tensor_layout import Operation
    from ctsgen.ops.tensor_layout import expected_load
    from ctsgen.families.tensor_layout import FAMILY
    from ctsgen.pack.read import load_pack
    from ctsgen.pack.write import write_pack
    from ctsgen.repro import export_repro

    def deviates(case: TensorLayoutCase) -> bool:
        if case.blockSize is None or case.stride is not None:
            return False
        t = case.layout()
        m = case.shader.matrix
        tensor = case.data().initial[0]
        floored = replace(t, stride=floor_strides(t.layoutDimension, t.blockSize))
        padded = np.resize(tensor, max(tensor.size, floored.extent()))
        a = expected_load(t, m.rows, m.cols, tensor, m.component)
        b = expected_load(floored, m.rows, m.cols, padded, m.component)
        return not np.array_equal(a.view(np.uint8), b.view(np.uint8))

    # Dim is pinned to 2, the fewest dimensions with a stride that SetDimension
    # computes by division (a 1-D layout's only stride is the innermost, 1):
    # the shrinker cannot move between Dims, since each reinterprets later draws.
    case = find(FAMILY.cases(operation=Operation.load, Dim=2), deviates,
                settings=settings(max_examples=5000, database=None, suppress_health_check=list(HealthCheck)))
    print("minimal case:", case.to_json())
    src = out.with_name(out.name + "-pack")
    write_pack([case], src, header={"seed": None, "count": 1, "families": [case.family]}, overwrite=True)
    export_repro(load_pack(src), case.name(), out, overwrite=True)
    print(f"wrote {out}")


def run(out: Path) -> int:
    from ctsgen.backends.base import Dispatch
    from ctsgen.backends.vulkan import VulkanBackend
    from ctsgen.cli import main as cli
    from ctsgen.pack.read import load_pack

    rc = cli(["run", str(out), "--backend", "vulkan", "--results", str(out / "results-vulkan.jsonl")])
    pack = load_pack(out)
    case = pack.cases[0]
    initial, expected = case.arrays()
    variant = replace(pack.variants[case.variant_id], id="repro.baked", spirv=(out / "repro.spv").read_bytes())
    with VulkanBackend() as be:
        result = be.run(Dispatch(variant, 1, [np.zeros(4, np.uint32), *initial]), 10.0)
    got, want = result[2], expected[1]
    bad = np.flatnonzero(got.view(np.uint16 if got.itemsize == 2 else np.uint8) !=
                         want.view(np.uint16 if want.itemsize == 2 else np.uint8))
    print(f"baked repro.spv: {bad.size} of {want.size} elements differ; first: "
          + ", ".join(f"[{k}] expected {want[k]} got {got[k]}" for k in bad[:6]))
    return rc


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("action", choices=["make", "run"])
    p.add_argument("out", type=Path)
    a = p.parse_args()
    if a.action == "make":
        make(a.out)
    else:
        sys.exit(run(a.out))
