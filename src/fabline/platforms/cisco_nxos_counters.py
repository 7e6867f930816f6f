"""Cisco NX-OS per-class counters: queue drops and per-priority PFC pauses (issue 15 items 2 and 4).

Two show commands of the Nexus 9000 print what ``show interface`` does not (its ``Rx pause`` /
``Tx pause`` count every pause frame of the port, 802.3x and PFC alike, no priority):

- ``show interface priority-flow-control detail``: per port, the PFC frames received and sent on
  each priority (a ``Priority0`` ... ``Priority7`` table with an ``Rx`` and a ``Tx`` row) ->
  ``counters.pfc_rx_pause`` / ``pfc_tx_pause`` (``{"5": 150}``).
- ``show queuing interface``: per port (``Egress Queuing for Ethernet1/51``) one table per
  ``QOS GROUP N`` whose drop rows (``Dropped Pkts`` on older releases, ``WRED & Tail Drop Pkts``,
  ``WRED/AFD & Tail Drop Pkts`` and the watchdog's ``WD & Tail Drop Pkts`` on later ones) give the
  unicast drops of the group -> ``counters.queue_dropped`` (qos-group == priority, as the 8-queue
  templates tie them, :mod:`fabline.platforms.cisco_nxos_config`); and, under ``Ingress Queuing
  for ...``, the ``PFC Statistics`` table's ``TxCount``/``RxCount`` per PFC CoS -> the same
  ``pfc_tx_pause``/``pfc_rx_pause``.

Layouts: a Nexus 93180FX2 capture (``tests/samples/cisco_nxos/zartbot-n93180fx2-*``; filtered
with ``grep`` by its author, so the egress block there has no interface line) and the Nexus 9300
``| begin "QOS GROUP 3"`` capture; see ``docs/platforms/cisco_nxos.md``.
"""

from __future__ import annotations

import re
from typing import Any

from fabline.platforms.base import Fragment, ParseContext, text_parser
from fabline.platforms.cisco_nxos_names import canonical_name, kept
from fabline.platforms.toolkit import port_blocks, text_blocks

# --- show interface priority-flow-control detail --------------------------------------------

_PFC_PORT = re.compile(r"^(?P<name>(?:Ethernet|port-channel)\d\S*)\s*$", re.MULTILINE)
_PRIO_HEAD = re.compile(r"^\s*\|(?P<cells>(?:\s*Priority\d\s*\|){2,8})\s*$", re.MULTILINE)
_DIRECTION_ROW = re.compile(r"^\s*(?P<dir>Rx|Tx)\s*\|(?P<cells>.*?)\s*$", re.MULTILINE)


def _priority_row(head: str, row: str, ctx: ParseContext, port: str) -> dict[str, int]:
    """``{"N": count}`` of one Rx/Tx row under its ``PriorityN`` header cells."""
    prios = [int(c.strip()[len("Priority") :]) for c in head.split("|") if c.strip()]
    values = [c.strip() for c in row.split("|")]
    if len(values) != len(prios) or not all(v.isdigit() for v in values):
        raise ctx.reject(
            f"{port}: a row of {len(values)} cells under {len(prios)} priorities: {row.strip()!r}"
        )
    return {str(p): int(v) for p, v in zip(prios, values, strict=True)}


@text_parser(
    "NX-OS 'show interface priority-flow-control detail' text (per port: Priority0..7 table with Rx and Tx rows)",
    may_be_empty=True,
)
def parse_show_interface_pfc_detail(text: str, ctx: ParseContext) -> Fragment:
    """``show interface priority-flow-control detail``: per-priority PFC frames received and sent.

    Feeds ``counters.pfc_rx_pause`` / ``pfc_tx_pause`` (cumulative PFC frames per priority). A
    port block without the priority table (PFC never ran on it) is left out.
    """
    blocks = text_blocks(text, _PFC_PORT)
    if not blocks or "Priority" not in text:
        raise ctx.reject()
    interfaces: dict[str, Any] = {}
    for name, _, block in port_blocks(blocks, canonical_name, kept):
        prio = _PRIO_HEAD.search(block)
        if prio is None:
            continue
        counters: dict[str, dict[str, int]] = {}
        for m in _DIRECTION_ROW.finditer(block, prio.end()):
            key = "pfc_rx_pause" if m["dir"] == "Rx" else "pfc_tx_pause"
            counters[key] = _priority_row(prio["cells"], m["cells"], ctx, name)
        if counters:
            interfaces[name] = {"counters": counters}
    return {"interfaces": interfaces}


# --- show queuing interface -----------------------------------------------------------------

_QUEUING_HEAD = re.compile(r"^\s*(?P<dir>Egress|Ingress) Queuing for (?P<name>\S+)", re.MULTILINE)
_QOS_GROUP = re.compile(r"^\s*\|\s*(?:(?P<group>QOS GROUP (?P<n>\d))|(?P<other>[A-Z]+ QOS GROUP))\s*\|?\s*$")
_PFC_COS_ROW = re.compile(
    r"^\s*(?P<cos>[0-7])\s+(?:\d|-)\s+(?:Active|Inactive)\s+(?P<tx>\d{1,20})\s+(?:Active|Inactive)\s+(?P<rx>\d{1,20})\s*$"
)


def _drop_cells(line: str) -> int | None:
    """The unicast drop packets of a ``QOS GROUP`` table row, or None when the row is no drop row.

    The first number after a label holding ``Drop`` and ``Pkts`` (``Dropped Pkts``, ``WRED/AFD &
    Tail Drop Pkts``, ``WD & Tail Drop Pkts``): the ``Unicast`` column, the first after the label.

    Example:
        >>> _drop_cells("| WRED/AFD & Tail Drop Pkts |              12|               3|")
        12
        >>> _drop_cells("|        Tx Pkts |              50|   Dropped Pkts |               6|")
        6
        >>> _drop_cells("|                   Tx Byts |    203884632744|               0|") is None
        True
    """
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    for i, cell in enumerate(cells[:-1]):
        if "Drop" in cell and "Pkts" in cell and cells[i + 1].isdigit():
            return int(cells[i + 1])
    return None


def _queuing_port(block: str) -> dict[str, Any]:
    """The counters of one ``Egress``/``Ingress Queuing for`` block."""
    dropped: dict[str, int] = {}
    rx: dict[str, int] = {}
    tx: dict[str, int] = {}
    group: str | None = None
    for line in block.splitlines():
        if m := _QOS_GROUP.match(line):
            group = m["n"]  # CONTROL / SPAN QOS GROUP: no priority, not read
            continue
        if line.lstrip().startswith("+"):
            continue  # a table ruler
        if line.lstrip().startswith("|"):
            if group is not None and (drops := _drop_cells(line)) is not None:
                dropped[group] = dropped.get(group, 0) + drops
            continue
        group = None
        if m := _PFC_COS_ROW.match(line):
            tx[m["cos"]], rx[m["cos"]] = int(m["tx"]), int(m["rx"])
    counters: dict[str, Any] = {}
    if dropped:
        counters["queue_dropped"] = dropped
    if rx:
        counters["pfc_rx_pause"], counters["pfc_tx_pause"] = rx, tx
    return counters


@text_parser(
    "NX-OS 'show queuing interface' text ('Egress|Ingress Queuing for <interface>' blocks with QOS GROUP tables)",
    may_be_empty=True,
)
def parse_show_queuing_interface(text: str, ctx: ParseContext) -> Fragment:
    """``show queuing interface``: unicast drops per qos-group and PFC frames per CoS, per port.

    ``counters.queue_dropped`` sums a ``QOS GROUP N`` table's drop rows (tail/WRED/AFD drops and
    the PFC watchdog's drops) in the ``Unicast`` column (the lossless class is unicast);
    ``CONTROL`` and ``SPAN`` groups are not read. The ingress ``PFC Statistics`` table gives
    ``pfc_rx_pause``/``pfc_tx_pause`` per CoS. A ``QOS GROUP`` table before any ``Queuing for
    <interface>`` line (a filtered output) belongs to no port: a ParseError, not a guess.
    """
    blocks = text_blocks(text, _QUEUING_HEAD)
    first = blocks[0][0].start() if blocks else len(text)
    if re.search(r"QOS GROUP \d", text[:first]):
        raise ctx.reject(
            "a 'QOS GROUP' table before any 'Egress Queuing for <interface>' line (a filtered output?)"
        )
    if not blocks:
        raise ctx.reject()
    interfaces: dict[str, Any] = {}
    for name, _, block in port_blocks(blocks, canonical_name, kept):
        counters = _queuing_port(block)
        if counters:
            entry = interfaces.setdefault(name, {"counters": {}})
            entry["counters"].update(counters)
    return {"interfaces": interfaces}


__all__ = ["parse_show_interface_pfc_detail", "parse_show_queuing_interface"]
