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
import heapq
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fabline.results import MAX_ITEMS, Result, Severity, SkipBlock, Status

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
    "lossless-drops": "lossless-loss",
    "lossless-drops-delta": "lossless-loss",
    "roce-errors-delta": "lossless-loss",
    "pfc-storm-active": "pfc-storm",
    "pfc-storms-delta": "pfc-storm",
    "link-flaps": "flap",
    "fec-corrected-rate": "signal",
    "fec-pre-ber": "signal",
    "optics-tx-power": "signal",
    "optics-alarms": "signal",
    "optics-firmware-skew": "version",
    "link-optics": "signal",
    "incompatible-versions": "version",
    "host-cnp-dscp": "cnp",
    "host-cnp-priority": "cnp",
    "host-cnp-fabric": "cnp",
    "dcqcn-skew": "cnp",
    "host-pcie-link": "pcie",
    "gpu-nic-affinity": "pcie",
    "host-iommu": "pcie",
    "host-gpu-count": "gpu",
    "host-fabric-manager": "gpu",
    "nccl-gid-index": "nccl",
    "nccl-ib-hca": "nccl",
    "nccl-socket-ifname": "nccl",
    "host-roce-mtu": "nccl",
    "bgp-sessions": "bgp",
    "bgp-asn": "bgp",
    "ecmp-fanout": "bgp",
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
        "map RoCE's DSCP (and only it) to the lossless priority on NIC and switch port; RoCE ToS and "
        "NCCL_IB_TC = that DSCP with ECT",
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
    "cnp": (
        "CNP marking / DCQCN",
        "stamp CNPs with the fabric's CNP DSCP and priority (48, 6) on every NIC, map that DSCP to the "
        "strict CNP class on every switch port, keep DCQCN parameters equal across the fleet",
    ),
    "pcie": (
        "PCIe / NUMA",
        "reseat the NIC or move it to the slot the rail plan pairs with its GPU (same PCIe switch and "
        "NUMA node), check BIOS bifurcation, boot with iommu=pt",
    ),
    "gpu": (
        "GPUs",
        "check the GPUs nvidia-smi lists against the rail NICs and that nvidia-fabricmanager runs",
    ),
    "nccl": (
        "NCCL / RDMA selection",
        "point NCCL_IB_GID_INDEX at the RoCE v2 IPv4 GID, NCCL_IB_HCA at exactly the rail HCAs, "
        "NCCL_SOCKET_IFNAME off the rails; RoCE active MTU 4096",
    ),
    "unreadable": (
        "unreadable",
        "restore access to the device (reachability, credentials, SSH), then collect again",
    ),
    "version": ("version skew", "upgrade the odd devices to the fleet's version (or pin allowed versions)"),
    "qos-skew": ("QoS skew", "align the odd switches' buffer, watchdog and ECN settings with the rest"),
    "gpudirect": ("GPUDirect RDMA", "load nvidia_peermem on the host"),
    "lossless-loss": (
        "loss on the lossless class",
        "find where the lossless priority drops: headroom (pfc-headroom), a PFC storm, a host that "
        "cannot keep up; then clear the counters and watch them",
    ),
    "pfc-storm": (
        "PFC storm",
        "find the device that keeps sending pauses (usually a host that stopped draining its queue) "
        "behind the stormed port",
    ),
    "flap": ("link flaps", "inspect the optic, cable and peer of the flapping port; watch it for new flaps"),
    "bgp": (
        "BGP underlay",
        "bring the listed sessions up at both ends (remote AS, addressing, the link itself) and set "
        "BGP multipath to at least the plane's spine count",
    ),
}

#: Families whose problems are physical: they say what to inspect (device, port, peer, plan row).
PHYSICAL = frozenset({"signal", "fec-mode", "port-state", "cabling", "speed", "flap"})

#: Subjects of built-in checks that name a device-wide aspect, not a port.
_DEVICE_SUBJECTS = frozenset(
    {"bandwidth", "uplinks", "downlinks", "NCCL_IB_TC", "os_version", "nic_firmware", "nic_driver",
     "buffer_mode", "pfc_watchdog", "ecn_profiles", "sessions", "asn", "ecmp", "bgp"}
)  # fmt: skip

#: Findings that are consequences of down ports on their device (rule 4).
_CONSEQUENCES = frozenset({"leaf-oversubscription", "clos-shape"})
#: Fleet checks compare a device with its peers: a deviation is the same for every odd one out.
_FLEET_CHECKS = frozenset({"version-skew", "qos-skew"})
#: Checks whose finding states a cause the rest of its problem follows from (quoted first).
_ROOT_CAUSES = frozenset({"device-collection", "switch-port-up", "host-link-up", "rail-cabling"})
#: Underlay checks: one result per switch; a finding joins its switch's other underlay findings,
#: its down ports (a dark uplink has no session) and the findings of the peers it names
#: (``actual["peers"]``): both ends of a down session and the leaf's lost ECMP path are one problem.
_UNDERLAY = frozenset({"bgp-sessions", "bgp-asn", "ecmp-fanout"})
#: Checks whose family depends on the message (a "port down" row of the cabling plan is port state).
_BY_MESSAGE = frozenset({"cabling-plan", "link-lldp"})
#: Families whose other end also comes from the cabling plan (a dark link has no LLDP).
_PLANNED_FAMILIES = frozenset({"port-state", "cabling"})
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
        location: ``devices`` (sorted), ``ports`` (sorted ``(device, port)`` pairs, the first
            :data:`MAX_LOCATION_PORTS`, a block's subjects included; ``ports_total`` counts them all
            when there are more) and, for fleet problems, ``planes`` and ``roles``.
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
            "location": {k: [list(x) for x in v] if k == "ports" else v for k, v in self.location.items()},
            "next_step": self.next_step,
            "inspect": self.inspect,
            "count": len(self.findings),
        }
        if with_findings:
            out["findings"] = [r.id for r in self.findings]
        return out


#: Most ports listed under ``inspect`` (a plane-wide problem lists its first ones).
MAX_INSPECT = 20
#: Most ports listed in a problem's ``location`` (the first in sorted order; ``ports_total`` counts all).
MAX_LOCATION_PORTS = MAX_ITEMS
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
    families, parent = _components(findings, facts)
    # A parent always has a smaller index (the smaller root wins every union), so one forward pass
    # resolves every finding's root: its parent's root is already known.
    components: dict[int, list[int]] = {}
    for i in range(len(findings)):
        p = parent[i]
        if p != i:
            p = parent[i] = parent[p]
            components[p].append(i)
        else:
            components[i] = [i]
    return _problems(findings, families, components, facts)


def _components(findings: list[Result], facts: Facts) -> tuple[list[str], list[int]]:  # noqa: C901 - a hot loop, inlined on purpose
    """Each finding's family, and the union-find parents joining findings of one cause.

    Findings sharing a key (a fact of a port, a device, a link end, ...) are joined. This is the
    hot loop of a plane-wide fault (400k findings on a 100k-GPU fabric): plain dict and tuple
    work, no helper calls on the common path.
    """
    n = len(findings)
    parent = list(range(n))
    seen: dict[Any, int] = {}
    devices = facts.devices
    peers, planned = facts.peers, facts.planned
    unreadable = {name for name, d in devices.items() if not d.readable}
    lldp_missing = {name for name, d in devices.items() if d.lldp_missing}
    hosts = {name for name, d in devices.items() if d.role == "host"}
    not_port = _DEVICE_SUBJECTS
    # Rules 4 and 5 need to know every port finding first: consequences and device-level
    # findings are joined after the pass, from these.
    with_consequence: set[str] = set()
    first_port: dict[tuple[str, str], str] = {}
    down_ports: list[tuple[int, str]] = []
    linked: set[tuple[str, str, str]] = set()  # (family, device, port) keys a finding named the peer of
    unnamed: list[int] = []
    device_level: list[int] = []
    families: list[str] = []
    fam_of = FAMILIES.get
    add_family = families.append

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def join(i: int, key: Any) -> None:
        j = seen.setdefault(key, i)
        if j != i:
            a, b = find(i), find(j)
            if a < b:  # the smaller index becomes the root
                parent[b] = a
            elif b < a:
                parent[a] = b

    for i, r in enumerate(findings):
        check = r.check
        fam = fam_of(check)
        if fam is None or check in _BY_MESSAGE:
            fam = family_of(r)
        add_family(fam)
        dev = r.device
        port = r.subject
        if dev in unreadable:
            join(i, ("dev", dev))
            continue
        if dev == FABRIC:
            join(i, ("fabric", check, port if port and ":" in port else None))
            continue
        if check in _CONSEQUENCES:
            with_consequence.add(dev)
            _join_consequence(i, r, join, unreadable)
            continue
        if check in _FLEET_CHECKS:
            join(i, ("fleet", check, port, repr(r.expected)))
            continue
        if check in _UNDERLAY:
            # a down uplink takes its session and its ECMP path with it: a consequence (rule 4)
            with_consequence.add(dev)
            join(i, ("down", dev))
            join(i, ("bgp", dev))
            named_peers = r.actual.get("peers") if type(r.actual) is dict else None
            for peer in named_peers if type(named_peers) is list else ():
                join(i, ("bgp-pair", *sorted((dev, str(peer)))))
            continue
        if port is None or port in not_port:
            device_level.append(i)
            continue
        first = first_port.get((fam, dev))
        if first is None or port < first:
            first_port[(fam, dev)] = port
        key = (fam, dev, port)
        j = seen.setdefault(key, i)
        if j != i:
            a, b = find(i), find(j)
            if a < b:
                parent[b] = a
            elif b < a:
                parent[a] = b
        # the other end: named by the finding (link checks; the cabling plan names two), else
        # from the link graph
        named = False
        for side in (r.expected, r.actual):
            if named and fam != "cabling":  # a cabling-plan row names the planned and the seen peer
                break
            if type(side) is dict:
                pd = side.get("peer_device")
                pp = side.get("peer_interface")
                if type(pd) is str and type(pp) is str:
                    named = True
                    if pd in unreadable:
                        _join_unreadable(i, fam, r.status, pd, join)
                        continue
                    j = seen.setdefault((fam, pd, pp), i)  # join(), inlined: the hottest line
                    if j != i:
                        a, b = find(i), find(j)
                        if a < b:
                            parent[b] = a
                        elif b < a:
                            parent[a] = b
        if named:
            linked.add(key)
        else:
            unnamed.append(i)
        if fam in _PLANNED_FAMILIES:
            plan = planned.get((dev, port))
            if plan is not None:
                if plan[0] in unreadable:
                    _join_unreadable(i, fam, r.status, plan[0], join)
                else:
                    join(i, (fam, plan[0], plan[1]))
            if fam == "port-state":
                down_ports.append((i, dev))
            elif dev in hosts:
                join(i, ("cabling-host", dev))
        elif fam == "lldp" and dev in lldp_missing:
            join(i, ("collect-lldp", dev))
    for i in unnamed:
        # The link graph's peer, for a port finding no link finding at the same port named one
        # (a plane-wide fault has a link finding beside every rule finding: no look-ups at all).
        r = findings[i]
        fam, dev, port = families[i], r.device, r.subject
        if (fam, dev, port) in linked:
            continue
        seen_peer = peers.get((dev, port))  # type: ignore[arg-type]
        if seen_peer is not None:
            if seen_peer[0] in unreadable:
                _join_unreadable(i, fam, r.status, seen_peer[0], join)
            else:
                join(i, (fam, *seen_peer))
    for i, dev in down_ports:
        if dev in with_consequence:
            join(i, ("down", dev))
    for i in device_level:
        # a device-level finding joins the device's first port finding of the same fact
        fam, dev = families[i], findings[i].device
        join(i, (fam, dev, first_port.get((fam, dev))))
        if fam == "collection" and dev in lldp_missing:
            join(i, ("collect-lldp", dev))
    return families, parent


def _join_consequence(i: int, r: Result, join: Any, unreadable: set[str]) -> None:
    """Rule 4: an oversubscription or Clos-shape finding joins its device's down ports, and a
    missing leaf-spine pair joins the other end's finding (or the unreadable other end).
    """
    dev = r.device
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


def _join_unreadable(i: int, fam: str, status: Status, device: str, join: Any) -> None:
    """Rule 1: a port finding facing an unreadable device that says only that joins its problem."""
    if fam in {"port-state", "lldp"} or status is Status.ERROR:
        join(i, ("dev", device))


def _signature(findings: Sequence[Result], members: Sequence[int]) -> frozenset[tuple[str, str]]:
    """What a component's findings say once the names are taken out (rule 6): its port findings
    (device-level consequences riding along, such as a host's NCCL_IB_TC, do not count).
    """
    not_port = _DEVICE_SUBJECTS
    out = set()
    for i in members:
        r = findings[i]
        if r.subject is not None and r.subject not in not_port:
            m = r.message
            if m.startswith(r.device):
                cut = m.find(": ")
                if cut >= 0:
                    m = m[cut + 2 :]
            out.add((r.check, m))
    if not out:
        out = {(findings[i].check, deviation(findings[i])) for i in members}
    return frozenset(out)


def _problems(
    findings: list[Result], families: list[str], components: dict[int, list[int]], facts: Facts
) -> list[Problem]:
    devices = facts.devices
    special = {name for name, d in devices.items() if not d.readable}
    special.add(FABRIC)
    # Rule 6: components that say the same thing in different places are one fleet problem.
    fleets: dict[frozenset[tuple[str, str]], list[int]] = {}
    singles: list[int] = []
    not_port = _DEVICE_SUBJECTS
    for root, members in components.items():
        # the signature (what the component says once the names are out), inlined: this loop
        # runs once per component, 100k times for a plane-wide fault
        said: set[tuple[str, str]] = set()
        for i in members:
            r = findings[i]
            if r.device in special:
                break
            subject = r.subject
            if subject is not None and subject not in not_port:
                m = r.message
                if m.startswith(r.device):
                    cut = m.find(": ")
                    if cut >= 0:
                        m = m[cut + 2 :]
                said.add((r.check, m))
        else:
            fleets.setdefault(frozenset(said) if said else _signature(findings, members), []).append(root)
            continue
        singles.append(root)
    out: list[Problem] = []
    for root in singles:
        out.append(_single(findings, families, components[root], facts))
    for sig, roots in fleets.items():
        if len(roots) == 1:
            out.append(_single(findings, families, components[roots[0]], facts))
        else:
            members = []
            for root in roots:
                members.extend(components[root])
            members.sort()
            out.append(_fleet(findings, sig, members, facts))
    # Two problems never share an id (possible only for odd inputs, e.g. one result id twice).
    by_id: dict[str, list[Problem]] = {}
    for p in out:
        by_id.setdefault(p.id, []).append(p)
    for same in by_id.values():
        if len(same) > 1:
            # by what the findings say, not by their order in the run (two findings may share a
            # result id, e.g. a fleet check's two deviations on one subject)
            same.sort(
                key=lambda p: sorted((r.id, r.message, repr(r.expected), repr(r.actual)) for r in p.findings)
            )
            for n, p in enumerate(same[1:], start=1):
                p.id = _pid(p.id, n)
    out.sort(key=lambda p: (-p.severity, p.status is not Status.FAIL, p.family, p.cause, p.id))
    return out


def _pid(*parts: Any) -> str:
    return "p-" + hashlib.sha256(repr(parts).encode("utf-8")).hexdigest()[:12]


def _primary(findings: list[Result], members: Sequence[int]) -> Result:
    """The finding a cause statement quotes: a failing per-port rule before a link or fabric
    check (its message is the shortest statement of the fact), most severe first; a port's finding
    before a device-level one riding along (a host's NCCL_IB_TC), then by place and text.
    """

    def rank(i: int) -> tuple[Any, ...]:
        r = findings[i]
        link_like = type(r.expected) is dict and "peer_device" in r.expected
        # ties are broken by what the finding says, never by its position in the run: the same
        # findings in any order give the same primary, hence the same family and problem id
        return (r.status is not Status.FAIL, r.check not in _ROOT_CAUSES, -r.severity,
                r.check in _CONSEQUENCES, link_like, not _is_port(r), r.device, r.subject or "",
                r.check, r.message, i)  # fmt: skip

    return findings[min(members, key=rank)]


def _add_ports(out: set[tuple[str, str]], r: Result) -> None:
    """Add the ports ``r`` is about: its subject, or each subject of a block (a block of skipped or
    error results on many ports is a port finding on each of them, not a device-level one).
    """
    if type(r) is SkipBlock:
        if r.device != FABRIC:
            dev, not_port = r.device, _DEVICE_SUBJECTS
            out.update((dev, s) for s in r.subjects if s is not None and s not in not_port)
    elif _is_port(r):
        out.add((r.device, r.subject or ""))


def _ports(findings: list[Result], members: Sequence[int]) -> set[tuple[str, str]]:
    out: set[tuple[str, str]] = set()
    for i in members:
        _add_ports(out, findings[i])
    return out


def _first_ports(ports: set[tuple[str, str]]) -> list[tuple[str, str]]:
    """The first :data:`MAX_LOCATION_PORTS` ports in sorted order (all of them when fewer)."""
    if len(ports) <= MAX_LOCATION_PORTS:
        return sorted(ports)
    return heapq.nsmallest(MAX_LOCATION_PORTS, ports)


def _location(devices: list[str], ports: list[tuple[str, str]], total: int, **more: Any) -> dict[str, Any]:
    """A problem's ``location``: ``ports`` bounded, ``ports_total`` when some were left out."""
    out: dict[str, Any] = {"devices": devices, "ports": ports}
    if total > len(ports):
        out["ports_total"] = total
    out.update(more)
    return out


def _where_ports(ports: Sequence[tuple[str, str]], total: int, limit: int = 6) -> str:
    """``gpu-001 eth0, eth1; leaf-r0-a Ethernet0`` (the first ``limit`` ports, then a count)."""
    by_dev: dict[str, list[str]] = {}
    for dev, port in ports[:limit]:
        by_dev.setdefault(dev, []).append(port)
    text = "; ".join(f"{dev} {', '.join(ps)}" for dev, ps in by_dev.items())
    return text + (f" and {total - limit} more" if total > limit else "")


def _single(findings: list[Result], families: list[str], members: list[int], facts: Facts) -> Problem:
    rs = [findings[i] for i in members]
    primary = _primary(findings, members)
    fam = family_of(primary)
    devs = sorted({r.device for r in rs})
    port_set = _ports(findings, members)
    n_ports = len(port_set)
    ports = _first_ports(port_set)
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
        # The id names the fact and the first place (device, port) it shows at: a further check
        # failing on the same fact at the same place next time does not change it.
        anchor = min((r.device, r.subject or "") for r in rs)
        if not ports:
            kind, where = (
                "device",
                ", ".join(devs[:3]) + (f" and {len(devs) - 3} more" if len(devs) > 3 else ""),
            )
            pid = _pid("device", fam, anchor)
        elif n_ports == 1:
            kind, where = "port", f"{ports[0][0]} {ports[0][1]}"
            pid = _pid("port", fam, anchor)
        elif n_ports == 2 and ports[0][0] != ports[1][0]:
            kind, where = "link", f"{ports[0][0]} {ports[0][1]} <-> {ports[1][0]} {ports[1][1]}"
            pid = _pid("link", fam, anchor)
        else:
            kind, where = "ports", _where_ports(ports, n_ports)
            pid = _pid("ports", fam, anchor)
        here = primary.device + (
            f" {primary.subject_text(3)}" if _is_port(primary) or type(primary) is SkipBlock else ""
        )
        cause = f"{_FAMILY_TEXT.get(fam, (fam, ''))[0]}: {here}: {deviation(primary) or primary.message}"
    return Problem(
        id=pid,
        family=fam,
        kind=kind,
        cause=cause,
        where=where,
        severity=max(r.severity for r in rs),
        status=Status.FAIL if any(r.status is Status.FAIL for r in rs) else Status.ERROR,
        location=_location(devs, ports, n_ports),
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
    sig: frozenset[tuple[str, str]],
    members: list[int],
    facts: Facts,
) -> Problem:
    rs = [findings[i] for i in members]
    not_port = _DEVICE_SUBJECTS
    # The primary states the deviation the components share: one of their port findings (what the
    # signature is made of; device-level findings riding along do not count), chosen by content.
    # Not a component's root: that is only its first finding in the run's order, which must not
    # decide the problem's id.
    said = [i for i in members if (s := findings[i].subject) is not None and s not in not_port]
    primary = _primary(findings, said or members)
    fam = family_of(primary)
    devs_set: set[str] = set()
    where_set: set[str] = set()
    where_ports: set[tuple[str, str]] = set()
    check = primary.check
    for r in rs:
        dev = r.device
        devs_set.add(dev)
        if r.check == check:
            where_set.add(dev)
            subject = r.subject
            if subject is not None and subject not in not_port:
                where_ports.add((dev, subject))
            elif type(r) is SkipBlock:
                _add_ports(where_ports, r)
    devs = sorted(devs_set)
    # The ports of the deviation itself (the other findings' ports are in their result ids), bounded.
    ports = _first_ports(where_ports)
    # Where: the devices of the primary finding's check, by plane and role.
    where_devs = sorted(where_set)
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
    ports_text = f" ({len(where_ports)} ports)" if len(where_ports) > len(where_devs) else ""
    label = _FAMILY_TEXT.get(fam, (fam, ""))[0]
    cause = f"{label}: {plane_text}{count}{ports_text}: {deviation(primary)}"
    return Problem(
        id=_pid("fleet", fam, sorted(sig)),
        family=fam,
        kind="fleet",
        cause=cause,
        where=f"{plane_text}{count} ({named})",
        severity=max(r.severity for r in rs),
        status=Status.FAIL if any(r.status is Status.FAIL for r in rs) else Status.ERROR,
        location=_location(devs, ports, len(where_ports), planes=planes, roles=roles),
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


def problem_from_dict(row: Mapping[str, Any], findings: Mapping[str, Result]) -> Problem:
    """A problem back from its ``report.json`` / history form; ``findings`` maps result ids to results
    (ids not found there are left out).
    """
    return Problem(
        id=str(row["id"]),
        family=str(row["family"]),
        kind=str(row["kind"]),
        cause=str(row["cause"]),
        where=str(row.get("where", "")),
        severity=Severity.parse(str(row["severity"])),
        status=Status(row["status"]),
        location=dict(row.get("location") or {}),
        next_step=str(row.get("next_step", "")),
        inspect=list(row.get("inspect") or []),
        findings=[findings[i] for i in row.get("findings", ()) if i in findings],
    )


def facts_of_rows(device_rows: Iterable[Mapping[str, Any]]) -> Facts:
    """Facts from a report's device rows alone (no link graph): roles and readability."""
    devices = {}
    for row in device_rows:
        status = str(row.get("status", "ok"))
        devices[str(row.get("name"))] = DeviceFacts(
            role=str(row.get("role", "")), readable=status in ("ok", "partial"), status=status
        )
    return Facts(devices)


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
