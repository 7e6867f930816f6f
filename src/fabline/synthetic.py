"""Synthetic rail-optimized fabrics in state schema v1, for the bundled example, tests and benchmarks.

A :class:`Fabric` is the shape the checks reason about: GPU servers with one NIC per rail, each
NIC cabled to a leaf of its rail, every leaf cabled to every spine of its plane. :func:`states`
turns it into clean device states (they pass the default baseline); a list of :class:`Fault`
plants the mistakes a real fabric has. Nothing here is device output: these are *states*, the
normalized form parsers produce.
"""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from fabline.collect.writer import state_bytes
from fabline.platforms.spec import PLATFORMS, host_platform
from fabline.platforms.synthetic_fill import roce_dscp_map
from fabline.state import SCHEMA_ID
from fabline.state_types import Gid, Interface, Pcie

NIC_FIRMWARE = "28.39.1002"


def port_name(platform: str, index: int) -> str:
    """Canonical name of front-panel port ``index`` (0-based) on a platform (its spec's naming).

    Example:
        >>> [port_name(p, 2) for p in ("sonic", "cumulus", "arista_eos", "cisco_nxos", "linux")]
        ['Ethernet16', 'swp3', 'Ethernet3/1', 'Ethernet1/3', 'eth2']
    """
    return PLATFORMS[platform].port_name(index)


@dataclass
class DeviceSpec:
    """One device of a synthetic fabric."""

    name: str
    role: str
    platform: str
    rail: int | None = None
    plane: int = 0
    ports: int = 0
    rail_interfaces: list[str] = field(default_factory=list)


@dataclass
class Fabric:
    """Devices and links (``(device, port, peer, peer_port)``, each link listed once)."""

    devices: list[DeviceSpec]
    links: list[tuple[str, str, str, str]]
    #: Spines belong to one plane each (:func:`plane_fabric`): the inventory gives them ``plane`` too.
    spine_planes: bool = False

    def peers(self) -> dict[tuple[str, str], tuple[str, str]]:
        """Both directions of every link: (device, port) -> (peer, peer port)."""
        out = {}
        for a, ap, b, bp in self.links:
            out[(a, ap)] = (b, bp)
            out[(b, bp)] = (a, ap)
        return out


@dataclass(frozen=True)
class Fault:
    """A planted deviation: set ``path`` (dotted, under the interface when given) to ``value``."""

    device: str
    path: str
    value: Any
    interface: str | None = None
    note: str = ""


def rail_fabric(
    gpus: int,
    *,
    gpus_per_server: int = 8,
    radix: int = 64,
    leaf_platforms: Sequence[str] = ("sonic",),
    spine_platforms: Sequence[str] = ("sonic",),
) -> Fabric:
    """A rail-optimized two-tier fabric for ``gpus`` GPUs (one rail per GPU of a server).

    Each leaf has ``radix/2`` host ports and ``radix/2`` uplinks (1:1); leaves of all rails share
    one spine layer of ``radix/2`` spines, each leaf with one link to every spine. (Sizing limits
    are the design command's business; benchmarks only need the shape and the volume.)
    """
    servers = math.ceil(gpus / gpus_per_server)
    down = radix // 2
    leaves_per_rail = math.ceil(servers / down)
    n_leaves = leaves_per_rail * gpus_per_server
    # Enough spine ports for every uplink; a leaf spreads its uplinks evenly over the spines.
    n_spines = max(1, min(down, math.ceil(n_leaves * down / radix)))
    per_pair = max(1, down // n_spines)
    links: list[tuple[str, str, str, str]] = []
    spines = [
        DeviceSpec(f"spine-{s:03d}", "spine", spine_platforms[s % len(spine_platforms)])
        for s in range(n_spines)
    ]
    host_ifaces = [port_name(host_platform(), r) for r in range(gpus_per_server)]
    hosts = [
        DeviceSpec(
            f"gpu-{h:05d}", "host", host_platform(), ports=gpus_per_server, rail_interfaces=list(host_ifaces)
        )
        for h in range(servers)
    ]
    leaves = []
    for rail in range(gpus_per_server):
        for k in range(leaves_per_rail):
            idx = rail * leaves_per_rail + k
            leaf = DeviceSpec(
                f"leaf-r{rail}-{k:03d}",
                "leaf",
                leaf_platforms[idx % len(leaf_platforms)],
                rail=rail,
                ports=radix,
            )
            leaves.append(leaf)
            for p, host in enumerate(hosts[k * down : (k + 1) * down]):
                links.append((host.name, host_ifaces[rail], leaf.name, port_name(leaf.platform, p)))
            uplink = down
            for spine in spines:
                for _ in range(per_pair):
                    links.append(
                        (
                            leaf.name,
                            port_name(leaf.platform, uplink),
                            spine.name,
                            port_name(spine.platform, spine.ports),
                        )
                    )
                    uplink += 1
                    spine.ports += 1
    devices = [*spines, *leaves, *hosts]
    return Fabric(devices, links)


def plane_fabric(
    servers: int,
    *,
    rails: int = 8,
    planes_per_rail: int = 2,
    radix: int = 128,
    leaf_platforms: Sequence[str] = ("sonic",),
    spine_platforms: Sequence[str] = ("sonic",),
) -> Fabric:
    """A buildable rail-optimized two-tier Clos: every rail split into planes, each its own leaf-spine pod.

    ``servers`` hosts with one NIC per rail; the servers are split into ``planes_per_rail``
    equal groups, and rail *r* of group *g* is plane ``r * planes_per_rail + g``. Each plane has
    ``ceil(group / (radix/2))`` leaves (``radix/2`` host ports, ``radix/2`` uplinks) and ``radix/2``
    spines of ``radix`` ports; every leaf has exactly one link to every spine of its plane (1:1).
    12,500 servers at the defaults is the 100k-GPU fabric of issue 14: 16 planes of 98 leaves
    and 64 spines, 15,092 devices.

    Raises:
        ValueError: A plane needs more leaves than a spine has ports (not buildable in two tiers).

    Example:
        >>> f = plane_fabric(8, rails=2, planes_per_rail=2, radix=4)
        >>> sorted({(d.role, d.plane) for d in f.devices if d.role != "host"})[:3]
        [('leaf', 0), ('leaf', 1), ('leaf', 2)]
        >>> len([d for d in f.devices if d.role == "spine"]), len(f.links)
        (8, 32)
    """
    down = radix // 2
    group = math.ceil(servers / planes_per_rail)
    per_plane = math.ceil(group / down)
    if per_plane > radix:
        raise ValueError(f"{per_plane} leaves per plane exceed the {radix}-port spines: not a two-tier Clos")
    host_ifaces = [port_name(host_platform(), r) for r in range(rails)]
    hosts = [
        DeviceSpec(f"gpu-{h:05d}", "host", host_platform(), ports=rails, rail_interfaces=list(host_ifaces))
        for h in range(servers)
    ]
    leaves: list[DeviceSpec] = []
    spines: list[DeviceSpec] = []
    links: list[tuple[str, str, str, str]] = []
    for rail in range(rails):
        for g in range(planes_per_rail):
            plane = rail * planes_per_rail + g
            members = hosts[g * group : (g + 1) * group]
            plane_spines = [
                DeviceSpec(
                    f"spine-p{plane:02d}-{s:03d}",
                    "spine",
                    spine_platforms[(plane * down + s) % len(spine_platforms)],
                    plane=plane,
                    ports=radix,
                )
                for s in range(down)
            ]
            spines.extend(plane_spines)
            for k in range(per_plane):
                idx = plane * per_plane + k
                leaf = DeviceSpec(
                    f"leaf-p{plane:02d}-{k:03d}",
                    "leaf",
                    leaf_platforms[idx % len(leaf_platforms)],
                    rail=rail,
                    plane=plane,
                    ports=radix,
                )
                leaves.append(leaf)
                for p, host in enumerate(members[k * down : (k + 1) * down]):
                    links.append((host.name, host_ifaces[rail], leaf.name, port_name(leaf.platform, p)))
                for u, spine in enumerate(plane_spines):
                    links.append(
                        (
                            leaf.name,
                            port_name(leaf.platform, down + u),
                            spine.name,
                            port_name(spine.platform, k),
                        )
                    )
    return Fabric([*spines, *leaves, *hosts], links, spine_planes=True)


def lab_fabric() -> Fabric:
    """The bundled example: 2 spines, 4 leaves (one per rail, one per switch platform), 2 hosts."""
    spines = [
        DeviceSpec("spine-01", "spine", "arista_eos", ports=8),
        DeviceSpec("spine-02", "spine", "arista_eos", ports=8),
    ]
    leaf_platforms = ("sonic", "cumulus", "arista_eos", "cisco_nxos")
    leaves = [DeviceSpec(f"leaf-r{r}-a", "leaf", p, rail=r, ports=4) for r, p in enumerate(leaf_platforms)]
    rails = [port_name(host_platform(), r) for r in range(4)]
    hosts = [
        DeviceSpec(f"gpu-00{h}", "host", host_platform(), ports=4, rail_interfaces=list(rails))
        for h in (1, 2)
    ]
    links = []
    for leaf in leaves:
        assert leaf.rail is not None
        for p, host in enumerate(hosts):
            links.append((host.name, rails[leaf.rail], leaf.name, port_name(leaf.platform, p)))
        for s, spine in enumerate(spines):
            links.append(
                (leaf.name, port_name(leaf.platform, 2 + s), spine.name, port_name(spine.platform, leaf.rail))
            )
    return Fabric([*spines, *leaves, *hosts], links)


#: The planted faults of the bundled example (docs/example.md explains each one).
LAB_FAULTS: tuple[Fault, ...] = (
    Fault("gpu-002", "mtu", 1500, "eth1", "host NIC left at the default MTU"),
    Fault("gpu-001", "nic.roce_tos", 104, "eth2", "RDMA-CM ToS without ECN capability (DSCP 26 << 2)"),
    Fault("leaf-r1-a", "pfc_priorities", [3, 4], "swp1", "PFC enabled on an extra priority"),
    Fault("leaf-r2-a", "dscp_to_priority.26", 0, "Ethernet2/1", "RoCE DSCP remapped to the lossy class"),
    Fault("leaf-r2-a", "dscp_to_priority.24", 3, "Ethernet2/1", "another DSCP put in the lossless priority"),
    Fault("leaf-r3-a", "fec", "fc", "Ethernet1/3", "Fire-code FEC on a 400G uplink"),
    Fault("spine-02", "qos.pfc_watchdog.enabled", False, None, "PFC watchdog off"),
    Fault("gpu-002", "optics.rx_power_dbm", [-1.2, -10.4, -1.1, -1.3], "eth3", "dirty connector on one lane"),
    Fault("leaf-r0-a", "counters.fec_uncorrectable", 17, "Ethernet8", "uncorrectable FEC codewords"),
)


# --------------------------------------------------------------------------------------------
# The BGP underlay of a synthetic fabric (the design's numbering: docs/design.md)

#: Loopbacks (/32 each, switches in fabric order) and leaf-spine /31s (link n: spine 2n, leaf 2n+1).
LOOPBACKS = ipaddress.IPv4Network("10.0.0.0/16")
FABRIC_LINKS = ipaddress.IPv4Network("10.128.0.0/10")
#: Spines of plane p share AS ``SPINE_ASN + p``; leaves number up from ``LEAF_ASN_BASE``.
SPINE_ASN = 65100
LEAF_ASN_BASE = 4200000000


#: ECMP load balancing of every switch: the 5-tuple hash, adaptive routing on (an AR fabric); one
#: seed per tier, so leaves and spines do not hash alike (no polarisation).
LOAD_BALANCE: dict[str, Any] = {
    "hash_fields": ["dst_ip", "dst_port", "ip_proto", "src_ip", "src_port"],
    "hash_algorithm": "crc",
    "adaptive_routing": True,
}
HASH_SEEDS = {"leaf": 11, "spine": 23}


class Session(NamedTuple):
    """One eBGP session of a switch, on one leaf-spine link."""

    port: str
    local: str
    peer: str
    peer_device: str
    peer_asn: int
    uplink: bool


class DeviceBgp(NamedTuple):
    """A switch's BGP plan: AS, router id (its loopback), sessions, and its ECMP probe prefix."""

    asn: int
    router_id: str
    sessions: tuple[Session, ...]
    probe: str | None
    #: Prefixes a leaf receives from each spine (the other leaves' loopbacks and the spine's own).
    prefixes: int


def bgp_plan(fabric: Fabric) -> dict[str, DeviceBgp]:
    """Every switch's BGP plan: one eBGP session per leaf-spine link, numbered as ``fabline design`` does.

    A leaf's probe prefix is the loopback of the next leaf of its plane (none in a one-leaf plane):
    its route there should have one path per uplink.

    Example:
        >>> plan = bgp_plan(lab_fabric())
        >>> plan["leaf-r0-a"].asn, plan["leaf-r0-a"].probe, len(plan["leaf-r0-a"].sessions)
        (4200000000, '10.0.0.4/32', 2)
        >>> plan["leaf-r0-a"].sessions[0][1:5]
        ('10.128.0.1', '10.128.0.0', 'spine-01', 65100)
    """
    switches = [d for d in fabric.devices if d.role in ("leaf", "spine")]
    loop = {d.name: str(LOOPBACKS.network_address + i + 1) for i, d in enumerate(switches)}
    role = {d.name: d.role for d in switches}
    asns: dict[str, int] = {}
    leaves_of: dict[int, list[str]] = {}
    for d in switches:
        if d.role == "spine":
            asns[d.name] = SPINE_ASN + (d.plane if fabric.spine_planes else 0)
        else:
            asns[d.name] = LEAF_ASN_BASE + len(leaves_of.get(-1, []))
            leaves_of.setdefault(-1, []).append(d.name)
            leaves_of.setdefault(d.plane, []).append(d.name)
    sessions: dict[str, list[Session]] = {d.name: [] for d in switches}
    n = 0
    base = int(FABRIC_LINKS.network_address)
    for a, ap, b, bp in fabric.links:
        if {role.get(a), role.get(b)} != {"leaf", "spine"}:
            continue
        leaf, lp, spine, sp = (a, ap, b, bp) if role[a] == "leaf" else (b, bp, a, ap)
        s_addr, l_addr = (
            str(ipaddress.IPv4Address(base + 2 * n)),
            str(ipaddress.IPv4Address(base + 2 * n + 1)),
        )
        n += 1
        sessions[leaf].append(Session(lp, l_addr, s_addr, spine, asns[spine], True))
        sessions[spine].append(Session(sp, s_addr, l_addr, leaf, asns[leaf], False))
    probe: dict[str, str] = {}
    for plane, names in leaves_of.items():
        if plane == -1 or len(names) < 2:
            continue
        for i, name in enumerate(names):
            probe[name] = f"{loop[names[(i + 1) % len(names)]]}/32"
    plane_of = {d.name: d.plane for d in switches}
    return {
        d.name: DeviceBgp(
            asns[d.name],
            loop[d.name],
            tuple(sessions[d.name]),
            probe.get(d.name),
            len(leaves_of.get(plane_of[d.name], ())) if d.role == "leaf" else 1,
        )
        for d in switches
    }


def _bgp_doc(plan: DeviceBgp) -> dict[str, Any]:
    neighbors = {
        s.peer: {
            "remote_asn": s.peer_asn,
            "state": "established",
            "admin_down": False,
            "prefixes_received": plan.prefixes if s.uplink else 1,
            "description": s.peer_device,
        }
        for s in plan.sessions
    }
    return {"asn": plan.asn, "router_id": plan.router_id, "neighbors": neighbors}


def _bgp_faults(doc: dict[str, Any], plan: DeviceBgp, faults: Sequence[Fault]) -> None:
    """Apply ``bgp.neighbor.<field>`` faults (on the session of the fault's port), then derive ECMP.

    The probe route has one path per established uplink session, at most ``bgp.maximum_paths``.
    """
    bgp = doc.get("bgp")
    if not isinstance(bgp, dict):
        doc.pop("bgp", None)  # a fault removed it: BGP not collected
        return
    by_port = {s.port: s.peer for s in plan.sessions}
    for f in faults:
        if f.path.startswith("bgp.neighbor.") and f.interface in by_port:
            bgp["neighbors"][by_port[f.interface]][f.path.removeprefix("bgp.neighbor.")] = f.value
    if any(f.path == "bgp.ecmp" or f.path.startswith("bgp.ecmp.") for f in faults):
        if bgp.get("ecmp") is None:
            bgp.pop("ecmp", None)
        return  # planted as is
    if plan.probe is None:
        return
    up = [
        s
        for s in plan.sessions
        if s.uplink
        and bgp["neighbors"][s.peer].get("state") == "established"
        and not bgp["neighbors"][s.peer].get("admin_down")
    ]
    limit = bgp.get("maximum_paths")
    if isinstance(limit, int):
        up = up[:limit]
    ecmp: dict[str, Any] = {"prefix": plan.probe, "paths": len(up), "protocol": "bgp"}
    if up:
        ecmp["next_hops"] = [s.peer for s in up]
        ecmp["interfaces"] = [s.port for s in up]
    bgp["ecmp"] = ecmp


def _iface(platform: str, peer: tuple[str, str] | None, n: int, speed: int = 400) -> Interface:
    body: Interface = {
        "admin_up": True,
        "oper_up": peer is not None,
        "mtu": PLATFORMS[platform].mtu.fabric_mtu,
        "speed_gbps": speed,
        "fec": "rs",
        "autoneg": False,
        "trust": "dscp",
        "dscp_to_priority": roce_dscp_map(),
        "pfc_priorities": [3],
    }
    if PLATFORMS[platform].kind == "switch":
        body["ecn"] = {
            "3": {"enabled": True, "min_bytes": 150000, "max_bytes": 1500000, "probability_pct": 5}
        }
    if peer is None:
        body["admin_up"] = False
        return body
    body["lldp"] = {"device": peer[0], "port": peer[1]}
    body["optics"] = {
        "vendor": "NVIDIA",
        "part_number": "MMA4Z00-NS",
        "serial": f"MT{n:010d}",
        "temperature_c": 41.5,
        "rx_power_dbm": [-1.2, -1.0, -1.1, -1.3],
        "tx_power_dbm": [0.4, 0.5, 0.3, 0.6],
    }
    body["counters"] = {
        "fec_corrected": 1024,
        "fec_uncorrectable": 0,
        "crc_errors": 0,
        "pfc_rx_pause": {"3": 0},
        "pfc_tx_pause": {"3": 0},
        "ecn_marked": 0,
    }
    return body


def states(
    fabric: Fabric,
    faults: Sequence[Fault] = (),
    collected_at: str = "2026-11-29T08:00:00Z",
    bgp: Mapping[str, DeviceBgp] | None = None,
) -> Iterator[dict[str, Any]]:
    """Clean state documents of every device, with ``faults`` applied.

    Switches carry their BGP underlay (``bgp``, from :func:`bgp_plan` of the fabric, or ``bgp``
    when the caller planned a larger fabric than it asks states of, as the simulator does). A
    fault ``bgp.neighbor.<field>`` on a port changes the session on that port.
    """
    peers = fabric.peers()
    plans = bgp_plan(fabric) if bgp is None else bgp
    by_device: dict[str, list[Fault]] = {}
    for f in faults:
        by_device.setdefault(f.device, []).append(f)
    serial = 0
    for dev in fabric.devices:
        doc: dict[str, Any] = {
            "schema": SCHEMA_ID,
            "name": dev.name,
            "platform": dev.platform,
            "role": dev.role,
            "status": "ok",
            "errors": [],
            "collected_at": collected_at,
            "facts": {
                "hostname": dev.name,
                "os_version": PLATFORMS[dev.platform].os_version,
                "model": "DGX-H100" if dev.role == "host" else "64x400G",
                "serial": f"SN-{dev.name}",
            },
        }
        ifaces: dict[str, Any] = {}
        names = dev.rail_interfaces or [port_name(dev.platform, i) for i in range(dev.ports)]
        for i, name in enumerate(names):
            serial += 1
            body = _iface(dev.platform, peers.get((dev.name, name)), serial)
            if dev.role == "host":
                body["counters"] = {**body.get("counters", {}), "cnp_sent": 0, "cnp_handled": 0}
                body["nic"] = {
                    "rdma_device": f"mlx5_{i}",
                    "driver": "mlx5_core",
                    "driver_version": "24.04-0.7.0",
                    "firmware": NIC_FIRMWARE,
                    "roce_tos": 106,
                    "ecn_np_priorities": [3],
                    "ecn_rp_priorities": [3],
                    "pcie": HOST_PCIE.copy(),
                    "numa_node": i * 2 // len(names),
                    "iommu_domain": "identity",
                    "cnp_dscp": 48,
                    "cnp_802p_prio": 6,
                    "dcqcn": {"np": dict(DCQCN_NP), "rp": dict(DCQCN_RP)},
                    "roce_active_mtu": 4096,
                    "gids": host_gids(dev.name, i),
                    "pci_address": f"0000:{rail_bus(i) + 2:02x}:00.0",
                }
            ifaces[name] = body
        doc["interfaces"] = ifaces
        if dev.role == "host":
            doc["host"] = {
                "gpudirect_rdma": True,
                "nccl_env": {"NCCL_IB_TC": "106", "NCCL_IB_GID_INDEX": "3"},
                "iommu_params": ["iommu=pt"],
                "gpu_driver": GPU_DRIVER,
                "cuda_version": CUDA_VERSION,
                "fabric_manager": "active",
                "gpus": _gpus(len(names)),
                "pcie_bridges": pcie_bridges(len(names)),
                "rdma_devices": {f"mlx5_{i}": {"cc_config": dict(NIC_CC_CONFIG)} for i in range(len(names))},
            }
            doc["facts"]["bios_version"] = BIOS_VERSION
        else:
            doc["qos"] = {"pfc_watchdog": {"enabled": True, "detection_ms": 200, "restoration_ms": 200}}
        plan = plans.get(dev.name) if dev.role != "host" else None
        if plan is not None:
            doc["bgp"] = _bgp_doc(plan)
        if dev.role != "host":
            doc["load_balance"] = {**LOAD_BALANCE, "hash_seed": HASH_SEEDS.get(dev.role, 0)}
        mine = by_device.get(dev.name, [])
        for f in mine:
            if f.path.startswith("bgp.neighbor."):
                continue
            target = doc if f.interface is None else doc["interfaces"].setdefault(f.interface, {})
            _set_path(target, f.path, f.value)
        if plan is not None:
            _bgp_faults(doc, plan, mine)
        yield doc


#: A rail NIC's PCIe link in a clean fabric: a ConnectX-7 (PCIe Gen5 x16) trained at its full width and speed.
HOST_PCIE: Pcie = {"present": True, "width": 16, "max_width": 16, "speed_gts": 32.0, "max_speed_gts": 32.0}
#: ConnectX DCQCN notification/reaction point parameters at NVIDIA's documented defaults ("DCQCN CC
#: Parameters"), as the mlx5 sysfs ``ecn/roce_np`` and ``ecn/roce_rp`` files name them.
DCQCN_NP = {"min_time_between_cnps": 4}
DCQCN_RP = {
    "clamp_tgt_rate": 0, "clamp_tgt_rate_after_time_inc": 1, "dce_tcp_g": 1019, "dce_tcp_rtt": 1,
    "initial_alpha_value": 1023, "rate_reduce_monitor_period": 4, "rate_to_set_on_first_cnp": 0,
    "rpg_ai_rate": 5, "rpg_byte_reset": 32767, "rpg_gd": 11, "rpg_hai_rate": 50, "rpg_max_rate": 0,
    "rpg_min_dec_fac": 50, "rpg_min_rate": 1, "rpg_threshold": 1, "rpg_time_reset": 300,
}  # fmt: skip
#: The GPU driver and BIOS of a synthetic GPU server.
GPU_DRIVER = "535.104.05"
BIOS_VERSION = "1.10.2"
#: The CUDA version of that driver (the nvidia-smi header).
CUDA_VERSION = "12.2"
#: A ConnectX-7's firmware congestion control (``mlxconfig query``) at NVIDIA's defaults, as a real
#: ConnectX query prints them (``tests/samples/linux_host/mlxconfig_-d_query-*``), port 1 only.
NIC_CC_CONFIG = {
    "CLAMP_TGT_RATE_AFTER_TIME_INC_P1": "True(1)", "CLAMP_TGT_RATE_P1": "False(0)", "CNP_802P_PRIO_P1": "6",
    "CNP_DSCP_P1": "48", "DCE_TCP_G_P1": "1019", "DCE_TCP_RTT_P1": "1", "INITIAL_ALPHA_VALUE_P1": "1023",
    "MIN_TIME_BETWEEN_CNPS_P1": "4", "RATE_REDUCE_MONITOR_PERIOD_P1": "4", "RATE_TO_SET_ON_FIRST_CNP_P1": "0",
    "ROCE_CC_PRIO_MASK_P1": "255", "RPG_AI_RATE_P1": "5", "RPG_BYTE_RESET_P1": "32767", "RPG_GD_P1": "11",
    "RPG_HAI_RATE_P1": "50", "RPG_MAX_RATE_P1": "0", "RPG_MIN_DEC_FAC_P1": "50", "RPG_MIN_RATE_P1": "1",
    "RPG_THRESHOLD_P1": "1", "RPG_TIME_RESET_P1": "300",
}  # fmt: skip
#: The PCIe switch ports of a synthetic GPU server (lspci's words for a Broadcom Gen5 switch).
PCIE_SWITCH = "PCI bridge: Broadcom / LSI PEX890xx PCIe Gen 5 Switch (rev b0)"


def rail_bus(i: int) -> int:
    """The bus of GPU i in a synthetic server; its rail NIC is two buses further, behind the same switch."""
    return 0x18 + i * 0x10


def pcie_bridges(count: int, acs_on: Sequence[int] = ()) -> dict[str, Any]:
    """The two PCIe switch downstream ports of each rail (to GPU i and to NIC i), ACS off.

    ``acs_on`` lists rails whose ports redirect peer-to-peer traffic (the BIOS default of many
    servers: ``SrcValid ReqRedir CmpltRedir UpstreamFwd``), the fault ``host-acs`` reports.

    Example:
        >>> sorted(pcie_bridges(1))
        ['0000:17:00.0', '0000:17:01.0']
    """
    out: dict[str, Any] = {}
    for i in range(count):
        bus = rail_bus(i)
        acs = ["SrcValid", "ReqRedir", "CmpltRedir", "UpstreamFwd"] if i in acs_on else []
        for dev, secondary in ((0, bus), (1, bus + 2)):
            out[f"0000:{bus - 1:02x}:{dev:02x}.0"] = {
                "secondary": secondary, "subordinate": secondary, "name": PCIE_SWITCH, "acs_ctl": list(acs),
            }  # fmt: skip
    return out


def host_gids(host: str, rail: int) -> list[Gid]:
    """A RoCE NIC's GID table as ``show_gids`` lists it: link-local v1/v2 (0, 1), IPv4 v1/v2 (2, 3).

    Example:
        >>> [(g["index"], g["version"], g.get("ipv4")) for g in host_gids("gpu-001", 1)]
        [(0, 'v1', None), (1, 'v2', None), (2, 'v1', '10.1.22.2'), (3, 'v2', '10.1.22.2')]
    """
    h = sum(host.encode()) % 250
    link_local = f"fe80:0000:0000:0000:ba3f:d2ff:fe{h:02x}:{rail:04x}"
    ipv4 = f"10.{rail}.{h}.2"
    mapped = "0000:0000:0000:0000:0000:ffff:{:02x}{:02x}:{:02x}{:02x}".format(
        *(int(x) for x in ipv4.split("."))
    )
    return [
        {"index": 0, "gid": link_local, "version": "v1"},
        {"index": 1, "gid": link_local, "version": "v2"},
        {"index": 2, "gid": mapped, "version": "v1", "ipv4": ipv4},
        {"index": 3, "gid": mapped, "version": "v2", "ipv4": ipv4},
    ]


def _gpus(count: int) -> dict[str, Any]:
    """One GPU per rail NIC, GPU i behind the PCIe switch of NIC i (``PIX``), half of them per socket."""
    gpus: dict[str, Any] = {}
    for i in range(count):
        numa = i * 2 // count
        paths = {
            f"mlx5_{j}": "PIX" if j == i else ("NODE" if j * 2 // count == numa else "SYS")
            for j in range(count)
        }
        gpus[str(i)] = {
            "pci_address": f"0000:{rail_bus(i):02x}:00.0",
            "name": "NVIDIA H100 80GB HBM3",
            "vbios": "96.00.74.00.0D",
            "numa_node": numa,
            "nic_paths": paths,
        }
    return gpus


def as_collected(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` (a :func:`states` document) with what a real collection of its platform adds; returns it.

    :func:`states` writes what the checks of the older releases read; a collection of a SONiC
    switch or a GPU server today yields more (health counters per priority, transceiver status and
    flags, pre-FEC BER, PFC watchdog per port, the host's RDMA devices and RoCE error counters),
    and the checks added since read it. The values are those of a clean, healthy device (no drop,
    no error, no storm, no alarm), as the simulator renders them; each platform's spec holds its
    own (``PlatformSpec.synthetic_extras``, none: returned unchanged). Existing values (planted faults) are kept: only missing keys are added.
    """
    spec = PLATFORMS.get(str(doc.get("platform")))
    if spec is not None and spec.synthetic_extras is not None:
        spec.synthetic_extras(doc)
    return doc


def _set_path(target: dict[str, Any], path: str, value: Any) -> None:
    parts = path.split(".")
    for p in parts[:-1]:
        target = target.setdefault(p, {})
    target[parts[-1]] = value


def inventory(fabric: Fabric, *, address_base: str = "127.10", planes: bool = True) -> dict[str, Any]:
    """An Ansible YAML inventory (as a dict) for the fabric, with the vars the checks use.

    Switches get ``bgp_asn`` (the AS plan the BGP checks compare with), leaves their ECMP probe
    prefix ``fabline_ecmp_prefix`` (:func:`bgp_plan`).

    ``planes=False`` leaves out every ``plane`` variable (as an inventory that never set them).
    """
    plans = bgp_plan(fabric)
    groups: dict[str, dict[str, Any]] = {
        "spine": {"hosts": {}},
        "leaf": {"hosts": {}},
        "gpu_hosts": {"hosts": {}},
    }
    for i, dev in enumerate(fabric.devices):
        hv: dict[str, Any] = {
            "ansible_host": f"{address_base}.{i // 250}.{i % 250 + 1}",
            "fabline_platform": dev.platform,
            "fabline_role": dev.role,
        }
        if dev.rail is not None:
            hv["rail"] = dev.rail
        if planes and (dev.rail is not None or (dev.role == "spine" and fabric.spine_planes)):
            hv["plane"] = dev.plane
        if dev.rail_interfaces:
            hv["rail_interfaces"] = dev.rail_interfaces
        plan = plans.get(dev.name)
        if plan is not None:
            hv["bgp_asn"] = plan.asn
            if plan.probe:
                hv["fabline_ecmp_prefix"] = plan.probe
        group = {"spine": "spine", "leaf": "leaf", "host": "gpu_hosts"}[dev.role]
        groups[group]["hosts"][dev.name] = hv
    return {
        "all": {
            "children": {
                "fabric": {"children": {"spine": groups["spine"], "leaf": groups["leaf"]}},
                "gpu_hosts": groups["gpu_hosts"],
            }
        }
    }


def write_snapshot(fabric: Fabric, out_dir: Path, faults: Sequence[Fault] = (), **kwargs: Any) -> int:
    """Write ``out_dir/state/<device>.json`` for every device (compact, as a collection writes a
    state: :func:`~fabline.collect.writer.state_bytes`); returns the number written.
    """
    state_dir = out_dir / "state"
    state_dir.mkdir(parents=True, exist_ok=True)
    n = 0
    for doc in states(fabric, faults, **kwargs):
        (state_dir / f"{doc['name']}.json").write_bytes(state_bytes(doc))  # as a collection writes it
        n += 1
    return n


# --------------------------------------------------------------------------------------------
# cabling faults and the cabling plan (fabric-level checks)


def swap_ports(fabric: Fabric, device: str, port_a: str, port_b: str) -> Fabric:
    """A copy of ``fabric`` with the cables of two ports of one device swapped.

    The classic rail mistake: a server cabled by port adjacency, NIC 0 in rail 1's leaf and NIC 1
    in rail 0's. Both links stay up with consistent LLDP; only the rail is wrong.

    Example:
        >>> f = swap_ports(lab_fabric(), "gpu-001", "eth0", "eth1")
        >>> f.peers()[("gpu-001", "eth0")], f.peers()[("gpu-001", "eth1")]
        (('leaf-r1-a', 'swp1'), ('leaf-r0-a', 'Ethernet0'))
    """
    swap = {port_a: port_b, port_b: port_a}
    links = []
    for a, ap, b, bp in fabric.links:
        if a == device and ap in swap:
            ap = swap[ap]
        elif b == device and bp in swap:
            bp = swap[bp]
        links.append((a, ap, b, bp))
    return Fabric(fabric.devices, links, fabric.spine_planes)


def remove_link(fabric: Fabric, device: str, port: str) -> Fabric:
    """A copy of ``fabric`` without the link on ``device`` ``port`` (both ports end up down).

    Example:
        >>> len(remove_link(lab_fabric(), "leaf-r0-a", "Ethernet16").links)
        15
    """
    links = [
        link
        for link in fabric.links
        if (link[0], link[1]) != (device, port) and (link[2], link[3]) != (device, port)
    ]
    return Fabric(fabric.devices, links, fabric.spine_planes)


def cabling_plan_csv(fabric: Fabric) -> str:
    """The fabric's links as a cabling plan CSV (``fabline check --cabling``), one link per row.

    Example:
        >>> cabling_plan_csv(lab_fabric()).splitlines()[:2]
        ['device,port,peer_device,peer_port,rail,plane', 'gpu-001,eth0,leaf-r0-a,Ethernet0,0,0']
    """
    by_name = {d.name: d for d in fabric.devices}
    rows = ["device,port,peer_device,peer_port,rail,plane"]
    for a, ap, b, bp in fabric.links:
        leaf = by_name[a] if by_name[a].role == "leaf" else by_name[b] if by_name[b].role == "leaf" else None
        rail = "" if leaf is None or leaf.rail is None else str(leaf.rail)
        plane = "" if leaf is None else str(leaf.plane)
        rows.append(f"{a},{ap},{b},{bp},{rail},{plane}")
    return "\n".join(rows) + "\n"
