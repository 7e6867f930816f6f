"""Cumulus Linux 5.x: ``nv set`` / ``nv unset`` commands and the ``nv config patch`` YAML.

NVUE keeps one configuration tree (``nv config show -o json``); a change is a set of leaves set
and branches unset in the pending revision, then ``nv config apply``. The change is built from the
collected tree: the intended tree is the running one with the fixes applied, and the commands are
the leaves that differ. RoCE QoS on 5.x lives in named profiles (``qos pfc default-global``,
``qos mapping ...``, ``qos congestion-control ...``) that ports bind with ``qos <kind> profile
NAME``; a port whose value equals the default profile's is unbound rather than given a copy, and
a profile other healthy ports use is never edited (:func:`fabline.remediate.common.rebind`).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping
from typing import Any

import yaml

from fabline.platforms import get_platform
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

CONFIG_COMMANDS = ("nv config show -o json",)
DEFAULT = "default-global"


def config_tree(raw: str) -> dict[str, Any]:
    """The ``set`` tree of ``nv config show -o json`` (a list of revision items, or the tree itself).

    Raises:
        ValueError: Not NVUE configuration JSON.
    """
    doc = json.loads(raw)
    if isinstance(doc, list):
        for item in doc:
            if isinstance(item, dict) and isinstance(item.get("set"), dict):
                return dict(item["set"])
        raise ValueError("no 'set' item in the NVUE configuration")
    if isinstance(doc, dict):
        return dict(doc.get("set", doc))
    raise ValueError("NVUE configuration is not an object or a list")


def _bindings(tree: Mapping[str, Any], kind: str) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name, body in (tree.get("interface") or {}).items():
        if isinstance(body, dict) and body.get("type") == "swp":
            out[name] = ((body.get("qos") or {}).get(kind) or {}).get("profile")
    return out


def _profile_value(kind: str, body: Mapping[str, Any], current: Mapping[str, Any]) -> dict[str, Any]:
    if kind == "pfc":
        value = dict(current) or {"rx": "enable", "tx": "enable"}
        value["switch-priority"] = {str(p): {} for p in sorted(body.get("pfc_priorities") or [])}
        return value
    if kind == "mapping":
        value = dict(current)
        value["trust"] = "l3" if body.get("trust", "dscp") == "dscp" else "l2"
        value["dscp"] = {
            str(k): {"switch-priority": int(v)} for k, v in (body.get("dscp_to_priority") or {}).items()
        }
        return value
    tcs: dict[str, Any] = {}
    for tc, e in (body.get("ecn") or {}).items():
        row: dict[str, Any] = {"ecn": "enable" if e.get("enabled") else "disable"}
        for leaf, key in (
            ("min_bytes", "min-threshold"),
            ("max_bytes", "max-threshold"),
            ("probability_pct", "probability"),
        ):
            if leaf in e:
                row[key] = e[leaf]
        tcs[str(tc)] = row
    value = dict(current)
    value["traffic-class"] = tcs
    return value


_KINDS = {"pfc": "pfc_priorities", "mapping": "dscp_to_priority", "congestion-control": "ecn"}


def _namer(kind: str) -> Callable[[str], str]:
    return lambda port: f"{port}-{kind}"


def intended_tree(
    tree: Mapping[str, Any], before: Mapping[str, Any], after: Mapping[str, Any]
) -> dict[str, Any]:
    """The NVUE tree with the state change ``before`` -> ``after`` applied."""
    new: dict[str, Any] = copy.deepcopy(dict(tree))
    fec = get_platform("cumulus").vocabulary.fec
    changes = port_changes(before, after)
    ifaces = new.setdefault("interface", {})
    for port, diff in changes.items():
        link = ifaces.setdefault(port, {"type": "swp"}).setdefault("link", {})
        if "mtu" in diff:
            link["mtu"] = int(diff["mtu"])
        if "fec" in diff:
            link["fec"] = fec.get(diff["fec"], diff["fec"])
        if "autoneg" in diff:
            link["auto-negotiate"] = "on" if diff["autoneg"] else "off"
        if "speed_gbps" in diff:
            link["speed"] = f"{int(diff['speed_gbps'])}G"
    qos = new.setdefault("qos", {})
    for kind, field in _KINDS.items():
        ports = [p for p, d in changes.items() if field in d or (kind == "mapping" and "trust" in d)]
        if not ports:
            continue
        profiles = qos.setdefault(kind, {})
        bindings = _bindings(new, kind)
        targets = {
            p: _profile_value(kind, after["interfaces"][p], profiles.get(bindings.get(p) or DEFAULT, {}))
            for p in ports
        }
        profiles_new, bound = rebind(bindings, profiles, targets, _namer(kind), DEFAULT)
        qos[kind] = profiles_new
        for p in ports:
            port_qos = ifaces[p].setdefault("qos", {})
            if bound[p] is None:
                port_qos.pop(kind, None)
            else:
                port_qos[kind] = {"profile": bound[p]}
            if not port_qos:
                ifaces[p].pop("qos")
    wd = watchdog_change(before, after)
    enabled = bool(((after.get("qos") or {}).get("pfc_watchdog") or {}).get("enabled"))
    for port, body in (after.get("interfaces") or {}).items():
        if port not in ifaces or not body.get("pfc_priorities"):
            continue
        if wd is None and "pfc_priorities" not in changes.get(port, {}):
            continue
        ifaces[port].setdefault("qos", {})["pfc-watchdog"] = {"state": "enable" if enabled else "disable"}
    return new


def _word(value: Any) -> str:
    return json.dumps(value) if isinstance(value, str) and (" " in value or not value) else str(value)


def commands(old: Mapping[str, Any], new: Mapping[str, Any], path: tuple[str, ...] = ()) -> list[str]:
    """``nv set`` for every leaf added or changed, then ``nv unset`` for every branch removed.

    Example:
        >>> commands({"interface": {"swp1": {"link": {"mtu": 1500}}}},
        ...          {"interface": {"swp1": {"link": {"mtu": 9216}}}})
        ['nv set interface swp1 link mtu 9216']
    """
    sets: list[str] = []
    unsets: list[str] = []
    _diff(old, new, path, sets, unsets)
    return sets + unsets


def _diff(old: Any, new: Any, path: tuple[str, ...], sets: list[str], unsets: list[str]) -> None:
    if isinstance(new, dict):
        if not new and not isinstance(old, dict):
            sets.append("nv set " + " ".join(path))
            return
        was = old if isinstance(old, dict) else {}
        for key in new:
            _diff(was.get(key), new[key], (*path, str(key)), sets, unsets)
        for key in was:
            if key not in new:
                unsets.append("nv unset " + " ".join((*path, str(key))))
        return
    if old != new:
        sets.append("nv set " + " ".join(path) + " " + _word(new))


def patch_yaml(lines: list[str]) -> str:
    """The same change as an ``nv config patch`` file: ``- set:`` and ``- unset:`` trees."""
    sets: dict[str, Any] = {}
    unsets: dict[str, Any] = {}
    for line in lines:
        words = line.split()
        kind, parts = words[1], words[2:]
        target = sets if kind == "set" else unsets
        leaf_value: Any = None if kind == "unset" else {}
        if kind == "set" and len(parts) >= 2 and not _is_member(parts):
            *parts, raw = parts
            leaf_value = _scalar(raw)
        cur = target
        for p in parts[:-1]:
            cur = cur.setdefault(p, {})
        cur[parts[-1]] = leaf_value
    doc = []
    if sets:
        doc.append({"set": sets})
    if unsets:
        doc.append({"unset": unsets})
    return yaml.safe_dump(doc, sort_keys=False, default_flow_style=False)


def _is_member(parts: list[str]) -> bool:
    # `qos pfc P switch-priority 3` adds a member of a set; `qos mapping P dscp 26 switch-priority 3` sets a value.
    return len(parts) >= 2 and parts[-2] == "switch-priority" and "mapping" not in parts


def _scalar(raw: str) -> Any:
    if raw.isdigit():
        return int(raw)
    if raw.startswith('"'):
        return json.loads(raw)
    return raw


def emit(stages: Stages, raw: RawReader) -> DeviceChange:
    """The Cumulus change of one device: ``nv`` commands (traffic-interrupting ones last, in their
    own revision) and the same change as an ``nv config patch`` file.

    Raises:
        NoEvidence: The snapshot holds no NVUE configuration for the device.
    """
    text = running_config(raw, CONFIG_COMMANDS, "NVUE configuration")
    try:
        tree = config_tree(text)
    except ValueError as exc:
        raise NoEvidence(f"the collected NVUE configuration is unusable ({exc})") from None
    safe_tree = intended_tree(tree, stages.before, stages.safe)
    final_tree = intended_tree(safe_tree, stages.safe, stages.after)
    safe, risky = commands(tree, safe_tree), commands(safe_tree, final_tree)
    name = stages.device
    change = DeviceChange(name, "cumulus", list(stages.fixes))
    body = [f"# {name} (Cumulus Linux 5.x): review with `nv config diff` before `nv config apply`."]
    if safe:
        body += [*safe, "nv config diff", "nv config apply --assume-yes"]
        change.steps += [*safe, "nv config apply --assume-yes"]
    if risky:
        body += ["# --- interrupts traffic on live ports (FEC / speed / autonegotiation): apply last ---",
                 *risky, "nv config diff", "nv config apply --assume-yes"]  # fmt: skip
        change.steps += [*risky, "nv config apply --assume-yes"]
        change.disruptive += risky
    change.files[f"{name}.nv.sh"] = "\n".join(body) + "\n"
    change.files[f"{name}.nv-patch.yaml"] = patch_yaml(safe + risky)
    return change


def tasks(change: DeviceChange, disruptive: bool) -> Tasks:
    """``ansible.builtin.command`` per ``nv set``/``nv unset``, ``nv config diff``, then ``nv config
    apply`` (in check mode the lines are shown, nothing is staged).
    """
    lines = change.disruptive if disruptive else [s for s in change.steps if s not in change.disruptive]
    nv = [ln for ln in lines if ln.startswith(("nv set ", "nv unset "))]
    if not any(ln.startswith(("nv set", "nv unset")) for ln in lines):
        return [], {}
    label = "traffic-interrupting" if disruptive else "traffic-safe"
    return [
        {"name": f"show the {label} NVUE change", "ansible.builtin.debug": {"msg": nv}},
        {"name": f"stage the {label} NVUE change", "ansible.builtin.command": "{{ item }}", "loop": nv,
         "when": "not ansible_check_mode"},
        {"name": "nv config diff", "ansible.builtin.command": "nv config diff", "changed_when": False,
         "when": "not ansible_check_mode"},
        {"name": "nv config apply", "ansible.builtin.command": "nv config apply --assume-yes",
         "when": "not ansible_check_mode"},
    ], {}  # fmt: skip


#: Cumulus Linux's change format (``PlatformSpec.remediation`` of ``fabline.platforms.cumulus``).
REMEDIATION = Remediation(emit, tasks)
