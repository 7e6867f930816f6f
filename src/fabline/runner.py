"""Glue between the CLI and the engine: load every input, run, write the reports.

Everything the user gave is loaded and validated first (inventory, baseline, site checks, the
snapshot folder), so a typo fails with one line before any work starts.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from fabline import __version__
from fabline.baseline import load_baseline
from fabline.checks.registry import load_checks
from fabline.engine import Engine
from fabline.errors import ConfigError
from fabline.paths import MAX_STATE_BYTES, SnapshotPathError, read_under
from fabline.perf import paused_gc
from fabline.reports import Report, write_reports
from fabline.results import Severity, exit_code
from fabline.snapshot import Snapshot

if TYPE_CHECKING:
    from fabline.inventory import Sources

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
) -> tuple[Report, list[Path]]:
    """Run ``fabline check``: returns the report and the files written.

    ``intended`` (a folder of rendered configs) replaces ``snapshot``: the configs are parsed with
    the platform parsers into a snapshot first. ``reparse`` re-parses ``snapshot/raw/`` into
    ``snapshot/state/`` before checking, so parser fixes apply to old evidence.
    """
    from fabline.inventory import load_inventory, sources_label

    inv = load_inventory(inventory)
    devices = inv.devices(limit)
    if intended is not None:
        from fabline.design.intended import intended_snapshot

        snapshot = intended_snapshot(intended, devices)
    notes: list[str] = []
    if reparse:
        from fabline.collect.reparse import reparse_snapshot

        reparse_snapshot(snapshot, devices, notes.append)
    snap = Snapshot(snapshot)
    # Rendered configs have no operational state (link up, optics, counters): those rules stay out.
    exclude = frozenset({OPERATIONAL_TAG}) if intended is not None else frozenset()
    engine = build_engine(
        baselines, checks_dir, lambda pattern: set(inv.select(pattern, strict=False)), today, exclude
    )
    if cabling is not None and not cabling.is_file():
        raise ConfigError("cabling plan not found", file=cabling)
    if cabling is not None:
        from fabline.checks.fabric.cabling import load_cabling_plan

        load_cabling_plan(cabling)  # a malformed plan is a one-line error (exit 2) before any work
    outcome = engine.run(
        devices, snap, Snapshot(previous) if previous is not None else None, {"cabling_plan": cabling}
    )
    outcome.warnings.extend(notes)
    known = {d.name for d in devices}
    if limit is None:
        extra = [n for n in snap.device_names() if n not in known]
        if extra:
            shown = ", ".join(extra[:5]) + (f" and {len(extra) - 5} more" if len(extra) > 5 else "")
            outcome.warnings.append(f"snapshot has states of devices not in the inventory (ignored): {shown}")
    severity = Severity.parse(fail_on)
    code = exit_code(outcome.results.problems, severity)
    report = Report(
        outcome=outcome,
        inventory=sources_label(inventory),
        baselines=[str(b) for b in baselines],
        snapshot=str(snapshot),
        fail_on=severity,
        exit_code=int(code),
        limit=limit,
        version=__version__,
    )
    failed: str | None = None
    if history is not None:
        failed = _record_history(report, snapshot, history)
    written = write_reports(report, formats, out) if out is not None else []
    if failed is not None:
        # The run itself is done and reported; only the history step failed.
        raise ConfigError(
            f"run not recorded in the history (the reports were written): {failed}", file=history
        )
    return report, written


def _record_history(report: Report, snapshot: Path, history: Path) -> str | None:
    """Record the run; why it could not be (a corrupt, locked or unwritable database), or None."""
    import sqlite3

    from fabline.history import record

    try:
        record(report, snapshot, history)
    except ConfigError as exc:
        return exc.message
    except sqlite3.Error as exc:
        return (
            f"not a usable history database ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})"
        )
    except OSError as exc:
        return f"cannot write it ({exc.strerror or type(exc).__name__})"
    return None


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
