"""The remediation folder: per-device change files, ``plan.md``, work orders, the playbook.

OUT/
  plan.md               what a reviewer reads: changes grouped by problem, work orders, what was left out
  devices/<device>.*    each device's change in its platform's format
  work-orders.csv       findings for hands (clean, swap, re-cable), one row each
  remediation.json      the same plan as data (fixes with their sources, files, work orders)
  playbook.yml          Ansible playbook applying the changes (check mode and diff where supported)
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from fabline.errors import ConfigError
from fabline.remediate.model import DeviceChange, Fix, Plan, WorkOrder

PLAN_FILE = "plan.md"


@dataclass(frozen=True)
class ProblemRef:
    """A problem of the run (:mod:`fabline.problems`), as the plan groups by it.

    Attributes:
        id: Problem id.
        cause: Its one-line cause.
        severity: Severity label.
        findings: The finding ids it groups.
    """

    id: str
    cause: str
    severity: str
    findings: tuple[str, ...]


@dataclass(frozen=True)
class RunInfo:
    """Where the plan came from (shown at the top of plan.md)."""

    snapshot: str
    source: str
    baselines: Sequence[str] = field(default_factory=tuple)


def prepare(out: Path) -> None:
    """Create ``out`` or reuse a previous remediation folder; never clobber anything else.

    Raises:
        ConfigError: ``out`` exists, is not empty and holds no plan.md.
    """
    if out.exists() and not out.is_dir():
        raise ConfigError("exists and is not a folder", file=out)
    if out.is_dir() and any(out.iterdir()) and not (out / PLAN_FILE).is_file():
        raise ConfigError(
            "exists, is not empty and is not a fabline remediation folder (no plan.md)", file=out
        )
    devices = out / "devices"
    if devices.is_dir():
        for old in devices.iterdir():
            if old.is_file():
                old.unlink()
    devices.mkdir(parents=True, exist_ok=True)


def write(
    out: Path, plan: Plan, problems: Sequence[ProblemRef], info: RunInfo, playbook: str | None
) -> list[Path]:
    """Write the whole folder; returns the files written."""
    prepare(out)
    written: list[Path] = []
    for change in plan.changes:
        for name, text in change.files.items():
            path = out / "devices" / name
            path.write_text(text, "utf-8")
            written.append(path)
    files = {
        PLAN_FILE: plan_markdown(plan, problems, info),
        "work-orders.csv": work_orders_csv(plan.work_orders),
        "remediation.json": json.dumps(document(plan, info), indent=1, default=str) + "\n",
    }
    if playbook is not None:
        files["playbook.yml"] = playbook
    for name, text in files.items():
        (out / name).write_text(text, "utf-8")
        written.append(out / name)
    return written


def document(plan: Plan, info: RunInfo) -> dict[str, Any]:
    """The plan as data (``remediation.json``)."""
    return {
        "schema": "fabline.remediation/1",
        "snapshot": info.snapshot,
        "source": info.source,
        "changes": [
            {
                "device": c.device,
                "platform": c.platform,
                "files": sorted(c.files),
                "steps": c.steps,
                "disruptive": c.disruptive,
                "notes": c.notes,
                "fixes": [asdict(f) for f in c.fixes],
            }
            for c in plan.changes
        ],
        "work_orders": [asdict(w) for w in plan.work_orders],
        "skipped": plan.skipped,
        "covered": sorted(plan.covered),
        "unresolved": plan.unresolved,
    }


def work_orders_csv(orders: Sequence[WorkOrder]) -> str:
    """The work orders as CSV (one row each; for a ticketing system)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["device", "port", "peer_device", "peer_port", "check", "finding", "action", "cabling_row"])
    for o in orders:
        w.writerow([o.device, o.port or "", o.peer_device or "", o.peer_port or "", o.check, o.finding,
                    o.action, o.cabling_row or ""])  # fmt: skip
    return buf.getvalue()


def _value(v: Any) -> str:
    text = json.dumps(v, sort_keys=True)
    return text if len(text) <= 60 else text[:57] + "..."


def _change(current: Any, value: Any) -> str:
    """``old -> new``; for maps (a DSCP map) only the keys that change."""
    if isinstance(current, Mapping) and isinstance(value, Mapping):
        keys = sorted((k for k in {*current, *value} if current.get(k) != value.get(k)), key=str)
        return "{" + ", ".join(f"{k}: {_value(current.get(k))} -> {_value(value.get(k))}" for k in keys) + "}"
    return f"{_value(current)} -> {_value(value)}"


def _fix_line(f: Fix, files: Sequence[str]) -> str:
    where = f"{f.device} {f.subject}" if f.subject else f.device
    mark = " **(interrupts traffic: applied last)**" if f.disruptive else ""
    # The file that carries the fix: the traffic-interrupting one for a disruptive fix.
    mine = [n for n in files if ("disruptive" in n) == f.disruptive] or list(files)
    return (f"- `{where}` {f.check}: `{f.path}` {_change(f.current, f.value)}; value from "
            f"{f.source}{mark} ({', '.join(f'`devices/{n}`' for n in mine)})")  # fmt: skip


def _order_line(o: WorkOrder) -> str:
    where = f"{o.device} {o.port}" if o.port else o.device
    peer = f" (peer {o.peer_device} {o.peer_port or ''})".rstrip() + ")" if o.peer_device else ""
    peer = peer.replace("))", ")")
    return f"- **work order** `{where}`{peer} {o.check}: {o.finding}. {o.action}"


def plan_markdown(plan: Plan, problems: Sequence[ProblemRef], info: RunInfo) -> str:
    """``plan.md``: what a reviewer reads before anything is applied."""
    by_finding_fix: dict[str, tuple[Fix, DeviceChange]] = {}
    for c in plan.changes:
        for f in c.fixes:
            by_finding_fix[f.finding] = (f, c)
    by_finding_order = {i: o for o in plan.work_orders for i in o.ids}
    disruptive = [c.device for c in plan.changes if c.disruptive]
    out = [
        "# Remediation plan",
        "",
        f"From `{info.source}` on snapshot `{info.snapshot}`"
        + (f" (baselines {', '.join(f'`{b}`' for b in info.baselines)})" if info.baselines else "")
        + ". fabline applied nothing: every change below is for review.",
        "",
        f"- {len(plan.changes)} device(s) to change"
        + (
            f", {len(disruptive)} with steps that interrupt traffic ({', '.join(disruptive)})"
            if disruptive
            else ""
        ),
        f"- {len(plan.work_orders)} work order(s) (no configuration fixes them)",
        f"- {len(plan.skipped)} device(s) with nothing emitted, {len(plan.unresolved)} finding(s) left as they are",
        "",
        "How to review: read each problem's fixes (the value and where it comes from), then each device's",
        "change file; dry-run it (`config apply-patch --dry-run`, `nv config diff`, `configure session` +",
        "`show session-config diffs`, `ansible-playbook --check --diff`); apply the traffic-safe steps first",
        "and the marked ones last, in a maintenance window; collect and check again.",
        "",
        "## By problem",
    ]
    shown: set[str] = set()
    for p in problems:
        fixes = [by_finding_fix[i] for i in p.findings if i in by_finding_fix]
        orders = list({id(o): o for i in p.findings if (o := by_finding_order.get(i)) is not None}.values())
        if not fixes and not orders:
            continue
        out += ["", f"### {p.cause}", "", f"{p.severity}, problem `{p.id}`", ""]
        out += [_fix_line(f, sorted(c.files)) for f, c in fixes]
        out += [_order_line(o) for o in orders]
        shown.update(f.finding for f, _ in fixes)
        shown.update(i for o in orders for i in o.ids)
    rest_fixes = [(f, c) for i, (f, c) in by_finding_fix.items() if i not in shown]
    rest_orders = [o for o in plan.work_orders if not shown.intersection(o.ids)]
    if rest_fixes or rest_orders:
        out += ["", "### Findings outside any problem", ""]
        out += [_fix_line(f, sorted(c.files)) for f, c in rest_fixes]
        out += [_order_line(o) for o in rest_orders]
    out += ["", "## By device"]
    for c in plan.changes:
        out += [
            "",
            f"### {c.device} ({c.platform})",
            "",
            "Files: " + ", ".join(f"`devices/{n}`" for n in sorted(c.files)),
            "",
        ]
        out += ["Steps, in order:", "", "```"]
        out += list(c.steps)
        out += ["```"]
        if c.disruptive:
            out += ["", "**Interrupts traffic on live ports (applied last):**", ""]
            out += [f"- `{s}`" for s in c.disruptive]
        if c.notes:
            out += ["", *[f"- note: {n}" for n in c.notes]]
    if plan.work_orders:
        out += [
            "",
            "## Work orders",
            "",
            "| device | port | peer | check | what to do | cabling plan row |",
            "|---|---|---|---|---|---|",
        ]
        for o in plan.work_orders:
            peer = f"{o.peer_device} {o.peer_port or ''}".strip() if o.peer_device else ""
            out.append(
                f"| {o.device} | {o.port or ''} | {peer} | {o.check} | {o.action} | {o.cabling_row or ''} |"
            )
    out += ["", "## Not generated", ""]
    if not plan.skipped and not plan.unresolved:
        out.append("Nothing: every failing finding has a change or a work order.")
    for name, why in sorted(plan.skipped.items()):
        out.append(f"- device `{name}`: {why}")
    for fid, why in sorted(plan.unresolved.items()):
        out.append(f"- finding `{fid}`: {why}")
    return "\n".join(out) + "\n"


def problem_refs(problems: Sequence[Mapping[str, Any]]) -> list[ProblemRef]:
    """Problems from a report.json's ``problems`` list (malformed entries are left out)."""
    refs = []
    for p in problems:
        if not isinstance(p, Mapping) or not isinstance(p.get("id"), str):
            continue
        findings = tuple(str(f) for f in p.get("findings") or [] if isinstance(f, str))
        refs.append(ProblemRef(p["id"], str(p.get("cause", "")), str(p.get("severity", "")), findings))
    return refs
