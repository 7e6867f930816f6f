"""Fleet checks: devices of the same role, platform and model run the same versions and QoS setup."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from fabline.checks import Check, DeviceContext, FabricContext
from fabline.results import Result, Severity


def _versions(ifaces: Mapping[str, Any], key: str) -> str | None:
    found = set()
    for body in ifaces.values():
        nic = body.get("nic") if isinstance(body, Mapping) else None
        value = nic.get(key) if isinstance(nic, Mapping) else None
        if isinstance(value, str) and value:
            found.add(value)
    return ", ".join(sorted(found)) if found else None


def _ecn_profiles(ifaces: Mapping[str, Any]) -> str | None:
    found = set()
    for body in ifaces.values():
        ecn = body.get("ecn") if isinstance(body, Mapping) else None
        if not isinstance(ecn, Mapping):
            continue
        for prio, prof in ecn.items():
            if isinstance(prof, Mapping) and prof.get("enabled"):
                found.add(
                    f"{prio}: {prof.get('min_bytes')}/{prof.get('max_bytes')} B {prof.get('probability_pct')}%"
                )
    return "; ".join(sorted(found)) if found else None


class SkewParams(BaseModel):
    """Parameters of the fleet skew checks."""

    model_config = ConfigDict(extra="forbid")

    allowed: dict[str, list[str]] = Field(
        default_factory=dict,
        description="pinned values per field (e.g. {os_version: ['4.32.2F']}); any other value fails",
    )


class FleetSkewCheck(Check):
    """Base of "same role, platform and model run the same X" checks (not registered itself)."""

    scope = "fabric"
    Params: ClassVar[type[BaseModel]] = SkewParams
    fields: ClassVar[tuple[str, ...]]

    def __init__(self, params: Mapping[str, Any] | None = None, severity: Severity | None = None) -> None:
        super().__init__(params, severity)
        unknown = [k for k in self.params.allowed if k not in self.fields]
        if unknown:
            raise ValueError(f"allowed: unknown field {unknown[0]!r} (fields: {', '.join(self.fields)})")

    def values(self, device: DeviceContext) -> tuple[str | None, ...]:
        """The device's value of each field (None: not collected or not applicable)."""
        raise NotImplementedError

    def collect(self, device: DeviceContext) -> tuple[Any, ...]:
        facts = device.state.get("facts")
        model = facts.get("model") if isinstance(facts, Mapping) else None
        return (device.role, device.platform, model, *self.values(device))

    def check_fabric(self, fabric: FabricContext) -> Iterable[Result]:
        groups: dict[tuple[Any, ...], list[str]] = {}
        for name, row in fabric.collected.items():
            groups.setdefault(tuple(row[:3]), []).append(name)
        for key in sorted(groups, key=repr):
            members = sorted(groups[key])
            role, platform, model = key
            where = f"{role}s on {platform}" + (f" model {model}" if model else "")
            for i, field in enumerate(self.fields):
                values = {n: fabric.collected[n][3 + i] for n in members}
                counts = Counter(v for v in values.values() if v is not None)
                yield from self._field(field, values, counts, where)

    def _field(
        self, field: str, values: Mapping[str, str | None], counts: Counter[str], where: str
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
                    yield self.passed(name, field, expected=pinned, actual=value)
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
                yield self.passed(name, field, expected=majority, actual=value)
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
    Fields: ``os_version`` (facts), ``nic_firmware`` and ``nic_driver`` (host NICs).
    """

    id = "version-skew"
    severity = Severity.MINOR
    fields = ("os_version", "nic_firmware", "nic_driver")

    def values(self, device: DeviceContext) -> tuple[str | None, ...]:
        facts = device.state.get("facts")
        os_version = facts.get("os_version") if isinstance(facts, Mapping) else None
        ifaces = device.interfaces
        return (
            os_version if isinstance(os_version, str) else None,
            _versions(ifaces, "firmware"),
            _versions(ifaces, "driver_version"),
        )


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
        return (mode if isinstance(mode, str) else None, watchdog, _ecn_profiles(device.interfaces))


FLEET_CHECKS = (VersionSkewCheck, QosSkewCheck)
