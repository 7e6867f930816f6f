"""Arista EOS outputs rendered from a device state: running-config, show commands, ``| json``.

Layouts follow ``tests/samples/arista_eos`` (eAPI JSON keys, CLI tables) and the
RoCE leaf configuration style of ``tests/parsers/local/arista_eos/roce-leaf.cfg``.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from fabline.platforms.arista_eos import PLATFORM
from fabline.sim.render import routing
from fabline.sim.render.common import Answer, SimView, storm_counts

MODEL = "DCS-7060X6-64PE"
#: EOS's FEC lines (the words are the platform spec's vocabulary, shared with its parsers).
_FEC = {mode: f"error-correction encoding {word}" for mode, word in PLATFORM.vocabulary.fec.items()}
_FEC["none"] = "no error-correction encoding"


def _ports(state: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {n: b for n, b in state.get("interfaces", {}).items() if n.startswith("Ethernet")}


def _short(name: str) -> str:
    return "Et" + name[len("Ethernet") :]


def switch_dscp_map(ports: dict[str, dict[str, Any]]) -> dict[str, int]:
    """EOS maps DSCP to traffic class switch-wide: a port's deviation applies to every port."""
    maps = [b["dscp_to_priority"] for b in ports.values() if "dscp_to_priority" in b]
    if not maps:
        return {}
    common = Counter(json.dumps(m, sort_keys=True) for m in maps).most_common(1)[0][0]
    merged: dict[str, int] = json.loads(common)
    for m in maps:
        for k, v in m.items():
            if merged.get(k) != v:
                merged[k] = v
    return dict(sorted(merged.items(), key=lambda kv: int(kv[0])))


def normalize(state: dict[str, Any]) -> None:
    """Make a state what an EOS switch can show: one DSCP map for all ports."""
    ports = _ports(state)
    dmap = switch_dscp_map(ports)
    for b in ports.values():
        if "dscp_to_priority" in b:
            b["dscp_to_priority"] = dict(dmap)


def running_config(dev: SimView, state: dict[str, Any]) -> str:
    """``show running-config`` of the switch."""
    f = state.get("facts", {})
    ports = _ports(state)
    wd = state.get("qos", {}).get("pfc_watchdog", {})
    out = [
        "! Command: show running-config",
        f"! device: {dev.name} ({MODEL}, EOS-{f.get('os_version', '')})",
        "!",
        "! boot system flash:/EOS.swi",
        "!",
        "transceiver qsfp default-mode 4x10G",
        "!",
        "service routing protocols model multi-agent",
        "!",
        f"hostname {dev.name}",
        "!",
        "spanning-tree mode none",
        "!",
    ]
    by_tc: dict[int, list[int]] = {}
    for d, tc in switch_dscp_map(ports).items():
        by_tc.setdefault(tc, []).append(int(d))
    for tc, codes in sorted(by_tc.items()):
        for i in range(0, len(codes), 16):
            out.append(f"qos map dscp {' '.join(str(c) for c in codes[i : i + 16])} to traffic-class {tc}")
    out.append("!")
    out += [
        f"priority-flow-control pause watchdog default timeout {wd.get('detection_ms', 200) / 1000:g}",
        f"priority-flow-control pause watchdog default recovery-time {wd.get('restoration_ms', 200) / 1000:g}",
        f"priority-flow-control pause watchdog action {wd.get('action', 'drop')}",
        "!",
    ]
    for name, b in ports.items():
        out.append(f"interface {name}")
        if b.get("lldp"):
            out.append(f"   description {b['lldp']['device']}_{b['lldp']['port']}")
        if not b.get("admin_up", True):
            out.append("   shutdown")
        if "mtu" in b:
            out.append(f"   mtu {b['mtu']}")
        if "speed_gbps" in b:
            out.append("   speed auto" if b.get("autoneg") else f"   speed {int(b['speed_gbps'])}g-8")
        if b.get("fec") in _FEC:
            out.append(f"   {_FEC[b['fec']]}")
        out.append("   no switchport")
        if "trust" in b:
            out.append(f"   qos trust {PLATFORM.vocabulary.trust[b['trust']]}")
        if "pfc_priorities" in b:
            if b["pfc_priorities"]:
                out.append("   priority-flow-control on")
                out += [f"   priority-flow-control priority {p} no-drop" for p in b["pfc_priorities"]]
                if wd.get("enabled"):
                    out.append("   priority-flow-control pause watchdog")
            else:
                out.append("   no priority-flow-control")
        for q, ecn in sorted(b.get("ecn", {}).items()):
            if not ecn.get("enabled"):
                continue
            line = (
                f"random-detect ecn minimum-threshold {ecn['min_bytes'] // 1000} kbytes "
                f"maximum-threshold {ecn['max_bytes'] // 1000} kbytes"
            )
            if "probability_pct" in ecn:
                line += f" max-mark-probability {ecn['probability_pct']}"
            out += ["   !", f"   tx-queue {q}", f"      {line}"]
        out.append("!")
    out += routing.eos_load_balance_lines(state)
    out += ["interface Management1", f"   ip address 192.0.2.{sum(dev.name.encode()) % 250 + 1}/24", "!",
            "ip routing", "!", "management api http-commands", "   no shutdown", "!", "end"]  # fmt: skip
    return "\n".join(out) + "\n"


def _version(state: dict[str, Any], as_json: bool) -> str:
    f = state.get("facts", {})
    if as_json:
        doc = {
            "mfgName": "Arista", "modelName": MODEL, "hardwareRevision": "11.00",
            "serialNumber": f.get("serial", ""), "systemMacAddress": "00:1c:73:78:8e:81",
            "hwMacAddress": "00:1c:73:78:8e:81", "configMacAddress": "00:00:00:00:00:00",
            "version": f.get("os_version", ""), "architecture": "x86_64",
            "internalVersion": f"{f.get('os_version', '')}-36880683.4322F", "internalBuildId": "d3a4e1c2-0b3f-4f8e-9c55-2b1f0e6f1c11",
            "imageFormatVersion": "3.0", "imageOptimization": "Default", "kernelVersion": "5.10.209",
            "bootupTimestamp": 1763280000.0, "uptime": 1048447.12, "memTotal": 32594264, "memFree": 27013340,
            "isIntlVersion": False,
        }  # fmt: skip
        return json.dumps(doc, indent=4) + "\n"
    return (
        f"Arista {MODEL}\nHardware version: 11.00\nSerial number: {f.get('serial', '')}\n"
        "Hardware MAC address: 001c.7378.8e81\nSystem MAC address: 001c.7378.8e81\n\n"
        f"Software image version: {f.get('os_version', '')}\nArchitecture: x86_64\n"
        f"Internal build version: {f.get('os_version', '')}-36880683.4322F\n"
        "Internal build ID: d3a4e1c2-0b3f-4f8e-9c55-2b1f0e6f1c11\nImage format version: 3.0\n"
        "Image optimization: Default\n\n"
        "Uptime: 1 week, 5 days, 3 hours and 14 minutes\nTotal memory: 32594264 kB\nFree memory: 27013340 kB\n\n"
    )


def _desc(b: dict[str, Any]) -> str:
    return f"{b['lldp']['device']}_{b['lldp']['port']}" if b.get("lldp") else ""


def _interfaces_json(ports: dict[str, dict[str, Any]]) -> str:
    doc: dict[str, Any] = {}
    for i, (name, b) in enumerate(ports.items()):
        up, admin = bool(b.get("oper_up")), b.get("admin_up", True)
        crc = int(b.get("counters", {}).get("crc_errors", 0))
        flaps = int(b.get("counters", {}).get("link_flaps", 1))
        changed = float(b.get("last_flap_epoch_s", 1763280000.0))
        doc[name] = {
            "name": name, "forwardingModel": "routed", "lineProtocolStatus": "up" if up else "down",
            "interfaceStatus": "connected" if up else ("disabled" if not admin else "notconnect"),
            "hardware": "ethernet", "interfaceAddress": [], "physicalAddress": f"00:1c:73:00:{i // 256:02x}:{i % 256:02x}",
            "burnedInAddress": f"00:1c:73:00:{i // 256:02x}:{i % 256:02x}", "description": _desc(b),
            "bandwidth": int(b.get("speed_gbps", 0) * 1_000_000_000), "mtu": b.get("mtu", 1500), "l2Mtu": 0,
            "lastStatusChangeTimestamp": changed, "duplex": "duplexFull",
            "autoNegotiate": "success" if b.get("autoneg") else "off", "loopbackMode": "loopbackNone",
            "interfaceCounters": {
                "inOctets": 15098843210334 if up else 0, "inUcastPkts": 1843210987 if up else 0,
                "inMulticastPkts": 0, "inBroadcastPkts": 0, "inDiscards": 0, "inTotalPkts": 1843210987 if up else 0,
                "outOctets": 14671022198810 if up else 0, "outUcastPkts": 1790332114 if up else 0,
                "outMulticastPkts": 0, "outBroadcastPkts": 0, "outDiscards": 0, "linkStatusChanges": flaps,
                "totalInErrors": crc, "totalOutErrors": 0,
                "inputErrorsDetail": {"runtFrames": 0, "giantFrames": 0, "fcsErrors": crc, "alignmentErrors": 0,
                                      "symbolErrors": 0, "rxPause": 0},
                "outputErrorsDetail": {"collisions": 0, "lateCollisions": 0, "deferredTransmissions": 0, "txPause": 0},
                "counterRefreshTime": 1764403200.0,
            },
            "interfaceStatistics": {"updateInterval": 300.0, "inBitsRate": 0.0, "inPktsRate": 0.0,
                                    "outBitsRate": 0.0, "outPktsRate": 0.0},
        }  # fmt: skip
    return json.dumps({"interfaces": doc}, indent=4) + "\n"


def _interfaces_text(ports: dict[str, dict[str, Any]]) -> str:
    out = []
    for i, (name, b) in enumerate(ports.items()):
        up, admin = bool(b.get("oper_up")), b.get("admin_up", True)
        head = "is up, line protocol is up (connected)" if up else (
            "is administratively down, line protocol is down (disabled)" if not admin
            else "is down, line protocol is down (notconnect)")  # fmt: skip
        crc = int(b.get("counters", {}).get("crc_errors", 0))
        mac = f"001c.7300.{i:04x}"
        out += [
            f"{name} {head}",
            f"  Hardware is Ethernet, address is {mac} (bia {mac})",
        ]
        if _desc(b):
            out.append(f"  Description: {_desc(b)}")
        speed = b.get("speed_gbps", 0)
        out += [
            f"  Ethernet MTU {b.get('mtu', 1500)} bytes, BW {int(speed * 1_000_000)} kbit",
            f"  Full-duplex, {int(speed)}Gb/s, auto negotiation: {'on' if b.get('autoneg') else 'off'}, uni-link: disabled",
            "  Up 12 days, 3 hours, 14 minutes, 7 seconds"
            if up
            else "  Down 12 days, 3 hours, 14 minutes, 7 seconds",
            "  Loopback Mode : None",
            "  1 link status changes since last clear",
            '  Last clearing of "show interface" counters never',
            "  5 minutes input rate 0 bps (0.0% with framing overhead), 0 packets/sec",
            "  5 minutes output rate 0 bps (0.0% with framing overhead), 0 packets/sec",
            f"     {1843210987 if up else 0} packets input, {15098843210334 if up else 0} bytes",
            "     Received 0 broadcasts, 0 multicast",
            "     0 runts, 0 giants",
            f"     {crc} input errors, {crc} CRC, 0 alignment, 0 symbol, 0 input discards",
            "     0 PAUSE input",
            f"     {1790332114 if up else 0} packets output, {14671022198810 if up else 0} bytes",
            "     Sent 0 broadcasts, 0 multicast",
            "     0 output errors, 0 collisions",
            "     0 late collision, 0 deferred, 0 output discards",
            "     0 PAUSE output",
        ]
    return "\n".join(out) + "\n"


def _status(ports: dict[str, dict[str, Any]]) -> str:
    out = [
        "Port       Name                     Status       Vlan     Duplex Speed  Type            Flags Encapsulation"
    ]
    for name, b in ports.items():
        up, admin = bool(b.get("oper_up")), b.get("admin_up", True)
        status = "connected" if up else ("disabled" if not admin else "notconnect")
        speed = b.get("speed_gbps")
        sp = "auto" if speed is None else (f"a-{int(speed)}G" if b.get("autoneg") else f"{int(speed)}G")
        typ = "400GBASE-DR4" if b.get("optics") else "Not Present"
        out.append(f"{_short(name):<10} {_desc(b)[:24]:<24} {status:<12} routed   full   {sp:<6} {typ}")
    return "\n".join(out) + "\n"


def _description(ports: dict[str, dict[str, Any]], as_json: bool) -> str:
    if as_json:
        doc = {}
        for name, b in ports.items():
            up, admin = bool(b.get("oper_up")), b.get("admin_up", True)
            doc[name] = {"description": _desc(b), "lineProtocolStatus": "up" if up else "down",
                         "interfaceStatus": "up" if up else ("adminDown" if not admin else "down")}  # fmt: skip
        return json.dumps({"interfaceDescriptions": doc}, indent=4) + "\n"
    out = [f"{'Interface':<30} {'Status':<14} {'Protocol':<18} Description"]
    for name, b in ports.items():
        up, admin = bool(b.get("oper_up")), b.get("admin_up", True)
        status = "up" if up else ("admin down" if not admin else "down")
        out.append(f"{_short(name):<30} {status:<14} {'up' if up else 'down':<18} {_desc(b)}".rstrip())
    return "\n".join(out) + "\n"


def _counters_errors(ports: dict[str, dict[str, Any]]) -> str:
    doc = {}
    for name, b in ports.items():
        crc = int(b.get("counters", {}).get("crc_errors", 0))
        doc[name] = {"inErrors": crc, "frameTooLongs": 0, "outErrors": 0, "frameTooShorts": 0,
                     "fcsErrors": crc, "alignmentErrors": 0, "symbolErrors": 0}  # fmt: skip
    return json.dumps({"interfaceErrorCounters": doc}, indent=2) + "\n"


def _lldp(ports: dict[str, dict[str, Any]], detail: bool, as_json: bool) -> str:
    peers = [(n, b["lldp"]) for n, b in ports.items() if b.get("lldp")]
    if as_json and not detail:
        rows = [
            {"port": n, "neighborDevice": p["device"], "neighborPort": p["port"], "ttl": 120}
            for n, p in peers
        ]
        return json.dumps({"tablesLastChangeTime": 1763280000.0, "tablesAgeOuts": 0, "tablesInserts": len(rows),
                           "lldpNeighbors": rows, "tablesDeletes": 0, "tablesDrops": 0}, indent=4) + "\n"  # fmt: skip
    if as_json:
        doc = {}
        for n, p in peers:
            doc[n] = {"lldpNeighborInfo": [{
                "chassisIdType": "macAddress", "chassisId": "1c34.da5e.8a00", "systemName": p["device"],
                "systemDescription": "fabline simulated device", "ttl": 120,
                "neighborInterfaceInfo": {"interfaceIdType": "interfaceName", "interfaceId": f'"{p["port"]}"',
                                          "interfaceId_v2": p["port"], "interfaceDescription": p["port"]},
            }]}  # fmt: skip
        return json.dumps({"lldpNeighbors": doc}, indent=4) + "\n"
    if not detail:
        out = [
            "Last table change time   : 12 days, 3:14:07 ago",
            f"Number of table inserts  : {len(peers)}",
            "Number of table deletes  : 0",
            "Number of table drops    : 0",
            "Number of table age-outs : 0",
            "",
            "Port          Neighbor Device ID       Neighbor Port ID    TTL",
            "---------- ------------------------ ---------------------- ---",
        ]
        out += [f"{_short(n):<13} {p['device']:<24} {p['port']:<19} 120" for n, p in peers]
        return "\n".join(out) + "\n"
    out = []
    for n, p in peers:
        out += [
            f"Interface {n} detected 1 LLDP neighbors:",
            "",
            f'  Neighbor 1c34.da5e.8a00/"{p["port"]}", age 12 seconds',
            "  Discovered 12 days, 3:14:07 ago; Last changed 12 days, 3:14:07 ago",
            "  - Chassis ID type: MAC address (4)",
            "    Chassis ID     : 1c34.da5e.8a00",
            "  - Port ID type: Interface name (5)",
            f'    Port ID     : "{p["port"]}"',
            "  - Time To Live: 120 seconds",
            f'  - Port Description: "{p["port"]}"',
            f'  - System Name: "{p["device"]}"',
            '  - System Description: "fabline simulated device"',
            "  - System Capabilities : Bridge, Router",
            "    Enabled Capabilities: Bridge, Router",
            "  - IEEE802.3 Maximum Frame Size: 9236 bytes",
            "",
        ]
    return "\n".join(out) + "\n"


def _transceiver(ports: dict[str, dict[str, Any]], kind: str) -> str:
    optics = {n: b["optics"] for n, b in ports.items() if b.get("optics")}
    if kind == "json":
        doc = {}
        for n, o in optics.items():
            doc[n] = {"vendorSn": o.get("serial", ""), "mediaType": o.get("type", "400GBASE-DR4"), "updateTime": 1764403200.0,
                      "temperature": o.get("temperature_c", 40.0), "voltage": 3.29, "txBias": 7.45,
                      "txPower": o.get("tx_power_dbm", [0.0])[0], "rxPower": o.get("rx_power_dbm", [0.0])[0]}  # fmt: skip
        return json.dumps({"interfaces": doc}, indent=2) + "\n"
    if kind == "thresholds":
        doc = {}
        for n, b in ports.items():
            o = b.get("optics")
            if not o:
                doc[n] = {"displayName": n}
                continue
            doc[n] = {
                "displayName": n, "vendorSn": o.get("serial", ""), "mediaType": o.get("type", "400GBASE-DR4"),
                "parameters": {
                    "rxPower": {"unit": "dBm", "channels": {str(k + 1): v for k, v in enumerate(o.get("rx_power_dbm", []))},
                                "threshold": {"lowAlarm": -10.4, "lowAlarmOverridden": False, "lowWarn": -8.4, "lowWarnOverridden": False}},
                    "txPower": {"unit": "dBm", "channels": {str(k + 1): v for k, v in enumerate(o.get("tx_power_dbm", []))},
                                "threshold": {"lowAlarm": -8.4, "lowAlarmOverridden": False, "lowWarn": -6.4, "lowWarnOverridden": False}},
                },
            }  # fmt: skip
        return json.dumps({"interfaces": doc}, indent=2) + "\n"
    if kind == "hardware":
        out = []
        for n, o in optics.items():
            out += [
                f"Name: {_short(n)}",
                "Media type: 400GBASE-DR4",
                f"Serial number: {o.get('serial', '')}",
                "",
            ]
        return "\n".join(out) + "\n"
    out = [
        "If device is externally calibrated, only calibrated values are printed.",
        "N/A: not applicable, Tx: transmit, Rx: receive.",
        "mA: milliamperes, dBm: decibels (milliwatts).",
        "                               Bias      Optical   Optical                ",
        "          Temp       Voltage   Current   Tx Power  Rx Power               ",
        "Port      (Celsius)  (Volts)   (mA)      (dBm)     (dBm)     Last Update  ",
        "-----     ---------  --------  --------  --------  --------  -------------------",
    ]
    for n, o in optics.items():
        out.append(f"{_short(n):<10} {o.get('temperature_c', 40.0):<10.2f} {3.29:<9.2f} {7.45:<9.2f} "
                   f"{o.get('tx_power_dbm', [0.0])[0]:<9.2f} {o.get('rx_power_dbm', [0.0])[0]:<9.2f} 0:00:03 ago")  # fmt: skip
    return "\n".join(out) + "\n"


def _pfc(state: dict[str, Any], ports: dict[str, dict[str, Any]]) -> str:
    """``show priority-flow-control``: the layout of the real capture (one port, PFC disabled).

    A port's no-drop priorities are printed space-separated, as the same output's header prints
    its priority lists (``... on priorities 0 1 2 3 4 5 6 7``); no public capture shows a port
    with two (the parser reads spaces, commas, ranges and digit runs alike).
    """
    wd = state.get("qos", {}).get("pfc_watchdog", {})
    out = [
        "The hardware supports PFC on priorities 0 1 2 3 4 5 6 7",
        "PFC receive processing is enabled on priorities 0 1 2 3 4 5 6 7",
        f"The PFC watchdog timeout is {wd.get('detection_ms', 200) / 1000:.1f} second(s)",
        f"The PFC watchdog recovery-time is {wd.get('restoration_ms', 200) / 1000:.1f} second(s)",
        "The PFC watchdog polling-interval is 0.1 second(s) (auto)",
        f"The PFC watchdog action is {wd.get('action', 'drop')}",
        "The PFC watchdog override action drop is false",
        "The PFC watchdog non-disruptive priorities are not configured",
        "The PFC watchdog non-disruptive action is not configured",
        "The PFC watchdog port non-disruptive-only is false",
        "Global PFC : Enabled",
        "",
        "E: PFC Enabled, D: PFC Disabled, A: PFC Active, W: PFC Watchdog Enabled",
        "Port       Status  Priorities  Action      Timeout  Recovery        Polling         Note",
        "                                                  Interval/Mode   Config/Oper",
        "---------------------------------------------------------------------------------------",
    ]
    for n, b in ports.items():
        prios = b.get("pfc_priorities", [])
        if prios:
            flags = "E A W" if wd.get("enabled") else "E A -"
            action = wd.get("action", "drop") if wd.get("enabled") else "-"
            out.append(
                f"{_short(n):<10} {flags:<7} {' '.join(map(str, prios)):<11} {action:<11} -        - / -           - / -"
            )
        else:
            out.append(f"{_short(n):<10} {'D - -':<7} {'':<11} {'-':<11} -        - / -           - / -")
    return "\n".join(out) + "\n"


def _pfc_counters(ports: dict[str, dict[str, Any]]) -> str:
    doc = {}
    for n, b in ports.items():
        c = b.get("counters", {})
        doc[n] = {
            "rxFrames": c.get("pfc_rx_frames", sum(c.get("pfc_rx_pause", {}).values())),
            "txFrames": c.get("pfc_tx_frames", sum(c.get("pfc_tx_pause", {}).values())),
        }
    return json.dumps({"interfaceCounters": doc}, indent=2) + "\n"


def _pfc_watchdog_counters(ports: dict[str, dict[str, Any]]) -> str:
    """``show priority-flow-control counters watchdog | json``: only ports that had a watchdog event.

    EOS prints ``{"interfaces": {}}`` until a watchdog fires and lists a port from its first event
    on (the behaviour a public health check documents, ``docs/platforms/arista_eos.md``).
    """
    doc: dict[str, Any] = {}
    for n, b in ports.items():
        stuck, recovered = storm_counts(b)
        queues = {
            q: {"stuckCount": int(stuck.get(q, 0)), "recoveryCount": int(recovered.get(q, 0))}
            for q in sorted({*stuck, *recovered}, key=int)
            if int(stuck.get(q, 0)) or int(recovered.get(q, 0))
        }
        if queues:
            doc[n] = {"txQueues": queues}
    return json.dumps({"interfaces": doc}, indent=2) + "\n"


def _queue_drops(ports: dict[str, dict[str, Any]]) -> str:
    """``show interfaces counters queue drops | json`` of a fixed-system (egress-queue) switch.

    The keys ANTA's tests read (``trafficClasses.TCn.egressQueueCounters.countersSum``); a
    7050X/7060X has no VOQs, so the ingress side counts nothing.
    """
    doc: dict[str, Any] = {}
    for n, b in ports.items():
        drops = b.get("counters", {}).get("queue_dropped", {})
        doc[n] = {
            "trafficClasses": {
                f"TC{tc}": {
                    "ingressVoqCounters": {"countersSum": {"droppedPackets": 0, "droppedBytes": 0}},
                    "egressQueueCounters": {
                        "countersSum": {"droppedPackets": int(drops.get(str(tc), 0)),
                                        "droppedBytes": int(drops.get(str(tc), 0)) * 4096}},
                }
                for tc in range(8)
            }
        }  # fmt: skip
    return json.dumps({"interfaces": doc}, indent=2) + "\n"


def _phy_detail(ports: dict[str, dict[str, Any]]) -> str:
    """``show interfaces phy detail | json``: the switch chip's serdes FEC counters per port."""
    doc: dict[str, Any] = {}
    for n, b in ports.items():
        c = b.get("counters", {})
        if not b.get("oper_up"):
            doc[n] = {"phyStatuses": [{"description": {"phyChipName": "BCM56880-BH", "location": "line"}}]}
            continue
        doc[n] = {
            "phyStatuses": [
                {
                    "description": {"phyChipName": "BCM56880-BH", "location": "line"},
                    "fec": {
                        "hiSer": {"value": False, "changes": 0, "lastChange": 0.0},
                        "correctedCodewords": {"value": int(c.get("fec_corrected", 0)), "changes": 1,
                                               "lastChange": 1763280000.0},
                        "uncorrectedCodewords": {"value": int(c.get("fec_uncorrectable", 0)), "changes": 0,
                                                 "lastChange": 0.0},
                    },
                    "preFecBer": {"value": float(b.get("fec_pre_ber", 1.2e-9))},
                    "phyState": {"value": "linkUp", "changes": 2, "lastChange": 1763280000.0},
                }
            ],
            "interfaceState": {},
            "transceiver": {},
            "macFaults": {},
        }  # fmt: skip
    return json.dumps({"interfacePhyStatuses": doc}, indent=2) + "\n"


def _ecn_counters(ports: dict[str, dict[str, Any]]) -> str:
    doc = {}
    for n, b in ports.items():
        marked = int(b.get("counters", {}).get("ecn_marked", 0))
        doc[n] = {"queueCounters": {str(q): str(marked if q == 3 else 0) for q in range(8)}}
    return json.dumps({"intfQueueCounters": doc}, indent=2) + "\n"


def _environment(kind: str) -> str:
    """``show system environment cooling|temperature|power | json`` of a healthy switch.

    Key layout as EOS 4.2x prints it (the shapes NAPALM's EOS driver reads in its test data).
    """
    if kind == "cooling":
        trays = [
            {"status": "ok", "label": str(i), "speed": 40,
             "fans": [{"status": "ok", "label": f"{i}/1", "uptime": 1763280000.0, "maxSpeed": 23000,
                       "lastSpeedStableChangeTime": 1763280050.0, "configuredSpeed": 40, "actualSpeed": 40,
                       "speedStable": True}]}
            for i in range(1, 5)
        ]  # fmt: skip
        doc: dict[str, Any] = {"overrideFanSpeed": 0, "coolingMode": "automatic", "powerSupplySlots": [],
                               "fanTraySlots": trays, "shutdownOnInsufficientFans": True,
                               "ambientTemperature": 24.5, "systemStatus": "coolingOk",
                               "airflowDirection": "frontToBackAirflow"}  # fmt: skip
    elif kind == "temperature":
        sensors = [
            {"name": f"TempSensor{i}", "description": desc, "relPos": str(i), "hwStatus": "ok",
             "currentTemperature": temp, "maxTemperature": temp + 6.0, "maxTemperatureLastChange": 1763280000.0,
             "overheatThreshold": 95.0, "criticalThreshold": 105.0, "targetTemperature": 85.0,
             "inAlertState": False, "alertCount": 0, "isPidDriver": False, "pidDriverCount": 0}
            for i, (desc, temp) in enumerate((("Cpu temp sensor", 52.0), ("Switch chip sensor", 61.5),
                                              ("Front panel temp sensor", 28.0)), start=1)
        ]  # fmt: skip
        doc = {"systemStatus": "temperatureOk", "shutdownOnOverheat": True, "powercycleOnOverheat": False,
               "actionOnOverheat": "actionShutdown", "recoveryModeOnOverheat": "recoveryModeNA",
               "ambientThreshold": 45, "tempSensors": sensors, "cardSlots": [], "powerSupplySlots": []}  # fmt: skip
    else:
        doc = {"powerSupplies": {
            str(i): {"modelName": "PWR-2421-HV-RED", "capacity": 2400.0, "outputPower": 412.5,
                     "inputCurrent": 1.9, "inputVoltage": 230.5, "outputCurrent": 33.8, "uptime": 1763280000.0,
                     "fans": {}, "tempSensors": {}, "managed": True, "dominant": False, "state": "ok"}
            for i in (1, 2)
        }}  # fmt: skip
    return json.dumps(doc, indent=2) + "\n"


def _top() -> str:
    """``show processes top once``: the summary lines of ``top`` (EOS 4.27+ prints memory in MiB)."""
    return (
        "top - 08:00:00 up 12 days,  3:14,  0 users,  load average: 0.42, 0.51, 0.55\n"
        "Tasks: 312 total,   1 running, 311 sleeping,   0 stopped,   0 zombie\n"
        "%Cpu(s):  4.2 us,  0.9 sy,  0.0 ni, 94.6 id,  0.0 wa,  0.1 hi,  0.2 si,  0.0 st\n"
        "MiB Mem :  31830.3 total,  26380.2 free,   3124.6 used,   2325.5 buff/cache\n"
        "MiB Swap:      0.0 total,      0.0 free,      0.0 used.  27815.9 avail Mem \n"
        "\n"
        "  PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND\n"
        " 2214 root      20   0  612.4m 101.2m  37.0m S   5.9   0.3 812:14.02 Sand\n"
        "    1 root      20   0   26.1m  12.0m   9.6m S   0.0   0.0   0:02.62 systemd\n"
    )


def render(dev: SimView, line: str) -> Answer:
    """Run one EOS CLI command (``| no-more`` already removed by the session)."""
    state = dev.state()
    ports = _ports(state)
    cmd = " ".join(line.split())
    table: dict[str, Any] = {
        "show version": lambda: _version(state, False),
        "show version | json": lambda: _version(state, True),
        "show running-config": lambda: running_config(dev, state),
        "show interfaces": lambda: _interfaces_text(ports),
        "show interfaces | json": lambda: _interfaces_json(ports),
        "show interfaces status": lambda: _status(ports),
        "show interfaces description": lambda: _description(ports, False),
        "show interfaces description | json": lambda: _description(ports, True),
        "show interfaces counters errors | json": lambda: _counters_errors(ports),
        "show lldp neighbors": lambda: _lldp(ports, False, False),
        "show lldp neighbors | json": lambda: _lldp(ports, False, True),
        "show lldp neighbors detail": lambda: _lldp(ports, True, False),
        "show lldp neighbors detail | json": lambda: _lldp(ports, True, True),
        "show interfaces transceiver": lambda: _transceiver(ports, "text"),
        "show interfaces transceiver | json": lambda: _transceiver(ports, "json"),
        "show interfaces transceiver dom thresholds | json": lambda: _transceiver(ports, "thresholds"),
        "show interfaces transceiver hardware": lambda: _transceiver(ports, "hardware"),
        "show interfaces transceiver detail": lambda: _transceiver(ports, "text"),
        "show priority-flow-control": lambda: _pfc(state, ports),
        "show priority-flow-control counters | json": lambda: _pfc_counters(ports),
        "show priority-flow-control counters watchdog | json": lambda: _pfc_watchdog_counters(ports),
        "show qos interfaces ecn counters queue | json": lambda: _ecn_counters(ports),
        "show interfaces counters queue drops | json": lambda: _queue_drops(ports),
        "show interfaces phy detail | json": lambda: _phy_detail(ports),
        "show hostname": lambda: f"Hostname: {dev.name}\nFQDN:     {dev.name}\n",
        "show hostname | json": lambda: json.dumps({"fqdn": dev.name, "hostname": dev.name}, indent=2) + "\n",
        "show system environment cooling | json": lambda: _environment("cooling"),
        "show system environment temperature | json": lambda: _environment("temperature"),
        "show system environment power | json": lambda: _environment("power"),
        "show processes top once": _top,
        "show clock": lambda: "Sun Nov 29 08:00:00 2026\nTimezone: UTC\nClock source: local\n",
        "show ip bgp summary | json": lambda: routing.eos_summary_json(state),
        "show ip bgp summary vrf all | json": lambda: routing.eos_summary_json(state),
    }
    fn = table.get(cmd)
    words = cmd.split()
    if fn is None and len(words) == 6 and words[:3] == ["show", "ip", "route"] and words[4:] == ["|", "json"]:
        return Answer(routing.eos_route_json(state, words[3]))
    if fn is None:
        return Answer("% Invalid input\n", 127)
    return Answer(fn())
