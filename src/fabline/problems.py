"""Problems, not findings: failing and error results grouped by cause.

A run on a real fabric yields many findings per cause: one down uplink fails ``switch-port-up`` at
both ends, ``leaf-oversubscription`` at the leaf and ``clos-shape`` at the leaf and the spine; a
fleet-wide template mistake fails the same rule on thousands of ports. :func:`group` turns the
``fail`` and ``error`` results of a run into :class:`Problem` objects, each with one cause
statement, a location, a severity (the highest of its findings), its findings and what to do
next. The rules (documented with examples in ``docs/reports.md``):

1. A device that could not be read is one problem, with every result on it and every result
   elsewhere that only says so (a link to it, a Clos link missing toward it, a planned port facing
   it that is down).
2. Findings are about a *fact* (MTU, FEC mode, PFC, traffic classification, ECN, optical signal,
   port state, cabling, LLDP, ...): :data:`FAMILIES` maps each built-in check to one. Several
   rules failing on the same fact of the same port (or device) are one problem.
3. Both ends of one link are one problem per fact: the peer comes from the result itself (link
   checks name it), from the LLDP link graph (:attr:`Facts.peers`) and, for port state and
   cabling, from the cabling plan (:attr:`Facts.planned`).
4. A down port and its consequences are one problem: a device's oversubscription and Clos-shape
   findings join its down ports, and the two ends of a missing leaf-spine pair join each other.
5. A partial collection and the findings on the fact it could not read (LLDP) are one problem; a
   device-level finding joins the port findings of the same fact on that device.
6. The same deviation on many devices or ports (the same checks failing with the same message
   once the device and port names are taken out) is one problem listing where, e.g.
   ``plane 3: 96 leaves: dscp_to_priority 26 -> 4 (expected 3)``.

Grouping never hides a finding: every ``fail``/``error`` result is in exactly one problem.
It is deterministic (the same findings give the same problems in the same order) and a
problem's id is a hash of what it is about (rule family, location, deviation), never of the
order of results, so the same cause keeps its id from one run to the next.

Everything here is a pure function of the results and the :class:`Facts` passed in.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fabline.results import Result, Severity, Status

#: Fact family of each built-in check. Declarative site rules not listed here are grouped by
#: their first expected state path (``mtu``, ``nic.roce_tos``), other checks by their own id.
FAMILIES: dict[str, str] = {
    "host-mtu": "mtu",
    "switch-mtu": "mtu",
    "link-mtu": "mtu",
    "switch-fec-rs": "fec-mode",
    "link-fec": "fec-mode",
    "link-speed": "speed",
    "switch-autoneg-off": "speed",
    "link-autoneg": "speed",
    "host-trust-dscp": "classification",
    "switch-trust-dscp": "classification",
    "link-trust": "classification",
    "host-dscp-roce": "classification",
    "switch-dscp-roce": "classification",
    "host-dscp-cnp": "classification",
    "switch-dscp-cnp": "classification",
    "link-dscp-map": "classification",
    "host-roce-tos": "classification",
    "host-tos-fabric": "classification",
    "host-nccl-ib-tc": "classification",
    "host-pfc-priorities": "pfc",
    "switch-pfc-priorities": "pfc",
    "link-pfc": "pfc",
    "pfc-headroom": "pfc-buffer",
    "pfc-pause-rate": "congestion",
    "host-ecn-np": "ecn",
    "host-ecn-rp": "ecn",
    "switch-ecn-enabled": "ecn",
    "switch-ecn-thresholds": "ecn",
    "switch-ecn-probability": "ecn",
    "switch-pfc-watchdog": "pfc-watchdog",
    "optics-rx-power": "signal",
    "optics-rx-power-margin": "signal",
    "optics-temperature": "signal",
    "fec-uncorrectable": "signal",
    "fec-uncorrectable-delta": "signal",
    "crc-errors": "signal",
    "crc-errors-delta": "signal",
    "switch-port-up": "port-state",
    "host-link-up": "port-state",
    "leaf-oversubscription": "port-state",
    "clos-shape": "port-state",
    "rail-cabling": "cabling",
    "cabling-plan": "cabling",
    "link-lldp": "lldp",
    "device-collection": "collection",
    "version-skew": "version",
    "qos-skew": "qos-skew",
    "host-gpudirect-rdma": "gpudirect",
}

#: What each family is about (the cause statement's first words) and what to do next.
_FAMILY_TEXT: dict[str, tuple[str, str]] = {
    "mtu": (
        "MTU",
        "set the MTU of the listed ports to the baseline value; both ends must carry the host frame",
    ),
    "fec-mode": ("FEC mode", "set RS-FEC on both ends of the link, then check the link comes up error-free"),
    "speed": ("speed/autoneg", "fix the speed and autonegotiation of both ends (fixed speed, autoneg off)"),
    "classification": (
        "traffic classification",
        "put RoCE's DSCP (and only it) in the lossless priority, on the NIC and the switch port, and the "
        "RDMA-CM ToS / NCCL_IB_TC to the lossless DSCP with ECT",
    ),
    "pfc": ("PFC", "enable PFC on the lossless priority only, identically at both ends of the link"),
    "pfc-buffer": (
        "PFC headroom",
        "size the lossless priority group's headroom for the port speed and cable length",
    ),
    "congestion": ("PFC pauses", "find the congested receiver (pause counters) before it spreads"),
    "ecn": ("ECN", "enable ECN marking / DCQCN on the lossless priority with the baseline thresholds"),
    "pfc-watchdog": ("PFC watchdog", "turn the PFC watchdog on"),
    "signal": (
        "optical signal",
        "inspect the optic and the cable: clean the connectors, reseat, replace the optic",
    ),
    "port-state": (
        "port down",
        "inspect the port, its optic and the cable to its planned peer; bring the link up",
    ),
    "cabling": ("cabling", "re-cable the listed ports as the cabling plan / rail design says"),
    "lldp": ("LLDP", "run an LLDP agent on both ends and check the neighbours each end names"),
    "collection": ("collection", "install or allow the commands that failed, then collect again"),
    "unreadable": (
        "unreadable",
        "restore access to the device (reachability, credentials, SSH), then collect again",
    ),
    "version": ("version skew", "upgrade the odd devices to the fleet's version (or pin allowed versions)"),
    "qos-skew": ("QoS skew", "align the odd switches' buffer, watchdog and ECN settings with the rest"),
    "gpudirect": ("GPUDirect RDMA", "load nvidia_peermem on the host"),
}

#: Families whose problems are physical: they say what to inspect (device, port, peer, plan row).
PHYSICAL = frozenset({"signal", "fec-mode", "port-state", "cabling", "speed"})

#: Subjects of built-in checks that name a device-wide aspect, not a port.
_DEVICE_SUBJECTS = frozenset(
    {"bandwidth", "uplinks", "downlinks", "NCCL_IB_TC", "os_version", "nic_firmware", "nic_driver",
     "buffer_mode", "pfc_watchdog", "ecn_profiles"}
)  # fmt: skip

#: Findings that are consequences of down ports on their device (rule 4).
_CONSEQUENCES = frozenset({"leaf-oversubscription", "clos-shape"})
#: Fleet checks compare a device with its peers: a deviation is the same for every odd one out.
_FLEET_CHECKS = frozenset({"version-skew", "qos-skew"})
#: Checks whose finding states a cause the rest of its problem follows from (quoted first).
_ROOT_CAUSES = frozenset({"device-collection", "switch-port-up", "host-link-up", "rail-cabling"})
_MISSING_PAIR = re.compile(r"no link to (\S+)")
#: Where the fabric-wide pseudo-device's results are reported (the engine's ``FABRIC_DEVICE``).
FABRIC = "(fabric)"


@dataclass(frozen=True)
class DeviceFacts:
    """What grouping knows about one inventory device.

    Attributes:
        role: ``spine``, ``leaf`` or ``host``.
        plane: The ``plane`` inventory variable (None: not set).
        readable: The device's state could be read (its results are real findings).
        status: Collection status (``ok``, ``partial``, ``unreachable``, ...).
        lldp_missing: A partial collection that could not read LLDP.
    """

    role: str
    plane: int | None = None
    readable: bool = True
    status: str = "ok"
    lldp_missing: bool = False


@dataclass(frozen=True)
class Facts:
    """Inventory and link-graph facts grouping uses (all optional: less is known, less merges).

    Attributes:
        devices: Per device name.
        peers: Observed links (LLDP link graph), both directions: ``(device, port) -> (peer, port)``.
        planned: Cabling-plan links, both directions: ``(device, port) -> (peer, port, plan line)``.
    """

    devices: Mapping[str, DeviceFacts] = field(default_factory=dict)
    peers: Mapping[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    planned: Mapping[tuple[str, str], tuple[str, str, int]] = field(default_factory=dict)


@dataclass
class Problem:
    """One cause, with the findings that show it.

    Attributes:
        id: Stable id (``p-`` and 12 hex digits): a hash of the family, location and deviation.
        family: The fact family (:data:`FAMILIES`), or ``unreadable``.
        kind: ``device``, ``port``, ``link`` (its two ends), ``ports`` (several ports of one
            cause) or ``fleet`` (the same deviation in many places).
        cause: One statement of the cause.
        where: The location in words (``leaf-r1-a swp3 <-> spine-01 Ethernet2/1``).
        severity: The highest severity of its findings.
        status: ``fail`` when any finding failed, else ``error``.
        location: ``devices`` (sorted), ``ports`` (sorted ``[device, port]`` pairs) and, for
            fleet problems, ``planes`` and ``roles``.
        next_step: What to do.
        inspect: For physical problems: one entry per port to look at (device, port, peer,
            peer_port, plan_line), at most :data:`MAX_INSPECT`.
        findings: The results, in report order.
    """

    id: str
    family: str
    kind: str
    cause: str
    where: str
    severity: Severity
    status: Status
    location: dict[str, Any]
    next_step: str
    inspect: list[dict[str, Any]]
    findings: list[Result]

    def to_dict(self, with_findings: bool = True) -> dict[str, Any]:
        """JSON-ready form (``report.json``'s ``problems`` entries): findings by result id."""
        out: dict[str, Any] = {
            "id": self.id,
            "family": self.family,
            "kind": self.kind,
            "cause": self.cause,
            "where": self.where,
            "severity": self.severity.label,
            "status": self.status.value,
            "location": self.location,
            "next_step": self.next_step,
            "inspect": self.inspect,
            "count": len(self.findings),
        }
        if with_findings:
            out["findings"] = [r.id for r in self.findings]
        return out


#: Most ports listed under ``inspect`` (a plane-wide problem lists its first ones).
MAX_INSPECT = 20
#: Most devices/ports named in a fleet problem's cause statement.
_NAMED_IN_CAUSE = 3


def family_of(r: Result) -> str:
    """The fact family of a finding.

    Example:
        >>> family_of(Result("link-mtu", "leaf1", "Ethernet0", Status.FAIL, Severity.CRITICAL))
        'mtu'
        >>> family_of(Result("site-rule", "leaf1", None, Status.FAIL, Severity.MINOR, {"ntp.servers": {}}))
        'ntp'
    """
    fam = FAMILIES.get(r.check)
    if fam is not None:
        if r.check == "cabling-plan" and "port down" in r.message:
            return "port-state"
        if r.check == "link-lldp" and "no LLDP neighbour on an up port" in r.message:
            return "port-state"
        return fam
    if isinstance(r.expected, dict) and r.expected:
        first = next(iter(r.expected))
        if isinstance(first, str) and first not in ("peer_device", "peer_interface"):
            return first.split(".")[0]
    return r.check


def deviation(r: Result) -> str:
    """The finding's message without the device/port/link naming it leads with.

    Example:
        >>> deviation(Result("link-fec", "leaf1", "Et1", Status.FAIL, Severity.MAJOR, None, None,
        ...                  "leaf1 Et1 <-> spine1 Et9: fec fc here, rs at the peer"))
        'fec fc here, rs at the peer'
    """
    m = r.message
    if m.startswith(r.device):
        i = m.find(": ")
        if i >= 0:
            return m[i + 2 :]
    return m


def _is_port(r: Result) -> bool:
    return r.subject is not None and r.subject not in _DEVICE_SUBJECTS and r.device != FABRIC


def _named_peers(r: Result) -> Iterable[tuple[str, str]]:
    """The (device, port) pairs a link finding names as the other end (observed or planned)."""
    for side in (r.expected, r.actual):
        if type(side) is dict:
            pd, pp = side.get("peer_device"), side.get("peer_interface")
            if type(pd) is str and type(pp) is str:
                yield pd, pp


class _Union:
    """Union-find over finding indexes."""

    __slots__ = ("parent",)

    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        parent = self.parent
        root = i
        while parent[root] != root:
            root = parent[root]
        while parent[i] != root:
            parent[i], i = root, parent[i]
        return root

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            # the smaller index becomes the root: the component's root is its first finding
            if ra < rb:
                self.parent[rb] = ra
            else:
                self.parent[ra] = rb


def group(results: Iterable[Result], facts: Facts | None = None) -> list[Problem]:
    """Group the ``fail`` and ``error`` results into problems (see the module docs for the rules).

    Args:
        results: Results of a run (passes, skips and waived results are ignored).
        facts: Inventory and link facts; without them, links are known only from what link
            findings name and no device is known unreadable.

    Returns:
        Problems, most severe first, then failures before errors, then by location.
    """
    facts = facts or Facts()
    findings = [r for r in results if r.status is Status.FAIL or r.status is Status.ERROR]
    n = len(findings)
    uf = _Union(n)
    seen: dict[Any, int] = {}
    devices = facts.devices
    peers, planned = facts.peers, facts.planned
    unreadable = {name for name, d in devices.items() if not d.readable}
    # Devices with a consequence finding (rule 4) or a device-level finding of a family (rule 5):
    # their down ports / same-family port findings take an extra key joining them.
    with_consequence: set[str] = set()
    first_port: dict[tuple[str, str], str] = {}  # (family, device) -> its smallest port with a finding
    families: list[str] = []
    for r in findings:
        fam = family_of(r)
        families.append(fam)
        if r.check in _CONSEQUENCES:
            with_consequence.add(r.device)
        elif _is_port(r):
            key = (fam, r.device)
            have = first_port.get(key)
            if have is None or r.subject < have:  # type: ignore[operator]
                first_port[key] = r.subject  # type: ignore[assignment]

    def join(i: int, key: Any) -> None:
        j = seen.setdefault(key, i)
        if j != i:
            uf.union(i, j)

    for i, r in enumerate(findings):
        fam = families[i]
        dev = r.device
        if dev in unreadable:
            join(i, ("dev", dev))
            continue
        if dev == FABRIC:
            join(i, ("fabric", r.check, r.subject if r.subject and ":" in r.subject else None))
            continue
        if r.check in _CONSEQUENCES:
            join(i, ("down", dev))
            if r.check == "clos-shape" and type(r.actual) is list:
                for text in r.actual:
                    m = _MISSING_PAIR.match(text) if type(text) is str else None
                    if m is None:
                        continue
                    other = m.group(1)
                    if other in unreadable:
                        join(i, ("dev", other))
                    else:
                        join(i, ("pair", *sorted((dev, other))))
            continue
        if r.check in _FLEET_CHECKS:
            join(i, ("fleet", r.check, r.subject, repr(r.expected)))
            continue
        if not _is_port(r):
            # a device-level finding joins the device's first port finding of the same fact
            join(i, (fam, dev, first_port.get((fam, dev))))
            if fam == "collection" and devices.get(dev, DeviceFacts("")).lldp_missing:
                join(i, ("collect-lldp", dev))
            continue
        port = r.subject
        assert port is not None
        join(i, (fam, dev, port))
        if fam == "lldp" and devices.get(dev, DeviceFacts("")).lldp_missing:
            join(i, ("collect-lldp", dev))
        if fam == "port-state" and dev in with_consequence:
            join(i, ("down", dev))
        if fam == "cabling" and devices.get(dev, DeviceFacts("")).role == "host":
            join(i, ("cabling-host", dev))
        others = list(_named_peers(r))
        seen_peer = peers.get((dev, port))
        if seen_peer is not None:
            others.append(seen_peer)
        if fam in ("port-state", "cabling"):
            plan = planned.get((dev, port))
            if plan is not None:
                others.append((plan[0], plan[1]))
        for pd, pp in others:
            if pd in unreadable:
                if fam in ("port-state", "lldp") or r.status is Status.ERROR:
                    join(i, ("dev", pd))  # rule 1: a port facing an unreadable device says only that
                continue
            join(i, (fam, pd, pp))
    components: dict[int, list[int]] = {}
    for i in range(n):
        components.setdefault(uf.find(i), []).append(i)
    return _problems(findings, families, components, facts)


def _signature(findings: Sequence[Result], members: Sequence[int]) -> tuple[tuple[str, str], ...]:
    """What a component's findings say once the names are taken out (rule 6): its port findings
    (device-level consequences riding along, such as a host's NCCL_IB_TC, do not count)."""
    at_ports = [i for i in members if _is_port(findings[i])] or members
    return tuple(sorted({(findings[i].check, deviation(findings[i])) for i in at_ports}))


def _problems(
    findings: list[Result], families: list[str], components: dict[int, list[int]], facts: Facts
) -> list[Problem]:
    devices = facts.devices
    unreadable = {name for name, d in devices.items() if not d.readable}
    # Rule 6: components that say the same thing in different places are one fleet problem.
    fleets: dict[tuple[Any, ...], list[int]] = {}
    singles: list[int] = []
    for root, members in components.items():
        if any(findings[i].device in unreadable or findings[i].device == FABRIC for i in members):
            singles.append(root)
            continue
        key = (families[root], _signature(findings, members))
        fleets.setdefault(key, []).append(root)
    out: list[Problem] = []
    for root in singles:
        out.append(_single(findings, families, components[root], facts))
    for (fam, sig), roots in fleets.items():
        if len(roots) == 1:
            out.append(_single(findings, families, components[roots[0]], facts))
        else:
            members = sorted(i for root in roots for i in components[root])
            out.append(_fleet(findings, fam, sig, members, roots, facts))
    out.sort(key=lambda p: (-p.severity, p.status is not Status.FAIL, p.family, p.cause, p.id))
    return out


def _pid(*parts: Any) -> str:
    return "p-" + hashlib.sha256(repr(parts).encode("utf-8")).hexdigest()[:12]


def _primary(findings: list[Result], members: Sequence[int]) -> Result:
    """The finding a cause statement quotes: a failing per-port rule before a link or fabric
    check (its message is the shortest statement of the fact), most severe first."""

    def rank(i: int) -> tuple[Any, ...]:
        r = findings[i]
        link_like = type(r.expected) is dict and "peer_device" in r.expected
        return (r.status is not Status.FAIL, r.check not in _ROOT_CAUSES, -r.severity,
                r.check in _CONSEQUENCES, link_like, i)  # fmt: skip

    return findings[min(members, key=rank)]


def _ports(findings: list[Result], members: Sequence[int]) -> list[tuple[str, str]]:
    return sorted({(findings[i].device, findings[i].subject or "") for i in members if _is_port(findings[i])})


def _where_ports(ports: Sequence[tuple[str, str]], limit: int = 6) -> str:
    """``gpu-001 eth0, eth1; leaf-r0-a Ethernet0`` (the first ``limit`` ports, then a count)."""
    by_dev: dict[str, list[str]] = {}
    for dev, port in ports[:limit]:
        by_dev.setdefault(dev, []).append(port)
    text = "; ".join(f"{dev} {', '.join(ps)}" for dev, ps in by_dev.items())
    return text + (f" and {len(ports) - limit} more" if len(ports) > limit else "")


def _single(findings: list[Result], families: list[str], members: list[int], facts: Facts) -> Problem:
    rs = [findings[i] for i in members]
    primary = _primary(findings, members)
    fam = family_of(primary)
    devs = sorted({r.device for r in rs})
    ports = _ports(findings, members)
    unreadable = [d for d in devs if d in facts.devices and not facts.devices[d].readable]
    if unreadable:
        dev = unreadable[0]
        others = len(rs) - sum(1 for r in rs if r.device == dev)
        cause = f"{dev} could not be read ({facts.devices[dev].status})"
        if others:
            cause += f"; {others} finding(s) on other devices only follow from it"
        kind, fam, pid, where = "device", "unreadable", _pid("device", dev), dev
        devs = [dev, *(d for d in devs if d != dev)]
    else:
        if not ports:
            kind, where = (
                "device",
                ", ".join(devs[:3]) + (f" and {len(devs) - 3} more" if len(devs) > 3 else ""),
            )
            pid = _pid("device", fam, devs[0], primary.check if primary.device == FABRIC else "")
        elif len(ports) == 1:
            kind, where = "port", f"{ports[0][0]} {ports[0][1]}"
            pid = _pid("port", fam, ports[0])
        elif len(ports) == 2 and ports[0][0] != ports[1][0]:
            kind, where = "link", f"{ports[0][0]} {ports[0][1]} <-> {ports[1][0]} {ports[1][1]}"
            pid = _pid("link", fam, ports[0])
        else:
            kind, where = "ports", _where_ports(ports)
            pid = _pid("ports", fam, ports[0])
        here = primary.device + (f" {primary.subject}" if _is_port(primary) else "")
        cause = f"{_FAMILY_TEXT.get(fam, (fam, ''))[0]}: {here}: {deviation(primary) or primary.message}"
    return Problem(
        id=pid,
        family=fam,
        kind=kind,
        cause=cause,
        where=where,
        severity=max(r.severity for r in rs),
        status=Status.FAIL if any(r.status is Status.FAIL for r in rs) else Status.ERROR,
        location={"devices": devs, "ports": [list(p) for p in ports]},
        next_step=_FAMILY_TEXT.get(fam, ("", "see the findings"))[1] or "see the findings",
        inspect=_inspect(fam, ports, facts),
        findings=rs,
    )


def _plural(role: str, n: int) -> str:
    """``1 leaf``, ``96 leaves``, ``3 hosts``."""
    if n == 1:
        return f"1 {role}"
    return f"{n} {role[:-1]}ves" if role.endswith("f") else f"{n} {role}s"


def _fleet(
    findings: list[Result],
    fam: str,
    sig: tuple[tuple[str, str], ...],
    members: list[int],
    roots: list[int],
    facts: Facts,
) -> Problem:
    rs = [findings[i] for i in members]
    primary = _primary(findings, roots)
    fam = family_of(primary)
    devs = sorted({r.device for r in rs})
    ports = _ports(findings, members)
    # Where: the devices of the primary finding's check, by plane and role.
    where_devs = sorted({findings[i].device for i in members if findings[i].check == primary.check})
    planes = sorted({p for d in where_devs if (p := _plane(facts, d)) is not None})
    roles = sorted({_role(facts, d) for d in where_devs})
    count = " and ".join(
        _plural(role, sum(1 for d in where_devs if _role(facts, d) == role)) for role in roles
    )
    named = ", ".join(where_devs[:_NAMED_IN_CAUSE]) + (", ..." if len(where_devs) > _NAMED_IN_CAUSE else "")
    plane_text = (
        f"plane {planes[0]}: "
        if len(planes) == 1
        else f"planes {', '.join(map(str, planes))}: "
        if planes
        else ""
    )
    where_ports = {(findings[i].device, findings[i].subject) for i in members
                   if findings[i].check == primary.check and _is_port(findings[i])}  # fmt: skip
    ports_text = f" ({len(where_ports)} ports)" if len(where_ports) > len(where_devs) else ""
    label = _FAMILY_TEXT.get(fam, (fam, ""))[0]
    cause = f"{label}: {plane_text}{count}{ports_text}: {deviation(primary)}"
    return Problem(
        id=_pid("fleet", fam, sig),
        family=fam,
        kind="fleet",
        cause=cause,
        where=f"{plane_text}{count} ({named})",
        severity=max(r.severity for r in rs),
        status=Status.FAIL if any(r.status is Status.FAIL for r in rs) else Status.ERROR,
        location={"devices": devs, "ports": [list(p) for p in ports], "planes": planes, "roles": roles},
        next_step=_FAMILY_TEXT.get(fam, ("", "see the findings"))[1] or "see the findings",
        inspect=_inspect(fam, ports, facts),
        findings=rs,
    )


def _role(facts: Facts, device: str) -> str:
    d = facts.devices.get(device)
    return d.role if d is not None else "device"


def _plane(facts: Facts, device: str) -> int | None:
    d = facts.devices.get(device)
    return d.plane if d is not None else None


def _inspect(fam: str, ports: list[tuple[str, str]], facts: Facts) -> list[dict[str, Any]]:
    """What to look at for a physical problem: each port, its peer and its cabling-plan row."""
    if fam not in PHYSICAL:
        return []
    out: list[dict[str, Any]] = []
    done: set[tuple[str, str]] = set()
    for dev, port in ports:
        if (dev, port) in done:
            continue
        plan = facts.planned.get((dev, port))
        peer = facts.peers.get((dev, port)) or (plan[:2] if plan else None)
        if peer is not None:
            done.add((peer[0], peer[1]))
        out.append(
            {
                "device": dev,
                "port": port,
                "peer_device": peer[0] if peer else None,
                "peer_port": peer[1] if peer else None,
                "plan_line": plan[2] if plan else None,
            }
        )
        if len(out) >= MAX_INSPECT:
            break
    return out


def check_partition(results: Iterable[Result], problems: Sequence[Problem]) -> None:
    """Assert that every fail/error result is in exactly one problem (a test and debug aid).

    Raises:
        AssertionError: A finding is missing from every problem, or is in two.
    """
    want = [id(r) for r in results if r.status is Status.FAIL or r.status is Status.ERROR]
    got = [id(r) for p in problems for r in p.findings]
    if sorted(want) != sorted(got):
        raise AssertionError(f"{len(want)} findings, {len(got)} placed in problems, or some placed twice")


__all__ = [
    "FAMILIES",
    "DeviceFacts",
    "Facts",
    "Problem",
    "check_partition",
    "deviation",
    "family_of",
    "group",
]
