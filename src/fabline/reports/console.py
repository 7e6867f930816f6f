"""The console summary: the problems first (findings grouped by cause), then the counts, the
devices not collected and the warnings.
"""

from __future__ import annotations

from collections import Counter

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from fabline.problems import Problem
from fabline.record import Report
from fabline.results import Status

_STYLE = {"pass": "green", "fail": "red", "error": "magenta", "skipped": "dim", "waived": "cyan"}


def problem_count_line(report: Report) -> str:
    """``12 problems (39 findings)``: the headline of every report format.

    Example:
        >>> from types import SimpleNamespace as NS
        >>> problem_count_line(NS(problems=[NS(findings=[1, 2]), NS(findings=[3])]))
        '2 problems (3 findings)'
    """
    n = len(report.problems)
    m = sum(len(p.findings) for p in report.problems)
    return f"{n} problem{'' if n == 1 else 's'} ({m} finding{'' if m == 1 else 's'})"


def finding_checks(problem: Problem) -> str:
    """The checks of a problem's findings with their counts: ``switch-mtu, link-mtu x2``."""
    counts = Counter(r.check for r in problem.findings)
    return ", ".join(f"{c} x{n}" if n > 1 else c for c, n in counts.items())


def inspect_text(problem: Problem, limit: int = 3) -> str:
    """``leaf-r0-a Ethernet24 (peer spine-02 Ethernet1/1, plan line 5); ...`` for physical problems."""
    parts = []
    for i in problem.inspect[:limit]:
        peer = f"peer {i['peer_device']} {i['peer_port']}" if i.get("peer_device") else "no known peer"
        plan = f", plan line {i['plan_line']}" if i.get("plan_line") is not None else ""
        parts.append(f"{i['device']} {i['port']} ({peer}{plan})")
    more = len(problem.inspect) - limit
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def print_problems(report: Report, console: Console, max_problems: int = 25) -> None:
    """The problems, most severe first: cause, where, findings, next step (and what to inspect)."""
    problems = report.problems
    console.print(f"[bold]{problem_count_line(report)}[/bold]", highlight=False)
    for n, p in enumerate(problems[:max_problems], start=1):
        style = _STYLE["fail" if p.status is Status.FAIL else "error"]
        # The cause quotes device strings: escaped, so '[bold]' in an LLDP name is not markup.
        console.print(
            f"{n:>3}. [{style}]{p.severity.label:<8}[/] {escape(p.cause)}", highlight=False, markup=True
        )
        console.print(
            f"     at {p.where}; {len(p.findings)} finding(s): {finding_checks(p)}",
            highlight=False,
            markup=False,
        )
        if p.inspect:
            console.print(f"     inspect: {inspect_text(p)}", highlight=False, markup=False)
        console.print(f"     next: {p.next_step}  [{p.id}]", highlight=False, markup=False)
    if len(problems) > max_problems:
        console.print(f"... and {len(problems) - max_problems} more in the report files", highlight=False)


def print_summary(report: Report, console: Console, max_problems: int = 25) -> None:
    """Print the run's summary; the full detail is in the report files."""
    if report.problems:
        print_problems(report, console, max_problems)
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
        console.print(f"[yellow]warning:[/yellow] {escape(w)}", highlight=False)
    verdict = {0: "[green]PASS[/]", 3: "[magenta]ERRORS[/]", 4: "[red]FAIL[/]"}.get(report.exit_code, "")
    console.print(f"verdict: {verdict} (exit {report.exit_code})")
