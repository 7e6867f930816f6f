"""The link graph paired as the workers' parts arrive equals the graph paired at once.

``LinkGraphs.pair_as_added`` pairs each device's link ends when its view is added, and an end
whose peer has not arrived yet when the peer does (issue 14: the pairing ran after the per-device
pass, 1.3 s of a 100k-GPU run's serial tail). Claims on a port must still be made in device order,
whatever the batches: the same ends in the same order, the same statuses and details, the same
first claimant and rivals of every contested port, for any fabric and any split into parts.
"""

from __future__ import annotations

import fnmatch
from types import SimpleNamespace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from fabline.checks.linkgraph import DeviceView, LinkGraph, LinkGraphs, canonical_port

_NAMES = [f"d{i}" for i in range(7)]
_PORTS = ["Ethernet1", "Ethernet2", "Ethernet3", "eth0", "swp1"]


def _port(
    name: str, peer: str | None, peer_port: str | None, alt: str | None, several: bool, alias: str | None
) -> tuple[Any, ...]:
    return (name, peer, peer_port, alt, several, *([None] * 14), alias, None, None)


_lldp = st.one_of(
    st.none(),
    st.tuples(
        st.sampled_from([*_NAMES, "D1.lab.example", "stranger"]),  # case, domain, not in the inventory
        st.one_of(st.none(), st.sampled_from([*_PORTS, "Eth1", "nope"])),
        st.one_of(st.none(), st.sampled_from(["Ethernet2", "uplink"])),
        st.booleans(),
    ),
)
_device = st.lists(
    st.tuples(st.sampled_from(_PORTS), _lldp, st.one_of(st.none(), st.sampled_from(["uplink", "Ethernet9"]))),
    max_size=5,
)


def _views(fabric: dict[str, list[Any]]) -> dict[str, DeviceView]:
    out = {}
    for name, ports in fabric.items():
        rows = []
        for port, lldp, alias in ports:
            peer, peer_port, alt, several = lldp if lldp is not None else (None, None, None, False)
            rows.append(_port(port, peer, peer_port, alt, several, alias))
        out[name] = DeviceView(tuple(rows), None)
    return out


def _shape(graph: LinkGraph) -> Any:
    where = {id(p): (d, i) for d, ports in graph.views.items() for i, p in enumerate(ports)}
    ends = [
        (d, [(e.device, where[id(e.port)], e.status, e.peer_device, e.peer_port_name,
              None if e.peer is None else where[id(e.peer)], e.detail) for e in es])
        for d, es in graph.ends.items()
    ]  # fmt: skip
    first = sorted((where[k], (a, where[id(p)], b, where[id(q)])) for k, (a, p, b, q) in graph.first.items())
    more = sorted((where[k], [(d, where[id(p)]) for d, p in v]) for k, v in graph.more.items())
    return ends, first, more


def _reference(views: dict[str, DeviceView], names: list[str], ignore: tuple[str, ...]) -> list[Any]:
    """Each device's ends as (port index, status, peer device), by the rules written out plainly."""
    by_lower = {n.lower(): n for n in names}
    index = {
        d: {**{canonical_port(p[19]): i for i, p in reversed(list(enumerate(v.ports))) if p[19]},
            **{canonical_port(p[0]): i for i, p in enumerate(v.ports)}}
        for d, v in views.items()
    }  # fmt: skip
    ends: dict[str, list[Any]] = {d: [] for d in views}
    target: dict[tuple[str, int], tuple[str, int]] = {}
    claims: dict[tuple[str, int], list[tuple[str, int]]] = {}
    for d, v in views.items():
        for i, p in enumerate(v.ports):
            peer = p[1]
            if peer is None or any(fnmatch.fnmatchcase(peer.lower(), g.lower()) for g in ignore):
                continue
            name = by_lower.get(peer.lower()) or by_lower.get(peer.lower().split(".", 1)[0])
            if name is None:
                ends[d].append([i, "unknown-peer", peer])
            elif name not in views:
                ends[d].append([i, "peer-unreadable", name])
            else:
                j = next((index[name][canonical_port(k)] for k in (p[2], p[3])
                          if k is not None and canonical_port(k) in index[name]), None)  # fmt: skip
                if j is None:
                    ends[d].append([i, "peer-port-unknown", name])
                else:
                    target[(d, i)] = (name, j)
                    claims.setdefault((name, j), []).append((d, i))
                    ends[d].append([i, "ok", name, (name, j)])
    for d, es in ends.items():
        for e in es:
            if e[1] != "ok":
                continue
            q = e.pop()
            if views[q[0]].ports[q[1]][1] is None:
                e[1] = "disagree" if len(claims[q]) > 1 else "one-sided"
            elif target.get(q) != (d, e[0]):
                e[1] = "disagree"
    for (q_dev, j), who in claims.items():
        if views[q_dev].ports[j][1] is None:
            ends[q_dev].append([j, "claimed" if len(who) == 1 else "disagree", who[0][0]])
    return [(d, sorted(map(tuple, es))) for d, es in ends.items()]


@settings(max_examples=400, deadline=None)
@given(
    fabric=st.dictionaries(st.sampled_from(_NAMES), _device, min_size=1),
    unreadable=st.sets(st.sampled_from(_NAMES), max_size=3),
    cuts=st.lists(st.integers(min_value=1, max_value=7), max_size=7),
    ignore=st.sampled_from([(), ("stranger",), ("d*",)]),
)
def test_paired_as_added_equals_paired_at_once(
    fabric: dict[str, list[Any]], unreadable: set[str], cuts: list[int], ignore: tuple[str, ...]
) -> None:
    names = sorted(set(fabric) | unreadable)
    made = _views(fabric)
    views = {n: made[n] for n in names if n in made and n not in unreadable}  # in device order
    summaries = {
        n: SimpleNamespace(readable=n not in unreadable, status="error" if n in unreadable else "ok")
        for n in names
    }
    at_once = LinkGraphs(views, summaries)
    incremental = LinkGraphs({}, summaries)
    incremental.pair_as_added(names, [ignore])
    order = [n for n in names if n in views]  # parts arrive in device order, in batches of any size
    while order:
        k = cuts.pop(0) if cuts else len(order)
        incremental.add({n: views[n] for n in order[:k]})
        order = order[k:]
    graph = incremental.prepare(ignore)
    assert _shape(graph) == _shape(at_once.prepare(ignore))
    where = {id(p): i for ports in graph.views.values() for i, p in enumerate(ports)}
    got = [
        (d, sorted((where[id(e.port)], str(e.status), e.peer_device) for e in es))
        for d, es in graph.ends.items()
    ]
    assert got == _reference(views, names, ignore)
