"""A persistent ``VkPipelineCache`` blob per device and driver, so pipelines are built once per machine.

Vulkan's "Pipeline Cache" chapter: the data ``vkGetPipelineCacheData`` returns begins with a
``VkPipelineCacheHeaderVersionOne`` (uint32 headerSize, uint32 headerVersion = 1, uint32 vendorID,
uint32 deviceID, uint8 pipelineCacheUUID[VK_UUID_SIZE]), and an implementation given initial data
that does not match it "will ignore" it. ctsgen does not lean on that: a blob is used only when its
header names this device's vendorID, deviceID and pipelineCacheUUID, and it is kept in a file whose
name also carries the driverVersion, so a driver update starts a fresh cache and the stale one is
removed. The files live beside the SPIR-V cache (``~/.cache/ctsgen/pipelines``, or next to
``$CTSGEN_CACHE_DIR``): per machine, never in the user's working directory. Writes are atomic
(temp file + ``os.replace``), so a torn or foreign file is never handed to the driver. Processes
sharing a device publish under a lock (:meth:`PipelineCacheFile.locked`), each merging the blob on
disk into its own first (``vkMergePipelineCaches``), so that processes publishing at once do not
overwrite each other's builds, the last whole cache winning (docs/validation.md, "A 100,000-case
suite").

A process publishes as its cache grows, not only when it closes (:class:`Publisher`): at most every
``PUBLISH_EVERY_S`` seconds once it has built pipelines, from a thread of its own, so a process
stopped at a deadline loses at most that many seconds of builds, and its close has only the rest to
write. A publish never touches the process's own cache: the blob on disk seeds a fresh cache, the
process's cache is merged into it (vkMergePipelineCaches reads its source caches; only its
``dstCache`` needs external synchronisation, and pipeline creation uses a cache under the
implementation's own lock, Vulkan's "Pipeline Cache" chapter), and that merge is what is saved.

A close never waits for the lock (:meth:`Publisher.finish`): a publish in flight stops waiting for
it, and where pipelines were built since the last publish, the process's own cache's data (all of
it: Vulkan gives no less), unmerged, is written as a *part*, a file of its own beside the main one
(``<main stem>.part-<pid>-<random tag>.bin``: the tag keeps apart processes of one pid, such as
containers sharing the directory), atomic as the main file is. Parts are driver-specific as the main file is: a driver update removes
them with it. A process opening the cache seeds it from the main blob, then merges each part whose
header matches into it (``vkMergePipelineCaches``, one source cache per part; a mismatched part is
ignored as a mismatched main blob is). Parts that grew its cache count as unpublished work: its
first publish under the lock writes a main blob that holds them, and then removes them; parts that
added nothing (the main blob already holds their pipelines) are removed at once. A part is removed
only once another file holds its pipelines (the main blob, or the part of a process that folded it),
so processes closing at once lose no pipeline, and none waits for another's merge.
"""

from __future__ import annotations

import fcntl
import os
import secrets
import struct
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from ctsgen.errors import UserError
from ctsgen.toolchain.cache import default_dir

#: Set to 0 to build every pipeline without the persistent pipeline cache (cold-build timings).
PIPELINE_CACHE_ENV = "CTSGEN_PIPELINE_CACHE"


def pipeline_cache_enabled() -> bool:
    """``CTSGEN_PIPELINE_CACHE``: 1 (the default) uses the cache, 0 builds every pipeline cold;
    any other value is refused, not read as either."""
    value = os.environ.get(PIPELINE_CACHE_ENV, "1")
    if value not in ("0", "1"):
        raise UserError(f"{PIPELINE_CACHE_ENV}={value!r} -> set it to 1 (use the pipeline cache, the default) or "
                        "0 (build every pipeline cold), or unset it")
    return value == "1"


#: VK_PIPELINE_CACHE_HEADER_VERSION_ONE and the size of VkPipelineCacheHeaderVersionOne.
HEADER_VERSION_ONE = 1
HEADER_SIZE = 16 + 16
UUID_SIZE = 16


@dataclass(frozen=True)
class CacheIdentity:
    """What a pipeline cache blob must have been made by (VkPhysicalDeviceProperties)."""

    vendorID: int
    deviceID: int
    driverVersion: int
    pipelineCacheUUID: bytes

    def file_name(self) -> str:
        return (f"{self.vendorID:04x}-{self.deviceID:04x}-driver{self.driverVersion:08x}-"
                f"{self.pipelineCacheUUID.hex()}.bin")


def default_cache_dir() -> Path:
    """``pipelines`` beside the SPIR-V cache (see :func:`ctsgen.toolchain.cache.default_dir`)."""
    return default_dir().parent / "pipelines"


def header_mismatch(blob: bytes, identity: CacheIdentity) -> str | None:
    """Why ``blob`` cannot seed a cache for ``identity`` (None: its header matches)."""
    if len(blob) < HEADER_SIZE:
        return f"{len(blob)} bytes, shorter than the {HEADER_SIZE}-byte header"
    size, version, vendor, device = struct.unpack_from("<4I", blob)
    uuid = blob[16:16 + UUID_SIZE]
    if size < HEADER_SIZE or size > len(blob):
        return f"headerSize {size} is not within {HEADER_SIZE}..{len(blob)}"
    if version != HEADER_VERSION_ONE:
        return f"headerVersion {version}, not VK_PIPELINE_CACHE_HEADER_VERSION_ONE"
    if (vendor, device) != (identity.vendorID, identity.deviceID):
        return f"made for vendorID {vendor:#x} deviceID {device:#x}"
    if uuid != identity.pipelineCacheUUID:
        return f"made for pipelineCacheUUID {uuid.hex()}"
    return None


class PipelineCacheFile:
    """The cache file of one device and driver under ``directory``."""

    def __init__(self, identity: CacheIdentity, directory: Path | None = None) -> None:
        self.identity = identity
        self.directory = directory if directory is not None else default_cache_dir()
        self.path = self.directory / identity.file_name()

    def load(self) -> bytes:
        """The stored blob if its header matches this device, else b"" (an empty cache). Files of
        the same vendor and device from another driver version or UUID are removed: they can
        never be used again."""
        self._remove_stale()
        try:
            blob = self.path.read_bytes()
        except OSError:
            return b""
        return b"" if header_mismatch(blob, self.identity) else blob

    @contextmanager
    def locked(self, cancel: threading.Event | None = None) -> Iterator[bytes | None]:
        """Hold the file's lock (``<name>.lock`` beside it, flock: concurrent publishers take
        turns) and give the blob on disk now (:meth:`load`), for the caller to merge into its own
        before it saves. Where the lock cannot be had, the blob is given without it: a lost
        merge only costs builds. Where ``cancel`` is set before the lock is had, None is given
        instead, without the lock (a closing process stops waiting for it)."""
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            handle = open(self.path.with_suffix(".lock"), "ab")  # noqa: SIM115 (closed below)
        except OSError:
            handle = None
        try:
            if handle is not None and not _lock(handle, cancel):
                yield None
            else:
                yield self.load()
        finally:
            if handle is not None:
                handle.close()  # releases the lock

    def save(self, blob: bytes) -> bool:
        """Publish ``blob`` atomically; False (nothing written) when it is not a cache for this
        device or the directory cannot be written: a cache is an optimisation, never a failure."""
        return not header_mismatch(blob, self.identity) and self._write(blob, self.path)

    def save_part(self, blob: bytes) -> Path | None:
        """Write ``blob`` atomically to a part of this process's own (no lock: no other process
        writes that name), or None where it is not a cache for this device or cannot be written."""
        if header_mismatch(blob, self.identity):
            return None
        part = self.directory / f"{self._part_prefix()}{os.getpid()}-{secrets.token_hex(4)}.bin"
        return part if self._write(blob, part) else None

    def parts(self) -> Iterator[tuple[Path, bytes]]:
        """This driver's parts whose header matches this device, one at a time (each is as large as
        a whole cache); a part that cannot be read or does not match is passed over."""
        try:
            found = sorted(self.directory.glob(self._part_prefix() + "*.bin"))
        except OSError:
            return
        for path in found:
            try:
                blob = path.read_bytes()
            except OSError:  # gone meanwhile (another process folded it), a directory, unreadable
                continue
            if not header_mismatch(blob, self.identity):
                yield path, blob

    def remove(self, paths: list[Path]) -> None:
        """Remove files this cache owns (folded parts, another driver's files); one already gone
        (another process folded it) or that cannot be removed (a directory, a read-only directory)
        is left: a part left is folded again by the next process, at no loss."""
        for path in paths:
            try:
                path.unlink(missing_ok=True)
            except OSError:
                pass

    def _part_prefix(self) -> str:
        return self.path.stem + ".part-"

    def _write(self, blob: bytes, path: Path) -> bool:
        """Write ``blob`` to ``path`` atomically (temp file + ``os.replace``): whole or not at all."""
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd, temp = tempfile.mkstemp(dir=self.directory, prefix=".tmp-", suffix=".bin")
        except OSError:
            return False
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(blob)
            os.replace(temp, path)
        except OSError:
            Path(temp).unlink(missing_ok=True)
            return False
        return True

    def _remove_stale(self) -> None:
        """Remove this vendor's and device's files of another driver version or UUID, parts
        included; this driver's main file, lock and parts stay."""
        prefix = f"{self.identity.vendorID:04x}-{self.identity.deviceID:04x}-"
        own = {self.path.name, self.path.with_suffix(".lock").name}
        try:
            stale = [p for p in self.directory.glob(prefix + "*") if p.suffix in (".bin", ".lock")
                     and p.name not in own and not p.name.startswith(self._part_prefix())]
        except OSError:
            return
        self.remove(stale)


#: Seconds between polls for the file's lock, where a closing process may stop the wait.
LOCK_POLL_S = 0.05


def _lock(handle: IO[bytes], cancel: threading.Event | None) -> bool:
    """Take ``handle``'s exclusive flock; False where ``cancel`` was set before it was had. Where
    the file system gives no locks (an error other than "held by another"), True without one."""
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX if cancel is None else fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if cancel is not None and cancel.wait(LOCK_POLL_S):
                return False
        except OSError:
            return True


#: Seconds between a process's publishes of a growing cache (at most: only once it built pipelines).
PUBLISH_EVERY_S = 10.0


class Publisher:
    """When and how a process publishes its cache as it grows (see the module docstring).

    The backend calls :meth:`built` for each pipeline it builds and :meth:`maybe_publish` between
    dispatches: once pipelines were built since the last publish and ``every_s`` has passed, a
    thread takes the file's lock and saves ``merged(on_disk)``, the process's cache merged with
    the blob on disk (b"": nothing to save). :meth:`finish` (at close) stops a publish waiting for
    the lock and writes ``own()``, the process's cache alone, to a part, if anything is left."""

    def __init__(self, file: PipelineCacheFile, merged: Callable[[bytes], bytes], own: Callable[[], bytes],
                 every_s: float = PUBLISH_EVERY_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.file, self.merged, self.own, self.every_s, self.clock = file, merged, own, every_s, clock
        self.unpublished = 0  # pipelines built (or parts folded) since the last publish had the lock
        self.published = 0  # publishes that wrote the main file
        self.saved_bytes = 0
        self.part_bytes = 0  # the size of the part finish() wrote
        self._folded: list[Path] = []  # parts folded into the cache that no publish carried yet
        self._last = clock()
        self._thread: threading.Thread | None = None
        self._closing = threading.Event()  # set by finish(): a publish waiting for the lock gives up
        self._count = threading.Lock()  # built() and a publish's start may run on two threads

    def built(self, n: int = 1) -> None:
        with self._count:
            self.unpublished += n

    def folded(self, parts: list[Path], grew: bool) -> None:
        """``parts`` were merged into the process's cache as it opened. Where they grew it, they
        count as unpublished work, removed once a publish or this process's part holds them;
        where they did not, the main blob it was seeded from holds their pipelines: removed now."""
        if not grew:
            self.file.remove(parts)
        elif parts:
            with self._count:
                self._folded += parts
                self.unpublished += len(parts)

    def due(self) -> bool:
        return bool(self.unpublished) and self.clock() - self._last >= self.every_s \
            and (self._thread is None or not self._thread.is_alive())

    def maybe_publish(self) -> bool:
        """Start a publish on a thread of its own when one is due; whether one started."""
        if not self.due():
            return False
        self._thread = threading.Thread(target=self.publish, name="pipeline-cache-publish", daemon=True)
        self._thread.start()
        return True

    def publish(self) -> bool:
        """Publish now, in this thread: whether the main file was written. Nothing is published
        once :meth:`finish` began (what is left goes to a part)."""
        with self.file.locked(self._closing) as on_disk:
            if on_disk is None:
                return False
            with self._count:  # builds from now on wait for the next publish
                self.unpublished, self._last = 0, self.clock()
                carried, self._folded = self._folded, []
            blob = self.merged(on_disk)
            ok = bool(blob) and self.file.save(blob)
        if not ok:
            with self._count:
                self._folded += carried
            return False
        self.file.remove(carried)
        self.published += 1
        self.saved_bytes = len(blob)
        return True

    def finish(self) -> None:
        """Stop a publish waiting for the lock (one already merging ends first), then write what
        is left, if anything, to a part of this process's own: no lock, no merge."""
        self._closing.set()
        if self._thread is not None:
            self._thread.join()
        if not self.unpublished:
            return
        blob = self.own()
        if self.file.save_part(blob) is not None:
            self.part_bytes = len(blob)
            with self._count:
                carried, self._folded = self._folded, []
            self.file.remove(carried)


def fold_parts(file: PipelineCacheFile, publisher: Publisher, merge: Callable[[bytes], bool],
               size: Callable[[], int]) -> int:
    """Merge each of ``file``'s valid parts into the process's cache just seeded from the main blob
    (``merge(part)``: whether the driver merged it; ``size()``: the cache's data size), hand them to
    ``publisher`` (:meth:`Publisher.folded`), and give how many were merged."""
    before = size()
    merged = [path for path, part in file.parts() if merge(part)]
    publisher.folded(merged, grew=size() > before)
    return len(merged)
