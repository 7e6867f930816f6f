"""Arista EOS interface names: short-to-full expansion and which interfaces the state keeps."""

from __future__ import annotations

import re

_SHORT_NAMES = (
    ("Ethernet", "Et"),
    ("Port-Channel", "Po"),
    ("Management", "Ma"),
    ("Loopback", "Lo"),
    ("Vlan", "Vl"),
    ("Vxlan", "Vx"),
)
_KEPT_PREFIXES = ("Ethernet", "Port-Channel", "Management")
_MAC_RX = re.compile(r"^(?:[0-9a-f]{4}\.[0-9a-f]{4}\.[0-9a-f]{4}|(?:[0-9a-f]{2}[:-]){5}[0-9a-f]{2})$", re.I)


def canonical_name(name: str) -> str:
    """Expand an EOS short interface name to its full name.

    Example:
        >>> canonical_name("Et3/1/1"), canonical_name("Po49"), canonical_name("Ethernet1")
        ('Ethernet3/1/1', 'Port-Channel49', 'Ethernet1')
    """
    for full, short in _SHORT_NAMES:
        if name.startswith(full):
            return name
        m = re.fullmatch(rf"{short}[a-z-]*?(\d.*)", name, re.IGNORECASE)
        if m and name[:2].lower() == short.lower():
            return full + m.group(1)
    return name


def kept(name: str) -> bool:
    """Whether an interface (full name) belongs in the state: physical, LAG or management.

    Example:
        >>> kept("Ethernet1"), kept("Loopback0"), kept("Ethernet8.101")
        (True, False, False)
    """
    return name.startswith(_KEPT_PREFIXES) and "." not in name


def is_mac(value: str) -> bool:
    """Whether an LLDP id is a MAC address (``0800.274f.332d`` or ``08:00:27:4f:33:2d``).

    Example:
        >>> is_mac("0800.274f.332d"), is_mac("Ethernet1")
        (True, False)
    """
    return bool(_MAC_RX.match(value.strip()))
