"""The pytest plugin's usage errors: a missing or corrupt pack is a pytest
usage error, not an INTERNALERROR, and a backend that cannot start is one error, not one per case."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctsgen.cli import main

pytest_plugins = ["pytester"]


@pytest.fixture(scope="module")
def pack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    out = tmp_path_factory.mktemp("plugin-errors") / "pack"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CTSGEN_CACHE_DIR", str(tmp_path_factory.mktemp("spirv-cache")))
        assert main(["generate", "--count", "6", "--seed", "0", "--out", str(out)]) == 0
    yield out


def _usage_error(res: pytest.RunResult) -> str:
    out = res.stdout.str() + res.stderr.str()
    assert res.ret == pytest.ExitCode.USAGE_ERROR, out
    assert "INTERNALERROR" not in out and "Traceback" not in out
    return out


def test_missing_pack_is_a_usage_error(pytester: pytest.Pytester, tmp_path: Path) -> None:
    out = _usage_error(pytester.runpytest("-p", "no:cacheprovider", "--ctsgen-pack", str(tmp_path / "nope")))
    assert "--ctsgen-pack" in out and "no such pack directory" in out


def test_corrupt_pack_is_a_usage_error(pytester: pytest.Pytester, pack: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    shutil.copytree(pack, bad)
    (bad / "manifest.json").write_text("{ not json")
    out = _usage_error(pytester.runpytest("-p", "no:cacheprovider", "--ctsgen-pack", str(bad)))
    assert "not valid JSON" in out


def test_a_backend_that_cannot_start_is_one_error(pytester: pytest.Pytester, pack: Path) -> None:
    res = pytester.runpytest("-p", "no:cacheprovider", "--ctsgen-pack", str(pack),
                             "--ctsgen-backend", "no_such_module_xyz:Backend")
    out = _usage_error(res)
    assert out.count("ctsgen: error:") == 1, out
    assert "no_such_module_xyz" in out


@pytest.mark.parametrize("devices, device", [("99", 99), ("0,7", 0)])
def test_a_device_the_reference_backend_cannot_be_on_is_one_usage_error(pytester: pytest.Pytester, pack: Path,
                                                                        devices: str, device: int) -> None:
    """Issue 45 item 5: ``--ctsgen-devices 99`` ran every case on the reference backend's one device and
    recorded device_index 99; it is refused as ``ctsgen run --device 99`` is. Without xdist the process
    is worker 0, so ``0,7`` gives it device 0, which the backend has: that run goes on."""
    res = pytester.runpytest("-p", "no:cacheprovider", "--ctsgen-pack", str(pack), "--ctsgen-devices", devices)
    if device:
        out = _usage_error(res)
        assert out.count("ctsgen: error:") == 1, out
        assert "--ctsgen-devices 99: backend reference cannot select device 99; it has device 0 -> " in out
    else:
        res.assert_outcomes(passed=6)


def test_a_negative_device_number_is_a_usage_error(pytester: pytest.Pytester, pack: Path) -> None:
    """``--ctsgen-devices -1`` was taken as device -1 (no backend has it) and recorded as such."""
    out = _usage_error(pytester.runpytest("-p", "no:cacheprovider", "--ctsgen-pack", str(pack),
                                          "--ctsgen-devices", "0,-1"))
    assert "--ctsgen-devices '0,-1': expected device numbers, e.g. 0,1" in out
