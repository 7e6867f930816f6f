"""Link checks: LLDP pairing and the settings both ends of every link must agree on.

Every finding names both ends (device, interface, peer device, peer interface) and is reported at
each end, so the owner of either device finds it. A link whose peer could not be read never
passes: the readable end is ``skipped`` ("not compared") and the ``error`` is reported on the
unreadable device, at the port the readable end's LLDP names (the device's own errors already
say why it could not be read).

What only says that a value is missing (not collected, not provided by the platform, the peer not
readable) names the port in its subject and the reason in a message that is the same on every port
(issue 14): a platform that lacks a field gives one row per device and check
(:class:`~fabline.results.SkipBlock`), not one per link end.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypeVar, override

from fabline.checks import AnyCheck, Check, FabricContext
from fabline.checks.linkgraph import PAIRED, End, LinkGraph, Peering, PortView, frame_limit
from fabline.perf import paused_gc
from fabline.results import PassBlock, Result, Severity


class LinkParams(BaseModel):
    """Parameters every link check takes."""

    model_config = ConfigDict(extra="forbid")

    ignore_peers: list[str] = Field(
        default_factory=list,
        description="glob patterns of LLDP neighbour names that are not fabric links (e.g. 'oob-*')",
    )


LP = TypeVar("LP", bound=LinkParams, default=LinkParams)


class LinkCheck(Check[LP]):
    """Base of checks over the link graph (not registered itself)."""

    scope = "fabric"
    uses_links = True
    Params: ClassVar[type[BaseModel]] = LinkParams

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("check_fabric")
        if own is not None:
            # Over 800k link ends a check allocates hundreds of thousands of small objects and no
            # cycles: paused, link-mtu took 0.4 s instead of 1.6 s on 100k GPUs.
            cls.check_fabric = paused_gc()(own)  # type: ignore[method-assign]

    def graph(self, fabric: FabricContext) -> LinkGraph:
        """The run's link graph, as the engine provides it (each ``check_fabric`` starts with this call)."""
        #: Ports of unreadable devices that readable ends name, per device (reported at the end).
        self._unreadable: dict[str, dict[str, None]] = {}
        return fabric.links.graph(self.params.ignore_peers)

    def unpaired(self, end: End) -> Iterator[Result]:
        """Results for an end that could not be paired: never a pass.

        The error on an unreadable peer is kept for :meth:`unreadable_errors` (two ports naming the
        same port of it give one), so a device's errors come together and fold into one block.
        """
        if end.status is Peering.PEER_UNREADABLE:
            yield self.skipped(
                end.device, end.port.name, f"not compared: {end.detail}; the error is reported there"
            )
            self._unreadable.setdefault(end.peer_device, {})[end.peer_port_name] = None
        else:
            here = f"{end.device} {end.port.name}"
            yield self.error(end.device, end.port.name, f"{here}: cannot pair the link: {end.detail}")

    def unreadable_errors(self) -> Iterator[Result]:
        """The ``error`` at each port of an unreadable device that a readable end names (its links
        were not checked), device by device: each ``check_fabric`` ends with these.
        """
        for device in sorted(self._unreadable):
            for port in self._unreadable[device]:
                yield self.error(device, port, "link not checked: this device could not be read")
        self._unreadable = {}


def pass_blocks(check: AnyCheck, passes: dict[str, list[str | None]]) -> Iterator[Result]:
    """One compact :class:`PassBlock` per device for the passing subjects collected in ``passes``."""
    for device, subjects in passes.items():
        if subjects:
            yield PassBlock(check.id, device, check.effective_severity, subjects)


#: The attributes compared by plain equality (every property check but MTU).
EQUALITY_ATTRS = ("speed_gbps", "fec", "autoneg", "trust", "pfc", "dscp")


#: Where :data:`EQUALITY_ATTRS` sit in a :class:`PortView` (side by side, in that order).
_EQ_FIRST = PortView._fields.index(EQUALITY_ATTRS[0])
_EQ_END = _EQ_FIRST + len(EQUALITY_ATTRS)
assert PortView._fields[_EQ_FIRST:_EQ_END] == EQUALITY_ATTRS, "keep EQUALITY_ATTRS side by side in PortView"
_PFC, _DSCP = _EQ_END - 2, _EQ_END - 1
assert PortView._fields[_PFC:_EQ_END] == ("pfc", "dscp"), "the compared tuples come last"


def _comparison(graph: LinkGraph) -> dict[str, tuple[dict[str, tuple[str, ...]], dict[str, list[End]]]]:
    """Per attribute: the paired ends' port names per device, and the ends whose values differ.

    An end whose value is missing at either side counts as differing. Computed once per graph for
    all equality checks (kept in the graph's ``memo``). The port names are one tuple per device:
    the checks' pass blocks share it.
    """
    hit = graph.memo.get(__name__)
    if hit is not None:
        return hit  # type: ignore[no-any-return]
    paired: dict[str, tuple[str, ...]] = {}
    flagged: dict[str, dict[str, list[End]]] = {a: {} for a in EQUALITY_ATTRS}
    attrs = tuple(enumerate(EQUALITY_ATTRS, _EQ_FIRST))
    # PFC and DSCP values are tuples shared by the ports of a worker's part, but each part has its
    # own: equal maps from two parts compared item by item (64 DSCP pairs) made this pass cost
    # 2 us per end. Each pair of objects is compared once (they are immutable, alive with the graph).
    same: dict[tuple[int, int, int, int], bool] = {}
    for device, ends in graph.ends.items():
        names: list[str] = []
        for end in ends:
            if end.status not in PAIRED:
                continue
            a, b = end.port, end.peer
            assert b is not None
            names.append(a.name)
            scalars: tuple[Any, ...] = a[_EQ_FIRST:_PFC]
            if scalars == b[_EQ_FIRST:_PFC] and None not in scalars:
                key = (id(a[_PFC]), id(b[_PFC]), id(a[_DSCP]), id(b[_DSCP]))
                equal = same.get(key)
                if equal is None:
                    equal = same[key] = (
                        a[_PFC] is not None
                        and a[_DSCP] is not None
                        and a[_PFC] == b[_PFC]
                        and a[_DSCP] == b[_DSCP]
                    )
                if equal:  # every attribute collected and equal
                    continue
            for i, attr in attrs:
                x, y = a[i], b[i]
                if x is None or y is None or x != y:
                    flagged[attr].setdefault(device, []).append(end)
        paired[device] = tuple(names)
    out = graph.memo[__name__] = {attr: (paired, flagged[attr]) for attr in EQUALITY_ATTRS}
    return out


def link_label(end: End) -> str:
    """``dev port <-> peer port`` of an end."""
    return f"{end.device} {end.port.name} <-> {end.peer_device} {end.peer_port_name}"


class LinkPropertyCheck(LinkCheck[LP]):
    """Base of "both ends agree on X" checks (not registered itself)."""

    field: ClassVar[str]
    attr: ClassVar[str]
    #: Equal values always pass (False for MTU, where equal numbers can mean different frame sizes).
    equal_passes: ClassVar[bool] = True

    def mismatch(self, fabric: FabricContext, end: End, mine: Any, theirs: Any) -> str | None:
        """Why the two values disagree, or None when they agree."""
        return None if mine == theirs else f"{self.field} {show(mine)} here, {show(theirs)} at the peer"

    @override
    def check_fabric(self, fabric: FabricContext) -> Iterable[Result]:
        graph = self.graph(fabric)
        if not self.equal_passes or self.attr not in EQUALITY_ATTRS:
            yield from self._every_end(fabric, graph)
            return
        # Equal, collected values pass: only the ends the shared one-pass comparison flagged for
        # this attribute need a look (7 checks, one loop over 800k ends instead of seven).
        paired, flagged = _comparison(graph)[self.attr]
        for device in sorted(graph.ends):
            ends = graph.ends[device]
            look = flagged.get(device)
            if look is None and len(paired.get(device, ())) == len(ends):
                if ends:
                    yield PassBlock(self.id, device, self.effective_severity, paired[device])
                continue
            ok: list[str | None] = []
            suspects = set(map(id, look or ()))
            for end in ends:
                if end.status not in PAIRED:
                    yield from self.unpaired(end)
                elif id(end) in suspects:
                    yield from self._compare(
                        fabric, end, getattr(end.port, self.attr), getattr(end.peer, self.attr), ok
                    )
                else:
                    ok.append(end.port.name)
            if ok:
                yield PassBlock(self.id, device, self.effective_severity, ok)
        yield from self.unreadable_errors()

    def _every_end(self, fabric: FabricContext, graph: LinkGraph) -> Iterator[Result]:
        attr = self.attr
        passes: dict[str, list[str | None]] = {}
        for device in sorted(graph.ends):
            ok = passes[device] = []
            for end in graph.ends[device]:
                if end.status not in PAIRED:
                    yield from self.unpaired(end)
                    continue
                yield from self._compare(fabric, end, getattr(end.port, attr), getattr(end.peer, attr), ok)
        yield from pass_blocks(self, passes)
        yield from self.unreadable_errors()

    def _compare(
        self, fabric: FabricContext, end: End, mine: Any, theirs: Any, ok: list[str | None]
    ) -> Iterator[Result]:
        if mine is None or theirs is None:
            # One message per reason, the link in the subject: a platform without the field gives
            # one block per device, not a row per link end (issue 14).
            where, side = (end.device, "here") if mine is None else (end.peer_device, "at the peer")
            summary = fabric.devices.get(where) if where else None
            reason = summary.unsupported_reason(f"interfaces.*.{self.field}") if summary else None
            if reason:  # the source cannot give it (NAPALM getters and QoS): not applicable, not an error
                yield self.skipped(end.device, end.port.name, f"{self.field} not provided {side} ({reason})")
                return
            yield self.error(end.device, end.port.name, f"{self.field} not collected {side}")
            return
        problem = self.mismatch(fabric, end, mine, theirs)
        if problem is None:
            ok.append(end.port.name)
            return
        yield self.finding(end, problem, mine, theirs)

    def finding(self, end: End, problem: str, mine: Any, theirs: Any) -> Result:
        """The fail result of one end, naming both ends in message, ``actual`` and ``expected``."""
        return self.failed(
            end.device,
            end.port.name,
            f"{link_label(end)}: {problem}",
            expected={
                "peer_device": end.peer_device,
                "peer_interface": end.peer_port_name,
                self.field: jsonable(theirs),
            },
            actual={"device": end.device, "interface": end.port.name, self.field: jsonable(mine)},
        )


def show(value: Any) -> str:
    """A compact rendering of a compared value.

    Example:
        >>> show((3, 4)), show(400.0), show("rs")
        ('[3, 4]', '400', 'rs')
    """
    if isinstance(value, tuple):
        if value and isinstance(value[0], tuple):
            return "{" + ", ".join(f"{k}: {v}" for k, v in value) + "}"
        return "[" + ", ".join(str(v) for v in value) + "]"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def jsonable(value: Any) -> Any:
    """Tuples as lists, DSCP pair tuples as a mapping, whole floats as ints."""
    if isinstance(value, tuple):
        if value and isinstance(value[0], tuple):
            return {str(k): v for k, v in value}
        return list(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


# --------------------------------------------------------------------------------------------


class LinkLldpParams(LinkParams):
    """Parameters of link-lldp."""

    require_lldp_roles: list[Literal["spine", "leaf", "host"]] = Field(
        ["spine", "leaf", "host"],
        description="roles whose up ports must hear an LLDP neighbour themselves (drop 'host' "
        "when GPU servers run no LLDP agent: their links are then paired from the leaf's LLDP)",
    )


class LinkLldpCheck(LinkCheck[LinkLldpParams]):
    """Every up fabric port has one LLDP neighbour, in the inventory, that sees this port back.

    The link graph every other link, rail and Clos check builds on comes from LLDP. A port whose
    neighbour is outside the inventory, whose neighbour names another port (a patching mistake
    or stale LLDP), or that hears no neighbour at all, is a link nobody can verify (SuzieQ-style
    join of both ends; DOMAIN "Rail-optimized": checkable from LLDP neighbours). One result per
    port: ``pass`` when both ends agree (or the peer port has no LLDP but nothing contradicts),
    ``fail`` for disagreeing neighbours, several neighbours on one port or no LLDP on an up port,
    ``error`` when the neighbour is unknown or could not be read.
    """

    id = "link-lldp"
    severity = Severity.MAJOR

    @override
    def check_fabric(self, fabric: FabricContext) -> Iterable[Result]:
        graph = self.graph(fabric)
        contested = graph.more
        passes: dict[str, list[str | None]] = {}
        roles = set(self.params.require_lldp_roles)
        for name in sorted(graph.ports):
            ok = passes[name] = []
            # a device that need not send LLDP (hosts without lldpd) passes when its peer sees it
            claimed = Peering.CLAIMED if fabric.devices[name].role in roles else None
            has_end: set[int] = set()
            for end in graph.ends.get(name, ()):
                port = end.port
                if port.peer is None:
                    has_end.add(id(port))
                if (
                    end.status in PAIRED
                    and end.status is not claimed
                    and not port.several
                    and not (contested and id(port) in contested)
                ):
                    ok.append(port.name)
                    continue
                yield from self._port(graph, name, port, end)
            if claimed is None:
                continue
            for port in graph.views[name]:
                if port.peer is None and port.oper_up and id(port) not in has_end:
                    yield from self._port(graph, name, port, None)
        yield from pass_blocks(self, passes)
        yield from self.unreadable_errors()

    def _port(self, graph: LinkGraph, name: str, port: PortView, end: End | None) -> Iterator[Result]:
        if end is None:
            if port.oper_up:
                yield self.failed(
                    name, port.name, f"{name} {port.name}: no LLDP neighbour on an up port",
                    expected={"lldp": "a neighbour"}, actual={"device": name, "interface": port.name, "lldp": None},
                )  # fmt: skip
            return
        if end.status not in PAIRED and end.status is not Peering.DISAGREE:
            yield from self.unpaired(end)
            return
        label = link_label(end)
        problems = []
        if end.status is Peering.DISAGREE:
            problems.append(end.detail)
        elif end.status is Peering.CLAIMED:
            problems.append(
                f"no LLDP neighbour on this port ({end.peer_device} {end.peer_port_name} sees it)"
            )
        if port.several:
            problems.append("several LLDP neighbours on one port")
        if port.peer is not None:
            others = [
                f"{d} {p.name}"
                for d, p in graph.claimants(port)
                if (d, p.name) != (end.peer_device, end.peer_port_name)
            ]
            if others:
                problems.append(f"also seen as the neighbour of {', '.join(others)}")
        if not problems:
            yield self.passed(name, port.name, actual=f"{end.peer_device} {end.peer_port_name}")
            return
        yield self.failed(
            name, port.name, f"{label}: {'; '.join(problems)}",
            expected={"peer_device": end.peer_device, "peer_interface": end.peer_port_name,
                      "lldp": "each end names the other"},
            actual={"device": name, "interface": port.name,
                    "lldp": f"{port.peer} {port.peer_port}" if port.peer else None},
        )  # fmt: skip


class LinkMtuParams(LinkParams):
    """Parameters of link-mtu."""

    vlan_tagged: bool = Field(False, description="host traffic carries an 802.1Q tag (+4 bytes)")
    host_mtu: int = Field(9000, description="fabric host L3 MTU (bytes); keep equal to vars.host_mtu")


class LinkMtuCheck(LinkPropertyCheck[LinkMtuParams]):
    """Both ends of a link carry the same largest frame (host L3 MTU + L2 overhead fits the switch port).

    A jumbo RoCE frame larger than the receiving port's limit is dropped silently, and one such
    hop makes the whole path lossy (DOMAIN "Lossless settings": MTU identical across the fabric).
    Platforms mean different things by ``mtu``; the parsers turn it into the port's largest frame
    (``frame_bytes``, ``frame_bytes_tagged``; docs/state-schema.md "MTU and frame size"), which
    is what is compared. Host to switch: the host's frame (MTU + 18 bytes, 14 header + 4 FCS,
    + 4 with ``vlan_tagged``) must be <= the switch port's. Switch to switch, same platform:
    equal MTU. Switch to switch across platforms (SONiC 9100 next to EOS 9214): the smaller
    frame still carries the largest host frame.
    """

    id = "link-mtu"
    severity = Severity.CRITICAL
    field = "mtu"

    attr = "mtu"
    equal_passes = False

    @override
    def check_fabric(self, fabric: FabricContext) -> Iterable[Result]:
        graph = self.graph(fabric)
        kind = {name: (d.platform, d.role == "host") for name, d in fabric.devices.items()}
        memo: dict[tuple[Any, ...], str | None] = {}  # a handful of distinct MTU pairings per fabric
        for device in sorted(graph.ends):
            ok: list[str | None] = []
            mine_kind = kind[device]
            for end in graph.ends[device]:
                if end.status not in PAIRED:
                    yield from self.unpaired(end)
                    continue
                a, b = end.port, end.peer
                assert b is not None
                if a.mtu is None or b.mtu is None:
                    yield from self._compare(fabric, end, a.mtu, b.mtu, ok)
                    continue
                key = (mine_kind, a.mtu, a.frame_bytes, a.frame_bytes_tagged,
                       kind[end.peer_device], b.mtu, b.frame_bytes, b.frame_bytes_tagged)  # fmt: skip
                if key not in memo:
                    memo[key] = self.mismatch(fabric, end, a.mtu, b.mtu)
                problem = memo[key]
                if problem is None:
                    ok.append(a.name)
                else:
                    yield self.finding(end, problem, a.mtu, b.mtu)
            if ok:
                yield PassBlock(self.id, device, self.effective_severity, ok)
        yield from self.unreadable_errors()

    @override
    def mismatch(self, fabric: FabricContext, end: End, mine: Any, theirs: Any) -> str | None:
        assert end.peer is not None
        tagged = self.params.vlan_tagged
        overhead = 18 + (4 if tagged else 0)  # what a host frame adds to its L3 MTU (for the message)
        a, b = fabric.devices[end.device], fabric.devices[end.peer_device]
        fa = frame_limit(end.port, tagged)
        fb = frame_limit(end.peer, tagged)
        if fa is None or fb is None:  # an mtu of no known platform: nothing to compare it with
            return (
                f"mtu {mine} here, {theirs} at the peer: no frame size for "
                f"{a.platform if fa is None else b.platform} (frame_bytes not in its state)"
            )
        if (a.role == "host") != (b.role == "host"):
            host_frame, switch_frame = (fa, fb) if a.role == "host" else (fb, fa)
            if host_frame <= switch_frame:
                return None
            return (
                f"host frame {host_frame} bytes (MTU + {overhead}) exceeds the switch port's "
                f"{switch_frame} (mtu {mine} here, {theirs} at the peer)"
            )
        if a.platform == b.platform:
            if mine == theirs and fa == fb:
                return None
            return f"mtu {mine} here, {theirs} at the peer (same platform: must be equal)"
        need = self.params.host_mtu + overhead
        if min(fa, fb) >= need:
            return None
        return (
            f"frame size {fa} here ({a.platform} mtu {mine}), {fb} at the peer ({b.platform} mtu "
            f"{theirs}): below the {need}-byte host frame"
        )


class LinkSpeedCheck(LinkPropertyCheck):
    """Both ends of a link run the same operational speed.

    A link that came up at a lower speed at one end (autoneg, a wrong breakout, a bad optic)
    halves that path's bandwidth and breaks 1:1 (DOMAIN "Speed / FEC / autoneg": fixed, both
    ends identical).
    """

    id = "link-speed"
    severity = Severity.MAJOR
    field = "speed_gbps"

    attr = "speed_gbps"


class LinkFecCheck(LinkPropertyCheck):
    """Both ends of a link use the same FEC mode.

    A FEC mismatch (RS at one end, Fire-code or none at the other) keeps a link down or makes it
    error-prone; 400G requires RS-FEC on both ends (DOMAIN "Speed / FEC / autoneg").
    """

    id = "link-fec"
    severity = Severity.MAJOR
    field = "fec"

    attr = "fec"


class LinkAutonegCheck(LinkPropertyCheck):
    """Both ends of a link agree on autonegotiation (the baseline wants it off at both).

    Autoneg on at one end and fixed at the other can bring a link up at the wrong speed or FEC
    after a flap, or not at all (DOMAIN "Speed / FEC / autoneg").
    """

    id = "link-autoneg"
    severity = Severity.MAJOR
    field = "autoneg"

    attr = "autoneg"


class LinkTrustCheck(LinkPropertyCheck):
    """Both ends of a link classify traffic the same way (DSCP trust at both).

    With DSCP trust at one end and PCP at the other, RoCE is classified into the lossless
    priority on one side only, and PFC protects nothing on that hop (DOMAIN "Trust mode").
    """

    id = "link-trust"
    severity = Severity.CRITICAL
    field = "trust"

    attr = "trust"


class LinkPfcCheck(LinkPropertyCheck):
    """Both ends of a link enable PFC on the same priorities.

    A pause frame for a priority the sender does not treat as lossless is ignored (drops), and a
    priority lossless at one end only spreads pauses to traffic never meant to be lossless
    (DOMAIN "PFC": enabled on priority 3 only, on host NIC and switch port).
    """

    id = "link-pfc"
    severity = Severity.CRITICAL
    field = "pfc_priorities"

    attr = "pfc"


class LinkDscpParams(LinkParams):
    """Parameters of link-dscp-map."""

    dscps: list[int] | None = Field(None, description="DSCPs to compare; default: every DSCP both ends map")


class LinkDscpMapCheck(LinkPropertyCheck[LinkDscpParams]):
    """Both ends of a link map each DSCP to the same priority.

    If RoCE's DSCP lands in the lossless priority at one end and a lossy one at the other, that
    hop is lossy (DOMAIN "DSCP -> priority/TC", all knobs agree on both ends of every link).
    Compared on the DSCPs both ends map (EOS records only explicitly mapped DSCPs), or on the
    ``dscps`` parameter's list.
    """

    id = "link-dscp-map"
    severity = Severity.CRITICAL
    field = "dscp_to_priority"

    attr = "dscp"

    @override
    def mismatch(self, fabric: FabricContext, end: End, mine: Any, theirs: Any) -> str | None:
        if mine is theirs:
            return None
        a, b = dict(mine), dict(theirs)
        keys = sorted(set(a) & set(b)) if self.params.dscps is None else sorted(self.params.dscps)
        diffs = [f"DSCP {k} -> {a.get(k)} here, {b.get(k)} at the peer" for k in keys if a.get(k) != b.get(k)]
        return "; ".join(diffs) or None


class LinkOpticsCheck(LinkPropertyCheck):
    """Both ends of a link carry the same kind of transceiver: the same rate and media.

    An SR8 module at one end and an AOC (or a DR4, or an 800G module run at 400G) at the other
    can come up, but lane mapping, FEC and power budget are then outside what either was
    qualified for, and such links are the ones that flap or run a high corrected-codeword rate.
    Compared on the rate and media code each end's module type names (``400G SR8``); an end whose
    module type names none (a generic identifier, no module data) is not compared.
    """

    id = "link-optics"
    severity = Severity.MINOR
    field = "optic"
    attr = "optic"

    @override
    def mismatch(self, fabric: FabricContext, end: End, mine: Any, theirs: Any) -> str | None:
        (rate_a, media_a), (rate_b, media_b) = mine.split(" ", 1), theirs.split(" ", 1)
        same_rate = "?" in (rate_a, rate_b) or rate_a == rate_b
        return None if same_rate and media_a == media_b else f"optic {mine} here, {theirs} at the peer"

    @override
    def check_fabric(self, fabric: FabricContext) -> Iterable[Result]:
        graph = self.graph(fabric)
        passes: dict[str, list[str | None]] = {}
        for device in sorted(graph.ends):
            ok = passes[device] = []
            for end in graph.ends[device]:
                if end.status not in PAIRED:
                    continue  # link-lldp reports it; an optic is not worth a second error
                mine, theirs = end.port.optic, end.peer.optic if end.peer else None
                if mine is None or theirs is None:
                    continue  # a module type that names no media: nothing to compare
                yield from self._compare(fabric, end, mine, theirs, ok)
        yield from pass_blocks(self, passes)


LINK_CHECKS: tuple[type[AnyCheck], ...] = (
    LinkLldpCheck,
    LinkMtuCheck,
    LinkSpeedCheck,
    LinkFecCheck,
    LinkAutonegCheck,
    LinkTrustCheck,
    LinkPfcCheck,
    LinkDscpMapCheck,
    LinkOpticsCheck,
)
