"""Host application layer against the fabric: RoCE ToS, NCCL_IB_TC and ECN on the fabric's lossless class.

The declarative host rules compare these settings with the baseline's numbers. This check
compares them with what the fabric actually does: the DSCPs the host's own leaf port maps to a
PFC-enabled (lossless) priority. A site that moved RoCE to DSCP 24 on its switches but not on one
rack of hosts is found even when the baseline was updated too.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from pydantic import Field
from typing_extensions import override

from fabline.checks import FabricContext
from fabline.checks.fabric.links import LinkCheck, LinkParams, link_label, pass_blocks
from fabline.checks.linkgraph import PAIRED, End, PortView
from fabline.results import Result, Severity

#: The ECN field of a ToS byte, by its value (RFC 3168).
_ECN = ("Not-ECT", "ECT(1)", "ECT(0)", "CE")


def lossless_dscps(
    port: PortView, memo: dict[tuple[int, int], tuple[Any, Any, frozenset[int]]] | None = None
) -> frozenset[int] | None:
    """DSCPs a port maps to one of its PFC priorities (None: map or PFC not collected).

    ``memo`` (the caller's, for one pass over a graph) keeps the answer per distinct map and PFC
    list: both are interned by the projection, one shared tuple per distinct value.

    Example:
        >>> p = PortView("e", None, None, None, False, None, None, None, None, None, None, None,
        ...              None, None, (3,), ((24, 0), (26, 3), (48, 6)), None, None, None, None)
        >>> sorted(lossless_dscps(p))
        [26]
    """
    if port.dscp is None or port.pfc is None:
        return None
    if memo is None:
        return frozenset(d for d, prio in port.dscp if prio in port.pfc)
    key = (id(port.dscp), id(port.pfc))
    hit = memo.get(key)
    if hit is None or hit[0] is not port.dscp or hit[1] is not port.pfc:
        hit = memo[key] = (port.dscp, port.pfc, frozenset(d for d, prio in port.dscp if prio in port.pfc))
    return hit[2]


def _priority_of(
    dscp_map: tuple[tuple[int, int], ...] | None, dscp: int, maps: dict[int, tuple[Any, dict[int, int]]]
) -> int | None:
    """The priority a port's DSCP map gives ``dscp`` (None: not mapped, or no map).

    The projection shares one tuple per distinct map, so ``maps`` (the caller's, for one pass)
    keeps its lookup table once per map, not once per NIC.
    """
    if not dscp_map:
        return None
    hit = maps.get(id(dscp_map))
    if hit is None or hit[0] is not dscp_map:
        hit = maps[id(dscp_map)] = (dscp_map, dict(dscp_map))
    return hit[1].get(dscp)


def tos_problem(tos: int, lossless: frozenset[int]) -> str | None:
    """Why a ToS byte does not put traffic into the lossless class with ECN capability.

    Example:
        >>> tos_problem(106, frozenset({26})), tos_problem(104, frozenset({26}))
        (None, 'ToS 104 = DSCP 26 with Not-ECT: switches cannot mark it')
        >>> tos_problem(96, frozenset({26}))
        'ToS 96 = DSCP 24, not a lossless DSCP of the fabric ([26])'
    """
    dscp, ecn = tos >> 2, tos & 3
    if dscp not in lossless:
        return f"ToS {tos} = DSCP {dscp}, not a lossless DSCP of the fabric ({sorted(lossless)})"
    if ecn not in (1, 2):
        return f"ToS {tos} = DSCP {dscp} with {_ECN[ecn]}: switches cannot mark it"
    return None


class HostTosFabricCheck(LinkCheck):
    """Hosts mark RoCE and NCCL traffic with a DSCP their leaf treats as lossless, ECN-capable.

    The application must mark its traffic with the fabric's lossless DSCP: RDMA-CM's default ToS
    and ``NCCL_IB_TC`` are a ToS byte, DSCP << 2 | ECN bits (106 for DSCP 26 with ECT(0); 104
    forgets ECN capability). The NIC's ECN reaction and notification points must be enabled on
    the priority the host maps that DSCP to (DOMAIN "Host side"). Compared per rail NIC with the
    leaf port at the other end of its link (its DSCP map and PFC priorities); ``NCCL_IB_TC`` once
    per host against every rail's leaf. Reported at the host, where the setting lives.
    """

    id = "host-tos-fabric"
    severity = Severity.CRITICAL

    @override
    def check_fabric(self, fabric: FabricContext) -> Iterable[Result]:
        graph = self.graph(fabric)
        passes: dict[str, list[str | None]] = {}
        memo: dict[tuple[int, int], tuple[Any, Any, frozenset[int]]] = {}
        maps: dict[int, tuple[Any, dict[int, int]]] = {}
        for name in sorted(graph.ports):
            if fabric.devices[name].role != "host":
                continue
            ok = passes[name] = []
            common: frozenset[int] | None = None
            leaves = []
            for end in graph.ends.get(name, []):
                if end.status not in PAIRED or end.peer is None:
                    continue
                lossless = lossless_dscps(end.peer, memo)
                result = self._nic(fabric, end, lossless, maps)
                if result is None:
                    ok.append(end.port.name)
                else:
                    yield result
                if lossless is not None:
                    common = lossless if common is None else common & lossless
                    leaves.append(end.peer_device)
            tc = fabric.links.views[name].nccl_ib_tc
            if tc is None:
                continue
            if common is None:
                yield self.error(
                    name, "NCCL_IB_TC", f"{name}: no rail leaf port with a DSCP map and PFC to compare"
                )
                continue
            if not common:
                yield self.failed(
                    name, "NCCL_IB_TC",
                    f"{name}: NCCL_IB_TC {tc}: the rail leaves ({', '.join(sorted(set(leaves)))}) share no lossless DSCP",
                    expected={"lossless_dscps": "one DSCP lossless on every rail's leaf"}, actual=tc,
                )  # fmt: skip
                continue
            expected = {"lossless_dscps": sorted(common), "ecn": "ECT(0) or ECT(1)"}
            problem = f"NCCL_IB_TC {tc!r} is not a number" if not tc.strip().isdigit() else None
            problem = problem or tos_problem(int(tc), common)
            if problem is None:
                ok.append("NCCL_IB_TC")
            else:
                yield self.failed(
                    name, "NCCL_IB_TC", f"{name}: NCCL_IB_TC: {problem} (leaves {', '.join(sorted(set(leaves)))})",
                    expected=expected, actual=tc,
                )  # fmt: skip

        yield from pass_blocks(self, passes)

    def _nic(
        self,
        fabric: FabricContext,
        end: End,
        lossless: frozenset[int] | None,
        maps: dict[int, tuple[Any, dict[int, int]]],
    ) -> Result | None:
        """The finding of one rail NIC, or None when it passes."""
        port = end.port
        if lossless is None:
            peer = fabric.devices.get(end.peer_device) if end.peer_device else None
            reason = peer.unsupported_reason("interfaces.*.dscp_to_priority") if peer else None
            # one message per reason, the NIC in the subject: they fold into one row per host
            if reason:
                return self.skipped(end.device, port.name, f"the peer's DSCP map is not provided ({reason})")
            return self.error(end.device, port.name, "DSCP map or PFC priorities not collected at the peer")
        if port.roce_tos is None:
            return self.error(end.device, port.name, "nic.roce_tos not collected")
        problems = []
        problem = tos_problem(port.roce_tos, lossless)
        if problem:
            problems.append(problem)
        else:
            prio = _priority_of(port.dscp, port.roce_tos >> 2, maps)
            if prio is None:
                problems.append(f"the host maps DSCP {port.roce_tos >> 2} to no priority")
            else:
                for field, prios in (
                    ("ECN notification point", port.ecn_np),
                    ("ECN reaction point", port.ecn_rp),
                ):
                    if prios is None:
                        problems.append(f"{field} not collected")
                    elif prio not in prios:
                        problems.append(f"{field} not enabled on priority {prio}")
        if not problems:
            return None
        if not problems:
            return None
        expected = {"lossless_dscps": sorted(lossless), "ecn": "ECT(0) or ECT(1)", "peer_device": end.peer_device,
                    "peer_interface": end.peer_port_name}  # fmt: skip
        actual = {"device": end.device, "interface": port.name, "roce_tos": port.roce_tos,
                  "ecn_np_priorities": list(port.ecn_np or ()), "ecn_rp_priorities": list(port.ecn_rp or ())}  # fmt: skip
        if all(p.endswith("not collected") for p in problems):
            return self.error(end.device, port.name, "; ".join(problems))
        return self.failed(
            end.device,
            port.name,
            f"{link_label(end)}: {'; '.join(problems)}",
            expected=expected,
            actual=actual,
        )


class CnpParams(LinkParams):
    """Parameters of host-cnp-fabric."""

    cnp_priority: int = Field(6, ge=0, le=7, description="the switches' strict-priority CNP class (6)")


class HostCnpFabricCheck(LinkCheck[CnpParams]):
    """The DSCP a host NIC stamps on its CNPs is one its leaf port maps to the strict CNP priority.

    DCQCN works only when congestion notifications overtake the congestion they report: the NIC's
    notification point stamps its CNPs with ``ecn/roce_np/cnp_dscp`` (48 by default) and the
    switches must put that DSCP into the strict-priority CNP class (6). A NIC sending CNPs with
    another DSCP than the fabric maps to that class has its CNPs queued behind bulk traffic (or in
    the lossless queue) and the senders react late. Compared per rail NIC with the leaf port at the
    other end of its link; reported at the host, where the setting lives.
    """

    id = "host-cnp-fabric"
    tags = ("operational",)  # the NIC's CNP DSCP is read from sysfs; rendered host configs do not set it
    severity = Severity.MAJOR

    @override
    def check_fabric(self, fabric: FabricContext) -> Iterable[Result]:
        graph = self.graph(fabric)
        passes: dict[str, list[str | None]] = {}
        strict = self.params.cnp_priority
        # one lookup table per distinct leaf DSCP map (the projection shares one tuple per map):
        # a dict built per rail NIC was most of this check's 0.4 s on 100k GPUs
        maps: dict[int, tuple[Any, dict[int, int]]] = {}
        for name in sorted(graph.ports):
            if fabric.devices[name].role != "host":
                continue
            ok = passes[name] = []
            missing: list[str] = []
            judged = 0
            for end in graph.ends.get(name, []):
                if end.status not in PAIRED or end.peer is None:
                    continue
                cnp = end.port.cnp_dscp
                judged += cnp is not None
                if cnp is None:
                    missing.append(end.port.name)
                    continue
                if end.peer.dscp is None:
                    yield self.error(name, end.port.name, "DSCP map not collected at the peer")
                    continue
                prio = _priority_of(end.peer.dscp, cnp, maps)
                if prio == strict:
                    ok.append(end.port.name)
                    continue
                mapped = sorted(d for d, p in end.peer.dscp if p == strict)
                yield self.failed(
                    name, end.port.name,
                    f"{link_label(end)}: the NIC sends CNPs with DSCP {cnp}; {end.peer_device} maps DSCP {cnp} to "
                    + (f"priority {prio}" if prio is not None else "no priority")
                    + f", not the strict CNP priority {strict} ({'DSCP ' + ', '.join(map(str, mapped)) if mapped else 'no DSCP'} is)",
                    expected={"cnp_dscp": mapped, "peer_device": end.peer_device, "peer_interface": end.peer_port_name},
                    actual={"device": name, "interface": end.port.name, "cnp_dscp": cnp, "peer_priority": prio},
                )  # fmt: skip
            yield from self._not_collected(fabric, name, missing, judged)
        yield from pass_blocks(self, passes)

    def _not_collected(
        self, fabric: FabricContext, name: str, missing: list[str], judged: int
    ) -> Iterator[Result]:
        """``nic.cnp_dscp`` absent: one result for the host when no link has it (``error`` if its collection
        is partial, else ``skipped``: not collected), else one error per such port with one message (issue 14).
        """
        if not missing:
            return
        if judged:
            for port in missing:
                yield self.error(name, port, "nic.cnp_dscp not collected (host sysfs read)")
        elif fabric.devices[name].status == "partial":
            yield self.error(name, None, "nic.cnp_dscp not collected (see the device's collection errors)")
        else:
            yield self.skipped(
                name, None, "nic.cnp_dscp (host sysfs read) not collected on this host: not judged"
            )


HOSTAPP_CHECKS = (HostTosFabricCheck, HostCnpFabricCheck)
