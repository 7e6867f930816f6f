"""Cisco NX-OS ``show running-config``: interface settings and the MQC QoS chain.

NX-OS semantics applied here (also in ``docs/platforms/cisco_nxos.md``):

- Classification is MQC: a ``policy-map type qos`` sets ``qos-group N`` per class, the
  ``class-map type qos`` matches ``dscp`` (trust DSCP) or ``cos`` (trust PCP). The policy acts on
  an interface through ``service-policy type qos input`` on the interface, else through
  ``system qos``. qos-group == priority (the default 8-queue templates ``c-8q-nqN`` /
  ``c-out-8q-qN`` tie qos-group N to PFC CoS N and queue N), so DSCP matches become
  ``dscp_to_priority`` and CoS matches the added ``pcp_to_priority``.
- Lossless priorities come from the ``policy-map type network-qos`` attached to ``system qos``:
  ``pause pfc-cos 3`` names the CoS values, ``pause no-drop`` makes the class's qos-group
  lossless. They are ``qos.lossless_priorities``; an interface's ``pfc_priorities`` is that list
  with ``priority-flow-control mode on``, ``[]`` with ``mode off``, and absent with ``mode auto``
  (DCBX decides) or without the line. The mode is the added ``pfc_mode``.
- ECN is the ``random-detect ... ecn`` of the egress ``policy-map type queuing`` (system or
  interface), keyed by the queue of the class (``c-out-8q-q3`` or a class-map matching
  ``qos-group 3``); ``kbytes``/``mbytes`` are read as 1000/1,000,000 bytes.
- Policy definitions that nothing attaches (a snippet) feed nothing: they are not state.
- The PFC watchdog: a top-level ``priority-flow-control watch-dog-interval on|off`` line is
  ``qos.pfc_watchdog.enabled``; the same line in an interface section is the interface's added
  ``pfc_watchdog.enabled``. Without the line the watchdog is not collected (no guessed default).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from fabline.platforms.arista_eos_config import Node, config_tree
from fabline.platforms.base import ParseContext, text_parser
from fabline.platforms.cisco_nxos_names import VOCABULARY, canonical_name, kept
from fabline.platforms.loadbalance import nxos_dlb, nxos_load_balance
from fabline.platforms.routing import nxos_bgp_config
from fabline.platforms.toolkit import DSCP, PCP, PRIORITY, expand_ints, mbps_to_gbps, on_line
from fabline.state_types import Qos, StateBody

_DSCP_NAMES = {
    "default": 0, "ef": 46,
    **{f"cs{i}": i * 8 for i in range(8)},
    **{f"af{c}{d}": c * 8 + d * 2 for c in range(1, 5) for d in range(1, 4)},
}  # fmt: skip
_BYTE_UNITS = {"bytes": 1, "kbytes": 1000, "mbytes": 1_000_000}
#: The PFC watchdog switch, global or per interface (Nexus 9000 QoS guide, "Configuring a
#: Priority Flow Control Watchdog Interval"). Its default is not documented for every release,
#: so a configuration without the line says nothing about the watchdog.
_WATCHDOG = r"priority-flow-control watch-dog-interval (on|off)"


def dscp_values(spec: str) -> list[int]:
    """DSCP numbers in an NX-OS ``match dscp`` list: numbers, ranges and names (``af31``, ``ef``).

    Example:
        >>> dscp_values("26,46"), dscp_values("af31 cs3"), dscp_values("10-12")
        ([26, 46], [26, 24], [10, 11, 12])
    """
    out: list[int] = []
    for part in re.split(r"[\s,]+", spec.strip()):
        if part.lower() in _DSCP_NAMES:
            out.append(_DSCP_NAMES[part.lower()])
        else:
            out.extend(expand_ints(part, DSCP))
    return out


def _class_number(name: str, prefix_rx: str) -> int | None:
    """The number in a default template class name (``c-8q-nq3`` -> 3, ``c-out-8q-q-default`` -> 0)."""
    if m := re.fullmatch(rf"{prefix_rx}(\d)", name):
        return int(m.group(1))
    if re.fullmatch(rf"{prefix_rx}-default", name):
        return 0
    return None


@dataclass
class Policies:
    """The MQC objects of one configuration, by name."""

    qos_classes: dict[str, dict[str, list[int]]] = field(default_factory=dict)
    qos_policies: dict[str, dict[str, int]] = field(default_factory=dict)
    group_classes: dict[tuple[str, str], int] = field(default_factory=dict)
    nq_policies: dict[str, list[Node]] = field(default_factory=dict)
    queuing_policies: dict[str, list[Node]] = field(default_factory=dict)
    system: dict[str, str] = field(default_factory=dict)

    def classification(self, policy: str) -> tuple[dict[str, int], dict[str, int]]:
        """(dscp -> priority, cos -> priority) of a ``type qos`` policy."""
        dscp: dict[str, int] = {}
        cos: dict[str, int] = {}
        for cls, group in self.qos_policies.get(policy, {}).items():
            matches = self.qos_classes.get(cls, {})
            for d in matches.get("dscp", []):
                dscp[str(d)] = group
            for c in matches.get("pcp", []):
                cos[str(c)] = group
        return dscp, cos

    def lossless(self, policy: str) -> list[int]:
        """Priorities a ``type network-qos`` policy makes lossless."""
        prios: set[int] = set()
        for cls in self.nq_policies.get(policy, []):
            name = cls.text.split()[-1]
            for sub in cls.children:
                if m := re.fullmatch(r"pause pfc-cos ([\d,\s-]+)", sub.text):
                    with on_line(sub.text):
                        prios.update(expand_ints(m.group(1), PRIORITY))
                elif sub.text.startswith("pause no-drop"):
                    group = self.group_classes.get(
                        ("network-qos", name), _class_number(name, r"c-(?:8q-)?nq")
                    )
                    if group is not None:
                        prios.add(group)
        return sorted(prios)

    def ecn(self, policy: str) -> dict[str, dict[str, Any]]:
        """Per-queue ECN of an egress ``type queuing`` policy."""
        out: dict[str, dict[str, Any]] = {}
        for cls in self.queuing_policies.get(policy, []):
            name = cls.text.split()[-1]
            queue = self.group_classes.get(("queuing", name), _class_number(name, r"c-out-(?:8q-)?q"))
            for sub in cls.children:
                m = re.match(
                    r"random-detect minimum-threshold (\d+) (\S+) maximum-threshold (\d+) (\S+)(.*)$",
                    sub.text,
                )
                if m and queue is not None and re.search(r"\becn\b", m.group(5)):
                    entry: dict[str, Any] = {"enabled": True}
                    if m.group(2) in _BYTE_UNITS and m.group(4) in _BYTE_UNITS:
                        entry["min_bytes"] = int(m.group(1)) * _BYTE_UNITS[m.group(2)]
                        entry["max_bytes"] = int(m.group(3)) * _BYTE_UNITS[m.group(4)]
                    if p := re.search(r"drop-probability (\d+)", m.group(5)):
                        entry["probability_pct"] = int(p.group(1))
                    out[str(queue)] = entry
        return dict(sorted(out.items()))


#: A ``class-map type qos`` match line on one of the trust words (``match dscp 26``, ``match cos 3``).
_MATCH_CLASS = re.compile(rf"match ({'|'.join(map(re.escape, VOCABULARY.trust.values()))}) (.+)")


def _read_policies(tree: list[Node]) -> Policies:
    pol = Policies()
    for node in tree:
        line = node.text
        if m := re.fullmatch(r"class-map type qos (?:match-all |match-any )?(\S+)", line):
            matches: dict[str, list[int]] = {"dscp": [], "pcp": []}
            for sub in node.children:
                if (mm := _MATCH_CLASS.fullmatch(sub.text)) and (kind := VOCABULARY.trust_mode(mm.group(1))):
                    with on_line(sub.text):
                        values = dscp_values(mm.group(2)) if kind == "dscp" else expand_ints(mm.group(2), PCP)
                    matches[kind] += values
            pol.qos_classes[m.group(1)] = matches
        elif m := re.fullmatch(r"class-map type (network-qos|queuing) (?:match-any |match-all )?(\S+)", line):
            for sub in node.children:
                if mm := re.fullmatch(r"match qos-group (\d)", sub.text):
                    pol.group_classes[(m.group(1), m.group(2))] = int(mm.group(1))
        elif m := re.fullmatch(r"policy-map type qos (\S+)", line):
            groups: dict[str, int] = {}
            for cls in node.children:
                name = cls.text.split()[-1]
                for sub in cls.children:
                    if mm := re.fullmatch(r"set qos-group (\d)", sub.text):
                        groups[name] = int(mm.group(1))
            pol.qos_policies[m.group(1)] = groups
        elif m := re.fullmatch(r"policy-map type network-qos (\S+)", line):
            pol.nq_policies[m.group(1)] = node.children
        elif m := re.fullmatch(r"policy-map type queuing (\S+)", line):
            pol.queuing_policies[m.group(1)] = node.children
        elif line == "system qos":
            for sub in node.children:
                if mm := re.fullmatch(
                    r"service-policy type (qos input|queuing output|network-qos) (\S+)", sub.text
                ):
                    pol.system[mm.group(1)] = mm.group(2)
    return pol


def _interface(node: Node) -> tuple[dict[str, Any], dict[str, str]]:
    """(state fields, attached policies) of one ``interface`` section."""
    entry: dict[str, Any] = {}
    attached: dict[str, str] = {}
    for child in node.children:
        line = child.text
        if m := re.fullmatch(r"description (.+)", line):
            entry["description"] = m.group(1).strip()
        elif line == "shutdown":
            entry["admin_up"] = False
        elif line == "no shutdown":
            entry["admin_up"] = True
        elif m := re.fullmatch(r"mtu (\d+)", line):
            entry["mtu"] = int(m.group(1))
        elif m := re.fullmatch(r"speed (\d{1,7})", line):
            entry["speed_gbps"] = mbps_to_gbps(int(m.group(1)))
        elif line in ("negotiate auto", "no negotiate auto"):
            entry["autoneg"] = not line.startswith("no ")
        elif (m := re.fullmatch(r"fec (\S+)", line)) and (mode := VOCABULARY.fec_mode(m.group(1))):
            entry["fec"] = mode
        # NX-OS 10 adds an optional ``send-tlv`` (advertise the PFC TLV even in mode on), as in the
        # Azure Local storage interface config.
        elif m := re.fullmatch(r"priority-flow-control mode (on|off|auto)(?: send-tlv)?", line):
            entry["pfc_mode"] = m.group(1)
        elif m := re.fullmatch(_WATCHDOG, line):
            entry["pfc_watchdog"] = {"enabled": m.group(1) == "on"}
        elif m := re.fullmatch(r"service-policy type (qos input|queuing output) (\S+)(?: .*)?", line):
            attached[m.group(1)] = m.group(2)
    return entry, attached


@text_parser("an NX-OS running-config with 'interface' sections, 'system qos' or a 'hostname' line")
def parse_show_running_config(text: str, ctx: ParseContext) -> StateBody:
    """``show running-config`` / ``show running-config interface``: interfaces, QoS chain, hostname.

    Raises:
        ParseError: No ``interface`` section, ``system qos`` or ``hostname`` in the output.
    """
    tree = config_tree(text)
    pol = _read_policies(tree)
    hostname = next(
        (m.group(1) for n in tree if (m := re.fullmatch(r"(?:hostname|switchname) (\S+)", n.text))), None
    )
    sections = [
        (canonical_name(n.text.split()[1]), n) for n in tree if re.fullmatch(r"interface \S+", n.text)
    ]
    if not sections and hostname is None and not pol.system:
        raise ctx.reject()
    lossless = pol.lossless(pol.system["network-qos"]) if "network-qos" in pol.system else None
    interfaces: dict[str, Any] = {}
    for name, node in sections:
        if not kept(name):
            continue
        entry, attached = _interface(node)
        qos_policy = attached.get("qos input", pol.system.get("qos input"))
        if qos_policy and name.startswith("Ethernet"):
            dscp, cos = pol.classification(qos_policy)
            if dscp:
                entry["trust"] = "dscp"
                entry["dscp_to_priority"] = dict(sorted(dscp.items(), key=lambda kv: int(kv[0])))
            elif cos:
                entry["trust"] = "pcp"
            if cos:
                entry["pcp_to_priority"] = dict(sorted(cos.items()))
        mode = entry.get("pfc_mode")
        if mode == "off":
            entry["pfc_priorities"] = []
        elif mode == "on" and lossless is not None:
            entry["pfc_priorities"] = lossless
        queuing = attached.get("queuing output", pol.system.get("queuing output"))
        if queuing and name.startswith("Ethernet") and (ecn := pol.ecn(queuing)):
            entry["ecn"] = ecn
        if entry:
            interfaces[name] = entry
    fragment: StateBody = {}
    if hostname:
        fragment["facts"] = {"hostname": hostname}
    qos: Qos = {}
    if lossless is not None:
        qos["lossless_priorities"] = lossless
    watchdog = next((m.group(1) for n in tree if (m := re.fullmatch(_WATCHDOG, n.text))), None)
    if watchdog is not None:
        qos["pfc_watchdog"] = {"enabled": watchdog == "on"}
    if qos:
        fragment["qos"] = qos
    if interfaces:
        fragment["interfaces"] = interfaces
    if " ".join(ctx.command.split()) == "show running-config":  # the whole configuration
        version = next((n.text for n in tree if n.text.startswith("version ")), None)
        dlb = next((n for n in tree if n.text == "hardware profile dlb"), None)
        fragment.update(nxos_dlb(version, [c.text for c in dlb.children] if dlb else None))
    for node in tree:
        if node.text.startswith("ip load-sharing "):
            lb = nxos_load_balance(node.text).get("load_balance", {})
            fragment["load_balance"] = {**lb, **fragment.get("load_balance", {})}
        if re.fullmatch(r"router bgp \S+", node.text):
            fragment.update(
                nxos_bgp_config(node.text, [(c.text, [g.text for g in c.children]) for c in node.children])
            )
    return fragment
