"""``fabline remediate``: the change that fixes each failing result, per device, for review.

fabline stays read-only: it writes files (per-device changes, plan.md, work orders, a playbook)
and never connects to a device here.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from fabline.cli.common import baseline_option, baseline_paths, checks_dir_or_default, checks_option, friendly
from fabline.errors import ConfigError
from fabline.remediate.model import Plan
from fabline.remediate.output import ProblemRef, RunInfo, problem_refs, write
from fabline.results import Result, Status

if TYPE_CHECKING:
    from fabline.inventory import Sources


@dataclass
class RemediationRun:
    """What ``fabline remediate`` produced."""

    plan: Plan
    written: list[Path]
    out: Path


def results_from_report(path: Path) -> tuple[list[Result], list[ProblemRef], dict[str, str], str | None]:
    """The non-pass results, problems, device platforms and snapshot of a saved ``report.json``
    (read by :func:`fabline.reportfile.load_report`: every report version, one reader).

    Raises:
        ConfigError: Not a readable fabline report (one line naming the file).
    """
    from fabline.reportfile import load_report
    from fabline.results import expand_results

    saved = load_report(path)
    wanted = (Status.FAIL, Status.ERROR, Status.WAIVED)
    results = [r for r in expand_results(saved.findings) if r.status in wanted]
    platforms = {
        str(d["name"]): str(d.get("platform", ""))
        for d in saved.devices
        if isinstance(d, dict) and "name" in d
    }
    snapshot = saved.run.get("snapshot")
    return results, problem_refs(saved.problems), platforms, snapshot if isinstance(snapshot, str) else None


def run_remediate(
    *,
    inventory: Sources | None,
    snapshot: Path | None,
    baselines: list[Path],
    checks_dir: Path | None,
    out: Path,
    report: Path | None = None,
    limit: str | None = None,
    cabling: Path | None = None,
    today: dt.date | None = None,
) -> RemediationRun:
    """Check (or read a saved report), build the plan and write the remediation folder.

    Raises:
        ConfigError: Missing or inconsistent inputs (one line naming the file or option).
    """
    from fabline.design.model import default_port_mtu
    from fabline.remediate.core import build_plan
    from fabline.remediate.playbook import playbook
    from fabline.snapshot import Snapshot

    platforms: dict[str, str] = {}
    if report is not None:
        results, problems, platforms, recorded = results_from_report(report)
        if snapshot is None and recorded is not None:
            snapshot = Path(recorded)
        source = f"report {report}"
    if snapshot is None:
        raise ConfigError("give --snapshot DIR (the snapshot the check read: states and raw configurations)")
    if report is None:
        if inventory is None:
            raise ConfigError("give -i INVENTORY (or --report REPORT.json from an earlier check)")
        from fabline.runner import run_check

        checked, _ = run_check(
            inventory=inventory, snapshot=snapshot, baselines=baselines, checks_dir=checks_dir, limit=limit,
            out=None, formats=[], fail_on="minor", today=today, cabling=cabling,
        )  # fmt: skip
        results = [r for r in checked.outcome.results.problems if r.status is Status.FAIL]
        problems = [
            ProblemRef(p.id, p.cause, p.severity.label, tuple(f.id for f in p.findings))
            for p in checked.problems
        ]
        platforms = {
            str(d["name"]): str(d.get("platform", "")) for d in checked.outcome.devices if "name" in d
        }
        source = "fabline check of the inventory " + ", ".join(str(i) for i in _sources(inventory))
    if inventory is not None and not platforms:
        from fabline.inventory import load_inventory

        platforms = {d.name: d.platform for d in load_inventory(inventory).devices(limit)}
    snap = Snapshot(snapshot)
    rows = _cabling_rows(cabling)
    plan = build_plan(results, snap.load, platforms, snapshot, default_port_mtu(), rows)
    info = RunInfo(str(snapshot), source, [str(b) for b in baselines] if report is None else [])
    written = write(out, plan, problems, info, playbook(plan))
    return RemediationRun(plan, written, out)


def _sources(inventory: Sources) -> list[Path | str]:
    return [inventory] if isinstance(inventory, Path) else list(inventory)


def _cabling_rows(path: Path | None) -> Sequence[str]:
    if path is None:
        return ()
    if not path.is_file():
        raise ConfigError("cabling plan not found", file=path)
    return [
        ln.strip() for ln in path.read_text("utf-8").splitlines() if ln.strip() and not ln.startswith("#")
    ][1:]


@click.command("remediate")
@click.option("-i", "--inventory", "inventory", multiple=True, type=click.Path(path_type=Path),
              help="Ansible inventory source (repeatable); optional with --report.")  # fmt: skip
@click.option("--snapshot", type=click.Path(path_type=Path), default=None,
              help="Snapshot folder the check read (states and raw running configurations).")  # fmt: skip
@click.option("--report", type=click.Path(path_type=Path), default=None,
              help="A saved report.json instead of checking again (its snapshot unless --snapshot).")  # fmt: skip
@baseline_option
@checks_option
@click.option("-l", "--limit", default=None, help="Ansible host pattern, as for fabline check.")
@click.option("--cabling", type=click.Path(path_type=Path), default=None,
              help="Cabling plan CSV: its rows go into the work orders.")  # fmt: skip
@click.option("--today", type=click.DateTime(["%Y-%m-%d"]), default=None,
              help="Date waivers expire against (default: today).")  # fmt: skip
@click.option("-o", "--out", type=click.Path(path_type=Path), required=True,
              help="Folder for plan.md, devices/, work-orders.csv, playbook.yml.")  # fmt: skip
@friendly
def remediate(
    inventory: tuple[Path, ...],
    snapshot: Path | None,
    report: Path | None,
    baselines: tuple[Path, ...],
    checks_dir: Path | None,
    limit: str | None,
    cabling: Path | None,
    today: dt.datetime | None,
    out: Path,
) -> None:
    """Write the change that fixes each failing result, per device, for review (applies nothing).

    SONiC gets a JSON Patch for `config apply-patch`, Cumulus `nv set`/`nv unset` commands, EOS
    and NX-OS configuration-mode CLI (hier_config remediation of the running config), hosts their
    commands and persistent file; physical findings become work orders. Traffic-interrupting
    steps are marked and ordered last. docs/remediation.md explains the folder.
    """
    run = run_remediate(
        inventory=inventory or None, snapshot=snapshot, report=report, baselines=baseline_paths(baselines),
        checks_dir=checks_dir_or_default(checks_dir), limit=limit, cabling=cabling, out=out,
        today=today.date() if today else None,
    )  # fmt: skip
    plan = run.plan
    click.echo(
        f"remediation: {len(plan.changes)} device change(s), {len(plan.work_orders)} work order(s), "
        f"{len(plan.skipped)} device(s) with nothing emitted -> {out / 'plan.md'}"
    )


COMMANDS = [remediate]
