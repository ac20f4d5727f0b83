"""Packs end to end through the CLI: generate, run on the reference backend,
determinism, validation errors, atomic writes, tampering, resume."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import ctsgen.pack.write as pack_write
import ctsgen.toolchain as toolchain
from ctsgen.cli import main

COUNT = PACK_COUNT = 24


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def generate(out: Path, seed: int = 1, *extra: str, count: int = COUNT) -> int:
    return main(["generate", "--count", str(count), "--seed", str(seed), "--out", str(out), *extra])


def run(pack: Path, *extra: str) -> int:
    return main(["run", str(pack), "--quiet", *extra])


def results(pack: Path) -> list[dict]:
    """The case records of the pack's results file (after its header)."""
    header, *records = (pack / "results-reference.jsonl").read_text().splitlines()
    assert json.loads(header)["format"] == "ctsgen-results"
    return [json.loads(line) for line in records]


def error_line(capsys) -> str:
    err = [ln for ln in capsys.readouterr().err.replace("\r", "\n").splitlines() if "error" in ln]
    assert len(err) == 1, err
    assert err[0].startswith("ctsgen: error: "), err
    assert "Traceback" not in err[0]
    return err[0]


def test_generate_then_run_passes(pack, capsys):
    manifest = json.loads((pack / "manifest.json").read_text())
    assert len(manifest["cases"]) == COUNT
    assert run(pack) == 0
    res = results(pack)
    assert len(res) == COUNT and {r["status"] for r in res} == {"Pass"}
    assert {r["name"] for r in res} == {c["name"] for c in manifest["cases"]}
    assert "Pass" in capsys.readouterr().out


def test_same_seed_is_byte_identical(pristine, tmp_path, session_spirv_cache):
    again = tmp_path / "again"
    assert generate(again) == 0
    a, b = tree(pristine), tree(again)
    assert a.keys() == b.keys()
    for k in a:
        assert a[k] == b[k], k


def test_different_seed_differs(pristine, tmp_path, session_spirv_cache):
    other = tmp_path / "other"
    assert generate(other, seed=2) == 0
    a, b = tree(pristine), tree(other)
    assert a["manifest.json"] != b["manifest.json"]
    assert {k for k in a if k.startswith("cases/")} != {k for k in b if k.startswith("cases/")}


# -- validation errors: exit 2, one line naming the file -------------------

def _first_case_dir(pack: Path) -> Path:
    m = json.loads((pack / "manifest.json").read_text())
    return pack / Path(m["cases"][0]["case"]).parent


def test_corrupt_manifest(pack, capsys):
    (pack / "manifest.json").write_text('{"format": "ctsgen-pack", ')
    with pytest.raises(SystemExit) as e:
        run(pack)
    assert e.value.code == 2
    assert "manifest.json" in error_line(capsys)


def test_missing_case_npy(pack, capsys):
    victim = next(_first_case_dir(pack).glob("*.initial.npy"))
    victim.unlink()
    with pytest.raises(SystemExit) as e:
        run(pack)
    assert e.value.code == 2
    assert str(victim) in error_line(capsys)


def test_invalid_spirv_is_refused_with_the_validators_message(pack, capsys):
    # a module that passes its checksum but not the validator never reaches a backend
    import hashlib

    spv = next((pack / "shaders").glob("*.spv"))
    words = bytearray(spv.read_bytes())
    words[4:8] = (0x00070000).to_bytes(4, "little")  # SPIR-V version 7.0 does not exist
    spv.write_bytes(bytes(words))
    mpath = pack / "manifest.json"
    manifest = json.loads(mpath.read_text())
    vid = spv.name[:-len(".spv")]
    manifest["variants"][vid]["spirv_sha256"] = hashlib.sha256(bytes(words)).hexdigest()
    mpath.write_text(json.dumps(manifest))
    with pytest.raises(SystemExit) as e:
        run(pack)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert f"shader variant {vid} fails SPIR-V validation" in err and "error:" in err
    assert not (pack / "results-reference.jsonl").exists()


def test_modified_spirv_checksum(pack, capsys):
    spv = next((pack / "shaders").glob("*.spv"))
    data = bytearray(spv.read_bytes())
    data[-1] ^= 0xFF
    spv.write_bytes(bytes(data))
    with pytest.raises(SystemExit) as e:
        run(pack)
    assert e.value.code == 2
    line = error_line(capsys)
    assert str(spv) in line and "checksum" in line


def _edit_manifest(pack: Path, edit) -> None:
    path = pack / "manifest.json"
    m = json.loads(path.read_text())
    edit(m)
    path.write_text(json.dumps(m))


def test_bad_format_version(pack, capsys):
    _edit_manifest(pack, lambda m: m.update(format_version=99))
    with pytest.raises(SystemExit) as e:
        run(pack)
    assert e.value.code == 2
    line = error_line(capsys)
    assert "manifest.json" in line and "99" in line


def test_unknown_family(pack, capsys):
    def edit(m):
        for rec in m["variants"].values():
            rec["family"] = "no-such-family"
    _edit_manifest(pack, edit)
    with pytest.raises(SystemExit) as e:
        run(pack)
    assert e.value.code == 2
    line = error_line(capsys)
    assert "manifest.json" in line and "no-such-family" in line


def test_not_a_pack(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        run(tmp_path / "nowhere")
    assert e.value.code == 2
    assert "nowhere" in error_line(capsys)


# -- writing ---------------------------------------------------------------

def test_existing_dir_needs_force(tmp_path, capsys, session_spirv_cache):
    out = tmp_path / "out"
    out.mkdir()
    (out / "old-file").write_text("x")
    with pytest.raises(SystemExit) as e:
        generate(out, count=4)
    assert e.value.code == 2
    line = error_line(capsys)
    assert str(out) in line and "--force" in line
    assert (out / "old-file").exists()
    out.joinpath("old-file").unlink()
    assert generate(out, 1, "--force", count=4) == 0  # an empty directory may be replaced
    assert (out / "manifest.json").exists()
    assert generate(out, 2, "--force", count=3) == 0  # and so may a ctsgen pack
    assert len(json.loads((out / "manifest.json").read_text())["cases"]) == 3
    assert [p.name for p in tmp_path.iterdir()] == ["out"], "no temp or old dir left behind"


def _halfway(real, after: int):
    calls = {"n": 0}

    def wrapper(*a, **k):
        calls["n"] += 1
        if calls["n"] > after:
            raise RuntimeError("injected failure")
        return real(*a, **k)
    return wrapper


@pytest.mark.parametrize("target", ["compile", "save_array"])
def test_failure_while_writing_leaves_nothing(tmp_path, monkeypatch, target, session_spirv_cache):
    if target == "compile":
        monkeypatch.setattr(toolchain, "compile_glsl", _halfway(toolchain.compile_glsl, 3))
    else:
        monkeypatch.setattr(pack_write, "save_array", _halfway(pack_write.save_array, 7))
    out = tmp_path / "sub" / "out"
    with pytest.raises(RuntimeError, match="injected"):
        generate(out, count=8)
    assert not out.exists()
    assert list((tmp_path / "sub").iterdir()) == []


def test_failure_while_replacing_keeps_the_old_pack(pristine, tmp_path, monkeypatch, session_spirv_cache):
    out = tmp_path / "out"
    shutil.copytree(pristine, out)
    before = tree(out)
    monkeypatch.setattr(pack_write, "save_array", _halfway(pack_write.save_array, 3))
    with pytest.raises(RuntimeError):
        generate(out, 5, "--force", count=8)
    assert tree(out) == before
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


# -- running ---------------------------------------------------------------

def test_tampered_expected_fails_with_location(pack, capsys):
    m = json.loads((pack / "manifest.json").read_text())
    entry = next(c for c in m["cases"] if ".load." in c["variant"])
    case_dir = pack / Path(entry["case"]).parent
    path = case_dir / "output.expected.npy"
    arr = np.load(path)
    k = arr.size // 2
    flat = arr.reshape(-1)
    flat[k] = flat[k] ^ np.array(1, dtype=arr.dtype) if arr.dtype.kind in "ui" else flat[k] + 1
    np.save(path, arr)
    assert run(pack) == 1
    res = {r["name"]: r for r in results(pack)}
    bad = res[entry["name"]]
    assert bad["status"] == "Fail"
    assert sum(r["status"] == "Fail" for r in res.values()) == 1
    mism = bad["mismatches"]
    assert len(mism) == 1 and mism[0]["element"] == k and mism[0]["buffer"] == "output"
    cols = json.loads((case_dir / "case.json").read_text())["parameters"]["variant"]["matrix"]["cols"]
    assert (mism[0]["row"], mism[0]["col"]) == divmod(k, cols)
    assert isinstance(mism[0]["tensorCoord"], list) and mism[0]["tensorCoord"]
    assert mism[0]["expected"]["bits"] != mism[0]["actual"]["bits"]


def test_resume_skips_done_cases(pack):
    assert run(pack) == 0
    res = results(pack)
    # keep the first half and a torn line, then resume
    half = len(res) // 2
    lines = (pack / "results-reference.jsonl").read_text().splitlines()[:half]
    (pack / "results-reference.jsonl").write_text("\n".join(lines) + "\n" + '{"name": "torn')
    assert run(pack, "--resume") == 0
    text = (pack / "results-reference.jsonl").read_text()
    names = []
    for line in text.splitlines()[1:]:  # after the header
        try:
            names.append(json.loads(line)["name"])
        except json.JSONDecodeError:
            continue
    assert len(names) == len(res) == len(set(names))


def test_results_file_is_json_lines(pack, tmp_path):
    out = tmp_path / "r.jsonl"
    assert run(pack, "--results", str(out), "--batch-size", "5") == 0
    header, *lines = out.read_text().splitlines()
    assert json.loads(header)["backend"] == "reference"
    assert len(lines) == COUNT
    for line in lines:
        r = json.loads(line)
        assert set(r) >= {"name", "status", "detail"} and r["status"] == "Pass"


def test_resume_keeps_earlier_failures_in_the_exit_status(pack):
    # a run that found a failure, interrupted and resumed, must still exit 1:
    # the resumed run's verdict covers the whole results file, not only the cases it ran
    m = json.loads((pack / "manifest.json").read_text())
    entry = next(c for c in m["cases"] if ".load." in c["variant"])
    path = pack / Path(entry["case"]).parent / "output.expected.npy"
    arr = np.load(path)
    arr.reshape(-1).view(f"u{arr.dtype.itemsize}")[0] ^= 1
    np.save(path, arr)
    assert run(pack) == 1
    assert run(pack, "--resume") == 1


@pytest.mark.slow
def test_a_seed_draws_the_same_cases_whatever_else_the_process_imported(tmp_path, monkeypatch):
    """Hypothesis mixes constants mined from every local module loaded so far into its draws: a
    user's module imported before ``generate`` changed 15 of 300 cases of the same seed, and an
    editable install drew other packs than a regular one (ctsgen.strategies.hypothesis_reach.pinned_constants)."""
    import importlib
    import sys

    from ctsgen.families import get_family
    from ctsgen.core.family import StrategyOptions
    from ctsgen.strategies.sampling import draw_many

    strategy = get_family("tensor-layout").cases(StrategyOptions())
    before = [c.name() for c in draw_many(strategy, 300, 7)]
    (tmp_path / "user_module_with_constants.py").write_text(
        "LIMITS = [" + ", ".join(str(k) for k in range(1000, 9000, 37)) + "]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        importlib.import_module("user_module_with_constants")
        after = [c.name() for c in draw_many(strategy, 300, 7)]
    finally:
        sys.modules.pop("user_module_with_constants", None)
    assert after == before


@pytest.mark.slow
def test_cases_per_variant_sets_how_many_pipelines_a_pack_needs_and_is_part_of_what_it_was_drawn_from(
        tmp_path: Path) -> None:
    """--cases-per-variant 32 draws the same number of cases over about a quarter of the variants
    of the default 8 (each of cm2-reduce's 20 cells gets 51 cases: 2 variants instead of 7); the
    manifest records it, and an existing pack drawn with another value is not taken as up to date."""
    import json as _json

    from ctsgen.cli import main as cli

    def variants(out: Path) -> int:
        m = _json.loads((out / "manifest.json").read_text())
        return len({c["variant"] for c in m["cases"]})

    base = ["generate", "--family", "cm2-reduce", "--count", "1024", "--seed", "5", "--jobs", "1"]
    assert cli(base + ["--out", str(tmp_path / "p8")]) == 0
    assert cli(base + ["--out", str(tmp_path / "p32"), "--cases-per-variant", "32"]) == 0
    few, many = variants(tmp_path / "p32"), variants(tmp_path / "p8")
    assert few * 3 < many, (few, many)
    assert _json.loads((tmp_path / "p32" / "manifest.json").read_text())["options"]["cases_per_variant"] == 32
    with pytest.raises(SystemExit) as refused:
        cli(base + ["--out", str(tmp_path / "p32")])
    assert refused.value.code == 2


@pytest.mark.parametrize("dtype", ["float16", "float32", "uint32", "int8", "bfloat16", "float64"])
def test_pack_arrays_read_back_exactly_and_writable(tmp_path, dtype):
    """load_array's one-read path gives np.load's array: same dtype, shape and bits, writable."""
    from ctsgen.pack.arrays import load_array, save_array
    want = np.dtype(dtype)
    for shape in [(0,), (1,), (512,), (16, 8)]:
        values = (np.arange(int(np.prod(shape))) % 7 - 3).astype(np.float64).astype(want).reshape(shape)
        save_array(tmp_path / "a.npy", values)
        got = load_array(tmp_path / "a.npy", want)
        assert got.dtype == want and got.shape == shape and got.tobytes() == values.tobytes()
        got[...] = 0  # the runner may fill a copy in place; np.load's arrays were writable too


def test_other_npy_writers_and_truncated_files(tmp_path):
    """A header np.save would not write for a pack (Fortran order) still loads; a file cut short is
    refused naming it."""
    from ctsgen.pack.arrays import load_array
    path = tmp_path / "f.npy"
    np.save(path, np.asfortranarray(np.arange(12, dtype=np.float32).reshape(3, 4)))
    assert load_array(path, np.dtype("float32")).tolist() == np.arange(12).reshape(3, 4).tolist()
    np.save(path, np.arange(60, dtype=np.float32))
    path.write_bytes(path.read_bytes()[:-3])
    with pytest.raises(ValueError, match="f.npy: not a readable .npy array"):
        load_array(path, np.dtype("float32"))


def test_element_counts_come_from_the_record_and_match_the_arrays(pack):
    """A batch is sized from the record's element counts; they are the arrays' sizes, and a pack
    without them (older) falls back to the .npy headers."""
    from ctsgen.pack.read import load_pack
    cases = load_pack(pack).cases
    for case in cases:
        initial, _ = case.arrays()
        assert case.element_counts() == [a.size for a in initial]
    case = cases[0]
    del case.record["elements"]
    assert case.element_counts() == [int(np.prod(s)) for s in case.shapes()]
