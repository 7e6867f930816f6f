"""A broken ``--history`` database never costs the run its reports.

Issue 11, item 13: with a corrupt or unusable history database ``fabline check --history`` wrote
no report at all, and some cases exited 1. Now the reports are written first, then the history
step fails with one line naming the database (exit 2).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from tests.hostile.collect_support import fabline, one_line_error

LAB_INVENTORY = REPO_ROOT / "inventory" / "lab.yml"
LAB_SNAPSHOT = REPO_ROOT / "examples" / "lab-snapshot"


def _garbage(path: Path) -> None:
    path.write_bytes(os.urandom(8192))


def _folder(path: Path) -> None:
    path.mkdir()


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _dev_zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


def _under_a_file(path: Path) -> None:
    path.parent.parent.mkdir(exist_ok=True)
    path.parent.write_text("a file where a folder should be\n")


def _truncated(path: Path) -> None:
    # A real history with one run, cut in the middle of its pages.
    first = fabline(
        "check", "-i", LAB_INVENTORY, "--snapshot", LAB_SNAPSHOT, "-o", path.parent / "first",
        "--history", path, timeout=120,
    )  # fmt: skip
    assert first.code == 4, first.err
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = path.stat().st_size
    with path.open("r+b") as fh:
        fh.seek(size // 2)
        fh.write(b"\xff" * (size // 2))


def _newer(path: Path) -> None:
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version = 999")
        db.execute("CREATE TABLE meta (k TEXT)")


CASES: dict[str, tuple[Callable[[Path], None], str]] = {
    "garbage": (_garbage, "not a usable history database"),
    "folder": (_folder, "not a usable history database (not a regular file)"),
    "fifo": (_fifo, "not a usable history database (not a regular file)"),
    "dev-zero": (_dev_zero, "not a usable history database (not a regular file)"),
    "under-a-file": (_under_a_file, "cannot write it (File exists)"),
    "truncated": (_truncated, "not a usable history database (database disk image is malformed)"),
    "newer": (_newer, "history schema version 999 is newer than this fabline knows"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_reports_are_written_then_the_history_step_fails(tmp_path: Path, case: str) -> None:
    plant, expected = CASES[case]
    db = tmp_path / "hist" / "history.sqlite"
    if case == "under-a-file":
        db = tmp_path / "hist" / "blocker" / "history.sqlite"
        plant(db)
    else:
        db.parent.mkdir()
        plant(db)
    out = tmp_path / "out"
    ran = fabline(
        "check", "-i", LAB_INVENTORY, "--snapshot", LAB_SNAPSHOT, "-o", out, "-f", "json,md,junit",
        "--history", db, timeout=120,
    )  # fmt: skip
    line = one_line_error(ran)
    assert line.startswith(
        f"fabline: error: {db}: run not recorded in the history (the reports were written): "
    )
    assert expected in line, line
    report = json.loads((out / "report.json").read_text())
    assert report["summary"]["by_status"]["fail"] > 0  # the whole run, judged as without --history
    assert (out / "report.md").stat().st_size > 0
    assert (out / "report.junit.xml").stat().st_size > 0


def test_a_good_history_still_records(tmp_path: Path) -> None:
    db = tmp_path / "history.sqlite"
    ran = fabline(
        "check", "-i", LAB_INVENTORY, "--snapshot", shutil.copytree(LAB_SNAPSHOT, tmp_path / "snap"),
        "-o", tmp_path / "out", "--history", db, timeout=120,
    )  # fmt: skip
    assert ran.code == 4, ran.err
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM runs").fetchone() == (1,)
