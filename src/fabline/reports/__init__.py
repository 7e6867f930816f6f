"""Report writers: one module per format, one registry (:data:`FORMATS`) mapping names to writers.

Every writer is a pure function of the run record (:class:`~fabline.record.Report`) and the
context the runner computed for it (:class:`~fabline.record.ReportContext`: trend points, counter
deltas, rails, links); it returns text or UTF-8 bytes and never reads a file, a database, the
inventory or the snapshot. The CLI writes each one to ``OUT/<file name>``. The console summary is
separate (it prints, it is not a file).
"""

from __future__ import annotations

import importlib
import io
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from fabline import perf
from fabline.record import Report, ReportContext

Writer = Callable[[Report, ReportContext], "str | bytes"]
Streamer = Callable[[Report, ReportContext, IO[bytes]], None]


@dataclass(frozen=True)
class Format:
    """One report format.

    Attributes:
        name: What ``--format`` calls it.
        filename: The file it is written to in the output folder.
        module: Its module under ``fabline.reports``.
        function: The writer in that module: ``(report, context) -> str | bytes``.
        needs: The parts of :class:`~fabline.record.ReportContext` it draws (``trend``,
            ``counters``, ``rails``, ``fabric``); the runner computes only what some format needs.
        heavy: Its size grows with every result (written in a forked child on large runs).
        stream: The name of a writer ``(report, context, binary file) -> None`` in the module
            that writes the file in parts (used instead of ``function`` when writing a file).
    """

    name: str
    filename: str
    module: str
    function: str
    needs: frozenset[str] = frozenset()
    heavy: bool = False
    stream: str | None = None

    def writer(self) -> Writer:
        """The format's writer function."""
        fn: Writer = getattr(importlib.import_module(f"fabline.reports.{self.module}"), self.function)
        return fn

    def streamer(self) -> Streamer | None:
        """The format's streaming writer, if it has one."""
        if self.stream is None:
            return None
        fn: Streamer = getattr(importlib.import_module(f"fabline.reports.{self.module}"), self.stream)
        return fn


#: Every report format, in the order the CLI lists them.
FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format("json", "report.json", "jsonreport", "render_bytes", heavy=True, stream="write"),
        Format("junit", "report.junit.xml", "junit", "render", heavy=True),
        Format("md", "report.md", "markdown", "render"),
        Format("html", "report.html", "html", "render", frozenset({"trend", "rails", "fabric"})),
        Format("prom", "report.prom", "prom", "render", frozenset({"counters"})),
    )
}


def needs_of(formats: list[str]) -> frozenset[str]:
    """The context parts the given formats draw.

    Example:
        >>> sorted(needs_of(["json", "prom"]))
        ['counters']
    """
    return frozenset().union(*(FORMATS[f].needs for f in formats))


def render(report: Report, fmt: str, context: ReportContext | None = None) -> str:
    """One format's text (bytes decoded), e.g. to print it."""
    data = FORMATS[fmt].writer()(report, context or ReportContext())
    return data.decode("utf-8") if isinstance(data, bytes) else data


def write_reports(
    report: Report,
    formats: list[str],
    out_dir: Path,
    jobs: int | None = None,
    context: ReportContext | None = None,
) -> list[Path]:
    """Write each requested format into ``out_dir``; returns the files written, in ``formats`` order.

    Files are written atomically (temporary file, then rename) so a reader never sees half a report.
    On Linux, a large run's per-result formats (JSON, JUnit) are written at the same time: each one
    after the first in a forked worker (:func:`fabline.perf.fork_pool`; ``jobs=1`` forces one
    process; by default workers are used from :data:`fabline.perf.PARALLEL_MIN_RESULTS` results on,
    by :func:`fabline.perf.worker_count`, and never while other threads run). A worker's error is
    raised here as if the file had been written in-process. ``context`` is what the runner
    computed for the formats that draw more than the run record (empty when omitted).
    """
    context = context or ReportContext()
    out_dir.mkdir(parents=True, exist_ok=True)
    targets = [out_dir / FORMATS[fmt].filename for fmt in formats]
    heavy = [fmt for fmt in formats if FORMATS[fmt].heavy]
    jobs = perf.worker_count(len(report.results), jobs, minimum=perf.PARALLEL_MIN_RESULTS)
    forked = heavy[1:] if jobs > 1 and len(heavy) > 1 and perf.can_fork(alone=True) else []
    if not forked:
        for fmt in formats:
            _write_one(report, context, fmt, out_dir)
        return targets
    report.summary  # noqa: B018 - computed once, before the workers inherit the report
    report.pass_counts()
    _FORKED_JOB.update(report=report, context=context, out_dir=out_dir)
    try:
        with perf.fork_pool(len(forked)) as pool:
            futures = [(fmt, pool.submit(_write_forked, fmt)) for fmt in forked]
            try:
                for fmt in formats:
                    if fmt not in forked:
                        _write_one(report, context, fmt, out_dir)
            finally:
                errors = [_outcome(fmt, future) for fmt, future in futures]
    finally:
        _FORKED_JOB.clear()
    for exc in errors:
        if exc is not None:
            raise exc
    return targets


#: What the forked writers share with the parent (inherited by ``fork``, never pickled).
_FORKED_JOB: dict[str, Any] = {}


def _write_forked(fmt: str) -> bytes | None:
    """A worker's part: write one format; its exception pickled (:func:`_pickled`), if it failed."""
    try:
        _write_one(_FORKED_JOB["report"], _FORKED_JOB["context"], fmt, _FORKED_JOB["out_dir"])
    except BaseException as exc:
        return _pickled(exc, fmt)
    return None


def _write_one(report: Report, context: ReportContext, fmt: str, out_dir: Path) -> None:
    spec = FORMATS[fmt]
    target = out_dir / spec.filename
    tmp = target.with_name(f".{spec.filename}.tmp")
    streamer = spec.streamer()
    if streamer is not None:
        try:
            # Written in parts as it is made (an audit report.json is gigabytes): never whole in memory.
            with io.FileIO(tmp, "w") as fh:
                streamer(report, context, fh)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    else:
        data = spec.writer()(report, context)
        tmp.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    tmp.replace(target)


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


def _outcome(fmt: str, future: Future[bytes | None]) -> BaseException | None:
    """Wait for a writer worker; its exception, if it failed."""
    import pickle

    from fabline.errors import FablineError

    try:
        data = future.result()
    except BrokenProcessPool:
        return RuntimeError(f"the process writing the {fmt} report died ({perf.WORKER_DIED})")
    if data is None:
        return None
    got = pickle.loads(data)
    if isinstance(got, BaseException):
        return got
    name, fabline_error, message, notes = got
    # A stand-in of the same name and message: the CLI prints the same one-line error.
    base: type[Exception] = FablineError if fabline_error else Exception
    exc: Exception = type(name, (base,), {"__module__": __name__})(message)
    exc.__notes__ = notes
    return exc


__all__ = [
    "FORMATS",
    "Format",
    "Report",
    "ReportContext",
    "needs_of",
    "render",
    "write_reports",
]
