"""What the platform emitters share: the fields that changed, profile rebinding, raw evidence.

An emitter turns two states of one device, ``before`` and ``after`` (the collected state and the
same with fixes applied), into that platform's change. It never sees results: only which
configurable fields differ.

A platform's change format is a :class:`Remediator` (its emitter and its playbook tasks) that its
:class:`~fabline.platforms.spec.PlatformSpec` names in ``remediation`` (``module:attribute``);
:func:`remediator` finds it. Nothing in this package chooses by platform id.
"""

from __future__ import annotations

import functools
import importlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar, cast

from fabline.paths import MAX_RAW_BYTES, SnapshotPathError, read_under
from fabline.platforms import PLATFORMS
from fabline.remediate.model import DeviceChange, Fix

T = TypeVar("T")

#: Reads the collected output of the first of some commands the device answered (None: none).
RawReader = Callable[[Sequence[str]], "str | None"]


class NoEvidence(Exception):
    """The snapshot lacks what a platform's change is built from (its running configuration)."""


def running_config(raw: RawReader, commands: Sequence[str], what: str) -> str:
    """The collected output a change is built from.

    Raises:
        NoEvidence: The snapshot has none (``what`` names it in the message).
    """
    text = raw(commands)
    if text is None:
        raise NoEvidence(f"no {what} in the snapshot (`{commands[0]}`)")
    return text


@dataclass(frozen=True)
class Stages:
    """One device's state before, after the traffic-safe fixes, and after every fix.

    Attributes:
        device: Inventory name.
        before: The collected state.
        safe: ``before`` with the fixes that do not interrupt traffic.
        after: ``before`` with every fix (the interrupting ones are applied last).
        fixes: The fixes.
    """

    device: str
    before: Mapping[str, Any]
    safe: Mapping[str, Any]
    after: Mapping[str, Any]
    fixes: tuple[Fix, ...]


#: A play's tasks and its ``vars`` (empty: none), as :mod:`fabline.remediate.playbook` writes them.
Tasks = tuple[list[dict[str, Any]], dict[str, Any]]


class Remediator(Protocol):
    """A platform's change format: what ``fabline remediate`` writes for one of its devices."""

    def emit(self, stages: Stages, raw: RawReader, /) -> DeviceChange:
        """The device's change (files to review, steps, the traffic-interrupting ones).

        Raises:
            NoEvidence: The snapshot lacks what the change is built from.
        """
        ...

    def tasks(self, change: DeviceChange, disruptive: bool, /) -> Tasks:
        """The Ansible tasks (and play vars) that apply the traffic-safe or the disruptive part; no
        tasks: that part has no play.
        """
        ...


@dataclass(frozen=True)
class Remediation:
    """A :class:`Remediator` made of two functions (one module per platform holds them)."""

    emit: Callable[[Stages, RawReader], DeviceChange]
    tasks: Callable[[DeviceChange, bool], Tasks]


def remediator(platform: str) -> Remediator | None:
    """The change format of a platform, as its spec names it; None when it has none (or is unknown).

    Example:
        >>> from fabline.platforms import Platform
        >>> type(remediator(Platform.SONIC)).__name__, remediator(Platform.NAPALM), remediator("junos")
        ('Remediation', None, None)
    """
    spec = PLATFORMS.get(platform)
    if spec is None or spec.remediation is None:
        return None
    return _load(spec.remediation)


@functools.cache
def _load(ref: str) -> Remediator:
    """The object a ``module:attribute`` reference names."""
    module, _, attribute = ref.partition(":")
    found: Any = importlib.import_module(module)
    for part in attribute.split("."):
        found = getattr(found, part)
    return cast(Remediator, found)


#: Per-port fields an emitter may have to change.
PORT_FIELDS = ("mtu", "speed_gbps", "fec", "autoneg", "trust", "dscp_to_priority", "pfc_priorities", "ecn")


def port_changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Per port, the configurable fields whose value differs, with the new value.

    Example:
        >>> port_changes({"interfaces": {"e1": {"mtu": 1500}}}, {"interfaces": {"e1": {"mtu": 9000}}})
        {'e1': {'mtu': 9000}}
    """
    out: dict[str, dict[str, Any]] = {}
    old_ifaces = before.get("interfaces") or {}
    for name, body in (after.get("interfaces") or {}).items():
        old = old_ifaces.get(name) or {}
        diff = {f: body[f] for f in PORT_FIELDS if f in body and body[f] != old.get(f)}
        if diff:
            out[name] = diff
    return out


def watchdog_change(before: Mapping[str, Any], after: Mapping[str, Any]) -> bool | None:
    """The PFC watchdog's new ``enabled`` value, or None when it does not change."""
    old = ((before.get("qos") or {}).get("pfc_watchdog") or {}).get("enabled")
    new = ((after.get("qos") or {}).get("pfc_watchdog") or {}).get("enabled")
    return bool(new) if new is not None and new != old else None


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def rebind(
    bindings: Mapping[str, str | None],
    profiles: Mapping[str, T],
    targets: Mapping[str, T],
    name_for: Callable[[str], str],
    default: str | None = None,
) -> tuple[dict[str, T], dict[str, str | None]]:
    """Profiles and port bindings after giving each port of ``targets`` its value.

    Platforms bind ports to named profiles (SONiC DSCP maps and WRED profiles, Cumulus QoS
    profiles); a change must not reach ports that were fine. For each group of ports wanting one
    value: bind them to a profile that already holds it (``default`` first: binding ``None`` means
    the default, as an unbound Cumulus port); else change their profile in place when no other port
    uses it; else create ``name_for(first port)``. A profile no port uses any more is dropped
    (never ``default``).

    Example:
        >>> rebind({"p1": "A", "p2": "B"}, {"A": 1, "B": 2}, {"p2": 1}, lambda p: p + "-x")
        ({'A': 1}, {'p1': 'A', 'p2': 'A'})
    """
    new_profiles = dict(profiles)
    new_bindings = dict(bindings)
    groups: dict[str, list[str]] = {}
    for port, value in targets.items():
        groups.setdefault(_key(value), []).append(port)
    for key, ports in groups.items():
        value = targets[ports[0]]
        names = ([default] if default is not None else []) + sorted(n for n in new_profiles if n != default)
        same = next((n for n in names if n in new_profiles and _key(new_profiles[n]) == key), None)
        if same is not None:
            for p in ports:
                new_bindings[p] = None if default is not None and same == default else same
            continue
        bound = {new_bindings.get(p) for p in ports}
        if len(bound) == 1:
            name = bound.pop()
            users = {p for p, b in new_bindings.items() if b == name}
            if name is not None and name != default and users <= set(ports):
                new_profiles[name] = value
                continue
            if name is None and default is not None and users <= set(ports):
                new_profiles[default] = value
                continue
        name = name_for(ports[0])
        new_profiles[name] = value
        for p in ports:
            new_bindings[p] = name
    used = {b for b in new_bindings.values() if b is not None}
    for name in list(new_profiles):
        if name != default and name not in used and name in {b for b in bindings.values() if b is not None}:
            del new_profiles[name]
    return new_profiles, new_bindings


def raw_output(snapshot: Path, device: str, commands: Sequence[str]) -> str | None:
    """The collected output of the first of ``commands`` the device answered, from ``raw/``.

    Read through the snapshot's manifest (bounded, inside ``raw/<device>/`` only); None when the
    snapshot has no manifest, no such command or an unreadable file.
    """
    from fabline.collect.writer import read_entry, read_manifest

    manifest = read_manifest(snapshot)
    entry = None
    if manifest is not None and isinstance(manifest.get("devices"), dict):
        entry = manifest["devices"].get(device)
    if not isinstance(entry, dict):
        entry = read_entry(snapshot, device)
    if not isinstance(entry, dict) or not isinstance(entry.get("commands"), list):
        return None
    records = {
        " ".join(str(c.get("command", "")).split()): c
        for c in entry["commands"]
        if isinstance(c, dict) and c.get("status") == "ok" and isinstance(c.get("file"), str)
    }
    for command in commands:
        rec = records.get(command)
        if rec is None:
            continue
        try:
            return read_under(snapshot, "raw", device, rec["file"], limit=MAX_RAW_BYTES).decode(
                "utf-8", "replace"
            )
        except (OSError, SnapshotPathError):
            continue
    return None
