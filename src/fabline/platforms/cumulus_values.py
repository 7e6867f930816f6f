"""Value spellings Cumulus Linux prints in every dialect (NVUE tables and JSON, NCLU, traffic.conf).

NVUE, NCLU and the classic files spell booleans, FEC modes, sizes, trust modes and port sets the
same way; the parsers of each dialect (:mod:`~fabline.platforms.cumulus_nvue`,
:mod:`~fabline.platforms.cumulus_nvue_json`, :mod:`~fabline.platforms.cumulus_nclu`,
:mod:`~fabline.platforms.cumulus_files`) read them through these helpers.
"""

from __future__ import annotations

import re
from typing import Any

from fabline.platforms.spec import Vocabulary
from fabline.platforms.toolkit import PORT_NUMBER, ValueProblem, clip

#: Cumulus's words for state values: FEC (NVUE ``link fec``, NCLU ``link fec``) and trust (NVUE
#: ``qos mapping <profile> trust l2|l3``; the RoCE view's ``trust-mode`` prints ``pcp``/``dscp``,
#: traffic.conf's ``packet_priority_source_set`` ``802.1p``/``dscp``).
VOCABULARY = Vocabulary(
    fec={"rs": "rs", "fc": "baser", "none": "off", "auto": "auto"},
    fec_aliases={"none": "none", "rs-fec": "rs", "base-r": "fc", "fc": "fc", "fc-fec": "fc"},
    trust={"dscp": "l3", "pcp": "l2"},
    trust_aliases={"dscp": "dscp", "pcp": "pcp", "802.1p": "pcp", "8021p": "pcp"},
)

#: Multipliers of the size units NVUE prints. NVUE formats bytes with binary prefixes:
#: 150000 bytes prints as ``146.48 KB`` (150000 / 1024).
_SIZE_UNITS = {"bytes": 1, "byte": 1, "b": 1, "kb": 1024, "mb": 1024**2, "gb": 1024**3, "tb": 1024**4}

_TRUE_WORDS = frozenset({"on", "yes", "enabled", "enable", "up", "true"})
_FALSE_WORDS = frozenset({"off", "no", "disabled", "disable", "down", "false"})


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


def fec_mode(text: str) -> str | None:
    """State FEC mode (rs|fc|none|auto) from a Cumulus spelling, None if unknown.

    Example:
        >>> fec_mode("off"), fec_mode("RS"), fec_mode("baser"), fec_mode("auto"), fec_mode("llrs")
        ('none', 'rs', 'fc', 'auto', None)
    """
    return VOCABULARY.fec_mode(text.strip())


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


# Digit runs are unbounded here on purpose: the range check (_port_range) rejects a long one by name.
_PORT_RANGE = re.compile(r"([A-Za-z_]{1,16}?)(\d+)((?:s\d+)?)-(?:\1)?(\d+)((?:s\d+)?)")
_BREAKOUT_RANGE = re.compile(r"([A-Za-z_]{1,16}?)(\d+)s(\d+)-(?:\1\2s)?(\d+)")


def expand_ports(spec: str) -> list[str]:
    """Interface names of a Cumulus port set (``swp1-swp4,swp6``, NCLU ``swp1-18,swp31-32``).

    A range is bounded by the port numbers a switch can have (0-4095): ``swp1-swp99999999``
    raises :class:`~fabline.platforms.toolkit.ValueProblem` instead of costing gigabytes.

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
        m = _PORT_RANGE.fullmatch(token)
        if m and not m.group(3) and not m.group(5):
            names += [f"{m.group(1)}{n}" for n in _port_range(m.group(2), m.group(4), token)]
            continue
        b = _BREAKOUT_RANGE.fullmatch(token)
        if b:
            names += [f"{b.group(1)}{b.group(2)}s{n}" for n in _port_range(b.group(3), b.group(4), token)]
            continue
        names.append(token)
    return names


def _port_range(first: str, last: str, token: str) -> range:
    limit = len(str(PORT_NUMBER.high))
    low, high = (int(first), int(last)) if max(len(first), len(last)) <= limit else (1, 0)
    if not PORT_NUMBER.low <= low <= high <= PORT_NUMBER.high:
        raise ValueProblem(
            f"port range {clip(token)!r} is outside {PORT_NUMBER.low}-{PORT_NUMBER.high} or runs backwards"
        )
    return range(low, high + 1)


def trust_fields(modes: list[str]) -> dict[str, Any]:
    """Trust fields from NVUE/traffic.conf mode words (``pcp``, ``dscp``, ``802.1p``, ``l2``, ``l3``, ``both``).

    Example:
        >>> trust_fields(["802.1p", "dscp"]), trust_fields(["l2"])
        ({'trust': 'dscp', 'trust_modes': ['pcp', 'dscp']}, {'trust': 'pcp', 'trust_modes': ['pcp']})
    """
    canon = []
    for word in modes:
        w = word.strip().lower()
        name = VOCABULARY.trust_mode(w)
        if w == "both":
            canon += ["pcp", "dscp"]
        elif name:
            canon.append(name)
    if not canon:
        return {}
    out: dict[str, Any] = {"trust": "dscp" if "dscp" in canon else "pcp"}
    out["trust_modes"] = sorted(set(canon), key=canon.index)
    return out
