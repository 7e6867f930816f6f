"""SONiC outputs rendered from a device state: CONFIG_DB and the sonic-utilities ``show`` tables.

Layouts follow ``tests/samples/sonic`` (tabulate ``simple`` tables, right-aligned; CONFIG_DB
JSON as ``show runningconfiguration all`` prints it).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from fabline.platforms.sonic import FLAP_RELEASES
from fabline.sim.render import linux, routing
from fabline.sim.render.common import Answer, SimView, mw, ranges, simple_table, split_words

PLATFORM = "x86_64-nvidia_sn5600-r0"
HWSKU = "Mellanox-SN5600-V256"
USAGE = 'Usage: show [OPTIONS] COMMAND [ARGS]...\nTry "show -h" for help.\n\n'


def _ports(state: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {n: b for n, b in state.get("interfaces", {}).items() if n.startswith("Ethernet")}


def _alias(name: str) -> str:
    return f"etp{int(name[len('Ethernet') :]) // 8 + 1}"


def _lanes(name: str) -> str:
    first = int(name[len("Ethernet") :])
    return ",".join(str(first + k) for k in range(8))


def config_db(dev: SimView, state: dict[str, Any]) -> dict[str, Any]:
    """The device's CONFIG_DB (nested form), consistent with its state."""
    ports = _ports(state)
    db: dict[str, Any] = {
        "DEVICE_METADATA": {
            "localhost": {
                "hostname": dev.name,
                "hwsku": HWSKU,
                "platform": PLATFORM,
                "mac": "1c:34:da:5e:8a:00",
                "type": "LeafRouter" if dev.spec.role == "leaf" else "SpineRouter",
                "bgp_asn": str((state.get("bgp") or {}).get("asn", 65100)),
                "buffer_model": "traditional",
                "default_pfcwd_status": "enable",
            }
        },
        "PORT": {},
        "PORT_QOS_MAP": {},
        "DSCP_TO_TC_MAP": {},
        "QUEUE": {},
        "WRED_PROFILE": {},
        "PFC_WD": {},
        "LLDP": {"GLOBAL": {"enabled": "true"}},
    }
    maps: dict[str, str] = {}
    profiles: dict[str, str] = {}
    wd = state.get("qos", {}).get("pfc_watchdog", {})
    for name, body in ports.items():
        port: dict[str, Any] = {
            "admin_status": "up" if body.get("admin_up") else "down",
            "alias": _alias(name),
            "index": str(int(name[len("Ethernet") :]) // 8 + 1),
            "lanes": _lanes(name),
        }
        if "mtu" in body:
            port["mtu"] = str(body["mtu"])
        if "speed_gbps" in body:
            port["speed"] = str(int(body["speed_gbps"] * 1000))
        if "fec" in body:
            port["fec"] = body["fec"]
        if "autoneg" in body:
            port["autoneg"] = "on" if body["autoneg"] else "off"
        if body.get("lldp"):
            port["description"] = f"{body['lldp']['device']}:{body['lldp']['port']}"
        db["PORT"][name] = port
        qos: dict[str, str] = {}
        if "dscp_to_priority" in body and body.get("trust", "dscp") == "dscp":
            key = json.dumps(body["dscp_to_priority"], sort_keys=True)
            if key not in maps:
                map_name = "AZURE" if not maps else f"AZURE_{len(maps)}"
                maps[key] = map_name
                db["DSCP_TO_TC_MAP"][map_name] = {k: str(v) for k, v in body["dscp_to_priority"].items()}
            qos["dscp_to_tc_map"] = maps[key]
        if body.get("pfc_priorities"):
            qos["pfc_enable"] = ranges(body["pfc_priorities"])
        if qos:
            db["PORT_QOS_MAP"][name] = qos
        for q, ecn in body.get("ecn", {}).items():
            if not ecn.get("enabled"):
                db["QUEUE"][f"{name}|{q}"] = {"scheduler": "scheduler.0"}
                continue
            pkey = json.dumps(ecn, sort_keys=True)
            if pkey not in profiles:
                pname = "AZURE_LOSSLESS" if not profiles else f"AZURE_LOSSLESS_{len(profiles)}"
                profiles[pkey] = pname
                lo, hi = str(ecn.get("min_bytes", 0)), str(ecn.get("max_bytes", 0))
                prob = str(ecn.get("probability_pct", 5))
                db["WRED_PROFILE"][pname] = {
                    "ecn": "ecn_all",
                    "wred_green_enable": "true",
                    "wred_yellow_enable": "true",
                    "wred_red_enable": "true",
                    "green_min_threshold": lo,
                    "green_max_threshold": hi,
                    "green_drop_probability": prob,
                    "yellow_min_threshold": lo,
                    "yellow_max_threshold": hi,
                    "yellow_drop_probability": prob,
                    "red_min_threshold": lo,
                    "red_max_threshold": hi,
                    "red_drop_probability": prob,
                }
            db["QUEUE"][f"{name}|{q}"] = {"scheduler": "scheduler.1", "wred_profile": profiles[pkey]}
        if wd.get("enabled") and body.get("pfc_priorities"):
            db["PFC_WD"][name] = {
                "action": wd.get("action", "drop"),
                "detection_time": str(wd.get("detection_ms", 200)),
                "restoration_time": str(wd.get("restoration_ms", 200)),
            }
    if db["PFC_WD"]:
        db["PFC_WD"]["GLOBAL"] = {"POLL_INTERVAL": "200"}
    db["BGP_NEIGHBOR"] = routing.sonic_bgp_neighbors(state)
    db["SWITCH_HASH"] = routing.sonic_switch_hash(state)
    return {k: v for k, v in db.items() if v}


def _flat(db: dict[str, Any]) -> dict[str, Any]:
    return {f"{table}|{key}": value for table, rows in db.items() for key, value in rows.items()}


def _version(state: dict[str, Any]) -> str:
    f = state.get("facts", {})
    return (
        f"SONiC Software Version: {f.get('os_version', '')}\n"
        "SONiC OS Version: 12\n"
        "Distribution: Debian 12.5\n"
        "Kernel: 6.1.0-11-2-amd64\n"
        "Build commit: 6a2d3b7b9\n"
        "Build date: Tue Mar 12 02:11:42 UTC 2024\n"
        "Built by: sonicbld@jenkins-worker-15\n\n"
        f"Platform: {PLATFORM}\n"
        f"HwSKU: {HWSKU}\n"
        "ASIC: mellanox\n"
        "ASIC Count: 1\n"
        f"Serial Number: {f.get('serial', '')}\n"
        f"Model Number: {f.get('model', '')}\n"
        "Hardware Rev: A1\n"
        "Uptime: 08:00:00 up 12 days,  3:14,  1 user,  load average: 1.26, 1.45, 0.66\n"
        "Date: Sun 29 Nov 2026 08:00:00\n\n"
        "Docker images:\n"
        "REPOSITORY                 TAG                 IMAGE ID            SIZE\n"
        "docker-syncd-mlnx          latest              434240daff6e        362MB\n"
        "docker-orchagent           latest              e4f9c4631025        287MB\n"
        "docker-lldp                latest              9681bbfea3ac        275MB\n"
    )


def _platform_summary(state: dict[str, Any]) -> str:
    f = state.get("facts", {})
    return (
        f"Platform: {PLATFORM}\nHwSKU: {HWSKU}\nASIC: mellanox\nASIC Count: 1\n"
        f"Serial Number: {f.get('serial', '')}\nModel Number: {f.get('model', '')}\nHardware Rev: A1\n"
    )


def _updown(v: Any) -> str:
    return "up" if v else "down"


def _status(ports: dict[str, dict[str, Any]]) -> str:
    rows = []
    for name, b in ports.items():
        speed = f"{int(b['speed_gbps'])}G" if "speed_gbps" in b else "N/A"
        typ = "OSFP 8X Pluggable Transceiver" if b.get("optics") else "N/A"
        rows.append([name, _lanes(name), speed, b.get("mtu", "N/A"), b.get("fec", "N/A"), _alias(name),
                     "routed", _updown(b.get("oper_up")), _updown(b.get("admin_up")), typ, "off"])  # fmt: skip
    headers = [
        "Interface",
        "Lanes",
        "Speed",
        "MTU",
        "FEC",
        "Alias",
        "Vlan",
        "Oper",
        "Admin",
        "Type",
        "Asym PFC",
    ]
    return simple_table(headers, rows) + "\n"


def _description(ports: dict[str, dict[str, Any]]) -> str:
    rows = []
    for name, b in ports.items():
        desc = f"{b['lldp']['device']}:{b['lldp']['port']}" if b.get("lldp") else ""
        rows.append([name, _updown(b.get("oper_up")), _updown(b.get("admin_up")), _alias(name), desc])
    return simple_table(["Interface", "Oper", "Admin", "Alias", "Description"], rows) + "\n"


def _fec_status(ports: dict[str, dict[str, Any]]) -> str:
    rows = [
        [n, b.get("fec", "N/A") if b.get("oper_up") else "N/A", b.get("fec", "N/A")] for n, b in ports.items()
    ]
    return simple_table(["Interface", "FEC Oper", "FEC Admin"], rows) + "\n"


def _autoneg(ports: dict[str, dict[str, Any]]) -> str:
    rows = []
    for n, b in ports.items():
        mode = "N/A" if "autoneg" not in b else ("enabled" if b["autoneg"] else "disabled")
        speed = f"{int(b['speed_gbps'])}G" if "speed_gbps" in b else "N/A"
        rows.append(
            [
                n,
                mode,
                speed,
                "N/A",
                "N/A",
                "N/A",
                "N/A",
                _updown(b.get("oper_up")),
                _updown(b.get("admin_up")),
            ]
        )
    headers = [
        "Interface",
        "Auto-Neg Mode",
        "Speed",
        "Adv Speeds",
        "Rmt Adv Speeds",
        "Type",
        "Adv Types",
        "Oper",
        "Admin",
    ]
    return simple_table(headers, rows) + "\n"


def _lldp_table(ports: dict[str, dict[str, Any]]) -> str:
    rows = [
        [n, b["lldp"]["device"], b["lldp"]["port"], "BR", b["lldp"]["port"]]
        for n, b in ports.items()
        if b.get("lldp")
    ]
    table = simple_table(
        ["LocalPort", "RemoteDevice", "RemotePortID", "Capability", "RemotePortDescr"], rows, align="left"
    )
    return (
        "Capability codes: (R) Router, (B) Bridge, (O) Other\n"
        + table
        + "\n"
        + "-" * 50
        + f"\nTotal entries displayed:  {len(rows)}\n"
    )


def _lldp_neighbors(ports: dict[str, dict[str, Any]]) -> str:
    out = ["-" * 64, "LLDP neighbors:", "-" * 64]
    for n, b in ports.items():
        peer = b.get("lldp")
        if not peer:
            continue
        out += [
            f"Interface:    {n}, via: LLDP, RID: 1, Time: 12 days, 03:14:07",
            "  Chassis:",
            "    ChassisID:    mac 1c:34:da:5e:8a:00",
            f"    SysName:      {peer['device']}",
            "    SysDescr:     fabline simulated device",
            "    Capability:   Bridge, on",
            "    Capability:   Router, on",
            "  Port:",
            f"    PortID:       ifname {peer['port']}",
            f"    PortDescr:    {peer['port']}",
            "    TTL:          120",
            "-" * 64,
        ]
    return "\n".join(out) + "\n"


def _pfc_priority(ports: dict[str, dict[str, Any]]) -> str:
    rows = [[n, ranges(b["pfc_priorities"]) or "N/A"] for n, b in ports.items() if "pfc_priorities" in b]
    return "\n" + simple_table(["Interface", "Lossless priorities"], rows, align="left") + "\n\n"


def _pfc_asym(ports: dict[str, dict[str, Any]]) -> str:
    return (
        "\n" + simple_table(["Interface", "Asymmetric"], [[n, "off"] for n in ports], align="left") + "\n\n"
    )


def _pfcwd_config(state: dict[str, Any], ports: dict[str, dict[str, Any]]) -> str:
    wd = state.get("qos", {}).get("pfc_watchdog", {})
    rows = []
    if wd.get("enabled"):
        for n, b in ports.items():
            if b.get("pfc_priorities"):
                rows.append(
                    [
                        n,
                        wd.get("action", "drop"),
                        wd.get("detection_ms", 200),
                        wd.get("restoration_ms", 200),
                        "disable",
                    ]
                )
    table = simple_table(["PORT", "ACTION", "DETECTION TIME", "RESTORATION TIME", "HISTORY"], rows)
    return "Changed polling interval to 200ms\n" + table + "\n"


def _flap(ports: dict[str, dict[str, Any]]) -> str:
    """``show interfaces flap`` (202505+), as sonic-utilities' tabulate prints it.

    APPL_DB ``flap_count`` is the state's ``counters.link_flaps`` (``Never`` when absent); the last
    link change is ``last_flap_epoch_s``: the link-up time of a port that is up (its link-down
    time 18 s before), the link-down time of one that is down; ``Never`` without it.
    """

    def when(epoch: float | None) -> str:
        return (
            "Never" if epoch is None else datetime.fromtimestamp(epoch, UTC).strftime("%a %b %d %H:%M:%S %Y")
        )

    rows = []
    for name, b in ports.items():
        flaps = b.get("counters", {}).get("link_flaps")
        last = b.get("last_flap_epoch_s")
        up = bool(b.get("oper_up"))
        down_at, up_at = (None, None) if last is None else ((last - 18, last) if up else (last, None))
        rows.append([name, "Never" if flaps is None else str(flaps), "Up" if b.get("admin_up", True) else "Down",
                     "Up" if up else "Down", when(down_at), when(up_at)])  # fmt: skip
    headers = [
        "Interface",
        "Flap Count",
        "Admin",
        "Oper",
        "Link Down TimeStamp(UTC)",
        "Link Up TimeStamp(UTC)",
    ]
    numeric = all(r[1].isdigit() for r in rows)
    # tabulate's 'simple' layout: a header gets two characters of padding (MIN_PADDING).
    widths = [max([len(h) + 2, *(len(r[i]) for r in rows)]) for i, h in enumerate(headers)]

    def line(values: list[str]) -> str:
        cells = [
            v.rjust(w) if i == 1 and numeric else v.ljust(w)
            for i, (v, w) in enumerate(zip(values, widths, strict=True))
        ]
        return "  ".join(cells).rstrip()

    out = [line(headers), "  ".join("-" * w for w in widths), *(line(r) for r in rows)]
    return "\n".join(out) + "\n"


def _pfcwd_stats(ports: dict[str, dict[str, Any]]) -> str:
    """``show pfcwd stats``: only queues that had a storm are listed (sonic-utilities hides all-zero rows)."""
    headers = [
        "QUEUE",
        "STATUS",
        "STORM DETECTED/RESTORED",
        "TX OK/DROP",
        "RX OK/DROP",
        "TX LAST OK/DROP",
        "RX LAST OK/DROP",
    ]
    rows = []
    for n, b in ports.items():
        c = b.get("counters", {})
        detected, restored = c.get("pfcwd_storms_detected", {}), c.get("pfcwd_storms_restored", {})
        stormed = set(b.get("pfcwd_stormed_queues", []))
        for q in sorted({*detected, *restored, *map(str, stormed)}, key=int):
            status = "stormed" if int(q) in stormed else "operational"
            rows.append([f"{n}:{q}", status, f"{detected.get(q, 0)}/{restored.get(q, 0)}", "0/0",
                         "0/0", "0/0", "0/0"])  # fmt: skip
    return simple_table(headers, rows) + "\n"


def _redis_cli(state: dict[str, Any], args: list[str]) -> Answer:
    """``redis-cli -n 0 HGETALL SWITCH_TABLE:switch`` as on a terminal (netmiko's session has one).

    APPL_DB's switch table as sonic-buildimage's ``switch.json.j2`` writes it (the seed, the LAG
    seed equal to it, the FDB aging time), in redis-cli's numbered, quoted reply form (the public
    capture in a SONiC design document). The seed is the state's ``load_balance.hash_seed`` (else
    0, the template's ToR value); any other key is an empty hash.
    """
    if len(args) != 4 or args[:3] != ["-n", "0", "HGETALL"]:
        return Answer("(error) ERR wrong number of arguments or unknown command\n")
    if args[3] != "SWITCH_TABLE:switch":
        return Answer("(empty array)\n")
    seed = (state.get("load_balance") or {}).get("hash_seed")
    seed = seed if type(seed) is int else 0
    items = ["ecmp_hash_seed", str(seed), "lag_hash_seed", str(seed), "fdb_aging_time", "600"]
    width = len(str(len(items)))  # redis-cli pads the item numbers to the widest one
    return Answer("".join(f'{i:>{width}}) "{item}"\n' for i, item in enumerate(items, 1)))


def _pg_drops(ports: dict[str, dict[str, Any]]) -> str:
    """``show priority-group drop counters`` as the SONiC Command Reference prints it."""
    rows = []
    for n, b in ports.items():
        drops = b.get("counters", {}).get("pg_dropped", {})
        rows.append([n, *(f"{int(drops.get(str(p), 0))}" for p in range(8))])
    return (
        "Ingress PG dropped packets:\n" + simple_table(["Port", *(f"PG{p}" for p in range(8))], rows) + "\n"
    )


def _queue_counters(ports: dict[str, dict[str, Any]]) -> str:
    """``show queue counters``: one table per port, unicast queues UC0-UC9 then MC0-MC9."""
    blocks = []
    for n, b in ports.items():
        drops = b.get("counters", {}).get("queue_dropped", {})
        up = bool(b.get("oper_up"))
        rows = []
        for kind in ("UC", "MC"):
            for q in range(10):
                sent = 1843210 if up and kind == "UC" and q == 3 else 0
                drop = int(drops.get(str(q), 0)) if kind == "UC" else 0
                rows.append(
                    [n, f"{kind}{q}", f"{sent:,}", f"{sent * 4096:,}", f"{drop:,}", f"{drop * 4096:,}"]
                )
        headers = ["Port", "TxQ", "Counter/pkts", "Counter/bytes", "Drop/pkts", "Drop/bytes"]
        blocks.append(simple_table(headers, rows))
    return "\n\n".join(blocks) + "\n"


def _ecn(dev: SimView, state: dict[str, Any]) -> str:
    blocks = []
    for name, prof in config_db(dev, state).get("WRED_PROFILE", {}).items():
        rows = [[k, v] for k, v in prof.items()]
        width = max(len(k) for k in prof)
        lines = [f"Profile: {name}", "-" * width + "  " + "-" * 7]
        lines += [f"{k:<{width}}  {v}" for k, v in (r for r in rows)]
        lines.append("-" * width + "  " + "-" * 7)
        blocks.append("\n".join(lines))
    return "\n".join(blocks) + "\n"


def _eeprom(ports: dict[str, dict[str, Any]], dom: bool, only: str | None) -> str:
    out = []
    for n, b in ports.items():
        if only and n != only:
            continue
        o = b.get("optics")
        if not o:
            out.append(f"{n}: SFP EEPROM Not detected\n")
            continue
        lines = [
            f"{n}: SFP EEPROM detected",
            "        Active Firmware: 46.120.10",
            "        CMIS Rev: 5.0",
            "        Connector: MPO 1x12",
            "        Encoding: N/A",
            "        Extended Identifier: Power Class 8 (17.0W Max)",
            "        Extended RateSelect Compliance: N/A",
            "        Host Lane Count: 4",
            "        Identifier: OSFP 8X Pluggable Transceiver",
            "        Inactive Firmware: 46.120.10",
            "        Length Cable Assembly(m): 0.0",
            "        Media Interface Technology: 1310 nm EML",
            "        Media Lane Count: 4",
            "        Module Hardware Rev: A2",
            "        Nominal Bit Rate(100Mbs): 0",
            "        Specification compliance: sm_media_interface",
            "        Vendor Date Code(YYYY-MM-DD Lot): 2023-04-12",
            f"        Vendor Name: {o.get('vendor', '')}",
            "        Vendor OUI: 00-02-c9",
            f"        Vendor PN: {o.get('part_number', '')}",
            "        Vendor Rev: A2",
            f"        Vendor SN: {o.get('serial', '')}",
        ]
        if dom:
            lines.append("        ChannelMonitorValues:")
            for k, v in enumerate(o.get("rx_power_dbm", [])):
                lines.append(f"                RX{k + 1}Power: {_dbm(v)}dBm")
            for k, _v in enumerate(o.get("tx_power_dbm", [])):
                lines.append(f"                TX{k + 1}Bias: {7.45 + k * 0.02:.4f}mA")
            for k, v in enumerate(o.get("tx_power_dbm", [])):
                lines.append(f"                TX{k + 1}Power: {_dbm(v)}dBm")
            lines += [
                "        ChannelThresholdValues:",
                "                RxPowerHighAlarm  : 5.4dBm",
                "                RxPowerLowAlarm   : -10.4dBm",
                "        ModuleMonitorValues:",
                f"                Temperature: {float(o.get('temperature_c', 40.0)):.3f}C",
                "                Vcc: 3.289Volts",
            ]
        out.append("\n".join(lines) + "\n")
    return "\n".join(out)


def _dbm(v: float) -> str:
    return "-inf" if v <= -40.0 else f"{v:.3f}"


#: CMIS flag lines as sonic-utilities prints them (the Command Reference's order), per module or lane.
_CMIS_FLAGS = (
    "Temperature high alarm flag", "Temperature high warning flag", "Temperature low warning flag",
    "Temperature low alarm flag", "Vcc high alarm flag", "Vcc high warning flag", "Vcc low warning flag",
    "Vcc low alarm flag",
)  # fmt: skip
_CMIS_LANE_FLAGS = (
    "Tx fault flag on media lane", "Rx loss of signal flag on media lane", "Tx power high alarm flag on lane",
    "Tx power low alarm flag on lane", "Rx power high alarm flag on lane", "Rx power low alarm flag on lane",
    "Rx power low warning flag on lane",
)  # fmt: skip


def _tx_status(ports: dict[str, dict[str, Any]], only: str | None) -> str:
    """``show interfaces transceiver status``: CMIS state and flags (True for the state's ``active_flags``)."""
    out = []
    for n, b in ports.items():
        if only and n != only:
            continue
        if not b.get("optics"):
            out.append(f"{n}: SFP EEPROM Not detected\n")
            continue
        active = set(b["optics"].get("active_flags", []))
        lines = [
            f"{n}: ",
            "        CMIS State (SW): READY",
            "        Current module state: ModuleReady",
            "        Reason of entering the module fault state: No Fault detected",
            "        Datapath firmware fault: False",
            "        Module firmware fault: False",
            "        Module state changed: False",
            "        Data path state indicator on host lane 1: DataPathActivated",
        ]
        lanes = len(b["optics"].get("rx_power_dbm", [])) or 1
        names = [f"{f} {lane}" for f in _CMIS_LANE_FLAGS for lane in range(1, lanes + 1)] + list(_CMIS_FLAGS)
        lines += [f"        {name}: {name in active}" for name in names]
        out.append("\n".join(lines) + "\n")
    return "\n".join(out)


def _pfc_counters(ports: dict[str, dict[str, Any]]) -> str:
    def table(title: str, key: str) -> str:
        rows = []
        for n, b in ports.items():
            c = b.get("counters", {}).get(key, {})
            rows.append([n, *(f"{int(c.get(str(p), 0)):,}" for p in range(8))])
        return simple_table([title, *(f"PFC{p}" for p in range(8))], rows)

    return table("Port Rx", "pfc_rx_pause") + "\n\n" + table("Port Tx", "pfc_tx_pause") + "\n"


def _intf_counters(ports: dict[str, dict[str, Any]]) -> str:
    rows = []
    for n, b in ports.items():
        up = bool(b.get("oper_up"))
        rows.append([n, "U" if up else "D", f"{1843210987 if up else 0:,}", "1203.47 MB/s" if up else "0.00 B/s",
                     "24.07%" if up else "0.00%", 0, 0, 0, f"{1790332114 if up else 0:,}",
                     "1198.20 MB/s" if up else "0.00 B/s", "23.96%" if up else "0.00%", 0, 0, 0])  # fmt: skip
    headers = ["IFACE", "STATE", "RX_OK", "RX_BPS", "RX_UTIL", "RX_ERR", "RX_DRP", "RX_OVR",
               "TX_OK", "TX_BPS", "TX_UTIL", "TX_ERR", "TX_DRP", "TX_OVR"]  # fmt: skip
    return simple_table(headers, rows) + "\n"


def _fec_stats(ports: dict[str, dict[str, Any]]) -> str:
    """``show interfaces counters fec-stats`` (portstat -f), the 202305+ column set with BER."""
    rows = []
    for n, b in ports.items():
        c = b.get("counters", {})
        up = bool(b.get("oper_up"))
        corr, uncorr = int(c.get("fec_corrected", 0)), int(c.get("fec_uncorrectable", 0))
        rows.append([n, "U" if up else "D", f"{corr:,}", f"{uncorr:,}", f"{corr + uncorr:,}",
                     "1.48e-09" if up else "0.00e+00", f"{uncorr * 1e-12:.2e}"])  # fmt: skip
    headers = ["IFACE", "STATE", "FEC_CORR", "FEC_UNCORR", "FEC_SYMBOL_ERR", "FEC_PRE_BER", "FEC_POST_BER"]
    return simple_table(headers, rows) + "\n"


def _wred(ports: dict[str, dict[str, Any]], only: str | None, as_json: bool) -> str:
    if as_json:
        doc: dict[str, Any] = {}
        for n, b in ports.items():
            if n != only:
                continue
            marked = int(b.get("counters", {}).get("ecn_marked", 0))
            doc[n] = {
                f"UC{q}": {"wreddroppacket": "0", "wreddropbytes": "0",
                           "ecnmarkedpacket": str(marked if q == 3 else 0), "ecnmarkedbytes": str(marked * 4096 if q == 3 else 0)}
                for q in range(8)
            }  # fmt: skip
        return json.dumps(doc, indent=4) + "\n"
    blocks = []
    for n, b in ports.items():
        marked = int(b.get("counters", {}).get("ecn_marked", 0))
        rows = [
            [n, f"UC{q}", 0, 0, f"{marked if q == 3 else 0:,}", f"{marked * 4096 if q == 3 else 0:,}"]
            for q in range(8)
        ]
        rows += [[n, f"MC{q}", "N/A", "N/A", "N/A", "N/A"] for q in range(8, 10)]
        headers = ["Port", "TxQ", "WredDrp/pkts", "WredDrp/bytes", "EcnMarked/pkts", "EcnMarked/bytes"]
        table = simple_table(headers, rows).split("\n")
        blocks.append("\n".join([table[0], table[1], "", *table[2:]]))
    return "\n\n".join(blocks) + "\n"


def _vtysh(dev: SimView, state: dict[str, Any], args: list[str]) -> Answer:
    """``vtysh -c 'CMD'``: SONiC's /usr/bin/vtysh runs FRR's shell in the bgp container."""
    if len(args) != 2 or args[0] != "-c":
        return Answer("", 1, "% vtysh: only '-c COMMAND' is answered here\n")
    words = args[1].split()
    cmd = " ".join(words)
    if cmd in ("show bgp summary json", "show ip bgp summary json"):
        return Answer(routing.frr_summary_json(state, dev.name))
    if cmd == "show bgp ipv4 unicast summary":
        return Answer(routing.frr_summary_text(state))
    if len(words) == 5 and words[:3] == ["show", "ip", "route"] and words[4] == "json":
        return Answer(routing.frr_route_json(state, words[3]))
    return Answer(f"% Unknown command: {cmd}\n", 1)


def render(dev: SimView, line: str) -> Answer:
    """Run one simple command line on a SONiC switch."""
    state = dev.state()
    try:
        argv = split_words(line)
    except ValueError:
        return Answer("", 2, "-bash: syntax error: unexpected end of file\n")
    if not argv:
        return Answer("")
    ports = _ports(state)
    if argv[0] == "sudo":
        argv = argv[1:]
    if argv in (["cat", "/etc/sonic/config_db.json"], ["sonic-cfggen", "-d", "--print-data"]):
        return Answer(json.dumps(config_db(dev, state), indent=4, sort_keys=True) + "\n")
    if argv == ["sonic-db-dump", "-n", "CONFIG_DB", "-y"]:
        return Answer(json.dumps(_flat(config_db(dev, state)), indent=4, sort_keys=True) + "\n")
    if argv[0] == "config":
        return Answer("", 1, "Root privileges are required for this operation\n")
    if argv[0] in ("hostname", "uname", "cat", "grep", "ls", "ip"):
        if argv[0] == "hostname":
            return Answer(dev.name + "\n")
        return (
            linux.render(dev, line)
            if argv[0] != "cat"
            else Answer("", 1, f"cat: {argv[-1]}: No such file or directory\n")
        )
    if argv[0] == "vtysh":
        return _vtysh(dev, state, argv[1:])
    if argv[0] == "redis-cli":
        return _redis_cli(state, argv[1:])
    if argv[0] != "show":
        return linux.not_found(argv[0])
    words = argv[1:]
    iface = None
    if len(words) >= 3 and words[-1].startswith("Ethernet") and words[-1] not in ("--dom",):
        iface = words[-1]
    if words and words[-1] == "--json" and len(words) >= 2 and words[-2].startswith("Ethernet"):
        iface = words[-2]
    key = " ".join(w for w in words if w != iface)
    only = {iface: ports[iface]} if iface in ports else ({} if iface else ports)
    if iface and iface not in ports:
        return Answer("", 1, f"Error: Invalid interface name {iface}\n")
    table: dict[str, Any] = {
        "runningconfiguration all": lambda: (
            json.dumps(config_db(dev, state), indent=4, sort_keys=True) + "\n"
        ),
        "version": lambda: _version(state),
        "platform summary": lambda: _platform_summary(state),
        "interfaces status": lambda: _status(only),
        "interfaces description": lambda: _description(only),
        "interfaces fec status": lambda: _fec_status(only),
        "interfaces autoneg status": lambda: _autoneg(only),
        "lldp table": lambda: _lldp_table(ports),
        "lldp neighbors": lambda: _lldp_neighbors(only),
        "pfc priority": lambda: _pfc_priority(only),
        "pfc asymmetric": lambda: _pfc_asym(only),
        "pfcwd config": lambda: _pfcwd_config(state, ports),
        "pfcwd stats": lambda: _pfcwd_stats(ports),
        "priority-group drop counters": lambda: _pg_drops(ports),
        "queue counters": lambda: _queue_counters(ports),
        "ecn": lambda: _ecn(dev, state),
        "interfaces transceiver eeprom --dom": lambda: _eeprom(ports, True, iface),
        "interfaces transceiver eeprom": lambda: _eeprom(ports, False, iface),
        "interfaces transceiver info": lambda: _eeprom(ports, False, iface),
        "interfaces transceiver status": lambda: _tx_status(ports, iface),
        "pfc counters": lambda: _pfc_counters(ports),
        "interfaces counters": lambda: _intf_counters(ports),
        "interfaces counters fec-stats": lambda: _fec_stats(ports),
        "queue wredcounters": lambda: _wred(ports, None, False),
        "queue wredcounters --json": lambda: _wred(ports, iface, True),
    }
    if key == "interfaces flap" and FLAP_RELEASES.has((state.get("facts") or {}).get("os_version")) is False:
        # Before 202505 'show interfaces' has no 'flap' subcommand: click's answer.
        return Answer("", 2, 'Usage: show interfaces [OPTIONS] COMMAND [ARGS]...\nTry "show interfaces -h" for help.\n\n'
                      'Error: No such command "flap".\n')  # fmt: skip
    table["interfaces flap"] = lambda: _flap(ports)
    fn = table.get(key)
    if fn is None:
        bad = words[0] if words else ""
        return Answer("", 2, USAGE + f'Error: No such command "{bad}".\n' if words else USAGE)
    return Answer(fn())


__all__ = ["config_db", "mw", "render"]
