"""Reading a saved ``report.json`` back: ``fabline.report/3`` and the older ``/2`` and ``/1``.

What a consumer of a saved report needs (``fabline remediate --report``, scripts) is the same for
every version: the run, the devices, the problems, the findings as :class:`~fabline.results.Result`
objects and the passes per check and device. A ``report/1`` file lists every pass as a result: its
passes are counted here, so the answer has one shape whatever wrote the file. A ``report/3`` row
with ``subjects`` (a block of skipped or error results) is read as one
:class:`~fabline.results.SkipBlock`, its subjects kept compact.

    >>> import json, pathlib, tempfile
    >>> doc = {"schema": "fabline.report/1", "run": {}, "results": [
    ...     {"check": "mtu", "device": "leaf1", "subject": "Ethernet0", "status": "pass", "severity": "major"},
    ...     {"check": "mtu", "device": "leaf1", "subject": "Ethernet4", "status": "fail", "severity": "major",
    ...      "expected": {"mtu": {"eq": 9100}}, "actual": {"mtu": 1500}, "message": "mtu is 1500"}]}
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "report.json"
    >>> _ = path.write_text(json.dumps(doc))
    >>> saved = load_report(path)
    >>> saved.schema, [r.id for r in saved.findings], saved.passes
    ('fabline.report/1', ['leaf1::mtu::Ethernet4'], {'mtu': {'leaf1': 1}})
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from fabline.errors import ConfigError
from fabline.paths import SnapshotPathError, read_regular
from fabline.results import (
    CompactItem,
    CompactSubjects,
    PassCounts,
    Result,
    Severity,
    SkipBlock,
    Status,
    compact_count,
)

#: The report schemas this fabline reads.
SCHEMAS = ("fabline.report/1", "fabline.report/2", "fabline.report/3")
#: Largest report.json read (a report/1 file of a 100k-GPU run is about 3.3 GB).
MAX_REPORT_BYTES = 8 * 1024**3


@dataclass
class SavedReport:
    """A report.json read back.

    Attributes:
        path: The file.
        schema: ``fabline.report/1``, ``/2`` or ``/3``.
        run: The ``run`` object (inventory, snapshot, exit code, ...).
        summary: Counts by status, severity and device.
        devices: One entry per device (name, platform, role, collection status).
        checks: One entry per check (id, kind, severity, description).
        warnings: The run's warnings.
        problems: The problems as written (``findings`` are result ids).
        findings: Every result that is not a pass, in run order (a block of them as one
            :class:`~fabline.results.SkipBlock`).
        passes: Passes per check and device.
        pass_subjects: The passing subjects (compact form), when the report has them.
    """

    path: Path
    schema: str
    run: dict[str, Any]
    summary: dict[str, Any]
    devices: list[dict[str, Any]]
    checks: list[dict[str, Any]]
    warnings: list[str]
    problems: list[dict[str, Any]]
    findings: list[Result]
    passes: PassCounts
    pass_subjects: dict[str, dict[str, list[CompactItem]]] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def findings_by_id(self) -> dict[str, Result]:
        """The findings by result id (what a problem's ``findings`` list names)."""
        return {r.id: r for r in self.findings}


def load_report(path: Path) -> SavedReport:
    """Read a report.json written by ``fabline check`` (``report/1``, ``/2`` or ``/3``).

    Raises:
        ConfigError: Missing or unreadable, not JSON, another schema, a result without its
            ``check``/``device``/``status``/``severity``, or a block whose ``subjects`` are not
            compact subjects or disagree with its ``count``; one line naming the file.
    """
    try:
        data = read_regular(path.resolve(), MAX_REPORT_BYTES)
    except FileNotFoundError:
        raise ConfigError("report not found", file=path) from None
    except SnapshotPathError as exc:
        raise ConfigError(f"cannot read the report: {str(exc).split(': ', 1)[-1]}", file=path) from None
    except OSError as exc:
        raise ConfigError(
            f"cannot read the report: {exc.strerror or type(exc).__name__}", file=path
        ) from None
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise ConfigError(f"not a JSON report ({exc})", file=path) from None
    del data
    return from_document(doc, path)


def from_document(doc: Any, path: Path = Path("report.json")) -> SavedReport:
    """A :class:`SavedReport` from an already parsed document (see :func:`load_report`)."""
    if not isinstance(doc, dict):
        raise ConfigError("not a fabline report (the top level is not an object)", file=path)
    schema = doc.get("schema")
    if schema not in SCHEMAS:
        raise ConfigError(
            f"schema {schema!r} is not one this fabline reads ({', '.join(SCHEMAS)})", file=path, key="schema"
        )
    rows = _list(doc, "results", path)
    findings: list[Result] = []
    counted: dict[str, dict[str, int]] = {}
    for n, row in enumerate(rows):
        r = _result(row, path, n)
        if r.status is Status.PASS:
            by_device = counted.setdefault(r.check, {})
            by_device[r.device] = by_device.get(r.device, 0) + 1
        else:
            findings.append(r)
    # report/1 lists every pass as a result; report/2 and /3 count them in ``passes``.
    passes = counted if schema == "fabline.report/1" else _passes(doc.get("passes", {}), path)
    known = {"schema", "run", "summary", "devices", "checks", "warnings", "problems", "results", "passes",
             "pass_subjects"}  # fmt: skip
    subjects = doc.get("pass_subjects")
    return SavedReport(
        path=path,
        schema=str(schema),
        run=dict(doc.get("run") or {}),
        summary=dict(doc.get("summary") or {}),
        devices=_list(doc, "devices", path),
        checks=_list(doc, "checks", path),
        warnings=[str(w) for w in _list(doc, "warnings", path)],
        problems=_list(doc, "problems", path),
        findings=findings,
        passes=passes,
        pass_subjects=subjects if isinstance(subjects, dict) else None,
        extra={k: v for k, v in doc.items() if k not in known},
    )


def _list(doc: Mapping[str, Any], key: str, path: Path) -> list[Any]:
    value = doc.get(key, [])
    if not isinstance(value, list):
        raise ConfigError("expected a list", file=path, key=key)
    return value


def _passes(value: Any, path: Path) -> PassCounts:
    if not isinstance(value, dict) or not all(
        isinstance(v, dict) and all(type(n) is int for n in v.values()) for v in value.values()
    ):
        raise ConfigError("expected {check: {device: count}}", file=path, key="passes")
    return value


def _result(row: Any, path: Path, n: int) -> Result:
    if isinstance(row, dict) and row.get("subjects") is not None:
        return _block(row, path, n)
    try:
        r = Result(
            str(row["check"]),
            str(row["device"]),
            None if row.get("subject") is None else str(row["subject"]),
            Status(row["status"]),
            Severity.parse(str(row["severity"])),
            row.get("expected"),
            row.get("actual"),
            str(row.get("message") or ""),
        )
    except (KeyError, ValueError, TypeError, AttributeError) as exc:
        what = f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
        raise ConfigError(f"result {n} is not a fabline result ({what})", file=path, key="results") from None
    if row.get("waiver") is not None:
        r.waiver = str(row["waiver"])
    return r


def _block(row: dict[str, Any], path: Path, n: int) -> SkipBlock:
    """A ``report/3`` block row (``subjects`` compact, ``count``)."""
    try:
        compact = row["subjects"]
        if not isinstance(compact, list):
            raise ValueError("'subjects' is not a list")
        count = compact_count(compact)
        if row["status"] == "pass":
            raise ValueError("a block of passes (passes are counted in 'passes')")
        if row.get("count", count) != count:
            raise ValueError(f"'count' {row.get('count')!r} but 'subjects' name {count}")
        r = SkipBlock(
            str(row["check"]),
            str(row["device"]),
            Severity.parse(str(row["severity"])),
            CompactSubjects(compact, count),
            str(row.get("message") or ""),
            Status(row["status"]),
            row.get("expected"),
            row.get("actual"),
        )
    except (KeyError, ValueError, TypeError, AttributeError) as exc:
        what = f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
        raise ConfigError(f"result {n} is not a fabline result ({what})", file=path, key="results") from None
    if row.get("waiver") is not None:
        r.waiver = str(row["waiver"])
    return r


__all__ = ["SCHEMAS", "SavedReport", "from_document", "load_report"]
