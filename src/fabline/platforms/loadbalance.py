"""ECMP load-balancing configuration read from each platform's configuration view (state ``load_balance``).

What every switch of a role and plane must share (issue 15 item 7): the ECMP hash fields, the hash
seed and algorithm, and adaptive routing (or DLB / packet spraying). Field names are neutral
(``src_ip``, ``dst_ip``, ``ip_proto``, ``src_port``, ``dst_port``, ``ingress_port``,
``flow_label``, ``inner_*``, ...) and sorted, so two platforms spelling the same set agree. Each
platform page (``docs/platforms/*.md``) says what its configuration exposes and what it does not.

- SONiC: CONFIG_DB ``SWITCH_HASH|GLOBAL`` (``ecmp_hash``, ``ecmp_hash_algorithm``; the generic
  hash of SONiC 202305+, its YANG model ``sonic-hash``) and the seed orchagent programs, APPL_DB
  ``SWITCH_TABLE:switch`` ``ecmp_hash_seed``;
- Cumulus Linux 5.x: NVUE ``system forwarding ecmp-hash`` / ``hash-seed`` and ``router
  adaptive-routing`` (NVIDIA's NVUE object model);
- Arista EOS: ``load-balance policies`` / ``load-balance <chip> profile`` ``fields ip ...``;
- Cisco NX-OS: ``ip load-sharing address ... port ... [universal-id N]`` and, from 10.5, the
  ``hardware profile dlb`` section (dynamic load balancing).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from fabline.state_types import LoadBalance, StateBody

#: SONiC hash field names (YANG ``sonic-hash``) -> neutral names.
SONIC_FIELDS = {
    "IN_PORT": "ingress_port", "DST_MAC": "dst_mac", "SRC_MAC": "src_mac", "ETHERTYPE": "ethertype",
    "VLAN_ID": "vlan", "IP_PROTOCOL": "ip_proto", "DST_IP": "dst_ip", "SRC_IP": "src_ip",
    "L4_DST_PORT": "dst_port", "L4_SRC_PORT": "src_port", "INNER_DST_MAC": "inner_dst_mac",
    "INNER_SRC_MAC": "inner_src_mac", "INNER_ETHERTYPE": "inner_ethertype",
    "INNER_IP_PROTOCOL": "inner_ip_proto", "INNER_DST_IP": "inner_dst_ip", "INNER_SRC_IP": "inner_src_ip",
    "INNER_L4_DST_PORT": "inner_dst_port", "INNER_L4_SRC_PORT": "inner_src_port", "IPV6_FLOW_LABEL": "flow_label",
}  # fmt: skip
#: NVUE ``system forwarding ecmp-hash`` keys -> neutral names.
NVUE_FIELDS = {
    "source-ip": "src_ip", "destination-ip": "dst_ip", "ip-protocol": "ip_proto", "source-port": "src_port",
    "destination-port": "dst_port", "ingress-interface": "ingress_port", "ipv6-label": "flow_label",
    "gtp-teid": "gtp_teid", "inner-source-ip": "inner_src_ip", "inner-destination-ip": "inner_dst_ip",
    "inner-ip-protocol": "inner_ip_proto", "inner-source-port": "inner_src_port",
    "inner-destination-port": "inner_dst_port", "inner-ipv6-label": "inner_flow_label",
}  # fmt: skip
#: EOS ``fields ip`` words -> neutral names.
EOS_FIELDS = {"src-ip": "src_ip", "dst-ip": "dst_ip", "protocol": "ip_proto", "src-port": "src_port",
              "dst-port": "dst_port"}  # fmt: skip
_NXOS_PARTS = {
    ("address", "source-destination"): ("src_ip", "dst_ip"), ("address", "source"): ("src_ip",),
    ("address", "destination"): ("dst_ip",), ("port", "source-destination"): ("src_port", "dst_port"),
    ("port", "source"): ("src_port",), ("port", "destination"): ("dst_port",),
}  # fmt: skip


#: NX-OS's first release with dynamic load balancing (Nexus 9000 Unicast Routing guide 10.5(x),
#: "Configure Dynamic Load Balancing": 10.5(1)F).
NXOS_DLB_SINCE = (10, 5)


def nxos_dlb(version_line: str | None, dlb_children: Iterable[str] | None) -> StateBody:
    """Whether an NX-OS running-config turns dynamic load balancing on (``load_balance.adaptive_routing``).

    ``hardware profile dlb`` with a ``dlb-interface ...`` line (Cisco genielibs' NX-OS ``Dlb``
    configuration model: ``hardware profile dlb`` / `` dlb-interface <ports>|all`` / `` mode ...``)
    is on; no section (or one naming no interface) is off, but only on a release that has DLB
    (10.5 on, read from the configuration's own ``version`` line): before it static hashing is all
    there is and the field is not read.

    Example:
        >>> nxos_dlb("version 10.5(2) Bios:version 05.47", ["dlb-interface Eth1/5,Eth1/7", "mode flowlet"])
        {'load_balance': {'adaptive_routing': True}}
        >>> nxos_dlb("version 10.5(1)F", None), nxos_dlb("version 10.4(3) Bios:version", None), nxos_dlb(None, None)
        ({'load_balance': {'adaptive_routing': False}}, {}, {})
    """
    m = re.match(r"version (\d+)\.(\d+)\(", version_line or "")
    if not m or (int(m[1]), int(m[2])) < NXOS_DLB_SINCE:
        return {}
    on = any(c.split()[:1] == ["dlb-interface"] and len(c.split()) > 1 for c in dlb_children or ())
    return {"load_balance": {"adaptive_routing": on}}


def _fields(names: Iterable[str], vocabulary: Mapping[str, str]) -> list[str]:
    return sorted({vocabulary.get(n, n.lower().replace("-", "_")) for n in names})


def sonic_load_balance(switch_hash: Mapping[str, Any]) -> StateBody:
    """``SWITCH_HASH|GLOBAL`` of CONFIG_DB: the ECMP hash fields and algorithm.

    Example:
        >>> sonic_load_balance({"GLOBAL": {"ecmp_hash": ["SRC_IP", "DST_IP", "L4_SRC_PORT"], "ecmp_hash_algorithm": "CRC"}})
        {'load_balance': {'hash_fields': ['dst_ip', 'src_ip', 'src_port'], 'hash_algorithm': 'crc'}}
    """
    glob = switch_hash.get("GLOBAL")
    if not isinstance(glob, Mapping):
        return {}
    out: LoadBalance = {}
    fields = glob.get("ecmp_hash")
    if isinstance(fields, str):  # a flat dump writes a list as 'a,b' (or 'ecmp_hash@' lists)
        fields = [f for f in re.split(r"[,\s]+", fields) if f]
    if isinstance(fields, list):
        out["hash_fields"] = _fields((str(f) for f in fields), SONIC_FIELDS)
    if glob.get("ecmp_hash_algorithm"):
        out["hash_algorithm"] = str(glob["ecmp_hash_algorithm"]).lower()
    return {"load_balance": out} if out else {}


def sonic_switch_table(fields: Mapping[str, str]) -> StateBody:
    """APPL_DB ``SWITCH_TABLE:switch``: the ECMP hash seed orchagent programs (``ecmp_hash_seed``).

    sonic-buildimage's ``switch.json.j2`` writes it at start-up: ``DEVICE_METADATA|localhost``'s
    ``ecmp_hash_seed`` when set, else a value per device type (ToR 0, LeafRouter 10, SpineRouter 25,
    ...) plus the ASIC namespace id; it is not in CONFIG_DB's ``SWITCH_HASH``.

    Example:
        >>> sonic_switch_table({"ecmp_hash_seed": "10", "lag_hash_seed": "10", "fdb_aging_time": "600"})
        {'load_balance': {'hash_seed': 10}}
        >>> sonic_switch_table({"fdb_aging_time": "600"})
        {}
    """
    seed = fields.get("ecmp_hash_seed", "")
    if seed.isdigit() and len(seed) <= 10:
        return {"load_balance": {"hash_seed": int(seed)}}
    return {}


def nvue_load_balance(root: Mapping[str, Any]) -> StateBody:
    """NVUE: ``system forwarding ecmp-hash`` (fields on), ``hash-seed``, ``router adaptive-routing``.

    Adaptive routing is off unless configured (NVIDIA's object model: "disabled by default");
    ``enable`` (before 5.16) or ``state`` (5.16 on) says it. Hash fields and seed appear only when
    configured (their defaults are the release's).

    Example:
        >>> nvue_load_balance({"system": {"forwarding": {"ecmp-hash": {"source-ip": "on", "ingress-interface": "off"},
        ...     "hash-seed": 11}}, "router": {"adaptive-routing": {"enable": "on"}}})
        {'load_balance': {'hash_fields': ['src_ip'], 'hash_seed': 11, 'adaptive_routing': True}}
    """
    out: LoadBalance = {}
    system = root.get("system")
    forwarding = system.get("forwarding") if isinstance(system, Mapping) else None
    if isinstance(forwarding, Mapping):
        ecmp = forwarding.get("ecmp-hash")
        if isinstance(ecmp, Mapping):
            out["hash_fields"] = _fields((k for k, v in ecmp.items() if str(v) == "on"), NVUE_FIELDS)
        seed = forwarding.get("hash-seed")
        if type(seed) is int or (isinstance(seed, str) and seed.isdigit()):
            out["hash_seed"] = int(seed)
    router = root.get("router")
    ar = router.get("adaptive-routing") if isinstance(router, Mapping) else None
    word = (ar.get("state", ar.get("enable")) if isinstance(ar, Mapping) else None) or "off"
    out["adaptive_routing"] = str(word) in ("on", "enabled", "enable")
    return {"load_balance": out}


def eos_load_balance(head: str, children: Iterable[tuple[str, list[str]]]) -> StateBody:
    """``load-balance policies`` of an EOS running-config: the profile's ``fields ip``.

    Example:
        >>> eos_load_balance("load-balance policies", [("load-balance fm6000 profile symmetric_5_tuple",
        ...     ["no fields mac", "fields ip protocol dst-ip dst-port src-ip src-port"])])
        {'load_balance': {'hash_fields': ['dst_ip', 'dst_port', 'ip_proto', 'src_ip', 'src_port']}}
    """
    del head
    for line, sub in children:
        if re.fullmatch(r"load-balance \S+ profile \S+", line):
            for s in sub:
                if m := re.fullmatch(r"fields ip (.+)", s):
                    return {"load_balance": {"hash_fields": _fields(m.group(1).split(), EOS_FIELDS)}}
    return {}


def nxos_load_balance(line: str) -> StateBody:
    """``ip load-sharing address ... [port ...] [universal-id N] [rotate N]`` (NX-OS).

    Example:
        >>> nxos_load_balance("ip load-sharing address source-destination port source-destination")
        {'load_balance': {'hash_fields': ['dst_ip', 'dst_port', 'src_ip', 'src_port']}}
    """
    words = line.split()[2:]
    fields: list[str] = []
    out: LoadBalance = {}
    for key, value in zip(words[::2], words[1::2], strict=False):
        if (key, value) in _NXOS_PARTS:
            fields += _NXOS_PARTS[(key, value)]
        elif key == "universal-id" and value.isdigit():
            out["hash_seed"] = int(value)
    if fields:
        out["hash_fields"] = sorted(fields)
    return {"load_balance": out} if out else {}


__all__ = [
    "EOS_FIELDS",
    "NVUE_FIELDS",
    "NXOS_DLB_SINCE",
    "SONIC_FIELDS",
    "eos_load_balance",
    "nvue_load_balance",
    "nxos_dlb",
    "nxos_load_balance",
    "sonic_load_balance",
    "sonic_switch_table",
]
