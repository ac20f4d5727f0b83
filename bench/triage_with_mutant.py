"""Does a device behave exactly like one mutant on a pack? (triage of a deviation)

Runs PACK on the mutant backend and compares, case by case, with a
device's results file: a failure is explained when the mutant fails the
same case with the same wrong elements and values (the product's rule,
``ctsgen.fuzz.buckets.fingerprint``, which also buckets fuzz findings); the
mutant must also pass every case the device passes.

    python bench/triage_with_mutant.py PACK DEVICE_RESULTS.jsonl setdimension-floor
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from ctsgen.fuzz.buckets import fingerprint
from ctsgen.results.results_file import is_header


def load(path: Path) -> dict[str, dict]:
    records = [json.loads(line) for line in path.read_text().splitlines() if line]
    return {r["name"]: r for r in records if not is_header(r)}


def main(pack: str, device_results: str, mutant: str) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "mutant.jsonl"
        subprocess.run([sys.executable, "-m", "ctsgen", "run", pack, "--backend", f"mutant:{mutant}",
                        "--quiet", "--results", str(out)], check=False, capture_output=True)
        mutated = load(out)
    device = load(Path(device_results))
    explained = [n for n, r in device.items() if r["status"] != "Pass" and fingerprint(r) == fingerprint(mutated[n])]
    unexplained = [n for n, r in device.items() if r["status"] != "Pass" and n not in explained]
    extra = [n for n, r in device.items() if r["status"] == "Pass" and mutated[n]["status"] != "Pass"]
    print(f"{pack}: {len(explained)} device failures reproduced exactly by mutant {mutant}; "
          f"{len(unexplained)} not; {len(extra)} cases the mutant fails but the device passes")
    for n in unexplained[:10]:
        print("  unexplained:", n)
    return 0 if not unexplained and not extra else 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
