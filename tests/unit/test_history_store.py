"""The SQLite run history: record, resolve, pins, report rebuild, migrations, concurrent writers."""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path

import pytest

from fabline import synthetic
from fabline.engine import RunOutcome
from fabline.errors import ConfigError
from fabline.history import context_of, record
from fabline.history.store import MIGRATIONS, HistoryStore, parse_since
from fabline.reports import Report
from fabline.results import Result, ResultStore, Severity, Status


def _report(tmp: Path, started: float = 1_795_900_000.0, fails: int = 1) -> Report:
    store = ResultStore()
    store.add_block("mtu", "leaf1", Severity.MAJOR, {"mtu": {"min": 9100}}, ("Ethernet0", "Ethernet8"), None)
    for i in range(fails):
        r = Result("mtu", f"leaf{i + 2}", "Ethernet0", Status.FAIL, Severity.MAJOR, {"mtu": {"min": 9100}},
                   {"mtu": 1500}, "mtu is 1500, expected at least 9100")  # fmt: skip
        store.append(r)
    err = Result("device", "gpu1", None, Status.ERROR, Severity.CRITICAL, None, None, "unreachable")
    store.append(err)
    waived = Result("fec", "leaf1", "Ethernet8", Status.WAIVED, Severity.MINOR, None, None, "fec is fc")
    waived.waiver = "optics swap ticket 42"
    store.append(waived)
    outcome = RunOutcome(
        results=store,
        devices=[{"name": "leaf1", "platform": "sonic", "role": "leaf", "status": "ok"}],
        warnings=["a warning"],
        started=started,
        finished=started + 2.5,
        checks=[{"id": "mtu", "kind": "rule", "severity": "major", "description": "MTU"}],
    )
    inv = tmp / "inv.yml"
    inv.write_text("all: {}\n", "utf-8")
    base = tmp / "base.yml"
    base.write_text("rules: []\n", "utf-8")
    return Report(outcome, str(inv), [str(base)], str(tmp / "snap"), Severity.MINOR, 4, None, "0.1.0")


def _snap(tmp: Path) -> Path:
    synthetic.write_snapshot(synthetic.lab_fabric(), tmp / "snap")
    return tmp / "snap"


def test_record_and_rebuild_a_report(tmp_path: Path) -> None:
    report = _report(tmp_path)
    db = tmp_path / "h" / "history.sqlite"
    run_id = record(report, _snap(tmp_path), db)
    assert context_of(report).run_id == run_id and context_of(report).db_path == db
    with HistoryStore(db, create=False) as store:
        row = store.resolve(run_id)
        assert row.counts == {"total": 5, "pass": 2, "fail": 1, "error": 1, "skipped": 0, "waived": 1}
        assert row.fail_by_check == {"mtu": 1}
        assert row.snapshot == str((tmp_path / "snap").resolve())
        assert len(row.inventory_digest) == 64 and len(row.baseline_digest) == 64
        again = store.report(row)
    assert again.summary == report.summary
    assert [(r.id, r.status) for r in again.results] == [(r.id, r.status) for r in report.results]
    assert [r.to_dict() for r in again.problems()] == [r.to_dict() for r in report.problems()]
    waived = [r for r in again.results if r.status is Status.WAIVED]
    assert waived[0].waiver == "optics swap ticket 42"
    assert again.outcome.warnings == ["a warning"] and again.outcome.checks == report.outcome.checks
    assert (again.outcome.started, again.outcome.finished) == (
        report.outcome.started,
        report.outcome.finished,
    )


def test_resolve_last_prefix_and_pins(tmp_path: Path) -> None:
    db = tmp_path / "history.sqlite"
    snap = _snap(tmp_path)
    ids = [record(_report(tmp_path, 1_795_900_000.0 + 86400 * i, fails=i), snap, db) for i in range(3)]
    with HistoryStore(db) as store:
        assert store.resolve("last").run_id == ids[2]
        assert store.resolve("latest").run_id == ids[2]
        assert store.resolve("last~2").run_id == ids[0]
        assert store.resolve(ids[1][:22]).run_id == ids[1]
        with pytest.raises(ConfigError, match="no run 'nope'"):
            store.resolve("nope")
        with pytest.raises(ConfigError, match="has 3 runs"):
            store.resolve("last~5")
        with pytest.raises(ConfigError, match="ambiguous"):
            store.resolve("2026")
        assert store.pinned() is None
        store.pin(ids[0])
        assert store.resolve("golden").run_id == ids[0]
        assert store.pinned() is not None and store.pinned().run_id == ids[0]  # type: ignore[union-attr]
        assert [r.pins for r in store.runs()] == [("golden",), (), ()]
        assert store.previous(ids[2]).run_id == ids[1]  # type: ignore[union-attr]
        assert store.previous(ids[0]) is None
        assert [r.run_id for r in store.runs(since=1_795_900_000.0 + 86400)] == ids[1:]
        assert [r.run_id for r in store.runs(limit=1)] == ids[2:]
        assert store.unpin() is True and store.unpin() is False


def test_parse_since() -> None:
    assert parse_since("12h") == 43200
    with pytest.raises(ConfigError, match="--since 'week'"):
        parse_since("week")


def test_migrations_are_versioned_and_forward_only(tmp_path: Path) -> None:
    db = tmp_path / "history.sqlite"
    conn = sqlite3.connect(db)
    conn.executescript(MIGRATIONS[0] + "; PRAGMA user_version = 1;")
    conn.close()
    with HistoryStore(db) as store:  # migrates 1 -> current
        assert store.schema_version == len(MIGRATIONS)
        assert store.conn.execute("SELECT COUNT(*) FROM pins").fetchone()[0] == 0
        assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn = sqlite3.connect(db)
    conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    conn.close()
    with pytest.raises(ConfigError, match="newer than this fabline knows"):
        HistoryStore(db)


def test_bad_database_files(tmp_path: Path) -> None:
    junk = tmp_path / "junk.sqlite"
    junk.write_text("this is not sqlite, just text " * 100, "utf-8")
    with pytest.raises(ConfigError, match="not a usable history database"):
        HistoryStore(junk)
    with pytest.raises(ConfigError, match="no run history here"):
        HistoryStore(tmp_path / "missing.sqlite", create=False)


def _writer(args: tuple[str, str, int]) -> list[str]:
    tmp, db, worker = args
    ids = []
    for i in range(5):
        report = _report(Path(tmp), 1_795_900_000.0 + worker * 100 + i, fails=50)
        ids.append(record(report, Path(tmp) / "snap", Path(db)))
    return ids


def test_concurrent_writers_do_not_corrupt_the_history(tmp_path: Path) -> None:
    _snap(tmp_path)
    db = tmp_path / "history.sqlite"
    # Fresh database: the writers also race on creating it and migrating it.
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(4) as pool:
        ids = [
            i for chunk in pool.map(_writer, [(str(tmp_path), str(db), w) for w in range(4)]) for i in chunk
        ]
    assert len(set(ids)) == 20
    with HistoryStore(db) as store:
        assert store.integrity() == "ok"
        assert store.count() == 20
        assert sorted(r.run_id for r in store.runs()) == sorted(ids)
        rows = store.conn.execute("SELECT run, COUNT(*) FROM results GROUP BY run").fetchall()
        assert {n for _, n in rows} == {52}
        rows = store.conn.execute("SELECT run, subjects FROM passes").fetchall()
        assert len(rows) == 20 and {s for _, s in rows} == {'["Ethernet0", "Ethernet8"]'}
