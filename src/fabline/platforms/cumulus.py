"""NVIDIA Cumulus Linux 5.x (NVUE) and classic files: read-only commands and their parsers.

Vendor semantics (see ``docs/platforms/cumulus.md``):

- Port ``mtu`` is the L2 frame size Cumulus reports (9216 on a RoCE fabric).
- NVUE tables have ``operational`` and ``applied`` columns. A state field holds the operational
  value (the applied one when NVUE leaves operational blank, as for the ``enable`` knob); where
  both are present and differ, the interface (or ``qos.roce``) gets an ``applied`` sub-dict
  with the applied value under the same field name, e.g. ``{"speed_gbps": 100,
  "applied": {"speed_gbps": "auto"}}``.
- The RoCE profile (``nv show qos roce``), ``traffic.conf`` and NVUE's ``default-global`` QoS
  profiles are switch-wide: they land in ``qos.port_defaults`` (same field names as an
  interface). :func:`apply_port_defaults` copies them onto every ``swp`` port of a merged
  state that does not set the field itself.
- Priorities are Cumulus *switch priorities* (internal cos): ``dscp_to_priority`` maps a DSCP
  to the switch priority, ``pfc_priorities`` and ``ecn`` keys are switch priorities / traffic
  classes as the device names them. Trust ``pcp,dscp`` (both) classifies IP traffic, and so
  RoCEv2, by DSCP: ``trust`` is ``dscp`` and ``trust_modes`` keeps ``["pcp", "dscp"]``.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from typing import Any

import yaml

from fabline.errors import ParseError
from fabline.platforms.base import (
    Command,
    Fragment,
    ParseContext,
    check_text,
    load_json,
    merge_fragments,
)
from fabline.platforms.cumulus_nvue import (
    Cell,
    TreeTable,
    expand_ports,
    fec_mode,
    flag,
    int_list,
    read_tree_table,
    size_bytes,
    speed_gbps,
    uptime_seconds,
)
from fabline.platforms.spec import MtuKind, MtuSemantics, Platform, PlatformSpec, RunPlan

#: Fields of an interface that a switch-wide QoS default can supply (see :func:`apply_port_defaults`).
PORT_DEFAULT_FIELDS = (
    "trust",
    "trust_modes",
    "dscp_to_priority",
    "pcp_to_priority",
    "pfc_priorities",
    "pfc_rx",
    "pfc_tx",
    "ecn",
)


def _iface(ctx: ParseContext, expected: str) -> str:
    if not ctx.interface:
        raise ctx.fail(expected, "the command names no interface")
    return ctx.interface


def _trust(modes: list[str]) -> dict[str, Any]:
    """Trust fields from NVUE/traffic.conf mode words (``pcp``, ``dscp``, ``802.1p``, ``l2``, ``l3``)."""
    canon = []
    for word in modes:
        w = word.strip().lower()
        name = {"802.1p": "pcp", "8021p": "pcp", "l2": "pcp", "pcp": "pcp", "l3": "dscp", "dscp": "dscp"}.get(
            w
        )
        if w == "both":
            canon += ["pcp", "dscp"]
        elif name:
            canon.append(name)
    if not canon:
        return {}
    out: dict[str, Any] = {"trust": "dscp" if "dscp" in canon else "pcp"}
    out["trust_modes"] = sorted(set(canon), key=canon.index)
    return out


def _with_applied(fields: dict[str, Any], applied: dict[str, Any]) -> dict[str, Any]:
    if applied:
        fields["applied"] = applied
    return fields


def _record(
    fields: dict[str, Any],
    applied: dict[str, Any],
    name: str,
    cell: Cell | None,
    convert: Any,
) -> None:
    """Set ``fields[name]`` from a cell, and ``applied[name]`` when the applied value differs."""
    if cell is None or not cell.value:
        return
    value = convert(cell.value)
    if value is None:
        return
    fields[name] = value
    if cell.operational and cell.applied:
        app = convert(cell.applied)
        if app != value:
            applied[name] = app if app is not None else cell.applied


# --- nv show interface <if> link ---------------------------------------------------------------


def parse_nv_show_interface_link(output: str, ctx: ParseContext) -> Fragment:
    """``nv show interface <if> link``: admin state, speed, FEC, autoneg, MTU (L2 frame).

    Example:
        >>> parse_nv_show_interface_link('''            operational  applied
        ... ----------  -----------  -------
        ... mtu         9216         9216
        ... fec         rs           auto
        ... ''', ParseContext("cumulus", "nv show interface swp1 link", {"interface": "swp1"}))
        {'interfaces': {'swp1': {'fec': 'rs', 'mtu': 9216, 'applied': {'fec': 'auto'}}}}
    """
    expected = "an NVUE link table (operational/applied columns with mtu, speed, fec)"
    name = _iface(ctx, expected)
    table = read_tree_table(check_text(output, ctx, expected), ctx, expected)
    fields: dict[str, Any] = {}
    applied: dict[str, Any] = {}
    _record(fields, applied, "admin_up", table.get("state"), flag)
    _record(fields, applied, "oper_up", table.get("oper-status"), flag)
    _record(fields, applied, "autoneg", table.get("auto-negotiate"), flag)
    _record(fields, applied, "speed_gbps", table.get("speed"), speed_gbps)
    _record(fields, applied, "fec", table.get("fec"), fec_mode)
    _record(fields, applied, "mtu", table.get("mtu"), _int_or_none)
    if not fields:
        raise ctx.fail(expected, "none of state, speed, fec, mtu, auto-negotiate found")
    return {"interfaces": {name: _with_applied(fields, applied)}}


def _int_or_none(text: str) -> int | None:
    return int(text) if text.strip().isdigit() else None


# --- nv show qos roce / nv show interface <if> qos roce status -----------------------------------


def _roce_fields(table: TreeTable) -> dict[str, Any]:
    """Interface-shaped QoS fields of a RoCE table (global profile or one port's status)."""
    out: dict[str, Any] = {}
    trust = table.get("trust", "trust-mode")
    if trust and trust.value:
        out.update(_trust(re.split(r"[,\s]+", trust.value)))
    dscp: dict[str, int] = {}
    pcp: dict[str, int] = {}
    for title, rows in table.sections.items():
        if "->SP" not in title:
            continue
        for row in rows:
            prio = row.get("switch-prio", "")
            if not prio.isdigit():
                continue
            for value in int_list(row.get("dscp", "")):
                dscp[str(value)] = int(prio)
            for value in int_list(row.get("pcp", "")):
                pcp[str(value)] = int(prio)
    if dscp:
        out["dscp_to_priority"] = dict(sorted(dscp.items(), key=lambda kv: int(kv[0])))
    if pcp:
        out["pcp_to_priority"] = dict(sorted(pcp.items(), key=lambda kv: int(kv[0])))
    pfc = table.get("pfc", "pfc-priority")
    if pfc and pfc.value:
        out["pfc_priorities"] = sorted(set(int_list(pfc.value)))
    for key, field in (("rx-enabled", "pfc_rx"), ("tx-enabled", "pfc_tx")):
        cell = table.get("pfc", key)
        if cell and flag(cell.value) is not None:
            out[field] = flag(cell.value)
    mode = table.get("congestion-control", "congestion-mode")
    tcs = table.get("congestion-control", "enabled-tc")
    if tcs and tcs.value:
        entry: dict[str, Any] = {}
        if mode and mode.value:
            entry["enabled"] = "ecn" in mode.value.lower()
        for key, field in (("min-threshold", "min_bytes"), ("max-threshold", "max_bytes")):
            cell = table.get("congestion-control", key)
            if cell and size_bytes(cell.value) is not None:
                entry[field] = size_bytes(cell.value)
        prob = table.get("congestion-control", "probability")
        if prob and prob.value.strip().isdigit():
            entry["probability_pct"] = int(prob.value)
        out["ecn"] = {str(tc): dict(entry) for tc in sorted(set(int_list(tcs.value)))}
    return out


def _roce_profile(table: TreeTable) -> dict[str, Any]:
    """``qos.roce``: profile state, mode, cable length, congestion mode, SP->TC and scheduling."""
    roce: dict[str, Any] = {}
    applied: dict[str, Any] = {}
    _record(roce, applied, "enabled", table.get("enable") or table.get("state"), flag)
    _record(roce, applied, "mode", table.get("mode"), lambda s: s.strip() or None)
    _record(roce, applied, "cable_length_m", table.get("pfc", "cable-length"), _int_or_none)
    _record(roce, applied, "congestion_mode", table.get("congestion-control", "congestion-mode"), str)
    tc_map: dict[str, int] = {}
    scheduler: dict[str, str] = {}
    for title, rows in table.sections.items():
        if "SP->TC" not in title:
            continue
        for row in rows:
            prio, tc = row.get("switch-prio", ""), row.get("traffic-class", "")
            if prio.isdigit() and tc.isdigit():
                tc_map[prio] = int(tc)
                if row.get("scheduler-weight"):
                    scheduler[tc] = row["scheduler-weight"]
    if tc_map:
        roce["priority_to_tc"] = tc_map
    if scheduler:
        roce["tc_scheduler"] = dict(sorted(scheduler.items(), key=lambda kv: int(kv[0])))
    return _with_applied(roce, applied)


def parse_nv_show_qos_roce(output: str, ctx: ParseContext) -> Fragment:
    """``nv show qos roce``: the switch-wide RoCE profile.

    Feeds ``qos.roce`` (enabled, mode, priority_to_tc, tc_scheduler, ...), ``qos.buffer_mode``,
    ``qos.lossless_priorities`` and ``qos.port_defaults`` (trust, DSCP/PCP -> switch priority,
    PFC priorities, ECN per traffic class) that apply to every switch port.
    """
    expected = "the NVUE RoCE profile table (mode, pfc, congestion-control, trust)"
    table = read_tree_table(check_text(output, ctx, expected), ctx, expected)
    if table.get("mode") is None:
        raise ctx.fail(expected, "no 'mode' row")
    roce = _roce_profile(table)
    qos: dict[str, Any] = {"roce": roce}
    defaults = _roce_fields(table)
    if roce.get("mode"):
        qos["buffer_mode"] = roce["mode"]
    lossless = roce.get("enabled", True) is not False and str(roce.get("mode", "")).startswith("lossless")
    if lossless and "pfc_priorities" in defaults:
        qos["lossless_priorities"] = list(defaults["pfc_priorities"])
    if defaults:
        qos["port_defaults"] = defaults
    return {"qos": qos}


def parse_nv_show_interface_qos_roce_status(output: str, ctx: ParseContext) -> Fragment:
    """``nv show interface <if> qos roce status``: the RoCE settings one port actually runs with.

    Feeds the port's trust, dscp_to_priority/pcp_to_priority (only the RoCE and CNP rows NVUE
    lists), pfc_priorities, pfc_rx/pfc_tx, ecn and ``roce_mode``.
    """
    expected = "the NVUE per-port RoCE status table (congestion-control, pfc, trust, mode)"
    name = _iface(ctx, expected)
    table = read_tree_table(check_text(output, ctx, expected), ctx, expected)
    fields = _roce_fields(table)
    mode = table.get("mode")
    if mode and mode.value:
        fields["roce_mode"] = mode.value
    if not fields:
        raise ctx.fail(expected, "no pfc, trust or congestion-control rows")
    return {"interfaces": {name: fields}}


# --- nv show interface <if> qos roce counters ----------------------------------------------------


def parse_nv_show_interface_qos_roce_counters(output: str, ctx: ParseContext) -> Fragment:
    """``nv show interface <if> qos roce counters``: ECN marks, CNPs and RoCE PFC pauses of a port.

    NVUE counts PFC pauses for "RoCE traffic" without naming the priority, so they go to the
    added ``roce_pfc_rx_pause``/``roce_pfc_tx_pause`` counters rather than ``pfc_rx_pause``.
    """
    expected = "the NVUE per-port RoCE counter table (rx-stats, tx-stats)"
    name = _iface(ctx, expected)
    table = read_tree_table(check_text(output, ctx, expected), ctx, expected)
    wanted = {
        ("tx-stats", "tx-ecn-stats", "ecn-marked-packets"): "ecn_marked",
        ("tx-stats", "tx-cnp-stats", "cnp-packets"): "cnp_sent",
        ("rx-stats", "rx-pfc-stats", "pause-packets"): "roce_pfc_rx_pause",
        ("tx-stats", "tx-pfc-stats", "pause-packets"): "roce_pfc_tx_pause",
        ("rx-stats", "rx-roce-stats", "no-buffer-discard"): "roce_rx_discards",
        ("tx-stats", "tx-roce-stats", "unicast-no-buffer-discard"): "roce_tx_discards",
    }
    counters: dict[str, int] = {}
    for path, field in wanted.items():
        cell = table.get(*path)
        if cell and cell.value.strip().isdigit():
            counters[field] = int(cell.value)
    if not counters:
        raise ctx.fail(expected, "no ecn-marked-packets, cnp-packets or pause-packets rows")
    return {"interfaces": {name: {"counters": counters}}}


# --- nv show interface <if> qos pfc-watchdog -----------------------------------------------------


def parse_nv_show_interface_qos_pfc_watchdog(output: str, ctx: ParseContext) -> Fragment:
    """``nv show interface <if> qos pfc-watchdog`` (CL 5.6+): watchdog state and deadlocks of a port.

    NVUE runs the PFC watchdog per port (``nv set interface <if> qos pfc-watchdog state``;
    documented default ``disable``). Feeds the added ``pfc_watchdog.enabled`` of the port (the
    ``state`` row) and ``pfc_watchdog.deadlock_count`` per traffic class from the ``PFC WD
    Status`` table; :func:`apply_port_defaults` derives the switch-wide ``qos.pfc_watchdog``.

    Example:
        >>> parse_nv_show_interface_qos_pfc_watchdog('''       operational  applied
        ... -----  -----------  -------
        ... state  enabled      enabled
        ... ''', ParseContext("cumulus", "x", {"interface": "swp1"}))
        {'interfaces': {'swp1': {'pfc_watchdog': {'enabled': True}}}}
    """
    expected = "the NVUE per-port PFC watchdog table (a 'state' row, PFC WD Status per traffic class)"
    name = _iface(ctx, expected)
    table = read_tree_table(check_text(output, ctx, expected), ctx, expected)
    state = table.get("state")
    if state is None or flag(state.value) is None:
        raise ctx.fail(expected, "no 'state' row with enabled/disabled")
    watchdog: dict[str, Any] = {"enabled": flag(state.value)}
    applied = flag(state.applied) if state.operational and state.applied else None
    if applied is not None and applied != watchdog["enabled"]:
        watchdog["applied"] = {"enabled": applied}
    deadlocks: dict[str, int] = {}
    for title, rows in table.sections.items():
        if "PFC WD" not in title:
            continue
        for row in rows:
            tc, count = row.get("traffic-class", ""), row.get("deadlock-count", "")
            if tc.isdigit() and count.isdigit():
                deadlocks[tc] = int(count)
    if deadlocks:
        watchdog["deadlock_count"] = deadlocks
    return {"interfaces": {name: {"pfc_watchdog": watchdog}}}


# --- nv show interface <if> transceiver ----------------------------------------------------------

_POWER_KEY = re.compile(r"^ch-(?P<lane>\d+)-(?P<dir>rx|tx)-power$")
_DBM = re.compile(r"(?P<value>[-+]?\d+(?:\.\d+)?)\s*dBm\b")


def parse_nv_show_interface_transceiver(output: str, ctx: ParseContext) -> Fragment:
    """``nv show interface <if> transceiver`` (CL 5.11+): the module of a port, condensed.

    Feeds ``optics.{vendor, part_number, serial, temperature_c, rx_power_dbm, tx_power_dbm}``
    (per lane, ``ch-N-rx-power`` in lane order, the dBm half of ``0.8625 mW / -0.64 dBm``) and
    the added ``optics.{identifier, status}``. A port without a module has only the status rows:
    it feeds ``optics.status`` and nothing else, so optics checks see no readings.

    Example:
        >>> parse_nv_show_interface_transceiver('''identifier     : QSFP28
        ... vendor-name    : Mellanox
        ... ch-1-rx-power  : 0.8625 mW / -0.64 dBm
        ... ''', ParseContext("cumulus", "x", {"interface": "swp1"}))
        {'interfaces': {'swp1': {'optics': {'identifier': 'QSFP28', 'vendor': 'Mellanox', 'rx_power_dbm': [-0.64]}}}}
    """
    expected = "the NVUE transceiver summary ('key : value' rows such as vendor-name, ch-1-rx-power)"
    name = _iface(ctx, expected)
    text = check_text(output, ctx, expected)
    rows: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        key = key.strip()
        if sep and key and " " not in key:
            rows[key] = value.strip()
    optics: dict[str, Any] = {}
    for key, field in (
        ("identifier", "identifier"),
        ("vendor-name", "vendor"),
        ("vendor-pn", "part_number"),
        ("vendor-sn", "serial"),
        ("status", "status"),
    ):
        if rows.get(key) and rows[key] != "N/A":
            optics[field] = rows[key]
    temp = re.match(r"([-+]?\d+(?:\.\d+)?)\s*degrees C", rows.get("temperature", ""))
    if temp:
        optics["temperature_c"] = float(temp.group(1))
    lanes: dict[str, dict[int, float]] = {"rx": {}, "tx": {}}
    for key, value in rows.items():
        m, dbm = _POWER_KEY.match(key), _DBM.search(value)
        if m and dbm:
            lanes[m["dir"]][int(m["lane"])] = float(dbm["value"])
    for direction, field in (("rx", "rx_power_dbm"), ("tx", "tx_power_dbm")):
        if lanes[direction]:
            optics[field] = [lanes[direction][k] for k in sorted(lanes[direction])]
    if not optics:
        raise ctx.fail(expected, "no identifier, vendor-name, status or ch-N-rx-power row")
    return {"interfaces": {name: {"optics": optics}}}


# --- nv show system / decode-syseeprom -----------------------------------------------------------


def build_version(build: str) -> str | None:
    """The release number of an NVUE ``build`` string, as the other platforms' ``os_version``.

    Example:
        >>> build_version("Cumulus Linux 5.9.1"), build_version("Cumulus Linux 5.11.0-rc1")
        ('5.9.1', '5.11.0-rc1')
        >>> build_version("custom image")
        'custom image'
    """
    text = build.strip()
    if not text:
        return None
    m = re.search(r"\b\d+(?:\.\d+)+\S*", text)
    return m.group(0) if m else text


def parse_nv_show_system(output: str, ctx: ParseContext) -> Fragment:
    """``nv show system``: hostname, Cumulus Linux release (``os_version``), full build, uptime.

    ``os_version`` is the release number (``5.9.1``), as EOS, NX-OS and SONiC report theirs;
    the added ``facts.build`` keeps the words NVUE prints (``Cumulus Linux 5.9.1``).
    """
    expected = "the NVUE system table (hostname, build)"
    table = read_tree_table(check_text(output, ctx, expected), ctx, expected)
    facts: dict[str, Any] = {}
    applied: dict[str, Any] = {}
    _record(facts, applied, "hostname", table.get("hostname"), lambda s: s.strip() or None)
    _record(facts, applied, "os_version", table.get("build"), build_version)
    _record(facts, applied, "build", table.get("build"), lambda s: s.strip() or None)
    _record(facts, applied, "uptime_s", table.get("uptime"), uptime_seconds)
    if "hostname" not in facts and "os_version" not in facts:
        raise ctx.fail(expected, "no hostname or build row")
    return {"facts": _with_applied(facts, applied)}


_TLV_ROW = re.compile(
    r"^(?P<name>[A-Za-z][A-Za-z0-9 ./-]*?)\s+0x(?P<code>[0-9A-Fa-f]{2})\s+\d+\s(?P<value>.*)$"
)


def parse_decode_syseeprom(output: str, ctx: ParseContext) -> Fragment:
    """``decode-syseeprom``: model (Product Name), serial, vendor, part number, base MAC (ONIE TLVs)."""
    expected = "an ONIE TlvInfo EEPROM dump (TLV Name / Code / Len / Value rows)"
    text = check_text(output, ctx, expected)
    tlvs = {m["name"].strip(): m["value"].strip() for m in map(_TLV_ROW.match, text.splitlines()) if m}
    if not tlvs:
        raise ctx.fail(expected, "no TLV rows")
    facts: dict[str, Any] = {}
    for tlv, field in (
        ("Product Name", "model"),
        ("Serial Number", "serial"),
        ("Vendor Name", "vendor"),
        ("Part Number", "part_number"),
        ("Base MAC Address", "base_mac"),
    ):
        if tlvs.get(tlv):
            facts[field] = tlvs[tlv]
    if not facts:
        raise ctx.fail(expected, "no Product Name, Serial Number or Vendor Name TLV")
    return {"facts": facts}


# --- net show interface all json (NCLU) ----------------------------------------------------------


def parse_net_show_interface_all_json(output: str, ctx: ParseContext) -> Fragment:
    """``net show interface all json`` (NCLU, Cumulus 3.x/4.x): link state, MTU, speed, LLDP.

    NCLU lists every neighbour heard on a port; the first is ``lldp``, any others go to the
    added ``lldp.other_neighbors`` list (several neighbours on one port: a shared segment).
    """
    expected = "NCLU interface JSON (an object of interfaces with iface_obj)"
    doc = load_json(output, ctx, expected)
    if not isinstance(doc, dict) or not doc:
        raise ctx.fail(expected, "not a non-empty JSON object")
    interfaces: dict[str, Any] = {}
    for name, body in doc.items():
        if not isinstance(body, dict) or not isinstance(body.get("iface_obj"), dict):
            raise ctx.fail(expected, f"interface {name!r} has no iface_obj")
        obj = body["iface_obj"]
        fields: dict[str, Any] = {}
        state = str(body.get("linkstate", "")).upper()
        if state:
            fields["admin_up"] = state != "ADMDN"
            fields["oper_up"] = state == "UP"
        if isinstance(obj.get("mtu"), int):
            fields["mtu"] = obj["mtu"]
        speed = speed_gbps(str(body.get("speed", "")))
        if speed is not None:
            fields["speed_gbps"] = speed
        if obj.get("description"):
            fields["description"] = str(obj["description"])
        neighbors = [_nclu_neighbor(n) for n in obj.get("lldp") or [] if isinstance(n, dict)]
        neighbors = [n for n in neighbors if n]
        if neighbors:
            fields["lldp"] = neighbors[0]
        if len(neighbors) > 1:
            fields["lldp"]["other_neighbors"] = neighbors[1:]
        interfaces[name] = fields
    return {"interfaces": interfaces}


def _nclu_neighbor(entry: Mapping[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, field in (("adj_hostname", "device"), ("adj_port", "port"), ("adj_mgmt_ip", "mgmt_ip")):
        if entry.get(key):
            out[field] = str(entry[key])
    return out


# --- net show configuration commands (NCLU) ------------------------------------------------------

_NCLU_IFACE = re.compile(r"^net add (?:interface|bond|loopback) (?P<ports>\S+) (?P<rest>.+?)\s*$")


def parse_net_show_configuration_commands(output: str, ctx: ParseContext) -> Fragment:
    """``net show configuration commands`` (NCLU): hostname and configured port MTU/alias/link.

    The MTU is the configured value (NCLU has no operational column). QoS is not in NCLU on
    Cumulus 3.x: read ``/etc/cumulus/datapath/traffic.conf`` for PFC/ECN.
    """
    expected = "an NCLU command list ('net add ...' lines)"
    text = check_text(output, ctx, expected)
    lines = [line.strip() for line in text.splitlines()]
    if not any(line.startswith("net add ") for line in lines):
        raise ctx.fail(expected, "no 'net add' line")
    facts: dict[str, Any] = {}
    interfaces: dict[str, dict[str, Any]] = {}
    for line in lines:
        host = re.fullmatch(r"net add hostname (\S+)", line)
        if host:
            facts["hostname"] = host.group(1)
            continue
        m = _NCLU_IFACE.match(line)
        if not m:
            continue
        rest = m["rest"].split()
        fields: dict[str, Any] = {}
        if rest[0] == "mtu" and len(rest) == 2 and rest[1].isdigit():
            fields["mtu"] = int(rest[1])
        elif rest[0] == "alias" and len(rest) > 1:
            fields["description"] = " ".join(rest[1:])
        elif rest[:2] == ["link", "speed"] and len(rest) == 3 and rest[2].isdigit():
            fields["speed_gbps"] = _mbps_to_gbps(int(rest[2]))
        elif rest[:2] == ["link", "autoneg"] and len(rest) == 3 and flag(rest[2]) is not None:
            fields["autoneg"] = flag(rest[2])
        elif rest[:2] == ["link", "fec"] and len(rest) == 3 and fec_mode(rest[2]):
            fields["fec"] = fec_mode(rest[2])
        for port in expand_ports(m["ports"]) if fields else ():
            interfaces.setdefault(port, {}).update(fields)
    fragment: Fragment = {}
    if facts:
        fragment["facts"] = facts
    if interfaces:
        fragment["interfaces"] = interfaces
    if not fragment:
        raise ctx.fail(expected, "no hostname, mtu, alias or link line")
    return fragment


def _mbps_to_gbps(mbps: int) -> float | int:
    value = mbps / 1000
    return int(value) if value.is_integer() else value


# --- /etc/cumulus/datapath/traffic.conf ----------------------------------------------------------


def _conf_value(raw: str) -> Any:
    raw = raw.strip()
    if raw.startswith("[") and raw.endswith("]"):
        return [item.strip() for item in raw[1:-1].split(",") if item.strip()]
    return raw


def parse_traffic_conf(output: str, ctx: ParseContext) -> Fragment:
    """``cat /etc/cumulus/datapath/traffic.conf`` (Cumulus 3.x/4.x): classification, PFC, ECN.

    Classification (``packet_priority_source_set`` and the ``cos_N.priority_source`` lists) is
    switch-wide: ``qos.port_defaults``. PFC and ECN port groups name their ports
    (``port_set``): each port gets ``pfc_priorities``/``pfc_rx``/``pfc_tx`` and ``ecn`` keyed by
    the internal cos. A map whose header field is not in the source set is not in effect and
    is left out.
    """
    expected = "a Cumulus traffic.conf (traffic.* = ... lines)"
    text = check_text(output, ctx, expected)
    conf: dict[str, Any] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        conf[key.strip()] = _conf_value(value)
    if not any(k.startswith("traffic.") for k in conf):
        raise ctx.fail(expected, "no traffic.* setting")

    defaults: dict[str, Any] = {}
    sources = conf.get("traffic.packet_priority_source_set", [])
    sources = sources if isinstance(sources, list) else [sources]
    defaults.update(_trust(sources))
    for field, header, suffix in (
        ("pcp_to_priority", "802.1p", "8021p"),
        ("dscp_to_priority", "dscp", "dscp"),
    ):
        if header not in sources:
            continue
        mapping: dict[str, int] = {}
        for cos in range(8):
            for value in conf.get(f"traffic.cos_{cos}.priority_source.{suffix}", []):
                if value.isdigit():
                    mapping[value] = cos
        if mapping:
            defaults[field] = dict(sorted(mapping.items(), key=lambda kv: int(kv[0])))

    interfaces: dict[str, dict[str, Any]] = {}
    for group in conf.get("pfc.port_group_list", []):
        prefix = f"pfc.{group}."
        cos_list = sorted({int(c) for c in conf.get(prefix + "cos_list", []) if c.isdigit()})
        fields: dict[str, Any] = {"pfc_priorities": cos_list}
        for key, field in (("rx_enable", "pfc_rx"), ("tx_enable", "pfc_tx")):
            if flag(str(conf.get(prefix + key, ""))) is not None:
                fields[field] = flag(str(conf[prefix + key]))
        for port in expand_ports(str(conf.get(prefix + "port_set", ""))):
            interfaces.setdefault(port, {}).update(copy.deepcopy(fields))
    for group in conf.get("ecn_red.port_group_list", []):
        prefix = f"ecn_red.{group}."
        entry: dict[str, Any] = {}
        if flag(str(conf.get(prefix + "ecn_enable", ""))) is not None:
            entry["enabled"] = flag(str(conf[prefix + "ecn_enable"]))
        for key, field in (("min_threshold_bytes", "min_bytes"), ("max_threshold_bytes", "max_bytes")):
            if str(conf.get(prefix + key, "")).isdigit():
                entry[field] = int(conf[prefix + key])
        if str(conf.get(prefix + "probability", "")).isdigit():
            entry["probability_pct"] = int(conf[prefix + "probability"])
        if flag(str(conf.get(prefix + "red_enable", ""))) is not None:
            entry["red_enabled"] = flag(str(conf[prefix + "red_enable"]))
        for port in expand_ports(str(conf.get(prefix + "port_set", ""))):
            ecn = interfaces.setdefault(port, {}).setdefault("ecn", {})
            for cos in conf.get(prefix + "cos_list", []):
                ecn[str(int(cos))] = dict(entry)
    fragment: Fragment = {}
    if defaults:
        fragment["qos"] = {"port_defaults": defaults}
    if interfaces:
        fragment["interfaces"] = interfaces
    if not fragment:
        raise ctx.fail(expected, "no classification, PFC or ECN settings")
    return fragment


# --- NVUE JSON: nv show interface -o json / nv config show -o json -------------------------------


def _link_fields(link: Mapping[str, Any]) -> dict[str, Any]:
    """Interface fields from an NVUE ``link`` object (config or operational)."""
    out: dict[str, Any] = {}
    if isinstance(link.get("mtu"), int):
        out["mtu"] = link["mtu"]
    if link.get("speed") is not None and speed_gbps(str(link["speed"])) is not None:
        out["speed_gbps"] = speed_gbps(str(link["speed"]))
    if link.get("fec") is not None and fec_mode(str(link["fec"])):
        out["fec"] = fec_mode(str(link["fec"]))
    if link.get("auto-negotiate") is not None and flag(str(link["auto-negotiate"])) is not None:
        out["autoneg"] = flag(str(link["auto-negotiate"]))
    state = link.get("state")
    if isinstance(state, Mapping) and len(state) == 1:
        out["admin_up"] = next(iter(state)) == "up"
    elif isinstance(state, str) and flag(state) is not None:
        out["admin_up"] = flag(state)
    if link.get("admin-status") is not None and flag(str(link["admin-status"])) is not None:
        out["admin_up"] = flag(str(link["admin-status"]))
    if link.get("oper-status") is not None and flag(str(link["oper-status"])) is not None:
        out["oper_up"] = flag(str(link["oper-status"]))
    return out


def parse_nv_show_interface_json(output: str, ctx: ParseContext) -> Fragment:
    """``nv show interface -o json``: every interface's operational link state, speed, MTU."""
    expected = "NVUE interface JSON (an object of interfaces with link/type)"
    doc = load_json(output, ctx, expected)
    if not isinstance(doc, dict) or not doc:
        raise ctx.fail(expected, "not a non-empty JSON object")
    interfaces: dict[str, Any] = {}
    for name, body in doc.items():
        if not isinstance(body, dict) or not ("link" in body or "type" in body):
            raise ctx.fail(expected, f"interface {name!r} has neither link nor type")
        fields = _link_fields(body.get("link") or {})
        if body.get("description"):
            fields["description"] = str(body["description"])
        interfaces[name] = fields
    return {"interfaces": interfaces}


def _config_root(doc: Any) -> Mapping[str, Any] | None:
    if isinstance(doc, list):
        for item in doc:
            if isinstance(item, dict) and isinstance(item.get("set"), dict):
                return item["set"]  # type: ignore[no-any-return]
        return None
    if isinstance(doc, dict):
        return doc["set"] if isinstance(doc.get("set"), dict) else doc
    return None


def _nvue_qos_profiles(qos: Mapping[str, Any], profile: Mapping[str, str]) -> dict[str, Any]:
    """Interface-shaped fields from the NVUE QoS profiles named in ``profile`` (kind -> name)."""
    out: dict[str, Any] = {}
    mapping = (qos.get("mapping") or {}).get(profile.get("mapping", ""))
    if isinstance(mapping, Mapping):
        if mapping.get("trust"):
            out.update(_trust([str(mapping["trust"])]))
        for key, field in (("dscp", "dscp_to_priority"), ("pcp", "pcp_to_priority")):
            table = mapping.get(key)
            if isinstance(table, Mapping) and table:
                values = {
                    str(k): int(v["switch-priority"])
                    for k, v in table.items()
                    if isinstance(v, Mapping) and str(v.get("switch-priority", "")).isdigit()
                }
                out[field] = dict(sorted(values.items(), key=lambda kv: int(kv[0])))
    pfc = (qos.get("pfc") or {}).get(profile.get("pfc", ""))
    if isinstance(pfc, Mapping):
        prios = pfc.get("switch-priority")
        if isinstance(prios, Mapping):
            out["pfc_priorities"] = sorted(int(p) for p in prios if str(p).isdigit())
        for key, field in (("rx", "pfc_rx"), ("tx", "pfc_tx")):
            if pfc.get(key) is not None and flag(str(pfc[key])) is not None:
                out[field] = flag(str(pfc[key]))
    cc = (qos.get("congestion-control") or {}).get(profile.get("congestion-control", ""))
    if isinstance(cc, Mapping) and isinstance(cc.get("traffic-class"), Mapping):
        ecn: dict[str, Any] = {}
        for tc, body in cc["traffic-class"].items():
            if not isinstance(body, Mapping):
                continue
            entry: dict[str, Any] = {}
            if body.get("ecn") is not None and flag(str(body["ecn"])) is not None:
                entry["enabled"] = flag(str(body["ecn"]))
            for key, field in (("min-threshold", "min_bytes"), ("max-threshold", "max_bytes")):
                if body.get(key) is not None and size_bytes(str(body[key])) is not None:
                    entry[field] = size_bytes(str(body[key]))
            if str(body.get("probability", "")).isdigit():
                entry["probability_pct"] = int(body["probability"])
            ecn[str(tc)] = entry
        if ecn:
            out["ecn"] = dict(sorted(ecn.items(), key=lambda kv: int(kv[0])))
    return out


def parse_nv_config_show_json(output: str, ctx: ParseContext) -> Fragment:
    """``nv config show -o json``: the applied NVUE configuration (configured, not operational).

    Feeds ``facts.hostname``; per interface the configured link (mtu, speed, fec, autoneg,
    admin state), description and QoS from the profiles the port names; ``qos.roce``;
    ``qos.port_defaults`` from the ``default-global`` profiles; per-port ``pfc_watchdog``.
    """
    expected = "the NVUE configuration as JSON (a 'set' document with interface/system/qos)"
    root = _config_root(load_json(output, ctx, expected))
    if root is None or not any(k in root for k in ("interface", "system", "qos")):
        raise ctx.fail(expected, "no interface, system or qos section")
    fragment: Fragment = {}
    system = root.get("system")
    if isinstance(system, Mapping) and system.get("hostname"):
        fragment["facts"] = {"hostname": str(system["hostname"])}
    qos_cfg = root.get("qos") if isinstance(root.get("qos"), Mapping) else {}
    assert isinstance(qos_cfg, Mapping)
    qos: dict[str, Any] = {}
    roce = qos_cfg.get("roce")
    if isinstance(roce, Mapping):
        entry: dict[str, Any] = {}
        if roce.get("enable") is not None and flag(str(roce["enable"])) is not None:
            entry["enabled"] = flag(str(roce["enable"]))
        if roce.get("mode"):
            entry["mode"] = str(roce["mode"])
            qos["buffer_mode"] = str(roce["mode"])
        qos["roce"] = entry
    global_profiles = dict.fromkeys(("mapping", "pfc", "congestion-control"), "default-global")
    defaults = _nvue_qos_profiles(qos_cfg, global_profiles)
    if defaults:
        qos["port_defaults"] = defaults
    if qos:
        fragment["qos"] = qos
    interfaces: dict[str, Any] = {}
    for name, body in (root.get("interface") or {}).items():
        if not isinstance(body, Mapping):
            continue
        fields = _link_fields(body.get("link") or {})
        if body.get("description"):
            fields["description"] = str(body["description"])
        port_qos = body.get("qos") if isinstance(body.get("qos"), Mapping) else {}
        assert isinstance(port_qos, Mapping)
        named = {
            kind: str(ref["profile"])
            for kind, ref in port_qos.items()
            if isinstance(ref, Mapping) and ref.get("profile")
        }
        fields.update(_nvue_qos_profiles(qos_cfg, named))
        wd = port_qos.get("pfc-watchdog")
        if isinstance(wd, Mapping) and wd.get("state") is not None and flag(str(wd["state"])) is not None:
            fields["pfc_watchdog"] = {"enabled": flag(str(wd["state"]))}
        if fields:
            interfaces[str(name)] = fields
    if interfaces:
        fragment["interfaces"] = interfaces
    return fragment


# --- merge helper --------------------------------------------------------------------------------


def _fill_missing(into: dict[str, Any], defaults: Mapping[str, Any]) -> None:
    """Copy into ``into`` every key of ``defaults`` it lacks; shared sub-dicts are filled the same way.

    Example:
        >>> port = {"3": {"enabled": True, "min_bytes": 1}}
        >>> _fill_missing(port, {"3": {"min_bytes": 2, "probability_pct": 100}})
        >>> port
        {'3': {'enabled': True, 'min_bytes': 1, 'probability_pct': 100}}
    """
    for key, value in defaults.items():
        if key not in into:
            into[key] = copy.deepcopy(value)
        elif isinstance(into[key], dict) and isinstance(value, Mapping):
            _fill_missing(into[key], value)


def _switch_watchdog(ports: Mapping[str, Mapping[str, Any]]) -> dict[str, Any] | None:
    """``qos.pfc_watchdog`` from the per-port watchdog of the lossless (PFC-enabled) ``swp`` ports.

    NVUE has no switch-wide watchdog switch: it is on for the switch when it is on for every port
    that runs PFC. Unknown (``None``) when no port runs PFC, or when some lossless port's watchdog
    was not read and none read is off.

    Example:
        >>> _switch_watchdog({"swp1": {"pfc_priorities": [3], "pfc_watchdog": {"enabled": False}},
        ...                   "swp2": {"pfc_priorities": [3], "pfc_watchdog": {"enabled": True}}})
        {'enabled': False, 'disabled_ports': ['swp1']}
    """
    lossless = {n: b for n, b in ports.items() if b.get("pfc_priorities")}
    if not lossless:
        return None
    known = {
        n: b["pfc_watchdog"]["enabled"]
        for n, b in lossless.items()
        if isinstance(b.get("pfc_watchdog"), Mapping) and isinstance(b["pfc_watchdog"].get("enabled"), bool)
    }
    off = sorted(n for n, on in known.items() if not on)
    if off:
        return {"enabled": False, "disabled_ports": off}
    if len(known) < len(lossless):
        return None
    return {"enabled": True}


def apply_port_defaults(state: dict[str, Any]) -> dict[str, Any]:
    """Fill every ``swp`` port of a merged state from ``qos.port_defaults``; derive ``qos.pfc_watchdog``.

    Cumulus configures RoCE QoS switch-wide (``nv set qos roce``, ``default-global`` profiles,
    traffic.conf classification); checks read per-interface fields, so the collector calls this
    after merging a Cumulus device's fragments. A port's own value always wins, leaf by leaf:
    missing sub-keys are filled too, because a port's ``qos roce status`` table lists only some
    of them (no ECN ``probability`` row, only the RoCE and CNP rows of the DSCP map), while the
    switch-wide profile has the rest.

    The switch-wide ``qos.pfc_watchdog.enabled`` (which NVUE does not have: its watchdog is per
    port) is true when every port running PFC has its watchdog on, false with the
    ``disabled_ports`` when some has it off; it is left out when that is unknown.

    Example:
        >>> s = {"qos": {"port_defaults": {"trust": "dscp", "pfc_priorities": [3],
        ...                                "ecn": {"3": {"enabled": True, "probability_pct": 100}}}},
        ...      "interfaces": {"swp1": {"pfc_priorities": [4], "ecn": {"3": {"enabled": True}}}, "eth0": {}}}
        >>> apply_port_defaults(s)["interfaces"]["swp1"]
        {'pfc_priorities': [4], 'ecn': {'3': {'enabled': True, 'probability_pct': 100}}, 'trust': 'dscp'}
    """
    defaults = (state.get("qos") or {}).get("port_defaults") or {}
    ports: dict[str, dict[str, Any]] = {}
    for name, body in (state.get("interfaces") or {}).items():
        if not name.startswith("swp") or not isinstance(body, dict):
            continue
        ports[name] = body
        for field in PORT_DEFAULT_FIELDS:
            if field not in defaults:
                continue
            if field not in body:
                body[field] = copy.deepcopy(defaults[field])
            elif isinstance(body[field], dict) and isinstance(defaults[field], Mapping):
                _fill_missing(body[field], defaults[field])
    watchdog = _switch_watchdog(ports)
    if watchdog is not None:
        state.setdefault("qos", {})["pfc_watchdog"] = watchdog
    return state


COMMANDS: tuple[Command, ...] = (
    Command(
        "nv config show -o json",
        parse_nv_config_show_json,
        "facts.hostname; interfaces.*.{mtu,speed_gbps,fec,autoneg,admin_up,description,QoS from "
        "named profiles,pfc_watchdog}; qos.roce; qos.buffer_mode; qos.port_defaults (configured values)",
    ),
    Command(
        "nv show interface -o json",
        parse_nv_show_interface_json,
        "interfaces.*.{admin_up,oper_up,mtu,speed_gbps,fec,autoneg,description}",
    ),
    Command(
        "nv show interface {interface} link",
        parse_nv_show_interface_link,
        "interfaces.IF.{admin_up,oper_up,autoneg,speed_gbps,fec,mtu,applied}",
    ),
    Command(
        "nv show qos roce",
        parse_nv_show_qos_roce,
        "qos.roce; qos.buffer_mode; qos.lossless_priorities; qos.port_defaults.{trust,trust_modes,"
        "dscp_to_priority,pcp_to_priority,pfc_priorities,pfc_rx,pfc_tx,ecn}",
    ),
    Command(
        "nv show interface {interface} qos roce status",
        parse_nv_show_interface_qos_roce_status,
        "interfaces.IF.{trust,trust_modes,dscp_to_priority,pcp_to_priority,pfc_priorities,pfc_rx,"
        "pfc_tx,ecn,roce_mode}",
    ),
    Command(
        "nv show interface {interface} qos roce counters",
        parse_nv_show_interface_qos_roce_counters,
        "interfaces.IF.counters.{ecn_marked,cnp_sent,roce_pfc_rx_pause,roce_pfc_tx_pause,"
        "roce_rx_discards,roce_tx_discards}",
    ),
    Command(
        "nv show interface {interface} qos pfc-watchdog",
        parse_nv_show_interface_qos_pfc_watchdog,
        "interfaces.IF.pfc_watchdog.{enabled,deadlock_count} (qos.pfc_watchdog via apply_port_defaults)",
    ),
    Command(
        "nv show interface {interface} transceiver",
        parse_nv_show_interface_transceiver,
        "interfaces.IF.optics.{vendor,part_number,serial,temperature_c,rx_power_dbm,tx_power_dbm,"
        "identifier,status}",
    ),
    Command(
        "cat /etc/cumulus/datapath/traffic.conf",
        parse_traffic_conf,
        "qos.port_defaults.{trust,trust_modes,dscp_to_priority,pcp_to_priority}; "
        "interfaces.*.{pfc_priorities,pfc_rx,pfc_tx,ecn}",
        kind="file",
    ),
    Command(
        "net show interface all json",
        parse_net_show_interface_all_json,
        "interfaces.*.{admin_up,oper_up,mtu,speed_gbps,description,lldp.{device,port,mgmt_ip,other_neighbors}}",
    ),
    Command(
        "net show configuration commands",
        parse_net_show_configuration_commands,
        "facts.hostname; interfaces.*.{mtu,description,speed_gbps,autoneg,fec} (configured)",
    ),
    Command(
        "nv show system",
        parse_nv_show_system,
        "facts.{hostname,os_version,build,uptime_s}",
    ),
    Command(
        "decode-syseeprom",
        parse_decode_syseeprom,
        "facts.{model,serial,vendor,part_number,base_mac}",
    ),
)

_YAML: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_startup_yaml(text: str) -> dict[str, Any]:
    """A rendered NVUE ``startup.yaml`` as a state body: the ``nv config show -o json`` parser's view.

    Switch-wide QoS lands on the ports (:func:`apply_port_defaults`); with no switch-wide watchdog
    setting, ``qos.pfc_watchdog.enabled`` says whether every admin-up switch port has one.

    Raises:
        ParseError: Not YAML, or not an NVUE configuration.
    """
    platform, command = str(Platform.CUMULUS), "nv config show -o json"
    try:
        text = json.dumps(yaml.load(text, Loader=_YAML))
    except yaml.YAMLError as exc:
        raise ParseError(platform, command, "an NVUE startup.yaml", str(exc).splitlines()[0]) from None
    state = merge_fragments([parse_nv_config_show_json(text, ParseContext(platform, command))])
    apply_port_defaults(state)
    qos = state.setdefault("qos", {})
    if "pfc_watchdog" not in qos:
        ports = [
            body
            for name, body in (state.get("interfaces") or {}).items()
            if name.startswith("swp") and isinstance(body, dict) and body.get("admin_up") is True
        ]
        if ports:
            qos["pfc_watchdog"] = {
                "enabled": all((p.get("pfc_watchdog") or {}).get("enabled") is True for p in ports)
            }
    return state


PLATFORM = PlatformSpec(
    id=Platform.CUMULUS,
    description="NVIDIA Cumulus Linux 5.x (NVUE) and classic files",
    kind="switch",
    commands=COMMANDS,
    run=RunPlan(
        platform=Platform.CUMULUS,
        transport="netmiko",
        device_type="cumulus_linux",
        shell=True,
        device_commands=(
            "nv config show -o json",
            "nv show system",
            "decode-syseeprom",
            "nv show qos roce",
            "nv show interface -o json",
            "net show interface all json",
        ),
        interface_commands=(
            "nv show interface {interface} qos roce status",
            "nv show interface {interface} qos roce counters",
            # After 'nv config show' so the operational watchdog state wins the merge.
            "nv show interface {interface} qos pfc-watchdog",
            "nv show interface {interface} transceiver",
        ),
        interface_pattern=r"swp\d+(s\d+)?",
        finalize=apply_port_defaults,
    ),
    network_os=("cumulus", "cumulus_linux", "nvidia.cumulus.cumulus"),
    network_os_prefixes=("nvidia.nvue.",),
    port_name=lambda index: f"swp{index + 1}",
    # A switch port is a Linux netdev: its MTU is the kernel's L3 MTU (9216 -> 9234-byte frames).
    mtu=MtuSemantics(MtuKind.L3, fabric_mtu=9216),
    os_version="5.9.1",
    config_command="nv config show -o json",
    read_config=read_startup_yaml,
)
