"""Reading a pack, validated before anything touches a device.

Every problem is a :class:`PackError` that names the file and what would
make it right: a missing or corrupt manifest, an unknown format version,
a missing shader or case file, SPIR-V whose checksum does not match, an
unknown family, arrays of the wrong dtype; and a pack that is not whole and
consistent: a case list shorter or longer than the manifest's ``count``, a
case listed twice, a path that leaves the pack, a compare rule this reader
does not know, ``param_words`` that do not fill the record the variant's
GLSL declares (``PARAM_WORDS``), a buffer or workgroup size that is nonsense.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ml_dtypes  # noqa: F401  (registers the bfloat16 dtype name)
import numpy as np

from ctsgen.core.shader import BufferSpec, ShaderVariant
from ctsgen.device.profile import Requirements
from ctsgen.errors import CtsgenError, UnknownNameError
from ctsgen.families import get_family
from ctsgen.core.family import Variant
from ctsgen.pack import FORMAT, FORMAT_VERSION
from ctsgen.pack.arrays import array_shape, load_array
from ctsgen.toolchain import SpirvValidationError
from ctsgen.toolchain.variants import SPIRV_VAL, validate_module


class PackError(CtsgenError, ValueError):
    """A pack is malformed; the message names the file and the fix."""


@dataclass
class PackCase:
    """One case as read from a pack (data loaded on demand)."""

    root: Path
    record: dict[str, Any]
    buffers: tuple[BufferSpec, ...]

    @property
    def name(self) -> str:
        return self.record["name"]

    @property
    def variant_id(self) -> str:
        return self.record["variant"]

    @property
    def params(self) -> np.ndarray:
        return np.asarray(self.record["param_words"], dtype=np.uint32)

    def element_counts(self) -> list[int]:
        """Elements of each buffer, from the case record (every pack since the "elements" record;
        its arrays are checked against it when loaded), else from the .npy headers: sizing a
        batch must not open the files (the H100 runs spent 0.9-1.5 ms a case memory-mapping
        each array twice for it)."""
        counts = self.record.get("elements", {})
        if all(spec.name in counts for spec in self.buffers):
            return [int(counts[spec.name]) for spec in self.buffers]
        return [int(np.prod(shape)) for shape in self.shapes()]

    def shapes(self) -> list[tuple[int, ...]]:
        """Shape of each buffer's initial array, read from the .npy header only."""
        out = []
        for spec in self.buffers:
            rel = self.record["files"].get(f"{spec.name}.initial")
            if rel is None:
                raise PackError(f"case {self.name}: no '{spec.name}.initial' entry in its files -> regenerate the pack")
            path = self.root / rel
            try:
                shape = array_shape(path)
            except FileNotFoundError:
                raise PackError(f"{path}: missing (case {self.name}) -> regenerate the pack") from None
            except ValueError as exc:
                raise PackError(f"{exc} -> regenerate the pack") from None
            self._check_size(path, spec, int(np.prod(shape)))
            out.append(shape)
        return out

    def _check_size(self, path: Path | str, spec: BufferSpec, size: int) -> None:
        """Refuse an array whose element count is not the one the case's record gives its buffer."""
        want = self.record.get("elements", {}).get(spec.name)
        if want is not None and size != want:
            raise PackError(f"{path}: {size} elements, but case {self.name} needs {want} elements "
                            f"({spec.dtype}) for buffer {spec.name} -> regenerate the pack")

    def arrays(self) -> tuple[list[np.ndarray], list[np.ndarray | None]]:
        """(initial, expected) per buffer, in binding order."""
        files = self.record["files"]
        initial, expected = [], []
        for spec in self.buffers:
            init = self._load(files, f"{spec.name}.initial", spec.dtype, required=True)
            exp = self._load(files, f"{spec.name}.expected", spec.dtype, required=False)
            for key, arr in ((f"{spec.name}.initial", init), (f"{spec.name}.expected", exp)):
                if arr is not None:
                    self._check_size(self._path(files[key]), spec, arr.size)
            if exp is not None and exp.size != init.size:  # a pack older than the "elements" record
                raise PackError(f"{self.root / files[f'{spec.name}.expected']}: {exp.size} elements, but its "
                                f"initial array has {init.size} elements -> regenerate the pack")
            initial.append(init)
            expected.append(exp)
        return initial, expected

    def tolerances(self) -> list[np.ndarray | None] | None:
        """Per-buffer float64 tolerance arrays of a 'tolerance' compare rule (None: bitwise)."""
        if self.record["compare"].get("rule") != "tolerance":
            return None
        return [self._load(self.record["files"], f"{spec.name}.tolerance", "float64", required=False)
                for spec in self.buffers]

    def _path(self, rel: str) -> str:
        """A file of this case (a string: a pack run opens tens of thousands, where building
        pathlib objects was a third of the loading)."""
        return os.path.join(self.root, rel)

    def _load(self, files: dict[str, str], key: str, dtype: str, *, required: bool) -> np.ndarray | None:
        rel = files.get(key)
        if rel is None:
            if required:
                raise PackError(f"case {self.name}: no '{key}' entry in its files -> regenerate the pack")
            return None
        path = self._path(rel)
        try:
            return load_array(path, np.dtype(dtype))
        except FileNotFoundError:
            raise PackError(f"{path}: missing (case {self.name}) -> regenerate the pack") from None
        except ValueError as exc:
            raise PackError(f"{exc} -> regenerate the pack") from None


@dataclass
class Pack:
    root: Path
    manifest: dict[str, Any]
    variants: dict[str, ShaderVariant]
    family_variants: dict[str, Variant]
    cases: list[PackCase]


def _read_json(path: Path) -> dict[str, Any]:
    try:
        obj = json.loads(path.read_text())
    except FileNotFoundError:
        raise PackError(f"{path}: missing -> name a pack directory written by 'ctsgen generate'") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise PackError(f"{path}: not valid JSON ({exc}) -> the file is corrupt, regenerate the pack") from None
    if not isinstance(obj, dict):
        raise PackError(f"{path}: expected a JSON object -> regenerate the pack")
    return obj


def _require(obj: dict[str, Any], key: str, kind: type, where: str) -> Any:
    if key not in obj:
        raise PackError(f"{where}: missing key '{key}' -> regenerate the pack")
    if not isinstance(obj[key], kind):
        raise PackError(f"{where}: '{key}' must be a {kind.__name__} -> regenerate the pack")
    return obj[key]


#: The compare rules a reader knows (``CompareRule.rule``; docs/pack-format.md, case.json).
COMPARE_RULES = ("bitwise", "tolerance")
_PARAM_WORDS = re.compile(r"^const uint PARAM_WORDS = (\d+)u;$", re.MULTILINE)


def _inside(rel: object, where: str) -> str:
    """``rel``, a path the pack names, refused unless it is relative and stays inside the pack."""
    if not isinstance(rel, str) or not rel or os.path.isabs(rel) or \
            os.path.normpath(rel).split(os.sep)[0] == os.pardir:
        raise PackError(f"{where}: path {rel!r} is not inside the pack -> a pack names its files relative to "
                        "its directory; regenerate the pack")
    return rel


def _declared_words(root: Path, rec: dict[str, Any]) -> int | None:
    """The record length a variant's stored GLSL declares (``PARAM_WORDS``), where it does."""
    try:
        m = _PARAM_WORDS.search((root / rec["glsl"]).read_text())
    except (OSError, KeyError, TypeError, UnicodeDecodeError):
        return None
    return int(m.group(1)) if m else None


def _check_case(cpath: Path, rec: dict[str, Any], buffers: tuple[BufferSpec, ...], words: int | None) -> None:
    """One case.json against what its variant needs: a known compare rule, files inside the pack,
    and as many parameter words as the variant's record holds."""
    rule = rec["compare"].get("rule")
    if rule not in COMPARE_RULES:
        raise PackError(f"{cpath}: unknown compare rule {rule!r} (known: {', '.join(COMPARE_RULES)}) -> "
                        "regenerate the pack")
    for key, rel in rec["files"].items():
        _inside(rel, f"{cpath}: files[{key!r}]")
    got = rec["param_words"]
    if not all(isinstance(w, int) and 0 <= w < 2 ** 32 for w in got):
        raise PackError(f"{cpath}: param_words must be uint32 numbers -> regenerate the pack")
    if words is not None and len(buffers) + len(got) != words:
        raise PackError(f"{cpath}: {len(got)} param_words, but its variant's record holds "
                        f"{words - len(buffers)} after the {len(buffers)} buffer offsets -> regenerate the pack")


def _buffers(records: list[Any], where: str) -> tuple[BufferSpec, ...]:
    """A variant's storage buffers, each ``{"binding": int >= 1, "name": str, "dtype": a numpy dtype name}``."""
    out = []
    for n, b in enumerate(records):
        ok = isinstance(b, dict) and isinstance(b.get("binding"), int) and b["binding"] >= 1 and \
            isinstance(b.get("name"), str) and isinstance(b.get("dtype"), str)
        try:
            ok = ok and np.dtype(b["dtype"]) is not None
        except TypeError:
            ok = False
        if not ok:
            raise PackError(f"{where}: buffers[{n}] is not {{'binding': 1.., 'name': ..., 'dtype': a numpy dtype name}} "
                            f"(got {str(b)[:80]}) -> regenerate the pack")
        out.append(BufferSpec(b["binding"], b["name"], b["dtype"]))
    return tuple(out)


def _check_name(name: str, where: str) -> None:
    """Refuse a case name that cannot be one field of one line of deqp-runner's CSV files (results.csv,
    failures.csv, a baseline: unquoted ``name,Status``), or that a baseline would read as a comment or
    as a rule (``re:``, ``deviation:``; docs/ci.md): a failures.csv is the next baseline as it is."""
    bad = next((c for c in name if c in ",:" or c.isspace() or not c.isprintable()), None)
    if not name or bad is not None or name.startswith("#"):
        rule = ("is empty" if not name else f"holds {bad!r}" if bad is not None else "starts with '#'")
        raise PackError(f"{where}: case name {name[:80]!r} {rule}; a case name is one field of a line of "
                        "results.csv (no ',', ':', whitespace or control character, no leading '#') -> regenerate the "
                        "pack, or undo the edit")


def load_pack(root: str | Path) -> Pack:
    """Read and validate the pack at ``root`` (case arrays are read lazily)."""
    root = Path(root)
    if not root.is_dir():
        raise PackError(f"{root}: no such pack directory -> name a directory `ctsgen generate` wrote (default generated/FAMILY)")
    mpath = root / "manifest.json"
    m = _read_json(mpath)
    if m.get("format") != FORMAT:
        raise PackError(f"{mpath}: 'format' is {m.get('format')!r}, expected {FORMAT!r} -> name a pack directory written by 'ctsgen generate'")
    if m.get("format_version") != FORMAT_VERSION:
        raise PackError(f"{mpath}: format_version {m.get('format_version')!r} is not supported "
                        f"(this ctsgen reads version {FORMAT_VERSION}) -> regenerate the pack")
    variants: dict[str, ShaderVariant] = {}
    family_variants: dict[str, Variant] = {}
    for vid, rec in _require(m, "variants", dict, str(mpath)).items():
        where = f"{mpath}: variant {vid}"
        try:
            fam = get_family(_require(rec, "family", str, where))
        except UnknownNameError as exc:
            raise PackError(f"{where}: {exc}") from None
        try:
            fv = fam.variant_from_json(_require(rec, "signature", dict, where))
        except (KeyError, ValueError, TypeError) as exc:
            raise PackError(f"{where}: invalid signature ({exc!r}) -> regenerate the pack") from None
        spv_path = root / _inside(_require(rec, "spirv", str, where), where)
        try:
            spirv = spv_path.read_bytes()
        except FileNotFoundError:
            raise PackError(f"{spv_path}: missing SPIR-V of variant {vid} -> regenerate the pack") from None
        if hashlib.sha256(spirv).hexdigest() != rec.get("spirv_sha256"):
            raise PackError(f"{spv_path}: checksum does not match the manifest -> the file was modified or "
                            "truncated, regenerate the pack")
        if not isinstance(variant_route(rec), str):
            raise PackError(f"{where}: 'route' must be a route's name -> regenerate the pack")
        buffers = _buffers(_require(rec, "buffers", list, where), where)
        local_size_x = _require(rec, "local_size_x", int, where)
        if local_size_x < 1:
            raise PackError(f"{where}: local_size_x {local_size_x} is not a workgroup size (>= 1) -> regenerate the pack")
        req = rec.get("requirements", {})
        variants[vid] = ShaderVariant(
            id=vid, spirv=spirv, local_size_x=local_size_x, buffers=buffers,
            requirements=Requirements(tuple(req.get("extensions", ())), tuple(req.get("features", ())),
                                      fv.requirements().matrices),
            family=rec["family"], signature=rec["signature"])
        family_variants[vid] = fv
    cases = []
    entries = _require(m, "cases", list, str(mpath))
    count = m.get("count", len(entries))
    if not isinstance(count, int) or count != len(entries):
        raise PackError(f"{mpath}: lists {len(entries)} cases, but its count says {count!r} -> the manifest was cut "
                        "or edited; regenerate the pack")
    words = {vid: _declared_words(root, rec) for vid, rec in m["variants"].items()}
    seen: dict[str, int] = {}
    for i, entry in enumerate(entries):
        where = f"{mpath}: cases[{i}]"
        if not isinstance(entry, dict):
            raise PackError(f"{where}: expected a JSON object -> regenerate the pack")
        vid = _require(entry, "variant", str, where)
        if vid not in variants:
            raise PackError(f"{where}: variant {vid!r} is not in the manifest's variants -> regenerate the pack")
        name = _require(entry, "name", str, where)
        _check_name(name, where)
        if name in seen:
            raise PackError(f"{where}: case {name} is listed twice (also cases[{seen[name]}]) -> regenerate the pack")
        seen[name] = i
        cpath = root / _inside(_require(entry, "case", str, where), where)
        rec = _read_json(cpath)
        for key, kind in (("name", str), ("param_words", list), ("files", dict), ("compare", dict)):
            _require(rec, key, kind, str(cpath))
        if rec["name"] != name:
            raise PackError(f"{cpath}: name {rec['name']!r} does not match the manifest's {name!r} -> regenerate the pack")
        _check_case(cpath, rec, variants[vid].buffers, words[vid])
        cases.append(PackCase(root, rec, variants[vid].buffers))
    return Pack(root, m, variants, family_variants, cases)


#: The route of a variant record that names none: packs written before routes (docs/pack-format.md).
OLD_ROUTE = "glslang"


def variant_route(rec: dict[str, Any]) -> str:
    """The compiler route a variant record names (:data:`OLD_ROUTE` where it names none)."""
    return rec.get("route", OLD_ROUTE)


def pack_routes(pack: Pack) -> set[str]:
    """The compiler routes of the pack's variants."""
    return {variant_route(rec) for rec in pack.manifest["variants"].values()}


def validate_shaders(pack: Pack) -> None:
    """Refuse a pack whose SPIR-V its validator rejects, with the validator's message.

    Each variant is validated by its family's validator (``FamilySpec.validator``; see
    :func:`ctsgen.toolchain.variants.validate_module`), which its manifest entry names
    (``spirv-val`` when it names none); a validator that is not installed raises
    :class:`~ctsgen.toolchain.ToolchainError`."""
    for vid, v in pack.variants.items():
        named = pack.manifest["variants"][vid].get("validator", SPIRV_VAL.name)
        validator = get_family(v.family).validator or SPIRV_VAL
        if named != validator.name:
            raise PackError(f"{pack.root}: shader variant {vid} names validator {named!r}, but this ctsgen "
                            f"validates {v.family} with {validator.name!r}; regenerate the pack")
        try:
            validate_module(v.spirv, validator)
        except SpirvValidationError as exc:
            raise PackError(f"{pack.root}: shader variant {vid} fails SPIR-V validation:\n{exc}") from None
