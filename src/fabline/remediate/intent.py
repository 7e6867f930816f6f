"""From failing results to intended values: what each device should hold, and the work orders.

The intended value comes from the failing result itself: ``expected`` holds the rule's operators
with the very baseline and inventory values the check used, so a site's overrides are honoured and
a waived finding (status ``waived``) never reaches here. A rule with no single right value says so
in the fix's ``source``: a minimum takes the design's value (the platform's port MTU), a range the
design's default (NVIDIA's ECN thresholds) when it lies inside the range.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fabline.remediate.model import Fix, WorkOrder
from fabline.results import Result, Status

#: State paths configuration can set (the first part of a rule's path; ``qos``/``nic``/``host``
#: only for the named leaves below).
CONFIG_FIELDS = frozenset({"mtu", "trust", "pfc_priorities", "dscp_to_priority", "fec", "autoneg", "ecn"})
CONFIG_LEAVES = frozenset(
    {"qos.pfc_watchdog.enabled", "nic.roce_tos", "nic.ecn_np_priorities", "nic.ecn_rp_priorities",
     "host.nccl_env.NCCL_IB_TC", "host.gpudirect_rdma"}
)  # fmt: skip
#: Fields whose change takes a live port down while it retrains (applied last, marked).
DISRUPTIVE_FIELDS = frozenset({"fec", "autoneg", "speed_gbps"})
#: The design's values where a rule allows a range (``fabline.design.model.SwitchQos`` defaults).
DESIGN_DEFAULTS = {"min_bytes": 150000, "max_bytes": 1500000, "probability_pct": 5}
#: The class every DSCP that is not RoCE's or the CNPs' goes to (the templates' default).
DEFAULT_CLASS = 0

#: Python link checks: the fields whose fix (at this end or the peer's) resolves them.
LINK_FIELDS: dict[str, tuple[str, ...]] = {
    "link-mtu": ("mtu",),
    "link-fec": ("fec",),
    "link-autoneg": ("autoneg",),
    "link-trust": ("trust",),
    "link-pfc": ("pfc_priorities",),
    "link-dscp-map": ("dscp_to_priority",),
    "host-tos-fabric": ("nic.", "dscp_to_priority", "pfc_priorities", "trust", "host.nccl_env"),
}

_CLEAN = "clean both connectors ({here} and {there}) and re-measure; if it stays low, swap the optic, then the cable"
_ERRORS = "inspect the link ({here} <-> {there}): reseat both optics, clean the connectors; swap the cable if the count keeps rising"
_DOWN = "down link ({here} <-> {there}): check the cable is seated and the optic present at both ends and the peer port is admin up; swap the cable"
_CABLE = "re-cable to the plan: {row}"
#: What a person does for the checks configuration cannot fix.
WORK_ACTIONS: dict[str, str] = {
    "optics-rx-power": _CLEAN,
    "optics-rx-power-margin": "plan a cleaning of both connectors ({here} and {there}); receive power has little margin",
    "optics-temperature": "check the airflow at {here}; replace the optic if it stays above the limit",
    "fec-uncorrectable": _ERRORS,
    "fec-uncorrectable-delta": _ERRORS,
    "crc-errors": _ERRORS,
    "crc-errors-delta": _ERRORS,
    "switch-port-up": _DOWN,
    "host-link-up": _DOWN,
    "link-lldp": "check what is cabled to {here}: LLDP disagrees with the other end ({there}); {row}",
    "rail-cabling": "swap the cables so each NIC reaches its rail's leaf: {here} is cabled to {there}; {row}",
    "cabling-plan": _CABLE,
    "clos-shape": "check the leaf-spine links of {here}: a link is missing, extra or slower than its plane's ({there}); {row}",
    "leaf-oversubscription": "check the uplinks of {here}: down or slow uplinks break 1:1",
    "link-speed": "check the optics and cable of {here} <-> {there}: one end came up slower",
    "version-skew": "upgrade {here} to the majority version in a maintenance window",
    "pfc-pause-rate": "find what congests {here} (incast, a slow receiver, a PFC storm) before changing any setting",
}


@dataclass
class DeviceIntent:
    """What one device should hold after the change.

    Attributes:
        device: Inventory name.
        platform: Platform id.
        current: The collected state.
        target: A copy of it with every fix applied.
        fixes: The fixes, in finding order.
    """

    device: str
    platform: str
    current: dict[str, Any]
    target: dict[str, Any]
    fixes: list[Fix] = field(default_factory=list)


def configurable(path: str) -> bool:
    """Whether configuration can set a state path (``mtu``, ``ecn.3.min_bytes``, ``nic.roce_tos``).

    Example:
        >>> configurable("dscp_to_priority.48"), configurable("optics.rx_power_dbm")
        (True, False)
    """
    return path.split(".", 1)[0] in CONFIG_FIELDS or path in CONFIG_LEAVES


def walk(doc: Mapping[str, Any] | None, path: str) -> Any:
    """The value at a dotted path, or None.

    Example:
        >>> walk({"ecn": {"3": {"min_bytes": 5}}}, "ecn.3.min_bytes")
        5
    """
    cur: Any = doc
    for part in path.split("."):
        if not isinstance(cur, Mapping) or part not in cur:
            return None
        cur = cur[part]
    return cur


def put(doc: dict[str, Any], path: str, value: Any) -> None:
    """Set a dotted path, creating the objects on the way.

    Example:
        >>> d = {}; put(d, "ecn.3.enabled", True); d
        {'ecn': {'3': {'enabled': True}}}
    """
    parts = path.split(".")
    for part in parts[:-1]:
        nxt = doc.get(part)
        if not isinstance(nxt, dict):
            nxt = doc[part] = {}
        doc = nxt
    doc[parts[-1]] = value


def intended_value(
    path: str, ops: Mapping[str, Any], current: Any, design_mtu: int | None
) -> tuple[Any, str]:
    """The value a failing expectation wants, and where it comes from.

    Raises:
        ValueError: The operator gives no value to set (``absent``, ``each``).

    Example:
        >>> intended_value("mtu", {"min": 9100}, 1500, 9216)
        (9216, "the design's port MTU 9216 (the rule is a minimum: mtu >= 9100)")
        >>> intended_value("pfc_priorities", {"exactly": [3]}, [3, 4], None)
        ([3], 'baseline: pfc_priorities exactly [3]')
    """
    if "equals" in ops:
        return ops["equals"], f"baseline: {path} equals {json.dumps(ops['equals'])}"
    if "exactly" in ops:
        return list(ops["exactly"]), f"baseline: {path} exactly {json.dumps(ops['exactly'])}"
    if "contains" in ops:
        have = list(current) if isinstance(current, list) else []
        want = sorted({*have, *ops["contains"]}, key=str)
        return want, f"baseline: {path} contains {json.dumps(ops['contains'])} (the others kept)"
    if "maps_only" in ops:
        spec = ops["maps_only"]
        to = spec["to"]
        new = {str(k): v for k, v in (current or {}).items()} if isinstance(current, Mapping) else {}
        keys = {str(k) for k in spec["keys"]}
        for k in keys:
            new[k] = to
        moved = sorted((k for k, v in new.items() if v == to and k not in keys), key=int)
        for k in moved:
            new[k] = DEFAULT_CLASS
        why = f"baseline: {path} maps only {sorted(keys, key=int)} to {to}"
        if moved:
            why += f"; {', '.join(moved)} moved to {DEFAULT_CLASS} (the templates' default class)"
        return new, why
    if "min" in ops and not isinstance(ops["min"], Mapping):
        low = ops["min"]
        if path == "mtu" and design_mtu is not None and design_mtu >= low:
            return design_mtu, f"the design's port MTU {design_mtu} (the rule is a minimum: mtu >= {low})"
        return low, f"the rule's minimum {low} (no design value for {path})"
    if "range" in ops:
        lo, hi = ops["range"]
        leaf = path.rsplit(".", 1)[-1]
        design = DESIGN_DEFAULTS.get(leaf)
        if design is not None and lo <= design <= hi:
            return design, f"the design's {leaf} {design} (the rule is a range: {lo}..{hi})"
        return lo, f"the range's low end {lo} (the rule is a range: {lo}..{hi}; no design value inside it)"
    if "max" in ops and not isinstance(ops["max"], Mapping):
        return ops["max"], f"the rule's maximum {ops['max']}"
    raise ValueError(f"{path}: operator {', '.join(ops)} gives no value to set")


def _peer(r: Result, state: Mapping[str, Any] | None) -> tuple[str | None, str | None]:
    exp = r.expected if isinstance(r.expected, Mapping) else {}
    dev, port = exp.get("peer_device"), exp.get("peer_interface")
    if isinstance(dev, str):
        return dev, port if isinstance(port, str) else None
    if r.subject and state:
        lldp = walk(state, f"interfaces.{r.subject}.lldp") if "." not in r.subject else None
        if isinstance(lldp, Mapping) and isinstance(lldp.get("device"), str):
            port = lldp.get("port")
            return lldp["device"], port if isinstance(port, str) else None
    return None, None


def plan_row(plan: Sequence[str], device: str, port: str | None) -> str | None:
    """The cabling plan row naming ``device port`` at either end (rows as CSV text lines).

    Example:
        >>> plan_row(["gpu-001,eth0,leaf-r0-a,Ethernet0,0,0"], "leaf-r0-a", "Ethernet0")
        'gpu-001,eth0,leaf-r0-a,Ethernet0,0,0'
    """
    if port is None:
        return None
    for row in plan:
        cells = [c.strip() for c in row.split(",")]
        if len(cells) >= 4 and (
            (cells[0], cells[1]) == (device, port) or (cells[2], cells[3]) == (device, port)
        ):
            return row
    return None


def work_order(r: Result, state: Mapping[str, Any] | None, plan: Sequence[str]) -> WorkOrder:
    """The work order for a finding configuration cannot fix."""
    peer, peer_port = _peer(r, state)
    row = plan_row(plan, r.device, r.subject)
    here = f"{r.device} {r.subject}" if r.subject else r.device
    there = f"{peer} {peer_port or ''}".strip() if peer else "the far end"
    template = WORK_ACTIONS.get(
        r.check, "inspect {here}: no configuration change is generated for this check"
    )
    action = template.format(
        here=here, there=there, row=f"plan row `{row}`" if row else "no cabling plan row"
    )
    return WorkOrder(r.device, r.subject, peer, peer_port, r.check, r.message, action, row, (r.id,))


def build_intents(
    failing: Iterable[Result],
    states: Mapping[str, Mapping[str, Any]],
    platforms: Mapping[str, str],
    design_mtu: Mapping[str, int],
) -> tuple[dict[str, DeviceIntent], list[Result]]:
    """Fixes per device from the failing results; returns the intents and the results left over.

    Only results with status ``fail`` and a configurable path in ``expected`` become fixes; the
    rest (Python checks, health rules) are returned for work orders. Fixes on one field merge
    (``host-dscp-roce`` and ``host-dscp-cnp`` both edit one DSCP map).
    """
    intents: dict[str, DeviceIntent] = {}
    rest: list[Result] = []
    for r in failing:
        if r.status is not Status.FAIL:
            continue
        exp = r.expected if isinstance(r.expected, Mapping) else None
        state = states.get(r.device)
        if (
            exp is None
            or state is None
            or not exp
            or not all(isinstance(k, str) and configurable(k) for k in exp)
            or not all(isinstance(v, Mapping) for v in exp.values())
        ):
            rest.append(r)
            continue
        intent = intents.get(r.device)
        if intent is None:
            plat = platforms.get(r.device, str(state.get("platform", "")))
            intent = intents[r.device] = DeviceIntent(r.device, plat, dict(state), copy.deepcopy(dict(state)))
        base = "" if r.subject is None or not _per_port(r.subject, state) else f"interfaces.{r.subject}."
        for path, ops in exp.items():
            full = base + path
            now = walk(intent.target, full)
            try:
                value, source = intended_value(path, ops, now, design_mtu.get(intent.platform))
            except ValueError:
                rest.append(r)
                break
            put(intent.target, full, value)
            if path.startswith("ecn.") and path.endswith(".enabled") and value is True:
                # Marking needs thresholds: a queue switched on gets the design's where it has none.
                queue = full.rsplit(".", 1)[0]
                for leaf, default in DESIGN_DEFAULTS.items():
                    if walk(intent.target, f"{queue}.{leaf}") is None:
                        put(intent.target, f"{queue}.{leaf}", default)
            intent.fixes.append(
                Fix(r.device, r.check, r.subject, path, value, walk(intent.current, full), source,
                    path.split(".", 1)[0] in DISRUPTIVE_FIELDS, r.id)
            )  # fmt: skip
    return intents, rest


def _per_port(subject: str, state: Mapping[str, Any]) -> bool:
    ifaces = state.get("interfaces")
    return isinstance(ifaces, Mapping) and subject in ifaces


def covers(
    result: Result, intents: Mapping[str, DeviceIntent], state: Mapping[str, Any] | None = None
) -> bool:
    """Whether a link (or host-to-fabric) finding is resolved by a fix at either end of its port.

    A host-level ``host-tos-fabric`` finding (subject ``NCCL_IB_TC``: the rail leaves share no
    lossless DSCP) is resolved by a fix on the host or on any of its LLDP neighbours.
    """
    fields = LINK_FIELDS.get(result.check)
    if fields is None:
        return False
    exp = result.expected if isinstance(result.expected, Mapping) else {}
    ends: list[tuple[str, str | None]] = [(result.device, result.subject)]
    if isinstance(exp.get("peer_device"), str):
        ends.append((exp["peer_device"], exp.get("peer_interface")))
    ifaces = (state or {}).get("interfaces") or {}
    if result.subject is not None and result.subject not in ifaces:
        ends = [(result.device, None)]
        for body in ifaces.values():
            lldp = body.get("lldp") if isinstance(body, Mapping) else None
            if isinstance(lldp, Mapping) and isinstance(lldp.get("device"), str):
                ends.append((lldp["device"], None))
    for dev, port in ends:
        intent = intents.get(dev)
        if intent is None:
            continue
        for f in intent.fixes:
            if (port is None or f.subject == port or f.subject is None) and any(
                f.path.startswith(p) for p in fields
            ):
                return True
    return False
