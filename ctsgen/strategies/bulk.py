"""A family's own case strategy, drawn without Hypothesis, with the choices recorded.

Fuzz draws most cases of a batch with :class:`BulkDraw` (docs/validation.md, "Host cost per case
(issue 43)"): a ``draw`` function, the one a composite strategy is given, that walks the same
strategy objects Hypothesis would (the family's ``cases_for(variant, options)``) and makes each
choice from a seeded generator (a seed Hypothesis draws, one choice a batch). The bounds are the strategy's own:
one definition read by both, so a bulk case is valid by construction exactly as a Hypothesis case
is. Each choice is recorded as Hypothesis records it (an integer's value, a boolean, a
``sampled_from`` or ``one_of`` branch index), so a bulk case that fails is re-expressed as the
choices Hypothesis would have made for it, replayed and shrunk as any drawn example
(:mod:`ctsgen.fuzz.loop`).

The walk itself, which reads Hypothesis's strategy objects, is
:class:`ctsgen.strategies.hypothesis_reach.StrategyWalk` (the one module that reaches into
Hypothesis's internals); this module makes the choices. It walks the strategy kinds ctsgen's case
strategies are built of: bounded integers, booleans, ``sampled_from`` and ``just`` (no map or
filter), ``one_of``, ``tuples``, ``builds``, ``@st.composite``, ``.map`` and lazily built
strategies. Any other kind raises :class:`TypeError`: a family declares
``FamilySpec.bulk_draws`` only when its case strategy is made of these (tests/test_bulk_draws.py
replays every declaring family's bulk cases through Hypothesis).

Choices follow Hypothesis's distribution only roughly (:meth:`BulkDraw.integer`: the bounds,
small magnitudes in a wide range, else uniform); the edges only Hypothesis reaches (its
mutations, its constants) live in the few cases of each batch it draws in full.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

from ctsgen.strategies.hypothesis_reach import StrategyWalk

#: 1 in this many integer choices is its lower bound, and as many its upper bound
_EDGE = 32
#: the chance that a choice keeps its template's value (:meth:`BulkDraw.start`)
_KEEP = 0.5
#: a range wider than this draws small magnitudes more often than large ones
_NEAR = 512


class BulkDraw(StrategyWalk):
    """``draw(strategy)`` (the walk of :class:`~ctsgen.strategies.hypothesis_reach.StrategyWalk`)
    from a Mersenne Twister seeded by ``seed``; :attr:`choices` holds what was
    chosen since the last :meth:`start`, as Hypothesis's choice sequence for the same values.

    One ``random()`` a choice (Python's generator: a C call per number, where a numpy generator
    called per number costs ten times as much, and a case's choices depend on each other, so
    they cannot be drawn as one array)."""

    def __init__(self, seed: int) -> None:
        self._random = random.Random(seed).random
        self.choices: list[int | bool] = []
        self._template: Sequence[int | bool] = ()

    def start(self, template: Sequence[int | bool] = ()) -> None:
        """Begin a new case: forget the recorded choices. ``template``: the choices of a case
        Hypothesis drew from the same strategy; each choice keeps the template's value at its
        position with chance :data:`_KEEP` where that value fits its bounds (a mutation of the
        template, as Hypothesis's generator mutates the examples it drew), else is drawn anew."""
        self.choices = []
        self._template = template

    def integer(self, lo: int, hi: int) -> int:
        """An integer in [lo, hi], recorded as Hypothesis's ``draw_integer(lo, hi)`` choice: each bound
        1 time in :data:`_EDGE`; in a range wider than :data:`_NEAR`, half the rest near zero (uniform
        on [-_NEAR/2, _NEAR/2] within the range) and half a log-uniform distance above ``lo``, as
        Hypothesis favours small magnitudes; else uniform."""
        template, i = self._template, len(self.choices)
        if i < len(template) and self._random() < _KEEP:  # inline: the hot path of a bulk draw
            v = template[i]
            if type(v) is int and lo <= v <= hi:
                self.choices.append(v)
                return v
        u = self._random() * _EDGE
        if u < 2:
            v = lo if u < 1 else hi
        elif hi - lo <= _NEAR:
            v = lo + min(int((u - 2) / (_EDGE - 2) * (hi - lo + 1)), hi - lo)
        else:
            a, b = max(lo, -_NEAR // 2), min(hi, _NEAR // 2)
            if a <= b and u < (_EDGE + 2) / 2:
                v = a + min(int(self._random() * (b - a + 1)), b - a)
            else:
                v = min(hi, lo + int(2.0 ** (self._random() * math.log2(hi - lo + 2))) - 1)
        self.choices.append(v)
        return v

    def boolean(self) -> bool:
        """A boolean, recorded as Hypothesis's ``draw_boolean()`` choice: the template's with chance
        :data:`_KEEP` where it holds a boolean there, else a fair coin."""
        template, i = self._template, len(self.choices)
        v = template[i] if i < len(template) and self._random() < _KEEP else None
        if type(v) is not bool:
            v = self._random() < 0.5
        self.choices.append(v)
        return v
