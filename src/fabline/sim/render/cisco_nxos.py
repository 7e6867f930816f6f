"""Cisco NX-OS outputs rendered from a device state: running-config (MQC QoS) and show commands.

Layouts follow ``tests/samples/cisco_nxos`` and the RoCE leaf style of
``tests/parsers/local/cisco_nxos/roce-leaf.cfg`` (qos-group == priority, lossless set in the
system network-qos policy, ECN in the egress queuing policy).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from fabline.platforms.cisco_nxos import PLATFORM
from fabline.platforms.toolkit import compress_ints
from fabline.sim.render import routing
from fabline.sim.render.common import Answer, SimView, storm_counts

MODEL = "Nexus9000 C9364D-GX2A Chassis"
#: NX-OS's FEC words (the platform spec's vocabulary, shared with its parsers).
_FEC = PLATFORM.vocabulary.fec


def _ports(state: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {n: b for n, b in state.get("interfaces", {}).items() if n.startswith("Ethernet")}


def _short(name: str) -> str:
    return "Eth" + name[len("Ethernet") :]


def _common(ports: dict[str, dict[str, Any]], field: str) -> Any:
    values = [json.dumps(b[field], sort_keys=True) for b in ports.values() if field in b]
    return json.loads(Counter(values).most_common(1)[0][0]) if values else None


def normalize(state: dict[str, Any]) -> None:
    """NX-OS's lossless set is system-wide: a port running PFC runs it on the system's priorities."""
    ports = _ports(state)
    lossless: set[int] = set()
    for b in ports.values():
        lossless |= set(b.get("pfc_priorities", []))
    for b in ports.values():
        if b.get("pfc_priorities"):
            b["pfc_priorities"] = sorted(lossless)


#: The class-map match word for DSCP classification (the platform's trust vocabulary).
_TRUST_DSCP = PLATFORM.vocabulary.trust["dscp"]


def _classify(tag: str, dmap: dict[str, int]) -> list[str]:
    by_group: dict[int, list[int]] = {}
    for d, p in dmap.items():
        by_group.setdefault(int(p), []).append(int(d))
    out = []
    for g, codes in sorted(by_group.items()):
        out += [f"class-map type qos match-any {tag}_QG{g}", f"  match {_TRUST_DSCP} {compress_ints(codes)}"]
    out.append(f"policy-map type qos {tag}")
    for g in sorted(by_group):
        out += [f"  class {tag}_QG{g}", f"    set qos-group {g}"]
    return out


def _queuing(tag: str, ecn: dict[str, Any]) -> list[str]:
    out = [f"policy-map type queuing {tag}"]
    for q in range(8):
        name = "c-out-8q-q-default" if q == 0 else f"c-out-8q-q{q}"
        out.append(f"  class type queuing {name}")
        e = ecn.get(str(q))
        if e and e.get("enabled"):
            out.append("    bandwidth remaining percent 50")
            out.append(
                f"    random-detect minimum-threshold {e['min_bytes'] // 1000} kbytes maximum-threshold "
                f"{e['max_bytes'] // 1000} kbytes drop-probability {e.get('probability_pct', 100)} weight 0 ecn"
            )
        elif q == 6:
            out.append("    priority level 1")
        else:
            out.append(f"    bandwidth remaining percent {48 if q == 0 else 0}")
    return out


def running_config(dev: SimView, state: dict[str, Any], interfaces_only: bool = False) -> str:
    """``show running-config`` (or ``show running-config interface``)."""
    ports = _ports(state)
    f = state.get("facts", {})
    dmap = _common(ports, "dscp_to_priority") or {}
    ecn = _common(ports, "ecn") or {}
    lossless = sorted({p for b in ports.values() for p in b.get("pfc_priorities", [])})
    out = ["!Command: show running-config", "!Running configuration last done at: Sun Nov 29 08:00:00 2026",
           "!Time: Sun Nov 29 08:00:00 2026", "", f"version {f.get('os_version', '')} Bios:version 05.47"]  # fmt: skip
    extra_policies: list[str] = []
    port_lines: list[str] = []
    for name, b in ports.items():
        lines = [f"interface {name}"]
        if b.get("lldp"):
            lines.append(f"  description {b['lldp']['device']} {b['lldp']['port']}")
        if "mtu" in b:
            lines.append(f"  mtu {b['mtu']}")
        if "speed_gbps" in b and not b.get("autoneg"):
            lines.append(f"  speed {int(b['speed_gbps'] * 1000)}")
            lines.append("  no negotiate auto")
        if "fec" in b:
            lines.append(f"  fec {_FEC[b['fec']]}")
        if "pfc_priorities" in b:
            lines.append(f"  priority-flow-control mode {'on' if b['pfc_priorities'] else 'off'}")
        if "dscp_to_priority" in b and b["dscp_to_priority"] != dmap:
            tag = f"ROCE_CLASSIFY_{name.replace('/', '_')}"
            extra_policies += _classify(tag, b["dscp_to_priority"])
            lines.append(f"  service-policy type qos input {tag}")
        if "ecn" in b and b["ecn"] != ecn:
            tag = f"QOS_EGRESS_{name.replace('/', '_')}"
            extra_policies += _queuing(tag, b["ecn"])
            lines.append(f"  service-policy type queuing output {tag}")
        lines.append("  no shutdown" if b.get("admin_up") else "  shutdown")
        port_lines += lines
    if interfaces_only:
        return "\n".join(["!Command: show running-config interface", "", *port_lines, ""])
    out += ["", f"hostname {dev.name}", "", "feature lldp", "feature lacp", ""]
    wd = state.get("qos", {}).get("pfc_watchdog", {})
    if "enabled" in wd:
        # The global switch, as the Nexus 9000 QoS guide configures it; written either way so a
        # disabled watchdog shows as 'off' rather than as a missing (unknown) line.
        out += [f"priority-flow-control watch-dog-interval {'on' if wd['enabled'] else 'off'}", ""]
    out += _classify("ROCE_CLASSIFY", dmap)
    out += extra_policies
    out.append("policy-map type network-qos QOS_NETWORK")
    for q in range(8):
        name = "c-8q-nq-default" if q == 0 else f"c-8q-nq{q}"
        out += [f"  class type network-qos {name}", "    mtu 9216"]
        if q in lossless:
            out.append(f"    pause pfc-cos {q}")
    out += _queuing("QOS_EGRESS_PORT", ecn)
    out += ["system qos", "  service-policy type network-qos QOS_NETWORK",
            "  service-policy type queuing output QOS_EGRESS_PORT", "  service-policy type qos input ROCE_CLASSIFY",
            "", "interface mgmt0", "  vrf member management", "  ip address 192.0.2.13/24", ""]  # fmt: skip
    out += port_lines
    out += routing.nxos_load_sharing_line(state)
    out += routing.nxos_dlb_lines(state, [n for n, b in ports.items() if b.get("oper_up")])
    out += ["interface loopback0", "  ip address 10.0.0.13/32", "line console", "line vty", ""]
    return "\n".join(out)


def _version(dev: SimView, state: dict[str, Any]) -> str:
    f = state.get("facts", {})
    v = f.get("os_version", "")
    return (
        "Cisco Nexus Operating System (NX-OS) Software\nTAC support: http://www.cisco.com/tac\n"
        "Copyright (C) 2002-2024, Cisco and/or its affiliates.\nAll rights reserved.\n\n"
        "Software\n  BIOS: version 05.47\n"
        f"  NXOS: version {v}\n  BIOS compile time:  04/28/2022\n"
        f"  NXOS image file is: bootflash:///nxos64-cs.{v.replace('(', '.').replace(')', '')}.M.bin\n"
        "  NXOS compile time:  3/6/2024 12:00:00 [03/06/2024 20:31:56]\n\n\n"
        f"Hardware\n  cisco {MODEL}\n  Intel(R) Xeon(R) CPU D-1633N @ 2.50GHz with 32772452 kB of memory.\n"
        f"  Processor Board ID {f.get('serial', '')}\n\n  Device name: {dev.name}\n  bootflash:   115805708 kB\n"
        "Kernel uptime is 12 day(s), 3 hour(s), 14 minute(s), 7 second(s)\n\n"
        f"Last reset\n  Reason: Unknown\n  System version: {v}\n  Service: \n\nplugin\n  Core Plugin, Ethernet Plugin\n"
    )


def _desc(b: dict[str, Any]) -> str:
    return f"{b['lldp']['device']} {b['lldp']['port']}" if b.get("lldp") else ""


def _mark(value: float, high_alarm: float, low_alarm: float, high_warn: float, low_warn: float) -> str:
    """The mark NX-OS prints after a DOM reading beyond a threshold (``++``, ``+``, ``--``, ``-``)."""
    if value > high_alarm:
        return " ++"
    if value < low_alarm:
        return " --"
    if value > high_warn:
        return " +"
    if value < low_warn:
        return " -"
    return ""


def _age(seconds: int) -> str:
    """An age as NX-OS prints "Last link flapped": hh:mm:ss, then XdYYh, then Xweek(s) Yday(s)."""
    if seconds < 86400:
        return f"{seconds // 3600:02d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"
    if seconds < 604800:
        return f"{seconds // 86400}d{seconds % 86400 // 3600:02d}h"
    return f"{seconds // 604800}week(s) {seconds % 604800 // 86400}day(s)"


def _interface(ports: dict[str, dict[str, Any]]) -> str:
    out = []
    for i, (name, b) in enumerate(ports.items()):
        up, admin = bool(b.get("oper_up")), b.get("admin_up", True)
        crc = int(b.get("counters", {}).get("crc_errors", 0))
        fec = _FEC.get(b.get("fec", ""), "auto")
        speed = b.get("speed_gbps", 0)
        c = b.get("counters", {})
        rx_pause = int(c.get("pfc_rx_frames", sum(c.get("pfc_rx_pause", {}).values())))
        tx_pause = int(c.get("pfc_tx_frames", sum(c.get("pfc_tx_pause", {}).values())))
        head = (
            f"{name} is up"
            if up
            else (
                f"{name} is down (Administratively down)"
                if not admin
                else f"{name} is down (Link not connected)"
            )
        )
        out += [head, f"admin state is {'up' if admin else 'down'}, Dedicated Interface",
                f"  Hardware: 100000/400000 Ethernet, address: 0c00.5e00.{i:04x} (bia 0c00.5e00.{i:04x})"]  # fmt: skip
        if _desc(b):
            out.append(f"  Description: {_desc(b)}")
        out += [
            f"  MTU {b.get('mtu', 1500)} bytes, BW {int(speed * 1_000_000)} Kbit , DLY 10 usec",
            "  reliability 255/255, txload 1/255, rxload 1/255",
            "  Encapsulation ARPA, medium is broadcast",
            f"  full-duplex, {int(speed)} Gb/s, media type is 400G",
            "  Beacon is turned off",
            f"  Auto-Negotiation is turned {'on' if b.get('autoneg') else 'off'}  FEC mode is {fec}",
            "  Input flow-control is off, output flow-control is off",
            "  Auto-mdix is turned off",
            "  Switchport monitor is off ",
            "  EtherType is 0x8100 ",
            "  EEE (efficient-ethernet) : n/a",
            f"    admin fec state is {fec}, oper fec state is {fec if up else 'off'}",
            f"  Last link flapped {_age(int(b.get('last_flap_age_s', 12 * 604800 + 3 * 86400)))}",
            '  Last clearing of "show interface" counters never',
            f"  {int(c.get('interface_resets', 1))} interface resets",
            "  RX",
            f"    {1843210987 if up else 0} unicast packets  0 multicast packets  0 broadcast packets",
            f"    {1843210987 if up else 0} input packets  {15098843210334 if up else 0} bytes",
            "    0 jumbo packets  0 storm suppression packets",
            f"    0 runts  0 giants  {crc} CRC  0 no buffer",
            f"    {crc} input error  0 short frame  0 overrun   0 underrun  0 ignored",
            "    0 watchdog  0 bad etype drop  0 bad proto drop  0 if down drop",
            "    0 input with dribble  0 input discard",
            f"    {rx_pause} Rx pause",
            "    0 Stomped CRC",
            "  TX",
            f"    {1790332114 if up else 0} unicast packets  0 multicast packets  0 broadcast packets",
            f"    {1790332114 if up else 0} output packets  {14671022198810 if up else 0} bytes",
            "    0 jumbo packets",
            "    0 output error  0 collision  0 deferred  0 late collision",
            "    0 lost carrier  0 no carrier  0 babble  0 output discard",
            f"    {tx_pause} Tx pause",
            "",
        ]
    return "\n".join(out) + "\n"


def _status(ports: dict[str, dict[str, Any]]) -> str:
    out = [
        "",
        "-" * 80,
        "Port          Name               Status    Vlan      Duplex  Speed   Type",
        "-" * 80,
    ]
    for name, b in ports.items():
        up, admin = bool(b.get("oper_up")), b.get("admin_up", True)
        status = "connected" if up else ("disabled" if not admin else "notconnec")
        speed = f"{int(b['speed_gbps'])}G" if "speed_gbps" in b else "auto"
        desc = _desc(b)[:18] or "--"
        out.append(f"{_short(name):<13} {desc:<18} {status:<9} routed    full    {speed:<7} QDD-400G-DR4-S")
    return "\n".join(out) + "\n"


def _lldp(ports: dict[str, dict[str, Any]], detail: bool) -> str:
    peers = [(n, b["lldp"]) for n, b in ports.items() if b.get("lldp")]
    if not detail:
        out = ["Capability codes:", "  (R) Router, (B) Bridge, (T) Telephone, (C) DOCSIS Cable Device",
               "  (W) WLAN Access Point, (P) Repeater, (S) Station, (O) Other",
               "Device ID            Local Intf      Hold-time  Capability  Port ID  "]  # fmt: skip
        for n, p in peers:
            if len(p["device"]) > 20:
                out += [p["device"], f"{'':<21}{_short(n):<16}120        BR          {p['port']}"]
            else:
                out.append(f"{p['device']:<21}{_short(n):<16}120        BR          {p['port']}")
        out.append(f"Total entries displayed: {len(peers)}")
        return "\n".join(out) + "\n"
    out = ["Capability codes:", "  (R) Router, (B) Bridge, (T) Telephone, (C) DOCSIS Cable Device",
           "  (W) WLAN Access Point, (P) Repeater, (S) Station, (O) Other",
           "Device ID            Local Intf      Hold-time  Capability  Port ID  ", ""]  # fmt: skip
    for n, p in peers:
        out += [
            "Chassis id: 1c34.da5e.8a00",
            f"Port id: {p['port']}",
            f"Local Port id: {_short(n)}",
            f"Port Description: {p['port']}",
            f"System Name: {p['device']}",
            "System Description: fabline simulated device",
            "Time remaining: 97 seconds",
            "System Capabilities: B, R",
            "Enabled Capabilities: B, R",
            "Management Address: not advertised",
            "Vlan ID: not advertised",
            "",
        ]
    out.append(f"Total entries displayed: {len(peers)}")
    return "\n".join(out) + "\n"


def _transceiver(ports: dict[str, dict[str, Any]], details: bool) -> str:
    out = []
    for name, b in ports.items():
        o = b.get("optics")
        if not o:
            out += [name, "    transceiver is not present", ""]
            continue
        out += [
            name,
            "    transceiver is present",
            "    type is QDD-400G-DR4-S",
            f"    name is {o.get('vendor', '')}",
            f"    part number is {o.get('part_number', '')}",
            "    revision is A2",
            f"    serial number is {o.get('serial', '')}",
            "    nominal bitrate is 425000 MBit/sec",
            "    cisco id is 24",
            "    cisco extended id number is 208",
            "    cisco part number is 10-3390-01",
            "    cisco product id is QDD-400G-DR4-S",
            "    cisco version id is V01",
            "",
        ]
        if not details:
            continue
        temp = float(o.get("temperature_c", 40.0))
        rx, tx = o.get("rx_power_dbm", []), o.get("tx_power_dbm", [])
        for lane in range(max(len(rx), len(tx))):
            rxv = (
                f"{rx[lane]:.2f} dBm{_mark(rx[lane], 6.99, -9.91, 3.99, -5.90)}"
                if lane < len(rx) and rx[lane] > -40
                else "N/A"
            )
            txv = (
                f"{tx[lane]:.2f} dBm{_mark(tx[lane], 6.99, -6.90, 3.99, -2.90)}" if lane < len(tx) else "N/A"
            )
            out += [
                f"Lane Number:{lane + 1} Network Lane",
                "    " + "-" * 76,
                "                Current              Alarms                  Warnings",
                "                Measurement     High        Low         High          Low",
                "    " + "-" * 76,
                f"    Temperature   {temp:.2f} C{_mark(temp, 80.0, -5.0, 75.0, 0.0):<3}     80.00 C     -5.00 C     75.00 C        0.00 C",
                "    Voltage        3.29 V         3.63 V      2.97 V      3.46 V        3.13 V",
                f"    Current       {45.45 + lane * 0.02:.2f} mA     120.00 mA    20.00 mA   110.00 mA      30.00 mA",
                f"    Tx Power      {txv:<10}     6.99 dBm   -6.90 dBm    3.99 dBm     -2.90 dBm",
                f"    Rx Power      {rxv:<10}     6.99 dBm   -9.91 dBm    3.99 dBm     -5.90 dBm",
                "    Transmit Fault Count = 0",
                "    " + "-" * 76,
                "    Note: ++  high-alarm; +  high-warning; --  low-alarm; -  low-warning",
                "",
            ]
    return "\n".join(out) + "\n"


def _pfc_detail(ports: dict[str, dict[str, Any]]) -> str:
    """``show interface priority-flow-control detail``, as the Nexus 93180FX2 sample prints it."""
    dash = "    " + "-" * 117
    head = "        |" + "|".join(f"  Priority{i}  " for i in range(8)) + "|"
    out = []
    for name, b in ports.items():
        c = b.get("counters", {})
        rx = {int(k): int(v) for k, v in c.get("pfc_rx_pause", {}).items()}
        tx = {int(k): int(v) for k, v in c.get("pfc_tx_pause", {}).items()}
        prios = b.get("pfc_priorities") or []
        mode = "On" if prios else ("Off" if "pfc_priorities" in b else "Auto")
        bitmap = sum(1 << p for p in prios)
        out += [name, f"    Admin Mode: {mode}", f"    Oper Mode: {'On' if prios and b.get('oper_up') else 'Off'}",
                f"    VL bitmap: ({bitmap:x})", f"    Total Rx PFC Frames: {sum(rx.values())}",
                f"    Total Tx PFC Frames: {sum(tx.values())}", dash, head, dash]  # fmt: skip
        for label, values in (("Rx", rx), ("Tx", tx)):
            row = "|".join(f"{values.get(p, 0):<13}" for p in range(8)).rstrip()
            out += [f"    {label:<4}|{row}"] + ([dash] if label == "Rx" else [])
    return "\n".join(out) + "\n"


_QUEUING_RULE = "+" + "-" * 61 + "+"


def _show_queuing(ports: dict[str, dict[str, Any]]) -> str:
    """``show queuing interface``: egress QOS GROUP tables and the ingress PFC statistics.

    The layout of the Nexus 9000 captures (``tests/samples/cisco_nxos/zartbot-n93180fx2-*``, the
    9300 ``| begin "QOS GROUP 3"`` capture and the ``show queuing summary`` header): the state's
    ``counters.queue_dropped`` is the unicast ``WRED/AFD & Tail Drop Pkts`` of its qos-group.
    """
    d78, d53, d56 = "-" * 78, "-" * 53, "-" * 56
    out = ["", "slot  1", "=======", "", ""]
    for name, b in ports.items():
        c = b.get("counters", {})
        drops = {int(k): int(v) for k, v in c.get("queue_dropped", {}).items()}
        rx = {int(k): int(v) for k, v in c.get("pfc_rx_pause", {}).items()}
        tx = {int(k): int(v) for k, v in c.get("pfc_tx_pause", {}).items()}
        lossless = set(b.get("pfc_priorities") or [])
        up = bool(b.get("oper_up"))
        out += [f"Egress Queuing for {name} [System]", d78,
                "QoS-Group# Bandwidth% PrioLevel                Shape                   QLimit",
                "                                   Min          Max        Units   ", d78]  # fmt: skip
        for g in range(7, -1, -1):
            bw, prio = ("-", "1") if g == 7 else ("100" if g == 0 else "0", "-")
            out.append(
                f"      {g}           {bw:>3}         {prio}           -            -     -            9(D)"
            )
        for g in range(8):
            tx_pkts = (1843210 * (g + 1) if g in (0, 3) else 0) if up else 0
            dropped = drops.get(g, 0)
            out += [_QUEUING_RULE, f"|{' ' * 30}QOS GROUP {g}{' ' * 20}|", _QUEUING_RULE,
                    "|                           |  Unicast       |Multicast       |", _QUEUING_RULE,
                    f"|                   Tx Pkts |{tx_pkts:>16}|{0:>16}|",
                    f"|                   Tx Byts |{tx_pkts * 1024:>16}|{0:>16}|",
                    f"| WRED/AFD & Tail Drop Pkts |{dropped:>16}|{0:>16}|",
                    f"| WRED/AFD & Tail Drop Byts |{dropped * 4096:>16}|{0:>16}|",
                    f"|              Q Depth Byts |{0:>16}|{0:>16}|",
                    f"|       WD & Tail Drop Pkts |{0:>16}|{0:>16}|"]  # fmt: skip
        out += [_QUEUING_RULE, "", f"Ingress Queuing for {name}", d53, "QoS-Group#                 Pause",
                "           Buff Size       Pause Th      Resume Th", d53]  # fmt: skip
        for g in range(7, -1, -1):
            out.append(
                f"      {g}         348608        77376        75712" if g in lossless
                else f"      {g}              -            -            -"
            )  # fmt: skip
        out += ["Per Port Ingress Statistics", d56, "     Hi Priority Drop Pkts                           0",
                "    Low Priority Drop Pkts                           0",
                "Ingress Overflow Drop Pkts                           0", d56, "", "PFC Statistics", d78,
                f"TxPPP: {sum(tx.values()):>20},   RxPPP: {sum(rx.values()):>20}", d78,
                "PFC_COS QOS_Group   TxPause             TxCount   RxPause             RxCount"]  # fmt: skip
        for cos in range(8):
            group = cos if cos in lossless else 0
            out.append(
                f"      {cos}         {group}  Inactive {tx.get(cos, 0):>19}  Inactive {rx.get(cos, 0):>19}"
            )
        out += [d78, ""]
    return "\n".join(out) + "\n"


def _one_or_list(rows: list[dict[str, Any]]) -> dict[str, Any] | list[dict[str, Any]]:
    """NX-API prints a ``ROW_x`` of one row as the object itself, of several as a list."""
    return rows[0] if len(rows) == 1 else rows


def _pfc_queue_json(ports: dict[str, dict[str, Any]]) -> str:
    """``show queuing pfc-queue detail | json``: the PFC watchdog's shutdowns/restores per qos-group.

    Keys as Cisco's Nexus 9000 show-command reference (9.3(x)) documents them, under
    ``TABLE_module``/``ROW_module`` as a public NX-API poller reads them from a switch; only keys
    whose values those sources show are printed (``docs/platforms/cisco_nxos.md``). A port running
    PFC is listed with its lossless qos-groups (qos-group == priority), and any group with storms.
    """
    rows: list[dict[str, Any]] = []
    for name, b in ports.items():
        stuck, restored = storm_counts(b)
        groups = sorted({*map(str, b.get("pfc_priorities") or []), *stuck, *restored}, key=int)
        stats = []
        for g in groups:
            entry = {
                "q-shutdown": int(stuck.get(g, 0)),
                "q-restored": int(restored.get(g, 0)),
                "q-pkt-dropped": 0,
            }
            stats.append(
                {"eq-qosgrp": int(g), "TABLE_qosgrp_stats_entry": {"ROW_qosgrp_stats_entry": [entry]}}
            )
        if stats:
            row = {"if_name_str": f"{name} Interface PFC watchdog"}
            rows.append({**row, "TABLE_qosgrp_stats": {"ROW_qosgrp_stats": _one_or_list(stats)}})
    body = {"TABLE_queuing_interface": {"ROW_queuing_interface": _one_or_list(rows) if rows else []}}
    return json.dumps({"TABLE_module": {"ROW_module": body}}, indent=2) + "\n"


def render(dev: SimView, line: str) -> Answer:
    """Run one NX-OS CLI command (``| no-more`` already removed by the session)."""
    state = dev.state()
    ports = _ports(state)
    cmd = " ".join(line.split())
    table: dict[str, Any] = {
        "show version": lambda: _version(dev, state),
        "show running-config": lambda: running_config(dev, state),
        "show running-config interface": lambda: running_config(dev, state, interfaces_only=True),
        "show interface": lambda: _interface(ports),
        "show interface status": lambda: _status(ports),
        "show lldp neighbors": lambda: _lldp(ports, False),
        "show lldp neighbors detail": lambda: _lldp(ports, True),
        "show interface transceiver details": lambda: _transceiver(ports, True),
        "show interface transceiver": lambda: _transceiver(ports, False),
        "show interface priority-flow-control detail": lambda: _pfc_detail(ports),
        "show queuing interface": lambda: _show_queuing(ports),
        "show queuing pfc-queue detail | json": lambda: _pfc_queue_json(ports),
        "show hostname": lambda: f"{dev.name}\n",
        "show clock": lambda: "08:00:00.000 UTC Sun Nov 29 2026\nTime source is NTP\n",
        "show bgp ipv4 unicast summary | json": lambda: routing.nxos_summary_json(state),
        "show bgp all summary vrf all | json": lambda: routing.nxos_summary_json(state),
    }
    fn = table.get(cmd)
    words = cmd.split()
    if fn is None and len(words) == 4 and words[:3] == ["show", "ip", "route"]:
        return Answer(routing.nxos_route_text(state, words[3]))
    if fn is None:
        return Answer(" " * 13 + "^\n% Invalid command at '^' marker.\n", 127)
    return Answer(fn())
