"""``fabline history``, ``fabline diff`` and ``fabline drift``."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console

from fabline import perf
from fabline.cli.collect_options import collect_options
from fabline.cli.common import (
    FORMATS,
    SEVERITIES,
    baseline_option,
    baseline_paths,
    checks_dir_or_default,
    checks_option,
    friendly,
    parse_formats,
    passes_option,
)
from fabline.errors import ConfigError
from fabline.history.counters import CounterLimits
from fabline.history.store import DEFAULT_DB, HistoryStore, parse_since
from fabline.results import Severity

if TYPE_CHECKING:
    from collections.abc import Callable

    from fabline.engine import Engine
    from fabline.history.diff import CheckedPairs, DiffResult, Side
    from fabline.inventory import Sources
    from fabline.results import PassCounts

DIFF_FORMATS = ("console", "json", "md")


def _db_option(func: Any) -> Any:
    return click.option(
        "--db", "db", type=click.Path(path_type=Path), default=DEFAULT_DB, show_default=True,
        help="History database (SQLite).",
    )(func)  # fmt: skip


def _counter_rows_option(func: Any) -> Any:
    return click.option(
        "--counter-rows", "counter_rows", type=click.Path(path_type=Path), default=None, metavar="FILE",
        help="Also write every moved counter (device, interface, counter, delta, rate, reset) to FILE as "
        "JSON Lines, streamed; the diff itself summarizes them per counter.",
    )(func)  # fmt: skip


def _limits_text(paths: list[Path] | tuple[Path, ...]) -> str:
    return ", ".join(str(p) for p in paths)


def diff_limits(given: tuple[Path, ...], after: Side) -> tuple[CounterLimits, str, list[str]]:
    """The limits a diff judges counters against, where they come from, and warnings.

    ``-b`` when given; else, when AFTER is a recorded run, the baseline files recorded with it (the
    limits it was checked with; a warning when a file changed since); else the default baseline
    (also when a recorded file is gone, with a warning).

    Raises:
        ConfigError: A baseline that does not load.
    """
    if given:
        return CounterLimits.from_baseline(list(given)), f"-b {_limits_text(given)}", []
    warnings: list[str] = []
    if after.run_id is not None and after.baselines:
        recorded = [Path(b) for b in after.baselines]
        gone = [p for p in recorded if not p.is_file()]
        if not gone:
            from fabline.history.store import digest_paths

            if after.baseline_digest and digest_paths(recorded) != after.baseline_digest:
                warnings.append(
                    f"run {after.run_id}'s baseline ({_limits_text(recorded)}) changed since the run was "
                    "recorded: counters are judged by the limits it sets now (give -b to choose)"
                )
            text = f"the baseline recorded with run {after.run_id} ({_limits_text(recorded)})"
            return CounterLimits.from_baseline(recorded), text, warnings
        warnings.append(
            f"run {after.run_id}'s baseline {_limits_text(gone)} is gone: counters are judged by the "
            "default baseline's limits (give -b to choose)"
        )
    default = baseline_paths(())
    return CounterLimits.from_baseline(default), f"the default baseline ({_limits_text(default)})", warnings


def checked_pairs(
    before: Path,
    after: Path,
    ignore: tuple[str, ...],
    given: tuple[Path, ...],
    counter_rows: Path | None,
) -> tuple[CheckedPairs, tuple[CounterLimits, str, list[str]]] | None:
    """What the check of ``after`` (with ``before`` as its previous snapshot) compares of the
    diff as it reads the states, with the limits (:func:`diff_limits` of a snapshot AFTER); None
    when the limits do not load (the diff then raises their error after the check, as it always did).
    """
    from fabline.history.diff import CheckedPairs, Side

    try:
        limits = diff_limits(given, Side(str(after), after))
    except ConfigError:
        return None
    if counter_rows is not None:
        counter_rows.parent.mkdir(parents=True, exist_ok=True)
    return CheckedPairs(before, after, ignore, limits[0], counter_rows), limits


def _ignore_option(func: Any) -> Any:
    return click.option(
        "--ignore", "ignore", multiple=True, metavar="PATTERN",
        help="Another volatile state path to leave out of state changes (repeatable), e.g. "
        "'interfaces.*.description' or '**.flaps'.",
    )(func)  # fmt: skip


# --------------------------------------------------------------------------------------------
# history


@click.group("history", invoke_without_command=True)
@_db_option
@click.option("--since", default=None, help="Only runs started within this long: 30m, 12h, 7d, 2w.")
@click.option("-n", "--last", "last", type=int, default=None, help="Only the newest N runs.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
@friendly
def history(ctx: click.Context, db: Path, since: str | None, last: int | None, as_json: bool) -> None:
    """List recorded runs with their counts (record with fabline check --history)."""
    ctx.ensure_object(dict)
    ctx.obj["db"] = db
    if ctx.invoked_subcommand is not None:
        return
    cutoff = time.time() - parse_since(since) if since else None
    with HistoryStore(db, create=False) as store:
        runs = store.runs(cutoff, last)
    if as_json:
        click.echo(json.dumps([r.to_dict() for r in runs], indent=1))
        return
    # Plain aligned text: run ids stay whole at any terminal width, and grep/awk work on it.
    click.echo(f"{'run':<24} {'started (UTC)':<20} {'devices':>7} {'pass':>9} {'fail':>7} {'error':>6} "
               f"{'skipped':>7} {'waived':>6} {'exit':>4}  pins")  # fmt: skip
    for r in runs:
        c = r.counts
        click.echo(
            f"{r.run_id:<24} {r.started_iso:<20} {r.n_devices:>7} {c['pass']:>9} {c['fail']:>7} {c['error']:>6} "
            f"{c['skipped']:>7} {c['waived']:>6} {r.exit_code:>4}  {','.join(r.pins)}"
        )
    if not runs:
        click.echo("no runs" + (f" in the last {since}" if since else ""))


def _db_of(ctx: click.Context, db: Path | None) -> Path:
    if db is not None:
        return db
    parent = ctx.find_object(dict)
    return Path(parent["db"]) if parent and "db" in parent else DEFAULT_DB


@history.command("show")
@click.argument("run")
@click.option("--db", "db", type=click.Path(path_type=Path), default=None, help="History database.")
@click.option("-f", "--format", "fmt", type=click.Choice(["console", *FORMATS]), default="console",
              show_default=True, help="How to print the run's report.")  # fmt: skip
@passes_option
@click.pass_context
@friendly
def history_show(ctx: click.Context, run: str, db: Path | None, fmt: str, passes: str) -> None:
    """Reprint a recorded run's report (RUN: id, id prefix, last, last~N or a pin name)."""
    # The console summary and a report.json that counts passes draw no pass result: the passes
    # are only counted (no block per pass group rebuilt).
    counted = fmt == "console" or (fmt == "json" and passes == "counts")
    with HistoryStore(_db_of(ctx, db), create=False) as store:
        row = store.resolve(run)
        report = store.report(row, passes=not counted)
    report.passes = passes
    if fmt == "console":
        from fabline.reports.console import print_summary

        console = Console()
        console.print(f"run {row.run_id} ({row.started_iso}), snapshot {row.snapshot}", highlight=False)
        print_summary(report, console)
        return
    from fabline.record import ReportContext
    from fabline.reports import FORMATS as REPORT_FORMATS
    from fabline.reports import needs_of, render

    context = ReportContext()
    if needs_of([fmt]):  # html (trend, rails, fabric), prom (counters): the runner computes them
        from fabline.runner import report_context

        context = report_context(report, [fmt])
    streamer = REPORT_FORMATS[fmt].streamer()
    if streamer is not None:  # written as it is made: an audit report.json is gigabytes
        out = sys.stdout.buffer
        streamer(report, context, out)
        out.flush()
        return
    click.echo(render(report, fmt, context), nl=False)


@history.command("pin")
@click.argument("run")
@click.option("--name", default="golden", show_default=True, help="Pin name (drift compares with it).")
@click.option("--db", "db", type=click.Path(path_type=Path), default=None, help="History database.")
@click.pass_context
@friendly
def history_pin(ctx: click.Context, run: str, name: str, db: Path | None) -> None:
    """Pin a run as the golden reference for fabline drift."""
    with HistoryStore(_db_of(ctx, db), create=False) as store:
        row = store.pin(run, name)
    click.echo(f"pinned {row.run_id} as {name}")


@history.command("unpin")
@click.option("--name", default="golden", show_default=True, help="Pin name.")
@click.option("--db", "db", type=click.Path(path_type=Path), default=None, help="History database.")
@click.pass_context
@friendly
def history_unpin(ctx: click.Context, name: str, db: Path | None) -> None:
    """Remove a pin (drift then compares with the last run)."""
    with HistoryStore(_db_of(ctx, db), create=False) as store:
        removed = store.unpin(name)
    click.echo(f"unpinned {name}" if removed else f"no pin named {name}")


def _size(n: int) -> str:
    """Bytes for people: ``48.1 MB``."""
    value = float(n)
    for unit in ("B", "kB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    raise AssertionError("unreachable")


@history.command("prune")
@click.option("--db", "db", type=click.Path(path_type=Path), default=None, help="History database.")
@click.option("--keep-last", "keep_last", default=None, metavar="N",
              help="Keep the newest N runs (N >= 1).")  # fmt: skip
@click.option("--older-than", "older_than", default=None, metavar="AGE",
              help="Delete runs started longer ago than AGE: 30m, 12h, 90d, 2w (as --since).")  # fmt: skip
@click.option("--dry-run", is_flag=True, help="List what would be deleted; change nothing.")
@click.option("--no-vacuum", is_flag=True, help="Do not VACUUM after deleting (the file keeps its size).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable summary.")
@click.pass_context
@friendly
def history_prune(
    ctx: click.Context,
    db: Path | None,
    keep_last: str | None,
    older_than: str | None,
    dry_run: bool,
    no_vacuum: bool,
    as_json: bool,
) -> None:
    """Delete old runs: those outside both --keep-last and --older-than (either rule alone works).

    A run stays when it is among the newest N (--keep-last), or started within AGE (--older-than),
    or is pinned, or is the newest run. Snapshot folders are never touched.
    """
    from fabline.history.store import plan_prune

    if keep_last is None and older_than is None:
        raise ConfigError("history prune: give --keep-last N or --older-than AGE (or both)")
    n: int | None = None
    if keep_last is not None:
        try:
            n = int(keep_last)
        except ValueError:
            raise ConfigError(
                f"--keep-last {keep_last!r}: expected a whole number of runs, e.g. 30"
            ) from None
    age = parse_since(older_than, "--older-than") if older_than is not None else None
    plan_prune([], keep_last=n, older_than=age, now=0.0)  # the rules' own checks, before opening anything
    path = _db_of(ctx, db)
    t0 = time.perf_counter()
    with HistoryStore(path, create=False) as store:
        before = store.size_on_disk()
        plan = store.prune(keep_last=n, older_than=age, dry_run=dry_run, vacuum_follows=not no_vacuum)
        vacuumed = bool(plan.deleted) and not dry_run and not no_vacuum
        busy = False
        if vacuumed:
            try:
                store.vacuum()
            except ConfigError:  # busy: the runs are gone all the same, the space comes back later
                vacuumed, busy = False, True
        elif plan.deleted and not dry_run:
            store.checkpoint()  # so the size printed is the file's, not file + log
        after = store.size_on_disk()
    seconds = time.perf_counter() - t0
    if as_json:
        doc = {
            "schema": "fabline.prune/1",
            "db": str(path),
            "dry_run": dry_run,
            "keep_last": n,
            "older_than_s": age,
            "runs_before": plan.total,
            "deleted": len(plan.deleted),
            "kept": plan.kept,
            "kept_pinned": plan.kept_pinned,
            "kept_newest": plan.kept_newest,
            "vacuumed": vacuumed,
            "vacuum_busy": busy,
            "bytes_before": before,
            "bytes_after": None if dry_run else after,
            "seconds": round(seconds, 3),
            "deleted_runs": [
                {"run_id": r.run_id, "started": r.started_iso, "snapshot": r.snapshot} for r in plan.deleted
            ],
        }
        click.echo(json.dumps(doc, indent=1))
        return
    why = f"{plan.kept_pinned} because pinned" + (", 1 because it is the newest" if plan.kept_newest else "")
    if dry_run:
        for r in plan.deleted:
            click.echo(f"would delete {r.run_id}  {r.started_iso}  {r.snapshot}")
        click.echo(
            f"dry run: would delete {len(plan.deleted)} of {plan.total} runs, keep {plan.kept} ({why}); "
            f"{path} is {_size(before)}; nothing changed"
        )
        return
    space = f"{_size(before)} -> {_size(after)}"
    if busy:
        space += " (not vacuumed: another process is writing the history; later runs reuse the freed pages)"
    elif plan.deleted and not vacuumed:
        space += " (not vacuumed: later runs reuse the freed pages)"
    click.echo(
        f"pruned {path}: deleted {len(plan.deleted)} of {plan.total} runs, kept {plan.kept} ({why}); "
        f"{space} in {seconds:.1f} s"
    )


# --------------------------------------------------------------------------------------------
# diff


def _check_side(
    side: Side,
    inventory: Sources,
    baselines: list[Path],
    checks_dir: Path | None,
    fail_on: str,
    previous: Path | None = None,
    pair: CheckedPairs | None = None,
) -> None:
    """Check a snapshot side: its problems and covered devices (``pair``: the diff's per-device
    part, compared as the check reads the states; with ``previous`` only).
    """
    from fabline.runner import run_check

    report, _ = run_check(
        inventory=inventory, snapshot=side.snapshot, baselines=baselines, checks_dir=checks_dir, limit=None,
        out=None, formats=[], fail_on=fail_on, previous=previous, pair=pair,
    )  # fmt: skip
    side.problems = list(report.outcome.results.problems)
    side.devices = {d["name"] for d in report.outcome.devices}
    side.problem_groups = [p.to_dict() for p in report.problems]
    side.passes = report.pass_counts()


def _checked_side(
    side: Side, inventory: Sources, baselines: list[Path], checks_dir: Path | None, fail_on: str
) -> Side | None:
    """:func:`_check_side` in a forked worker: the side with its results, or None when the check
    failed (the caller checks it again in-line, so the error is raised and said as it always is).
    """
    try:
        _check_side(side, inventory, baselines, checks_dir, fail_on)
    except Exception:  # raised again by the in-line check, with its own message
        return None
    return side


def check_both_sides(
    before: Side,
    after: Side,
    inventory: Sources,
    baselines: list[Path],
    checks_dir: Path | None,
    fail_on: str,
    pair: CheckedPairs | None = None,
) -> Side:
    """Check two snapshot sides (AFTER with BEFORE as its previous snapshot); returns BEFORE, checked.
    ``pair``: the diff's per-device part, compared as AFTER's check reads both states.

    On a fabric large enough for forked workers, BEFORE is checked in a forked process while this
    one checks AFTER: each check's serial parts (inventory, fabric checks, grouping) overlap the
    other's per-device workers instead of leaving a core idle. A plain fork and a pipe (no thread
    here, so the checks' own worker pools fork from a one-thread process). Results are those of
    two checks in a row (each check is the same run either way); a forked check that failed is
    done again here, so its error is raised and said as it always is.
    """
    from fabline.history.diff import Side
    from fabline.perf import can_fork, fork_call, worker_count
    from fabline.snapshot import Snapshot

    if worker_count(len(Snapshot(after.snapshot).device_names())) <= 1 or not can_fork(alone=True):
        _check_side(after, inventory, baselines, checks_dir, fail_on, before.snapshot, pair)
        _check_side(before, inventory, baselines, checks_dir, fail_on)
        return before
    call = fork_call(lambda: _checked_side(before, inventory, baselines, checks_dir, fail_on))
    try:
        _check_side(after, inventory, baselines, checks_dir, fail_on, before.snapshot, pair)
    except BaseException:
        call.cancel()  # its result is not wanted
        raise
    checked = call.result()
    if isinstance(checked, Side):
        return checked
    _check_side(before, inventory, baselines, checks_dir, fail_on)
    return before


def resolve_side(ref: str, which: str, db: Path) -> Side:
    """A diff input: a snapshot folder, or a run id (prefix, ``last``, a pin) of the history.

    Raises:
        ConfigError: Neither a snapshot folder nor a recorded run, or a run whose snapshot is gone.
    """
    from fabline.history.diff import Side

    path = Path(ref)
    if path.is_dir():
        if not (path / "state").is_dir():
            raise ConfigError(
                f"{which}: snapshot has no state/ folder (expected state/<device>.json)", file=path
            )
        return Side(ref, path)
    if path.exists():
        raise ConfigError(f"{which}: not a snapshot folder", file=path)
    if not db.is_file():
        raise ConfigError(f"{which}: no snapshot folder {ref!r}, and no run history at {db} to find a run in")
    with HistoryStore(db, create=False) as store:
        row = store.resolve(ref)
        problems = store.problems(row)
        devices = store.device_names(row)
        groups = [p.to_dict() for p in store.problem_groups(row, problems)]
        # A large run's pass counts (430k groups on 100k GPUs, ~1.5 s) are read in a forked
        # process while the snapshots are diffed, not before; a small run's here.
        later = row.n_devices >= perf.PARALLEL_MIN_DEVICES and perf.can_fork(alone=True)
        passes = None if later else store.pass_counts(row)
    snap = Path(row.snapshot)
    if not (snap / "state").is_dir():
        raise ConfigError(f"{which}: run {row.run_id}'s snapshot is gone", file=snap)
    side = Side(
        row.run_id, snap, problems, row.run_id, row.inventory_digest, devices, groups, passes,
        row.baselines, row.baseline_digest,
    )  # fmt: skip
    if later:
        side.pending_passes = _pass_counts_forked(db, row.run_id)
    return side


def _pass_counts_forked(db: Path, run_id: str) -> Callable[[], PassCounts]:
    """The recorded pass counts of run ``run_id``, read by a forked process from now on: what the
    returned function gives when called (read here if that process failed).
    """

    def read() -> PassCounts:
        with HistoryStore(db, create=False) as store:  # its own connection, never the parent's
            return store.pass_counts(store.resolve(run_id))

    call = perf.fork_call(read)

    def result() -> PassCounts:
        got = call.result()
        return got if got is not None else read()

    return result


def _emit_diff(result: DiffResult, fmt: str, out: Path | None) -> None:
    from fabline.history.render import print_diff, render_json, render_markdown

    if fmt == "console":
        print_diff(result, Console())
        return
    text = render_json(result) if fmt == "json" else render_markdown(result)
    if out is None:
        click.echo(text, nl=False)
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(text, "utf-8")
    tmp.replace(out)
    click.echo(f"wrote {out}", err=True)


@click.command("diff")
@click.argument("before")
@click.argument("after")
@click.option("-i", "--inventory", "inventory", type=click.Path(path_type=Path), multiple=True,
              help="Inventory source (repeatable): with two snapshots, both are checked and the results compared.")  # fmt: skip
@baseline_option
@checks_option
@_db_option
@_ignore_option
@_counter_rows_option
@click.option("-f", "--format", "fmt", type=click.Choice(DIFF_FORMATS), default="console", show_default=True)
@click.option("-o", "--out", type=click.Path(path_type=Path), default=None,
              help="Write the json/md output to this file instead of standard output.")  # fmt: skip
@click.option("--fail-on", type=click.Choice(SEVERITIES), default="minor", show_default=True,
              help="Lowest severity of a new failure that makes the exit code 4.")  # fmt: skip
@friendly
def diff(
    before: str,
    after: str,
    inventory: tuple[Path, ...],
    baselines: tuple[Path, ...],
    checks_dir: Path | None,
    db: Path,
    ignore: tuple[str, ...],
    counter_rows: Path | None,
    fmt: str,
    out: Path | None,
    fail_on: str,
) -> None:
    """Compare two snapshots or two recorded runs: state changes, counter rates, result changes.

    BEFORE and AFTER are snapshot folders or run ids (a unique prefix, last, last~1, or a pin
    name such as golden). Counters are summarized per counter and judged against the limits of
    the checks that read them: from -b, else from the baseline recorded with AFTER when it is a
    run, else from the default baseline (the output says which). Exit code 4 when there are new
    errors, new failures, or counters past their check's limit.
    """
    from fabline.history.diff import DEFAULT_VOLATILE, diff_sides

    side_b = resolve_side(before, "BEFORE", db)
    side_a = resolve_side(after, "AFTER", db)
    ignored = (*DEFAULT_VOLATILE, *ignore)
    pieces, pre = None, None
    if inventory:
        paths, cdir = baseline_paths(baselines), checks_dir_or_default(checks_dir)
        if side_a.problems is None:  # AFTER is checked with BEFORE as its previous snapshot
            made = checked_pairs(side_b.snapshot, side_a.snapshot, ignored, baselines, counter_rows)
            if made is not None:
                pieces, pre = made
        if side_b.problems is None and side_a.problems is None:
            side_b = check_both_sides(side_b, side_a, inventory, paths, cdir, fail_on, pieces)
        elif side_b.problems is None:
            _check_side(side_b, inventory, paths, cdir, fail_on)
        elif side_a.problems is None:
            _check_side(side_a, inventory, paths, cdir, fail_on, side_b.snapshot, pieces)
    elif (side_b.problems is None) != (side_a.problems is None):
        raise ConfigError("comparing a snapshot with a run needs -i INVENTORY to check the snapshot")
    limits, limits_from, warnings = pre if pre is not None else diff_limits(baselines, side_a)
    if counter_rows is not None:
        counter_rows.parent.mkdir(parents=True, exist_ok=True)
    result = diff_sides(
        side_b, side_a, ignore=ignored, limits=limits, counter_rows=counter_rows, pieces=pieces
    )
    result.limits_from = limits_from
    result.warnings.extend(warnings)
    _emit_diff(result, fmt, out)
    sys.exit(result.exit_code(Severity.parse(fail_on)))


# --------------------------------------------------------------------------------------------
# drift


@click.command("drift")
@click.option("-i", "--inventory", "inventory", required=True, multiple=True, type=click.Path(path_type=Path),
              help="Ansible inventory source (repeatable, merged in order as Ansible does).")  # fmt: skip
@baseline_option
@checks_option
@click.option("--snapshot", type=click.Path(path_type=Path), default=None,
              help="Check this snapshot instead of collecting a fresh one.")  # fmt: skip
@click.option("--collect-to", type=click.Path(path_type=Path), default=None,
              help="Where a fresh collection goes (default: snapshots/<UTC time> in the workspace).")  # fmt: skip
@click.option("--against", default=None,
              help="Run to compare with: a run id, last, or a pin name (default: golden if pinned, else last).")  # fmt: skip
@_db_option
@click.option("--record/--no-record", default=True, show_default=True, help="Record this run in the history.")
@_ignore_option
@_counter_rows_option
@collect_options
@click.option("-o", "--out", type=click.Path(path_type=Path), default=None,
              help="Folder for the report files and diff.json / diff.md.")  # fmt: skip
@click.option("-f", "--format", "formats", default="json,md,html,prom", show_default=True,
              help=f"Report files to write with --out: comma-separated {', '.join(FORMATS)}.")  # fmt: skip
@passes_option
@click.option("--fail-on", type=click.Choice(SEVERITIES), default="minor", show_default=True)
@click.option("-q", "--quiet", is_flag=True, help="No console output but errors.")
@friendly
def drift(
    inventory: Sources,
    baselines: tuple[Path, ...],
    checks_dir: Path | None,
    snapshot: Path | None,
    collect_to: Path | None,
    against: str | None,
    db: Path,
    record: bool,
    ignore: tuple[str, ...],
    counter_rows: Path | None,
    limit: str | None,
    out: Path | None,
    formats: str,
    passes: str,
    fail_on: str,
    quiet: bool,
    **collect_opts: Any,
) -> None:
    """Collect (or take --snapshot), check, record, and diff against the golden or last run.

    The nightly job: exit code 4 when the run has new failures or new errors compared with the
    reference; the first run (nothing to compare with) exits with the check's own code. The
    collection options (--workers, --timeout, --scheduler, ...) are collect's, used when collecting.
    """
    from fabline.history.diff import DEFAULT_VOLATILE, Side, diff_sides
    from fabline.history.render import print_diff, render_json, render_markdown
    from fabline.reports import write_reports
    from fabline.runner import report_context, run_check

    fmts = parse_formats(formats)
    reference = None
    ref_problems: list[Any] = []
    ref_devices: set[str] = set()
    ref_groups: list[dict[str, Any]] = []
    ref_passes: dict[str, dict[str, int]] | None = None
    if db.is_file():
        with HistoryStore(db, create=False) as store:
            if against is not None:
                reference = store.resolve(against)
            else:
                reference = store.pinned("golden") or (store.resolve("last") if store.count() else None)
            if reference is not None:
                ref_problems = store.problems(reference)
                ref_devices = store.device_names(reference)
                ref_groups = [p.to_dict() for p in store.problem_groups(reference, ref_problems)]
                ref_passes = store.pass_counts(reference)
    elif against is not None:
        raise ConfigError(f"--against {against}: no run history", file=db)
    ref_snapshot = Path(reference.snapshot) if reference is not None else None
    if ref_snapshot is not None and not (ref_snapshot / "state").is_dir():
        raise ConfigError(
            f"reference run {reference.run_id if reference else ''}'s snapshot is gone", file=ref_snapshot
        )
    loaded = None  # the inventory as the collection loaded it: not read (a script not run) twice
    engines: list[Engine] = []  # built before the collection: a baseline mistake stops it first
    if snapshot is None:
        from fabline.cli.collect import do_collect, print_collect_summary
        from fabline.runner import prepare_engine

        target = collect_to or Path("snapshots") / time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        paths, checks = baseline_paths(baselines), checks_dir_or_default(checks_dir)
        summary, loaded = do_collect(
            inventory, target, limit=limit, **collect_opts,
            before=lambda inv, _devices: engines.append(prepare_engine(paths, checks, inv)),
        )  # fmt: skip
        if not quiet:
            print_collect_summary(summary)
        snapshot = target
    ignored = (*DEFAULT_VOLATILE, *ignore)
    # The diff's per-device part is compared as the check reads both states (not read twice).
    made = checked_pairs(ref_snapshot, snapshot, ignored, baselines, counter_rows) if ref_snapshot else None
    pieces, pre = made if made is not None else (None, None)
    report, _ = run_check(
        inventory=inventory, snapshot=snapshot, baselines=baseline_paths(baselines),
        checks_dir=checks_dir_or_default(checks_dir), limit=limit, out=None, formats=[], fail_on=fail_on,
        previous=ref_snapshot, history=db if record else None, passes=passes, loaded=loaded, pair=pieces,
        engine=engines[0] if engines else None,
    )  # fmt: skip
    result: DiffResult | None = None
    if reference is not None and ref_snapshot is not None:
        side_b = Side(
            reference.run_id,
            ref_snapshot,
            ref_problems,
            reference.run_id,
            reference.inventory_digest,
            ref_devices,
            ref_groups,
            ref_passes,
        )
        side_a = Side(
            "this run", snapshot, list(report.outcome.results.problems),
            devices={d["name"] for d in report.outcome.devices},
            problem_groups=[p.to_dict() for p in report.problems], passes=report.pass_counts(),
        )  # fmt: skip
        if counter_rows is not None:
            counter_rows.parent.mkdir(parents=True, exist_ok=True)
        # the limits this run was checked with
        limits, limits_from, warnings = pre if pre is not None else diff_limits(baselines, side_a)
        result = diff_sides(
            side_b, side_a, ignore=ignored, limits=limits, counter_rows=counter_rows, pieces=pieces
        )
        result.limits_from = limits_from
        result.warnings.extend(warnings)
    console = Console()
    if out is not None:
        written = write_reports(report, fmts, out, context=report_context(report, fmts, diff=result))
        if result is not None:
            for name, text in (("diff.json", render_json(result)), ("diff.md", render_markdown(result))):
                (out / name).write_text(text, "utf-8")
                written.append(out / name)
        if not quiet:
            for path in written:
                console.print(f"wrote {path}", highlight=False)
    if result is None:
        if not quiet:
            from fabline.reports.console import print_summary

            print_summary(report, console)
            console.print("no earlier run to compare with: this run is the first reference", highlight=False)
        sys.exit(report.exit_code)
    if not quiet:
        print_diff(result, console)
    sys.exit(result.exit_code(Severity.parse(fail_on)))


COMMANDS = [history, diff, drift]
