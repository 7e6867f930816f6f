"""NVIDIA Cumulus Linux outputs rendered from a device state (NVUE tables and JSON, lldpd, NCLU JSON).

Layouts follow ``tests/samples/cumulus`` (``nv show`` tables with operational/applied
columns, ``nv show qos roce``, ``decode-syseeprom``, NCLU ``net show interface all json``),
NVUE's documented JSON for ``nv config show -o json`` / ``nv show interface -o json`` and the
lldpd detail layout of ``nv show interface lldp-detail`` (NVUE command reference, and a 5.16 lab
capture in ``tests/parsers/local/cumulus``).

The switch answers as the release its state names (``facts.os_version``) does, by the release
table of the platform spec (``Command.releases``, from NVIDIA's documentation): a 5.x switch has
no NCLU (``net``: bash's "command not found") and no ``traffic.conf``; a 3.x/4.x switch has no
``nv``; an NVUE command newer than the release (``transceiver`` before 5.11, ``qos pfc-watchdog``
before 5.6) is an NVUE usage error.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from fabline.platforms.base import release_key
from fabline.platforms.cumulus import PLATFORM
from fabline.platforms.cumulus_nvue import PHY_DIAG_FLAGS
from fabline.sim.render import linux, routing
from fabline.sim.render.common import Answer, SimView, ranges

#: Cumulus's FEC words (the platform spec's vocabulary, shared with its parsers).
_FEC = PLATFORM.vocabulary.fec


def _ports(state: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {n: b for n, b in state.get("interfaces", {}).items() if n.startswith("swp")}


def _common(ports: dict[str, dict[str, Any]], field: str) -> Any:
    values = [json.dumps(b[field], sort_keys=True) for b in ports.values() if field in b]
    return json.loads(Counter(values).most_common(1)[0][0]) if values else None


def _size(n: float) -> str:
    """NVUE's rounded binary sizes (150000 -> '146.48 KB')."""
    if n >= 1024 * 1024:
        return f"{n / 1024 / 1024:.2f} MB"
    return f"{n / 1024:.2f} KB"


def _mapping(dmap: dict[str, int], trust: str) -> dict[str, Any]:
    return {"trust": PLATFORM.vocabulary.trust[trust],
            "dscp": {k: {"switch-priority": v} for k, v in dmap.items()}}  # fmt: skip


def _pfc(prios: list[int]) -> dict[str, Any]:
    return {"switch-priority": {str(p): {} for p in prios}, "rx": "enable", "tx": "enable"}


def _cc(ecn: dict[str, Any]) -> dict[str, Any]:
    tcs = {}
    for tc, e in ecn.items():
        body: dict[str, Any] = {"ecn": "enable" if e.get("enabled") else "disable"}
        if "min_bytes" in e:
            body["min-threshold"] = e["min_bytes"]
        if "max_bytes" in e:
            body["max-threshold"] = e["max_bytes"]
        if "probability_pct" in e:
            body["probability"] = e["probability_pct"]
        tcs[tc] = body
    return {"traffic-class": tcs}


def _new_words(state: dict[str, Any]) -> bool:
    """Whether the release says ``state: enabled`` / ``enabled|disabled`` (5.15+, NVIDIA's changed commands)."""
    key = release_key(str(state.get("facts", {}).get("os_version", "")))
    return key is not None and key >= (5, 15, 0)


def _link(b: dict[str, Any], new_words: bool = False) -> dict[str, Any]:
    link: dict[str, Any] = {"state": {"up" if b.get("admin_up") else "down": {}}}
    if "mtu" in b:
        link["mtu"] = b["mtu"]
    if "speed_gbps" in b:
        link["speed"] = f"{int(b['speed_gbps'])}G"
    if "fec" in b:
        link["fec"] = _FEC[b["fec"]]
    if "autoneg" in b:
        words = ("enabled", "disabled") if new_words else ("on", "off")
        link["auto-negotiate"] = words[0] if b["autoneg"] else words[1]
    return link


def nv_config(dev: SimView, state: dict[str, Any]) -> list[dict[str, Any]]:
    """``nv config show -o json``: the switch-wide RoCE profiles plus a port profile per deviation."""
    ports = _ports(state)
    wd = state.get("qos", {}).get("pfc_watchdog", {})
    dmap, trust = _common(ports, "dscp_to_priority") or {}, _common(ports, "trust") or "dscp"
    pfc, ecn = _common(ports, "pfc_priorities") or [], _common(ports, "ecn") or {}
    qos: dict[str, Any] = {
        "roce": {"state": "enabled", "mode": "lossless"}
        if _new_words(state)
        else {"enable": "on", "mode": "lossless"},
        "mapping": {"default-global": _mapping(dmap, trust)},
        "pfc": {"default-global": _pfc(pfc)},
        "congestion-control": {"default-global": _cc(ecn)},
    }
    interfaces: dict[str, Any] = {
        "eth0": {"type": "eth", "ip": {"address": {"dhcp": {}}, "vrf": "mgmt"}},
        "lo": {"type": "loopback"},
    }
    for name, b in ports.items():
        body: dict[str, Any] = {"type": "swp", "link": _link(b, _new_words(state))}
        if b.get("lldp"):
            body["description"] = f"{b['lldp']['device']} {b['lldp']['port']}"
        port_qos: dict[str, Any] = {}
        if ("dscp_to_priority" in b and b["dscp_to_priority"] != dmap) or (
            "trust" in b and b["trust"] != trust
        ):
            qos["mapping"][f"{name}-map"] = _mapping(b.get("dscp_to_priority", dmap), b.get("trust", trust))
            port_qos["mapping"] = {"profile": f"{name}-map"}
        if "pfc_priorities" in b and b["pfc_priorities"] != pfc:
            qos["pfc"][f"{name}-pfc"] = _pfc(b["pfc_priorities"])
            port_qos["pfc"] = {"profile": f"{name}-pfc"}
        if "ecn" in b and b["ecn"] != ecn:
            qos["congestion-control"][f"{name}-ecn"] = _cc(b["ecn"])
            port_qos["congestion-control"] = {"profile": f"{name}-ecn"}
        if b.get("pfc_priorities"):
            port_qos["pfc-watchdog"] = {"state": "enable" if wd.get("enabled") else "disable"}
        if port_qos:
            body["qos"] = port_qos
        interfaces[name] = body
    header = {"model": "SN5600", "nvue-api-version": "nvue_v1", "rev-id": 1.0,
              "version": f"Cumulus Linux {state.get('facts', {}).get('os_version', '')}"}  # fmt: skip
    body = {"system": {"hostname": dev.name}, "qos": qos, "interface": interfaces, **routing.nvue_bgp(state)}
    extra = routing.nvue_forwarding(state)
    body["system"].update(extra.get("system", {}))
    if "router" in extra:
        body.setdefault("router", {}).update(extra["router"])
    return [{"header": header}, {"set": body}]


def _nv_interfaces(ports: dict[str, dict[str, Any]]) -> str:
    doc: dict[str, Any] = {
        "eth0": {"ifindex": 2, "type": "eth", "ip": {"vrf": "mgmt"},
                 "link": {"mtu": 1500, "speed": "1G", "state": {"up": {}}, "oper-status": "up", "admin-status": "up"}},
        "lo": {"ifindex": 1, "type": "loopback",
               "link": {"mtu": 65536, "state": {"up": {}}, "oper-status": "unknown", "admin-status": "up"}},
    }  # fmt: skip
    for i, (name, b) in enumerate(ports.items()):
        link = _link(b)
        link["oper-status"] = "up" if b.get("oper_up") else "down"
        link["admin-status"] = "up" if b.get("admin_up") else "down"
        if not b.get("oper_up"):
            link.pop("speed", None)
        entry: dict[str, Any] = {"ifindex": i + 3, "type": "swp", "link": link}
        if b.get("lldp"):
            entry["description"] = f"{b['lldp']['device']} {b['lldp']['port']}"
        doc[name] = entry
    return json.dumps(doc, indent=2) + "\n"


def _table(rows: list[tuple[str, str, str]], extra: str = "") -> str:
    w0 = max(len(r[0]) for r in rows)
    w1 = max(11, *(len(r[1]) for r in rows))
    w2 = max(7, *(len(r[2]) for r in rows))
    out = [f"{'':<{w0}}  {'operational':<{w1}}  {'applied':<{w2}}", f"{'-' * w0}  {'-' * w1}  {'-' * w2}"]
    out += [f"{a:<{w0}}  {b:<{w1}}  {c:<{w2}}".rstrip() for a, b, c in rows]
    return "\n".join(out) + "\n" + extra


def _link_table(b: dict[str, Any]) -> str:
    fec = _FEC.get(b.get("fec", ""), "")
    speed = f"{int(b['speed_gbps'])}G" if "speed_gbps" in b else ""
    an = "on" if b.get("autoneg") else "off"
    up = "up" if b.get("oper_up") else "down"
    admin = "up" if b.get("admin_up") else "down"
    rows = [
        ("auto-negotiate", an, an),
        ("duplex", "full", "full"),
        ("speed", speed if b.get("oper_up") else "", speed),
        ("fec", fec, fec),
        ("mtu", str(b.get("mtu", "")), str(b.get("mtu", ""))),
        ("fast-linkup", "off", ""),
        ("[breakout]", "", ""),
        ("state", admin, admin),
        ("stats", "", ""),
        ("  carrier-transitions", "1", ""),
        ("  in-bytes", "14.07 TB", ""),
        ("  in-drops", "0", ""),
        ("  in-errors", "0", ""),
        ("  in-pkts", "1843210987", ""),
        ("  out-bytes", "13.34 TB", ""),
        ("  out-drops", "0", ""),
        ("  out-errors", "0", ""),
        ("  out-pkts", "1790332114", ""),
        ("oper-status", up, ""),
        ("oper-status-last-change", "2026/11/17 04:45:53.000", ""),
    ]
    return _table(rows)


def _sp_table(dmap: dict[str, int]) -> str:
    by_sp: dict[int, list[int]] = {}
    for d, sp in dmap.items():
        by_sp.setdefault(int(sp), []).append(int(d))
    out = ["RoCE PCP/DSCP->SP mapping configurations", "===========================================",
           "       pcp  dscp" + " " * 21 + "switch-prio", "    -  ---  " + "-" * 24 + "  -----------"]  # fmt: skip
    rows = []
    for sp in range(8):
        codes = ",".join(str(c) for c in sorted(by_sp.get(sp, []))) or "-"
        rows.append(f"    {sp}  {sp}    {codes:<24}  {sp}")
    width = max(len(r) for r in rows)
    if width > len(out[2]):
        pad = width - len(out[2])
        out[2] = "       pcp  dscp" + " " * (21 + pad) + "switch-prio"
        out[3] = "    -  ---  " + "-" * (24 + pad) + "  -----------"
        rows = [
            f"    {sp}  {sp}    {(','.join(str(c) for c in sorted(by_sp.get(sp, []))) or '-'):<{24 + pad}}  {sp}"
            for sp in range(8)
        ]
    return "\n".join(out + rows) + "\n"


def _qos_roce(ports: dict[str, dict[str, Any]], state: dict[str, Any]) -> str:
    pfc = _common(ports, "pfc_priorities") or []
    ecn = _common(ports, "ecn") or {}
    dmap = _common(ports, "dscp_to_priority") or {}
    tcs = sorted(ecn, key=int)
    first = ecn[tcs[0]] if tcs else {}
    rows = [
        # The show tree mirrors the object model: 'enable on' to 5.14, 'state enabled' from 5.15.
        ("state", "", "enabled") if _new_words(state) else ("enable", "", "on"),
        ("mode", "lossless", "lossless"),
        ("pfc", "", ""),
        ("  pfc-priority", ranges(pfc), ""),
        ("  rx-enabled", "enabled", ""),
        ("  tx-enabled", "enabled", ""),
        ("  cable-length", "100", ""),
        ("congestion-control", "", ""),
        ("  congestion-mode", "ECN" if first.get("enabled") else "disabled", ""),
        ("  enabled-tc", ",".join(tcs), ""),
        ("  min-threshold", _size(first.get("min_bytes", 0)), ""),
        ("  max-threshold", _size(first.get("max_bytes", 0)), ""),
        ("  probability", str(first.get("probability_pct", 100)), ""),
        ("trust", "", ""),
        ("  trust-mode", "pcp,dscp", ""),
        ("lldp-app-tlv", "", ""),
        ("  priority", "3", ""),
        ("  protocol-id", "4791", ""),
        ("  selector", "UDP", ""),
    ]
    sp_tc = "\n".join(
        ["RoCE SP->TC mapping and ETS configurations", "=============================================",
         "       switch-prio  traffic-class  scheduler-weight", "    -  -----------  -------------  ----------------"]
        + [f"    {sp}  {sp:<11}  {sp if sp in (3, 6) else 0:<13}  {'strict-priority' if sp == 6 else 'DWRR-50%'}" for sp in range(8)]
    )  # fmt: skip
    pools = (
        "RoCE pool config\n===================\n"
        "       name                   mode     size  switch-priorities  traffic-class\n"
        "    -  ---------------------  -------  ----  -----------------  -------------\n"
        "    0  lossy-default-ingress  Dynamic  50%   0,1,2,4,5,6,7      -\n"
        "    1  roce-reserved-ingress  Dynamic  50%   3                  -\n"
        "    2  lossy-default-egress   Dynamic  50%   -                  0,6\n"
        "    3  roce-reserved-egress   Dynamic  inf   -                  3\n"
        "Exception List\n=================\nNo Data\n"
    )
    return _table(rows, _sp_table(dmap) + sp_tc + "\n" + pools)


def _roce_status(b: dict[str, Any]) -> str:
    ecn = b.get("ecn", {})
    tcs = sorted(ecn, key=int)
    first = ecn[tcs[0]] if tcs else {}
    dmap = b.get("dscp_to_priority", {})
    pfc = b.get("pfc_priorities", [])
    head = [
        ("congestion-control", "", "", ""),
        ("  congestion-mode", "ecn, absolute" if first.get("enabled") else "disabled", "", "Congestion config mode"),
        ("  enabled-tc", ",".join(tcs), "", "Congestion config enabled Traffic Class"),
        ("  max-threshold", _size(first.get("max_bytes", 0)), "", "Congestion config max-threshold"),
        ("  min-threshold", _size(first.get("min_bytes", 0)), "", "Congestion config min-threshold"),
        ("pfc", "", "", ""),
        ("  pfc-priority", ranges(pfc), "", "switch-prio on which PFC is enabled"),
        ("  rx-enabled", "yes" if pfc else "no", "", "PFC Rx Enabled status"),
        ("  tx-enabled", "yes" if pfc else "no", "", "PFC Tx Enabled status"),
        ("trust", "", "", ""),
        ("  trust-mode", "pcp,dscp" if b.get("trust", "dscp") == "dscp" else "pcp", "", "Trust Setting on the port for packet classification"),
        ("mode", "lossless", "", "Roce Mode"),
    ]  # fmt: skip
    out = [
        "                    operational    applied  description",
        "------------------  -------------  -------  ---------------------------------------------------",
    ]
    out += [f"{a:<18}  {b_:<13}  {c:<7}  {d}".rstrip() for a, b_, c, d in head]
    roce, cnp = str(dmap.get("26", 3)), str(dmap.get("48", 6))
    out += [
        " ",
        "RoCE PCP/DSCP->SP mapping configurations",
        "===========================================",
        "          pcp  dscp  switch-prio",
        "    ----  ---  ----  -----------",
        f"    cnp   6    48    {cnp}",
        f"    roce  3    26    {roce}",
        " ",
        "RoCE SP->TC mapping and ETS configurations",
        "=============================================",
        "          switch-prio  traffic-class  scheduler-weight",
        "    ----  -----------  -------------  ----------------",
        "    cnp   6            6              strict priority",
        "    roce  3            3              dwrr-50%",
    ]
    return "\n".join(out) + "\n"


def _roce_counters(b: dict[str, Any]) -> str:
    c = b.get("counters", {})
    # NVUE counts the RoCE class's pauses without a priority: a state's per-priority or RoCE total.
    rx = c.get("roce_pfc_rx_pause", sum(c.get("pfc_rx_pause", {}).values()))
    tx = c.get("roce_pfc_tx_pause", sum(c.get("pfc_tx_pause", {}).values()))
    rows = [
        ("rx-stats", "", ""),
        ("  rx-non-roce-stats", "", ""),
        ("    buffer-max-usage", "144 Bytes", "Max Ingress Pool-buffer usage for non-RoCE traffic"),
        ("    buffer-usage", "0 Bytes", "Current Ingress Pool-buffer usage for non-RoCE traffic"),
        ("    no-buffer-discard", "0", "Rx buffer discards for non-RoCE traffic"),
        ("    non-roce-bytes", "56.52 MB", "non-roce rx bytes"),
        ("    non-roce-packets", "462975", "non-roce rx packets"),
        ("  rx-pfc-stats", "", ""),
        ("    pause-duration", "0", "Rx PFC pause duration for RoCE traffic"),
        ("    pause-packets", str(rx), "Rx PFC pause packets for RoCE traffic"),
        ("  rx-roce-stats", "", ""),
        ("    no-buffer-discard", str(c.get("roce_rx_discards", 0)), "Rx buffer discards for RoCE traffic"),
        ("    roce-bytes", "92824.38 GB", "Rx RoCE Bytes"),
        ("    roce-packets", "803785675319", "Rx RoCE Packets"),
        ("tx-stats", "", ""),
        ("  tx-cnp-stats", "", ""),
        ("    cnp-bytes", "0 Bytes", "Tx CNP Packet Bytes"),
        ("    cnp-packets", str(c.get("cnp_sent", 0)), "Tx CNP Packets"),
        ("  tx-ecn-stats", "", ""),
        ("    ecn-marked-packets", str(c.get("ecn_marked", 0)), "Tx ECN marked packets"),
        ("  tx-pfc-stats", "", ""),
        ("    pause-duration", "0", "Tx PFC pause duration for RoCE traffic"),
        ("    pause-packets", str(tx), "Tx PFC pause packets for RoCE traffic"),
        ("  tx-roce-stats", "", ""),
        ("    roce-bytes", "92824.38 GB", "Tx RoCE Packet bytes"),
        ("    roce-packets", "803785675319", "Tx RoCE Packets"),
        (
            "    unicast-no-buffer-discard",
            str(c.get("roce_tx_discards", 0)),
            "Tx buffer discards for RoCE traffic",
        ),
    ]
    out = [
        "                               operational   applied  description",
        "-----------------------------  ------------  -------  ------------------------------------------------------",
    ]
    out += [f"{a:<29}  {v:<12}  {'':<7}  {d}".rstrip() for a, v, d in rows]
    return "\n".join(out) + "\n"


def _pfc_watchdog(b: dict[str, Any], state: dict[str, Any]) -> str:
    """``nv show interface X qos pfc-watchdog``, laid out as the NVUE reference's example (CL 5.6+).

    The switch state's watchdog runs on the ports with PFC (NVUE configures it only there).
    """
    on = bool(b.get("pfc_priorities")) and bool(state.get("qos", {}).get("pfc_watchdog", {}).get("enabled"))
    word = "enabled" if on else "disabled"
    out = [
        "                 operational  applied ",
        "---------------  -----------  ------- ",
        f"state            {word:<11}  {word:<7} ",
        "",
        "PFC WD Status ",
        "=========================== ",
        "    traffic-class  status    deadlock-count ",
        "    -------------  --------  -------------- ",
        "",
    ]
    # The reference shows only the OK status word, so a storm shows as its deadlock count.
    storms = b.get("counters", {}).get("pfcwd_storms_detected", {})
    out += [f"    {tc:<13}  {'OK':<8}  {int(storms.get(str(tc), 0))} " for tc in range(8)]
    return "\n".join(out) + "\n"


def _phy_detail(b: dict[str, Any]) -> str:
    """``nv show interface X link phy-detail`` (CL 5.10+), laid out as the NVUE reference's example.

    ``effective-errors`` is the state's ``counters.fec_uncorrectable``, ``raw-ber`` its
    ``fec_pre_ber`` (1E-8 when unset: a clean 400G link); the corrected codewords
    (``counters.fec_corrected``) are all in histogram bin 1.
    """
    c = b.get("counters", {})
    # NVUE prints a BER as an integer mantissa and an exponent (1E-7, 15E-255): two digits kept.
    digits, exp = f"{float(b.get('fec_pre_ber', 1e-8)):.1E}".split("E")
    mantissa, exponent = digits.replace(".", ""), int(exp) - 1
    if mantissa.endswith("0"):
        mantissa, exponent = mantissa[0], exponent + 1
    rows = [
        ("time-since-last-clear-min", "324"),
        ("phy-received-bits", "15561574400000000"),
        ("symbol-errors", str(int(c.get("fec_uncorrectable", 0)))),
        ("effective-errors", str(int(c.get("fec_uncorrectable", 0)))),
        *((f"phy-raw-errors-lane{lane}", "1556157") for lane in range(8)),
        ("raw-ber", f"{mantissa}E{exponent}"),
        ("symbol-ber", "15E-255"),
        ("effective-ber", "15E-255"),
        *((f"raw-ber-lane{lane}", f"{mantissa}E{exponent}") for lane in range(8)),
        ("rs-num-corr-err-bin0", "757956054591"),
        ("rs-num-corr-err-bin1", str(int(c.get("fec_corrected", 0)))),
        *((f"rs-num-corr-err-bin{n}", "0") for n in range(2, 16)),
    ]
    out = ["                          operational", "-------------------------  -----------------"]
    out += [f"{k:<26} {v}" for k, v in rows]
    return "\n".join(out) + "\n"


def _phy_diag(b: dict[str, Any]) -> str:
    """``nv show interface X link phy-diag`` (CL 5.10+), the module rows of the NVUE reference's example.

    ``module-fw-version`` is the state's ``optics.firmware`` when it is in NVUE's hex form (the
    reference's ``0x2e820043`` otherwise; ``0x0`` without a module); a flag row named in
    ``optics.active_flags`` (``rx-los 0x1``) shows its value, every other one ``0x0``.
    """
    o = b.get("optics") or {}
    firmware = str(o.get("firmware", "0x2e820043")) if o else "0x0"
    if not firmware.startswith("0x"):
        firmware = "0x2e820043"
    raised = dict(str(f).split(" ", 1) for f in o.get("active_flags", []) if " " in str(f))
    rows = [("pd-fsm-state", "0x7"), ("phy-manager-state", "0x3"), ("fec-mode-request", "0x1"),
            ("profile-fec-in-use", "0x4"), ("ethernet-compliance-code", "0x1c"), ("memory-map-rev", "0x40"),
            ("module-fw-version", firmware), ("module-st", "0x3" if o else "0x0")]  # fmt: skip
    rows += [(f"dp-st-lane{lane}", "0x4") for lane in range(8)]
    rows += [(flag, raised.get(flag, "0x0")) for flag in PHY_DIAG_FLAGS]
    out = ["                                  operational", "--------------------------------  -----------"]
    out += [f"{k:<33} {v}" for k, v in rows]
    return "\n".join(out) + "\n"


def _transceiver(b: dict[str, Any]) -> str:
    """``nv show interface X transceiver`` (CL 5.11+), laid out as the NVUE reference's example."""
    o = b.get("optics")
    if not o:
        return "status                 : unplugged \n"
    temp = float(o.get("temperature_c", 0.0))
    rows = [
        ("cable-type", "Optical module"),
        ("diagnostics-status", "Diagnostic Data Available"),
        ("status", "plugged_enabled"),
        ("error-status", "N/A"),
        ("revision-compliance", "CMIS Rev 5.0"),
        ("identifier", "OSFP 8X Pluggable Transceiver"),
        ("vendor-rev", "A3"),
        ("vendor-name", o.get("vendor", "")),
        ("vendor-pn", o.get("part_number", "")),
        ("vendor-sn", o.get("serial", "")),
        ("temperature", f"{temp:.2f} degrees C / {temp * 9 / 5 + 32:.2f} degrees F"),
        ("voltage", "3.2888 V"),
    ]
    rx, tx = o.get("rx_power_dbm", []), o.get("tx_power_dbm", [])
    for lane in range(max(len(rx), len(tx))):
        for name, values in (("rx-power", rx), ("tx-power", tx)):
            if lane < len(values):
                dbm = float(values[lane])
                rows.append((f"ch-{lane + 1}-{name}", f"{10 ** (dbm / 10):.4f} mW / {dbm:.2f} dBm"))
        rows.append((f"ch-{lane + 1}-tx-bias-current", "6.750 mA"))
    return "".join(f"{k:<23}: {v} \n" for k, v in rows)


def _nclu_config(dev: SimView, ports: dict[str, dict[str, Any]]) -> str:
    out = [
        f"net add hostname {dev.name}",
        "net add interface eth0 ip address dhcp",
        "net add interface eth0 vrf mgmt",
    ]
    for name, b in ports.items():
        if b.get("lldp"):
            out.append(f"net add interface {name} alias {b['lldp']['device']} {b['lldp']['port']}")
        if "mtu" in b:
            out.append(f"net add interface {name} mtu {b['mtu']}")
        if "speed_gbps" in b:
            out.append(f"net add interface {name} link speed {int(b['speed_gbps'] * 1000)}")
        if "autoneg" in b:
            out.append(f"net add interface {name} link autoneg {'on' if b['autoneg'] else 'off'}")
        if "fec" in b:
            out.append(f"net add interface {name} link fec {_FEC[b['fec']]}")
    return "\n".join(out) + "\n"


def _nclu_interfaces(ports: dict[str, dict[str, Any]]) -> str:
    doc = {}
    for name, b in ports.items():
        state = "UP" if b.get("oper_up") else ("ADMDN" if not b.get("admin_up") else "DN")
        lldp = []
        if b.get("lldp"):
            lldp.append({"adj_hostname": b["lldp"]["device"], "adj_port": b["lldp"]["port"],
                         "adj_mgmt_ip": "192.168.200.1", "system_descr": "fabline simulated device"})  # fmt: skip
        doc[name] = {
            "connector_type": "OSFP", "linkstate": state, "mode": "Default", "speed": f"{int(b['speed_gbps'])}G"
            if "speed_gbps" in b and b.get("oper_up") else "N/A", "summary": "", "remote_mac": None,
            "iface_obj": {"asic": {"ports": "1"}, "description": "", "lldp": lldp or None, "mtu": b.get("mtu", 1500),
                          "linkstate": 2 if b.get("oper_up") else 0, "counters": {"all": {"rx": {}, "tx": {}}}},
        }  # fmt: skip
    return json.dumps(doc, indent=4) + "\n"


def _lldp_detail(ports: dict[str, dict[str, Any]]) -> str:
    """``nv show interface lldp-detail``: lldpd's detail layout, one block per neighbour (CL 5.x)."""
    rule = "-" * 79
    out = [rule, "LLDP neighbors:", rule, ""]
    for name, b in ports.items():
        lldp = b.get("lldp")
        if not lldp or not b.get("oper_up"):
            continue
        for n in [lldp, *lldp.get("other_neighbors", [])]:
            port_id = n.get("port_id") or n.get("port", "")
            out += [
                f"Interface:    {name}", rule, "  Time:  ", "    0 days, 02:58:28", "",
                "  Chassis:", f"    ChassisID:    mac {n.get('chassis_id', '48:b0:2d:ec:e5:3b')}",
                f"    SysName:      {n.get('device', '')}",
                f"    MgmtIP:       {n.get('mgmt_ip', '192.168.200.1')}", "    MgmtIface:    2",
                "    Capability:   Bridge, off", "    Capability:   Router, on",
                "  Port:", f"    PortID:       ifname {port_id}",
                f"    PortDescr:    {n.get('port_description') or n.get('port', '')}",
                "    TTL:          120", "    MFS:          9216",
                "    PMD autoneg: supported: no, enabled: no", "",
            ]  # fmt: skip
    return "\n".join(out) + "\n"


def _missing(release: str, words: list[str]) -> Answer | None:
    """The answer of a switch whose release lacks the command (None: it has it), as NVIDIA documents.

    Which release has which command is the platform spec's table (``Command.releases``).
    """
    line = " ".join(words)
    key = release_key(release)
    if key is None:
        return None
    if words[0] == "net" and key >= (5, 0, 0):
        return linux.not_found("net")  # 5.x has no NCLU
    if words[0] == "nv" and key < (5, 0, 0):
        return linux.not_found("nv")
    for command in PLATFORM.commands:
        if command.releases is not None and command.pattern().match(line):
            if command.releases.has(release) is False:
                if command.kind == "file":
                    return Answer("", 1, f"cat: {words[-1]}: No such file or directory\n")
                return Answer("", 2, f"Error: Invalid command: {line}\n")
            return None
    return None


def _routing(dev: SimView, state: dict[str, Any], words: list[str]) -> Answer | None:
    """BGP and the probe route: NVUE's neighbour table and RIB entry (5.x), NCLU's FRR JSON (3.x/4.x).

    None for any other command.
    """
    if words[:5] == ["nv", "show", "vrf", "default", "router"]:
        if words[5:] == ["bgp", "neighbor"]:
            return Answer(routing.nvue_neighbors(state))
        if len(words) == 9 and words[5:8] == ["rib", "ipv4", "route"]:
            out, err = routing.nvue_route(state, words[8])
            return Answer(out, 1 if err else 0, err)
    if words == ["net", "show", "bgp", "summary", "json"]:
        return Answer(routing.frr_summary_json(state, dev.name))
    if len(words) == 5 and words[:3] == ["net", "show", "route"] and words[4] == "json":
        return Answer(routing.frr_route_json(state, words[3]))
    return None


def render(dev: SimView, line: str) -> Answer:  # noqa: C901 - one flat branch per command line
    """Run one simple command line on a Cumulus switch of the release its state names."""
    state = dev.state()
    ports = _ports(state)
    words = line.split()
    if not words:
        return Answer("")
    if words[0] == "sudo":
        words = words[1:]
    cmd = " ".join(words)
    f = state.get("facts", {})
    absent = _missing(str(f.get("os_version", "")), words) if words else None
    if absent is not None:
        return absent
    if cmd == "nv config show -o json":
        return Answer(json.dumps(nv_config(dev, state), indent=2) + "\n")
    if cmd == "nv show interface -o json":
        return Answer(_nv_interfaces(ports))
    if cmd == "nv show qos roce":
        return Answer(_qos_roce(ports, state))
    if cmd == "nv show system":
        rows = [("hostname", dev.name, dev.name), ("build", f"Cumulus Linux {f.get('os_version', '')}", ""),
                ("uptime", "12 days, 3:14:07", ""), ("timezone", "Etc/UTC", "")]  # fmt: skip
        return Answer(_table(rows))
    if cmd == "decode-syseeprom":
        return Answer(
            "TlvInfo Header:\n   Id String:    TlvInfo\n   Version:      1\n   Total Length: 170\n"
            "TLV Name             Code Len Value\n-------------------- ---- --- -----\n"
            f"Product Name         0x21  {len(f.get('model', ''))} {f.get('model', '')}\n"
            "Part Number          0x22  15 920-9N42F-00RI-7C0\n"
            f"Serial Number        0x23  {len(f.get('serial', ''))} {f.get('serial', '')}\n"
            "Base MAC Address     0x24   6 1C:34:DA:5E:8A:00\n"
            "Manufacture Date     0x25  19 04/12/2024 10:21:33\n"
            "Device Version       0x26   1 1\n"
            "MAC Addresses        0x2A   2 256\n"
            "Manufacturer         0x2B   6 Nvidia\n"
            "Vendor Name          0x2D  18 Nvidia Corporation\n"
            "ONIE Version         0x29  13 2023.05-5.3.0012\n"
            "CRC-32               0xFE   4 0x6A1E9F3B\n"
            "(checksum valid)\n"
        )
    if cmd == "nv show interface lldp-detail":
        return Answer(_lldp_detail(ports))
    if (bgp := _routing(dev, state, words)) is not None:
        return bgp
    if cmd == "net show interface all json":
        return Answer(_nclu_interfaces(ports))
    if cmd == "net show configuration commands":
        return Answer(_nclu_config(dev, ports))
    if len(words) >= 4 and words[:2] == ["nv", "show"] and words[2] == "interface":
        name, rest = words[3], " ".join(words[4:])
        if name not in ports:
            return Answer("", 1, f"Error: The requested item does not exist: interface {name}\n")
        b = ports[name]
        if rest == "link":
            return Answer(_link_table(b))
        if rest == "qos roce status":
            return Answer(_roce_status(b))
        if rest == "qos roce counters":
            return Answer(_roce_counters(b))
        if rest == "qos pfc-watchdog":
            return Answer(_pfc_watchdog(b, state))
        if rest == "transceiver":
            return Answer(_transceiver(b))
        if rest == "link phy-detail":
            return Answer(_phy_detail(b))
        if rest == "link phy-diag":
            return Answer(_phy_diag(b))
    if words[0] == "nv" and len(words) > 1 and words[1] in ("set", "unset", "config", "action"):
        return Answer(
            "", 1, "Error: insufficient privileges: the account has the nvue-monitor role (read-only)\n"
        )
    if words[0] == "nv":
        return Answer("", 2, f"Error: Invalid command: {cmd}\n")
    if words[0] in ("hostname",):
        return Answer(dev.name + "\n")
    if words[0] == "net":
        return Answer("", 1, "ERROR: Command not found.\n")
    if words[0] == "cat":
        return Answer("", 1, f"cat: {words[-1]}: No such file or directory\n")
    if words[0] == "grep":
        # Cumulus is Debian: sysfs reads (carrier_changes of the swp netdevs) as on any Linux.
        return linux.render(dev, line)
    return linux.not_found(words[0])
