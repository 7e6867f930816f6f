"""Cumulus Linux NCLU (``net show ...``, Cumulus 3.x/4.x): interface JSON and the command list.

Vendor semantics: :mod:`fabline.platforms.cumulus`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, cast

from fabline.platforms.base import Fragment, ParseContext, json_parser, text_parser
from fabline.platforms.cumulus_values import expand_ports, fec_mode, flag
from fabline.platforms.toolkit import add_neighbor, lldp_entry, mbps_to_gbps, speed_gbps
from fabline.state_types import Facts, LldpNeighbor, StateBody

# --- net show interface all json (NCLU) ----------------------------------------------------------


@json_parser("NCLU interface JSON (an object of interfaces with iface_obj)")
def parse_net_show_interface_all_json(doc: Any, ctx: ParseContext) -> StateBody:
    """``net show interface all json`` (NCLU, Cumulus 3.x/4.x): link state, MTU, speed, LLDP.

    NCLU lists every neighbour heard on a port; the first is ``lldp``, any others go to the
    added ``lldp.other_neighbors`` list (several neighbours on one port: a shared segment).
    """
    if not isinstance(doc, dict) or not doc:
        raise ctx.reject("not a non-empty JSON object")
    interfaces: dict[str, Any] = {}
    for name, body in doc.items():
        if not isinstance(body, dict) or not isinstance(body.get("iface_obj"), dict):
            raise ctx.reject(f"interface {name!r} has no iface_obj")
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
        lldp = obj.get("lldp") or []
        for neighbor in (
            _nclu_neighbor(n) for n in (lldp if isinstance(lldp, list) else []) if isinstance(n, dict)
        ):
            if neighbor:
                add_neighbor(fields, neighbor)
        interfaces[name] = fields
    return {"interfaces": interfaces}


def _nclu_neighbor(entry: Mapping[str, Any]) -> LldpNeighbor:
    """One NCLU ``lldp`` list entry (``adj_port`` is the neighbour's port id)."""

    def text(key: str) -> str | None:
        return str(entry[key]) if entry.get(key) else None

    neighbor = lldp_entry(text("adj_hostname"), text("adj_port"))
    if entry.get("adj_mgmt_ip"):
        neighbor["mgmt_ip"] = str(entry["adj_mgmt_ip"])
    return neighbor


# --- net show configuration commands (NCLU) ------------------------------------------------------

_NCLU_IFACE = re.compile(r"^net add (?:interface|bond|loopback) (?P<ports>\S+) (?P<rest>.+?)\s*$")


@text_parser("an NCLU command list ('net add ...' lines)")
def parse_net_show_configuration_commands(text: str, ctx: ParseContext) -> StateBody:
    """``net show configuration commands`` (NCLU): hostname and configured port MTU/alias/link.

    The MTU is the configured value (NCLU has no operational column). QoS is not in NCLU on
    Cumulus 3.x: read ``/etc/cumulus/datapath/traffic.conf`` for PFC/ECN.
    """
    lines = [line.strip() for line in text.splitlines()]
    if not any(line.startswith("net add ") for line in lines):
        raise ctx.reject("no 'net add' line")
    facts: Facts = {}
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
            fields["speed_gbps"] = mbps_to_gbps(int(rest[2]))
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
        raise ctx.reject("no hostname, mtu, alias or link line")
    return cast(StateBody, fragment)
