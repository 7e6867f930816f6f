"""Ansible's host syntax: host ranges in inventory files and host patterns for ``--limit``.

Both follow ansible-core (``plugins/inventory/__init__.py``, ``parsing/utils/addresses.py`` and
``inventory/manager.py``) so that an inventory and a ``--limit`` mean the same thing to fabline as to
``ansible``. Pure functions on plain strings and names; the inventory model calls them.
"""

from __future__ import annotations

import fnmatch
import re
import string
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from fabline.errors import ConfigError, did_you_mean

# ansible-core's ``parse_address`` regexes, kept verbatim in spirit: they decide whether a pattern
# with colons is one address (IPv6, host:port, a [x:y] range) or a ':'-separated pattern list.
_NUMERIC_RANGE = r"\[(?:[0-9]+:[0-9]+)(?::[0-9]+)?\]"
_HEX_RANGE = r"\[(?:[0-9a-f]+:[0-9a-f]+)(?::[0-9]+)?\]"
_ALNUM_RANGE = r"\[(?:[a-z]:[a-z]|[0-9]+:[0-9]+)(?::[0-9]+)?\]"
_IPV6_COMPONENT = rf"(?:[0-9a-f]{{1,4}}|{_HEX_RANGE})"
_IPV4_COMPONENT = rf"(?:[01]?[0-9]{{1,2}}|2[0-4][0-9]|25[0-5]|{_NUMERIC_RANGE})"
_LABEL = rf"(?:[\w]|{_ALNUM_RANGE})(?:[\w_-]|{_ALNUM_RANGE})*(?<![_-])"
_C = _IPV6_COMPONENT
_IPV6 = (
    rf"(?:(?:{_C}:){{7}}{_C}|(?:{_C}:){{1,6}}:|(?:{_C}:)(?::{_C}){{1,6}}|(?:{_C}:){{2}}(?::{_C}){{1,5}}|"
    rf"(?:{_C}:){{3}}(?::{_C}){{1,4}}|(?:{_C}:){{4}}(?::{_C}){{1,3}}|(?:{_C}:){{5}}(?::{_C}){{1,2}}|"
    rf"(?:{_C}:){{6}}(?::{_C})|:(?::{_C}){{1,6}}|{_C}?::|(?:0:){{6}}(?:{_C}\.){{3}}{_C}|"
    rf"::(?:ffff:)?(?:{_C}\.){{3}}{_C}|(?:0:){{5}}ffff:(?:{_C}\.){{3}}{_C})"
)
_ADDRESS_PATTERNS = (
    re.compile(rf"^(?:{_IPV4_COMPONENT}\.){{3}}{_IPV4_COMPONENT}$", re.I),
    re.compile(rf"^{_IPV6}$", re.I),
    re.compile(rf"^{_LABEL}(?:\.{_LABEL})*$", re.I | re.UNICODE),
)
_BRACKETED_HOSTPORT = re.compile(r"^\[(.+)\]:([0-9]+)$")
_HOSTPORT = re.compile(r"^((?:[^:\[\]]|\[[^\]]*\])*):([0-9]+)$")
_PATTERN_WORDS = re.compile(r"(?:[^\s:\[\]]|\[[^\]]*\])+")
_SUBSCRIPT = re.compile(r"^(.+)\[(?:(-?[0-9]+)|([0-9]+)([:-])([0-9]*))\]$")


class PatternError(ValueError):
    """A host range or host pattern is malformed; the caller adds file and line."""


def split_port(address: str) -> tuple[str, int | None]:
    """Split an inventory host entry into name and optional ``:port`` (Ansible's rules).

    Example:
        >>> split_port("leaf[01:04]:2222")
        ('leaf[01:04]', 2222)
        >>> split_port("[fe80::1]:22")
        ('fe80::1', 22)
        >>> split_port("fe80::1")
        ('fe80::1', None)
    """
    for rx in (_BRACKETED_HOSTPORT, _HOSTPORT):
        m = rx.match(address)
        if m:
            return m.group(1), int(m.group(2))
    return address, None


def _is_address(text: str) -> bool:
    host, _port = split_port(text)
    return any(rx.match(host) for rx in _ADDRESS_PATTERNS)


def expand_hosts(pattern: str) -> list[str]:
    """Expand Ansible host ranges (``[01:04]``, ``[a:c]``, ``[1:10:2]``), nested left to right.

    Stricter than Ansible where Ansible silently yields nothing: an empty range is an error.

    Example:
        >>> expand_hosts("leaf[01:03]")
        ['leaf01', 'leaf02', 'leaf03']
        >>> expand_hosts("gpu-[a:c]")
        ['gpu-a', 'gpu-b', 'gpu-c']
        >>> expand_hosts("r[0:1]-[1:3:2]")
        ['r0-1', 'r0-3', 'r1-1', 'r1-3']

    Raises:
        PatternError: Malformed range (bad bounds, unequal zero padding, begin after end).
    """
    if "[" not in pattern:
        return [pattern]
    head, sep, rest = pattern.partition("[")
    body, sep2, tail = rest.partition("]")
    if not sep or not sep2:
        raise PatternError(f"host range {pattern!r} has no closing ']'")
    bounds = body.split(":")
    if len(bounds) not in (2, 3):
        raise PatternError(f"host range {pattern!r} must be [begin:end] or [begin:end:step]")
    beg, end = bounds[0] or "0", bounds[1]
    step_text = bounds[2] if len(bounds) == 3 else "1"
    if not end:
        raise PatternError(f"host range {pattern!r} must specify an end value")
    try:
        step = int(step_text)
    except ValueError:
        raise PatternError(f"host range {pattern!r} has a non-numeric step {step_text!r}") from None
    if step < 1:
        raise PatternError(f"host range {pattern!r} needs a step of at least 1")
    width = len(beg) if beg[0] == "0" and len(beg) > 1 else 0
    if width and len(end) != width:
        raise PatternError(f"host range {pattern!r} must use equal-length begin and end with zero padding")
    items: Sequence[str]
    if len(beg) == 1 == len(end) and beg in string.ascii_letters and end in string.ascii_letters:
        i_beg, i_end = string.ascii_letters.index(beg), string.ascii_letters.index(end)
        if i_beg > i_end:
            raise PatternError(f"host range {pattern!r} must have begin <= end")
        items = list(string.ascii_letters[i_beg : i_end + 1 : step])
    else:
        try:
            numbers = range(int(beg), int(end) + 1, step)
        except ValueError:
            raise PatternError(
                f"host range {pattern!r} must be numeric or single letters, got {body!r}"
            ) from None
        if not numbers:
            raise PatternError(f"host range {pattern!r} must have begin <= end")
        items = [str(n).zfill(width) if width else str(n) for n in numbers]
    out: list[str] = []
    for item in items:
        out.extend(expand_hosts(f"{head}{item}{tail}"))
    return out


def split_host_pattern(pattern: str) -> list[str]:
    """Split a host pattern on ``,`` (or ``:`` when that cannot be an address or range).

    Example:
        >>> split_host_pattern("fabric:&pod_b:!leaf-r2-a")
        ['fabric', '&pod_b', '!leaf-r2-a']
        >>> split_host_pattern("spine, leaf[0:1]")
        ['spine', 'leaf[0:1]']
    """
    if "," in pattern:
        parts = pattern.split(",")
    elif _is_address(pattern):
        parts = [pattern]
    else:
        parts = _PATTERN_WORDS.findall(pattern)
    return [p.strip() for p in parts if p.strip()]


def order_patterns(patterns: Iterable[str]) -> list[str]:
    """Plain terms first, then ``&`` intersections, then ``!`` exclusions (Ansible's order).

    Example:
        >>> order_patterns(["!a", "&b", "c"])
        ['c', '&b', '!a']
        >>> order_patterns(["!a"])
        ['all', '!a']
    """
    regular: list[str] = []
    inter: list[str] = []
    excl: list[str] = []
    for p in patterns:
        if not p:
            continue
        (excl if p[0] == "!" else inter if p[0] == "&" else regular).append(p)
    return (regular or ["all"]) + inter + excl


def split_subscript(pattern: str) -> tuple[str, tuple[int, int | None] | None]:
    """Take an ``[i]`` or ``[x:y]`` subscript off a pattern (not off a ``~regex``).

    Example:
        >>> split_subscript("leaf[0:1]")
        ('leaf', (0, 1))
        >>> split_subscript("leaf[-1]")
        ('leaf', (-1, None))
        >>> split_subscript("~leaf[0-9]")
        ('~leaf[0-9]', None)
    """
    if pattern.startswith("~"):
        return pattern, None
    m = _SUBSCRIPT.match(pattern)
    if not m:
        return pattern, None
    base, idx, start, _sep, end = m.groups()
    if idx:
        return base, (int(idx), None)
    return base, (int(start), int(end) if end else -1)


def apply_subscript(hosts: list[str], subscript: tuple[int, int | None] | None) -> list[str]:
    """Apply an inclusive ``[x:y]`` or single ``[i]`` subscript as Ansible does.

    Example:
        >>> apply_subscript(["a", "b", "c"], (1, -1))
        ['b', 'c']
        >>> apply_subscript(["a", "b", "c"], (0, 1))
        ['a', 'b']

    Raises:
        IndexError: A single index out of range.
    """
    if not hosts or not subscript:
        return hosts
    start, end = subscript
    if end:
        if end == -1:
            end = len(hosts) - 1
        return hosts[start : end + 1]
    return [hosts[start]]


def compile_term(term: str) -> Callable[[str], bool]:
    """A matcher for one pattern term: ``~regex`` (``re.match``) or a shell glob (whole name).

    Example:
        >>> compile_term("leaf*")("leaf-r0-a"), compile_term("~r[0-9]")("r1x"), compile_term("leaf")("leaf2")
        (True, True, False)

    Raises:
        PatternError: Invalid regular expression.
    """
    try:
        rx = re.compile(term[1:]) if term.startswith("~") else re.compile(fnmatch.translate(term))
    except re.error as exc:
        raise PatternError(f"invalid host pattern {term!r}: {exc}") from None
    return lambda name: rx.match(name) is not None


def is_wildcard(term: str) -> bool:
    """Whether a term can match hosts by name besides groups (regex or glob characters).

    Example:
        >>> is_wildcard("leaf*"), is_wildcard("leaf")
        (True, False)
    """
    return term.startswith("~") or any(c in term for c in ".?*[")


def select_terms(
    terms: list[str],
    hosts: Mapping[str, Any],
    groups: Mapping[str, Any],
    group_hosts: Callable[[str], list[str]],
    source: str,
    *,
    strict: bool,
) -> list[str]:
    """Hosts an ordered list of pattern terms selects (see :meth:`Inventory.select`), in order.

    Args:
        terms: Pattern terms, ordered by :func:`order_patterns`.
        hosts: Host names, in inventory order.
        groups: Group names, in inventory order.
        group_hosts: All hosts of a group and its descendants, in Ansible's order.
        source: The inventory path, for error messages.
        strict: Whether a term matching no group or host is an error.

    Raises:
        ConfigError: When strict, a term matching no group or host; a subscript out of range.
        PatternError: A malformed term.
    """
    selected: list[str] = []
    for term in terms:
        if term in hosts:
            if term not in selected:
                selected.append(term)
            continue
        that = _match_one(term, hosts, groups, group_hosts, source, strict)
        if term[0] == "!":
            drop = set(that)
            selected = [h for h in selected if h not in drop]
        elif term[0] == "&":
            keep = set(that)
            selected = [h for h in selected if h in keep]
        else:
            have = set(selected)
            for h in that:
                if h not in have:
                    have.add(h)
                    selected.append(h)
    return selected


def _match_one(
    term: str,
    hosts: Mapping[str, Any],
    groups: Mapping[str, Any],
    group_hosts: Callable[[str], list[str]],
    source: str,
    strict: bool,
) -> list[str]:
    bare = term[1:] if term[0] in "&!" else term
    expr, subscript = split_subscript(bare)
    if not expr:
        raise PatternError(f"empty host pattern term {term!r}")
    matches = compile_term(expr)
    found: list[str] = []
    matched_groups = [g for g in groups if matches(g)]
    for g in matched_groups:
        found.extend(group_hosts(g))
    if not matched_groups or is_wildcard(expr):
        found.extend(h for h in hosts if matches(h))
    if not found and not matched_groups and strict:
        names = [*groups, *hosts] if len(hosts) < 5000 else list(groups)
        raise ConfigError(
            f"--limit term {expr!r} matches no group or host in {source}" + did_you_mean(expr, names)
        )
    found = list(dict.fromkeys(found))
    try:
        return apply_subscript(found, subscript)
    except IndexError:
        raise ConfigError(
            f"--limit {term!r}: subscript out of range ({len(found)} hosts match {expr!r})"
        ) from None
