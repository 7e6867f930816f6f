"""Fleet checks: devices of the same role, platform and model run the same versions and QoS setup;
switches of one role and plane balance ECMP alike.
"""

from __future__ import annotations

import fnmatch
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import override

from fabline.checks import (
    FABRIC_DEVICE,
    Check,
    DeviceContext,
    FabricContext,
    exact_key,
    natural_key,
    natural_order,
)
from fabline.checks.fabric.gpuhost import root_read_missing
from fabline.results import PassBlock, Result, Severity
from fabline.state_types import Interface


class _ByValue:
    """A pure function of plain JSON values, remembered by the values' :func:`exact_key`.

    The devices of a fleet mostly carry the same settings (one DCQCN dict per NIC, equal on every
    host): the function runs once per distinct value, each device pays one ``exact_key``. Its
    bytes keep exact types (``1``, ``1.0`` and ``True`` differ) and key order, so equal bytes are
    values the function cannot tell apart; a value it cannot write (an
    :class:`~fabline.state.Invalid`) is computed each time. At most ``keep`` values are remembered.
    The result is shared: callers copy what they change.

    Example:
        >>> calls = []
        >>> f = _ByValue(lambda v: calls.append(v) or len(v))
        >>> f([1, 2]), f([1, 2]), f([1.0, 2]), len(calls)
        (2, 2, 2, 2)
    """

    def __init__(self, fn: Callable[[Any], Any], keep: int = 256) -> None:
        self._fn = fn
        self._seen: dict[bytes, Any] = {}
        self._keep = keep

    def __call__(self, value: Any) -> Any:
        key = exact_key(value)
        if key is None:  # not made of plain JSON types
            return self._fn(value)
        hit = self._seen.get(key, _UNSEEN)
        if hit is _UNSEEN:
            hit = self._fn(value)
            if len(self._seen) < self._keep:
                self._seen[key] = hit
        return hit


_UNSEEN: Any = object()


def _nic_versions(ifaces: Mapping[str, Interface]) -> tuple[str | None, str | None]:
    """The NICs' firmware and driver versions (several distinct values joined by ", ")."""
    firmware: set[str] = set()
    driver: set[str] = set()
    for body in ifaces.values():
        nic = body.get("nic") if type(body) is dict else None
        if type(nic) is not dict:
            continue
        fw, drv = nic.get("firmware"), nic.get("driver_version")
        if type(fw) is str and fw:
            firmware.add(fw)
        if type(drv) is str and drv:
            driver.add(drv)
    return (", ".join(sorted(firmware)) or None, ", ".join(sorted(driver)) or None)


def _ecn_maps(ifaces: Mapping[str, Interface]) -> list[dict[str, Any]]:
    """The ports' ``ecn`` maps, in port order (what :func:`_ecn_profiles` reads), each map equal to
    the one before it left out: it adds no profile that one did not (a switch's 128 ports carry one
    map; the list is the key its profiles are remembered by, written out per switch).

    Example:
        >>> len(_ecn_maps({"e1": {"ecn": {"3": {"enabled": True}}}, "e2": {"ecn": {"3": {"enabled": True}}}}))
        1
    """
    out: list[dict[str, Any]] = []
    last: dict[str, Any] | None = None
    for body in ifaces.values():
        ecn = body.get("ecn") if type(body) is dict else None
        if type(ecn) is dict and ecn != last:
            out.append(ecn)
            last = ecn
    return out


def _ecn_profiles(maps: list[dict[str, Any]]) -> str | None:
    """The distinct enabled ECN profiles of a device's ports (:func:`_ecn_maps`), as one text."""
    found: set[tuple[str, Any, Any, Any]] = set()
    for ecn in maps:
        for prio, prof in ecn.items():
            if type(prof) is dict and prof.get("enabled"):
                found.add((prio, prof.get("min_bytes"), prof.get("max_bytes"), prof.get("probability_pct")))
    if not found:
        return None
    return "; ".join(sorted(f"{p}: {lo}/{hi} B {pct}%" for p, lo, hi, pct in found))


class SkewParams(BaseModel):
    """Parameters of the fleet skew checks."""

    model_config = ConfigDict(extra="forbid")

    allowed: dict[str, list[str]] = Field(
        default_factory=dict,
        description="pinned values per field (e.g. {os_version: ['4.32.2F']}); any other value fails",
    )


class FleetSkewCheck(Check[SkewParams]):
    """Base of "same role, platform and model run the same X" checks (not registered itself)."""

    scope = "fabric"
    fields: ClassVar[tuple[str, ...]]
    #: Without fixed ``fields`` (every parameter a device has is compared): what a pinned name must
    #: look like (a regex), and how the error says it.
    parameter: ClassVar[str] = ".+"
    parameter_hint: ClassVar[str] = ""

    def __init__(self, params: Mapping[str, Any] | None = None, severity: Severity | None = None) -> None:
        super().__init__(params, severity)
        if not self.fields:
            unknown = [k for k in self.params.allowed if not re.fullmatch(self.parameter, k)]
            if unknown:
                raise ValueError(f"allowed: {unknown[0]!r} is not a parameter ({self.parameter_hint})")
            return
        unknown = [k for k in self.params.allowed if k not in self.fields]
        if unknown:
            raise ValueError(f"allowed: unknown field {unknown[0]!r} (fields: {', '.join(self.fields)})")

    def values(self, device: DeviceContext) -> tuple[str | None, ...]:
        """The device's value of each field (None: not collected or not applicable)."""
        raise NotImplementedError

    def field_values(self, device: DeviceContext) -> dict[str, str | None]:
        """The device's value of each compared field, by field name (``fields`` and :meth:`values`)."""
        return dict(zip(self.fields, self.values(device), strict=True))

    @override
    def collect(self, device: DeviceContext) -> tuple[Any, ...]:
        facts = device.state.get("facts")
        model = facts.get("model") if isinstance(facts, Mapping) else None
        return (device.role, device.platform, model, self.field_values(device))

    @override
    def check_fabric(self, fabric: FabricContext) -> Iterable[Result]:
        passes: dict[str, list[str | None]] = {}
        groups: dict[tuple[Any, ...], list[str]] = {}
        for name, row in fabric.collected.items():
            groups.setdefault(tuple(row[:3]), []).append(name)
        for key in sorted(groups, key=repr):
            members = sorted(groups[key])
            role, platform, model = key
            where = f"{role}s on {platform}" + (f" model {model}" if model else "")
            # Fixed fields in their order; a check without fixed fields compares every field a member has.
            names = self.fields or sorted({f for n in members for f in fabric.collected[n][3]})
            for field in names:
                values = {n: fabric.collected[n][3].get(field) for n in members}
                counts = Counter(v for v in values.values() if v is not None)
                yield from self._field(field, values, counts, where, passes)
        for name in sorted(passes):
            yield PassBlock(self.id, name, self.effective_severity, passes[name])

    def _field(
        self,
        field: str,
        values: Mapping[str, str | None],
        counts: Counter[str],
        where: str,
        passes: dict[str, list[str | None]],
    ) -> Iterable[Result]:
        pinned = self.params.allowed.get(field)
        top = counts.most_common(2)
        tie = len(top) == 2 and top[0][1] == top[1][1]
        majority = top[0][0] if top and not tie else None
        spread = ", ".join(f"{v} ({n})" for v, n in counts.most_common())
        for name, value in values.items():
            if value is None:
                continue
            if ", " in value:
                yield self.failed(
                    name, field, f"{name}: NICs of one device run different {field} values: {value}",
                    expected=majority, actual=value,
                )  # fmt: skip
            elif pinned is not None:
                if value in pinned:
                    passes.setdefault(name, []).append(field)
                else:
                    yield self.failed(
                        name, field, f"{name}: {field} {value} is not a pinned version ({', '.join(pinned)})",
                        expected=pinned, actual=value,
                    )  # fmt: skip
            elif tie:
                yield self.failed(
                    name, field, f"{name}: {where} disagree on {field} with no majority: {spread}",
                    expected="one version", actual=value,
                )  # fmt: skip
            elif value == majority:
                passes.setdefault(name, []).append(field)
            else:
                yield self.failed(
                    name, field,
                    f"{name}: {field} {value}; the majority of {where} run {majority} ({spread})",
                    expected=majority, actual=value,
                )  # fmt: skip


class VersionSkewCheck(FleetSkewCheck):
    """Devices of one role, platform and model run the same OS, NIC firmware and NIC driver.

    Firmware skew inside a fleet is a classic source of "one slow node" problems: a NIC firmware
    with a different congestion-control default, a switch OS with another buffer carving
    (DOMAIN "Firmware": pinned to a baseline, no skew inside the fleet, article 004). The odd
    ones out are named with the majority version; pin allowed versions with ``allowed``.
    Fields: ``os_version``, ``kernel``, ``bios_version`` (facts), ``nic_firmware`` and
    ``nic_driver`` (host NICs), ``gpu_driver`` and ``cuda_version`` (host GPUs, nvidia-smi).
    """

    id = "version-skew"
    severity = Severity.MINOR
    fields = (
        "os_version",
        "nic_firmware",
        "nic_driver",
        "kernel",
        "gpu_driver",
        "bios_version",
        "cuda_version",
    )

    @override
    def values(self, device: DeviceContext) -> tuple[str | None, ...]:
        facts = device.state.get("facts")
        facts = facts if isinstance(facts, Mapping) else {}
        host = device.state.get("host")
        host = host if isinstance(host, Mapping) else {}
        return (
            _text(facts.get("os_version")),
            *_nic_versions(device.interfaces),
            _text(facts.get("kernel")),
            _text(host.get("gpu_driver")),
            _text(facts.get("bios_version")),
            _text(host.get("cuda_version")),
        )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _dcqcn_values(ifaces: Mapping[str, Interface]) -> dict[str, str]:
    """Each DCQCN parameter of a host's NICs (``np.min_time_between_cnps``, ``rp.rpg_ai_rate``, ...) -> its value.

    NICs of one host that disagree give the distinct values joined by ", " (reported as such). The
    CNP DSCP and priority are not here: rules pin them to the baseline and host-cnp-fabric compares
    them with the leaf.

    Example:
        >>> _dcqcn_values({"e0": {"nic": {"dcqcn": {"rp": {"rpg_gd": 11, "rpg_ai_rate": 5}}}},
        ...                "e1": {"nic": {"dcqcn": {"rp": {"rpg_gd": 11, "rpg_ai_rate": 10}}}}})
        {'rp.rpg_ai_rate': '10, 5', 'rp.rpg_gd': '11'}
    """
    return _dcqcn_of(_dcqcn_maps(ifaces))


def _dcqcn_maps(ifaces: Mapping[str, Interface]) -> list[Mapping[str, Any]]:
    """The NICs' ``dcqcn`` maps, in port order (what :func:`_dcqcn_of` reads)."""
    out: list[Mapping[str, Any]] = []
    for body in ifaces.values():
        nic = body.get("nic") if type(body) is dict else None
        dcqcn = nic.get("dcqcn") if type(nic) is dict else None
        if type(dcqcn) is dict:
            out.append(dcqcn)
    return out


def _dcqcn_of(maps: list[Mapping[str, Any]]) -> dict[str, str]:
    found: dict[str, set[str]] = {}
    for dcqcn in maps:
        for role in ("np", "rp"):
            params = dcqcn.get(role)
            if type(params) is dict:
                for key, value in params.items():
                    found.setdefault(f"{role}.{key}", set()).add(str(value))
    return {k: ", ".join(sorted(v)) for k, v in sorted(found.items())}


class DcqcnSkewCheck(FleetSkewCheck):
    """GPU servers of one platform and model run the same DCQCN and CNP parameters on their NICs.

    DCQCN is a control loop between every sender and receiver pair: one host with another rate
    increase step, alpha gain or CNP interval reacts differently to the same ECN marks, takes more
    (or less) than its share and makes the others' reactions look wrong. Compares every parameter
    of the NICs' ECN notification (``np.*``) and reaction points (``rp.*``) as sysfs names them
    (the CNP DSCP and priority are the host-cnp rules' business); pin values with ``allowed``
    (``{rp.rpg_ai_rate: ['5']}``; values are compared as text).
    """

    id = "dcqcn-skew"
    severity = Severity.MINOR
    roles = ("host",)
    fields = ()
    parameter = r"(?:np|rp)\..+"
    parameter_hint = "np.NAME or rp.NAME"

    def __init__(self, params: Mapping[str, Any] | None = None, severity: Severity | None = None) -> None:
        super().__init__(params, severity)
        self._values = _ByValue(_dcqcn_of)

    @override
    def field_values(self, device: DeviceContext) -> dict[str, str | None]:
        return dict(self._values(_dcqcn_maps(device.interfaces)))


def _cc_config_values(host: Any) -> dict[str, str]:
    """Each firmware congestion-control setting of a host's RDMA devices (``mlxconfig``) -> its value.

    Devices of one host that disagree give the distinct values joined by ", " (reported as such).

    Example:
        >>> _cc_config_values({"rdma_devices": {"mlx5_0": {"cc_config": {"RPG_AI_RATE_P1": "5"}},
        ...                                     "mlx5_1": {"cc_config": {"RPG_AI_RATE_P1": "10"}}}})
        {'RPG_AI_RATE_P1': '10, 5'}
    """
    return _cc_config_of(_cc_configs(host))


def _cc_configs(host: Any) -> list[Mapping[str, Any]]:
    """The RDMA devices' ``cc_config`` maps, in order (what :func:`_cc_config_of` reads)."""
    devices = host.get("rdma_devices") if isinstance(host, Mapping) else None
    out = []
    for info in devices.values() if isinstance(devices, Mapping) else ():
        config = info.get("cc_config") if type(info) is dict or isinstance(info, Mapping) else None
        if type(config) is dict or isinstance(config, Mapping):
            out.append(config)
    return out


def _cc_config_of(configs: list[Mapping[str, Any]]) -> dict[str, str]:
    found: dict[str, set[str]] = {}
    for config in configs:
        for key, value in config.items():
            found.setdefault(str(key), set()).add(str(value))
    return {k: ", ".join(sorted(v)) for k, v in sorted(found.items())}


class NicCcSkewCheck(FleetSkewCheck):
    """GPU servers of one platform and model set the same congestion control in their NICs' firmware.

    ``mlxconfig`` holds the ConnectX firmware's RoCE congestion-control settings (DCQCN reaction and
    notification point, CNP DSCP and priority, the CC priority mask) that the NIC boots with: one
    host configured apart from the fleet reacts differently to the same ECN marks after its next
    reboot, whatever sysfs says now (``dcqcn-skew`` judges the running values). Every parameter
    (``RPG_AI_RATE_P1``, ``CNP_DSCP_P1``, ...) the same across the group; pin values with
    ``allowed`` (``{ROCE_CC_PRIO_MASK_P1: ['255']}``, values as mlxconfig prints them). Reading it
    needs root: hosts whose inventory does not enable ``fabline_sudo`` (or whose sudo refuses) are
    ``skipped`` with the reason.
    """

    id = "nic-cc-skew"
    severity = Severity.MINOR
    roles = ("host",)
    fields = ()
    parameter = r"[A-Z][A-Z0-9_]*_P\d"
    parameter_hint = "an mlxconfig name with its port, e.g. RPG_AI_RATE_P1"

    def __init__(self, params: Mapping[str, Any] | None = None, severity: Severity | None = None) -> None:
        super().__init__(params, severity)
        self._values = _ByValue(_cc_config_of)

    @override
    def field_values(self, device: DeviceContext) -> dict[str, str | None]:
        return dict(self._values(_cc_configs(device.state.get("host"))))

    @override
    def collect(self, device: DeviceContext) -> tuple[Any, ...]:
        row = super().collect(device)
        skip = None
        if not row[3]:
            skip = (
                root_read_missing(device, "host.rdma_devices.*.cc_config", "sudo -n mlxconfig")
                or "no mlxconfig settings collected"
            )
        return (*row, skip)

    @override
    def check_fabric(self, fabric: FabricContext) -> Iterable[Result]:
        for name in sorted(fabric.collected):
            reason = fabric.collected[name][4]
            if reason:
                yield self.skipped(name, None, f"firmware congestion control not read: {reason}")
        judged = {n: row for n, row in fabric.collected.items() if not row[4]}
        yield from super().check_fabric(replace(fabric, collected=judged))


class QosSkewCheck(FleetSkewCheck):
    """Switches of one role, platform and model share buffer mode, PFC watchdog and ECN profiles.

    A lossless domain is only as good as its odd switch: one leaf with another buffer model,
    watchdog timers or ECN thresholds reacts differently to the same congestion (DOMAIN "A
    single mismatched node degrades the whole lossless domain"). Fields: ``buffer_mode``,
    ``pfc_watchdog`` (detection/restoration timers and action), ``ecn_profiles`` (the distinct
    enabled per-priority ECN profiles of the device's ports). Whether the watchdog is on at all is
    the ``switch-pfc-watchdog`` rule's business, so it is not part of the comparison.
    """

    id = "qos-skew"
    severity = Severity.MINOR
    roles = ("leaf", "spine")
    fields = ("buffer_mode", "pfc_watchdog", "ecn_profiles")

    def __init__(self, params: Mapping[str, Any] | None = None, severity: Severity | None = None) -> None:
        super().__init__(params, severity)
        self._profiles = _ByValue(_ecn_profiles)

    @override
    def values(self, device: DeviceContext) -> tuple[str | None, ...]:
        qos = device.state.get("qos")
        qos = qos if isinstance(qos, Mapping) else {}
        mode = qos.get("buffer_mode")
        wd = qos.get("pfc_watchdog")
        watchdog = None
        if isinstance(wd, Mapping) and any(k in wd for k in ("detection_ms", "restoration_ms", "action")):
            # on/off is the switch-pfc-watchdog rule's business; the timers have no single right value
            watchdog = "detection_ms={} restoration_ms={} action={}".format(
                wd.get("detection_ms"), wd.get("restoration_ms"), wd.get("action")
            )
        return (
            mode if isinstance(mode, str) else None,
            watchdog,
            self._profiles(_ecn_maps(device.interfaces)),
        )


def _balance_values(lb: Any) -> tuple[str | None, str | None, str | None, str | None]:
    """A switch's load-balancing fields as comparable words (None: not collected on its platform)."""
    if not isinstance(lb, Mapping):
        return (None, None, None, None)
    fields = lb.get("hash_fields")
    seed = lb.get("hash_seed")
    algo = lb.get("hash_algorithm")
    ar = lb.get("adaptive_routing")
    return (
        " ".join(str(f) for f in fields) if isinstance(fields, list) else None,
        str(seed) if type(seed) is int else None,
        str(algo) if isinstance(algo, str) else None,
        ("on" if ar else "off") if isinstance(ar, bool) else None,
    )


class LoadBalanceSkewCheck(FleetSkewCheck):
    """Switches of one role and plane balance ECMP alike: hash fields, seed, algorithm, adaptive routing.

    A Clos spreads a collective's flows only as evenly as its hashing does: a switch hashing on
    other fields, with another seed or algorithm than the rest of its tier sends flows down
    different paths than its neighbours expect, and one switch without adaptive routing (or DLB /
    packet spraying) on an AR fabric falls back to hash luck and becomes the hot spot (issue 15).
    Hash fields, seed and algorithm are compared among the switches of one role, plane
    (``plane``) and platform (the words are platform-specific); adaptive routing among the
    switches of one role and plane. A field a platform does not expose is not compared
    (``docs/platforms/*.md``). Pin the intended values with ``allowed``
    (``{adaptive_routing: ["on"]}``, ``{hash_seed: ["11"]}``).
    """

    id = "load-balance-skew"
    severity = Severity.MAJOR
    roles = ("leaf", "spine")
    fields = ("hash_fields", "hash_seed", "hash_algorithm", "adaptive_routing")

    @override
    def collect(self, device: DeviceContext) -> tuple[Any, ...]:
        plane = device.vars.get("plane")
        return (device.role, plane if type(plane) is int else None, device.platform,
                *_balance_values(device.state.get("load_balance")))  # fmt: skip

    @override
    def check_fabric(self, fabric: FabricContext) -> Iterable[Result]:
        passes: dict[str, list[str | None]] = {}
        for i, field in enumerate(self.fields):
            per_platform = field != "adaptive_routing"
            groups: dict[tuple[Any, ...], list[str]] = {}
            for name, row in fabric.collected.items():
                key: tuple[Any, ...] = (row[0], row[1], row[2] if per_platform else None)
                groups.setdefault(key, []).append(name)
            for key in sorted(groups, key=repr):
                members = sorted(groups[key])
                where = f"{key[0]}s" + (f" of plane {key[1]}" if key[1] is not None else "")
                where += f" on {key[2]}" if key[2] is not None else ""
                values = {n: fabric.collected[n][3 + i] for n in members}
                counts = Counter(v for v in values.values() if v is not None)
                yield from self._field(field, values, counts, where, passes)
        for name in sorted(passes):
            yield PassBlock(self.id, name, self.effective_severity, passes[name])


def _pg_covers(key: str, prio: int) -> bool:
    """Whether a SONiC BUFFER_PG key (``3`` or ``3-4``) covers a priority group.

    Example:
        >>> _pg_covers("3-4", 4), _pg_covers("3", 4)
        (True, False)
    """
    lo, _, hi = key.partition("-")
    try:
        return int(lo) <= prio <= int(hi or lo)
    except ValueError:
        return False


def headroom_bytes(speed_gbps: float, cable_m: float, response_ns: float, frame_bytes: int) -> int:
    """PFC headroom a lossless priority group needs: line rate x round trip + 2 frames.

    The round trip is twice the cable's propagation delay (5 ns/m in fibre) plus the peer's
    response time; two maximum frames cover the one being sent when the pause arrives and the
    one the pause frame waits behind (DOMAIN "PFC thresholds", article 004).

    Example:
        >>> headroom_bytes(100, 5, 1000, 9100)  # 12.5 B/ns x 1050 ns + 18200
        31325
    """
    rtt_ns = 2 * cable_m * 5 + response_ns
    return int(speed_gbps / 8 * rtt_ns + 2 * frame_bytes)


class HeadroomParams(BaseModel):
    """Parameters of pfc-headroom."""

    model_config = ConfigDict(extra="forbid")

    default_cable_length_m: float = Field(
        40.0, gt=0, description="cable length when the device has no 'cable_length_m' inventory variable"
    )
    response_ns: float = Field(1000.0, ge=0, description="peer's PFC response time added to the round trip")


class PfcHeadroomCheck(Check[HeadroomParams]):
    """The lossless priority group's headroom (xoff) absorbs line rate x round trip + 2 frames.

    After a switch sends PAUSE, the data already on the wire and in the peer's pipeline still
    arrives; if the priority group's headroom is smaller, those frames are dropped and the lossless
    class is not lossless (DOMAIN "PFC thresholds": headroom >= line rate x round-trip time + 2
    MTU, article 004). Reads SONiC's ``buffer_pg`` and ``qos.buffer_profiles`` (``xoff_bytes``),
    the port speed and MTU, and the cable length from the ``cable_length_m`` inventory variable
    (default ``default_cable_length_m``). Ports whose lossless PG uses the dynamic buffer model
    (no static profile) and devices without buffer data are ``skipped``.
    """

    id = "pfc-headroom"
    severity = Severity.MAJOR
    roles = ("leaf", "spine")

    @override
    def check_device(self, device: DeviceContext) -> Iterable[Result]:
        qos = device.state.get("qos")
        profiles = qos.get("buffer_profiles") if isinstance(qos, Mapping) else None
        ifaces = device.interfaces
        if not isinstance(profiles, Mapping) or not any(
            isinstance(b, Mapping) and b.get("buffer_pg") for b in ifaces.values()
        ):
            yield self.skipped(
                device.name, None, "no static buffer profiles collected (SONiC CONFIG_DB only)"
            )
            return
        cable = device.vars.get("cable_length_m", self.params.default_cable_length_m)
        cable = float(cable) if isinstance(cable, (int, float)) else self.params.default_cable_length_m
        ok: list[str | None] = []
        for name in natural_order(ifaces):
            body = ifaces[name]
            if not isinstance(body, Mapping) or not body.get("pfc_priorities") or not body.get("buffer_pg"):
                continue
            speed = body.get("speed_gbps")
            if not isinstance(speed, (int, float)) or not speed:
                yield self.error(device.name, name, "speed_gbps not collected: headroom needs the line rate")
                continue
            raw_mtu = body.get("mtu")
            mtu = raw_mtu if isinstance(raw_mtu, int) else 9216
            need = headroom_bytes(speed, cable, self.params.response_ns, mtu)
            problems, dynamic = [], []
            for prio in body["pfc_priorities"]:
                pg = next((k for k in body["buffer_pg"] if _pg_covers(str(k), prio)), None)
                prof = profiles.get(body["buffer_pg"][pg]) if pg is not None else None
                xoff = prof.get("xoff_bytes") if isinstance(prof, Mapping) else None
                if pg is None:
                    problems.append(f"no buffer PG for lossless priority {prio}")
                elif not isinstance(xoff, int):
                    dynamic.append(prio)
                elif xoff < need:
                    problems.append(f"PG {pg} ({body['buffer_pg'][pg]}) xoff {xoff} B < {need} B needed")
            expected = {"min_xoff_bytes": need, "speed_gbps": speed, "cable_length_m": cable}
            if problems:
                yield self.failed(
                    device.name, name,
                    f"{device.name} {name}: {'; '.join(problems)} ({speed:g}G, {cable:g} m, {mtu}-byte frames)",
                    expected=expected, actual=problems,
                )  # fmt: skip
            elif dynamic:
                yield self.skipped(device.name, name, f"priority {dynamic} uses a dynamic buffer profile")
            else:
                ok.append(name)
        if ok:
            yield PassBlock(self.id, device.name, self.effective_severity, ok)


class OpticsFirmwareParams(BaseModel):
    """Parameters of optics-firmware-skew."""

    model_config = ConfigDict(extra="forbid")

    allowed: dict[str, list[str]] = Field(
        default_factory=dict,
        description="pinned firmware per transceiver part number (e.g. {'MMS4X00-NS': ['2.4.0']}); any other fails",
    )


class OpticsFirmwareSkewCheck(Check[OpticsFirmwareParams]):
    """Transceivers of one part number run the same firmware across the fleet.

    Module firmware changes how an optic trains its lanes and reports its DOM: an 800G/400G
    module on an old firmware is a classic "one flaky link" cause (DOMAIN "Firmware": transceiver
    firmware pinned, no skew). Modules are grouped by part number and platform, fleet-wide (the
    platforms spell one firmware differently: SONiC prints CMIS's version string, Cumulus NVUE's
    ``module-fw-version`` hex word); each port whose module runs another firmware than its group's
    majority (or than the pinned list) fails, a tie names every version. Reads
    ``optics.part_number`` and ``optics.firmware`` (SONiC, Cumulus 5.10+; the other platforms'
    commands do not show module firmware).
    """

    id = "optics-firmware-skew"
    severity = Severity.MINOR
    scope = "fabric"

    @override
    def collect(self, device: DeviceContext) -> tuple[str, tuple[tuple[str, str, tuple[str, ...]], ...]]:
        """The device's platform and its modules grouped by (part number, firmware): each group's
        ports in natural order. One group on most switches, so equal devices share one value
        (a port-per-row list was 10 MB of the workers' parts on 100k GPUs).
        """
        groups: dict[tuple[str, str], list[str]] = {}
        for name, body in device.interfaces.items():
            optics = body.get("optics") if type(body) is dict or isinstance(body, Mapping) else None
            if not (type(optics) is dict or isinstance(optics, Mapping)):
                continue
            pn, fw = optics.get("part_number"), optics.get("firmware")
            if isinstance(pn, str) and pn and isinstance(fw, str) and fw:
                ports = groups.get((pn, fw))
                if ports is None:
                    groups[(pn, fw)] = [name]
                else:
                    ports.append(name)
        return (
            device.platform,
            tuple((pn, fw, tuple(natural_order(ports))) for (pn, fw), ports in groups.items()),
        )

    @override
    def check_fabric(self, fabric: FabricContext) -> Iterable[Result]:
        # (part number, platform) -> [(device, firmware, its ports with it)], devices in run order
        by_pn: dict[tuple[str, str], list[tuple[str, str, tuple[str, ...]]]] = {}
        for device, (platform, groups) in fabric.collected.items():
            for pn, fw, ports in groups:
                by_pn.setdefault((pn, platform), []).append((device, fw, ports))
        several = Counter(pn for pn, _ in by_pn)
        passes: dict[str, list[str | None]] = {}
        for pn, platform in sorted(by_pn):
            members = by_pn[(pn, platform)]
            counts: Counter[str] = Counter()
            for _, fw, ports in members:
                counts[fw] += len(ports)
            top = counts.most_common(2)
            tie = len(top) == 2 and top[0][1] == top[1][1]
            majority = None if tie else top[0][0]
            spread = ", ".join(f"{v} ({n})" for v, n in counts.most_common())
            pinned = self.params.allowed.get(pn)
            mine: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
            for device, fw, ports in members:
                mine.setdefault(device, []).append((fw, ports))
            for device in sorted(mine):
                held = mine[device]
                if len(held) == 1:  # one firmware on all of the device's modules of this part
                    rows: Iterable[tuple[str, str]] = ((port, held[0][0]) for port in held[0][1])
                else:
                    rows = sorted(
                        ((p, fw) for fw, ports in held for p in ports), key=lambda r: natural_key(r[0])
                    )
                for port, fw in rows:
                    if (pinned is not None and fw in pinned) or (pinned is None and fw == majority):
                        passes.setdefault(device, []).append(port)
                        continue
                    if pinned is not None:
                        message = f"{device} {port}: {pn} runs firmware {fw}, not a pinned version ({', '.join(pinned)})"
                        expected: Any = pinned
                    elif tie:
                        message = (
                            f"{device} {port}: {pn} modules disagree on firmware with no majority: {spread}"
                        )
                        expected = "one version"
                    else:
                        whose = f"of its {platform} modules " if several[pn] > 1 else ""
                        message = f"{device} {port}: {pn} runs firmware {fw}; the majority {whose}run {majority} ({spread})"
                        expected = majority
                    yield self.failed(
                        device, port, message, expected=expected, actual={"part_number": pn, "firmware": fw}
                    )
        for device in sorted(passes):
            yield PassBlock(self.id, device, self.effective_severity, passes[device])


class IncompatiblePair(BaseModel):
    """One switch OS x NIC firmware combination a site knows to break (globs, fnmatch syntax)."""

    model_config = ConfigDict(extra="forbid")

    switch_os: str = Field(description="glob on the switch's facts.os_version, e.g. 'SONiC.202305*'")
    nic_firmware: str = Field(description="glob on a host NIC's nic.firmware, e.g. '28.39.*'")
    reason: str = Field(description="what broke, shown in the finding")


class IncompatibleParams(BaseModel):
    """Parameters of incompatible-versions."""

    model_config = ConfigDict(extra="forbid")

    pairs: list[IncompatiblePair] = Field(
        default_factory=list, description="switch OS x NIC firmware pairs known not to work together"
    )


def _lldp_peer(body: Any) -> str | None:
    lldp = body.get("lldp") if type(body) is dict else None
    peer = lldp.get("device") if type(lldp) is dict else None
    return peer.split(".")[0].lower() if isinstance(peer, str) and peer else None


class IncompatibleVersionsCheck(Check[IncompatibleParams]):
    """No host NIC runs a firmware the baseline declares incompatible with its leaf's OS.

    A fleet can be free of skew and still run a combination that broke once: a NIC firmware whose
    congestion-control default a switch release mis-handles, a transceiver setting one side gets
    wrong. ``pairs`` writes such combinations down (switch OS glob x NIC firmware glob, with the
    reason); every rail NIC cabled (by LLDP, from either end) to a switch of a matching OS fails,
    naming both. ``skipped`` while no pair is declared.
    """

    id = "incompatible-versions"
    severity = Severity.MAJOR
    scope = "fabric"

    @override
    def collect(self, device: DeviceContext) -> tuple[Any, ...] | None:
        if not self.params.pairs:
            # Nothing to judge (check_fabric says so once): nothing kept per device (a 100k-GPU
            # fabric's every LLDP port otherwise, 16 MB sent back by the workers).
            return None
        facts = device.state.get("facts")
        os_version = facts.get("os_version") if isinstance(facts, Mapping) else None
        ports = []
        for name, body in device.interfaces.items():
            nic = body.get("nic") if type(body) is dict else None
            firmware = nic.get("firmware") if type(nic) is dict else None
            peer = _lldp_peer(body)
            if peer is not None or isinstance(firmware, str):
                lldp = body.get("lldp") if type(body) is dict else None
                peer_port = lldp.get("port") if type(lldp) is dict else None
                ports.append((name, peer, _text(peer_port), _text(firmware)))
        return (device.role, _text(os_version), tuple(ports))

    @override
    def check_fabric(self, fabric: FabricContext) -> Iterable[Result]:
        if not self.params.pairs:
            yield self.skipped(
                FABRIC_DEVICE, None, "no known-incompatible switch OS x NIC firmware pair declared"
            )
            return
        lower = {n.lower(): n for n in fabric.collected}
        switch_os = {n: row[1] for n, row in fabric.collected.items() if row[0] != "host" and row[1]}
        links: dict[tuple[str, str], set[str]] = {}  # (host, port) -> switches it is cabled to
        for name, (role, _os, ports) in fabric.collected.items():
            for port, peer, peer_port, _fw in ports:
                other = lower.get(peer) if peer else None
                if other is None:
                    continue
                if role == "host":
                    links.setdefault((name, port), set()).add(other)
                elif fabric.collected[other][0] == "host" and peer_port:
                    # the switch's LLDP names the host and the host port it heard (hosts without lldpd)
                    links.setdefault((other, peer_port), set()).add(name)
        ok: dict[str, list[str | None]] = {}
        for name, (role, _os, ports) in sorted(fabric.collected.items()):
            if role != "host":
                continue
            for port, _peer, _peer_port, firmware in ports:
                if firmware is None:
                    continue
                hits = []
                for switch in sorted(links.get((name, port), ())):
                    version = switch_os.get(switch)
                    for pair in self.params.pairs:
                        if (
                            version
                            and fnmatch.fnmatchcase(version, pair.switch_os)
                            and fnmatch.fnmatchcase(firmware, pair.nic_firmware)
                        ):
                            hits.append((switch, version, pair))
                if not hits:
                    ok.setdefault(name, []).append(port)
                    continue
                for switch, version, pair in hits:
                    yield self.failed(
                        name, port,
                        f"{name} {port}: NIC firmware {firmware} with {switch} on {version}: {pair.reason}",
                        expected={"not": {"switch_os": pair.switch_os, "nic_firmware": pair.nic_firmware}},
                        actual={"nic_firmware": firmware, "peer_device": switch, "switch_os": version},
                    )  # fmt: skip
        for name in sorted(ok):
            yield PassBlock(self.id, name, self.effective_severity, ok[name])


FLEET_CHECKS = (
    VersionSkewCheck,
    QosSkewCheck,
    DcqcnSkewCheck,
    NicCcSkewCheck,
    IncompatibleVersionsCheck,
    PfcHeadroomCheck,
    OpticsFirmwareSkewCheck,
    LoadBalanceSkewCheck,
)
