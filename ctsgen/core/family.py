"""What a test family provides. A family is one vertical slice of the pipeline.

A family package (``ctsgen/families/<name>/``) holds its case dataclass,
strategy, oracle, template and tests side by side and exports ``FAMILY``,
an instance of :class:`Family`. The shared machinery (pack I/O, batching,
runner, backends) speaks only to these interfaces, so adding a family adds
files and edits nothing else.
"""

from __future__ import annotations

import hashlib
import json

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import numpy as np
from hypothesis import strategies as st

from ctsgen.core.mutant import Mutant
from ctsgen.core.shader import BufferSpec
from ctsgen.core.verdict import DEFAULT_WARN_FRACTION, Locator
from ctsgen.device.profile import DeviceProfile, Requirements

if TYPE_CHECKING:
    from ctsgen.core.coverage import Table


def case_name(variant_id: str, parameters: dict[str, Any]) -> str:
    """CTS-style case name: the variant id, then 10 hex digits of the SHA-256 of the
    case's parameters (JSON, sorted keys), stable across packs and runs."""
    digest = hashlib.sha256(json.dumps(parameters, sort_keys=True).encode()).hexdigest()[:10]
    return f"{variant_id}.case_{digest}"


@dataclass(frozen=True)
class CompareRule:
    """How a backend's output buffer is judged against the expected one.

    ``bitwise``: every element's bits equal (data movement, integer paths).
    ``tolerance``: the actual value within the per-element bound in
    ``CaseData.tolerance`` (derived by the family and documented in
    docs/spec-decisions.md; a NaN bound: that element bit for bit); within it
    but beyond ``warn_fraction`` of it anywhere is a QualityWarning. The exact
    rule, flushed subnormals included: docs/pack-format.md "Acceptance",
    execute.judge.judge_buffer.
    """

    rule: str = "bitwise"
    warn_fraction: float = DEFAULT_WARN_FRACTION
    #: Whether the sign of a zero result is part of the verdict (decision "signed-zero" in
    #: docs/spec-decisions.md). None keeps the rule's own default: ``bitwise`` compares bits
    #: (the sign counts), ``tolerance`` compares values (+0 == -0). False on a bitwise rule:
    #: float arithmetic in a shader without SignedZeroInfNanPreserve, where Vulkan lets the
    #: implementation ignore the sign of zero (and flush a subnormal result, decision
    #: "flush-to-zero"). True on a tolerance rule: the shader declares
    #: SignedZeroInfNanPreserve, so an exact zero must carry the expected sign.
    signed_zero: bool | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"rule": self.rule}
        if self.rule != "bitwise":
            out["warn_fraction"] = self.warn_fraction
        if self.signed_zero is not None:
            out["signed_zero"] = self.signed_zero
        return out


@dataclass
class CaseData:
    """The buffers of one case: what the shader is given and what must come back.

    ``initial[i]`` and ``expected[i]`` belong to the variant's i-th buffer
    (binding i+1); ``expected[i] is None`` means that buffer is not checked.
    ``params`` are the case's family parameter words (the batch prepends one
    element offset per buffer). ``tolerance[i]`` (float64) is the bound of a
    'tolerance' compare rule: shape ``(2,) + expected[i].shape`` (how far below,
    how far above) or broadcastable to ``expected[i]`` (symmetric); NaN marks a
    moved element compared bit for bit (execute.judge.tolerance_sides).
    """

    params: np.ndarray
    initial: list[np.ndarray]
    expected: list[np.ndarray | None]
    tolerance: list[np.ndarray | None] | None = None


class Variant(Protocol):
    """A compile-time signature: one shader serves every case that shares it.

    Optional members (read by :mod:`ctsgen.toolchain.variants`, the one compile step, and
    nowhere else):

    * ``spirv(compile_fn, baked=None) -> bytes``, for a variant whose module is not glslang's
      output as is (it compiles its GLSL, ``baked`` as for :meth:`glsl`, with
      ``compile_fn(glsl, name)`` and transforms it). The validator its module needs is its
      family's (:attr:`FamilySpec.validator`).
    * ``slang(baked=None) -> str``, the same shader as Slang source (``baked`` as for
      :meth:`glsl`: the same bindings, words and meaning), which the ``slang`` route compiles
      (:mod:`ctsgen.toolchain.routes`); a family whose variants have none is refused by that
      route (docs/spec-decisions.md "compiler-routes").
    """

    @property
    def id(self) -> str: ...

    @property
    def local_size_x(self) -> int: ...

    def buffers(self) -> tuple[BufferSpec, ...]: ...

    def requirements(self) -> Requirements: ...

    def glsl(self, baked: Sequence[int] | None = None) -> str:
        """The shader source; with ``baked`` (one whole parameter record: the
        buffer offsets, then the family words) a standalone one-case shader."""
        ...

    def to_json(self) -> dict[str, Any]: ...

    def execute(self, params: np.ndarray, offsets: np.ndarray, buffers: list[np.ndarray]) -> None:
        """Reference semantics: run every case of a batch on host buffers in place.

        ``params`` is cases x words (family words only), ``offsets`` is
        cases x len(buffers) element offsets into ``buffers``."""
        ...


class Case(Protocol):
    """One test case, in its family's spec vocabulary."""

    family: ClassVar[str]

    def variant(self) -> Variant: ...

    def name(self) -> str:
        """CTS-style dotted name, unique within a pack."""
        ...

    def to_json(self) -> dict[str, Any]: ...

    def data(self) -> CaseData: ...

    def compare_rule(self) -> CompareRule: ...


def case_locator(case: Case) -> Locator:
    """What ``case`` says about a failing element: its optional ``locate(buffer, element)``
    (e.g. the (row, col) and tensor coordinates the oracle used), else nothing."""
    return getattr(case, "locate", None) or (lambda buffer, element: {})


#: ``expectation(case, params, initial)``: a case's expected buffers (None where a buffer is not
#: checked) computed by its family's oracle from the given inputs: its parameter words and its
#: initial buffers, exactly as a pack holds them or a fuzz batch dispatches them.
Expectation = Callable[[Any, np.ndarray, list[np.ndarray]], list["np.ndarray | None"]]


@dataclass(frozen=True)
class Validator:
    """The SPIR-V validator a family's modules need, where spirv-val (``--target-env vulkan1.3``,
    :data:`ctsgen.toolchain.variants.SPIRV_VAL`) does not know their extension.

    ``name`` is recorded with each variant in a pack's manifest (docs/pack-format.md), so that
    reading the pack validates it again with the same one. ``validate(spirv, required)``: True
    when the module was validated; ``required=False``: False where the validator is not installed
    (:class:`~ctsgen.toolchain.ToolchainError` otherwise); a module it rejects raises
    :class:`~ctsgen.toolchain.SpirvValidationError` either way."""

    name: str
    validate: Callable[[bytes, bool], bool]


@dataclass
class Intermediates:
    """A debug re-run of one case that also exposes the values it computes on the way.

    ``variant``: the case's shader re-emitted so that it also stores each intermediate value to
    extra debug buffers (compiled and validated like any variant, run on the same backend).
    ``data``: its inputs (the case's, then the debug buffers, poisoned) and expected buffers.
    ``labels[k]``: intermediate k's short name (``#3 muladd``); ``expected[k]``: its value by the
    case's oracle; ``actual(outputs)``: the values read back from the debug run's output buffers,
    in the same order. ``listing``: the computation as readable lines, for REPORT.md.
    ``tolerance``: None (each value compared bit for bit) or, for a case judged within bounds,
    each value's absolute bound (float64, its shape), compared as a 'tolerance' rule.
    """

    variant: Any
    data: CaseData
    labels: list[str]
    expected: list[np.ndarray]
    actual: Callable[[list[np.ndarray]], list[np.ndarray]]
    listing: list[str]
    tolerance: list[np.ndarray] | None = None


@dataclass(frozen=True)
class StrategyOptions:
    """Bounds on what a family's strategy draws (keyword arguments of the CLI)."""

    profile: DeviceProfile | None = None
    include_hazardous: bool = False


class Family(Protocol):
    """The entry point of a family package."""

    name: str

    def strata(self) -> list[dict[str, object]]:
        """The cells a pack must cover, as keyword arguments of :meth:`variants`."""
        ...

    def variants(self, options: StrategyOptions, **pinned: object) -> st.SearchStrategy[Variant]: ...

    def cases_for(self, variant: Variant, options: StrategyOptions) -> st.SearchStrategy[Case]: ...

    def cases(self, options: StrategyOptions = StrategyOptions(), **pinned: object) -> st.SearchStrategy[Case]:
        """A whole case: a variant (``pinned`` keywords fix parts of it), then its run-time draws."""
        ...

    # Optional: ``hazardous(options, variants)`` draws the opt-in hazardous group;
    # ``coverage(parameters)`` gives the family's ``ctsgen coverage`` tables.

    #: A device numeric model's prediction of a case (see FamilySpec.numeric_model), or None.
    numeric_model: Callable[[Any, Any], list[np.ndarray | None] | None] | None

    #: The family's oracle on given inputs (see FamilySpec.expectation), or None.
    expectation: Expectation | None

    #: A tolerance-rule case's tolerances on given inputs (see FamilySpec.tolerance), or None.
    tolerance: Expectation | None

    #: A debug re-run exposing a case's intermediate values (see FamilySpec.intermediates), or None.
    intermediates: Callable[[Any, CaseData], Intermediates] | None

    #: What every case of the family needs (see FamilySpec.needs).
    needs: Requirements

    #: The family's mutants (see FamilySpec.mutants).
    mutants: Sequence[Mutant]

    #: The validator the family's modules need (see FamilySpec.validator), or None: spirv-val.
    validator: Validator | None

    #: Whether fuzz may draw most of a batch's cases in bulk (see FamilySpec.bulk_draws).
    bulk_draws: bool

    def case_from_json(self, obj: dict[str, Any]) -> Case: ...

    def variant_from_json(self, obj: dict[str, Any]) -> Variant: ...


@dataclass(frozen=True)
class FamilySpec:
    """A :class:`Family` made of a family package's own functions and types.

    Every family package exports ``FAMILY = FamilySpec(...)``: its name, its
    case and variant dataclasses (for ``from_json``), and its strategy
    functions. ``hazardous`` draws the family's opt-in hazardous group,
    if it has one (``ctsgen generate --include-hazardous``). ``coverage``
    turns the ``parameters`` of a pack's cases of this family into the
    count tables ``ctsgen coverage`` prints (:class:`ctsgen.core.coverage.Table`;
    conventionally ``tables`` from the family's ``coverage.py``); without
    it the family gets the generic signature-field tables.
    """

    name: str
    case_type: Any
    variant_type: Any
    strata_fn: Callable[[], list[dict[str, object]]]
    variants_fn: Callable[..., st.SearchStrategy[Any]]
    cases_for_fn: Callable[[Any, StrategyOptions], st.SearchStrategy[Any]]
    hazardous: Callable[[StrategyOptions, Sequence[Any]], st.SearchStrategy[Any]] | None = None
    coverage: Callable[[list[dict[str, Any]]], list[Table]] | None = None
    #: ``numeric_model(case, params)``: the case's expected buffers (None where a buffer is not
    #: predicted) under a device numeric model (ctsgen.oracle.models), bit for bit; None for a
    #: case the model does not cover. Used by ``ctsgen run --numerics NAME`` (ModelMismatch).
    numeric_model: Callable[[Any, Any], list[np.ndarray | None] | None] | None = None
    #: ``expectation(case, params, initial)``: the case's expected buffers recomputed by the family's
    #: oracle from the given inputs, under whatever semantics are in force when it is called. An
    #: expected driver deviation (``--expect-deviation NAME``, ctsgen.mutants.deviations) calls it with the
    #: deviation's mutant applied, so the deviation changes what a case must give and never what it
    #: is given (a pack's inputs are fixed; a program's tensor regions follow the spec's extents).
    #: Declare it where a mutant can change the inputs ``case.data()`` draws (a tensor's extent
    #: follows its layout's strides); without it ``case.data()`` is recomputed under the deviation
    #: and must give the same inputs.
    expectation: Expectation | None = None
    #: ``tolerance(case, params, initial)``: a tolerance-rule case's tolerance per buffer on the given
    #: inputs, recomputed under a deviation as ``expectation`` is. Declare it where a bound depends
    #: on the values (the program families' propagated bounds): a deviation that moves data moves
    #: the bound with it. Without it a deviation keeps the spec's tolerances.
    tolerance: Expectation | None = None
    #: ``intermediates(case, data)``: the debug re-run of ``case`` (:class:`Intermediates`) on its
    #: inputs ``data`` (``case.data()``), for a failing case's REPORT.md "first differing node"
    #: (ctsgen.runner.debug_run); called with any expected deviation's mutants applied, so the
    #: expected intermediates follow them. None: the family's cases have no intermediates.
    intermediates: Callable[[Any, CaseData], Intermediates] | None = None
    #: What every case of the family needs (its extension): a device that lacks it runs none of
    #: them, so ``ctsgen fuzz`` and campaigns leave the family out and say why instead of drawing
    #: and compiling cases the device can only reject. Every variant's ``requirements()`` includes it.
    needs: Requirements = Requirements()
    #: ``omissions(profile)``: one line saying what the family leaves out on a device that runs only
    #: part of it (cm2-program: the node kinds whose feature bits the profile lacks), or None when it
    #: leaves out nothing; ``generate`` and ``fuzz`` print it. None: the family says nothing.
    omissions: Callable[[DeviceProfile], str | None] | None = None
    #: The most cases a fuzz example of this family carries (it bounds ``FuzzOptions.min_batch``
    #: and ``max_batch``), or None (no limit). Hypothesis gives an example 8,192 bytes of choices and
    #: throws away a batch that needs more after drawing it, so a family whose case takes many
    #: choices (a program: a layout per node) keeps its batches below that budget
    #: (docs/validation.md, "Batch caps").
    batch_cap: int | None = None
    #: The injected driver bugs of the family's semantics (:class:`ctsgen.core.mutant.Mutant`),
    #: conventionally the ``MUTANTS`` of its ``mutants.py``: ``ctsgen mutants``, ``--backend
    #: mutant:NAME`` and ``--expect-deviation NAME`` find them here.
    mutants: tuple[Mutant, ...] = ()
    #: The validator every module of the family needs, where spirv-val does not know its
    #: extension (decode-vector: the glslang library's SPIRV-Tools); None: spirv-val. Pack
    #: writing, ``check_case``, repros and the debug re-run validate with it.
    validator: Validator | None = None
    #: Whether ``cases_for(variant, options)`` is built only of the strategy kinds a bulk draw walks
    #: (:mod:`ctsgen.strategies.bulk`: bounded integers, booleans, ``sampled_from``/``just`` without
    #: map or filter, ``one_of``, ``tuples``, ``builds``, composites, ``.map``). Then ``ctsgen fuzz``
    #: draws the variant and the first few cases of a batch with Hypothesis, as always, and the rest
    #: with the same strategy walked by a generator seeded from one Hypothesis choice: valid by the
    #: same bounds, about 20 us a case where Hypothesis takes ~300, and a failing one is replayed as
    #: the Hypothesis choices it recorded and shrunk like any drawn case (docs/validation.md, "Host
    #: cost per case (issue 43)"). tests/test_bulk_draws.py replays every declaring family's bulk
    #: cases through Hypothesis. False: every case is a Hypothesis draw.
    bulk_draws: bool = False

    def strata(self) -> list[dict[str, object]]:
        return self.strata_fn()

    def variants(self, options: StrategyOptions, **pinned: object) -> st.SearchStrategy[Any]:
        return self.variants_fn(options, **pinned)

    def cases_for(self, variant: Any, options: StrategyOptions) -> st.SearchStrategy[Any]:
        return self.cases_for_fn(variant, options)

    def cases(self, options: StrategyOptions = StrategyOptions(), **pinned: object) -> st.SearchStrategy[Any]:
        """A variant (``pinned`` keywords fix parts of it), then a case of that variant: shrinking
        simplifies the shader first, then its run-time parameters."""
        return self.variants(options, **pinned).flatmap(lambda v: self.cases_for(v, options))

    def case_from_json(self, obj: dict[str, Any]) -> Any:
        return self.case_type.from_json(obj)

    def variant_from_json(self, obj: dict[str, Any]) -> Any:
        return self.variant_type.from_json(obj)
