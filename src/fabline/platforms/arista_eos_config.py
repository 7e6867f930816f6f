"""Arista EOS ``show running-config``: the interface and QoS settings a RoCE fabric check reads.

EOS semantics applied here (also in ``docs/platforms/arista_eos.md``):

- DSCP -> traffic class is the global ``qos map dscp ... to traffic-class N``; only DSCPs the
  configuration maps explicitly are recorded (EOS's built-in default map is not guessed).
  Traffic class == priority (EOS's default tc-to-cos/tx-queue mapping is the identity), so the
  map is stored as ``dscp_to_priority`` on every front-panel Ethernet interface and as the added
  ``qos.dscp_to_priority``.
- ``qos trust dscp|cos``, ``priority-flow-control``, ``random-detect ecn`` and the rest can sit
  on the interface or in a ``qos profile`` attached with ``service-profile``; the interface's own
  lines win over the profile's.
- ``pfc_priorities`` is the sorted list of ``priority-flow-control priority N no-drop`` when
  ``priority-flow-control on`` is set, ``[]`` when PFC is off (or globally ``all off``), absent
  when the interface says nothing about PFC.
- ``ecn`` is keyed by tx-queue (== traffic class == priority by default). Thresholds in
  bytes/kbytes/mbytes become ``min_bytes``/``max_bytes`` (k = 1000, as EOS prints them);
  ``segments`` (ASIC cell size unknown here) become the added ``min_segments``/``max_segments``,
  time-based thresholds the added ``min_us``/``max_us``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, cast

from fabline.platforms.arista_eos_names import VOCABULARY, canonical_name, kept
from fabline.platforms.base import ParseContext, text_parser
from fabline.platforms.loadbalance import eos_load_balance
from fabline.platforms.routing import eos_bgp_config
from fabline.platforms.toolkit import DSCP, expand_ints, gbps, mbps_to_gbps, on_line
from fabline.state_types import Qos, StateBody

_BYTE_UNITS = {"bytes": 1, "kbytes": 1000, "mbytes": 1_000_000}
_TIME_UNITS = {"microseconds": 1, "milliseconds": 1000}


@dataclass
class Node:
    """One configuration line and the lines indented under it."""

    text: str
    indent: int
    children: list[Node] = field(default_factory=list)


def config_tree(text: str) -> list[Node]:
    """Top-level configuration lines with their indented children.

    ``!`` comment lines and ``comment ... EOF`` blocks are skipped.

    Example:
        >>> [(n.text, [c.text for c in n.children]) for n in config_tree("interface Et1\\n   mtu 9214\\n!")]
        [('interface Et1', ['mtu 9214'])]
    """
    roots: list[Node] = []
    stack: list[Node] = []
    in_comment = False
    for raw in text.expandtabs(8).splitlines():
        stripped = raw.strip()
        if in_comment:
            in_comment = stripped != "EOF"
            continue
        if not stripped or stripped.startswith("!"):
            continue
        if stripped == "comment":
            in_comment = True
            continue
        node = Node(stripped, len(raw) - len(raw.lstrip()))
        while stack and stack[-1].indent >= node.indent:
            stack.pop()
        (stack[-1].children if stack else roots).append(node)
        stack.append(node)
    return roots


def speed_gbps(token: str) -> float | None:
    """Gb/s of an EOS ``speed`` value: ``100gfull``, ``400g-8``, ``1.6t-8``, ``10000full``, ``25g``.

    Example:
        >>> speed_gbps("100gfull"), speed_gbps("400g-8"), speed_gbps("1.6t-8"), speed_gbps("10000full")
        (100, 400, 1600, 10)
    """
    m = re.fullmatch(r"(\d{1,7}(?:\.\d{1,6})?)([gt])?(?:full|half)?(?:-\d{1,2})?", token.lower())
    if not m:
        return None
    if m.group(2) == "t":
        return gbps(float(m.group(1)) * 1000)
    return gbps(float(m.group(1))) if m.group(2) else mbps_to_gbps(float(m.group(1)))


@dataclass
class PortSettings:
    """What an interface or a qos profile says; ``None`` is "not said"."""

    values: dict[str, Any] = field(default_factory=dict)
    fec: list[str] = field(default_factory=list)
    pfc_on: bool | None = None
    no_drop: dict[int, bool] = field(default_factory=dict)
    ecn: dict[str, dict[str, Any]] = field(default_factory=dict)
    profile: str | None = None

    def overlay(self, other: PortSettings) -> PortSettings:
        """This profile's settings with ``other`` (the interface's own lines) on top."""
        return PortSettings(
            values={**self.values, **other.values},
            fec=other.fec or self.fec,
            pfc_on=other.pfc_on if other.pfc_on is not None else self.pfc_on,
            no_drop={**self.no_drop, **other.no_drop},
            ecn={**self.ecn, **other.ecn},
            profile=other.profile,
        )


def _ecn(line: str) -> dict[str, Any] | None:
    m = re.match(r"random-detect ecn minimum-threshold (\d+) (\S+) maximum-threshold (\d+) (\S+)(.*)$", line)
    if not m:
        return None
    lo, lo_unit, hi, hi_unit, rest = int(m.group(1)), m.group(2), int(m.group(3)), m.group(4), m.group(5)
    entry: dict[str, Any] = {"enabled": True}
    if lo_unit in _BYTE_UNITS and hi_unit in _BYTE_UNITS:
        entry["min_bytes"], entry["max_bytes"] = lo * _BYTE_UNITS[lo_unit], hi * _BYTE_UNITS[hi_unit]
    elif lo_unit == hi_unit == "segments":
        entry["min_segments"], entry["max_segments"] = lo, hi
    elif lo_unit in _TIME_UNITS and hi_unit in _TIME_UNITS:
        entry["min_us"], entry["max_us"] = lo * _TIME_UNITS[lo_unit], hi * _TIME_UNITS[hi_unit]
    if p := re.search(r"max-mark-probability (\d+)", rest):
        entry["probability_pct"] = int(p.group(1))
    return entry


# The lines of an interface or qos-profile section (compiled once: every line of a running-config
# goes through them).
_DESCRIPTION = re.compile(r"description (.+)")
_MTU = re.compile(r"mtu (\d+)")
_L2_MTU = re.compile(r"l2 mtu (\d+)")
_SPEED = re.compile(r"speed (forced )?(auto)?\s*(\S+)?")
_FEC = re.compile(r"error-correction encoding (\S+)")
_TRUST = re.compile(r"qos trust (\S+)")
_PFC_ON = re.compile(r"priority-flow-control (mode )?on")
_PFC_OFF = re.compile(r"no priority-flow-control|priority-flow-control (mode )?off")
_PFC_PRIORITY = re.compile(r"priority-flow-control priority (\d) (no-drop|drop)")
_SERVICE_PROFILE = re.compile(r"service-profile (\S+)")
_TX_QUEUE = re.compile(r"(?:uc-)?tx-queue (\d)")


def port_settings(node: Node) -> PortSettings:
    """Read the lines of an ``interface`` or ``qos profile`` section."""
    s = PortSettings()
    v = s.values
    for child in node.children:
        line = child.text
        if m := _DESCRIPTION.fullmatch(line):
            v["description"] = m.group(1)
        elif line == "shutdown":
            v["admin_up"] = False
        elif line == "no shutdown":
            v["admin_up"] = True
        elif m := _MTU.fullmatch(line):
            v["mtu"] = int(m.group(1))
        elif m := _L2_MTU.fullmatch(line):
            v["l2_mtu"] = int(m.group(1))
        elif m := _SPEED.fullmatch(line):
            if m.group(2):
                v["autoneg"] = True
            elif m.group(3) and (gbps := speed_gbps(m.group(3))) is not None:
                v["speed_gbps"], v["autoneg"] = gbps, False
        elif (m := _FEC.fullmatch(line)) and (mode := VOCABULARY.fec_mode(m.group(1))):
            s.fec.append(mode)
        elif line == "no error-correction encoding":
            s.fec = ["none"]
        elif (m := _TRUST.fullmatch(line)) and (trust := VOCABULARY.trust_mode(m.group(1))):
            v["trust"] = trust
        elif _PFC_ON.fullmatch(line):
            s.pfc_on = True
        elif _PFC_OFF.fullmatch(line):
            s.pfc_on = False
        elif m := _PFC_PRIORITY.fullmatch(line):
            s.no_drop[int(m.group(1))] = m.group(2) == "no-drop"
        elif line == "priority-flow-control pause watchdog":
            v["pfc_watchdog"] = {"enabled": True}
        elif line == "no priority-flow-control pause watchdog":
            v["pfc_watchdog"] = {"enabled": False}
        elif m := _SERVICE_PROFILE.fullmatch(line):
            s.profile = m.group(1)
        elif m := _TX_QUEUE.fullmatch(line):
            for sub in child.children:
                if (entry := _ecn(sub.text)) is not None:
                    s.ecn[m.group(1)] = entry
    return s


def _interface_state(s: PortSettings, global_pfc_off: bool) -> dict[str, Any]:
    entry = dict(s.values)
    if len(set(s.fec)) == 1:
        entry["fec"] = s.fec[0]
    elif s.fec:
        entry["fec"] = "auto"
        entry["fec_allowed"] = sorted(set(s.fec))
    if s.pfc_on is not None or s.no_drop:
        on = bool(s.pfc_on) and not global_pfc_off
        entry["pfc_priorities"] = sorted(p for p, lossless in s.no_drop.items() if lossless) if on else []
    if s.ecn:
        entry["ecn"] = {q: s.ecn[q] for q in sorted(s.ecn)}
    return entry


#: Dynamic load balancing of ECMP groups, as pyavd's ``eos_cli_config_gen`` renders
#: ``ip_hardware.fib.load_balance_distribution.dynamic`` (``enabled``, ``flow_set_size`` 1-7).
_DYNAMIC_LB = re.compile(r"ip hardware fib load-balance distribution dynamic(?: flow-set-size [1-7])?")


@text_parser("an EOS running-config with 'interface' sections or a 'hostname' line")
def parse_show_running_config(text: str, ctx: ParseContext) -> StateBody:
    """``show running-config``: interface settings, QoS chain, PFC watchdog, hostname, load balancing.

    ``load_balance.hash_fields`` from ``load-balance policies``; ``load_balance.adaptive_routing``
    is whether ``ip hardware fib load-balance distribution dynamic`` (DLB on ECMP groups) is
    configured: a running-config leaves the off default out, so no line is ``false``.

    Raises:
        ParseError: The output has neither ``interface`` sections nor a ``hostname`` line.
    """
    tree = config_tree(text)
    profiles: dict[str, PortSettings] = {}
    interfaces_raw: dict[str, PortSettings] = {}
    dscp_map: dict[str, int] = {}
    watchdog: dict[str, Any] = {}
    global_pfc_off = False
    hostname: str | None = None
    bgp: StateBody = {}
    balance: StateBody = {}
    for node in tree:
        line = node.text
        if m := re.fullmatch(r"hostname (\S+)", line):
            hostname = m.group(1)
        elif re.fullmatch(r"router bgp \S+", line):
            bgp = eos_bgp_config(line, [c.text for c in node.children])
        elif line == "load-balance policies":
            balance = eos_load_balance(line, [(c.text, [g.text for g in c.children]) for c in node.children])
        elif m := re.fullmatch(r"interface (\S+)", line):
            interfaces_raw[canonical_name(m.group(1))] = port_settings(node)
        elif m := re.fullmatch(r"qos profile (\S+)", line):
            profiles[m.group(1)] = port_settings(node)
        elif m := re.fullmatch(r"qos map dscp ([\d\s,-]+) to traffic-class (\d)(?: .*)?", line):
            with on_line(line):
                for dscp in expand_ints(m.group(1), DSCP):
                    dscp_map[str(dscp)] = int(m.group(2))
        elif line == "priority-flow-control all off":
            global_pfc_off = True
        elif m := re.fullmatch(
            r"priority-flow-control pause watchdog default timeout (\d{1,6}(?:\.\d{1,6})?)", line
        ):
            watchdog["detection_ms"] = round(float(m.group(1)) * 1000)
        elif m := re.fullmatch(
            r"priority-flow-control pause watchdog default recovery-time (\d{1,6}(?:\.\d{1,6})?)", line
        ):
            watchdog["restoration_ms"] = round(float(m.group(1)) * 1000)
        elif m := re.fullmatch(r"priority-flow-control pause watchdog action (\S+)", line):
            watchdog["action"] = m.group(1)
    if not interfaces_raw and hostname is None:
        raise ctx.reject()

    interfaces: dict[str, Any] = {}
    # Sorted once; each port gets its own copy (a C-level dict copy).
    dscp_ordered = dict(sorted(dscp_map.items(), key=lambda kv: int(kv[0])))
    for name, own in interfaces_raw.items():
        if not kept(name):
            continue
        settings = profiles[own.profile].overlay(own) if own.profile in profiles else own
        entry = _interface_state(settings, global_pfc_off)
        if dscp_map and name.startswith("Ethernet"):
            entry["dscp_to_priority"] = dict(dscp_ordered)
        if entry:
            interfaces[name] = entry
    fragment: StateBody = {}
    if hostname:
        fragment["facts"] = {"hostname": hostname}
    qos: dict[str, Any] = {}
    if dscp_map:
        qos["dscp_to_priority"] = dscp_ordered
    port_watchdogs = [e["pfc_watchdog"]["enabled"] for e in interfaces.values() if "pfc_watchdog" in e]
    pfc_ports = [e for e in interfaces.values() if e.get("pfc_priorities")]
    if any(port_watchdogs):
        watchdog["enabled"] = True
    elif pfc_ports:
        watchdog["enabled"] = False
    if watchdog:
        qos["pfc_watchdog"] = watchdog
    if qos:
        fragment["qos"] = cast(Qos, qos)
    if interfaces:
        fragment["interfaces"] = interfaces
    fragment.update(bgp)
    # DLB on ECMP groups: 'ip hardware fib load-balance distribution dynamic' (EOS 4.30.2F+), the
    # line Arista's AVD data model renders to enable it; without it ECMP hashes statically (off).
    dynamic_lb = any(_DYNAMIC_LB.fullmatch(node.text) for node in tree)
    fragment["load_balance"] = {**balance.get("load_balance", {}), "adaptive_routing": dynamic_lb}
    return fragment
