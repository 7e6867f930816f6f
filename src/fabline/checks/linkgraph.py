"""The link graph: both ends of every link, joined on LLDP, built once per run for all link checks.

A service of the engine, not of any check: when a fabric check declares ``uses_links`` (every
:class:`~fabline.checks.fabric.links.LinkCheck` does), the engine projects each readable device
once (:class:`Projector`: one :class:`PortView` per front-panel port, repeated values shared) and
hands the fabric checks a :class:`LinkGraphs` as ``FabricContext.links``; ``fabric.links.graph()``
builds the graph on first use and every later call gets the same one. Enabling ten link checks
costs one projection per device and one pairing pass, not ten. Everything lives on the run's
objects: nothing here is a module-level cache.

Pairing follows SuzieQ's interface join: a port's LLDP names a peer device and port; the peer is
looked up in the inventory (case- and domain-insensitive), then among the peer's collected ports
(name, short name such as ``Eth1/1`` or SONiC alias). The outcome of each end is a
:class:`Peering` status that tells "consistent" from "the peer's port has no LLDP" (one-sided),
"the peer's port sees someone else" (disagreeing), "peer not in the inventory", "peer not
readable" and "peer port not found".
"""

from __future__ import annotations

import fnmatch
import functools
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any, NamedTuple, Protocol

from fabline.perf import paused_gc

#: Front-panel ports of switches (the baseline's switch rules select the same names).
SWITCH_PORT = re.compile(r"(Ethernet|swp|Eth)[0-9/]+(s[0-9]+)?")

_SHORT = re.compile(r"^(?:ethernet|eth|et|e)(?=\d)")


@functools.lru_cache(maxsize=1 << 16)
def canonical_port(name: str) -> str:
    """A port name in a form both ends of LLDP agree on (case, ``Eth``/``Et`` abbreviations).

    Example:
        >>> [canonical_port(n) for n in ("Ethernet1/1", "Eth1/1", "et1/1", "swp3", "eth0")]
        ['ethernet1/1', 'ethernet1/1', 'ethernet1/1', 'swp3', 'ethernet0']
    """
    return _SHORT.sub("ethernet", name.strip().lower(), count=1)


#: A media code as it appears in module types and part names (IEEE PMD suffixes, cable kinds).
_MEDIA = re.compile(
    r"(?<![A-Z0-9])(SR8|SR4|SR2|SR|VR8|VR4|DR8|DR4|DR2|DR|FR8|FR4|FR|LR8|LR4|LR|ER8|ZR|AOC|AEC|ACC|CR8|CR4|CR2|CR|DAC)(?![A-Z0-9])"
)
_RATE = re.compile(r"(?<![0-9])(800|400|200|100|50|40|25|10)G(?:BASE)?(?![0-9])")


def optic_class(optics: Any) -> str | None:
    """``"<rate> <media>"`` of a transceiver, from its type (then part number); None when not told.

    Platforms print a module's type differently (EOS ``400GBASE-DR4``, NX-OS ``QSFP-DD-400G-DR4``,
    Cumulus ``cable-type``), so both ends are compared on what they share: the rate and the
    media code. A part missing in the text is ``?``.

    Example:
        >>> optic_class({"type": "400GBASE-SR8"}), optic_class({"type": "QSFP-DD-400G-AOC"})
        ('400G SR8', '400G AOC')
        >>> optic_class({"type": "QSFP-DD Double Density 8X Pluggable Transceiver"}) is None
        True
    """
    if type(optics) is not dict:
        return None
    for key in ("type", "media", "part_number"):
        text = optics.get(key)
        if type(text) is not str:
            continue
        upper = text.upper()
        media, rate = _MEDIA.search(upper), _RATE.search(upper)
        if media:
            return f"{rate[1] + 'G' if rate else '?'} {media[1]}"
    return None


class PortView(NamedTuple):
    """The few fields of one port the link checks compare (None = not collected).

    A named tuple (cheap to build from the plain tuple a worker sends back); ports are told apart
    by identity, never by value.

    Attributes:
        name: Interface name as the device reports it.
        peer: LLDP neighbour device name as reported (None: no LLDP neighbour).
        peer_port: LLDP neighbour port; ``peer_port_alt`` its description (a fallback key).
        several: Several LLDP neighbours were heard on this port (``lldp.other_neighbors``).
        mtu: Reported MTU (its meaning is the platform's; messages quote it).
        frame_bytes, frame_bytes_tagged: The largest untagged / 802.1Q-tagged frame the port
            carries (state schema v1: the parsers turn each platform's ``mtu`` into these).
        speed_gbps, fec, autoneg, trust: As in state schema v1.
        pfc: Sorted PFC priorities; ``dscp``: sorted (DSCP, priority) pairs.
        roce_tos, ecn_np, ecn_rp: Host NIC application settings.
        optic: The module's rate and media code (:func:`optic_class`).
        cnp_dscp: The DSCP a host NIC stamps on the CNPs it sends.
    """

    name: str
    peer: str | None
    peer_port: str | None
    peer_port_alt: str | None
    several: bool
    admin_up: bool | None
    oper_up: bool | None
    mtu: int | None
    frame_bytes: int | None
    frame_bytes_tagged: int | None
    speed_gbps: float | None
    fec: str | None
    autoneg: bool | None
    trust: str | None
    pfc: tuple[int, ...] | None
    dscp: tuple[tuple[int, int], ...] | None
    roce_tos: int | None
    ecn_np: tuple[int, ...] | None
    ecn_rp: tuple[int, ...] | None
    alias: str | None
    #: The transceiver as "rate media" (``400G SR8``, ``400G AOC``), from ``optics``; None: unknown.
    optic: str | None = None
    cnp_dscp: int | None = None


class DeviceView(NamedTuple):
    """A device's projection: its ports in scope and the host's NCCL traffic class.

    ``ports`` holds each port's :class:`PortView` fields as a *plain* tuple: forked workers send
    these back to the parent by pickle, and plain tuples load about ten times faster than named
    ones. :func:`graph_of` turns them into :class:`PortView` once (``LinkGraph.views``).
    """

    ports: tuple[tuple[Any, ...], ...]
    nccl_ib_tc: str | None


class LinkDevice(Protocol):
    """What a projection reads of a device (a :class:`~fabline.checks.DeviceContext` is one)."""

    @property
    def role(self) -> str:
        """``spine``, ``leaf`` or ``host``."""
        ...

    @property
    def vars(self) -> Mapping[str, Any]:
        """Inventory variables (``rail_interfaces``)."""
        ...

    @property
    def state(self) -> Mapping[str, Any]:
        """The state document."""
        ...

    @property
    def interfaces(self) -> Mapping[str, Mapping[str, Any]]:
        """The state's interfaces."""
        ...


_EMPTY: Mapping[str, Any] = MappingProxyType({})


class Projector:
    """Projects devices into :class:`DeviceView` s for one run's device pass.

    Values that repeat on every port (DSCP maps, PFC lists) become one shared tuple per distinct
    value, so a fabric of 100k GPUs holds a handful of them; the caches are this object's, and
    bounded (a pathological fleet of all-different maps stops caching, it does not grow).
    """

    def __init__(self) -> None:
        self._interned: dict[Any, Any] = {}
        self._prios_seen: dict[Any, Any] = {}
        self._dscp_seen: dict[Any, Any] = {}
        # The last map seen (a port's own dict) and its pairs.
        self._dscp_last: dict[Any, Any] | None = None
        self._dscp_last_pairs: tuple[tuple[int, int], ...] | None = None
        self._switch_port_seen: dict[str, bool] = {}
        self._optic_seen: dict[tuple[Any, ...], str | None] = {}

    def project(self, device: LinkDevice) -> DeviceView:
        """The device's :class:`DeviceView`.

        Ports in scope: on switches the front-panel ports (:data:`SWITCH_PORT`) and any port with
        an LLDP neighbour; on hosts the inventory's ``rail_interfaces`` (every port with LLDP when
        the variable is missing).
        """
        with paused_gc():  # hundreds of small tuples per device, no cycles: skip the collector's rescans
            return self._project(device)

    def _intern(self, value: Any) -> Any:
        """One shared object per distinct value."""
        hit = self._interned.get(value)
        if hit is None:
            if len(self._interned) > 100_000:
                return value
            self._interned[value] = value
            return value
        return hit

    def _prios(self, value: Any) -> tuple[int, ...] | None:
        if type(value) is not list:
            return None
        raw = tuple(value)
        hit = self._prios_seen.get(raw)
        if hit is None:
            hit = self._intern(tuple(sorted({v for v in value if type(v) is int})))
            if len(self._prios_seen) < 10_000:
                self._prios_seen[raw] = hit
        return hit  # type: ignore[no-any-return]

    def _dscp(self, value: Any) -> tuple[tuple[int, int], ...] | None:
        """The DSCP map as sorted (DSCP, priority) pairs, one shared tuple per distinct map.

        The raw items are the cache key, so a map seen before costs one hash, not a sort.
        """
        if type(value) is not dict:
            return None
        # The previous map again (every port of a device, most devices): the two dicts compared
        # in C, key by key (0.5 us for 64 entries; building the key below costs 1.3 us).
        if value == self._dscp_last:
            return self._dscp_last_pairs
        # Keys and values as two flat tuples: equal exactly when the items are, half the cost.
        raw = (tuple(value), tuple(value.values()))
        hit = self._dscp_seen.get(raw)
        if hit is None:
            items = sorted((int(k), v) for k, v in value.items() if isinstance(v, int) and str(k).isdigit())
            hit = self._intern(tuple(items))
            if len(self._dscp_seen) < 100_000:
                self._dscp_seen[raw] = hit
        self._dscp_last, self._dscp_last_pairs = value, hit
        return hit  # type: ignore[no-any-return]

    def _optic(self, optics: Any) -> str | None:
        """:func:`optic_class`, once per distinct (type, media, part number)."""
        if type(optics) is not dict:
            return None
        key = (optics.get("type"), optics.get("media"), optics.get("part_number"))
        try:
            hit = self._optic_seen.get(key, _EMPTY)
        except TypeError:  # an unhashable value where a string belongs
            return optic_class(optics)
        if hit is _EMPTY:
            hit = optic_class(optics)
            if len(self._optic_seen) < 10_000:
                self._optic_seen[key] = hit
        return hit  # type: ignore[return-value]

    def _switch_port(self, name: str) -> bool:
        hit = self._switch_port_seen.get(name)
        if hit is None:
            hit = SWITCH_PORT.fullmatch(name) is not None
            if len(self._switch_port_seen) < 100_000:
                self._switch_port_seen[name] = hit
        return hit

    def _project(self, device: LinkDevice) -> DeviceView:
        rails = device.vars.get("rail_interfaces")
        is_host = device.role == "host"
        wanted = {str(x) for x in rails} if is_host and isinstance(rails, list) else None
        ports: list[tuple[Any, ...]] = []
        append = ports.append
        prios, dscp, switch_port, optic = self._prios, self._dscp, self._switch_port, self._optic
        intern = sys.intern
        for name, body in device.interfaces.items():
            if type(body) is not dict:
                continue
            lldp = body.get("lldp")
            if type(lldp) is not dict:
                lldp = _EMPTY
            peer = lldp.get("device")
            if wanted is not None:
                if name not in wanted:
                    continue
            elif type(peer) is not str and (is_host or not switch_port(name)):
                continue
            nic = body.get("nic")
            if type(nic) is not dict:
                nic = _EMPTY
            get = body.get
            # The field tests written out (the _s/_int/_bool/_num helpers, inline): ~20 per port.
            # Text interned: the part pickles each distinct value once (a leaf's views 2.6x faster
            # to pickle, 1.8x to load, a third smaller).
            append(
                (
                    intern(name),
                    intern(peer) if type(peer) is str else None,
                    intern(v) if type(v := lldp.get("port")) is str else None,
                    intern(v) if type(v := lldp.get("port_description")) is str else None,
                    bool(lldp.get("other_neighbors")),
                    v if type(v := get("admin_up")) is bool else None,
                    v if type(v := get("oper_up")) is bool else None,
                    v if type(v := get("mtu")) is int else None,
                    v if type(v := get("frame_bytes")) is int else None,
                    v if type(v := get("frame_bytes_tagged")) is int else None,
                    v if type(v := get("speed_gbps")) is int or type(v) is float else None,
                    intern(v) if type(v := get("fec")) is str else None,
                    v if type(v := get("autoneg")) is bool else None,
                    intern(v) if type(v := get("trust")) is str else None,
                    prios(get("pfc_priorities")),
                    dscp(get("dscp_to_priority")),
                    v if type(v := nic.get("roce_tos")) is int else None,
                    prios(nic.get("ecn_np_priorities")),
                    prios(nic.get("ecn_rp_priorities")),
                    intern(v) if type(v := get("alias")) is str else None,
                    optic(get("optics")),
                    v if type(v := nic.get("cnp_dscp")) is int else None,
                )
            )
        host = device.state.get("host")
        env = host.get("nccl_env") if isinstance(host, Mapping) else None
        tc = env.get("NCCL_IB_TC") if isinstance(env, Mapping) else None
        return DeviceView(tuple(ports), str(tc) if tc is not None else None)


class Peering(StrEnum):
    """How one end of a link relates to the port its LLDP names."""

    OK = "ok"  # the peer port's LLDP names this port back
    ONE_SIDED = "one-sided"  # the peer port has no LLDP neighbour; this side's LLDP is the evidence
    CLAIMED = "claimed"  # this port has no LLDP; exactly one other port's LLDP names it
    DISAGREE = "disagree"  # the peer port's LLDP names another port
    UNKNOWN_PEER = "unknown-peer"  # the LLDP neighbour is not in the (selected) inventory
    PEER_UNREADABLE = "peer-unreadable"  # in the inventory but not collected / not readable
    PEER_PORT_UNKNOWN = "peer-port-unknown"  # the peer's state has no such port


PAIRED = frozenset({Peering.OK, Peering.ONE_SIDED, Peering.CLAIMED})


@dataclass(slots=True)
class End:
    """One end of a link, seen from ``device``/``port``.

    ``peer_device`` is the inventory name when known (else the LLDP name); ``peer`` is the peer's
    :class:`PortView` when the peer's state has that port.
    """

    device: str
    port: PortView
    status: Peering
    peer_device: str
    peer_port_name: str
    peer: PortView | None
    detail: str = ""


@dataclass
class LinkGraph:
    """Every link end of the fabric, by device, and which ports' LLDP names each port."""

    ends: dict[str, list[End]]
    ports: dict[str, dict[str, PortView]]
    views: dict[str, tuple[PortView, ...]]  # each device's ports in the device's order
    first: dict[int, tuple[str, PortView, str, PortView]]
    more: dict[int, list[tuple[str, PortView]]]
    #: What checks derive from this graph once for all of them (the equality comparison, rail
    #: indices), by a key of the deriving module's choice.
    memo: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def iter_ends(self) -> Iterator[End]:
        """All ends, device by device, in a stable order."""
        for device in sorted(self.ends):
            yield from self.ends[device]

    def claimants(self, port: PortView) -> list[tuple[str, PortView]]:
        """The (device, port) pairs whose LLDP names ``port``."""
        return _claimants(self.first, self.more, port)

    def contested(self, port: PortView) -> bool:
        """Whether several ports' LLDP name ``port``."""
        return id(port) in self.more


def resolve_name(name: str, by_lower: Mapping[str, str]) -> str | None:
    """Inventory name of an LLDP system name (case-insensitive, domain stripped).

    Example:
        >>> resolve_name("Leaf-R0-A.lab.example", {"leaf-r0-a": "leaf-r0-a"})
        'leaf-r0-a'
    """
    key = name.lower()
    hit = by_lower.get(key)
    if hit is None and "." in key:
        hit = by_lower.get(key.split(".", 1)[0])
    return hit


class PeerSummary(Protocol):
    """What the graph reads of every inventory device (a :class:`~fabline.checks.DeviceSummary` is one)."""

    @property
    def readable(self) -> bool:
        """Whether the device's state could be read."""
        ...

    @property
    def status(self) -> str:
        """The device's collection status."""
        ...


class LinkGraphs:
    """The run's link graph service (``FabricContext.links``): the graph, built on first use.

    The engine makes one per run from the views it projected (one per readable device) and the
    summaries of every inventory device.

    Attributes:
        views: Each projected device's :class:`DeviceView`, by name.
        devices: Every selected inventory device's summary, by name.
        projected: Whether the engine projected the devices (a check of the run declared
            ``uses_links``); asking for the graph otherwise is a check bug, not an empty fabric.
    """

    def __init__(
        self, views: Mapping[str, DeviceView], devices: Mapping[str, PeerSummary], *, projected: bool = True
    ) -> None:
        self.views: dict[str, DeviceView] = {}
        self.devices = devices
        self.projected = projected
        #: Each device's ports as :class:`PortView` s, and by canonical name and alias (:meth:`add`).
        self._ports: dict[str, tuple[PortView, ...]] = {}
        self._indexes: dict[str, dict[str, PortView]] = {}
        self._graphs: dict[tuple[str, ...], LinkGraph] = {}
        self._last: LinkGraph | None = None
        #: Graphs paired as the views arrive (:meth:`pair_as_added`), by ``ignore_peers`` patterns.
        self._pairings: dict[tuple[str, ...], _Pairing] = {}
        #: The ``ignore_peers`` patterns of the graph asked for last (None: none asked yet).
        self.asked: tuple[str, ...] | None = None
        self.add(views)

    def pair_as_added(self, names: Iterable[str], ignore_peers: Iterable[Iterable[str]] = ((),)) -> None:
        """Pair the graphs for these ``ignore_peers`` as views are added, not when first asked for.

        ``names`` are every device of the run (as :attr:`devices` will hold them once every view
        is added); the graph is the same as one built at once. The engine calls it before its
        per-device pass, so the pairing runs while the workers still check devices instead of
        after them (on 100k GPUs, 1.3 s of the run's serial tail).
        """
        everyone = list(names)
        for patterns in ignore_peers:
            key = tuple(patterns)
            if key not in self._graphs and key not in self._pairings:
                self._pairings[key] = _Pairing(everyone, key)

    def add(self, views: Mapping[str, DeviceView]) -> None:
        """Take more devices' views (the engine adds each worker's part as it arrives).

        Their ports become :class:`PortView` s and are indexed by name here, so the graph's build
        only pairs them: done while the workers still check devices, this costs the run little.
        """
        make = functools.partial(tuple.__new__, PortView)
        canon = canonical_port
        with paused_gc():
            for name, view in views.items():
                self.views[name] = view
                converted = self._ports[name] = tuple(map(make, view.ports))
                # A port's name wins (the last port of that name); an alias only fills a key no
                # name has (the first port with that alias).
                aliased = [(canon(p[19]), p) for p in converted if p[19]]
                index = dict(reversed(aliased)) if aliased else {}
                index.update(zip(map(canon, [p[0] for p in converted]), converted, strict=True))
                self._indexes[name] = index
            if self._pairings:
                names = list(views)
                for pairing in self._pairings.values():
                    pairing.add(self._ports, self._indexes, names)

    def graph(self, ignore_peers: Iterable[str] = ()) -> LinkGraph:
        """The run's link graph (built on the first call for these ``ignore_peers``, then the same object).

        Args:
            ignore_peers: Glob patterns of LLDP neighbour names that are not fabric links (a
                management switch heard on a front-panel port); ports facing them are left out.
        """
        patterns = tuple(ignore_peers)
        graph = self.prepare(patterns)
        self._last = graph
        self.asked = patterns
        return graph

    def prepare(self, ignore_peers: Iterable[str] = ()) -> LinkGraph:
        """Build the graph for these ``ignore_peers`` now, before any check asks (:meth:`graph`
        gets it then); which graph :meth:`built` names does not change.
        """
        if not self.projected:
            raise RuntimeError("the link graph is for checks that declare uses_links = True")
        patterns = tuple(ignore_peers)
        graph = self._graphs.get(patterns)
        if graph is None:
            with paused_gc():  # a million new containers, no cycles: the collector would rescan the heap
                pairing = self._pairings.pop(patterns, None)
                if pairing is not None:
                    graph = pairing.finish(self._ports, self._indexes, self.devices)
                else:
                    graph = _build(dict(self._ports), dict(self._indexes), self.devices, patterns)
                self._graphs[patterns] = graph
        return graph

    def built(self) -> LinkGraph | None:
        """The graph a check asked for last in this run (None when no check used the graph)."""
        return self._last


def _build(
    views: dict[str, tuple[PortView, ...]],
    ports: dict[str, dict[str, PortView]],
    devices: Mapping[str, PeerSummary],
    ignore: tuple[str, ...],
) -> LinkGraph:
    """The link graph of these devices' ports, paired in one go (:class:`_Pairing`)."""
    pairing = _Pairing(devices, ignore)
    pairing.add(views, ports, list(views))
    return pairing.finish(views, ports, devices)


_Slot = tuple[str, int, PortView, str]  # (device, position in its ends, port, peer device): not paired yet


class _Pairing:
    """Pairs link ends device by device, as the devices' ports arrive (:meth:`LinkGraphs.add`).

    An end whose peer device has not arrived yet waits for it in a slot of its device's ends; it
    is paired when the peer arrives (before the peer's own ports: those come later in device
    order), or at :meth:`finish` as an unreadable peer if it never does. Claims on a port are thus
    made in device order, whatever the arrival in batches: the graph is the one pairing every
    device at once would make (``tests/unit/test_linkgraph_incremental.py``), and a run pairs
    most of it while its workers still check devices.
    """

    def __init__(self, names: Iterable[str], ignore: tuple[str, ...]) -> None:
        self.by_lower = {name.lower(): name for name in names}
        self.patterns = tuple(g.lower() for g in ignore)
        #: Each device's ends in port order (None in the slot of an end still waiting for its peer).
        self.ends: dict[str, list[Any]] = {}
        #: id(q) -> (claimant, its port, q's device, q): the first port whose LLDP names port q
        self.first: dict[int, tuple[str, PortView, str, PortView]] = {}
        #: id(q) -> the other claimants of port q (contested ports)
        self.more: dict[int, list[tuple[str, PortView]]] = {}
        #: Paired ends naming a port without LLDP: one-sided or contested, told once every claim is in
        self.pending: list[End] = []
        self.target: dict[int, PortView] = {}  # id(port) -> the port its LLDP names
        self.resolved: dict[str, str | None] = {}  # LLDP system name -> inventory name (None: unknown)
        self.waiting: dict[str, list[_Slot]] = {}  # peer device -> ends that name it, before it arrived
        #: id(q) -> the paired end (or ends, a list) naming port q, which has LLDP, before q's own
        #: end was paired
        self.undecided: dict[int, End | list[End]] = {}

    def add(
        self,
        views: Mapping[str, tuple[PortView, ...]],
        ports: Mapping[str, dict[str, PortView]],
        names: list[str],
    ) -> None:
        """Pair the ends of ``names`` (just added to ``views``/``ports``) and of the ends waiting for them."""
        # Written for 800k link ends: locals for every name, the port views' fields by position
        # (1 peer, 2 peer_port, 3 peer_port_alt; 0 name in q[0]), fewer dict look-ups.
        target, first, more, undecided = self.target, self.first, self.more, self.undecided
        pend = self.pending.append
        canon = canonical_port
        ok, unknown_port = Peering.OK, Peering.PEER_PORT_UNKNOWN

        def pair(name: str, p: PortView, peer_name: str, peer_index: Mapping[str, PortView]) -> End:
            # the peer port its LLDP names: port id, then port description
            q = None if p[2] is None else peer_index.get(canon(p[2]))
            if q is None and p[3] is not None:
                q = peer_index.get(canon(p[3]))
            if q is None:
                return End(name, p, unknown_port, peer_name, p.peer_port or "?", None,
                           f"{peer_name} has no port {p.peer_port!r} (LLDP port id)")  # fmt: skip
            pid, qid = id(p), id(q)
            target[pid] = q
            claimed = first.setdefault(qid, (name, p, peer_name, q))
            if claimed[1] is not p:
                more.setdefault(qid, []).append((name, p))
            end = End(name, p, ok, peer_name, q[0], q)
            if q[1] is None:  # no LLDP there: one-sided or contested, once every claim is known
                pend(end)
            else:  # OK when q's LLDP names this port back: known once q's own end is paired
                back = target.get(qid)
                if back is None:  # one end waits (a list only for a port several ends name)
                    held = undecided.get(qid)
                    if held is None:
                        undecided[qid] = end
                    elif isinstance(held, list):
                        held.append(end)
                    else:
                        undecided[qid] = [held, end]
                elif back is not p:
                    _disagree(end, q)
            if undecided:
                named_by = undecided.pop(pid, None)
                if named_by is not None:  # the ends that name this port waited for it
                    for other in named_by if isinstance(named_by, list) else (named_by,):
                        if other.port is not q:
                            _disagree(other, p)
            return end

        ends, waiting = self.ends, self.waiting
        for name in names:  # ends of earlier devices first: in device order they came before
            slots = waiting.pop(name, None)
            if slots is not None:
                peer_index = ports[name]
                for device, at, p, _ in slots:
                    ends[device][at] = pair(device, p, name, peer_index)
        patterns = self.patterns
        resolved, by_lower = self.resolved, self.by_lower
        get_index = ports.get
        for name in names:
            mine = ends[name] = []
            append = mine.append
            for p in views[name]:
                peer = p[1]
                if peer is None:
                    continue
                if patterns and any(fnmatch.fnmatchcase(peer.lower(), g) for g in patterns):
                    continue
                peer_name = resolved.get(peer, _UNSET)
                if peer_name is _UNSET:
                    peer_name = resolved[peer] = resolve_name(peer, by_lower)
                if peer_name is None:
                    append(
                        End(name, p, Peering.UNKNOWN_PEER, peer, p.peer_port or "?", None,
                            f"LLDP neighbour {peer!r} is not in the inventory (or outside --limit)")
                    )  # fmt: skip
                    continue
                found = get_index(peer_name)
                if found is not None:
                    append(pair(name, p, peer_name, found))
                    continue
                slot = (name, len(mine), p, peer_name)
                append(None)
                held_slots = waiting.get(peer_name)
                if held_slots is None:
                    waiting[peer_name] = [slot]
                else:
                    held_slots.append(slot)

    def finish(
        self,
        views: Mapping[str, tuple[PortView, ...]],
        ports: Mapping[str, dict[str, PortView]],
        devices: Mapping[str, PeerSummary],
    ) -> LinkGraph:
        """The graph, once every device with ports was added: ends still waiting name a peer that
        never came (unreadable, or not collected by the link checks).
        """
        ends, first, more = self.ends, self.first, self.more
        for peer_name, slots in self.waiting.items():
            summary = devices[peer_name]
            why = summary.status if not summary.readable else "not collected by the link checks"
            for name, at, p, _ in slots:
                ends[name][at] = End(
                    name, p, Peering.PEER_UNREADABLE, peer_name, p.peer_port or "?", None,
                    f"the peer could not be read ({why})",
                )  # fmt: skip
        self.waiting = {}
        # Ends naming a port whose own LLDP end was never paired (its peer unknown or unreadable,
        # or no such port there): that port does not name them back.
        for ends_naming in self.undecided.values():
            for end in ends_naming if isinstance(ends_naming, list) else (ends_naming,):
                assert end.peer is not None
                _disagree(end, end.peer)
        self.undecided = {}
        # now every claim is known: the ends naming a port without LLDP, and the claimed ends
        for end in self.pending:
            q = end.peer
            assert q is not None
            if id(q) in more:
                rivals = _claimants(first, more, q)
                end.status = Peering.DISAGREE
                names = ", ".join(f"{d} {x.name}" for d, x in rivals)
                end.detail = f"{end.peer_device} {q.name} has no LLDP and several ports see it: {names}"
            else:
                end.status = Peering.ONE_SIDED
                end.detail = f"{end.peer_device} {q.name} has no LLDP neighbour"
        unsorted: set[str] = set()
        for a_name, a_port, peer_name, q in first.values():
            if q[1] is not None:
                continue
            mine = ends.setdefault(peer_name, [])
            unsorted.add(peer_name)
            if id(q) not in more:
                mine.append(
                    End(peer_name, q, Peering.CLAIMED, a_name, a_port.name, a_port,
                        f"no LLDP on this port; {a_name} {a_port.name} sees it")
                )  # fmt: skip
            else:
                names = ", ".join(f"{d} {x.name}" for d, x in _claimants(first, more, q))
                mine.append(
                    End(peer_name, q, Peering.DISAGREE, a_name, a_port.name, a_port,
                        f"no LLDP on this port and several ports see it: {names}")
                )  # fmt: skip
        for name in unsorted:  # claimed ends were appended after the port's own: restore port order
            order = {id(p): i for i, p in enumerate(views[name])}
            ends[name].sort(key=lambda e: order[id(e.port)])
        return LinkGraph(ends, dict(ports), dict(views), first, more)


def _disagree(end: End, q: PortView) -> None:
    """``end`` names ``q``, whose LLDP names another port (or nothing it could be paired with)."""
    end.status = Peering.DISAGREE
    end.detail = f"{end.peer_device} {q.name} sees {q.peer} {q.peer_port} as its neighbour"


def _claimants(
    first: Mapping[int, tuple[str, PortView, str, PortView]],
    more: Mapping[int, list[tuple[str, PortView]]],
    q: PortView,
) -> list[tuple[str, PortView]]:
    hit = first.get(id(q))
    if hit is None:
        return []
    return [(hit[0], hit[1]), *more.get(id(q), [])]


_UNSET: Any = object()


# --------------------------------------------------------------------------------------------
# Frame sizes


def frame_limit(port: PortView, tagged: bool) -> int | None:
    """The largest frame (bytes) a port carries for untagged or 802.1Q-tagged traffic.

    Example:
        >>> p = PortView("x", None, None, None, False, None, None, 9000, 9018, 9022, None, None,
        ...              None, None, None, None, None, None, None, None)
        >>> frame_limit(p, False), frame_limit(p, True)
        (9018, 9022)
    """
    return port.frame_bytes_tagged if tagged else port.frame_bytes
