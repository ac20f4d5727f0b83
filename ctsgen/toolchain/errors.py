"""Errors raised by the toolchain: each names what went wrong and how to fix it."""

from __future__ import annotations

from ctsgen.errors import CtsgenError


class ToolchainError(CtsgenError, RuntimeError):
    """A tool that turns GLSL into validated SPIR-V is missing or broken."""


class GlslCompileError(ToolchainError):
    """glslang refused a GLSL source.

    ``diagnostics`` is glslang's own log; the message adds the offending
    source lines.
    """

    def __init__(self, message: str, diagnostics: str) -> None:
        super().__init__(message)
        self.diagnostics = diagnostics


class SpirvValidationError(ToolchainError):
    """A validator refused a SPIR-V module; ``messages`` is what it printed."""

    def __init__(self, message: str, messages: str) -> None:
        super().__init__(message)
        self.messages = messages
