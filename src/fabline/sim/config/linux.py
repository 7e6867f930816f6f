"""Host configuration on a writable simulated GPU server (ConnectX NICs, MLNX_OFED tools).

- ``ip link set [dev] X mtu N``: the netdev MTU (68-9978 on ConnectX-7; outside: iproute2's
  ``Error: mtu greater than device maximum.``).
- ``mlnx_qos -i X [--trust dscp|pcp] [--pfc b0,...,b7] [--dscp2prio set,DSCP,PRIO]``: sets what it is
  given, then prints the port's QoS as ``mlnx_qos -i X`` does.
- ``tee FILE`` at the end of a pipeline writes the piped text: RDMA-CM's configfs
  ``/sys/kernel/config/rdma_cm/<dev>/ports/1/default_roce_tos``, the DCQCN enables
  ``/sys/class/net/X/ecn/roce_np|roce_rp/enable/<prio>`` (``1``/``0``), ``/sys/class/net/X/mtu``,
  ``/etc/nccl.conf``; any other path is ``Permission denied``.
- ``mkdir -p /sys/kernel/config/rdma_cm/<dev>``: creates the configfs directory (a device the host
  does not have is ``No such file or directory``).
- ``ethtool --set-fec X encoding rs|baser|off|auto`` and ``ethtool -s X autoneg on|off``.
- ``modprobe nvidia_peermem`` (GPUDirect RDMA; ``lsmod`` lists it afterwards) and a
  ``/etc/modules-load.d/*.conf`` written with ``tee``.
"""

from __future__ import annotations

import re
from typing import Any

from fabline.sim.config.stdin import STDIN
from fabline.sim.device import SimDevice
from fabline.sim.render.common import Answer
from fabline.sim.render.linux import DEFAULT_KERNEL, _mlnx_qos

_FEC = {"rs": "rs", "baser": "fc", "off": "none", "auto": "auto"}


def _iface(state: dict[str, Any], name: str) -> dict[str, Any] | None:
    body = (state.get("interfaces") or {}).get(name)
    return body if isinstance(body, dict) else None


def command(dev: SimDevice, argv: list[str]) -> Answer | None:
    """The answer to a host configuration command; None for any other command."""
    state = dev.state()
    if argv[:3] == ["ip", "link", "set"] and "mtu" in argv:
        rest = [a for a in argv[3:] if a != "dev"]
        if len(rest) != 3 or rest[1] != "mtu" or not rest[2].isdigit():
            return Answer("", 255, 'Error: either "dev" is duplicate, or "mtu" is a garbage.\n')
        name, mtu = rest[0], int(rest[2])
        if _iface(state, name) is None:
            return Answer("", 1, f'Cannot find device "{name}"\n')
        if not 68 <= mtu <= 9978:
            return Answer("", 2, "Error: mtu greater than device maximum.\n")
        dev.configure(lambda s: s["interfaces"][name].update(mtu=mtu))
        return Answer("")
    if argv[:1] == ["mlnx_qos"] and any(a in argv for a in ("--trust", "--pfc", "--dscp2prio")):
        return _mlnx_qos_set(dev, argv)
    if argv[:2] == ["mkdir", "-p"] and len(argv) == 3:
        m = re.fullmatch(r"/sys/kernel/config/rdma_cm/(\w+)", argv[2])
        devices = {(b.get("nic") or {}).get("rdma_device") for b in (state.get("interfaces") or {}).values()}
        if m is None or m.group(1) not in devices:
            return Answer("", 1, f"mkdir: cannot create directory '{argv[2]}': No such file or directory\n")
        return Answer("")
    if argv[:1] == ["modprobe"] and len(argv) == 2:
        if argv[1] != "nvidia_peermem":
            kernel = (state.get("facts") or {}).get("kernel") or DEFAULT_KERNEL
            return Answer(
                "", 1, f"modprobe: FATAL: Module {argv[1]} not found in directory /lib/modules/{kernel}\n"
            )
        dev.configure(lambda s: s.setdefault("host", {}).update(gpudirect_rdma=True))
        return Answer("")
    if argv[:1] == ["tee"] and len(argv) == 2:
        return _tee(dev, argv[1], STDIN.get() or "")
    if argv[:2] == ["ethtool", "--set-fec"] and len(argv) == 5 and argv[3] == "encoding" and argv[4] in _FEC:
        name = argv[2]
        if _iface(state, name) is None:
            return Answer("", 1, f"netlink error: no device matches name ({name})\n")
        dev.configure(lambda s: s["interfaces"][name].update(fec=_FEC[argv[4]]))
        return Answer("")
    if argv[:2] == ["ethtool", "-s"] and len(argv) == 5 and argv[3] == "autoneg" and argv[4] in ("on", "off"):
        name = argv[2]
        if _iface(state, name) is None:
            return Answer("", 1, f"netlink error: no device matches name ({name})\n")
        dev.configure(lambda s: s["interfaces"][name].update(autoneg=argv[4] == "on"))
        return Answer("")
    return None


def _mlnx_qos_set(dev: SimDevice, argv: list[str]) -> Answer:
    args = dict(zip(argv[1::2], argv[2::2], strict=False))
    name = args.get("-i", "")
    if _iface(dev.state(), name) is None:
        return Answer("", 1, f"Netlink error: Bad value. see man rtnetlink for help (interface {name})\n")
    change: dict[str, Any] = {}
    if "--trust" in args:
        if args["--trust"] not in ("dscp", "pcp"):
            return Answer("", 1, f"Invalid trust state: {args['--trust']}\n")
        change["trust"] = args["--trust"]
    if "--pfc" in args:
        bits = args["--pfc"].split(",")
        if len(bits) != 8 or any(b not in ("0", "1") for b in bits):
            return Answer("", 1, "Invalid PFC configuration: expected 8 comma-separated 0/1 values\n")
        change["pfc_priorities"] = [i for i, b in enumerate(bits) if b == "1"]
    sets = [v for k, v in zip(argv[1::2], argv[2::2], strict=False) if k == "--dscp2prio"]
    moves = []
    for spec in sets:
        m = re.fullmatch(r"set,(\d+),(\d+)", spec)
        if m is None or int(m.group(1)) > 63 or int(m.group(2)) > 7:
            return Answer("", 1, f"Invalid dscp2prio: {spec}\n")
        moves.append((m.group(1), int(m.group(2))))

    def apply(state: dict[str, Any]) -> None:
        body = state["interfaces"][name]
        body.update(change)
        for d, p in moves:
            body.setdefault("dscp_to_priority", {})[d] = p

    dev.configure(apply)
    return Answer(_mlnx_qos(dev.state()["interfaces"][name]))


def _tee(dev: SimDevice, path: str, text: str) -> Answer:
    state = dev.state()
    value = text.strip()
    ifaces = state.get("interfaces") or {}
    if m := re.fullmatch(r"/sys/kernel/config/rdma_cm/(\w+)/ports/1/default_roce_tos", path):
        port = next(
            (n for n, b in ifaces.items() if (b.get("nic") or {}).get("rdma_device") == m.group(1)), None
        )
        if port is None or not value.isdigit() or int(value) > 255:
            return Answer("", 1, f"tee: {path}: Invalid argument\n")
        dev.configure(lambda s: s["interfaces"][port].setdefault("nic", {}).update(roce_tos=int(value)))
        return Answer(text)
    if m := re.fullmatch(r"/sys/class/net/(\w+)/ecn/roce_(np|rp)/enable/([0-7])", path):
        name, role, prio = m.group(1), m.group(2), int(m.group(3))
        if name not in ifaces or value not in ("0", "1"):
            return Answer("", 1, f"tee: {path}: Invalid argument\n")

        def ecn(s: dict[str, Any]) -> None:
            nic = s["interfaces"][name].setdefault("nic", {})
            on = set(nic.get(f"ecn_{role}_priorities") or [])
            nic[f"ecn_{role}_priorities"] = sorted(on | {prio} if value == "1" else on - {prio})

        dev.configure(ecn)
        return Answer(text)
    if (m := re.fullmatch(r"/sys/class/net/(\w+)/mtu", path)) and m.group(1) in ifaces and value.isdigit():
        name = m.group(1)
        dev.configure(lambda s: s["interfaces"][name].update(mtu=int(value)))
        return Answer(text)
    if path.startswith("/etc/modules-load.d/") and path.endswith(".conf"):
        return Answer(text)  # read at the next boot; the running kernel is what modprobe changed
    if path == "/etc/nccl.conf":
        env = dict(
            ln.split("=", 1) for ln in text.splitlines() if "=" in ln and not ln.lstrip().startswith("#")
        )
        dev.configure(
            lambda s: s.setdefault("host", {}).update(nccl_env={k.strip(): v.strip() for k, v in env.items()})
        )
        return Answer(text)
    return Answer("", 1, f"tee: {path}: Permission denied\n")
