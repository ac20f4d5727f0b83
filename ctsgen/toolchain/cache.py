"""A content-addressed on-disk cache of compiled SPIR-V.

The key is a sha256 over the GLSL source, the compiler library's file name
and size (a different glslang build gives a different key) and the compile
options.  An entry is ``HEADER + sha256(spirv) + spirv``; an entry whose
header, digest or SPIR-V magic does not check out is treated as missing, so
a truncated or corrupted file is recompiled, never trusted.  Writes go to a
temp file in the same directory and are published with ``os.replace``, so
concurrent readers see either nothing or a whole entry.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import warnings
from pathlib import Path

ENV_VAR = "CTSGEN_CACHE_DIR"
HEADER = b"CTSGSPV1"
_KEY_VERSION = "ctsgen-spirv-cache-1"
_SPIRV_MAGIC = (0x07230203).to_bytes(4, "little")


def cache_key(source: str, compiler: Path, options: str) -> str:
    """Hex sha256 identifying the SPIR-V that ``compiler`` makes of ``source`` with ``options``."""
    digest = hashlib.sha256()
    for field in (_KEY_VERSION, source, compiler.name, str(compiler.stat().st_size), options):
        data = field.encode("utf-8")
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()


def default_dir() -> Path:
    """``$CTSGEN_CACHE_DIR`` if set, else ``~/.cache/ctsgen/spirv``."""
    configured = os.environ.get(ENV_VAR)
    return Path(configured) if configured else Path.home() / ".cache" / "ctsgen" / "spirv"


class SpirvCache:
    """SPIR-V modules stored under ``directory`` by key."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory if directory is not None else default_dir()

    def path(self, key: str) -> Path:
        """Where the entry for ``key`` lives."""
        return self.directory / key[:2] / f"{key}.spv"

    def get(self, key: str) -> bytes | None:
        """The cached SPIR-V for ``key``, or None if absent, unreadable or corrupt."""
        try:
            blob = self.path(key).read_bytes()
        except OSError:
            return None
        digest_end = len(HEADER) + hashlib.sha256().digest_size
        spirv = blob[digest_end:]
        if (
            blob[: len(HEADER)] != HEADER
            or blob[len(HEADER) : digest_end] != hashlib.sha256(spirv).digest()
            or len(spirv) % 4
            or spirv[:4] != _SPIRV_MAGIC
        ):
            return None
        return spirv

    def put(self, key: str, spirv: bytes) -> None:
        """Store ``spirv`` atomically; a cache that cannot be written only warns."""
        target = self.path(key)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, temp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=".spv")
        except OSError as exc:
            warnings.warn(_unwritable(target, exc), RuntimeWarning, stacklevel=2)
            return
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(HEADER + hashlib.sha256(spirv).digest() + spirv)
            os.replace(temp, target)
        except OSError as exc:
            Path(temp).unlink(missing_ok=True)
            warnings.warn(_unwritable(target, exc), RuntimeWarning, stacklevel=2)


def _unwritable(target: Path, exc: OSError) -> str:
    return (
        f"SPIR-V cache entry {target} could not be written ({exc}); compiling without a cache "
        f"-> fix: set {ENV_VAR} to a writable directory"
    )
