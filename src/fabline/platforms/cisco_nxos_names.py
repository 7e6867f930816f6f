"""Cisco NX-OS interface names: short-to-full expansion and which interfaces the state keeps."""

from __future__ import annotations

from fabline.platforms.spec import Vocabulary
from fabline.platforms.toolkit import expand_short_name, is_mac

#: NX-OS's words for state values: ``fec rs-fec`` (config) and ``FEC mode is rs-fec`` (show); the
#: trust a ``class-map type qos`` classifies on, ``match dscp`` or ``match cos``.
VOCABULARY = Vocabulary(
    fec={"rs": "rs-fec", "fc": "fc-fec", "none": "off", "auto": "auto"},
    fec_aliases={"rs-ieee": "rs", "rs-cons16": "rs"},
    trust={"dscp": "dscp", "pcp": "cos"},
)

__all__ = ["canonical_name", "is_mac", "kept"]

_SHORT = (
    (r"eth(?:ernet)?", "Ethernet"),
    (r"po(?:rt-channel)?", "port-channel"),
    (r"lo(?:opback)?", "loopback"),
    (r"vlan", "Vlan"),
    (r"mgmt", "mgmt"),
)


def canonical_name(name: str) -> str:
    """Expand an NX-OS interface name to the form NX-OS itself uses in its configuration.

    Example:
        >>> canonical_name("Eth1/1"), canonical_name("Po12"), canonical_name("mgmt0")
        ('Ethernet1/1', 'port-channel12', 'mgmt0')
    """
    return expand_short_name(name, _SHORT)


def kept(name: str) -> bool:
    """Whether an interface (full name) belongs in the state: physical, port-channel or mgmt.

    Example:
        >>> kept("Ethernet1/1"), kept("loopback0"), kept("port-channel12.548")
        (True, False, False)
    """
    return name.startswith(("Ethernet", "port-channel", "mgmt")) and "." not in name
