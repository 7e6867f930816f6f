"""The BGP underlay and ECMP fan-out, read back from every switch platform.

One neutral shape for every platform (state ``bgp``, ``docs/state-schema.md``):

- ``bgp.asn`` / ``bgp.router_id``: the local AS and router id;
- ``bgp.neighbors.<peer>``: one entry per configured session, keyed by the peer address (or the
  interface of an unnumbered session, as FRR and NVUE name it): ``remote_asn``, ``state`` (the BGP
  FSM state in lower case: ``established``, ``active``, ``idle``, ``connect``, ``opensent``,
  ``openconfirm``), ``admin_down`` (shut down by configuration), ``prefixes_received``,
  ``description`` and ``hostname`` where the platform shows them;
- ``bgp.ecmp``: the route to the probe prefix (``fabline_ecmp_prefix``): ``prefix``, ``paths`` (the
  active next hops the switch installed; 0 when it has no route), ``next_hops``, ``interfaces``.

The parsers here read the FRR JSON of ``vtysh`` (SONiC, and FRR under any NOS), FRR's text
summary, Arista EOS eAPI JSON, Cisco NX-OS JSON and text, and NVIDIA NVUE tables (Cumulus
Linux 5.x). Each platform module lists the commands it runs (``docs/platforms/*.md`` says why).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Mapping
from typing import Any, cast

from fabline.platforms.base import ParseContext, json_parser, text_parser
from fabline.platforms.cisco_nxos_names import canonical_name as nxos_name
from fabline.platforms.toolkit import ValueProblem, dash_tables, nxapi_rows
from fabline.state_types import Bgp, BgpNeighbor, BgpSessionState, Ecmp, StateBody

#: BGP FSM states as the platforms print them -> the state word (lower case, RFC 4271 names).
_STATES: dict[str, BgpSessionState] = {
    "established": "established",
    "active": "active",
    "idle": "idle",
    "connect": "connect",
    "opensent": "opensent",
    "openconfirm": "openconfirm",
    "clearing": "idle",
    "deleted": "idle",
    "shutdown": "idle",
}


def session_state(word: str) -> tuple[BgpSessionState, bool]:
    """The state word of a printed BGP state and whether the session is shut down by configuration.

    Example:
        >>> session_state("Established"), session_state("Idle (Admin)"), session_state("Admin (Shut)")
        (('established', False), ('idle', True), ('idle', True))
        >>> session_state("Idle (PfxCt)"), session_state("OpenSent")
        (('idle', False), ('opensent', False))
    """
    text = word.strip().lower()
    admin = "admin" in text or text in ("shut", "shutdown")
    first = re.split(r"[\s(]", text, maxsplit=1)[0]
    state = _STATES.get(first)
    if state is None:
        if admin:
            return "idle", True
        raise ValueProblem(f"unknown BGP session state {word!r}")
    return state, admin


def asn(value: Any) -> int:
    """An AS number as an integer, from an integer, a decimal string or asdot (``1.10``).

    Example:
        >>> asn("65001"), asn(4200000001), asn("1.10")
        (65001, 4200000001, 65546)
    """
    if type(value) is int:
        number = value
    else:
        text = str(value).strip()
        hi, dot, lo = text.partition(".")
        number = int(hi) * 65536 + int(lo) if dot else int(text)
    if not 0 < number <= 4294967295:
        raise ValueProblem(f"AS number {value!r} is out of range")
    return number


def _count(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _neighbor(
    remote: Any,
    state_word: str,
    *,
    prefixes_received: int | None = None,
    hostname: str | None = None,
    description: str | None = None,
) -> BgpNeighbor:
    state, admin = session_state(state_word)
    entry: BgpNeighbor = {"state": state, "admin_down": admin}
    if remote is not None and str(remote).strip() not in ("", "external", "internal"):
        entry["remote_asn"] = asn(remote)
    if prefixes_received is not None:
        entry["prefixes_received"] = prefixes_received
    if hostname:
        entry["hostname"] = hostname
    if description:
        entry["description"] = description
    return entry


def _bgp(local_as: Any, router_id: Any, neighbors: dict[str, BgpNeighbor]) -> StateBody:
    bgp: Bgp = {"neighbors": neighbors}
    if local_as is not None and str(local_as) not in ("", "0"):
        bgp["asn"] = asn(local_as)
    if router_id:
        bgp["router_id"] = str(router_id)
    return {"bgp": bgp}


# --------------------------------------------------------------------------------------------
# FRR (SONiC's bgp container, Cumulus, any FRR): vtysh JSON and text


@json_parser("FRR 'show bgp summary json' (an object with 'ipv4Unicast' or 'peers')", may_be_empty=True)
def parse_frr_bgp_summary_json(doc: Any, ctx: ParseContext) -> StateBody:
    """``vtysh -c 'show bgp summary json'`` (FRR): the IPv4 unicast sessions of the default VRF.

    FRR wraps the address families (``ipv4Unicast``, ``ipv6Unicast``, ...); ``show bgp ipv4
    unicast summary json`` prints the family's object alone. A router without BGP prints ``{}``.
    """
    if not isinstance(doc, dict):
        raise ctx.reject()
    family = doc.get("ipv4Unicast", doc if "peers" in doc else None)
    if family is None:
        if doc and not any(k.endswith("Unicast") or k.startswith("l2Vpn") for k in doc):
            raise ctx.reject(f"keys {', '.join(sorted(doc)[:4])}")
        return {"bgp": {"neighbors": {}}}  # no BGP, or no IPv4 unicast session
    if not isinstance(family, dict) or not isinstance(family.get("peers", {}), dict):
        raise ctx.reject("'peers' is not an object")
    neighbors: dict[str, BgpNeighbor] = {}
    for peer, body in (family.get("peers") or {}).items():
        if not isinstance(body, dict) or "state" not in body:
            raise ctx.reject(f"peer {peer!r} has no 'state'")
        neighbors[str(peer)] = _neighbor(
            body.get("remoteAs"), str(body["state"]),
            prefixes_received=_count(body.get("pfxRcd")),
            hostname=body.get("hostname") if isinstance(body.get("hostname"), str) else None,
            description=body.get("desc") if isinstance(body.get("desc"), str) else None,
        )  # fmt: skip
    return _bgp(family.get("as"), family.get("routerId"), neighbors)


_FRR_ID = re.compile(r"BGP router identifier (\S+), local AS number (\S+)")
_FRR_ROW = re.compile(
    r"^(?P<peer>\S+)\s+4\s+(?P<asn>\S+)\s+\d+\s+\d+\s+\d+\s+\d+\s+\d+\s+(?P<updown>\S+)\s+(?P<rest>.+)$"
)


@text_parser("FRR 'show bgp summary' text with a 'BGP router identifier' line", may_be_empty=True)
def parse_frr_bgp_summary_text(text: str, ctx: ParseContext) -> StateBody:
    """FRR's text summary (``vtysh -c 'show bgp ipv4 unicast summary'``, ``show ip bgp summary``).

    ``State/PfxRcd`` is a prefix count for an established session and the state otherwise. A
    peer shown as ``hostname(swp1)`` (Cumulus, unnumbered) is keyed by the interface.
    """
    ident = _FRR_ID.search(text)
    if ident is None:
        raise ctx.reject()
    neighbors: dict[str, BgpNeighbor] = {}
    for line in text.splitlines():
        m = _FRR_ROW.match(line.strip())
        if m is None:
            continue
        peer = m["peer"]
        hostname = None
        named = re.fullmatch(r"(.+)\((\S+)\)", peer)
        if named:
            hostname, peer = named.group(1), named.group(2)
        rest = m["rest"].split()
        pfx = rest[0]
        if pfx.isdigit():
            neighbors[peer] = _neighbor(
                m["asn"], "Established", prefixes_received=int(pfx), hostname=hostname
            )
        else:
            word = " ".join(rest[:2]) if len(rest) > 1 and rest[1].startswith("(") else pfx
            neighbors[peer] = _neighbor(m["asn"], word, hostname=hostname)
    return _bgp(ident.group(2), ident.group(1), neighbors)


def _probe(ctx: ParseContext) -> str:
    prefix = ctx.params.get("prefix")
    if not prefix:
        raise ctx.reject("the command names no prefix")
    try:
        return str(ipaddress.ip_network(prefix, strict=False))
    except ValueError:
        raise ctx.reject(f"{prefix!r} is not an IP prefix") from None


def _ecmp(prefix: str, hops: Iterable[tuple[str | None, str | None]], protocol: str | None) -> StateBody:
    pairs = list(hops)
    ecmp: Ecmp = {"prefix": prefix, "paths": len(pairs)}
    if pairs:
        ecmp["next_hops"] = [h or "" for h, _ in pairs]
        ecmp["interfaces"] = [i or "" for _, i in pairs]
    if protocol:
        word = protocol.lower()
        # EOS says eBGP/iBGP, NX-OS bgp-65001, FRR and NVUE bgp: one word for the protocol.
        ecmp["protocol"] = "bgp" if word in ("ebgp", "ibgp") or word.startswith("bgp") else word
    return {"bgp": {"ecmp": ecmp}}


@json_parser("FRR 'show ip route PREFIX json' (prefix -> list of route entries)")
def parse_frr_route_json(doc: Any, ctx: ParseContext) -> StateBody:
    """``vtysh -c 'show ip route PREFIX json'`` (FRR zebra): the installed route's active next hops.

    The selected entry counts; ``paths`` is its active next hops (0 and no entry: no route, FRR
    prints ``{}``). The prefix the collection asked for is the key (FRR answers the longest match).
    """
    prefix = _probe(ctx)
    if not isinstance(doc, dict) or any(not isinstance(v, list) for v in doc.values()):
        raise ctx.reject()
    entries = [e for routes in doc.values() for e in routes if isinstance(e, dict)]
    chosen = next((e for e in entries if e.get("selected") is True), None)
    if chosen is None:
        return _ecmp(prefix, [], None)
    hops = [
        (h.get("ip"), h.get("interfaceName"))
        for h in chosen.get("nexthops") or []
        if isinstance(h, dict) and h.get("active") is True
    ]
    return _ecmp(prefix, hops, str(chosen.get("protocol") or "") or None)


# --------------------------------------------------------------------------------------------
# Arista EOS (eAPI JSON)


@json_parser("an eAPI 'show ip bgp summary' object with 'vrfs'", may_be_empty=True)
def parse_eos_bgp_summary_json(doc: Any, ctx: ParseContext) -> StateBody:
    """``show ip bgp summary | json`` (EOS): the default VRF's IPv4 sessions."""
    if not isinstance(doc, dict) or not isinstance(doc.get("vrfs"), dict):
        raise ctx.reject()
    vrf = doc["vrfs"].get("default")
    if vrf is None:
        return {"bgp": {"neighbors": {}}}  # BGP not configured: EOS prints no VRF
    if not isinstance(vrf, dict) or not isinstance(vrf.get("peers"), dict):
        raise ctx.reject("the default VRF has no 'peers' object")
    neighbors: dict[str, BgpNeighbor] = {}
    for peer, body in (vrf.get("peers") or {}).items():
        if not isinstance(body, dict) or "peerState" not in body:
            raise ctx.reject(f"peer {peer!r} has no 'peerState'")
        word = str(body["peerState"])
        if word == "Idle" and body.get("peerStateIdleReason") == "Admin":
            word = "Idle (Admin)"
        neighbors[str(peer)] = _neighbor(
            body.get("asn"), word, prefixes_received=_count(body.get("prefixReceived")),
            description=body.get("description") if isinstance(body.get("description"), str) else None,
        )  # fmt: skip
    return _bgp(vrf.get("asn"), vrf.get("routerId"), neighbors)


@json_parser("an eAPI 'show ip route' object with 'vrfs'")
def parse_eos_route_json(doc: Any, ctx: ParseContext) -> StateBody:
    """``show ip route PREFIX | json`` (EOS): the vias of the default VRF's route (none: no route)."""
    prefix = _probe(ctx)
    if not isinstance(doc, dict) or not isinstance(doc.get("vrfs"), dict):
        raise ctx.reject()
    vrf = doc["vrfs"].get("default")
    routes = vrf.get("routes") if isinstance(vrf, dict) else None
    if not isinstance(routes, dict):
        raise ctx.reject("no default VRF 'routes' object")
    route = routes.get(prefix)
    if route is None and len(routes) == 1:
        route = next(iter(routes.values()))  # the longest match EOS answered with
    if not isinstance(route, dict):
        return _ecmp(prefix, [], None)
    vias = route.get("vias")
    if vias is not None and not isinstance(vias, list):
        raise ctx.reject(f"route {prefix}: 'vias' is not a list")
    hops = [(v.get("nexthopAddr"), v.get("interface")) for v in vias or [] if isinstance(v, dict)]
    return _ecmp(prefix, hops, str(route.get("routeType") or "") or None)


# --------------------------------------------------------------------------------------------
# Cisco NX-OS (NX-API JSON through '| json', route text)


@json_parser("an NX-OS BGP summary object with 'TABLE_vrf'", may_be_empty=True)
def parse_nxos_bgp_summary_json(doc: Any, ctx: ParseContext) -> StateBody:
    """``show bgp ipv4 unicast summary | json`` (NX-OS): the default VRF's IPv4 unicast neighbours.

    Also reads ``show bgp all summary vrf all | json`` (the same tables, every VRF and family).
    """
    if not isinstance(doc, dict) or "TABLE_vrf" not in doc:
        raise ctx.reject()
    vrfs = [v for v in nxapi_rows(doc["TABLE_vrf"], "ROW_vrf") if v.get("vrf-name-out") == "default"]
    if not vrfs:
        return {"bgp": {"neighbors": {}}}
    neighbors: dict[str, BgpNeighbor] = {}
    for vrf in vrfs:
        for af in nxapi_rows(vrf.get("TABLE_af"), "ROW_af"):
            for saf in nxapi_rows(af.get("TABLE_saf"), "ROW_saf"):
                if str(saf.get("af-name", "")).lower() != "ipv4 unicast":
                    continue
                for row in nxapi_rows(saf.get("TABLE_neighbor"), "ROW_neighbor"):
                    peer = row.get("neighborid")
                    if not peer or "state" not in row:
                        raise ctx.reject("a neighbor row without 'neighborid' or 'state'")
                    neighbors[str(peer)] = _neighbor(
                        row.get("neighboras"), str(row["state"]),
                        prefixes_received=_count(row.get("prefixreceived")),
                    )  # fmt: skip
    return _bgp(vrfs[-1].get("vrf-local-as"), vrfs[-1].get("vrf-router-id"), neighbors)


_NXOS_ROUTE = re.compile(r"^(\S+/\d+), ubest/mbest: (\d+)/(\d+)")
_NXOS_VIA = re.compile(r"^\s+\*via ([^,\s]+),(?: ([A-Za-z][\w/.-]*),)?")


@text_parser("NX-OS 'show ip route' text with an 'IP Route Table for VRF' header")
def parse_nxos_route_text(text: str, ctx: ParseContext) -> StateBody:
    """``show ip route PREFIX`` (NX-OS text): the best unicast next hops (``*via``) of the prefix."""
    prefix = _probe(ctx)
    if "IP Route Table for VRF" not in text:
        raise ctx.reject()
    hops: list[tuple[str | None, str | None]] = []
    protocol = None
    current = None
    for line in text.splitlines():
        head = _NXOS_ROUTE.match(line)
        if head:
            current = head.group(1)
            continue
        via = _NXOS_VIA.match(line)
        if via and current == prefix:
            hops.append((via.group(1), nxos_name(via.group(2)) if via.group(2) else None))
            found = re.search(r", (bgp|ospf|isis|static|direct|local)[-,\s]", line + " ")
            protocol = protocol or (found.group(1) if found else None)
    return _ecmp(prefix, hops, protocol)


# --------------------------------------------------------------------------------------------
# NVIDIA Cumulus Linux 5.x (NVUE tables)


@text_parser("an NVUE BGP neighbor table with 'Neighbor', 'AS' and 'State' columns", may_be_empty=True)
def parse_nvue_bgp_neighbors(text: str, ctx: ParseContext) -> StateBody:
    """``nv show vrf default router bgp neighbor`` (NVUE table): AS, state and IPv4 prefixes per peer.

    The local AS is not in this view (``nv config show`` has it). A peer row may continue on the
    next lines with more address families; ``PfxRcvd`` is read from its ``ipv4-unicast`` line.
    """
    tables = [t for t in dash_tables(text.splitlines()) if {"Neighbor", "AS", "State"} <= set(t.headers)]
    if not tables:
        if text.strip() == "No Data":  # NVUE's answer when no neighbour is configured
            return {"bgp": {"neighbors": {}}}
        raise ctx.reject()
    neighbors: dict[str, BgpNeighbor] = {}
    last: BgpNeighbor | None = None
    for row in tables[0].rows:
        if row["Neighbor"]:
            last = neighbors[row["Neighbor"]] = _neighbor(row["AS"] or None, row["State"] or "idle")
        if last is not None and row.get("Afi-Safi") == "ipv4-unicast":
            received = _count(row.get("PfxRcvd"))
            if received is not None:
                last["prefixes_received"] = received
    return {"bgp": {"neighbors": neighbors}}


@text_parser("an NVUE route-entry table with 'Protocol' and 'ResolvedViaIntf' columns")
def parse_nvue_rib_route(text: str, ctx: ParseContext) -> StateBody:
    """``nv show vrf default router rib ipv4 route PREFIX`` (NVUE): the route entry's resolved next hops.

    Each next hop is a row with a ``ResolvedViaIntf``; ``A`` in its flags marks it active. A
    prefix not in the RIB is NVUE's "does not exist" error: no route.
    """
    prefix = _probe(ctx)
    if "does not exist" in text:
        return _ecmp(prefix, [], None)
    tables = [t for t in dash_tables(text.splitlines()) if {"Protocol", "ResolvedViaIntf"} <= set(t.headers)]
    if not tables:
        raise ctx.reject()
    hops: list[tuple[str | None, str | None]] = []
    protocol = None
    for row in tables[0].rows:
        protocol = protocol or row.get("Protocol") or None
        if row["ResolvedViaIntf"] and "A" in row.get("Flags", "A"):
            hops.append((row.get("ResolvedVia") or None, row["ResolvedViaIntf"]))
    return _ecmp(prefix, hops, protocol)


def neighbors_of(state: Mapping[str, Any]) -> Mapping[str, Any]:
    """A state's BGP neighbours (empty when it has none or no ``bgp``)."""
    bgp = state.get("bgp")
    found = bgp.get("neighbors") if isinstance(bgp, Mapping) else None
    return found if isinstance(found, Mapping) else {}


# --------------------------------------------------------------------------------------------
# BGP in configurations (the closed loop and render --diff compare these with the design)


def _as_or_none(value: Any) -> int | None:
    try:
        return asn(value)
    except (ValueError, TypeError):
        return None  # 'external', 'internal', 'auto': no number in the configuration


def config_bgp(
    local_as: Any, router_id: Any, neighbors: Mapping[str, Mapping[str, Any]], maximum_paths: Any = None
) -> StateBody:
    """The ``bgp`` fragment of a configuration: AS, router id, multipath, configured neighbours.

    ``neighbors`` maps the peer to ``remote_as``, ``description`` and ``shutdown`` as the
    configuration says them (an AS that is no number, ``external``, is left out).

    Example:
        >>> config_bgp("65001", "10.0.0.1", {"10.1.0.0": {"remote_as": "65100", "shutdown": True}})
        {'bgp': {'asn': 65001, 'router_id': '10.0.0.1', 'neighbors': {'10.1.0.0': {'remote_asn': 65100, 'admin_down': True}}}}
    """
    bgp: dict[str, Any] = {}
    number = _as_or_none(local_as)
    if number is not None:
        bgp["asn"] = number
    if router_id:
        bgp["router_id"] = str(router_id)
    paths = _count(maximum_paths)
    if paths:
        bgp["maximum_paths"] = paths
    found: dict[str, Any] = {}
    for peer, conf in neighbors.items():
        entry: dict[str, Any] = {}
        remote = _as_or_none(conf.get("remote_as"))
        if remote is not None:
            entry["remote_asn"] = remote
        if conf.get("description"):
            entry["description"] = str(conf["description"])
        if conf.get("shutdown"):
            entry["admin_down"] = True
        found[str(peer)] = entry
    if found:
        bgp["neighbors"] = found
    return {"bgp": cast(Bgp, bgp)} if bgp else {}


_EOS_NEIGHBOR = re.compile(r"neighbor (\S+) (remote-as|description|peer group|peer-group|shutdown)\s*(.*)")


def eos_bgp_config(head: str, children: Iterable[str]) -> StateBody:
    """``router bgp N`` of an EOS running-config (default VRF): peer groups lend their remote AS.

    Example:
        >>> eos_bgp_config("router bgp 65001", ["neighbor SPINES peer group", "neighbor SPINES remote-as 65100",
        ...     "neighbor 10.1.0.0 peer group SPINES", "maximum-paths 4 ecmp 4"])["bgp"]["neighbors"]
        {'10.1.0.0': {'remote_asn': 65100}}
    """
    local = head.split()[2] if len(head.split()) > 2 else None
    router_id = None
    maximum = None
    conf: dict[str, dict[str, Any]] = {}
    group_of: dict[str, str] = {}
    for line in children:
        if m := re.fullmatch(r"router-id (\S+)", line):
            router_id = m.group(1)
        elif m := re.fullmatch(r"maximum-paths (\d+)(?: ecmp \d+)?", line):
            maximum = m.group(1)
        elif m := _EOS_NEIGHBOR.fullmatch(line):
            peer, key, value = m.groups()
            entry = conf.setdefault(peer, {})
            if key == "remote-as":
                entry["remote_as"] = value
            elif key == "description":
                entry["description"] = value
            elif key == "shutdown":
                entry["shutdown"] = True
            elif value:
                group_of[peer] = value
            else:
                entry["group"] = True  # 'neighbor NAME peer group': a group, not a session
    neighbors: dict[str, dict[str, Any]] = {}
    for peer, entry in conf.items():
        if entry.get("group"):
            continue
        group = conf.get(group_of.get(peer, ""), {})
        neighbors[peer] = {**{k: v for k, v in group.items() if k != "group"}, **entry}
    return config_bgp(local, router_id, neighbors, maximum)


def nxos_bgp_config(head: str, children: Iterable[tuple[str, list[str]]]) -> StateBody:
    """``router bgp N`` of an NX-OS running-config (default VRF): ``neighbor X`` blocks, ``template peer``.

    ``children`` are the section's lines with their own indented lines.

    Example:
        >>> nxos_bgp_config("router bgp 65001", [("router-id 10.0.0.3", []),
        ...     ("neighbor 10.1.0.0", ["remote-as 65100", "description spine-01"])])["bgp"]["neighbors"]
        {'10.1.0.0': {'remote_asn': 65100, 'description': 'spine-01'}}
    """
    local = head.split()[2] if len(head.split()) > 2 else None
    router_id = None
    maximum = None
    templates: dict[str, dict[str, Any]] = {}
    neighbors: dict[str, dict[str, Any]] = {}
    for line, sub in children:
        if m := re.fullmatch(r"router-id (\S+)", line):
            router_id = m.group(1)
        elif line == "address-family ipv4 unicast":
            maximum = next(
                (m.group(1) for s in sub if (m := re.fullmatch(r"maximum-paths (\d+)", s))), maximum
            )
        elif m := re.fullmatch(r"(template peer|neighbor) (\S+)(?: remote-as (\S+))?", line):
            entry: dict[str, Any] = {"remote_as": m.group(3)} if m.group(3) else {}
            for s in sub:
                if n := re.fullmatch(r"remote-as (\S+)", s):
                    entry["remote_as"] = n.group(1)
                elif n := re.fullmatch(r"description (.+)", s):
                    entry["description"] = n.group(1)
                elif s == "shutdown":
                    entry["shutdown"] = True
                elif n := re.fullmatch(r"inherit peer (\S+)", s):
                    entry["inherit"] = n.group(1)
            (templates if m.group(1) == "template peer" else neighbors)[m.group(2)] = entry
    for entry in neighbors.values():
        base = templates.get(entry.pop("inherit", ""), {})
        for key, value in base.items():
            entry.setdefault(key, value)
    return config_bgp(local, router_id, neighbors, maximum)


def nvue_bgp_config(root: Mapping[str, Any]) -> StateBody:
    """The BGP of an NVUE configuration (``nv config show -o json`` / a rendered ``startup.yaml``).

    ``router bgp`` has the AS and router id; ``vrf default router bgp`` the neighbours (a peer
    group lends its ``remote-as``) and ``address-family ipv4-unicast multipaths ebgp``.
    """
    router = root.get("router")
    bgp = router.get("bgp") if isinstance(router, Mapping) else None
    vrf = root.get("vrf")
    default = vrf.get("default") if isinstance(vrf, Mapping) else None
    vbgp = ((default or {}).get("router") or {}).get("bgp") if isinstance(default, Mapping) else None
    if not isinstance(bgp, Mapping) and not isinstance(vbgp, Mapping):
        return {}
    bgp = bgp if isinstance(bgp, Mapping) else {}
    vbgp = vbgp if isinstance(vbgp, Mapping) else {}
    groups = vbgp.get("peer-group") if isinstance(vbgp.get("peer-group"), Mapping) else {}
    assert isinstance(groups, Mapping)
    neighbors: dict[str, dict[str, Any]] = {}
    for peer, body in (vbgp.get("neighbor") or {}).items():
        if not isinstance(body, Mapping):
            continue
        group = groups.get(str(body.get("peer-group", "")), {})
        group = group if isinstance(group, Mapping) else {}
        remote = body.get("remote-as", group.get("remote-as"))
        description = body.get("description")
        neighbors[str(peer)] = {
            "remote_as": remote,
            "description": description if description not in (None, "none") else None,
            "shutdown": body.get("shutdown") == "on",
        }
    af = (
        (vbgp.get("address-family") or {}).get("ipv4-unicast")
        if isinstance(vbgp.get("address-family"), Mapping)
        else None
    )
    multipaths = (af or {}).get("multipaths") if isinstance(af, Mapping) else None
    maximum = multipaths.get("ebgp") if isinstance(multipaths, Mapping) else None
    local = bgp.get("autonomous-system", vbgp.get("autonomous-system"))
    return config_bgp(local, bgp.get("router-id", vbgp.get("router-id")), neighbors, maximum)


def sonic_bgp_config(meta: Mapping[str, Any], neighbors: Mapping[str, Mapping[str, Any]]) -> StateBody:
    """CONFIG_DB's BGP: ``DEVICE_METADATA|localhost`` ``bgp_asn`` and the ``BGP_NEIGHBOR`` table.

    A neighbour key may carry its VRF (``default|10.0.0.1``); ``admin_status: down`` is a shut
    session.
    """
    peers = {
        key.split("|")[-1]: {
            "remote_as": body.get("asn"), "description": body.get("name"),
            "shutdown": str(body.get("admin_status", "")).lower() == "down",
        }
        for key, body in neighbors.items()
        if isinstance(body, Mapping) and (key.count("|") == 0 or key.split("|")[0] == "default")
    }  # fmt: skip
    if meta.get("bgp_asn") is None and not peers:
        return {}
    return config_bgp(meta.get("bgp_asn"), None, peers)


__all__ = [
    "asn",
    "config_bgp",
    "eos_bgp_config",
    "neighbors_of",
    "nvue_bgp_config",
    "nxos_bgp_config",
    "parse_eos_bgp_summary_json",
    "parse_eos_route_json",
    "parse_frr_bgp_summary_json",
    "parse_frr_bgp_summary_text",
    "parse_frr_route_json",
    "parse_nvue_bgp_neighbors",
    "parse_nvue_rib_route",
    "parse_nxos_bgp_summary_json",
    "parse_nxos_route_text",
    "session_state",
    "sonic_bgp_config",
]
