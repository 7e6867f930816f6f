"""Glue between the CLI and the engine: load every input, run, write the reports.

Everything the user gave is loaded and validated first (inventory, baseline, site checks, the
snapshot folder), so a typo fails with one line before any work starts.
"""

from __future__ import annotations

import datetime as dt
import json
import tempfile
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

from fabline import __version__
from fabline.baseline import load_baseline
from fabline.checks.registry import load_checks
from fabline.engine import Engine
from fabline.errors import ConfigError
from fabline.paths import MAX_STATE_BYTES, SnapshotPathError, read_under
from fabline.perf import keep_until_exit, paused_gc
from fabline.record import CounterDeltas, FabricLinks, Link, Report, ReportContext, TrendPoint
from fabline.reports import needs_of, write_reports
from fabline.results import Severity, capped_join, exit_code
from fabline.snapshot import Snapshot

if TYPE_CHECKING:
    from fabline.engine.parallel import PairHook
    from fabline.history.diff import DiffResult
    from fabline.inventory import Device, Inventory, Sources

#: Baseline tag of rules about operational state; they do not run on intended configs.
OPERATIONAL_TAG = "operational"


def build_engine(
    baselines: list[Path],
    checks_dir: Path | None,
    host_sets: Callable[[str], set[str]],
    today: dt.date | None = None,
    exclude_tags: frozenset[str] = frozenset(),
) -> Engine:
    """Load the baseline and the checks and compile them into an engine."""
    baseline = load_baseline(baselines)
    registry = load_checks(checks_dir)
    return Engine(baseline, registry, host_sets, today, exclude_tags)


def prepare_engine(
    baselines: list[Path],
    checks_dir: Path | None,
    inv: Inventory,
    cabling: Path | None = None,
    today: dt.date | None = None,
    exclude_tags: frozenset[str] = frozenset(),
) -> Engine:
    """The engine for a check of ``inv``'s devices, with the cabling plan it names read once.

    A command that collects first (``run``, ``drift``) calls it once the inventory is read and
    before any device is reached: a baseline, check or plan mistake is a one-line error then, not
    after an hour of collection.

    Raises:
        ConfigError: A baseline, a check or the cabling plan is wrong or missing.
    """
    engine = build_engine(
        baselines, checks_dir, lambda pattern: set(inv.select(pattern, strict=False)), today, exclude_tags
    )
    if cabling is not None and not cabling.is_file():
        raise ConfigError("cabling plan not found", file=cabling)
    if cabling is not None:
        from fabline.checks.fabric.cabling import load_cabling_plan

        load_cabling_plan(cabling)  # a malformed plan is a one-line error (exit 2) before any work
    return engine


@paused_gc()
def run_check(
    *,
    inventory: Sources,
    snapshot: Path,
    baselines: list[Path],
    checks_dir: Path | None,
    limit: str | None,
    out: Path | None,
    formats: list[str],
    fail_on: str,
    today: dt.date | None = None,
    previous: Path | None = None,
    cabling: Path | None = None,
    reparse: bool = False,
    intended: Path | None = None,
    history: Path | None = None,
    passes: str = "counts",
    loaded: tuple[Inventory, list[Device]] | None = None,
    pair: PairHook | None = None,
    engine: Engine | None = None,
) -> tuple[Report, list[Path]]:
    """Run ``fabline check``: returns the report and the files written.

    ``intended`` (a folder of rendered configs) replaces ``snapshot``: the configs are parsed with
    the platform parsers into a snapshot first. ``reparse`` re-parses ``snapshot/raw/`` into
    ``snapshot/state/`` before checking, so parser fixes apply to old evidence. ``passes`` is
    what report.json records of the passes (:attr:`fabline.record.Report.passes`). ``loaded`` is
    ``inventory`` already loaded with ``limit``'s devices (``fabline run`` collected with them): not
    read again, so a script or plugin source runs once per command. ``pair`` works on each
    device's previous and current state as the check reads them (``drift``'s snapshot diff,
    :class:`fabline.history.diff.CheckedPairs`; with ``previous`` only). ``engine`` is the one
    :func:`prepare_engine` built for these baselines, checks and cabling plan before a collection
    (so their mistakes were said before any device was reached); built here when omitted.
    """
    from fabline.inventory import load_inventory, sources_label

    if loaded is not None:
        inv, devices = loaded
    else:
        inv = load_inventory(inventory)
        devices = inv.devices(limit)
    with ExitStack() as stack:
        if intended is not None:
            from fabline.design.intended import intended_snapshot

            # The parsed configs are this run's snapshot only: they live until the reports (the
            # HTML map reads their LLDP) are written, then the folder goes, whatever happened.
            tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="fabline-intended-")))
            snapshot = intended_snapshot(intended, devices, tmp)
        notes: list[str] = []
        if reparse:
            from fabline.collect.reparse import reparse_snapshot

            reparse_snapshot(snapshot, devices, notes.append)
        snap = Snapshot(snapshot)
        # Rendered configs have no operational state (link up, optics, counters): those rules stay out.
        exclude = frozenset({OPERATIONAL_TAG}) if intended is not None else frozenset()
        if engine is None:
            engine = prepare_engine(baselines, checks_dir, inv, cabling, today, exclude)
        outcome = engine.run(
            devices,
            snap,
            Snapshot(previous) if previous is not None else None,
            {"cabling_plan": cabling},
            pair=pair,
        )
        outcome.warnings.extend(notes)
        known = {d.name for d in devices}
        if limit is None:
            extra = [n for n in snap.device_names() if n not in known]
            if extra:
                outcome.warnings.append(
                    f"snapshot has states of devices not in the inventory (ignored): {capped_join(extra, ', ', 5)}"
                )
        severity = Severity.parse(fail_on)
        code = exit_code(outcome.results.problems, severity)
        report = Report(
            outcome=outcome,
            inventory=sources_label(inventory),
            baselines=[str(b) for b in baselines],
            # With --intended the states live in a temporary folder that goes when the run ends:
            # the reports and the history name the configs that were checked.
            snapshot=str(intended if intended is not None else snapshot),
            state_dir=str(snapshot) if intended is not None else None,
            fail_on=severity,
            exit_code=int(code),
            limit=limit,
            version=__version__,
            passes=passes,
        )
        failed: str | None = None
        if history is not None:
            failed = _record_history(report, Path(report.snapshot), history)
        written = []
        if out is not None:
            written = write_reports(report, formats, out, context=report_context(report, formats, devices))
        # What the run built is freed when the process ends (or when the caller drops it).
        keep_until_exit(inv, devices, engine, snap, outcome)
        if failed is not None:
            # The run itself is done and reported; only the history step failed.
            raise ConfigError(
                f"run not recorded in the history (the reports were written): {failed}", file=history
            )
        return report, written


def _record_history(report: Report, snapshot: Path, history: Path) -> str | None:
    """Record the run (the report keeps its run id); why it could not be, or None.

    A corrupt, locked or unwritable database is a reason, not an exception.
    """
    import sqlite3

    from fabline.history import record

    try:
        report.run_id = record(report, snapshot, history)
        report.history_db = str(history)
    except ConfigError as exc:
        return exc.message
    except sqlite3.Error as exc:
        return (
            f"not a usable history database ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})"
        )
    except OSError as exc:
        return f"cannot write it ({exc.strerror or type(exc).__name__})"
    return None


def report_context(
    report: Report,
    formats: list[str],
    devices: Sequence[Device] | None = None,
    diff: DiffResult | None = None,
) -> ReportContext:
    """What the given formats draw beyond the run record, computed once for all of them.

    Args:
        report: The run record.
        formats: The formats to be written (only the context they need is computed).
        devices: The run's inventory devices, for rails (None: the inventory is loaded again).
        diff: The diff computed with the run (``fabline drift``): its counter deltas are used.

    A part that cannot be computed is a warning in the context, which the reports show.
    """
    needs = needs_of(formats)
    ctx = ReportContext()
    if "trend" in needs:
        ctx.trend, ctx.trend_note = _trend(report)
    if "rails" in needs or "fabric" in needs:
        ctx.rails = _rails(report, devices, ctx.warnings)
    if "fabric" in needs:
        ctx.fabric = _fabric_links(report, ctx.rails or {}, ctx.warnings)
    if "counters" in needs:
        ctx.counters = _counters(report, diff, ctx.warnings)
    return ctx


def _trend(report: Report) -> tuple[list[TrendPoint] | None, str]:
    """Trend points from the history the run was recorded in (or the default one), and a note."""
    from fabline.history.store import DEFAULT_DB, HistoryStore
    from fabline.reports.html import TREND_RUNS, this_run_point

    db = Path(report.history_db) if report.history_db else (DEFAULT_DB if DEFAULT_DB.is_file() else None)
    if db is None or not db.is_file():
        return None, "no run history (record runs with fabline check --history to see trends)"
    try:
        with HistoryStore(db, create=False) as store:
            runs = store.runs(limit=TREND_RUNS)
    except Exception as exc:  # a broken history must not stop the report; the page says why
        return None, f"run history unreadable: {exc}"
    points = [
        TrendPoint(r.started_iso[:16].replace("T", " "), r.counts["fail"], r.counts["error"], r.fail_by_check)
        for r in runs
    ]
    if report.run_id is None or all(r.run_id != report.run_id for r in runs):
        points.append(this_run_point(report))
        points = points[-TREND_RUNS:]
    return points, f"{len(points)} runs from {db}"


def _rails(report: Report, devices: Sequence[Device] | None, warnings: list[str]) -> dict[str, str]:
    """Device name -> rail (inventory variable ``rail``)."""
    if devices is None:
        from fabline.inventory import load_inventory

        # A report names several inventory sources joined by ", " (sources_label).
        given = Path(report.inventory)
        try:
            devices = load_inventory(given if given.exists() else report.inventory.split(", ")).devices(
                report.limit
            )
        except ConfigError as exc:
            warnings.append(f"fabric picture: inventory not readable, leaves not grouped by rail: {exc}")
            return {}
    return {d.name: str(d.vars["rail"]) for d in devices if d.vars.get("rail") is not None}


def _fabric_links(report: Report, rails: Mapping[str, str], warnings: list[str]) -> FabricLinks | None:
    """The LLDP neighbours of the devices the fabric picture draws, read from the snapshot."""
    from fabline.reports.html import devices_to_read
    from fabline.state import StateError

    try:
        snap = Snapshot(Path(report.state_dir or report.snapshot))
    except ConfigError as exc:
        warnings.append(f"fabric picture: snapshot not readable, links not drawn: {exc}")
        return None
    names, complete = devices_to_read(report, rails)
    links: list[Link] = []
    unreadable: list[str] = []
    for name in names:
        try:
            doc = snap.load(name)
        except StateError:
            unreadable.append(name)
            continue
        if not doc:
            continue
        for port, body in (doc.get("interfaces") or {}).items():
            lldp = body.get("lldp") if isinstance(body, dict) else None
            if isinstance(lldp, dict) and isinstance(lldp.get("device"), str):
                links.append(Link(name, port, lldp["device"], str(lldp.get("port", ""))))
    if unreadable:
        warnings.append(
            f"fabric picture: state unreadable, its links not drawn: {capped_join(unreadable, ', ', 5)}"
        )
    return FabricLinks(links, complete)


def _counters(report: Report, diff: DiffResult | None, warnings: list[str]) -> CounterDeltas | None:
    """Counter deltas: the diff computed with the run, else since the previous recorded run."""
    from fabline.history.diff import counters_between
    from fabline.history.store import HistoryStore

    if diff is not None:
        return diff.counters.metrics(diff.before.label)
    if report.history_db is None or report.run_id is None:
        return None
    with HistoryStore(Path(report.history_db), create=False) as store:
        prev = store.previous(report.run_id)
    if prev is None:
        return None
    if not (Path(prev.snapshot) / "state").is_dir():
        warnings.append(f"counter rates: the previous run {prev.run_id}'s snapshot {prev.snapshot} is gone")
        return None
    return counters_between(Path(prev.snapshot), Path(report.state_dir or report.snapshot)).metrics(
        prev.run_id
    )


def validate_all(
    inventory: Sources, baselines: list[Path], checks_dir: Path | None, snapshot: Path | None
) -> tuple[list[str], list[str]]:
    """Lint inputs without running. Returns (info lines, problem lines).

    Raises:
        ConfigError: The first problem in the inventory, baseline or site checks.
    """
    from fabline.inventory import load_inventory, sources_label

    inv = load_inventory(inventory)
    devices = inv.devices(None)
    engine = build_engine(baselines, checks_dir, lambda pattern: set(inv.select(pattern, strict=False)))
    # Render every rule's templates for every device it selects, as check would: a template that
    # fails or exceeds a limit for some device is refused here (exit 2), not met mid-check.
    for program in engine.programs:
        for dev in devices:
            if program.selects(dev):
                program.compiled(dev)
    info = [
        f"inventory {sources_label(inventory)}: {len(devices)} devices",
        f"baseline {', '.join(map(str, baselines))}: {len(engine.programs)} rules, "
        f"{len(engine.pychecks)} Python checks, {len(engine.waivers)} waivers",
    ]
    problems: list[str] = []
    if snapshot is not None:
        problems = validate_snapshot(Snapshot(snapshot))
        info.append(f"snapshot {snapshot}: {len(Snapshot(snapshot).device_names())} state files checked")
    return info, problems


def validate_snapshot(snap: Snapshot) -> list[str]:
    """Validate every state file against the state schema v1 JSON Schema; one line per problem."""
    import jsonschema

    from fabline.state import schema_document

    validator = jsonschema.Draft202012Validator(schema_document())
    problems = []
    for name in snap.device_names():
        path = snap.state_path(name)
        try:
            doc = json.loads(read_under(snap.root, "state", f"{name}.json", limit=MAX_STATE_BYTES))
        except (SnapshotPathError, OSError) as exc:
            problems.append(str(exc) if isinstance(exc, SnapshotPathError) else f"{path}: {exc.strerror}")
            continue
        except (ValueError, RecursionError) as exc:
            problems.append(f"{path}: invalid JSON ({exc})")
            continue
        err = next(iter(sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))), None)
        if err is not None:
            where = ".".join(str(p) for p in err.absolute_path) or "(top level)"
            problems.append(f"{path}: {where}: {err.message}")
    return problems
