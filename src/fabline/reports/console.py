"""The console summary: a rich table of counts, devices not collected, and the top problems."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from fabline.reports import Report
from fabline.results import Status

#: Below this console width problems print as lines, not as a table.
WIDE_TABLE_MIN = 140

_STYLE = {"pass": "green", "fail": "red", "error": "magenta", "skipped": "dim", "waived": "cyan"}


def print_summary(report: Report, console: Console, max_problems: int = 25) -> None:
    """Print the run's summary; the full detail is in the report files."""
    s = report.summary
    table = Table(title="fabline check", show_edge=True)
    for name in ("results", *(st.value for st in Status)):
        table.add_column(name, justify="right", style=_STYLE.get(name, ""))
    table.add_row(str(s["total"]), *(str(s["by_status"][st.value]) for st in Status))
    console.print(table)
    fails = s["failures_by_severity"]
    console.print(
        "failures by severity: " + ", ".join(f"{k} {v}" for k, v in fails.items()),
        highlight=False,
    )
    uncollected = [d for d in report.outcome.devices if d["status"] != "ok"]
    if uncollected:
        dt = Table(title="devices not fully collected")
        for col in ("device", "platform", "role", "status"):
            dt.add_column(col)
        for d in uncollected:
            dt.add_row(d["name"], d["platform"], d["role"], d["status"])
        console.print(dt)
    for w in report.outcome.warnings:
        console.print(f"[yellow]warning:[/yellow] {w}", highlight=False)
    problems = report.problems()
    if problems:
        shown = problems[:max_problems]
        if console.width >= WIDE_TABLE_MIN:
            pt = Table(title=f"problems ({len(problems)})")
            for col in ("status", "severity", "check", "device", "subject"):
                pt.add_column(col, no_wrap=True)
            pt.add_column("message", overflow="fold", min_width=20)
            for r in shown:
                pt.add_row(
                    f"[{_STYLE[r.status.value]}]{r.status.value}[/]",
                    r.severity.label,
                    r.check,
                    r.device,
                    r.subject or "-",
                    r.message,
                )
            console.print(pt)
        else:
            # Narrow terminals and logs: one heading line per problem, the message indented below.
            console.print(f"problems ({len(problems)}):", highlight=False)
            for r in shown:
                console.print(
                    f"[{_STYLE[r.status.value]}]{r.status.value:<5}[/] {r.severity.label:<8} {r.check}  "
                    f"{r.device} {r.subject or '-'}",
                    highlight=False,
                )
                console.print(f"      {r.message}", highlight=False, markup=False)
        if len(problems) > max_problems:
            console.print(f"... and {len(problems) - max_problems} more in the report files", highlight=False)
    verdict = {0: "[green]PASS[/]", 3: "[magenta]ERRORS[/]", 4: "[red]FAIL[/]"}.get(report.exit_code, "")
    console.print(f"verdict: {verdict} (exit {report.exit_code})")
