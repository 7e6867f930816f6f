"""Markdown: the problems (findings grouped by cause), the counts, then the findings by check, for
PR comments and tickets.
"""

from __future__ import annotations

import re
from collections import defaultdict

from fabline.record import Report, ReportContext
from fabline.reports.console import finding_checks, inspect_text, problem_count_line
from fabline.results import Result, Status, capped_join

#: Longest list of results printed per check; the JSON report has them all.
MAX_ROWS_PER_CHECK = 50
#: Most findings printed in all (the checks with the most severe findings first).
MAX_FINDING_ROWS = 300
#: Most problems listed; the JSON report has them all.
MAX_PROBLEMS = 200


#: Control characters (escape sequences would reach a terminal that shows report.md).
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]+")
#: A '<' that could open an HTML tag, comment or autolink; an '&' that could start an entity.
_HTML_OPEN = re.compile(r"<(?=[A-Za-z/!?])")
_ENTITY = re.compile(r"&(?=#?\w+;)")


def _cell(text: object) -> str:
    r"""Text from a device or a user file, safe in a Markdown table cell.

    Device strings (an LLDP system name, a port description) are set by whoever controls the
    device: no raw HTML, no link or image, no code span, no cell break, no control character.
    Text that is none of those is left as it reads (``a <-> b``, ``[3, 4]``).

    Example:
        >>> _cell('<img src=x onerror=alert(1)> | [x](http://e) `y`\x1b[2J')
        '&lt;img src=x onerror=alert(1)> \\| [x\\](http://e) \\`y\\` [2J'
    """
    out = _CONTROL.sub(" ", str(text)).replace("\\", "\\\\")
    out = out.replace("|", "\\|").replace("`", "\\`").replace("](", "\\](")
    return _HTML_OPEN.sub("&lt;", _ENTITY.sub("&amp;", out))


def render(report: Report, context: ReportContext | None = None) -> str:
    """Markdown text."""
    s = report.summary
    st = s["by_status"]
    verdict = {0: "PASS", 3: "ERRORS", 4: "FAIL"}.get(report.exit_code, f"exit {report.exit_code}")
    out = [
        f"# fabline compliance report: {verdict}",
        "",
        f"Inventory `{report.inventory}`, snapshot `{report.snapshot}`, baseline "
        + ", ".join(f"`{b}`" for b in report.baselines)
        + f"; fails on `{report.fail_on.label}` and above.",
        "",
    ]
    out += _problems(report)
    out += [
        "| results | pass | fail | error | skipped | waived |",
        "|---:|---:|---:|---:|---:|---:|",
        f"| {s['total']} | {st['pass']} | {st['fail']} | {st['error']} | {st['skipped']} | {st['waived']} |",
        "",
    ]
    fails = s["failures_by_severity"]
    out += [
        "| critical | major | minor | info |",
        "|---:|---:|---:|---:|",
        f"| {fails['critical']} | {fails['major']} | {fails['minor']} | {fails['info']} |",
        "",
    ]
    bad_devices = [d for d in report.outcome.devices if d["status"] not in ("ok",)]
    if bad_devices:
        out += [
            "## Devices not fully collected",
            "",
            "| device | platform | role | status |",
            "|---|---|---|---|",
        ]
        out += [
            f"| {_cell(d['name'])} | {d['platform']} | {d['role']} | {d['status']} |" for d in bad_devices
        ]
        out.append("")
    if report.outcome.warnings:
        out += ["## Warnings", ""] + [f"- {_cell(w)}" for w in report.outcome.warnings] + [""]
    out += _findings(report)
    out += _passes(report)
    return "\n".join(out)


def _findings(report: Report) -> list[str]:
    """The findings by check, the most severe first: at most :data:`MAX_ROWS_PER_CHECK` per check
    and :data:`MAX_FINDING_ROWS` in all, then how many more (report.json has every one).
    """
    grouped: dict[str, list[Result]] = defaultdict(list)
    for r in report.findings():
        grouped[r.check].append(r)
    if not grouped:
        return []
    out = ["## Findings by check", ""]
    room = MAX_FINDING_ROWS
    for n, (check, rows) in enumerate(grouped.items()):
        if room <= 0:
            rest = list(grouped.items())[n:]
            names = [f"`{c}` ({len(rs)})" for c, rs in rest]
            out += [f"{_more(sum(len(rs) for _, rs in rest), 0)} in {len(rest)} more checks: "
                    + capped_join(names, ", ", 20), ""]  # fmt: skip
            break
        nfail = sum(1 for r in rows if r.status is Status.FAIL)
        nerr = len(rows) - nfail
        out += [
            f"### `{check}` ({rows[0].severity.label}): {nfail} failed, {nerr} errors",
            "",
            "| status | device | subject | message |",
            "|---|---|---|---|",
        ]
        shown = rows[: min(MAX_ROWS_PER_CHECK, room)]
        room -= len(shown)
        out += [
            f"| {r.status.value} | {_cell(r.device)} | {_cell(r.subject_text())} | {_cell(r.message)} |"
            for r in shown
        ]
        if len(rows) > len(shown):
            out.append(f"\n{_more(len(rows), len(shown))}")
        out.append("")
    return out


def _more(total: int, shown: int) -> str:
    """``... and 12 more (see report.json)``: what a capped list says about the rest."""
    return f"... and {total - shown} more (see report.json)"


def _passes(report: Report) -> list[str]:
    """Passes by check: how many devices and results passed (report.json has them per device)."""
    by_check = report.passes_by_check()
    if not by_check:
        return []
    out = ["## Passes by check", "", "| check | devices | passes |", "|---|---:|---:|"]
    out += [f"| `{check}` | {devices} | {passes} |" for check, (devices, passes) in by_check.items()]
    return [*out, ""]


def _problems(report: Report) -> list[str]:
    """The problems section: one row per problem, most severe first."""
    problems = report.problems
    out = [f"## {problem_count_line(report)}", ""]
    if not problems:
        return [*out, "No failures and no errors.", ""]
    out += [
        "| # | severity | problem | where | findings | next step | id |",
        "|---:|---|---|---|---|---|---|",
    ]
    for n, p in enumerate(problems[:MAX_PROBLEMS], start=1):
        step = p.next_step + (f"; inspect {inspect_text(p)}" if p.inspect else "")
        out.append(
            f"| {n} | {p.severity.label}{'' if p.status is Status.FAIL else ' (error)'} | {_cell(p.cause)} "
            f"| {_cell(p.where)} | {len(p.findings)}: {_cell(finding_checks(p))} | {_cell(step)} | `{p.id}` |"
        )
    if len(problems) > MAX_PROBLEMS:
        out.append(f"\n{_more(len(problems), MAX_PROBLEMS)}")
    out.append("")
    return out
