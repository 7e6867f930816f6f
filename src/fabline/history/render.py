"""Diff output: console tables, Markdown and JSON (``fabline.diff/2``)."""

from __future__ import annotations

import json
from typing import Any

import orjson
from rich.console import Console
from rich.table import Table

from fabline.history.counters import CounterStats
from fabline.history.diff import DiffResult
from fabline.perf import paused_gc
from fabline.results import compact_text

#: Rows per section in the console and Markdown outputs; the JSON has every row (counters: their
#: summary; every counter row with ``--counter-rows``).
MAX_ROWS = 50


def _subject(row: dict[str, Any]) -> str:
    """A diff row's subject for a person: a block of results (``subjects``, compact) as its runs
    and count, else the subject (``-`` for a device-level result).

    Example:
        >>> _subject({"subject": None, "subjects": [["swp", 1, 4, 1]], "count": 4})
        'swp1..swp4 (4)'
    """
    compact = row.get("subjects")
    if isinstance(compact, list):
        return f"{compact_text(compact)} ({row.get('count', '?')})"
    return str(row.get("subject") or "-")


def _value(v: Any) -> str:
    text = json.dumps(v, default=str) if not isinstance(v, str) else v
    return text if len(text) <= 80 else text[:77] + "..."


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _limit_text(stats: CounterStats) -> str:
    """``crc-errors-delta <= 0`` or ``-``."""
    if stats.limit is None:
        return "-"
    unit = {"max_delta": "", "max_per_s": "/s", "max_pre_fec_ber": " BER"}[stats.limit.param]
    return f"{stats.limit.check} <= {stats.limit.value:g}{unit}"


def _fastest(stats: CounterStats) -> str:
    """The counter's fastest mover: ``leaf-1 Ethernet8 +120 (2/s)``."""
    if not stats.top:
        return "-"
    row = max(stats.top)[3]
    rate = "" if row[6] is None else f" ({row[6]:.4g}/s)"
    return f"{row[0]} {row[1]} +{row[5]}{rate}"


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


#: Above this many state changes the JSON is written compact (a large change window: tens of
#: thousands of changes). The counters are a summary: a few hundred rows at any size.
INDENT_LIMIT = 10_000


def render_json(result: DiffResult) -> str:
    """The JSON document (orjson): indented when small, compact when large."""
    small = len(result.changes) <= INDENT_LIMIT
    with paused_gc():
        doc = result.to_dict()
        option = orjson.OPT_APPEND_NEWLINE | (orjson.OPT_INDENT_2 if small else 0)
        return orjson.dumps(doc, option=option, default=str).decode()


def verdict(result: DiffResult) -> str:
    """One line: what the diff says."""
    parts = [
        f"{len(result.changes)} state changes",
        f"{result.counters.moved} counters moved on {result.counters.devices} devices "
        f"({result.counters.resets} resets, {result.counters.findings_total} past their check's limit)",
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
    if result.limits_from:
        out += [f"Counter limits from {result.limits_from}.", ""]
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
                f"{_cell(_subject(r))} | {_cell(r['message'])} |"
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
    out += _markdown_counters(result)
    return "\n".join(out) + "\n"


def _markdown_counters(result: DiffResult) -> list[str]:
    """The counters past a limit (findings), then the movement per counter; bounded at any size."""
    summary = result.counters
    out: list[str] = []
    if summary.findings_total:
        out += [f"## Counters past their check's limit ({summary.findings_total})", "",
                "| severity | check | device | interface | counter | delta | per second | value | limit |",
                "|---|---|---|---|---|---:|---:|---:|---:|"]  # fmt: skip
        for f in summary.finding_dicts()[:MAX_ROWS]:
            (limit,) = f["limit"].values()
            out.append(
                f"| {f['severity']} | {f['check']} | {_cell(f['device'])} | {_cell(f['subject'])} | "
                f"{f['counter']} | {f['delta']} | {_number(f['per_second'])} | {f['value']:g} | {limit:g} |"
            )
        if summary.findings_total > MAX_ROWS:
            out.append(
                f"\n... and {summary.findings_total - MAX_ROWS} more (the first {len(summary.findings)} in the JSON output)"
            )
        out.append("")
    if summary.moved:
        stats = summary.counters()
        out += [f"## Counters moved ({summary.moved} on {summary.devices} devices, {len(stats)} counters)", "",
                "| counter | judged by | ports | devices | resets | delta | max per second | past limit | fastest |",
                "|---|---|---:|---:|---:|---:|---:|---:|---|"]  # fmt: skip
        for st in stats[:MAX_ROWS]:
            out.append(
                f"| {st.counter} | {_limit_text(st)} | {st.interfaces} | {st.devices} | {st.resets} | "
                f"{st.delta} | {_number(st.rate_max)} | {st.over} | {_cell(_fastest(st))} |"
            )
        if len(stats) > MAX_ROWS:
            out.append(f"\n... and {len(stats) - MAX_ROWS} more in the JSON output")
        where = f"`{result.counter_rows}`" if result.counter_rows else "`--counter-rows FILE`"
        out += ["", f"Every counter row: {where} (JSON Lines).", ""]
    return out


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
            t.add_row(r["severity"], r["check"], r["device"], _subject(r), r["message"])
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
    _print_counters(result, console)
    if result.limits_from:
        console.print(f"counter limits from {result.limits_from}", highlight=False)
    console.print(verdict(result), highlight=False)


def _print_counters(result: DiffResult, console: Console) -> None:
    summary = result.counters
    if summary.findings_total:
        t = Table(title=f"counters past their check's limit ({summary.findings_total})", title_style="red")
        for col in ("severity", "check", "device", "interface", "counter"):
            t.add_column(col, overflow="fold")
        for col in ("delta", "per second", "value", "limit"):
            t.add_column(col, justify="right")
        for f in summary.finding_dicts()[:20]:
            (limit,) = f["limit"].values()
            t.add_row(f["severity"], f["check"], f["device"], f["subject"], f["counter"], str(f["delta"]),
                      _short(f["per_second"]), _short(f["value"]), f"{limit:g}")  # fmt: skip
        console.print(t)
    if summary.moved:
        stats = summary.counters()
        t = Table(title=f"counters moved ({summary.moved} on {summary.devices} devices)")
        t.add_column("counter", no_wrap=True)
        t.add_column("judged by", overflow="fold")
        for col in ("ports", "resets", "max /s", "past limit"):
            t.add_column(col, justify="right")
        t.add_column("fastest", overflow="fold")
        for st in stats[:MAX_ROWS]:
            t.add_row(st.counter, _limit_text(st), str(st.interfaces), str(st.resets), _short(st.rate_max),
                      str(st.over), _fastest(st))  # fmt: skip
        console.print(t)
        if len(stats) > MAX_ROWS:
            console.print(
                f"... and {len(stats) - MAX_ROWS} more counters in the JSON output", highlight=False
            )


def _short(value: float | None) -> str:
    """A number in at most 4 significant digits (``1.157``, ``5.8e-04``), ``-`` for none."""
    return "-" if value is None else f"{value:.4g}"
