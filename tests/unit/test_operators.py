"""Every operator of the baseline language: holds, does not hold, bad operand (table-driven)."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabline.operators import OperandError, compile_operators

HOLDS: list[tuple[dict[str, Any], Any]] = [
    ({"equals": 9000}, 9000),
    ({"equals": 9000}, 9000.0),
    ({"equals": "dscp"}, "dscp"),
    ({"equals": True}, True),
    ({"equals": [3]}, [3]),
    ({"not_equals": "pcp"}, "dscp"),
    ({"one_of": ["rs", "fc"]}, "rs"),
    ({"min": 9100}, 9216),
    ({"min": 9100}, 9100),
    ({"max": 0}, 0),
    ({"range": [10000, 2000000]}, 150000),
    ({"min": 9100, "max": 9216}, 9214),
    ({"regex": r"^28\.39\."}, "28.39.1002"),
    ({"contains": [3]}, [3, 4]),
    ({"exactly": [3]}, [3]),
    ({"exactly": [3, 4]}, [4, 3]),
    ({"maps_only": {"keys": [26], "to": 3}}, {"26": 3, "48": 6, "0": 0}),
    ({"maps_only": {"keys": ["24", "26"], "to": 3}}, {"24": 3, "26": 3}),
    ({"each": {"min": -9, "max": 2}}, [-1.2, -8.9, 1.9]),
    ({"each": {"min": -9}}, []),
]

FAILS: list[tuple[dict[str, Any], Any, str]] = [
    ({"equals": 9000}, 1500, "is 1500, expected 9000"),
    ({"equals": 3}, "3", "is '3', expected 3"),
    ({"equals": 1}, True, "is true, expected 1"),
    ({"equals": True}, 1, "is 1, expected true"),
    ({"not_equals": "pcp"}, "pcp", "must not be"),
    ({"one_of": ["rs", "fc"]}, "none", "expected one of 'rs', 'fc'"),
    ({"min": 9100}, 1500, "below min 9100"),
    ({"max": 0}, 17, "above max 0"),
    ({"min": 1}, "9100", "not a number"),
    ({"min": 1}, True, "not a number"),
    ({"range": [10000, 2000000]}, 5000000, "above range 2000000"),
    ({"range": [10000, 2000000]}, 9999, "below range 10000"),
    ({"regex": r"^28\.39\."}, "22.31.1014", "does not match"),
    ({"regex": "x"}, 3, "not a string"),
    ({"contains": [3]}, [4], "missing [3]"),
    ({"contains": [3]}, "3", "not a list"),
    ({"exactly": [3]}, [3, 4], "unexpected [4]"),
    ({"exactly": [3]}, [], "missing [3]"),
    ({"exactly": [3]}, [4], "missing [3] and unexpected [4]"),
    ({"maps_only": {"keys": [26], "to": 3}}, {"26": 0}, "26 -> 0 (expected 3)"),
    ({"maps_only": {"keys": [26], "to": 3}}, {"26": 3, "24": 3, "25": 3}, "24, 25 also map to 3"),
    ({"maps_only": {"keys": [26], "to": 3}}, {"48": 6}, "26 -> 'unset'"),
    ({"maps_only": {"keys": [26], "to": 3}}, [26], "not a mapping"),
    ({"each": {"min": -9}}, [-1.0, -10.4], "[1] is -10.4, below min -9"),
    ({"each": {"min": -9}}, -10.4, "not a list"),
]

BAD_OPERANDS: list[tuple[dict[str, Any], str]] = [
    ({"min": "high"}, "min needs a number"),
    ({"range": [1]}, "range needs [low, high]"),
    ({"range": [5, 1]}, "is above high"),
    ({"regex": "("}, "invalid regex"),
    ({"one_of": 3}, "one_of needs a list"),
    ({"exactly": "3"}, "exactly needs a list"),
    ({"maps_only": {"keys": [26]}}, "maps_only needs {keys"),
    ({"each": {}}, "each needs a mapping"),
    ({"bogus": 1}, "unknown operator 'bogus'"),
]


@pytest.mark.parametrize(("spec", "value"), HOLDS, ids=[str(s) for s, _ in HOLDS])
def test_operator_holds(spec: dict[str, Any], value: Any) -> None:
    assert compile_operators(spec)(value) is None


@pytest.mark.parametrize(("spec", "value", "reason"), FAILS, ids=[f"{s}-{v}" for s, v, _ in FAILS])
def test_operator_fails_with_reason(spec: dict[str, Any], value: Any, reason: str) -> None:
    got = compile_operators(spec)(value)
    assert got is not None
    assert reason in got


@pytest.mark.parametrize(("spec", "message"), BAD_OPERANDS, ids=[str(s) for s, _ in BAD_OPERANDS])
def test_bad_operand_is_rejected_at_compile_time(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(OperandError, match=message.replace("[", r"\[").replace("{", r"\{")):
        compile_operators(spec)


_MAP_VALUES = st.one_of(st.integers(0, 4), st.sampled_from([3.0, True, False, "3", None, [3], {"3": 3}]))


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(st.sampled_from(["0", "3", "24", "26", "46", "x"]), _MAP_VALUES, max_size=6),
    st.lists(st.sampled_from(["24", "26", "3"]), min_size=1, max_size=3),
    st.sampled_from([3, 1, "3", True, 3.0]),
)
def test_maps_only_fast_path_agrees_with_the_full_comparison(
    v: dict[str, Any], keys: list[str], to: Any
) -> None:
    """The fast path (a plain dict) answers what the full comparison (any other mapping) answers."""
    predicate = compile_operators({"maps_only": {"keys": keys, "to": to}})
    assert predicate(v) == predicate(MappingProxyType(v))


@settings(max_examples=300)
@given(
    st.lists(
        st.dictionaries(st.sampled_from(["0", "3", "24", "26"]), _MAP_VALUES, max_size=4),
        min_size=1,
        max_size=6,
    ),
    st.lists(st.sampled_from(["24", "26", "3"]), min_size=1, max_size=2),
    st.sampled_from([3, 1, "3"]),
)
def test_maps_only_remembered_map_agrees_with_the_full_comparison(
    maps: list[dict[str, Any]], keys: list[str], to: Any
) -> None:
    """One predicate over many maps (it remembers the last map its fast path passed) answers each
    as the full comparison does: an equal map whose key holds 3.0 or True where 3 passed fails.
    """
    predicate = compile_operators({"maps_only": {"keys": keys, "to": to}})
    for v in maps:
        assert predicate(v) == predicate(MappingProxyType(v))


def test_maps_only_remembered_map_keeps_types_apart() -> None:
    """A map equal (==) to the one passed last is still judged on its own types: True is not 1
    (3.0 is 3, as everywhere in the baseline language)."""
    predicate = compile_operators({"maps_only": {"keys": [26], "to": 1}})
    assert predicate({"26": 1, "0": 0}) is None
    assert predicate({"26": True, "0": 0}) == "26 -> true (expected 1)"
    assert predicate({"26": 1.0, "0": 0}) is None
    assert predicate({"26": 1, "0": 0}) is None
    assert predicate({"26": 1, "0": True}) is None  # True is not 1: nothing else maps to 1
    assert predicate({"26": 1, "0": 1.0}) == "0 also maps to 1"
