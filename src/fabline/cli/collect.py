"""``fabline collect``, ``fabline run`` (collect + check) and ``fabline demo``."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console

from fabline.cli.collect_options import DEFAULT_KNOWN_HOSTS, collect_options
from fabline.cli.common import (
    baseline_option,
    baseline_paths,
    checks_dir_or_default,
    checks_option,
    fabric_inputs_options,
    fail_on_option,
    formats_option,
    friendly,
    inventory_option,
    parse_formats,
    passes_option,
)
from fabline.errors import ConfigError
from fabline.results import ExitCode, collection_exit_code

if TYPE_CHECKING:
    from collections.abc import Callable

    from fabline.engine import Engine
    from fabline.inventory import Device, Inventory, Sources


def make_backend(
    scheduler: str | None, site_group: str | None, inventory: Any, devices: list[Any], options: Any
) -> Any:
    """The distributed backend for ``--scheduler``, or None (local collection; Dask is not imported).

    Raises:
        ConfigError: ``--site-group`` without ``--scheduler``, or fabline[distributed] not installed.
    """
    if scheduler is None:
        if site_group is not None:
            raise ConfigError("--site-group needs --scheduler")
        return None
    try:
        from fabline.collect.distributed import dask_backend
    except ImportError:
        raise ConfigError("--scheduler needs Dask distributed: pip install 'fabline[distributed]'") from None
    return dask_backend(scheduler, inventory, devices, site_group, options)


def _progress() -> Any:
    from fabline.collect.collector import LineProgress, RichProgress

    if sys.stderr.isatty():
        return RichProgress()
    return LineProgress(lambda line: click.echo(line, err=True))


def do_collect(
    inventory: Sources,
    out: Path,
    *,
    limit: str | None,
    workers: int,
    timeout: float,
    command_timeout: float,
    max_output: str,
    retries: int,
    pace: float,
    host_key_policy: str,
    known_hosts: Path | None,
    resume: bool = False,
    scheduler: str | None = None,
    site_group: str | None = None,
    before: Callable[[Inventory, list[Device]], None] | None = None,
) -> tuple[Any, tuple[Inventory, list[Device]]]:
    """Collect ``inventory`` into ``out`` with the options of :func:`collect_options`.

    Returns the summary, and the inventory as loaded with its selected devices: a command that
    checks what it collected hands them to :func:`fabline.runner.run_check` (``loaded``), so the
    inventory is read once (a script or plugin source runs once and both steps see the same hosts).
    ``before`` is called with them once they are read, before any device is reached (a command
    that checks afterwards prepares its engine there, so a baseline mistake stops it first).
    """
    from fabline.collect.collector import CollectOptions, check_options, collect, parse_size
    from fabline.inventory import load_inventory, sources_label

    try:
        max_bytes = parse_size(max_output)
    except ValueError as exc:
        raise ConfigError(f"--max-output: {exc}") from None
    options = CollectOptions(
        workers=workers,
        timeout=timeout,
        retries=retries,
        pace=pace,
        host_key_policy=host_key_policy,
        known_hosts=known_hosts or DEFAULT_KNOWN_HOSTS,
        command_timeout=command_timeout,
        max_output=max_bytes,
    )
    check_options(options)  # before the inventory is read: a bad option is the first thing said
    inv = load_inventory(inventory)
    devices = inv.devices(limit)
    if before is not None:
        before(inv, devices)
    summary = collect(
        devices,
        out,
        options,
        inventory_source=sources_label(inventory),
        limit=limit,
        resume=resume,
        progress=_progress(),
        backend=make_backend(scheduler, site_group, inv, devices, options),
    )
    return summary, (inv, devices)


def print_collect_summary(summary: Any) -> None:
    """The run's warnings, the first failed devices and the summary line (on stderr / stdout)."""
    for warning in summary.warnings:
        click.echo(f"fabline: warning: {warning}", err=True)
    for name, status, message in summary.failed[:20]:
        click.echo(f"  {name}: {status}" + (f": {message}" if message else ""), err=True)
    if len(summary.failed) > 20:
        click.echo(f"  ... and {len(summary.failed) - 20} more (see manifest.json)", err=True)
    click.echo(summary.line)


@click.command()
@inventory_option
@click.option("-o", "--out", type=click.Path(path_type=Path), default=None, help="Snapshot folder to write.")
@click.option("--resume", type=click.Path(path_type=Path), default=None,
              help="Snapshot folder of an interrupted or partly failed run: collect only what is missing.")  # fmt: skip
@collect_options
@friendly
def collect(
    inventory: Sources,
    out: Path | None,
    resume: Path | None,
    limit: str | None,
    workers: int,
    timeout: float,
    command_timeout: float,
    max_output: str,
    retries: int,
    pace: float,
    host_key_policy: str,
    known_hosts: Path | None,
    scheduler: str | None,
    site_group: str | None,
) -> None:
    """Collect device state over SSH into a snapshot (raw/, state/, manifest.json).

    Exit code 0 when every device was read, 3 when some could not be (unreachable, auth failure,
    timeout, error), 2 on a configuration error.
    """
    from fabline.state import UNREADABLE_STATUSES

    if (out is None) == (resume is None):
        raise ConfigError("give exactly one of -o/--out SNAPDIR and --resume SNAPDIR")
    target = out or resume
    assert target is not None
    if resume is not None and not resume.is_dir():
        raise ConfigError("snapshot folder to resume not found", file=resume)
    summary, _ = do_collect(
        inventory, target, limit=limit, workers=workers, timeout=timeout, command_timeout=command_timeout,
        max_output=max_output, retries=retries, pace=pace, host_key_policy=host_key_policy,
        known_hosts=known_hosts, resume=resume is not None, scheduler=scheduler, site_group=site_group,
    )  # fmt: skip
    print_collect_summary(summary)
    sys.exit(collection_exit_code(sum(n for s, n in summary.by_status.items() if s in UNREADABLE_STATUSES)))


@click.command()
@inventory_option
@click.option("-s", "--snapshot", type=click.Path(path_type=Path), default=None,
              help="Snapshot folder to write (default: snapshots/<UTC time>).")  # fmt: skip
@collect_options
@baseline_option
@checks_option
@click.option("-o", "--out", type=click.Path(path_type=Path), default=Path("reports"), show_default=True,
              help="Folder for report files.")  # fmt: skip
@formats_option
@passes_option
@fail_on_option
@fabric_inputs_options
@click.option("-q", "--quiet", is_flag=True, help="No console summary.")
@friendly
def run(
    inventory: Sources,
    snapshot: Path | None,
    limit: str | None,
    workers: int,
    timeout: float,
    command_timeout: float,
    max_output: str,
    retries: int,
    pace: float,
    host_key_policy: str,
    known_hosts: Path | None,
    scheduler: str | None,
    site_group: str | None,
    baselines: tuple[Path, ...],
    checks_dir: Path | None,
    out: Path,
    formats: str,
    passes: str,
    fail_on: str,
    previous: Path | None,
    cabling: Path | None,
    quiet: bool,
) -> None:
    """Collect over SSH, then check the new snapshot (collect + check in one go).

    Exit codes are check's: 0 all pass, 3 errors but no failure, 4 a failure at or above --fail-on.
    """
    from fabline.runner import prepare_engine, run_check
    from fabline.snapshot import Snapshot

    fmts = parse_formats(formats)
    paths = baseline_paths(baselines)
    checks = checks_dir_or_default(checks_dir)
    target = snapshot or Path("snapshots") / dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    if previous is not None:
        Snapshot(previous)  # a missing --previous is said now, not after the collection
    engines: list[Engine] = []
    summary, loaded = do_collect(
        inventory, target, limit=limit, workers=workers, timeout=timeout, command_timeout=command_timeout,
        max_output=max_output, retries=retries, pace=pace, host_key_policy=host_key_policy,
        known_hosts=known_hosts, scheduler=scheduler, site_group=site_group,
        before=lambda inv, _devices: engines.append(prepare_engine(paths, checks, inv, cabling)),
    )  # fmt: skip
    print_collect_summary(summary)
    report, written = run_check(
        inventory=inventory, snapshot=target, baselines=paths, checks_dir=checks, limit=limit, out=out,
        formats=fmts, fail_on=fail_on, previous=previous, cabling=cabling, passes=passes, loaded=loaded,
        engine=engines[0],
    )  # fmt: skip
    if not quiet:
        from fabline.reports.console import print_summary

        console = Console()
        print_summary(report, console)
        for path in written:
            console.print(f"wrote {path}", highlight=False)
    sys.exit(report.exit_code)


@click.command()
@click.option("--out", type=click.Path(path_type=Path), default=Path("reports") / "demo", show_default=True,
              help="Folder for the demo's inventory, snapshot and reports.")  # fmt: skip
@click.option("--eapi", is_flag=True,
              help="Collect the Arista EOS switches over eAPI (HTTPS, NAPALM's EOS driver) instead of SSH.")  # fmt: skip
@friendly
def demo(out: Path, eapi: bool) -> None:
    """Run the main job on a bundled simulated fabric: serve it over SSH, collect, check, report.

    The fabric has one leaf of every switch platform (SONiC, Cumulus, EOS, NX-OS), EOS spines and
    two GPU hosts, with planted faults (docs/collection.md lists them). Exit 0 when the run worked:
    the violations it reports are the point. With --eapi the EOS switches answer over eAPI
    (HTTPS JSON-RPC), verified against the simulator's own CA.
    """
    import time

    from fabline.baseline import default_baseline_path
    from fabline.collect.demo import run_demo
    from fabline.reports.console import print_summary
    from fabline.runner import run_check

    started = time.monotonic()
    console = Console()
    console.print(
        "fabline demo: starting a simulated RoCE fabric (SONiC, Cumulus, EOS, NX-OS, Linux GPU hosts)"
    )
    result = run_demo(out, progress=_progress(), eapi=eapi)
    console.print(
        f"served {result.devices} devices over SSH on 127.10.0.x (first: {result.address})", highlight=False
    )
    if result.eapi:
        console.print(
            f"the {len(result.eapi)} EOS switches collected over eAPI (https://{result.eapi[0]}/command-api, ...), "
            f"TLS verified against {out / 'eapi-ca.pem'}",
            highlight=False,
        )
    print_collect_summary(result.summary)
    report, written = run_check(
        inventory=result.inventory, snapshot=result.snapshot, baselines=[default_baseline_path()],
        checks_dir=None, limit=None, out=out, formats=["json", "junit", "md"], fail_on="minor",
        cabling=result.cabling,
    )  # fmt: skip
    print_summary(report, console)
    for path in written:
        console.print(f"wrote {path}", highlight=False)
    console.print(f"snapshot {result.snapshot} (raw/, state/, manifest.json)", highlight=False)
    from fabline.cli.remediate import run_remediate

    # The fixes of the planted faults, from the report just written (docs/remediation.md).
    fix = run_remediate(
        inventory=None, snapshot=result.snapshot, report=out / "report.json", baselines=[default_baseline_path()],
        checks_dir=None, out=out / "remediation", cabling=result.cabling,
    )  # fmt: skip
    console.print(
        f"remediation {fix.out / 'plan.md'}: {len(fix.plan.changes)} device changes, "
        f"{len(fix.plan.work_orders)} work orders (applied nothing)",
        highlight=False,
    )
    console.print(
        f"demo finished in {time.monotonic() - started:.1f} s: the run worked (exit 0); the "
        f"{len(report.problems)} problems above are its planted faults, listed in docs/collection.md",
        highlight=False,
    )
    unread = [name for name, status, _ in result.summary.failed if status not in ("ok", "partial")]
    if unread:
        click.echo(f"fabline: internal error: the demo could not read {', '.join(unread)}", err=True)
        sys.exit(ExitCode.INTERNAL)
    sys.exit(ExitCode.OK)


COMMANDS = [collect, run, demo]
