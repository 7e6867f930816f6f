"""The cabling and addressing that follow from a design's positions.

Rules (one plane shown; planes repeat it with their own leaves and spines):

- GPU server *h*'s NIC port for rail *g* is ``eth{g}`` (rail *g* = plane * gpus_per_server +
  GPU index), cabled to leaf ``(g, h // down)`` at its host port ``h % down``.
- Leaf uplink *u* (ports ``down`` .. ``R-1``) goes to spine ``u // k`` of its plane, at spine port
  ``leaf_in_plane * k + u % k`` (``k`` links per leaf-spine pair).
- Leaf-spine link *n* is the /31 ``fabric_links + 2n`` (spine the even address, leaf the odd);
  leaf-host link *n* is ``host_links + 2n`` (leaf even, host odd).

Port names are each platform's canonical names (:func:`fabline.synthetic.port_name`).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from dataclasses import dataclass

from fabline.design.model import Design, SwitchSpec
from fabline.errors import ConfigError
from fabline.synthetic import port_name


@dataclass(frozen=True)
class Port:
    """One port of a device with its planned peer (``peer`` None: unused port)."""

    name: str
    index: int
    speed_gbps: int
    kind: str  # "host" (faces a GPU NIC), "fabric" (leaf-spine) or "unused"
    peer: str | None = None
    peer_port: str | None = None
    address: str | None = None  # this end, with prefix length (10.128.0.1/31)
    peer_address: str | None = None  # bare address
    peer_asn: int | None = None


@dataclass(frozen=True)
class Link:
    """One planned cable, written once (device side first as in ``cabling.csv``)."""

    device: str
    port: str
    peer_device: str
    peer_port: str
    rail: int | None
    plane: int


class Topology:
    """Positions -> names, ports, links and addresses of a design, computed on demand."""

    def __init__(self, design: Design) -> None:
        self.design = design
        s = design.sized()
        self.sizing = s
        self.down = s.down_ports
        self.up = s.up_ports
        self.k = s.links_per_leaf_spine
        self.speed = s.link_speed_gbps
        self.leaves: dict[tuple[int, int], SwitchSpec] = {}
        self.spines: dict[tuple[int, int], SwitchSpec] = {}
        for sw in design.switches:
            if sw.role == "leaf":
                assert sw.rail is not None
                self.leaves[(sw.rail, sw.index)] = sw
            else:
                self.spines[(sw.plane, sw.index)] = sw
        self.by_name = {sw.name: sw for sw in design.switches}
        pools = design.addressing
        self._fabric_net = ipaddress.IPv4Network(pools.fabric_links)
        self._host_net = ipaddress.IPv4Network(pools.host_links)
        if 2 * s.fabric_links > self._fabric_net.num_addresses:
            raise ConfigError(
                f"fabric_links pool is too small for {s.fabric_links} /31s", key="addressing.fabric_links"
            )
        if 2 * s.host_links > self._host_net.num_addresses:
            raise ConfigError(
                f"host_links pool is too small for {s.host_links} /31s", key="addressing.host_links"
            )

    # ---------------------------------------------------------------- positions

    def leaf_in_plane(self, leaf: SwitchSpec) -> int:
        """Position of a leaf among its plane's leaves (rail-major)."""
        assert leaf.rail is not None
        return (leaf.rail % self.sizing.rails) * self.sizing.leaves_per_rail + leaf.index

    def leaf_number(self, leaf: SwitchSpec) -> int:
        """Fabric-wide leaf number (rail-major), used for addressing."""
        assert leaf.rail is not None
        return leaf.rail * self.sizing.leaves_per_rail + leaf.index

    def host_name(self, h: int) -> str:
        """Name of GPU server ``h`` (0-based)."""
        return self.design.hosts.name(h)

    def host_rails(self) -> list[str]:
        """The rail NIC ports of every GPU server, in rail order (``rail_interfaces``)."""
        return [
            port_name(self.design.hosts.platform, g) for g in range(self.sizing.rails * self.sizing.planes)
        ]

    def _addr(self, net: ipaddress.IPv4Network, n: int, side: int) -> ipaddress.IPv4Address:
        return net.network_address + 2 * n + side

    # ---------------------------------------------------------------- ports

    def switch_ports(self, sw: SwitchSpec) -> list[Port]:
        """Every front-panel port of a switch with its planned peer and addressing."""
        return self.leaf_ports(sw) if sw.role == "leaf" else self.spine_ports(sw)

    def leaf_ports(self, leaf: SwitchSpec) -> list[Port]:
        """Host ports (``0 .. down-1``) then uplinks (``down .. R-1``) of a leaf."""
        assert leaf.rail is not None
        s = self.sizing
        plat = leaf.platform
        ports: list[Port] = []
        servers = s.servers
        for j in range(self.down):
            h = leaf.index * self.down + j
            name = port_name(plat, j)
            if h >= servers:
                ports.append(Port(name, j, self.speed, "unused"))
                continue
            n = leaf.rail * servers + h
            ports.append(
                Port(name, j, self.speed, "host", self.host_name(h), port_name(self.design.hosts.platform, leaf.rail),
                     f"{self._addr(self._host_net, n, 0)}/31", str(self._addr(self._host_net, n, 1)))
            )  # fmt: skip
        base = self.leaf_number(leaf) * self.up
        pos = self.leaf_in_plane(leaf)
        for u in range(self.up):
            spine = self.spines[(leaf.plane, u // self.k)]
            spine_port = pos * self.k + u % self.k
            n = base + u
            ports.append(
                Port(port_name(plat, self.down + u), self.down + u, self.speed, "fabric", spine.name,
                     port_name(spine.platform, spine_port), f"{self._addr(self._fabric_net, n, 1)}/31",
                     str(self._addr(self._fabric_net, n, 0)), spine.asn)
            )  # fmt: skip
        return ports

    def spine_ports(self, spine: SwitchSpec) -> list[Port]:
        """Every port of a spine: ``k`` per leaf of its plane, the rest unused."""
        s = self.sizing
        radix = s.request.switch_ports
        ports: list[Port | None] = [None] * radix
        rails = range(spine.plane * s.rails, (spine.plane + 1) * s.rails)
        for g in rails:
            for i in range(s.leaves_per_rail):
                leaf = self.leaves[(g, i)]
                pos = self.leaf_in_plane(leaf)
                for j in range(self.k):
                    u = spine.index * self.k + j
                    n = self.leaf_number(leaf) * self.up + u
                    p = pos * self.k + j
                    ports[p] = Port(
                        port_name(spine.platform, p), p, self.speed, "fabric", leaf.name,
                        port_name(leaf.platform, self.down + u), f"{self._addr(self._fabric_net, n, 0)}/31",
                        str(self._addr(self._fabric_net, n, 1)), leaf.asn,
                    )  # fmt: skip
        return [
            p if p is not None else Port(port_name(spine.platform, i), i, self.speed, "unused")
            for i, p in enumerate(ports)
        ]

    def host_ports(self, h: int) -> list[Port]:
        """The rail NIC ports of GPU server ``h`` with their leaf and addresses."""
        s = self.sizing
        out = []
        for g in range(s.rails * s.planes):
            leaf = self.leaves[(g, h // self.down)]
            n = g * s.servers + h
            out.append(
                Port(port_name(self.design.hosts.platform, g), g, self.speed, "host", leaf.name,
                     port_name(leaf.platform, h % self.down), f"{self._addr(self._host_net, n, 1)}/31",
                     str(self._addr(self._host_net, n, 0)))
            )  # fmt: skip
        return out

    # ---------------------------------------------------------------- links

    def links(self) -> Iterator[Link]:
        """Every planned cable: host NIC -> leaf (by host), then leaf -> spine (by leaf)."""
        s = self.sizing
        for h in range(s.servers):
            host = self.host_name(h)
            for p in self.host_ports(h):
                assert p.peer is not None and p.peer_port is not None
                yield Link(host, p.name, p.peer, p.peer_port, p.index, p.index // s.rails)
        for g in range(s.rails * s.planes):
            for i in range(s.leaves_per_rail):
                leaf = self.leaves[(g, i)]
                for p in self.leaf_ports(leaf):
                    if p.kind == "fabric":
                        assert p.peer is not None and p.peer_port is not None
                        yield Link(leaf.name, p.name, p.peer, p.peer_port, g, leaf.plane)
