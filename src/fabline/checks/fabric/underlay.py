"""The BGP underlay and its ECMP fan-out: sessions on every leaf-spine link, the AS plan, multipath.

A leaf that lost one spine session, or installs fewer ECMP paths than its plane has spines,
silently loses 1:1 bandwidth while every link and QoS check passes. These checks read the
switches' ``bgp`` state (``docs/state-schema.md``) and join it with the link graph:

- ``bgp-sessions``: every leaf-spine link (from LLDP) carries an established session;
- ``bgp-asn``: the local AS and every session's remote AS follow the AS plan (inventory
  ``bgp_asn``, else the peer's own AS);
- ``ecmp-fanout``: a leaf's route to its probe prefix (``fabline_ecmp_prefix``) has at least as
  many paths as its plane has spines.

A session is matched to the device at its other end by, in this order: its key being one of the
device's ports (an unnumbered session), the address plan (on a /31 the peer's session names this
end's address, ``a XOR 1``), or its description / the peer's announced hostname naming an
inventory device.
"""

from __future__ import annotations

import dataclasses
import functools
import sys
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

from pydantic import Field
from typing_extensions import override

from fabline.checks import DeviceContext, FabricContext
from fabline.checks.fabric.links import LP, LinkCheck, LinkParams
from fabline.checks.fabric.topology import UNCONNECTED, planes_of
from fabline.checks.linkgraph import LinkGraph, Peering, resolve_name
from fabline.results import Result, Severity, capped_join
from fabline.state import Invalid

#: Ends whose peer device is known (the peer's port may not be).
_NAMED = frozenset(
    {Peering.OK, Peering.ONE_SIDED, Peering.CLAIMED, Peering.PEER_UNREADABLE, Peering.PEER_PORT_UNKNOWN}
)


class Session(NamedTuple):
    """One configured BGP session as the checks see it."""

    key: str
    remote_asn: int | None
    state: str | None
    admin_down: bool
    names: tuple[str, ...]  # description and announced hostname: hints at the peer device


class BgpView(NamedTuple):
    """A switch's BGP projection (``has_bgp`` False: the state has no ``bgp`` object)."""

    has_bgp: bool
    asn: int | None
    sessions: tuple[Session, ...]
    ecmp: tuple[str, int] | None
    #: The state is a rendered configuration (``source: intended``): no session state, no routes.
    intended: bool = False
    #: Why the ``bgp`` object cannot be judged: a value of it the state schema forbids (its
    #: :class:`~fabline.state.Invalid` message), None when it is sound.
    invalid: str | None = None


#: A :class:`BgpView` as plain tuples (its sessions too): what ``collect`` keeps per switch.
#: Forked workers send it back by pickle, and a named tuple pickles through a Python call per
#: object (a spine has a session per leaf: about 0.5 ms per switch, ten times a plain tuple's).
PlainBgpView = tuple[bool, int | None, tuple[tuple[Any, ...], ...], tuple[str, int] | None, bool, str | None]

_new_session = functools.partial(tuple.__new__, Session)


def bgp_view(device: DeviceContext) -> PlainBgpView:
    """The device's BGP projection as plain tuples (:func:`as_view` makes it a :class:`BgpView`).

    Built once per device and pass (``device.memo``): the three underlay checks collect it.
    """
    hit = device.memo.get("underlay.bgp_view")
    if hit is None:
        hit = device.memo["underlay.bgp_view"] = _bgp_view(device)
    return hit


def as_view(plain: PlainBgpView) -> BgpView:
    """The :class:`BgpView` of a collected plain view.

    Example:
        >>> as_view((True, 65001, (("10.0.0.1", 65100, "established", False, ()),), None, False, None)).sessions[0].state
        'established'
    """
    has_bgp, asn, sessions, ecmp, intended, invalid = plain
    return BgpView(has_bgp, asn, tuple(map(_new_session, sessions)), ecmp, intended, invalid)


def _bgp_view(device: DeviceContext) -> PlainBgpView:
    bgp = device.state.get("bgp")
    intended = device.state.get("source") == "intended"
    if not isinstance(bgp, Mapping):
        return (False, None, (), None, intended, None)
    # A forbidden value replaces the whole field (``bgp.neighbors``, ``bgp.asn``): judged, it would
    # read as "no sessions" or "no ASN"; it is an error naming the field instead.
    invalid = next((str(v) for v in bgp.values() if type(v) is Invalid), None)
    sessions = []
    intern = sys.intern
    neighbors = bgp.get("neighbors")
    for key, body in (neighbors if isinstance(neighbors, Mapping) else {}).items():
        if type(body) is not dict and not isinstance(body, Mapping):
            continue
        remote = body.get("remote_asn")
        described, hostname, state = body.get("description"), body.get("hostname"), body.get("state")
        names = ((intern(str(described)),) if isinstance(described, str) else ()) + (
            (intern(str(hostname)),) if isinstance(hostname, str) else ()
        )
        # A Session's fields, in its order; text interned, so a part pickles each value once
        sessions.append(
            (
                intern(str(key)),
                remote if type(remote) is int else None,
                (intern(state) if type(state) is str else state) if isinstance(state, str) else None,
                body.get("admin_down") is True,
                names,
            )
        )
    ecmp = bgp.get("ecmp")
    probe = None
    if isinstance(ecmp, Mapping) and isinstance(ecmp.get("prefix"), str) and type(ecmp.get("paths")) is int:
        probe = (ecmp["prefix"], ecmp["paths"])
    asn = bgp.get("asn")
    return (True, asn if type(asn) is int else None, tuple(sessions), probe, intended, invalid)


def _partner(address: str) -> str | None:
    """The other end of a /31 (``10.0.0.1`` <-> ``10.0.0.0``), or None for a name or IPv6.

    Reads the dotted quad as :class:`ipaddress.IPv4Address` does (four ASCII decimal octets of at
    most three digits, no leading zero, each <= 255), without building address objects or running
    a regex per address: a 100k-GPU fabric has 200,000 sessions, a few hundred distinct /24s.

    Example:
        >>> _partner("10.128.0.1"), _partner("10.128.0.0"), _partner("swp51"), _partner("10.0.0.01")
        ('10.128.0.0', '10.128.0.1', None, None)
        >>> _partner("10.0.0.256"), _partner("1.2.3"), _partner("010.0.0.1"), _partner("1.2.3.4.5")
        (None, None, None, None)
    """
    head, dot, last = address.rpartition(".")
    octet = _OCTETS.get(last)
    if octet is None or not dot or not _three_octets(head):
        return None
    return f"{head}.{octet ^ 1}"


#: Every octet as ipaddress writes it ("0" to "255", no leading zero) -> its value.
_OCTETS = MappingProxyType({str(i): i for i in range(256)})


@functools.lru_cache(maxsize=4096)
def _three_octets(head: str) -> bool:
    """Whether ``head`` is three such octets (the /24 of an address: a few hundred per fabric)."""
    parts = head.split(".")
    return len(parts) == 3 and all(p in _OCTETS for p in parts)


class Underlay(NamedTuple):
    """What the underlay checks share per run: the graph, each switch's peers and sessions resolved."""

    graph: LinkGraph
    views: dict[str, BgpView]
    #: device -> peer device -> number of leaf-spine links (from LLDP)
    links: dict[str, Counter[str]]
    #: device -> session key -> the peer device it reaches (None: not resolved)
    peer_of: dict[str, dict[str, str | None]]


def underlay_of(fabric: FabricContext, graph: LinkGraph) -> Underlay:
    """The run's :class:`Underlay` (built once per link graph, then shared by the three checks).

    The three checks collect the same plain view per switch (:func:`bgp_view`), each into its own
    dict; the first one to ask builds the underlay (the :class:`BgpView` s too) and keeps it in the
    graph's ``memo``.
    """
    hit = graph.memo.get(__name__)
    if hit is not None:
        return hit  # type: ignore[no-any-return]
    devices = fabric.devices
    views: dict[str, BgpView] = {name: as_view(plain) for name, plain in fabric.collected.items()}
    links: dict[str, Counter[str]] = {}
    port_peer: dict[str, dict[str, str]] = {}
    role_of = {name: d.role for name, d in devices.items()}
    other_tier = {"leaf": "spine", "spine": "leaf"}
    named = _NAMED
    for name, ends in graph.ends.items():
        want = other_tier.get(role_of.get(name))  # type: ignore[arg-type]
        if want is None:
            continue
        counts: dict[str, int] = {}  # a Counter calls __missing__ (Python) for each new peer
        by_port: dict[str, str] = {}
        for end in ends:
            peer = end.peer_device
            if role_of.get(peer) != want or end.status not in named:
                continue
            counts[peer] = counts.get(peer, 0) + 1
            by_port[end.port.name] = peer
        if counts:
            links[name] = Counter(counts)
            port_peer[name] = by_port
    # A session's key is the peer's address; the peer's own session to us names our address,
    # which on a /31 is the partner of our session key.
    owner: dict[str, str] = {}
    for name, view in views.items():
        for s in view.sessions:
            mine_addr = _partner(s.key)
            if mine_addr is not None:
                owner.setdefault(mine_addr, name)
    by_lower = {n.lower(): n for n in devices}
    peer_of: dict[str, dict[str, str | None]] = {}
    nothing: dict[str, str] = {}
    for name, view in views.items():
        resolved: dict[str, str | None] = {}
        own_ports = port_peer.get(name, nothing)
        for s in view.sessions:
            found = own_ports.get(s.key)
            if found is None:
                hit = owner.get(s.key)
                found = hit if hit != name else None
            if found is None:
                found = next(
                    (r for r in (resolve_name(n, by_lower) for n in s.names) if r and r != name), None
                )
            resolved[s.key] = found
        peer_of[name] = resolved
    underlay = Underlay(graph, views, links, peer_of)
    graph.memo[__name__] = underlay
    return underlay


class UnderlayCheck(LinkCheck[LP]):
    """Base of the underlay checks (not registered itself): the BGP view of every leaf and spine."""

    roles = ("leaf", "spine")

    @override
    def collect(self, device: DeviceContext) -> PlainBgpView:
        return bgp_view(device)

    def underlay(self, fabric: FabricContext) -> Underlay:
        """The shared underlay of this run (over the engine's link graph)."""
        return underlay_of(fabric, self.graph(fabric))

    def missing(self, fabric: FabricContext, name: str, view: BgpView) -> Result | None:
        """The result for a switch whose state has no ``bgp``, or one with a forbidden value (None when it has a sound one)."""
        if view.invalid is not None:
            return self.error(name, "bgp", f"{name}: {view.invalid}")
        if view.has_bgp:
            return None
        reason = fabric.devices[name].unsupported_reason("bgp")
        if reason:
            return self.skipped(name, "bgp", reason)
        return self.error(name, "bgp", f"{name}: BGP not collected (no 'bgp' in its state)")

    @override
    def check_fabric(self, fabric: FabricContext) -> Iterable[Result]:
        """One result per leaf and spine: :meth:`missing`, else :meth:`judge`."""
        under = self.underlay(fabric)
        for name in _switches(fabric):
            view = under.views[name]
            gap = self.missing(fabric, name, view)
            yield gap if gap is not None else self.judge(fabric, name, view, under)

    def judge(self, fabric: FabricContext, name: str, view: BgpView, under: Underlay) -> Result:
        """The result of one switch that has a BGP view (checks judged per switch implement it)."""
        raise NotImplementedError


def _switches(fabric: FabricContext, roles: Iterable[str] = ("leaf", "spine")) -> list[str]:
    wanted = set(roles)
    return sorted(n for n in fabric.collected if fabric.devices[n].role in wanted)


class BgpSessionsCheck(UnderlayCheck):
    """Every leaf-spine link carries an established BGP session.

    The underlay is eBGP on every leaf-spine link (DOMAIN "The fabric": every leaf reaches every
    spine of its plane); a session that is down takes that spine out of the leaf's ECMP set and
    the plane runs below 1:1 while every link and QoS check passes. Expected sessions come from the
    link graph (one per leaf-spine link seen by LLDP); a link without a session, a session that is
    not established (or is shut down) and a session to an unknown peer that is down fail, naming
    the session's address, the peer device and the state. On a rendered configuration
    (``check --intended``) only the sessions per link are judged: a config has no session state.
    One result per leaf and spine.
    """

    id = "bgp-sessions"
    severity = Severity.CRITICAL

    @override
    def judge(self, fabric: FabricContext, name: str, view: BgpView, under: Underlay) -> Result:
        peers = under.peer_of.get(name, {})
        per_peer: dict[str, list[Session]] = {}
        problems: list[str] = []
        involved: set[str] = set()
        established = 0
        for s in view.sessions:
            peer = peers.get(s.key)
            if peer is not None:
                per_peer.setdefault(peer, []).append(s)
            if s.state == "established" and not s.admin_down:
                established += 1
                continue
            if s.state is None and not s.admin_down:
                continue  # configured only (a rendered config): no session state to judge
            state = "shut down" if s.admin_down else (s.state or "in an unknown state")
            problems.append(f"session {s.key} ({peer or 'peer unknown'}) is {state}")
            if peer is not None:
                involved.add(peer)
        expected = under.links.get(name, Counter())
        for peer, count in sorted(expected.items()):
            have = len(per_peer.get(peer, ()))
            if have < count:
                problems.append(f"{count} link(s) to {peer} but {have} BGP session(s)")
                involved.add(peer)
        want = {"sessions": sum(expected.values()), "established": "all"}
        if problems:
            return self.failed(
                name, "sessions", f"{name}: {capped_join(sorted(problems))}",
                expected=want,
                actual={"established": established, "configured": len(view.sessions), "problems": problems,
                        "peers": sorted(involved)},
            )  # fmt: skip
        return self.passed(name, "sessions", expected=want)


class BgpAsnCheck(UnderlayCheck):
    """The AS numbers follow the plan: the local AS and every session's remote AS.

    The design numbers the underlay (``fabline design``: spines of a plane share an AS, every leaf
    has its own) and writes the plan into the inventory as ``bgp_asn``. A switch on another AS, or
    a session configured with the wrong remote AS (it never establishes, or peers with the wrong
    box), breaks the Clos' path diversity. The local AS is compared with the device's ``bgp_asn``;
    a session's remote AS with the peer's ``bgp_asn``, else with the AS the peer itself reports.
    ``skipped`` when there is nothing to compare (no plan, no resolvable peer).
    """

    id = "bgp-asn"
    severity = Severity.MAJOR

    @staticmethod
    def planned(fabric: FabricContext, under: Underlay, name: str) -> int | None:
        """A device's AS: its ``bgp_asn`` inventory variable, else the AS it reports."""
        summary = fabric.devices.get(name)
        value = summary.vars.get("bgp_asn") if summary is not None else None
        if type(value) is int:
            return value
        if isinstance(value, str) and value.strip().isdigit():
            return int(value)
        view = under.views.get(name)
        return view.asn if view is not None else None

    @override
    def judge(self, fabric: FabricContext, name: str, view: BgpView, under: Underlay) -> Result:
        problems: list[str] = []
        involved: set[str] = set()
        compared = 0
        own = fabric.devices[name].vars.get("bgp_asn")
        plan = self.planned(fabric, under, name) if own is not None else None
        if plan is not None and view.asn is not None:
            compared += 1
            if view.asn != plan:
                problems.append(f"local AS {view.asn}, the plan says {plan}")
        for s in view.sessions:
            peer = under.peer_of.get(name, {}).get(s.key)
            want = self.planned(fabric, under, peer) if peer is not None else None
            if want is None or s.remote_asn is None:
                continue
            compared += 1
            if s.remote_asn != want:
                problems.append(f"session {s.key} to {peer}: remote AS {s.remote_asn}, {peer} is AS {want}")
                involved.add(str(peer))
        if not compared:
            return self.skipped(
                name, "asn", f"{name}: no AS plan to compare with (set bgp_asn in the inventory)"
            )
        if problems:
            return self.failed(
                name, "asn", f"{name}: {capped_join(problems)}",
                expected={"asn": plan} if plan is not None else None,
                actual={"problems": problems, "peers": sorted(involved)},
            )  # fmt: skip
        return self.passed(name, "asn", expected={"asn": plan} if plan is not None else None)


class EcmpParams(LinkParams):
    """Parameters of ecmp-fanout."""

    min_paths: int | None = Field(
        None,
        ge=1,
        description="paths the probe route needs (default: the number of spines of the leaf's plane)",
    )


class EcmpFanoutCheck(UnderlayCheck[EcmpParams]):
    """A leaf's route to a remote leaf has at least as many ECMP paths as its plane has spines.

    1:1 bandwidth across the plane needs every spine on every leaf-to-leaf path: a leaf whose
    route to another leaf has fewer next hops than the plane has spines (``maximum-paths`` left
    at 1, a lost session, a missing multipath-relax) concentrates its traffic on the rest. The
    route is the probe prefix the collection asked about (``fabline_ecmp_prefix``, a remote leaf's
    loopback; ``fabline design`` writes it); the plane's spines come from ``plane`` (or the
    planes clos-shape infers from LLDP). Leaves without a probe prefix are ``skipped``.
    """

    id = "ecmp-fanout"
    severity = Severity.MAJOR

    @override
    def check_fabric(self, fabric: FabricContext) -> Iterable[Result]:
        under = self.underlay(fabric)
        leaves = sorted(n for n, d in fabric.devices.items() if d.role == "leaf")
        spines = sorted(n for n, d in fabric.devices.items() if d.role == "spine")
        pairs = {(leaf, spine): n for leaf in leaves for spine, n in under.links.get(leaf, Counter()).items()}
        # clos-shape tells the run what it inferred; a private notes list keeps it said once
        plane = planes_of(dataclasses.replace(fabric, notes=[]), leaves, spines, pairs)
        serving: Counter[Any] = Counter(plane[s] for s in spines)
        free = serving.get(None, 0)
        for name in leaves:
            if name not in fabric.collected:
                continue
            yield from self._leaf(fabric, name, under.views[name], plane[name], serving, free)

    def _leaf(
        self, fabric: FabricContext, name: str, view: BgpView, plane: Any, serving: Counter[Any], free: int
    ) -> Iterator[Result]:
        gap = self.missing(fabric, name, view)
        if gap is not None:
            yield gap
            return
        if view.ecmp is None and view.intended:
            yield self.skipped(name, "ecmp", f"{name}: a rendered configuration has no routes")
            return
        if view.ecmp is None:
            if fabric.devices[name].vars.get("fabline_ecmp_prefix"):
                yield self.error(name, "ecmp", f"{name}: the ECMP probe route was not collected")
            else:
                yield self.skipped(
                    name,
                    "ecmp",
                    f"{name}: no ECMP probe prefix (set fabline_ecmp_prefix to a remote leaf's loopback)",
                )
            return
        prefix, paths = view.ecmp
        min_paths = self.params.min_paths
        spines = (
            (sum(serving.values()) if plane is None else serving.get(plane, 0) + free)
            if plane != UNCONNECTED
            else 0
        )
        want = min_paths if min_paths is not None else spines
        where = "the plane's spines" if min_paths is None else "min_paths"
        expected = {"prefix": prefix, "min_paths": want}
        if not want:
            yield self.skipped(name, "ecmp", f"{name}: no spine serves its plane: nothing to compare with")
        elif paths < want:
            what = "no route" if paths == 0 else f"{paths} path(s)"
            yield self.failed(
                name, "ecmp", f"{name}: route to {prefix}: {what}, {where}: {want} (multipath lost)",
                expected=expected, actual={"prefix": prefix, "paths": paths},
            )  # fmt: skip
        else:
            yield self.passed(name, "ecmp", expected=expected)


UNDERLAY_CHECKS = (BgpSessionsCheck, BgpAsnCheck, EcmpFanoutCheck)
