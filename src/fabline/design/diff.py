"""Intended vs running: what differs per device, by feature (Golden-Config style).

Only what the intended state says is compared (a subset comparison, like pybatfish's asserts):
the running state may hold more (operational fields, counters) without that being drift. Both
sides went through the same platform parser, so their fields mean the same thing.

Features: ``interfaces`` (admin state, MTU, speed, FEC, autoneg, description), ``qos`` (trust,
DSCP map, PFC, ECN, PFC watchdog), ``cabling`` (planned vs seen LLDP neighbour), ``host`` (GPU
server settings and NIC RoCE fields), ``bgp`` (the AS, router id, multipath and each intended
neighbour: present, remote AS, description; only when both states carry a ``bgp`` object).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from fabline.results import ExitCode, drift_exit_code

INTERFACE_FEATURES = {
    "admin_up": "interfaces", "mtu": "interfaces", "l2_mtu": "interfaces", "speed_gbps": "interfaces",
    "fec": "interfaces", "autoneg": "interfaces", "description": "interfaces",
    "trust": "qos", "dscp_to_priority": "qos", "pfc_priorities": "qos", "ecn": "qos", "pfc_watchdog": "qos",
    "lldp": "cabling", "nic": "host",
}  # fmt: skip
#: Fields compared as one value (a map is drift as a whole: an extra DSCP in it matters).
WHOLE = frozenset({"dscp_to_priority", "pfc_priorities"})
FEATURES = ("interfaces", "qos", "cabling", "host", "bgp")


@dataclass(frozen=True)
class Change:
    """One difference: where, what was intended, what is running (None: absent)."""

    device: str
    feature: str
    subject: str | None
    path: str
    intended: Any
    running: Any


def _leaves(value: Any, prefix: str) -> Iterator[tuple[str, Any]]:
    if isinstance(value, Mapping) and prefix.split(".", maxsplit=1)[0] not in WHOLE and value:
        for key in sorted(value, key=str):
            yield from _leaves(value[key], f"{prefix}.{key}")
    else:
        yield prefix, value


def _get(doc: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(doc, Mapping) or part not in doc:
            return None
        doc = doc[part]
    return doc


def diff_device(name: str, intended: Mapping[str, Any], running: Mapping[str, Any]) -> list[Change]:
    """Every difference of one device, ordered by feature, subject and path.

    Example:
        >>> i = {"interfaces": {"Ethernet0": {"mtu": 9100, "pfc_priorities": [3]}}}
        >>> r = {"interfaces": {"Ethernet0": {"mtu": 9100, "pfc_priorities": [3, 4], "oper_up": True}}}
        >>> [(c.feature, c.path, c.running) for c in diff_device("leaf1", i, r)]
        [('qos', 'pfc_priorities', [3, 4])]
    """
    out: list[Change] = []
    run_ifaces = running.get("interfaces") or {}
    for iface, body in (intended.get("interfaces") or {}).items():
        if iface not in run_ifaces:
            out.append(Change(name, "interfaces", iface, "(interface)", "present", None))
            continue
        there = run_ifaces[iface]
        for key, value in body.items():
            feature = INTERFACE_FEATURES.get(key)
            if feature is None:
                continue
            for path, want in _leaves(value, key):
                have = _get(there, path)
                if have != want:
                    out.append(Change(name, feature, iface, path, want, have))
    for section, feature in (("qos", "qos"), ("host", "host")):
        want_doc = intended.get(section)
        if not isinstance(want_doc, Mapping):
            continue
        if section == "qos":
            want_doc = {k: v for k, v in want_doc.items() if k == "pfc_watchdog"}
        for path, want in _leaves(want_doc, section):
            have = _get(running, path)
            if have != want:
                out.append(Change(name, feature, None, path, want, have))
    out.extend(_bgp_changes(name, intended.get("bgp"), running.get("bgp")))
    order = {f: i for i, f in enumerate(FEATURES)}
    out.sort(key=lambda c: (order.get(c.feature, 99), c.subject or "", c.path))
    return out


#: BGP fields compared only when the running state shows them (a summary has no multipath
#: setting; NX-OS and NVUE summaries no descriptions): their absence there is not drift.
_BGP_IF_SHOWN = ("router_id", "maximum_paths")


def _bgp_changes(name: str, want: Any, have: Any) -> list[Change]:
    """BGP drift: the AS, router id and multipath, and per intended neighbour its presence, remote AS
    and description (subject: the peer, whose address has dots a dotted path cannot hold).

    Example:
        >>> want = {"asn": 65001, "neighbors": {"10.1.0.0": {"remote_asn": 65100}}}
        >>> have = {"asn": 65001, "neighbors": {"10.1.0.0": {"remote_asn": 65999, "state": "active"}}}
        >>> [(c.subject, c.path, c.intended, c.running) for c in _bgp_changes("leaf1", want, have)]
        [('10.1.0.0', 'remote_asn', 65100, 65999)]
    """
    if not isinstance(want, Mapping) or not isinstance(have, Mapping):
        return []  # no BGP in the design's config, or none collected: nothing to compare
    out: list[Change] = []
    for key in ("asn", *_BGP_IF_SHOWN):
        if key in want and (key == "asn" or key in have) and want[key] != have.get(key):
            out.append(Change(name, "bgp", None, f"bgp.{key}", want[key], have.get(key)))
    peers = have.get("neighbors") if isinstance(have.get("neighbors"), Mapping) else {}
    assert isinstance(peers, Mapping)
    for peer, body in (want.get("neighbors") or {}).items():
        there = peers.get(peer)
        if not isinstance(there, Mapping):
            out.append(Change(name, "bgp", str(peer), "(neighbor)", "present", None))
            continue
        for key in ("remote_asn", "description"):
            if key in body and (key == "remote_asn" or key in there) and body[key] != there.get(key):
                out.append(Change(name, "bgp", str(peer), key, body[key], there.get(key)))
    return out


def diff_states(
    intended: Mapping[str, Mapping[str, Any]], running: Mapping[str, Mapping[str, Any]]
) -> dict[str, Any]:
    """Per device: ``{"status": in_sync|drift|no_running_state|no_intended_state, "changes": [...]}``."""
    result: dict[str, Any] = {}
    for name in sorted(intended):
        want = intended[name]
        if want.get("status") != "ok":
            result[name] = {"status": "no_intended_state", "changes": [], "errors": want.get("errors", [])}
            continue
        have = running.get(name)
        if have is None or have.get("status") not in ("ok", "partial"):
            result[name] = {"status": "no_running_state", "changes": []}
            continue
        changes = diff_device(name, want, have)
        result[name] = {"status": "drift" if changes else "in_sync", "changes": [asdict(c) for c in changes]}
    return result


def _show(value: Any) -> str:
    return "absent" if value is None else str(value)


def render_diff_text(result: Mapping[str, Any]) -> str:
    """Console text: one block per device, differences grouped by feature."""
    lines: list[str] = []
    for name, entry in result.items():
        status = entry["status"]
        if status != "drift":
            lines.append(f"{name}: {status.replace('_', ' ')}")
            continue
        lines.append(f"{name}: {len(entry['changes'])} difference(s)")
        for c in entry["changes"]:
            where = f"{c['subject']} " if c["subject"] else ""
            lines.append(
                f"  [{c['feature']}] {where}{c['path']}: intended {_show(c['intended'])}, running {_show(c['running'])}"
            )
    return "\n".join(lines)


def diff_exit_code(result: Mapping[str, Any]) -> ExitCode:
    """0 in sync, 4 when any device drifted, 3 when some could not be compared and none drifted."""
    statuses = {e["status"] for e in result.values()}
    return drift_exit_code("drift" in statuses, bool(statuses - {"in_sync", "drift"}))
