"""Run history, snapshot diffs and drift: what changed since the last run or the last change.

* :mod:`fabline.history.store`: the SQLite run history (versioned schema, WAL, one writer).
* :mod:`fabline.history.diff`: state changes (volatile fields excluded), counter deltas and rates
  with reset detection, and new/resolved/persisting failures between two snapshots or runs.
* :mod:`fabline.cli.history` (the CLI package): ``fabline history``, ``fabline diff``, ``fabline drift``.

The reports do not read the history: the runner reads trend points and counter deltas from it
into the :class:`~fabline.record.ReportContext` it passes to the report writers.
"""

from __future__ import annotations

from pathlib import Path

from fabline.record import Report


def record(report: Report, snapshot_path: Path, db_path: Path) -> str:
    """Record a finished check run into the history at ``db_path``; returns its run id."""
    from fabline.history.store import HistoryStore

    with HistoryStore(db_path) as store:
        return store.record(report, snapshot_path)


__all__ = ["record"]
