"""The persistent pipeline cache: only a blob whose VkPipelineCacheHeaderVersionOne names this
device (vendorID, deviceID, pipelineCacheUUID) is handed to the driver, a new driver version
starts afresh and removes the old file, and writes are whole or absent."""

from __future__ import annotations

import struct
import threading
from pathlib import Path

from ctsgen.backends.pipeline_cache import (HEADER_SIZE, CacheIdentity, PipelineCacheFile, Publisher, fold_parts,
                                           header_mismatch)

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
    """A process's VkPipelineCache as a set of pipeline names; the blob's body lists them. Opening
    seeds the set from the main blob, then folds every part into it (``fold_parts``)."""

    def __init__(self, file: PipelineCacheFile, clock: list[float], every_s: float = 10.0) -> None:
        self.publisher = Publisher(file, self.merged, self.own, every_s=every_s, clock=lambda: clock[0])
        self.pipelines: set[str] = names(file.load())
        self.folded = fold_parts(file, self.publisher, self.fold, lambda: len(self.pipelines))

    def merged(self, on_disk: bytes) -> bytes:
        return blob(body=",".join(sorted(names(on_disk) | self.pipelines)).encode())

    def own(self) -> bytes:
        return blob(body=",".join(sorted(self.pipelines)).encode())

    def fold(self, part: bytes) -> bool:
        self.pipelines |= names(part)
        return True

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
    published, so the file ends with both's pipelines, and close writes only its own cache to a part."""
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
    one.publisher.finish()  # at close: the one pipeline left, in a part
    two.publisher.finish()  # nothing left: no part
    assert (one.publisher.published, two.publisher.published) == (6, 6)
    assert part_names(f) == [{f"one-{t}" for t in range(1, 7)} | {"one-last"}]  # its own cache, unmerged
    assert len(names(f.load()).union(*part_names(f))) == 13


def test_a_publish_that_cannot_be_written_is_only_a_missing_cache(tmp_path: Path) -> None:
    """A driver's blob the file refuses (lavapipe's short header) or an unwritable directory: the
    publish writes nothing, and the process goes on."""
    (tmp_path / "file").write_text("x")
    clock = [20.0]
    p = FakeProcess(PipelineCacheFile(H100, tmp_path / "file" / "pipelines"), clock)
    p.build("a")
    assert not p.publisher.publish() and p.publisher.published == 0
    q = Publisher(PipelineCacheFile(H100, tmp_path), lambda on_disk: blob()[:20], bytes, clock=lambda: 20.0)
    q.built()
    assert not q.publish() and not PipelineCacheFile(H100, tmp_path).path.exists()


def part_names(file: PipelineCacheFile) -> list[set[str]]:
    return [names(part) for _, part in file.parts()]


def finishes_without_the_lock(publisher: Publisher) -> bool:
    """Run ``publisher.finish()`` while the caller holds the file's lock (until after this returns,
    so a finish that waited for it would still be running): whether it returned."""
    closer = threading.Thread(target=publisher.finish, daemon=True)
    closer.start()
    closer.join(timeout=10.0)  # a hang guard, not a speed target
    return not closer.is_alive()


def test_a_close_writes_its_own_cache_to_a_part_without_the_lock(tmp_path: Path) -> None:
    """Processes closing at once no longer queue on the lock to merge: each writes its own cache,
    unmerged, to a part of its own (before, finish waited for the lock, and a process stopped while
    waiting lost what it built since its last publish)."""
    f = PipelineCacheFile(H100, tmp_path)
    p = FakeProcess(f, [0.0])
    p.build("a")
    p.build("b")
    with f.locked():  # another process publishing
        assert finishes_without_the_lock(p.publisher)
    assert part_names(f) == [{"a", "b"}] and not f.path.exists()
    assert p.publisher.part_bytes == len(p.own())


def test_a_close_stops_a_publish_waiting_for_the_lock_and_writes_a_part(tmp_path: Path) -> None:
    """A periodic publish queued on the lock when the process closes gives up the wait; its
    pipelines and those built since go to the part, and nothing is published after the lock frees."""
    clock = [0.0]
    f = PipelineCacheFile(H100, tmp_path)
    p = FakeProcess(f, clock)
    p.build("a")
    clock[0] = 10.0
    with f.locked():
        assert p.publisher.maybe_publish()  # its thread now waits for the lock
        p.build("b")
        assert finishes_without_the_lock(p.publisher)
    assert part_names(f) == [{"a", "b"}] and not f.path.exists() and p.publisher.published == 0


def test_the_next_process_folds_every_part_and_its_first_publish_removes_them(tmp_path: Path) -> None:
    clock = [0.0]
    f = PipelineCacheFile(H100, tmp_path)
    assert f.save(blob(body=b"main"))
    one, two, late = FakeProcess(f, clock), FakeProcess(f, clock), FakeProcess(f, clock)
    one.build("one")
    two.build("two")
    one.publisher.finish()
    two.publisher.finish()
    three = FakeProcess(f, clock)
    assert three.folded == 2 and three.pipelines == {"main", "one", "two"}
    assert three.publisher.unpublished == 2  # folded parts are work its first publish owes
    late.build("late")
    late.publisher.finish()  # a part written after three opened
    clock[0] = 10.0
    assert three.publisher.maybe_publish()
    three.publisher._thread.join()
    assert names(f.load()) == {"main", "one", "two"}
    assert part_names(f) == [{"main", "late"}]  # three's folded parts are gone; late's is not
    four = FakeProcess(f, clock)
    assert four.pipelines == {"main", "one", "two", "late"}


def test_parts_the_main_blob_already_holds_are_removed_at_open(tmp_path: Path) -> None:
    f = PipelineCacheFile(H100, tmp_path)
    f.save(blob(body=b"a,b"))
    f.save_part(blob(body=b"a"))
    p = FakeProcess(f, [0.0])
    assert p.folded == 1 and p.publisher.unpublished == 0 and part_names(f) == []


def test_a_process_closing_soon_after_opening_carries_the_parts_it_folded(tmp_path: Path) -> None:
    """A process that closes before its first publish writes a part holding what it folded, and
    removes the folded parts: parts do not pile up however short the runs."""
    f = PipelineCacheFile(H100, tmp_path)
    first = FakeProcess(f, [0.0])
    first.build("a")
    first.publisher.finish()
    second = FakeProcess(f, [0.0])
    second.build("b")
    second.publisher.finish()
    assert part_names(f) == [{"a", "b"}]


def test_two_processes_closing_at_once_lose_nothing(tmp_path: Path) -> None:
    """Both fold the same parts and close together, each removing them after writing its own."""
    f = PipelineCacheFile(H100, tmp_path)
    seed = FakeProcess(f, [0.0])
    seed.build("seed")
    seed.publisher.finish()
    one, two = FakeProcess(f, [0.0]), FakeProcess(f, [0.0])
    one.build("one")
    two.build("two")
    closers = [threading.Thread(target=p.publisher.finish) for p in (one, two)]
    for c in closers:
        c.start()
    for c in closers:
        c.join()
    assert set().union(*part_names(f)) == {"seed", "one", "two"} and len(part_names(f)) == 2
    assert FakeProcess(f, [0.0]).pipelines == {"seed", "one", "two"}


def test_a_part_that_does_not_match_is_ignored_and_a_driver_update_removes_parts(tmp_path: Path) -> None:
    """Empty, truncated, junk and foreign parts are passed over as a bad main blob is, and a
    directory with a part's name is passed over; a new driver version removes the old driver's
    main file and parts alike, and keeps another GPU's."""
    f = PipelineCacheFile(H100, tmp_path)
    f.save(blob(body=b"main"))
    f.save_part(blob(body=b"good"))
    stem = f.path.stem
    bad = {"empty": b"", "truncated": blob(body=b"x")[:20], "junk": bytes(range(256)) * 4,
           "foreign": blob(device=0x2331, body=b"foreign")}
    for tag, data in bad.items():
        (tmp_path / f"{stem}.part-1-{tag}.bin").write_bytes(data)
    (tmp_path / f"{stem}.part-1-dir.bin").mkdir()
    p = FakeProcess(f, [10.0], every_s=0.0)
    assert p.folded == 1 and p.pipelines == {"main", "good"}
    assert p.publisher.publish() and names(f.load()) == {"main", "good"}
    assert len(list(tmp_path.glob(stem + ".part-*"))) == len(bad) + 1  # left alone, never folded
    other_gpu = PipelineCacheFile(CacheIdentity(0x10DE, 0x2335, 1, bytes(16)), tmp_path)
    other_gpu.save_part(blob(device=0x2335, uuid=bytes(16)))
    new = PipelineCacheFile(CacheIdentity(H100.vendorID, H100.deviceID, H100.driverVersion + 1, H100.pipelineCacheUUID),
                            tmp_path)
    assert new.load() == b"" and list(new.parts()) == []
    left = sorted(q.name for q in tmp_path.iterdir())
    assert left == sorted([f"{stem}.part-1-dir.bin"] + [q.name for q in tmp_path.glob(other_gpu.path.stem + "*")])
    assert len(list(other_gpu.parts())) == 1


def test_a_close_into_an_unwritable_directory_writes_nothing_and_raises_nothing(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    f = PipelineCacheFile(H100, tmp_path / "file" / "pipelines")
    p = FakeProcess(f, [0.0])
    p.build("a")
    p.publisher.finish()
    assert p.publisher.part_bytes == 0 and list(f.parts()) == []


def test_a_read_only_cache_directory_is_only_a_missing_cache(tmp_path: Path, monkeypatch) -> None:
    """Nothing can be created or removed there (modelled by raising PermissionError, as chmod does
    not bind root): opening, publishing and closing all go on without an error."""
    f = PipelineCacheFile(H100, tmp_path)
    f.save(blob(body=b"main"))
    f.save_part(blob(body=b"part"))
    PipelineCacheFile(CacheIdentity(H100.vendorID, H100.deviceID, 1, bytes(16)), tmp_path).save(
        blob(uuid=bytes(16)))  # another driver's file, which opening would remove

    def refuse(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Read-only file system")

    monkeypatch.setattr(Path, "unlink", refuse)
    monkeypatch.setattr("tempfile.mkstemp", refuse)
    p = FakeProcess(f, [10.0], every_s=0.0)
    assert p.pipelines == {"main", "part"}
    p.build("a")
    assert not p.publisher.publish()
    p.publisher.finish()
    assert p.publisher.part_bytes == 0
    monkeypatch.undo()
    assert names(f.load()) == {"main"} and part_names(f) == [{"part"}]  # left whole for the next process


def test_a_file_system_without_locks_publishes_without_one(tmp_path: Path, monkeypatch) -> None:
    """flock refused (ENOLCK on some network file systems): the publish goes on unlocked, as the
    lock's rule says, instead of raising."""
    import errno
    import fcntl

    def no_locks(*args: object) -> None:
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(fcntl, "flock", no_locks)
    p = FakeProcess(PipelineCacheFile(H100, tmp_path), [10.0], every_s=0.0)
    p.build("a")
    assert p.publisher.publish() and names(p.publisher.file.load()) == {"a"}
