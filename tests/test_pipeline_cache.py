"""The persistent pipeline cache: only a blob whose VkPipelineCacheHeaderVersionOne names this
device (vendorID, deviceID, pipelineCacheUUID) is handed to the driver, a new driver version
starts afresh and removes the old file, and writes are whole or absent."""

from __future__ import annotations

import struct
from pathlib import Path

from ctsgen.backends.pipeline_cache import HEADER_SIZE, CacheIdentity, PipelineCacheFile, header_mismatch

H100 = CacheIdentity(vendorID=0x10DE, deviceID=0x2330, driverVersion=0x91027C00, pipelineCacheUUID=bytes(range(16)))


def blob(vendor: int = 0x10DE, device: int = 0x2330, uuid: bytes = bytes(range(16)), version: int = 1,
         size: int = HEADER_SIZE, body: bytes = b"driver data") -> bytes:
    return struct.pack("<4I", size, version, vendor, device) + uuid + body


def test_the_header_must_name_this_device() -> None:
    assert header_mismatch(blob(), H100) is None
    assert "vendorID 0x1002" in header_mismatch(blob(vendor=0x1002), H100)
    assert "deviceID 0x2331" in header_mismatch(blob(device=0x2331), H100)
    assert "pipelineCacheUUID" in header_mismatch(blob(uuid=bytes(16)), H100)
    assert "headerVersion 2" in header_mismatch(blob(version=2), H100)
    assert "headerSize 8" in header_mismatch(blob(size=8), H100)
    assert "shorter" in header_mismatch(blob()[:20], H100)


def test_a_saved_cache_loads_back_and_a_foreign_one_is_not_written(tmp_path: Path) -> None:
    f = PipelineCacheFile(H100, tmp_path)
    assert f.load() == b""  # nothing yet: an empty cache
    assert f.save(blob())
    assert f.load() == blob()
    assert not f.save(blob(uuid=bytes(16)))  # another device's data never reaches the file
    assert f.load() == blob()
    assert [p.name for p in tmp_path.iterdir()] == [H100.file_name()]  # no temp file left behind


def test_a_corrupted_file_is_an_empty_cache(tmp_path: Path) -> None:
    f = PipelineCacheFile(H100, tmp_path)
    f.path.write_bytes(blob(device=0x1234))
    assert f.load() == b""


def test_a_driver_update_starts_afresh_and_removes_the_old_file(tmp_path: Path) -> None:
    old = PipelineCacheFile(H100, tmp_path)
    old.save(blob())
    other_gpu = PipelineCacheFile(CacheIdentity(0x10DE, 0x2335, 1, bytes(16)), tmp_path)
    other_gpu.save(blob(device=0x2335, uuid=bytes(16)))
    new = PipelineCacheFile(CacheIdentity(0x10DE, 0x2330, 0x91027D00, bytes(range(16))), tmp_path)
    assert new.load() == b""
    assert not old.path.exists()  # the old driver's cache can never be used again
    assert other_gpu.path.exists()  # another GPU's cache on the same machine stays


def test_an_unwritable_directory_is_only_a_missing_cache(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    f = PipelineCacheFile(H100, tmp_path / "file" / "pipelines")
    assert f.load() == b"" and not f.save(blob())


def test_publishers_take_turns_and_each_sees_what_the_last_one_published(tmp_path: Path) -> None:
    """Two processes' publishes are serialised by the lock, and the second is given the first's
    blob to merge (before, the last whole cache won and the other's pipelines were lost)."""
    import threading
    import time

    first, second = PipelineCacheFile(H100, tmp_path), PipelineCacheFile(H100, tmp_path)
    inside, seen = threading.Event(), []

    def publish_slowly() -> None:
        with first.locked() as on_disk:
            assert on_disk == b""
            inside.set()
            time.sleep(0.3)
            first.save(blob(body=b"first"))

    writer = threading.Thread(target=publish_slowly)
    writer.start()
    inside.wait()
    with second.locked() as on_disk:  # waits for the first publisher's save
        seen.append(on_disk)
        second.save(blob(body=b"first+second"))
    writer.join()
    assert seen == [blob(body=b"first")]
    assert second.load() == blob(body=b"first+second")


def test_a_driver_update_removes_the_old_lock_file_too(tmp_path: Path) -> None:
    old = PipelineCacheFile(H100, tmp_path)
    with old.locked():
        old.save(blob())
    new_identity = CacheIdentity(H100.vendorID, H100.deviceID, H100.driverVersion + 1, H100.pipelineCacheUUID)
    new = PipelineCacheFile(new_identity, tmp_path)
    with new.locked() as on_disk:
        assert on_disk == b""
    assert sorted(p.name for p in tmp_path.iterdir()) == [new.path.with_suffix(".lock").name]
