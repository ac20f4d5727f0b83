"""Identity of the fuzz loop's draws across a code change: the same seed draws the same batches.

``record DIR`` draws ``--examples`` batches of each family with the fuzz loop's own batch strategy
(:meth:`ctsgen.fuzz.loop.Fuzzer.batches`, reference backend) through
:func:`ctsgen.strategies.sampling.draw_examples` from each seed, and writes one JSON file per
family and seed: each batch's variant and its cases' ``to_json()`` and ``name()``.
``compare A B`` compares two such records file by file and exits 1 on any difference, naming each.
``record --calls`` also counts the Python function calls of each family's draws (cProfile's count:
the same on every run of the same code, where CPU seconds on a shared machine vary by 10% or more).

    python bench/draw_identity.py record /tmp/draw-before    # on the old code
    python bench/draw_identity.py record /tmp/draw-after     # on the new code
    python bench/draw_identity.py compare /tmp/draw-before /tmp/draw-after
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import json
import pstats
import sys
import time
from pathlib import Path


def _families() -> list[str]:
    from ctsgen.families import families

    return [f for f in sorted(families()) if f != "decode-vector"]  # the reference backend lacks it


def _batches(family: str, examples: int, seed: int, profile: cProfile.Profile | None = None) -> list[dict]:
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as seed_of
    from hypothesis.control import current_build_context

    from ctsgen.backends.reference import ReferenceBackend
    from ctsgen.fuzz.loop import Fuzzer, FuzzOptions
    from ctsgen.strategies.sampling import pinned_constants

    fuzzer = Fuzzer(ReferenceBackend(), FuzzOptions(families=(family,), database=None, seed=seed))
    out: list[dict] = []

    @settings(database=None, max_examples=examples, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @seed_of(seed)
    @given(fuzzer.batches())
    def collect(batch: tuple) -> None:  # draw_examples' settings, with the example's ConjectureData read
        v, cases = batch
        data = current_build_context().data
        trail = getattr(data, "_ConjectureData__span_record").trail  # Hypothesis-internal
        out.append({"variant": v.to_json(), "cases": [c.to_json() for c in cases],
                    "names": [c.name() for c in cases], "choices": _digest(repr(data.choices)),
                    "spans": _digest(repr(list(trail)))})

    with pinned_constants():
        if profile is None:
            collect()
        else:
            profile.runcall(collect)
    return out


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def record(out: Path, examples: int, seeds: list[int], families: list[str], calls: bool = False) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for family in families:
        for seed in seeds:
            t0 = time.process_time()
            profile = cProfile.Profile() if calls else None
            batches = _batches(family, examples, seed, profile)
            (out / f"{family}-{seed}.json").write_text(json.dumps(batches, sort_keys=True) + "\n")
            n = sum(len(b["cases"]) for b in batches)
            counted = f", {pstats.Stats(profile).total_calls / max(n, 1):.0f} Python calls a case" if profile else ""
            print(f"{family}-{seed}: {len(batches)} batches, {n} cases, "
                  f"{time.process_time() - t0:.1f} CPU s{counted}", flush=True)


def compare(a: Path, b: Path) -> int:
    fa, fb = {p.name for p in a.glob("*.json")}, {p.name for p in b.glob("*.json")}
    for folder, names in ((a, fa), (b, fb)):
        if not names:  # two empty folders are not two identical records
            print(f"{folder}: no record here (FAMILY-SEED.json) -> record one with `record {folder}`", file=sys.stderr)
            return 2
    bad = 0
    for name in sorted(fa | fb):
        if name not in fa or name not in fb:
            print(f"only in {a if name in fa else b}: {name}")
            bad += 1
        elif (a / name).read_bytes() != (b / name).read_bytes():
            print(f"changed: {name}")
            bad += 1
    print(f"{len(fa | fb)} files: {bad} differ")
    return 1 if bad else 0


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return int(text)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("out", type=Path)
    r.add_argument("--examples", type=_positive, default=100, help="batches per family and seed (default 100)")
    r.add_argument("--seeds", type=int, nargs="+", default=[0, 11])
    r.add_argument("--family", nargs="+", default=None, help="default: every family the reference runs")
    r.add_argument("--calls", action="store_true", help="also print each family's Python function calls a case")
    c = sub.add_parser("compare")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    a = p.parse_args()
    if a.cmd == "record":
        unknown = sorted(set(a.family or ()) - set(_families()))
        if unknown:
            print(f"{', '.join(unknown)}: not a family the reference backend runs -> use one of "
                  f"{', '.join(_families())}", file=sys.stderr)
            return 2
        record(a.out, a.examples, a.seeds, a.family or _families(), a.calls)
        return 0
    return compare(a.a, a.b)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # the reader closed stdout early (| head): no traceback, the lines it read stand
        from ctsgen.cli.args import exit_quietly_on_broken_pipe

        exit_quietly_on_broken_pipe()
    except OSError as exc:  # a folder that cannot be made or written
        print(f"{exc.filename or ''}: {exc.strerror or exc} -> choose a folder you can write", file=sys.stderr)
        sys.exit(2)
