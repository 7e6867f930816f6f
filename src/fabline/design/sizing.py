"""Sizing arithmetic of a rail-optimized two-tier Clos, with an explanation when it cannot work.

The model (``docs/design.md``, DOMAIN "Sizing arithmetic"): a plane is a two-tier leaf-spine
fabric of switches with ``R`` ports at the per-plane link speed. At ``o:1`` oversubscription a leaf
has ``R*o/(o+1)`` ports down (GPU NICs) and the rest up; every leaf reaches every spine of its plane
and a spine has ``R`` ports, so a plane holds at most ``R`` leaves. Rail-optimized: NIC *i* of every
server goes to a leaf of rail *i*, so a plane has ``rails * ceil(servers / down)`` leaves. With ``P``
planes every GPU has one link per plane at ``nic_speed / P`` Gb/s (multi-plane / breakout): planes
multiply links and switches, not GPUs.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from fabline.errors import ConfigError


@dataclass(frozen=True)
class SizingInput:
    """What the user asks for.

    Attributes:
        gpus: GPUs to connect (one compute NIC per GPU).
        gpus_per_server: GPUs (and compute NICs, hence rails) per server.
        nic_speed_gbps: Bandwidth of one GPU's NIC (Gb/s), split evenly over the planes.
        switch_ports: Switch radix R at the per-plane link speed (ports per switch).
        planes: Independent two-tier planes; every GPU has one link in each.
        oversubscription: Leaf downlink:uplink ratio ``o`` of ``o:1`` (1 = non-blocking).
    """

    gpus: int
    gpus_per_server: int = 8
    nic_speed_gbps: int = 400
    switch_ports: int = 64
    planes: int = 1
    oversubscription: int = 1

    def validate(self) -> None:
        """Reject inputs the arithmetic cannot take.

        Raises:
            ConfigError: Naming the option and the problem.
        """
        checks = (
            ("gpus", self.gpus >= 1, "at least 1"),
            ("gpus_per_server", self.gpus_per_server >= 1, "at least 1"),
            ("nic_speed_gbps", self.nic_speed_gbps >= 1, "at least 1"),
            ("switch_ports", self.switch_ports >= 4, "at least 4"),
            ("planes", self.planes >= 1, "at least 1"),
            ("oversubscription", self.oversubscription >= 1, "at least 1 (1 means 1:1)"),
        )
        for key, ok, need in checks:
            if not ok:
                raise ConfigError(f"must be {need}, got {getattr(self, key)}", key=key)
        if self.nic_speed_gbps % self.planes:
            raise ConfigError(
                f"{self.nic_speed_gbps} Gb/s does not split evenly over {self.planes} planes", key="planes"
            )


@dataclass(frozen=True)
class Sizing:
    """The computed fabric (totals are over all planes) or why it cannot be built."""

    request: SizingInput
    feasible: bool
    reason: str
    servers: int
    rails: int
    link_speed_gbps: int
    down_ports: int
    up_ports: int
    leaves_per_rail: int
    leaves_per_plane: int
    spines_per_plane: int
    links_per_leaf_spine: int
    leaves: int
    spines: int
    planes: int
    max_gpus: int
    host_links: int
    fabric_links: int
    transceivers: int
    proposals: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``fabline design --format json``)."""
        out = asdict(self)
        out["request"] = asdict(self.request)
        return out


def down_ports(radix: int, oversubscription: int) -> int:
    """Host-facing ports of a leaf at ``o:1``: ``R * o / (o + 1)``, rounded down.

    Example:
        >>> down_ports(64, 1), down_ports(64, 3), down_ports(128, 1)
        (32, 48, 64)
    """
    return radix * oversubscription // (oversubscription + 1)


def max_gpus(radix: int, gpus_per_server: int, oversubscription: int = 1) -> int:
    """Largest rail-optimized two-tier cluster on ``radix``-port switches (GPUs per plane).

    A plane holds ``radix`` leaves, ``radix // rails`` per rail, each with ``down`` servers: at 1:1
    that is ``R * R / 2`` GPUs when the rails divide the radix.

    Example:
        >>> max_gpus(64, 8), max_gpus(128, 8), max_gpus(512, 8)
        (2048, 8192, 131072)
    """
    return (radix // gpus_per_server) * down_ports(radix, oversubscription) * gpus_per_server


def three_tier_max(radix: int) -> int:
    """Endpoints of a non-blocking three-tier fat tree of ``radix``-port switches: ``R**3 / 4``.

    Example:
        >>> three_tier_max(128)
        524288
    """
    return radix**3 // 4


def _links_per_pair(up: int, leaves_per_plane: int, radix: int) -> int:
    """Most links per leaf-spine pair that divide the uplinks evenly and fit the spine's ports."""
    best = 1
    for k in range(1, up + 1):
        if up % k == 0 and leaves_per_plane * k <= radix:
            best = k
    return best


def size(req: SizingInput) -> Sizing:
    """Size a rail-optimized two-tier Clos for ``req``.

    Example:
        >>> s = size(SizingInput(gpus=1024, switch_ports=64))
        >>> s.feasible, s.leaves, s.spines, s.transceivers
        (True, 32, 16, 4096)
    """
    req.validate()
    radix = req.switch_ports
    rails = req.gpus_per_server
    servers = math.ceil(req.gpus / rails)
    down = down_ports(radix, req.oversubscription)
    up = radix - down
    link_speed = req.nic_speed_gbps // req.planes
    leaves_per_rail = math.ceil(servers / down)
    leaves_per_plane = rails * leaves_per_rail
    biggest = max_gpus(radix, rails, req.oversubscription)
    common: dict[str, Any] = {
        "request": req,
        "servers": servers,
        "rails": rails,
        "link_speed_gbps": link_speed,
        "down_ports": down,
        "up_ports": up,
        "leaves_per_rail": leaves_per_rail,
        "leaves_per_plane": leaves_per_plane,
        "planes": req.planes,
        "max_gpus": biggest,
    }
    if rails > radix or leaves_per_plane > radix:
        return Sizing(
            feasible=False,
            reason=_infeasible_reason(req, leaves_per_plane, down, biggest),
            spines_per_plane=0,
            links_per_leaf_spine=0,
            leaves=leaves_per_plane * req.planes,
            spines=0,
            host_links=servers * rails * req.planes,
            fabric_links=0,
            transceivers=0,
            proposals=_proposals(req),
            **common,
        )
    k = _links_per_pair(up, leaves_per_plane, radix)
    spines_per_plane = up // k
    host_links = servers * rails * req.planes
    fabric_links = leaves_per_plane * up * req.planes
    ratio = "1:1 (non-blocking)" if req.oversubscription == 1 else f"{req.oversubscription}:1"
    reason = (
        f"{req.gpus:,} GPUs fit {_planes(req.planes)} of {radix}-port switches at {ratio}: "
        f"{leaves_per_plane} leaves per plane (at most {radix}), {down} ports down and {up} up per leaf, "
        f"{spines_per_plane} spines per plane with {k} link(s) to each leaf"
    )
    return Sizing(
        feasible=True,
        reason=reason,
        spines_per_plane=spines_per_plane,
        links_per_leaf_spine=k,
        leaves=leaves_per_plane * req.planes,
        spines=spines_per_plane * req.planes,
        host_links=host_links,
        fabric_links=fabric_links,
        # One transceiver at each end of every link (DAC/AOC sites count cables instead).
        transceivers=2 * (host_links + fabric_links),
        **common,
    )


def _planes(n: int) -> str:
    return "one two-tier plane" if n == 1 else f"{n} two-tier planes (every GPU in each)"


def _infeasible_reason(req: SizingInput, leaves_per_plane: int, down: int, biggest: int) -> str:
    radix = req.switch_ports
    if req.gpus_per_server > radix:
        return f"{req.gpus_per_server} rails do not fit {radix}-port switches (one leaf per rail at least)"
    return (
        f"{req.gpus:,} GPUs do not fit two tiers of {radix}-port switches: a leaf takes {down} GPUs "
        f"({radix} ports, {down} down), so {req.gpus:,} GPUs in {req.gpus_per_server} rails need "
        f"{leaves_per_plane:,} leaves per plane, but a spine has {radix} ports, so a plane holds at "
        f"most {radix} leaves = {biggest:,} GPUs"
    )


def _proposals(req: SizingInput) -> list[str]:
    """Designs that do hold ``req.gpus``: breakout into more planes, or a third tier."""
    out: list[str] = []
    radix = req.switch_ports
    bandwidth = radix * req.nic_speed_gbps // req.planes
    for factor in (2, 4, 8):
        planes = req.planes * factor
        if req.nic_speed_gbps % planes:
            break
        ports = radix * factor
        fits = max_gpus(ports, req.gpus_per_server, req.oversubscription)
        if fits >= req.gpus:
            speed = req.nic_speed_gbps // planes
            out.append(
                f"multi-plane / breakout: run the same {bandwidth / 1000:g} Tb/s switch as {ports} x "
                f"{speed}G ports and give every GPU {planes} x {speed}G links, one per plane "
                f"({planes} planes): a plane then holds {fits:,} GPUs "
                f"(fabline design --gpus {req.gpus} --switch-ports {ports} --planes {planes})"
            )
            break
    three = three_tier_max(radix)
    if three >= req.gpus:
        out.append(
            f"three tiers (leaf, spine, super-spine) of {radix}-port switches: a non-blocking fat tree "
            f"holds up to {three:,} endpoints (R^3/4); fabline renders two tiers only"
        )
    if not out:
        out.append(
            "no two-tier or three-tier option of this radix holds that many GPUs: use higher-radix switches"
        )
    return out


def render_text(s: Sizing) -> str:
    """The human summary ``fabline design`` prints."""
    r = s.request
    ratio = "1:1" if r.oversubscription == 1 else f"{r.oversubscription}:1"
    lines = [
        f"design: {r.gpus:,} GPUs, {r.gpus_per_server} per server, {r.nic_speed_gbps}G NICs, "
        f"{r.switch_ports}-port switches, {r.planes} plane(s), {ratio}",
        f"feasible: {'yes' if s.feasible else 'NO'}: {s.reason}",
    ]
    if s.feasible:
        lines += [
            f"servers {s.servers:,}, rails {s.rails}, link speed {s.link_speed_gbps}G",
            f"per plane: {s.leaves_per_plane} leaves ({s.leaves_per_rail} per rail), {s.spines_per_plane} spines, "
            f"{s.links_per_leaf_spine} link(s) per leaf-spine pair",
            f"leaves {s.leaves:,}, spines {s.spines:,}, planes {s.planes}",
            f"host links {s.host_links:,}, fabric links {s.fabric_links:,}, transceivers {s.transceivers:,}",
        ]
    lines.append(
        f"largest two-tier cluster on {r.switch_ports}-port switches at {ratio}: {s.max_gpus:,} GPUs"
    )
    for p in s.proposals:
        lines.append(f"proposal: {p}")
    return "\n".join(lines)
