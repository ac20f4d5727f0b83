"""Device capability profiles and the requirements a shader variant states.

A :class:`DeviceProfile` is what a device advertises: feature bits,
properties, and the cooperative-matrix / cooperative-vector combination
lists of VK_KHR_cooperative_matrix, VK_NV_cooperative_matrix2 and
VK_NV_cooperative_vector. The Vulkan backend reads one off a live device;
:func:`load_profile` reads the text read-out format of
``shared/device-profiles/*.txt``, so strategies can be restricted to a
device (and tested) without a GPU.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from ctsgen.device.checks import ProfileFormatError, check_entry, check_features, check_properties
from ctsgen.errors import CtsgenError
from ctsgen.model.types import (
    ComponentType,
    MatrixType,
    MatrixUse,
    Scope,
    coopvec_combination_features,
    coopvec_component_type_features,
)


#: The subgroup size of a read-out that does not record one (an NVIDIA device's).
DEFAULT_SUBGROUP_SIZE = 32
#: Vulkan's required minimum of maxComputeWorkGroupInvocations (the limit of a read-out without it).
MIN_WORKGROUP_INVOCATIONS = 128


class ProfileLacksError(CtsgenError, ValueError):
    """A strategy asked for something the device profile has none of (a pinned stratum, a family's
    whole signature space); the message names the missing feature, type or property."""


@dataclass(frozen=True)
class Requirements:
    """What a shader variant needs: device extensions, feature names, matrix types."""

    extensions: tuple[str, ...] = ()
    features: tuple[str, ...] = ()
    matrices: tuple[MatrixType, ...] = ()


@dataclass
class DeviceProfile:
    """Capabilities of one device, in Vulkan's own field names."""

    name: str = "unknown"
    #: the driver as the device names it (VkPhysicalDeviceVulkan12Properties driverName and driverInfo);
    #: empty for profiles read from a file and software backends
    driver: str = ""
    extensions: frozenset[str] = frozenset()
    features: dict[str, int] = field(default_factory=dict)
    properties: dict[str, int] = field(default_factory=dict)
    coopmat_khr: list[dict[str, int]] = field(default_factory=list)
    flexible_dimensions: list[dict[str, int]] = field(default_factory=list)
    coopvec_combinations: list[dict[str, int]] = field(default_factory=list)

    # -- queries -------------------------------------------------------
    def has_feature(self, name: str) -> bool:
        """A feature bit, or an advertised VkCooperativeVectorPropertiesNV combination
        (named by ctsgen.model.types.coopvec_combination_feature) or component type
        (coopvec_component_type_feature), which a cooperative-vector shader variant
        requires like a feature."""
        if name.startswith("coopvecCombination("):
            return name in coopvec_combination_features(self.coopvec_combinations)
        if name.startswith("coopvecComponentType("):
            return name in coopvec_component_type_features(self.coopvec_combinations)
        return bool(self.features.get(name, 0))

    @property
    def subgroup_size(self) -> int:
        """VkPhysicalDeviceVulkan11Properties::subgroupSize: the invocations of a Subgroup-scope
        matrix's workgroup (one full subgroup). A read-out without it (the H100's, taken before
        ctsgen recorded it) is an NVIDIA one: 32 (docs/profile-format.md)."""
        return self.properties.get("subgroupSize", DEFAULT_SUBGROUP_SIZE)

    def matrix_types(self) -> list[MatrixType]:
        """Every fixed-size matrix type listed by VK_KHR_cooperative_matrix (of a component type
        ctsgen models), none where the cooperativeMatrix feature is off."""
        if not self.has_feature("cooperativeMatrix"):
            return []
        out: dict[MatrixType, None] = {}
        for e in self.coopmat_khr:
            if e["scope"] != Scope.Subgroup.value:  # a Workgroup-scope size comes with cm2's flexible dimensions
                continue
            for mt in _entry_matrix_types(e, e["MSize"], e["NSize"], e["KSize"], Scope(e["scope"]), self._wg(e)):
                out[mt] = None
        return list(out)

    def _wg(self, e: dict[str, int]) -> int:
        """The workgroup size of a property entry's types: its workgroupInvocations at Workgroup
        scope, one subgroup at Subgroup scope."""
        return e["workgroupInvocations"] if e["scope"] == Scope.Workgroup.value else self.subgroup_size

    def flexible_granules(self) -> list[MatrixType]:
        """The smallest matrix type of each flexible-dimension entry
        (VkCooperativeMatrixFlexibleDimensionsPropertiesNV): any rows/cols that
        are multiples of the granule, up to
        cooperativeMatrixFlexibleDimensionsMaxDimension, are allowed."""
        if not (self.has_feature("cooperativeMatrixFlexibleDimensions") and self.has_feature("cooperativeMatrix")):
            return []
        out: dict[MatrixType, None] = {}
        for e in self.flexible_dimensions:
            sc = Scope(e["scope"])
            if sc is Scope.Workgroup and not self.has_feature("cooperativeMatrixWorkgroupScope"):
                continue
            for mt in _entry_matrix_types(e, e["MGranularity"], e["NGranularity"], e["KGranularity"], sc, self._wg(e)):
                out[mt] = None
        return list(out)

    @property
    def flexible_max_dimension(self) -> int:
        return self.properties.get("cooperativeMatrixFlexibleDimensionsMaxDimension", 0)

    def subgroup_workgroup_limit(self) -> int:
        """The most invocations of a workgroup running Subgroup-scope matrices: maxComputeWorkGroupInvocations
        (Vulkan's minimum, 128, where a read-out lacks it), in whole subgroups."""
        most = self.properties.get("maxComputeWorkGroupInvocations") or MIN_WORKGROUP_INVOCATIONS
        return most - most % self.subgroup_size

    def subgroup_workgroup(self, mt: MatrixType) -> str | None:
        """None if a workgroup of ``mt.workgroup_size`` invocations may run Subgroup-scope ``mt``: whole
        subgroups, each its own scope instance (docs/spec-decisions.md "subgroup-scope-workgroups"),
        within maxComputeWorkGroupInvocations; a flexible entry's workgroupInvocations constrains
        Workgroup-scope types only."""
        sg, n = self.subgroup_size, mt.workgroup_size
        if n % sg:
            return (f"a workgroup of {n} invocations is not whole subgroups of {sg} (a Subgroup-scope matrix "
                    "needs every invocation of its subgroup)")
        if n > self.subgroup_workgroup_limit():
            return f"a workgroup of {n} invocations exceeds maxComputeWorkGroupInvocations"
        return None

    def supports_matrix(self, mt: MatrixType) -> str | None:
        """None if the device supports ``mt``, else the reason it does not. A Subgroup-scope type is
        judged as one subgroup's, in a workgroup of any whole number of subgroups
        (:meth:`subgroup_workgroup`)."""
        if not self.has_feature("cooperativeMatrix"):
            return "feature cooperativeMatrix is not supported"
        if mt.scope is Scope.Subgroup and mt.workgroup_size != self.subgroup_size:
            return self.subgroup_workgroup(mt) or self.supports_matrix(replace(mt, workgroup_size=self.subgroup_size))
        if mt in self.matrix_types():
            return None
        if not self.has_feature("cooperativeMatrixFlexibleDimensions"):
            return f"{mt.glsl} is not a listed size and cooperativeMatrixFlexibleDimensions is off"
        if mt.scope is Scope.Workgroup:
            if not self.has_feature("cooperativeMatrixWorkgroupScope"):
                return "cooperativeMatrixWorkgroupScope is not supported"
            limit = self.properties.get("cooperativeMatrixWorkgroupScopeMaxWorkgroupSize", 0)
            if mt.workgroup_size > limit:
                return f"workgroup size {mt.workgroup_size} > cooperativeMatrixWorkgroupScopeMaxWorkgroupSize {limit}"
        max_dim = self.flexible_max_dimension
        if max(mt.rows, mt.cols) > max_dim:
            return f"{mt.rows}x{mt.cols} exceeds cooperativeMatrixFlexibleDimensionsMaxDimension {max_dim}"
        for e in self.flexible_dimensions:
            if Scope(e["scope"]) is not mt.scope or self._wg(e) != mt.workgroup_size:
                continue
            for granule in _entry_matrix_types(e, e["MGranularity"], e["NGranularity"], e["KGranularity"],
                                               mt.scope, mt.workgroup_size):
                if (granule.component, granule.use) == (mt.component, mt.use) and \
                        mt.rows % granule.rows == 0 and mt.cols % granule.cols == 0:
                    return None
        return f"no cooperative-matrix property entry of this device allows {mt.glsl} with {mt.workgroup_size} invocations"

    def unsupported_reason(self, req: Requirements) -> str | None:
        """None if every requirement is met, else the first one that is not."""
        for ext in req.extensions:
            if ext not in self.extensions:
                return f"device extension {ext} is not exposed"
        for feat in req.features:
            if not self.has_feature(feat):
                return f"feature {feat} is not supported"
        for mt in req.matrices:
            reason = self.supports_matrix(mt)
            if reason:
                return reason
        return None


def _entry_matrix_types(e: dict[str, int], m: int, n: int, k: int, scope: Scope, wg: int) -> list[MatrixType]:
    """The A (MxK), B (KxN) and Accumulator (MxN, C and Result types) of one property entry."""
    out = []
    for key, use, rows, cols in (("AType", MatrixUse.A, m, k), ("BType", MatrixUse.B, k, n),
                                 ("CType", MatrixUse.Accumulator, m, n),
                                 ("ResultType", MatrixUse.Accumulator, m, n)):
        ct = ComponentType.from_vk(e[key])
        if ct is not None:
            out.append(MatrixType(ct, scope, rows, cols, use, wg))
    return out


#: Dict sections, in the order a read-out writes them: which of the profile's dicts each fills.
_SECTIONS = {
    "core props": "properties", "coopmat khr props": "properties", "cm2 props": "properties",
    "coopvec props": "properties", "core feats": "features", "coopmat khr feats": "features",
    "cm2 feats": "features", "coopvec feats": "features",
}
_LISTS = {"coopvec combos": "coopvec_combinations", "flexible dims": "flexible_dimensions",
          "coopmat khr": "coopmat_khr"}


def parse_profile(text: str, source: str = "<profile>") -> DeviceProfile:
    """Parse the read-out format of ``shared/device-profiles/*.txt``."""
    prof = DeviceProfile()
    current: list[dict[str, int]] | None = None
    declared: list[tuple[str, int, list[dict[str, int]], int]] = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            m = re.search(r"Device extensions present include (.*?)\.\s", line + " ")
            if m:
                prof.extensions = frozenset(re.findall(r"VK_[A-Za-z0-9_]+", m.group(1)))
            continue
        if line.startswith("{"):
            if current is None:
                raise ProfileFormatError(f"{source}:{lineno}: a list entry outside a list section -> read the profile out again")
            current.append(_literal(line, source, lineno))
            continue
        if line.startswith("device "):
            prof.name = line[len("device "):]
            continue
        if line.startswith("extensions "):
            prof.extensions = frozenset(line.split()[1:])
            continue
        for head, attr in _SECTIONS.items():
            if line.startswith(head + " {"):
                getattr(prof, attr).update(_literal(line[len(head):], source, lineno))
                break
        else:
            m = re.fullmatch(r"(coopvec combos|flexible dims|coopmat khr) (\d+)", line)
            if m:
                current = getattr(prof, _LISTS[m.group(1)])
                declared.append((m.group(1), int(m.group(2)), current, lineno))
            elif not line.startswith("createInstance"):
                raise ProfileFormatError(f"{source}:{lineno}: unrecognised line {line[:60]!r} -> fix or "
                                         "remove the line (the format: docs/profile-format.md)")
    check_features(prof.features, source)
    check_properties(prof.properties, source)
    _check_lists(declared, prof.properties, source)
    if prof.name == DeviceProfile.name or not (prof.coopmat_khr or prof.flexible_dimensions or prof.features):
        raise ProfileFormatError(f"{source}: no device read-out in it (no 'device' line, features or cooperative "
                                 "matrix lists) -> pass a read-out like shared/device-profiles/*.txt")
    return prof


def _check_lists(declared: list[tuple[str, int, list[dict[str, int]], int]], properties: dict[str, int],
                 source: str) -> None:
    """A list section holds as many entries as its header says (else the file was cut short),
    and every entry's members are values Vulkan and ctsgen allow (ctsgen.device.checks)."""
    for head, count, entries, lineno in declared:
        if len(entries) != count:
            raise ProfileFormatError(f"{source}:{lineno}: '{head} {count}' lists {len(entries)} entries; the "
                                     "file looks truncated -> read the profile out again")
        for entry in entries:
            check_entry(head, entry, properties, source)


def _literal(text: str, source: str, lineno: int) -> dict[str, int]:
    try:
        value = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError) as exc:
        raise ProfileFormatError(f"{source}:{lineno}: not a dict literal: {exc} -> read the profile out again") from None
    if not isinstance(value, dict):
        raise ProfileFormatError(f"{source}:{lineno}: expected a dict literal -> read the profile out again")
    return value


#: The most bytes a device-profile file may hold (a read-out is about 10 KB)
MAX_PROFILE_BYTES = 1 << 24


def load_profile(path: str | Path) -> DeviceProfile:
    """Read a device-profile file (see :func:`parse_profile`)."""
    p = Path(path)
    try:
        with open(p, "rb") as fh:  # a read-out is kilobytes: a device without end (/dev/zero) is cut short
            data = fh.read(MAX_PROFILE_BYTES + 1)
        if len(data) > MAX_PROFILE_BYTES:
            raise ProfileFormatError(f"{p}: more than {MAX_PROFILE_BYTES} bytes, no device read-out -> pass a "
                                     "read-out like shared/device-profiles/*.txt")
        text = data.decode("utf-8-sig")  # a BOM (a read-out saved on Windows) dropped; CRLF is a line end
    except OSError as exc:
        raise ProfileFormatError(f"cannot read device profile {p}: {exc.strerror} -> check the --profile path") \
            from None
    except UnicodeDecodeError:
        raise ProfileFormatError(f"{p}: not a device profile (not UTF-8 text) -> pass a read-out like "
                                 "shared/device-profiles/*.txt") from None
    return parse_profile(text, str(p))


def default_profile() -> DeviceProfile:
    """The embedded default: the NVIDIA H100 read-out (driver 580) shipped with ctsgen."""
    return load_profile(Path(__file__).with_name("profiles") / "nvidia-h100-driver580.txt")


def drawing_profile(live: DeviceProfile) -> DeviceProfile:
    """The profile to draw cases for on a device that advertises ``live``: ``live`` itself,
    or the embedded default for a software backend that lists no matrix types."""
    return live if live.coopmat_khr or live.flexible_dimensions else default_profile()
