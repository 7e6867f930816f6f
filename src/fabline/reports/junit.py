"""JUnit XML: one testsuite per check, one testcase per result with a unique name.

GitLab and Jenkins collapse test cases with identical class and name, so each testcase is named
``device subject`` inside a class named after the check: no two results share both.
"""

from __future__ import annotations

import re
from collections import defaultdict

from fabline.record import Report, ReportContext
from fabline.results import PassRun, Result, Status


def render(report: Report, context: ReportContext | None = None) -> str:
    """JUnit XML text.

    Written as text rather than through ElementTree: a 320-device run has 200k test cases, and
    building the tree cost a second; the escaping is ElementTree's own. Passes are streamed from
    the store's runs: escaping maps each character on its own, so a pass's name and id are its
    run's escaped device and id prefix followed by the subject's escaped text (once per subject).
    """
    by_check: dict[str, list[Result | PassRun]] = defaultdict(list)
    for run in report.results.runs():
        by_check[run.check if isinstance(run, Result) else run[0]].append(run)
    summary = report.summary["by_status"]
    stamp = report.timestamp()
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        _open(
            "testsuites",
            name="fabline",
            tests=report.summary["total"],
            failures=summary["fail"],
            errors=summary["error"],
            skipped=summary["skipped"] + summary["waived"],
            time=f"{report.outcome.finished - report.outcome.started:.3f}",
            timestamp=stamp,
        ),
    ]
    escaped: dict[str | None, str] = {}
    for check, runs in by_check.items():
        counts = dict.fromkeys(Status, 0)
        for run in runs:
            if isinstance(run, Result):
                counts[run.status] += 1
            else:
                counts[Status.PASS] += len(run[4])
        out.append(
            " "
            + _open(
                "testsuite",
                name=check,
                tests=sum(counts.values()),
                failures=counts[Status.FAIL],
                errors=counts[Status.ERROR],
                skipped=counts[Status.SKIPPED] + counts[Status.WAIVED],
                timestamp=stamp,
            )
        )
        classname = _attr(f"fabline.{check}")
        for run in runs:
            if not isinstance(run, Result):
                device = run[1]
                head = f'  <testcase classname="{classname}" name="{_attr(device)} '
                rid = _attr(f"{device}::{check}::")
                for subject in run[4]:
                    subj = escaped.get(subject)
                    if subj is None:
                        subj = escaped[subject] = _attr(subject or "-")
                    out.append(f'{head}{subj}" file="{rid}{subj}" id="{rid}{subj}" />')
                continue
            r = run
            rid = _attr(r.id)
            name = _attr(f"{r.device} {r.subject or '-'}")
            case = f'  <testcase classname="{classname}" name="{name}" file="{rid}" id="{rid}"'
            if r.status is Status.PASS:
                out.append(case + " />")
                continue
            out.append(case + ">")
            if r.status is Status.FAIL:
                out.append(
                    f'   <failure message="{_attr(r.message)}" type="{r.severity.label}">{_text(_detail(r))}</failure>'
                )
            elif r.status is Status.ERROR:
                out.append(f'   <error message="{_attr(r.message)}" type="error">{_text(_detail(r))}</error>')
            elif r.status is Status.SKIPPED:
                out.append(f'   <skipped message="{_attr(r.message)}" />')
            else:
                out.append(f'   <skipped message="{_attr(f"waived: {r.waiver}")}" />')
            out.append("  </testcase>")
        out.append(" </testsuite>")
    out.append("</testsuites>")
    return "\n".join(out) + "\n"


def _open(tag: str, **attrs: object) -> str:
    return f"<{tag} " + " ".join(f'{k}="{_attr(str(v))}"' for k, v in attrs.items()) + ">"


#: Characters XML 1.0 does not allow at all (control characters other than tab, newline and carriage
#: return, lone surrogates, U+FFFE/U+FFFF): a device name or a message quoting garbled output can hold
#: them, and one would make the whole report unreadable to a CI server. They become U+FFFD.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_ATTR_SPECIAL = re.compile('[&<>"\r\n\t\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]')
_TEXT_SPECIAL = re.compile("[&<>\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _attr(text: str) -> str:
    """Escape an attribute value as ElementTree does (and replace what XML cannot hold).

    Example:
        >>> _attr('a<b> "c"\\tx\\x1b[0m') == 'a&lt;b&gt; &quot;c&quot;&#09;x\\ufffd[0m'
        True
    """
    if _ATTR_SPECIAL.search(text):
        text = _NOT_XML.sub("\ufffd", text)
        text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
        text = text.replace("\r", "&#13;").replace("\n", "&#10;").replace("\t", "&#09;")
    return text


def _text(text: str) -> str:
    """Escape element text as ElementTree does (and replace what XML cannot hold)."""
    if _TEXT_SPECIAL.search(text):
        text = _NOT_XML.sub("\ufffd", text)
        text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text


def _detail(r: Result) -> str:
    lines = [f"device: {r.device}", f"subject: {r.subject or '-'}", f"severity: {r.severity.label}"]
    if r.expected is not None:
        lines.append(f"expected: {r.expected}")
    if r.actual is not None:
        lines.append(f"actual: {r.actual}")
    return "\n".join(lines)
