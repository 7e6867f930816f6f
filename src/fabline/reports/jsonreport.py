"""The JSON report, ``fabline.report/1``: the machine-readable record of a check run."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson

from fabline.record import Report, ReportContext
from fabline.results import PassRun, Result, Status

SCHEMA_ID = "fabline.report/1"

_INDENT = orjson.OPT_INDENT_2
#: Stand-ins for the per-result values in a run's row template (private-use characters).
_ID_MARK = "\ue000fabline-id\ue000"
_SUBJECT_MARK = "\ue000fabline-subject\ue000"
_ROW_INDENT = b"\n    "  # a result row sits at depth 2 of the document


def _head(report: Report) -> dict[str, Any]:
    return {
        "schema": SCHEMA_ID,
        "fabline_version": report.version,
        "run": {
            "started": report.timestamp("started"),
            "finished": report.timestamp("finished"),
            "duration_s": round(report.outcome.finished - report.outcome.started, 3),
            "inventory": report.inventory,
            "baselines": report.baselines,
            "snapshot": report.snapshot,
            "limit": report.limit,
            "fail_on": report.fail_on.label,
            "exit_code": report.exit_code,
        },
        "summary": report.summary,
        "devices": report.outcome.devices,
        "checks": report.outcome.checks,
        "warnings": report.outcome.warnings,
        "problems": [p.to_dict() for p in report.problems],
        "results": [],
    }


def document(report: Report) -> dict[str, Any]:
    """The report as a JSON-ready dict."""
    doc = _head(report)
    doc["results"] = [r.to_dict() for r in report.results]
    return doc


def render(report: Report, context: ReportContext | None = None) -> str:
    """JSON text (indented by two spaces, stable key order)."""
    return render_bytes(report).decode("utf-8")


def render_bytes(report: Report, context: ReportContext | None = None) -> bytes:
    """The JSON text as UTF-8: exactly ``orjson.dumps(document(report))`` indented, plus a newline.

    A 320-device run has 200k results, nearly all passes; a dict per result cost most of a second.
    The passes of one check on one device share every field but ``id`` and ``subject``, so their
    rows come from one template serialized by orjson, with only those two values encoded per row.
    ``default=str`` keeps odd values (dates in waivers) printable.
    """
    head = orjson.dumps(_head(report), option=_INDENT, default=str)
    empty = b'"results": []\n}'
    assert head.endswith(empty)
    parts = _rows(report.results.runs())
    if not parts:
        return head + b"\n"
    assert parts[-1].endswith(b",\n")
    parts[-1] = parts[-1][:-2] + b"\n  ]\n}\n"  # the last row closes the list and the document
    return b"".join((head[: -len(b"[]\n}")], b"[\n", *parts))


def _dump_row(row: dict[str, Any]) -> bytes:
    return b"    " + orjson.dumps(row, option=_INDENT, default=str).replace(b"\n", _ROW_INDENT)


def _rows(runs: Iterable[Result | PassRun]) -> list[bytes]:
    """The result rows, each ending with a separator (``,\\n``), as one flat list of byte strings.

    A pass row is ``pre + id + mid + subject + post``. JSON escaping maps each character on its
    own, so the id (``device::check::subject``) is the run's escaped prefix followed by the
    subject's escaped text, and every distinct subject is encoded once per report.
    """
    sep = b",\n"
    parts: list[bytes] = []
    add = parts.append
    extend = parts.extend
    encoded: dict[str | None, tuple[bytes, bytes]] = {}
    for run in runs:
        if isinstance(run, Result):
            add(_dump_row(run.to_dict()))
            add(sep)
            continue
        check, device, severity, expected, subjects = run
        template = _template(check, device, severity.label, expected)
        if template is None:  # a value holds a marker: the plain path
            for subject in subjects:
                add(_dump_row(Result(check, device, subject, Status.PASS, severity, expected).to_dict()))
                add(sep)
            continue
        pre, mid, post = template
        pre += orjson.dumps(f"{device}::{check}::")[:-1]  # the id's opening quote and prefix
        mid = b'"' + mid
        post += sep
        for subject in subjects:
            enc = encoded.get(subject)
            if enc is None:
                enc = encoded[subject] = (
                    orjson.dumps(subject or "-")[1:-1],
                    b"null" if subject is None else orjson.dumps(subject),
                )
            extend((pre, enc[0], mid, enc[1], post))
    return parts


def _template(check: str, device: str, severity: str, expected: Any) -> tuple[bytes, bytes, bytes] | None:
    """A pass row cut around its id and subject: ``(before id, between, after subject)``."""
    row = {
        "id": _ID_MARK,
        "check": check,
        "device": device,
        "subject": _SUBJECT_MARK,
        "status": "pass",
        "severity": severity,
        "expected": expected,
        "actual": None,
        "message": "",
    }
    text = _dump_row(row)
    id_mark, subject_mark = orjson.dumps(_ID_MARK), orjson.dumps(_SUBJECT_MARK)
    if text.count(id_mark) != 1 or text.count(subject_mark) != 1:
        return None
    pre, _, rest = text.partition(id_mark)
    mid, _, post = rest.partition(subject_mark)
    return pre, mid, post
