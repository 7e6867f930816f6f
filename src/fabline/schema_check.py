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

    A valid document (the usual case) is accepted by one generated function (:func:`compile_accept`);
    only a document it does not accept is walked by the closures, which name the first problem.

    Example:
        >>> check = compile_schema({"type": "object", "properties": {"mtu": {"type": "integer", "maximum": 9}}})
        >>> check({"mtu": 9}), problem_text(check({"mtu": 10}))
        (None, 'mtu: 10 is greater than the maximum of 9')
    """
    accept = compile_accept(spec)
    explain = _compile(spec)

    def check(v: Any) -> str | None:
        return None if accept(v) else explain(v)

    return check


def _compile(spec: dict[str, Any]) -> Check:
    """The closures of one schema node (the value -> None when valid, else the problem)."""
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
        item = _compile(spec["items"])

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
    props = {k: _compile(v) for k, v in spec.get("properties", {}).items()}
    # Scalar properties (mtu, admin_up, fec) are tested inline: no call per field in the hot loop.
    scalars = {k: sc for k, v in spec.get("properties", {}).items() if (sc := _scalar(v)) is not None}
    extra = spec.get("additionalProperties")
    other = _compile(extra) if isinstance(extra, dict) else None
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


# --------------------------------------------------------------------------------------------
# the accept-only fast path: Python source generated from the schema


def compile_accept(spec: dict[str, Any]) -> Callable[[Any], bool]:
    """A function that says True only of a value the closures (:func:`_compile`) find valid.

    Generated as Python source from the schema: straight-line type and range tests, one lookup
    per declared property, no call per scalar field. It is conservative: what it cannot decide
    cheaply (an integer written ``9100.0``, a string subclass, a NaN next to a bound) it refuses,
    and the closures decide.

    Example:
        >>> accept = compile_accept({"type": "object", "properties": {"mtu": {"type": "integer", "maximum": 9}}})
        >>> accept({"mtu": 9}), accept({"mtu": 10}), accept({"mtu": 9.0}), accept({"other": "x"})
        (True, False, False, True)
    """
    gen = _AcceptGen()
    entry = gen.function(spec)
    namespace: dict[str, Any] = dict(gen.consts)
    # The source names only the schema's keywords; every value of the schema is passed as a constant.
    exec(compile("\n".join(gen.lines), "<fabline.schema_check accept>", "exec"), namespace)
    return namespace[entry]  # type: ignore[no-any-return]


_ACCEPT_TYPES = {
    "object": "type({x}) is dict",
    "array": "type({x}) is list",
    "string": "type({x}) is str",
    "boolean": "({x} is True or {x} is False)",
    "null": "{x} is None",
    "integer": "type({x}) is int",
    "number": "(type({x}) is int or type({x}) is float)",
}

_ACCEPT_MISSING = object()


class _AcceptGen:
    """Builds the source of :func:`compile_accept`: ``lines`` and the ``consts`` they name."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.consts: dict[str, Any] = {"_MISSING": _ACCEPT_MISSING}
        self._names = 0

    def _name(self, prefix: str) -> str:
        self._names += 1
        return f"{prefix}{self._names}"

    def const(self, value: Any) -> str:
        name = self._name("_c")
        self.consts[name] = value
        return name

    def function(self, spec: dict[str, Any]) -> str:
        """A function accepting ``spec``'s values; returns its name (its source goes to ``lines``)."""
        name = self._name("_accept")
        body: list[str] = []
        self.node(spec, "x", body, 1)
        self.lines += [f"def {name}(x):", *body, "    return True", ""]
        return name

    def node(self, spec: dict[str, Any], x: str, out: list[str], depth: int) -> None:
        """Lines (at ``depth``) that return False when ``x`` is not accepted by ``spec``."""
        pad = "    " * depth
        kind = spec.get("type")
        if kind is not None:
            names = kind if isinstance(kind, list) else [kind]
            tests = " or ".join(_ACCEPT_TYPES[n].format(x=x) for n in names)
            out.append(f"{pad}if not ({tests}): return False")
        if "enum" in spec:
            allowed = self.const(frozenset(v for v in spec["enum"] if type(v) is str))
            out.append(f"{pad}if not (type({x}) is str and {x} in {allowed}): return False")
        if "const" in spec:
            const = self.const(spec["const"])
            out.append(f"{pad}if not ({x} == {const}): return False")
        low, high = spec.get("minimum"), spec.get("maximum")
        if low is not None or high is not None:
            # A NaN fails every comparison, so it is refused here (the closures name it).
            bounds = []
            if low is not None:
                bounds.append(f"{self.const(low)} <= {x}")
            if high is not None:
                bounds.append(f"{x} <= {self.const(high)}")
            number = _ACCEPT_TYPES["number"].format(x=x)
            out.append(f"{pad}if {number} and not ({' and '.join(bounds)}): return False")
        if "properties" in spec or "additionalProperties" in spec or "propertyNames" in spec:
            sub = self.object_function(spec)
            out.append(f"{pad}if type({x}) is dict and not {sub}({x}): return False")
        if "items" in spec:
            y = self._name("y")
            lines: list[str] = []
            self.node(spec["items"], y, lines, depth + 2)
            if lines:
                out += [f"{pad}if type({x}) is list:", f"{pad}    for {y} in {x}:", *lines]

    def object_function(self, spec: dict[str, Any]) -> str:
        """A function accepting a dict under ``spec``'s object keywords (the caller tested the type)."""
        name = self._name("_object")
        pad = "    "
        body: list[str] = []
        props: dict[str, Any] = spec.get("properties", {})
        extra = spec.get("additionalProperties")
        other = extra if isinstance(extra, dict) else None
        pattern = (spec.get("propertyNames") or {}).get("pattern")
        if pattern:
            good = self.const(set())  # names already found valid, shared by every call (bounded)
            match = self.const(re.compile(pattern).search)
            k = self._name("k")
            body += [
                f"{pad}if not {good}.issuperset(x):",
                f"{pad}    for {k} in x:",
                f"{pad}        if {k} not in {good}:",
                f"{pad}            if not (type({k}) is str and {match}({k})): return False",
                f"{pad}            if len({good}) < 4096: {good}.add({k})",
            ]
        for key, prop in props.items():
            y = self._name("y")
            lines: list[str] = []
            self.node(prop, y, lines, 2)
            if lines:
                body += [f"{pad}{y} = x.get({key!r}, _MISSING)", f"{pad}if {y} is not _MISSING:", *lines]
        if other is not None:
            y = self._name("y")
            if not props and other.get("type") == "integer" and set(other) <= {"type", "minimum", "maximum"}:
                # A map of plain integers (dscp_to_priority): set and min/max passes in C.
                checks = [f"set(map(type, v)) <= {self.const(frozenset({int}))}"]
                if other.get("minimum") is not None:
                    checks.append(f"min(v) >= {self.const(other['minimum'])}")
                if other.get("maximum") is not None:
                    checks.append(f"max(v) <= {self.const(other['maximum'])}")
                body += [f"{pad}v = x.values()", f"{pad}if v and not ({' and '.join(checks)}): return False"]
            else:
                lines = []
                self.node(other, y, lines, 3 if props else 2)
                if lines and props:
                    k = self._name("k")
                    known = self.const(frozenset(props))
                    body += [f"{pad}for {k}, {y} in x.items():", f"{pad}    if {k} not in {known}:", *lines]
                elif lines:
                    body += [f"{pad}for {y} in x.values():", *lines]
        self.lines += [f"def {name}(x):", *body, f"{pad}return True", ""]
        return name
