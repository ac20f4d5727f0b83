"""The Vulkan backend: runs dispatches on a live device through ``vulkan_py``.

``vulkan_py`` (an optional extra, ``pip install 'ctsgen[vulkan]'``) is plain
ctypes over the loader ``libvulkan.so.1``; it is imported when a
:class:`VulkanBackend` is created, never when this module is imported, so
the rest of ctsgen works on machines without Vulkan.

What the backend does, in Vulkan's terms:

* **Instance and device.** A ``VkInstance`` for API 1.3; the physical device
  ``device_index`` of ``vkEnumeratePhysicalDevices``; its features read
  through one ``VkPhysicalDeviceFeatures2`` pNext chain
  (``VkPhysicalDeviceVulkan11/12/13Features`` and, where the device exposes
  the extension, ``VkPhysicalDeviceCooperativeMatrixFeaturesKHR``,
  ``VkPhysicalDeviceCooperativeMatrix2FeaturesNV``,
  ``VkPhysicalDeviceCooperativeVectorFeaturesNV``,
  ``VkPhysicalDeviceShaderBfloat16FeaturesKHR``,
  ``VkPhysicalDeviceShaderReplicatedCompositesFeaturesEXT``). The same
  chain is passed back to ``vkCreateDevice``, so every supported feature is
  enabled, except the robustness features (``robustBufferAccess``,
  ``robustImageAccess``): like the Vulkan CTS's default device, tests must
  observe the extensions' own out-of-bounds rules, not robustness clamping.
* **Profile.** :meth:`VulkanBackend.profile` is a
  :class:`~ctsgen.device.profile.DeviceProfile` in the key names of the
  read-out files (``shared/device-profiles/*.txt``): Vulkan's field names.
* **Dispatch.** One host-visible, host-coherent ``VkDeviceMemory`` per
  dispatch holds every storage buffer (allocated with
  ``VkMemoryAllocateFlagsInfo`` ``VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT``, so
  shaders may also take buffer device addresses); the pipeline of a variant
  is built once and cached by ``ShaderVariant.id``, through a ``VkPipelineCache``
  kept on disk per device and driver and published as it grows
  (:mod:`ctsgen.backends.pipeline_cache`; ``CTSGEN_PIPELINE_CACHE=0`` turns it off); the wait on the fence is
  bounded by ``timeout_s``.
* **Build.** A variant's build is its ``vkCreateComputePipelines`` and then one submission of a
  dispatch of zero workgroups with the pipeline bound (:meth:`VulkanBackend._warm_up`): no invocation
  runs (the valid usage of ``vkCmdDispatch`` bounds the counts only from above), but a driver that
  compiles at the first dispatch, as lavapipe does (docs/validation.md, "lavapipe build time"),
  compiles there. So the build's seconds (``build_seconds``, ``stats["build_s"]``) are the whole
  compile on every driver, and the first dispatch of the cases costs what any other does; the
  supervised worker bounds the build by the build budget (``--build-budget``), apart from the dispatch.

A dispatch that does not finish in time leaves the device busy with memory
this process still owns, so after :class:`DispatchTimeout` the backend
refuses further work and :meth:`VulkanBackend.close` leaks the device rather
than destroy it under the GPU's feet: run device work in a child process
and end that process after a timeout.
"""

from __future__ import annotations

import ctypes
import os
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import pairwise
from types import ModuleType
from typing import Any, Self

import numpy as np

from ctsgen.backends.base import BUILD_BUDGET_S, Backend
from ctsgen.errors import BackendError, BuildTimeout, DeviceLost, DispatchTimeout
from ctsgen.core.shader import Dispatch, MatrixConversion, ShaderVariant, matrix_conversions
from ctsgen.backends.kept import KeptObjects
from ctsgen.backends.pipeline_cache import (CacheIdentity, PipelineCacheFile, Publisher, fold_parts,
                                            pipeline_cache_enabled)
from ctsgen.backends.validation import EXTENSION as VALIDATION_EXTENSION
from ctsgen.backends.validation import LAYER as VALIDATION_LAYER
from ctsgen.backends.validation import ValidationMessenger
from ctsgen.device.profile import DeviceProfile

#: Vulkan API version requested of the instance and required of the device (VK_MAKE_API_VERSION(0, 1, 3, 0)).
API_VERSION_1_3 = (1 << 22) | (3 << 12)
#: Pipelines kept after their dispatch (least recently dispatched destroyed beyond it): a fuzz
#: session builds one for almost every example, and keeping all grows a device worker without
#: bound (docs/validation.md, "A 100,000-case suite", goal 5). A rebuilt one comes from
#: the VkPipelineCache. Pipelines built ahead and not yet dispatched are always kept.
KEPT_PIPELINES = 256

#: Device extensions enabled whenever the device exposes them.
OPTIONAL_EXTENSIONS = (
    "VK_KHR_cooperative_matrix",
    "VK_NV_cooperative_matrix2",
    "VK_NV_cooperative_vector",
    "VK_KHR_shader_bfloat16",
    "VK_EXT_shader_replicated_composites",
)

#: Extension feature structures (VkPhysicalDevice*Features*) chained when their extension is exposed.
#: Every field of these goes into ``DeviceProfile.features``.
_EXTENSION_FEATURES = {
    "VK_KHR_cooperative_matrix": "VkPhysicalDeviceCooperativeMatrixFeaturesKHR",
    "VK_NV_cooperative_matrix2": "VkPhysicalDeviceCooperativeMatrix2FeaturesNV",
    "VK_NV_cooperative_vector": "VkPhysicalDeviceCooperativeVectorFeaturesNV",
    "VK_KHR_shader_bfloat16": "VkPhysicalDeviceShaderBfloat16FeaturesKHR",
    "VK_EXT_shader_replicated_composites": "VkPhysicalDeviceShaderReplicatedCompositesFeaturesEXT",
}

#: Extension property structures (VkPhysicalDevice*Properties*) chained when their extension is exposed.
#: Every field of these goes into ``DeviceProfile.properties``.
_EXTENSION_PROPERTIES = {
    "VK_KHR_cooperative_matrix": "VkPhysicalDeviceCooperativeMatrixPropertiesKHR",
    "VK_NV_cooperative_matrix2": "VkPhysicalDeviceCooperativeMatrix2PropertiesNV",
    "VK_NV_cooperative_vector": "VkPhysicalDeviceCooperativeVectorPropertiesNV",
}

#: Core features a shader variant of ctsgen may require (VkPhysicalDeviceFeatures and
#: VkPhysicalDeviceVulkan11/12/13Features field names), reported in ``DeviceProfile.features``.
_CORE_FEATURES = {
    "features": ("shaderInt16", "shaderInt64", "shaderFloat64"),
    "vk11": ("storageBuffer16BitAccess", "uniformAndStorageBuffer16BitAccess"),
    "vk12": ("storageBuffer8BitAccess", "uniformAndStorageBuffer8BitAccess", "shaderFloat16", "shaderInt8",
             "bufferDeviceAddress", "scalarBlockLayout", "vulkanMemoryModel", "vulkanMemoryModelDeviceScope",
             "shaderSubgroupExtendedTypes"),
    "vk13": ("subgroupSizeControl", "computeFullSubgroups", "maintenance4", "shaderIntegerDotProduct"),
}

#: Core limits (VkPhysicalDeviceLimits field names) reported in ``DeviceProfile.properties``.
_CORE_LIMITS = ("maxComputeWorkGroupInvocations", "maxComputeSharedMemorySize", "maxStorageBufferRange")
#: VkPhysicalDeviceVulkan12Properties members (float controls) that gate SPIR-V execution modes; the
#: profile keeps them as features, the names shader variants require (Vulkan's SPIR-V capability table)
_FLOAT_CONTROLS = tuple(f"shader{mode}Float{w}" for mode in ("SignedZeroInfNanPreserve", "RoundingModeRTE",
                                                               "RoundingModeRTZ", "DenormPreserve",
                                                               "DenormFlushToZero") for w in (16, 32, 64))

#: Bytes of one element per VkComponentTypeKHR (cooperative-vector matrix conversions).
_COMPONENT_BYTES = {0: 2, 1: 4, 3: 1, 5: 4, 7: 1, 9: 4, 1000491002: 1, 1000491003: 1}

_VK_SUCCESS = 0
_VK_TIMEOUT = 2
_VK_INCOMPLETE = 5
_VK_ERROR_DEVICE_LOST = -4
_VK_ERROR_INCOMPATIBLE_DRIVER = -9


class NoSuchDevice(BackendError):
    """The device index names no Vulkan device (``ctsgen doctor`` asks for each until this)."""


#: How to get a Vulkan loader and a driver with these extensions (this backend's and ``ctsgen doctor``'s
#: advice): a GPU's driver and Debian's libvulkan1, or, with no GPU, lavapipe in a private prefix;
#: Debian 12's own libvulkan1 brings Mesa 22.3, which has none of the extensions ctsgen tests
#: (docs/lavapipe.md).
LOADER_FIX = ("apt-get install libvulkan1 and the GPU's driver; with no GPU, lavapipe: bash .ci/lavapipe.sh PREFIX, "
              "then PREFIX/run python -m ctsgen ... (docs/lavapipe.md; Debian 12's libvulkan1 brings Mesa 22.3, "
              "which lacks VK_KHR_cooperative_matrix and VK_NV_cooperative_matrix2)")


def _import_vulkan_py() -> ModuleType:
    """Import ``vulkan_py``, turning a missing package or loader into a :class:`BackendError`."""
    try:
        import vulkan_py  # local: optional
    except ImportError as exc:
        raise BackendError("the Vulkan backend needs the vulkan_py package -> pip install 'ctsgen[vulkan]' "
                           f"(and a Vulkan loader: {LOADER_FIX})") from exc
    except (RuntimeError, OSError) as exc:  # vulkan_py raises RuntimeError when dlopen("libvulkan.so.1") fails
        raise BackendError(f"cannot load the Vulkan loader libvulkan.so.1 -> {LOADER_FIX}") from exc
    return vulkan_py


def _fields(struct: ctypes.Structure) -> dict[str, int]:
    """The fields of an output structure as ints, without ``sType`` and ``pNext``."""
    return {name: int(getattr(struct, name)) for name, _ in type(struct)._fields_ if name not in ("sType", "pNext")}


def _link(*structs: ctypes.Structure) -> None:
    """Chain ``structs`` through their ``pNext`` members, in order (the caller keeps them alive)."""
    for s, nxt in pairwise(structs):
        s.pNext = ctypes.addressof(nxt)
    if structs:
        structs[-1].pNext = None


@dataclass
class _Pipeline:
    """What one shader variant needs at dispatch time."""

    spirv: bytes
    set_layout: Any  # VkDescriptorSetLayout
    layout: Any  # VkPipelineLayout
    pipeline: Any  # VkPipeline
    bindings: tuple[int, ...]
    created_s: float = 0.0  # seconds of its vkCreateShaderModule + vkCreateComputePipelines
    warm: bool = False  # its zero-workgroup dispatch has run (VulkanBackend._warm_up): the build is done


@dataclass
class _Allocation:
    """One dispatch's storage buffers, bound at ``offsets`` inside one mapped ``VkDeviceMemory``."""

    buffers: list[Any]  # VkBuffer
    offsets: list[int]
    memory: Any  # VkDeviceMemory
    mapped: int  # host address of the mapping
    pool: Any  # VkDescriptorPool
    descriptor_set: Any  # VkDescriptorSet


class VulkanBackend(Backend):
    """A :class:`~ctsgen.backends.base.Backend` on one Vulkan physical device.

    ``VulkanBackend(device_index)`` creates the instance and the logical
    device at once; :meth:`profile` reports what the device advertises,
    :meth:`run` runs one :class:`~ctsgen.backends.base.Dispatch`, and
    :meth:`close` (or leaving a ``with`` block) releases everything.
    """

    name = "vulkan"
    selects_device = True
    validation_layer = True

    def __init__(self, device_index: int = 0, kept_pipelines: int | None = KEPT_PIPELINES,
                 validation: bool = False, build_budget_s: float = BUILD_BUDGET_S) -> None:
        self._vk = _import_vulkan_py()
        #: ``--validation``: the Khronos validation layer and its messages (ctsgen.backends.validation)
        self._validation = ValidationMessenger(self._vk) if validation else None
        self._instance: Any = None  # vulkan_py.Instance wrapper
        self._device: Any = None  # vulkan_py.Device wrapper
        self._command_pool: Any = None
        self._command_buffer: Any = None
        self._fence: Any = None
        self._pipeline_cache: Any = None  # a VkPipelineCache seeded from disk (pipeline_cache.py), or None
        self._cache_file: PipelineCacheFile | None = None
        self._publisher: Publisher | None = None  # publishes the cache as it grows (pipeline_cache.py)
        self._published_size = 0  # the cache's data size at its last publish (or load)
        self._pipelines: KeptObjects[_Pipeline] = KeptObjects(kept_pipelines, self._destroy_pipeline)
        self._pipelines_lock = threading.Lock()
        self._hung: str | None = None  # set when a dispatch timed out: the GPU may still use our memory
        self._lost = False
        self._profile = DeviceProfile()
        #: where the time goes: pipeline creation vs. submitted work (for benchmarks and run summaries)
        self.stats: dict[str, float] = {"pipelines": 0, "pipeline_s": 0.0, "dispatches": 0, "dispatch_s": 0.0,
                                        "pipelines_evicted": 0, "builds": 0, "build_s": 0.0}
        #: the bound on one build's zero-workgroup dispatch, in this process (the supervised worker's
        #: supervisor bounds the whole build by the same budget, and kills a worker past it)
        self.build_budget_s = build_budget_s
        self._builds: dict[str, float] = {}  # variant id -> seconds of its latest build (build_seconds)
        #: the build that left the device busy, by variant id: its dispatch says so (built ahead by prepare)
        self._over_budget: dict[str, BuildTimeout] = {}
        try:
            self._create_instance()
            self._select_physical_device(device_index)
            self._create_device()
            self._create_pipeline_cache()
            self._create_command_objects()
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- Backend protocol ---------------------------------------------------
    def validation_messages(self) -> list[str]:
        """The validation layer's messages since the last call (none without ``validation``)."""
        return self._validation.take() if self._validation is not None else []

    def profile(self) -> DeviceProfile:
        """The device's capabilities, read at construction (see the module docstring)."""
        return self._profile

    def run(self, dispatch: Dispatch, timeout_s: float) -> list[np.ndarray]:
        """Run ``dispatch`` (``vkCmdDispatch(workgroups, 1, 1)``) and return every buffer after it.

        ``buffers[0]`` (uint32 parameters) is bound at binding 0 and
        ``buffers[i]`` at ``variant.buffers[i-1].binding``. Waits at most
        ``timeout_s`` seconds for the fence: raises :class:`DispatchTimeout`
        past that, :class:`DeviceLost` on ``VK_ERROR_DEVICE_LOST`` and
        :class:`BackendError` for anything else that prevents a result.
        """
        if self._device is None:
            raise BackendError("the Vulkan backend is closed")
        if dispatch.variant.id in self._over_budget:
            raise self._over_budget[dispatch.variant.id]
        if self._hung:
            raise BackendError(f"the device is still busy with a dispatch that timed out ({self._hung}); "
                               "start a new process for further work")
        if self._lost:
            raise DeviceLost("the Vulkan device was lost by an earlier dispatch")
        variant = dispatch.variant
        arrays = self._checked_arrays(dispatch)
        max_groups = self._max_workgroups_x
        if not 1 <= dispatch.workgroups <= max_groups:
            raise BackendError(f"{variant.id}: {dispatch.workgroups} workgroups is outside 1.."
                               f"maxComputeWorkGroupCount[0] = {max_groups}; split the dispatch")
        t0 = time.perf_counter()
        pipeline = self._built(variant)
        with self._pipelines_lock:
            self._pipelines.use(variant.id)
        t1 = time.perf_counter()
        conversions = matrix_conversions(variant)
        params = arrays[0]
        if conversions:
            arrays = self._plan_conversions(variant, conversions, arrays, dispatch.workgroups)
        alloc = self._allocate(arrays, pipeline)
        try:
            for conv in conversions:
                self._convert(variant, conv, arrays, alloc, dispatch.workgroups, back=False)
            self._record_and_submit(pipeline, alloc, dispatch.workgroups)
            self._wait(variant, timeout_s)
            for conv in conversions:
                if conv.write_back:
                    self._convert(variant, conv, arrays, alloc, dispatch.workgroups, back=True)
            with self._pipelines_lock:  # the fence has signalled: the GPU uses no pipeline now
                self.stats["pipelines_evicted"] += self._pipelines.evict()
            t2 = time.perf_counter()
            self.stats["pipeline_s"] += t1 - t0
            self.stats["dispatch_s"] += t2 - t1
            self.stats["dispatches"] += 1
            if self._publisher is not None:
                self._publisher.maybe_publish()  # on a thread of its own: this dispatch does not wait
            out = [self._read(alloc.mapped + off, a) for a, off in zip(arrays, alloc.offsets)]
            out[0] = params.copy()  # the caller's offsets, not the ones the conversions rewrote
            self.stats["readback_s"] = self.stats.get("readback_s", 0.0) + time.perf_counter() - t2
            return out
        except DispatchTimeout:
            alloc = None  # the GPU may still write into it: leak it (see the module docstring)
            raise
        finally:
            if alloc is not None:
                self._free(alloc)

    def prepare(self, variants: Sequence[ShaderVariant], threads: int | None = None) -> None:
        """Create the pipelines of ``variants`` ahead of their dispatches, on several threads.

        Pipeline creation (the driver compiling SPIR-V) dominates a pack's
        run time on a GPU (docs/performance.md);
        vkCreateComputePipelines may be called from several threads at once
        (the device is not externally synchronized for it) and ctypes
        releases the GIL during the call, so the compiles overlap.
        Under ``validation`` nothing is built ahead: each pipeline is built at its variant's first
        dispatch, so the layer's messages about it come back with that variant's cases.
        """
        if self._validation is not None:
            return
        t0 = time.perf_counter()
        workers = threads or min(16, os.cpu_count() or 1)
        try:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                list(pool.map(self._try_pipeline, variants))
            for variant in variants:  # on this thread: the command buffer and the queue are ours alone
                self._try_pipeline(variant, warm=True)
        finally:
            self.stats["prepare_s"] = self.stats.get("prepare_s", 0.0) + time.perf_counter() - t0

    def _try_pipeline(self, variant: ShaderVariant, warm: bool = False) -> None:
        """Create a pipeline (``warm``: and finish its build, :meth:`_built`) if possible; a failure
        surfaces again at that variant's dispatch. A build past its budget leaves the device busy: raised."""
        try:
            self._built(variant) if warm else self._pipeline(variant)
        except BuildTimeout:
            raise
        except BackendError:
            pass

    def build_seconds(self, variant_id: str) -> float | None:
        """Seconds of the latest build of ``variant_id``'s pipeline: its creation and its zero-workgroup
        dispatch (see the module docstring); None if this backend has not built it."""
        return self._builds.get(variant_id)

    def _built(self, variant: ShaderVariant) -> _Pipeline:
        """The pipeline of ``variant``, its build finished: created (:meth:`_pipeline`), then warmed
        up once (:meth:`_warm_up`), its build's seconds recorded. Called from one thread at a time."""
        pipeline = self._pipeline(variant)
        if not pipeline.warm:
            seconds = pipeline.created_s + self._warm_up(variant, pipeline)
            pipeline.warm = True
            self._builds[variant.id] = seconds
            self.stats["builds"] += 1
            self.stats["build_s"] += seconds
        return pipeline

    def _warm_up(self, variant: ShaderVariant, pipeline: _Pipeline) -> float:
        """Submit one dispatch of zero workgroups with ``pipeline`` bound (its descriptor set naming
        16-byte scratch buffers that no invocation reads) and wait for it, bounded by
        ``build_budget_s``: a driver that compiles at the first dispatch compiles here. Returns its
        seconds; raises :class:`BuildTimeout` past the budget (the device stays busy compiling)."""
        scratch = [np.zeros(4, np.uint32) for _ in pipeline.bindings]
        t0 = time.perf_counter()
        alloc = self._allocate(scratch, pipeline)
        try:
            self._record_and_submit(pipeline, alloc, 0)
            try:
                self._wait(variant, self.build_budget_s)
            except DispatchTimeout:
                alloc = None  # the device may still use it: leak it (see the module docstring)
                self._over_budget[variant.id] = BuildTimeout(variant.id, time.perf_counter() - t0, self.build_budget_s)
                raise self._over_budget[variant.id] from None
        finally:
            if alloc is not None:
                self._free(alloc)
        return time.perf_counter() - t0

    def close(self) -> None:
        """Destroy every Vulkan object; after a dispatch timed out, leak the device instead (still busy)."""
        dev = self._device
        if dev is not None and not self._hung:
            dev.vkDeviceWaitIdle()  # returns VK_ERROR_DEVICE_LOST at once on a lost device
            self._save_pipeline_cache()
            for p in self._pipelines.values():
                self._destroy_pipeline(p)
            if self._fence is not None:
                dev.vkDestroyFence(self._fence, None)
            if self._command_pool is not None:
                dev.vkDestroyCommandPool(self._command_pool, None)  # frees its command buffer
            dev.vkDestroyDevice(None)
        if self._instance is not None and not self._hung:
            if self._validation is not None:
                self._validation.detach(self._instance)
            self._instance.vkDestroyInstance(None)
        self._pipelines.clear()
        self._device = self._instance = self._fence = self._command_pool = self._command_buffer = None

    # -- construction ---------------------------------------------------------
    def _create_instance(self) -> None:
        """``vkCreateInstance`` for API 1.3 (no layers, no instance extensions; with ``validation``
        the validation layer and VK_EXT_debug_utils, and the messenger attached)."""
        vk = self._vk
        app = vk.VkApplicationInfo(pApplicationName=b"ctsgen", pEngineName=b"ctsgen", apiVersion=API_VERSION_1_3)
        info = vk.VkInstanceCreateInfo(pApplicationInfo=ctypes.pointer(app))
        if self._validation is not None:
            self._validation.check_installed()
            layers, exts = (ctypes.c_char_p * 1)(VALIDATION_LAYER), (ctypes.c_char_p * 1)(VALIDATION_EXTENSION)
            info.enabledLayerCount, info.ppEnabledLayerNames = 1, layers
            info.enabledExtensionCount, info.ppEnabledExtensionNames = 1, exts
        handle = vk.VkInstance()
        res = vk.vkCreateInstance(ctypes.byref(info), None, ctypes.byref(handle))
        if res == _VK_ERROR_INCOMPATIBLE_DRIVER:
            raise BackendError("the Vulkan loader found no driver supporting Vulkan 1.3 (VK_ERROR_INCOMPATIBLE_DRIVER): "
                               "install the GPU's driver, or point VK_DRIVER_FILES at its ICD json")
        self._check(res, "vkCreateInstance")
        self._instance = vk.Instance(handle)
        if self._validation is not None:
            self._validation.attach(self._instance)

    def _select_physical_device(self, index: int) -> None:
        """Pick physical device ``index`` and read its extensions, features, properties and combination lists."""
        vk, inst = self._vk, self._instance
        devices = self._enumerate(inst.vkEnumeratePhysicalDevices, vk.VkPhysicalDevice)
        if not devices:
            raise BackendError("Vulkan reports no physical device")
        if not 0 <= index < len(devices):
            raise NoSuchDevice(f"device_index {index} is out of range: {len(devices)} Vulkan device(s)")
        self._pdev = pdev = devices[index]
        props = vk.VkPhysicalDeviceProperties()
        inst.vkGetPhysicalDeviceProperties(pdev, props)
        name = props.deviceName.decode(errors="replace")
        if props.apiVersion < API_VERSION_1_3:
            raise BackendError(f"{name} supports Vulkan {props.apiVersion >> 22}.{(props.apiVersion >> 12) & 0x3FF}; "
                               "ctsgen needs 1.3")
        self._max_workgroups_x = int(props.limits.maxComputeWorkGroupCount[0])
        self._cache_identity = CacheIdentity(int(props.vendorID), int(props.deviceID), int(props.driverVersion),
                                             bytes(props.pipelineCacheUUID))
        exts = self._enumerate(lambda n, a: inst.vkEnumerateDeviceExtensionProperties(pdev, None, n, a),
                               vk.VkExtensionProperties)
        extensions = frozenset(e.extensionName.decode() for e in exts)
        self._extensions = [e for e in OPTIONAL_EXTENSIONS if e in extensions]
        features, feature_chain = self._query_features()
        properties = self._query_properties(props)
        features.update((n, properties.pop(n)) for n in _FLOAT_CONTROLS)
        self._profile = DeviceProfile(
            name=name,
            driver=self._driver,
            extensions=extensions,
            features=features,
            properties=properties,
            coopmat_khr=self._query_list("VK_KHR_cooperative_matrix",
                                         "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR",
                                         "VkCooperativeMatrixPropertiesKHR"),
            flexible_dimensions=self._query_list("VK_NV_cooperative_matrix2",
                                                 "vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV",
                                                 "VkCooperativeMatrixFlexibleDimensionsPropertiesNV"),
            coopvec_combinations=self._query_list("VK_NV_cooperative_vector",
                                                  "vkGetPhysicalDeviceCooperativeVectorPropertiesNV",
                                                  "VkCooperativeVectorPropertiesNV"),
        )
        self._feature_chain = feature_chain
        families = self._enumerate(lambda n, a: inst.vkGetPhysicalDeviceQueueFamilyProperties(pdev, n, a),
                                   vk.VkQueueFamilyProperties, returns_result=False)
        compute = [i for i, f in enumerate(families) if f.queueFlags & vk.VkQueueFlagBits.VK_QUEUE_COMPUTE_BIT]
        if not compute:
            raise BackendError(f"{name} has no queue family with VK_QUEUE_COMPUTE_BIT")
        self._queue_family = compute[0]
        self._memory_properties = vk.VkPhysicalDeviceMemoryProperties()
        inst.vkGetPhysicalDeviceMemoryProperties(pdev, self._memory_properties)

    def _query_features(self) -> tuple[dict[str, int], list[ctypes.Structure]]:
        """``vkGetPhysicalDeviceFeatures2`` through the chain described in the module docstring.

        Returns the profile's feature dict and the chain (head
        ``VkPhysicalDeviceFeatures2`` first), robustness already switched
        off, ready to be passed to ``vkCreateDevice``.
        """
        vk = self._vk
        head = vk.VkPhysicalDeviceFeatures2()
        core = {"vk11": vk.VkPhysicalDeviceVulkan11Features(), "vk12": vk.VkPhysicalDeviceVulkan12Features(),
                "vk13": vk.VkPhysicalDeviceVulkan13Features()}
        ext = [getattr(vk, _EXTENSION_FEATURES[e])() for e in self._extensions if e in _EXTENSION_FEATURES]
        chain = [head, *core.values(), *ext]
        _link(*chain)
        self._instance.vkGetPhysicalDeviceFeatures2(self._pdev, head)
        features: dict[str, int] = {}
        for key, names in _CORE_FEATURES.items():
            struct = head.features if key == "features" else core[key]
            features.update((n, int(getattr(struct, n))) for n in names)
        for s in ext:
            features.update(_fields(s))
        head.features.robustBufferAccess = 0
        core["vk13"].robustImageAccess = 0
        return features, chain

    def _query_properties(self, props: ctypes.Structure) -> dict[str, int]:
        """``vkGetPhysicalDeviceProperties2`` with ``VkPhysicalDeviceVulkan11Properties``, the float
        controls of ``VkPhysicalDeviceVulkan12Properties`` and the extensions' properties."""
        vk = self._vk
        head = vk.VkPhysicalDeviceProperties2()
        vk11 = vk.VkPhysicalDeviceVulkan11Properties()
        vk12 = vk.VkPhysicalDeviceVulkan12Properties()
        ext = [getattr(vk, _EXTENSION_PROPERTIES[e])() for e in self._extensions if e in _EXTENSION_PROPERTIES]
        _link(head, vk11, vk12, *ext)
        self._instance.vkGetPhysicalDeviceProperties2(self._pdev, head)
        out = {n: int(getattr(props.limits, n)) for n in _CORE_LIMITS}
        out["subgroupSize"] = int(vk11.subgroupSize)
        out["driverVersion"] = int(props.driverVersion)  # what a results file's header names
        out["vendorID"] = int(props.vendorID)  # how the header spells driverVersion
        out.update((n, int(getattr(vk12, n))) for n in _FLOAT_CONTROLS)
        self._driver = " ".join(bytes(getattr(vk12, f)).split(b"\0")[0].decode(errors="replace")
                                for f in ("driverName", "driverInfo")).strip()
        for s in ext:
            out.update(_fields(s))
        return out

    def _query_list(self, extension: str, command: str, struct: str) -> list[dict[str, int]]:
        """The entries of one two-call enumeration command (empty when ``extension`` is not exposed)."""
        if extension not in self._extensions:
            return []
        fn = getattr(self._instance, command)
        entries = self._enumerate(lambda n, a: fn(self._pdev, n, a), getattr(self._vk, struct))
        return [_fields(e) for e in entries]

    def _create_device(self) -> None:
        """``vkCreateDevice`` with one queue of the compute family, the queried feature chain and the extensions."""
        vk = self._vk
        priority = ctypes.c_float(1.0)
        queue_info = vk.VkDeviceQueueCreateInfo(queueFamilyIndex=self._queue_family, queueCount=1,
                                                pQueuePriorities=ctypes.pointer(priority))
        names = (ctypes.c_char_p * max(1, len(self._extensions)))(*(e.encode() for e in self._extensions))
        info = vk.VkDeviceCreateInfo(pNext=ctypes.addressof(self._feature_chain[0]), queueCreateInfoCount=1,
                                     pQueueCreateInfos=ctypes.pointer(queue_info),
                                     enabledExtensionCount=len(self._extensions), ppEnabledExtensionNames=names)
        handle = vk.VkDevice()
        self._check(self._instance.vkCreateDevice(self._pdev, info, None, handle), "vkCreateDevice")
        self._device = vk.Device(handle)
        self._queue = vk.VkQueue()
        self._device.vkGetDeviceQueue(self._queue_family, 0, self._queue)

    def _create_command_objects(self) -> None:
        """One resettable command pool + primary command buffer, and the fence every dispatch waits on."""
        vk, dev = self._vk, self._device
        pool = vk.VkCommandPool()
        flags = vk.VkCommandPoolCreateFlagBits.VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT
        self._check(dev.vkCreateCommandPool(vk.VkCommandPoolCreateInfo(flags=flags,
                                                                       queueFamilyIndex=self._queue_family),
                                            None, pool), "vkCreateCommandPool")
        self._command_pool = pool
        cb = vk.VkCommandBuffer()
        info = vk.VkCommandBufferAllocateInfo(commandPool=pool, commandBufferCount=1,
                                              level=vk.VkCommandBufferLevel.VK_COMMAND_BUFFER_LEVEL_PRIMARY)
        self._check(dev.vkAllocateCommandBuffers(info, cb), "vkAllocateCommandBuffers")
        self._command_buffer = cb
        fence = vk.VkFence()
        self._check(dev.vkCreateFence(vk.VkFenceCreateInfo(), None, fence), "vkCreateFence")
        self._fence = fence

    # -- dispatch -------------------------------------------------------------
    @staticmethod
    def _checked_arrays(dispatch: Dispatch) -> list[np.ndarray]:
        """The dispatch's buffers as C-contiguous arrays, checked against the variant's buffer list."""
        variant = dispatch.variant
        if len(dispatch.buffers) != len(variant.buffers) + 1:
            raise BackendError(f"{variant.id}: {len(dispatch.buffers)} buffers given, the variant has "
                               f"{len(variant.buffers)} besides the parameter buffer")
        dtypes = ["uint32", *(b.dtype for b in variant.buffers)]
        arrays = []
        for i, (arr, dtype) in enumerate(zip(dispatch.buffers, dtypes)):
            if not isinstance(arr, np.ndarray) or arr.dtype.name != dtype:
                got = arr.dtype.name if isinstance(arr, np.ndarray) else type(arr).__name__
                raise BackendError(f"{variant.id}: buffer {i} is {got}, expected a numpy array of {dtype}")
            arrays.append(np.ascontiguousarray(arr))
        return arrays

    def _pipeline(self, variant: ShaderVariant) -> _Pipeline:
        """The cached compute pipeline of ``variant``, built on first use.

        Descriptor set 0 holds one ``VK_DESCRIPTOR_TYPE_STORAGE_BUFFER`` per
        binding (0 for the parameters, then ``variant.buffers``).
        """
        with self._pipelines_lock:
            cached = self._pipelines.get(variant.id)
        if cached is not None:
            if cached.spirv != variant.spirv:
                raise BackendError(f"two different shader variants share the id {variant.id!r}")
            return cached
        vk, dev = self._vk, self._device
        if len(variant.spirv) % 4 or not variant.spirv:
            raise BackendError(f"{variant.id}: SPIR-V is {len(variant.spirv)} bytes, not a whole number of words")
        bindings = (0, *(b.binding for b in variant.buffers))
        if sorted(set(bindings)) != list(bindings):
            raise BackendError(f"{variant.id}: bindings {bindings} are not distinct and increasing from 0")
        storage = vk.VkDescriptorType.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
        compute = vk.VkShaderStageFlagBits.VK_SHADER_STAGE_COMPUTE_BIT
        layout_bindings = (vk.VkDescriptorSetLayoutBinding * len(bindings))(
            *(vk.VkDescriptorSetLayoutBinding(binding=b, descriptorType=storage, descriptorCount=1,
                                              stageFlags=compute) for b in bindings))
        set_layout = vk.VkDescriptorSetLayout()
        self._check(dev.vkCreateDescriptorSetLayout(
            vk.VkDescriptorSetLayoutCreateInfo(bindingCount=len(bindings), pBindings=layout_bindings),
            None, set_layout), f"{variant.id}: vkCreateDescriptorSetLayout")
        layout = vk.VkPipelineLayout()
        res = dev.vkCreatePipelineLayout(
            vk.VkPipelineLayoutCreateInfo(setLayoutCount=1, pSetLayouts=ctypes.pointer(set_layout)), None, layout)
        if res != _VK_SUCCESS:
            dev.vkDestroyDescriptorSetLayout(set_layout, None)
            self._check(res, f"{variant.id}: vkCreatePipelineLayout")
        pipeline = vk.VkPipeline()
        created = time.perf_counter()
        code = (ctypes.c_uint32 * (len(variant.spirv) // 4)).from_buffer_copy(variant.spirv)
        module = vk.VkShaderModule()
        res = dev.vkCreateShaderModule(
            vk.VkShaderModuleCreateInfo(codeSize=len(variant.spirv),
                                        pCode=ctypes.cast(code, ctypes.POINTER(ctypes.c_uint32))), None, module)
        what = "vkCreateShaderModule"
        if res == _VK_SUCCESS:
            stage = vk.VkPipelineShaderStageCreateInfo(stage=compute, module=module, pName=b"main")
            info = vk.VkComputePipelineCreateInfo(stage=stage, layout=layout, basePipelineIndex=-1)
            res = dev.vkCreateComputePipelines(self._pipeline_cache or 0, 1, info, None, pipeline)
            what = "vkCreateComputePipelines"
            dev.vkDestroyShaderModule(module, None)
        if res != _VK_SUCCESS:
            dev.vkDestroyPipelineLayout(layout, None)
            dev.vkDestroyDescriptorSetLayout(set_layout, None)
            self._check(res, f"shader variant {variant.id}: {what}")
        entry = _Pipeline(variant.spirv, set_layout, layout, pipeline, bindings, time.perf_counter() - created)
        with self._pipelines_lock:
            if self._pipelines.get(variant.id) is None:
                self._pipelines.add(variant.id, entry)
                self.stats["pipelines"] += 1
                if self._publisher is not None:
                    self._publisher.built()
            else:  # another thread built it meanwhile: keep one
                self._destroy_pipeline(entry)
                entry = self._pipelines.get(variant.id)
        return entry

    def _destroy_pipeline(self, p: _Pipeline) -> None:
        dev = self._device
        dev.vkDestroyPipeline(p.pipeline, None)
        dev.vkDestroyPipelineLayout(p.layout, None)
        dev.vkDestroyDescriptorSetLayout(p.set_layout, None)

    def _create_pipeline_cache(self) -> None:
        """A VkPipelineCache seeded with this device's and driver's blob from disk, so a pipeline
        built by any earlier process on this machine is not built again, then with the parts that
        closing processes wrote (pipeline_cache.py). Off with ``CTSGEN_PIPELINE_CACHE=0`` (to time
        cold builds); a cache that cannot be created is only a slower run."""
        if not pipeline_cache_enabled():
            return
        self._cache_file = PipelineCacheFile(self._cache_identity)
        blob = self._cache_file.load()
        cache = self._pipeline_cache = self._cache_from(blob)
        if cache is not None:
            self.stats["pipeline_cache_loaded_bytes"] = len(blob)
            self._publisher = Publisher(self._cache_file, self._merged_with, lambda: self._cache_data(cache))
            self._published_size = self._cache_size(cache)  # before the parts: they are unpublished work
            self.stats["pipeline_cache_parts_folded"] = fold_parts(
                self._cache_file, self._publisher, self._fold_part, lambda: self._cache_size(cache))

    def _fold_part(self, part: bytes) -> bool:
        """Merge ``part`` into the cache, through a cache created from it; whether it was merged.
        No other thread uses the cache yet (vkMergePipelineCaches' dstCache is externally
        synchronised, Vulkan's "Pipeline Cache" chapter)."""
        source = self._cache_from(part)
        if source is None:
            return False
        try:
            return self._device.vkMergePipelineCaches(self._pipeline_cache, 1, source) == _VK_SUCCESS
        finally:
            self._device.vkDestroyPipelineCache(source, None)

    def _cache_from(self, blob: bytes) -> Any:
        """A VkPipelineCache created from ``blob`` (empty: an empty cache), or None where the driver
        refuses it (a blob of another driver is ignored by the driver itself, per
        VkPipelineCacheCreateInfo's pInitialData rules)."""
        vk = self._vk
        data = ctypes.create_string_buffer(blob, len(blob))
        info = vk.VkPipelineCacheCreateInfo(initialDataSize=len(blob),
                                            pInitialData=ctypes.cast(data, ctypes.c_void_p) if blob else None)
        cache = vk.VkPipelineCache()
        return cache if self._device.vkCreatePipelineCache(info, None, cache) == _VK_SUCCESS else None

    def _save_pipeline_cache(self) -> None:
        """Write what the cache gained since its last publish to a part (:meth:`Publisher.finish`), and
        destroy it."""
        cache, publisher = self._pipeline_cache, self._publisher
        if cache is None:
            return
        if publisher is not None:
            publisher.finish()
            if publisher.published:
                self.stats["pipeline_cache_saved_bytes"] = publisher.saved_bytes
                self.stats["pipeline_cache_publishes"] = publisher.published
            if publisher.part_bytes:
                self.stats["pipeline_cache_part_bytes"] = publisher.part_bytes
        self._device.vkDestroyPipelineCache(cache, None)
        self._pipeline_cache = self._publisher = None

    def _merged_with(self, on_disk: bytes) -> bytes:
        """The blob to publish (under the file's lock): the one on disk with this process's cache merged
        into it, in a cache of its own (this process's cache is only read). b"" where the cache has not
        grown since the last publish: a process that built nothing new (a warm run: every pipeline
        came from the cache) does not rewrite the file, whatever its size."""
        size = self._cache_size(self._pipeline_cache)
        if size <= self._published_size:
            return b""
        merged = self._cache_from(on_disk) if on_disk else None
        if merged is None:  # nothing on disk, or a blob the driver refuses: this process's cache alone
            merged = self._cache_from(b"")
        if merged is None:
            return b""
        try:
            if self._device.vkMergePipelineCaches(merged, 1, self._pipeline_cache) != _VK_SUCCESS:
                return b""
            if on_disk:
                self.stats["pipeline_cache_merged_bytes"] = len(on_disk)
            data = self._cache_data(merged)
        finally:
            self._device.vkDestroyPipelineCache(merged, None)
        self._published_size = size
        return data  # lavapipe 26.2.6 writes 20 of the 32 header bytes it reports: save refuses it (validation.md)

    def _cache_size(self, cache: Any) -> int:
        """vkGetPipelineCacheData's size query; 0 where the driver gives nothing."""
        size = ctypes.c_size_t(0)
        return size.value if self._device.vkGetPipelineCacheData(cache, size, None) == _VK_SUCCESS else 0

    def _cache_data(self, cache: Any) -> bytes:
        """vkGetPipelineCacheData: its size query, then the data; empty where the driver gives nothing."""
        size = ctypes.c_size_t(self._cache_size(cache))
        if not size.value:
            return b""
        data = ctypes.create_string_buffer(size.value)
        if self._device.vkGetPipelineCacheData(cache, size, ctypes.cast(data, ctypes.c_void_p)) != _VK_SUCCESS:
            return b""
        return data.raw[:size.value]

    def _memory_type(self, type_bits: int) -> int:
        """A ``HOST_VISIBLE | HOST_COHERENT`` memory type allowed by ``type_bits``, ``HOST_CACHED`` preferred."""
        bits = self._vk.VkMemoryPropertyFlagBits
        need = bits.VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | bits.VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
        mp = self._memory_properties
        usable = [i for i in range(mp.memoryTypeCount)
                  if type_bits >> i & 1 and mp.memoryTypes[i].propertyFlags & need == need]
        if not usable:
            raise BackendError("the device has no HOST_VISIBLE | HOST_COHERENT memory type for storage buffers")
        cached = [i for i in usable if mp.memoryTypes[i].propertyFlags & bits.VK_MEMORY_PROPERTY_HOST_CACHED_BIT]
        return (cached or usable)[0]

    def _allocate(self, arrays: list[np.ndarray], pipeline: _Pipeline) -> _Allocation:
        """Create, fill and bind one storage buffer per array, and the descriptor set that names them.

        Sizes are rounded up to a multiple of 4 bytes, at least 16. Where the
        device supports ``bufferDeviceAddress`` the buffers also carry
        ``VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT`` and the memory
        ``VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT``.
        """
        vk, dev = self._vk, self._device
        usage_bits, alloc_bits = vk.VkBufferUsageFlagBits, vk.VkMemoryAllocateFlagBits
        usage = (usage_bits.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | usage_bits.VK_BUFFER_USAGE_TRANSFER_SRC_BIT
                 | usage_bits.VK_BUFFER_USAGE_TRANSFER_DST_BIT)
        device_address = self._profile.has_feature("bufferDeviceAddress")
        if device_address:
            usage |= usage_bits.VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT
        alloc = _Allocation([], [], None, 0, None, None)
        try:
            size, type_bits = 0, ~0
            for arr in arrays:
                buf = vk.VkBuffer()
                info = vk.VkBufferCreateInfo(size=max(16, -(-arr.nbytes // 4) * 4), usage=usage,
                                             sharingMode=vk.VkSharingMode.VK_SHARING_MODE_EXCLUSIVE)
                self._check(dev.vkCreateBuffer(info, None, buf), "vkCreateBuffer")
                alloc.buffers.append(buf)
                req = vk.VkMemoryRequirements()
                dev.vkGetBufferMemoryRequirements(buf, req)
                size = -(-size // req.alignment) * req.alignment
                alloc.offsets.append(size)
                size += req.size
                type_bits &= req.memoryTypeBits
            flags = vk.VkMemoryAllocateFlagsInfo(flags=alloc_bits.VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT)
            info = vk.VkMemoryAllocateInfo(pNext=ctypes.addressof(flags) if device_address else None,
                                           allocationSize=size, memoryTypeIndex=self._memory_type(type_bits))
            memory = vk.VkDeviceMemory()
            self._check(dev.vkAllocateMemory(info, None, memory), f"vkAllocateMemory({size} bytes)")
            alloc.memory = memory
            for buf, off in zip(alloc.buffers, alloc.offsets):
                self._check(dev.vkBindBufferMemory(buf, memory, off), "vkBindBufferMemory")
            ptr = ctypes.c_void_p()
            self._check(dev.vkMapMemory(memory, 0, vk.VK_WHOLE_SIZE, 0, ptr), "vkMapMemory")
            alloc.mapped = ptr.value or 0
            for arr, off in zip(arrays, alloc.offsets):
                ctypes.memmove(alloc.mapped + off, arr.ctypes.data, arr.nbytes)
            self._write_descriptor_set(alloc, pipeline)
        except BaseException:
            self._free(alloc)
            raise
        return alloc

    def _write_descriptor_set(self, alloc: _Allocation, pipeline: _Pipeline) -> None:
        """Create the dispatch's descriptor pool and its one set, naming ``alloc.buffers`` at the variant's bindings."""
        vk, dev = self._vk, self._device
        storage = vk.VkDescriptorType.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
        n = len(alloc.buffers)
        pool_size = vk.VkDescriptorPoolSize(type=storage, descriptorCount=n)
        pool = vk.VkDescriptorPool()
        self._check(dev.vkCreateDescriptorPool(
            vk.VkDescriptorPoolCreateInfo(maxSets=1, poolSizeCount=1, pPoolSizes=ctypes.pointer(pool_size)),
            None, pool), "vkCreateDescriptorPool")
        alloc.pool = pool
        dset = vk.VkDescriptorSet()
        self._check(dev.vkAllocateDescriptorSets(
            vk.VkDescriptorSetAllocateInfo(descriptorPool=pool, descriptorSetCount=1,
                                           pSetLayouts=ctypes.pointer(pipeline.set_layout)), dset),
            "vkAllocateDescriptorSets")
        infos = [vk.VkDescriptorBufferInfo(buffer=b, offset=0, range=vk.VK_WHOLE_SIZE) for b in alloc.buffers]
        writes = (vk.VkWriteDescriptorSet * n)(
            *(vk.VkWriteDescriptorSet(dstSet=dset, dstBinding=binding, descriptorCount=1, descriptorType=storage,
                                      pBufferInfo=ctypes.pointer(info))
              for binding, info in zip(pipeline.bindings, infos)))
        dev.vkUpdateDescriptorSets(n, writes, 0, None)
        alloc.descriptor_set = dset

    def _record_and_submit(self, pipeline: _Pipeline, alloc: _Allocation, workgroups: int) -> None:
        """Record bind + ``vkCmdDispatch`` + a shader-write -> host-read barrier, and submit it with the fence."""
        vk, dev, cb = self._vk, self._device, self._command_buffer
        bind_point = vk.VkPipelineBindPoint.VK_PIPELINE_BIND_POINT_COMPUTE
        self._check(dev.vkResetCommandBuffer(cb, 0), "vkResetCommandBuffer")
        begin = vk.VkCommandBufferBeginInfo(
            flags=vk.VkCommandBufferUsageFlagBits.VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT)
        self._check(dev.vkBeginCommandBuffer(cb, begin), "vkBeginCommandBuffer")
        dev.vkCmdBindPipeline(cb, bind_point, pipeline.pipeline)
        dev.vkCmdBindDescriptorSets(cb, bind_point, pipeline.layout, 0, 1, alloc.descriptor_set, 0, None)
        dev.vkCmdDispatch(cb, workgroups, 1, 1)
        barrier = vk.VkMemoryBarrier(srcAccessMask=vk.VkAccessFlagBits.VK_ACCESS_SHADER_WRITE_BIT,
                                     dstAccessMask=vk.VkAccessFlagBits.VK_ACCESS_HOST_READ_BIT)
        dev.vkCmdPipelineBarrier(cb, vk.VkPipelineStageFlagBits.VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                 vk.VkPipelineStageFlagBits.VK_PIPELINE_STAGE_HOST_BIT, 0,
                                 1, barrier, 0, None, 0, None)
        self._check(dev.vkEndCommandBuffer(cb), "vkEndCommandBuffer")
        self._check(dev.vkResetFences(1, self._fence), "vkResetFences")
        submit = vk.VkSubmitInfo(commandBufferCount=1, pCommandBuffers=ctypes.pointer(cb))
        self._check(dev.vkQueueSubmit(self._queue, 1, submit, self._fence), "vkQueueSubmit")

    def _wait(self, variant: ShaderVariant, timeout_s: float) -> None:
        """``vkWaitForFences`` bounded by ``timeout_s``: VK_TIMEOUT -> :class:`DispatchTimeout`."""
        timeout_ns = min(max(0, int(timeout_s * 1e9)), 2**64 - 1)
        res = self._device.vkWaitForFences(1, self._fence, 1, timeout_ns)
        if res == _VK_TIMEOUT:
            self._hung = f"{variant.id} did not finish within {timeout_s:g} s"
            raise DispatchTimeout(f"shader variant {variant.id}: the dispatch did not finish within {timeout_s:g} s")
        self._check(res, f"shader variant {variant.id}: vkWaitForFences")

    # -- cooperative-vector matrix conversions ----------------------------------
    def _convert_info(self, conv: MatrixConversion, back: bool) -> Any:
        """A VkConvertCooperativeVectorMatrixInfoNV between the row-major source and ``conv.dst_layout``
        (reversed when ``back``); the caller sets srcSize, srcData, pDstSize and dstData."""
        row_major = (conv.src_type, 0, conv.cols * _COMPONENT_BYTES[conv.src_type])  # (type, layout, stride)
        optimal = (conv.dst_type, conv.dst_layout, 0)
        (st, sl, ss), (dt, dl, ds) = (optimal, row_major) if back else (row_major, optimal)
        return self._vk.VkConvertCooperativeVectorMatrixInfoNV(
            srcComponentType=st, dstComponentType=dt, numRows=conv.rows, numColumns=conv.cols,
            srcLayout=sl, srcStride=ss, dstLayout=dl, dstStride=ds)

    def _converted_size(self, variant: ShaderVariant, conv: MatrixConversion) -> int:
        """Bytes the driver needs for ``conv``'s destination (vkConvertCooperativeVectorMatrixNV
        with a null dstData writes the size to pDstSize)."""
        info = self._convert_info(conv, back=False)
        size = ctypes.c_size_t(0)
        info.pDstSize = ctypes.pointer(size)
        info.srcSize = conv.rows * conv.cols * 4
        self._check(self._device.vkConvertCooperativeVectorMatrixNV(info),
                    f"{variant.id}: vkConvertCooperativeVectorMatrixNV (destination size query)")
        return int(size.value)

    def _plan_conversions(self, variant: ShaderVariant, conversions: Sequence[MatrixConversion],
                          arrays: list[np.ndarray], workgroups: int) -> list[np.ndarray]:
        """Size each conversion's destination buffer (64-byte aligned case regions, VUID-RuntimeSpirv-
        OpCooperativeVectorMatrixMulNV-10097) and point the cases' offset words at their regions."""
        arrays = list(arrays)
        bindings = [b.binding for b in variant.buffers]
        words = arrays[0].reshape(workgroups, -1).copy()
        for conv in conversions:
            slot = bindings.index(conv.dst_binding)
            if arrays[slot + 1].dtype != np.uint8:
                raise BackendError(f"{variant.id}: conversion destination binding {conv.dst_binding} must be a "
                                   f"uint8 buffer, not {arrays[slot + 1].dtype}")
            size = self._converted_size(variant, conv)
            extra = words[:, conv.offset_word].astype(np.int64) if conv.offset_word is not None else \
                np.zeros(workgroups, np.int64)
            region = -(-(extra + size) // 64) * 64
            starts = np.concatenate([[0], np.cumsum(region)[:-1]])
            words[:, slot] = starts
            arrays[slot + 1] = np.zeros(max(64, int(region.sum())), dtype=np.uint8)
        arrays[0] = np.ascontiguousarray(words.ravel())
        return arrays

    def _convert(self, variant: ShaderVariant, conv: MatrixConversion, arrays: list[np.ndarray],
                 alloc: _Allocation, workgroups: int, back: bool) -> None:
        """Convert every case's matrix on the host, inside the mapped memory (source -> destination
        layout before the dispatch; destination -> row-major source with ``back``)."""
        bindings = [b.binding for b in variant.buffers]
        src_slot, dst_slot = bindings.index(conv.src_binding) + 1, bindings.index(conv.dst_binding) + 1
        words = arrays[0].reshape(workgroups, -1)
        src_item = arrays[src_slot].dtype.itemsize
        src_bytes = conv.rows * conv.cols * _COMPONENT_BYTES[conv.src_type]
        size = self._converted_size(variant, conv)
        for i in range(workgroups):
            src = alloc.mapped + alloc.offsets[src_slot] + int(words[i, src_slot - 1]) * src_item
            dst = alloc.mapped + alloc.offsets[dst_slot] + int(words[i, dst_slot - 1])
            if conv.offset_word is not None:
                dst += int(words[i, conv.offset_word])
            info = self._convert_info(conv, back)
            dst_size = ctypes.c_size_t(src_bytes if back else size)
            info.pDstSize = ctypes.pointer(dst_size)
            info.srcSize = size if back else src_bytes
            info.srcData.hostAddress = dst if back else src
            info.dstData.hostAddress = src if back else dst
            self._check(self._device.vkConvertCooperativeVectorMatrixNV(info),
                        f"{variant.id}: vkConvertCooperativeVectorMatrixNV (case {i}{', back' if back else ''})")

    @staticmethod
    def _read(address: int, like: np.ndarray) -> np.ndarray:
        """A new array shaped and typed like ``like``, copied from host address ``address``."""
        out = np.empty_like(like)
        ctypes.memmove(out.ctypes.data, address, out.nbytes)
        return out

    def _free(self, alloc: _Allocation) -> None:
        """Destroy one dispatch's descriptor pool (and set), buffers and memory."""
        dev = self._device
        if alloc.pool is not None:
            dev.vkDestroyDescriptorPool(alloc.pool, None)
        for buf in alloc.buffers:
            dev.vkDestroyBuffer(buf, None)
        if alloc.memory is not None:
            dev.vkFreeMemory(alloc.memory, None)  # unmaps implicitly

    # -- helpers --------------------------------------------------------------
    def _check(self, result: int, what: str) -> None:
        """Raise for a VkResult other than VK_SUCCESS (:class:`DeviceLost` for VK_ERROR_DEVICE_LOST)."""
        if result == _VK_SUCCESS:
            return
        try:
            name = self._vk.VkResult(result).name
        except ValueError:
            name = f"VkResult {result}"
        if result == _VK_ERROR_DEVICE_LOST:
            self._lost = True
            raise DeviceLost(f"{what}: {name}")
        raise BackendError(f"{what} failed: {name}")

    def _enumerate(self, command: Any, element: type, returns_result: bool = True) -> list[Any]:
        """Run a two-call enumeration ``command(count, array)`` and return its elements.

        Output structures with an ``sType`` get it set before the call (a
        ctypes array does not run their constructors).
        """
        while True:
            count = ctypes.c_uint32()
            res = command(count, None)
            if returns_result:
                self._check(res, "enumeration (count)")
            arr = (element * count.value)()
            if hasattr(element, "_fields_") and element._fields_[0][0] == "sType":
                stype = element().sType
                for e in arr:
                    e.sType = stype
            res = command(count, arr)
            if returns_result and res == _VK_INCOMPLETE:
                continue  # the list grew between the calls
            if returns_result:
                self._check(res, "enumeration")
            return list(arr[: count.value])
