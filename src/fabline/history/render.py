"""Diff output: console tables, Markdown and JSON (``fabline.diff/1``)."""

from __future__ import annotations

import json
from typing import Any

import orjson
from rich.console import Console
from rich.table import Table

from fabline.history.diff import DiffResult
from fabline.perf import paused_gc
from fabline.record import CounterDelta

#: Rows per section in the console and Markdown outputs; the JSON has every row.
MAX_ROWS = 50


def _value(v: Any) -> str:
    text = json.dumps(v, default=str) if not isinstance(v, str) else v
    return text if len(text) <= 80 else text[:77] + "..."


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _top_counters(result: DiffResult) -> list[CounterDelta]:
    """Resets first, then the fastest-moving counters."""
    return sorted(result.counters, key=lambda c: (not c.reset, -(c.per_second or 0.0), -c.delta))


#: Above this many changes + counters the JSON is written compact (a 100k-GPU night lists a
#: million counters: 300 MB indented, half that compact).
INDENT_LIMIT = 10_000


def render_json(result: DiffResult) -> str:
    """The JSON document (orjson): indented when small, compact when large."""
    small = len(result.changes) + len(result.counters) <= INDENT_LIMIT
    with paused_gc():
        doc = result.to_dict()
        option = orjson.OPT_APPEND_NEWLINE | (orjson.OPT_INDENT_2 if small else 0)
        return orjson.dumps(doc, option=option, default=str).decode()


def verdict(result: DiffResult) -> str:
    """One line: what the diff says."""
    parts = [
        f"{len(result.changes)} state changes",
        f"{len(result.counters)} counters moved ({sum(c.reset for c in result.counters)} resets)",
    ]
    if result.problems_compared:
        parts += [
            f"{len(result.new_problems)} new problems",
            f"{len(result.persisting_problems)} persisting",
            f"{len(result.resolved_problems)} resolved",
        ]
    if result.results_compared:
        parts += [
            f"{len(result.new_failures)} new failures",
            f"{len(result.new_errors)} new errors",
            f"{len(result.resolved)} resolved failures",
            f"{len(result.persisting)} persisting failures",
        ]
    else:
        parts.append("results not compared (give -i INVENTORY for snapshots)")
    if result.passes_compared:
        before = sum(t["before"] for t in result.pass_totals.values())
        after = sum(t["after"] for t in result.pass_totals.values())
        parts.append(f"passes {before} -> {after}")
    return ", ".join(parts)


def _pass_rows(result: DiffResult) -> list[tuple[str, int, int]]:
    """(check, passes before, passes after) of the checks whose passes changed."""
    return [(c, t["before"], t["after"]) for c, t in result.pass_totals.items() if t["before"] != t["after"]]


def _problem_sections(result: DiffResult) -> list[tuple[str, list[dict[str, Any]]]]:
    """The non-empty problem sections: new, resolved, persisting."""
    if not result.problems_compared:
        return []
    sections = [
        ("New problems", result.new_problems),
        ("Resolved problems", result.resolved_problems),
        ("Persisting problems", result.persisting_problems),
    ]
    return [(title, rows) for title, rows in sections if rows]


def render_markdown(result: DiffResult) -> str:
    """Markdown for a change ticket or a pull request."""
    out = [
        f"# fabline diff: `{result.before.label}` -> `{result.after.label}`",
        "",
        verdict(result) + f"; {result.devices_compared} devices compared.",
        "",
    ]
    for w in result.warnings:
        out.append(f"> warning: {w}")
    if result.only_before or result.only_after:
        out += ["## Devices on one side only", ""]
        out += [f"- only before: `{n}`" for n in result.only_before[:MAX_ROWS]]
        out += [f"- only after: `{n}`" for n in result.only_after[:MAX_ROWS]]
        out.append("")
    if result.unreadable:
        out += ["## Unreadable states", ""]
        out += [
            f"- `{u['device']}` ({u['side']}): {_cell(u['message'])}" for u in result.unreadable[:MAX_ROWS]
        ]
        out.append("")
    for title, rows in _problem_sections(result):
        out += [f"## {title} ({len(rows)})", "", "| severity | problem | where | findings | id |",
                "|---|---|---|---:|---|"]  # fmt: skip
        for p in rows[:MAX_ROWS]:
            out.append(
                f"| {p['severity']} | {_cell(p['cause'])} | {_cell(p.get('where', ''))} | {p.get('count', '')} "
                f"| `{p['id']}` |"
            )
        if len(rows) > MAX_ROWS:
            out.append(f"\n... and {len(rows) - MAX_ROWS} more in the JSON output")
        out.append("")
    sections: list[tuple[str, list[dict[str, Any]]]] = [
        ("New errors", result.new_errors),
        ("New failures", result.new_failures),
        ("Resolved", result.resolved),
        ("Persisting failures", result.persisting),
    ]
    for title, rows in sections:
        if not rows:
            continue
        out += [f"## {title} ({len(rows)})", "", "| severity | check | device | subject | message |",
                "|---|---|---|---|---|"]  # fmt: skip
        for r in rows[:MAX_ROWS]:
            out.append(
                f"| {r['severity']} | {_cell(r['check'])} | {_cell(r['device'])} | "
                f"{_cell(r['subject'] or '-')} | {_cell(r['message'])} |"
            )
        if len(rows) > MAX_ROWS:
            out.append(f"\n... and {len(rows) - MAX_ROWS} more in the JSON output")
        out.append("")
    pass_rows = _pass_rows(result)
    if pass_rows:
        out += [
            f"## Passes changed ({len(pass_rows)} checks)",
            "",
            "| check | before | after |",
            "|---|---:|---:|",
        ]
        out += [f"| {_cell(check)} | {b} | {a} |" for check, b, a in pass_rows[:MAX_ROWS]]
        if len(pass_rows) > MAX_ROWS:
            out.append(f"\n... and {len(pass_rows) - MAX_ROWS} more in the JSON output")
        out.append("")
    if result.changes:
        out += [f"## State changes ({len(result.changes)})", "", "| device | path | before | after |",
                "|---|---|---|---|"]  # fmt: skip
        for c in result.changes[:MAX_ROWS]:
            out.append(
                f"| {_cell(c.device)} | `{_cell(c.path)}` | {_cell(_value(c.before))} | {_cell(_value(c.after))} |"
            )
        if len(result.changes) > MAX_ROWS:
            out.append(f"\n... and {len(result.changes) - MAX_ROWS} more in the JSON output")
        out.append("")
    if result.counters:
        out += [f"## Counters ({len(result.counters)} moved)", "",
                "| device | interface | counter | delta | per second | reset |", "|---|---|---|---:|---:|---|"]  # fmt: skip
        for k in _top_counters(result)[:MAX_ROWS]:
            rate = "-" if k.per_second is None else f"{k.per_second:g}"
            out.append(
                f"| {_cell(k.device)} | {_cell(k.subject)} | {k.counter} | {k.delta} | {rate} | "
                f"{'reset' if k.reset else ''} |"
            )
        out.append("")
    return "\n".join(out) + "\n"


def print_diff(result: DiffResult, console: Console) -> None:
    """Console tables: problems first, then state changes and the fastest counters."""
    console.print(f"fabline diff {result.before.label} -> {result.after.label}", highlight=False)
    for w in result.warnings:
        console.print(f"[yellow]warning:[/yellow] {w}", highlight=False)
    if result.only_before:
        console.print(f"only before ({len(result.only_before)}): " + ", ".join(result.only_before[:20]),
                      highlight=False)  # fmt: skip
    if result.only_after:
        console.print(f"only after ({len(result.only_after)}): " + ", ".join(result.only_after[:20]),
                      highlight=False)  # fmt: skip
    for u in result.unreadable[:20]:
        console.print(f"[magenta]unreadable[/] {u['device']} ({u['side']}): {u['message']}", highlight=False)
    for title, rows in _problem_sections(result):
        style = {"New problems": "red", "Resolved problems": "green"}.get(title, "yellow")
        t = Table(title=f"{title.lower()} ({len(rows)})", title_style=style)
        t.add_column("severity", no_wrap=True)
        t.add_column("problem", overflow="fold", min_width=30)
        t.add_column("where", overflow="fold")
        t.add_column("findings", justify="right")
        for p in rows[:MAX_ROWS]:
            t.add_row(p["severity"], p["cause"], p.get("where", ""), str(p.get("count", "")))
        console.print(t)
    sections: list[tuple[str, str, list[dict[str, Any]]]] = [
        ("new errors", "magenta", result.new_errors),
        ("new failures", "red", result.new_failures),
        ("resolved", "green", result.resolved),
        ("persisting failures", "yellow", result.persisting),
    ]
    for title, style, rows in sections:
        if not rows:
            continue
        t = Table(title=f"{title} ({len(rows)})", title_style=style)
        for col in ("severity", "check", "device", "subject"):
            t.add_column(col, no_wrap=True)
        t.add_column("message", overflow="fold", min_width=20)
        for r in rows[:MAX_ROWS]:
            t.add_row(r["severity"], r["check"], r["device"], r["subject"] or "-", r["message"])
        console.print(t)
    pass_rows = _pass_rows(result)
    if pass_rows:
        t = Table(title=f"passes changed ({len(pass_rows)} checks)")
        for col in ("check", "before", "after"):
            t.add_column(col, justify="left" if col == "check" else "right")
        for check, b, a in pass_rows[:MAX_ROWS]:
            t.add_row(check, str(b), str(a))
        console.print(t)
    if result.changes:
        t = Table(title=f"state changes ({len(result.changes)})")
        for col in ("device", "path", "before", "after"):
            t.add_column(col, overflow="fold")
        for c in result.changes[:MAX_ROWS]:
            t.add_row(c.device, c.path, _value(c.before), _value(c.after))
        console.print(t)
    if result.counters:
        t = Table(title=f"counters ({len(result.counters)} moved)")
        for col in ("device", "interface", "counter", "delta", "per second", "reset"):
            t.add_column(col, justify="right" if col in ("delta", "per second") else "left")
        for k in _top_counters(result)[:20]:
            rate = "-" if k.per_second is None else f"{k.per_second:g}"
            t.add_row(k.device, k.subject, k.counter, str(k.delta), rate, "reset" if k.reset else "")
        console.print(t)
    console.print(verdict(result), highlight=False)
