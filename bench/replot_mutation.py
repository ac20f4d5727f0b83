"""Redraw docs/mutation.png from the table in docs/mutation.md, without re-running the bench.

`ctsgen bench mutation --out docs/mutation.md --plot docs/mutation.png` writes both from a fresh
run (tens of minutes); this redraws the plot from the committed table when only the plot's
drawing changed. Mutants of today's catalogue missing from the table are drawn as 'not run'.

    python bench/replot_mutation.py [docs/mutation.md] [docs/mutation.png]
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from ctsgen.fuzz.mutation import MutantRow, plot
from ctsgen.mutants.catalogue import catalogue


def rows_from_table(text: str) -> tuple[list[MutantRow], int]:
    budget = int(re.search(r"fuzzed with (\d+) examples per seed", text).group(1))
    rows = []
    for line in text.splitlines():
        m = re.match(r"\| `([^`]+)` \| ([^|]+) \| (\d+)/(\d+) \| ([^|]+) \| ([^|]+) \| ([^|]+) \| (.*) \|$", line)
        if not m:
            continue

        def num(s: str) -> float | None:
            return None if s.strip() == "-" else float(s)
        med, size, ref = num(m.group(5)), num(m.group(6)), num(m.group(7))
        rows.append(MutantRow(m.group(1), m.group(2).strip(), m.group(8), int(m.group(3)), int(m.group(4)), med,
                              None if size is None else int(size), None if ref is None else int(ref)))
    return rows, budget


def main(argv: list[str]) -> int:
    table = Path(argv[0] if argv else "docs/mutation.md")
    out = Path(argv[1] if len(argv) > 1 else "docs/mutation.png")
    rows, budget = rows_from_table(table.read_text())
    ran = {r.mutant for r in rows}
    not_run = [name for name in catalogue() if name not in ran]
    plot(rows, out, budget, not_run)
    print(f"{out}: {len(rows)} mutants from {table}, {len(not_run)} not run")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
