"""The remediation of one run: fixes per device, each platform's change, work orders.

Nothing here touches a device: the output is files a person reviews and applies (or an Ansible
playbook they run). A device whose state could not be read gets nothing, whatever its findings.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from fabline.remediate.common import NoEvidence, Stages, raw_output, remediator
from fabline.remediate.intent import DeviceIntent, build_intents, covers, put, work_order
from fabline.remediate.model import Plan, WorkOrder
from fabline.results import Result, Status
from fabline.state import UNREADABLE_STATUSES, StateError


def stages_of(intent: DeviceIntent) -> Stages:
    """The device's state before, after the traffic-safe fixes and after all of them."""
    safe = copy.deepcopy(intent.target)
    for f in intent.fixes:
        if not f.disruptive:
            continue
        full = f.path if f.subject is None else f"interfaces.{f.subject}.{f.path}"
        put(safe, full, f.current)
    return Stages(intent.device, intent.current, safe, intent.target, tuple(intent.fixes))


def build_plan(
    failing: Iterable[Result],
    load_state: Callable[[str], Mapping[str, Any] | None],
    platforms: Mapping[str, str],
    snapshot: Path | None,
    design_mtu: Mapping[str, int],
    cabling: Sequence[str] = (),
) -> Plan:
    """Fixes, changes and work orders for the failing results of one run.

    Args:
        failing: The run's non-pass results (only ``fail`` ones are acted on; ``waived`` are left).
        load_state: The collected state of a device (None when missing or unreadable).
        platforms: Device name -> platform id.
        snapshot: The snapshot folder (its ``raw/`` holds the running configurations), or None.
        design_mtu: Platform -> the design's port MTU (for the minimum-only MTU rule).
        cabling: The cabling plan's rows (CSV lines), for work orders.
    """
    plan = Plan()
    results = [r for r in failing if r.status is Status.FAIL]
    states: dict[str, Mapping[str, Any]] = {}
    for name in sorted({r.device for r in results}):
        try:
            state = load_state(name)
        except StateError as exc:
            plan.skipped[name] = f"state not readable: {exc}"
            continue
        if state is None:
            plan.skipped[name] = "no state in the snapshot"
        elif state.get("status") in UNREADABLE_STATUSES:
            plan.skipped[name] = f"state could not be read (status {state.get('status')}): nothing emitted"
        else:
            states[name] = state
    intents, rest = build_intents((r for r in results if r.device in states), states, platforms, design_mtu)
    for name, intent in sorted(intents.items()):
        change_format = remediator(intent.platform)  # the platform spec's remediation
        if change_format is None:
            plan.skipped[name] = f"no change format for platform {intent.platform!r} yet"
            for f in intent.fixes:
                plan.unresolved[f.finding] = f"platform {intent.platform} has no change format"
            continue

        def reader(commands: Sequence[str], device: str = name) -> str | None:
            return None if snapshot is None else raw_output(snapshot, device, commands)

        try:
            change = change_format.emit(stages_of(intent), reader)
        except NoEvidence as exc:
            plan.skipped[name] = str(exc)
            for f in intent.fixes:
                plan.unresolved[f.finding] = str(exc)
            continue
        plan.changes.append(change)
        plan.covered.update(f.finding for f in intent.fixes)
    orders: dict[tuple[str, str | None, str], WorkOrder] = {}
    for r in rest:
        if r.device in plan.skipped and r.device not in states:
            continue
        if covers(r, intents, states.get(r.device)):
            plan.covered.add(r.id)
            continue
        if r.check in _NO_WORK_ORDER:
            plan.unresolved[r.id] = _NO_WORK_ORDER[r.check]
            continue
        key = (r.device, r.subject, r.check)
        if key in orders:
            continue
        orders[key] = work_order(r, states.get(r.device), cabling)
    plan.work_orders = sorted(orders.values(), key=lambda w: (w.device, w.port or "", w.check))
    for r in results:
        if r.device in plan.skipped and r.device not in states:
            plan.unresolved.setdefault(r.id, plan.skipped[r.device])
    return plan


#: Failing checks that are neither configuration nor hands-on work.
_NO_WORK_ORDER = {
    "device-collection": "a collection problem: fix access or the command, then collect again",
}
