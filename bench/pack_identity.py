"""Byte-identity of generated packs across a code change: a refactor leaves every pack as it was.

``record DIR`` generates every family's default pack for the given seeds with
the code on the import path (``python -m ctsgen generate``) into DIR/<family>-<seed>,
runs each pack (``python -m ctsgen run``) on the reference backend and on the
family's first mutant (so failing verdicts, with their mismatch reports, are
compared too) into DIR/verdicts/, and writes DIR/SHA256SUMS: one line per file,
``sha256  relative/path``.
Verdict files are digested without their timings. ``compare A B`` compares two such manifests file by file and exits 1 on any
difference (a changed, missing or extra file), naming each.

    python bench/pack_identity.py record /tmp/seams-before    # on the old code
    python bench/pack_identity.py record /tmp/seams-after     # on the new code
    python bench/pack_identity.py compare /tmp/seams-before /tmp/seams-after
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from pathlib import Path

from ctsgen.results.deqp_csv import OWNED


def _all_families() -> list[str]:
    from ctsgen.families import families

    return sorted(families())


def _reference_only() -> set[str]:
    """Families the embedded H100 profile cannot run: drawn for the reference backend's profile."""
    from ctsgen.device.profile import default_profile
    from ctsgen.families.gating import families_it_runs

    return set(_all_families()) - set(families_it_runs(default_profile()))


def _verdict_bytes(path: Path) -> bytes:
    """A verdict file without its timings (the seconds each case took differ from run to run):
    ``duration_s`` left out of each JSON record, the duration column out of each CSV row."""
    if path.suffix == ".jsonl":
        records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        return "".join(json.dumps({k: v for k, v in r.items() if k != "duration_s"}, sort_keys=True) + "\n"
                       for r in records).encode()
    if path.suffix == ".csv":
        return "".join(",".join(row.split(",")[:2]) + "\n" for row in path.read_text().splitlines()).encode()
    return path.read_bytes()


def _digests(root: Path) -> dict[str, str]:
    """Every file's digest but SHA256SUMS and the verdict folders' ownership records
    (``ctsgen.results.deqp_csv.OWNED``: the SHA-256 of each CSV as written, durations included)."""
    return {p.relative_to(root).as_posix():
            hashlib.sha256(_verdict_bytes(p) if "verdicts" in p.relative_to(root).parts else p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and p.name not in ("SHA256SUMS", OWNED)}


def record(out: Path, count: int, seeds: list[int], families: list[str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    reference_only = _reference_only()
    for family in families:
        for seed in seeds:
            pack = out / f"{family}-{seed}"
            subprocess.run([sys.executable, "-m", "ctsgen", "generate", "--family", family, "--count", str(count),
                            "--seed", str(seed), "--out", str(pack), "--force",
                            *(["--profile", "reference"] if family in reference_only else [])], check=True,
                           stdout=subprocess.DEVNULL)
            print(f"{pack.name}: done", flush=True)
    verdicts(out, families, seeds)
    (out / "SHA256SUMS").write_text("".join(f"{d}  {p}\n" for p, d in _digests(out).items()))


def verdicts(out: Path, families: list[str], seeds: list[int]) -> None:
    """Run every pack under ``out`` on the reference backend and on its family's first mutant."""
    from ctsgen.mutants.catalogue import catalogue

    first_mutant = {}
    for m in catalogue().values():
        first_mutant.setdefault(m.family, m.name)
    (out / "verdicts").mkdir(exist_ok=True)
    for family in families:
        for seed in seeds:
            pack = Path(f"{family}-{seed}")  # relative: the CTS-style results name the pack
            for backend in ["reference"] + ([f"mutant:{first_mutant[family]}"] if family in first_mutant else []):
                results = Path("verdicts") / f"{pack.name}.{backend.replace(':', '-')}.jsonl"
                subprocess.run([sys.executable, "-m", "ctsgen", "run", str(pack), "--backend", backend,
                                "--results", str(results), "--quiet"], stdout=subprocess.DEVNULL, cwd=out)
            print(f"{pack.name}: verdicts", flush=True)


def _manifest(root: Path) -> dict[str, str]:
    lines = (root / "SHA256SUMS").read_text().splitlines()
    return {path: digest for digest, path in (line.split("  ", 1) for line in lines)}


def compare(a: Path, b: Path) -> int:
    ma, mb = _manifest(a), _manifest(b)
    changed = sorted(p for p in ma.keys() & mb.keys() if ma[p] != mb[p])
    missing, extra = sorted(ma.keys() - mb.keys()), sorted(mb.keys() - ma.keys())
    for label, paths in (("changed", changed), ("only in " + str(a), missing), ("only in " + str(b), extra)):
        for p in paths:
            print(f"{label}: {p}")
    packs = {p.split("/", 1)[0] for p in ma}
    print(f"{len(ma)} files in {len(packs)} packs: {len(changed)} changed, {len(missing)} missing, {len(extra)} extra")
    return 1 if changed or missing or extra else 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("out", type=Path)
    r.add_argument("--count", type=int, default=500, help="cases per pack (default: generate's default, 500)")
    r.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    r.add_argument("--family", nargs="+", default=None, help="default: every registered family")
    v = sub.add_parser("verdicts", help="only the runs of an existing record (then rewrites SHA256SUMS)")
    v.add_argument("out", type=Path)
    v.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    v.add_argument("--family", nargs="+", default=None, help="default: every registered family")
    c = sub.add_parser("compare")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    a = p.parse_args()
    if a.cmd in ("record", "verdicts") and a.family is None:
        a.family = _all_families()
    if a.cmd == "record":
        record(a.out, a.count, a.seeds, a.family)
        return 0
    if a.cmd == "verdicts":
        verdicts(a.out, a.family, a.seeds)
        (a.out / "SHA256SUMS").write_text("".join(f"{d}  {p}\n" for p, d in _digests(a.out).items()))
        return 0
    return compare(a.a, a.b)


if __name__ == "__main__":
    sys.exit(main())
