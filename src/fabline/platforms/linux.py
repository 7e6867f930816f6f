"""Linux GPU hosts with NVIDIA ConnectX NICs: read-only commands and their parsers.

Vendor semantics (see ``docs/platforms/linux.md``):

- ``mtu`` is the L3 MTU the kernel reports (9000 on a RoCE fabric), not a frame size.
- ``nic.roce_tos`` is the RDMA-CM default ToS *byte* (DSCP << 2 | ECN bits): 106 is DSCP 26
  with ECT(0).
- Host QoS is only read: ``mlnx_qos -i IF`` without set flags, ``dcb ... show``, sysfs/configfs
  reads. No command in :data:`COMMANDS` can change the host.
- Commands keyed by an RDMA device (``ibv_devinfo``, the RDMA-CM ToS in configfs) cannot name
  the netdev, so they fill ``host.rdma_devices.<mlx5_N>``; ``show_gids`` maps RDMA devices to
  netdevs (``nic.rdma_device``) and :func:`attach_rdma_devices` copies the per-device values
  onto the interfaces after a host's fragments are merged.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping
from typing import Any, cast

from fabline.errors import CommandUnavailable
from fabline.platforms.base import (
    Command,
    ParseContext,
    check_text,
    json_parser,
    text_parser,
)
from fabline.platforms.spec import (
    InterfaceSource,
    MtuKind,
    MtuSemantics,
    Platform,
    PlatformSpec,
    RunPlan,
    Vocabulary,
)
from fabline.platforms.synthetic_fill import fill_missing, fill_priorities
from fabline.platforms.toolkit import lldp_entry, mbps_to_gbps, search_lines, text_field
from fabline.state_types import Counters, HostNic, Interface, LldpNeighbor, Optics, PcieBridge, StateBody

#: ``ethtool``'s words for state values (``Active FEC encoding: RS``), shared with the simulator.
VOCABULARY = Vocabulary(
    fec={"rs": "RS", "fc": "BaseR", "none": "Off", "auto": "Auto"},
    fec_aliases={"base-r": "fc", "fc": "fc", "none": "none"},
)


def _key_values(text: str, sep: str = ":") -> list[tuple[str, str]]:
    """``key: value`` pairs of a text, keys stripped; lines without the separator are skipped."""
    pairs = []
    for line in text.splitlines():
        key, found, value = line.partition(sep)
        if found and key.strip():
            pairs.append((key.strip(), value.strip()))
    return pairs


# --- ip link ------------------------------------------------------------------------------------


#: RFC 2863 operstates iproute2 prints; UNKNOWN (loopback, tunnels) and TESTING give no ``oper_up``.
_OPERSTATES = {"UP": True, "DOWN": False, "LOWERLAYERDOWN": False, "NOTPRESENT": False, "DORMANT": False}


@json_parser("iproute2 JSON link list (objects with ifname, mtu, flags)")
def parse_ip_j_d_link_show(doc: Any, ctx: ParseContext) -> StateBody:
    """``ip -j -d link show``: admin/oper state, L3 MTU, alias, PCI address of every netdev."""
    if not isinstance(doc, list) or not doc or not all(isinstance(x, dict) and "ifname" in x for x in doc):
        raise ctx.reject("not a list of links with ifname")
    interfaces: dict[str, Any] = {}
    for link in doc:
        fields: dict[str, Any] = {}
        flags = link.get("flags") or []
        fields["admin_up"] = "UP" in flags
        if link.get("operstate") in _OPERSTATES:
            fields["oper_up"] = _OPERSTATES[link["operstate"]]
        if isinstance(link.get("mtu"), int):
            fields["mtu"] = link["mtu"]
        if link.get("ifalias"):
            fields["description"] = str(link["ifalias"])
        if link.get("parentbus") == "pci" and link.get("parentdev"):
            fields["nic"] = {"pci_address": str(link["parentdev"])}
        interfaces[str(link["ifname"])] = fields
    return {"interfaces": interfaces}


_IP_LINK_HEAD = re.compile(
    r"^\d+:\s+(?P<name>[^:@\s]+)(?:@\S+)?:\s+<(?P<flags>[^>]*)>\s+mtu\s+(?P<mtu>\d+)(?P<rest>.*)$"
)


@text_parser("iproute2 link list ('N: name: <FLAGS> mtu M ...' lines)")
def parse_ip_link_show(text: str, ctx: ParseContext) -> StateBody:
    """``ip link show`` / ``ip address show`` (text, also BusyBox): admin/oper state, MTU, alias.

    ``oper_up`` is read from ``state UP``; ``UNKNOWN`` (loopback, tunnels) leaves it absent.
    """
    interfaces: dict[str, Any] = {}
    current: dict[str, Any] | None = None
    for line in text.splitlines():
        m = _IP_LINK_HEAD.match(line)
        if m:
            flags = m["flags"].split(",")
            current = {"admin_up": "UP" in flags, "mtu": int(m["mtu"])}
            state = re.search(r"\bstate\s+(\S+)", m["rest"])
            if state and state.group(1) in _OPERSTATES:
                current["oper_up"] = _OPERSTATES[state.group(1)]
            interfaces[m["name"]] = current
            continue
        alias = re.match(r"^\s+alias\s+(.+?)\s*$", line)
        if alias and current is not None:
            current["description"] = alias.group(1)
    return {"interfaces": interfaces}


# --- ethtool ------------------------------------------------------------------------------------


@text_parser("ethtool link settings ('Settings for IF:' with Speed/Link detected)")
def parse_ethtool(text: str, ctx: ParseContext) -> StateBody:
    """``ethtool IF``: speed, autoneg, link detected, and FEC when the driver reports it."""
    name = ctx.require_interface(ctx.expected)
    if "Settings for" not in text:
        raise ctx.reject("no 'Settings for' header")
    values = dict(_key_values(text))
    fields: Interface = {}
    speed = re.fullmatch(r"(\d{1,9})Mb/s", values.get("Speed", ""))
    if speed:
        fields["speed_gbps"] = mbps_to_gbps(int(speed.group(1)))
    if values.get("Auto-negotiation") in ("on", "off"):
        fields["autoneg"] = values["Auto-negotiation"] == "on"
    if values.get("Link detected") in ("yes", "no"):
        fields["oper_up"] = values["Link detected"] == "yes"
    if not fields:
        raise ctx.reject("no Speed, Auto-negotiation or Link detected line")
    return {"interfaces": {name: fields}}


_FW_PSID = re.compile(r"^(?P<version>\d+\.\d+\.\d+) \((?P<psid>[^()\s]+)\)$")


def split_firmware(text: str) -> tuple[str, str | None]:
    """(firmware version, PSID) of an ethtool ``firmware-version`` value.

    The mlx5 driver prints ``maj.min.sub (board id)`` (``"%d.%d.%04d (%.16s)"`` in
    ``mlx5e_ethtool_get_drvinfo``), the board id being the card's PSID; ``ibv_devinfo`` and sysfs
    ``fw_ver`` print the bare version, so the version alone is what fleets compare. Other drivers'
    strings (``8.60 0x8000bd5d 1.3140.0``) are kept whole.

    Example:
        >>> split_firmware("28.39.1002 (MT_0000000838)"), split_firmware("14.23.1020")
        (('28.39.1002', 'MT_0000000838'), ('14.23.1020', None))
    """
    m = _FW_PSID.match(text.strip())
    return (m["version"], m["psid"]) if m else (text.strip(), None)


@text_parser("ethtool driver info ('driver:' and 'firmware-version:' lines)")
def parse_ethtool_i(text: str, ctx: ParseContext) -> StateBody:
    """``ethtool -i IF``: driver, driver version, firmware (version; the mlx5 PSID as ``psid``), PCI address."""
    name = ctx.require_interface(ctx.expected)
    values = dict(_key_values(text))
    if "driver" not in values:
        raise ctx.reject("no 'driver:' line")
    nic: dict[str, Any] = {}
    for key, field in (
        ("driver", "driver"),
        ("version", "driver_version"),
        ("firmware-version", "firmware"),
        ("bus-info", "pci_address"),
    ):
        if values.get(key):
            nic[field] = values[key]
    if "firmware" in nic:
        nic["firmware"], psid = split_firmware(nic["firmware"])
        if psid:
            nic["psid"] = psid
    return {"interfaces": {name: {"nic": cast(HostNic, nic)}}}


@text_parser("ethtool FEC parameters ('Active FEC encoding:' line)")
def parse_ethtool_show_fec(text: str, ctx: ParseContext) -> StateBody:
    """``ethtool [-I] --show-fec IF``: active FEC (``fec``), configured modes, FEC block counters.

    ``fec_configured`` (added) lists the configured modes; with ``-I`` (ethtool >= 5.13) the
    ``Statistics`` totals feed ``counters.fec_corrected``/``fec_uncorrectable`` (blocks).
    """
    name = ctx.require_interface(ctx.expected)
    values = dict(_key_values(text))
    active = values.get("Active FEC encoding")
    if active is None:
        raise ctx.reject("no 'Active FEC encoding' line")
    fields: Interface = {}
    mode = VOCABULARY.fec_mode(active.split()[0]) if active.split() else None
    if mode:
        fields["fec"] = mode
    configured = values.get("Configured FEC encodings", values.get("Supported/Configured FEC encodings"))
    if configured:
        fields["fec_configured"] = [VOCABULARY.fec_mode(w) or w.lower() for w in configured.split()]
    counters = {
        field: int(values[key])
        for key, field in (
            ("corrected_blocks", "fec_corrected"),
            ("uncorrectable_blocks", "fec_uncorrectable"),
        )
        if values.get(key, "").isdigit()
    }
    if counters:
        fields["counters"] = cast(Counters, counters)
    if not fields:
        raise ctx.reject(f"unknown FEC encoding {active!r}")
    return {"interfaces": {name: fields}}


#: The lowest optical power SFF-8472/8636/CMIS DOM can report (1 LSB = 0.1 uW).
_DOM_FLOOR_DBM = -40.0
_DBM = re.compile(r"/\s*(-?[0-9.]+|-inf)\s*dBm")


@text_parser("ethtool module EEPROM dump ('Identifier', 'Vendor name' lines)")
def parse_ethtool_m(text: str, ctx: ParseContext) -> StateBody:
    """``ethtool -m IF``: transceiver identity and DOM (temperature, per-lane rx/tx power in dBm).

    SFP modules print one ``Receiver signal average optical power``/``Laser output power``;
    QSFP/CMIS modules print one per channel. Threshold lines are not readings and are skipped.
    """
    name = ctx.require_interface(ctx.expected)
    pairs = _key_values(text)
    values = dict(pairs)
    if "Identifier" not in values and "Vendor name" not in values:
        raise ctx.reject("no Identifier or Vendor name line")
    optics: dict[str, Any] = {}
    for key, field in (("Vendor name", "vendor"), ("Vendor PN", "part_number"), ("Vendor SN", "serial")):
        if values.get(key):
            optics[field] = values[key]
    types = [v for k, v in pairs if k == "Transceiver type"]
    if types:
        optics["type"] = types[0]
    rx: list[float] = []
    tx: list[float] = []
    for key, value in pairs:
        low = key.lower()
        if "threshold" in low or "alarm" in low or "warning" in low:
            continue
        if low == "module temperature":
            temp = re.match(r"(-?[0-9.]+)\s*degrees C", value)
            if temp:
                optics["temperature_c"] = float(temp.group(1))
            continue
        dbm = _DBM.search(value)
        if not dbm:
            continue
        # A dark lane reads 0 mW (-inf dBm); DOM resolution is 0.1 uW = -40 dBm, so the lane is
        # kept at that floor: lane positions stay aligned and any rx threshold fails.
        reading = _DOM_FLOOR_DBM if dbm.group(1) == "-inf" else float(dbm.group(1))
        if low.startswith(("receiver signal", "rcvr signal", "rx power")):
            rx.append(reading)
        elif low.startswith(("laser output power", "transmit avg optical power", "tx power")):
            tx.append(reading)
    if rx:
        optics["rx_power_dbm"] = rx
    if tx:
        optics["tx_power_dbm"] = tx
    return {"interfaces": {name: {"optics": cast(Optics, optics)}}}


#: ``ethtool -S`` counter names (mlx5 as documented by NVIDIA, bnxt_en as in the sample) -> state.
#: mlx5 has no FEC block counters here (those come from ``ethtool -I --show-fec``), only
#: ``rx_corrected_bits_phy``, kept as the added ``fec_corrected_bits``.
_COUNTER_NAMES = {
    "rx_crc_errors_phy": "crc_errors",
    "rx_fcs_err_frames": "crc_errors",
    "rx_fec_corrected_blocks": "fec_corrected",
    "rx_fec_uncorrectable_blocks": "fec_uncorrectable",
    "rx_corrected_bits_phy": "fec_corrected_bits",
    # Loss at the NIC (issue 15 item 2): every packet the port dropped (mostly no receive buffer),
    # and packets dropped because the driver's receive queue had no free descriptor.
    "rx_discards_phy": "rx_discards_phy",
    "rx_out_of_buffer": "rx_out_of_buffer",
}
#: mlx5 ``rx_prioN_discards``: packets of priority N dropped for lack of port buffer (kernel commit
#: 827a8cb2dd2b "net/mlx5e: Add discard counters per priority").
#: Per-priority counter names -> (state counter, priority): PFC pauses (mlx5 ``rx_prio3_pause``,
#: bnxt_en ``rx_pfc_ena_frames_pri3``) and mlx5's ``rx_prio3_discards``. A table, not patterns:
#: every counter line of the output is looked up.
_PRIO_STATS: dict[str, tuple[str, str]] = {
    **{
        name.format(d=d, p=p): ("pfc_rx_pause" if d == "rx" else "pfc_tx_pause", str(p))
        for name in ("{d}_prio{p}_pause", "{d}_pfc_ena_frames_pri{p}")
        for d in ("rx", "tx")
        for p in range(8)
    },
    **{f"rx_prio{p}_discards": ("rx_prio_discards", str(p)) for p in range(8)},
}


@text_parser("ethtool statistics ('NIC statistics:' then 'name: value' lines)")
def parse_ethtool_s(text: str, ctx: ParseContext) -> StateBody:
    """``ethtool -S IF``: per-priority PFC pauses and discards, FEC, CRC, drop counters (mlx5, bnxt_en).

    Per-queue lines (``[0]: rx_ucast_packets``) are skipped; only port-level counters are read.
    """
    name = ctx.require_interface(ctx.expected)
    if "NIC statistics" not in text:
        raise ctx.reject("no 'NIC statistics:' header")
    stats: dict[str, int] = {}
    for line in text.splitlines():  # _key_values, keeping only counters (one pass, no pair list)
        label, found, number = line.partition(":")
        if found and (number := number.strip()).isdigit() and (label := label.strip()) and label[0] != "[":
            stats[label] = int(number)
    counters: dict[str, Any] = {}
    for stat, field in _COUNTER_NAMES.items():
        if stat in stats:
            counters[field] = stats[stat]
    for stat, value in stats.items():
        if (hit := _PRIO_STATS.get(stat)) is not None:
            key, prio = hit
            counters.setdefault(key, {})[prio] = value
    for key in ("pfc_rx_pause", "pfc_tx_pause", "rx_prio_discards"):
        if key in counters:
            counters[key] = dict(sorted(counters[key].items()))
    if not stats:
        raise ctx.reject("no counter lines")
    return {"interfaces": {name: {"counters": cast(Counters, counters)}}}


# --- host QoS -----------------------------------------------------------------------------------


_MLNX_TRUST = re.compile(r"^\s*Priority trust (?:state|mode):\s*(\w+)", re.MULTILINE)
_MLNX_DCBX = re.compile(r"^\s*DCBX mode:\s*(.+?)\s*$", re.MULTILINE)
_MLNX_CABLE = re.compile(r"^\s*Cable len:\s*(\d+)", re.MULTILINE)
_MLNX_DSCP = re.compile(r"^\s*prio:(\d)\s+dscp:([\d,]+)", re.MULTILINE)
_MLNX_PFC = re.compile(r"^[ \t]*priority((?:[ \t]+\d)+)[ \t]*\n[ \t]*enabled((?:[ \t]+[01])+)", re.MULTILINE)
_MLNX_TC = re.compile(r"^tc:\s*(\d+)[^\n]*\n\s+priority:\s*([\d ]+)", re.MULTILINE)


@text_parser("mlnx_qos output ('Priority trust state' / 'PFC configuration')")
def parse_mlnx_qos(text: str, ctx: ParseContext) -> StateBody:
    """``mlnx_qos -i IF`` (read-only form): trust, DSCP -> priority, PFC, priority -> TC.

    Feeds ``trust``, ``dscp_to_priority`` (as printed: mlnx_qos prints the map even under trust
    pcp, where it is not in effect), ``pfc_priorities``, and the added ``priority_to_tc``,
    ``dcbx_mode`` and ``cable_length_m``.
    """
    name = ctx.require_interface(ctx.expected)
    fields: Interface = {}
    trust = search_lines(_MLNX_TRUST, text, "Priority trust ")
    if trust and trust.group(1).lower() in ("dscp", "pcp"):
        fields["trust"] = "dscp" if trust.group(1).lower() == "dscp" else "pcp"
    dcbx = search_lines(_MLNX_DCBX, text, "DCBX mode:")
    if dcbx:
        fields["dcbx_mode"] = dcbx.group(1)
    cable = search_lines(_MLNX_CABLE, text, "Cable len:")
    if cable:
        fields["cable_length_m"] = int(cable.group(1))
    dscp: dict[int, int] = {}
    for prio, codes in _MLNX_DSCP.findall(text):
        for code in codes.split(","):
            if code:
                dscp[int(code)] = int(prio)
    if dscp:
        fields["dscp_to_priority"] = {str(code): prio for code, prio in sorted(dscp.items())}
    pfc = _MLNX_PFC.search(text)
    if pfc:
        prios = pfc.group(1).split()
        enabled = pfc.group(2).split()
        fields["pfc_priorities"] = sorted(int(p) for p, e in zip(prios, enabled, strict=False) if e == "1")
    tc_map: dict[str, int] = {}
    for tc, prios in _MLNX_TC.findall(text):
        for prio in prios.split():
            tc_map[prio] = int(tc)
    if tc_map:
        fields["priority_to_tc"] = dict(sorted(tc_map.items()))
    if "trust" not in fields and "pfc_priorities" not in fields:
        raise ctx.reject("no trust state and no PFC configuration")
    return {"interfaces": {name: fields}}


@text_parser("iproute2 dcb pfc output ('prio-pfc 0:off 1:off ...')")
def parse_dcb_pfc_show(text: str, ctx: ParseContext) -> StateBody:
    """``dcb pfc show dev IF`` (iproute2): ``pfc_priorities`` from ``prio-pfc 3:on ...``."""
    name = ctx.require_interface(ctx.expected)
    pairs = re.findall(r"\b([0-7]):(on|off)\b", text.partition("prio-pfc")[2])
    if "prio-pfc" not in text or not pairs:
        raise ctx.reject("no prio-pfc list")
    return {"interfaces": {name: {"pfc_priorities": sorted(int(p) for p, s in pairs if s == "on")}}}


def dscp_code(word: str) -> int | None:
    """The DSCP value of a number or an RFC name (CSn, AFxy, EF, VA, LE), as ``dcb`` prints them.

    Example:
        >>> dscp_code("26"), dscp_code("AF31"), dscp_code("CS6"), dscp_code("EF"), dscp_code("X")
        (26, 26, 48, 46, None)
    """
    w = word.upper()
    if w.isdigit():
        return int(w) if int(w) < 64 else None
    named = {"EF": 46, "VA": 44, "LE": 1}
    if w in named:
        return named[w]
    cs = re.fullmatch(r"CS([0-7])", w)
    if cs:
        return 8 * int(cs.group(1))
    af = re.fullmatch(r"AF([1-4])([1-3])", w)
    if af:
        return 8 * int(af.group(1)) + 2 * int(af.group(2))
    return None


@text_parser("iproute2 dcb app output ('dscp-prio 26:3 ...')")
def parse_dcb_app_show(text: str, ctx: ParseContext) -> StateBody:
    """``dcb app show dev IF`` (iproute2): ``dscp_to_priority`` from ``dscp-prio 26:3 48:6`` or ``AF31:3``.

    The dcb APP table has no trust state of its own; a host whose APP table maps DSCPs is
    classifying by DSCP, so ``trust`` is ``dscp`` when a dscp-prio entry exists and absent otherwise.
    """
    name = ctx.require_interface(ctx.expected)
    if not re.search(r"\b(dscp-prio|pcp-prio|default-prio|ethtype-prio|port-prio)\b", text):
        raise ctx.reject("no *-prio list")
    fields: Interface = {}
    dscp_part = re.search(r"dscp-prio((?:\s+\w+:\d)+)", text)
    if dscp_part:
        mapping = {}
        for word, prio in re.findall(r"(\w+):(\d)", dscp_part.group(1)):
            code = dscp_code(word)
            if code is not None:
                mapping[str(code)] = int(prio)
        if mapping:
            fields["dscp_to_priority"] = dict(sorted(mapping.items(), key=lambda kv: int(kv[0])))
            fields["trust"] = "dscp"
    return {"interfaces": {name: fields}}


@text_parser("one integer 0..255 (the RDMA-CM default ToS)")
def parse_roce_tos(text: str, ctx: ParseContext) -> StateBody:
    """``cat /sys/kernel/config/rdma_cm/DEV/ports/1/default_roce_tos``: the RDMA-CM ToS byte."""
    device = ctx.params.get("rdma_device")
    text = text.strip()
    if not device:
        raise ctx.reject("the command names no RDMA device")
    if not text.isdigit() or int(text) > 255:
        raise ctx.reject(f"got {text[:40]!r}")
    return {"host": {"rdma_devices": {device: {"roce_tos": int(text)}}}}


_ECN_LINE = re.compile(
    r"^/sys/class/net/(?P<if>[^/]+)/ecn/roce_(?P<role>np|rp)/enable/(?P<prio>[0-7]):(?P<v>[01])$"
)


@text_parser("grep -H lines '/sys/class/net/IF/ecn/roce_np|roce_rp/enable/P:0|1'")
def parse_ecn_enable(text: str, ctx: ParseContext) -> StateBody:
    """``grep -H . /sys/class/net/IF/ecn/roce_np/enable/* .../roce_rp/enable/*``: ECN per priority.

    Feeds ``nic.ecn_np_priorities`` (notification point: the receiver sends CNPs) and
    ``nic.ecn_rp_priorities`` (reaction point: the sender slows down) — priorities set to 1.
    """
    name = ctx.require_interface(ctx.expected)
    found: dict[str, list[int]] = {"np": [], "rp": []}
    seen = False
    for line in text.splitlines():
        m = _ECN_LINE.match(line.strip())
        if not m:
            continue
        seen = True
        if m["v"] == "1":
            found[m["role"]].append(int(m["prio"]))
    if not seen:
        raise ctx.reject("no roce_np/roce_rp enable line")
    nic: HostNic = {"ecn_np_priorities": sorted(found["np"]), "ecn_rp_priorities": sorted(found["rp"])}
    return {"interfaces": {name: {"nic": nic}}}


# --- one read of the host's sysfs: PCIe link, NUMA, IOMMU, DCQCN, BIOS ---------------------------

#: The one read-only command that gathers every sysfs value of issue 16 (a grep over many files is one
#: exec, where one ``cat`` per file and interface would be dozens): every netdev (its ``address``, so a
#: netdev without a PCIe device is seen too), its PCIe link, NUMA node and IOMMU domain, the DCQCN
#: parameters of its ECN notification/reaction points, the IOMMU kernel parameters and the BIOS version.
#: ``--no-messages`` (``-s``): a file a host does not have (no PCIe link on a veth, no ``ecn`` without mlx5) is no error
#: line; globs that match nothing stay as written and are skipped the same way. POSIX sh globs only.
HOST_SYSFS_COMMAND = (
    "grep --no-messages -H . /proc/cmdline /sys/class/dmi/id/bios_version /sys/class/net/*/address"
    " /sys/class/net/*/device/current_link_speed /sys/class/net/*/device/current_link_width"
    " /sys/class/net/*/device/max_link_speed /sys/class/net/*/device/max_link_width"
    " /sys/class/net/*/device/numa_node /sys/class/net/*/device/iommu_group/type"
    " /sys/class/net/*/ecn/roce_np/* /sys/class/net/*/ecn/roce_rp/*"
)

_SYSFS_NET = re.compile(r"^/sys/class/net/(?P<if>[^/]+)/(?P<rest>[^:]+):(?P<value>.*)$")
#: ``current_link_speed`` as the kernel prints it: ``32.0 GT/s PCIe`` (>= 5.x), ``8 GT/s``, ``2.5 GT/s``;
#: ``Unknown`` (a link that is down, or a VF) gives no value.
_GTS = re.compile(r"(\d+(?:\.\d+)?) ?GT/s")
_PCIE_FILES = {
    "device/current_link_width": "width",
    "device/max_link_width": "max_width",
    "device/current_link_speed": "speed_gts",
    "device/max_link_speed": "max_speed_gts",
}
#: ECN notification-point files that are not DCQCN tuning but what CNPs carry (judged on their own).
_CNP_FIELDS = {"cnp_dscp": "cnp_dscp", "cnp_802p_prio": "cnp_802p_prio"}
#: Kernel parameters that decide the IOMMU mode (and the ACS override some GPU hosts boot with).
_IOMMU_PARAM = re.compile(
    r"^(?:iommu|intel_iommu|amd_iommu|iommu\.passthrough|iommu\.strict|pcie_acs_override)="
)


@text_parser("grep -H lines '/sys/class/net/IF/...:value' (with /sys/class/net/IF/address)")
def parse_host_sysfs(text: str, ctx: ParseContext) -> StateBody:
    """The host-wide sysfs read (:data:`HOST_SYSFS_COMMAND`): PCIe link, NUMA, IOMMU, DCQCN, BIOS.

    Per netdev ``IF``: ``nic.pcie`` (``present``: whether the netdev sits on a PCIe device that reports
    a link; ``width``/``max_width`` lanes, ``speed_gts``/``max_speed_gts`` GT/s per lane as trained and
    as the device can), ``nic.numa_node`` (-1: the platform reports none), ``nic.iommu_domain`` (the
    kernel's IOMMU group type: ``identity`` is passthrough, ``DMA``/``DMA-FQ`` translated),
    ``nic.cnp_dscp``/``nic.cnp_802p_prio`` (what the NIC stamps on the CNPs it sends) and
    ``nic.dcqcn.np|rp.NAME`` (the integer DCQCN parameters). Host-wide: ``host.iommu_params`` (the
    IOMMU kernel parameters of ``/proc/cmdline``), ``facts.bios_version``.
    """
    interfaces: dict[str, dict[str, Any]] = {}
    fragment: dict[str, Any] = {}
    listed = False  # every netdev has an 'address': without one, this is another read's output
    for line in text.splitlines():
        if line.startswith("/proc/cmdline:"):
            params = [w for w in line.partition(":")[2].split() if _IOMMU_PARAM.match(w)]
            fragment.setdefault("host", {})["iommu_params"] = params
            continue
        if line.startswith("/sys/class/dmi/id/bios_version:"):
            version = line.partition(":")[2].strip()
            if version:
                fragment.setdefault("facts", {})["bios_version"] = version
            continue
        m = _SYSFS_NET.match(line)
        if not m:
            continue
        nic = interfaces.setdefault(m["if"], {})
        rest, value = m["rest"], m["value"].strip()
        if rest == "address":
            listed = True
            continue
        if rest in _PCIE_FILES:
            key = _PCIE_FILES[rest]
            if key.endswith("gts"):
                speed = _GTS.match(value)
                if speed:
                    nic.setdefault("pcie", {})[key] = float(speed.group(1))
            elif value.isdigit():
                nic.setdefault("pcie", {})[key] = int(value)
        elif rest == "device/numa_node" and re.fullmatch(r"-?\d{1,4}", value):
            nic["numa_node"] = int(value)
        elif rest == "device/iommu_group/type" and value:
            nic["iommu_domain"] = value
        elif rest.startswith("ecn/roce_") and re.fullmatch(r"\d{1,10}", value):
            role, _, name = rest[len("ecn/roce_") :].partition("/")
            if role not in ("np", "rp") or "/" in name or not name:
                continue  # enable/<prio> is the per-interface ECN read's
            if role == "np" and name in _CNP_FIELDS:
                nic[_CNP_FIELDS[name]] = int(value)
            else:
                nic.setdefault("dcqcn", {}).setdefault(role, {})[name] = int(value)
    if not listed:
        raise ctx.reject("no /sys/class/net/IF/address line")
    for nic in interfaces.values():
        pcie = nic.setdefault("pcie", {})
        # A netdev whose device reports no link width (veth, bond, virtio on a legacy bus) has no
        # PCIe link to judge: said explicitly, so a check can tell it from 'not collected'.
        pcie["present"] = "width" in pcie or "max_width" in pcie
    fragment["interfaces"] = {name: {"nic": dict(sorted(nic.items()))} for name, nic in interfaces.items()}
    return cast(StateBody, fragment)


# --- RDMA ---------------------------------------------------------------------------------------

_HW_COUNTER = re.compile(
    r"^/sys/class/net/(?P<if>[^/]+)/device/infiniband/(?P<dev>[^/]+)/ports/(?P<port>\d+)/hw_counters/(?P<name>\w+):(?P<v>\d+)$"
)
#: mlx5 RDMA hardware counters (``/sys/class/infiniband/DEV/ports/1/hw_counters``) -> state. The
#: congestion ones (CNPs, ECN marks) and the RoCE transport's own errors: packets that arrived out
#: of order (a drop upstream), NAK sequence errors, ACK timeouts (the request was retransmitted),
#: receive-queue overruns, and the adaptive-retransmission counters (names from the kernel's mlx5
#: ib driver, ``drivers/infiniband/hw/mlx5/counters.c``).
_HW_COUNTER_NAMES = {
    "np_cnp_sent": "cnp_sent",
    "rp_cnp_handled": "cnp_handled",
    "np_ecn_marked_roce_packets": "ecn_marked",
    "out_of_sequence": "roce_out_of_sequence",
    "packet_seq_err": "roce_packet_seq_err",
    "local_ack_timeout_err": "roce_local_ack_timeout_err",
    "out_of_buffer": "roce_out_of_buffer",
    "duplicate_request": "roce_duplicate_request",
    "implied_nak_seq_err": "roce_implied_nak_seq_err",
    "rnr_nak_retry_err": "roce_rnr_nak_retry_err",
    "roce_adp_retrans": "roce_adp_retrans",
    "roce_adp_retrans_to": "roce_adp_retrans_to",
}


@text_parser("grep -H lines '/sys/class/net/IF/device/infiniband/DEV/ports/1/hw_counters/NAME:N'")
def parse_rdma_hw_counters(text: str, ctx: ParseContext) -> StateBody:
    """``grep -H . /sys/class/net/*/device/infiniband/*/ports/*/hw_counters/*``: RDMA counters per netdev.

    mlx5 keeps the RoCE congestion counters (np_cnp_sent, rp_cnp_handled,
    np_ecn_marked_roce_packets) and the RoCE transport errors in the RDMA device's
    ``hw_counters``, not in ``ethtool -S``. Reaching them through each netdev's PCI device ties
    them to the interface and names its RDMA device (``nic.rdma_device``), for every netdev in
    one read (port 1: a RoCE NIC function has one port). The per-interface form
    (``/sys/class/net/IF/...``) reads one netdev.

    Example:
        >>> parse_rdma_hw_counters(
        ...     "/sys/class/net/eth2/device/infiniband/mlx5_0/ports/1/hw_counters/out_of_sequence:3\\n",
        ...     ParseContext("linux", "grep"))
        {'interfaces': {'eth2': {'counters': {'roce_out_of_sequence': 3}, 'nic': {'rdma_device': 'mlx5_0'}}}}
    """
    only = ctx.interface
    interfaces: dict[str, dict[str, Any]] = {}
    devices: dict[str, set[str]] = {}
    for line in text.splitlines():
        m = _HW_COUNTER.match(line.strip())
        if not m or m["port"] != "1" or (only is not None and m["if"] != only):
            continue
        devices.setdefault(m["if"], set()).add(m["dev"])
        counters = interfaces.setdefault(m["if"], {}).setdefault("counters", {})
        if m["name"] in _HW_COUNTER_NAMES:
            counters[_HW_COUNTER_NAMES[m["name"]]] = int(m["v"])
    if not interfaces:
        raise ctx.reject("no hw_counters line")
    for name, found in devices.items():
        if len(found) == 1:
            interfaces[name]["nic"] = {"rdma_device": found.pop()}
    return {"interfaces": cast(dict[str, Interface], interfaces)}


_CARRIER = re.compile(r"^/sys/class/net/(?P<if>[^/\s]+)/carrier_changes:(?P<v>\d{1,20})$")
#: The netdevs each platform's state holds (a switch's kernel also has lo, eth0, docker0, bridges).
_CARRIER_PORTS = {
    "sonic": re.compile(r"^Ethernet\d+$"),
    "cumulus": re.compile(r"^swp\d+(s\d+)?$"),
}


@text_parser("grep -H lines '/sys/class/net/IF/carrier_changes:N'")
def parse_carrier_changes(text: str, ctx: ParseContext) -> StateBody:
    """``grep -H . /sys/class/net/*/carrier_changes``: link up/down transitions of every netdev at once.

    The kernel counts every carrier change (down and up) of a netdev since it was created; on a
    SONiC or Cumulus switch the front-panel netdevs follow the ports' operational state, so the
    same read works there. Feeds the added ``counters.link_flaps``. On a switch only the
    front-panel netdevs are kept; on a host every netdev but ``lo``.

    Example:
        >>> parse_carrier_changes("/sys/class/net/eth0/carrier_changes:4\\n", ParseContext("linux", "grep"))
        {'interfaces': {'eth0': {'counters': {'link_flaps': 4}}}}
    """
    keep = _CARRIER_PORTS.get(ctx.platform)
    interfaces: dict[str, Any] = {}
    seen = False
    for line in text.splitlines():
        m = _CARRIER.match(line.strip())
        if not m:
            continue
        seen = True
        name = m["if"]
        if name == "lo" or (keep is not None and not keep.match(name)):
            continue
        interfaces[name] = {"counters": {"link_flaps": int(m["v"])}}
    if not seen:
        raise ctx.reject("no carrier_changes line")
    return {"interfaces": interfaces}


@text_parser("ibv_devinfo output ('hca_id:' blocks)")
def parse_ibv_devinfo(text: str, ctx: ParseContext) -> StateBody:
    """``ibv_devinfo``: per RDMA device firmware, board, port state, link layer, active MTU."""
    devices: dict[str, Any] = {}
    current: dict[str, Any] | None = None
    for key, value in _key_values(text):
        if key == "hca_id":
            current = devices.setdefault(value, {})
            continue
        if current is None:
            continue
        first = value.split()[0] if value.split() else ""
        if key == "fw_ver":
            current["firmware"] = value
        elif key == "board_id":
            current["board_id"] = value
        elif key == "node_guid":
            current["node_guid"] = value
        elif key == "state":
            current["port_state"] = first
        elif key == "link_layer":
            current["link_layer"] = value
        elif key in ("active_mtu", "max_mtu") and first.isdigit():
            current[key] = int(first)
    if not devices:
        raise ctx.reject("no hca_id line")
    return {"host": {"rdma_devices": devices}}


@text_parser("show_gids table (DEV PORT INDEX GID IPv4 VER DEV)")
def parse_show_gids(text: str, ctx: ParseContext) -> StateBody:
    """``show_gids``: each RDMA device's netdev (``nic.rdma_device``) and GID table (``nic.gids``).

    A table indented as a whole (pasted into a ticket, or printed by a wrapper) is read as printed:
    the indentation common to every line is removed first.
    """
    text = textwrap.dedent(text)
    if not re.search(r"^DEV\s+PORT\s+INDEX\s+GID", text, re.MULTILINE):
        raise ctx.reject("no DEV/PORT/INDEX/GID header")
    interfaces: dict[str, Any] = {}
    row = re.compile(
        r"^(?P<dev>\S+)\s+(?P<port>\d+)\s+(?P<index>\d+)\s+(?P<gid>[0-9a-f:]{39})\s+"
        r"(?:(?P<ipv4>\d+\.\d+\.\d+\.\d+)\s+)?(?P<ver>v\d)\s+(?P<netdev>\S+)\s*$"
    )
    for line in text.splitlines():
        m = row.match(line)
        if not m:
            continue
        nic = interfaces.setdefault(m["netdev"], {"nic": {"rdma_device": m["dev"], "gids": []}})["nic"]
        gid: dict[str, Any] = {"index": int(m["index"]), "gid": m["gid"], "version": m["ver"]}
        if m["ipv4"]:
            gid["ipv4"] = m["ipv4"]
        nic["gids"].append(gid)
    return {"interfaces": interfaces}


# --- LLDP ---------------------------------------------------------------------------------------


def _lldpd_neighbor(body: Mapping[str, Any]) -> LldpNeighbor:
    chassis = body.get("chassis") or {}
    if isinstance(chassis, list):
        chassis = chassis[0] if chassis else {}
    device = chassis_id = None
    if isinstance(chassis, Mapping) and chassis:
        name, info = next(iter(chassis.items()))
        if isinstance(info, Mapping) and "id" in info:
            device = str(name)
            cid = info["id"]
            if isinstance(cid, Mapping) and cid.get("value"):
                chassis_id = text_field(cid["value"])
        elif isinstance(info, Mapping) and isinstance(info.get("value"), str):
            chassis_id = info["value"]
    port = body.get("port") or {}
    port_id = descr = None
    mac_typed = False
    if isinstance(port, Mapping):
        pid = port.get("id")
        if isinstance(pid, Mapping):
            port_id = text_field(pid.get("value"))
            mac_typed = pid.get("type") == "mac"
        descr = text_field(port.get("descr"))
    return lldp_entry(device, port_id, descr, chassis_id, port_id_is_mac=mac_typed)


@json_parser("lldpctl JSON ({'lldp': {'interface': ...}})", may_be_empty=True)
def parse_lldpctl_json(doc: Any, ctx: ParseContext) -> StateBody:
    """``lldpctl -f json``: the LLDP neighbour of each host port.

    lldpd prints ``interface`` as an object for one port and as a list of one-key objects for
    several; both are read.
    """
    lldp = doc.get("lldp") if isinstance(doc, dict) else None
    if not isinstance(lldp, (dict, list)):
        raise ctx.reject("no top-level 'lldp' key")
    ifaces = lldp.get("interface", []) if isinstance(lldp, dict) else []
    entries: list[tuple[str, Any]] = []
    for item in ifaces if isinstance(ifaces, list) else [ifaces]:
        if isinstance(item, dict):
            entries += list(item.items())
    interfaces: dict[str, Any] = {}
    for name, body in entries:
        if isinstance(body, dict):
            neighbor = _lldpd_neighbor(body)
            if neighbor:
                interfaces[name] = {"lldp": neighbor}
    return {"interfaces": interfaces}


# --- host software ------------------------------------------------------------------------------

#: Modules that give GPUDirect RDMA: nvidia_peermem (driver >= 470), nv_peer_mem (legacy MOFED).
_PEERMEM_MODULES = ("nvidia_peermem", "nv_peer_mem")


@text_parser("lsmod table (header 'Module Size Used by')")
def parse_lsmod(text: str, ctx: ParseContext) -> StateBody:
    """``lsmod``: ``host.kernel_modules`` and ``host.gpudirect_rdma`` (nvidia_peermem loaded)."""
    lines = text.splitlines()
    header = next((i for i, line in enumerate(lines) if re.match(r"^Module\s+Size\s+Used by", line)), None)
    if header is None:
        raise ctx.reject("no 'Module Size Used by' header")
    modules = sorted({line.split()[0] for line in lines[header + 1 :] if re.match(r"^\S+\s+\d+\s+\d+", line)})
    return {
        "host": {"kernel_modules": modules, "gpudirect_rdma": any(m in modules for m in _PEERMEM_MODULES)}
    }


@text_parser("an nccl.conf (NCCL_NAME=value lines)", may_be_empty=True, empty_ok=True)
def parse_nccl_conf(text: str, ctx: ParseContext) -> StateBody:
    """``cat /etc/nccl.conf``: ``host.nccl_env`` (``NCCL_X=value`` lines; comments skipped).

    An empty file (``cat`` exits 0 and prints nothing) and a file of comments only set nothing: an
    empty ``nccl_env``. A read that failed exits non-zero and never gets here (``failed``).
    """
    env: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = _NCCL_SETTING.fullmatch(line)
        if not m:
            check_text(line, ctx, ctx.expected)  # an error banner reads as 'unavailable'
            raise ctx.reject(f"line {line[:60]!r} is not NCCL_NAME=value")
        env[m.group(1)] = m.group(2).strip().strip("\"'")
    return {"host": {"nccl_env": env}}


#: An NCCL setting as nccl.conf and shell env files write it (``NCCL_X=v``, ``export NCCL_X="v"``).
_NCCL_SETTING = re.compile(r"(?:export\s+)?(NCCL_[A-Z0-9_]+)\s*=\s*(.*?)")

#: Reads the NCCL lines of an environment file the inventory declares (``nccl_env_files``), then a
#: marker in place of its last line: only lines naming ``NCCL_`` leave the host, so other secrets a
#: job's env file holds never reach the snapshot; the marker makes a file without NCCL settings a
#: non-empty answer no other command's output is mistaken for. ``sed -n`` prints, never writes.
NCCL_ENV_FILE_COMMAND = "sed -n '/NCCL_/p;$s/.*/(end of file)/p' {env_file}"


@text_parser("NCCL_NAME=value lines, then '(end of file)'", may_be_empty=True, empty_ok=True)
def parse_nccl_env_file(text: str, ctx: ParseContext) -> StateBody:
    """``sed -n '/NCCL_/p;$s/.*/(end of file)/p' FILE``: the NCCL settings of a declared env file (``host.nccl_env``).

    Lines that mention ``NCCL_`` but set nothing (``# NCCL_DEBUG=INFO``, ``X=$NCCL_Y``) are skipped;
    ``host.nccl_sources`` names the file each setting came from. The answer ends with the
    ``(end of file)`` marker; without it, it is not this command's output. An empty file has no last
    line for sed to mark: sed exits 0 and prints nothing, and the file sets nothing (a missing file
    exits 2 and is ``failed`` before parsing).
    """
    path = ctx.params.get("env_file")
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not path:
        raise ctx.reject("the command names no file")
    if not lines:
        return {"host": {"nccl_env": {}, "nccl_sources": {}}}
    if not lines or lines[-1].strip() != "(end of file)":
        raise ctx.reject("no '(end of file)' marker at the end")
    env: dict[str, str] = {}
    for line in lines[:-1]:
        m = _NCCL_SETTING.fullmatch(line.strip())
        if m:
            env[m.group(1)] = m.group(2).strip().strip("\"'")
    return {"host": {"nccl_env": env, "nccl_sources": dict.fromkeys(env, path)}}


# --- GPUs ---------------------------------------------------------------------------------------

#: The GPU query: one CSV line per GPU (nvidia-smi(1): ``--format=csv,noheader`` separates with ", ").
NVIDIA_SMI_QUERY = (
    "nvidia-smi --query-gpu=index,pci.bus_id,name,driver_version,vbios_version --format=csv,noheader"
)
_GPU_BUS_ID = re.compile(r"(?:[0-9A-Fa-f]{4})?([0-9A-Fa-f]{4}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])")


def pci_address(bus_id: str) -> str:
    """A PCI address in the kernel's form (``0000:18:00.0``) from nvidia-smi's 8-digit-domain form.

    Example:
        >>> pci_address("00000000:18:00.0"), pci_address("0000:AB:00.0")
        ('0000:18:00.0', '0000:ab:00.0')
    """
    m = _GPU_BUS_ID.fullmatch(bus_id.strip())
    return m.group(1).lower() if m else bus_id.strip().lower()


@text_parser("nvidia-smi CSV lines 'index, bus id, name, driver, vbios'")
def parse_nvidia_smi_query(text: str, ctx: ParseContext) -> StateBody:
    """``nvidia-smi --query-gpu=index,pci.bus_id,name,driver_version,vbios_version --format=csv,noheader``.

    Feeds ``host.gpus.N.{pci_address, name, vbios}`` and ``host.gpu_driver`` (the driver version, the
    same on every GPU of a host; a host whose GPUs disagree keeps the versions joined with ``/``).
    """
    gpus: dict[str, Any] = {}
    drivers: list[str] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        fields = [f.strip() for f in line.split(",")]
        if len(fields) != 5 or not fields[0].isdigit() or not _GPU_BUS_ID.fullmatch(fields[1]):
            raise ctx.reject(f"line {line.strip()[:60]!r}")
        index, bus, name, driver, vbios = fields
        gpus[str(int(index))] = {"pci_address": pci_address(bus), "name": name, "vbios": vbios}
        if driver not in drivers:
            drivers.append(driver)
    if not gpus:
        raise ctx.reject("no GPU line")
    return {"host": {"gpus": gpus, "gpu_driver": "/".join(drivers)}}


#: The connection words of ``nvidia-smi topo -m`` (its legend): X (self), PIX, PXB, PHB, NODE, SYS, NV<n>.
_TOPO_WORD = re.compile(r"X|PIX|PXB|PHB|NODE|SYS|NV\d{1,3}")


@text_parser("nvidia-smi topo -m matrix (header GPU0 ... with GPUn rows)")
def parse_nvidia_smi_topo(text: str, ctx: ParseContext) -> StateBody:
    """``nvidia-smi topo -m``: each GPU's PCIe path to every RDMA NIC, and its NUMA affinity.

    Feeds ``host.gpus.N.nic_paths`` (RDMA device -> ``PIX``/``PXB``/``PHB``/``NODE``/``SYS``) and
    ``host.gpus.N.numa_node``. NIC columns are named ``NICk`` with a ``NIC Legend`` (``NICk: mlx5_k``)
    in current drivers and by the RDMA device itself in older ones. The matrix is tab-separated; a
    copy whose tabs became spaces is read too (columns split on tabs or runs of spaces).
    """
    lines = text.splitlines()
    legend: dict[str, str] = {
        str(m[1]): str(m[2]) for m in re.finditer(r"^\s*(NIC\d+):\s*(\S+)\s*$", text, re.MULTILINE)
    }
    header_at = next((i for i, ln in enumerate(lines) if re.match(r"^\s+GPU0\b", ln)), None)
    if header_at is None:
        raise ctx.reject("no header row starting with GPU0")

    def cells(line: str) -> list[str]:
        return [c.strip() for c in re.split(r"\t| {2,}", line.strip())] if "\t" in line else line.split()

    header = [c for c in re.split(r"\t| {2,}", lines[header_at].strip()) if c.strip()]
    header = [c.strip() for c in header]
    gpus: dict[str, Any] = {}
    for line in lines[header_at + 1 :]:
        row = cells(line)
        if not row or not re.fullmatch(r"GPU\d+", row[0]):
            continue
        values = row[1:]
        gpu: dict[str, Any] = {}
        paths: dict[str, str] = {}
        for name, value in zip(header, values, strict=False):
            if name == "NUMA Affinity":
                if re.fullmatch(r"\d+", value):
                    gpu["numa_node"] = int(value)
                continue
            if name in ("CPU Affinity", "GPU NUMA ID") or re.fullmatch(r"GPU\d+", name):
                continue
            if not _TOPO_WORD.fullmatch(value):
                raise ctx.reject(f"{row[0]} {name}: {value[:20]!r} is not a topo -m connection word")
            paths[legend.get(name, name)] = value
        gpu["nic_paths"] = paths
        gpus[row[0][3:]] = gpu
    if not gpus:
        raise ctx.reject("no GPUn row")
    return {"host": {"gpus": gpus}}


#: The unit the NVIDIA Fabric Manager package installs.
FABRIC_MANAGER_COMMAND = "systemctl show --property=LoadState,ActiveState,SubState nvidia-fabricmanager"
_UNIT_PROPERTY = re.compile(r"(LoadState|ActiveState|SubState)=([a-z-]*)")


@text_parser("systemctl show lines (LoadState=..., ActiveState=...)")
def parse_fabric_manager(text: str, ctx: ParseContext) -> StateBody:
    """``systemctl show --property=LoadState,ActiveState,SubState nvidia-fabricmanager``: ``host.fabric_manager``.

    NVSwitch systems (HGX/DGX H100, A100 SXM) need NVIDIA Fabric Manager running before their GPUs
    join the NVLink fabric. ``systemctl show`` prints ``KEY=value`` lines (in its own order) and
    needs no root; ``host.fabric_manager`` is the unit's ``ActiveState`` (``active``, ``inactive``,
    ``failed``, ...), or ``not-found`` when the unit is not installed (``LoadState=not-found``).
    """
    values: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        m = _UNIT_PROPERTY.fullmatch(line.strip())
        if not m:
            raise ctx.reject(f"line {line.strip()[:60]!r}")
        values[m[1]] = m[2]
    if "ActiveState" not in values or "LoadState" not in values:
        raise ctx.reject("no LoadState and ActiveState lines")
    state = "not-found" if values["LoadState"] == "not-found" else values["ActiveState"]
    return {"host": {"fabric_manager": state}}


#: systemctl's words where systemd is not PID 1 (a container, a host booted with another init): the
#: unit cannot be asked about, so the command is ``unavailable`` there, not a failure of the host.
NO_SYSTEMD = ("has not been booted with systemd", "Failed to connect to bus")

#: ``nvidia-smi`` alone: the summary table whose header names the driver and the CUDA version it
#: supports (``--query-gpu`` has no CUDA field).
NVIDIA_SMI_SUMMARY = "nvidia-smi"
_CUDA_VERSION = re.compile(r"CUDA Version:\s*(\d+\.\d+|N/A)")


@text_parser("nvidia-smi summary table (header 'NVIDIA-SMI ... CUDA Version: X.Y')", may_be_empty=True)
def parse_nvidia_smi_summary(text: str, ctx: ParseContext) -> StateBody:
    """``nvidia-smi``: ``host.cuda_version``, the CUDA version of the driver (its header line).

    The header reads ``| NVIDIA-SMI 565.57.01  Driver Version: 565.57.01  CUDA Version: 12.7 |``:
    the highest CUDA version the installed driver supports (the driver's ``libcuda``), which is what
    a fleet pins with the driver; ``N/A`` (no CUDA driver library) records nothing.
    """
    head = next((ln for ln in text.splitlines() if "NVIDIA-SMI" in ln), None)
    if head is None:
        raise ctx.reject("no 'NVIDIA-SMI' header line")
    cuda = _CUDA_VERSION.search(head)
    if cuda is None:
        raise ctx.reject(f"no 'CUDA Version:' on the header line {head.strip()[:80]!r}")
    return {"host": {"cuda_version": cuda[1]} if cuda[1] != "N/A" else {}}


# --- reads that need root (sudo -n, only where the inventory enables it) ------------------------

#: NVIDIA firmware tools (MFT/mstflint) ``mlxconfig ... query``: the device's firmware configuration.
MLXCONFIG_COMMAND = "sudo -n mlxconfig -d {rdma_device} query"
#: The firmware's RoCE congestion-control parameters (DCQCN reaction/notification point, CNP
#: marking, the per-priority CC mask, RTT response DSCP), per port (``_P1``, ``_P2``), as mlxconfig
#: names them (NVIDIA "DCQCN CC Parameters"; the sysfs ``ecn/roce_*`` files are the running values).
_CC_PARAM = re.compile(
    r"(?:ROCE_CC_\w+|CLAMP_TGT_RATE\w*|RPG_\w+|RATE_TO_SET_ON_FIRST_CNP|DCE_TCP_\w+|RATE_REDUCE_MONITOR_PERIOD"
    r"|INITIAL_ALPHA_VALUE|MIN_TIME_BETWEEN_CNPS|CNP_802P_PRIO|CNP_DSCP|ROCE_RTT_RESP_DSCP\w*)_P\d"
)
_MLXCONFIG_ROW = re.compile(r"^\*?\s+([A-Z][A-Z0-9_]+)\s+(\S.*?)\s*$")


@text_parser("mlxconfig query ('Device #1:' ... 'Configurations: ... Next Boot' rows)", may_be_empty=True)
def parse_mlxconfig_query(text: str, ctx: ParseContext) -> StateBody:
    """``sudo -n mlxconfig -d DEV query``: ``host.rdma_devices.DEV.cc_config`` (congestion-control firmware settings).

    Rows under ``Configurations:`` are ``NAME value`` (one ``Next Boot`` column; with ``-e`` the last
    of ``Default Current Next Boot``, a ``*`` first where it differs from the default); the value is
    kept as printed (``5``, ``True(1)``). Only the RoCE congestion-control parameters are kept: they
    are what one host must not set differently from the rest of the fleet.
    """
    device = ctx.params.get("rdma_device")
    if not device:
        raise ctx.reject("the command names no RDMA device")
    head = re.search(r"^Configurations:.*Next Boot", text, re.MULTILINE)
    if not re.search(r"^Device #\d+:", text, re.MULTILINE) or head is None:
        raise ctx.reject("no 'Device #N:' and 'Configurations: ... Next Boot' header")
    cc: dict[str, str] = {}
    for line in text[head.end() :].splitlines():
        m = _MLXCONFIG_ROW.match(line)
        if m and _CC_PARAM.fullmatch(m[1]):
            cc[m[1]] = m[2].split()[-1]
    return {"host": {"rdma_devices": {device: {"cc_config": dict(sorted(cc.items()))}}}}


#: ``lspci -vvv`` as root: the ACS control register of every PCIe bridge is in extended config space,
#: which lspci prints only to root (``Capabilities: <access denied>`` otherwise).
LSPCI_COMMAND = "sudo -n lspci -vvv"
_PCI_DEVICE = re.compile(
    r"^(?:(?P<domain>[0-9a-f]{4,8}):)?(?P<bus>[0-9a-f]{2}):(?P<dev>[0-1][0-9a-f])\.(?P<fn>[0-7]) (?P<what>.+)$"
)
_PCI_BUS = re.compile(r"^\s+Bus: primary=[0-9a-f]{2}, secondary=([0-9a-f]{2}), subordinate=([0-9a-f]{2})")
_ACS_CTL = re.compile(r"^\s+ACSCtl:\s*(.*)$")


@text_parser("lspci -vvv device blocks ('BB:DD.F description' lines)", may_be_empty=True)
def parse_lspci_vvv(text: str, ctx: ParseContext) -> StateBody:
    """``sudo -n lspci -vvv``: ``host.pcie_bridges``, every PCIe bridge with its bus range and ACS control.

    Per bridge (``0000:17:01.0``; lspci leaves the domain out when every device is in domain 0):
    ``secondary``/``subordinate`` (the bus numbers below it, so a device at bus B is behind it when
    secondary <= B <= subordinate), ``name`` (lspci's description), ``acs_ctl`` (the ACS control bits
    set: ``SrcValid``, ``ReqRedir``, ``CmpltRedir``, ...; ``[]`` when ACS is implemented and off;
    absent when the bridge has no ACS capability) and ``config_readable: false`` when lspci could not
    read the extended configuration space (``<access denied>``: not run as root).
    """
    bridges: dict[str, dict[str, Any]] = {}
    seen = False
    current: dict[str, Any] | None = None
    for line in text.splitlines():
        head = _PCI_DEVICE.match(line)
        if head:
            seen = True
            address = f"{(head['domain'] or '0000')[-4:]}:{head['bus']}:{head['dev']}.{head['fn']}"
            current = {"address": address, "name": re.sub(r"\s*\(prog-if .*$", "", head["what"])[:120]}
            continue
        if current is None:
            continue
        bus = _PCI_BUS.match(line)
        if bus:
            bridge = {"secondary": int(bus[1], 16), "subordinate": int(bus[2], 16), "name": current["name"]}
            bridges[current["address"]] = current["entry"] = bridge
            continue
        entry: dict[str, Any] | None = current.get("entry")
        if entry is None:
            continue
        acs = _ACS_CTL.match(line)
        if acs:
            entry["acs_ctl"] = [w[:-1] for w in acs[1].split() if w.endswith("+")]
        elif "<access denied>" in line:
            entry["config_readable"] = False
    if not seen:
        raise ctx.reject("no 'BB:DD.F description' device line")
    return {"host": {"pcie_bridges": cast(dict[str, PcieBridge], dict(sorted(bridges.items())))}}


#: ``dmidecode --type bios`` (root: it reads the SMBIOS table): the BIOS Information record.
DMIDECODE_COMMAND = "sudo -n dmidecode --type bios"
#: dmidecode's words on a machine without SMBIOS/DMI tables (a VM, some ARM boards): not present.
NO_DMI = ("/dev/mem: No such file or directory", "No SMBIOS nor DMI entry point found")
_BIOS_VERSION = re.compile(
    r"^BIOS Information[ \t]*\n(?:[ \t]+.*\n)*?[ \t]+Version:[ \t]*(.*?)[ \t]*$", re.MULTILINE
)


@text_parser("dmidecode records ('Handle 0x..., DMI type 0' then 'BIOS Information')")
def parse_dmidecode_bios(text: str, ctx: ParseContext) -> StateBody:
    """``sudo -n dmidecode --type bios``: ``facts.bios_version``, the ``Version:`` of the BIOS Information record.

    SMBIOS type 0, the same string as ``/sys/class/dmi/id/bios_version`` (the host sysfs read), for
    kernels that do not export the DMI id files. A full ``dmidecode`` dump is read the same way. An
    answer of ``#`` notes only is dmidecode saying there is no SMBIOS table (unavailable).
    """
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if (
        lines
        and all(ln.startswith("#") for ln in lines)
        and any("SMBIOS" in ln or "DMI" in ln for ln in lines)
    ):
        raise CommandUnavailable(ctx.platform, ctx.command, ctx.expected, f"device said {lines[-1][:80]!r}")
    if not re.search(r"^Handle 0x[0-9A-Fa-f]{4}, DMI type 0,", text, re.MULTILINE):
        raise ctx.reject("no 'Handle 0x...., DMI type 0' record")
    m = _BIOS_VERSION.search(text if text.endswith("\n") else text + "\n")
    if m is None or not m[1]:
        raise ctx.reject("no 'Version:' in the BIOS Information record")
    return {"facts": {"bios_version": m[1][:64]}}


# --- facts -------------------------------------------------------------------------------------

#: A hostname as the kernel keeps it (RFC 1123 labels, dots allowed; at most 64 characters).
_HOSTNAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9.-]{0,62}[A-Za-z0-9])?")
#: A kernel release as ``uname -r`` prints it: ``5.15.0-105-generic``, ``6.8.0-1008-nvidia``.
_KERNEL_RELEASE = re.compile(r"\d+\.\d+[0-9A-Za-z.+_~-]*")


def _one_value(text: str, ctx: ParseContext, pattern: re.Pattern[str], what: str) -> str:
    """The one non-blank line of a checked text, which must match ``pattern`` whole."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if len(lines) != 1:
        raise ctx.reject(f"{len(lines)} lines")
    if not pattern.fullmatch(lines[0]):
        raise ctx.reject(f"{lines[0][:60]!r} is not {what}")
    return lines[0]


@text_parser("one hostname line")
def parse_kernel_hostname(text: str, ctx: ParseContext) -> StateBody:
    """``cat /proc/sys/kernel/hostname``: ``facts.hostname``, the name the running kernel has."""
    name = _one_value(text, ctx, _HOSTNAME, "a hostname")
    if name.isdigit():
        raise ctx.reject(f"{name!r} is a number")
    if _KERNEL_RELEASE.fullmatch(name) and re.match(r"\d+\.\d+(?:\.\d+|[-+~])", name):
        # A legal label, but what 'uname -r' prints: the wrong command's output.
        raise ctx.reject(f"{name!r} is a kernel release")
    return {"facts": {"hostname": name}}


@text_parser("one kernel release line (e.g. 5.15.0-105-generic)")
def parse_uname_r(text: str, ctx: ParseContext) -> StateBody:
    """``uname -r``: ``facts.kernel``, the kernel release (the inbox NIC driver goes with it)."""
    return {"facts": {"kernel": _one_value(text, ctx, _KERNEL_RELEASE, "a kernel release")}}


@text_parser("os-release KEY=value lines with NAME or PRETTY_NAME")
def parse_os_release(text: str, ctx: ParseContext) -> StateBody:
    """``cat /etc/os-release``: ``facts.os_version``, the distribution's ``PRETTY_NAME``.

    os-release(5): shell-compatible ``KEY=value`` lines, values optionally quoted, ``#`` comments.
    Without ``PRETTY_NAME`` the name is ``NAME VERSION`` (then ``NAME VERSION_ID``), as the
    format's own fallbacks say.
    """
    values: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = re.fullmatch(r"([A-Z][A-Z0-9_]*)=(.*)", line)
        if not m:
            raise ctx.reject(f"line {line[:60]!r} is not KEY=value")
        value = m.group(2).strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        values[m.group(1)] = value
    name = values.get("PRETTY_NAME") or " ".join(
        v for v in (values.get("NAME"), values.get("VERSION") or values.get("VERSION_ID")) if v
    )
    if not name:
        raise ctx.reject("neither PRETTY_NAME nor NAME")
    return {"facts": {"os_version": name}}


# --- merge helper -------------------------------------------------------------------------------


#: ``host.rdma_devices.DEV`` field -> the ``nic`` field it becomes on the device's netdev.
_RDMA_TO_NIC = {"roce_tos": "roce_tos", "active_mtu": "roce_active_mtu"}


def attach_rdma_devices(state: dict[str, Any]) -> dict[str, Any]:
    """Copy ``host.rdma_devices`` values onto the interfaces whose ``nic.rdma_device`` is them.

    ``roce_tos`` (the RDMA-CM ToS) and ``active_mtu`` (as ``roce_active_mtu``, the RoCE path MTU of
    the device's port) are per RDMA device; a rail check reads them on the netdev.

    Example:
        >>> s = {"host": {"rdma_devices": {"mlx5_0": {"roce_tos": 106, "active_mtu": 4096}}},
        ...      "interfaces": {"eth2": {"nic": {"rdma_device": "mlx5_0"}}}}
        >>> attach_rdma_devices(s)["interfaces"]["eth2"]["nic"]
        {'rdma_device': 'mlx5_0', 'roce_tos': 106, 'roce_active_mtu': 4096}
    """
    devices = (state.get("host") or {}).get("rdma_devices") or {}
    for body in (state.get("interfaces") or {}).values():
        nic = body.get("nic") if isinstance(body, dict) else None
        if not isinstance(nic, dict) or nic.get("rdma_device") not in devices:
            continue
        info = devices[nic["rdma_device"]]
        for source, target in _RDMA_TO_NIC.items():
            if source in info and target not in nic:
                nic[target] = info[source]
    return state


COMMANDS: tuple[Command, ...] = (
    Command(
        "ip -j -d link show",
        parse_ip_j_d_link_show,
        "interfaces.*.{admin_up,oper_up,mtu (L3),description,nic.pci_address}",
    ),
    Command("ip link show", parse_ip_link_show, "interfaces.*.{admin_up,oper_up,mtu (L3),description}"),
    Command("ip address show", parse_ip_link_show, "interfaces.*.{admin_up,oper_up,mtu (L3),description}"),
    Command("ethtool {interface}", parse_ethtool, "interfaces.IF.{speed_gbps,autoneg,oper_up}"),
    Command(
        "ethtool -i {interface}",
        parse_ethtool_i,
        "interfaces.IF.nic.{driver,driver_version,firmware,psid,pci_address}",
    ),
    Command("ethtool --show-fec {interface}", parse_ethtool_show_fec, "interfaces.IF.{fec,fec_configured}"),
    Command(
        "ethtool -I --show-fec {interface}",
        parse_ethtool_show_fec,
        "interfaces.IF.{fec,fec_configured,counters.fec_corrected,counters.fec_uncorrectable}",
    ),
    Command(
        "ethtool -m {interface}",
        parse_ethtool_m,
        "interfaces.IF.optics.{vendor,part_number,serial,type,temperature_c,rx_power_dbm,tx_power_dbm}",
    ),
    Command(
        "ethtool -S {interface}",
        parse_ethtool_s,
        "interfaces.IF.counters.{pfc_rx_pause,pfc_tx_pause,fec_corrected,fec_uncorrectable,"
        "fec_corrected_bits,crc_errors}",
    ),
    Command(
        "grep -H . /sys/class/net/{interface}/device/infiniband/*/ports/1/hw_counters/*",
        parse_rdma_hw_counters,
        "interfaces.IF.counters.{cnp_sent,cnp_handled,ecn_marked,roce_*}; interfaces.IF.nic.rdma_device",
        kind="file",
    ),
    Command(
        "grep -H . /sys/class/net/*/device/infiniband/*/ports/*/hw_counters/*",
        parse_rdma_hw_counters,
        "interfaces.*.counters.{cnp_sent,cnp_handled,ecn_marked,roce_out_of_sequence,roce_packet_seq_err,"
        "roce_local_ack_timeout_err,roce_out_of_buffer,...}; interfaces.*.nic.rdma_device",
        kind="file",
    ),
    Command(
        "mlnx_qos -i {interface}",
        parse_mlnx_qos,
        "interfaces.IF.{trust,dscp_to_priority,pfc_priorities,priority_to_tc,dcbx_mode,cable_length_m}",
    ),
    Command("dcb pfc show dev {interface}", parse_dcb_pfc_show, "interfaces.IF.pfc_priorities"),
    Command("dcb app show dev {interface}", parse_dcb_app_show, "interfaces.IF.{dscp_to_priority,trust}"),
    Command(
        "cat /sys/kernel/config/rdma_cm/{rdma_device}/ports/1/default_roce_tos",
        parse_roce_tos,
        "host.rdma_devices.DEV.roce_tos (-> interfaces.IF.nic.roce_tos via attach_rdma_devices)",
        kind="file",
    ),
    Command(
        "grep -H . /sys/class/net/{interface}/ecn/roce_*/enable/*",
        parse_ecn_enable,
        "interfaces.IF.nic.{ecn_np_priorities,ecn_rp_priorities}",
        kind="file",
    ),
    Command(
        "grep -H . /sys/class/net/*/carrier_changes",
        parse_carrier_changes,
        "interfaces.*.counters.link_flaps",
        kind="file",
    ),
    Command(
        "ibv_devinfo",
        parse_ibv_devinfo,
        "host.rdma_devices.DEV.{firmware,board_id,node_guid,port_state,link_layer,active_mtu,max_mtu}",
    ),
    Command("show_gids", parse_show_gids, "interfaces.IF.nic.{rdma_device,gids}"),
    Command(
        "lldpctl -f json",
        parse_lldpctl_json,
        "interfaces.*.lldp.{device,port,port_id,port_description,chassis_id}",
    ),
    Command("lsmod", parse_lsmod, "host.{kernel_modules,gpudirect_rdma}"),
    Command("cat /etc/nccl.conf", parse_nccl_conf, "host.nccl_env", kind="file"),
    Command(NCCL_ENV_FILE_COMMAND, parse_nccl_env_file, "host.{nccl_env,nccl_sources}", kind="file"),
    Command("cat /proc/sys/kernel/hostname", parse_kernel_hostname, "facts.hostname", kind="file"),
    Command("cat /etc/os-release", parse_os_release, "facts.os_version", kind="file"),
    Command("uname -r", parse_uname_r, "facts.kernel"),
    Command(NVIDIA_SMI_QUERY, parse_nvidia_smi_query, "host.{gpus.N.{pci_address,name,vbios},gpu_driver}"),
    Command("nvidia-smi topo -m", parse_nvidia_smi_topo, "host.gpus.N.{nic_paths,numa_node}"),
    Command(FABRIC_MANAGER_COMMAND, parse_fabric_manager, "host.fabric_manager", unavailable=NO_SYSTEMD),
    Command(NVIDIA_SMI_SUMMARY, parse_nvidia_smi_summary, "host.cuda_version"),
    Command(
        MLXCONFIG_COMMAND,
        parse_mlxconfig_query,
        "host.rdma_devices.DEV.cc_config",
        only_source_of=("host.rdma_devices.*.cc_config",),
    ),
    Command(
        LSPCI_COMMAND,
        parse_lspci_vvv,
        "host.pcie_bridges.ADDR.{secondary,subordinate,name,acs_ctl,config_readable}",
        only_source_of=("host.pcie_bridges",),
    ),
    Command(DMIDECODE_COMMAND, parse_dmidecode_bios, "facts.bios_version", unavailable=NO_DMI),
    Command(
        HOST_SYSFS_COMMAND,
        parse_host_sysfs,
        "interfaces.*.nic.{pcie,numa_node,iommu_domain,cnp_dscp,cnp_802p_prio,dcqcn}; host.iommu_params; "
        "facts.bios_version",
        kind="file",
    ),
)

# --- what a collection of a healthy device adds to a synthetic state (PlatformSpec.synthetic_extras)

#: What a collection adds to the synthetic state of a GPU server's rail NIC (the linux profile:
#: ethtool -S / --show-fec / --show-module, mlnx_qos, lldpctl, the RDMA hw_counters, ibv_devinfo).
_LINUX_PORT: dict[str, Any] = {
    "fec_configured": ["rs"],
    "dcbx_mode": "OS controlled",
    "cable_length_m": 7,
    "priority_to_tc": {"0": 1, "1": 0, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7},
    "frame_bytes": 9018,
    "frame_bytes_tagged": 9022,
}
#: The mlx5 RDMA port's error counters (hw_counters), all 0 on a healthy NIC.
ROCE_ERROR_COUNTERS = (
    "roce_duplicate_request", "roce_implied_nak_seq_err", "roce_local_ack_timeout_err", "roce_out_of_buffer",
    "roce_out_of_sequence", "roce_packet_seq_err", "roce_rnr_nak_retry_err", "roce_adp_retrans",
    "roce_adp_retrans_to", "rx_discards_phy", "rx_out_of_buffer",
)  # fmt: skip
_HOST_MODULES = [
    "ib_core", "ib_uverbs", "mlx5_core", "mlx5_ib", "nvidia", "nvidia_drm", "nvidia_modeset", "nvidia_peermem",
    "nvidia_uvm",
]  # fmt: skip


def synthetic_extras(doc: dict[str, Any]) -> None:
    """What a collection of a healthy GPU server adds to its synthetic state (:func:`fabline.synthetic.as_collected`)."""
    fill_missing(doc.setdefault("facts", {}), {"kernel": "5.15.0-105-generic"})
    host = doc.setdefault("host", {})
    fill_missing(host, {"kernel_modules": _HOST_MODULES})
    devices: dict[str, Any] = {}
    for body in doc.get("interfaces", {}).values():
        nic = body.get("nic")
        if not isinstance(nic, dict):
            continue
        rdma = nic.get("rdma_device")
        n = int(str(rdma).rpartition("_")[2]) if str(rdma).rpartition("_")[2].isdigit() else 0
        fill_missing(nic, {"pci_address": f"0000:{0x1A + n * 0x10:02x}:00.0", "psid": "MT_0000000838"})
        if rdma is not None:
            devices[str(rdma)] = {
                "firmware": nic.get("firmware"), "node_guid": f"a088:c203:{n:04x}:1dba",
                "board_id": nic.get("psid"), "port_state": "PORT_ACTIVE" if body.get("oper_up") else "PORT_DOWN",
                "max_mtu": 4096, "active_mtu": nic.get("roce_active_mtu"), "link_layer": "Ethernet",
                "roce_tos": nic.get("roce_tos"),
            }  # fmt: skip
        if not body.get("oper_up"):
            continue
        fill_missing(body, _LINUX_PORT)
        lldp = body.get("lldp")
        if isinstance(lldp, dict):
            lldp.setdefault("port_description", lldp.get("port"))
            lldp.setdefault("chassis_id", "1c:34:da:5e:00:00")
        optics = body.get("optics")
        if isinstance(optics, dict):
            optics.setdefault("type", "400GBASE-DR4 (Cl 124)")
        counters = body.get("counters")
        if isinstance(counters, dict):
            for key in ("pfc_rx_pause", "pfc_tx_pause", "rx_prio_discards"):
                fill_priorities(counters, key)
            for key in ROCE_ERROR_COUNTERS:
                counters.setdefault(key, 0)
            counters.setdefault("fec_corrected_bits", 8 * int(counters.get("fec_corrected", 0)))
            counters.setdefault("link_flaps", 1)
    fill_missing(host, {"rdma_devices": devices})


PLATFORM = PlatformSpec(
    id=Platform.LINUX,
    description="Linux GPU hosts with NVIDIA ConnectX NICs",
    kind="host",
    commands=COMMANDS,
    run=RunPlan(
        platform=Platform.LINUX,
        transport="exec",
        device_type=None,
        device_commands=(
            "cat /proc/sys/kernel/hostname",
            "cat /etc/os-release",
            "uname -r",
            "ip -j -d link show",
            "show_gids",
            "lldpctl -f json",
            "lsmod",
            "cat /etc/nccl.conf",
            "ibv_devinfo",
            # Every netdev's RDMA hw_counters in one read (CNP/ECN and the RoCE transport errors);
            # the paths also name each netdev's RDMA device.
            "grep -H . /sys/class/net/*/device/infiniband/*/ports/*/hw_counters/*",
            # Link flaps of every netdev in one read.
            "grep -H . /sys/class/net/*/carrier_changes",
            HOST_SYSFS_COMMAND,
            NVIDIA_SMI_QUERY,
            "nvidia-smi topo -m",
            FABRIC_MANAGER_COMMAND,
            NVIDIA_SMI_SUMMARY,
            # Root-only reads: sent with sudo -n where the inventory sets fabline_sudo, else
            # recorded 'unavailable' without being sent.
            LSPCI_COMMAND,
            DMIDECODE_COMMAND,
        ),
        interface_commands=(
            "ethtool {interface}",
            "ethtool -i {interface}",
            "ethtool -I --show-fec {interface}",
            "ethtool -m {interface}",
            "ethtool -S {interface}",
            "mlnx_qos -i {interface}",
            "grep -H . /sys/class/net/{interface}/ecn/roce_*/enable/*",
        ),
        rdma_commands=(
            "cat /sys/kernel/config/rdma_cm/{rdma_device}/ports/1/default_roce_tos",
            MLXCONFIG_COMMAND,
        ),
        rdma_sources=("show_gids", "grep -H . /sys/class/net/*/device/infiniband/*/ports/*/hw_counters/*"),
        rdma_listing=("ibv_devinfo",),
        # Without rail_interfaces: the RDMA netdevs (show_gids reads sysfs), else every physical
        # netdev (ip -d link shows a PCI parent).
        interface_sources=(
            InterfaceSource("show_gids", "rdma_device", "RDMA netdevs (show_gids)"),
            InterfaceSource("ip -j -d link show", "pci_address", "physical netdevs (ip -d link)"),
        ),
        var_commands=(("nccl_env_files", NCCL_ENV_FILE_COMMAND),),
        finalize=attach_rdma_devices,
    ),
    network_os=("linux",),
    port_name=lambda index: f"eth{index}",
    # The kernel's MTU is the L3 MTU (9000 on a RoCE fabric).
    mtu=MtuSemantics(MtuKind.L3, fabric_mtu=9000),
    vocabulary=VOCABULARY,
    os_version="Ubuntu 22.04.4 LTS",
    root_commands=frozenset(
        {
            MLXCONFIG_COMMAND,  # firmware congestion-control settings
            LSPCI_COMMAND,  # ACS control of the PCIe bridges (extended config space)
            DMIDECODE_COMMAND,  # the BIOS version from SMBIOS
        }
    ),
    synthetic_extras=synthetic_extras,
    remediation="fabline.remediate.linux:REMEDIATION",
)
