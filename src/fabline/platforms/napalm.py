"""Any NAPALM platform, read through NAPALM's getters (``napalm``).

A device declared ``fabline_platform: napalm`` with ``napalm_driver: junos`` (``eos``, ``iosxr``,
``nxos``, ``nxos_ssh``, ``ios`` or a community driver) is collected by calling NAPALM getters
instead of CLI commands (:mod:`fabline.collect.getters`). Each getter is a "command" of this
platform's allow-list: the collector calls nothing else, its return value (NAPALM's own
vendor-neutral model, see ``napalm/base/models.py``) is written as JSON to ``raw/`` as the
evidence, and the parsers below turn that JSON into state schema v1, so ``--reparse`` works as
for every platform.

What the getters give: facts (hostname, vendor, model, serial, OS version, uptime), per interface
admin/oper state, description, MTU, speed, LLDP neighbour, optic power per lane and packet
counters, and the device's environment (temperatures, fans, power supplies, CPU, memory). What
they do not give is declared in :data:`UNSUPPORTED` and written into every state, so the rules
that need it (PFC, DSCP maps, ECN, trust, FEC, autonegotiation, the PFC watchdog, CRC and FEC
counters) end ``skipped`` with the reason, never ``pass`` and never ``error``
(docs/platforms/napalm.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, cast

from fabline.errors import CommandUnavailable
from fabline.platforms.base import (
    Command,
    ParseContext,
    load_json,
    text_parser,
)
from fabline.platforms.spec import MtuKind, MtuSemantics, Platform, PlatformSpec, RunPlan
from fabline.platforms.toolkit import lldp_entry
from fabline.state_types import Facts, Optics, StateBody

#: The first line of a getter's evidence when the driver does not implement it.
NOT_IMPLEMENTED = "NotImplementedError:"

_NO_QOS = "NAPALM getters report no QoS configuration (PFC, DSCP maps, ECN, trust, watchdog)"
#: State paths the getters cannot fill, with the reason (dotted prefixes; ``*`` = any interface).
UNSUPPORTED: Mapping[str, str] = {
    "interfaces.*.pfc_priorities": _NO_QOS,
    "interfaces.*.dscp_to_priority": _NO_QOS,
    "interfaces.*.ecn": _NO_QOS,
    "interfaces.*.trust": _NO_QOS,
    "interfaces.*.pfc_watchdog": _NO_QOS,
    "qos": _NO_QOS,
    "interfaces.*.fec": "NAPALM's get_interfaces has no FEC mode",
    "interfaces.*.autoneg": "NAPALM's get_interfaces has no autonegotiation state",
    "interfaces.*.counters.crc_errors": "NAPALM's get_interfaces_counters has rx_errors, not CRC errors",
    "interfaces.*.counters.fec_corrected": "NAPALM getters have no FEC counters",
    "interfaces.*.counters.fec_uncorrectable": "NAPALM getters have no FEC counters",
    "interfaces.*.counters.pfc_rx_pause": "NAPALM getters have no PFC counters",
    "interfaces.*.counters.pfc_tx_pause": "NAPALM getters have no PFC counters",
    "interfaces.*.counters.ecn_marked": "NAPALM getters have no ECN counters",
    "interfaces.*.optics.temperature_c": "NAPALM's get_optics has no module temperature",
    # get_bgp_neighbors exists, but no getter gives the ECMP fan-out of a route; not wired yet.
    "bgp": "fabline does not read NAPALM's get_bgp_neighbors yet (and no getter shows ECMP paths)",
    "load_balance": "NAPALM getters have no load-balancing configuration",
}


def _load(text: str, ctx: ParseContext) -> dict[str, Any]:
    """A getter's JSON evidence (an object); a getter the driver lacks is ``unavailable``.

    The getter parsers declare text (:func:`~fabline.platforms.base.text_parser`): the evidence
    of a getter the driver lacks is a line of text, not JSON.
    """
    if text.startswith(NOT_IMPLEMENTED):
        raise CommandUnavailable(ctx.platform, ctx.command, ctx.expected, text.strip().splitlines()[0])
    doc = load_json(text, ctx, ctx.expected)  # bounded: size, nesting, digits, finite numbers
    if not isinstance(doc, dict):
        raise ctx.reject(f"a JSON {type(doc).__name__}, not an object")
    return doc


def _require(doc: dict[str, Any], ctx: ParseContext, ok: Any) -> None:
    """Refuse a result whose values do not have this getter's shape (another getter's output)."""
    bad = next((k for k, v in doc.items() if not ok(v)), None)
    if bad is not None:
        raise ctx.reject(f"entry {str(bad)[:40]!r} does not have that shape")


def _obj(value: Any) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one (a getter field of the wrong type is
    read as absent, never dereferenced).
    """
    return value if isinstance(value, dict) else {}


def _number(value: Any) -> float | None:
    """A finite number, or None (NAPALM uses -1 and 0.0 for 'unknown' in places)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


@text_parser("NAPALM get_facts (an object with os_version)")
def parse_get_facts(text: str, ctx: ParseContext) -> StateBody:
    """``get_facts``: ``facts.hostname, vendor, model, serial, os_version, uptime_s``.

    ``os_version`` is what the driver reports (EOS: the internal version, e.g.
    ``4.32.2F-36880683.4322F``; Junos: ``23.4R1.9``).
    """
    doc = _load(text, ctx)
    if "os_version" not in doc or "interface_list" not in doc:
        raise ctx.reject("no os_version / interface_list key")
    facts: dict[str, Any] = {}
    for key, field in (("hostname", "hostname"), ("vendor", "vendor"), ("model", "model"),
                       ("serial_number", "serial"), ("os_version", "os_version")):  # fmt: skip
        value = doc.get(key)
        if isinstance(value, str) and value.strip():
            facts[field] = value.strip()
    uptime = _number(doc.get("uptime"))
    if uptime is not None and uptime >= 0:
        facts["uptime_s"] = int(uptime)
    if not facts:
        raise ctx.reject("no known key")
    return {"facts": cast(Facts, facts)}


@text_parser("NAPALM get_interfaces (interface -> object with is_up, is_enabled)", may_be_empty=True)
def parse_get_interfaces(text: str, ctx: ParseContext) -> StateBody:
    """``get_interfaces``: ``admin_up`` (is_enabled), ``oper_up`` (is_up), ``description``, ``mtu``,
    ``speed_gbps`` (NAPALM's ``speed`` is Mbit/s; 0 or negative = unknown).
    """
    doc = _load(text, ctx)
    _require(doc, ctx, lambda v: isinstance(v, dict) and "is_up" in v and "is_enabled" in v)
    interfaces: dict[str, Any] = {}
    for name, body in doc.items():
        if not isinstance(body, dict):
            continue
        entry: dict[str, Any] = {}
        if isinstance(body.get("is_enabled"), bool):
            entry["admin_up"] = body["is_enabled"]
        if isinstance(body.get("is_up"), bool):
            entry["oper_up"] = body["is_up"]
        if isinstance(body.get("description"), str) and body["description"]:
            entry["description"] = body["description"]
        mtu = _number(body.get("mtu"))
        if mtu is not None and mtu > 0:
            entry["mtu"] = int(mtu)
        speed = _number(body.get("speed"))
        if speed is not None and speed > 0:
            gbps = speed / 1000
            entry["speed_gbps"] = int(gbps) if gbps.is_integer() else gbps
        interfaces[str(name)] = entry
    return {"interfaces": interfaces}


_COUNTERS = ("rx_errors", "tx_errors", "rx_discards", "tx_discards", "rx_octets", "tx_octets")


@text_parser(
    "NAPALM get_interfaces_counters (interface -> counters with rx_octets, tx_octets)", may_be_empty=True
)
def parse_get_interfaces_counters(text: str, ctx: ParseContext) -> StateBody:
    """``get_interfaces_counters``: added ``counters.rx_errors, tx_errors, rx_discards, tx_discards,
    rx_octets, tx_octets`` (NAPALM's -1 = not supported: absent).
    """
    doc = _load(text, ctx)
    _require(doc, ctx, lambda v: isinstance(v, dict) and "rx_octets" in v and "tx_octets" in v)
    interfaces: dict[str, Any] = {}
    for name, body in doc.items():
        if not isinstance(body, dict):
            continue
        counters = {k: int(body[k]) for k in _COUNTERS if isinstance(body.get(k), int) and body[k] >= 0}
        if counters:
            interfaces[str(name)] = {"counters": counters}
    return {"interfaces": interfaces}


@text_parser("NAPALM get_lldp_neighbors_detail (interface -> list of neighbours)", may_be_empty=True)
def parse_get_lldp_neighbors_detail(output: str, ctx: ParseContext) -> StateBody:
    """``get_lldp_neighbors_detail``: ``lldp.device, port, port_description, chassis_id`` (first
    neighbour of a port; a MAC or numeric (ifIndex) port id gives way to the port description).
    """
    doc = _load(output, ctx)
    _require(doc, ctx, lambda v: isinstance(v, list) and all(isinstance(n, dict) for n in v))
    interfaces: dict[str, Any] = {}
    for name, neighbours in doc.items():
        if not isinstance(neighbours, list) or not neighbours or not isinstance(neighbours[0], dict):
            continue
        n = neighbours[0]

        def text(key: str, n: dict[str, Any] = n) -> str | None:
            value = n.get(key)
            return value.strip().strip('"') or None if isinstance(value, str) else None

        # Junos often sends a locally assigned (ifIndex) port id; its description is the port name.
        entry = lldp_entry(
            text("remote_system_name"), text("remote_port"), text("remote_port_description"),
            text("remote_chassis_id"),
            port_id_is_mac=(text("remote_port") or "").isdigit(),
        )  # fmt: skip
        if entry:
            interfaces[str(name)] = {"lldp": entry}
    return {"interfaces": interfaces}


@text_parser("NAPALM get_optics (interface -> physical_channels)", may_be_empty=True)
def parse_get_optics(text: str, ctx: ParseContext) -> StateBody:
    """``get_optics``: ``optics.rx_power_dbm`` and ``tx_power_dbm``, one value per channel (the
    ``instant`` reading, in channel-index order).
    """
    doc = _load(text, ctx)
    _require(doc, ctx, lambda v: isinstance(v, dict) and "physical_channels" in v)
    interfaces: dict[str, Any] = {}
    for name, body in doc.items():
        channels = _obj(_obj(body).get("physical_channels")).get("channel")
        if not isinstance(channels, list):
            continue
        rx: list[float] = []
        tx: list[float] = []
        for ch in sorted(
            (c for c in channels if isinstance(c, dict)), key=lambda c: _number(c.get("index")) or 0
        ):
            state = _obj(ch.get("state"))
            for key, into in (("input_power", rx), ("output_power", tx)):
                value = _number(_obj(state.get(key)).get("instant"))
                if value is not None:
                    into.append(value)
        optics: Optics = {}
        if rx:
            optics["rx_power_dbm"] = rx
        if tx:
            optics["tx_power_dbm"] = tx
        if optics:
            interfaces[str(name)] = {"optics": optics}
    return {"interfaces": interfaces}


@text_parser("NAPALM get_environment (fans, temperature, power, cpu, memory)", may_be_empty=True)
def parse_get_environment(text: str, ctx: ParseContext) -> StateBody:
    """``get_environment``: the added facet ``environment`` (temperatures in C, alerts, fans and
    power supplies failed, CPU and memory use).
    """
    doc = _load(text, ctx)
    if not {"fans", "temperature", "power", "cpu", "memory"} <= set(doc):
        raise ctx.reject("not the five get_environment keys")
    env: dict[str, Any] = {}
    temps = {str(k): _number(v.get("temperature")) for k, v in _obj(doc.get("temperature")).items()
             if isinstance(v, dict)}  # fmt: skip
    known = {k: v for k, v in temps.items() if v is not None}
    if known:
        env["temperature_c"] = known
        env["temperature_max_c"] = max(known.values())
    temp_items = _obj(doc.get("temperature")).items()
    env["temperature_alerts"] = sorted(
        str(k) for k, v in temp_items if isinstance(v, dict) and v.get("is_alert")
    )
    for facet, key in (("fans", "fans_failed"), ("power", "power_supplies_failed")):
        items = doc.get(facet)
        if isinstance(items, dict):
            env[key] = sorted(
                str(k) for k, v in items.items() if isinstance(v, dict) and v.get("status") is False
            )
    cpus = [_number(v.get("%usage")) for v in _obj(doc.get("cpu")).values() if isinstance(v, dict)]
    if any(c is not None for c in cpus):
        env["cpu_pct"] = max(c for c in cpus if c is not None)
    memory = _obj(doc.get("memory"))
    total, used = _number(memory.get("available_ram")), _number(memory.get("used_ram"))
    if total and used is not None and total > 0:
        env["memory_used_pct"] = round(100 * used / total, 1)
    return {"environment": env}


COMMANDS: tuple[Command, ...] = (
    Command("get_facts", parse_get_facts, "facts.hostname, vendor, model, serial, os_version, uptime_s"),
    Command("get_interfaces", parse_get_interfaces, "admin_up, oper_up, description, mtu, speed_gbps"),
    Command(
        "get_interfaces_counters",
        parse_get_interfaces_counters,
        "counters.rx_errors, tx_errors, rx_discards, tx_discards, rx_octets, tx_octets",
    ),
    Command(
        "get_lldp_neighbors_detail",
        parse_get_lldp_neighbors_detail,
        "lldp.device, port, port_description, chassis_id",
    ),
    Command("get_optics", parse_get_optics, "optics.rx_power_dbm, tx_power_dbm (per channel)"),
    Command(
        "get_environment", parse_get_environment, "environment.* (temperatures, fans, power, cpu, memory)"
    ),
)

PLATFORM = PlatformSpec(
    id=Platform.NAPALM,
    description="Any NAPALM driver, through its getters (napalm_driver: junos, eos, iosxr, ...)",
    kind="switch",
    commands=COMMANDS,
    run=RunPlan(
        platform=Platform.NAPALM,
        transport="napalm",
        device_type=None,
        device_commands=tuple(c.template for c in COMMANDS),
    ),
    port_name=lambda index: f"Ethernet{index + 1}",
    # Drivers differ (EOS reports the IP MTU, Junos the frame without FCS): the frame reading is the
    # stricter one for the link MTU check (a 9214 EOS port still clears a 9000-byte host's 9018).
    mtu=MtuSemantics(MtuKind.FRAME, fabric_mtu=9216),
    unsupported=UNSUPPORTED,
)

__all__ = ["COMMANDS", "NOT_IMPLEMENTED", "PLATFORM", "UNSUPPORTED"]
