"""Arista EOS interface names: short-to-full expansion and which interfaces the state keeps."""

from __future__ import annotations

from fabline.platforms.spec import Vocabulary
from fabline.platforms.toolkit import expand_short_name, is_mac

#: EOS's words for state values: ``error-correction encoding reed-solomon``, ``qos trust cos``.
VOCABULARY = Vocabulary(fec={"rs": "reed-solomon", "fc": "fire-code"}, trust={"dscp": "dscp", "pcp": "cos"})

__all__ = ["canonical_name", "is_mac", "kept"]

#: EOS short interface names (``Et1``, ``Eth1``, ``Po49``, ``Ma1``) and their full names.
_SHORT_NAMES = (
    (r"et[a-z-]*?", "Ethernet"),
    (r"po[a-z-]*?", "Port-Channel"),
    (r"ma[a-z-]*?", "Management"),
    (r"lo[a-z-]*?", "Loopback"),
    (r"vl[a-z-]*?", "Vlan"),
    (r"vx[a-z-]*?", "Vxlan"),
)
_KEPT_PREFIXES = ("Ethernet", "Port-Channel", "Management")


def canonical_name(name: str) -> str:
    """Expand an EOS short interface name to its full name.

    Example:
        >>> canonical_name("Et3/1/1"), canonical_name("Po49"), canonical_name("Ethernet1")
        ('Ethernet3/1/1', 'Port-Channel49', 'Ethernet1')
    """
    return expand_short_name(name, _SHORT_NAMES)


def kept(name: str) -> bool:
    """Whether an interface (full name) belongs in the state: physical, LAG or management.

    Example:
        >>> kept("Ethernet1"), kept("Loopback0"), kept("Ethernet8.101")
        (True, False, False)
    """
    return name.startswith(_KEPT_PREFIXES) and "." not in name
