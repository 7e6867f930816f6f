"""Markdown: a summary table and the problems grouped by check, for PR comments and tickets."""

from __future__ import annotations

from collections import defaultdict

from fabline.reports import Report
from fabline.results import Result, Status

#: Longest list of results printed per check; the JSON report has them all.
MAX_ROWS_PER_CHECK = 50


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render(report: Report) -> str:
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
        out += [f"| {d['name']} | {d['platform']} | {d['role']} | {d['status']} |" for d in bad_devices]
        out.append("")
    if report.outcome.warnings:
        out += ["## Warnings", ""] + [f"- {_cell(w)}" for w in report.outcome.warnings] + [""]
    grouped: dict[str, list[Result]] = defaultdict(list)
    for r in report.problems():
        grouped[r.check].append(r)
    if not grouped:
        out += ["No failures and no errors.", ""]
        return "\n".join(out)
    out += ["## Problems by check", ""]
    for check, rows in grouped.items():
        nfail = sum(1 for r in rows if r.status is Status.FAIL)
        nerr = len(rows) - nfail
        out += [
            f"### `{check}` ({rows[0].severity.label}): {nfail} failed, {nerr} errors",
            "",
            "| status | device | subject | message |",
            "|---|---|---|---|",
        ]
        out += [
            f"| {r.status.value} | {r.device} | {r.subject or '-'} | {_cell(r.message)} |"
            for r in rows[:MAX_ROWS_PER_CHECK]
        ]
        if len(rows) > MAX_ROWS_PER_CHECK:
            out.append(f"\n... and {len(rows) - MAX_ROWS_PER_CHECK} more (see report.json)")
        out.append("")
    return "\n".join(out)
