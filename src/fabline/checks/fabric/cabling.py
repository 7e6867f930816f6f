"""The cabling plan: the expected links of a fabric, as a CSV file (``fabline check --cabling FILE``).

Columns (header row required, in any order)::

    device,port,peer_device,peer_port,rail,plane
    gpu-001,eth0,leaf-r0-a,Ethernet0,0,0

``rail`` and ``plane`` are integers or empty. Each link is listed once (either direction). A row
that is malformed, a duplicate port, or a port listed in two links is a :class:`ConfigError`
naming ``file:line``.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from fabline.errors import ConfigError

COLUMNS = ("device", "port", "peer_device", "peer_port", "rail", "plane")


@dataclass(frozen=True, slots=True)
class PlannedLink:
    """One expected link and the plan line it came from."""

    device: str
    port: str
    peer_device: str
    peer_port: str
    rail: int | None
    plane: int | None
    line: int


def _int(text: str, column: str, path: Path, line: int) -> int | None:
    text = text.strip()
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        raise ConfigError(f"{column} must be an integer, got {text!r}", file=path, line=line) from None


def load_cabling_plan(path: Path) -> list[PlannedLink]:
    """Read and validate a cabling plan CSV.

    Raises:
        ConfigError: Missing file or header, unknown or missing columns, an empty name, a
            non-integer rail/plane, a port listed twice.
    """
    try:
        text = path.read_text("utf-8-sig")
    except OSError as exc:
        raise ConfigError(f"cannot read cabling plan: {exc.strerror}", file=path) from None
    except UnicodeDecodeError:
        raise ConfigError("cabling plan is not UTF-8 text", file=path) from None
    reader = csv.reader(text.splitlines())
    header: list[str] | None = None
    links: list[PlannedLink] = []
    used: dict[tuple[str, str], int] = {}
    for line, row in enumerate(reader, start=1):
        if not row or all(not c.strip() for c in row) or row[0].lstrip().startswith("#"):
            continue
        if header is None:
            header = [c.strip().lower() for c in row]
            unknown = [c for c in header if c not in COLUMNS]
            if unknown:
                raise ConfigError(
                    f"unknown column {unknown[0]!r} (columns: {', '.join(COLUMNS)})", file=path, line=line
                )
            missing = [c for c in COLUMNS[:4] if c not in header]
            if missing:
                raise ConfigError(f"header lacks column {missing[0]!r}", file=path, line=line)
            continue
        if len(row) != len(header):
            raise ConfigError(f"expected {len(header)} fields, got {len(row)}", file=path, line=line)
        cells = {k: v.strip() for k, v in zip(header, row, strict=True)}
        for col in COLUMNS[:4]:
            if not cells[col]:
                raise ConfigError(f"{col} is empty", file=path, line=line)
        link = PlannedLink(
            cells["device"],
            cells["port"],
            cells["peer_device"],
            cells["peer_port"],
            _int(cells.get("rail", ""), "rail", path, line),
            _int(cells.get("plane", ""), "plane", path, line),
            line,
        )
        for end in ((link.device, link.port), (link.peer_device, link.peer_port)):
            if end in used:
                raise ConfigError(
                    f"{end[0]} {end[1]} is already cabled on line {used[end]}", file=path, line=line
                )
            used[end] = line
        links.append(link)
    if header is None:
        raise ConfigError(f"cabling plan is empty (header: {','.join(COLUMNS)})", file=path)
    return links
