"""Cisco NX-OS interface names: short-to-full expansion and which interfaces the state keeps."""

from __future__ import annotations

import re

_SHORT = (
    (r"eth(?:ernet)?", "Ethernet"),
    (r"po(?:rt-channel)?", "port-channel"),
    (r"lo(?:opback)?", "loopback"),
    (r"vlan", "Vlan"),
    (r"mgmt", "mgmt"),
)
_MAC_RX = re.compile(r"^(?:[0-9a-f]{4}\.[0-9a-f]{4}\.[0-9a-f]{4}|(?:[0-9a-f]{2}[:-]){5}[0-9a-f]{2})$", re.I)


def canonical_name(name: str) -> str:
    """Expand an NX-OS interface name to the form NX-OS itself uses in its configuration.

    Example:
        >>> canonical_name("Eth1/1"), canonical_name("Po12"), canonical_name("mgmt0")
        ('Ethernet1/1', 'port-channel12', 'mgmt0')
    """
    for rx, full in _SHORT:
        m = re.fullmatch(rf"{rx}(\d.*)", name, re.IGNORECASE)
        if m:
            return full + m.group(1)
    return name


def kept(name: str) -> bool:
    """Whether an interface (full name) belongs in the state: physical, port-channel or mgmt.

    Example:
        >>> kept("Ethernet1/1"), kept("loopback0"), kept("port-channel12.548")
        (True, False, False)
    """
    return name.startswith(("Ethernet", "port-channel", "mgmt")) and "." not in name


def is_mac(value: str) -> bool:
    """Whether an LLDP id is a MAC address.

    Example:
        >>> is_mac("98f2.b3ff.07f4"), is_mac("Ethernet1/1")
        (True, False)
    """
    return bool(_MAC_RX.match(value.strip()))
