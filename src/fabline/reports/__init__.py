"""Report writers: one module per format, one registry mapping format names to writers.

Every writer takes the same :class:`Report` (run metadata + outcome) and returns text; the CLI
writes it to ``OUT/report.<ext>``. The console summary is separate (it prints, it is not a file).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fabline.engine import RunOutcome
from fabline.results import Result, ResultStore, Severity, Status


@dataclass
class Report:
    """What every report format renders.

    Attributes:
        outcome: Results, devices and warnings of the run.
        inventory: Inventory path as given.
        baselines: Baseline files, in overlay order.
        snapshot: Snapshot folder.
        fail_on: Severity threshold of exit code 4.
        exit_code: The process exit code this run ends with.
        limit: The ``--limit`` pattern, if any.
        version: fabline version.
    """

    outcome: RunOutcome
    inventory: str
    baselines: list[str]
    snapshot: str
    fail_on: Severity
    exit_code: int
    limit: str | None = None
    version: str = ""
    _summary: dict[str, Any] | None = field(default=None, repr=False)

    @property
    def results(self) -> ResultStore:
        """All results, in run order (iterable; passes are materialised on the fly)."""
        return self.outcome.results

    @property
    def summary(self) -> dict[str, Any]:
        """Counts by status, severity and device (computed once)."""
        if self._summary is None:
            self._summary = self.outcome.results.summary()
        return self._summary

    def problems(self) -> list[Result]:
        """Fail and error results, most severe first, then by check, device, subject."""
        probs = [r for r in self.outcome.results.problems if r.status in (Status.FAIL, Status.ERROR)]
        probs.sort(
            key=lambda r: (r.status is not Status.FAIL, -r.severity, r.check, r.device, r.subject or "")
        )
        return probs

    def timestamp(self, which: str = "started") -> str:
        """ISO 8601 UTC time of the run's start or finish."""
        t = self.outcome.started if which == "started" else self.outcome.finished
        return dt.datetime.fromtimestamp(t, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


Writer = Callable[[Report], str]


def writers() -> dict[str, tuple[str, Writer]]:
    """Format name -> (file name, writer)."""
    from fabline.reports import html, jsonreport, junit, markdown, prom

    return {
        "json": ("report.json", jsonreport.render),
        "junit": ("report.junit.xml", junit.render),
        "md": ("report.md", markdown.render),
        "html": ("report.html", html.render),
        "prom": ("report.prom", prom.render),
    }


def write_reports(report: Report, formats: list[str], out_dir: Path) -> list[Path]:
    """Write each requested format into ``out_dir``; returns the files written.

    Files are written atomically (temporary file, then rename) so a reader never sees half a report.
    """
    table: dict[str, tuple[str, Callable[[Report], str | bytes]]] = dict(writers())
    from fabline.reports import jsonreport

    table["json"] = ("report.json", jsonreport.render_bytes)  # skips decoding and re-encoding 70 MB
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for fmt in formats:
        filename, render = table[fmt]
        target = out_dir / filename
        tmp = target.with_name(f".{filename}.tmp")
        data = render(report)
        tmp.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
        tmp.replace(target)
        written.append(target)
    return written
