"""The campaign directory: everything a campaign knows, append-only, one writer per file.

::

    DIR/campaign.json            the configuration (families, backend, devices, seeds, budget)
    DIR/sessions.jsonl           one line per start/resume: when it began and ended (time spent)
    DIR/journal/hH-wK.jsonl      per worker: each round's seed, progress checkpoints, its end
    DIR/findings/hH-wK.jsonl     per worker: every failing case with its bucket
    DIR/samples/hH-wK.jsonl      per worker: the parameters of one case per batch (coverage)
    DIR/buckets/SLUG/            per bug: bucket.json and the smallest repro (a one-case pack)
    DIR/db/                      the local Hypothesis example database (the mirror of redis://)

A worker is named by its host id and its index on the host (``hH-wK``),
so hosts that share a directory (or only a database) never write the same
file, and round seeds (:func:`round_seed`) never overlap. A round's counts
are its ``done`` line, or, for a round cut short by a hard stop (a reboot,
SIGKILL), its last ``progress`` checkpoint; its seed is never used again.
"""

from __future__ import annotations

import fcntl
import json
import math
import os
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from ctsgen.campaign import CampaignError

#: Limits that keep :func:`round_seed` injective.
MAX_HOSTS, MAX_WORKERS, MAX_ROUNDS = 1 << 12, 1 << 8, 1 << 32
CONFIG = "campaign.json"


@dataclass
class CampaignConfig:
    """What a campaign fuzzes, where and how long (``DIR/campaign.json``)."""

    families: list[str]
    backend: str = "reference"
    workers: int = 1
    devices: list[int] = field(default_factory=list)
    host: int = 0
    seed: int = 0
    database: str | None = None  # None: DIR/db; else a directory or redis:// URL shared with other hosts
    round_examples: int = 200
    max_batch: int = 256  # as ctsgen fuzz
    min_batch: int | None = None  # None: ctsgen fuzz's default for the backend (default_min_batch)
    shrink_time_s: float = 60.0
    timeout_s: float = 10.0
    time_s: float | None = None  # the budget of fuzzing time over every session; None: until stopped
    include_hazardous: bool = False
    expect_deviations: list[str] = field(default_factory=list)  # judged as fuzz --expect-deviation judges

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> CampaignConfig:
        """The configuration ``obj`` holds; TypeError names a field that is missing, unknown, of the
        wrong type or out of range."""
        if not isinstance(obj, dict):
            raise TypeError(f"expected an object, got {type(obj).__name__}")
        for f in fields(cls):
            if f.name in obj and not _is(obj[f.name], str(f.type)):
                raise TypeError(f"field {f.name!r} is {obj[f.name]!r}, expected {f.type}")
        config = cls(**obj)
        positive = {"workers": config.workers, "round_examples": config.round_examples,
                    "max_batch": config.max_batch, "timeout_s": config.timeout_s, "time_s": config.time_s}
        for name, value in positive.items():  # a wait of 0 s times out every dispatch; NaN and inf never end
            if value is not None and not (math.isfinite(value) and value > 0):
                raise TypeError(f"field {name!r} is {value!r}, expected a number > 0")
        return config


_TYPES: dict[str, tuple[type, ...]] = {"str": (str,), "int": (int,), "float": (int, float), "bool": (bool,),
                                      "None": (type(None),)}


def _is(value: Any, annotation: str) -> bool:
    """Whether ``value`` (read from JSON) fits a field annotated ``annotation`` (``int``, ``list[str]``,
    ``float | None``...); a JSON boolean is no number."""
    for alternative in annotation.split(" | "):
        if alternative.startswith("list[") and isinstance(value, list):
            if all(_is(v, alternative[5:-1]) for v in value):
                return True
        elif alternative in _TYPES and isinstance(value, _TYPES[alternative]) and \
                (alternative == "bool" or not isinstance(value, bool)):
            return True
    return False


def round_seed(seed: int, host: int, worker: int, round_no: int) -> int:
    """The Hypothesis seed of one round: distinct for every (host, worker, round) of a campaign."""
    if not (0 <= host < MAX_HOSTS and 0 <= worker < MAX_WORKERS and 0 <= round_no < MAX_ROUNDS):
        raise CampaignError(f"host {host}, worker {worker}, round {round_no} out of range -> hosts < {MAX_HOSTS}, "
                            f"workers per host < {MAX_WORKERS}")
    return ((seed * MAX_HOSTS + host) * MAX_WORKERS + worker) * MAX_ROUNDS + round_no


def worker_id(host: int, worker: int) -> str:
    return f"h{host}-w{worker}"


def append(path: Path, *records: dict[str, Any], sync: bool = True) -> None:
    """JSON lines, flushed and (``sync``) synced: a reboot keeps every line written before it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as fh:
        fh.write("".join(json.dumps(r, sort_keys=True) + "\n" for r in records))
        fh.flush()
        if sync:
            os.fsync(fh.fileno())


def read_lines(path: Path) -> list[dict[str, Any]]:
    """The records of a JSON-lines file; a line torn by a hard stop is skipped. A file that is not
    UTF-8 text is a :class:`CampaignError` (one line): it is not the campaign's."""
    out = []
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return out
    lines = raw.split(b"\n")
    for k, line in enumerate(lines):
        try:
            out.append(json.loads(line.decode("utf-8")))
        except UnicodeDecodeError:
            if k == len(lines) - 1:  # the last line, cut by a hard stop inside a character
                continue
            raise CampaignError(f"{path}: line {k + 1} is not UTF-8 text -> this file was not written by "
                                "ctsgen: restore it, or move it out of the campaign directory") from None
        except json.JSONDecodeError:
            continue
    return out


class CampaignDir:
    """Reading and writing one campaign directory (see the module docstring)."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)

    # -- configuration -----------------------------------------------------
    def create(self, config: CampaignConfig) -> None:
        if (self.root / CONFIG).exists():
            raise CampaignError(f"{self.root} already holds a campaign -> `ctsgen campaign resume {self.root}` "
                                "continues it, or choose another directory")
        if self.root.exists() and any(self.root.iterdir()):
            raise CampaignError(f"{self.root} exists and is not empty -> choose a new or empty directory")
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self.root / (CONFIG + ".tmp")
        tmp.write_text(json.dumps(config.to_json(), indent=2, sort_keys=True) + "\n")
        os.replace(tmp, self.root / CONFIG)

    def config(self) -> CampaignConfig:
        try:
            return CampaignConfig.from_json(json.loads((self.root / CONFIG).read_text()))
        except FileNotFoundError:
            raise CampaignError(f"{self.root} is not a campaign directory (no {CONFIG}) -> "
                                f"`ctsgen campaign start {self.root} ...` creates one") from None
        except (json.JSONDecodeError, UnicodeDecodeError, TypeError) as exc:
            raise CampaignError(f"{self.root / CONFIG} is not a campaign configuration ({exc}) -> "
                                "restore it, or start a new campaign") from None

    @property
    def database_dir(self) -> Path:
        return self.root / "db"

    # -- per-worker files --------------------------------------------------
    def journal(self, wid: str) -> Path:
        return self.root / "journal" / f"{wid}.jsonl"

    def findings(self, wid: str) -> Path:
        return self.root / "findings" / f"{wid}.jsonl"

    def samples(self, wid: str) -> Path:
        return self.root / "samples" / f"{wid}.jsonl"

    def bucket_dir(self, key: str) -> Path:
        return self.root / "buckets" / key.replace(":", "-")

    def next_round(self, wid: str) -> int:
        """The first round this worker never began (a round begun and cut short is not repeated)."""
        rounds = [r["round"] for r in read_lines(self.journal(wid)) if "round" in r]
        return max(rounds) + 1 if rounds else 0

    def rounds(self) -> list[dict[str, Any]]:
        """One record per round of every worker: its ``done`` line, or its last checkpoint."""
        out = []
        for path in sorted((self.root / "journal").glob("*.jsonl")):
            last: dict[int, dict[str, Any]] = {}
            for r in read_lines(path):
                if r.get("event") == "begin":
                    last[r["round"]] = {**r, "examples": 0, "cases": {}, "wall_s": 0.0, "complete": False}
                elif r.get("event") in ("progress", "done") and r["round"] in last:
                    last[r["round"]] = {**last[r["round"]], **r, "complete": r["event"] == "done"}
            out += [dict(r, worker=path.stem) for r in last.values()]
        return out

    def all_findings(self) -> list[dict[str, Any]]:
        return [r for p in sorted((self.root / "findings").glob("*.jsonl")) for r in read_lines(p)]

    def all_samples(self) -> list[dict[str, Any]]:
        return [r for p in sorted((self.root / "samples").glob("*.jsonl")) for r in read_lines(p)]

    def checkpoints(self) -> list[dict[str, Any]]:
        """Every progress and done line, with its worker (the throughput over time)."""
        return [dict(r, worker=p.stem) for p in sorted((self.root / "journal").glob("*.jsonl"))
                for r in read_lines(p) if r.get("event") in ("progress", "done")]

    def buckets(self) -> list[dict[str, Any]]:
        out = []
        for p in sorted((self.root / "buckets").glob("*/bucket.json")):
            if p.parent.name.startswith("."):  # a repro being written
                continue
            try:
                out.append(json.loads(p.read_text()))
            except json.JSONDecodeError:
                continue
        return out

    # -- sessions ----------------------------------------------------------
    def sessions(self) -> list[dict[str, Any]]:
        return read_lines(self.root / "sessions.jsonl")

    def add_session(self, record: dict[str, Any]) -> None:
        append(self.root / "sessions.jsonl", record)

    def budget(self) -> float | None:
        """The fuzzing time granted over every session: the configured ``--time``, raised by each
        ``resume --time S`` to the time spent before it plus S (None: until stopped)."""
        granted = self.config().time_s
        for s in self.sessions():
            if granted is not None and s.get("budget_s") is not None and s.get("spent_before") is not None:
                granted = max(granted, s["spent_before"] + s["budget_s"])
        return granted

    @contextmanager
    def session_lock(self) -> Iterator[None]:
        """Hold the campaign for one session of this host: a second ``start``/``resume`` (or a
        worker left from a session whose parent died) cannot fuzz the same journals."""
        path = self.root / f".session-h{self.config().host}.lock"
        with open(path, "a+") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                fh.seek(0)
                raise CampaignError(f"{self.root} is being fuzzed by another session ({fh.read().strip() or 'pid ?'}) "
                                    "-> wait for it to end, or stop it with SIGTERM first") from None
            fh.seek(0)
            fh.truncate()
            fh.write(f"pid {os.getpid()}")
            fh.flush()
            yield

    @contextmanager
    def worker_lock(self, wid: str, wait_s: float = 60.0) -> Iterator[None]:
        """Hold worker ``wid``'s journal: a worker of an earlier session still ending its round
        (its parent killed, the worker told by PR_SET_PDEATHSIG) finishes before this one begins."""
        path = self.journal(wid).with_suffix(".lock")
        path.parent.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + wait_s
        with open(path, "a") as fh:
            while True:
                try:
                    fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise CampaignError(f"worker {wid} of {self.root} is still running in another session "
                                            f"after {wait_s:.0f} s -> stop it with SIGTERM first") from None
                    time.sleep(0.2)
            yield

    def time_spent(self) -> float:
        """Seconds of fuzzing over every session: each worker's rounds, the longest worker per host."""
        per_worker: Counter = Counter()
        for r in self.rounds():
            per_worker[r["worker"]] += r.get("wall_s", 0.0)
        return max(per_worker.values(), default=0.0)

    def cases_by_family(self) -> Counter:
        total: Counter = Counter()
        for r in self.rounds():
            total.update(r.get("cases", {}))
        return total
