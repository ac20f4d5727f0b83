"""The report a person reads in the morning: Markdown and one self-contained HTML page.

Both hold the configuration and time spent, the buckets (one per distinct
bug) with their count and smallest repro, cases per family and per hour,
the coverage tables of ``ctsgen coverage`` over the sampled cases (one
case per fuzzed batch), and the throughput over time. The HTML page embeds
its plots as PNG data and needs no other file; the Markdown links the same
plots, written beside it.
"""

from __future__ import annotations

import base64
import html
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

from ctsgen.campaign.store import CampaignDir
from ctsgen.core.coverage import Table, plot_coverage
from ctsgen.families import get_family


def _hms(s: float) -> str:
    s = int(max(s, 0))
    return f"{s // 3600}h{s % 3600 // 60:02d}m{s % 60:02d}s"


def _where(case: dict[str, Any]) -> str:
    """A failing case's family, and its data domain where its parameters name one other than the
    default (cm2-program's float programs: ``cm2-program (float)``)."""
    return case["family"] + (f" ({case['domain']})" if case.get("domain") else "")


def summary(cdir: CampaignDir) -> dict[str, Any]:
    """Every figure of the report, from the campaign directory alone."""
    cfg = cdir.config()
    rounds = cdir.rounds()
    findings = cdir.all_findings()
    counts = Counter(f["bucket"] for f in findings)
    distinct: dict[str, set] = {}
    seen_in: dict[str, Counter] = {}
    for f in findings:
        distinct.setdefault(f["bucket"], set()).add(f["name"])
        seen_in.setdefault(f["bucket"], Counter())[_where(f["case"])] += 1
    buckets = sorted(cdir.buckets(), key=lambda b: (-counts[b["key"]], b["key"]))
    for b in buckets:
        b["count"], b["distinct_cases"] = counts[b["key"]], len(distinct.get(b["key"], ()))
        b["seen_in"] = ", ".join(f"{w} {n}" for w, n in seen_in.get(b["key"], Counter()).most_common())
    points = sorted(cdir.checkpoints(), key=lambda r: r["t"])
    return {"config": cfg.to_json(), "rounds": rounds, "buckets": buckets, "findings": len(findings),
            "cases": cdir.cases_by_family(), "time_spent_s": cdir.time_spent(), "sessions": cdir.sessions(),
            "budget_s": cdir.budget(), "last_session": last_session(cdir.sessions(), rounds),
            "per_hour": per_hour(rounds), "throughput": throughput(points),
            "skipped": {f: why for r in rounds for f, why in r.get("skipped", {}).items()}}


def last_session(sessions: list[dict[str, Any]], rounds: list[dict[str, Any]]) -> tuple[int, float] | None:
    """(cases, wall seconds) of the last session that ended: its rounds' cases over its wall time,
    whatever happened since (a "last minute" read after the end would count a partial minute)."""
    ended = [s for s in sessions if s.get("ended") and s.get("began")]
    if not ended:
        return None
    s = ended[-1]
    cases = sum(sum(r.get("cases", {}).values()) for r in rounds if s["began"] <= r.get("t", 0) <= s["ended"] + 1)
    return cases, s["ended"] - s["began"]


def per_hour(rounds: list[dict[str, Any]]) -> dict[str, Counter]:
    """Cases per family per wall-clock hour (UTC) a round ended in."""
    out: dict[str, Counter] = {}
    for r in rounds:
        hour = time.strftime("%Y-%m-%d %H:00", time.gmtime(r.get("t", 0)))
        out.setdefault(hour, Counter()).update(r.get("cases", {}))
    return dict(sorted(out.items()))


def throughput(points: list[dict[str, Any]]) -> list[tuple[float, float]]:
    """(seconds since the first checkpoint, cases/s over every worker) per minute of wall clock."""
    if not points:
        return []
    t0 = points[0]["t"]
    last: dict[tuple[str, int], int] = {}
    per_min: Counter = Counter()
    for p in points:
        total = sum(p.get("cases", {}).values())
        k = (p["worker"], p["round"])
        per_min[int((p["t"] - t0) // 60)] += total - last.get(k, 0)
        last[k] = total
    return [(60.0 * m + 30.0, n / 60.0) for m, n in sorted(per_min.items())]


def coverage(cdir: CampaignDir) -> list[Table]:
    """The families' ``ctsgen coverage`` tables over the sampled cases."""
    by_family: dict[str, list[dict[str, Any]]] = {}
    for s in cdir.all_samples():
        by_family.setdefault(s["family"], []).append(s["parameters"])
    tables: list[Table] = []
    for name, params in sorted(by_family.items()):
        hook = getattr(get_family(name), "coverage", None)
        for t in hook(params) if hook else []:
            t.family = name
            tables.append(t)
    return tables


def status_text(cdir: CampaignDir) -> str:
    s = summary(cdir)
    cfg = s["config"]
    done = [r for r in s["rounds"] if r["complete"]]
    lines = [f"campaign {cdir.root}: {cfg['backend']}, {len(cfg['families'])} families, host {cfg['host']}, "
             f"{cfg['workers']} worker(s){' on devices ' + str(cfg['devices']) if cfg['devices'] else ''}",
             f"time spent {_hms(s['time_spent_s'])}"
             + (f" of {_hms(s['budget_s'])}" if s["budget_s"] else "")
             + f"; {len(s['rounds'])} rounds ({len(s['rounds']) - len(done)} cut short), "
             f"{sum(s['cases'].values())} cases, {len(s['sessions'])} session(s)"]
    for fam, n in sorted(s["cases"].items()):
        lines.append(f"  {fam:22s} {n}")
    total = sum(s["cases"].values())
    if s["time_spent_s"]:
        lines.append(f"throughput: {total / s['time_spent_s']:.0f} cases/s over the time spent (all workers)")
    if s["last_session"] and s["last_session"][1] > 0:
        n, wall = s["last_session"]
        lines.append(f"last session: {n} cases in {_hms(wall)} of wall time, {n / wall:.0f} cases/s")
    lines.append(f"{len(s['buckets'])} bucket(s), {s['findings']} failing case(s):")
    for b in s["buckets"]:
        lines.append(f"  {b['count']:6d}  {b['key']}: {b['title']}")
    return "\n".join(lines)


def _plot_throughput(points: list[tuple[float, float]], path: Path) -> bool:
    try:
        import matplotlib  # local: optional
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # local: optional
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(8, 3))
    ax.plot([t / 60 for t, _ in points], [v for _, v in points], marker="o", markersize=3)
    ax.set_xlabel("minutes since the campaign's first checkpoint")
    ax.set_ylabel("cases / s (all workers)")
    ax.set_title("throughput")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


def _md_table(head: list[str], rows: list[list[Any]]) -> list[str]:
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head),
            *["| " + " | ".join(str(c) for c in r) + " |" for r in rows], ""]


def _html_table(head: list[str], rows: list[list[Any]]) -> str:
    th = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><tr>{th}</tr>{body}</table>"


def _coverage_rows(t: Table) -> tuple[list[str], list[list[Any]]]:
    head = [t.row_label] + [str(c) for c in t.cols]
    rows = [[r] + ["-" if (r, c) in t.excluded and not t.counts[(r, c)] else t.counts[(r, c)] for c in t.cols]
            for r in t.rows]
    return head, rows


def write_report(cdir: CampaignDir, out: Path | None = None) -> tuple[Path, Path]:
    """Write ``report.md`` and ``report.html`` (default under DIR/report); return their paths."""
    out = out or cdir.root / "report"
    out.mkdir(parents=True, exist_ok=True)
    s = summary(cdir)
    cfg = s["config"]
    images: dict[str, Path] = {}
    if s["throughput"] and _plot_throughput(s["throughput"], out / "throughput.png"):
        images["throughput"] = out / "throughput.png"
    tables = coverage(cdir)
    for fam in dict.fromkeys(t.family for t in tables):
        path = out / f"coverage-{fam}.png"
        if plot_coverage([t for t in tables if t.family == fam], path, title=f"{fam}: sampled cases"):
            images[f"coverage-{fam}"] = path

    families = sorted(set(s["cases"]) | set(cfg["families"]))  # a family never drawn shows as 0
    hours = s["per_hour"]
    hour_rows = [[h] + [c.get(f, 0) for f in families] for h, c in hours.items()]
    bucket_rows = [[b["count"], b["distinct_cases"], b["key"], b["title"], b["size"], b["name"]]
                   for b in s["buckets"]]
    title = f"ctsgen campaign {cdir.root.name}"
    facts = [("backend", cfg["backend"]), ("families", ", ".join(cfg["families"])),
             ("host / workers / devices", f"{cfg['host']} / {cfg['workers']} / {cfg['devices'] or '-'}"),
             ("seed", cfg["seed"]), ("database", cfg["database"] or "DIR/db"),
             ("time spent", _hms(s["time_spent_s"]) + (f" of {_hms(s['budget_s'])}" if s["budget_s"] else "")),
             ("sessions", ", ".join(f"{x['kind']} ({x.get('stopped_by') or 'budget'})" for x in s["sessions"])),
             ("rounds", f"{len(s['rounds'])} ({sum(1 for r in s['rounds'] if not r['complete'])} cut short)"),
             ("cases", sum(s["cases"].values())), ("failing cases", s["findings"]),
             ("distinct bugs (buckets)", len(s["buckets"]))]

    md = [f"# {title}", "", f"Written by `ctsgen campaign report {cdir.root}` at "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.", "", *_md_table(["campaign", ""], facts),
          "## Buckets (distinct bugs)", "",
          "A failing case goes to the mutant that reproduces it exactly, else to its signature "
          "(family, operation, parameter classes, wrong elements, verdict); each bucket keeps its smallest repro.", ""]
    md += _md_table(["count", "distinct cases", "bucket", "what", "repro size", "smallest repro"], bucket_rows) \
        if bucket_rows else ["No failure found.", ""]
    for b in s["buckets"]:
        repro = cdir.bucket_dir(b["key"]) / "repro"
        md += [f"### {b['key']}", "", b["title"], "",
               f"Smallest repro ({b['size']} elements): `{repro}`; replay: "
               f"`ctsgen run {repro} --backend {cfg['backend']}`", "",
               f"Observed: **{b['result']['status']}**: {b['result'].get('detail', '')}", "",
               f"Failing cases by family: {b['seen_in'] or '-'}", "",
               "```json", json.dumps(b["case"], sort_keys=True), "```", ""]
    per_family = [[f, s["cases"].get(f, 0), s["skipped"].get(f, "")] for f in families]
    md += ["## Cases per family", "", *_md_table(["family", "cases", "left out because"], per_family),
           "## Cases per hour (UTC)", "", *_md_table(["hour", *families], hour_rows), "## Throughput", ""]
    md += ["![throughput](throughput.png)", ""] if "throughput" in images else ["No checkpoint yet.", ""]
    md += ["## Coverage (sampled cases, one per batch)", ""]
    for t in tables:
        head, rows = _coverage_rows(t)
        md += [f"### {t.family}: {t.title}", "", *_md_table(head, rows)]
        empty = t.empty_cells()
        if empty and len(empty) <= 40:
            md += ["Empty: " + ", ".join(f"{r} x {c}" if len(t.cols) > 1 else str(r) for r, c in empty), ""]
    md += [f"![coverage {k[9:]}]({p.name})" for k, p in images.items() if k.startswith("coverage-")]
    md_path = out / "report.md"
    md_path.write_text("\n".join(md) + "\n")

    def img(key: str) -> str:
        data = base64.b64encode(images[key].read_bytes()).decode()
        return f'<img alt="{html.escape(key)}" src="data:image/png;base64,{data}">'

    body = [f"<h1>{html.escape(title)}</h1>", _html_table(["campaign", ""], facts), "<h2>Buckets (distinct bugs)</h2>"]
    body.append(_html_table(["count", "distinct cases", "bucket", "what", "repro size", "smallest repro"],
                            bucket_rows) if bucket_rows else "<p>No failure found.</p>")
    for b in s["buckets"]:
        repro = cdir.bucket_dir(b["key"]) / "repro"
        report_md = repro / "REPORT.md"
        body += [f"<h3>{html.escape(b['key'])}</h3><p>{html.escape(b['title'])}</p>",
                 f"<p>Failing cases by family: {html.escape(b['seen_in'] or '-')}</p>",
                 f"<p>Smallest repro ({b['size']} elements): <code>{html.escape(str(repro))}</code>; replay: "
                 f"<code>ctsgen run {html.escape(str(repro))} --backend {html.escape(cfg['backend'])}</code></p>",
                 "<details><summary>REPORT.md</summary><pre>"
                 + html.escape(report_md.read_text() if report_md.exists() else json.dumps(b["case"], indent=1))
                 + "</pre></details>"]
    body += ["<h2>Cases per family</h2>", _html_table(["family", "cases", "left out because"], per_family),
             "<h2>Cases per hour (UTC)</h2>", _html_table(["hour", *families], hour_rows), "<h2>Throughput</h2>",
             img("throughput") if "throughput" in images else "<p>No checkpoint yet.</p>",
             "<h2>Coverage (sampled cases, one per batch)</h2>"]
    family = None
    for t in tables:
        if t.family != family:
            family = t.family
            body.append(f"<h3>{html.escape(family)}</h3>")
            if f"coverage-{family}" in images:
                body.append(f"<details><summary>heat-maps</summary>{img(f'coverage-{family}')}</details>")
        head, rows = _coverage_rows(t)
        body += [f"<h4>{html.escape(t.title)}</h4>", _html_table(head, rows)]
    style = ("body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}"
             "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 6px;"
             "font-size:13px;text-align:left}th{background:#eee}pre{background:#f6f6f6;padding:8px;"
             "overflow:auto;font-size:12px}img{max-width:100%}h3{margin-top:1.5em}")
    html_path = out / "report.html"
    html_path.write_text(f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
                         f"<style>{style}</style></head><body>{''.join(body)}</body></html>\n")
    return md_path, html_path
