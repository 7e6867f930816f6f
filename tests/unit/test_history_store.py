"""The SQLite run history: record, resolve, pins, report rebuild, migrations, concurrent writers, pruning."""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path

import pytest

from fabline import synthetic
from fabline.engine import RunOutcome
from fabline.errors import ConfigError
from fabline.history import record
from fabline.history.store import MIGRATIONS, HistoryStore, PruneRun, parse_since, plan_prune
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
    assert len(run_id) > 0
    with HistoryStore(db, create=False) as store:
        row = store.resolve(run_id)
        assert row.counts == {"total": 5, "pass": 2, "fail": 1, "error": 1, "skipped": 0, "waived": 1}
        assert row.fail_by_check == {"mtu": 1}
        assert row.snapshot == str((tmp_path / "snap").resolve())
        assert len(row.inventory_digest) == 64 and len(row.baseline_digest) == 64
        again = store.report(row)
    assert again.summary == report.summary
    assert [(r.id, r.status) for r in again.results] == [(r.id, r.status) for r in report.results]
    assert [r.to_dict() for r in again.findings()] == [r.to_dict() for r in report.findings()]
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
        assert store.conn.execute("SELECT COUNT(*) FROM pass_chunks").fetchone()[0] == 20
        for row in store.runs():
            assert store.pass_counts(row) == {"mtu": {"leaf1": 2}}
            assert [
                [*r[:4], list(r[4])] for r in store.report(row).results.runs() if isinstance(r, tuple)
            ] == [["mtu", "leaf1", Severity.MAJOR, None, ["Ethernet0", "Ethernet8"]]]


def test_passes_are_compact_and_runs_recorded_before_still_read(tmp_path: Path) -> None:
    """Passes go into compressed chunks of compact subjects; a run recorded with ``passes`` rows
    (before the chunks existed) reads back the same."""
    report = _report(tmp_path)
    report.outcome.results.add_block(
        "pfc", "leaf1", Severity.MAJOR, None, tuple(f"Ethernet{n}" for n in range(0, 512, 4)), None
    )
    db = tmp_path / "history.sqlite"
    run_id = record(report, _snap(tmp_path), db)
    with HistoryStore(db, create=False) as store:
        row = store.resolve(run_id)
        want = report.outcome.results.passes().counts()
        assert store.pass_counts(row) == want == {"mtu": {"leaf1": 2}, "pfc": {"leaf1": 128}}
        (blob,) = store.conn.execute("SELECT data FROM pass_chunks WHERE run = ?", (row.id,)).fetchone()
        assert len(blob) < 200  # 130 subjects in a few compact runs
        rebuilt = [(r.id, r.status) for r in store.report(row).results]
        assert rebuilt == [(r.id, r.status) for r in report.outcome.results]
        # As an older fabline wrote it: one ``passes`` row per group, the subjects listed.
        store.conn.execute("DELETE FROM pass_chunks WHERE run = ?", (row.id,))
        store.conn.executemany(
            "INSERT INTO passes (run, seq, check_id, device, severity, subjects) VALUES (?, ?, ?, ?, ?, ?)",
            [
                (row.id, 0, "mtu", "leaf1", 2, '["Ethernet0", "Ethernet8"]'),
                (
                    row.id,
                    5,
                    "pfc",
                    "leaf1",
                    2,
                    str([f"Ethernet{n}" for n in range(0, 512, 4)]).replace("'", '"'),
                ),
            ],
        )
        assert store.pass_counts(row) == want
        assert [(r.id, r.status) for r in store.report(row).results] == rebuilt


def test_a_report_rebuilt_without_its_passes_prints_and_writes_the_same(tmp_path: Path) -> None:
    """``history show`` (console, and ``-f json`` counting passes) rebuilds the run without a block
    per pass group: the same console summary and report.json as the full rebuild."""
    import io

    from rich.console import Console

    from fabline.reports import jsonreport
    from fabline.reports.console import print_summary

    report = _report(tmp_path, fails=3)
    for n in range(40):
        report.outcome.results.add_block(
            "pfc", f"leaf{n}", Severity.MAJOR, None, tuple(f"Ethernet{p}" for p in range(0, 64, 4)), None
        )
        report.outcome.results.append(
            Result("ecn", f"leaf{n}", "Ethernet4", Status.FAIL, Severity.MINOR, None, 1, "ecn off")
        )
    db = tmp_path / "history.sqlite"
    run_id = record(report, _snap(tmp_path), db)

    def outputs(full: Report) -> tuple[str, bytes]:
        text = io.StringIO()
        print_summary(full, Console(file=text, width=120))
        out = io.BytesIO()
        jsonreport.write(full, None, out)
        return text.getvalue(), out.getvalue()

    with HistoryStore(db, create=False) as store:
        row = store.resolve(run_id)
        whole, counted = store.report(row), store.report(row, passes=False)
    assert len(list(counted.results.runs())) < len(list(whole.results.runs()))
    assert counted.pass_counts() == whole.pass_counts()
    assert outputs(counted) == outputs(whole)


# -- retention ---------------------------------------------------------------------------------

DAY = 86400.0
T0 = 1_795_900_000.0


def _candidates(n: int, pinned: tuple[int, ...] = ()) -> list[PruneRun]:
    """``n`` runs newest first: run ``i`` started ``i`` days before T0."""
    return [PruneRun(i, f"r{i}", T0 - i * DAY, "snap", ("golden",) if i in pinned else ()) for i in range(n)]


@pytest.mark.parametrize(
    ("keep_last", "older_than", "now", "pinned", "deleted", "kept_pinned", "kept_newest"),
    [
        (3, None, T0, (), [3, 4, 5, 6, 7], 0, False),  # the newest three stay
        (None, 4.5 * DAY, T0, (), [5, 6, 7], 0, False),  # runs within 4.5 days stay
        (None, 4 * DAY, T0, (), [5, 6, 7], 0, False),  # exactly 4 days old: not older, stays
        (2, 5.5 * DAY, T0, (), [6, 7], 0, False),  # combined: the age keeps more
        (6, 2.5 * DAY, T0, (), [6, 7], 0, False),  # combined: the count keeps more
        (2, None, T0, (5,), [2, 3, 4, 6, 7], 1, False),  # a pinned run stays
        (1, None, T0, (0, 6), [1, 2, 3, 4, 5, 7], 1, False),  # a pinned newest is counted once, as pinned
        (None, DAY, T0 + 30 * DAY, (3,), [1, 2, 4, 5, 6, 7], 1, True),  # all too old: the newest stays
        (8, 1.0, T0, (), [], 0, False),
    ],
)
def test_plan_prune_rules(
    keep_last: int | None,
    older_than: float | None,
    now: float,
    pinned: tuple[int, ...],
    deleted: list[int],
    kept_pinned: int,
    kept_newest: bool,
) -> None:
    plan = plan_prune(_candidates(8, pinned), keep_last=keep_last, older_than=older_than, now=now)
    assert [r.id for r in plan.deleted] == deleted
    assert (plan.kept_pinned, plan.kept_newest) == (kept_pinned, kept_newest)
    assert plan.total == 8 and plan.kept == 8 - len(deleted)


@pytest.mark.parametrize(
    ("keep_last", "older_than", "message"),
    [
        (None, None, "--keep-last N or --older-than AGE"),
        (0, None, "--keep-last 0: must be at least 1"),
        (-3, 7 * DAY, "--keep-last -3: must be at least 1"),
        (None, -1.0, "--older-than: must not be negative"),
    ],
)
def test_plan_prune_refuses_bad_rules(keep_last: int | None, older_than: float | None, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        plan_prune(_candidates(3), keep_last=keep_last, older_than=older_than, now=T0)


def test_parse_since_names_the_option() -> None:
    with pytest.raises(ConfigError, match="--older-than '3 months'"):
        parse_since("3 months", "--older-than")


def _history(tmp: Path, n: int = 6, fails: int = 20) -> tuple[Path, list[str]]:
    """A history of ``n`` runs one day apart (the oldest at T0), in a fresh database."""
    db = tmp / "history.sqlite"
    snap = _snap(tmp)
    return db, [record(_report(tmp, T0 + DAY * i, fails=fails), snap, db) for i in range(n)]


def _rows_of(store: HistoryStore, table: str, runs: list[int]) -> int:
    marks = ",".join("?" * len(runs))
    return int(store.conn.execute(f"SELECT COUNT(*) FROM {table} WHERE run IN ({marks})", runs).fetchone()[0])


def test_prune_deletes_every_row_of_old_runs_and_keeps_the_pinned(tmp_path: Path) -> None:
    db, ids = _history(tmp_path)
    with HistoryStore(db) as store:
        store.pin(ids[0])
        store.pin(ids[0], "pre-CHG1234")  # two names on one run: still one kept run
        kept_report = store.report(store.resolve(ids[4])).summary
        doomed = [store.resolve(i).id for i in ids[1:4]]
        for table in ("devices", "results", "pass_chunks"):
            assert _rows_of(store, table, doomed) > 0, table  # the check below is not vacuous
        plan = store.prune(keep_last=2)
        assert [r.run_id for r in plan.deleted] == [ids[3], ids[2], ids[1]]
        assert (plan.total, plan.kept, plan.kept_pinned, plan.kept_newest) == (6, 3, 1, False)
        assert [r.run_id for r in store.runs()] == [ids[0], ids[4], ids[5]]
        assert store.resolve("golden").run_id == ids[0] and store.resolve("pre-CHG1234").run_id == ids[0]
        for table in ("devices", "results", "pass_chunks", "passes", "pins"):
            assert _rows_of(store, table, doomed) == 0, table
            orphans = store.conn.execute(
                f"SELECT COUNT(*) FROM {table} WHERE run NOT IN (SELECT id FROM runs)"
            )
            assert orphans.fetchone()[0] == 0, table
        assert store.conn.execute("PRAGMA foreign_key_check").fetchall() == []
        assert store.integrity() == "ok"
        # What stays is whole: reports of kept runs rebuild as before.
        assert store.report(store.resolve(ids[4])).summary == kept_report
        assert store.resolve("last~1").run_id == ids[4]


def test_prune_older_than_with_a_controlled_clock(tmp_path: Path) -> None:
    db, ids = _history(tmp_path, n=5)
    with HistoryStore(db) as store:
        # Now is a second after the newest run; runs 2.5 days old or less stay.
        plan = store.prune(older_than=2.5 * DAY, now=T0 + 4 * DAY + 1)
        assert sorted(r.run_id for r in plan.deleted) == ids[:2]
        assert [r.run_id for r in store.runs()] == ids[2:]
        # Everything is too old a year later, but the newest run always stays.
        plan = store.prune(older_than=DAY, now=T0 + 365 * DAY)
        assert plan.kept_newest and [r.run_id for r in store.runs()] == ids[4:]
        assert store.integrity() == "ok"


def test_prune_dry_run_changes_nothing(tmp_path: Path) -> None:
    db, ids = _history(tmp_path, n=4)
    before = db.read_bytes()
    with HistoryStore(db, create=False) as store:
        plan = store.prune(keep_last=1, dry_run=True)
        assert [r.run_id for r in plan.deleted] == ids[2::-1]
        assert store.count() == 4
    assert db.read_bytes() == before


def test_vacuum_gives_the_space_back(tmp_path: Path) -> None:
    db, _ = _history(tmp_path, n=5, fails=2000)
    with HistoryStore(db) as store:
        size = store.size_on_disk()
        store.prune(keep_last=1)
        store.vacuum()
        assert store.size_on_disk() < size / 3
        assert store.conn.execute("PRAGMA freelist_count").fetchone()[0] == 0
        assert store.integrity() == "ok"
    assert db.stat().st_size < size / 3


def test_prune_of_a_busy_history_is_a_clear_error(tmp_path: Path) -> None:
    db, _ = _history(tmp_path, n=3)
    blocker = sqlite3.connect(db, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # another process in the middle of recording a run
    try:
        with HistoryStore(db, create=False, busy_timeout=0.2) as store:
            with pytest.raises(ConfigError, match=r"history is busy: another process .* more than 0.2 s"):
                store.prune(keep_last=1)
            with pytest.raises(ConfigError, match="history is busy"):
                store.vacuum()
            assert store.count() == 3
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    with HistoryStore(db, create=False, busy_timeout=0.2) as store:
        assert len(store.prune(keep_last=1).deleted) == 2


def test_a_history_written_before_blocks_is_still_read_and_diffed(tmp_path: Path) -> None:
    """A schema-5 database (before skipped/error blocks: one row per skipped result) opens,
    migrates, rebuilds its reports, and compares with a run recorded after as one block."""
    from fabline.history.diff import compare_results
    from fabline.results import SkipBlock

    ports = [f"Ethernet{n}" for n in range(0, 64, 4)]
    db = tmp_path / "history.sqlite"
    old = _report(tmp_path, fails=0)
    for p in ports:
        old.outcome.results.append(
            Result("optics-alarms", "leaf1", p, Status.SKIPPED, Severity.MAJOR, None, None, "not present")
        )
    old_id = record(old, _snap(tmp_path), db)
    # Make it what fabline wrote before migration 6: one row per skipped result, no ``subjects``.
    with HistoryStore(db, create=False) as store:
        row = store.resolve(old_id)
        (n_rows,) = store.conn.execute("SELECT COUNT(*) FROM results WHERE run = ?", (row.id,)).fetchone()
        store.conn.execute("DELETE FROM results WHERE run = ? AND check_id = 'optics-alarms'", (row.id,))
        store.conn.executemany(
            "INSERT INTO results (run, seq, check_id, device, subject, status, severity, expected, actual, "
            "message, waiver) VALUES (?, ?, 'optics-alarms', 'leaf1', ?, 'skipped', 2, 'null', 'null', "
            "'not present', NULL)",
            [(row.id, 100 + i, p) for i, p in enumerate(ports)],
        )
    conn = sqlite3.connect(db)
    conn.execute("ALTER TABLE results DROP COLUMN subjects")
    conn.execute("PRAGMA user_version = 5")
    conn.commit()
    conn.close()
    new = _report(tmp_path, started=1_795_990_000.0, fails=0)
    new.outcome.results.append(SkipBlock("optics-alarms", "leaf1", Severity.MAJOR, ports, "not present"))
    new_id = record(new, _snap(tmp_path), db)  # opens the old file: migrated forward first
    with HistoryStore(db, create=False) as store:
        assert store.schema_version == len(MIGRATIONS)
        old_row, new_row = store.resolve(old_id), store.resolve(new_id)
        old_skips = [r for r in store.problems(old_row) if r.check == "optics-alarms"]
        assert [r.subject for r in old_skips] == ports  # the old rows, one per port
        (block,) = [r for r in store.problems(new_row) if r.check == "optics-alarms"]
        assert type(block) is SkipBlock and list(block.subjects) == ports
        assert store.report(old_row).summary["by_status"]["skipped"] == len(ports)
        assert store.report(new_row).summary["by_status"]["skipped"] == len(ports)
        (n_new,) = store.conn.execute("SELECT COUNT(*) FROM results WHERE run = ?", (new_row.id,)).fetchone()
        assert n_new == n_rows  # the skipped ports are one row (the store folds them as they come)
        assert compare_results(store.problems(old_row), store.problems(new_row)) == ([], [], [], [])
