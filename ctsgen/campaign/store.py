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

import json
import os
from collections import Counter
from dataclasses import asdict, dataclass, field
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
    max_batch: int = 16
    shrink_time_s: float = 60.0
    timeout_s: float = 10.0
    time_s: float | None = None  # the budget of fuzzing time over every session; None: until stopped
    include_hazardous: bool = False

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> CampaignConfig:
        return cls(**obj)


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
    """The records of a JSON-lines file; a line torn by a hard stop is skipped."""
    out = []
    try:
        text = path.read_text()
    except FileNotFoundError:
        return out
    for line in text.splitlines():
        try:
            out.append(json.loads(line))
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
        except (json.JSONDecodeError, TypeError) as exc:
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
