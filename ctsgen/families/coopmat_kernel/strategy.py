"""Strategies for coopmat-kernel: a kernel (ctsgen.strategies.kernel) on the profile's KHR route.

Valid by construction for ``options.profile``: its Subgroup-scope MulAdd entries (listed sizes, and
flexible sizes where cooperativeMatrixFlexibleDimensions is on), its subgroup size and
maxComputeWorkGroupInvocations, its Workgroup memory. Strata: one per construct the kernel must hold,
so a pack covers every construct however its draws fall. Structs of matrices are the opt-in hazardous
group (``--include-hazardous``): lavapipe 26.2.6 crashes on glslang's module of a struct holding a
matrix past its 8x8 granule (docs/spec-decisions.md "kernel-structs").
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from hypothesis import strategies as st

from ctsgen.core.family import StrategyOptions
from ctsgen.device.profile import DeviceProfile, ProfileLacksError, default_profile
from ctsgen.families.coopmat_kernel.case import KernelCase, KernelVariant
from ctsgen.kernel import ir
from ctsgen.kernel.ir import Kernel
from ctsgen.ops.cm2 import profile_key
from ctsgen.strategies import kernel as kernel_strategies
from ctsgen.strategies.cached import SEEDS

#: What each stratum's kernel must contain (a construct name of ``ctsgen.strategies.kernel``).
STRATA = ("loop", "branch", "call", "shared", "exchange", "element", "readback")
#: What ordinary packs draw: every construct but the hazardous one.
HAZARDOUS = "struct"
ORDINARY = tuple(c for c in kernel_strategies.CONSTRUCTS if c != HAZARDOUS)


def strata() -> list[dict[str, object]]:
    return [{"construct": c} for c in STRATA]


def contains(kernel: Kernel, construct: str) -> bool:
    """Whether ``kernel`` holds ``construct`` (the coverage tables' rule too)."""
    return construct in constructs_of(kernel)


def constructs_of(kernel: Kernel) -> set[str]:
    out: set[str] = set()
    for s, around in kernel.walk():
        if isinstance(s, ir.Loop):
            out.add("loop")
            if around:
                out.add("nested loop")
            if s.unroll:
                out.add(s.unroll.replace("_", " "))
        elif isinstance(s, (ir.Break, ir.Continue)):
            out.add("break/continue")
        elif isinstance(s, ir.If):
            out.add("subgroup branch" if s.per_subgroup else "branch")
        if getattr(s, "probe", None) is not None:
            out.add("readback")
        elif isinstance(s, ir.Call):
            out.add("call")
        elif isinstance(s, ir.Load) and s.shared:
            out.add("shared")
            if s.rot and kernel.subgroups > 1:
                out.add("exchange")
        elif isinstance(s, ir.Exchange):
            out.add("shared")
            if s.rot and kernel.subgroups > 1:
                out.add("exchange")
        elif isinstance(s, (ir.ElementMap, ir.ElementZip)):
            out.add("element")
        for ref in kernel_strategies.refs_of(s):
            if ref.var == "r0":
                out.add("array")
    if kernel.array:
        out.add("array")
    if kernel.members:
        out.add("struct")
    if (kernel.c.rows, kernel.c.cols) != (16, 16) or kernel.a.cols != 16:
        out.add("size not 16x16")
    return out


def kernel_variants(options: StrategyOptions = StrategyOptions(), *, construct: str | None = None
                    ) -> st.SearchStrategy[KernelVariant]:
    profile = options.profile or default_profile()
    if not kernel_strategies.entries(profile):
        raise ProfileLacksError(f"device profile {profile.name!r} lists no Subgroup-scope MulAdd entry a kernel "
                                "models (A/B float16, int8 or uint8 with a float32, float16, int32 or uint32 "
                                "Accumulator), or lacks the cooperativeMatrix feature")
    key = (profile_key(profile), construct)
    if key not in _VARIANTS:  # built once per profile and stratum: Hypothesis validates a new one on its first draw
        _VARIANTS[key] = _variants(profile, construct)
    return _VARIANTS[key]


_VARIANTS: dict[tuple, st.SearchStrategy[KernelVariant]] = {}


def _variants(profile: DeviceProfile, construct: str | None) -> st.SearchStrategy[KernelVariant]:
    listed = {(e.a, e.b, e.c) for e in kernel_strategies.entries(profile) if not e.flexible}
    constructs = kernel_strategies.CONSTRUCTS if construct == HAZARDOUS else ORDINARY
    return kernel_strategies.kernels(profile, kernel_strategies.KernelShape(constructs), ensure=construct).map(
        lambda k: KernelVariant(k, (k.a, k.b, k.c) not in listed))


@st.composite
def hazardous_kernel_cases(draw: st.DrawFn, options: StrategyOptions = StrategyOptions(),
                           variants: Sequence[KernelVariant] = ()) -> KernelCase:
    """A case of a kernel holding a local struct of matrices (hazard "struct"): valid on both routes,
    but lavapipe 26.2.6 dies (SIGSEGV) building glslang's module of one whose matrix is larger than its
    8x8 granule. Opt-in only; its kernels are drawn anew, so ``variants`` is not used."""
    return draw(_cases_of(draw(kernel_variants(options, construct=HAZARDOUS))))


def kernel_cases_for(variant: KernelVariant, options: StrategyOptions = StrategyOptions()
                     ) -> st.SearchStrategy[KernelCase]:
    return _cases_of(variant)


@functools.lru_cache(maxsize=1024)
def _cases_of(variant: KernelVariant) -> st.SearchStrategy[KernelCase]:
    return st.builds(KernelCase, st.just(variant), kernel_strategies.words(variant.kernel), SEEDS)
