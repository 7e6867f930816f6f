"""What a remediation run produces: fixes per device, work orders, and the per-device change.

A :class:`Fix` is one field of one device (or port) set to the value the failing rule wanted; a
:class:`WorkOrder` is a finding no configuration can fix (a rail swap, a weak optic, FEC errors, a
down link); a :class:`DeviceChange` is the change of one device in its platform's own format.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Fix:
    """One field set to its intended value.

    Attributes:
        device: Inventory name.
        check: The failing rule's id.
        subject: Interface name, or None for a device-level field.
        path: State path under the subject (``mtu``, ``dscp_to_priority.48``, ``ecn.3.min_bytes``,
            ``qos.pfc_watchdog.enabled``, ``nic.roce_tos``).
        value: The intended value.
        current: What the device holds now (None when not collected).
        source: Where the value comes from (the rule's operator and value, or the design's value
            when the rule has no single right value, e.g. a minimum).
        disruptive: Setting it interrupts traffic on a live port (FEC, speed, autonegotiation).
        finding: The failing result's id (``device::check::subject``).
    """

    device: str
    check: str
    subject: str | None
    path: str
    value: Any
    current: Any
    source: str
    disruptive: bool = False
    finding: str = ""


@dataclass(frozen=True)
class WorkOrder:
    """A finding configuration cannot fix: someone has to look, clean, swap or re-cable.

    Attributes:
        device: Inventory name.
        port: The port, when the finding names one.
        peer_device: The LLDP (or cabling plan) peer, when known.
        peer_port: The peer's port.
        check: The failing check's id.
        finding: The result's message.
        action: What to inspect or swap.
        cabling_row: The cabling plan's row for this port (``device,port,peer,peer_port,rail,plane``).
        ids: The finding ids it covers.
    """

    device: str
    port: str | None
    peer_device: str | None
    peer_port: str | None
    check: str
    finding: str
    action: str
    cabling_row: str | None = None
    ids: tuple[str, ...] = ()


@dataclass
class DeviceChange:
    """The change of one device in its platform's format.

    Attributes:
        device: Inventory name.
        platform: Platform id.
        fixes: The fixes the change carries.
        files: Change files by name (``leaf-r0-a.patch.json``...), written under ``devices/``.
        steps: The change in application order, one line each, for the plan (disruptive last).
        disruptive: The steps that interrupt traffic (a subset of ``steps``, applied last).
        notes: What a reviewer must know (a value taken from the design, a platform limit).
    """

    device: str
    platform: str
    fixes: list[Fix]
    files: dict[str, str] = field(default_factory=dict)
    steps: list[str] = field(default_factory=list)
    disruptive: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class Plan:
    """A whole remediation run.

    Attributes:
        changes: One per device with something to change.
        work_orders: Findings for hands, not configuration.
        skipped: Devices left out and why (state not read, platform without an emitter).
        covered: Finding ids that the device changes resolve (link findings included).
        unresolved: Failing findings neither a change nor a work order covers, with why.
    """

    changes: list[DeviceChange] = field(default_factory=list)
    work_orders: list[WorkOrder] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    covered: set[str] = field(default_factory=set)
    unresolved: dict[str, str] = field(default_factory=dict)
