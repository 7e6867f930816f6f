"""Run history, snapshot diffs and drift: what changed since the last run or the last change.

* :mod:`fabline.history.store`: the SQLite run history (versioned schema, WAL, one writer).
* :mod:`fabline.history.diff`: state changes (volatile fields excluded), counter deltas and rates
  with reset detection, and new/resolved/persisting failures between two snapshots or runs.
* :mod:`fabline.history.cli`: ``fabline history``, ``fabline diff``, ``fabline drift``.

The HTML and Prometheus report formats read the history (trends) and the last diff (counter
rates) through :func:`context_of`, which :func:`record` and ``fabline drift`` attach to a report.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fabline.history.diff import CounterDelta, DiffResult
    from fabline.reports import Report

_CONTEXT_KEY = "_fabline_history_context"


@dataclass
class HistoryContext:
    """What the history knows about a report being written.

    Attributes:
        db_path: The history database the run was recorded in (None: not recorded).
        run_id: The run's id in it.
        diff: The diff computed in the same command (``fabline drift``), for counter rates.
    """

    db_path: Path | None = None
    run_id: str | None = None
    diff: DiffResult | None = None


def context_of(report: Report) -> HistoryContext:
    """The history context attached to ``report`` (an empty one when nothing was attached)."""
    ctx = report.__dict__.get(_CONTEXT_KEY)
    return ctx if isinstance(ctx, HistoryContext) else HistoryContext()


def attach(report: Report, **fields: Any) -> HistoryContext:
    """Set fields of the report's history context (created on first use)."""
    ctx = report.__dict__.get(_CONTEXT_KEY)
    if not isinstance(ctx, HistoryContext):
        ctx = HistoryContext()
        report.__dict__[_CONTEXT_KEY] = ctx
    for key, value in fields.items():
        setattr(ctx, key, value)
    return ctx


def record(report: Report, snapshot_path: Path, db_path: Path) -> str:
    """Record a finished check run into the history at ``db_path``; returns its run id.

    The report keeps a pointer to the database and run, so HTML trends include this run.
    """
    from fabline.history.store import HistoryStore

    with HistoryStore(db_path) as store:
        run_id = store.record(report, snapshot_path)
    attach(report, db_path=db_path, run_id=run_id)
    return run_id


def last_counters(report: Report) -> tuple[list[CounterDelta], str] | None:
    """Counter deltas for the report's outputs, and where they come from.

    The diff computed with the report (``fabline drift``) when there is one; otherwise, for a
    recorded run, the deltas between the previous recorded run's snapshot and this one. None when
    neither is known or the previous snapshot is gone.
    """
    from fabline.history.diff import counters_between
    from fabline.history.store import HistoryStore

    ctx = context_of(report)
    if ctx.diff is not None:
        return ctx.diff.counters, ctx.diff.before.label
    if ctx.db_path is None or ctx.run_id is None:
        return None
    with HistoryStore(ctx.db_path, create=False) as store:
        prev = store.previous(ctx.run_id)
    if prev is None or not (Path(prev.snapshot) / "state").is_dir():
        return None
    return counters_between(Path(prev.snapshot), Path(report.snapshot)), prev.run_id


__all__ = ["HistoryContext", "attach", "context_of", "last_counters", "record"]
