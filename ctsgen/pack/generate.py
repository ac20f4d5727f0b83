"""Drawing the cases of a pack: stratified, grouped by shader variant, deterministic.

A pack must cover every cell of its family (``Family.strata()``, e.g.
operation x Dim x clampMode) and should share compiled shaders, so each
cell's quota is drawn as a few variants with several cases each. Every
draw is seeded from the pack seed and the cell, so the same seed gives
the same pack.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Callable

from ctsgen.device.profile import DeviceProfile, ProfileLacksError, default_profile
from ctsgen.families import get_family
from ctsgen.core.family import Case, Family, StrategyOptions
from ctsgen.families.gating import families_it_runs, omitted, unsupported_family
from ctsgen.pack.workers import in_order, worker_pool
from ctsgen.strategies.sampling import draw_examples, draw_many

CASES_PER_VARIANT = 8
#: The most cases ``generate --count`` draws into one pack: the size of the whole VK-GL-CTS. Drawing
#: grows with the count (about a million cases an hour on one core); past this, split the pack.
MAX_COUNT = 1_000_000


def _sub_seed(*parts: object) -> int:
    return int.from_bytes(hashlib.sha256(repr(parts).encode()).digest()[:8], "little")


def _shuffled(items: list[Case], order_seed: int) -> list[Case]:
    """``items`` in a seeded random order: Hypothesis draws its simplest example first, so
    without this every variant's first case would be the minimal one (zero offsets, seed 0)."""
    random.Random(order_seed).shuffle(items)
    return items


def _draw_distinct(strategy_for_attempt: Callable[[int], list[Case]], want: int, taken: dict[str, Case]
                   ) -> list[Case]:
    """Up to ``want`` cases not in ``taken``, retrying with new seeds a few times."""
    got: list[Case] = []
    for attempt in range(4):
        for c in strategy_for_attempt(attempt):
            if len(got) < want and c.name() not in taken and all(c.name() != g.name() for g in got):
                got.append(c)
        if len(got) == want:
            break
    return got


def check_runnable(family: Family, profile: DeviceProfile) -> None:
    """Refuse, in one line naming what is missing, a family ``profile`` runs no case of."""
    why = unsupported_family(family, profile)
    if why:
        raise ProfileLacksError(f"device profile {profile.name!r} runs no {family.name} case: {why} -> choose a "
                                f"family it runs: {', '.join(families_it_runs(profile)) or 'none'}")


def drawable_strata(family: Family, options: StrategyOptions) -> tuple[list[dict[str, object]], dict[str, str]]:
    """The family's strata the profile has something for, and why each other one is left out
    (its variants strategy raised :class:`ProfileLacksError` drawing it: a stratum pinned to a
    feature, type or scope the profile lacks). A stratum is tried with one draw: a strategy
    draws only from what the profile allows, so one draw that succeeds means every draw does."""
    kept, left_out = [], {}
    for stratum in family.strata():
        try:
            draw_examples(family.variants(options, **stratum), 1, 0)
        except ProfileLacksError as exc:
            left_out[repr(stratum)] = str(exc)
        else:
            kept.append(stratum)
    return kept, left_out


def draw_cases(family: Family, count: int, seed: int, options: StrategyOptions,
               cases_per_variant: int = CASES_PER_VARIANT,
               progress: Callable[[int, int], None] | None = None, jobs: int = 1,
               note: Callable[[str], None] | None = None) -> list[Case]:
    """``count`` distinct cases of ``family`` spread evenly over the strata the profile has
    something for (:func:`drawable_strata`; ``note`` is told, in one line, which it leaves out).

    Each stratum's variants, and each variant's cases, are a seeded sample
    from a larger draw, so Hypothesis's first (always the simplest) example
    does not stand in for every small stratum or fill every variant's first slot.
    ``jobs`` > 1 draws the strata in that many processes; the result is the same.
    """
    if count < 0:
        raise ValueError(f"count must be >= 0, got {count}")
    profile = options.profile or default_profile()
    if options.profile is not None:  # a device's profile; without one (the reference backend's use) every family draws
        check_runnable(family, profile)
    strata, left_out = drawable_strata(family, options)
    if not strata:
        raise ProfileLacksError(f"device profile {profile.name!r} runs no {family.name} case: "
                                f"{next(iter(left_out.values()))} -> choose a family it runs: "
                                f"{', '.join(families_it_runs(profile)) or 'none'}")
    if note and (why := omitted(family, profile)):
        note(f"{family.name} on {profile.name}: {why}")
    if left_out and note:
        reasons = [r.split(" -> ")[0] for r in left_out.values()]
        named = [r for r in reasons if "feature " in r]  # one naming a missing feature says most
        note(f"{family.name} on {profile.name}: leaving out {len(left_out)} of {len(left_out) + len(strata)} "
             f"strata the profile has nothing for (e.g. {(named or reasons)[0]})")
    work = [(family.name, i, stratum, count // len(strata) + (1 if i < count % len(strata) else 0),
             seed, options, cases_per_variant) for i, stratum in enumerate(strata)]
    work = [w for w in work if w[3] > 0]
    out: dict[str, Case] = {}
    if jobs > 1 and len(work) > 1:
        with worker_pool(min(jobs, len(work))) as pool:
            for n, drawn in enumerate(in_order(pool, _draw_stratum, work), 1):
                out.update((c.name(), c) for c in drawn if c.name() not in out)
                if progress:
                    progress(n, len(work))
    else:
        for n, w in enumerate(work, 1):
            out.update((c.name(), c) for c in _draw_stratum(w) if c.name() not in out)
            if progress:
                progress(n, len(work))
    _top_up(out, work, count, seed)
    return list(out.values())


#: Rounds of fresh draws that make up for cases two strata drew alike, before a pack is left short.
TOP_UP_ROUNDS = 8


def _top_up(out: dict[str, Case], work: list[tuple], count: int, seed: int) -> None:
    """Draw again until ``out`` holds ``count`` distinct cases (or ``TOP_UP_ROUNDS`` rounds pass):
    strata that are alike (cm2-program's unseeded strata) draw the same cases from the same
    seed, and the duplicates are dropped. Each round draws the shortfall over the strata, in
    order, from seeds of the round, in this process: the result does not depend on ``jobs``."""
    for round_ in range(1, TOP_UP_ROUNDS + 1):
        short = count - len(out)
        if short <= 0 or not work:
            return
        for i, w in enumerate(work):
            quota = short // len(work) + (1 if i < short % len(work) else 0)
            if quota:
                name, index, stratum, _, _, options, per_variant = w
                drawn = _draw_stratum((name, index, stratum, quota, _sub_seed(seed, "top-up", round_), options,
                                       per_variant))
                out.update((c.name(), c) for c in drawn if c.name() not in out and len(out) < count)


def _draw_stratum(work: tuple[str, int, dict[str, object], int, int, StrategyOptions, int]) -> list[Case]:
    """The ``quota`` cases of stratum ``i`` (a top-level function: it runs in worker processes)."""
    family_name, i, stratum, quota, seed, options, cases_per_variant = work
    family = get_family(family_name)
    n_variants = math.ceil(quota / cases_per_variant)
    pool = {v.id: v for v in draw_examples(family.variants(options, **stratum), 2 * n_variants + 4,
                                           _sub_seed(seed, family.name, i))}
    rng = random.Random(_sub_seed(seed, family.name, i, "pick"))
    ordered = rng.sample(sorted(pool.values(), key=lambda v: v.id), min(n_variants, len(pool)))
    shares = [quota // len(ordered) + (1 if j < quota % len(ordered) else 0) for j in range(len(ordered))]
    out: dict[str, Case] = {}
    for v, share in zip(ordered, shares):
        for c in _draw_distinct(
                lambda attempt, v=v, share=share: _shuffled(draw_many(
                    family.cases_for(v, options), 3 * share + 2, _sub_seed(seed, v.id, attempt)),
                    _sub_seed(seed, v.id, attempt, "order")),
                share, out):
            out[c.name()] = c
    return list(out.values())


def draw_hazardous(family: Family, count: int, seed: int, options: StrategyOptions,
                   beside: list[Case] = ()) -> list[Case]:
    """``count`` cases of the family's opt-in hazardous group (none if it has none),
    sharing shader variants with the cases ``beside`` them where the family can."""
    strategy = getattr(family, "hazardous", None)
    if strategy is None or count <= 0:
        return []
    variants = [c.variant() for c in beside]
    return _draw_distinct(lambda attempt: draw_examples(strategy(options, variants), 2 * count,
                                                        _sub_seed(seed, family.name, "hazardous", attempt)),
                          count, {c.name(): c for c in beside})
