"""A fast validator of the state schema's types and ranges, compiled once from the JSON Schema.

Every collected device's parsed fragments are checked (``fabline.platforms.dispatch``, through
:func:`fabline.state.schema_problem`, which compiles the state schema with this module): that is
every output of every collection, so the check must cost little. This module knows no schema of
its own and imports nothing of fabline. This compiles the
subset of JSON Schema the state schema uses (``type``, ``enum``, ``const``, ``minimum``,
``maximum``, ``properties``, ``additionalProperties``, ``items``, ``propertyNames`` patterns) into
plain closures, several times faster than a general validator on the same documents; keys already
found valid for a pattern are remembered. The first problem is returned as ``path message``, in the
words jsonschema uses.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

Check = Callable[[Any], "str | None"]

_TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: type(v) is dict,
    "array": lambda v: type(v) is list,
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: v is True or v is False,
    "null": lambda v: v is None,
    "integer": lambda v: (type(v) is int) or (type(v) is float and v.is_integer()),
    "number": lambda v: type(v) in (int, float),
}


def compile_schema(spec: dict[str, Any]) -> Check:
    """A checker for one schema node: the value -> None when valid, else the problem.

    Example:
        >>> check = compile_schema({"type": "object", "properties": {"mtu": {"type": "integer", "maximum": 9}}})
        >>> check({"mtu": 9}), problem_text(check({"mtu": 10}))
        (None, 'mtu: 10 is greater than the maximum of 9')
    """
    steps: list[Check] = []
    kind = spec.get("type")
    if kind is not None:
        names = kind if isinstance(kind, list) else [kind]
        tests = [_TYPES[n] for n in names]
        label = names[0] if len(names) == 1 else names

        def typed(v: Any) -> str | None:
            for t in tests:
                if t(v):
                    return None
            return f"{v!r:.60} is not of type {label!r}"

        steps.append(typed)
    if "enum" in spec:
        allowed = spec["enum"]

        def enum(v: Any) -> str | None:
            return None if v in allowed and type(v) is str else f"{v!r:.60} is not one of {allowed!r}"

        steps.append(enum)
    if "const" in spec:
        const = spec["const"]
        steps.append(lambda v: None if v == const else f"{v!r:.60} was expected to be {const!r}")
    low, high = spec.get("minimum"), spec.get("maximum")
    if low is not None or high is not None:

        def bounded(v: Any) -> str | None:
            if type(v) not in (int, float):
                return None
            # math.isnan(int) converts to float: an int past 1.8e308 (a run of digits a fuzzed
            # output can hold) would raise OverflowError instead of failing the bound.
            if type(v) is float and math.isnan(v):
                return "nan is not a number"
            if low is not None and v < low:
                return f"{v!r:.60} is less than the minimum of {low}"
            if high is not None and v > high:
                return f"{v!r:.60} is greater than the maximum of {high}"
            return None

        steps.append(bounded)
    if "properties" in spec or "additionalProperties" in spec or "propertyNames" in spec:
        steps.append(_object_check(spec))
    if "items" in spec:
        item = compile_schema(spec["items"])

        def items(v: Any) -> str | None:
            if type(v) is not list:
                return None
            for i, x in enumerate(v):
                problem = item(x)
                if problem:
                    return _nest(f"[{i}]", problem)
            return None

        steps.append(items)
    if len(steps) == 1:
        return steps[0]

    def all_of(v: Any) -> str | None:
        for step in steps:
            problem = step(v)
            if problem:
                return problem
        return None

    return all_of


_SCALAR_TYPES = {"integer": (int,), "number": (int, float), "string": (str,), "boolean": (bool,)}


def _scalar(spec: dict[str, Any]) -> tuple[tuple[type, ...], Any, Any, Any] | None:
    """(exact types, minimum, maximum, enum) of a plain scalar property, checked inline; else None."""
    if not set(spec) <= {"type", "minimum", "maximum", "enum", "description"}:
        return None
    if "enum" in spec:
        return (str,), None, None, frozenset(spec["enum"])
    kind = spec.get("type")
    if not isinstance(kind, str) or kind not in _SCALAR_TYPES:
        return None
    return _SCALAR_TYPES[kind], spec.get("minimum"), spec.get("maximum"), None


def _object_check(spec: dict[str, Any]) -> Check:
    props = {k: compile_schema(v) for k, v in spec.get("properties", {}).items()}
    # Scalar properties (mtu, admin_up, fec) are tested inline: no call per field in the hot loop.
    scalars = {k: sc for k, v in spec.get("properties", {}).items() if (sc := _scalar(v)) is not None}
    extra = spec.get("additionalProperties")
    other = compile_schema(extra) if isinstance(extra, dict) else None
    pattern = (spec.get("propertyNames") or {}).get("pattern")
    name_rx = re.compile(pattern) if pattern else None
    good_names: set[str] = set()
    # A map of plain numbers (dscp_to_priority, pfc_rx_pause): its keys and values are checked by
    # set and min/max passes in C, not one call per entry (a fragment holds thousands of them).
    fast = not props and isinstance(extra, dict) and set(extra) <= {"type", "minimum", "maximum"}
    fast_types = {int} if fast and extra.get("type") == "integer" else None  # type: ignore[union-attr]
    fast_low = extra.get("minimum") if fast else None  # type: ignore[union-attr]
    fast_high = extra.get("maximum") if fast else None  # type: ignore[union-attr]

    def obj(v: Any) -> str | None:
        if type(v) is not dict:
            return None
        if (
            fast_types is not None
            and (name_rx is None or good_names.issuperset(v))
            and set(map(type, v.values())) <= fast_types
            and (fast_low is None or not v or min(v.values()) >= fast_low)
            and (fast_high is None or not v or max(v.values()) <= fast_high)
        ):
            return None
        for key, value in v.items():
            if name_rx is not None and key not in good_names:
                if not (isinstance(key, str) and name_rx.search(key)):
                    return f"{key!r:.40} does not match {pattern!r}"
                if len(good_names) < 4096:
                    good_names.add(key)
            scalar = scalars.get(key)
            if scalar is not None:
                types, low, high, enum = scalar
                if (
                    type(value) in types
                    and (low is None or value >= low)
                    and (high is None or value <= high)
                    and (enum is None or value in enum)
                ):
                    continue  # else the full check below names the problem (or accepts 9100.0)
            check = props.get(key, other)
            if check is not None:
                problem = check(value)
                if problem:
                    return _nest(str(key), problem)
        return None

    return obj


def _nest(step: str, problem: str) -> str:
    """Prefix a child's problem with its key: ``a`` + ``b: msg`` -> ``a.b: msg``; ``[1]`` joins bare."""
    if problem.startswith("\x00"):
        path, _, message = problem[1:].partition("\x00")
        joined = f"{step}{path}" if path.startswith("[") else f"{step}.{path}"
        return f"\x00{joined}\x00{message}"
    return f"\x00{step}\x00{problem}"


def problem_text(problem: str) -> str:
    """``path message`` of a checker's problem (the path is empty for the document itself)."""
    if problem.startswith("\x00"):
        path, _, message = problem[1:].partition("\x00")
        return f"{path}: {message}"
    return problem
