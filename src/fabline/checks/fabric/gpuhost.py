"""Inside the GPU server: PCIe links, GPU-NIC affinity, GPUDirect prerequisites, GPUs, NCCL selection.

Both source articles say a slow collective is often the server, not the switch: a NIC trained at x8
or on the wrong socket, a GID index pointing at a RoCE v1 entry, NCCL using the wrong HCAs (DOMAIN
"Host side"). These checks read what the Linux platform collects (``docs/platforms/linux.md``):
the host-wide sysfs read (PCIe link, NUMA node, IOMMU domain), ``nvidia-smi`` (GPUs, ``topo -m``),
``show_gids`` and the NCCL settings of ``/etc/nccl.conf`` and the declared environment files.

The rail plan is the inventory's ``rail_interfaces``: the NIC at position *i* serves GPU *i*.

A host without the hardware a check judges is ``skipped`` with the reason ("not present"), never a
pass: a rail netdev without a PCIe device (veth, bond, virtio), a host where ``nvidia-smi`` is not
installed. Something that should be there and was not read is ``error``.
"""

from __future__ import annotations

import fnmatch
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import override

from fabline.checks import Check, DeviceContext, FabricContext, P, exact_key
from fabline.results import PassBlock, Result, Severity, Status, capped_join
from fabline.state import unsupported_reason
from fabline.state_types import Gpu, Host, HostNic, Interface


def rail_nics(device: DeviceContext) -> tuple[tuple[int, str, Interface | None], ...]:
    """The host's rail NICs in rail order: (rail index, netdev, its state body or None).

    ``rail_interfaces`` is a list or a comma-separated string (as the collector reads it). Made
    once per device and pass (``device.memo``): every check inside a GPU server reads it.

    Example:
        >>> d = DeviceContext("h", "linux", "host", (), {"rail_interfaces": "eth0, eth1"},
        ...                   {"interfaces": {"eth0": {"mtu": 9000}}}, {})
        >>> rail_nics(d)
        ((0, 'eth0', {'mtu': 9000}), (1, 'eth1', None))
    """
    hit = device.memo.get("gpuhost.rail_nics")
    if hit is None:
        hit = device.memo["gpuhost.rail_nics"] = _rail_nics(device)
    return hit


def _rail_nics(device: DeviceContext) -> tuple[tuple[int, str, Interface | None], ...]:
    rails = device.vars.get("rail_interfaces")
    if isinstance(rails, str):
        rails = [p.strip() for p in rails.split(",") if p.strip()]
    if not isinstance(rails, list):
        return ()
    ifaces = device.interfaces
    out = []
    for i, name in enumerate(rails):
        body = ifaces.get(str(name))
        out.append((i, str(name), body if type(body) is dict or isinstance(body, Mapping) else None))
    return tuple(out)


def _nic(body: Interface | None) -> HostNic:
    nic = body.get("nic") if body is not None else None
    return nic if type(nic) is dict or isinstance(nic, Mapping) else {}  # a dict first: the ABC is slow


def _host(device: DeviceContext) -> Host:
    host = device.state.get("host")
    return host if type(host) is dict or isinstance(host, Mapping) else {}


def command_unavailable(device: DeviceContext, prefix: str) -> str | None:
    """The message of a collection error saying a command starting with ``prefix`` is not installed.

    The collector records a command the host does not have (exit 127, "command not found") as
    ``unavailable``: on a host without NVIDIA GPUs, ``nvidia-smi`` is such a command.

    Example:
        >>> d = DeviceContext("h", "linux", "host", (), {}, {"errors": [{"command": "nvidia-smi topo -m",
        ...     "kind": "unavailable", "message": "command not found on the device (exit 127)"}]}, {})
        >>> command_unavailable(d, "nvidia-smi"), command_unavailable(d, "show_gids")
        ('nvidia-smi topo -m: command not found on the device (exit 127)', None)
    """
    for err in device.state.get("errors") or ():
        if not isinstance(err, Mapping) or err.get("kind") != "unavailable":
            continue
        command = err.get("command")
        if isinstance(command, str) and command.startswith(prefix):
            return f"{command}: {err.get('message', 'unavailable')}"
    return None


def not_collected(
    check: Check[Any], device: DeviceContext, missing: Sequence[str], judged: int, what: str
) -> Iterator[Result]:
    """What a field that the state lacks on rail NICs gives (issue 14: never an error per port).

    Absent on every rail NIC (``judged`` 0): one device-level result, ``error`` when the device's
    collection is ``partial`` (a command failed: the state's ``errors`` say which), else
    ``skipped``: not collected (a collection that does not read it: an older fabline, another
    source). Absent on some of them only: an ``error`` per such NIC, all with the same message (the
    result store keeps them as one block).
    """
    if not missing:
        return
    if judged == 0:
        if device.state.get("status") == "partial":
            yield check.error(device.name, None, f"{what} not collected (see the device's collection errors)")
        else:
            yield check.skipped(device.name, None, f"{what} not collected on this host: not judged")
        return
    for name in missing:
        yield check.error(device.name, name, f"{what} not collected")


def root_read_missing(device: DeviceContext, path: str, prefix: str) -> str | None:
    """Why a root-only read's value is missing: not run (``unsupported``) or refused (``unavailable``).

    Without ``fabline_sudo`` the collector does not send the command and records the paths only it
    provides as ``unsupported`` with the reason; sent, a refusal by sudo is an ``unavailable`` error.

    Example:
        >>> d = DeviceContext("h", "linux", "host", (), {}, {"unsupported": {"host.pcie_bridges": "not run"}}, {})
        >>> root_read_missing(d, "host.pcie_bridges", "sudo -n lspci")
        'not run'
    """
    return unsupported_reason(device.state.get("unsupported"), path) or command_unavailable(device, prefix)


def _gpus(device: DeviceContext) -> Mapping[str, Gpu] | None:
    gpus = _host(device).get("gpus")
    return gpus if type(gpus) is dict or isinstance(gpus, Mapping) else None


def _no_gpu_reason(check: Check[Any], device: DeviceContext) -> Result | None:
    """A ``skipped`` (no NVIDIA GPU tooling: not present) or ``error`` (not collected) when GPUs are unknown."""
    if _gpus(device) is not None:
        return None
    missing = command_unavailable(device, "nvidia-smi")
    if missing:
        return check.skipped(device.name, None, f"no NVIDIA GPU on this host: not present ({missing})")
    return next(not_collected(check, device, [""], 0, "host.gpus (nvidia-smi)"))


class GpuServerCheck(Check[P]):
    """Base of the checks inside a GPU server (not registered itself): hosts only, live hardware.

    The state they read (PCIe links, GPUs, GIDs) exists only on a running server, never in a rendered
    config (``operational``). A check with ``needs_gpus`` is ``skipped`` (not present) or ``error``
    (not collected) where the host's GPUs are unknown, before its :meth:`judge` sees the device.
    """

    tags = ("operational",)
    roles = ("host",)
    needs_gpus: ClassVar[bool] = False

    @override
    def check_device(self, device: DeviceContext) -> Iterable[Result]:
        reason = _no_gpu_reason(self, device) if self.needs_gpus else None
        if reason is not None:
            yield reason
            return
        yield from self.judge(device)

    def judge(self, device: DeviceContext) -> Iterable[Result]:
        """The check of one host whose prerequisites are there."""
        raise NotImplementedError


# --- PCIe ---------------------------------------------------------------------------------------


class PcieParams(BaseModel):
    """Parameters of host-pcie-link."""

    model_config = ConfigDict(extra="forbid")

    min_width: int = Field(
        16, ge=1, le=32, description="lanes every rail NIC must train at (a 400G NIC needs x16)"
    )


class HostPcieLinkCheck(GpuServerCheck[PcieParams]):
    """Every rail NIC's PCIe link trained at its full width and speed (x16 at its generation's rate).

    A 400G ConnectX-7 needs PCIe Gen5 x16 (about 500 Gb/s); trained at x8, or at Gen4 speed after a
    riser or slot problem, it caps that rail at half its bandwidth while every link test passes.
    Reads sysfs ``current_link_width/speed`` against ``max_link_width/speed`` of each rail NIC's
    device; fails below ``min_width`` lanes too. A rail netdev without a PCIe device (veth, bond,
    virtio) is ``skipped``: not present.
    """

    id = "host-pcie-link"

    @override
    def judge(self, device: DeviceContext) -> Iterable[Result]:
        ok: list[str | None] = []
        missing: list[str] = []
        nics = rail_nics(device)
        for _i, name, body in nics:
            pcie = _nic(body).get("pcie")
            if not isinstance(pcie, Mapping):
                missing.append(name)
                continue
            if pcie.get("present") is False:
                yield self.skipped(
                    device.name,
                    name,
                    f"{name}: no PCIe device reports a link behind this netdev: not present",
                )
                continue
            width, max_width = pcie.get("width"), pcie.get("max_width")
            speed, max_speed = pcie.get("speed_gts"), pcie.get("max_speed_gts")
            if not isinstance(width, int) or not isinstance(speed, (int, float)):
                yield self.error(
                    device.name, name, f"{name}: PCIe link width or speed not reported (link down?)"
                )
                continue
            problems = []
            if isinstance(max_width, int) and width < max_width:
                problems.append(f"x{width} of x{max_width}")
            elif width < self.params.min_width:
                problems.append(f"x{width}, below x{self.params.min_width}")
            if isinstance(max_speed, (int, float)) and speed < max_speed:
                problems.append(f"{speed:g} GT/s of {max_speed:g} GT/s")
            if not problems:
                ok.append(name)
                continue
            yield self.failed(
                device.name, name,
                f"{device.name} {name}: PCIe link trained at {' and '.join(problems)} (reseat the NIC, check the "
                "slot and riser, or the BIOS bifurcation)",
                expected={"width": max(max_width or 0, self.params.min_width), "speed_gts": max_speed},
                actual={"width": width, "speed_gts": speed},
            )  # fmt: skip
        yield from not_collected(
            self, device, missing, len(nics) - len(missing), "nic.pcie (host sysfs read)"
        )
        if ok:
            yield PassBlock(self.id, device.name, self.effective_severity, ok)


class AffinityParams(BaseModel):
    """Parameters of gpu-nic-affinity."""

    model_config = ConfigDict(extra="forbid")

    allowed_paths: list[str] = Field(
        default_factory=lambda: ["PIX", "PXB"],
        description="nvidia-smi topo -m paths accepted between GPU i and rail NIC i (same PCIe switch)",
    )


class GpuNicAffinityCheck(GpuServerCheck[AffinityParams]):
    """Rail NIC i sits on the PCIe switch and NUMA node of GPU i, as the rail plan pairs them.

    GPUDirect RDMA moves data between a GPU and the NIC that serves its rail; when that NIC sits
    behind another PCIe switch or on the other socket (``topo -m`` PHB, NODE or SYS), every transfer
    crosses the host bridge or the inter-socket link and the rail runs slower than its peers. The
    rail plan is the order of ``rail_interfaces``: NIC i serves GPU i. Reads ``nvidia-smi topo -m``
    (path from GPU i to the NIC's RDMA device) and the NICs' sysfs ``numa_node``.
    """

    id = "gpu-nic-affinity"
    needs_gpus = True

    @override
    def judge(self, device: DeviceContext) -> Iterable[Result]:
        gpus = _gpus(device) or {}
        allowed = set(self.params.allowed_paths)
        ok: list[str | None] = []
        missing: list[str] = []
        nics = rail_nics(device)
        for i, name, body in nics:
            nic = _nic(body)
            gpu = gpus.get(str(i))
            rdma = nic.get("rdma_device")
            if not isinstance(gpu, Mapping):
                yield self.failed(
                    device.name, name, f"{device.name} {name}: rail {i} has no GPU {i} (nvidia-smi lists {len(gpus)})",
                    expected={"gpu": i}, actual={"gpus": len(gpus)},
                )  # fmt: skip
                continue
            if not isinstance(rdma, str):
                missing.append(name)
                continue
            paths = gpu.get("nic_paths")
            path = paths.get(rdma) if isinstance(paths, Mapping) else None
            if not isinstance(path, str):
                yield self.error(
                    device.name, name, f"{name}: nvidia-smi topo -m shows no path from GPU {i} to {rdma}"
                )
                continue
            problems = []
            if path not in allowed:
                best = _closest_gpu(gpus, rdma)
                hint = f"; {rdma} is {best[1]} to GPU {best[0]}" if best and best[0] != str(i) else ""
                problems.append(f"GPU {i} reaches {rdma} over {path}, not {'/'.join(sorted(allowed))}{hint}")
            gpu_numa, nic_numa = gpu.get("numa_node"), nic.get("numa_node")
            if (
                isinstance(gpu_numa, int)
                and isinstance(nic_numa, int)
                and nic_numa >= 0
                and gpu_numa != nic_numa
            ):
                problems.append(f"{name} is on NUMA node {nic_numa}, GPU {i} on {gpu_numa}")
            if not problems:
                ok.append(name)
                continue
            yield self.failed(
                device.name, name, f"{device.name} {name} (rail {i}): {'; '.join(problems)}",
                expected={"gpu": i, "path": sorted(allowed), "numa_node": gpu_numa},
                actual={"rdma_device": rdma, "path": path, "numa_node": nic_numa},
            )  # fmt: skip
        yield from not_collected(
            self, device, missing, len(nics) - len(missing), "nic.rdma_device (show_gids)"
        )
        if ok:
            yield PassBlock(self.id, device.name, self.effective_severity, ok)


#: topo -m paths from nearest to farthest (NVLink words never join a GPU to a NIC).
_PATH_RANK = MappingProxyType({"PIX": 0, "PXB": 1, "PHB": 2, "NODE": 3, "SYS": 4})


def _closest_gpu(gpus: Mapping[str, Gpu], rdma: str) -> tuple[str, str] | None:
    """The GPU nearest to an RDMA NIC by topo -m path, with the path (None when no GPU lists it)."""
    best: tuple[int, str, str] | None = None
    for index, gpu in gpus.items():
        paths = gpu.get("nic_paths") if isinstance(gpu, Mapping) else None
        path = paths.get(rdma) if isinstance(paths, Mapping) else None
        if isinstance(path, str) and path in _PATH_RANK:
            rank = (_PATH_RANK[path], index, path)
            if best is None or rank[0] < best[0]:
                best = rank
    return (best[1], best[2]) if best else None


#: IOMMU group types (``/sys/kernel/iommu_groups/N/type``) that leave DMA untranslated.
_PASSTHROUGH_DOMAINS = frozenset({"identity"})
_IOMMU_OFF = re.compile(r"^(?:iommu=(?:off|pt)|intel_iommu=off|amd_iommu=off|iommu\.passthrough=1)$")


class HostIommuCheck(GpuServerCheck):
    """The IOMMU leaves rail NICs' DMA untranslated (passthrough or off), as GPUDirect RDMA needs.

    NVIDIA's GPUDirect RDMA guidance: with the IOMMU translating DMA (group type ``DMA``/``DMA-FQ``),
    peer-to-peer reads from the NIC into GPU memory go through the root complex or fail, and the
    rail falls back to bouncing through host memory; boot with ``iommu=pt`` (or the IOMMU off). Reads
    the rail NICs' IOMMU group type from sysfs and the IOMMU kernel parameters. ACS on the PCIe
    switches (the other prerequisite) needs root to read and is not judged here.
    """

    id = "host-iommu"

    @override
    def judge(self, device: DeviceContext) -> Iterable[Result]:
        params = _host(device).get("iommu_params")
        params = [p for p in params if isinstance(p, str)] if isinstance(params, list) else None
        ok: list[str | None] = []
        missing: list[str] = []
        nics = rail_nics(device)
        for _i, name, body in nics:
            nic = _nic(body)
            pcie = nic.get("pcie")
            if not isinstance(pcie, Mapping):
                missing.append(name)
                continue
            if pcie.get("present") is False:
                yield self.skipped(
                    device.name, name, f"{name}: no PCIe device behind this netdev: not present"
                )
                continue
            domain = nic.get("iommu_domain")
            if domain is None or domain in _PASSTHROUGH_DOMAINS:
                # No IOMMU group: the IOMMU does not manage the device (off, or not in this machine).
                ok.append(name)
                continue
            off = [p for p in params or () if _IOMMU_OFF.match(p)]
            yield self.failed(
                device.name, name,
                f"{device.name} {name}: the IOMMU translates the NIC's DMA (group type {domain}); boot with "
                "iommu=pt for GPUDirect RDMA" + (f" (kernel parameters: {' '.join(params or [])})" if params else ""),
                expected={"iommu_domain": "identity (passthrough) or no IOMMU group"},
                actual={"iommu_domain": domain, "iommu_params": params, "passthrough_params": off},
            )  # fmt: skip
        yield from not_collected(
            self, device, missing, len(nics) - len(missing), "the NIC's IOMMU group (host sysfs read)"
        )
        if ok:
            yield PassBlock(self.id, device.name, self.effective_severity, ok)


class AcsParams(BaseModel):
    """Parameters of host-acs."""

    model_config = ConfigDict(extra="forbid")

    harmless: list[str] = Field(
        default_factory=lambda: ["DirectTrans"],
        description="ACSCtl bits that do not redirect peer-to-peer traffic (Direct Translated P2P)",
    )


def _bus(address: Any) -> tuple[str, int] | None:
    """(PCI domain, bus number) of a ``0000:18:00.0`` address.

    Example:
        >>> _bus("0000:1a:00.0"), _bus("nope")
        (('0000', 26), None)
    """
    m = _PCI_ADDRESS.fullmatch(str(address))
    return (m[1].lower(), int(m[2], 16)) if m else None


_PCI_ADDRESS = re.compile(r"([0-9a-fA-F]{4}):([0-9a-fA-F]{2}):[0-9a-fA-F]{2}\.[0-7]")


def bridges_between(bridges: Mapping[str, Any], one: tuple[str, int], other: tuple[str, int]) -> list[str]:
    """The PCIe bridges on the path between two devices: those above exactly one of them.

    A bridge is above a device when the device's bus is in its secondary..subordinate range; the
    bridges above both (the switch's upstream port, the root port) are where the path turns, not on it.

    Example:
        >>> b = {"0000:17:00.0": {"secondary": 0x18, "subordinate": 0x1b},
        ...      "0000:18:00.0": {"secondary": 0x19, "subordinate": 0x19},
        ...      "0000:18:01.0": {"secondary": 0x1a, "subordinate": 0x1a}}
        >>> bridges_between(b, ("0000", 0x19), ("0000", 0x1a))
        ['0000:18:00.0', '0000:18:01.0']
    """
    return _between(bridge_ranges(bridges), one, other)


def bridge_ranges(bridges: Mapping[str, Any]) -> list[tuple[str, str, int, int]]:
    """The bridges that say which buses they lead to: (address, PCI domain, secondary, subordinate),
    read once per host for :func:`bridges_between` of each GPU and NIC pair.
    """
    out = []
    for address, bridge in bridges.items():
        if not isinstance(bridge, Mapping):
            continue
        lo, hi = bridge.get("secondary"), bridge.get("subordinate")
        if isinstance(lo, int) and isinstance(hi, int):
            out.append((address, address[:4].lower(), lo, hi))
    return out


def _between(
    ranges: list[tuple[str, str, int, int]], one: tuple[str, int], other: tuple[str, int]
) -> list[str]:
    (d1, b1), (d2, b2) = one, other
    return sorted(
        address
        for address, domain, lo, hi in ranges
        if (domain == d1 and lo <= b1 <= hi) != (domain == d2 and lo <= b2 <= hi)
    )


_NO_GPU_ADDRESS = "PCI address of this rail's GPU not collected (host.gpus pci_address)"
_NO_NIC_ADDRESS = "PCI address of this NIC not collected (nic.pci_address)"


class HostAcsCheck(GpuServerCheck[AcsParams]):
    """ACS is off on every PCIe bridge between GPU i and rail NIC i (GPUDirect RDMA stays peer-to-peer).

    With Access Control Services redirecting requests (``ReqRedir``, ``CmpltRedir``, ``SrcValid``) on
    a switch port between a GPU and its NIC, every peer-to-peer transfer is sent up to the root
    complex: GPUDirect RDMA slows to a fraction of the link or hangs (NCCL's troubleshooting guide:
    disable ACS). Reads the ACS control bits of ``sudo -n lspci -vvv`` (root only: ``skipped`` with
    the reason where the inventory does not enable ``fabline_sudo`` or sudo refuses) and the GPU's
    and NIC's PCI addresses; the bridges on the path are those above exactly one of the two.
    """

    id = "host-acs"
    needs_gpus = True

    def __init__(self, params: Any = None, severity: Severity | None = None) -> None:
        super().__init__(params, severity)
        self._harmless = frozenset(self.params.harmless)
        # The verdicts of each distinct (bridges, GPU and NIC addresses) of a host, by its
        # exact_key: the hosts of one model share them (a 100k-GPU fabric: 12,500 hosts, one value).
        self._seen: dict[bytes, list[tuple[str, Any]]] = {}

    @override
    def judge(self, device: DeviceContext) -> Iterable[Result]:
        bridges = _host(device).get("pcie_bridges")
        if not isinstance(bridges, Mapping):
            missing = root_read_missing(device, "host.pcie_bridges", "sudo -n lspci")
            if missing:
                yield self.skipped(device.name, None, f"ACS state not readable: unavailable ({missing})")
            else:
                yield from not_collected(self, device, [""], 0, "host.pcie_bridges (sudo -n lspci -vvv)")
            return
        gpus = _gpus(device) or {}
        nics = rail_nics(device)
        addresses = []
        for i, _name, body in nics:
            gpu = gpus.get(str(i))
            addresses.append(
                (gpu.get("pci_address") if isinstance(gpu, Mapping) else None, _nic(body).get("pci_address"))
            )
        verdicts = self._verdicts(bridges, addresses)
        ok: list[str | None] = []
        # Ports whose path has a bridge lspci could not read: one message for the host (the
        # subject names the port), so they fold into one row as the other messages do.
        unreadable_at: list[tuple[str, list[str]]] = []
        for (i, name, _body), (kind, what) in zip(nics, verdicts, strict=True):
            if kind == "ok":
                ok.append(name)
            elif kind == "address":
                # One message per reason (the subject names the port): a host's ports fold into one row.
                yield self.error(device.name, name, what)
            elif kind == "unreadable":
                unreadable_at.append((name, what))
            else:
                where = "; ".join(
                    f"{b} ({bridges[b].get('name', 'bridge')}): {' '.join(f)}" for b, f in what.items()
                )
                yield self.failed(
                    device.name, name,
                    f"{device.name} {name} (rail {i}): ACS redirects peer-to-peer traffic between GPU {i} and "
                    f"the NIC on {where}; disable ACS (BIOS, or setpci) for GPUDirect RDMA",
                    expected={"acs_ctl": sorted(self._harmless) or []},
                    actual={b: list(f) for b, f in what.items()},
                )  # fmt: skip
        if unreadable_at:
            every = sorted({b for _, path in unreadable_at for b in path})
            message = (
                f"ACS of the PCIe bridges between GPUs and rail NICs not readable (lspci not run as root): "
                f"{capped_join(every, ', ')}"
            )
            for name, _ in unreadable_at:
                yield self.error(device.name, name, message)
        if ok:
            yield PassBlock(self.id, device.name, self.effective_severity, ok)

    def _verdicts(
        self, bridges: Mapping[str, Any], addresses: list[tuple[Any, Any]]
    ) -> list[tuple[str, Any]]:
        """Each rail's verdict, from the host's bridges and its (GPU, NIC) PCI addresses: ``ok``,
        ``address`` (the message), ``unreadable`` (the bridges lspci could not read on the path) or
        ``enabled`` (bridge -> its redirecting ACS bits). Remembered by the inputs' :func:`exact_key`
        (exact types, key order); inputs it cannot write (an Invalid) are judged each time.
        """
        key = exact_key((bridges, addresses))
        if key is None:
            return self._judge_paths(bridges, addresses)
        hit = self._seen.get(key)
        if hit is None:
            hit = self._judge_paths(bridges, addresses)
            if len(self._seen) < 256:
                self._seen[key] = hit
        return hit

    def _judge_paths(
        self, bridges: Mapping[str, Any], addresses: list[tuple[Any, Any]]
    ) -> list[tuple[str, Any]]:
        harmless = self._harmless
        ranges = bridge_ranges(bridges)
        out: list[tuple[str, Any]] = []
        for gpu_address, nic_address in addresses:
            nic_at = _bus(nic_address)
            gpu_at = _bus(gpu_address) if gpu_address is not None else None
            if gpu_at is None or nic_at is None:
                out.append(("address", _NO_GPU_ADDRESS if gpu_at is None else _NO_NIC_ADDRESS))
                continue
            path = _between(ranges, gpu_at, nic_at)
            unreadable = [b for b in path if bridges[b].get("config_readable") is False]
            enabled = {
                b: tuple(flags)
                for b in path
                if (flags := [f for f in bridges[b].get("acs_ctl") or () if f not in harmless])
            }
            if unreadable:
                out.append(("unreadable", unreadable))
            elif enabled:
                out.append(("enabled", enabled))
            else:
                out.append(("ok", None))
        return out


# --- GPUs ---------------------------------------------------------------------------------------


class GpuCountCheck(GpuServerCheck):
    """A GPU server has one rail NIC per GPU (GPU count equals the rail NIC count).

    In a rail-optimized fabric every GPU has its own rail NIC; a server showing fewer GPUs than rail
    NICs lost a GPU (fallen off the bus, or hidden by an XID error), one with more GPUs than rails
    makes two GPUs share a NIC. Reads ``nvidia-smi --query-gpu`` and ``rail_interfaces``.
    """

    id = "host-gpu-count"
    needs_gpus = True

    @override
    def judge(self, device: DeviceContext) -> Iterable[Result]:
        gpus = len(_gpus(device) or {})
        rails = len(rail_nics(device))
        if rails == 0:
            yield self.error(device.name, None, f"{device.name}: no rail_interfaces inventory variable")
        elif gpus == rails:
            yield self.passed(device.name, None, expected=rails, actual=gpus)
        else:
            yield self.failed(
                device.name, None, f"{device.name}: {gpus} GPUs for {rails} rail NICs",
                expected={"gpus": rails}, actual={"gpus": gpus},
            )  # fmt: skip


class FabricManagerParams(BaseModel):
    """Parameters of host-fabric-manager."""

    model_config = ConfigDict(extra="forbid")

    gpus: list[str] = Field(
        default_factory=lambda: ["*SXM*", "*HBM3*", "*H200*", "*B200*", "*GB200*"],
        description="GPU name globs (nvidia-smi) of NVSwitch systems that need Fabric Manager",
    )


class FabricManagerCheck(GpuServerCheck[FabricManagerParams]):
    """NVIDIA Fabric Manager is active on NVSwitch GPU servers (HGX/DGX H100, A100 SXM, B200).

    On NVSwitch systems the GPUs join the NVLink fabric only once Fabric Manager has configured the
    switches; with the service stopped, CUDA reports no NVLink peers and NCCL falls back to PCIe and
    the network for traffic that should stay in the server. Reads ``systemctl show
    nvidia-fabricmanager``; servers whose GPUs match none of ``gpus`` (PCIe cards) are ``skipped``.
    """

    id = "host-fabric-manager"
    needs_gpus = True

    @override
    def judge(self, device: DeviceContext) -> Iterable[Result]:
        names = {str(g.get("name")) for g in (_gpus(device) or {}).values() if isinstance(g, Mapping)}
        if not any(fnmatch.fnmatchcase(n, pat) for n in names for pat in self.params.gpus):
            yield self.skipped(device.name, None, f"GPUs {', '.join(sorted(names))}: no NVSwitch system")
            return
        state = _host(device).get("fabric_manager")
        unreadable = command_unavailable(device, "systemctl show") if state is None else None
        if unreadable:
            yield self.skipped(device.name, None, f"no systemd to ask: not present ({unreadable})")
        elif state is None:
            yield self.error(device.name, None, "host.fabric_manager not collected (systemctl show)")
        elif state == "active":
            yield self.passed(device.name, None, expected="active", actual=state)
        else:
            yield self.failed(
                device.name, None,
                f"{device.name}: nvidia-fabricmanager is "
                + ("not installed" if state == "not-found" else str(state))
                + " on an NVSwitch system",
                expected="active", actual=state,
            )  # fmt: skip


# --- NCCL ---------------------------------------------------------------------------------------


def nccl_env(device: DeviceContext) -> Mapping[str, str] | None:
    """The host's NCCL settings (``/etc/nccl.conf`` and the declared env files), None when none was read."""
    env = _host(device).get("nccl_env")
    return env if isinstance(env, Mapping) else None


def nccl_selects(spec: str, names: Iterable[str]) -> set[str]:
    """The names an NCCL interface/HCA list selects (``NCCL_IB_HCA``, ``NCCL_SOCKET_IFNAME`` syntax).

    NCCL's syntax: a comma-separated list; ``^`` first excludes the listed names, ``=`` first makes
    them exact names instead of prefixes; ``:port`` after an HCA name is its port.

    Example:
        >>> names = ["mlx5_0", "mlx5_1", "mlx5_10", "mlx5_bond_0"]
        >>> sorted(nccl_selects("mlx5_1", names)), sorted(nccl_selects("=mlx5_1:1", names))
        (['mlx5_1', 'mlx5_10'], ['mlx5_1'])
        >>> sorted(nccl_selects("^mlx5_bond", names))
        ['mlx5_0', 'mlx5_1', 'mlx5_10']
    """
    text = spec.strip()
    exclude = text.startswith("^")
    text = text.lstrip("^")
    exact = text.startswith("=")
    text = text.lstrip("=")
    wanted = [w.strip().split(":")[0] for w in text.split(",") if w.strip()]

    def hit(name: str) -> bool:
        return any(name == w if exact else name.startswith(w) for w in wanted)

    return {n for n in names if hit(n) != exclude}


class NcclGidIndexCheck(GpuServerCheck):
    """NCCL_IB_GID_INDEX names a RoCE v2 IPv4 GID on every rail NIC, the same index fleet-wide.

    NCCL sends RoCE with the GID at that index: a RoCE v1 entry is not routable across the leaf-spine
    fabric, a link-local (fe80) v2 entry carries no routable address; either makes NCCL fall back or
    hang. Every host must use the same index (launchers pass one value to every rank). Reads
    ``show_gids`` per rail NIC and ``NCCL_IB_GID_INDEX`` from the NCCL settings; unset, NCCL picks
    the GID itself (``skipped``).
    """

    id = "nccl-gid-index"
    severity = Severity.CRITICAL
    scope = "fabric"

    @override
    def collect(self, device: DeviceContext) -> tuple[Any, ...]:
        env = nccl_env(device)
        if env is None:
            return ("skip", "no NCCL settings collected (/etc/nccl.conf or a declared env file)")
        index = env.get("NCCL_IB_GID_INDEX")
        if index is None:
            return ("skip", "NCCL_IB_GID_INDEX not set: NCCL selects the GID itself")
        if not str(index).strip().isdigit():
            return ("fail", index, [(None, "fail", f"NCCL_IB_GID_INDEX {index!r} is not a number")])
        want = int(str(index).strip())
        if not any(_nic(b).get("rdma_device") for _i, _n, b in rail_nics(device)):
            unavailable = command_unavailable(device, "show_gids")
            if unavailable:
                return ("skip", f"no RDMA device on the rail NICs: not present ({unavailable})")
        findings: list[tuple[str | None, str, str]] = []
        wrong: list[str] = []
        v2_at: set[int] = set()
        ok: list[str] = []
        nics = rail_nics(device)
        no_gids: list[str] = []
        for _i, name, body in nics:
            nic = _nic(body)
            gids = nic.get("gids")
            if not isinstance(gids, list):
                no_gids.append(name)
                continue
            gid = next(
                (g for g in gids if (type(g) is dict or isinstance(g, Mapping)) and g.get("index") == want),
                None,
            )
            dev = str(nic.get("rdma_device", name))
            v2_at.update(
                g["index"]
                for g in gids
                if (type(g) is dict or isinstance(g, Mapping)) and g.get("version") == "v2" and g.get("ipv4")
            )
            if gid is None:
                wrong.append(f"{dev} has none")
            elif gid.get("version") != "v2":
                wrong.append(f"{dev}: RoCE {gid.get('version')}")
            elif not gid.get("ipv4"):
                wrong.append(f"{dev}: RoCE v2 without IPv4")
            else:
                ok.append(name)
        if wrong:
            # One setting per host: one finding naming every NIC it is wrong on.
            where = (
                f"RoCE v2 IPv4 at {', '.join(map(str, sorted(v2_at)))}" if v2_at else "no RoCE v2 IPv4 GID"
            )
            findings.append(
                ("NCCL_IB_GID_INDEX", "fail", f"GID {want} is not RoCE v2 IPv4 ({'; '.join(wrong)}; {where})")
            )
        findings += [
            (r.subject, "skip" if r.status is Status.SKIPPED else "error", r.message)
            for r in not_collected(self, device, no_gids, len(nics) - len(no_gids), "nic.gids (show_gids)")
        ]
        return ("index", str(want), findings, ok)

    @override
    def check_fabric(self, fabric: FabricContext) -> Iterable[Result]:
        # The fleet's index: what the hosts whose index works on their own NICs use.
        indexes = Counter(row[1] for row in fabric.collected.values() if row[0] == "index" and not row[2])
        top = indexes.most_common(2)
        majority = top[0][0] if top and (len(top) == 1 or top[0][1] > top[1][1]) else None
        for name in sorted(fabric.collected):
            row = fabric.collected[name]
            if row[0] == "skip":
                yield self.skipped(name, None, row[1])
                continue
            for subject, kind, message in row[2]:
                if kind == "error":
                    yield self.error(name, subject, message)
                elif kind == "skip":
                    yield self.skipped(name, subject, message)
                else:
                    yield self.failed(
                        name, subject or "NCCL_IB_GID_INDEX", f"{name}: NCCL_IB_GID_INDEX: {message}",
                        expected={"gid": "RoCE v2 with IPv4"}, actual={"NCCL_IB_GID_INDEX": row[1]},
                    )  # fmt: skip
            if row[0] != "index":
                continue
            # A host whose index is wrong on its own NICs is reported above; the fleet comparison
            # names the hosts where the index works but differs from the rest of the fleet.
            if len(indexes) > 1 and row[1] != majority and not row[2]:
                spread = ", ".join(f"{v} ({n} hosts)" for v, n in indexes.most_common())
                yield self.failed(
                    name, "NCCL_IB_GID_INDEX",
                    f"{name}: NCCL_IB_GID_INDEX {row[1]}; the fleet uses {spread}",
                    expected=majority or "one index fleet-wide", actual=row[1],
                )  # fmt: skip
            elif row[3]:
                yield PassBlock(self.id, name, self.effective_severity, list(row[3]))


class NcclHcaCheck(GpuServerCheck):
    """NCCL_IB_HCA selects exactly the rail NICs' RDMA devices (unset: every RDMA device).

    NCCL spreads its rings over the HCAs ``NCCL_IB_HCA`` selects: a missing rail HCA leaves a rail
    (and its GPU's bandwidth) unused, an extra one (a storage or frontend NIC) sends collective
    traffic into a network that is not the lossless rail fabric. NCCL's syntax: prefixes, ``=`` for
    exact names, ``^`` to exclude. Compared with the rail NICs' ``nic.rdma_device``.
    """

    id = "nccl-ib-hca"

    @override
    def judge(self, device: DeviceContext) -> Iterable[Result]:
        env = nccl_env(device)
        rails = {
            str(_nic(b).get("rdma_device")) for _i, _n, b in rail_nics(device) if _nic(b).get("rdma_device")
        }
        if not rails:
            reason = command_unavailable(device, "show_gids")
            if reason:
                yield self.skipped(
                    device.name, None, f"no RDMA device on the rail NICs: not present ({reason})"
                )
            else:
                yield self.error(
                    device.name, None, "the rail NICs' RDMA devices were not collected (show_gids)"
                )
            return
        if env is None:
            yield self.skipped(
                device.name, None, "no NCCL settings collected (/etc/nccl.conf or a declared env file)"
            )
            return
        devices = set(rails)
        listed = _host(device).get("rdma_devices")
        if isinstance(listed, Mapping):
            devices |= {str(d) for d in listed}
        spec = env.get("NCCL_IB_HCA")
        chosen = devices if spec is None else nccl_selects(str(spec), devices)
        missing, extra = sorted(rails - chosen), sorted(chosen - rails)
        shown = "unset (every RDMA device)" if spec is None else repr(spec)
        if not missing and not extra:
            yield self.passed(device.name, "NCCL_IB_HCA", expected=sorted(rails), actual=spec)
            return
        parts = ([f"leaves out rail HCAs {', '.join(missing)}"] if missing else []) + (
            [f"also selects {', '.join(extra)} (not a rail NIC)"] if extra else []
        )
        yield self.failed(
            device.name, "NCCL_IB_HCA", f"{device.name}: NCCL_IB_HCA {shown} {' and '.join(parts)}",
            expected=sorted(rails), actual={"NCCL_IB_HCA": spec, "selected": sorted(chosen)},
        )  # fmt: skip


class NcclSocketIfnameCheck(Check):
    """NCCL_SOCKET_IFNAME keeps NCCL's bootstrap and socket traffic off the rail NICs.

    NCCL's out-of-band bootstrap (and its socket transport fallback) uses the interfaces
    ``NCCL_SOCKET_IFNAME`` selects: pointed at a rail NIC, that TCP traffic lands in the lossless RoCE
    fabric (or its fallback runs collectives over TCP on a rail). Same syntax as NCCL_IB_HCA
    (prefixes, ``=``, ``^``); unset, NCCL picks an interface itself (``skipped``).
    """

    id = "nccl-socket-ifname"
    severity = Severity.MINOR
    roles = ("host",)

    @override
    def check_device(self, device: DeviceContext) -> Iterable[Result]:
        env = nccl_env(device)
        spec = env.get("NCCL_SOCKET_IFNAME") if env is not None else None
        if spec is None:
            why = (
                "no NCCL settings collected"
                if env is None
                else "NCCL_SOCKET_IFNAME not set: NCCL picks the interface"
            )
            yield self.skipped(device.name, None, why)
            return
        rails = [name for _i, name, _b in rail_nics(device)]
        hits = sorted(nccl_selects(str(spec), rails))
        if hits:
            yield self.failed(
                device.name, "NCCL_SOCKET_IFNAME",
                f"{device.name}: NCCL_SOCKET_IFNAME {spec!r} selects rail NICs {', '.join(hits)}",
                expected="no rail NIC", actual={"NCCL_SOCKET_IFNAME": spec, "rail_nics": hits},
            )  # fmt: skip
        else:
            yield self.passed(device.name, "NCCL_SOCKET_IFNAME", expected="no rail NIC", actual=spec)


GPUHOST_CHECKS = (
    HostPcieLinkCheck,
    GpuNicAffinityCheck,
    HostIommuCheck,
    HostAcsCheck,
    GpuCountCheck,
    FabricManagerCheck,
    NcclGidIndexCheck,
    NcclHcaCheck,
    NcclSocketIfnameCheck,
)
