"""Parsers of the SONiC ``show`` commands (sonic-utilities text output) to state schema v1.

The sonic-utilities tables are tabulate output: a header line underlined by dash runs. Columns
are right- or left-aligned and a wide value may overhang its dash run, so cells are assigned by
overlap with the dash runs rather than cut at fixed offsets (see :func:`dash_tables`).

A captured session may start with the prompt and command echo (``admin@sonic:~$ show ...``); it
is dropped, and a second prompt ends this command's output (what follows belongs to another
command). Documentation placeholders (``...``, ``<continues ...>``) are skipped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, cast

from fabline.platforms.base import ParseContext, text_parser
from fabline.platforms.loadbalance import sonic_switch_table
from fabline.platforms.sonic_configdb import watchdog_summary, wred_profile_state
from fabline.platforms.toolkit import (
    DASHES,
    PRIORITY,
    Table,
    add_neighbor,
    dash_tables,
    expand_ints,
    lldp_entry,
    speed_gbps,
    uptime_seconds,
)
from fabline.state_types import Facts, Interface, PfcWatchdog, PortPfcWatchdog, StateBody, WredProfile

_PROMPT = re.compile(r"^\s*[\w.\-]+@[\w.\-]+:\S*\s*[$#]")
_IFNAME = re.compile(r"^[A-Za-z][\w./:\-]*$")
#: A port heading a transceiver block ends in its number (``Ethernet0``, ``Ethernet-BP4``).
_PORTNAME = re.compile(r"^[A-Za-z][\w./\-]*\d$")
_ON_OFF = {"on": True, "off": False, "enabled": True, "disabled": False, "true": True, "false": False}
_FEC = frozenset({"rs", "fc", "none", "auto"})


# ---------------------------------------------------------------------------------------------
# Text helpers
# ---------------------------------------------------------------------------------------------


def command_lines(output: str) -> list[str]:
    """The lines of one command's output: leading prompt/echo dropped, cut at the next prompt.

    Example:
        >>> command_lines("admin@sonic:~$ show x\\nA\\n\\nadmin@sonic:~$ show y\\nB")
        ['A', '']
    """
    out: list[str] = []
    for line in output.splitlines():
        if _PROMPT.match(line):
            if any(item.strip() for item in out):
                break
            out = []
            continue
        out.append(line)
    return out


def _table(text: str, ctx: ParseContext, columns: tuple[str, ...]) -> Table:
    """The rows of every table holding all the given columns.

    Multi-ASIC output prints one table per namespace; the first column named must hold interface
    names.
    """
    tables = [t for t in dash_tables(command_lines(text)) if all(c in t.headers for c in columns)]
    if not tables:
        raise ctx.reject("no table with columns " + ", ".join(repr(c) for c in columns))
    key = columns[0]
    rows = [row for table in tables for row in table.rows]
    for row in rows:
        if not _IFNAME.match(row[key]):
            raise ctx.reject(f"row {row[key]!r} is not an interface name")
    return Table(tables[0].headers, tuple(rows))


def _na(value: str) -> bool:
    return value.strip() in ("", "N/A", "NA", "-")


def _count(value: str) -> int | None:
    """A counter cell (``1,200``), or None for N/A.

    Example:
        >>> _count("32,414,365,028"), _count("N/A")
        (32414365028, None)
    """
    text = value.replace(",", "").strip()
    return int(text) if text.isdigit() else None


def _interfaces(frag: dict[str, dict[str, Any]]) -> StateBody:
    return {"interfaces": cast(dict[str, Interface], frag)}


# ---------------------------------------------------------------------------------------------
# show version / show platform summary
# ---------------------------------------------------------------------------------------------

_FACT_KEYS = {
    "SONiC Software Version": "os_version",
    "Model Number": "model",
    "Serial Number": "serial",
    "HwSKU": "hwsku",
    "ASIC": "asic",
    "Platform": "sonic_platform",
    "Distribution": "distribution",
    "Kernel": "kernel",
}
#: The uptime part of an ``uptime`` line: ``16:13:10 up 62 days, 17:32,  1 user`` (the clock before
#: ``up`` is the time of day, the ``N user`` after it is not time).
_UPTIME = re.compile(r"\bup\s+(.*?)(?:,\s*\d+\s+users?\b|$)", re.IGNORECASE)


def sonic_uptime(text: str) -> int | None:
    """Seconds of an ``uptime`` line as ``show version`` prints it.

    Example:
        >>> sonic_uptime("16:13:10 up 62 days, 17:32,  1 user"), sonic_uptime("14:40:15 up 3 min")
        (5419920, 180)
    """
    m = _UPTIME.search(text[:200])
    return uptime_seconds(m.group(1)) if m else None


def _key_values(lines: list[str], stop: str | None = None) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in lines:
        if stop and line.startswith(stop):
            break
        key, sep, value = line.partition(":")
        if sep and key.strip() and not line.startswith(" "):
            out.setdefault(key.strip(), value.strip())
    return out


def _facts(values: Mapping[str, str]) -> dict[str, Any]:
    facts: dict[str, Any] = {
        name: values[key] for key, name in _FACT_KEYS.items() if values.get(key) and not _na(values[key])
    }
    if "Uptime" in values:
        seconds = sonic_uptime(values["Uptime"])
        if seconds is not None:
            facts["uptime_s"] = seconds
    return facts


@text_parser("a 'SONiC Software Version:' line")
def parse_show_version(text: str, ctx: ParseContext) -> StateBody:
    """``show version``: facts os_version, model, serial, hwsku, asic, sonic_platform, uptime_s."""
    values = _key_values(command_lines(text), stop="Docker images")
    if "SONiC Software Version" not in values:
        raise ctx.reject()
    return {"facts": cast(Facts, _facts(values))}


@text_parser("'Platform:' and 'HwSKU:' lines")
def parse_show_platform_summary(text: str, ctx: ParseContext) -> StateBody:
    """``show platform summary``: facts model, serial, hwsku, asic, sonic_platform."""
    values = _key_values(command_lines(text))
    if "Platform" not in values or "HwSKU" not in values:
        raise ctx.reject()
    if "SONiC Software Version" in values:
        raise ctx.reject("this is 'show version' output")
    return {"facts": cast(Facts, _facts(values))}


# ---------------------------------------------------------------------------------------------
# show interfaces status / description / fec status / autoneg status
# ---------------------------------------------------------------------------------------------


@text_parser("an interface status table")
def parse_show_interfaces_status(text: str, ctx: ParseContext) -> StateBody:
    """``show interfaces status``: admin_up, oper_up, mtu, speed_gbps, fec, alias, pfc_asymmetric.

    ``mtu`` is the L2 frame size SONiC configures; ``fec`` is the FEC column (configured mode;
    older releases have no such column). ``transceiver_type`` is the Type column.
    """
    table = _table(text, ctx, ("Interface", "Oper", "Admin", "MTU"))
    out: dict[str, dict[str, Any]] = {}
    for row in table.rows:
        body: dict[str, Any] = {}
        for col, name in (("Admin", "admin_up"), ("Oper", "oper_up")):
            if row[col] in ("up", "down"):
                body[name] = row[col] == "up"
        if row["MTU"].isdigit():
            body["mtu"] = int(row["MTU"])
        speed = speed_gbps(row.get("Speed", ""))
        if speed is not None:
            body["speed_gbps"] = speed
        if row.get("FEC", "").lower() in _FEC:
            body["fec"] = row["FEC"].lower()
        if not _na(row.get("Alias", "")):
            body["alias"] = row["Alias"]
        asym = _ON_OFF.get(row.get("Asym PFC", "").lower())
        if asym is not None:
            body["pfc_asymmetric"] = asym
        if not _na(row.get("Type", "")):
            body["transceiver_type"] = row["Type"]
        out[row["Interface"]] = body
    return _interfaces(out)


@text_parser("an interface description table")
def parse_show_interfaces_description(text: str, ctx: ParseContext) -> StateBody:
    """``show interfaces description``: description, admin_up, oper_up, alias."""
    table = _table(text, ctx, ("Interface", "Description"))
    out: dict[str, dict[str, Any]] = {}
    for row in table.rows:
        body: dict[str, Any] = {}
        for col, name in (("Admin", "admin_up"), ("Oper", "oper_up")):
            if row.get(col) in ("up", "down"):
                body[name] = row[col] == "up"
        if not _na(row.get("Alias", "")):
            body["alias"] = row["Alias"]
        if row["Description"].strip():
            body["description"] = row["Description"]
        out[row["Interface"]] = body
    return _interfaces(out)


@text_parser("a FEC status table")
def parse_show_interfaces_fec_status(text: str, ctx: ParseContext) -> StateBody:
    """``show interfaces fec status``: fec (operational, else configured) and fec_admin.

    The operational mode wins where the port reports one; ``fec_admin`` records the configured
    mode (``auto`` means the ASIC negotiates: the operational column tells the outcome).
    """
    table = _table(text, ctx, ("Interface", "FEC Oper", "FEC Admin"))
    out: dict[str, dict[str, Any]] = {}
    for row in table.rows:
        body: dict[str, Any] = {}
        oper, admin = row["FEC Oper"].lower(), row["FEC Admin"].lower()
        if admin in _FEC:
            body["fec_admin"] = admin
        if oper in _FEC:
            body["fec"] = oper
        elif admin in _FEC:
            body["fec"] = admin
        out[row["Interface"]] = body
    return _interfaces(out)


_FLAP_TIME = "%a %b %d %H:%M:%S %Y"


def flap_time(cell: str) -> float | None:
    """A ``show interfaces flap`` timestamp (UTC, ``Sat Feb 21 11:00:41 2026``) as a UNIX time; None for ``Never``.

    Raises:
        ValueError: Neither ``Never`` nor that form.

    Example:
        >>> flap_time("Sat Feb 21 11:00:41 2026"), flap_time("Never")
        (1771671641.0, None)
    """
    text = " ".join(cell.split())
    if text in ("Never", "N/A", ""):
        return None
    return datetime.strptime(text, _FLAP_TIME).replace(tzinfo=UTC).timestamp()


@text_parser("an interface flap table (Interface, Flap Count, Link Down/Up TimeStamp(UTC))")
def parse_show_interfaces_flap(text: str, ctx: ParseContext) -> StateBody:
    """``show interfaces flap`` (SONiC 202505+): the last link change -> ``last_flap_epoch_s``.

    The later of the port's last link-down and link-up times (APPL_DB ``PORT_TABLE``
    ``last_down_time``/``last_up_time``, printed in UTC); ``Never`` for both: no field. The
    ``Flap Count`` column is not read: the kernel's ``carrier_changes`` already feeds
    ``counters.link_flaps`` on every release, and two counters of one name would disagree.
    """
    down, up = "Link Down TimeStamp(UTC)", "Link Up TimeStamp(UTC)"
    table = _table(text, ctx, ("Interface", "Flap Count", down, up))
    out: dict[str, dict[str, Any]] = {}
    for row in table.rows:
        try:
            times = [t for t in (flap_time(row[down]), flap_time(row[up])) if t is not None]
        except ValueError:
            raise ctx.reject(f"{row['Interface']}: unreadable time {row[down]!r} / {row[up]!r}") from None
        out[row["Interface"]] = {"last_flap_epoch_s": max(times)} if times else {}
    return _interfaces(out)


@text_parser("an autoneg status table")
def parse_show_interfaces_autoneg_status(text: str, ctx: ParseContext) -> StateBody:
    """``show interfaces autoneg status``: autoneg (``N/A``: the port does not report it)."""
    table = _table(text, ctx, ("Interface", "Auto-Neg Mode"))
    out: dict[str, dict[str, Any]] = {}
    for row in table.rows:
        body: dict[str, Any] = {}
        mode = _ON_OFF.get(row["Auto-Neg Mode"].lower())
        if mode is not None:
            body["autoneg"] = mode
        out[row["Interface"]] = body
    return _interfaces(out)


# ---------------------------------------------------------------------------------------------
# LLDP
# ---------------------------------------------------------------------------------------------


@text_parser("an LLDP neighbour table", may_be_empty=True)
def parse_show_lldp_table(text: str, ctx: ParseContext) -> StateBody:
    """``show lldp table``: lldp.device, lldp.port, lldp.port_description.

    A second neighbour on one port (a hub, a miscabled host) goes to ``lldp.other_neighbors``.
    """
    table = _table(text, ctx, ("LocalPort", "RemoteDevice", "RemotePortID"))
    out: dict[str, dict[str, Any]] = {}
    for row in table.rows:
        lldp = lldp_entry(row["RemoteDevice"], row["RemotePortID"], row.get("RemotePortDescr", ""))
        add_neighbor(out.setdefault(row["LocalPort"], {}), lldp)
    return _interfaces(out)


_LLDP_ID = re.compile(r"^(?:mac|ifname|local|ifalias|ip|net|unhandled)\s+(.*)$")


@text_parser("lldpctl neighbour blocks ('Interface: ..., via: LLDP')", may_be_empty=True)
def parse_show_lldp_neighbors(text: str, ctx: ParseContext) -> StateBody:
    """``show lldp neighbors`` (lldpctl): lldp device, port, port_description, chassis_id."""
    lines = command_lines(text)
    out: dict[str, dict[str, Any]] = {}
    current: dict[str, str] | None = None
    blocks: list[tuple[str, dict[str, str]]] = []
    for line in lines:
        m = re.match(r"^Interface:\s+([^,\s]+),", line)
        if m:
            current = {}
            blocks.append((m.group(1), current))
            continue
        key, sep, value = line.strip().partition(":")
        if current is not None and sep and key in ("ChassisID", "SysName", "PortID", "PortDescr"):
            current.setdefault(key, value.strip())
    if not blocks:
        raise ctx.reject()
    for port, info in blocks:
        ids = {}
        for key in ("ChassisID", "PortID"):
            m = _LLDP_ID.match(info.get(key, ""))
            ids[key] = m.group(1).strip() if m else info.get(key, "")
        lldp = lldp_entry(
            info.get("SysName", ""),
            ids["PortID"],
            info.get("PortDescr", ""),
            ids["ChassisID"],
            port_id_is_mac=info.get("PortID", "").startswith("mac "),
        )
        add_neighbor(out.setdefault(port, {}), lldp)
    return _interfaces(out)


# ---------------------------------------------------------------------------------------------
# PFC, PFC watchdog, ECN
# ---------------------------------------------------------------------------------------------


@text_parser("a PFC priority table")
def parse_show_pfc_priority(text: str, ctx: ParseContext) -> StateBody:
    """``show pfc priority``: pfc_priorities (PORT_QOS_MAP pfc_enable; ``N/A`` means none)."""
    table = _table(text, ctx, ("Interface", "Lossless priorities"))
    out: dict[str, dict[str, Any]] = {}
    for row in table.rows:
        value = row["Lossless priorities"]
        out[row["Interface"]] = {
            "pfc_priorities": [] if _na(value) else sorted(set(expand_ints(value, PRIORITY)))
        }
    return _interfaces(out)


@text_parser("a PFC asymmetric table")
def parse_show_pfc_asymmetric(text: str, ctx: ParseContext) -> StateBody:
    """``show pfc asymmetric``: pfc_asymmetric."""
    table = _table(text, ctx, ("Interface", "Asymmetric"))
    out: dict[str, dict[str, Any]] = {}
    for row in table.rows:
        value = _ON_OFF.get(row["Asymmetric"].lower())
        out[row["Interface"]] = {} if value is None else {"pfc_asymmetric": value}
    return _interfaces(out)


@text_parser("a PFC watchdog config table (PORT, ACTION, DETECTION TIME)")
def parse_show_pfcwd_config(text: str, ctx: ParseContext) -> StateBody:
    """``show pfcwd config``: per-port pfc_watchdog and the device's qos.pfc_watchdog.

    Only ports with a PFC_WD entry are listed (sonic-utilities ``pfcwd/main.py``), so
    ``enabled`` is true on each row and the device is enabled when any row exists. A restoration
    time of ``infinite`` leaves ``restoration_ms`` absent. The preamble gives the polling interval
    and the big red switch.
    """
    table = _table(text, ctx, ("PORT", "ACTION", "DETECTION TIME"))
    lines = command_lines(text)
    per_port: dict[str, dict[str, Any]] = {}
    for row in table.rows:
        wd: dict[str, Any] = {"enabled": True, "action": row["ACTION"]}
        for col, name in (("DETECTION TIME", "detection_ms"), ("RESTORATION TIME", "restoration_ms")):
            value = _count(row.get(col, ""))
            if value is not None:
                wd[name] = value
        per_port[row["PORT"]] = wd
    summary = watchdog_summary(per_port)
    polls = {int(m.group(1)) for ln in lines if (m := re.match(r"Changed polling interval to (\d+)ms", ln))}
    if len(polls) == 1:
        summary["poll_interval_ms"] = polls.pop()
    brs = {m.group(1) for ln in lines if (m := re.match(r"BIG_RED_SWITCH status is (\w+)", ln))}
    if len(brs) == 1:
        summary["big_red_switch"] = brs.pop().lower() == "enable"
    return {
        "qos": {"pfc_watchdog": cast(PfcWatchdog, summary)},
        "interfaces": {port: {"pfc_watchdog": cast(PortPfcWatchdog, wd)} for port, wd in per_port.items()},
    }


# redis-cli on a terminal (netmiko's SSH session has one) numbers each reply item and quotes it.
_REDIS_ITEM = re.compile(r'^\s*\d{1,6}\) "((?:[^"\\]|\\.)*)"\s*$')
_REDIS_EMPTY = ("(empty array)", "(empty list or set)")
_HASH_FIELD = re.compile(r"[a-z][a-z0-9_]{0,63}")


@text_parser(
    "a redis-cli HGETALL reply (field/value items) of APPL_DB SWITCH_TABLE:switch", may_be_empty=True
)
def parse_redis_hgetall_switch_table(text: str, ctx: ParseContext) -> StateBody:
    """``redis-cli -n 0 HGETALL SWITCH_TABLE:switch``: the ECMP hash seed orchagent programs.

    APPL_DB (redis database 0) ``SWITCH_TABLE:switch`` holds what orchagent's ``switch.json``
    set at start-up (``ecmp_hash_seed``, ``lag_hash_seed``, ``fdb_aging_time``, ...): the seed is
    the one ECMP input CONFIG_DB does not show (:func:`~fabline.platforms.loadbalance.sonic_switch_table`).
    On a terminal redis-cli prints ``1) "ecmp_hash_seed"`` / ``2) "0"`` (a public capture in a SONiC
    design document); piped, the bare items one per line: both are read. A missing key prints
    ``(empty array)`` (older redis ``(empty list or set)``) or nothing: no seed, not an error.
    """
    lines = [line for line in command_lines(text) if line.strip()]
    if len(lines) == 1 and lines[0].strip() in _REDIS_EMPTY:
        return {}
    numbered = [_REDIS_ITEM.match(line) for line in lines]
    if all(numbered):
        items = [m[1].replace('\\"', '"') for m in numbered if m]
    elif not any(numbered):
        items = [line.strip() for line in lines]
    else:
        raise ctx.reject("numbered and bare reply lines mixed")
    if not items or len(items) % 2:
        raise ctx.reject(f"{len(items)} reply items: not field/value pairs")
    fields = dict(zip(items[::2], items[1::2], strict=True))
    if not all(_HASH_FIELD.fullmatch(k) for k in fields):
        raise ctx.reject("a field name that is not a SWITCH_TABLE field")
    return sonic_switch_table(fields)


@text_parser("a PFC watchdog stats table (QUEUE, STATUS, STORM DETECTED/RESTORED)", may_be_empty=True)
def parse_show_pfcwd_stats(text: str, ctx: ParseContext) -> StateBody:
    """``show pfcwd stats``: per-queue PFC storm counts and the queues in storm now.

    Feeds the added ``counters.pfcwd_storms_detected`` / ``pfcwd_storms_restored`` (queue ->
    cumulative count, from ``STORM DETECTED/RESTORED``) and ``pfcwd_stormed_queues`` (queues whose
    status is ``stormed``). sonic-utilities leaves out queues whose counters are all zero (unless
    ``-e``), so a queue missing here had no storm, and a switch that never had one prints the
    header alone (no storm anywhere, not an error). The output marks ``qos.pfc_watchdog.
    stats_collected``: the finalize hook (:func:`~fabline.platforms.toolkit.fill_storm_counters`)
    gives every port left out ``pfcwd_storms_detected: {}`` and ``pfcwd_stormed_queues: []``.
    """
    tables = [
        t
        for t in dash_tables(command_lines(text))
        if {"QUEUE", "STATUS", "STORM DETECTED/RESTORED"} <= set(t.headers)
    ]
    if not tables:
        raise ctx.reject()
    out: dict[str, dict[str, Any]] = {}
    for row in (r for t in tables for r in t.rows):
        port, sep, queue = row["QUEUE"].rpartition(":")
        if not sep or not _IFNAME.match(port) or not queue.isdigit():
            raise ctx.reject(f"queue {row['QUEUE']!r} is not PORT:QUEUE")
        body = out.setdefault(port, {})
        detected, _, restored = row["STORM DETECTED/RESTORED"].partition("/")
        counters = body.setdefault("counters", {})
        for name, cell in (("pfcwd_storms_detected", detected), ("pfcwd_storms_restored", restored)):
            value = _count(cell)
            if value is not None:
                counters.setdefault(name, {})[queue] = value
        stormed = body.setdefault("pfcwd_stormed_queues", [])
        if row["STATUS"].lower() == "stormed":
            stormed.append(int(queue))
    for body in out.values():
        body["pfcwd_stormed_queues"] = sorted(body["pfcwd_stormed_queues"])
    return {"interfaces": cast(dict[str, Interface], out), "qos": {"pfc_watchdog": {"stats_collected": True}}}


# Any WRED_PROFILE field marks a WRED profile (one with only red thresholds, as in the SONiC
# Command Reference's 'show ecn', is a profile that does not mark green traffic); buffer profiles,
# printed in the same layout by 'show mmu', have none of them.
_WRED_FIELDS = frozenset(
    {"ecn", "wred_green_enable", "wred_yellow_enable", "wred_red_enable"}
    | {
        f"{color}_{what}"
        for color in ("green", "yellow", "red")
        for what in ("min_threshold", "max_threshold", "drop_probability")
    }
)


@text_parser("'Profile: NAME' blocks of WRED fields")
def parse_show_ecn(text: str, ctx: ParseContext) -> StateBody:
    """``show ecn`` (ecnconfig -l): qos.wred_profiles (ecn mode, green thresholds, probability).

    The WRED profiles are not bound to ports here; ``show runningconfiguration all`` (QUEUE)
    gives the binding and so the per-interface ``ecn``.
    """
    lines = command_lines(text)
    profiles: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    for line in lines:
        m = re.match(r"^Profile:\s*(\S+)", line)
        if m:
            current = profiles.setdefault(m.group(1), {})
        elif current is not None and line.strip() and not DASHES.fullmatch(line):
            field, _, value = line.strip().partition(" ")
            current[field] = value.strip()
    # 'show mmu' / 'show buffer configuration' print buffer profiles in the same layout.
    profiles = {name: p for name, p in profiles.items() if set(p) & _WRED_FIELDS}
    if not profiles:
        raise ctx.reject("no profile with WRED/ECN fields")
    return {
        "qos": {
            "wred_profiles": {name: cast(WredProfile, wred_profile_state(p)) for name, p in profiles.items()}
        }
    }


# ---------------------------------------------------------------------------------------------
# Transceivers
# ---------------------------------------------------------------------------------------------

_PORT_BLOCK = re.compile(r"^(\S+?):\s*(.*)$")
_LANE_POWER = re.compile(r"^\s*(RX|TX)(\d+)Power\s*:\s*(-inf|-?\d+(?:\.\d+)?)\s*(?:dBm)?\s*$", re.IGNORECASE)
#: SONiC prints 0 mW as ``-inf`` dBm; JSON has no infinity, so a dark lane is stored as this floor
#: (below any receiver's sensitivity: a power threshold check fails on it, as it should).
NO_LIGHT_DBM = -40.0
_TEMPERATURE = re.compile(r"^\s*Temperature\s*:\s*(-?\d+(?:\.\d+)?)\s*C\b")
_EEPROM_KEYS = {
    "Vendor Name": "vendor",
    "Vendor PN": "part_number",
    "Vendor SN": "serial",
    "Identifier": "type",
    "Vendor Rev": "revision",
    "Active Firmware": "firmware",
}


def _port_blocks(lines: list[str]) -> list[tuple[str, str, list[str]]]:
    """(port, status text, indented lines) for each unindented ``EthernetN: ...`` block."""
    blocks: list[tuple[str, str, list[str]]] = []
    for line in lines:
        if line and not line[0].isspace():
            m = _PORT_BLOCK.match(line)
            if m and _PORTNAME.match(m.group(1)):
                blocks.append((m.group(1), m.group(2).strip(), []))
                continue
        if blocks and line.strip():
            blocks[-1][2].append(line)
    return blocks


@text_parser("'EthernetN: SFP EEPROM detected' blocks")
def parse_show_interfaces_transceiver_eeprom(text: str, ctx: ParseContext) -> StateBody:
    """``show interfaces transceiver eeprom [--dom]`` / ``info``: optics.

    Fills vendor, part_number, serial, type (the Identifier), revision, firmware (CMIS), and with
    ``--dom`` temperature_c and per-lane rx_power_dbm / tx_power_dbm. ``present`` is false for a
    port whose module is not detected; an RJ45 port ("SFP EEPROM is not applicable") gets no
    optics. A ``-inf`` lane (no light) reads as :data:`NO_LIGHT_DBM` and is listed in the added
    ``rx_no_light_lanes`` (lane numbers from 1). Optical power is a media-side reading: a CMIS
    module's ``Media Lane Count`` bounds the lanes kept (a 400ZR module has one media lane, and
    SONiC still prints ``-inf`` for RX2..RX8, lanes that do not exist rather than dark ones).
    """
    blocks = _port_blocks(command_lines(text))
    blocks = [b for b in blocks if "detected" in b[1].lower() or "not applicable" in b[1].lower()]
    if not blocks:
        raise ctx.reject()
    out: dict[str, dict[str, Any]] = {}
    for port, status, body in blocks:
        if "not applicable" in status.lower():
            continue  # an RJ45 port has no pluggable module to describe
        if "not detected" in status.lower():
            out[port] = {"optics": {"present": False}}
            continue
        optics: dict[str, Any] = {"present": True}
        lanes: dict[str, dict[int, float]] = {"RX": {}, "TX": {}}
        media_lanes: int | None = None
        for line in body:
            if m := re.match(r"^\s*Media Lane Count\s*:\s*(\d+)\s*$", line):
                media_lanes = int(m.group(1)) or None
                continue
            m = _LANE_POWER.match(line)
            if m:
                dbm = NO_LIGHT_DBM if m.group(3).lower() == "-inf" else float(m.group(3))
                lanes[m.group(1).upper()][int(m.group(2))] = dbm
                continue
            m = _TEMPERATURE.match(line)
            if m:
                optics["temperature_c"] = float(m.group(1))
                continue
            key, sep, value = line.strip().partition(":")
            name = _EEPROM_KEYS.get(key.strip())
            if sep and name and value.strip() and not _na(value):
                optics.setdefault(name, value.strip())
        if media_lanes is not None:
            lanes = {
                d: {k: v for k, v in by_lane.items() if k <= media_lanes} for d, by_lane in lanes.items()
            }
        for direction, field in (("RX", "rx_power_dbm"), ("TX", "tx_power_dbm")):
            if lanes[direction]:
                optics[field] = [lanes[direction][k] for k in sorted(lanes[direction])]
        dark = [k for k, v in sorted(lanes["RX"].items()) if v == NO_LIGHT_DBM]
        if dark:
            optics["rx_no_light_lanes"] = dark
        out[port] = {"optics": optics}
    return _interfaces(out)


#: A flag line of CMIS (``Tx fault flag on media lane 1``) or SFF-8636 (``RX1LOS``, ``TX1Fault``) status.
_FLAG_KEY = re.compile(r" flag\b|^[RT]X\d+(LOS|Fault|LOL)$", re.IGNORECASE)
_STATUS_KEY = re.compile(r"^\s*(Current module state|CMIS State|[^:]* flag\b|[RT]X\d+(LOS|Fault|LOL))\s*:")


@text_parser("'EthernetN:' blocks of transceiver status fields (module state, fault/LOS/alarm flags)")
def parse_show_interfaces_transceiver_status(text: str, ctx: ParseContext) -> StateBody:
    """``show interfaces transceiver status``: optics.module_state, cmis_state, active_flags.

    ``active_flags`` lists every flag line whose value is True (alarms, warnings, Tx fault,
    Rx LOS; CMIS ``... flag ...`` and SFF-8636 ``RX1LOS``/``TX1Fault`` names), in output order:
    empty on a healthy module.
    """
    blocks = _port_blocks(command_lines(text))
    if not any(_STATUS_KEY.search(line) for _, _, body in blocks for line in body):
        raise ctx.reject()
    out: dict[str, dict[str, Any]] = {}
    for port, _status, body in blocks:
        fields = {}
        for line in body:
            key, sep, value = line.strip().partition(":")
            if sep:
                fields[key.strip()] = value.strip()
        optics: dict[str, Any] = {}
        if fields.get("Current module state"):
            optics["module_state"] = fields["Current module state"]
        if fields.get("CMIS State (SW)"):
            optics["cmis_state"] = fields["CMIS State (SW)"]
        optics["active_flags"] = [k for k, v in fields.items() if _FLAG_KEY.search(k) and v == "True"]
        out[port] = {"optics": optics}
    return _interfaces(out)


# ---------------------------------------------------------------------------------------------
# Counters
# ---------------------------------------------------------------------------------------------


@text_parser("'Port Rx' and 'Port Tx' tables with PFC0..PFC7 columns")
def parse_show_pfc_counters(text: str, ctx: ParseContext) -> StateBody:
    """``show pfc counters``: counters.pfc_rx_pause / pfc_tx_pause per priority (cumulative)."""
    out: dict[str, dict[str, Any]] = {}
    seen = set()
    for table in dash_tables(command_lines(text)):
        for key_col, field in (("Port Rx", "pfc_rx_pause"), ("Port Tx", "pfc_tx_pause")):
            if key_col not in table.headers:
                continue
            seen.add(field)
            for row in table.rows:
                if not _IFNAME.match(row[key_col]):
                    raise ctx.reject(f"row {row[key_col]!r} is not an interface name")
                values = {
                    h[3:]: n
                    for h in table.headers
                    if h.startswith("PFC") and (n := _count(row[h])) is not None
                }
                counters = out.setdefault(row[key_col], {}).setdefault("counters", {})
                counters[field] = values
    if not seen:
        raise ctx.reject()
    return _interfaces(out)


_IF_COUNTERS = {
    "RX_OK": "rx_ok",
    "RX_ERR": "rx_errors",
    "RX_DRP": "rx_drops",
    "RX_OVR": "rx_overruns",
    "TX_OK": "tx_ok",
    "TX_ERR": "tx_errors",
    "TX_DRP": "tx_drops",
    "TX_OVR": "tx_overruns",
}


@text_parser("an interface counters table")
def parse_show_interfaces_counters(text: str, ctx: ParseContext) -> StateBody:
    """``show interfaces counters``: counters rx/tx ok, errors, drops, overruns (packets).

    ``RX_ERR`` counts every input error, not CRC errors alone, so ``crc_errors`` stays absent.
    """
    table = _table(text, ctx, ("IFACE", "STATE", "RX_OK", "RX_ERR"))
    out: dict[str, dict[str, Any]] = {}
    for row in table.rows:
        counters = {
            name: n for col, name in _IF_COUNTERS.items() if (n := _count(row.get(col, ""))) is not None
        }
        out[row["IFACE"]] = {"counters": counters}
    return _interfaces(out)


@text_parser("a FEC counters table (IFACE, FEC_CORR, FEC_UNCORR)")
def parse_show_interfaces_counters_fec_stats(text: str, ctx: ParseContext) -> StateBody:
    """``show interfaces counters fec-stats`` (``portstat -f``, SONiC 202305+): RS-FEC codewords.

    ``FEC_CORR`` and ``FEC_UNCORR`` are the corrected and uncorrectable codewords (SAI
    ``IF_IN_FEC_CORRECTABLE_FRAMES`` / ``IF_IN_FEC_NOT_CORRECTABLE_FRAMES``), cumulative since the
    last clear: ``counters.fec_corrected`` / ``fec_uncorrectable``; ``FEC_SYMBOL_ERR`` is the added
    ``fec_symbol_errors``. ``FEC_PRE_BER`` (newer releases; the bit error rate before correction over the
    last poll interval) feeds the added ``fec_pre_ber``; the post-FEC BER, maximum and FLR columns
    are not read.
    A port that shows N/A (no FEC counters) gets no counters.

    Example:
        >>> parse_show_interfaces_counters_fec_stats('''    IFACE    STATE    FEC_CORR    FEC_UNCORR    FEC_SYMBOL_ERR
        ... ---------  -------  ----------  ------------  ----------------
        ... Ethernet0        U     130,402             3                 4
        ... ''', ParseContext("sonic", "show interfaces counters fec-stats"))
        {'interfaces': {'Ethernet0': {'counters': {'fec_corrected': 130402, 'fec_uncorrectable': 3, 'fec_symbol_errors': 4}}}}
    """
    table = _table(text, ctx, ("IFACE", "FEC_CORR", "FEC_UNCORR"))
    out: dict[str, dict[str, Any]] = {}
    for row in table.rows:
        counters = {
            name: n
            for col, name in (
                ("FEC_CORR", "fec_corrected"),
                ("FEC_UNCORR", "fec_uncorrectable"),
                ("FEC_SYMBOL_ERR", "fec_symbol_errors"),
            )
            if (n := _count(row.get(col, ""))) is not None
        }
        entry: dict[str, Any] = {"counters": counters} if counters else {}
        ber = _ber(row.get("FEC_PRE_BER", ""))
        if ber is not None:
            entry["fec_pre_ber"] = ber
        out[row["IFACE"]] = entry
    return _interfaces(out)


_BER = re.compile(r"^\d(?:\.\d+)?e[-+]\d{2}$")


def _ber(cell: str) -> float | None:
    """A BER cell (``1.48e-20``); None for N/A or anything else.

    Example:
        >>> _ber("1.48e-09"), _ber("N/A")
        (1.48e-09, None)
    """
    text = cell.strip()
    return float(text) if _BER.match(text) else None


def _queue_totals(rows: list[tuple[str, str, str, str]]) -> dict[str, dict[str, Any]]:
    """Sum ECN-marked and WRED-dropped packets of unicast queues per port.

    Rows are (port, queue, ecn_marked_pkts, wred_dropped_pkts); multicast and ``ALL`` queues
    carry no RoCE traffic and are left out, and so are N/A cells.
    """
    out: dict[str, dict[str, Any]] = {}
    for port, queue, ecn, drop in rows:
        counters = out.setdefault(port, {}).setdefault("counters", {})
        if not queue.upper().startswith("UC"):
            continue
        for name, cell in (("ecn_marked", ecn), ("wred_dropped", drop)):
            value = _count(cell)
            if value is not None:
                counters[name] = counters.get(name, 0) + value
    return out


@text_parser("a WRED/ECN queue counter table (Port, TxQ, EcnMarked/pkts) or its --json form")
def parse_show_queue_wredcounters(text: str, ctx: ParseContext) -> StateBody:
    """``show queue wredcounters`` (text or ``--json``): counters.ecn_marked, wred_dropped.

    Totals over the unicast queues (UC0..UCn) of each port, in packets, cumulative.
    """
    if text.lstrip().startswith("{"):
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ctx.reject(f"invalid JSON at line {exc.lineno}: {exc.msg}") from None
        if not isinstance(doc, dict) or not all(isinstance(v, dict) for v in doc.values()):
            raise ctx.reject("JSON is not {port: {queue: counters}}")
        rows = [
            (port, queue, str(c.get("ecnmarkedpacket", "N/A")), str(c.get("wreddroppacket", "N/A")))
            for port, queues in doc.items()
            for queue, c in queues.items()
            if isinstance(c, dict) and {"ecnmarkedpacket", "wreddroppacket"} & set(c)
        ]
        if not rows:
            raise ctx.reject("no ecnmarkedpacket/wreddroppacket queue counters in JSON")
        for port, *_ in rows:
            if not _IFNAME.match(port):
                raise ctx.reject(f"key {port!r} is not an interface name")
        return _interfaces(_queue_totals(rows))
    tables = [
        t for t in dash_tables(command_lines(text)) if {"Port", "TxQ", "EcnMarked/pkts"} <= set(t.headers)
    ]
    if not tables:
        raise ctx.reject()
    rows = []
    for table in tables:
        for row in table.rows:
            if not _IFNAME.match(row["Port"]):
                raise ctx.reject(f"row {row['Port']!r} is not an interface name")
            rows.append((row["Port"], row["TxQ"], row["EcnMarked/pkts"], row.get("WredDrp/pkts", "N/A")))
    return _interfaces(_queue_totals(rows))


@text_parser("a PG drop table (Port, PG0..PG7)")
def parse_show_priority_group_drop_counters(text: str, ctx: ParseContext) -> StateBody:
    """``show priority-group drop counters`` (``pg-drop -c show``): ingress drops per priority group.

    Feeds the added ``counters.pg_dropped`` (PG index -> packets dropped at ingress, cumulative).
    On a RoCE fabric the lossless priority's PG (3) must never drop: a drop there means the
    headroom was too small for what arrived after PAUSE (``lossless-drops``). N/A cells (a PG the
    ASIC does not count) are left out.

    Example:
        >>> parse_show_priority_group_drop_counters('''Ingress PG dropped packets:
        ...      Port    PG0    PG1    PG2    PG3
        ... ---------  -----  -----  -----  -----
        ... Ethernet0      0      0      0     12
        ... ''', ParseContext("sonic", "show priority-group drop counters"))
        {'interfaces': {'Ethernet0': {'counters': {'pg_dropped': {'0': 0, '1': 0, '2': 0, '3': 12}}}}}
    """
    table = _table(text, ctx, ("Port", "PG0"))
    out: dict[str, dict[str, Any]] = {}
    for row in table.rows:
        drops = {
            col[2:]: n
            for col in table.headers
            if re.fullmatch(r"PG[0-7]", col) and (n := _count(row.get(col, ""))) is not None
        }
        out[row["Port"]] = {"counters": {"pg_dropped": drops}} if drops else {}
    return _interfaces(out)


_UC_QUEUE = re.compile(r"^UC(\d)$")


@text_parser("queue counter tables (Port, TxQ, Drop/pkts)")
def parse_show_queue_counters(text: str, ctx: ParseContext) -> StateBody:
    """``show queue counters`` (``queuestat``): egress drops per unicast queue.

    Feeds the added ``counters.queue_dropped`` (unicast queue index = traffic class -> packets
    dropped, cumulative). Multicast queues (``MC*``) and queues above 7 carry no RoCE traffic and
    are left out, as are N/A cells. sonic-utilities prints one table per port.

    Example:
        >>> parse_show_queue_counters('''     Port    TxQ    Counter/pkts    Counter/bytes    Drop/pkts    Drop/bytes
        ... ---------  -----  --------------  ---------------  -----------  ------------
        ... Ethernet0    UC3              10             1000            7           700
        ... Ethernet0    MC8               0                0            0             0
        ... ''', ParseContext("sonic", "show queue counters"))
        {'interfaces': {'Ethernet0': {'counters': {'queue_dropped': {'3': 7}}}}}
    """
    table = _table(text, ctx, ("Port", "TxQ", "Drop/pkts"))
    out: dict[str, dict[str, Any]] = {}
    for row in table.rows:
        body = out.setdefault(row["Port"], {})
        m = _UC_QUEUE.match(row["TxQ"].strip())
        if m is None or int(m[1]) > 7:
            continue
        value = _count(row["Drop/pkts"])
        if value is not None:
            body.setdefault("counters", {}).setdefault("queue_dropped", {})[m[1]] = value
    return _interfaces(out)
