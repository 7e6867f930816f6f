"""Typed comparison operators of the baseline language, compiled once into plain closures.

An expectation such as ``{path: mtu, min: 9100}`` compiles to a function from the actual value to
``None`` (holds) or a short reason (does not hold). Compilation validates operands (types,
regexes) so that a bad baseline fails at load time, and the hot loop only calls closures.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

#: Checks an actual value; returns None when it holds, else a short reason ("is 1500").
Predicate = Callable[[Any], str | None]

OPERATORS = (
    "equals",
    "not_equals",
    "one_of",
    "min",
    "max",
    "range",
    "regex",
    "contains",
    "exactly",
    "absent",
    "present",
    "maps_only",
    "each",
)

# Operators that look at whether the path exists rather than at a value.
EXISTENCE_OPERATORS = frozenset({"absent", "present"})


class OperandError(ValueError):
    """An operator was given an operand of the wrong type or shape."""


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


_SCALARS = (int, str, float)
_NUMBER_TYPES = frozenset({int, float})

#: A sufficient test that a predicate holds, as Python source over ``{v}`` and the constants
#: ``{0}``, ``{1}``, ... (each the ``repr``-free name of an argument), with those constants: what
#: generated code may test in line before calling the predicate (:func:`inline_test`).
Inline = tuple[str, tuple[Any, ...]]

_TYPE_NAMES = {int: "int", str: "str", bool: "bool", float: "float"}


def inline_test(predicate: Predicate) -> Inline | None:
    """The predicate's in-line test (None: it has none). When the test is true the predicate
    returns None for that value; when it is false the predicate decides.

    Example:
        >>> test, consts = inline_test(compile_operators({"equals": 9100}))
        >>> test.format("x", "k0"), consts
        ('type(x) is int and x == k0', (9100,))
        >>> inline_test(compile_operators({"min": 1, "max": 2})) is None
        True
    """
    return getattr(predicate, "inline", None)


def _with_inline(predicate: Predicate, test: str, *consts: Any) -> Predicate:
    predicate.inline = (test, consts)  # type: ignore[attr-defined]
    return predicate


def _same(a: Any, b: Any) -> bool:
    """Equality where 9000 == 9000.0 but True != 1 and "3" != 3."""
    ta = type(a)
    if ta is type(b) and ta in _SCALARS:  # the common case, first
        return bool(a == b)
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if _is_number(a) and _is_number(b):
        return bool(a == b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _fmt(value: Any) -> str:
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _number(name: str, operand: Any) -> float:
    if not _is_number(operand):
        raise OperandError(f"{name} needs a number, got {_fmt(operand)}")
    return float(operand)


def _as_list(name: str, operand: Any) -> list[Any]:
    if not isinstance(operand, list):
        raise OperandError(f"{name} needs a list, got {_fmt(operand)}")
    return list(operand)


def _compile_equals(name: str, operand: Any) -> Predicate:
    """``equals: V``: the value is V (1 and 1.0 are the same; True is not 1)."""
    op_type = type(operand)

    def equals(v: Any) -> str | None:
        if type(v) is op_type and v == operand:
            return None
        return None if _same(v, operand) else f"is {_fmt(v)}, expected {_fmt(operand)}"

    if op_type in _TYPE_NAMES:
        return _with_inline(equals, f"type({{0}}) is {_TYPE_NAMES[op_type]} and {{0}} == {{1}}", operand)
    return equals


def _compile_not_equals(name: str, operand: Any) -> Predicate:
    """``not_equals: V``: the value is anything but V."""

    def not_equals(v: Any) -> str | None:
        return f"is {_fmt(v)}, must not be" if _same(v, operand) else None

    return not_equals


def _compile_one_of(name: str, operand: Any) -> Predicate:
    """``one_of: [A, B]``: the value is one of them."""
    choices = _as_list(name, operand)

    def one_of(v: Any) -> str | None:
        if any(_same(v, c) for c in choices):
            return None
        return f"is {_fmt(v)}, expected one of {', '.join(map(_fmt, choices))}"

    return one_of


def _compile_bounds(name: str, operand: Any) -> Predicate:
    """``min: N``, ``max: N``, ``range: [LOW, HIGH]``: a number within the bounds (inclusive)."""
    if name == "range":
        bounds = _as_list(name, operand)
        if len(bounds) != 2:
            raise OperandError(f"range needs [low, high], got {_fmt(operand)}")
        lo, hi = _number("range", bounds[0]), _number("range", bounds[1])
        if lo > hi:
            raise OperandError(f"range low {bounds[0]} is above high {bounds[1]}")
    elif name == "min":
        lo, hi = _number(name, operand), math.inf
    else:
        lo, hi = -math.inf, _number(name, operand)

    def bounded(v: Any) -> str | None:
        tv = type(v)
        if (tv is int or tv is float) and lo <= v <= hi:
            return None
        if not _is_number(v):
            return f"is {_fmt(v)}, not a number"
        if v < lo:
            return f"is {_fmt(v)}, below {name} {_fmt(operand if name != 'range' else operand[0])}"
        if v > hi:
            return f"is {_fmt(v)}, above {name} {_fmt(operand if name != 'range' else operand[1])}"
        return None

    number = "(type({0}) is int or type({0}) is float)"
    if name == "min":
        return _with_inline(bounded, number + " and {1} <= {0}", lo)
    if name == "max":
        return _with_inline(bounded, number + " and {0} <= {1}", hi)
    return _with_inline(bounded, number + " and {1} <= {0} <= {2}", lo, hi)


def _compile_regex(name: str, operand: Any) -> Predicate:
    """``regex: RX``: a string with a match of RX (``re.search``)."""
    if not isinstance(operand, str):
        raise OperandError(f"regex needs a string, got {_fmt(operand)}")
    try:
        rx = re.compile(operand)
    except re.error as exc:
        raise OperandError(f"invalid regex {operand!r}: {exc}") from None

    def regex(v: Any) -> str | None:
        if not isinstance(v, str):
            return f"is {_fmt(v)}, not a string"
        return None if rx.search(v) else f"is {_fmt(v)}, does not match /{operand}/"

    return regex


def _compile_contains(name: str, operand: Any) -> Predicate:
    """``contains: [A, B]``: a list holding each of them (and maybe more)."""
    wanted = _as_list(name, operand)

    def contains(v: Any) -> str | None:
        if not isinstance(v, list):
            return f"is {_fmt(v)}, not a list"
        missing = [w for w in wanted if not any(_same(w, x) for x in v)]
        return f"is {_fmt(v)}, missing {_fmt(missing)}" if missing else None

    if len(wanted) == 1 and type(wanted[0]) in _TYPE_NAMES:
        # The usual list: its first item is the one wanted.
        kind = _TYPE_NAMES[type(wanted[0])]
        return _with_inline(
            contains,
            f"type({{0}}) is list and {{0}} and type({{0}}[0]) is {kind} and {{0}}[0] == {{1}}",
            wanted[0],
        )
    return contains


def _compile_exactly(name: str, operand: Any) -> Predicate:
    """``exactly: [A, B]``: a list holding exactly them, in any order."""
    wanted = _as_list(name, operand)
    wanted_types = [type(w) for w in wanted]

    def exactly(v: Any) -> str | None:
        if type(v) is list and v == wanted and [type(x) for x in v] == wanted_types:
            return None
        if not isinstance(v, list):
            return f"is {_fmt(v)}, not a list"
        missing = [w for w in wanted if not any(_same(w, x) for x in v)]
        extra = [x for x in v if not any(_same(w, x) for w in wanted)]
        if not missing and not extra:
            return None
        parts = []
        if missing:
            parts.append(f"missing {_fmt(missing)}")
        if extra:
            parts.append(f"unexpected {_fmt(extra)}")
        return f"is {_fmt(v)}, {' and '.join(parts)}"

    if not wanted:
        return _with_inline(exactly, "type({0}) is list and not {0}")
    if len(wanted) <= 4 and all(type(w) in _TYPE_NAMES for w in wanted):
        # The same items in the same order, each of the same type (the predicate's own fast path).
        test = f"type({{0}}) is list and len({{0}}) == {len(wanted)}" + "".join(
            f" and type({{0}}[{i}]) is {_TYPE_NAMES[type(w)]} and {{0}}[{i}] == {{{i + 1}}}"
            for i, w in enumerate(wanted)
        )
        return _with_inline(exactly, test, *wanted)
    return exactly


def _compile_each(name: str, operand: Any) -> Predicate:
    """``each: {OPERATORS}``: every item of a list meets the operators."""
    if not isinstance(operand, Mapping) or not operand:
        raise OperandError("each needs a mapping of operators, e.g. {min: -9}")
    inner = compile_operators(operand)
    bounds_only = set(operand) <= {"min", "max"} and all(_is_number(x) for x in operand.values())
    lo = operand.get("min", -math.inf) if bounds_only else 0
    hi = operand.get("max", math.inf) if bounds_only else 0

    def each(v: Any) -> str | None:
        # Fast path for per-lane numeric bounds (optics): no per-item call when all hold.
        if (
            bounds_only
            and type(v) is list
            and _NUMBER_TYPES.issuperset(map(type, v))
            and (not v or (lo <= min(v) and max(v) <= hi))
        ):
            return None
        if not isinstance(v, list):
            return f"is {_fmt(v)}, not a list"
        for i, item in enumerate(v):
            reason = inner(item)
            if reason:
                return f"[{i}] {reason}"
        return None

    if bounds_only:
        # The fast path above, in line in a rule's scan (three optics rules a port: no call each)
        return _with_inline(
            each,
            "type({0}) is list and {1}.issuperset(map(type, {0})) and (not {0} or ({2} <= min({0}) and max({0}) <= {3}))",
            _NUMBER_TYPES, lo, hi,
        )  # fmt: skip
    return each


def _compile_maps_only(name: str, operand: Any) -> Predicate:
    """``maps_only: {keys: [26], to: 3}``: those keys map to the value, and no other key does."""
    if not isinstance(operand, Mapping) or set(operand) != {"keys", "to"}:
        raise OperandError("maps_only needs {keys: [...], to: VALUE}")
    keys = [str(k) for k in _as_list("maps_only.keys", operand["keys"])]
    keyset = frozenset(keys)
    target = operand["to"]
    target_type = type(target)
    fast = target_type is int or target_type is str

    passed: list[Any] = [None]  # the last map the fast path passed
    only = keys[0] if len(keyset) == 1 else None

    def maps_only(v: Any) -> str | None:
        # Fast path (a DSCP map of 64 entries on every port): exactly as many values equal the
        # target as there are keys, and each key maps to it (same type): then no other key does.
        if fast and type(v) is dict:
            # The map the fast path passed last, again (every port of a device): equal dicts (a C
            # compare, 0.5 us) have as many values equal to the target, so only the keys' types
            # are left to test (the count below builds a list of 64 values: 1.3 us a port).
            if v == passed[0] and (
                type(v.get(only)) is target_type
                if only is not None
                else all(type(v.get(k)) is target_type for k in keyset)
            ):
                return None
            if list(v.values()).count(target) == len(keyset) and all(
                type(x := v.get(k)) is target_type and x == target for k in keyset
            ):
                passed[0] = v
                return None
        if not isinstance(v, Mapping):
            return f"is {_fmt(v)}, not a mapping"
        wrong = [k for k in keys if k not in v or not _same(v[k], target)]
        # ``val == target`` first: a C-level compare that rules out almost every entry cheaply.
        others = sorted(
            (str(k) for k, val in v.items() if val == target and _same(val, target) and str(k) not in keyset),
            key=_natural,
        )
        parts = []
        if wrong:
            parts.append(
                ", ".join(f"{k} -> {_fmt(v.get(k, 'unset'))}" for k in wrong) + f" (expected {_fmt(target)})"
            )
        if others:
            verb = "maps" if len(others) == 1 else "map"
            parts.append(f"{', '.join(others)} also {verb} to {_fmt(target)}")
        return "; ".join(parts) or None

    return maps_only


#: Operator name -> the function compiling its operand into a predicate.
_COMPILERS: dict[str, Callable[[str, Any], Predicate]] = {
    "equals": _compile_equals,
    "not_equals": _compile_not_equals,
    "one_of": _compile_one_of,
    "min": _compile_bounds,
    "max": _compile_bounds,
    "range": _compile_bounds,
    "regex": _compile_regex,
    "contains": _compile_contains,
    "exactly": _compile_exactly,
    "maps_only": _compile_maps_only,
    "each": _compile_each,
}


def _compile_one(name: str, operand: Any) -> Predicate:
    compiler = _COMPILERS.get(name)
    if compiler is None:
        raise OperandError(f"unknown operator {name!r}")
    return compiler(name, operand)


def _natural(key: str) -> tuple[int, str]:
    return (int(key), "") if key.isdigit() else (10**9, key)


def compile_operators(spec: Mapping[str, Any]) -> Predicate:
    """Compile a mapping of operator -> operand (all must hold) into one predicate.

    ``absent``/``present`` are handled by the caller (they are about the path, not a value).

    Example:
        >>> check = compile_operators({"min": 9100, "max": 9216})
        >>> check(9216) is None, check(1500)
        (True, 'is 1500, below min 9100')

    Raises:
        OperandError: Unknown operator or bad operand.
    """
    preds = [_compile_one(name, operand) for name, operand in spec.items() if name not in EXISTENCE_OPERATORS]
    if len(preds) == 1:
        return preds[0]

    def all_of(v: Any) -> str | None:
        for p in preds:
            reason = p(v)
            if reason:
                return reason
        return None

    return all_of
