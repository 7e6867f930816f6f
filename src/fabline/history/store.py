"""The run history: one SQLite file (default ``.fabline/history.sqlite`` in the workspace).

Each recorded ``fabline check`` is a row of ``runs`` (id, times, inventory and baseline digests,
counts, the snapshot folder it checked), its devices, and every result: non-pass results one row
each with everything the JSON report has, passes grouped per check and device (subjects only, in
their compact form, zlib-compressed in chunks; no ``expected`` operators: the baseline digest
says which rules they were), which keeps recording a 100k-GPU run to seconds and a few MB. The schema is versioned (``PRAGMA user_version``) and migrated forward on
open; WAL journaling lets readers run beside the one writer, and writers queue on
``BEGIN IMMEDIATE`` with a long busy timeout, so concurrent runs never corrupt the file.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import heapq
import json
import re
import secrets
import sqlite3
import time
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from fabline.errors import ConfigError
from fabline.perf import paused_gc
from fabline.problems import Problem, facts_of_rows, group, problem_from_dict
from fabline.record import Report, RunOutcome
from fabline.results import (
    CompactSubjects,
    PassCounts,
    Result,
    ResultStore,
    Severity,
    SkipBlock,
    Status,
    compact_count,
    compact_subjects,
)

DEFAULT_DB = Path(".fabline") / "history.sqlite"
#: Seconds a writer waits for another writer before giving up.
BUSY_TIMEOUT_S = 120

#: Schema migrations, applied in order; ``PRAGMA user_version`` is the number applied.
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        run_id TEXT NOT NULL UNIQUE,
        started REAL NOT NULL,
        finished REAL NOT NULL,
        recorded REAL NOT NULL,
        inventory TEXT NOT NULL,
        inventory_digest TEXT NOT NULL,
        baselines TEXT NOT NULL,
        baseline_digest TEXT NOT NULL,
        snapshot TEXT NOT NULL,
        limit_pattern TEXT,
        fail_on TEXT NOT NULL,
        exit_code INTEGER NOT NULL,
        version TEXT NOT NULL,
        total INTEGER NOT NULL,
        passed INTEGER NOT NULL,
        failed INTEGER NOT NULL,
        errors INTEGER NOT NULL,
        skipped INTEGER NOT NULL,
        waived INTEGER NOT NULL,
        n_devices INTEGER NOT NULL,
        summary TEXT NOT NULL,
        checks TEXT NOT NULL,
        warnings TEXT NOT NULL,
        fail_by_check TEXT NOT NULL
    );
    CREATE INDEX runs_started ON runs(started);
    CREATE TABLE devices (
        run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        detail TEXT NOT NULL
    );
    CREATE INDEX devices_run ON devices(run);
    CREATE TABLE results (
        run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        check_id TEXT NOT NULL,
        device TEXT NOT NULL,
        subject TEXT,
        status TEXT NOT NULL,
        severity INTEGER NOT NULL,
        expected TEXT,
        actual TEXT,
        message TEXT NOT NULL,
        waiver TEXT
    );
    CREATE INDEX results_run ON results(run, status);
    """,
    """
    CREATE TABLE pins (
        name TEXT PRIMARY KEY,
        run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        pinned REAL NOT NULL
    );
    """,
    # Passes grouped per (check, device) run of results: a 100k-GPU run has ~10M passes but only
    # ~500k groups, which is what makes recording it fit in seconds. ``seq`` keeps run order.
    """
    ALTER TABLE results ADD COLUMN seq INTEGER;
    CREATE TABLE passes (
        run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        check_id TEXT NOT NULL,
        device TEXT NOT NULL,
        severity INTEGER NOT NULL,
        subjects TEXT NOT NULL
    );
    CREATE INDEX passes_run ON passes(run);
    """,
    # Problems (findings grouped by cause, fabline.problems): one row per problem, ``detail`` its
    # report.json entry (with the result ids of its findings). Runs recorded before have none.
    """
    CREATE TABLE problems (
        run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        problem_id TEXT NOT NULL,
        severity INTEGER NOT NULL,
        detail TEXT NOT NULL
    );
    CREATE INDEX problems_run ON problems(run);
    """,
    # Passes as compact subject runs (fabline.results.compact_subjects), many groups per row,
    # zlib-compressed: a clean 100k-GPU run's ~430k (check, device) groups take a few MB instead
    # of the ~100 MB their subject lists take as ``passes`` rows. Runs recorded before keep
    # their ``passes`` rows, which are still read.
    """
    CREATE TABLE pass_chunks (
        run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        chunk INTEGER NOT NULL,
        data BLOB NOT NULL
    );
    CREATE INDEX pass_chunks_run ON pass_chunks(run);
    """,
    # A block of skipped or error results that share everything but their subject
    # (fabline.results.SkipBlock) is one ``results`` row: ``subjects`` holds its compact subject
    # list (JSON), ``subject`` is NULL. NULL for a single result.
    """
    ALTER TABLE results ADD COLUMN subjects TEXT;
    """,
)
#: Pass groups per ``pass_chunks`` row (one zlib stream each).
PASS_CHUNK_GROUPS = 20_000

_SINCE = re.compile(r"^(\d+)\s*([smhdw])$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_REF = re.compile(r"^(last|latest)(?:~(\d+))?$")


def parse_since(text: str, option: str = "--since") -> float:
    """Seconds in a ``--since`` duration (``30m``, ``12h``, ``7d``, ``2w``).

    ``option`` names the option in the error (``--older-than`` takes the same syntax).

    Example:
        >>> parse_since("7d"), parse_since("90m")
        (604800.0, 5400.0)

    Raises:
        ConfigError: Not a number followed by s, m, h, d or w.
    """
    m = _SINCE.match(text.strip())
    if not m:
        raise ConfigError(f"{option} {text!r}: expected a number and a unit (s, m, h, d, w), e.g. 7d")
    return float(int(m.group(1)) * _UNITS[m.group(2)])


def digest_paths(paths: Sequence[Path]) -> str:
    """SHA-256 over the files (or every file under folders), their relative names and contents.

    Missing paths are hashed by name only, so the digest still says "something differs".
    """
    h = hashlib.sha256()
    for path in paths:
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for f in files:
            h.update(str(f.relative_to(path) if path.is_dir() else f.name).encode())
            h.update(b"\0")
            try:
                h.update(f.read_bytes())
            except OSError:
                h.update(b"<unreadable>")
            h.update(b"\0")
    return h.hexdigest()


def new_run_id(started: float) -> str:
    """A sortable, unique run id: UTC start time plus a random suffix.

    Example:
        >>> new_run_id(0.0)[:17]
        '19700101T000000Z-'
    """
    stamp = dt.datetime.fromtimestamp(started, dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{secrets.token_hex(3)}"


@dataclass(frozen=True)
class RunRow:
    """One recorded run, as listed by ``fabline history``."""

    id: int
    run_id: str
    started: float
    finished: float
    inventory: str
    inventory_digest: str
    baselines: list[str]
    baseline_digest: str
    snapshot: str
    limit: str | None
    fail_on: str
    exit_code: int
    version: str
    counts: dict[str, int]
    n_devices: int
    fail_by_check: dict[str, int]
    pins: tuple[str, ...]

    @property
    def started_iso(self) -> str:
        """Start time, ISO 8601 UTC."""
        return dt.datetime.fromtimestamp(self.started, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "run_id": self.run_id,
            "started": self.started_iso,
            "duration_s": round(self.finished - self.started, 3),
            "inventory": self.inventory,
            "inventory_digest": self.inventory_digest,
            "baselines": self.baselines,
            "baseline_digest": self.baseline_digest,
            "snapshot": self.snapshot,
            "limit": self.limit,
            "exit_code": self.exit_code,
            "devices": self.n_devices,
            "counts": self.counts,
            "pins": list(self.pins),
        }


_RUN_COLUMNS = (
    "id, run_id, started, finished, inventory, inventory_digest, baselines, baseline_digest, snapshot, "
    "limit_pattern, fail_on, exit_code, version, total, passed, failed, errors, skipped, waived, n_devices, "
    "fail_by_check"
)


class HistoryStore:
    """An open history database.

    Use as a context manager, or call :meth:`close`.
    """

    def __init__(self, path: Path, *, create: bool = True, busy_timeout: float | None = None) -> None:
        """Open (and create or migrate) the database at ``path``.

        ``busy_timeout`` is how long a write waits for another writer (default
        :data:`BUSY_TIMEOUT_S`).

        Raises:
            ConfigError: No database there (with ``create=False``), not a SQLite file, made by a
                newer fabline, or locked by another writer for longer than the busy timeout.
        """
        self.path = path
        self.busy_timeout = BUSY_TIMEOUT_S if busy_timeout is None else busy_timeout
        if not create and not path.is_file():
            raise ConfigError("no run history here (record runs with fabline check --history)", file=path)
        if path.exists() and not path.is_file():
            # SQLite would block reading a FIFO or a device, or fail obscurely on a folder.
            raise ConfigError("not a usable history database (not a regular file)", file=path)
        if create:
            path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.conn = sqlite3.connect(path, timeout=self.busy_timeout, isolation_level=None)
            self.conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            self.conn.execute("PRAGMA journal_mode = WAL")
            self.conn.execute("PRAGMA synchronous = NORMAL")
            self.conn.execute("PRAGMA foreign_keys = ON")
            self._migrate()
        except sqlite3.DatabaseError as exc:
            if _is_busy(exc):
                raise self._busy_error() from None
            raise ConfigError(f"not a usable history database ({exc})", file=path) from None

    def _busy_error(self) -> ConfigError:
        return ConfigError(
            f"the history is busy: another process has been writing it for more than {self.busy_timeout:g} s "
            "(a run being recorded?); try again later",
            file=self.path,
        )

    def __enter__(self) -> HistoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; ``BEGIN IMMEDIATE`` makes concurrent writers queue, not collide."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    @property
    def schema_version(self) -> int:
        """Number of migrations applied."""
        return int(self.conn.execute("PRAGMA user_version").fetchone()[0])

    def _migrate(self) -> None:
        if self.schema_version == len(MIGRATIONS):
            return
        with self._write() as conn:
            # Re-read inside the lock: another process may have migrated meanwhile.
            current = self.schema_version
            if current > len(MIGRATIONS):
                raise ConfigError(
                    f"history schema version {current} is newer than this fabline knows "
                    f"({len(MIGRATIONS)}); upgrade fabline",
                    file=self.path,
                )
            for number, script in enumerate(MIGRATIONS[current:], start=current + 1):
                for statement in script.split(";"):
                    if statement.strip():
                        conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {number}")

    # -- writing ---------------------------------------------------------------------------------

    def record(self, report: Report, snapshot: Path) -> str:
        """Store a run and every result; returns the new run id."""
        outcome = report.outcome
        summary = report.summary
        by_status = summary["by_status"]
        fail_by_check: dict[str, int] = {}
        for r in outcome.results.problems:
            if r.status is Status.FAIL:
                fail_by_check[r.check] = fail_by_check.get(r.check, 0) + 1
        run_id = new_run_id(outcome.started)
        inventory = Path(report.inventory)
        baselines = [Path(b) for b in report.baselines]
        row = (
            run_id,
            outcome.started,
            outcome.finished,
            time.time(),
            str(inventory.resolve()) if inventory.exists() else report.inventory,
            digest_paths([inventory]),
            # absolute, so that a diff run from another folder finds them (counter limits)
            json.dumps([str(b.resolve()) if b.exists() else str(b) for b in baselines]),
            digest_paths(baselines),
            str(snapshot.resolve()),
            report.limit,
            report.fail_on.label,
            report.exit_code,
            report.version,
            summary["total"],
            by_status["pass"],
            by_status["fail"],
            by_status["error"],
            by_status["skipped"],
            by_status["waived"],
            len(outcome.devices),
            json.dumps(summary, default=str),
            json.dumps(outcome.checks, default=str),
            json.dumps(outcome.warnings, default=str),
            json.dumps(fail_by_check),
        )
        with self._write() as conn:
            cur = conn.execute(
                "INSERT INTO runs (run_id, started, finished, recorded, inventory, inventory_digest, "
                "baselines, baseline_digest, snapshot, limit_pattern, fail_on, exit_code, version, total, "
                "passed, failed, errors, skipped, waived, n_devices, summary, checks, warnings, fail_by_check) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                row,
            )
            run = cur.lastrowid
            conn.executemany(
                "INSERT INTO devices (run, name, detail) VALUES (?, ?, ?)",
                ((run, d["name"], _dumps(d)) for d in outcome.devices),
            )
            with paused_gc():
                problems, chunks = _rows(run, outcome.results)
            conn.executemany(
                "INSERT INTO results (run, seq, check_id, device, subject, status, severity, expected, actual, "
                "message, waiver, subjects) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                problems,
            )
            conn.executemany("INSERT INTO pass_chunks (run, chunk, data) VALUES (?, ?, ?)", chunks)
            conn.executemany(
                "INSERT INTO problems (run, seq, problem_id, severity, detail) VALUES (?, ?, ?, ?, ?)",
                (
                    (run, seq, p.id, int(p.severity), json.dumps(p.to_dict(), default=str))
                    for seq, p in enumerate(outcome.problems)
                ),
            )
        return run_id

    def pin(self, ref: str, name: str = "golden") -> RunRow:
        """Pin a run under ``name`` (replacing an earlier pin of that name)."""
        row = self.resolve(ref)
        with self._write() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO pins (name, run, pinned) VALUES (?, ?, ?)",
                (name, row.id, time.time()),
            )
        return self.resolve(row.run_id)

    def unpin(self, name: str = "golden") -> bool:
        """Remove a pin; returns whether there was one."""
        with self._write() as conn:
            cur = conn.execute("DELETE FROM pins WHERE name = ?", (name,))
        return cur.rowcount > 0

    # -- reading ---------------------------------------------------------------------------------

    def runs(self, since: float | None = None, limit: int | None = None) -> list[RunRow]:
        """Runs started at or after the UNIX time ``since``, oldest first (the newest ``limit``)."""
        sql = f"SELECT {_RUN_COLUMNS} FROM runs"
        args: list[Any] = []
        if since is not None:
            sql += " WHERE started >= ?"
            args.append(since)
        sql += " ORDER BY started DESC, id DESC"
        if limit is not None:
            sql += " LIMIT ?"
            args.append(limit)
        pins = self._pins()
        rows = [self._row(r, pins) for r in self.conn.execute(sql, args)]
        rows.reverse()
        return rows

    def _pins(self) -> dict[int, tuple[str, ...]]:
        out: dict[int, list[str]] = {}
        for name, run in self.conn.execute("SELECT name, run FROM pins ORDER BY name"):
            out.setdefault(run, []).append(name)
        return {k: tuple(v) for k, v in out.items()}

    @staticmethod
    def _row(r: Sequence[Any], pins: dict[int, tuple[str, ...]]) -> RunRow:
        return RunRow(
            id=r[0], run_id=r[1], started=r[2], finished=r[3], inventory=r[4], inventory_digest=r[5],
            baselines=json.loads(r[6]), baseline_digest=r[7], snapshot=r[8], limit=r[9], fail_on=r[10],
            exit_code=r[11], version=r[12],
            counts={"total": r[13], "pass": r[14], "fail": r[15], "error": r[16], "skipped": r[17], "waived": r[18]},
            n_devices=r[19], fail_by_check=json.loads(r[20]), pins=pins.get(r[0], ()),
        )  # fmt: skip

    def pinned(self, name: str = "golden") -> RunRow | None:
        """The run pinned under ``name``, if any."""
        hit = self.conn.execute("SELECT run FROM pins WHERE name = ?", (name,)).fetchone()
        return None if hit is None else self._by_id(hit[0])

    def _by_id(self, run: int) -> RunRow:
        r = self.conn.execute(f"SELECT {_RUN_COLUMNS} FROM runs WHERE id = ?", (run,)).fetchone()
        return self._row(r, self._pins())

    def resolve(self, ref: str) -> RunRow:
        """A run from its id, a unique id prefix, ``last``/``last~N`` or a pin name (``golden``).

        Raises:
            ConfigError: No such run, or a prefix that matches several.
        """
        m = _REF.match(ref)
        if m:
            back = int(m.group(2) or 0)
            hit = self.conn.execute(
                "SELECT id FROM runs ORDER BY started DESC, id DESC LIMIT 1 OFFSET ?", (back,)
            ).fetchone()
            if hit is None:
                raise ConfigError(f"run {ref!r}: the history has {self.count()} runs", file=self.path)
            return self._by_id(hit[0])
        pin = self.conn.execute("SELECT run FROM pins WHERE name = ?", (ref,)).fetchone()
        if pin is not None:
            return self._by_id(pin[0])
        hits = self.conn.execute(
            "SELECT id, run_id FROM runs WHERE run_id >= ? AND run_id < ? ORDER BY run_id LIMIT 3",
            (ref, ref + "\uffff"),
        ).fetchall()
        exact = [h for h in hits if h[1] == ref]
        if exact or len(hits) == 1:
            return self._by_id((exact or hits)[0][0])
        if hits:
            names = ", ".join(h[1] for h in hits)
            raise ConfigError(f"run {ref!r} is ambiguous ({names}...): give more of the id", file=self.path)
        raise ConfigError(
            f"no run {ref!r} (fabline history lists the runs; last, last~1 and pin names work too)",
            file=self.path,
        )

    def previous(self, run_id: str) -> RunRow | None:
        """The run recorded just before ``run_id`` (by start time), if any."""
        hit = self.conn.execute(
            "SELECT p.id FROM runs p, runs r WHERE r.run_id = ? AND (p.started < r.started OR "
            "(p.started = r.started AND p.id < r.id)) ORDER BY p.started DESC, p.id DESC LIMIT 1",
            (run_id,),
        ).fetchone()
        return None if hit is None else self._by_id(hit[0])

    def count(self) -> int:
        """Number of recorded runs."""
        return int(self.conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0])

    def device_names(self, run: RunRow) -> set[str]:
        """Names of the devices the run covered."""
        return {r[0] for r in self.conn.execute("SELECT name FROM devices WHERE run = ?", (run.id,))}

    def problems(self, run: RunRow) -> list[Result]:
        """The run's non-pass results."""
        rows = self.conn.execute(
            "SELECT check_id, device, subject, status, severity, expected, actual, message, waiver, subjects "
            "FROM results WHERE run = ? AND status != 'pass' ORDER BY rowid",
            (run.id,),
        )
        return [_result(r) for r in rows]

    def problem_rows(self, run: RunRow) -> list[dict[str, Any]] | None:
        """The run's problems as recorded (report.json entries), None for a run recorded before
        problems were (its results can be regrouped with :meth:`problem_groups`).
        """
        rows = self.conn.execute(
            "SELECT detail FROM problems WHERE run = ? ORDER BY seq", (run.id,)
        ).fetchall()
        if not rows and self._has_findings(run):
            return None
        return [_loads(r[0]) for r in rows]

    def _has_findings(self, run: RunRow) -> bool:
        return (
            self.conn.execute(
                "SELECT 1 FROM results WHERE run = ? AND status IN ('fail', 'error') LIMIT 1", (run.id,)
            ).fetchone()
            is not None
        )

    def problem_groups(self, run: RunRow, findings: list[Result] | None = None) -> list[Problem]:
        """The run's problems with their findings (regrouped from the results, without the link
        facts, for a run recorded before problems were).
        """
        findings = self.problems(run) if findings is None else findings
        rows = self.problem_rows(run)
        if rows is None:
            devices = [json.loads(d[0]) for d in self.conn.execute(
                "SELECT detail FROM devices WHERE run = ? ORDER BY rowid", (run.id,))]  # fmt: skip
            return group(findings, facts_of_rows(devices))
        by_id = {r.id: r for r in findings}
        return [problem_from_dict(row, by_id) for row in rows]

    def report(self, run: RunRow, passes: bool = True) -> Report:
        """Rebuild the run's report (passes carry no ``expected``: see the module docs).

        ``passes=False``: the results without the passes, which are only counted
        (:meth:`Report.pass_counts` from :meth:`pass_counts`): what the console summary and a
        report.json that counts passes draw, without a block per pass group (430k on a 100k-GPU run).
        """
        summary, checks, warnings = self.conn.execute(
            "SELECT summary, checks, warnings FROM runs WHERE id = ?", (run.id,)
        ).fetchone()
        store = ResultStore()
        problems = self.conn.execute(
            "SELECT seq, check_id, device, subject, status, severity, expected, actual, message, waiver, "
            "subjects FROM results WHERE run = ? ORDER BY seq, rowid",
            (run.id,),
        )
        # Passes stay compact (expanded only if a report lists every pass): reprinting a
        # 100k-GPU run makes no per-pass object.
        groups = self._pass_groups(run) if passes else iter(())
        for row in heapq.merge(problems, groups, key=lambda r: r[0] or 0):
            if len(row) == 5:
                _, check, device, severity, subjects = row
                store.add_block(check, device, Severity(severity), None, subjects, None)
            else:
                store.append(_result(row[1:]))
        devices = [
            _loads(d[0])
            for d in self.conn.execute("SELECT detail FROM devices WHERE run = ? ORDER BY rowid", (run.id,))
        ]
        outcome = RunOutcome(
            results=store,
            devices=devices,
            warnings=json.loads(warnings),
            started=run.started,
            finished=run.finished,
            checks=json.loads(checks),
            problems=self.problem_groups(run, list(store.problems)),
        )
        report = Report(
            outcome=outcome,
            inventory=run.inventory,
            baselines=run.baselines,
            snapshot=run.snapshot,
            fail_on=Severity.parse(run.fail_on),
            exit_code=run.exit_code,
            limit=run.limit,
            version=run.version,
        )
        report._summary = json.loads(summary)
        if not passes:
            report._pass_counts = self.pass_counts(run)
        return report

    def _pass_groups(self, run: RunRow) -> Iterator[tuple[int, str, str, int, Sequence[str | None]]]:
        """The run's pass groups ``(seq, check, device, severity, subjects)`` in run order.

        From ``pass_chunks`` (compact subjects, kept compact) or, for a run recorded before
        them, from ``passes`` rows.
        """
        old = self.conn.execute(
            "SELECT seq, check_id, device, severity, subjects FROM passes WHERE run = ? ORDER BY seq",
            (run.id,),
        )
        for seq, check, device, severity, subjects in old:
            yield seq, check, device, severity, tuple(json.loads(subjects))
        chunks = self.conn.execute("SELECT data FROM pass_chunks WHERE run = ? ORDER BY chunk", (run.id,))
        for (data,) in chunks:
            for seq, check, device, severity, count, compact in orjson.loads(zlib.decompress(data)):
                yield seq, check, device, severity, CompactSubjects(compact, count)

    def pass_counts(self, run: RunRow) -> PassCounts:
        """The run's passes per check and device (``report.json``'s ``passes``), from the history.

        Summed from the recorded counts, without a subject list per group (a 100k-GPU run has
        430k groups: ``fabline diff`` of two runs reads both).
        """
        out: PassCounts = {}
        old = self.conn.execute(
            "SELECT check_id, device, subjects FROM passes WHERE run = ? ORDER BY seq", (run.id,)
        )
        for check, device, subjects in old:
            by_device = out.setdefault(check, {})
            by_device[device] = by_device.get(device, 0) + len(json.loads(subjects))
        chunks = self.conn.execute("SELECT data FROM pass_chunks WHERE run = ? ORDER BY chunk", (run.id,))
        for (data,) in chunks:
            for _, check, device, _, count, _ in orjson.loads(zlib.decompress(data)):
                group = out.get(check)
                if group is None:
                    group = out[check] = {}
                group[device] = group.get(device, 0) + count
        return out

    def integrity(self) -> str:
        """SQLite's ``PRAGMA integrity_check`` answer (``ok`` when the file is sound)."""
        return str(self.conn.execute("PRAGMA integrity_check").fetchone()[0])

    # -- retention -------------------------------------------------------------------------------

    def size_on_disk(self) -> int:
        """Bytes the history takes: the database file plus its write-ahead log."""
        total = 0
        for p in (self.path, self.path.with_name(self.path.name + "-wal")):
            with suppress(FileNotFoundError):
                total += p.stat().st_size
        return total

    def prune(
        self,
        *,
        keep_last: int | None = None,
        older_than: float | None = None,
        now: float | None = None,
        dry_run: bool = False,
        vacuum_follows: bool = False,
    ) -> PrunePlan:
        """Delete old runs; see :func:`plan_prune` for which ones. Returns what went (or would go).

        Everything of a deleted run (its devices, results, pass groups and the run row) goes in one
        write transaction, and the choice is made inside it, so a run recorded or pinned meanwhile
        by another process is taken into account. The space is only reclaimed by :meth:`vacuum`.

        ``vacuum_follows``: the caller runs :meth:`vacuum` next, which rewrites the file, so freed
        pages need not be zeroed first where SQLite is built with ``secure_delete`` on (Debian's
        is): the delete then writes about an eighth of the bytes and takes ~40% less time.

        Raises:
            ConfigError: Neither rule given, or the database stayed locked by another writer.
        """
        now = time.time() if now is None else now
        try:
            if dry_run:
                return plan_prune(
                    self._prune_candidates(), keep_last=keep_last, older_than=older_than, now=now
                )
            if vacuum_follows:
                self.conn.execute("PRAGMA secure_delete = FAST")
            with self._write() as conn:
                plan = plan_prune(
                    self._prune_candidates(), keep_last=keep_last, older_than=older_than, now=now
                )
                ids = [(r.id,) for r in plan.deleted]
                for table in ("problems", "pass_chunks", "passes", "results", "devices", "pins"):
                    conn.executemany(f"DELETE FROM {table} WHERE run = ?", ids)
                conn.executemany("DELETE FROM runs WHERE id = ?", ids)
            return plan
        except sqlite3.OperationalError as exc:
            if _is_busy(exc):
                raise self._busy_error() from None
            raise

    def _prune_candidates(self) -> list[PruneRun]:
        """Every run, newest first, with what pruning needs to know."""
        pins = self._pins()
        rows = self.conn.execute(
            "SELECT id, run_id, started, snapshot FROM runs ORDER BY started DESC, id DESC"
        )
        return [PruneRun(r[0], r[1], r[2], r[3], pins.get(r[0], ())) for r in rows]

    def vacuum(self) -> None:
        """Give the space of deleted rows back to the file system (``VACUUM``, then a WAL checkpoint).

        Runs outside any transaction; it rewrites the whole file, so it needs free space about the
        size of the database and the write lock while it runs.

        Raises:
            ConfigError: The database stayed locked by another writer.
        """
        try:
            self.conn.execute("VACUUM")
        except sqlite3.OperationalError as exc:
            if _is_busy(exc):
                raise self._busy_error() from None
            raise
        # In WAL mode VACUUM writes the new pages to the log; the checkpoint moves them into the
        # database file and truncates both.
        self.checkpoint()

    def checkpoint(self) -> None:
        """Move the write-ahead log into the database file and truncate the log.

        Best effort: a reader still on older pages defers part of it to a later checkpoint.
        """
        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


@dataclass(frozen=True)
class PruneRun:
    """A run as pruning sees it."""

    id: int
    run_id: str
    started: float
    snapshot: str
    pins: tuple[str, ...]

    @property
    def started_iso(self) -> str:
        """Start time, ISO 8601 UTC."""
        return dt.datetime.fromtimestamp(self.started, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class PrunePlan:
    """Which runs a prune deletes and why the others stay.

    Attributes:
        total: Runs in the history before the prune.
        deleted: The runs deleted (or, in a dry run, to delete), newest first.
        kept_pinned: Runs the rules would delete but that are pinned.
        kept_newest: Whether the newest run was kept only because it is the newest.
    """

    total: int
    deleted: list[PruneRun]
    kept_pinned: int
    kept_newest: bool

    @property
    def kept(self) -> int:
        """Runs left in the history."""
        return self.total - len(self.deleted)


def plan_prune(
    runs: Sequence[PruneRun], *, keep_last: int | None, older_than: float | None, now: float
) -> PrunePlan:
    """Choose the runs to delete from ``runs`` (newest first).

    A run is kept when any of these holds, deleted otherwise:

    * it is among the newest ``keep_last`` runs (by start time, as ``last~N`` counts them);
    * it started less than ``older_than`` seconds before ``now`` (a run exactly that old stays);
    * it is pinned;
    * it is the newest run.

    A rule not given keeps nothing by itself, so with both rules a run goes only when it is outside
    both: older than the age *and* not among the newest N.

    Raises:
        ConfigError: Neither ``keep_last`` nor ``older_than`` given, or a negative one.
    """
    if keep_last is None and older_than is None:
        raise ConfigError("prune needs --keep-last N or --older-than AGE (or both)")
    if keep_last is not None and keep_last < 1:
        raise ConfigError(f"--keep-last {keep_last}: must be at least 1 (the newest run is always kept)")
    if older_than is not None and older_than < 0:
        raise ConfigError(f"--older-than: must not be negative ({older_than:g} s)")
    cutoff = None if older_than is None else now - older_than
    deleted: list[PruneRun] = []
    kept_pinned = 0
    kept_newest = False
    for index, run in enumerate(runs):
        if keep_last is not None and index < keep_last:
            continue
        if cutoff is not None and run.started >= cutoff:
            continue
        if run.pins:
            kept_pinned += 1
        elif index == 0:
            kept_newest = True
        else:
            deleted.append(run)
    return PrunePlan(len(runs), deleted, kept_pinned, kept_newest)


def _is_busy(exc: sqlite3.Error) -> bool:
    """Whether ``exc`` is SQLite's "database is locked" (another connection holds the lock)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return (code & 0xFF) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return "locked" in str(exc) or "busy" in str(exc)


def _rows(run: int | None, results: ResultStore) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """(non-pass rows, pass chunk rows) of a run, numbered in run order.

    A pass group is ``[seq, check, device, severity, count, compact subjects]``; the groups go
    into zlib-compressed JSON chunks of :data:`PASS_CHUNK_GROUPS`. The subject tuples a rule's
    block shares with the other rules of its selector are compacted once.
    """
    dumps = _dumps
    problems: list[tuple[Any, ...]] = []
    groups: list[list[Any]] = []
    cache: dict[int, tuple[Sequence[str | None], list[Any]]] = {}
    seq = 0
    for item in results.runs():
        if isinstance(item, Result):
            r = item
            if r.status is Status.PASS:
                groups.append([seq, r.check, r.device, int(r.severity), 1, [r.subject]])
                seq += 1
                continue
            block = type(r) is SkipBlock
            problems.append(
                (
                    run, seq, r.check, r.device, r.subject, r.status.value, int(r.severity),
                    dumps(r.expected), dumps(r.actual), r.message, r.waiver,
                    dumps(compact_subjects(r.subjects)) if block else None,  # type: ignore[attr-defined]
                )
            )  # fmt: skip
            seq += len(r.subjects) if block else 1  # type: ignore[attr-defined]
            continue
        check, device, severity, _, subjects = item
        hit = cache.get(id(subjects))
        if hit is None or hit[0] is not subjects:
            hit = cache[id(subjects)] = (subjects, compact_subjects(subjects))
        groups.append([seq, check, device, int(severity), len(subjects), hit[1]])
        seq += len(subjects)
    chunks = [
        (run, n, zlib.compress(dumps(groups[i : i + PASS_CHUNK_GROUPS]).encode(), 6))
        for n, i in enumerate(range(0, len(groups), PASS_CHUNK_GROUPS))
    ]
    return problems, chunks


def _dumps(value: Any) -> str:
    """Compact JSON text of a value to store (orjson, ``NaN`` written as null; the standard writer
    for what orjson refuses, an integer wider than 64 bits).
    """
    try:
        return orjson.dumps(value, default=str, option=orjson.OPT_NON_STR_KEYS).decode()
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(value, default=str, separators=(",", ":"))


_STATUS = {s.value: s for s in Status}
_SEVERITY = {int(s): s for s in Severity}


def _loads(text: str | bytes | None) -> Any:
    """A stored JSON value (orjson; the standard parser for what only it reads: ``NaN``)."""
    if text is None or text == "null":
        return None
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def _result(r: Sequence[Any]) -> Result:
    if len(r) > 9 and r[9] is not None:  # a block (SkipBlock): its compact subjects
        compact = orjson.loads(r[9])
        block = SkipBlock(
            r[0], r[1], _SEVERITY[r[4]], CompactSubjects(compact, compact_count(compact)), r[7], _STATUS[r[3]],
            _loads(r[5]), _loads(r[6]),
        )  # fmt: skip
        block.waiver = r[8]
        return block
    res = Result(r[0], r[1], r[2], _STATUS[r[3]], _SEVERITY[r[4]], _loads(r[5]), _loads(r[6]), r[7])
    res.waiver = r[8]
    return res
