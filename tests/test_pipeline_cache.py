"""The persistent pipeline cache: only a blob whose VkPipelineCacheHeaderVersionOne names this
device (vendorID, deviceID, pipelineCacheUUID) is handed to the driver, a new driver version
starts afresh and removes the old file, and writes are whole or absent."""

from __future__ import annotations

import struct
from pathlib import Path

from ctsgen.backends.pipeline_cache import HEADER_SIZE, CacheIdentity, PipelineCacheFile, Publisher, header_mismatch

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


def test_a_stale_file_that_cannot_be_removed_is_left_and_the_cache_opens(tmp_path: Path) -> None:
    """A directory with an old driver's file name cannot be unlinked: opening goes on without it."""
    old = PipelineCacheFile(CacheIdentity(H100.vendorID, H100.deviceID, 1, bytes(16)), tmp_path)
    old.path.mkdir()
    f = PipelineCacheFile(H100, tmp_path)
    f.save(blob())
    assert f.load() == blob() and old.path.is_dir()


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


class FakeProcess:
    """A process's VkPipelineCache as a set of pipeline names; the blob's body lists them."""

    def __init__(self, file: PipelineCacheFile, clock: list[float], every_s: float = 10.0) -> None:
        self.pipelines: set[str] = set()
        self.publisher = Publisher(file, self.merged, every_s=every_s, clock=lambda: clock[0])

    def merged(self, on_disk: bytes) -> bytes:
        return blob(body=",".join(sorted(names(on_disk) | self.pipelines)).encode())

    def build(self, name: str) -> None:
        self.pipelines.add(name)
        self.publisher.built()


def names(data: bytes) -> set[str]:
    body = data[HEADER_SIZE:].decode()
    return set(body.split(",")) if body else set()


def test_a_growing_cache_is_published_every_few_seconds_not_only_at_close(tmp_path: Path) -> None:
    """Nothing is published before pipelines were built or before ``every_s`` has passed; then one
    publish carries every pipeline built so far; a process stopped at a deadline without closing
    loses only what it built since its last publish."""
    clock = [0.0]
    f = PipelineCacheFile(H100, tmp_path)
    p = FakeProcess(f, clock)
    clock[0] = 30.0
    assert not p.publisher.due()  # nothing built: nothing to publish however long it ran
    p.build("a")
    p.build("b")
    assert p.publisher.maybe_publish()
    p.publisher._thread.join()
    assert names(f.load()) == {"a", "b"} and p.publisher.unpublished == 0
    p.build("c")
    clock[0] = 35.0
    assert not p.publisher.maybe_publish()  # 5 s since the last publish
    clock[0] = 40.0
    assert p.publisher.maybe_publish()
    p.publisher._thread.join()
    p.build("d")  # then the process is stopped: d, built since, is the only loss
    assert names(f.load()) == {"a", "b", "c"}


def test_processes_publishing_as_they_go_lose_none_of_each_others_pipelines(tmp_path: Path) -> None:
    """Two processes of one device publish in turns as they build; each merges what the other
    published, so the file ends with both's pipelines, and close publishes only the rest."""
    clock = [0.0]
    f = PipelineCacheFile(H100, tmp_path)
    one, two = FakeProcess(f, clock), FakeProcess(f, clock)
    for t in range(1, 7):
        clock[0] = 10.0 * t
        one.build(f"one-{t}")
        two.build(f"two-{t}")
        for p in (one, two) if t % 2 else (two, one):
            assert p.publisher.maybe_publish()
            p.publisher._thread.join()
    assert names(f.load()) == {f"{w}-{t}" for w in ("one", "two") for t in range(1, 7)}
    one.build("one-last")
    one.publisher.finish()  # at close: the one pipeline left
    two.publisher.finish()  # nothing left: no publish
    assert (one.publisher.published, two.publisher.published) == (7, 6)
    assert "one-last" in names(f.load()) and len(names(f.load())) == 13


def test_a_publish_that_cannot_be_written_is_only_a_missing_cache(tmp_path: Path) -> None:
    """A driver's blob the file refuses (lavapipe's short header) or an unwritable directory: the
    publish writes nothing, and the process goes on."""
    (tmp_path / "file").write_text("x")
    clock = [20.0]
    p = FakeProcess(PipelineCacheFile(H100, tmp_path / "file" / "pipelines"), clock)
    p.build("a")
    assert not p.publisher.publish() and p.publisher.published == 0
    q = Publisher(PipelineCacheFile(H100, tmp_path), lambda on_disk: blob()[:20], clock=lambda: 20.0)
    q.built()
    assert not q.publish() and not PipelineCacheFile(H100, tmp_path).path.exists()
