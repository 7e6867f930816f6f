"""Linux GPU host (ConnectX NICs, MLNX_OFED tools) outputs rendered from a device state.

Formats follow the real outputs in ``tests/samples/linux_host`` and the documented layouts
the parsers read (iproute2 JSON, ethtool, mlnx_qos, sysfs/configfs files read with ``cat`` and
``grep -H .``, ibv_devinfo, show_gids, lldpctl JSON, lsmod).
"""

from __future__ import annotations

import fnmatch
import json
import re
from typing import Any

from fabline.platforms.linux import PLATFORM
from fabline.sim.render.common import Answer, SimView, dbm_text, mw, split_words

#: ethtool's FEC words (the platform spec's vocabulary, shared with its parsers).
_FEC_WORD = PLATFORM.vocabulary.fec
_MODULES = (
    ("nvidia_peermem", 16384, "0", ""),
    ("nvidia_uvm", 1384448, "2", ""),
    ("nvidia_drm", 77824, "0", ""),
    ("nvidia_modeset", 1306624, "1", "nvidia_drm"),
    ("nvidia", 56516608, "18", "nvidia_uvm,nvidia_peermem,nvidia_modeset"),
    ("mlx5_ib", 483328, "0", ""),
    ("ib_uverbs", 163840, "2", "nvidia_peermem,mlx5_ib"),
    ("ib_core", 450560, "8", "rdma_cm,ib_ipoib,iw_cm,ib_umad,rdma_ucm,ib_uverbs,mlx5_ib,ib_cm"),
    ("mlx5_core", 2093056, "1", "mlx5_ib"),
)


def _nics(state: dict[str, Any]) -> list[tuple[int, str, dict[str, Any]]]:
    return [(i, name, body) for i, (name, body) in enumerate(state.get("interfaces", {}).items())]


def _mac(dev: SimView, i: int) -> str:
    h = sum(dev.name.encode()) % 256
    return f"b8:3f:d2:{h:02x}:{i // 256:02x}:{i % 256:02x}"


def _pci(i: int, body: dict[str, Any] | None = None) -> str:
    address = (body or {}).get("nic", {}).get("pci_address")
    return str(address) if address else f"0000:{0x1A + i * 0x20 & 0xFF:02x}:00.0"


def _rdma(body: dict[str, Any], i: int) -> str:
    return str(body.get("nic", {}).get("rdma_device", f"mlx5_{i}"))


def _ip_json(dev: SimView, state: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [
        {"ifindex": 1, "ifname": "lo", "flags": ["LOOPBACK", "UP", "LOWER_UP"], "mtu": 65536,
         "qdisc": "noqueue", "operstate": "UNKNOWN", "linkmode": "DEFAULT", "group": "default",
         "txqlen": 1000, "link_type": "loopback", "address": "00:00:00:00:00:00",
         "broadcast": "00:00:00:00:00:00", "promiscuity": 0, "min_mtu": 0, "max_mtu": 0},
    ]  # fmt: skip
    for i, name, body in _nics(state):
        flags = ["BROADCAST", "MULTICAST"]
        if body.get("admin_up", True):
            flags.append("UP")
        flags.append("LOWER_UP" if body.get("oper_up") else "NO-CARRIER")
        if not body.get("oper_up"):
            flags.insert(0, flags.pop())
        entry: dict[str, Any] = {
            "ifindex": i + 2, "ifname": name, "flags": flags, "mtu": body.get("mtu", 1500),
            "qdisc": "mq", "operstate": "UP" if body.get("oper_up") else "DOWN", "linkmode": "DEFAULT",
            "group": "default", "txqlen": 1000, "link_type": "ether", "address": _mac(dev, i),
            "broadcast": "ff:ff:ff:ff:ff:ff", "promiscuity": 0, "min_mtu": 68, "max_mtu": 9978,
            "num_tx_queues": 256, "num_rx_queues": 64, "parentbus": "pci", "parentdev": _pci(i, body),
        }  # fmt: skip
        if body.get("description"):
            entry["ifalias"] = body["description"]
        out.append(entry)
    return out


def _ip_text(dev: SimView, state: dict[str, Any], with_addr: bool) -> str:
    lines = []
    for e in _ip_json(dev, state):
        flags = ",".join(e["flags"])
        lines.append(
            f"{e['ifindex']}: {e['ifname']}: <{flags}> mtu {e['mtu']} qdisc {e['qdisc']} "
            f"state {e['operstate']} mode DEFAULT group default qlen {e['txqlen']}"
        )
        kind = "loopback" if e["ifname"] == "lo" else "ether"
        lines.append(f"    link/{kind} {e['address']} brd {e['broadcast']}")
        if e.get("ifalias"):
            lines.append(f"    alias {e['ifalias']}")
        if with_addr and e["ifname"] == "lo":
            lines.append("    inet 127.0.0.1/8 scope host lo")
            lines.append("       valid_lft forever preferred_lft forever")
    return "\n".join(lines) + "\n"


def _ethtool(name: str, body: dict[str, Any]) -> str:
    speed = body.get("speed_gbps")
    speed_line = f"{int(speed * 1000)}Mb/s" if speed else "Unknown!"
    autoneg = "on" if body.get("autoneg") else "off"
    mode = "400000baseCR4/Full" if speed == 400 else f"{int((speed or 0) * 1000)}baseCR4/Full"
    return (
        f"Settings for {name}:\n"
        "\tSupported ports: [ Backplane ]\n"
        f"\tSupported link modes:   {mode}\n"
        "\tSupported pause frame use: Symmetric\n"
        "\tSupports auto-negotiation: Yes\n"
        "\tSupported FEC modes: None RS\n"
        f"\tAdvertised link modes:  {mode}\n"
        "\tAdvertised pause frame use: No\n"
        f"\tAdvertised auto-negotiation: {'Yes' if body.get('autoneg') else 'No'}\n"
        f"\tAdvertised FEC modes: {_FEC_WORD.get(str(body.get('fec')), 'None')}\n"
        f"\tSpeed: {speed_line}\n"
        "\tDuplex: Full\n"
        f"\tAuto-negotiation: {autoneg}\n"
        "\tPort: Direct Attach Copper\n"
        "\tPHYAD: 0\n"
        "\tTransceiver: internal\n"
        "\tSupports Wake-on: d\n"
        "\tWake-on: d\n"
        "\tCurrent message level: 0x00000004 (4)\n"
        "\t\t\t       link\n"
        f"\tLink detected: {'yes' if body.get('oper_up') else 'no'}\n"
    )


#: The PSID of the ConnectX-7 in the shared ibv_devinfo sample (board_id), for NICs whose state has none.
DEFAULT_PSID = "MT_0000000838"


def _fw_version(nic: dict[str, Any]) -> str:
    """mlx5's ``firmware-version``: ``maj.min.sub (PSID)`` (mlx5e_ethtool_get_drvinfo)."""
    fw = nic.get("firmware", "")
    if nic.get("driver", "mlx5_core") != "mlx5_core" or not fw:
        return str(fw)
    return f"{fw} ({nic.get('psid', DEFAULT_PSID)})"


def _ethtool_i(i: int, body: dict[str, Any]) -> str:
    nic = body.get("nic", {})
    return (
        f"driver: {nic.get('driver', 'mlx5_core')}\n"
        f"version: {nic.get('driver_version', '')}\n"
        f"firmware-version: {_fw_version(nic)}\n"
        "expansion-rom-version: \n"
        f"bus-info: {_pci(i, body)}\n"
        "supports-statistics: yes\n"
        "supports-test: yes\n"
        "supports-eeprom-access: no\n"
        "supports-register-dump: no\n"
        "supports-priv-flags: yes\n"
    )


def _show_fec(name: str, body: dict[str, Any], stats: bool) -> str:
    word = _FEC_WORD.get(str(body.get("fec")), "None")
    text = f"FEC parameters for {name}:\nSupported/Configured FEC encodings: {word}\nActive FEC encoding: {word}\n"
    if stats:
        c = body.get("counters", {})
        corr, unc = int(c.get("fec_corrected", 0)), int(c.get("fec_uncorrectable", 0))
        text += "Statistics:\n"
        text += f"  corrected_blocks: {corr}\n"
        for lane in range(4):
            text += f"    Lane {lane}: {corr // 4 + (corr % 4 if lane == 0 else 0)}\n"
        text += f"  uncorrectable_blocks: {unc}\n"
        for lane in range(4):
            text += f"    Lane {lane}: {unc // 4 + (unc % 4 if lane == 0 else 0)}\n"
    return text


def _ethtool_m(body: dict[str, Any]) -> Answer:
    o = body.get("optics")
    if not o:
        return Answer("", 1, "netlink error: Invalid argument\n")
    temp = float(o.get("temperature_c", 40.0))
    lines = [
        ("Identifier", "0x19 (OSFP 8X Pluggable Transceiver)"),
        ("Power class", "8"),
        ("Max power", "17.00W"),
        ("Connector", "0x0c (MPO Parallel Optic)"),
        ("Cable assembly length", "0.00km"),
        ("Transceiver type", "400GBASE-DR4 (Cl 124)"),
        ("Vendor name", o.get("vendor", "")),
        ("Vendor OUI", "00:02:c9"),
        ("Vendor PN", o.get("part_number", "")),
        ("Vendor rev", "A2"),
        ("Vendor SN", o.get("serial", "")),
        ("Date code", "230412"),
        ("Module temperature", f"{temp:.2f} degrees C / {temp * 9 / 5 + 32:.2f} degrees F"),
        ("Module voltage", "3.2891 V"),
    ]
    tx = list(o.get("tx_power_dbm", []))
    rx = list(o.get("rx_power_dbm", []))
    for n in range(len(tx)):
        lines.append((f"Laser tx bias current (Channel {n + 1})", f"{7.45 + n * 0.02:.3f} mA"))
    for n, v in enumerate(tx):
        lines.append((f"Transmit avg optical power (Channel {n + 1})", f"{mw(v):.4f} mW / {dbm_text(v)} dBm"))
    for n, v in enumerate(rx):
        lines.append(
            (f"Rcvr signal avg optical power(Channel {n + 1})", f"{mw(v):.4f} mW / {dbm_text(v)} dBm")
        )
    lines += [
        ("Laser bias current high alarm threshold", "15.000 mA"),
        ("Laser rx power low alarm threshold", "0.0282 mW / -15.50 dBm"),
        ("Laser rx power low warning threshold", "0.0562 mW / -12.50 dBm"),
    ]
    return Answer("".join(f"\t{k:<42}: {v}\n" for k, v in lines))


def _ethtool_s(body: dict[str, Any]) -> str:
    c = body.get("counters", {})
    rx = c.get("pfc_rx_pause", {})
    tx = c.get("pfc_tx_pause", {})
    lines = [
        ("rx_packets", 1843210987), ("rx_bytes", 15098843210334), ("tx_packets", 1790332114),
        ("tx_bytes", 14671022198810), ("rx_crc_errors_phy", c.get("crc_errors", 0)),
        ("rx_symbol_err_phy", 0), ("rx_corrected_bits_phy", c.get("fec_corrected", 0) * 8),
        ("rx_pcs_symbol_err_phy", 0), ("rx_discards_phy", c.get("rx_discards_phy", 0)),
        ("rx_out_of_buffer", c.get("rx_out_of_buffer", 0)),
    ]  # fmt: skip
    discards = c.get("rx_prio_discards", {})
    for p in range(8):
        lines += [
            (f"rx_prio{p}_discards", discards.get(str(p), 0)),
            (f"rx_prio{p}_pause", rx.get(str(p), 0)),
            (f"rx_prio{p}_pause_duration", 0),
            (f"tx_prio{p}_pause", tx.get(str(p), 0)),
            (f"tx_prio{p}_pause_duration", 0),
        ]
    lines += [("tx_pause_storm_warning_events", 0), ("tx_pause_storm_error_events", 0)]
    return "NIC statistics:\n" + "".join(f"     {k}: {v}\n" for k, v in lines)


def _mlnx_qos(body: dict[str, Any]) -> str:
    trust = body.get("trust", "pcp")
    dmap = {int(k): int(v) for k, v in body.get("dscp_to_priority", {}).items()}
    pfc = set(body.get("pfc_priorities", []))
    text = f"DCBX mode: OS controlled\nPriority trust state: {trust}\n"
    if dmap:
        text += "dscp2prio mapping:\n"
        for prio in range(8):
            codes = sorted((d for d, p in dmap.items() if p == prio), reverse=True)
            text += f"        prio:{prio} dscp:" + "".join(f"{d:02d}," for d in codes) + "\n"
    text += "Cable len: 7\nPFC configuration:\n"
    text += "        priority    0   1   2   3   4   5   6   7\n"
    text += "        enabled     " + "   ".join("1" if p in pfc else "0" for p in range(8)) + "   \n"
    for tc, prio in ((0, 1), (1, 0), *((n, n) for n in range(2, 8))):
        text += f"tc: {tc} ratelimit: unlimited, tsa: vendor\n         priority:  {prio}\n"
    return text


def _dcb_pfc(body: dict[str, Any]) -> str:
    pfc = set(body.get("pfc_priorities", []))
    prio = " ".join(f"{p}:{'on' if p in pfc else 'off'}" for p in range(8))
    return f"pfc-cap 8 macsec-bypass off delay 4096\nprio-pfc {prio}\n"


def _dcb_app(body: dict[str, Any]) -> str:
    if body.get("trust") != "dscp":
        return "\n"
    dmap = sorted((int(k), int(v)) for k, v in body.get("dscp_to_priority", {}).items())
    return "dscp-prio " + " ".join(f"{d}:{p}" for d, p in dmap) + "\n"


#: ibv_devinfo prints an MTU with its ``enum ibv_mtu`` value: IBV_MTU_256 = 1 ... IBV_MTU_4096 = 5.
_IBV_MTU_CODE = {256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}


def _ibv_devinfo(state: dict[str, Any]) -> str:
    blocks = []
    for i, _name, body in _nics(state):
        nic = body.get("nic", {})
        guid = f"a088:c203:00{i:02x}:1dba"
        up = "PORT_ACTIVE (4)" if body.get("oper_up") else "PORT_DOWN (1)"
        mtu = int(nic.get("roce_active_mtu", 4096))
        blocks.append(
            f"hca_id:\t{_rdma(body, i)}\n"
            "\ttransport:\t\t\tInfiniBand (0)\n"
            f"\tfw_ver:\t\t\t\t{nic.get('firmware', '')}\n"
            f"\tnode_guid:\t\t\t{guid}\n"
            f"\tsys_image_guid:\t\t\t{guid}\n"
            "\tvendor_id:\t\t\t0x02c9\n"
            "\tvendor_part_id:\t\t\t4129\n"
            "\thw_ver:\t\t\t\t0x0\n"
            "\tboard_id:\t\t\tMT_0000000838\n"
            "\tphys_port_cnt:\t\t\t1\n"
            "\t\tport:\t1\n"
            f"\t\t\tstate:\t\t\t{up}\n"
            "\t\t\tmax_mtu:\t\t4096 (5)\n"
            f"\t\t\tactive_mtu:\t\t{mtu} ({_IBV_MTU_CODE.get(mtu, 5)})\n"
            "\t\t\tsm_lid:\t\t\t0\n"
            "\t\t\tport_lid:\t\t0\n"
            "\t\t\tport_lmc:\t\t0x00\n"
            "\t\t\tlink_layer:\t\tEthernet\n"
        )
    return "\n".join(blocks)


def _show_gids(dev: SimView, state: dict[str, Any]) -> str:
    rows = [
        "DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV",
        "---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---",
    ]
    for i, name, body in _nics(state):
        mac = _mac(dev, i).split(":")
        eui = f"{int(mac[0], 16) ^ 2:02x}{mac[1]}:{mac[2]}ff:fe{mac[3]}:{mac[4]}{mac[5]}"
        ll = f"fe80:0000:0000:0000:{eui}"
        ip = f"10.{dev.spec.rail_interfaces.index(name) if name in dev.spec.rail_interfaces else i}.{sum(dev.name.encode()) % 250}.{i + 2}"
        a, b, c, d = (int(x) for x in ip.split("."))
        v4 = f"0000:0000:0000:0000:0000:ffff:{a:02x}{b:02x}:{c:02x}{d:02x}"
        rdma = _rdma(body, i)
        gids = body.get("nic", {}).get("gids")
        if gids:  # the state's GID table (synthetic states carry one; a fault may change it)
            for g in gids:
                ipv4 = f"{g['ipv4']}  " if g.get("ipv4") else ""
                rows.append(
                    f"{rdma}\t1\t{g['index']}\t{g['gid']}\t{ipv4}\t{'' if ipv4 else chr(9)}{g['version']}\t{name}"
                )
            continue
        rows.append(f"{rdma}\t1\t0\t{ll}\t\t\tv1\t{name}")
        rows.append(f"{rdma}\t1\t1\t{ll}\t\t\tv2\t{name}")
        rows.append(f"{rdma}\t1\t2\t{v4}\t{ip}  \tv1\t{name}")
        rows.append(f"{rdma}\t1\t3\t{v4}\t{ip}  \tv2\t{name}")
    rows.append(f"n_gids_found={len(rows) - 2}")
    return "\n".join(rows) + "\n"


def _lldpctl(state: dict[str, Any]) -> str:
    entries = []
    for n, (name, body) in enumerate(state.get("interfaces", {}).items()):
        peer = body.get("lldp")
        if not peer:
            continue
        entries.append(
            {
                name: {
                    "via": "LLDP",
                    "rid": str(n + 1),
                    "age": "0 day, 02:11:09",
                    "chassis": {
                        peer["device"]: {
                            "id": {"type": "mac", "value": f"1c:34:da:5e:{n:02x}:00"},
                            "descr": "fabline simulated switch",
                            "capability": [
                                {"type": "Bridge", "enabled": True},
                                {"type": "Router", "enabled": True},
                            ],
                        }
                    },
                    "port": {
                        "id": {"type": "ifname", "value": peer["port"]},
                        "descr": peer["port"],
                        "ttl": "120",
                    },
                }
            }
        )
    listing: Any = entries if len(entries) != 1 else entries[0]
    return json.dumps({"lldp": {"interface": listing}} if entries else {"lldp": {}}, indent=2) + "\n"


def _lsmod(state: dict[str, Any]) -> str:
    gdr = state.get("host", {}).get("gpudirect_rdma", True)
    rows = ["Module                  Size  Used by"]
    for name, size, used, by in _MODULES:
        if name == "nvidia_peermem" and not gdr:
            continue
        if not gdr:
            by = by.replace("nvidia_peermem,", "").replace(",nvidia_peermem", "")
        rows.append(f"{name:<24}{size:>8}  {used} {by}".rstrip())
    return "\n".join(rows) + "\n"


def _gpus(state: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    gpus = state.get("host", {}).get("gpus") or {}
    return sorted(gpus.items(), key=lambda kv: int(kv[0]))


def _nvidia_smi_query(state: dict[str, Any]) -> str:
    """``nvidia-smi --query-gpu=index,pci.bus_id,name,driver_version,vbios_version --format=csv,noheader``."""
    driver = state.get("host", {}).get("gpu_driver", "")
    rows = []
    for index, gpu in _gpus(state):
        bus = "0000" + str(gpu.get("pci_address", "0000:00:00.0")).upper()  # nvidia-smi: 8-digit domain
        rows.append(f"{index}, {bus}, {gpu.get('name', '')}, {driver}, {gpu.get('vbios', '')}")
    return "".join(r + "\n" for r in rows)


_TOPO_LEGEND = (
    "Legend:\n\n"
    "  X    = Self\n"
    "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)\n"
    "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node\n"
    "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
    "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)\n"
    "  PIX  = Connection traversing at most a single PCIe bridge\n"
    "  NV#  = Connection traversing a bonded set of # NVLinks\n"
)


def _nvidia_smi_topo(state: dict[str, Any]) -> str:
    """``nvidia-smi topo -m`` in the layout of the real capture in ``tests/samples`` (tabs, NIC legend)."""
    gpus = _gpus(state)
    nics = sorted({n for _i, g in gpus for n in (g.get("nic_paths") or {})}, key=lambda n: (len(n), n))
    gpu_cols = [f"GPU{i}" for i, _g in gpus]
    nic_cols = [f"NIC{k}" for k in range(len(nics))]
    lines = ["\t" + "\t".join([*gpu_cols, *nic_cols, "CPU Affinity", "NUMA Affinity", "GPU NUMA ID"])]
    for index, gpu in gpus:
        cells = [" X " if j == index else "NV18" for j, _g in gpus]
        cells += [str((gpu.get("nic_paths") or {}).get(n, "SYS")) for n in nics]
        numa = int(gpu.get("numa_node", 0))
        cells += [f"{numa * 56}-{numa * 56 + 55}", str(numa), "N/A"]
        lines.append(f"GPU{index}\t" + "\t".join(cells))
    for k, nic in enumerate(nics):
        row = [str((g.get("nic_paths") or {}).get(nic, "SYS")) for _i, g in gpus]
        row += [" X " if m == k else "NODE" for m in range(len(nics))]
        lines.append(f"NIC{k}\t" + "\t".join(row) + "\t\t\t")
    legend = "NIC Legend:\n\n" + "".join(f"  NIC{k}: {n}\n" for k, n in enumerate(nics))
    return "\n".join(lines) + "\n\n" + _TOPO_LEGEND + "\n" + legend + "\n"


def _nvidia_smi_summary(state: dict[str, Any]) -> str:
    """``nvidia-smi``: the summary table in the layout of the real H100 capture in ``tests/samples``."""
    host = state.get("host", {})
    driver, cuda = str(host.get("gpu_driver", "")), str(host.get("cuda_version", "N/A"))
    rule = "+-----------------------------------------+------------------------+----------------------+"
    head = f"NVIDIA-SMI {driver:<22}Driver Version: {driver:<15}CUDA Version: {cuda:<9}"
    lines = [
        "+-----------------------------------------------------------------------------------------+",
        f"| {head:<87} |",
        "|-----------------------------------------+------------------------+----------------------+",
        "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |",
        "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |",
        "|                                         |                        |               MIG M. |",
        "|=========================================+========================+======================|",
    ]
    for index, gpu in _gpus(state):
        bus = "0000" + str(gpu.get("pci_address", "0000:00:00.0")).upper()
        name = str(gpu.get("name", ""))[:26]
        lines += [
            f"| {index:>3}  {name:<26}          On  |   {bus} Off |                    0 |",
            "| N/A   30C    P0             85W /  700W |       1MiB /  81559MiB |      0%      Default |",
            "|                                         |                        |             Disabled |",
            rule,
        ]
    lines += [
        " " * 89,
        "+-----------------------------------------------------------------------------------------+",
        "| Processes:                                                                              |",
        "|  GPU   GI   CI        PID   Type   Process name                              GPU Memory |",
        "|        ID   ID                                                               Usage      |",
        "|=========================================================================================|",
        "|  No running processes found                                                             |",
        "+-----------------------------------------------------------------------------------------+",
    ]
    return "\n".join(lines) + "\n"


def _mlxconfig(state: dict[str, Any], device: str) -> Answer:
    """``mlxconfig -d DEV query`` in the layout of the real capture in ``tests/samples`` (one Next Boot column)."""
    info = (state.get("host", {}).get("rdma_devices") or {}).get(device)
    if not isinstance(info, dict):
        return Answer("", 1, f"-E- Failed to open device: {device}. No such file or directory\n")
    rows = {
        "SRIOV_EN": "False(0)",
        "NUM_OF_VFS": "0",
        **(info.get("cc_config") or {}),
        "ROCE_CONTROL": "ROCE_ENABLE(2)",
    }
    out = [
        "", "Device #1:", "----------", "",
        f"{'Device type:':<20}{'ConnectX7':<20}",
        f"{'Name:':<20}{'MCX75310AAS-NEA_Ax':<20}",
        f"{'Description:':<20}NVIDIA ConnectX-7 HHHL Adapter card; 400GbE / NDR IB (default mode); Single-port OSFP; PCIe 5.0 x16",
        f"{'Device:':<20}{device:<20}",
        "",
        f"{'Configurations:':<57}Next Boot",
    ]  # fmt: skip
    out += [f"        {k:<44}{v:<20}" for k, v in rows.items()]
    return Answer("\n".join(out) + "\n")


def _lspci(state: dict[str, Any]) -> str:
    """``lspci -vvv`` (as root) of the PCIe switch ports, GPUs and rail NICs, in lspci's block layout."""
    blocks: list[tuple[str, list[str]]] = []
    for address, bridge in sorted((state.get("host", {}).get("pcie_bridges") or {}).items()):
        flags = set(bridge.get("acs_ctl") or ())
        lines = [
            f"{address[5:]} {bridge.get('name', 'PCI bridge')} (prog-if 00 [Normal decode])",
            "\tControl: I/O- Mem+ BusMaster+ SpecCycle- MemWINV- VGASnoop- ParErr- Stepping- SERR+ FastB2B- DisINTx+",
            "\tLatency: 0, Cache Line Size: 64 bytes",
            f"\tBus: primary={int(address[5:7], 16):02x}, secondary={bridge.get('secondary', 0):02x}, "
            f"subordinate={bridge.get('subordinate', 0):02x}, sec-latency=0",
        ]
        if "acs_ctl" in bridge:
            names = (
                "SrcValid",
                "TransBlk",
                "ReqRedir",
                "CmpltRedir",
                "UpstreamFwd",
                "EgressCtrl",
                "DirectTrans",
            )
            lines += [
                "\tCapabilities: [1f8 v1] Access Control Services",
                "\t\tACSCap:\t" + " ".join(f"{n}+" for n in names),
                "\t\tACSCtl:\t" + " ".join(f"{n}{'+' if n in flags else '-'}" for n in names),
            ]
        blocks.append((address, lines))
    for _index, gpu in _gpus(state):
        blocks.append((str(gpu.get("pci_address")), [
            f"{str(gpu.get('pci_address'))[5:]} 3D controller: NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev a1)",
            "\tSubsystem: NVIDIA Corporation GH100 [H100 SXM5 80GB]",
            "\tKernel driver in use: nvidia",
        ]))  # fmt: skip
    for i, _name, body in _nics(state):
        address = _pci(i, body)
        blocks.append((address, [
            f"{address[5:]} Ethernet controller: Mellanox Technologies MT2910 Family [ConnectX-7]",
            "\tSubsystem: Mellanox Technologies Device 0070",
            "\tKernel driver in use: mlx5_core",
        ]))  # fmt: skip
    return "\n".join("\n".join(lines) + "\n" for _a, lines in sorted(blocks))


#: ``dmidecode --type bios`` in the layout of the real Dell R640 capture in ``tests/samples`` (fewer
#: characteristics lines), for a simulated GPU server.
_DMIDECODE_BIOS = (
    "# dmidecode 3.3\nGetting SMBIOS data from sysfs.\nSMBIOS 3.3.0 present.\n\n"
    "Handle 0x0000, DMI type 0, 26 bytes\nBIOS Information\n\tVendor: American Megatrends International, LLC.\n"
    "\tVersion: {version}\n\tRelease Date: 06/23/2021\n\tAddress: 0xF0000\n\tRuntime Size: 64 kB\n"
    "\tROM Size: 32 MB\n\tCharacteristics:\n\t\tPCI is supported\n\t\tBIOS is upgradeable\n"
    "\t\tUEFI is supported\n\tBIOS Revision: 5.22\n\n"
    "Handle 0x000D, DMI type 13, 22 bytes\nBIOS Language Information\n\tLanguage Description Format: Long\n"
    "\tInstallable Languages: 1\n\t\ten|US|iso8859-1\n\tCurrently Installed Language: en|US|iso8859-1\n\n"
)


def _sudo(dev: SimView, args: list[str]) -> Answer:
    """``sudo -n CMD``: the root-only reads, as a login user allowed them without a password."""
    if args[:1] != ["-n"]:
        return Answer("", 1, "sudo: a terminal is required to read the password; either use the -S option "
                      "to read from standard input or configure an askpass helper\nsudo: a password is required\n")  # fmt: skip
    cmd, rest = (args[1], args[2:]) if len(args) > 1 else ("", [])
    state = dev.state()
    if cmd == "mlxconfig" and len(rest) == 3 and rest[0] == "-d" and rest[2] in ("query", "q"):
        return _mlxconfig(state, rest[1])
    if cmd == "lspci" and rest == ["-vvv"]:
        return Answer(_lspci(state))
    if cmd == "dmidecode" and rest == ["--type", "bios"]:
        version = state.get("facts", {}).get("bios_version")
        if not version:
            return Answer("", 1, "/dev/mem: No such file or directory\n")
        return Answer(_DMIDECODE_BIOS.format(version=version))
    return Answer("", 1, f"sudo: {cmd}: command not found\n")


class FileTable(dict[str, str]):
    """Path -> content of a host's readable files, with the directory levels globs match against."""

    def __init__(self, files: dict[str, str]) -> None:
        super().__init__(files)
        self._levels: dict[int, list[str]] = {}
        self._dirs: set[str] | None = None

    def level(self, depth: int) -> list[str]:
        """Every path cut after its ``depth``-th slash (files and directories), sorted, no repeats."""
        found = self._levels.get(depth)
        if found is None:
            cut = {"/".join(f.split("/")[: depth + 1]) for f in self if f.count("/") >= depth}
            found = self._levels[depth] = sorted(cut)
        return found

    def is_dir(self, path: str) -> bool:
        """Whether some file lies under ``path``."""
        if self._dirs is None:
            self._dirs = {f[:i] for f in self for i in range(len(f)) if f[i] == "/"}
        return path.rstrip("/") in self._dirs


#: How the kernel prints a PCIe link speed (``current_link_speed``, ``PCIE_SPEED2STR``) per GT/s.
_PCIE_SPEED = {2.5: "2.5 GT/s PCIe", 5.0: "5.0 GT/s PCIe", 8.0: "8.0 GT/s PCIe", 16.0: "16.0 GT/s PCIe",
               32.0: "32.0 GT/s PCIe", 64.0: "64.0 GT/s PCIe"}  # fmt: skip


def _nic_sysfs(base: str, nic: dict[str, Any]) -> dict[str, str]:
    """A ConnectX netdev's sysfs files of issue 16: PCIe link, NUMA node, IOMMU group, ECN parameters."""
    out: dict[str, str] = {}
    pcie = nic.get("pcie") or {}
    if pcie.get("present", True) and pcie:
        for key, file in (("width", "current_link_width"), ("max_width", "max_link_width")):
            if key in pcie:
                out[f"{base}/device/{file}"] = f"{pcie[key]}\n"
        for key, file in (("speed_gts", "current_link_speed"), ("max_speed_gts", "max_link_speed")):
            if key in pcie:
                out[f"{base}/device/{file}"] = (
                    _PCIE_SPEED.get(float(pcie[key]), f"{pcie[key]} GT/s PCIe") + "\n"
                )
        out[f"{base}/device/numa_node"] = f"{nic.get('numa_node', -1)}\n"
        if nic.get("iommu_domain"):
            out[f"{base}/device/iommu_group/type"] = f"{nic['iommu_domain']}\n"
    dcqcn = nic.get("dcqcn") or {}
    np_files = dict(dcqcn.get("np") or {})
    for key in ("cnp_dscp", "cnp_802p_prio"):
        if key in nic:
            np_files[key] = nic[key]
    for role, values in (("np", np_files), ("rp", dcqcn.get("rp") or {})):
        for key, value in sorted(values.items()):
            out[f"{base}/ecn/roce_{role}/{key}"] = f"{value}\n"
    return out


#: The kernel release a simulated host reports when its state names none (``facts.kernel``).
DEFAULT_KERNEL = "5.15.0-105-generic"


def files(dev: SimView, state: dict[str, Any]) -> dict[str, str]:
    """The host's readable files (sysfs, configfs, /etc) that allow-listed commands read."""
    out: dict[str, str] = {
        "/etc/hostname": f"{dev.name}\n",
        "/proc/sys/kernel/hostname": f"{dev.name}\n",
        "/etc/os-release": f'PRETTY_NAME="{state.get("facts", {}).get("os_version", "")}"\nID=ubuntu\n',
    }
    env = state.get("host", {}).get("nccl_env")
    sources = state.get("host", {}).get("nccl_sources") or {}
    if env is not None:
        # Settings a declared env file made are in that file (as 'export'), the rest in nccl.conf.
        out["/etc/nccl.conf"] = "# pinned by the platform team\n" + "".join(
            f"{k}={v}\n" for k, v in env.items() if k not in sources
        )
        for path in sorted(set(sources.values())):
            out[path] = "# written by the job launcher\nexport OMP_NUM_THREADS=8\n" + "".join(
                f'export {k}="{v}"\n' for k, v in env.items() if sources.get(k) == path
            )
    host = state.get("host", {})
    params = " ".join(host.get("iommu_params", []))
    kernel = state.get("facts", {}).get("kernel") or DEFAULT_KERNEL
    out["/proc/cmdline"] = (
        f"BOOT_IMAGE=/vmlinuz-{kernel} root=/dev/nvme0n1p2 ro {params} quiet splash\n".replace("  ", " ")
    )
    if state.get("facts", {}).get("bios_version"):
        out["/sys/class/dmi/id/bios_version"] = f"{state['facts']['bios_version']}\n"
    out["/sys/class/net/lo/address"] = "00:00:00:00:00:00\n"
    for i, name, body in _nics(state):
        nic = body.get("nic", {})
        rdma = _rdma(body, i)
        base = f"/sys/class/net/{name}"
        out.update(_nic_sysfs(base, nic))
        out[f"{base}/mtu"] = f"{body.get('mtu', 1500)}\n"
        out[f"{base}/operstate"] = "up\n" if body.get("oper_up") else "down\n"
        # Every carrier change since the netdev was created: one for a port that came up once.
        flaps = body.get("counters", {}).get("link_flaps", 1 if body.get("oper_up") else 0)
        out[f"{base}/carrier_changes"] = f"{int(flaps)}\n"
        out[f"{base}/address"] = _mac(dev, i) + "\n"
        if body.get("speed_gbps"):
            out[f"{base}/speed"] = f"{int(body['speed_gbps'] * 1000)}\n"
        c = body.get("counters", {})
        # The mlx5 ib driver's hw_counters (a subset of a ConnectX-7's, in its names).
        hw = {
            "duplicate_request": c.get("roce_duplicate_request", 0),
            "implied_nak_seq_err": c.get("roce_implied_nak_seq_err", 0),
            "local_ack_timeout_err": c.get("roce_local_ack_timeout_err", 0),
            "np_cnp_sent": c.get("cnp_sent", 0),
            "np_ecn_marked_roce_packets": c.get("ecn_marked", 0),
            "out_of_buffer": c.get("roce_out_of_buffer", 0),
            "out_of_sequence": c.get("roce_out_of_sequence", 0),
            "packet_seq_err": c.get("roce_packet_seq_err", 0),
            "rnr_nak_retry_err": c.get("roce_rnr_nak_retry_err", 0),
            "roce_adp_retrans": c.get("roce_adp_retrans", 0),
            "roce_adp_retrans_to": c.get("roce_adp_retrans_to", 0),
            "rp_cnp_handled": c.get("cnp_handled", 0),
            "rp_cnp_ignored": 0,
        }
        for k, v in hw.items():
            out[f"{base}/device/infiniband/{rdma}/ports/1/hw_counters/{k}"] = f"{v}\n"
        for role, key in (("np", "ecn_np_priorities"), ("rp", "ecn_rp_priorities")):
            on = set(nic.get(key, []))
            for p in range(8):
                out[f"{base}/ecn/roce_{role}/enable/{p}"] = "1\n" if p in on else "0\n"
        if "roce_tos" in nic:
            out[f"/sys/kernel/config/rdma_cm/{rdma}/ports/1/default_roce_tos"] = f"{nic['roce_tos']}\n"
        out[f"/sys/class/infiniband/{rdma}/device/net/{name}/ifindex"] = f"{i + 2}\n"
        out[f"/sys/class/infiniband/{rdma}/fw_ver"] = f"{nic.get('firmware', '')}\n"
    return out


def _expand(paths: list[str], fs: FileTable) -> list[str]:
    """Shell glob expansion over the file table (an unmatched pattern stays as written)."""
    out = []
    for p in paths:
        if any(ch in p for ch in "*?["):
            match = re.compile(fnmatch.translate(p)).match  # fnmatchcase, compiled once per glob
            hits = [c for c in fs.level(p.count("/")) if match(c)]
            out.extend(hits or [p])
        else:
            out.append(p)
    return out


def _is_dir(path: str, fs: FileTable) -> bool:
    return fs.is_dir(path)


def _cat(args: list[str], fs: FileTable) -> Answer:
    out, err, code = [], [], 0
    for p in _expand(args, fs):
        if p in fs:
            out.append(fs[p])
        elif _is_dir(p, fs):
            err.append(f"cat: {p}: Is a directory\n")
            code = 1
        else:
            err.append(f"cat: {p}: No such file or directory\n")
            code = 1
    return Answer("".join(out), code, "".join(err))


def _grep(args: list[str], fs: FileTable) -> Answer:
    opts = [a for a in args if a.startswith("-")]
    rest = [a for a in args if not a.startswith("-")]
    if not rest or rest[0] != ".":
        return Answer("", 2, "grep: the simulator only answers 'grep [-H] . FILE...'\n")
    paths = _expand(rest[1:], fs)
    with_name = "-H" in opts or len(paths) > 1
    out, err, found = [], [], False
    for p in paths:
        if p not in fs:
            msg = "Is a directory" if _is_dir(p, fs) else "No such file or directory"
            if not {"-s", "--no-messages"} & set(
                opts
            ):  # -s: no message about missing or unreadable files (the status stays 2)
                err.append(f"grep: {p}: {msg}\n")
            else:
                err.append("")
            continue
        for line in fs[p].splitlines():
            if line:
                found = True
                out.append(f"{p}:{line}\n" if with_name else line + "\n")
    # grep(1): 2 when an error occurred (even with -s, even when lines were selected), else 0 or 1.
    return Answer("".join(out), 2 if err else (0 if found else 1), "".join(err))


def _ls(args: list[str], fs: FileTable) -> Answer:
    paths = [a for a in args if not a.startswith("-")] or ["."]
    out, err, code = [], [], 0
    expanded = _expand(paths, fs)
    for p in expanded:
        if p in fs:
            out.append(p + "\n")
            continue
        prefix = p.rstrip("/") + "/"
        children = sorted({f[len(prefix) :].split("/")[0] for f in fs if f.startswith(prefix)})
        if not children:
            err.append(f"ls: cannot access '{p}': No such file or directory\n")
            code = 2
            continue
        if len(expanded) > 1:
            out.append(f"{p}:\n")
        out.append("".join(c + "\n" for c in children))
    return Answer("".join(out), code, "".join(err))


def not_found(word: str) -> Answer:
    """Bash's answer for an unknown command (exit 127)."""
    return Answer("", 127, f"bash: {word}: command not found\n")


def render(dev: SimView, line: str) -> Answer:  # noqa: C901 - one flat branch per host command, like a shell
    """Run one simple command line of a Linux GPU host against its state."""
    state = dev.state()
    try:
        argv = split_words(line)
    except ValueError:
        return Answer("", 2, "bash: syntax error: unexpected end of file\n")
    if not argv:
        return Answer("")
    cmd, args = argv[0], argv[1:]
    ifaces = state.get("interfaces", {})
    index = {name: i for i, name, _b in _nics(state)}

    def nic_arg(usage: str) -> tuple[int, str, dict[str, Any]] | Answer:
        name = next((a for a in reversed(args) if not a.startswith("-")), None)
        if name is None:
            return Answer("", 1, usage)
        if name not in ifaces:
            return Answer(
                "", 1 if cmd != "ethtool" else 76, f"netlink error: no device matches name ({name})\n"
            )
        return index[name], name, ifaces[name]

    if cmd in ("cat", "grep", "ls"):
        fs = dev.derived("files", lambda: FileTable(files(dev, state)))
        return {"cat": _cat, "grep": _grep, "ls": _ls}[cmd](args, fs)
    if cmd == "sed" and len(args) == 3 and args[:2] == ["-n", "/NCCL_/p;$s/.*/(end of file)/p"]:
        fs = dev.derived("files", lambda: FileTable(files(dev, state)))
        if args[2] not in fs:
            return Answer("", 2, f"sed: can't read {args[2]}: No such file or directory\n")
        lines = fs[args[2]].splitlines()
        return Answer(
            "".join(f"{ln}\n" for ln in lines if "NCCL_" in ln) + ("(end of file)\n" if lines else "")
        )
    if cmd == "hostname":
        return Answer(dev.name + "\n")
    if cmd == "uname":
        kernel = state.get("facts", {}).get("kernel") or DEFAULT_KERNEL
        return Answer(f"{kernel}\n" if "-r" in args else "Linux\n")
    if cmd == "ip":
        words = [a for a in args if not a.startswith("-")]
        if words[:2] in (["link", "show"], ["link"], ["l"], ["l", "show"]) or words[:1] == ["link"]:
            if "-j" in args:
                return Answer(json.dumps(_ip_json(dev, state), separators=(",", ":")) + "\n")
            return Answer(_ip_text(dev, state, False))
        if words[:1] in (["address"], ["addr"], ["a"]):
            return Answer(_ip_text(dev, state, True))
        return Answer("", 255, f'Object "{words[0] if words else ""}" is unknown, try "ip help".\n')
    if cmd == "ethtool":
        usage = "ethtool: bad command line argument(s)\nFor more information run ethtool -h\n"
        flags = [a for a in args if a.startswith("-")]
        if (
            sorted(flags) not in ([], ["-i"], ["--show-fec"], ["--show-fec", "-I"], ["-m"], ["-S"])
            or len(args) != len(flags) + 1
        ):
            return Answer("", 1, "ethtool: the simulated host is read-only (query forms only)\n")
        found = nic_arg(usage)
        if isinstance(found, Answer):
            return found
        i, name, body = found
        if not flags:
            return Answer(_ethtool(name, body))
        if flags == ["-i"]:
            return Answer(_ethtool_i(i, body))
        if flags == ["--show-fec"]:
            return Answer(_show_fec(name, body, False))
        if sorted(flags) == ["--show-fec", "-I"]:
            return Answer(_show_fec(name, body, True))
        if flags == ["-m"]:
            return _ethtool_m(body)
        return Answer(_ethtool_s(body))
    if cmd == "mlnx_qos":
        if len(args) != 2 or args[0] != "-i":
            return Answer("", 1, "mlnx_qos: the simulated host is read-only\n")
        found = nic_arg("Usage: mlnx_qos -i <interface> [options]\n")
        if isinstance(found, Answer):
            return found
        return Answer(_mlnx_qos(found[2]))
    if cmd == "dcb":
        if args[:2] in (["pfc", "show"], ["app", "show"]) and len(args) == 4 and args[2] == "dev":
            found = nic_arg("")
            if isinstance(found, Answer):
                return found
            return Answer(_dcb_pfc(found[2]) if args[0] == "pfc" else _dcb_app(found[2]))
        return Answer("", 1, "dcb: the simulated host is read-only\n")
    if cmd == "ibv_devinfo":
        return Answer(_ibv_devinfo(state))
    if cmd == "show_gids":
        return Answer(_show_gids(dev, state))
    if cmd == "lldpctl":
        return Answer(_lldpctl(state))
    if cmd == "lsmod":
        return Answer(_lsmod(state))
    if cmd == "sudo":
        if dev.transport_fault("sudo_refused") is not None:  # sudo wants a password for this user
            return Answer("", 1, "sudo: a password is required\n")
        return _sudo(dev, args)
    if cmd == "nvidia-smi" and _gpus(state):
        if not args:
            return Answer(_nvidia_smi_summary(state))
        if args == ["topo", "-m"]:
            return Answer(_nvidia_smi_topo(state))
        if len(args) == 2 and args[0].startswith("--query-gpu=") and args[1] == "--format=csv,noheader":
            return Answer(_nvidia_smi_query(state))
        return Answer("", 2, "the simulated host answers only the allow-listed nvidia-smi queries\n")
    if cmd == "systemctl" and args[:1] == ["show"] and len(args) == 3 and args[1].startswith("--property="):
        # systemctl(1) show: KEY=value lines in systemd's own order; a unit that is not installed
        # is LoadState=not-found, inactive/dead.
        active = state.get("host", {}).get("fabric_manager") if args[2] == "nvidia-fabricmanager" else None
        if active in (None, "not-found"):
            load, active, sub = "not-found", "inactive", "dead"
        else:
            load, sub = "loaded", {"active": "running", "failed": "failed"}.get(active, "dead")
        return Answer(f"LoadState={load}\nActiveState={active}\nSubState={sub}\n")
    return not_found(cmd)
