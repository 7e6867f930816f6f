"""JUnit XML that CI servers load at any fabric size: one test case per check and device with findings.

A 100k-GPU fabric has ten million results; a JUnit file with one test case each is gigabytes and
no CI test view loads it. Here a check is a ``<testsuite>``; inside it

* every device with a finding (fail, error) or a waived result on that check is one
  ``<testcase classname="fabline.<check>" name="<device>">``, its ``<failure>``/``<error>`` text
  listing the failing subjects with their messages (the first :data:`MAX_LINES`, then how many
  more); at most :data:`MAX_DEVICE_CASES` such devices per check, the others are named in their
  role's case;
* the other devices of each role are one ``<testcase name="<role> devices without findings">``:
  it passes, and its ``<system-out>`` counts the devices, passes and skipped results.

So the file grows with the findings, not with the ports. Test case names are unique within their
class (a device name, or a role's case whose name has spaces), and ``id``/``file`` hold
``<check>::<device>`` or ``<check>::role:<role>``, which GitLab and Jenkins use to tell cases
apart. ``report.json`` has every result.
"""

from __future__ import annotations

import re
from collections import Counter

from fabline.record import Report, ReportContext
from fabline.results import Result, Status, block_count, capped_join

#: Failing subjects listed in one test case's failure text.
MAX_LINES = 20
#: Devices with findings given their own test case in one check's suite.
MAX_DEVICE_CASES = 1000
#: Characters of one subject's message in a failure text.
MAX_LINE_CHARS = 300


class _Suite:
    """What one check's suite gathers: findings per device, passes and skips per role."""

    __slots__ = ("by_device", "passes", "severity", "skipped")

    def __init__(self) -> None:
        self.by_device: dict[str, list[Result]] = {}
        self.passes: dict[str, Counter[str]] = {}  # role -> device -> passes
        self.skipped: dict[str, Counter[str]] = {}  # role -> device -> skipped results
        self.severity = ""


def _suites(report: Report, roles: dict[str, str]) -> dict[str, _Suite]:
    """Each check's suite, in the order of the checks' first results.

    Passes come from the run's pass counts (computed once for every report, before the writers
    fork), the rest from the results that are not passes: a 100k-GPU run's millions of passes
    are not walked again here (1.9 s of the JUnit writer).
    """
    store = report.results
    suites: dict[str, _Suite] = {}
    for check, severity in store.first_severities().items():
        suite = suites[check] = _Suite()
        suite.severity = severity.label
    for check, by_device in report.pass_counts().items():
        passes = suites[check].passes
        for device, n in by_device.items():
            role = roles.get(device, "other")
            counter = passes.get(role)
            if counter is None:
                counter = passes[role] = Counter()
            counter[device] = counter.get(device, 0) + n
    for run in store.not_passes():
        suite = suites[run.check]
        role = roles.get(run.device, "other")
        if run.status is Status.SKIPPED:
            suite.skipped.setdefault(role, Counter())[run.device] += block_count(run)
        else:
            suite.by_device.setdefault(run.device, []).append(run)
    return suites


def render(report: Report, context: ReportContext | None = None) -> str:
    """JUnit XML text (written as text: the escaping is ElementTree's own)."""
    roles = {str(d.get("name")): str(d.get("role") or "other") for d in report.outcome.devices}
    suites = _suites(report, roles)
    stamp = report.timestamp()
    body: list[str] = []
    totals = Counter[str]()
    for check, suite in suites.items():
        cases, counts = _cases(check, suite, roles)
        totals.update(counts)
        body.append(
            " "
            + _open(
                "testsuite",
                name=check,
                tests=counts["tests"],
                failures=counts["failures"],
                errors=counts["errors"],
                skipped=counts["skipped"],
                timestamp=stamp,
            )
        )
        body += cases
        body.append(" </testsuite>")
    head = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        _open(
            "testsuites",
            name="fabline",
            tests=totals["tests"],
            failures=totals["failures"],
            errors=totals["errors"],
            skipped=totals["skipped"],
            time=f"{report.outcome.finished - report.outcome.started:.3f}",
            timestamp=stamp,
        ),
    ]
    return "\n".join([*head, *body, "</testsuites>"]) + "\n"


def _cases(check: str, suite: _Suite, roles: dict[str, str]) -> tuple[list[str], Counter[str]]:
    """The suite's test case lines and its counts (tests, failures, errors, skipped)."""
    classname = _attr(f"fabline.{check}")
    out: list[str] = []
    counts = Counter[str]()
    overflow: dict[str, list[str]] = {}  # role -> devices with findings beyond MAX_DEVICE_CASES
    for n, (device, results) in enumerate(suite.by_device.items()):
        role = roles.get(device, "other")
        if n >= MAX_DEVICE_CASES:
            overflow.setdefault(role, []).append(device)
            continue
        rid = _attr(f"{check}::{device}")
        out.append(f'  <testcase classname="{classname}" name="{_attr(device)}" file="{rid}" id="{rid}">')
        out += _verdict(results, suite, counts)
        out.append("  </testcase>")
        counts["tests"] += 1
    for role in sorted(suite.passes.keys() | suite.skipped.keys() | overflow.keys()):
        passes = {d: n for d, n in suite.passes.get(role, Counter()).items() if d not in suite.by_device}
        skipped = {d: n for d, n in suite.skipped.get(role, Counter()).items() if d not in suite.by_device}
        devices = passes.keys() | skipped.keys()
        more = overflow.get(role, [])
        if not devices and not more:
            continue
        rid = _attr(f"{check}::role:{role}")
        name = _attr(f"{role} devices without findings")
        counts["tests"] += 1
        line = (
            f"devices: {len(devices)}, passes: {sum(passes.values())}, skipped (not applicable): "
            f"{sum(skipped.values())}; every result is in report.json"
        )
        case = f'  <testcase classname="{classname}" name="{name}" file="{rid}" id="{rid}">'
        if more:
            counts["failures"] += 1
            text = f"{len(more)} more devices with findings on this check: " + capped_join(more, ", ", 50)
            out += [
                case,
                f'   <failure message="{_attr(f"{len(more)} more devices with findings (see report.json)")}" '
                f'type="{suite.severity}">{_text(text)}</failure>',
                f"   <system-out>{_text(line)}</system-out>",
                "  </testcase>",
            ]
        elif not passes:
            counts["skipped"] += 1
            out += [
                case,
                f'   <skipped message="{_attr(f"not applicable (devices: {len(devices)})")}" />',
                "  </testcase>",
            ]
        else:
            out += [case, f"   <system-out>{_text(line)}</system-out>", "  </testcase>"]
    return out, counts


def _verdict(results: list[Result], suite: _Suite, counts: Counter[str]) -> list[str]:
    """A device case's ``<failure>``, ``<error>`` or ``<skipped>`` (waived) element."""
    fails = [r for r in results if r.status is Status.FAIL]
    errors = [r for r in results if r.status is Status.ERROR]
    if fails or errors:
        worst = fails or errors
        tag, kind = ("failure", max(r.severity for r in fails).label) if fails else ("error", "error")
        counts["failures" if fails else "errors"] += 1
        subjects = ", ".join(dict.fromkeys(r.subject_text(3) for r in worst[:5]))
        n_worst = sum(map(block_count, worst))
        head = (
            f"{n_worst} {'failed' if fails else 'errors'}: {subjects}"
            + (f" and {len(worst) - 5} more" if len(worst) > 5 else "")
            + f": {worst[0].message}"
        )
        lines = [_line(r) for r in fails + errors]
        text = capped_join(lines, "\n", MAX_LINES)
        if len(lines) > MAX_LINES:
            text += " (see report.json)"
        return [f'   <{tag} message="{_attr(_cut(head))}" type="{kind}">{_text(text)}</{tag}>']
    counts["skipped"] += 1
    waived = [r for r in results if r.status is Status.WAIVED]
    why = f"waived: {waived[0].waiver}" if waived else "not applicable"
    n = sum(map(block_count, results))
    return [f'   <skipped message="{_attr(_cut(f"{n} {why}" if n > 1 else why))}" />']


def _line(r: Result) -> str:
    """One failing subject: ``eth1 [fail]: mtu is 1500, expected 9000 (expected ..., actual ...)``."""
    line = f"{r.subject_text()} [{r.status.value}]: {r.message}"
    if r.actual is not None:
        line += f" (actual: {r.actual})"
    return _cut(line)


def _cut(text: str) -> str:
    return text if len(text) <= MAX_LINE_CHARS else text[: MAX_LINE_CHARS - 3] + "..."


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
