"""Declarative baseline rules compiled into closures that run over one device's state.

A rule is compiled once per distinct set of the inventory values its templates use, so the hot
loop is a dict walk and a function call per expectation. Non-pass results are plain slot objects.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from fabline.baseline import Expectation, Rule, severity_of
from fabline.checks import peer_role
from fabline.errors import ConfigError
from fabline.inventory import Named
from fabline.operators import OperandError, Predicate, compile_operators, inline_test
from fabline.results import Result, Severity, Status, bound_result
from fabline.state import Invalid, unsupported_reason
from fabline.templating import TemplateValueError, render, variables_of

_MISSING: Any = object()


class DeviceLike(Named, Protocol):
    """What the engine needs of an inventory device."""

    @property
    def groups(self) -> tuple[str, ...]:
        """Inventory groups the device is in."""
        ...

    @property
    def vars(self) -> Mapping[str, Any]:
        """Inventory variables (merged, templated)."""
        ...


@dataclass(frozen=True, slots=True)
class _Exp:
    """One compiled expectation."""

    path: str
    parts: tuple[str, ...]
    ops: dict[str, Any]
    predicate: Predicate | None
    existence: str | None  # "absent" | "present" | None
    on_missing: str
    single: str | None  # the key, for one-part paths (most of them): a plain dict lookup


class Unreadable(dict[str, Any]):
    """An interface a rule selects but cannot judge: named in the inventory and absent from the
    state, or selected on a field whose value is invalid. Evaluates to ``error`` with ``reason``.
    """

    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason


def _walk(obj: Any, parts: tuple[str, ...]) -> Any:
    for part in parts:
        if type(obj) is dict or isinstance(obj, Mapping):
            obj = obj.get(part, _MISSING)
            if obj is _MISSING:
                return _MISSING
        elif isinstance(obj, list) and part.isdigit() and int(part) < len(obj):
            obj = obj[int(part)]
        else:
            return _MISSING
    return obj


def _compile_exp(exp: Expectation, context: Mapping[str, Any]) -> _Exp:
    ops = render(exp.operators(), context)
    path = str(render(exp.path, context))
    existence = "absent" if "absent" in ops else "present" if "present" in ops else None
    value_ops = {k: v for k, v in ops.items() if k not in ("absent", "present")}
    predicate = compile_operators(value_ops) if value_ops else None
    parts = tuple(path.split("."))
    return _Exp(path, parts, ops, predicate, existence, exp.on_missing, parts[0] if len(parts) == 1 else None)


@dataclass
class _Compiled:
    exps: list[_Exp]
    when: list[_Exp]
    expected: dict[str, Any]
    #: Preconditions then expectations: the fast path only asks "does all of it hold?".
    checks: tuple[_Exp, ...] = ()
    #: The predicates of ``checks`` that have one, in order (the arguments of the scan).
    predicates: tuple[Predicate, ...] = ()
    #: The generated scan of this rule's shape, once looked up (:meth:`RuleProgram.scan`).
    scan: Scan | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        self.checks = (*self.when, *self.exps)
        self.predicates = tuple(e.predicate for e in self.checks if e.predicate is not None)

    @property
    def shape(self) -> tuple[Any, ...]:
        """What the scan's code depends on: each check's path, existence test, whether it has a
        predicate, and what it is (``when``, ``exp``, or ``skip``: an expectation whose absence is
        skipped when another expectation answers, ``on_missing: skip``).
        """
        n_when = len(self.when)
        return tuple(
            (
                e.parts,
                e.existence,
                e.predicate is not None,
                "when" if i < n_when else "skip" if e.on_missing == "skip" and e.existence is None else "exp",
            )
            for i, e in enumerate(self.checks)
        )


#: A rule's scan of a device's selected interfaces: ``scan(bodies, predicates)`` -> the positions
#: of the bodies the fast path cannot pass (each then goes through :meth:`RuleProgram.evaluate`).
Scan = Callable[[list[Mapping[str, Any]], tuple[Predicate, ...]], list[int]]


def compile_scan(shape: tuple[Any, ...]) -> Scan:
    """The fast path of :meth:`RuleProgram.evaluate` over all of a device's bodies, as generated code.

    A body passes only when it is a plain dict and every check holds the way the fast path of
    ``evaluate`` decides it (value present, not :class:`~fabline.state.Invalid`, the predicate
    says nothing; or absent where ``absent`` is expected). Everything else, including a value
    reached through a list or a non-dict mapping, is returned for ``evaluate`` to judge: the scan
    only saves the calls, it never decides a result. One thing it decides that ``evaluate``'s own
    fast path leaves to ``evaluate_fully``: an absent ``on_missing: skip`` expectation (``skip`` in
    the shape) passes when every other expectation holds and at least one expectation was answered
    (a platform that has some of several alternative counters); when none was, the body is returned.

    Example:
        >>> scan = compile_scan(((("mtu",), None, True, "exp"),))
        >>> scan([{"mtu": 9100}, {"mtu": 1500}, {}], (lambda v: None if v == 9100 else "is 1500",))
        [1, 2]
        >>> either = compile_scan(((("a",), None, True, "skip"), (("b",), None, True, "skip")))
        >>> either([{"a": 0}, {"b": 0}, {}, {"a": 1}], (lambda v: v and "above", lambda v: v and "above"))
        [2, 3]
    """
    lines = ["def scan(bodies, predicates):"]
    n_pred = sum(1 for _, _, has, _ in shape if has)
    n_exps = sum(1 for *_, kind in shape if kind != "when")
    skips = any(kind == "skip" for *_, kind in shape)
    if n_pred:
        lines.append(
            f"    {', '.join(f'p{i}' for i in range(n_pred))}{',' if n_pred == 1 else ''} = predicates"
        )
    lines += [
        "    out = []",
        "    for i, b in enumerate(bodies):",
        "        if type(b) is not dict:",
        "            out.append(i)",
        "            continue",
    ]
    if skips:
        lines.append("        missing = 0")
    k = 0
    for parts, existence, has_predicate, kind in shape:
        pad = "        "
        lines.append(f"{pad}v = b.get({parts[0]!r}, M)")
        for part in parts[1:]:
            lines += [
                f"{pad}if v is not M:",
                f"{pad}    if type(v) is not dict:",
                f"{pad}        out.append(i)",
                f"{pad}        continue",
                f"{pad}    v = v.get({part!r}, M)",
            ]
        if existence == "absent":
            lines += [f"{pad}if v is not M:", f"{pad}    out.append(i)", f"{pad}    continue"]
            continue
        if kind == "skip":
            lines += [f"{pad}if v is M:", f"{pad}    missing += 1", f"{pad}else:"]
            pad += "    "
            test = "type(v) is Invalid"
        else:
            test = "v is M or type(v) is Invalid"
        if has_predicate:
            test += f" or p{k}(v)"
            k += 1
        lines += [f"{pad}if {test}:", f"{pad}    out.append(i)", f"{pad}    continue"]
    if skips:
        lines += [f"        if missing == {n_exps}:", "            out.append(i)"]
    lines.append("    return out")
    namespace: dict[str, Any] = {"M": _MISSING, "Invalid": Invalid}
    exec(compile("\n".join(lines), "<fabline.engine.rules scan>", "exec"), namespace)
    return namespace["scan"]  # type: ignore[no-any-return]


#: The scan of several rules that select the same interfaces: ``scan(bodies, predicates)`` -> for
#: each rule, in order, the positions its fast path cannot pass (``predicates``: the rules' own, in
#: the same order, concatenated).
GroupScan = Callable[[list[Mapping[str, Any]], tuple[Predicate, ...]], tuple[list[int], ...]]

#: A value reached through something that is not a dict (a list, a string, an Invalid): the scan
#: never decides such a path (the old per-rule scan left the body to ``evaluate`` as soon as its
#: walk met one).
_THROUGH: Any = object()


#: Per rule of a group scan, per check that has a predicate (in order): its in-line test's source
#: and number of constants (:func:`fabline.operators.inline_test`), or None.
Inlines = tuple[tuple[tuple[str, int] | None, ...], ...]


def compile_scans(shapes: tuple[tuple[Any, ...], ...], inlines: Inlines | None = None) -> GroupScan:
    """One pass over a device's selected interfaces for several rules (:func:`compile_scan` each).

    Every rule's positions are those its own :func:`compile_scan` gives: the same checks in the
    same order, each rule stopping at its first check that does not hold. What the rules share is
    done once per body: the loop, the plain-dict test, and each distinct path's lookup (walked
    once, before the rules' tests; a lookup has no side effect on a plain dict, so walking a path a
    rule would not have reached changes nothing).

    With ``inlines``, a check whose predicate has an in-line test runs it first and calls the
    predicate only when it does not hold; ``predicates`` then holds each predicate followed by its
    test's constants.

    Example:
        >>> scan = compile_scans(((((("mtu",), None, True, "exp"),)), ((("a", "b"), "absent", False, "exp"),)))
        >>> scan([{"mtu": 9100}, {"mtu": 1500, "a": {"b": 1}}, {"a": 3}], (lambda v: None if v == 9100 else "no",))
        ([1, 2], [1, 2])
    """
    names: dict[tuple[str, ...], str] = {}
    walks: list[str] = []
    for shape in shapes:
        for parts, *_ in shape:
            for n in range(1, len(parts) + 1):
                prefix = parts[:n]
                if prefix in names:
                    continue
                var = names[prefix] = f"v{len(names)}"
                if n == 1:
                    walks.append(f"        {var} = b.get({parts[0]!r}, M)")
                else:
                    up = names[prefix[:-1]]
                    walks.append(
                        f"        {var} = {up}.get({prefix[-1]!r}, M) if type({up}) is dict "
                        f"else M if {up} is M else T"
                    )
    n_rules = len(shapes)
    lines = ["def scan(bodies, predicates):"]
    n_pred = sum(1 for shape in shapes for _, _, has, _ in shape if has)
    fast: list[tuple[str, int] | None] = (
        [t for rule in inlines for t in rule] if inlines is not None else [None] * n_pred
    )
    if len(fast) != n_pred:
        raise ValueError("one in-line test (or None) per check with a predicate")
    args = []
    for i, t in enumerate(fast):
        args.append(f"p{i}")
        args += [f"c{i}_{j}" for j in range(t[1])] if t is not None else []
    if args:
        lines.append(f"    {', '.join(args)}{',' if len(args) == 1 else ''} = predicates")
    outs = [f"o{r}" for r in range(n_rules)]
    lines += [f"    {o} = []" for o in outs]
    lines += [f"    a{r} = o{r}.append" for r in range(n_rules)]
    lines += [
        "    for i, b in enumerate(bodies):",
        "        if type(b) is not dict:",
        *(f"            a{r}(i)" for r in range(n_rules)),
        "            continue",
        *walks,
    ]
    k = 0
    for r, shape in enumerate(shapes):
        fail = f"a{r}(i)"
        n_exps = sum(1 for *_, kind in shape if kind != "when")
        skips = any(kind == "skip" for *_, kind in shape)
        # One rule: a loop run once, left at its first check that does not hold (``break``).
        lines.append("        while True:")
        pad = "            "
        if skips:
            lines.append(f"{pad}missing = 0")
        for parts, existence, has_predicate, kind in shape:
            v = names[parts]
            through = len(parts) > 1  # a value reached through a non-dict is left to evaluate
            if existence == "absent":
                lines += [f"{pad}if {v} is not M:", f"{pad}    {fail}", f"{pad}    break"]
                continue
            test = f"{v} is T or " if through else ""
            test += f"type({v}) is Invalid"
            holds = ""  # the predicate's in-line test, when it has one: no call where it holds
            if has_predicate:
                test += f" or p{k}({v})"
                t = fast[k]
                if t is not None:
                    holds = "not (" + t[0].format(v, *(f"c{k}_{j}" for j in range(t[1]))) + ") and "
                k += 1
            if kind == "skip":
                lines += [
                    f"{pad}if {v} is M:",
                    f"{pad}    missing += 1",
                    f"{pad}elif {holds}({test}):",
                    f"{pad}    {fail}",
                    f"{pad}    break",
                ]
            else:
                lines += [f"{pad}if {holds}({v} is M or {test}):", f"{pad}    {fail}", f"{pad}    break"]
        if skips:
            lines += [f"{pad}if missing == {n_exps}:", f"{pad}    {fail}"]
        lines.append(f"{pad}break")
    lines.append(f"    return ({', '.join(outs)}{',' if n_rules == 1 else ''})")
    namespace: dict[str, Any] = {"M": _MISSING, "T": _THROUGH, "Invalid": Invalid}
    exec(compile("\n".join(lines), "<fabline.engine.rules scans>", "exec"), namespace)
    return namespace["scan"]  # type: ignore[no-any-return]


class ScanCache:
    """The group scans of one engine (:func:`compile_scans`), by the compiled rules they run.

    The same rules compiled for the same variable values (every device of a kind) get the same
    scan and the same tuple of predicates without building either again.
    """

    def __init__(self) -> None:
        self._by_rules: dict[
            tuple[int, ...], tuple[GroupScan, tuple[Predicate, ...], tuple[_Compiled, ...]]
        ] = {}
        self._by_shapes: dict[tuple[tuple[tuple[Any, ...], ...], Inlines], GroupScan] = {}

    def get(self, compiled: tuple[_Compiled, ...]) -> tuple[GroupScan, tuple[Predicate, ...]]:
        """The scan of these compiled rules, in this order, and its arguments (each predicate, then
        its in-line test's constants).
        """
        key = tuple(map(id, compiled))
        hit = self._by_rules.get(key)
        if hit is None:
            shapes = tuple(c.shape for c in compiled)
            tests = [[inline_test(p) for p in c.predicates] for c in compiled]
            inlines = tuple(tuple((t[0], len(t[1])) if t else None for t in rule) for rule in tests)
            scan = self._by_shapes.get((shapes, inlines))
            if scan is None:
                scan = self._by_shapes[(shapes, inlines)] = compile_scans(shapes, inlines)
            args: list[Any] = []
            for c, rule in zip(compiled, tests, strict=True):
                for p, t in zip(c.predicates, rule, strict=True):
                    args.append(p)
                    args += t[1] if t else ()
            # The compiled rules are kept with their key: their ids stay theirs.
            hit = self._by_rules[key] = (scan, tuple(args), compiled)
        return hit[0], hit[1]


class RuleProgram:
    """A declarative rule, ready to run: device filter, interface filter, compiled expectations."""

    def __init__(
        self, rule: Rule, base_vars: Mapping[str, Any], host_sets: Callable[[str], set[str]]
    ) -> None:
        self.rule = rule
        self.id = rule.id
        self.severity = severity_of(rule, Severity.MAJOR)
        sel = rule.select
        self.roles = frozenset(sel.roles) if sel.roles else None
        self.platforms = frozenset(sel.platforms) if sel.platforms else None
        self.groups = frozenset(sel.groups) if sel.groups else None
        self.hosts = host_sets(sel.hosts) if sel.hosts else None
        isel = sel.interfaces
        self.per_interface = isel is not None
        self.name_rx = re.compile(isel.name) if isel and isel.name else None
        self.exclude_rx = re.compile(isel.exclude) if isel and isel.exclude else None
        self.facing = isel.facing if isel else "any"
        self.in_var = isel.in_var if isel else None
        self.admin_up = isel.admin_up if isel else None
        self.oper_up = isel.oper_up if isel else None
        self.base_vars = base_vars
        exps = [*(rule.expect or []), *rule.when]
        try:
            self.var_names = tuple(
                sorted(set().union(*(variables_of(e.model_dump()) for e in exps)) if exps else ())
            )
        except TemplateValueError as exc:
            raise ConfigError(str(exc), key=f"rules[id={rule.id}]") from None
        self._cache: dict[str, _Compiled] = {}
        #: The key of this rule's variables (and base variables) in a caller's per-device memo of
        #: :meth:`compiled`: text, whose hash is computed once (a tuple's is computed per look-up).
        self._keys_key = f"{self.var_names!r}@{id(base_vars)}"
        self._scans: dict[tuple[Any, ...], Scan] = {}
        #: Interface name -> whether the name and exclude patterns select it.
        self._named: dict[str, bool] = {}
        self._selector_key = (
            self.in_var,
            self.name_rx.pattern if self.name_rx else None,
            self.exclude_rx.pattern if self.exclude_rx else None,
            self.facing,
            self.admin_up,
            self.oper_up,
        )

    def selects(self, dev: DeviceLike) -> bool:
        """Whether the rule applies to this device."""
        return self.selects_kind(dev) and (self.hosts is None or dev.name in self.hosts)

    def selects_kind(self, dev: DeviceLike) -> bool:
        """Whether the rule's role, platform and group selectors take this device (``hosts`` aside)."""
        if self.roles is not None and dev.role not in self.roles:
            return False
        if self.platforms is not None and dev.platform not in self.platforms:
            return False
        return self.groups is None or not self.groups.isdisjoint(dev.groups)

    def compiled(self, dev: DeviceLike, keys: dict[Any, str] | None = None) -> _Compiled:
        """The rule compiled for this device's variable values (cached by those values).

        ``keys`` is the caller's memo for one device (rules that use the same variables share the
        cache key computed for the first of them).

        Raises:
            ConfigError: A template or operand the device's variables make invalid.
        """
        if not self.var_names:
            key = ""
        elif keys is not None and (hit_key := keys.get(self._keys_key)) is not None:
            key = hit_key
        else:
            key = repr(tuple(dev.vars.get(n, self.base_vars.get(n, _MISSING)) for n in self.var_names))
            if keys is not None:
                keys[self._keys_key] = key
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        context = {**self.base_vars, **dev.vars}
        try:
            exps = [_compile_exp(e, context) for e in self.rule.expect or []]
            when = [_compile_exp(e, context) for e in self.rule.when]
        except (TemplateValueError, OperandError) as exc:
            raise ConfigError(f"for device {dev.name}: {exc}", key=f"rules[id={self.id}]") from None
        compiled = _Compiled(exps, when, {e.path: e.ops for e in exps})
        self._cache[key] = compiled
        return compiled

    def scan(self, compiled: _Compiled) -> Scan:
        """The generated scan for this compiled rule (:func:`compile_scan`, one per distinct shape)."""
        hit = compiled.scan
        if hit is None:
            shape = compiled.shape
            hit = self._scans.get(shape)
            if hit is None:
                hit = self._scans[shape] = compile_scan(shape)
            compiled.scan = hit
        return hit

    @property
    def selector_key(self) -> tuple[Any, ...]:
        """Rules with equal keys select the same interfaces (computed once per device)."""
        return self._selector_key

    def select_interfaces(
        self,
        dev: DeviceLike,
        ordered: list[tuple[str, Mapping[str, Any]]],
        roles_by_name: Mapping[str, str],
    ) -> list[tuple[str, Mapping[str, Any]]]:
        """The interfaces (name, body) of ``ordered`` this rule selects, in that order."""
        wanted: set[str] | None = None
        if self.in_var:
            listed = dev.vars.get(self.in_var)
            # An unset variable leaves the condition out (see docs/baseline.md).
            wanted = {str(x) for x in listed} if isinstance(listed, list) else None
        out: list[tuple[str, Mapping[str, Any]]] = []
        named = self._named
        for name, body in ordered:
            if wanted is not None and name not in wanted:
                continue
            if self.name_rx is not None or self.exclude_rx is not None:
                # Every switch of a model has the same port names: each is matched once.
                ok = named.get(name)
                if ok is None:
                    ok = (self.name_rx is None or self.name_rx.fullmatch(name) is not None) and (
                        self.exclude_rx is None or self.exclude_rx.fullmatch(name) is None
                    )
                    if len(named) < 100_000:
                        named[name] = ok
                if not ok:
                    continue
            if self.admin_up is not None and body.get("admin_up") is not self.admin_up:
                if type(body.get("admin_up")) is Invalid:  # never silently unselected
                    out.append((name, Unreadable(str(body["admin_up"]))))
                continue
            if self.oper_up is not None and body.get("oper_up") is not self.oper_up:
                if type(body.get("oper_up")) is Invalid:
                    out.append((name, Unreadable(str(body["oper_up"]))))
                continue
            if self.facing != "any":
                role = peer_role(body, roles_by_name)
                if role is None or (self.facing == "host") != (role == "host"):
                    continue
            out.append((name, body))
        if wanted is not None:
            # A port the inventory names that the state lacks is an error, not a skipped rule.
            present = {name for name, _ in ordered}
            out += [
                (name, Unreadable(f"{name} (in {self.in_var}) is not in the collected state"))
                for name in sorted(wanted - present)
            ]
        return out

    def evaluate(
        self,
        device: str,
        subject: str | None,
        body: Mapping[str, Any],
        prog: _Compiled,
        unsupported: Mapping[str, str] | None = None,
    ) -> Result | None:
        """None when the subject passes (the hot path), else the non-pass Result.

        The fast path only decides "everything holds"; anything else is re-evaluated by
        :meth:`evaluate_fully`, which builds the message.
        """
        is_dict = type(body) is dict
        if not is_dict and type(body) is Unreadable:
            return self._r(device, subject, Status.ERROR, body.reason)
        for e in prog.checks:
            value = body.get(e.single, _MISSING) if is_dict and e.single else _walk(body, e.parts)
            if type(value) is Invalid:
                return self._r(device, subject, Status.ERROR, str(value))
            if value is _MISSING:
                if e.existence == "absent":
                    continue
                return self.evaluate_fully(device, subject, body, prog, unsupported)
            if e.existence == "absent" or (e.predicate is not None and e.predicate(value)):
                return self.evaluate_fully(device, subject, body, prog, unsupported)
        return None

    def evaluate_fully(
        self,
        device: str,
        subject: str | None,
        body: Mapping[str, Any],
        prog: _Compiled,
        unsupported: Mapping[str, str] | None = None,
    ) -> Result | None:
        """The detailed evaluation: preconditions, every expectation, the message. None = pass.

        ``unsupported`` is the device state's map of paths its source cannot provide: an absent
        path found there is ``skipped`` with the reason, not ``error`` (``on_missing: fail`` still
        fails).
        """
        if type(body) is Unreadable:
            return self._r(device, subject, Status.ERROR, body.reason)
        for w in prog.when:
            value = _walk(body, w.parts)
            if type(value) is Invalid:
                return self._r(device, subject, Status.ERROR, str(value))
            if value is _MISSING:
                if w.existence != "absent":
                    return self._r(device, subject, Status.SKIPPED, f"not applicable: {w.path} not present")
                continue
            if w.existence == "absent":
                return self._r(device, subject, Status.SKIPPED, f"not applicable: {w.path} is present")
            reason = w.predicate(value) if w.predicate else None
            if reason:
                return self._r(device, subject, Status.SKIPPED, f"not applicable: {w.path} {reason}")
        actual: dict[str, Any] = {}
        problems: list[str] = []
        failing: dict[str, Any] = {}
        missing: list[_Exp] = []
        for e in prog.exps:
            value = _walk(body, e.parts)
            if type(value) is Invalid:
                return self._r(device, subject, Status.ERROR, str(value))
            if value is _MISSING:
                actual[e.path] = None
                if e.existence == "absent":
                    continue
                if e.existence == "present":
                    problems.append(f"{e.path} is not present")
                    failing[e.path] = e.ops
                    continue
                missing.append(e)
                continue
            actual[e.path] = value
            if e.existence == "absent":
                problems.append(f"{e.path} is present, expected absent")
                failing[e.path] = e.ops
                continue
            if e.predicate is not None:
                reason = e.predicate(value)
                if reason:
                    problems.append(f"{e.path} {reason}")
                    failing[e.path] = e.ops
        if problems:
            return bound_result(
                Result(
                    self.id, device, subject, Status.FAIL, self.severity, failing,
                    {p: actual[p] for p in failing}, "; ".join(problems),
                )
            )  # fmt: skip
        if missing:
            kinds = {e.on_missing for e in missing}
            if kinds == {"skip"} and len(missing) < len(prog.exps):
                # The expectations the state could answer hold; the absent ones are skipped (a
                # platform that has some of several alternative counters is judged on those).
                return None
            paths = ", ".join(e.path for e in missing)
            if "fail" in kinds:
                return bound_result(
                    Result(
                        self.id, device, subject, Status.FAIL, self.severity,
                        {e.path: e.ops for e in missing}, None, f"{paths} not present",
                    )
                )  # fmt: skip
            if "error" in kinds:
                prefix = "" if subject is None or not self.per_interface else "interfaces.*."
                reasons = {unsupported_reason(unsupported, prefix + e.path) for e in missing}
                if None not in reasons:
                    why = "; ".join(sorted(r for r in reasons if r))
                    return self._r(
                        device, subject, Status.SKIPPED, f"not applicable: {paths} not provided ({why})"
                    )
                return self._r(device, subject, Status.ERROR, f"{paths} not collected")
            return self._r(device, subject, Status.SKIPPED, f"not applicable: {paths} not present")
        return None

    def _r(self, device: str, subject: str | None, status: Status, message: str) -> Result:
        return Result(self.id, device, subject, status, self.severity, None, None, message)
