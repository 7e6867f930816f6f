"""The design model: ``design.yml``, the editable source every config and plan is rendered from.

A design holds the sizing request, the switches (name, role, platform, plane, rail, position,
ASN, loopback: every one editable), the GPU servers (a count and a name pattern), address pools,
per-platform port MTU and per-role QoS values taken from the baseline's vars. The cabling follows
from the positions (:mod:`fabline.design.topology`), so renaming a switch or changing its platform
or ASN never re-cables anything. Unknown keys are refused with ``file:line: key`` and a
did-you-mean, like every user file.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

from fabline.design.sizing import Sizing, SizingInput, size
from fabline.errors import ConfigError
from fabline.platforms.base import release_key
from fabline.platforms.spec import PLATFORMS, host_platform, switch_platforms
from fabline.userfiles import choice, load_yaml, validate


def template_platforms() -> tuple[str, ...]:
    """The switch platforms with bundled config templates (``templates/<platform>/``)."""
    from fabline.baseline import packaged_workspace

    bundled = packaged_workspace() / "templates"
    return tuple(p for p in switch_platforms() if (bundled / p).is_dir())


def default_os_version() -> dict[str, str]:
    """The release each switch platform's config is rendered for, by default (its spec's ``os_version``)."""
    return {p: PLATFORMS[p].os_version for p in switch_platforms()}


def default_port_mtu() -> dict[str, int]:
    """Port MTU per switch platform, as each reports it on a RoCE fabric (its spec's ``fabric_mtu``)."""
    return {p: PLATFORMS[p].mtu.fabric_mtu for p in switch_platforms()}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SizingSpec(_Strict):
    """The sizing request (``fabline design`` options)."""

    gpus: int = Field(ge=1, description="GPUs (one compute NIC each)")
    gpus_per_server: int = Field(8, ge=1, description="GPUs and rails per server")
    nic_speed_gbps: int = Field(400, ge=1, description="NIC bandwidth per GPU, Gb/s")
    switch_ports: int = Field(64, ge=4, description="switch radix at the per-plane link speed")
    planes: int = Field(1, ge=1, description="two-tier planes; every GPU has one link in each")
    oversubscription: int = Field(1, ge=1, description="leaf downlink:uplink ratio o of o:1")

    def request(self) -> SizingInput:
        """The arithmetic's input."""
        return SizingInput(**self.model_dump())


class SwitchQos(_Strict):
    """Lossless RoCE values of one switch role (defaults: the baseline's vars)."""

    roce_dscp: int = Field(26, ge=0, le=63)
    roce_priority: int = Field(3, ge=0, le=7, description="lossless priority / traffic class / queue")
    cnp_dscp: int = Field(48, ge=0, le=63)
    cnp_priority: int = Field(6, ge=0, le=7, description="strict-priority class for CNPs")
    ecn_min_bytes: int = Field(150000, ge=1, description="WRED/ECN min threshold, bytes")
    ecn_max_bytes: int = Field(1500000, ge=1, description="WRED/ECN max threshold, bytes")
    ecn_probability_pct: int = Field(5, ge=0, le=100, description="marking probability at max, percent")
    pfc_watchdog_detection_ms: int = Field(200, ge=1)
    pfc_watchdog_restoration_ms: int = Field(200, ge=1)
    lossless_xoff_bytes: int = Field(
        180000, ge=0, description="PG headroom (xoff), bytes: >= line rate x RTT + 2 MTU"
    )
    lossless_xon_bytes: int = Field(18432, ge=0, description="PG xon, bytes")
    cable_length_m: int = Field(40, ge=1, description="longest cable, metres (PFC headroom)")

    @model_validator(mode="after")
    def _distinct(self) -> SwitchQos:
        if self.roce_priority == self.cnp_priority:
            raise ValueError("roce_priority and cnp_priority must differ")
        if self.roce_dscp == self.cnp_dscp:
            raise ValueError("roce_dscp and cnp_dscp must differ")
        if self.ecn_min_bytes > self.ecn_max_bytes:
            raise ValueError("ecn_min_bytes is above ecn_max_bytes")
        return self


class HostQos(_Strict):
    """Host NIC values (trust DSCP, PFC, DSCP map, ToS, MTU) of every GPU server."""

    mtu: int = Field(9000, ge=1280, description="L3 MTU of rail NICs, bytes")
    roce_dscp: int = Field(26, ge=0, le=63)
    roce_priority: int = Field(3, ge=0, le=7)
    cnp_dscp: int = Field(48, ge=0, le=63)
    cnp_priority: int = Field(6, ge=0, le=7)
    roce_tos: int = Field(106, ge=0, le=255, description="RDMA-CM ToS byte: DSCP << 2 | ECT(0)")
    gid_index: int = Field(3, ge=0, description="NCCL_IB_GID_INDEX (RoCEv2 GID)")


class QosSpec(_Strict):
    """Per-role QoS values."""

    leaf: SwitchQos = Field(default_factory=SwitchQos)
    spine: SwitchQos = Field(default_factory=SwitchQos)
    host: HostQos = Field(default_factory=HostQos)


class AsnSpec(_Strict):
    """BGP numbering: spines of plane *p* share ``spine + p``; each leaf its own from ``leaf_base``."""

    spine: int = Field(65100, ge=1, le=4294967294)
    leaf_base: int = Field(4200000000, ge=1, le=4294967294)


class AddressingSpec(_Strict):
    """Address pools: loopbacks (/32 each), leaf-spine /31s, leaf-host /31s."""

    loopbacks: str = "10.0.0.0/16"
    fabric_links: str = "10.128.0.0/10"
    host_links: str = "172.16.0.0/12"

    @field_validator("loopbacks", "fabric_links", "host_links")
    @classmethod
    def _network(cls, value: str) -> str:
        try:
            ipaddress.IPv4Network(value)
        except ValueError as exc:
            raise ValueError(f"not an IPv4 network: {exc}") from None
        return value


class HostsSpec(_Strict):
    """The GPU servers: ``count`` of them named ``name_format.format(index=i)``."""

    count: int = Field(ge=1)
    name_format: str = "gpu-{index:05d}"
    platform: Annotated[str, BeforeValidator(lambda v: choice(v, (host_platform(),)))] = Field(
        default_factory=host_platform
    )
    first_index: int = Field(1, ge=0)

    @field_validator("name_format")
    @classmethod
    def _format(cls, value: str) -> str:
        try:
            value.format(index=1)
        except (KeyError, IndexError, ValueError) as exc:
            raise ValueError(f"name_format must use only {{index}}: {exc}") from None
        return value

    def name(self, i: int) -> str:
        """Name of the ``i``-th server (0-based).

        Example:
            >>> HostsSpec(count=2).name(0)
            'gpu-00001'
        """
        return self.name_format.format(index=self.first_index + i)


class SwitchSpec(_Strict):
    """One switch: position in the fabric (plane, rail, index) and its editable identity."""

    name: str = Field(min_length=1)
    role: Literal["leaf", "spine"]
    platform: Annotated[str, BeforeValidator(lambda v: choice(v, template_platforms()))]
    plane: int = Field(ge=0)
    rail: int | None = Field(None, ge=0, description="leaves: the rail (host NIC position) served")
    index: int = Field(ge=0, description="leaves: position within the rail; spines: within the plane")
    asn: int = Field(ge=1, le=4294967294)
    loopback: str

    @field_validator("loopback")
    @classmethod
    def _address(cls, value: str) -> str:
        try:
            ipaddress.IPv4Address(value)
        except ValueError as exc:
            raise ValueError(f"not an IPv4 address: {exc}") from None
        return value


class Design(_Strict):
    """A whole ``design.yml``."""

    version: Literal[1] = 1
    name: str = "fabric"
    sizing: SizingSpec
    hosts: HostsSpec
    switches: list[SwitchSpec]
    asn: AsnSpec = Field(default_factory=AsnSpec)
    addressing: AddressingSpec = Field(default_factory=AddressingSpec)
    port_mtu: dict[str, int] = Field(default_factory=default_port_mtu)
    os_version: dict[str, str] = Field(
        default_factory=default_os_version,
        description="the NOS release each platform's configs are rendered for (templates follow its object model)",
    )
    qos: QosSpec = Field(default_factory=QosSpec)

    @field_validator("os_version", mode="before")
    @classmethod
    def _releases(cls, value: Any) -> Any:
        # A partial mapping keeps the other platforms' defaults; YAML reads 5.9 as a number.
        if not isinstance(value, dict):
            return value
        given = {
            k: str(v) if isinstance(v, int | float) and not isinstance(v, bool) else v
            for k, v in value.items()
        }
        return default_os_version() | given

    @model_validator(mode="after")
    def _consistent(self) -> Design:
        s = self.sized()
        if not s.feasible:
            raise ValueError(f"infeasible sizing: {s.reason}")
        names: set[str] = set()
        slots: set[tuple[str, int, int | None, int]] = set()
        for i, sw in enumerate(self.switches):
            if sw.name in names:
                raise ValueError(f"switches[{i}]: duplicate switch name {sw.name!r}")
            names.add(sw.name)
            slot = (sw.role, sw.plane, sw.rail, sw.index)
            if slot in slots:
                raise ValueError(f"switches[{i}] ({sw.name}): a second {sw.role} at the same position")
            slots.add(slot)
            if sw.plane >= s.planes:
                raise ValueError(f"switches[{i}] ({sw.name}): plane {sw.plane} >= planes {s.planes}")
            if sw.role == "leaf":
                if sw.rail is None or sw.rail >= s.rails * s.planes:
                    raise ValueError(
                        f"switches[{i}] ({sw.name}): a leaf needs a rail below {s.rails * s.planes}"
                    )
                if sw.plane != sw.rail // s.rails:
                    raise ValueError(
                        f"switches[{i}] ({sw.name}): rail {sw.rail} belongs to plane {sw.rail // s.rails}"
                    )
                if sw.index >= s.leaves_per_rail:
                    raise ValueError(
                        f"switches[{i}] ({sw.name}): leaf index {sw.index} >= {s.leaves_per_rail} per rail"
                    )
            elif sw.index >= s.spines_per_plane:
                raise ValueError(
                    f"switches[{i}] ({sw.name}): spine index {sw.index} >= {s.spines_per_plane} per plane"
                )
            if sw.platform not in self.port_mtu:
                raise ValueError(f"switches[{i}] ({sw.name}): port_mtu has no value for {sw.platform}")
        for platform in sorted({sw.platform for sw in self.switches}):
            release = self.os_version.get(platform, "")
            if release_key(release) is None:
                raise ValueError(f"os_version.{platform} {release!r}: no release number in it")
            allowed = PLATFORMS[platform].config_releases
            if allowed is not None and allowed.has(release) is False:
                raise ValueError(
                    f"os_version.{platform} {release}: the bundled {platform} template renders "
                    f"{allowed.describe()} ({allowed.source})"
                )
        want_leaves, want_spines = s.leaves, s.spines
        got_leaves = sum(1 for sw in self.switches if sw.role == "leaf")
        got_spines = len(self.switches) - got_leaves
        if (got_leaves, got_spines) != (want_leaves, want_spines):
            raise ValueError(
                f"the sizing needs {want_leaves} leaves and {want_spines} spines; switches lists "
                f"{got_leaves} and {got_spines}"
            )
        if self.hosts.count != s.servers:
            raise ValueError(f"hosts.count is {self.hosts.count}; the sizing has {s.servers} servers")
        for sw in self.switches:
            if sw.name in {self.hosts.name(0), self.hosts.name(self.hosts.count - 1)}:
                raise ValueError(f"switch name {sw.name!r} is also a host name")
        return self

    def sized(self) -> Sizing:
        """The sizing arithmetic of this design (cached)."""
        cached: Sizing | None = getattr(self, "_sizing_cache", None)
        if cached is None:
            cached = size(self.sizing.request())
            object.__setattr__(self, "_sizing_cache", cached)
        return cached


def generate(
    request: SizingInput,
    *,
    leaf_platform: str = "sonic",
    spine_platform: str = "arista_eos",
    name: str = "fabric",
    qos_vars: dict[str, Any] | None = None,
) -> Design:
    """A complete design for a feasible ``request`` (names, ASNs, loopbacks, QoS from ``qos_vars``).

    Raises:
        ConfigError: The request is infeasible or a platform has no templates.
    """
    s = size(request)
    if not s.feasible:
        raise ConfigError(f"infeasible: {s.reason}", key="sizing")
    bundled = template_platforms()
    for key, platform in (("leaf_platform", leaf_platform), ("spine_platform", spine_platform)):
        if platform not in bundled:
            raise ConfigError(
                f"no bundled templates for {platform!r}; choose from {', '.join(bundled)}",
                key=key,
            )
    asn = AsnSpec()
    pools = AddressingSpec()
    loopbacks = ipaddress.IPv4Network(pools.loopbacks)
    switches: list[dict[str, Any]] = []
    rails_total = s.rails * s.planes
    multi = s.planes > 1
    for plane in range(s.planes):
        for i in range(s.spines_per_plane):
            switches.append(
                {"name": f"spine-p{plane}-{i:03d}" if multi else f"spine-{i:03d}", "role": "spine",
                 "platform": spine_platform, "plane": plane, "index": i, "asn": asn.spine + plane}
            )  # fmt: skip
    leaf_no = 0
    for rail in range(rails_total):
        plane = rail // s.rails
        for i in range(s.leaves_per_rail):
            switches.append(
                {"name": f"leaf-r{rail}-{i:03d}", "role": "leaf", "platform": leaf_platform,
                 "plane": plane, "rail": rail, "index": i, "asn": asn.leaf_base + leaf_no}
            )  # fmt: skip
            leaf_no += 1
    if len(switches) + 2 > loopbacks.num_addresses:
        raise ConfigError(f"loopback pool {pools.loopbacks} is too small for {len(switches)} switches")
    for n, sw in enumerate(switches):
        sw["loopback"] = str(loopbacks.network_address + n + 1)
    qos = _qos_from_vars(qos_vars or {})
    data = {
        "version": 1,
        "name": name,
        "sizing": {
            "gpus": request.gpus, "gpus_per_server": request.gpus_per_server,
            "nic_speed_gbps": request.nic_speed_gbps, "switch_ports": request.switch_ports,
            "planes": request.planes, "oversubscription": request.oversubscription,
        },
        "hosts": {"count": s.servers},
        "switches": switches,
        "qos": qos,
    }  # fmt: skip
    return Design.model_validate(data)


def _pick(value: Any, default: int) -> int:
    """A single number from a baseline var: the value itself, or the default when it is a range."""
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, list | tuple) and len(value) == 2 and all(isinstance(v, int | float) for v in value):
        return default if value[0] <= default <= value[1] else int(value[0])
    return default


def _qos_from_vars(v: dict[str, Any]) -> dict[str, Any]:
    """Per-role QoS values from baseline vars (ranges give NVIDIA's defaults when inside them)."""
    switch = {
        "roce_dscp": _pick(v.get("roce_dscp"), 26),
        "roce_priority": _pick(v.get("roce_priority"), 3),
        "cnp_dscp": _pick(v.get("cnp_dscp"), 48),
        "cnp_priority": _pick(v.get("cnp_priority"), 6),
        "ecn_min_bytes": _pick(v.get("ecn_min_bytes"), 150000),
        "ecn_max_bytes": _pick(v.get("ecn_max_bytes"), 1500000),
        "ecn_probability_pct": _pick(v.get("ecn_probability_pct"), 5),
    }
    host = {k: switch[k] for k in ("roce_dscp", "roce_priority", "cnp_dscp", "cnp_priority")}
    host["mtu"] = _pick(v.get("host_mtu"), 9000)
    host["roce_tos"] = _pick(v.get("roce_tos"), (host["roce_dscp"] << 2) | 2)
    return {"leaf": dict(switch), "spine": dict(switch), "host": host}


def load_design(path: Path) -> Design:
    """Load and validate ``design.yml``.

    Raises:
        ConfigError: Missing file, malformed YAML, unknown key or inconsistent design (file:line: key).
    """
    raw = load_yaml(path, "design")
    if not isinstance(raw, dict):
        raise ConfigError("a design file is a mapping (version, sizing, hosts, switches, ...)", file=path)
    design: Design = validate(Design, raw, path)
    return design


def dump_design(design: Design) -> str:
    """``design.yml`` text: a commented header and the model, switches one per line."""
    data = design.model_dump(mode="json", exclude_none=True)
    switches = data.pop("switches")
    head = (
        "# fabline design: edit names, platforms, ASNs, loopbacks, pools and QoS values, then\n"
        "#   fabline design design.yml --out .     (rewrites inventory.yml and cabling.csv)\n"
        "#   fabline render design.yml --out configs\n"
        "# Cabling follows from each switch's plane/rail/index; do not change those alone.\n"
    )
    body = yaml.safe_dump(data, sort_keys=False, default_flow_style=False)
    lines = [head + body.rstrip("\n"), "switches:"]
    for sw in switches:
        lines.append(
            "  - " + yaml.safe_dump(sw, sort_keys=False, default_flow_style=True, width=10_000).strip()
        )
    return "\n".join(lines) + "\n"
