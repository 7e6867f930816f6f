"""BGP summaries and route lookups as each NOS prints them, rendered from a state's ``bgp``.

FRR (SONiC's bgp container, ``vtysh``): JSON pretty-printed the way FRR's ``vty_json`` does
(two-space nesting, no space after the colon, the top level not indented) and the text summary;
Arista EOS eAPI JSON; Cisco NX-OS ``| json`` tables and route text; NVIDIA NVUE tables (Cumulus
Linux 5.x). The shapes follow the real outputs in ``tests/samples`` (MANIFEST.md); the route of
the probe prefix has one next hop per established uplink (``bgp.ecmp``), any other prefix none.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from fabline.platforms.loadbalance import EOS_FIELDS, NVUE_FIELDS, NXOS_DLB_SINCE, SONIC_FIELDS

#: FRR and EOS print the FSM state capitalised.
_WORDS = {
    "established": "Established",
    "active": "Active",
    "idle": "Idle",
    "connect": "Connect",
    "opensent": "OpenSent",
    "openconfirm": "OpenConfirm",
}


def _bgp(state: Mapping[str, Any]) -> dict[str, Any]:
    bgp = state.get("bgp")
    return bgp if isinstance(bgp, dict) else {}


def _neighbors(state: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    neighbors = _bgp(state).get("neighbors") or {}
    return sorted(neighbors.items(), key=lambda kv: _sort_key(kv[0]))


def _sort_key(peer: str) -> tuple[int, Any]:
    try:
        return (0, ipaddress.ip_address(peer))
    except ValueError:
        return (1, peer)


def _up(body: Mapping[str, Any]) -> bool:
    return body.get("state") == "established" and not body.get("admin_down")


def _word(body: Mapping[str, Any]) -> str:
    if body.get("admin_down"):
        return "Idle (Admin)"
    return _WORDS.get(str(body.get("state")), "Idle")


def frr_json(doc: Any) -> str:
    """JSON as FRR's vtysh prints it (json-c pretty: two spaces per level below the top, ``"k":v``).

    Example:
        >>> print(frr_json({"a": {"b": 1}}), end="")
        {
        "a":{
          "b":1
        }
        }
    """
    text = json.dumps(doc, indent=2, separators=(",", ":"))
    return "\n".join(line[2:] if line.startswith("  ") else line for line in text.splitlines()) + "\n"


def _route(state: Mapping[str, Any], prefix: str) -> dict[str, Any] | None:
    """The probe route when ``prefix`` is the state's probe and it has paths, else None."""
    ecmp = _bgp(state).get("ecmp")
    if not isinstance(ecmp, dict) or not ecmp.get("paths"):
        return None
    try:
        wanted = ipaddress.ip_network(prefix, strict=False)
    except ValueError:
        return None
    return ecmp if str(wanted) == ecmp.get("prefix") else None


def _hops(ecmp: Mapping[str, Any]) -> list[tuple[str, str]]:
    return list(zip(ecmp.get("next_hops") or [], ecmp.get("interfaces") or [], strict=False))


# --------------------------------------------------------------------------------------------
# FRR


def frr_summary_json(state: Mapping[str, Any], hostname: str) -> str:
    """``show bgp summary json``: ``{"ipv4Unicast": {...}}`` (``{}`` without BGP)."""
    bgp = _bgp(state)
    if not bgp:
        return "{}\n"
    peers: dict[str, Any] = {}
    for peer, body in _neighbors(state):
        up = _up(body)
        entry: dict[str, Any] = {}
        if up and body.get("description"):
            entry["hostname"] = body["description"]  # the peer's hostname capability
        entry.update(
            {
                "remoteAs": body.get("remote_asn"), "localAs": bgp.get("asn"), "version": 4,
                "msgRcvd": 5012 if up else 0, "msgSent": 5020 if up else 0, "tableVersion": 0,
                "outq": 0, "inq": 0, "peerUptime": "1d02h13m" if up else "never",
                "peerUptimeMsec": 94380000 if up else 0,
            }
        )  # fmt: skip
        if up:
            entry["peerUptimeEstablishedEpoch"] = 1764316800
        entry.update(
            {
                "pfxRcd": body.get("prefixes_received", 0) if up else 0, "pfxSnt": 1 if up else 0,
                "state": _word(body), "peerState": "OK" if up else "Policy" if body.get("admin_down") else "OK",
                "connectionsEstablished": 1 if up else 0, "connectionsDropped": 0,
            }
        )  # fmt: skip
        if body.get("description"):
            entry["desc"] = body["description"]
        entry["idType"] = "ipv4"
        peers[peer] = entry
    failed = sum(1 for _, b in _neighbors(state) if not _up(b))
    family = {
        "routerId": bgp.get("router_id", "0.0.0.0"), "as": bgp.get("asn", 0), "vrfId": 0, "vrfName": "default",
        "tableVersion": 12, "ribCount": 9, "ribMemory": 1656, "peerCount": len(peers),
        "peerMemory": 16904 * len(peers), "peers": peers, "failedPeers": failed,
        "displayedPeers": len(peers), "totalPeers": len(peers), "dynamicPeers": 0,
        "bestPath": {"multiPathRelax": "true"},
    }  # fmt: skip
    del hostname  # FRR prints the peer's hostname, not its own
    return frr_json({"ipv4Unicast": family})


def frr_summary_text(state: Mapping[str, Any]) -> str:
    """``show bgp ipv4 unicast summary`` (FRR 8.x text)."""
    bgp = _bgp(state)
    if not bgp:
        return "% BGP instance not found\n"
    rows = _neighbors(state)
    out = [
        f"BGP router identifier {bgp.get('router_id', '0.0.0.0')}, local AS number {bgp.get('asn', 0)} vrf-id 0",
        "BGP table version 12",
        "RIB entries 9, using 1656 bytes of memory",
        f"Peers {len(rows)}, using {16 * len(rows)} KiB of memory",
        "",
        "Neighbor        V         AS   MsgRcvd   MsgSent   TblVer  InQ OutQ  Up/Down State/PfxRcd   PfxSnt Desc",
    ]
    for peer, body in rows:
        up = _up(body)
        state_pfx = str(body.get("prefixes_received", 0)) if up else _word(body)
        out.append(
            f"{peer:<15} 4 {body.get('remote_asn', 0):>10} {5012 if up else 0:>9} {5020 if up else 0:>9} "
            f"{12 if up else 0:>8} {0:>4} {0:>4} {'1d02h13m' if up else 'never':>8} {state_pfx:>12} "
            f"{1 if up else 0:>8} {body.get('description', 'N/A')}"
        )
    out += ["", f"Total number of neighbors {len(rows)}"]
    return "\n".join(out) + "\n"


def frr_route_json(state: Mapping[str, Any], prefix: str) -> str:
    """``show ip route PREFIX json`` (zebra): the probe route, ``{}`` for anything else."""
    ecmp = _route(state, prefix)
    if ecmp is None:
        return "{}\n"
    hops = [
        {"flags": 3, "fib": True, "ip": ip, "afi": "ipv4", "interfaceIndex": 100 + i, "interfaceName": name,
         "active": True, "weight": 1}
        for i, (ip, name) in enumerate(_hops(ecmp))
    ]  # fmt: skip
    entry = {
        "prefix": ecmp["prefix"], "prefixLen": int(ecmp["prefix"].rsplit("/", 1)[1]), "protocol": "bgp",
        "vrfId": 0, "vrfName": "default", "selected": True, "destSelected": True, "distance": 20, "metric": 0,
        "installed": True, "table": 254, "internalStatus": 16, "internalFlags": 8,
        "internalNextHopNum": len(hops), "internalNextHopActiveNum": len(hops), "nexthopGroupId": 70,
        "installedNexthopGroupId": 70, "uptime": "1d02h13m", "nexthops": hops,
    }  # fmt: skip
    return frr_json({ecmp["prefix"]: [entry]})


# --------------------------------------------------------------------------------------------
# Arista EOS


def eos_summary_json(state: Mapping[str, Any]) -> str:
    """``show ip bgp summary | json`` (eAPI)."""
    bgp = _bgp(state)
    if not bgp:
        return json.dumps({"vrfs": {}}, indent=4) + "\n"
    peers: dict[str, Any] = {}
    for peer, body in _neighbors(state):
        up = _up(body)
        entry: dict[str, Any] = {}
        if body.get("description"):
            entry["description"] = body["description"]
        entry.update(
            {
                "version": 4, "msgReceived": 5012 if up else 0, "msgSent": 5020 if up else 0, "inMsgQueue": 0,
                "outMsgQueue": 0, "asn": str(body.get("remote_asn", "")),
                "prefixAccepted": body.get("prefixes_received", 0) if up else 0,
                "prefixReceived": body.get("prefixes_received", 0) if up else 0, "upDownTime": 1764316800.52,
                "underMaintenance": False, "peerState": "Idle" if body.get("admin_down") else _word(body),
            }
        )  # fmt: skip
        if body.get("admin_down"):
            entry["peerStateIdleReason"] = "Admin"
        peers[peer] = entry
    vrf = {
        "vrf": "default",
        "routerId": bgp.get("router_id", "0.0.0.0"),
        "asn": str(bgp.get("asn", "")),
        "peers": peers,
    }
    return json.dumps({"vrfs": {"default": vrf}}, indent=4) + "\n"


def eos_route_json(state: Mapping[str, Any], prefix: str) -> str:
    """``show ip route PREFIX | json`` (eAPI): the probe route's vias, no routes otherwise."""
    ecmp = _route(state, prefix)
    routes: dict[str, Any] = {}
    if ecmp is not None:
        routes[ecmp["prefix"]] = {
            "hardwareProgrammed": True, "routeType": "eBGP", "routeLeaked": False, "kernelProgrammed": True,
            "routeAction": "forward", "directlyConnected": False, "preference": 200, "metric": 0,
            "vias": [{"nexthopAddr": ip, "interface": name} for ip, name in _hops(ecmp)],
        }  # fmt: skip
    vrf = {
        "routingDisabled": False, "allRoutesProgrammedHardware": True, "allRoutesProgrammedKernel": True,
        "defaultRouteState": "notSet", "routes": routes,
    }  # fmt: skip
    return json.dumps({"vrfs": {"default": vrf}}, indent=4) + "\n"


# --------------------------------------------------------------------------------------------
# Cisco NX-OS


def nxos_summary_json(state: Mapping[str, Any]) -> str:
    """``show bgp ipv4 unicast summary | json`` (the NX-API tables, the default VRF)."""
    bgp = _bgp(state)
    if not bgp:
        return "\n"  # NX-OS prints nothing when BGP is not running
    rows = []
    for peer, body in _neighbors(state):
        up = _up(body)
        rows.append(
            {
                "neighborid": peer, "neighborversion": "4", "msgrecvd": 5012 if up else 0,
                "msgsent": 5020 if up else 0, "neighbortableversion": "12" if up else "0", "inq": "0", "outq": "0",
                "neighboras": str(body.get("remote_asn", "")), "time": "1d02h" if up else "never",
                "state": "Shut (Admin)" if body.get("admin_down") else _word(body),
                "prefixreceived": str(body.get("prefixes_received", 0) if up else 0),
            }
        )  # fmt: skip
    saf = {
        "safi": 1, "af-name": "IPv4 Unicast", "tableversion": "12", "configuredpeers": str(len(rows)),
        "capablepeers": str(sum(1 for _, b in _neighbors(state) if _up(b))), "totalnetworks": "9",
        "totalpaths": "17", "memoryused": "2224", "numberattrs": "4", "bytesattrs": "576", "numberpaths": "1",
        "bytespaths": "14", "numbercommunities": "0", "bytescommunities": "0", "numberclusterlist": "0",
        "bytesclusterlist": "0", "dampening": "Disabled",
        "TABLE_neighbor": {"ROW_neighbor": rows if len(rows) != 1 else rows[0]},
    }  # fmt: skip
    vrf = {
        "vrf-name-out": "default", "vrf-router-id": bgp.get("router_id", "0.0.0.0"),
        "vrf-local-as": str(bgp.get("asn", "")),
        "TABLE_af": {"ROW_af": {"af-id": "1", "TABLE_saf": {"ROW_saf": saf}}},
    }  # fmt: skip
    return json.dumps({"TABLE_vrf": {"ROW_vrf": vrf}}, indent=2) + "\n"


def nxos_route_text(state: Mapping[str, Any], prefix: str) -> str:
    """``show ip route PREFIX`` (NX-OS text): the probe route's best next hops."""
    out = [
        'IP Route Table for VRF "default"',
        "'*' denotes best ucast next-hop",
        "'**' denotes best mcast next-hop",
        "'[x/y]' denotes [preference/metric]",
        "'%<string>' in via output denotes VRF <string>",
        "",
    ]
    ecmp = _route(state, prefix)
    if ecmp is not None:
        asn = _bgp(state).get("asn", 0)
        hops = _hops(ecmp)
        out.append(f"{ecmp['prefix']}, ubest/mbest: {len(hops)}/0")
        for ip, name in hops:
            short = name.replace("Ethernet", "Eth", 1)
            out.append(f"    *via {ip}, {short}, [20/0], 1d02h, bgp-{asn}, external, tag 65100")
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------------------------
# NVIDIA NVUE (Cumulus Linux 5.x)


def nvue_neighbors(state: Mapping[str, Any]) -> str:
    """``nv show vrf default router bgp neighbor`` (the NVUE table, Cumulus Linux 5.x)."""
    rows = _neighbors(state)
    if not rows:
        return "No Data\n"
    head = (
        "\nAS - Remote Autonomous System, Uptime - BGP session up time, ResetTime - Last\n"
        "connection reset time, Afi-Safi - Address family, PfxSent - Transmitted prefix\n"
        "counter, PfxRcvd - Recieved prefix counter\n\n"
    )
    cols = (
        "Neighbor",
        "AS",
        "State",
        "Uptime",
        "ResetTime",
        "MsgRcvd",
        "MsgSent",
        "Afi-Safi",
        "PfxSent",
        "PfxRcvd",
    )
    table = []
    for peer, body in rows:
        up = _up(body)
        table.append(
            (peer, str(body.get("remote_asn", "")), str(body.get("state", "idle")), "1 day, 2:13:07" if up else "",
             "2:13:12", "5012" if up else "0", "5020" if up else "0", "ipv4-unicast",
             "1" if up else "0", str(body.get("prefixes_received", 0) if up else 0))
        )  # fmt: skip
    widths = [max(len(c), *(len(r[i]) for r in table)) for i, c in enumerate(cols)]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True)),
        "  ".join("-" * w for w in widths),
    ]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in table]
    return head + "\n".join(lines) + "\n"


def nvue_bgp(state: Mapping[str, Any]) -> dict[str, Any]:
    """The BGP part of ``nv config show -o json``: ``router bgp`` and ``vrf default router bgp``."""
    bgp = _bgp(state)
    if not bgp:
        return {}
    neighbors: dict[str, Any] = {}
    for peer, body in _neighbors(state):
        entry: dict[str, Any] = {"remote-as": body.get("remote_asn", "external"), "type": "numbered"}
        if body.get("description"):
            entry["description"] = body["description"]
        if body.get("admin_down"):
            entry["shutdown"] = "on"
        neighbors[peer] = entry
    vrf_bgp: dict[str, Any] = {
        "enable": "on",
        "address-family": {"ipv4-unicast": {"enable": "on"}},
        "neighbor": neighbors,
    }
    if isinstance(bgp.get("maximum_paths"), int):
        vrf_bgp["address-family"]["ipv4-unicast"]["multipaths"] = {"ebgp": bgp["maximum_paths"]}
    router = {"enable": "on", "autonomous-system": bgp.get("asn"), "router-id": bgp.get("router_id")}
    return {"router": {"bgp": router}, "vrf": {"default": {"router": {"bgp": vrf_bgp}}}}


def _balance(state: Mapping[str, Any]) -> dict[str, Any]:
    lb = state.get("load_balance")
    return lb if isinstance(lb, dict) else {}


def _spelled(fields: Any, vocabulary: Mapping[str, str]) -> list[str]:
    back = {neutral: word for word, neutral in vocabulary.items()}
    return [back[f] for f in fields or () if f in back]


def sonic_bgp_neighbors(state: Mapping[str, Any]) -> dict[str, Any]:
    """CONFIG_DB ``BGP_NEIGHBOR`` (what bgpcfgd turns into FRR's neighbour configuration)."""
    out: dict[str, Any] = {}
    for peer, body in _neighbors(state):
        entry = {
            "asn": str(body.get("remote_asn", "")),
            "admin_status": "down" if body.get("admin_down") else "up",
        }
        if body.get("description"):
            entry["name"] = body["description"]
        out[peer] = entry
    return out


def sonic_switch_hash(state: Mapping[str, Any]) -> dict[str, Any]:
    """CONFIG_DB ``SWITCH_HASH|GLOBAL`` (what SONiC shows of its ECMP hash: fields and algorithm)."""
    lb = _balance(state)
    glob: dict[str, Any] = {}
    if lb.get("hash_fields"):
        glob["ecmp_hash"] = _spelled(lb["hash_fields"], SONIC_FIELDS)
    if lb.get("hash_algorithm"):
        glob["ecmp_hash_algorithm"] = str(lb["hash_algorithm"]).upper()
    return {"GLOBAL": glob} if glob else {}


def nvue_forwarding(state: Mapping[str, Any]) -> dict[str, Any]:
    """NVUE ``system forwarding`` and ``router adaptive-routing`` of the applied configuration."""
    lb = _balance(state)
    if not lb:
        return {}
    forwarding: dict[str, Any] = {}
    if lb.get("hash_fields"):
        on = set(_spelled(lb["hash_fields"], NVUE_FIELDS))
        forwarding["ecmp-hash"] = {word: "on" if word in on else "off" for word in NVUE_FIELDS}
    if isinstance(lb.get("hash_seed"), int):
        forwarding["hash-seed"] = lb["hash_seed"]
    out: dict[str, Any] = {"system": {"forwarding": forwarding}} if forwarding else {}
    if lb.get("adaptive_routing"):
        out["router"] = {"adaptive-routing": {"enable": "on"}}
    return out


def eos_load_balance_lines(state: Mapping[str, Any]) -> list[str]:
    """``load-balance policies`` (the profile's IP hash fields) and DLB of the EOS running-config.

    Dynamic load balancing on: ``ip hardware fib load-balance distribution dynamic``, the line
    Arista's AVD data model (pyavd ``eos_cli_config_gen``) renders for it.
    """
    lb = _balance(state)
    out = ["ip hardware fib load-balance distribution dynamic", "!"] if lb.get("adaptive_routing") else []
    fields = _spelled(lb.get("hash_fields"), EOS_FIELDS)
    if not fields:
        return out
    return [
        *out,
        "load-balance policies",
        "   load-balance sand profile fabric",
        f"      fields ip {' '.join(fields)}",
        "!",
    ]


def nxos_load_sharing_line(state: Mapping[str, Any]) -> list[str]:
    """``ip load-sharing ...`` of the NX-OS running-config (addresses and L4 ports)."""
    fields = set(_balance(state).get("hash_fields") or ())
    if not fields:
        return []
    words = ["ip load-sharing address source-destination"]
    if {"src_port", "dst_port"} <= fields:
        words.append("port source-destination")
    return [" ".join(words)]


def nxos_dlb_lines(state: Mapping[str, Any], ports: Sequence[str]) -> list[str]:
    """``hardware profile dlb`` of an NX-OS running-config: DLB on the given ports (10.5 on only).

    The section as Cisco's genielibs NX-OS ``Dlb`` model configures it (``hardware profile dlb`` /
    ``dlb-interface``), the ports in the form NX-OS prints them in ``show system config
    reload-pending`` (``Eth1/5,Eth1/7``). A release before 10.5 has no DLB: nothing is printed.
    """
    version = str((state.get("facts") or {}).get("os_version", ""))
    m = re.match(r"(\d+)\.(\d+)\(", version)
    if (
        not _balance(state).get("adaptive_routing")
        or not m
        or (int(m[1]), int(m[2])) < NXOS_DLB_SINCE
        or not ports
    ):
        return []
    short = ",".join("Eth" + p[len("Ethernet") :] for p in ports)
    return ["hardware profile dlb", f"  dlb-interface {short}"]


def nvue_route(state: Mapping[str, Any], prefix: str) -> tuple[str, str]:
    """``nv show vrf default router rib ipv4 route PREFIX``: (output, error) - NVUE's error when absent."""
    ecmp = _route(state, prefix)
    if ecmp is None:
        return "", f"Error: The requested item does not exist: route {prefix}\n"
    blank = " " * 80
    hops = _hops(ecmp)
    via_w = max(25, *(len(ip) for ip, _ in hops))
    lines = [
        "route-entry",
        "==============",
        blank,
        "    Protocol - Protocol name, TblId - Table Id, NHGId - Nexthop group Id, Flags - u ",
        "    - unreachable, r - recursive, o - onlink, i - installed, d - duplicate, c -     ",
        "    connected, A - active                                                           ",
        blank,
        "    EntryIdx  Protocol  TblId  NHGId  Distance  Metric  "
        + "ResolvedVia".ljust(via_w)
        + "  ResolvedViaIntf  Weight  Flags",
        "    --------  --------  -----  -----  --------  ------  "
        + "-" * via_w
        + "  ---------------  ------  -----",
    ]
    for i, (ip, name) in enumerate(hops):
        lead = "    1         bgp       254    70     20        0       " if i == 0 else " " * 56
        lines.append(f"{lead}{ip.ljust(via_w)}  {name.ljust(15)}  1       iA")
    return "\n".join(lines) + "\n", ""


__all__ = [
    "eos_load_balance_lines",
    "eos_route_json",
    "eos_summary_json",
    "frr_json",
    "frr_route_json",
    "frr_summary_json",
    "frr_summary_text",
    "nvue_bgp",
    "nvue_forwarding",
    "nvue_neighbors",
    "nvue_route",
    "nxos_dlb_lines",
    "nxos_load_sharing_line",
    "nxos_route_text",
    "nxos_summary_json",
    "sonic_bgp_neighbors",
    "sonic_switch_hash",
]
