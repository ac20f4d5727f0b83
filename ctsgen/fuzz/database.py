"""The fuzzer's example database: a directory, or Redis shared between hosts.

``open_database("redis://HOST:PORT[/DB]", local=DIR)`` is Hypothesis's
:class:`~hypothesis.extra.redis.RedisExampleDatabase`, wrapped so that a
campaign never stops for it and never loses a finding:

- every save and delete also goes to the local directory database ``local``
  (a campaign passes a directory inside the campaign directory), so each
  failing example is on local disk whatever happens to the server;
- when the server cannot be reached, at the start or at any later call,
  one line says so (``on_fallback``) and the database goes on with the
  local directory alone; fetches then read what was saved there.

A directory spec is Hypothesis's :class:`DirectoryBasedExampleDatabase`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from pathlib import Path

from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase

from ctsgen.toolchain import ToolchainError

#: Seconds to wait for the Redis server to connect or answer before falling back.
REDIS_TIMEOUT_S = 3.0


def _warn(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


class FallbackDatabase(ExampleDatabase):
    """A shared database mirrored into a local one; the local one alone once the shared one fails.

    ``shared`` may be None (it was down at the start). Errors of the shared
    database's client (``errors``) switch it off for the rest of the process,
    with one ``on_fallback`` line.
    """

    def __init__(self, shared: ExampleDatabase | None, local: ExampleDatabase, describe: str,
                 errors: tuple[type[BaseException], ...],
                 on_fallback: Callable[[str], None] = _warn) -> None:
        super().__init__()
        self.shared, self.local, self.describe = shared, local, describe
        self._errors, self._on_fallback = errors, on_fallback

    @property
    def using_shared(self) -> bool:
        return self.shared is not None

    def _fail(self, exc: BaseException) -> None:
        self.shared = None
        self._on_fallback(f"ctsgen: warning: example database {self.describe} is unreachable "
                          f"({type(exc).__name__}: {exc}); going on with the local database {self.local!r}")

    def _shared(self, method: str, *args: bytes) -> object:
        if self.shared is None:
            return None
        try:
            result = getattr(self.shared, method)(*args)
            return list(result) if method == "fetch" else result
        except self._errors as exc:
            self._fail(exc)
            return None

    def fetch(self, key: bytes) -> Iterable[bytes]:
        seen = set()
        for value in [*(self._shared("fetch", key) or []), *self.local.fetch(key)]:
            if value not in seen:
                seen.add(value)
                yield value

    def save(self, key: bytes, value: bytes) -> None:
        self.local.save(key, value)  # first: a finding is on disk before the network is tried
        self._shared("save", key, value)

    def delete(self, key: bytes, value: bytes) -> None:
        self.local.delete(key, value)
        self._shared("delete", key, value)

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        self.local.move(src, dest, value)
        self._shared("move", src, dest, value)

    def __repr__(self) -> str:
        return f"FallbackDatabase({self.describe}, local={self.local!r})"


class WriteOnlyDatabase(ExampleDatabase):
    """Saves, deletes and moves go to ``inner``; fetches find nothing.

    The fuzz loop's rounds after a failure use it: a stored failure would
    otherwise replay at once in every new round, but what later rounds find
    must still reach the shared database (and the next run, or host).
    """

    def __init__(self, inner: ExampleDatabase) -> None:
        super().__init__()
        self.inner = inner

    def fetch(self, key: bytes) -> Iterable[bytes]:
        return iter(())

    def save(self, key: bytes, value: bytes) -> None:
        self.inner.save(key, value)

    def delete(self, key: bytes, value: bytes) -> None:
        self.inner.delete(key, value)

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        self.inner.move(src, dest, value)

    def __repr__(self) -> str:
        return f"WriteOnlyDatabase({self.inner!r})"


def open_redis(url: str, local: str | Path, on_fallback: Callable[[str], None] = _warn) -> FallbackDatabase:
    """Hypothesis's Redis database at ``url``, mirrored into the directory ``local``."""
    try:
        import redis  # local: optional
        from hypothesis.extra.redis import RedisExampleDatabase  # local: optional
    except ImportError:
        raise ToolchainError(f"--database {url} needs the redis package -> pip install 'ctsgen[redis]'") from None
    errors = (redis.RedisError, OSError)
    client = redis.Redis.from_url(url, socket_connect_timeout=REDIS_TIMEOUT_S, socket_timeout=REDIS_TIMEOUT_S)
    db = FallbackDatabase(None, DirectoryBasedExampleDatabase(str(local)), url, errors, on_fallback)
    try:
        client.ping()
    except errors as exc:
        db._fail(exc)
        return db
    db.shared = RedisExampleDatabase(client)
    return db


def open_database(spec: str | None, local: str | Path | None = None,
                  on_fallback: Callable[[str], None] = _warn) -> ExampleDatabase | None:
    """None for no database, :func:`open_redis` for ``redis://`` URLs (mirrored into
    ``local``, default ``.ctsgen/fuzz-db``), else a directory database at ``spec``."""
    if not spec:
        return None
    if spec.startswith(("redis://", "rediss://", "unix://")):
        return open_redis(spec, local or ".ctsgen/fuzz-db", on_fallback)
    return DirectoryBasedExampleDatabase(spec)
