"""The inventory and link facts problem grouping needs, taken from a finished run's fabric context.

Grouping (:mod:`fabline.problems`) is a pure function of the findings and these facts. They are
read from what the run already built: the device summaries, the link graph the link checks
cached (never rebuilt here) and the cabling plan. Peers are looked up on demand and only the plan
rows of ports with findings are kept, so a 100k-GPU run costs next to nothing here.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from fabline.checks import FabricContext
from fabline.checks.linkgraph import PAIRED, LinkGraph, Peering, canonical_port
from fabline.problems import DeviceFacts, Facts
from fabline.results import Result

_KNOWN_PEER = PAIRED | {Peering.PEER_UNREADABLE, Peering.DISAGREE}


def _plane(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


def _lldp_missing(row: Mapping[str, Any]) -> bool:
    """A partial collection whose failed commands include the LLDP one."""
    if row.get("status") != "partial":
        return False
    errors = row.get("errors")
    if not isinstance(errors, list):
        return False
    return any(isinstance(e, Mapping) and "lldp" in str(e.get("command", "")).lower() for e in errors)


def problem_facts(
    fabric: FabricContext, device_rows: Sequence[Mapping[str, Any]], findings: Iterable[Result]
) -> Facts:
    """The facts for grouping ``findings``: devices, and the observed and planned peers of their ports.

    Args:
        fabric: The run's fabric context (after the fabric checks ran).
        device_rows: The run's device rows (name, status, collection errors).
        findings: The results to be grouped (only their ports are looked up).
    """
    rows = {row.get("name"): row for row in device_rows}
    devices: dict[str, DeviceFacts] = {}
    for name, summary in fabric.devices.items():
        row = rows.get(name, {})
        devices[name] = DeviceFacts(
            role=summary.role,
            plane=_plane(summary.vars.get("plane")),
            readable=summary.readable,
            status=summary.status,
            lldp_missing=_lldp_missing(row),
        )
    wanted: dict[str, set[str]] = {}
    if fabric.options.get("cabling_plan"):
        for r in findings:
            if r.subject is not None and r.device in devices:
                ports = wanted.get(r.device)
                if ports is None:
                    ports = wanted[r.device] = set()
                ports.add(r.subject)
    graph = fabric.links.built()
    peers: Mapping[tuple[str, str], tuple[str, str]] = GraphPeers(graph) if graph is not None else {}
    return Facts(devices, peers, _planned(fabric, wanted))


class GraphPeers(Mapping[tuple[str, str], tuple[str, str]]):
    """``(device, port) -> (peer, peer port)`` from the link graph, looked up on demand.

    Grouping asks only for the ports whose findings name no peer themselves; a device's ends are
    indexed on its first look-up.
    """

    def __init__(self, graph: LinkGraph) -> None:
        self._graph = graph
        self._index: dict[str, dict[str, tuple[str, str]]] = {}

    def _of(self, device: str) -> dict[str, tuple[str, str]]:
        index = self._index.get(device)
        if index is None:
            index = self._index[device] = {
                end.port.name: (end.peer_device, end.peer_port_name)
                for end in self._graph.ends.get(device, ())
                if end.status in _KNOWN_PEER
            }
        return index

    def __getitem__(self, key: tuple[str, str]) -> tuple[str, str]:
        return self._of(key[0])[key[1]]

    def __iter__(self) -> Iterator[tuple[str, str]]:
        for device in self._graph.ends:
            for port in self._of(device):
                yield device, port

    def __len__(self) -> int:
        return sum(len(self._of(device)) for device in self._graph.ends)


def _planned(
    fabric: FabricContext, wanted: Mapping[str, set[str]]
) -> dict[tuple[str, str], tuple[str, str, int]]:
    """Cabling-plan rows of the wanted ports, both directions, in each device's own port names."""
    path = fabric.options.get("cabling_plan")
    if not path or not wanted:
        return {}
    from fabline.checks.fabric.cabling import load_cabling_plan
    from fabline.errors import ConfigError

    try:
        plan = load_cabling_plan(Path(path))
    except ConfigError:
        return {}  # the cabling-plan check already reported it
    by_lower = {n.lower(): n for n in fabric.devices}
    own = {
        (dev, canonical_port(port)): port for dev, ports in wanted.items() for port in ports
    }  # plan port spelling -> the device's own
    out: dict[tuple[str, str], tuple[str, str, int]] = {}
    for link in plan:
        a = by_lower.get(link.device.lower(), link.device)
        b = by_lower.get(link.peer_device.lower(), link.peer_device)
        pa = own.get((a, canonical_port(link.port)))
        pb = own.get((b, canonical_port(link.peer_port)))
        if pa is not None:
            out[(a, pa)] = (b, pb or link.peer_port, link.line)
        if pb is not None:
            out[(b, pb)] = (a, pa or link.port, link.line)
    return out
