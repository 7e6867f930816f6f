"""The JSON report, ``fabline.report/3``: the machine-readable record of a check run.

It grows with the findings, not with the ports: every result that is not a pass is written in
full (``results``), the passes are counted per check and device (``passes``). Skipped results (and
errors) of one check on one device that say the same thing on many subjects are one row (a
:class:`~fabline.results.SkipBlock`: ``subjects`` in compact form and ``count``). A run's
:attr:`~fabline.record.Report.passes` asks for more: ``subjects`` adds the passing subjects of each
check and device in a compact form (``pass_subjects``), ``results`` writes every pass as its own
result too (an audit), streamed to the file; a block stays one row in every mode, so the ids a
problem's ``findings`` name are always rows of the file. The format is documented in docs/reports.md and described by ``schemas/report-3.schema.json``;
:mod:`fabline.reportfile` reads it back (and ``fabline.report/1`` and ``/2``).
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator
from typing import IO, Any

import orjson

from fabline.record import Report, ReportContext
from fabline.results import PassRun, PassSummary, Result, Status

SCHEMA_ID = "fabline.report/3"
#: What ``passes`` may ask for: counts per check and device, the subjects too, or every pass.
PASS_MODES = ("counts", "subjects", "results")

_INDENT = orjson.OPT_INDENT_2
#: Stand-ins for the per-result values in a run's row template (private-use characters).
_ID_MARK = "\ue000fabline-id\ue000"
_SUBJECT_MARK = "\ue000fabline-subject\ue000"
_ROW_INDENT = b"\n    "  # a result row sits at depth 2 of the document
#: Bytes gathered before one write to the file (the audit form streams, never holds the whole).
_CHUNK = 1 << 20


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
            "passes": report.passes,
        },
        "summary": report.summary,
        "devices": report.outcome.devices,
        "checks": report.outcome.checks,
        "warnings": report.outcome.warnings,
        "problems": [p.to_dict() for p in report.problems],
    }


def _tail(report: Report, passes: PassSummary) -> dict[str, Any]:
    """The pass summary keys that follow ``results``."""
    tail: dict[str, Any] = {"passes": report.pass_counts()}
    if report.passes == "subjects":
        tail["pass_subjects"] = passes.compact()
    return tail


def document(report: Report) -> dict[str, Any]:
    """The report as a JSON-ready dict (what :func:`render_bytes` writes, built whole: for tests)."""
    doc = _head(report)
    every = report.passes == "results"
    rows: list[dict[str, Any]] = []
    for run in report.results.runs():
        if not isinstance(run, Result):
            if every:
                check, device, severity, expected, subjects = run
                rows += (
                    Result(check, device, s, Status.PASS, severity, expected).to_dict() for s in subjects
                )
        elif every or run.status is not Status.PASS:
            rows.append(run.to_dict())
    doc["results"] = rows
    doc.update(_tail(report, report.results.passes()))
    return doc


def render(report: Report, context: ReportContext | None = None) -> str:
    """JSON text (indented by two spaces, stable key order)."""
    return render_bytes(report).decode("utf-8")


def render_bytes(report: Report, context: ReportContext | None = None) -> bytes:
    """The JSON text as UTF-8: exactly ``orjson.dumps(document(report))`` indented, plus a newline."""
    buf = io.BytesIO()
    write(report, context, buf)
    return buf.getvalue()


def write(report: Report, context: ReportContext | None, out: IO[bytes]) -> None:
    """Write the JSON text to ``out`` in chunks of about a megabyte.

    The head (run, summary, devices, checks, problems) and the pass summary are small; the
    ``results`` rows are streamed. A 100k-GPU audit run (``passes="results"``) has ten million
    rows, nearly all passes: the passes of one check on one device share every field but ``id``
    and ``subject``, so their rows come from one template serialized by orjson, with only those
    two values encoded per row. ``default=str`` keeps odd values (dates in waivers) printable.
    """
    head = orjson.dumps(_head(report), option=_INDENT, default=str)
    assert head.endswith(b"\n}")
    out.write(head[:-2] + b',\n  "results": [')
    passes = PassSummary()
    first = True
    pending: list[bytes] = []
    size = 0
    every = report.passes == "results"
    # Counting the passes (the default), the rows are the results that are not passes; their counts
    # come from the report's one tally. The other modes walk the passes too.
    rows = (
        _rows(report.results.runs(), passes, every=every)
        if every or report.passes == "subjects"
        else (_dump_row(r.to_dict()) for r in report.results.not_passes())
    )
    for part in rows:
        pending.append(b"\n" if first else b",\n")
        pending.append(part)
        first = False
        size += len(part)
        if size >= _CHUNK:
            out.write(b"".join(pending))
            pending.clear()
            size = 0
    out.write(b"".join(pending))
    out.write(b"]" if first else b"\n  ]")
    for key, value in _tail(report, passes).items():
        text = orjson.dumps(value, option=_INDENT, default=str).replace(b"\n", b"\n  ")
        out.write(b",\n  " + orjson.dumps(key) + b": " + text)
    out.write(b"\n}\n")


def _dump_row(row: dict[str, Any]) -> bytes:
    return b"    " + orjson.dumps(row, option=_INDENT, default=str).replace(b"\n", _ROW_INDENT)


def _rows(runs: Iterable[Result | PassRun], passes: PassSummary, *, every: bool) -> Iterator[bytes]:
    """The result rows (one byte string each), counting the passes into ``passes`` on the way.

    Without ``every`` only the non-pass results are rows. With it, a pass row is ``pre + id +
    mid + subject + post``: JSON escaping maps each character on its own, so the id
    (``device::check::subject``) is the run's escaped prefix followed by the subject's escaped
    text, and every distinct subject is encoded once per report.
    """
    encoded: dict[str | None, tuple[bytes, bytes]] = {}
    for run in runs:
        if isinstance(run, Result):
            if run.status is Status.PASS:
                passes.add(run.check, run.device, (run.subject,))
                if not every:
                    continue
            yield _dump_row(run.to_dict())
            continue
        check, device, severity, expected, subjects = run
        passes.add(check, device, subjects)
        if not every:
            continue
        template = _template(check, device, severity.label, expected)
        if template is None:  # a value holds a marker: the plain path
            for subject in subjects:
                yield _dump_row(Result(check, device, subject, Status.PASS, severity, expected).to_dict())
            continue
        pre, mid, post = template
        pre += orjson.dumps(f"{device}::{check}::")[:-1]  # the id's opening quote and prefix
        mid = b'"' + mid
        for subject in subjects:
            enc = encoded.get(subject)
            if enc is None:
                enc = encoded[subject] = (
                    orjson.dumps(subject or "-")[1:-1],
                    b"null" if subject is None else orjson.dumps(subject),
                )
            yield b"".join((pre, enc[0], mid, enc[1], post))


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
