"""Report writers: one module per format, one registry mapping format names to writers.

Every writer takes the same :class:`Report` (run metadata + outcome) and returns text; the CLI
writes it to ``OUT/report.<ext>``. The console summary is separate (it prints, it is not a file).
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fabline import perf
from fabline.engine import RunOutcome
from fabline.problems import Problem
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

    @property
    def problems(self) -> list[Problem]:
        """The findings grouped by cause (:mod:`fabline.problems`), most severe first."""
        return self.outcome.problems

    def findings(self) -> list[Result]:
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

#: Format name -> (file name, module, function). The function returns text or UTF-8 bytes.
_FILES: dict[str, tuple[str, str, str]] = {
    "json": ("report.json", "jsonreport", "render_bytes"),
    "junit": ("report.junit.xml", "junit", "render"),
    "md": ("report.md", "markdown", "render"),
    "html": ("report.html", "html", "render"),
    "prom": ("report.prom", "prom", "render"),
}
#: Formats whose size grows with every result (the others list problems and counts only).
_HEAVY = ("json", "junit")


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


def write_reports(report: Report, formats: list[str], out_dir: Path, jobs: int | None = None) -> list[Path]:
    """Write each requested format into ``out_dir``; returns the files written, in ``formats`` order.

    Files are written atomically (temporary file, then rename) so a reader never sees half a report.
    On Linux, a large run's per-result formats (JSON, JUnit) are written at the same time: each one
    after the first in a forked child process (``jobs=1`` forces one process; by default children
    are used from :data:`fabline.perf.PARALLEL_MIN_RESULTS` results on, and never while other
    threads run). A
    child's error is raised here as if the file had been written in-process.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    targets = [out_dir / _FILES[fmt][0] for fmt in formats]
    heavy = [fmt for fmt in formats if fmt in _HEAVY]
    if jobs is None:
        jobs = 2 if len(report.results) >= perf.PARALLEL_MIN_RESULTS else 1
    forked = heavy[1:] if jobs > 1 and len(heavy) > 1 and perf.can_fork(alone=True) else []
    if forked:
        report.summary  # noqa: B018 - computed once, before the children inherit the report
    children = [(fmt, _fork_writer(report, fmt, out_dir)) for fmt in forked]
    try:
        for fmt in formats:
            if fmt not in forked:
                _write_one(report, fmt, out_dir)
    finally:
        errors = [(fmt, _reap(*child)) for fmt, child in children]
    for _fmt, exc in errors:
        if exc is not None:
            raise exc
    return targets


def _write_one(report: Report, fmt: str, out_dir: Path) -> None:
    import importlib

    filename, module, function = _FILES[fmt]
    render = getattr(importlib.import_module(f"fabline.reports.{module}"), function)
    data = render(report)
    target = out_dir / filename
    tmp = target.with_name(f".{filename}.tmp")
    tmp.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    tmp.replace(target)


def _fork_writer(report: Report, fmt: str, out_dir: Path) -> tuple[int, int]:
    """Start a child writing one format; returns (pid, read end of its error pipe)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid != 0:
        os.close(write)
        return pid, read
    code = 0  # the child: write, send any exception through the pipe, never return
    try:
        os.close(read)
        _write_one(report, fmt, out_dir)
    except BaseException as exc:
        code = 1
        try:
            with os.fdopen(write, "wb") as pipe:
                pipe.write(_pickled(exc, fmt))
        except BaseException:
            pass
    finally:
        os._exit(code)


def _pickled(exc: BaseException, fmt: str) -> bytes:
    """The exception pickled, or (class name, is a FablineError, message, notes).

    The tuple when the exception does not come back from pickle printing the same line. The
    child's traceback is kept as a note.
    """
    import pickle
    import traceback

    from fabline.errors import FablineError

    exc.add_note(f"in the process writing the {fmt} report:\n" + "".join(traceback.format_exception(exc)))
    try:
        data = pickle.dumps(exc)
        back = pickle.loads(data)
        if type(back) is type(exc) and str(back) == str(exc):
            return data
    except Exception:
        pass
    return pickle.dumps((type(exc).__name__, isinstance(exc, FablineError), str(exc), exc.__notes__))


def _reap(pid: int, read: int) -> BaseException | None:
    """Wait for a writer child; its exception, if it failed."""
    import pickle

    from fabline.errors import FablineError

    with os.fdopen(read, "rb") as pipe:
        data = pipe.read()
    _, status = os.waitpid(pid, 0)
    if data:
        got = pickle.loads(data)
        if isinstance(got, BaseException):
            return got
        name, fabline_error, message, notes = got
        # A stand-in of the same name and message: the CLI prints the same one-line error.
        base: type[Exception] = FablineError if fabline_error else Exception
        exc: Exception = type(name, (base,), {"__module__": __name__})(message)
        exc.__notes__ = notes
        return exc
    code = os.waitstatus_to_exitcode(status)
    return RuntimeError(f"the report writer process exited with status {code}") if code != 0 else None
