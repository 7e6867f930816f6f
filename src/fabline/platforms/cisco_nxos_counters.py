"""Cisco NX-OS per-class counters: queue drops, per-priority PFC pauses, PFC watchdog storms (issue 15).

Three show commands of the Nexus 9000 print what ``show interface`` does not (its ``Rx pause`` /
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
- ``show queuing pfc-queue detail | json``: the PFC watchdog's shutdowns and restores per port and
  qos-group -> ``counters.pfcwd_storms_detected`` / ``pfcwd_storms_restored`` (keys from Cisco's
  show-command reference; no capture, see :func:`parse_show_queuing_pfc_queue_json`).

Layouts: a Nexus 93180FX2 capture (``tests/samples/cisco_nxos/zartbot-n93180fx2-*``; filtered
with ``grep`` by its author, so the egress block there has no interface line) and the Nexus 9300
``| begin "QOS GROUP 3"`` capture; see ``docs/platforms/cisco_nxos.md``.
"""

from __future__ import annotations

import re
from typing import Any

from fabline.platforms.base import ParseContext, json_parser, text_parser
from fabline.platforms.cisco_nxos_names import canonical_name, kept
from fabline.platforms.toolkit import nxapi_rows, port_blocks, storm_entry, text_blocks
from fabline.state_types import StateBody

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
def parse_show_interface_pfc_detail(text: str, ctx: ParseContext) -> StateBody:
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


#: The first character of a PFC statistics row (its CoS).
_COS_DIGITS = frozenset("01234567")


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
    # Each test runs only on a line that can pass it (the substring or first character each
    # pattern needs): a port block is mostly table rows none of them matches.
    for line in block.splitlines():
        head = line.lstrip()[:1]
        if head == "|":
            if "QOS GROUP" in line and (m := _QOS_GROUP.match(line)):
                group = m["n"]  # CONTROL / SPAN QOS GROUP: no priority, not read
            elif group is not None and "Drop" in line and (drops := _drop_cells(line)) is not None:
                dropped[group] = dropped.get(group, 0) + drops
            continue
        if head == "+":
            continue  # a table ruler
        group = None
        if head in _COS_DIGITS and (m := _PFC_COS_ROW.match(line)):
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
def parse_show_queuing_interface(text: str, ctx: ParseContext) -> StateBody:
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


# --- show queuing pfc-queue detail | json -----------------------------------------------------

_IF_NAME = re.compile(r"\s*((?:Ethernet|Eth)\d\S*)")


def _wd_count(value: Any, ctx: ParseContext, where: str) -> int | None:
    """A watchdog counter: NX-API prints counts as numbers or digit strings; absent is None."""
    if value is None:
        return None
    if type(value) is int and value >= 0:
        return value
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) <= 20:
        return int(value.strip())
    raise ctx.reject(f"{where}: {value!r} is not a count")


@json_parser(
    "NX-OS 'show queuing pfc-queue detail | json' (TABLE_queuing_interface rows with TABLE_qosgrp_stats)",
    may_be_empty=True,
)
def parse_show_queuing_pfc_queue_json(doc: Any, ctx: ParseContext) -> StateBody:
    """``show queuing pfc-queue detail | json``: PFC watchdog storms per port and qos-group.

    The keys are the NX-API ones Cisco's Nexus 9000 show-command reference (9.3(x), ``show queuing
    pfc-queue``) documents, under ``TABLE_module``/``ROW_module`` as a public NX-API poller reads
    them from a live switch (``docs/platforms/cisco_nxos.md``; no device capture was found): per
    ``ROW_queuing_interface`` the port (``if_name_str``, which starts with the interface name),
    per ``ROW_qosgrp_stats`` the qos-group (``eq-qosgrp``) and its stat rows
    (``ROW_qosgrp_stats_entry``) with ``q-shutdown`` (the watchdog shut the stuck queue: a storm)
    -> ``counters.pfcwd_storms_detected`` and ``q-restored`` -> ``pfcwd_storms_restored``, keyed by
    the qos-group (== priority under the 8-queue templates). The stat rows' ``q-stat-type`` words
    are not documented: the largest count of the rows (the cumulative one) is kept. The output
    marks ``qos.pfc_watchdog.stats_collected``, so a port not listed gets no storm
    (:func:`~fabline.platforms.toolkit.fill_storm_counters`).
    """
    if not isinstance(doc, dict):
        raise ctx.reject()
    modules = nxapi_rows(doc.get("TABLE_module"), "ROW_module") if "TABLE_module" in doc else [doc]
    if not any("TABLE_queuing_interface" in m or any(k.startswith("glb-wd") for k in m) for m in modules):
        raise ctx.reject("no 'TABLE_queuing_interface' and no 'glb-wd-*' field")
    interfaces: dict[str, Any] = {}
    for module in modules:
        for row in nxapi_rows(module.get("TABLE_queuing_interface"), "ROW_queuing_interface"):
            m = _IF_NAME.match(str(row.get("if_name_str", "")))
            if not m:
                raise ctx.reject(
                    f"an interface row whose 'if_name_str' names no port: {row.get('if_name_str')!r}"
                )
            name = canonical_name(m[1])
            if not kept(name):
                continue
            counters: dict[str, dict[str, int]] = {}
            for group in nxapi_rows(row.get("TABLE_qosgrp_stats"), "ROW_qosgrp_stats"):
                qosgrp = group.get("eq-qosgrp")
                key = str(qosgrp).strip() if qosgrp is not None else ""
                if not (key.isdigit() and int(key) <= 7):
                    raise ctx.reject(f"{name}: qos-group {qosgrp!r} is not 0-7")
                for field, state_key in (
                    ("q-shutdown", "pfcwd_storms_detected"),
                    ("q-restored", "pfcwd_storms_restored"),
                ):
                    values = [
                        v
                        for entry in nxapi_rows(
                            group.get("TABLE_qosgrp_stats_entry"), "ROW_qosgrp_stats_entry"
                        )
                        if (v := _wd_count(entry.get(field), ctx, f"{name} qos-group {key} {field}"))
                        is not None
                    ]
                    if values:
                        counters.setdefault(state_key, {})[key] = max(values)
            if counters:
                interfaces[name] = storm_entry(counters)
    return {"interfaces": interfaces, "qos": {"pfc_watchdog": {"stats_collected": True}}}


__all__ = [
    "parse_show_interface_pfc_detail",
    "parse_show_queuing_interface",
    "parse_show_queuing_pfc_queue_json",
]
