"""Fixtures for tests/ (the Hypothesis profiles and the session's SPIR-V cache are in ../conftest.py)."""

from __future__ import annotations

import shutil
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def stop_handlers_left_as_found() -> Iterator[None]:
    """Every test leaves the SIGINT and SIGTERM handlers as it found them (restored, and the test
    fails naming them, if not): a handler one test left behind changed what a later test's
    Ctrl-C did (a CI run: tests/test_throughput.py saw no KeyboardInterrupt)."""
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    yield
    left = {s: h for s, h in ((s, signal.getsignal(s)) for s in before) if h != before[s]}
    for s in left:
        signal.signal(s, before[s])
    if left:
        pytest.fail("left signal handlers behind: " + ", ".join(
            f"{signal.Signals(s).name} {h!r} (was {before[s]!r})" for s, h in left.items()))


@pytest.fixture
def session_spirv_cache(spirv_cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Compile into a cache private to this test session (never the user's ~/.cache)."""
    monkeypatch.setenv("CTSGEN_CACHE_DIR", str(spirv_cache_dir))
    yield spirv_cache_dir


@pytest.fixture(scope="module")
def pristine(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, spirv_cache_dir: Path) -> Path:
    """One tensor-layout pack per test module, of the module's ``PACK_COUNT`` cases drawn with its
    ``PACK_SEED`` (tests that change a pack copy it first: the ``pack`` fixture)."""
    from ctsgen.cli import main

    count, seed = getattr(request.module, "PACK_COUNT", 24), getattr(request.module, "PACK_SEED", 1)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CTSGEN_CACHE_DIR", str(spirv_cache_dir))
        out = tmp_path_factory.mktemp("packs") / "pristine"
        assert main(["generate", "--count", str(count), "--seed", str(seed), "--out", str(out)]) == 0
    return out


@pytest.fixture
def pack(pristine: Path, tmp_path: Path, session_spirv_cache: Path) -> Path:
    """A private copy of the module's pristine pack."""
    dst = tmp_path / "pack"
    shutil.copytree(pristine, dst)
    return dst


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on (bound once by the OS, then released)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def require_redis(what: str, fix: str) -> None:
    """Fail (in CI: the env var CI is set) or skip (elsewhere) a test that needs ``what``."""
    import os

    why = f"{what} is not installed -> {fix}"
    if os.environ.get("CI"):
        pytest.fail(why)  # CI must run the Redis tests for real, never skip them
    pytest.skip(why)


@pytest.fixture
def redis_package() -> None:
    """The redis client package (``pip install 'ctsgen[redis]'``)."""
    import importlib.util

    if importlib.util.find_spec("redis") is None:
        require_redis("the redis Python package", "pip install -e '.[plot,redis]'")


class RedisServer:
    """A real ``redis-server`` on 127.0.0.1, in memory only, owned by one test."""

    def __init__(self, tmp: Path) -> None:
        import shutil
        import subprocess
        import time

        exe = shutil.which("redis-server")
        if exe is None:
            require_redis("redis-server", "apt-get install -y redis-server (Debian's package)")
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc = subprocess.Popen([exe, "--bind", "127.0.0.1", "--port", str(self.port), "--save", "",
                                      "--appendonly", "no", "--dir", str(tmp)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        import redis

        self.client = redis.Redis.from_url(self.url, socket_connect_timeout=1)
        deadline = time.monotonic() + 20
        while True:
            try:
                self.client.ping()
                return
            except redis.ConnectionError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"redis-server did not start on port {self.port}") from None
                time.sleep(0.05)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=20)


@pytest.fixture
def redis_server(redis_package: None, tmp_path: Path) -> Iterator[RedisServer]:
    """A fresh ``redis-server`` on a free port, stopped after the test."""
    server = RedisServer(tmp_path)
    try:
        yield server
    finally:
        server.stop()
