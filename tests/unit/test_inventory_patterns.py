"""Host ranges and host-pattern syntax (pure functions of fabline.inventory.patterns)."""

from __future__ import annotations

import pytest

from fabline.inventory.patterns import (
    PatternError,
    apply_subscript,
    compile_term,
    expand_hosts,
    order_patterns,
    split_host_pattern,
    split_port,
    split_subscript,
)


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("leaf01", ["leaf01"]),
        ("leaf[01:04]", ["leaf01", "leaf02", "leaf03", "leaf04"]),
        ("leaf[1:4]", ["leaf1", "leaf2", "leaf3", "leaf4"]),
        ("leaf[:2]", ["leaf0", "leaf1", "leaf2"]),
        ("leaf[1:10:3]", ["leaf1", "leaf4", "leaf7", "leaf10"]),
        ("leaf[001:010:4]", ["leaf001", "leaf005", "leaf009"]),
        ("gpu-[a:c]", ["gpu-a", "gpu-b", "gpu-c"]),
        ("gpu-[a:e:2]", ["gpu-a", "gpu-c", "gpu-e"]),
        ("gpu-[X:Z]", ["gpu-X", "gpu-Y", "gpu-Z"]),
        ("r[0:1]-[a:b].dc1", ["r0-a.dc1", "r0-b.dc1", "r1-a.dc1", "r1-b.dc1"]),
        ("10.0.0.[1:3]", ["10.0.0.1", "10.0.0.2", "10.0.0.3"]),
    ],
)
def test_expand_hosts(pattern: str, expected: list[str]) -> None:
    assert expand_hosts(pattern) == expected


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("leaf[4:1]", "begin <= end"),
        ("leaf[c:a]", "begin <= end"),
        ("leaf[01:4]", "equal-length"),
        ("leaf[1:4:0]", "step of at least 1"),
        ("leaf[1:4:z]", "non-numeric step"),
        ("leaf[1]", "must be [begin:end]"),
        ("leaf[1:2:3:4]", "must be [begin:end]"),
        ("leaf[1:]", "must specify an end"),
        ("leaf[ab:cd]", "numeric or single letters"),
        ("leaf[1:3", "no closing ']'"),
    ],
)
def test_expand_hosts_errors(pattern: str, message: str) -> None:
    with pytest.raises(PatternError, match=message.replace("[", r"\[")):
        expand_hosts(pattern)


def test_thirteen_thousand_hosts_expand_quickly() -> None:
    hosts = expand_hosts("gpu-[00001:12500]")
    assert len(hosts) == 12500
    assert hosts[0] == "gpu-00001"
    assert hosts[-1] == "gpu-12500"


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ("leaf01", ("leaf01", None)),
        ("leaf01:2222", ("leaf01", 2222)),
        ("leaf[01:02]:22", ("leaf[01:02]", 22)),
        ("10.1.1.1:830", ("10.1.1.1", 830)),
        ("[fe80::1]:22", ("fe80::1", 22)),
        ("fe80::1", ("fe80::1", None)),
    ],
)
def test_split_port(entry: str, expected: tuple[str, int | None]) -> None:
    assert split_port(entry) == expected


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("all", ["all"]),
        ("spine:leaf", ["spine", "leaf"]),
        ("spine,leaf", ["spine", "leaf"]),
        (" spine , leaf ,", ["spine", "leaf"]),
        ("fabric:&pod_b:!leaf-r2-a", ["fabric", "&pod_b", "!leaf-r2-a"]),
        ("leaf[0:1]", ["leaf[0:1]"]),
        ("leaf[0:1]:spine", ["leaf[0:1]", "spine"]),
        ("fe80::1", ["fe80::1"]),
        ("10.0.0.1", ["10.0.0.1"]),
        ("~leaf-r[0-9]", ["~leaf-r[0-9]"]),
    ],
)
def test_split_host_pattern(pattern: str, expected: list[str]) -> None:
    assert split_host_pattern(pattern) == expected


def test_order_patterns() -> None:
    assert order_patterns(["!x", "a", "&b", "c", ""]) == ["a", "c", "&b", "!x"]
    assert order_patterns(["&b"]) == ["all", "&b"]


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("leaf", ("leaf", None)),
        ("leaf[0]", ("leaf", (0, None))),
        ("leaf[-2]", ("leaf", (-2, None))),
        ("leaf[1:3]", ("leaf", (1, 3))),
        ("leaf[1:]", ("leaf", (1, -1))),
        ("leaf*[0]", ("leaf*", (0, None))),
        ("~leaf[0]", ("~leaf[0]", None)),
    ],
)
def test_split_subscript(pattern: str, expected: tuple[str, object]) -> None:
    assert split_subscript(pattern) == expected


def test_apply_subscript() -> None:
    hosts = ["a", "b", "c", "d"]
    assert apply_subscript(hosts, (1, 2)) == ["b", "c"]
    assert apply_subscript(hosts, (2, -1)) == ["c", "d"]
    assert apply_subscript(hosts, (-1, None)) == ["d"]
    assert apply_subscript(hosts, None) == hosts
    with pytest.raises(IndexError):
        apply_subscript(hosts, (9, None))


@pytest.mark.parametrize(
    ("term", "name", "matches"),
    [
        ("leaf*", "leaf-r0-a", True),
        ("leaf*", "spine-01", False),
        ("leaf-r?-a", "leaf-r1-a", True),
        ("leaf", "leaf-r1-a", False),  # a glob matches the whole name
        ("~leaf-r[12]", "leaf-r1-a", True),  # a regex matches from the start only
        ("~r[12]", "leaf-r1-a", False),
        ("~.*r[12]", "leaf-r1-a", True),
    ],
)
def test_compile_term(term: str, name: str, matches: bool) -> None:
    assert compile_term(term)(name) is matches


def test_compile_term_bad_regex() -> None:
    with pytest.raises(PatternError, match="invalid host pattern"):
        compile_term("~leaf(")
