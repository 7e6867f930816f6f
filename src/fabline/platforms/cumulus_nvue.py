"""Cumulus Linux NVUE tables (``nv show ...`` as text): the reader and the parsers of each view.

NVUE prints most ``nv show`` answers as a tree table: an indented attribute column, then
``operational`` and ``applied`` columns (sometimes ``pending`` or ``description`` too), then
optional titled sub-tables underlined with ``=``. :func:`read_tree_table` turns such an answer
into ``{("pfc", "pfc-priority"): Cell("3", "")}`` plus its sub-tables as row dicts. The vendor
semantics the parsers apply are in :mod:`fabline.platforms.cumulus`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, cast

from fabline.platforms.base import ParseContext, split_dashed_table, text_parser
from fabline.platforms.cumulus_values import fec_mode, flag, size_bytes, trust_fields
from fabline.platforms.toolkit import (
    DSCP,
    PCP,
    PRIORITY,
    TRAFFIC_CLASS,
    expand_ints,
    int_in,
    speed_gbps,
    uptime_seconds,
)
from fabline.state_types import Counters, Facts, Interface, Optics, Qos, StateBody

_DASHES = re.compile(r"^\s*-+(\s+-+)*\s*$")
_UNDERLINE = re.compile(r"^\s*=+\s*$")


@dataclass(frozen=True)
class Cell:
    """One attribute row of an NVUE tree table.

    Attributes:
        operational: The value the system runs with ('' when NVUE leaves it blank).
        applied: The configured value of the applied revision ('' when blank).
    """

    operational: str
    applied: str

    @property
    def value(self) -> str:
        """The operational value, else the applied one (NVUE leaves pure knobs like ``enable`` blank)."""
        return self.operational or self.applied


@dataclass(frozen=True)
class TreeTable:
    """An NVUE answer: the attribute tree and the titled sub-tables below it."""

    cells: dict[tuple[str, ...], Cell]
    sections: dict[str, list[dict[str, str]]]

    def get(self, *path: str) -> Cell | None:
        """The cell at an attribute path, e.g. ``get("pfc", "pfc-priority")``."""
        return self.cells.get(path)


def read_tree_table(text: str, ctx: ParseContext, expected: str) -> TreeTable:
    """Read an NVUE ``operational``/``applied`` tree table and its titled sub-tables.

    Column bounds come from the dash line; the column names come from the header words in
    order, because NVUE sometimes indents the header differently from the dashes.

    Raises:
        ParseError: No ``operational`` header with a dash line under it.

    Example:
        >>> from fabline.platforms.base import ParseContext
        >>> t = read_tree_table('''        operational  applied
        ... ------  -----------  -------
        ... pfc
        ...   mode  on           off
        ... ''', ParseContext("cumulus", "x"), "a table")
        >>> t.get("pfc", "mode")
        Cell(operational='on', applied='off')
    """
    lines = text.splitlines()
    start = None
    for i, line in enumerate(lines):
        if i and _DASHES.match(line) and "operational" in lines[i - 1].split():
            start = i
            break
    if start is None:
        raise ctx.fail(expected, "no 'operational' column header over a dash line")
    spans = [m.start() for m in re.finditer(r"-+", lines[start])]
    names = ["attribute", *lines[start - 1].split()][: len(spans)]
    bounds = [(spans[k], spans[k + 1] if k + 1 < len(spans) else None) for k in range(len(spans))]

    body_end = len(lines)
    for j in range(start + 1, len(lines) - 1):
        # '=' first: the underline regex runs only on a line that can be one (every line is tested).
        if "=" in lines[j + 1] and lines[j].strip() and _UNDERLINE.match(lines[j + 1]):
            body_end = j
            break

    # Only the 'operational' and 'applied' cells are kept: each is cut from its own column (the
    # last column of that name, as a row dict of every column would keep).
    wanted = {name: bounds[k] for k, name in enumerate(names) if name in ("operational", "applied")}
    operational, applied = wanted.get("operational"), wanted.get("applied")
    key_end = bounds[1][0] if len(bounds) > 1 else None
    cells: dict[tuple[str, ...], Cell] = {}
    indents: list[int] = []
    keys: list[str] = []
    for line in lines[start + 1 : body_end]:
        stripped = line.strip()
        if not stripped or stripped == "...":
            continue
        key_part = line[:key_end]
        key = key_part.strip()
        if not key:
            continue
        indent = len(key_part) - len(key_part.lstrip())
        while indents and indents[-1] >= indent:
            indents.pop()
            keys.pop()
        path = (*keys, key)
        indents.append(indent)
        keys.append(key)
        cells[path] = Cell(
            _cut(line, *operational) if operational is not None else "",
            _cut(line, *applied) if applied is not None else "",
        )

    sections: dict[str, list[dict[str, str]]] = {}
    j = body_end
    while j < len(lines) - 1:
        if "=" in lines[j + 1] and lines[j].strip() and _UNDERLINE.match(lines[j + 1]):
            title = lines[j].strip()
            k = j + 2
            while k < len(lines) - 1 and not (
                "=" in lines[k + 1] and lines[k].strip() and _UNDERLINE.match(lines[k + 1])
            ):
                k += 1
            if k == len(lines) - 1:
                k = len(lines)
            sections[title] = split_dashed_table("\n".join(lines[j + 2 : k]))
            j = k
        else:
            j += 1
    return TreeTable(cells, sections)


def _cut(line: str, a: int, b: int | None) -> str:
    return (line[a:b] if b is not None else line[a:]).strip()


def with_applied(fields: dict[str, Any], applied: dict[str, Any]) -> dict[str, Any]:
    """``fields`` with the ``applied`` sub-dict added when there is one (in place)."""
    if applied:
        fields["applied"] = applied
    return fields


def record(
    fields: dict[str, Any],
    applied: dict[str, Any],
    name: str,
    cell: Cell | None,
    convert: Any,
) -> None:
    """Set ``fields[name]`` from a cell, and ``applied[name]`` when the applied value differs."""
    if cell is None or not cell.value:
        return
    value = convert(cell.value)
    if value is None:
        return
    fields[name] = value
    if cell.operational and cell.applied:
        app = convert(cell.applied)
        if app != value:
            applied[name] = app if app is not None else cell.applied


# --- nv show interface <if> link ---------------------------------------------------------------


@text_parser("an NVUE link table (operational/applied columns with mtu, speed, fec)")
def parse_nv_show_interface_link(text: str, ctx: ParseContext) -> StateBody:
    """``nv show interface <if> link``: admin state, speed, FEC, autoneg, MTU (L2 frame).

    Example:
        >>> parse_nv_show_interface_link('''            operational  applied
        ... ----------  -----------  -------
        ... mtu         9216         9216
        ... fec         rs           auto
        ... ''', ParseContext("cumulus", "nv show interface swp1 link", {"interface": "swp1"}))
        {'interfaces': {'swp1': {'fec': 'rs', 'mtu': 9216, 'applied': {'fec': 'auto'}}}}
    """
    name = ctx.require_interface(ctx.expected)
    table = read_tree_table(text, ctx, ctx.expected)
    fields: dict[str, Any] = {}
    applied: dict[str, Any] = {}
    record(fields, applied, "admin_up", table.get("state"), flag)
    record(fields, applied, "oper_up", table.get("oper-status"), flag)
    record(fields, applied, "autoneg", table.get("auto-negotiate"), flag)
    record(fields, applied, "speed_gbps", table.get("speed"), speed_gbps)
    record(fields, applied, "fec", table.get("fec"), fec_mode)
    record(fields, applied, "mtu", table.get("mtu"), _int_or_none)
    if not set(fields) - {"admin_up"}:
        # A lone 'state' row is the PFC watchdog view (or another knob's), not the link.
        raise ctx.reject("none of speed, fec, mtu, auto-negotiate, oper-status found")
    return {"interfaces": {name: cast(Interface, with_applied(fields, applied))}}


def _int_or_none(text: str) -> int | None:
    text = text.strip()
    return int(text) if text.isdigit() and len(text) <= 20 else None


# --- nv show qos roce / nv show interface <if> qos roce status -----------------------------------


def _roce_fields(table: TreeTable) -> dict[str, Any]:
    """Interface-shaped QoS fields of a RoCE table (global profile or one port's status)."""
    out: dict[str, Any] = {}
    trust = table.get("trust", "trust-mode")
    if trust and trust.value:
        out.update(trust_fields(re.split(r"[,\s]+", trust.value)))
    dscp: dict[str, int] = {}
    pcp: dict[str, int] = {}
    for title, rows in table.sections.items():
        if "->SP" not in title:
            continue
        for row in rows:
            prio = int_in(row.get("switch-prio", ""), PRIORITY)
            if prio is None:
                continue
            for value in expand_ints(row.get("dscp", ""), DSCP):
                dscp[str(value)] = prio
            for value in expand_ints(row.get("pcp", ""), PCP):
                pcp[str(value)] = prio
    if dscp:
        out["dscp_to_priority"] = dict(sorted(dscp.items(), key=lambda kv: int(kv[0])))
    if pcp:
        out["pcp_to_priority"] = dict(sorted(pcp.items(), key=lambda kv: int(kv[0])))
    pfc = table.get("pfc", "pfc-priority")
    if pfc and pfc.value:
        out["pfc_priorities"] = sorted(set(expand_ints(pfc.value, PRIORITY)))
    for key, field in (("rx-enabled", "pfc_rx"), ("tx-enabled", "pfc_tx")):
        cell = table.get("pfc", key)
        if cell and flag(cell.value) is not None:
            out[field] = flag(cell.value)
    mode = table.get("congestion-control", "congestion-mode")
    tcs = table.get("congestion-control", "enabled-tc")
    if tcs and tcs.value:
        entry: dict[str, Any] = {}
        if mode and mode.value:
            entry["enabled"] = "ecn" in mode.value.lower()
        for key, field in (("min-threshold", "min_bytes"), ("max-threshold", "max_bytes")):
            cell = table.get("congestion-control", key)
            if cell and size_bytes(cell.value) is not None:
                entry[field] = size_bytes(cell.value)
        prob = table.get("congestion-control", "probability")
        if prob and (pct := _int_or_none(prob.value)) is not None:
            entry["probability_pct"] = pct
        out["ecn"] = {str(tc): dict(entry) for tc in sorted(set(expand_ints(tcs.value, TRAFFIC_CLASS)))}
    return out


def _roce_profile(table: TreeTable) -> dict[str, Any]:
    """``qos.roce``: profile state, mode, cable length, congestion mode, SP->TC and scheduling."""
    roce: dict[str, Any] = {}
    applied: dict[str, Any] = {}
    record(roce, applied, "enabled", table.get("enable") or table.get("state"), flag)
    record(roce, applied, "mode", table.get("mode"), lambda s: s.strip() or None)
    record(roce, applied, "cable_length_m", table.get("pfc", "cable-length"), _int_or_none)
    record(roce, applied, "congestion_mode", table.get("congestion-control", "congestion-mode"), str)
    tc_map: dict[str, int] = {}
    scheduler: dict[str, str] = {}
    for title, rows in table.sections.items():
        if "SP->TC" not in title:
            continue
        for row in rows:
            prio, tc = (
                int_in(row.get("switch-prio", ""), PRIORITY),
                int_in(row.get("traffic-class", ""), TRAFFIC_CLASS),
            )
            if prio is not None and tc is not None:
                tc_map[str(prio)] = tc
                if row.get("scheduler-weight"):
                    scheduler[str(tc)] = row["scheduler-weight"]
    if tc_map:
        roce["priority_to_tc"] = tc_map
    if scheduler:
        roce["tc_scheduler"] = dict(sorted(scheduler.items(), key=lambda kv: int(kv[0])))
    return with_applied(roce, applied)


@text_parser("the NVUE RoCE profile table (mode, pfc, congestion-control, trust)")
def parse_nv_show_qos_roce(text: str, ctx: ParseContext) -> StateBody:
    """``nv show qos roce``: the switch-wide RoCE profile.

    Feeds ``qos.roce`` (enabled, mode, priority_to_tc, tc_scheduler, ...), ``qos.buffer_mode``,
    ``qos.lossless_priorities`` and ``qos.port_defaults`` (trust, DSCP/PCP -> switch priority,
    PFC priorities, ECN per traffic class) that apply to every switch port.
    """
    table = read_tree_table(text, ctx, ctx.expected)
    if table.get("mode") is None:
        raise ctx.reject("no 'mode' row")
    if table.get("enable") is None and table.get("state") is None:
        # The per-port 'qos roce status' view has the same rows but no 'enable' ('state' from 5.15) knob.
        raise ctx.reject("no 'enable' or 'state' row (the per-port status view?)")
    roce = _roce_profile(table)
    qos: dict[str, Any] = {"roce": roce}
    defaults = _roce_fields(table)
    if roce.get("mode"):
        qos["buffer_mode"] = roce["mode"]
    lossless = roce.get("enabled", True) is not False and str(roce.get("mode", "")).startswith("lossless")
    if lossless and "pfc_priorities" in defaults:
        qos["lossless_priorities"] = list(defaults["pfc_priorities"])
    if defaults:
        qos["port_defaults"] = defaults
    return {"qos": cast(Qos, qos)}


@text_parser("the NVUE per-port RoCE status table (congestion-control, pfc, trust, mode)")
def parse_nv_show_interface_qos_roce_status(text: str, ctx: ParseContext) -> StateBody:
    """``nv show interface <if> qos roce status``: the RoCE settings one port actually runs with.

    Feeds the port's trust, dscp_to_priority/pcp_to_priority (only the RoCE and CNP rows NVUE
    lists), pfc_priorities, pfc_rx/pfc_tx, ecn and ``roce_mode``.
    """
    name = ctx.require_interface(ctx.expected)
    table = read_tree_table(text, ctx, ctx.expected)
    if table.get("enable") is not None:
        raise ctx.reject("an 'enable' row: this is the switch-wide 'nv show qos roce'")
    fields = _roce_fields(table)
    mode = table.get("mode")
    if mode and mode.value:
        fields["roce_mode"] = mode.value
    if not fields:
        raise ctx.reject("no pfc, trust or congestion-control rows")
    return {"interfaces": {name: cast(Interface, fields)}}


# --- nv show interface <if> qos roce counters ----------------------------------------------------


@text_parser("the NVUE per-port RoCE counter table (rx-stats, tx-stats)")
def parse_nv_show_interface_qos_roce_counters(text: str, ctx: ParseContext) -> StateBody:
    """``nv show interface <if> qos roce counters``: ECN marks, CNPs and RoCE PFC pauses of a port.

    NVUE counts PFC pauses for "RoCE traffic" without naming the priority, so they go to the
    added ``roce_pfc_rx_pause``/``roce_pfc_tx_pause`` counters rather than ``pfc_rx_pause``.
    """
    name = ctx.require_interface(ctx.expected)
    table = read_tree_table(text, ctx, ctx.expected)
    wanted = {
        ("tx-stats", "tx-ecn-stats", "ecn-marked-packets"): "ecn_marked",
        ("tx-stats", "tx-cnp-stats", "cnp-packets"): "cnp_sent",
        ("rx-stats", "rx-pfc-stats", "pause-packets"): "roce_pfc_rx_pause",
        ("tx-stats", "tx-pfc-stats", "pause-packets"): "roce_pfc_tx_pause",
        ("rx-stats", "rx-roce-stats", "no-buffer-discard"): "roce_rx_discards",
        ("tx-stats", "tx-roce-stats", "unicast-no-buffer-discard"): "roce_tx_discards",
    }
    counters: dict[str, int] = {}
    for path, field in wanted.items():
        cell = table.get(*path)
        if cell and (count := _int_or_none(cell.value)) is not None:
            counters[field] = count
    if not counters:
        raise ctx.reject("no ecn-marked-packets, cnp-packets or pause-packets rows")
    return {"interfaces": {name: {"counters": cast(Counters, counters)}}}


# --- nv show interface <if> qos pfc-watchdog -----------------------------------------------------


@text_parser("the NVUE per-port PFC watchdog table (a 'state' row, PFC WD Status per traffic class)")
def parse_nv_show_interface_qos_pfc_watchdog(text: str, ctx: ParseContext) -> StateBody:
    """``nv show interface <if> qos pfc-watchdog`` (CL 5.6+): watchdog state and deadlocks of a port.

    NVUE runs the PFC watchdog per port (``nv set interface <if> qos pfc-watchdog state``;
    documented default ``disable``). Feeds the added ``pfc_watchdog.enabled`` of the port (the
    ``state`` row) and ``pfc_watchdog.deadlock_count`` per traffic class from the ``PFC WD
    Status`` table, also as ``counters.pfcwd_storms_detected``; :func:`apply_port_defaults` derives the switch-wide ``qos.pfc_watchdog``.

    Example:
        >>> parse_nv_show_interface_qos_pfc_watchdog('''       operational  applied
        ... -----  -----------  -------
        ... state  enabled      enabled
        ... ''', ParseContext("cumulus", "x", {"interface": "swp1"}))
        {'interfaces': {'swp1': {'pfc_watchdog': {'enabled': True}}}}
    """
    name = ctx.require_interface(ctx.expected)
    table = read_tree_table(text, ctx, ctx.expected)
    state = table.get("state")
    if state is None or state.value.strip().lower() not in _WATCHDOG_WORDS:
        raise ctx.reject("no 'state' row with enabled/disabled")
    if any(table.get(row) for row in ("mtu", "speed", "fec", "auto-negotiate")):
        raise ctx.reject("mtu/speed/fec rows: this is the link view")
    watchdog: dict[str, Any] = {"enabled": flag(state.value)}
    applied = flag(state.applied) if state.operational and state.applied else None
    if applied is not None and applied != watchdog["enabled"]:
        watchdog["applied"] = {"enabled": applied}
    deadlocks: dict[str, int] = {}
    for title, rows in table.sections.items():
        if "PFC WD" not in title:
            continue
        for row in rows:
            tc, count = (
                int_in(row.get("traffic-class", ""), TRAFFIC_CLASS),
                _int_or_none(row.get("deadlock-count", "")),
            )
            if tc is not None and count is not None:
                deadlocks[str(tc)] = count
    body: dict[str, Any] = {"pfc_watchdog": watchdog}
    if deadlocks:
        watchdog["deadlock_count"] = deadlocks
        # A deadlock the watchdog detected is a PFC storm: the same counter the other platforms
        # feed, so pfc-storms-delta reads one field.
        body["counters"] = {"pfcwd_storms_detected": dict(deadlocks)}
    return {"interfaces": {name: cast(Interface, body)}}


#: The words NVUE prints for the watchdog knob (a link's ``state`` says up/down instead).
_WATCHDOG_WORDS = frozenset({"enabled", "disabled", "enable", "disable"})


# --- nv show interface <if> transceiver ----------------------------------------------------------

_POWER_KEY = re.compile(r"ch-(?P<lane>\d{1,2})-(?P<dir>rx|tx)-power")
#: The dBm half of ``0.8625 mW / -0.64 dBm``, anchored at the end: an unanchored search retried a
#: long digit run from every position (26 s on a 20,000-digit field).
_DBM = re.compile(r"(?P<value>[-+]?\d{1,4}(?:\.\d{1,6})?)\s*dBm\s*$")


@text_parser("the NVUE transceiver summary ('key : value' rows such as vendor-name, ch-1-rx-power)")
def parse_nv_show_interface_transceiver(text: str, ctx: ParseContext) -> StateBody:
    """``nv show interface <if> transceiver`` (CL 5.11+): the module of a port, condensed.

    Feeds ``optics.{vendor, part_number, serial, temperature_c, rx_power_dbm, tx_power_dbm}``
    (per lane, ``ch-N-rx-power`` in lane order, the dBm half of ``0.8625 mW / -0.64 dBm``) and
    the added ``optics.{identifier, status}``. A port without a module has only the status rows:
    it feeds ``optics.status`` and nothing else, so optics checks see no readings.

    Example:
        >>> parse_nv_show_interface_transceiver('''identifier     : QSFP28
        ... vendor-name    : Mellanox
        ... ch-1-rx-power  : 0.8625 mW / -0.64 dBm
        ... ''', ParseContext("cumulus", "x", {"interface": "swp1"}))
        {'interfaces': {'swp1': {'optics': {'identifier': 'QSFP28', 'vendor': 'Mellanox', 'rx_power_dbm': [-0.64]}}}}
    """
    name = ctx.require_interface(ctx.expected)
    rows: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        key = key.strip()
        if sep and key and " " not in key:
            rows[key] = value.strip()
    optics: dict[str, Any] = {}
    for key, field in (
        ("identifier", "identifier"),
        ("vendor-name", "vendor"),
        ("vendor-pn", "part_number"),
        ("vendor-sn", "serial"),
        ("status", "status"),
    ):
        if rows.get(key) and rows[key] != "N/A":
            optics[field] = rows[key]
    temp = re.match(r"([-+]?\d{1,4}(?:\.\d{1,6})?)\s*degrees C", rows.get("temperature", ""))
    if temp:
        optics["temperature_c"] = float(temp.group(1))
    lanes: dict[str, dict[int, float]] = {"rx": {}, "tx": {}}
    for key, value in rows.items():
        m = _POWER_KEY.fullmatch(key)
        dbm = _DBM.search(value[-40:]) if m else None
        if m and dbm:
            lanes[m["dir"]][int(m["lane"])] = float(dbm["value"])
    for direction, field in (("rx", "rx_power_dbm"), ("tx", "tx_power_dbm")):
        if lanes[direction]:
            optics[field] = [lanes[direction][k] for k in sorted(lanes[direction])]
    if not optics:
        raise ctx.reject("no identifier, vendor-name, status or ch-N-rx-power row")
    return {"interfaces": {name: {"optics": cast(Optics, optics)}}}


# --- nv show interface <if> link phy-detail -------------------------------------------------------

_CORR_BIN = re.compile(r"rs-num-corr-err-bin(\d{1,2})")
_BER = re.compile(r"\d{1,6}(?:\.\d{1,6})?[Ee][-+]?\d{1,3}|\d{1,6}\.\d{1,12}|0")


@text_parser("the NVUE per-port physical layer table (effective-errors, raw-ber, rs-num-corr-err-binN)")
def parse_nv_show_interface_link_phy_detail(text: str, ctx: ParseContext) -> StateBody:
    """``nv show interface <if> link phy-detail`` (CL 5.10+, not on Spectrum-1): FEC health of a port.

    - ``counters.fec_uncorrectable``: ``effective-errors``, the errors left after FEC (what the
      effective BER counts): a rise is frames lost. NVIDIA counts errors, not codewords; zero
      means zero either way.
    - ``counters.fec_corrected``: RS-FEC codewords that needed correction, the sum of the
      histogram's ``rs-num-corr-err-bin1`` and up (bin N: codewords with N corrected symbols;
      bin 0, the clean ones, is left out).
    - ``fec_pre_ber``: ``raw-ber``, the bit error rate before FEC (``1E-7``).

    Example:
        >>> parse_nv_show_interface_link_phy_detail('''                          operational
        ... -------------------------  -----------
        ... effective-errors           0
        ... raw-ber                    1E-7
        ... rs-num-corr-err-bin0       900
        ... rs-num-corr-err-bin1       12
        ... rs-num-corr-err-bin2       3
        ... ''', ParseContext("cumulus", "x", {"interface": "swp1"}))
        {'interfaces': {'swp1': {'counters': {'fec_uncorrectable': 0, 'fec_corrected': 15}, 'fec_pre_ber': 1e-07}}}
    """
    name = ctx.require_interface(ctx.expected)
    table = read_tree_table(text, ctx, ctx.expected)
    counters: dict[str, int] = {}
    body: dict[str, Any] = {}
    cell = table.get("effective-errors")
    if cell and (count := _int_or_none(cell.value)) is not None:
        counters["fec_uncorrectable"] = count
    bins = {
        int(m[1]): _int_or_none(c.value)
        for path, c in table.cells.items()
        if (m := _CORR_BIN.fullmatch(path[-1]))
    }
    if bins and all(v is not None for v in bins.values()):
        counters["fec_corrected"] = sum(v or 0 for k, v in bins.items() if k > 0)
    cell = table.get("raw-ber")
    if cell and _BER.fullmatch(cell.value):
        body["fec_pre_ber"] = float(cell.value)
    if not counters and not body:
        raise ctx.reject("no effective-errors, raw-ber or rs-num-corr-err-binN row")
    if counters:
        body = {"counters": counters, **body}
    return {"interfaces": {name: cast(Interface, body)}}


# --- nv show interface <if> link phy-diag ---------------------------------------------------------

#: The module's own fault and alarm flag rows of ``phy-diag`` (CMIS flags: non-zero = raised).
PHY_DIAG_FLAGS = (
    "temp-flags", "vcc-flags", "mod-fw-fault", "dp-fw-fault", "tx-fault", "tx-los", "tx-cdr-lol",
    "tx-ad-eq-fault", "rx-los", "rx-cdr-lol",
)  # fmt: skip
_HEX = re.compile(r"0x[0-9a-fA-F]{1,16}")


@text_parser(
    "the NVUE per-port physical layer diagnostics table (the module's flag rows: temp-flags, rx-los, ...)"
)
def parse_nv_show_interface_link_phy_diag(text: str, ctx: ParseContext) -> StateBody:
    """``nv show interface <if> link phy-diag`` (CL 5.10+, not on Spectrum-1): the module's flags.

    ``optics.active_flags``: each of the module's flag rows (:data:`PHY_DIAG_FLAGS`: temperature and
    supply-voltage alarm/warning flags, firmware faults, tx fault / LOS / CDR loss of lock, rx LOS /
    CDR loss of lock) that is not ``0x0``, as ``rx-los 0x1``; ``[]`` when all are clear.
    ``optics.firmware``: ``module-fw-version`` as NVUE prints it, one hex word (``0x2e820043``,
    lower case); NVIDIA does not document how it maps to the version strings other platforms
    print, so it is kept as printed and ``optics-firmware-skew`` compares it only with other
    Cumulus switches' modules of the same part number. ``0x0`` (no module answer) is not a version.

    Example:
        >>> parse_nv_show_interface_link_phy_diag('''                  operational
        ... ----------------  -----------
        ... module-fw-version 0x2E820043
        ... temp-flags        0x0
        ... rx-los            0x4
        ... ''', ParseContext("cumulus", "x", {"interface": "swp1"}))
        {'interfaces': {'swp1': {'optics': {'active_flags': ['rx-los 0x4'], 'firmware': '0x2e820043'}}}}
    """
    name = ctx.require_interface(ctx.expected)
    table = read_tree_table(text, ctx, ctx.expected)
    flags: list[str] = []
    seen = False
    for row in PHY_DIAG_FLAGS:
        cell = table.get(row)
        if cell is None or not _HEX.fullmatch(cell.value):
            continue
        seen = True
        if int(cell.value, 16):
            flags.append(f"{row} {cell.value}")
    if not seen:
        raise ctx.reject("no module flag row (temp-flags, rx-los, ...)")
    optics: Optics = {"active_flags": flags}
    version = table.get("module-fw-version")
    if version is not None and _HEX.fullmatch(version.value) and int(version.value, 16):
        optics["firmware"] = version.value.lower()
    return {"interfaces": {name: {"optics": optics}}}


# --- nv show system / decode-syseeprom -----------------------------------------------------------


def build_version(build: str) -> str | None:
    """The release number of an NVUE ``build`` string, as the other platforms' ``os_version``.

    Example:
        >>> build_version("Cumulus Linux 5.9.1"), build_version("Cumulus Linux 5.11.0-rc1")
        ('5.9.1', '5.11.0-rc1')
        >>> build_version("custom image")
        'custom image'
    """
    text = build.strip()
    if not text:
        return None
    m = re.search(r"\b\d+(?:\.\d+)+\S*", text)
    return m.group(0) if m else text


@text_parser("the NVUE system table (hostname, build)")
def parse_nv_show_system(text: str, ctx: ParseContext) -> StateBody:
    """``nv show system``: hostname, Cumulus Linux release (``os_version``), full build, uptime.

    ``os_version`` is the release number (``5.9.1``), as EOS, NX-OS and SONiC report theirs;
    the added ``facts.build`` keeps the words NVUE prints (``Cumulus Linux 5.9.1``).
    """
    table = read_tree_table(text, ctx, ctx.expected)
    facts: dict[str, Any] = {}
    applied: dict[str, Any] = {}
    record(facts, applied, "hostname", table.get("hostname"), lambda s: s.strip() or None)
    record(facts, applied, "os_version", table.get("build"), build_version)
    record(facts, applied, "build", table.get("build"), lambda s: s.strip() or None)
    record(facts, applied, "uptime_s", table.get("uptime"), uptime_seconds)
    if "hostname" not in facts and "os_version" not in facts:
        raise ctx.reject("no hostname or build row")
    return {"facts": cast(Facts, with_applied(facts, applied))}
