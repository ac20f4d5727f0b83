"""Smoke test of the Vulkan backend (ctsgen.backends.vulkan) on a live device.

Three steps, the first and last on a machine without a GPU:

1. ``compile OUTDIR`` (here, no GPU): compiles the GLSL shaders below to
   ``OUTDIR/<name>.spv`` with the glslang library inside the slangpy wheel
   (see docs/brief.md, section 2), and validates them with it.
2. ``run --spv-dir OUTDIR [--profile-json PATH]`` (on the device): prints a
   summary of ``VulkanBackend().profile()``, runs each SPIR-V file as a
   Dispatch and checks the buffers it returns with numpy, checks that a
   dispatch running past its timeout raises DispatchTimeout (in a child
   process), then prints the profile as JSON.
3. ``compare PROFILE_JSON PROFILE_TXT`` (anywhere): diffs that JSON against
   a device-profile read-out such as shared/device-profiles/*.txt.

On the device machine of this workplace (no loader, no network), carry
``.gl`` (Debian's libvulkan1 *and* libglvnd0, libgl1, libglx0, libegl1,
libgles2, libopengl0 -- the NVIDIA ICD library needs libglvnd: with
libvulkan1 alone vkCreateInstance returns VK_ERROR_INCOMPATIBLE_DRIVER),
``.whl`` (vulkan_py) and ``.pack``, and run::

    for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
    python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
    export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
    python3 bench/vulkan_smoke.py run --spv-dir .pack/vulkan_smoke --profile-json $OUT/profile.json

The shaders: ``copy_u32`` (plain uint32 copy with an XOR key from the
parameter buffer, the first sanity check), ``tensor_load_f16`` (a 16x16 f16
cooperative matrix loaded through a 2-D tensorLayoutNV with Constant
clamping and stored row-major; the host checks in-bounds elements and the
clamp value's bits out of bounds), and ``spin_u32`` (a long loop of
non-linear integer steps, for the timeout check).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ctsgen.backends.base import Backend
from ctsgen.errors import BackendError, DispatchTimeout
from ctsgen.core.shader import BufferSpec, Dispatch, ShaderVariant
from ctsgen.device.profile import DeviceProfile, load_profile

COPY_U32 = """#version 450
layout(local_size_x = 32) in;
layout(std430, binding = 0) readonly buffer Params { uint p[]; } params;
layout(std430, binding = 1) readonly buffer Src { uint x[]; } src;
layout(std430, binding = 2) buffer Dst { uint x[]; } dst;
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < params.p[0]) dst.x[i] = src.x[i] ^ params.p[1];
}
"""

# Per workgroup w, params p[8w ..]: layout dims (rows, cols), slice offsets (row, col; two's complement),
# clamp value. Out-of-bounds elements read the clamp value (Constant clamp mode).
TENSOR_LOAD_F16 = """#version 450 core
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_cooperative_matrix : enable
#extension GL_EXT_shader_explicit_arithmetic_types : enable
#extension GL_NV_cooperative_matrix2 : enable
layout(local_size_x = 32) in;
layout(std430, binding = 0) readonly buffer Params { uint p[]; } params;
layout(std430, binding = 1) readonly buffer In { float16_t x[]; } inBuf;
layout(std430, binding = 2) buffer Out { float16_t x[]; } outBuf;
void main() {
  uint base = gl_WorkGroupID.x * 8u;
  tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> t =
      createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
  t = setTensorLayoutDimensionNV(t, params.p[base], params.p[base + 1u]);
  t = sliceTensorLayoutNV(t, params.p[base + 2u], 16, params.p[base + 3u], 16);
  t = setTensorLayoutClampValueNV(t, params.p[base + 4u]);
  coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m =
      coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(float16_t(0.0));
  coopMatLoadTensorNV(m, inBuf.x, 0, t);
  coopMatStore(m, outBuf.x, gl_WorkGroupID.x * 256u, 16, gl_CooperativeMatrixLayoutRowMajor);
}
"""

SPIN_U32 = """#version 450
layout(local_size_x = 32) in;
layout(std430, binding = 0) readonly buffer Params { uint p[]; } params;
layout(std430, binding = 1) buffer Out { uint x[]; } outBuf;
void main() {
  uint x = params.p[1] + gl_LocalInvocationID.x;
  // p[0] * p[2] * p[3] steps of a non-linear mix (no compiler folds it); three loops because
  // llvmpipe stops any one loop after 65535 iterations
  for (uint i = 0u; i < params.p[0]; i++)
    for (uint j = 0u; j < params.p[2]; j++)
      for (uint k = 0u; k < params.p[3]; k++) x = (x ^ (x >> 15u)) * 0x2C1B3C6Du + 1u;
  outBuf.x[gl_LocalInvocationID.x] = x;
}
"""

SHADERS = {"copy_u32": COPY_U32, "tensor_load_f16": TENSOR_LOAD_F16, "spin_u32": SPIN_U32}


# -- step 1: compile (needs slangpy, no GPU) ----------------------------------
def compile_glsl(source: str) -> bytes:
    """GLSL compute shader -> SPIR-V 1.6 through glslang_compile_1_2 of slangpy's libslang-glslang."""
    import slangpy

    lib = ctypes.CDLL(os.path.join(os.path.dirname(slangpy.__file__), "libslang-glslang-2026.12.so"))
    output_func = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p)

    class Version(ctypes.Structure):
        _fields_ = [("major", ctypes.c_int), ("minor", ctypes.c_int), ("patch", ctypes.c_int)]

    class Request(ctypes.Structure):  # glslang_CompileRequest_1_2 of slang-glslang.h
        _fields_ = [("sizeInBytes", ctypes.c_size_t), ("sourcePath", ctypes.c_char_p),
                    ("inputBegin", ctypes.c_void_p), ("inputEnd", ctypes.c_void_p),
                    ("diagnosticFunc", output_func), ("diagnosticUserData", ctypes.c_void_p),
                    ("outputFunc", output_func), ("outputUserData", ctypes.c_void_p),
                    ("slangStage", ctypes.c_int), ("action", ctypes.c_uint), ("optimizationLevel", ctypes.c_uint),
                    ("debugInfoType", ctypes.c_uint), ("spirvTargetName", ctypes.c_char_p),
                    ("spirvVersion", Version), ("entryPointName", ctypes.c_char_p)]

    diagnostics: list[bytes] = []
    spirv: list[bytes] = []
    on_diag = output_func(lambda data, size, _: diagnostics.append(ctypes.string_at(data, size)))
    on_out = output_func(lambda data, size, _: spirv.append(ctypes.string_at(data, size)))
    text = source.encode()
    buf = ctypes.create_string_buffer(text)
    begin = ctypes.addressof(buf)
    req = Request(ctypes.sizeof(Request), b"smoke.comp", begin, begin + len(text), on_diag, None, on_out, None,
                  6, 0, 0, 0, None, Version(1, 6, 0), b"main")  # stage 6 = compute, action 0 = GLSL -> SPIR-V
    if lib.glslang_compile_1_2(ctypes.byref(req)) != 0 or not spirv:
        raise RuntimeError("glslang failed:\n" + b"".join(diagnostics).decode(errors="replace"))
    code = b"".join(spirv)
    lib.glslang_validateSPIRV.restype = ctypes.c_bool
    lib.glslang_validateSPIRV.argtypes = [ctypes.POINTER(ctypes.c_uint32), ctypes.c_int]
    words = (ctypes.c_uint32 * (len(code) // 4)).from_buffer_copy(code)
    if not lib.glslang_validateSPIRV(words, len(words)):
        raise RuntimeError("glslang_validateSPIRV rejected the module")
    return code


def cmd_compile(args: argparse.Namespace) -> int:
    out = Path(args.outdir)
    out.mkdir(parents=True, exist_ok=True)
    for name, source in SHADERS.items():
        code = compile_glsl(source)
        (out / f"{name}.spv").write_bytes(code)
        print(f"{name}.spv: {len(code)} bytes")
    return 0


# -- step 2: run (on the device) ----------------------------------------------
def variant(spv_dir: Path, name: str, buffers: tuple[BufferSpec, ...]) -> ShaderVariant:
    return ShaderVariant(id=f"smoke.{name}", spirv=(spv_dir / f"{name}.spv").read_bytes(), local_size_x=32,
                         buffers=buffers)


def check_copy(backend: Backend, spv_dir: Path) -> bool:
    """uint32 copy of 1000 words XOR a key; words past n must stay untouched."""
    v = variant(spv_dir, "copy_u32", (BufferSpec(1, "src", "uint32"), BufferSpec(2, "dst", "uint32")))
    n, key = 1000, 0xA5A5F00D
    rng = np.random.default_rng(1)
    src = rng.integers(0, 2**32, 1024, dtype=np.uint32)
    dst = np.full(1024, 0xDEADBEEF, np.uint32)
    params = np.array([n, key], np.uint32)
    t0 = time.perf_counter()
    out = backend.run(Dispatch(v, -(-n // 32), [params, src, dst]), timeout_s=10.0)
    dt = time.perf_counter() - t0
    want = dst.copy()
    want[:n] = src[:n] ^ np.uint32(key)
    ok = (np.array_equal(out[0], params) and np.array_equal(out[1], src) and np.array_equal(out[2], want)
          and [a.dtype for a in out] == [np.dtype(np.uint32)] * 3)
    print(f"copy_u32: {'PASS' if ok else 'FAIL'} ({n} words, {-(-n // 32)} workgroups, {dt * 1e3:.1f} ms "
          f"incl. pipeline creation)")
    return ok


def check_tensor_load(backend: Backend, spv_dir: Path) -> bool:
    """16x16 f16 coopmat loads through a 2-D Constant-clamped tensor layout, one case per workgroup."""
    v = variant(spv_dir, "tensor_load_f16", (BufferSpec(1, "in", "float16"), BufferSpec(2, "out", "float16")))
    rng = np.random.default_rng(2)
    # finite, normal f16 bit patterns, so a bit-exact compare is meaningful
    in_bits = (rng.integers(0x0400, 0x7C00, 64 * 64) | (rng.integers(0, 2, 64 * 64) << 15)).astype(np.uint16)
    clamp_values = [0x0000C500, 0xABCDC500, 0x00003C00, 0x12345678]
    cases = []
    for i in range(64):
        rows, cols = int(rng.integers(1, 41)), int(rng.integers(1, 41))
        off_r, off_c = int(rng.integers(-20, 40)), int(rng.integers(-20, 40))
        cases.append((rows, cols, off_r, off_c, clamp_values[i % len(clamp_values)]))
    cases[0] = (16, 16, 0, 0, clamp_values[0])  # fully in bounds
    cases[1] = (8, 8, 20, 20, clamp_values[1])  # fully out of bounds
    params = np.zeros(8 * len(cases), np.uint32)
    for w, (rows, cols, off_r, off_c, clamp) in enumerate(cases):
        params[8 * w: 8 * w + 5] = [rows, cols, off_r & 0xFFFFFFFF, off_c & 0xFFFFFFFF, clamp]
    out_init = np.full(256 * len(cases), np.float16(-0.0))  # 0x8000 everywhere
    out = backend.run(Dispatch(v, len(cases), [params, in_bits.view(np.float16), out_init]), timeout_s=10.0)
    got = out[2].view(np.uint16).reshape(len(cases), 16, 16)
    bad_in = 0
    oob_bits: dict[int, set[int]] = {c: set() for c in clamp_values}
    first_bad = None
    r, c = np.meshgrid(np.arange(16), np.arange(16), indexing="ij")
    for w, (rows, cols, off_r, off_c, clamp) in enumerate(cases):
        tr, tc = r + off_r, c + off_c
        inside = (tr >= 0) & (tr < rows) & (tc >= 0) & (tc < cols)
        want = in_bits[np.clip(tr * cols + tc, 0, in_bits.size - 1)]
        wrong = int(np.count_nonzero((got[w] != want) & inside))
        bad_in += wrong
        if wrong and first_bad is None:
            first_bad = (w, cases[w], np.where(inside, want, 0), got[w])
        oob_bits[clamp].update(int(b) for b in np.unique(got[w][~inside]))
    one_value = all(len(seen) <= 1 for seen in oob_bits.values())
    low_bits = all(seen <= {clamp & 0xFFFF} for clamp, seen in oob_bits.items())
    ok = bad_in == 0 and one_value and np.array_equal(out[1].view(np.uint16), in_bits)
    print(f"tensor_load_f16: {'PASS' if ok else 'FAIL'} ({len(cases)} cases, {bad_in} wrong in-bounds elements, "
          f"one out-of-bounds value per clampValue: {one_value}; it is the low 16 bits of clampValue: {low_bits})")
    for clamp, seen in oob_bits.items():
        print(f"  clampValue 0x{clamp:08X}: out-of-bounds f16 bits seen {sorted(f'0x{b:04X}' for b in seen)}")
    if first_bad is not None:
        w, case, want, have = first_bad
        print(f"  first wrong case {w} (rows, cols, off_r, off_c, clamp) = {case}; expected (0 = out of bounds), then got:")
        print(want)
        print(have)
    return ok


def mix(seed: np.ndarray, steps: int) -> np.ndarray:
    """The spin shader's arithmetic on the host."""
    x = seed.astype(np.uint32)
    for _ in range(steps):
        x = (x ^ (x >> np.uint32(15))) * np.uint32(0x2C1B3C6D) + np.uint32(1)
    return x


SPIN_BUFFERS = (BufferSpec(1, "out", "uint32"),)


def check_timeout(backend: Backend, spv_dir: Path) -> bool:
    """Calibrate the spin shader, then a child process must get DispatchTimeout for a ~3 s dispatch."""
    v = variant(spv_dir, "spin_u32", SPIN_BUFFERS)
    short = backend.run(Dispatch(v, 1, [np.array([2, 7, 3, 50], np.uint32), np.zeros(32, np.uint32)]), 10.0)
    ok = np.array_equal(short[1], mix(np.arange(32) + 7, 300))
    n = 50  # x 1000 x 1000 steps
    t0 = time.perf_counter()
    backend.run(Dispatch(v, 1, [np.array([n, 7, 1000, 1000], np.uint32), np.zeros(32, np.uint32)]), 60.0)
    rate = n / (time.perf_counter() - t0)
    outer = int(min(max(rate * 3.0, 1), 65535))
    print(f"spin_u32: host check {'PASS' if ok else 'FAIL'}; {rate:.1f} M steps/s, "
          f"timeout test with {outer} M steps (~{outer / rate:.1f} s) and timeout_s=0.5")
    t0 = time.perf_counter()
    child = subprocess.run([sys.executable, __file__, "timeout-child", str(spv_dir), str(outer)],
                           capture_output=True, text=True, timeout=120, check=False)
    print(child.stdout + child.stderr, end="")
    print(f"  child exited with {child.returncode} after {time.perf_counter() - t0:.1f} s")
    return ok and child.returncode == 0 and "DispatchTimeout raised" in child.stdout


def cmd_timeout_child(args: argparse.Namespace) -> int:
    from ctsgen.backends.vulkan import VulkanBackend

    backend = VulkanBackend()
    v = variant(Path(args.spv_dir), "spin_u32", SPIN_BUFFERS)
    t0 = time.perf_counter()
    try:
        backend.run(Dispatch(v, 1, [np.array([args.outer, 7, 1000, 1000], np.uint32), np.zeros(32, np.uint32)]),
                    0.5)
    except DispatchTimeout as exc:
        print(f"  child: DispatchTimeout raised after {time.perf_counter() - t0:.2f} s: {exc}")
    else:
        print(f"  child: no timeout, the dispatch finished in {time.perf_counter() - t0:.2f} s")
        return 1
    try:
        backend.run(Dispatch(v, 1, [np.array([1, 7, 1, 1], np.uint32), np.zeros(32, np.uint32)]), 0.5)
    except BackendError as exc:
        print(f"  child: next run refused: {exc}")
    backend.close()
    return 0


def profile_json(p: DeviceProfile) -> dict:
    return {"name": p.name, "extensions": sorted(p.extensions), "features": p.features,
            "properties": p.properties, "coopmat_khr": p.coopmat_khr,
            "flexible_dimensions": p.flexible_dimensions, "coopvec_combinations": p.coopvec_combinations}


def cmd_run(args: argparse.Namespace) -> int:
    from ctsgen.backends.vulkan import VulkanBackend

    spv_dir = Path(args.spv_dir)
    t0 = time.perf_counter()
    backend = VulkanBackend()
    print(f"VulkanBackend() in {time.perf_counter() - t0:.2f} s")
    p = backend.profile()
    print(f"device {p.name}")
    print(f"extensions: {len(p.extensions)}, of them "
          f"{sorted(e for e in p.extensions if 'cooperative' in e or 'bfloat16' in e or 'replicated' in e)}")
    print(f"features {p.features}")
    print(f"properties {p.properties}")
    print(f"coopmat khr {len(p.coopmat_khr)}, flexible dims {len(p.flexible_dimensions)}, "
          f"coopvec combos {len(p.coopvec_combinations)}")
    results = {}
    for name, check in (("copy_u32", check_copy), ("tensor_load_f16", check_tensor_load),
                        ("timeout", check_timeout)):
        try:
            results[name] = check(backend, spv_dir)
        except Exception as exc:  # noqa: BLE001 - report and go on: one device call should tell all it can
            print(f"{name}: ERROR {type(exc).__name__}: {exc}")
            results[name] = False
    backend.close()
    try:  # a fresh device after the timed-out child process is gone
        with VulkanBackend() as again:
            results["after_timeout"] = check_copy(again, spv_dir)
    except Exception as exc:  # noqa: BLE001
        print(f"after_timeout: ERROR {type(exc).__name__}: {exc}")
        results["after_timeout"] = False
    text = json.dumps(profile_json(p), indent=1)
    if args.profile_json:
        Path(args.profile_json).write_text(text)
    print("profile JSON:")
    print(text)
    print("SUMMARY " + " ".join(f"{k}={'PASS' if v else 'FAIL'}" for k, v in results.items()))
    return 0 if all(results.values()) else 1


# -- step 3: compare ------------------------------------------------------------
def cmd_compare(args: argparse.Namespace) -> int:
    live = json.loads(Path(args.profile_json).read_text())
    ref = load_profile(args.profile_txt)
    diffs = 0

    def report(what: str, msg: str) -> None:
        nonlocal diffs
        diffs += 1
        print(f"DIFF {what}: {msg}")

    if live["name"] != ref.name:
        report("name", f"live {live['name']!r}, file {ref.name!r}")
    missing = sorted(ref.extensions - set(live["extensions"]))
    if missing:
        report("extensions", f"named in the file, not exposed live: {missing}")
    for section in ("features", "properties"):
        ref_d, live_d = getattr(ref, section), live[section]
        for k, val in ref_d.items():
            if k not in live_d:
                report(section, f"{k} missing live (file {val})")
            elif live_d[k] != val:
                report(section, f"{k}: live {live_d[k]}, file {val}")
        extra = {k: v for k, v in live_d.items() if k not in ref_d}
        print(f"{section}: {len(ref_d)} keys of the file compared; live only: {extra}")
    for section in ("coopmat_khr", "flexible_dimensions", "coopvec_combinations"):
        ref_l, live_l = getattr(ref, section), live[section]
        if ref_l == live_l:
            print(f"{section}: {len(live_l)} entries, identical (same order)")
            continue
        only_live = [e for e in live_l if e not in ref_l]
        only_ref = [e for e in ref_l if e not in live_l]
        report(section, f"{len(live_l)} live vs {len(ref_l)} in the file; only live {only_live}; "
                        f"only in the file {only_ref}" if only_live or only_ref else "same entries, other order")
    print(f"{diffs} difference(s)")
    return 0 if diffs == 0 else 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("compile", help="GLSL -> OUTDIR/*.spv (no GPU needed)")
    c.add_argument("outdir")
    r = sub.add_parser("run", help="run the smoke checks on the Vulkan device")
    r.add_argument("--spv-dir", required=True, help="folder holding copy_u32.spv, tensor_load_f16.spv, spin_u32.spv")
    r.add_argument("--profile-json", help="also write the profile JSON to this file")
    t = sub.add_parser("timeout-child", help=argparse.SUPPRESS)
    t.add_argument("spv_dir")
    t.add_argument("outer", type=int, help="millions of spin steps")
    d = sub.add_parser("compare", help="diff a profile JSON against a device-profile .txt")
    d.add_argument("profile_json")
    d.add_argument("profile_txt")
    args = ap.parse_args()
    return {"compile": cmd_compile, "run": cmd_run, "timeout-child": cmd_timeout_child,
            "compare": cmd_compare}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
