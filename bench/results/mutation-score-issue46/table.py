"""The before/after table of docs/validation.md "The old catalogue's mutation score": python table.py (in this folder)."""
import ast
from pathlib import Path

HERE = Path(__file__).parent


def rows(names):
    out = {}
    for f in names:
        for line in (HERE / f).read_text().splitlines():
            if line.startswith("| ") and not line.startswith("| mutant"):
                c = [x.strip() for x in line.strip().strip("|").split("|")]
                out[c[0]] = ast.literal_eval(c[1])
    return out


before = rows(["before-A.md", "before-B.md", "before-C.md", "before-D1.md", "before-D2.md"])
after = rows(["after.md", "after-B.md", "after-C.md"])
budget_b = dict(l.split() for l in (HERE / "kill-budgets-07b2430.txt").read_text().splitlines())
budget_a = dict(l.split() for l in (HERE / "kill-budgets-main.txt").read_text().splitlines())
old = (HERE / "mutants-at-07b2430.txt").read_text().split()
print("| mutant | examples to kill, seeds 0-3: 07b2430 | main | mean | declared budget | killed both times, within budget? |")
print("|---|---|---|---|---|---|")
n = kb = ka = same = 0
missing = []
for m in old:
    if m not in before or m not in after:
        missing.append(m)
        continue
    b, a = before[m], after[m]
    mb, ma = (sum(x or 1500 for x in v) / len(v) for v in (b, a))
    ok = all(x is not None for x in b + a) and max(b) <= int(budget_b[m]) and max(a) <= int(budget_a[m])
    n += 1
    kb += sum(x is not None for x in b)
    ka += sum(x is not None for x in a)
    same += b == a
    bud = budget_b[m] if budget_b[m] == budget_a[m] else f"{budget_b[m]} -> {budget_a[m]}"
    print(f"| {m} | {b} | {'same' if a == b else a} | {mb:.0f} -> {ma:.0f} | {bud} | {'yes' if ok else 'NO'} |")
print(f"\n{n} mutants in both trees; kills (mutant x seed) {kb}/{4 * n} at 07b2430, {ka}/{4 * n} on main; "
      f"identical counts for {same}")
if missing:
    print("not measured in both:", " ".join(missing))
