"""Readers for NVUE's human tables and the value spellings Cumulus Linux prints.

NVUE prints most ``nv show`` answers as a tree table: an indented attribute column, then
``operational`` and ``applied`` columns (sometimes ``pending`` or ``description`` too), then
optional titled sub-tables underlined with ``=``. :func:`read_tree_table` turns such an answer
into ``{("pfc", "pfc-priority"): Cell("3", "")}`` plus its sub-tables as row dicts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fabline.platforms.base import ParseContext, split_dashed_table

_DASHES = re.compile(r"^\s*-+(\s+-+)*\s*$")
_UNDERLINE = re.compile(r"^\s*=+\s*$")

#: Multipliers of the size units NVUE prints. NVUE formats bytes with binary prefixes:
#: 150000 bytes prints as ``146.48 KB`` (150000 / 1024).
_SIZE_UNITS = {"bytes": 1, "byte": 1, "b": 1, "kb": 1024, "mb": 1024**2, "gb": 1024**3, "tb": 1024**4}

_TRUE_WORDS = frozenset({"on", "yes", "enabled", "enable", "up", "true"})
_FALSE_WORDS = frozenset({"off", "no", "disabled", "disable", "down", "false"})


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
        if lines[j].strip() and _UNDERLINE.match(lines[j + 1]):
            body_end = j
            break

    cells: dict[tuple[str, ...], Cell] = {}
    stack: list[tuple[int, str]] = []
    for line in lines[start + 1 : body_end]:
        if not line.strip() or line.strip() == "...":
            continue
        key_part = line[: bounds[1][0]] if len(bounds) > 1 else line
        key = key_part.strip()
        if not key:
            continue
        indent = len(key_part) - len(key_part.lstrip())
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path = (*(name for _, name in stack), key)
        stack.append((indent, key))
        row = {names[k]: _cut(line, a, b) for k, (a, b) in enumerate(bounds) if k < len(names)}
        cells[path] = Cell(row.get("operational", ""), row.get("applied", ""))

    sections: dict[str, list[dict[str, str]]] = {}
    j = body_end
    while j < len(lines) - 1:
        if lines[j].strip() and _UNDERLINE.match(lines[j + 1]):
            title = lines[j].strip()
            k = j + 2
            while k < len(lines) - 1 and not (lines[k].strip() and _UNDERLINE.match(lines[k + 1])):
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


def size_bytes(text: str) -> int | None:
    """Bytes from an NVUE size (``146.48 KB``, ``0 Bytes``, ``1.43 MB``), None if not a size.

    NVUE rounds to two decimals, so a table value is within 0.5 % of the configured bytes.

    Example:
        >>> size_bytes("146.48 KB"), size_bytes("0 Bytes"), size_bytes("150000"), size_bytes("inf")
        (149996, 0, 150000, None)
    """
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*", text)
    if not m:
        return None
    unit = m.group(2).lower() or "b"
    if unit not in _SIZE_UNITS:
        return None
    return round(float(m.group(1)) * _SIZE_UNITS[unit])


def speed_gbps(text: str) -> float | int | None:
    """Gb/s from an NVUE/NCLU speed (``400G``, ``100G``, ``1G``, ``10M``), None for auto/N/A.

    Example:
        >>> speed_gbps("400G"), speed_gbps("25G"), speed_gbps("100M"), speed_gbps("auto")
        (400, 25, 0.1, None)
    """
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([GMT])(?:b(?:ps|/s)?)?\s*", text, re.IGNORECASE)
    if not m:
        return None
    value = float(m.group(1)) * {"M": 0.001, "G": 1, "T": 1000}[m.group(2).upper()]
    return int(value) if value.is_integer() else round(value, 3)


def fec_mode(text: str) -> str | None:
    """State FEC mode (rs|fc|none|auto) from a Cumulus spelling, None if unknown.

    Example:
        >>> fec_mode("off"), fec_mode("RS"), fec_mode("baser"), fec_mode("auto"), fec_mode("llrs")
        ('none', 'rs', 'fc', 'auto', None)
    """
    word = text.strip().lower()
    return {
        "off": "none",
        "none": "none",
        "rs": "rs",
        "rs-fec": "rs",
        "baser": "fc",
        "base-r": "fc",
        "fc": "fc",
        "fc-fec": "fc",
        "auto": "auto",
    }.get(word)


def flag(text: str) -> bool | None:
    """A boolean from on/off, yes/no, enabled/disabled, up/down; None for anything else.

    Example:
        >>> flag("on"), flag("Disabled"), flag("maybe")
        (True, False, None)
    """
    word = text.strip().lower()
    if word in _TRUE_WORDS:
        return True
    if word in _FALSE_WORDS:
        return False
    return None


def int_list(text: str) -> list[int]:
    """Integers of a comma/space list (``0,3``, ``[4]``, ``3 4``); empty for '' or ``-``.

    Example:
        >>> int_list("0,3"), int_list("[3,4]"), int_list("-")
        ([0, 3], [3, 4], [])
    """
    return [int(tok) for tok in re.findall(r"\d+", text)]


def expand_ports(spec: str) -> list[str]:
    """Interface names of a Cumulus port set (``swp1-swp4,swp6``, NCLU ``swp1-18,swp31-32``).

    Example:
        >>> expand_ports("swp1-swp3,swp8")
        ['swp1', 'swp2', 'swp3', 'swp8']
        >>> expand_ports("swp1-2,swp50s0-swp50s1,peerlink")
        ['swp1', 'swp2', 'swp50s0', 'swp50s1', 'peerlink']
    """
    names: list[str] = []
    for token in (t.strip() for t in spec.split(",")):
        if not token:
            continue
        m = re.fullmatch(r"([A-Za-z_]+?)(\d+)((?:s\d+)?)-(?:\1)?(\d+)((?:s\d+)?)", token)
        if m and not m.group(3) and not m.group(5):
            names += [f"{m.group(1)}{n}" for n in range(int(m.group(2)), int(m.group(4)) + 1)]
            continue
        b = re.fullmatch(r"([A-Za-z_]+?)(\d+)s(\d+)-(?:\1\2s)?(\d+)", token)
        if b:
            names += [f"{b.group(1)}{b.group(2)}s{n}" for n in range(int(b.group(3)), int(b.group(4)) + 1)]
            continue
        names.append(token)
    return names


def uptime_seconds(text: str) -> int | None:
    """Seconds from an uptime like ``3 days, 18:40:31`` or ``0:12:59``.

    Example:
        >>> uptime_seconds("3 days, 18:40:31"), uptime_seconds("1 day, 0:00:39"), uptime_seconds("x")
        (326431, 86439, None)
    """
    m = re.fullmatch(r"\s*(?:(\d+)\s+days?,\s*)?(\d+):(\d\d):(\d\d)\s*", text)
    if not m:
        return None
    days, hours, minutes, seconds = (int(g or 0) for g in m.groups())
    return ((days * 24 + hours) * 60 + minutes) * 60 + seconds
