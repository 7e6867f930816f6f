"""``fabline history prune`` end to end: real history files, real SQLite, the installed CLI.

Histories are recorded with the store's own helpers (runs a given number of days old), or by
``fabline drift`` itself for the test that checks history, diff and drift still work afterwards.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from fabline.history import record
from fabline.history.store import HistoryStore
from tests.integration.test_history_cli import BASE, INV, fabline, nights  # noqa: F401  (a fixture)
from tests.unit.test_history_store import _report, _snap

DAY = 86400.0


@pytest.fixture
def history(tmp_path: Path) -> tuple[Path, list[str]]:
    """Six runs started 10, 9, ... 5 days ago (plus 10 minutes), 300 failures each; the oldest pinned golden."""
    db = tmp_path / "h.sqlite"
    snap = _snap(tmp_path)
    now = time.time()
    ids = [record(_report(tmp_path, now - DAY * (10 - i) + 600, fails=300), snap, db) for i in range(6)]
    with HistoryStore(db) as store:
        store.pin(ids[0])
    return db, ids


def _listed(db: Path, cwd: Path) -> list[str]:
    proc = fabline("history", "--db", db, "--json", cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return [r["run_id"] for r in json.loads(proc.stdout)]


def test_keep_last_prints_one_summary_line(tmp_path: Path, history: tuple[Path, list[str]]) -> None:
    db, ids = history
    proc = fabline("history", "prune", "--db", db, "--keep-last", "2", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    (line,) = proc.stdout.splitlines()
    assert "deleted 3 of 6 runs, kept 3 (1 because pinned)" in line
    assert " kB -> " in line
    assert _listed(db, tmp_path) == [ids[0], ids[4], ids[5]]


def test_older_than_with_keep_last_keeps_what_either_keeps(
    tmp_path: Path, history: tuple[Path, list[str]]
) -> None:
    db, ids = history
    # The age alone keeps the runs of the last 7 days (ids[3:]); the count alone the newest 4
    # (ids[2:]); together a run goes only when both let it go: ids[1].
    proc = fabline(
        "history", "prune", "--db", db, "--older-than", "7d", "--keep-last", "4", "--json", cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["schema"] == "fabline.prune/1"
    assert [r["run_id"] for r in doc["deleted_runs"]] == [ids[1]]
    assert (doc["deleted"], doc["kept"], doc["kept_pinned"], doc["runs_before"]) == (1, 5, 1, 6)
    assert doc["older_than_s"] == 7 * DAY and doc["keep_last"] == 4 and doc["dry_run"] is False
    assert _listed(db, tmp_path) == [ids[0], *ids[2:]]
    # The age alone: everything older than 7 days but the pinned run.
    proc = fabline("history", "prune", "--db", db, "--older-than", "7d", "--json", cwd=tmp_path)
    assert [r["run_id"] for r in json.loads(proc.stdout)["deleted_runs"]] == [ids[2]]
    assert _listed(db, tmp_path) == [ids[0], *ids[3:]]


def test_the_newest_run_survives_any_age(tmp_path: Path, history: tuple[Path, list[str]]) -> None:
    db, ids = history
    proc = fabline("history", "prune", "--db", db, "--older-than", "1h", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "deleted 4 of 6 runs, kept 2 (1 because pinned, 1 because it is the newest)" in proc.stdout
    assert _listed(db, tmp_path) == [ids[0], ids[5]]


def test_dry_run_lists_and_changes_nothing(tmp_path: Path, history: tuple[Path, list[str]]) -> None:
    db, ids = history
    before = db.read_bytes()
    proc = fabline("history", "prune", "--db", db, "--keep-last", "1", "--dry-run", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert [line.split()[2] for line in lines[:-1]] == ids[4:0:-1]
    assert lines[-1].startswith("dry run: would delete 4 of 6 runs, keep 2 (1 because pinned)")
    assert db.read_bytes() == before
    assert not db.with_name(db.name + "-wal").exists()
    doc = json.loads(fabline("history", "prune", "--db", db, "--keep-last", "1", "--dry-run", "--json",
                             cwd=tmp_path).stdout)  # fmt: skip
    assert doc["dry_run"] is True and doc["deleted"] == 4 and doc["bytes_after"] is None
    assert db.read_bytes() == before
    assert len(_listed(db, tmp_path)) == 6


def test_vacuum_shrinks_the_file_and_no_vacuum_does_not(
    tmp_path: Path, history: tuple[Path, list[str]]
) -> None:
    db, _ = history
    copy = tmp_path / "copy.sqlite"
    copy.write_bytes(db.read_bytes())
    size = db.stat().st_size
    doc = json.loads(
        fabline("history", "prune", "--db", db, "--keep-last", "1", "--json", cwd=tmp_path).stdout
    )
    assert doc["vacuumed"] is True and doc["bytes_before"] == size
    assert doc["bytes_after"] < size / 2
    assert db.stat().st_size == doc["bytes_after"]
    doc = json.loads(
        fabline(
            "history", "prune", "--db", copy, "--keep-last", "1", "--no-vacuum", "--json", cwd=tmp_path
        ).stdout
    )
    assert doc["vacuumed"] is False and doc["deleted"] == 4
    assert copy.stat().st_size == size  # the freed pages stay in the file, for later runs to reuse
    with HistoryStore(copy, create=False) as store:
        assert store.conn.execute("PRAGMA freelist_count").fetchone()[0] > 0
        assert store.integrity() == "ok"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "give --keep-last N or --older-than AGE"),
        (["--dry-run"], "give --keep-last N or --older-than AGE"),
        (["--keep-last", "-3"], "--keep-last -3: must be at least 1"),
        (["--keep-last", "0"], "--keep-last 0: must be at least 1"),
        (["--keep-last", "ten"], "--keep-last 'ten': expected a whole number"),
        (["--older-than", "3 months"], "--older-than '3 months': expected a number and a unit"),
        (["--older-than", "-7d"], "--older-than '-7d'"),
        (["--db", "{missing}", "--keep-last", "3"], "missing.sqlite: no run history here"),
        (["--db", "{junk}", "--keep-last", "3"], "junk.sqlite: not a usable history database"),
    ],
)
def test_bad_inputs_are_one_line_errors(
    tmp_path: Path, history: tuple[Path, list[str]], args: list[str], message: str
) -> None:
    db, _ = history
    (tmp_path / "junk.sqlite").write_text("not sqlite " * 200)
    fill = {"missing": tmp_path / "missing.sqlite", "junk": tmp_path / "junk.sqlite"}
    args = [a.format(**fill) for a in args]
    before = db.read_bytes()
    proc = fabline("history", "prune", *(args if "--db" in args else ["--db", db, *args]), cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    assert proc.stdout == ""
    assert db.read_bytes() == before


def test_a_busy_history_is_a_one_line_error(
    tmp_path: Path, history: tuple[Path, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    from fabline.cli.history import history as history_group
    from fabline.history import store as store_module

    db, ids = history
    monkeypatch.setattr(store_module, "BUSY_TIMEOUT_S", 0.3)
    blocker = sqlite3.connect(db, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # another process recording a run
    try:
        result = CliRunner().invoke(history_group, ["prune", "--db", str(db), "--keep-last", "1"])
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.strip().splitlines()
    assert line == (
        f"fabline: error: {db}: the history is busy: another process has been writing it for more than 0.3 s "
        "(a run being recorded?); try again later"
    )
    assert _listed(db, tmp_path) == ids


def test_history_diff_and_drift_work_after_pruning(tmp_path: Path, nights: dict[str, Path]) -> None:  # noqa: F811
    def drift(snap: str, *extra: str) -> int:
        return fabline(
            "drift", "-i", INV, "-b", BASE, "--snapshot", nights[snap], "-q", *extra, cwd=tmp_path
        ).returncode

    assert drift("clean") == 0
    assert fabline("history", "pin", "last", cwd=tmp_path).returncode == 0
    for snap in ("mtu", "worse", "mtu"):
        assert drift(snap) == 4
    proc = fabline("history", "prune", "--keep-last", "1", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "deleted 2 of 4 runs, kept 2 (1 because pinned)" in proc.stdout
    runs = json.loads(fabline("history", "--json", cwd=tmp_path).stdout)
    assert [(r["pins"], r["snapshot"]) for r in runs] == [
        (["golden"], str(nights["clean"])),
        ([], str(nights["mtu"])),
    ]
    with HistoryStore(tmp_path / ".fabline" / "history.sqlite", create=False) as store:
        assert store.integrity() == "ok"
    diff = fabline("diff", "golden", "last", "-f", "json", cwd=tmp_path)
    assert diff.returncode == 4, diff.stderr
    assert [r["check"] for r in json.loads(diff.stdout)["new_failures"]] == ["host-mtu"]
    assert fabline("history", "show", "golden", "-f", "json", cwd=tmp_path).returncode == 0
    # Tonight's drift still compares with the pinned golden run, and records next to it.
    assert drift("worse", "-o", str(tmp_path / "n5"), "-f", "json") == 4
    doc = json.loads((tmp_path / "n5" / "diff.json").read_text())
    assert doc["before"]["run_id"] == runs[0]["run_id"]
    assert {"host-mtu", "switch-pfc-watchdog"} <= {r["check"] for r in doc["new_failures"]}
    assert len(json.loads(fabline("history", "--json", cwd=tmp_path).stdout)) == 3


def test_a_vacuum_that_finds_the_history_busy_still_reports_the_prune(
    tmp_path: Path, history: tuple[Path, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    from fabline.cli.history import history as history_group
    from fabline.history import store as store_module

    db, ids = history
    monkeypatch.setattr(store_module, "BUSY_TIMEOUT_S", 0.3)
    vacuum = store_module.HistoryStore.vacuum

    def vacuum_while_another_run_records(self: HistoryStore) -> None:
        blocker = sqlite3.connect(db, isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")  # a run starts recording between the delete and the VACUUM
        try:
            vacuum(self)
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()

    monkeypatch.setattr(store_module.HistoryStore, "vacuum", vacuum_while_another_run_records)
    result = CliRunner().invoke(history_group, ["prune", "--db", str(db), "--keep-last", "2", "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert (doc["deleted"], doc["vacuumed"], doc["vacuum_busy"]) == (3, False, True)
    assert _listed(db, tmp_path) == [ids[0], *ids[4:]]
    with HistoryStore(db, create=False) as store:
        assert store.integrity() == "ok"
