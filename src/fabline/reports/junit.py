"""JUnit XML: one testsuite per check, one testcase per result with a unique name.

GitLab and Jenkins collapse test cases with identical class and name, so each testcase is named
``device subject`` inside a class named after the check: no two results share both.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict

from fabline.reports import Report
from fabline.results import Result, Status


def render(report: Report) -> str:
    """JUnit XML text."""
    by_check: dict[str, list[Result]] = defaultdict(list)
    for r in report.results:
        by_check[r.check].append(r)
    summary = report.summary["by_status"]
    root = ET.Element(
        "testsuites",
        name="fabline",
        tests=str(report.summary["total"]),
        failures=str(summary["fail"]),
        errors=str(summary["error"]),
        skipped=str(summary["skipped"] + summary["waived"]),
        time=f"{report.outcome.finished - report.outcome.started:.3f}",
        timestamp=report.timestamp(),
    )
    for check, results in by_check.items():
        counts = {s: sum(1 for r in results if r.status is s) for s in Status}
        suite = ET.SubElement(
            root,
            "testsuite",
            name=check,
            tests=str(len(results)),
            failures=str(counts[Status.FAIL]),
            errors=str(counts[Status.ERROR]),
            skipped=str(counts[Status.SKIPPED] + counts[Status.WAIVED]),
            timestamp=report.timestamp(),
        )
        for r in results:
            case = ET.SubElement(
                suite,
                "testcase",
                classname=f"fabline.{check}",
                name=f"{r.device} {r.subject or '-'}",
                file=r.id,
            )
            case.set("id", r.id)
            if r.status is Status.FAIL:
                el = ET.SubElement(case, "failure", message=r.message, type=r.severity.label)
                el.text = _detail(r)
            elif r.status is Status.ERROR:
                el = ET.SubElement(case, "error", message=r.message, type="error")
                el.text = _detail(r)
            elif r.status is Status.SKIPPED:
                ET.SubElement(case, "skipped", message=r.message)
            elif r.status is Status.WAIVED:
                ET.SubElement(case, "skipped", message=f"waived: {r.waiver}")
    ET.indent(root, space=" ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _detail(r: Result) -> str:
    lines = [f"device: {r.device}", f"subject: {r.subject or '-'}", f"severity: {r.severity.label}"]
    if r.expected is not None:
        lines.append(f"expected: {r.expected}")
    if r.actual is not None:
        lines.append(f"actual: {r.actual}")
    return "\n".join(lines)
