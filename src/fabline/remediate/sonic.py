"""SONiC: a JSON Patch (RFC 6902) against CONFIG_DB, as ``config apply-patch`` takes it.

SONiC's generic config updater (``sudo config apply-patch FILE [--dry-run]``) applies an RFC 6902
patch to the running CONFIG_DB, validating it against the YANG models first. The patch is built
from the collected CONFIG_DB (``show runningconfiguration all``): the intended CONFIG_DB is the
running one with the fixes applied, and the patch holds exactly the differing fields, never a
whole table. Ports share DSCP maps and WRED profiles by name; a fix never edits a map another,
healthy port uses (:func:`fabline.remediate.common.rebind`). The equivalent ``config`` CLI lines are
given for reading (a DSCP map has no CLI command: only the patch changes it).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from fabline.remediate.common import (
    NoEvidence,
    RawReader,
    Remediation,
    Stages,
    Tasks,
    port_changes,
    rebind,
    running_config,
    watchdog_change,
)
from fabline.remediate.model import DeviceChange

#: The collection commands whose output is the running CONFIG_DB (nested form), in preference order.
CONFIG_COMMANDS = (
    "show runningconfiguration all",
    "cat /etc/sonic/config_db.json",
    "sonic-cfggen -d --print-data",
)
_WRED_FIELDS = {
    "min_bytes": "min_threshold",
    "max_bytes": "max_threshold",
    "probability_pct": "drop_probability",
}


def pointer(*parts: str) -> str:
    """An RFC 6901 JSON Pointer.

    Example:
        >>> pointer("QUEUE", "Ethernet0|3", "wred_profile")
        '/QUEUE/Ethernet0|3/wred_profile'
    """
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in parts)


def intended_db(db: Mapping[str, Any], before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """The CONFIG_DB with the state change ``before`` -> ``after`` applied."""
    new: dict[str, Any] = copy.deepcopy(dict(db))
    changes = port_changes(before, after)
    for port, diff in changes.items():
        row = new.setdefault("PORT", {}).setdefault(port, {})
        if "mtu" in diff:
            row["mtu"] = str(diff["mtu"])
        if "fec" in diff:
            row["fec"] = str(diff["fec"])
        if "autoneg" in diff:
            row["autoneg"] = "on" if diff["autoneg"] else "off"
        if "speed_gbps" in diff:
            row["speed"] = str(int(diff["speed_gbps"] * 1000))
        if "pfc_priorities" in diff:
            qos = new.setdefault("PORT_QOS_MAP", {}).setdefault(port, {})
            if diff["pfc_priorities"]:
                qos["pfc_enable"] = ",".join(str(p) for p in sorted(diff["pfc_priorities"]))
            else:
                qos.pop("pfc_enable", None)
    _dscp_maps(new, changes, after)
    _wred(new, changes)
    wd = watchdog_change(before, after)
    if wd is not None:
        _watchdog(new, after, wd)
    elif "PFC_WD" in new and any("pfc_priorities" in d for d in changes.values()):
        _watchdog(new, after, bool((after.get("qos") or {}).get("pfc_watchdog", {}).get("enabled")))
    return {k: v for k, v in new.items() if v}


def _dscp_maps(
    new: dict[str, Any], changes: Mapping[str, Mapping[str, Any]], after: Mapping[str, Any]
) -> None:
    targets: dict[str, dict[str, str]] = {}
    for port, diff in changes.items():
        if "dscp_to_priority" in diff or diff.get("trust") == "dscp":
            body = after["interfaces"][port]
            targets[port] = {str(k): str(v) for k, v in (body.get("dscp_to_priority") or {}).items()}
    if not targets:
        return
    qos_map = new.setdefault("PORT_QOS_MAP", {})
    bindings = {p: row.get("dscp_to_tc_map") for p, row in qos_map.items()}
    profiles, bound = rebind(bindings, new.get("DSCP_TO_TC_MAP", {}), targets, lambda p: f"FABLINE_{p}")
    new["DSCP_TO_TC_MAP"] = profiles
    for port in targets:
        qos_map.setdefault(port, {})["dscp_to_tc_map"] = bound[port]


def _wred(new: dict[str, Any], changes: Mapping[str, Mapping[str, Any]]) -> None:
    queues = new.setdefault("QUEUE", {})
    targets: dict[str, dict[str, Any]] = {}
    disable: list[str] = []
    for port, diff in changes.items():
        for q, ecn in (diff.get("ecn") or {}).items():
            key = f"{port}|{q}"
            if not ecn.get("enabled"):
                disable.append(key)
                continue
            current = new.get("WRED_PROFILE", {}).get(queues.get(key, {}).get("wred_profile", ""), {})
            prof = dict(current) or {"ecn": "ecn_all", "wred_green_enable": "true"}
            prof["ecn"] = "ecn_all"
            for leaf, suffix in _WRED_FIELDS.items():
                if leaf in ecn:
                    for colour in ("green", "yellow", "red"):
                        if colour == "green" or f"{colour}_{suffix}" in prof:
                            prof[f"{colour}_{suffix}"] = str(ecn[leaf])
            targets[key] = prof
    for key in disable:
        queues.get(key, {}).pop("wred_profile", None)
    if not targets:
        return
    bindings = {k: row.get("wred_profile") for k, row in queues.items()}
    profiles, bound = rebind(
        bindings, new.get("WRED_PROFILE", {}), targets, lambda k: "FABLINE_" + k.replace("|", "_Q")
    )
    new["WRED_PROFILE"] = profiles
    for key in targets:
        queues.setdefault(key, {})["wred_profile"] = bound[key]


def _watchdog(new: dict[str, Any], after: Mapping[str, Any], enabled: bool) -> None:
    wd = (after.get("qos") or {}).get("pfc_watchdog") or {}
    table: dict[str, Any] = {}
    if enabled:
        for port, row in new.get("PORT_QOS_MAP", {}).items():
            if row.get("pfc_enable"):
                table[port] = {
                    "action": str(wd.get("action", "drop")),
                    "detection_time": str(wd.get("detection_ms", 200)),
                    "restoration_time": str(wd.get("restoration_ms", 200)),
                }
        if table:
            table["GLOBAL"] = dict(new.get("PFC_WD", {}).get("GLOBAL") or {"POLL_INTERVAL": "200"})
    new["PFC_WD"] = table


def patch(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The RFC 6902 operations that turn ``old`` into ``new``, field by field (tables, keys, fields).

    Example:
        >>> patch({"PORT": {"Ethernet0": {"mtu": "1500"}}}, {"PORT": {"Ethernet0": {"mtu": "9100"}}})
        [{'op': 'replace', 'path': '/PORT/Ethernet0/mtu', 'value': '9100'}]
    """
    ops: list[dict[str, Any]] = []
    for table in sorted(set(old) | set(new)):
        if table not in new:
            ops.append({"op": "remove", "path": pointer(table)})
            continue
        if table not in old:
            ops.append({"op": "add", "path": pointer(table), "value": new[table]})
            continue
        for key in sorted(set(old[table]) | set(new[table])):
            if key not in new[table]:
                ops.append({"op": "remove", "path": pointer(table, key)})
            elif key not in old[table]:
                ops.append({"op": "add", "path": pointer(table, key), "value": new[table][key]})
            elif old[table][key] != new[table][key]:
                o, n = old[table][key], new[table][key]
                if not isinstance(o, dict) or not isinstance(n, dict):
                    ops.append({"op": "replace", "path": pointer(table, key), "value": n})
                    continue
                for f in sorted(set(o) | set(n)):
                    if f not in n:
                        ops.append({"op": "remove", "path": pointer(table, key, f)})
                    elif f not in o:
                        ops.append({"op": "add", "path": pointer(table, key, f), "value": n[f]})
                    elif o[f] != n[f]:
                        ops.append({"op": "replace", "path": pointer(table, key, f), "value": n[f]})
    return ops


def cli_lines(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """The ``config`` CLI lines equivalent to the patch, for reading (sonic-utilities syntax)."""
    lines: list[str] = []
    for port, row in sorted(new.get("PORT", {}).items()):
        was = old.get("PORT", {}).get(port, {})
        if row.get("mtu") != was.get("mtu") and "mtu" in row:
            lines.append(f"sudo config interface mtu {port} {row['mtu']}")
        if row.get("speed") != was.get("speed") and "speed" in row:
            lines.append(f"sudo config interface speed {port} {row['speed']}")
        if row.get("autoneg") != was.get("autoneg") and "autoneg" in row:
            lines.append(
                f"sudo config interface autoneg {port} {'enabled' if row['autoneg'] == 'on' else 'disabled'}"
            )
        if row.get("fec") != was.get("fec") and "fec" in row:
            lines.append(f"sudo config interface fec {port} {row['fec']}")
    for port, row in sorted(new.get("PORT_QOS_MAP", {}).items()):
        was = old.get("PORT_QOS_MAP", {}).get(port, {})
        had = set(str(was.get("pfc_enable", "")).split(",")) - {""}
        has = set(str(row.get("pfc_enable", "")).split(",")) - {""}
        lines += [f"sudo config interface pfc priority {port} {p} on" for p in sorted(has - had)]
        lines += [f"sudo config interface pfc priority {port} {p} off" for p in sorted(had - has)]
        if row.get("dscp_to_tc_map") != was.get("dscp_to_tc_map"):
            lines.append(
                f"# {port}: dscp_to_tc_map -> {row.get('dscp_to_tc_map')} (no config command: apply-patch only)"
            )
    for name, prof in sorted(new.get("DSCP_TO_TC_MAP", {}).items()):
        if old.get("DSCP_TO_TC_MAP", {}).get(name) != prof:
            lines.append(f"# DSCP_TO_TC_MAP {name} changes (no config command: apply-patch only)")
    for name, prof in sorted(new.get("WRED_PROFILE", {}).items()):
        was = old.get("WRED_PROFILE", {}).get(name)
        if was != prof:
            args = [f"-{c[0]}{s.split('_')[0]} {prof[f'{c}_{s}']}"
                    for c in ("green", "yellow", "red") for s in ("min_threshold", "max_threshold")
                    if f"{c}_{s}" in prof]  # fmt: skip
            args += [f"-{c[0]}drop {prof[f'{c}_drop_probability']}" for c in ("green", "yellow", "red")
                     if f"{c}_drop_probability" in prof]  # fmt: skip
            prefix = "" if was is not None else f"# new profile {name}: "
            lines.append(f"{prefix}sudo ecnconfig -p {name} {' '.join(args)}")
    old_wd, new_wd = old.get("PFC_WD", {}), new.get("PFC_WD", {})
    start = sorted(p for p in new_wd if p != "GLOBAL" and p not in old_wd)
    stop = sorted(p for p in old_wd if p != "GLOBAL" and p not in new_wd)
    if start:
        row = new_wd[start[0]]
        lines.append(
            f"sudo config pfcwd start --action {row['action']} --restoration-time {row['restoration_time']} "
            f"{' '.join(start)} {row['detection_time']}"
        )
    if stop:
        lines.append(f"sudo config pfcwd stop {' '.join(stop)}")
    return lines


def dumps(ops: list[dict[str, Any]]) -> str:
    """A patch file's text (one operation per line, as the GCU documentation shows them)."""
    if not ops:
        return "[]\n"
    return "[\n" + ",\n".join("  " + json.dumps(op, sort_keys=True) for op in ops) + "\n]\n"


def emit(stages: Stages, raw: RawReader) -> DeviceChange:
    """The SONiC change of one device: the patch (traffic-safe), a second patch for what interrupts
    traffic (FEC, speed, autonegotiation on live ports), and the CLI lines for reading.

    Raises:
        NoEvidence: The snapshot holds no running CONFIG_DB for the device.
    """
    text = running_config(raw, CONFIG_COMMANDS, "running CONFIG_DB")
    try:
        db = json.loads(text)
    except ValueError as exc:
        raise NoEvidence(f"the collected CONFIG_DB is not JSON ({exc})") from None
    if not isinstance(db, dict):
        raise NoEvidence("the collected CONFIG_DB is not a JSON object")
    safe_db = intended_db(db, stages.before, stages.safe)
    final_db = intended_db(safe_db, stages.safe, stages.after)
    change = DeviceChange(stages.device, "sonic", list(stages.fixes))
    name = stages.device
    safe_ops, risky_ops = patch(db, safe_db), patch(safe_db, final_db)
    if safe_ops:
        change.files[f"{name}.patch.json"] = dumps(safe_ops)
        change.steps.append(f"sudo config apply-patch {name}.patch.json ({len(safe_ops)} operations)")
    if risky_ops:
        change.files[f"{name}.disruptive.patch.json"] = dumps(risky_ops)
        step = f"sudo config apply-patch {name}.disruptive.patch.json ({len(risky_ops)} operations)"
        change.steps.append(step)
        change.disruptive.append(step)
    lines = cli_lines(db, safe_db) + cli_lines(safe_db, final_db)
    change.files[f"{name}.config.sh"] = (
        f"# {name} (SONiC): the patch as sonic-utilities commands, for reading; apply the patch\n"
        "# with `sudo config apply-patch FILE --dry-run` first, then without --dry-run.\n"
        + "\n".join(lines)
        + "\n"
    )
    return change


#: Where the playbook copies a patch on the switch.
PATCH_DEST = "/tmp/fabline-remediate.patch.json"


def tasks(change: DeviceChange, disruptive: bool) -> Tasks:
    """``ansible.builtin.copy`` of the patch, ``config apply-patch --dry-run`` then ``config
    apply-patch`` (``ansible.builtin.command``; only the dry run in check mode).
    """
    name = f"{change.device}.disruptive.patch.json" if disruptive else f"{change.device}.patch.json"
    if name not in change.files:
        return [], {}
    return [
        {"name": f"copy {name}", "ansible.builtin.copy": {"src": f"devices/{name}", "dest": PATCH_DEST, "mode": "0600"}},
        {"name": f"validate {name} (config apply-patch --dry-run)", "ansible.builtin.command": f"config apply-patch --dry-run {PATCH_DEST}",
         "become": True, "check_mode": False, "changed_when": False},
        {"name": f"apply {name}" + (" (interrupts traffic)" if disruptive else ""), "ansible.builtin.command": f"config apply-patch {PATCH_DEST}",
         "become": True, "when": "not ansible_check_mode"},
    ], {}  # fmt: skip


#: SONiC's change format (``PlatformSpec.remediation`` of ``fabline.platforms.sonic``).
REMEDIATION = Remediation(emit, tasks)
