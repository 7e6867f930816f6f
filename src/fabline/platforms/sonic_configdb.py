"""SONiC CONFIG_DB JSON (``show runningconfiguration all``, ``config_db.json``) to state schema v1.

One parser reads every form the CONFIG_DB takes in the wild, with the same conventions:

* nested: ``{"PORT": {"Ethernet0": {...}}}`` (``config_db.json``, ``show runningconfiguration all``,
  ``sonic-cfggen`` rendered tables, partial documents holding only some tables);
* flat redis-dump: ``{"PORT|Ethernet0": {...}}`` (values may be ``{"type": "hash", "value": {...}}``
  and list fields may carry redis' ``@`` suffix);
* namespace-wrapped: ``{"localhost": {tables}, "asic0": {tables}}`` (multi-ASIC
  ``show runningconfiguration all``; the SONiC YANG test file wraps its tables the same way).
  The namespaces are merged; the first one that defines an entry wins.

Vendor semantics (see ``docs/platforms/sonic.md``):

* ``mtu`` is PORT's ``mtu``: the L2 frame size SONiC configures (9100 on RoCE fabrics).
* The DSCP -> priority chain is ``PORT_QOS_MAP|<port>.dscp_to_tc_map`` -> ``DSCP_TO_TC_MAP``; a port
  without its own binding uses ``PORT_QOS_MAP|global``. SONiC's PFC "priority" is the traffic class
  (``pfc_enable: "3,4"``), so ``dscp_to_priority`` holds the TC. TCs above 7 (dual-ToR tunnel
  classes) are no PFC priority and are left out.
* ``ecn`` is keyed by queue index: ``QUEUE|<port>|<q>.wred_profile`` -> ``WRED_PROFILE`` (green
  thresholds and drop probability). A QUEUE entry without a WRED profile reads as ECN off.
* A document with both ``DEVICE_METADATA`` and ``PORT`` is a complete configuration: a table it
  lacks means nothing is configured (no PFC, no watchdog). In a partial document an absent table
  means unknown, and the fields it would feed are absent.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any, cast

from fabline.platforms.base import Fragment, ParseContext, json_parser
from fabline.platforms.loadbalance import sonic_load_balance
from fabline.platforms.routing import sonic_bgp_config
from fabline.platforms.toolkit import PRIORITY, QUEUE, Domain, expand_ints, mbps_to_gbps
from fabline.state_types import StateBody

EXPECTED = "CONFIG_DB JSON (nested, flat 'TABLE|key' or namespace-wrapped)"

#: Tables this parser reads; a document holding none of them is not a CONFIG_DB we can use.
READ_TABLES = frozenset(
    {
        "PORT",
        "PORT_QOS_MAP",
        "DSCP_TO_TC_MAP",
        "DOT1P_TO_TC_MAP",
        "TC_TO_PRIORITY_GROUP_MAP",
        "TC_TO_QUEUE_MAP",
        "TC_TO_DSCP_MAP",
        "MAP_PFC_PRIORITY_TO_QUEUE",
        "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP",
        "QUEUE",
        "WRED_PROFILE",
        "BUFFER_PG",
        "BUFFER_PROFILE",
        "PFC_WD",
        "DEVICE_METADATA",
        "BGP_NEIGHBOR",
        "SWITCH_HASH",
    }
)

#: Map tables copied to ``qos.maps`` (lower-cased table name -> map name -> {key: int}).
MAP_TABLES = (
    "DSCP_TO_TC_MAP",
    "DOT1P_TO_TC_MAP",
    "TC_TO_PRIORITY_GROUP_MAP",
    "TC_TO_QUEUE_MAP",
    "TC_TO_DSCP_MAP",
    "MAP_PFC_PRIORITY_TO_QUEUE",
    "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP",
)

#: WRED ``ecn`` modes that mark green traffic (RoCE data is green: SONiC does not colour it).
_ECN_MARKS_GREEN = frozenset({"ecn_all", "ecn_green", "ecn_green_yellow", "ecn_green_red"})
_FEC_MODES = frozenset({"rs", "fc", "none", "auto"})
_BOOL_WORDS = {"on": True, "off": False, "true": True, "false": False, "enable": True, "disable": False}

Tables = dict[str, dict[str, dict[str, Any]]]

#: Queue and priority-group indices in CONFIG_DB keys (``Ethernet0|3-4``): some ASICs number
#: multicast queues past 7, none past this.
_INDEX = Domain("queue or priority-group index", 0, 63)


@json_parser(EXPECTED)
def parse_show_runningconfiguration_all(doc: Any, ctx: ParseContext) -> StateBody:
    """Parse a CONFIG_DB JSON document into interfaces, qos and facts.

    Raises:
        ParseError: Not JSON, truncated JSON, or JSON holding none of the tables fabline reads.
    """
    tables = config_tables(doc)
    if not tables:
        raise ctx.reject(f"none of the tables {', '.join(sorted(READ_TABLES))} found")
    frag = _fragment(tables, saved_file=ctx.command.strip().startswith("cat "))
    if not frag:
        raise ctx.reject(f"tables {', '.join(sorted(tables))} hold nothing fabline reads")
    return frag


def config_tables(doc: Any) -> Tables:
    """Normalise any CONFIG_DB form to ``{table: {key: {field: value}}}`` (only tables we read).

    Example:
        >>> config_tables({"PORT|Ethernet0": {"mtu": "9100"}, "VLAN|Vlan1": {}})
        {'PORT': {'Ethernet0': {'mtu': '9100'}}}
        >>> config_tables({"asic0": {"PORT": {"Ethernet0": {"mtu": "9100"}}}})
        {'PORT': {'Ethernet0': {'mtu': '9100'}}}
    """
    if not isinstance(doc, dict):
        return {}
    if any(isinstance(k, str) and "|" in k and k.split("|", 1)[0] in READ_TABLES for k in doc):
        return _from_flat(doc)
    if any(k in READ_TABLES for k in doc):
        return _from_nested(doc)
    # A wrapper: each value is itself a CONFIG_DB (multi-ASIC namespaces, the YANG test file).
    merged: Tables = {}
    for value in doc.values():
        if isinstance(value, dict) and any(k in READ_TABLES for k in value):
            for table, entries in _from_nested(value).items():
                into = merged.setdefault(table, {})
                for key, fields in entries.items():
                    into.setdefault(key, fields)
    return merged


def _from_nested(doc: Mapping[str, Any]) -> Tables:
    tables: Tables = {}
    for table, entries in doc.items():
        if table in READ_TABLES and isinstance(entries, dict):
            tables[table] = {str(k): _fields(v) for k, v in entries.items() if isinstance(v, dict)}
    return tables


def _from_flat(doc: Mapping[str, Any]) -> Tables:
    tables: Tables = {}
    for full_key, value in doc.items():
        table, _, key = str(full_key).partition("|")
        if table not in READ_TABLES or not isinstance(value, dict):
            continue
        # sonic-db-dump writes {"type": "hash", "value": {...}}; redis-dump style writes the hash itself.
        if value.get("type") == "hash" and isinstance(value.get("value"), dict):
            value = value["value"]
        tables.setdefault(table, {})[key] = _fields(value)
    return tables


def _fields(entry: Mapping[str, Any]) -> dict[str, Any]:
    # Flat dumps mark list fields with a trailing '@' ("ports@"); the field is the same.
    return {str(k).rstrip("@"): v for k, v in entry.items()}


def _ref(value: Any) -> str:
    """The object name of a CONFIG_DB reference, in old (``[TABLE|name]``) or new (``name``) form.

    Example:
        >>> _ref("[DSCP_TO_TC_MAP|AZURE]"), _ref("AZURE")
        ('AZURE', 'AZURE')
    """
    text = str(value).strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1].split("|", 1)[-1]
    return text


def _int(value: Any) -> int | None:
    text = str(value).strip()
    # A device integer has at most 20 digits; longer is not a value (and int() would refuse it).
    if len(text) > 20:
        return None
    try:
        return int(text)
    except ValueError:
        return None


def _number(value: Any) -> int | float | None:
    try:
        num = float(str(value).strip()[:40])
    except ValueError:
        return None
    if not math.isfinite(num):
        return None
    return int(num) if num.is_integer() else num


def _int_map(entries: Mapping[str, Any]) -> dict[int, int]:
    """A QoS map's entries as ints (non-numeric keys or values are not map entries)."""
    out: dict[int, int] = {}
    for key, raw in entries.items():
        k, v = _int(key), _int(raw)
        if k is not None and v is not None and k >= 0 and v >= 0:
            out[k] = v
    return out


def _port_index_keys(keys: Iterable[str], hostname: str | None) -> Iterable[tuple[str, str, str]]:
    """Yield (original key, port, index) for keys like ``Ethernet0|3``, ``Ethernet0,Ethernet4|3-4``.

    VOQ chassis keys name a system port (``host|asic|Ethernet0|3``): only the local host's are
    this device's ports, and without a known hostname none can be attributed.
    """
    for key in keys:
        parts = key.split("|")
        if len(parts) == 2:
            ports, idx = parts
        elif len(parts) == 4 and hostname and parts[0].lower() == hostname.lower():
            ports, idx = parts[2], parts[3]
        else:
            continue
        for port in ports.split(","):
            port = port.strip()
            if port:
                for i in sorted(set(expand_ints(idx, _INDEX))):
                    yield key, port, str(i)


def wred_profile_state(profile: Mapping[str, Any]) -> dict[str, Any]:
    """What one WRED_PROFILE says about ECN on the queues it is bound to.

    ``enabled`` is whether green traffic is ECN-marked (SAI's default mark mode is none, so a
    profile without ``ecn`` does not mark, nor one with ``wred_green_enable: false``);
    thresholds and probability are the green ones.

    Example:
        >>> wred_profile_state({"ecn": "ecn_all", "green_min_threshold": "1048576",
        ...                     "green_max_threshold": "2097152", "green_drop_probability": "5"})
        {'ecn_mode': 'ecn_all', 'enabled': True, 'min_bytes': 1048576, 'max_bytes': 2097152, \
'probability_pct': 5}
        >>> wred_profile_state({"ecn": "ecn_all", "wred_green_enable": "false"})["enabled"]
        False
    """
    mode = str(profile.get("ecn", "ecn_none")).strip()
    # ECN marks where WRED would drop: with green WRED explicitly off nothing green is marked.
    green_wred_off = str(profile.get("wred_green_enable", "")).strip().lower() == "false"
    out: dict[str, Any] = {"ecn_mode": mode, "enabled": mode in _ECN_MARKS_GREEN and not green_wred_off}
    for field, name in (("green_min_threshold", "min_bytes"), ("green_max_threshold", "max_bytes")):
        value = _int(profile.get(field, ""))
        if value is not None:
            out[name] = value
    prob = _number(profile.get("green_drop_probability", ""))
    if prob is not None:
        out["probability_pct"] = prob
    return out


def _fragment(t: Tables, saved_file: bool = False) -> StateBody:
    complete = "DEVICE_METADATA" in t and "PORT" in t
    meta = t.get("DEVICE_METADATA", {}).get("localhost", {})
    hostname = meta.get("hostname")
    ifaces: dict[str, dict[str, Any]] = {}

    def iface(name: str) -> dict[str, Any]:
        return ifaces.setdefault(name, {})

    for port_name, port in t.get("PORT", {}).items():
        iface(port_name).update(_port_state(port))
    _port_qos(t, complete, iface)
    _queue_ecn(t, hostname, iface)
    pgs = t.get("BUFFER_PG", {})
    for key, port_name, pg in _port_index_keys(pgs, hostname):
        profile = pgs[key].get("profile")
        if profile is not None:
            iface(port_name).setdefault("buffer_pg", {})[pg] = _ref(profile)

    for body in ifaces.values():
        for key in ("ecn", "buffer_pg"):
            if key in body:
                body[key] = dict(sorted(body[key].items(), key=lambda item: int(item[0])))

    qos: dict[str, Any] = {}
    watchdog = {} if _watchdog_set_at_boot(t, saved_file) else _pfc_watchdog(t, complete, iface)
    if watchdog:
        qos["pfc_watchdog"] = watchdog
    if meta.get("buffer_model"):
        qos["buffer_mode"] = str(meta["buffer_model"])
    copied = {
        table.lower(): {
            name: {str(k): v for k, v in sorted(_int_map(entries).items())}
            for name, entries in t[table].items()
        }
        for table in MAP_TABLES
        if t.get(table)
    }
    if copied:
        qos["maps"] = copied
    wred = t.get("WRED_PROFILE", {})
    if wred:
        qos["wred_profiles"] = {name: wred_profile_state(p) for name, p in wred.items()}
    if t.get("BUFFER_PROFILE"):
        qos["buffer_profiles"] = {name: _buffer_profile(p) for name, p in t["BUFFER_PROFILE"].items()}

    frag: Fragment = {}
    facts = {
        out: str(meta[key])
        for key, out in (("hostname", "hostname"), ("hwsku", "hwsku"), ("platform", "sonic_platform"))
        if meta.get(key)
    }
    if facts:
        frag["facts"] = facts
    if qos:
        frag["qos"] = qos
    if ifaces:
        frag["interfaces"] = ifaces
    frag.update(sonic_bgp_config(meta, t.get("BGP_NEIGHBOR", {})))
    frag.update(sonic_load_balance(t.get("SWITCH_HASH", {})))
    return cast(StateBody, frag)


def _port_qos(t: Tables, complete: bool, iface: Callable[[str], dict[str, Any]]) -> None:
    """trust, dscp_to_priority and pfc_priorities from PORT_QOS_MAP and DSCP_TO_TC_MAP."""
    qos_map = t.get("PORT_QOS_MAP", {})
    dscp_maps = t.get("DSCP_TO_TC_MAP", {})
    global_binding = qos_map.get("global", {})
    bindings: dict[str, Mapping[str, Any]] = {}
    for key, entry in qos_map.items():
        if key != "global":
            for port in key.split(","):
                if port.strip():
                    bindings[port.strip()] = entry
    ports = set(bindings)
    if complete or qos_map:
        # The global binding (and, in a complete document, "no binding") applies to every port.
        ports |= set(t.get("PORT", {}))
    # Every port names the same one or two maps: each is read once (a copy per port, as before).
    priorities: dict[str, dict[str, int] | None] = {}
    for port in sorted(ports):
        body = iface(port)
        binding: Mapping[str, Any] = bindings.get(port, {})
        dscp_map = binding.get("dscp_to_tc_map") or global_binding.get("dscp_to_tc_map")
        if dscp_map:
            name = _ref(dscp_map)
            body["trust"] = "dscp"
            body["dscp_to_tc_map"] = name
            if name not in priorities:
                table = dscp_maps.get(name)
                priorities[name] = (
                    None
                    if table is None
                    else {str(d): v for d, v in sorted(_int_map(table).items()) if v <= 7 and d <= 63}
                )
            mapped = priorities[name]
            if mapped is not None:
                body["dscp_to_priority"] = dict(mapped)
        elif binding.get("dot1p_to_tc_map") or global_binding.get("dot1p_to_tc_map"):
            body["trust"] = "pcp"
        if port in bindings or complete:
            body["pfc_priorities"] = sorted(set(expand_ints(str(binding.get("pfc_enable", "")), PRIORITY)))


def _queue_ecn(t: Tables, hostname: str | None, iface: Callable[[str], dict[str, Any]]) -> None:
    """Per-queue ``ecn`` from QUEUE -> WRED_PROFILE (a queue without a profile does not mark)."""
    wred = t.get("WRED_PROFILE", {})
    queue = t.get("QUEUE", {})
    for key, port, q in _port_index_keys(queue, hostname):
        profile_ref = queue[key].get("wred_profile")
        if profile_ref:
            profile = _ref(profile_ref)
            state: dict[str, Any] = {"profile": profile}
            if profile in wred:
                state.update(wred_profile_state(wred[profile]))
        else:
            state = {"enabled": False}
        if int(q) <= QUEUE.high:  # the state keys ECN by the 8 queues PFC can pause
            iface(port).setdefault("ecn", {})[q] = state


def _port_state(port: Mapping[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = {}
    admin = str(port.get("admin_status", "")).strip().lower()
    if admin in ("up", "down"):
        body["admin_up"] = admin == "up"
    mtu = _int(port.get("mtu", ""))
    if mtu is not None:
        body["mtu"] = mtu
    speed = _number(port.get("speed", ""))
    if speed is not None:
        body["speed_gbps"] = mbps_to_gbps(speed)  # CONFIG_DB speed is in Mb/s
    fec = str(port.get("fec", "")).strip().lower()
    if fec in _FEC_MODES:
        body["fec"] = fec
    autoneg = _BOOL_WORDS.get(str(port.get("autoneg", "")).strip().lower())
    if autoneg is not None:
        body["autoneg"] = autoneg
    asym = _BOOL_WORDS.get(str(port.get("pfc_asym", "")).strip().lower())
    if asym is not None:
        body["pfc_asymmetric"] = asym
    if str(port.get("description", "")).strip():
        body["description"] = str(port["description"]).strip()
    if str(port.get("alias", "")).strip():
        body["alias"] = str(port["alias"]).strip()
    return body


def _watchdog_set_at_boot(t: Tables, saved_file: bool) -> bool:
    """Whether the saved file cannot tell the watchdog state.

    With ``default_pfcwd_status: enable``, ``pfcwd start_default`` writes PFC_WD entries for the
    PFC-enabled ports into the running CONFIG_DB at boot; a saved ``config_db.json`` without
    them says nothing about the running watchdog.
    """
    meta = t.get("DEVICE_METADATA", {}).get("localhost", {})
    return (
        saved_file
        and str(meta.get("default_pfcwd_status", "")).strip().lower() == "enable"
        and not any(key.upper() != "GLOBAL" for key in t.get("PFC_WD", {}))
        and any(entry.get("pfc_enable") for entry in t.get("PORT_QOS_MAP", {}).values())
    )


def _pfc_watchdog(t: Tables, complete: bool, iface: Callable[[str], dict[str, Any]]) -> dict[str, Any]:
    """Per-port ``pfc_watchdog`` (added field) and the device summary ``qos.pfc_watchdog``."""
    if "PFC_WD" not in t and not complete:
        return {}
    table = t.get("PFC_WD", {})
    per_port: dict[str, dict[str, Any]] = {}
    for key, entry in table.items():
        if key.upper() == "GLOBAL":
            continue
        wd: dict[str, Any] = {"enabled": True}
        for field, name in (("detection_time", "detection_ms"), ("restoration_time", "restoration_ms")):
            value = _int(entry.get(field, ""))
            if value is not None:
                wd[name] = value
        if entry.get("action"):
            wd["action"] = str(entry["action"])
        for port in key.split(","):
            if port.strip():
                per_port[port.strip()] = wd
    if complete:
        for port in t.get("PORT", {}):
            per_port.setdefault(port, {"enabled": False})
    for port, wd in per_port.items():
        iface(port)["pfc_watchdog"] = dict(wd)
    summary = watchdog_summary(per_port)
    glob = next((v for k, v in table.items() if k.upper() == "GLOBAL"), {})
    poll = _int(glob.get("POLL_INTERVAL", ""))
    if poll is not None:
        summary["poll_interval_ms"] = poll
    brs = _BOOL_WORDS.get(str(glob.get("BIG_RED_SWITCH", "")).strip().lower())
    if brs is not None:
        summary["big_red_switch"] = brs
    return summary


def watchdog_summary(per_port: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The device's ``qos.pfc_watchdog`` from per-port watchdogs: enabled if any port has one.

    Detection/restoration time and action are given when every enabled port agrees.

    Example:
        >>> watchdog_summary({"Ethernet0": {"enabled": True, "detection_ms": 200, "action": "drop"},
        ...                   "Ethernet4": {"enabled": True, "detection_ms": 400, "action": "drop"}})
        {'enabled': True, 'action': 'drop'}
    """
    summary: dict[str, Any] = {"enabled": any(wd.get("enabled") for wd in per_port.values())}
    active = [wd for wd in per_port.values() if wd.get("enabled")]
    for name in ("detection_ms", "restoration_ms", "action"):
        values = {wd.get(name) for wd in active}
        if len(values) == 1 and None not in values:
            summary[name] = values.pop()
    return summary


def _buffer_profile(profile: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if profile.get("pool"):
        out["pool"] = _ref(profile["pool"])
    for field in ("size", "xon", "xoff", "xon_offset", "static_th"):
        value = _int(profile.get(field, ""))
        if value is not None:
            out[f"{field}_bytes"] = value
    if "dynamic_th" in profile:
        value = _int(profile["dynamic_th"])
        if value is not None:
            out["dynamic_th"] = value
    return out
