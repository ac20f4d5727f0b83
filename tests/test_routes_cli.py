"""Every command takes a compiler route (docs/commands.md "Compiler routes"): generate writes it into
the manifest, run refuses a pack of another route, fuzz judges routes against each other, doctor
lists them; an unknown route is one line, exit 2."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from one_line_errors import fails_with

from ctsgen.cli import main
from ctsgen.doctor import run_doctor
from ctsgen.pack.read import load_pack, pack_routes, validate_shaders


@pytest.fixture(scope="module")
def opt_pack(tmp_path_factory: pytest.TempPathFactory, spirv_cache_dir: Path) -> Path:
    """A coopmat-khr pack compiled along opt-O."""
    out = tmp_path_factory.mktemp("routes") / "opt-O"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CTSGEN_CACHE_DIR", str(spirv_cache_dir))
        assert main(["generate", "--family", "coopmat-khr", "--count", "24", "--route", "opt-O", "--out", str(out),
                     "--jobs", "1"]) == 0
    return out


def test_a_pack_along_opt_o_records_its_route_validates_and_passes(opt_pack: Path, session_spirv_cache: Path,
                                                                    tmp_path: Path) -> None:
    m = json.loads((opt_pack / "manifest.json").read_text())
    assert m["options"]["route"] == "opt-O" and {r["route"] for r in m["variants"].values()} == {"opt-O"}
    pack = load_pack(opt_pack)
    validate_shaders(pack)  # spirv-val --target-env vulkan1.3, every module (checksums checked on load)
    assert pack_routes(pack) == {"opt-O"}
    assert main(["run", str(opt_pack), "--route", "opt-O", "--quiet", "--results", str(tmp_path / "r.jsonl")]) == 0


def test_the_same_generate_along_another_route_is_not_up_to_date(opt_pack: Path, session_spirv_cache: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    line = fails_with(capsys, ["generate", "--family", "coopmat-khr", "--count", "24", "--out", str(opt_pack)])
    assert "route 'opt-O', asked 'glslang'" in line


def test_run_refuses_a_pack_of_another_route_and_reads_an_old_pack_as_glslang(
        opt_pack: Path, tmp_path: Path, session_spirv_cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = fails_with(capsys, ["run", str(opt_pack), "--route", "glslang"])
    assert "compiled along route opt-O, not glslang" in line
    old = tmp_path / "old"
    old.mkdir()
    for f in opt_pack.rglob("*"):
        if f.is_file() and not f.name.startswith("results"):
            (old / f.relative_to(opt_pack)).parent.mkdir(parents=True, exist_ok=True)
            (old / f.relative_to(opt_pack)).write_bytes(f.read_bytes())
    m = json.loads((old / "manifest.json").read_text())
    for rec in m["variants"].values():
        del rec["route"]  # a pack written before routes
    (old / "manifest.json").write_text(json.dumps(m))
    assert pack_routes(load_pack(old)) == {"glslang"}


@pytest.mark.parametrize("argv", [["generate", "--route", "opt-Z"], ["run", "--route", "opt-Z"],
                                  ["fuzz", "--route", "opt-Z"], ["fuzz", "--routes", "glslang,opt-Z"],
                                  ["fuzz", "--route", "opt-O", "--routes", "all"]])
def test_an_unknown_route_or_two_route_options_is_one_line(argv: list[str], opt_pack: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    if argv[0] == "run":
        argv = [*argv, str(opt_pack)]
    if argv[0] == "generate":
        argv = [*argv, "--out", str(tmp_path / "p")]
    line = fails_with(capsys, [*argv, "--database", "none"] if argv[0] == "fuzz" else argv)
    assert "route" in line
    assert not (tmp_path / "p").exists()


def test_a_route_making_invalid_modules_is_a_toolchain_finding_and_the_fuzz_goes_on(
        tmp_path: Path, session_spirv_cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repros = tmp_path / "repros"
    code = main(["fuzz", "--family", "coopmat-khr", "--routes", "glslang,mutant-swap-ab", "--max-examples", "15",
                 "--seed", "2", "--database", "none", "--repro-dir", str(repros)])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "15 examples" in out and "routes: glslang" in out
    assert "toolchain finding: route mutant-swap-ab, validator (invalid)" in out
    (report,) = repros.glob("toolchain-mutant-swap-ab-*/REPORT.md")
    assert "spirv-reduce produced.spv" in report.read_text()


def test_all_routes_agree_on_the_reference_backend(tmp_path: Path, session_spirv_cache: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["fuzz", "--family", "coopmat-khr", "--routes", "all", "--max-examples", "6", "--database", "none",
                 "--repro-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "no failure found" in out and all(f"{r} " in out for r in ("glslang-O1", "opt-O", "opt-Os", "opt-loops"))


def test_doctor_lists_every_route() -> None:
    out = io.StringIO()
    run_doctor(out)
    text = out.getvalue()
    for name in ("glslang", "glslang-O1", "opt-O", "opt-Os", "opt-loops", "mutant-drop-store"):
        assert f" {name} " in text, name


def test_generate_along_a_route_making_invalid_modules_is_one_line_and_writes_nothing(
        tmp_path: Path, session_spirv_cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:  # (generate's note on the strata the profile leaves out comes first)
        main(["generate", "--family", "coopmat-khr", "--count", "300", "--route", "mutant-swap-ab",
              "--out", str(tmp_path / "p"), "--jobs", "1"])
    errors = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("ctsgen: error:")]
    assert e.value.code == 2 and len(errors) == 1 and " -> " in errors[0]
    assert "along route mutant-swap-ab: toolchain finding, validator (invalid)" in errors[0]
    assert not (tmp_path / "p").exists()
