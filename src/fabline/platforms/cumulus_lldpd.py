"""Cumulus Linux LLDP neighbours in lldpd's detail layout (``nv show interface lldp-detail``).

Cumulus runs ``lldpd`` on every release. On 5.x NVUE prints its neighbour table in lldpd's own
``lldpcli show neighbors details`` layout (``nv show interface lldp-detail``, documented since
Cumulus Linux 5.0 in NVIDIA's NVUE command reference); NCLU's ``net show interface all json``,
the 3.x/4.x source, is gone from 5.x. The same parser reads ``lldpcli``'s native form, whose
``Interface:`` line goes on with ``, via: LLDP, RID: ..., Time: ...``.

Vendor semantics: :mod:`fabline.platforms.cumulus`.
"""

from __future__ import annotations

import re
from typing import cast

from fabline.platforms.base import ParseContext, text_parser
from fabline.platforms.toolkit import add_neighbor, lldp_entry
from fabline.state_types import Interface, StateBody

#: A neighbour block starts at ``Interface:    swp1`` (NVUE) or ``Interface:    swp1, via: LLDP, ...``.
_INTERFACE = re.compile(r"^\s*Interface:\s+(?P<name>[^\s,]+)\s*(?:,.*)?$")
#: ``Key:    value`` inside a block (``ChassisID:    mac 48:b0:2d:ec:e5:3b``).
_FIELD = re.compile(r"^\s*(?P<key>ChassisID|SysName|MgmtIP|PortID|PortDescr):\s*(?P<value>.*?)\s*$")
#: The id subtypes lldpd prints before a chassis or port id (lldpcli(8)).
_ID_TYPES = ("ifname", "mac", "local", "ifalias", "ip", "unhandled")
_BANNER = re.compile(r"^\s*LLDP neighbors:\s*$", re.MULTILINE)


def _typed_id(value: str) -> tuple[str | None, str | None]:
    """``mac 48:b0:2d:ec:e5:3b`` -> ``("mac", "48:b0:2d:ec:e5:3b")``; an untyped value keeps no type.

    Example:
        >>> _typed_id("ifname swp1"), _typed_id("swp1"), _typed_id("")
        (('ifname', 'swp1'), (None, 'swp1'), (None, None))
    """
    head, _, rest = value.partition(" ")
    if head in _ID_TYPES and rest.strip():
        return head, rest.strip()
    return None, value or None


@text_parser("lldpd's neighbour detail ('LLDP neighbors:' and 'Interface:' blocks)", may_be_empty=True)
def parse_lldp_detail(text: str, ctx: ParseContext) -> StateBody:
    """``nv show interface lldp-detail`` (lldpd detail layout): every port's LLDP neighbours.

    Per neighbour: ``device`` (``SysName``), ``port`` (``PortID``; a MAC id, as hosts running
    lldpd send, is replaced by ``PortDescr`` by the toolkit's rule), ``port_description``,
    ``chassis_id`` and the added ``mgmt_ip`` (the first ``MgmtIP`` printed, which may be a
    link-local IPv6 address). A port that hears several
    neighbours gets the others in ``lldp.other_neighbors``. No neighbour at all (the banner and
    nothing else) is an empty, valid answer.

    Raises:
        ParseError: Neither the ``LLDP neighbors:`` banner nor an ``Interface:`` block.
    """
    interfaces: dict[str, dict[str, object]] = {}
    name: str | None = None
    fields: dict[str, str] = {}

    def close() -> None:
        if name is None:
            return
        port_type, port_id = _typed_id(fields.get("PortID", ""))
        chassis = _typed_id(fields.get("ChassisID", ""))[1]
        entry = lldp_entry(
            fields.get("SysName") or None,
            port_id,
            fields.get("PortDescr") or None,
            chassis,
            port_type == "mac",
        )
        if fields.get("MgmtIP"):
            entry["mgmt_ip"] = fields["MgmtIP"]
        body = interfaces.setdefault(name, {})
        if entry:
            add_neighbor(body, entry)

    for line in text.splitlines():
        m = _INTERFACE.match(line)
        if m:
            close()
            name, fields = m.group("name"), {}
            continue
        f = _FIELD.match(line) if name is not None else None
        if f and f.group("key") not in fields:  # the first of repeated keys (MgmtIP), as printed
            fields[f.group("key")] = f.group("value")
    close()
    if not interfaces and not _BANNER.search(text):
        raise ctx.reject("no 'LLDP neighbors:' banner and no 'Interface:' block")
    return {"interfaces": {n: cast(Interface, b) for n, b in interfaces.items() if b}}
