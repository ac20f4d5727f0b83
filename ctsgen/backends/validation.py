"""``--validation``: the Khronos validation layer on the Vulkan backend, its messages per dispatch.

The instance enables ``VK_LAYER_KHRONOS_validation`` and ``VK_EXT_debug_utils``; a
``VkDebugUtilsMessengerEXT`` (vkCreateDebugUtilsMessengerEXT, Vulkan spec "Debug Utilities")
collects every validation message of severity WARNING or ERROR. The runner takes them after each
dispatch (:func:`ctsgen.backends.base.validation_messages`), so a message raised while a
variant's pipeline is built or its dispatch recorded lands on that dispatch's cases, whose verdict
becomes ValidationError (:mod:`ctsgen.core.verdict`). The layer must know the extensions under
test: Debian 12's 1.3.239 does not, Debian sid's vulkan-validationlayers 1.4.363 does (docs/ci.md).
"""

from __future__ import annotations

import ctypes
import threading
from types import ModuleType
from typing import Any

from ctsgen.errors import BackendError

LAYER = b"VK_LAYER_KHRONOS_validation"
EXTENSION = b"VK_EXT_debug_utils"
#: VkDebugUtilsMessageSeverityFlagBitsEXT WARNING | ERROR; VkDebugUtilsMessageTypeFlagBitsEXT VALIDATION
_SEVERITY = 0x100 | 0x1000
_TYPES = 0x2
#: messages kept per dispatch; the rest are counted
MAX_MESSAGES = 16


class ValidationMessenger:
    """The layer and extension names an instance enables, and the messenger attached to it."""

    def __init__(self, vk: ModuleType) -> None:
        self._vk = vk
        self._lock = threading.Lock()  # pipelines are built on several threads
        self._messages: list[str] = []
        self._dropped = 0
        self._handle: Any = None
        self._callback = vk.PFN_vkDebugUtilsMessengerCallbackEXT(self._on_message)  # kept alive with self

    def check_installed(self) -> None:
        """Refuse to start without the layer, naming what to install."""
        vk = self._vk
        count = ctypes.c_uint32(0)
        vk.vkEnumerateInstanceLayerProperties(ctypes.byref(count), None)
        props = (vk.VkLayerProperties * count.value)()
        vk.vkEnumerateInstanceLayerProperties(ctypes.byref(count), props)
        if LAYER not in {p.layerName for p in props}:
            raise BackendError("--validation: the Vulkan loader finds no VK_LAYER_KHRONOS_validation -> install "
                               "vulkan-validationlayers 1.4.363 or later (it must know the extensions under test) "
                               "and point VK_ADD_LAYER_PATH at its explicit_layer.d")

    def attach(self, instance: Any) -> None:
        """Create the messenger on ``instance`` (a vulkan_py Instance wrapper)."""
        vk = self._vk
        info = vk.VkDebugUtilsMessengerCreateInfoEXT(messageSeverity=_SEVERITY, messageType=_TYPES,
                                                     pfnUserCallback=self._callback)
        handle = vk.VkDebugUtilsMessengerEXT()
        res = instance.vkCreateDebugUtilsMessengerEXT(ctypes.byref(info), None, ctypes.byref(handle))
        if res != 0:
            raise BackendError(f"vkCreateDebugUtilsMessengerEXT failed ({res})")
        self._handle = handle

    def detach(self, instance: Any) -> None:
        if self._handle is not None:
            instance.vkDestroyDebugUtilsMessengerEXT(self._handle, None)
            self._handle = None

    def _on_message(self, severity: int, types: int, data: Any, user: Any) -> int:
        d = data.contents
        text = f"{(d.pMessageIdName or b'?').decode(errors='replace')}: " \
               f"{(d.pMessage or b'').decode(errors='replace')}"
        with self._lock:
            if len(self._messages) < MAX_MESSAGES:
                self._messages.append(" ".join(text.split()))
            else:
                self._dropped += 1
        return 0  # VK_FALSE: the call that raised the message goes on

    def take(self) -> list[str]:
        """The messages since the last call (and how many more were dropped), emptied."""
        with self._lock:
            out, dropped = self._messages, self._dropped
            self._messages, self._dropped = [], 0
        return out + ([f"... and {dropped} more"] if dropped else [])
