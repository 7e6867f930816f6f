"""The generated accept-only path of the state schema checker never accepts what the closures refuse.

:func:`fabline.schema_check.compile_accept` is a fast path: a state it accepts is not walked by
the closures that name problems. So it must be conservative (accepting only valid values), and it
must accept the valid states a collection yields (else it saves nothing).
"""

from __future__ import annotations

import copy
import json
import math
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabline import schema_check
from fabline.state import schema_document, schema_problem
from fabline.synthetic import lab_fabric, plane_fabric, states
from tests.conftest import REPO_ROOT


def _schema() -> dict[str, Any]:
    schema = schema_document()
    schema.pop("required", None)
    return schema


ACCEPT = schema_check.compile_accept(_schema())
EXPLAIN = schema_check._compile(_schema())


class Sub(str):
    """A string subclass (an :class:`fabline.state.Invalid` is one)."""


#: Values that break, or sit at the edge of, the schema's types and ranges.
HOSTILE: list[Any] = [
    None, True, False, 0, -1, 1, 7, 8, 63, 64, 9100, 9100.0, 9100.5, 1e308, -1e308, math.inf, -math.inf,
    math.nan, 10**30, "", "x", "rs", "dscp", "9100", Sub("rs"), [], [1], [3, 9], [True], [1.5], ["a"],
    {}, {"3": 0}, {"9": 0}, {"x": 1}, {"3": True}, {"3": 1.0}, {"64": 0}, {"26": 8}, {"0": -1},
]  # fmt: skip


def _states() -> list[dict[str, Any]]:
    found = [
        json.loads(p.read_text("utf-8"))
        for p in sorted((REPO_ROOT / "examples/lab-snapshot/state").glob("*.json"))
    ]
    found += list(states(lab_fabric()))
    found += list(states(plane_fabric(16, rails=2, planes_per_rail=1, radix=16)))[:12]
    return found


STATES = _states()
SMALL = [doc for doc in STATES if len(doc.get("interfaces") or {}) <= 8]


def _leaves(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _leaves(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _leaves(v, (*path, i))
    return out


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        doc = doc[part]
    return doc


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> None:
    _get(doc, path[:-1])[path[-1]] = value


def _agrees(doc: Any) -> bool:
    """Accepted implies valid; the public checker says the same as the closures. True: valid."""
    accepted = ACCEPT(doc)
    problem = EXPLAIN(doc)
    if accepted:
        assert problem is None, f"accepted but the closures say {schema_check.problem_text(problem)}"
    checker_says = schema_problem(doc)
    assert (checker_says is None) == (problem is None)
    return problem is None


def test_the_states_a_collection_yields_are_accepted() -> None:
    assert len(STATES) > 10
    for doc in STATES:
        assert EXPLAIN(doc) is None
        assert ACCEPT(doc) is True, doc.get("name")


def test_every_field_replaced_by_a_hostile_value() -> None:
    """Each field of each state, in turn, set to each hostile value: never accepted when invalid."""
    rng = random.Random(14)
    refused = 0
    for doc in copy.deepcopy(SMALL):
        paths = [p for p in _leaves(doc) if p]
        for path in rng.sample(paths, min(len(paths), 40)):
            parent = _get(doc, path[:-1])
            kept = parent[path[-1]]
            for value in HOSTILE:
                parent[path[-1]] = value
                refused += not _agrees(doc)
            parent[path[-1]] = kept
    assert refused > 1000  # the mutations do reach invalid documents


def test_added_keys_and_edge_values() -> None:
    doc = copy.deepcopy(STATES[0])
    port = next(iter(doc["interfaces"].values()))
    for key in (
        "dscp_to_priority",
        "pfc_priorities",
        "ecn",
        "counters",
        "optics",
        "lldp",
        "nic",
        "new_field",
    ):
        for value in HOSTILE:
            bad = copy.deepcopy(doc)
            next(iter(bad["interfaces"].values()))[key] = value
            _agrees(bad)
    # The integer written as a float is valid (the closures say so), only not decided fast.
    port["mtu"] = 9100.0
    assert ACCEPT(doc) is False and EXPLAIN(doc) is None and schema_problem(doc) is None
    port["mtu"] = 9100.5
    assert schema_problem(doc) is not None and "mtu" in schema_problem(doc)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=4)
    | st.sampled_from(["rs", "dscp", "3", "26", "Ethernet0", "identity"]),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.sampled_from(["0", "3", "7", "9", "26", "63", "64", "x", "mtu", "enabled"]), children, max_size=4),
    max_leaves=12,
)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_random_values_at_random_places(data: st.DataObject) -> None:
    doc = copy.deepcopy(SMALL[data.draw(st.integers(0, len(SMALL) - 1))])
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from([p for p in _leaves(doc) if p]))
        _set(doc, path, data.draw(json_values))
    _agrees(doc)


@pytest.mark.parametrize("spec", [
    {"type": "object", "properties": {"a": {"type": ["integer", "null"], "minimum": 0}}},
    {"type": "object", "propertyNames": {"pattern": "^[0-7]$"}, "additionalProperties": {"type": "integer", "maximum": 7}},
    {"type": "object", "properties": {"k": {"const": "x"}, "e": {"enum": ["a", "b"]}}, "additionalProperties": {"type": "string"}},
    {"type": "array", "items": {"type": "number", "minimum": -5, "maximum": 5}},
])  # fmt: skip
def test_small_schemas(spec: dict[str, Any]) -> None:
    accept, explain = schema_check.compile_accept(spec), schema_check._compile(spec)
    values: list[Any] = [
        *HOSTILE,
        {"a": 1},
        {"a": None},
        {"a": -1},
        {"k": "x", "e": "a", "z": "s"},
        {"e": "c"},
        [1, -5, 5.0],
        [6],
    ]
    for v in values:
        if accept(v):
            assert explain(v) is None, v
    assert accept(values[-2]) == (spec.get("type") == "array")
