"""The parse helpers every platform shares: numbers, lists, tables, names, LLDP entries.

One home per job (``docs/architecture.md``): a parser that needs a speed in Gb/s, an uptime, a
bounded integer list, a dash-underlined table, a MAC test or an ``lldp`` object takes it from
here, so every platform rounds, bounds and decides the same way. The simulator's renderers use
:func:`compress_ints` to print the lists these parsers read back.

Everything here is bounded: an integer list is expanded only inside its domain (DSCP 0-63,
priority 0-7, ...), so one hostile line cannot cost gigabytes; values outside it raise
:class:`ValueProblem`, which the parse dispatcher reports as a ``ParseError`` naming the command.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from fabline.state_types import Lldp, LldpNeighbor


class ValueProblem(ValueError):
    """A value in device output is outside what the field can hold (a range beyond its domain).

    Raised by the helpers here; the dispatcher (:func:`fabline.platforms.dispatch.run_parser`) turns
    it into the command's ``ParseError``. :func:`on_line` prefixes the offending line.
    """


@contextmanager
def on_line(line: str) -> Iterator[None]:
    """Name the line a :class:`ValueProblem` comes from (``line 'qos map ...': ...``).

    Example:
        >>> try:
        ...     with on_line("qos map dscp 0-99 to traffic-class 3"):
        ...         expand_ints("0-99", DSCP)
        ... except ValueProblem as exc:
        ...     print(exc)
        line 'qos map dscp 0-99 to traffic-class 3': DSCP 99 is outside 0-63
    """
    try:
        yield
    except ValueProblem as exc:
        raise ValueProblem(f"line {clip(line.strip())!r}: {exc}") from None


def clip(text: str, limit: int = 80) -> str:
    """A device string cut for an error message (hostile output can be megabytes long).

    Example:
        >>> clip("x" * 100, 10)
        'xxxxxxxxx…'
    """
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- integer lists ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Domain:
    """The values an integer list of one kind may hold (inclusive bounds)."""

    name: str
    low: int
    high: int


DSCP = Domain("DSCP", 0, 63)
PRIORITY = Domain("priority", 0, 7)
TRAFFIC_CLASS = Domain("traffic class", 0, 7)
QUEUE = Domain("queue", 0, 7)
PCP = Domain("PCP", 0, 7)
#: Port (and breakout lane) numbers: the largest switches have 512 ports; names beyond this are
#: not a device's ports but a hostile or corrupted range.
PORT_NUMBER = Domain("port number", 0, 4095)

_INT_TOKEN = re.compile(r"\d{1,9}(?:\s*-\s*\d{1,9})?|\S")


def expand_ints(spec: str, domain: Domain) -> list[int]:
    """Integers of a list such as ``3,4``, ``3-5``, ``8 9 10``, ``[3, 4]``, in order, inside ``domain``.

    Empty for ``''``, ``-`` and ``N/A``. A value or range end outside the domain, or a word that is
    not a number, raises :class:`ValueProblem` before anything is expanded.

    Example:
        >>> expand_ints("8-10,12 14", DSCP), expand_ints("[3, 4]", PRIORITY), expand_ints("-", PRIORITY)
        ([8, 9, 10, 12, 14], [3, 4], [])
        >>> expand_ints("3-4294967295", PRIORITY)
        Traceback (most recent call last):
        ...
        fabline.platforms.toolkit.ValueProblem: priority 4294967295 is outside 0-7
    """
    text = spec.strip().strip("[]")
    if text in ("", "-", "N/A", "NA"):
        return []
    out: list[int] = []
    for token in re.split(r"[\s,]+", text):
        if not token:
            continue
        low, sep, high = token.partition("-")
        if not low.isdigit() or (sep and not high.isdigit()):
            raise ValueProblem(f"{clip(token)!r} is not a {domain.name} number or range")
        first = _within(low, domain)
        last = _within(high, domain) if sep else first
        if last < first:
            raise ValueProblem(f"{domain.name} range {clip(token)!r} runs backwards")
        out.extend(range(first, last + 1))
    return out


def _within(digits: str, domain: Domain) -> int:
    # Compare lengths first: int() of a 5,000-digit string is itself an error in Python 3.11+.
    if len(digits) > len(str(domain.high)) or not domain.low <= int(digits) <= domain.high:
        raise ValueProblem(f"{domain.name} {clip(digits, 24)} is outside {domain.low}-{domain.high}")
    return int(digits)


def int_in(value: Any, domain: Domain) -> int | None:
    """An integer cell inside ``domain``; None when it is not a plain number (``N/A``).

    Raises:
        ValueProblem: A number outside the domain.

    Example:
        >>> int_in("3", PRIORITY), int_in("x", PRIORITY)
        (3, None)
    """
    text = str(value).strip() if not isinstance(value, int) or isinstance(value, bool) else str(value)
    if not text.isdigit():
        return None
    return _within(text, domain)


def compress_ints(values: Sequence[int] | set[int]) -> str:
    """The shortest comma list of values with runs as ranges (the form the CLIs print).

    Example:
        >>> compress_ints([3, 4, 5, 7, 0]), compress_ints([3]), compress_ints([])
        ('0,3-5,7', '3', '')
    """
    out: list[str] = []
    run: list[int] = []
    for v in sorted(set(values)):
        if run and v == run[-1] + 1:
            run.append(v)
            continue
        if run:
            out.append(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}")
        run = [v]
    if run:
        out.append(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}")
    return ",".join(out)


# --- speeds and uptimes -------------------------------------------------------------------------

_SPEED_UNITS = {"k": 1e-6, "m": 1e-3, "g": 1.0, "t": 1000.0}
_SPEED = re.compile(r"(?:a-)?(\d{1,7}(?:\.\d{1,6})?)\s*([kmgt])?(?:b|bps|b/s)?", re.IGNORECASE)


def gbps(value: float) -> int | float:
    """A speed in Gb/s as the state stores it: an int when whole, else rounded to 6 decimals.

    Example:
        >>> gbps(400.0), gbps(0.1), gbps(2.5), gbps(1000 / 1000)
        (400, 0.1, 2.5, 1)
    """
    rounded = round(value, 6)
    return int(rounded) if rounded.is_integer() else rounded


def mbps_to_gbps(mbps: float) -> int | float:
    """Gb/s of a speed in Mb/s (CONFIG_DB, NX-OS ``speed 100000``, ethtool ``100000Mb/s``).

    Example:
        >>> mbps_to_gbps(100000), mbps_to_gbps(100)
        (100, 0.1)
    """
    return gbps(mbps / 1000)


def speed_gbps(token: str, default_unit: str | None = None) -> int | float | None:
    """Gb/s of a speed as CLIs print it: ``400G``, ``100M``, ``a-40G``, ``100Gb/s``, ``1.6T``.

    ``default_unit`` (``M``, ``G``) reads a bare number (``1000`` on NX-OS is Mb/s); without it
    a bare number is not a speed. None for ``auto``, ``N/A`` and anything else.

    Example:
        >>> speed_gbps("400G"), speed_gbps("100M"), speed_gbps("a-40G"), speed_gbps("auto")
        (400, 0.1, 40, None)
        >>> speed_gbps("1000", default_unit="M"), speed_gbps("25Gb/s"), speed_gbps("1000")
        (1, 25, None)
    """
    m = _SPEED.fullmatch(token.strip())
    if not m:
        return None
    unit = (m.group(2) or default_unit or "").lower()
    if unit not in _SPEED_UNITS:
        return None
    return gbps(float(m.group(1)) * _SPEED_UNITS[unit])


_UPTIME_UNIT = re.compile(r"(\d{1,9})\s*(week|day|hour|minute|min|second|sec)s?(?:\(s\))?\b", re.IGNORECASE)
_UPTIME_CLOCK = re.compile(r"(?<![\d:])(\d{1,6}):(\d\d)(?::(\d\d))?(?![\d:])")
_UNIT_SECONDS = {"week": 604800, "day": 86400, "hour": 3600, "minute": 60, "min": 60, "second": 1, "sec": 1}


def uptime_seconds(text: str) -> int | None:
    """Seconds of an uptime as any of the platforms print it; None when there is none.

    Unit words (``3 weeks, 0 days, 20 hours and 45 minutes``; NX-OS ``5 hour(s)``; ``3 min``) add
    up; a clock (``18:40:31``, ``17:32`` as hours:minutes) adds its time.

    Example:
        >>> uptime_seconds("3 days, 18:40:31"), uptime_seconds("62 days, 17:32"), uptime_seconds("3 min")
        (326431, 5419920, 180)
        >>> uptime_seconds("2 days, 15 hours and 56 minutes"), uptime_seconds("0 day(s), 0 hour(s), 10 minute(s)")
        (230160, 600)
        >>> uptime_seconds("x")
    """
    text = text[:200]
    found = False
    total = 0
    for n, unit in _UPTIME_UNIT.findall(text):
        total += int(n) * _UNIT_SECONDS[unit.lower()]
        found = True
    clock = _UPTIME_CLOCK.search(text)
    if clock:
        h, m, s = clock.groups()
        total += int(h) * 3600 + int(m) * 60 + int(s or 0)
        found = True
    return total if found else None


def text_field(value: Any) -> str | None:
    """A JSON value that must be a string (or absent): the string, None for null/''.

    Raises:
        ValueProblem: Any other JSON type (a number or an object where a name belongs).

    Example:
        >>> text_field("leaf1"), text_field(None), text_field("")
        ('leaf1', None, None)
    """
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ValueProblem(f"{type(value).__name__} {clip(str(value), 40)!r} where a string belongs")
    return value


# --- names and addresses ------------------------------------------------------------------------

#: A MAC address as LLDP and the CLIs print it: ``08:00:27:4f:33:2d``, ``08-00-...``, ``0800.274f.332d``.
MAC_RX = re.compile(r"(?:[0-9a-f]{4}\.[0-9a-f]{4}\.[0-9a-f]{4}|(?:[0-9a-f]{2}[:-]){5}[0-9a-f]{2})", re.I)


def is_mac(value: str) -> bool:
    """Whether a value is a MAC address (any of the three spellings).

    Example:
        >>> is_mac("0800.274f.332d"), is_mac("08:00:27:4F:33:2D"), is_mac("Ethernet1")
        (True, True, False)
    """
    return bool(MAC_RX.fullmatch(value.strip()))


def expand_short_name(name: str, prefixes: Sequence[tuple[str, str]]) -> str:
    """A vendor's full interface name from a short one, given (short regex, full name) prefixes.

    The short pattern must match at the start and be followed by the number (``Et1/1``,
    ``eth1/1``, ``Po12``); a name already full, or of no listed kind, is returned unchanged.

    Example:
        >>> expand_short_name("Eth1/1", [(r"eth(?:ernet)?", "Ethernet")])
        'Ethernet1/1'
        >>> expand_short_name("loopback0", [(r"eth(?:ernet)?", "Ethernet")])
        'loopback0'
    """
    for short, full in prefixes:
        m = re.match(rf"(?:{short})(\d.*)", name, re.IGNORECASE)
        if m:
            return full + m.group(1)
    return name


def search_lines(rx: re.Pattern[str], text: str, needle: str) -> re.Match[str] | None:
    """``rx.search(text)`` for a pattern that matches within one line and never without ``needle``.

    Only the lines holding ``needle`` are searched (``str.find`` in C), in order. A pattern that
    starts with ``^\\s*`` or a digit run is tried at every position of a text; on a 1.5 KB
    ``show interface`` block four such searches cost more than the rest of the parser. The
    groups are those of the first line that matches (a ``^\\s*`` match may start on a blank line
    before it in ``rx.search``: its groups are the same).

    Example:
        >>> rx = re.compile(r"^\\s*(\\d{1,20}) Rx pause\\b", re.MULTILINE)
        >>> search_lines(rx, "  5 Rx unicast\\n  12 Rx pause frames\\n", " Rx pause")[1]
        '12'
        >>> search_lines(rx, "  x Rx pause\\n", " Rx pause") is None
        True
    """
    return next(_matches_on_lines(rx, text, needle), None)


# --- LLDP ---------------------------------------------------------------------------------------


def text_blocks(
    text: str, head: re.Pattern[str] | str, needle: str | None = None
) -> list[tuple[re.Match[str], str]]:
    """Split text into blocks, each starting at a match of ``head`` (``re.MULTILINE`` for ``str``).

    Returns (head match, the text after it up to the next head) pairs; empty when no head matches.
    With ``needle`` (words every head line holds), ``head`` is tried only on the lines holding it,
    as :func:`search_lines` does: a ``^``-anchored head scanned over a 250 KB output costs more
    than the parser's work on its blocks. A head then ends at its line's end.

    Example:
        >>> [(m[1], b.strip()) for m, b in text_blocks("Et1 is up\\n mtu 9214\\nEt2 is up\\n", r"^(\\S+) is up")]
        [('Et1', 'mtu 9214'), ('Et2', '')]
        >>> [(m[1], b.strip()) for m, b in text_blocks("Et1 is up\\n mtu 9214\\nEt2 is up\\n", r"^(\\S+) is up", " is up")]
        [('Et1', 'mtu 9214'), ('Et2', '')]
        >>> text_blocks("no heads here", r"^(\\S+) is up")
        []
    """
    rx = re.compile(head, re.MULTILINE) if isinstance(head, str) else head
    heads = list(rx.finditer(text) if needle is None else _matches_on_lines(rx, text, needle))
    ends = [h.start() for h in heads[1:]] + [len(text)]
    # With no head, ends is [len(text)] and zip yields nothing: no blocks.
    return [(h, text[h.end() : end]) for h, end in zip(heads, ends, strict=False)]


def _matches_on_lines(rx: re.Pattern[str], text: str, needle: str) -> Iterator[re.Match[str]]:
    """The first match of ``rx`` on each line holding ``needle`` (found by ``str.find``), in order."""
    start = 0
    while (i := text.find(needle, start)) >= 0:
        first = text.rfind("\n", 0, i) + 1
        end = text.find("\n", i)
        if end < 0:
            end = len(text)
        if m := rx.search(text, first, end):
            yield m
        start = end + 1


def port_blocks(
    blocks: Iterable[tuple[re.Match[str], str]],
    canonical_name: Callable[[str], str],
    kept: Callable[[str], bool],
    group: int | str = "name",
) -> Iterator[tuple[str, re.Match[str], str]]:
    """The per-port blocks the state keeps: (canonical name, head match, block text).

    ``blocks`` are :func:`text_blocks` pairs whose head names the port in ``group``; the name is
    made canonical with the platform's ``canonical_name`` and the block left out unless its
    ``kept`` says the state holds such an interface (loopbacks, sub-interfaces and VLANs are not).

    Example:
        >>> blocks = text_blocks("Et1 is up\\n mtu 9214\\nLo0 is up\\n", r"^(?P<name>\\S+) is up")
        >>> [(name, b.strip()) for name, _, b in port_blocks(blocks, lambda n: n.replace("Et", "Ethernet"),
        ...                                                   lambda n: n.startswith("Ethernet"))]
        [('Ethernet1', 'mtu 9214')]
    """
    for head, block in blocks:
        name = canonical_name(head[group])
        if kept(name):
            yield name, head, block


def lldp_entry(
    device: str | None,
    port_id: str | None,
    port_description: str | None = None,
    chassis_id: str | None = None,
    port_id_is_mac: bool = False,
) -> Lldp:
    """The state's ``lldp`` object, by the rule of ``docs/state-schema.md``.

    ``port`` is the neighbour's port id, unless that names no port: a MAC address (or an id the
    device types as ``mac``) or no id at all, when the port description, if any, takes its place.
    ``port_id`` keeps a replaced id; ``port_description`` and ``chassis_id`` are kept as given.

    Example:
        >>> lldp_entry("spine1", "Ethernet0", "to-leaf1")
        {'device': 'spine1', 'port': 'Ethernet0', 'port_description': 'to-leaf1'}
        >>> lldp_entry("gpu1", "08:c0:eb:11:22:33", "eth2")
        {'device': 'gpu1', 'port': 'eth2', 'port_id': '08:c0:eb:11:22:33', 'port_description': 'eth2'}
        >>> lldp_entry("gpu1", "08:c0:eb:11:22:33")
        {'device': 'gpu1', 'port': '08:c0:eb:11:22:33'}
        >>> lldp_entry(None, None, "eth2")
        {'port': 'eth2', 'port_description': 'eth2'}
    """
    entry: Lldp = {}
    if device:
        entry["device"] = device
    names_no_port = not port_id or port_id_is_mac or is_mac(port_id)
    if port_description and names_no_port:
        entry["port"] = port_description
        if port_id:
            entry["port_id"] = port_id
    elif port_id:
        entry["port"] = port_id
    if port_description:
        entry["port_description"] = port_description
    if chassis_id:
        entry["chassis_id"] = chassis_id
    return entry


def add_neighbor(body: dict[str, Any], entry: LldpNeighbor) -> None:
    """Put an LLDP neighbour on a port: the first is ``lldp``, more go to ``lldp.other_neighbors``.

    Example:
        >>> port = {}
        >>> add_neighbor(port, {"device": "a"}); add_neighbor(port, {"device": "b"}); port
        {'lldp': {'device': 'a', 'other_neighbors': [{'device': 'b'}]}}
    """
    if "lldp" not in body:
        body["lldp"] = entry
    else:
        body["lldp"].setdefault("other_neighbors", []).append(entry)


# --- dash-underlined tables ---------------------------------------------------------------------

_TOKEN = re.compile(r"\S+")
DASHES = re.compile(r"\s*-+(?:\s+-+)*\s*")
#: A header underline has a dash run per column; a single long run is a footer rule.
_UNDERLINE = re.compile(r"\s*-+(?:\s+-+)+\s*")
_DOC_PLACEHOLDER = re.compile(r"\s*(?:\.\.\.|<[^>]*>)\s*")
#: Multi-ASIC output heads each namespace's table with this line (sonic-utilities multi_asic).
_NAMESPACE = re.compile(r"\s*Namespace\s+\S+\s*")


@dataclass(frozen=True)
class Table:
    """One dash-underlined table: its column headers and rows (cells keyed by header)."""

    headers: tuple[str, ...]
    rows: tuple[dict[str, str], ...]


def _assign(line: str, spans: list[tuple[int, int]]) -> list[str]:
    """Cells of a line: each whitespace-separated token goes to the column it overlaps most.

    The score ``min(end, b) - max(start, a)`` is the overlap, or minus the gap when the token
    misses the column; along the (ordered, disjoint) columns it rises to one peak, and tokens
    come left to right, so one forward-moving pointer finds each token's column.

    Example:
        >>> _assign(" Ethernet12   0", [(1, 12), (14, 16)])
        ['Ethernet12', '0']
    """
    cells: list[list[str]] = [[] for _ in spans]
    last = len(spans) - 1
    k = 0
    a, b = spans[0]
    # min()/max() inlined: this runs for every token of every table row a collection reads.
    for m in _TOKEN.finditer(line):
        start, end = m.span()
        score = (end if end < b else b) - (start if start > a else a)
        while k < last:
            a2, b2 = spans[k + 1]
            nxt = (end if end < b2 else b2) - (start if start > a2 else a2)
            if nxt <= score:
                break
            k, score, a, b = k + 1, nxt, a2, b2
        cells[k].append(m.group())
    return [" ".join(c) for c in cells]


def _row_reader(spans: list[tuple[int, int]]) -> Callable[[str], list[str]]:
    """The cells of a table's rows, by :func:`_assign`'s rule, with a fast path per table.

    When no token touches the gaps between the dash runs (nearly every row), each token lies over
    (or beyond the outer end of) one run, and cutting the line at the runs' ends gives the same
    cells in a few C calls.

    Example:
        >>> read = _row_reader([(1, 12), (14, 16)])
        >>> read(" Ethernet12   0"), read(" Ethernet1 x-y  0")
        (['Ethernet12', '0'], ['Ethernet1 x-y', '0'])
    """
    gaps = [(spans[i][1], spans[i + 1][0]) for i in range(len(spans) - 1)]
    starts = [0] + [end for _, end in spans[:-1]]
    ends = starts[1:]

    def read(line: str) -> list[str]:
        for end, nxt in gaps:
            if line[end:nxt].strip():
                return _assign(line, spans)
        return [" ".join(line[a:b].split()) for a, b in zip(starts, [*ends, len(line)], strict=True)]

    return read


def dash_tables(lines: list[str]) -> list[Table]:
    """Every dash-underlined table in the lines, in order (the one reader of such tables).

    A header is underlined by one dash run per column (so at least two). Cells are assigned by
    overlap with the dash runs, since tabulate right-aligns and a wide value overhangs its run. A
    table ends at a dash-only footer line, a multi-ASIC ``Namespace asicN`` line, the next table's
    header or the end; blank lines inside a table are skipped (``show pfc counters --history``
    groups rows with them), and so are documentation placeholders (``...``, ``<continues>``).

    Example:
        >>> t = dash_tables(['  Port Rx    PFC0', '---------  ------', 'Ethernet0   1,200'])
        >>> t[0].headers, t[0].rows
        (('Port Rx', 'PFC0'), ({'Port Rx': 'Ethernet0', 'PFC0': '1,200'},))
    """
    tables: list[Table] = []
    i = 1
    while i < len(lines):
        if not (
            "-" in lines[i]
            and _UNDERLINE.fullmatch(lines[i])
            and lines[i - 1].strip()
            and not DASHES.fullmatch(lines[i - 1])
        ):
            i += 1
            continue
        spans = [m.span() for m in re.finditer(r"-+", lines[i])]
        headers = tuple(_assign(lines[i - 1], spans))
        read = _row_reader(spans)
        rows: list[dict[str, str]] = []
        j = i + 1
        # Each pattern needs a telltale substring: a row is tested only where it has one.
        while j < len(lines):
            line = lines[j]
            if ("-" in line and DASHES.fullmatch(line)) or (
                "Namespace" in line and _NAMESPACE.fullmatch(line)
            ):
                break
            blank = not line.strip()
            if (
                j + 1 < len(lines)
                and not blank
                and "-" in lines[j + 1]
                and _UNDERLINE.fullmatch(lines[j + 1])
            ):
                break  # the next table's header
            if not blank and not (("..." in line or "<" in line) and _DOC_PLACEHOLDER.fullmatch(line)):
                rows.append(dict(zip(headers, read(line), strict=True)))
            j += 1
        tables.append(Table(headers, tuple(rows)))
        i = j + 1 if j < len(lines) and DASHES.fullmatch(lines[j]) else j
    return tables


#: Where a storm-counter parser says it read the switch's watchdog counters (``qos.pfc_watchdog``).
STORMS_READ: dict[str, Any] = {"qos": {"pfc_watchdog": {"stats_collected": True}}}


def storm_entry(counters: dict[str, dict[str, int]]) -> dict[str, Any]:
    """A port's watchdog storm counts and the queues in a storm now (more detected than restored).

    Each storm the watchdog detects on a queue it restores once the pauses stop: a queue whose
    detections outnumber its restorations is stormed now. SONiC prints both (its real captures:
    ``stormed`` rows are exactly those with detected > restored); EOS and NX-OS print only the
    counts, so this gives them the same ``pfcwd_stormed_queues``.

    Example:
        >>> storm_entry({"pfcwd_storms_detected": {"4": 1, "3": 2}, "pfcwd_storms_restored": {"3": 1, "4": 1}})
        {'counters': {'pfcwd_storms_detected': {'3': 2, '4': 1}, 'pfcwd_storms_restored': {'3': 1, '4': 1}}, 'pfcwd_stormed_queues': [3]}
    """
    detected = counters.get("pfcwd_storms_detected", {})
    restored = counters.get("pfcwd_storms_restored", {})
    stormed = sorted(int(q) for q, n in detected.items() if n > restored.get(q, 0))
    return {
        "counters": {k: dict(sorted(v.items(), key=lambda kv: int(kv[0]))) for k, v in counters.items()},
        "pfcwd_stormed_queues": stormed,
    }


def fill_storm_counters(state: dict[str, Any]) -> dict[str, Any]:
    """Give every physical port the watchdog's counters left out "no storm" (a finalize hook).

    SONiC's ``show pfcwd stats``, EOS's and NX-OS's watchdog counters list a port (or queue) only
    after its first storm. Once a storm-counter parser marked the state (``qos.pfc_watchdog.
    stats_collected``), an ``Ethernet`` port missing from them gets ``counters.pfcwd_storms_detected:
    {}`` and ``pfcwd_stormed_queues: []``, so the storm checks judge it (zero storms, none now) and
    its first storm is a rise from zero, not a port "not in the previous snapshot". Without the
    mark (the command was not run) nothing is added.

    Example:
        >>> s = {"qos": {"pfc_watchdog": {"stats_collected": True}},
        ...      "interfaces": {"Ethernet0": {}, "Ethernet8": {"counters": {"pfcwd_storms_detected": {"3": 1}}},
        ...                     "PortChannel1": {}}}
        >>> fill_storm_counters(s)["interfaces"]
        {'Ethernet0': {'counters': {'pfcwd_storms_detected': {}}, 'pfcwd_stormed_queues': []}, 'Ethernet8': {'counters': {'pfcwd_storms_detected': {'3': 1}}, 'pfcwd_stormed_queues': []}, 'PortChannel1': {}}
    """
    qos = state.get("qos")
    watchdog = qos.get("pfc_watchdog") if type(qos) is dict else None
    if type(watchdog) is not dict or watchdog.get("stats_collected") is not True:
        return state
    interfaces = state.get("interfaces")
    if type(interfaces) is not dict:
        return state
    for name, body in interfaces.items():
        if not name.startswith("Ethernet") or "." in name or type(body) is not dict:
            continue
        counters = body.setdefault("counters", {})
        if type(counters) is dict:
            counters.setdefault("pfcwd_storms_detected", {})
        body.setdefault("pfcwd_stormed_queues", [])
    return state


def nxapi_rows(table: Any, row: str) -> list[dict[str, Any]]:
    """The rows of an NX-OS JSON ``TABLE_x``/``ROW_x`` pair: one row is an object, several a list.

    Example:
        >>> nxapi_rows({"ROW_vrf": {"vrf-name-out": "default"}}, "ROW_vrf")
        [{'vrf-name-out': 'default'}]
        >>> nxapi_rows({"ROW_vrf": [{"a": 1}, "junk", {"b": 2}]}, "ROW_vrf"), nxapi_rows(None, "ROW_vrf")
        ([{'a': 1}, {'b': 2}], [])
    """
    if not isinstance(table, dict):
        return []
    rows = table.get(row)
    if isinstance(rows, dict):
        return [rows]
    return [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []
