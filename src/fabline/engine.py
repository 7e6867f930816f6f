"""The check engine: baseline rules and Python checks over a snapshot's device states.

States stream through one device at a time. Declarative rules are compiled once into closures
(per distinct set of the inventory values their templates use), so the hot loop is a dict walk
and a function call per expectation. Results are plain slot objects. Fabric-scope checks keep
only what their ``collect`` returns while states stream past.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fnmatch
import functools
import gc
import multiprocessing
import os
import re
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from fabline.baseline import Baseline, Expectation, Rule, Waiver, severity_of
from fabline.checks import Check, DeviceContext, DeviceSummary, FabricContext, peer_role
from fabline.errors import ConfigError, did_you_mean
from fabline.inventory import Named
from fabline.operators import OperandError, Predicate, compile_operators
from fabline.problems import Problem, group
from fabline.results import Result, ResultStore, Severity, Status
from fabline.snapshot import Snapshot
from fabline.state import UNREADABLE_STATUSES, StateError
from fabline.templating import TemplateValueError, render, variables_of

_MISSING: Any = object()
F = TypeVar("F", bound=Callable[..., Any])
_SECRET_KEY = re.compile(r"pass|secret|token|private_key", re.IGNORECASE)
FABRIC_DEVICE = "(fabric)"


class DeviceLike(Named, Protocol):
    """What the engine needs of an inventory device."""

    @property
    def groups(self) -> tuple[str, ...]: ...
    @property
    def vars(self) -> Mapping[str, Any]: ...


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for a bulk pass.

    Loading and checking a 100k-GPU fabric allocates millions of dicts that never form cycles;
    the collector's repeated full passes over them cost a third of the run (measured: 10.1 s ->
    6.5 s). Reference counting still frees everything; the collector resumes afterwards.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def gc_paused(func: F) -> F:
    """Decorator: run ``func`` with the cyclic garbage collector paused (see :func:`paused_gc`)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with paused_gc():
            return func(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def public_vars(variables: Mapping[str, Any]) -> dict[str, Any]:
    """Inventory variables without secrets (passwords, tokens, key paths).

    Example:
        >>> public_vars({"rail": 1, "ansible_password": "x", "ansible_ssh_pass": "y"})
        {'rail': 1}
    """
    return {k: v for k, v in variables.items() if not _SECRET_KEY.search(k)}


def natural_key(name: str) -> tuple[Any, ...]:
    """Sort key that puts Ethernet2 before Ethernet10.

    Example:
        >>> sorted(["Ethernet10", "Ethernet2", "eth1"], key=natural_key)
        ['Ethernet2', 'Ethernet10', 'eth1']
    """
    return tuple((0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.findall(r"\d+|\D+", name))


# --------------------------------------------------------------------------------------------
# compiled declarative rules


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

    def __post_init__(self) -> None:
        self.checks = (*self.when, *self.exps)


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
        self.var_names = tuple(
            sorted(set().union(*(variables_of(e.model_dump()) for e in exps)) if exps else ())
        )
        self._cache: dict[str, _Compiled] = {}

    def selects(self, dev: DeviceLike) -> bool:
        """Whether the rule applies to this device."""
        if self.roles is not None and dev.role not in self.roles:
            return False
        if self.platforms is not None and dev.platform not in self.platforms:
            return False
        if self.groups is not None and self.groups.isdisjoint(dev.groups):
            return False
        return self.hosts is None or dev.name in self.hosts

    def compiled(self, dev: DeviceLike) -> _Compiled:
        """The rule compiled for this device's variable values (cached by those values).

        Raises:
            ConfigError: A template or operand the device's variables make invalid.
        """
        if not self.var_names:
            key = ""
        else:
            key = repr(tuple(dev.vars.get(n, self.base_vars.get(n, _MISSING)) for n in self.var_names))
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

    @property
    def selector_key(self) -> tuple[Any, ...]:
        """Rules with equal keys select the same interfaces (computed once per device)."""
        return (
            self.in_var,
            self.name_rx.pattern if self.name_rx else None,
            self.exclude_rx.pattern if self.exclude_rx else None,
            self.facing,
            self.admin_up,
            self.oper_up,
        )

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
        out = []
        for name, body in ordered:
            if wanted is not None and name not in wanted:
                continue
            if self.name_rx is not None and not self.name_rx.fullmatch(name):
                continue
            if self.exclude_rx is not None and self.exclude_rx.fullmatch(name):
                continue
            if self.admin_up is not None and body.get("admin_up") is not self.admin_up:
                continue
            if self.oper_up is not None and body.get("oper_up") is not self.oper_up:
                continue
            if self.facing != "any":
                role = peer_role(body, roles_by_name)
                if role is None or (self.facing == "host") != (role == "host"):
                    continue
            out.append((name, body))
        return out

    def evaluate(
        self, device: str, subject: str | None, body: Mapping[str, Any], prog: _Compiled
    ) -> Result | None:
        """None when the subject passes (the hot path), else the non-pass Result.

        The fast path only decides "everything holds"; anything else is re-evaluated by
        :meth:`evaluate_fully`, which builds the message.
        """
        is_dict = type(body) is dict
        for e in prog.checks:
            value = body.get(e.single, _MISSING) if is_dict and e.single else _walk(body, e.parts)
            if value is _MISSING:
                if e.existence == "absent":
                    continue
                return self.evaluate_fully(device, subject, body, prog)
            if e.existence == "absent" or (e.predicate is not None and e.predicate(value)):
                return self.evaluate_fully(device, subject, body, prog)
        return None

    def evaluate_fully(
        self, device: str, subject: str | None, body: Mapping[str, Any], prog: _Compiled
    ) -> Result | None:
        """The detailed evaluation: preconditions, every expectation, the message. None = pass."""
        for w in prog.when:
            value = _walk(body, w.parts)
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
            return Result(
                self.id, device, subject, Status.FAIL, self.severity, failing,
                {p: actual[p] for p in failing}, "; ".join(problems),
            )  # fmt: skip
        if missing:
            kinds = {e.on_missing for e in missing}
            paths = ", ".join(e.path for e in missing)
            if "fail" in kinds:
                return Result(
                    self.id, device, subject, Status.FAIL, self.severity,
                    {e.path: e.ops for e in missing}, None, f"{paths} not present",
                )  # fmt: skip
            if "error" in kinds:
                return self._r(device, subject, Status.ERROR, f"{paths} not collected")
            return self._r(device, subject, Status.SKIPPED, f"not applicable: {paths} not present")
        return None

    def _r(self, device: str, subject: str | None, status: Status, message: str) -> Result:
        return Result(self.id, device, subject, status, self.severity, None, None, message)


# --------------------------------------------------------------------------------------------
# waivers


@dataclass(frozen=True)
class _WaiverMatcher:
    waiver: Waiver
    source: str
    expired: bool

    def matches(self, r: Result) -> bool:
        w = self.waiver
        if not fnmatch.fnmatchcase(r.check, w.rule) or not fnmatch.fnmatchcase(r.device, w.devices):
            return False
        return w.subject is None or (r.subject is not None and fnmatch.fnmatchcase(r.subject, w.subject))


# --------------------------------------------------------------------------------------------
# the run


@dataclass
class RunOutcome:
    """Everything a report needs from one check run."""

    results: ResultStore
    devices: list[dict[str, Any]]
    warnings: list[str] = field(default_factory=list)
    started: float = 0.0
    finished: float = 0.0
    checks: list[dict[str, Any]] = field(default_factory=list)
    #: The findings grouped by cause (:mod:`fabline.problems`), most severe first.
    problems: list[Problem] = field(default_factory=list)


@dataclass
class _PyCheck:
    check: Check
    severity: Severity


def _group_problems(
    fabric: FabricContext, device_rows: list[dict[str, Any]], findings: list[Result]
) -> list[Problem]:
    """The run's findings grouped into problems, with the facts the fabric checks left behind."""
    from fabline.checks.fabric.facts import problem_facts

    return group(findings, problem_facts(fabric, device_rows, findings))


class Engine:
    """Runs a baseline and Python checks over devices' states.

    Args:
        baseline: The merged baseline.
        registry: Python checks by id (built-in and site-local).
        host_sets: Resolves an Ansible host pattern to the set of matching device names.
        today: The date waivers expire against.
        exclude_tags: Rules carrying any of these tags do not run (``operational`` when checking
            intended configs, which have no operational state).
    """

    def __init__(
        self,
        baseline: Baseline,
        registry: Mapping[str, type[Check]],
        host_sets: Callable[[str], set[str]],
        today: dt.date | None = None,
        exclude_tags: frozenset[str] = frozenset(),
    ) -> None:
        self.baseline = baseline
        self.programs: list[RuleProgram] = []
        self.pychecks: list[_PyCheck] = []
        self.order: list[str] = []
        configured: set[str] = set()
        for rule in baseline.rules:
            configured.add(rule.id)
            if rule.expect is not None:
                if rule.id in registry:
                    raise ConfigError(
                        f"rule id {rule.id!r} is also a Python check id; rename the rule",
                        file=baseline.rule_source.get(rule.id),
                    )
                if rule.enabled and exclude_tags.isdisjoint(rule.tags):
                    self.programs.append(RuleProgram(rule, baseline.vars, host_sets))
                    self.order.append(rule.id)
                continue
            cls = registry.get(rule.id)
            if cls is None:
                raise ConfigError(
                    "rule has no 'expect' and no Python check has this id" + did_you_mean(rule.id, registry),
                    file=baseline.rule_source.get(rule.id),
                    key=f"rules[id={rule.id}]",
                )
            if rule.enabled:
                self._add_check(cls, rule.params, severity_of(rule, cls.severity), baseline, rule.id)
        for check_id, cls in registry.items():
            if check_id not in configured:
                self._add_check(cls, {}, cls.severity, baseline, check_id)
        today = today or dt.date.today()
        self.waivers = [
            _WaiverMatcher(w, str(src), w.expires is not None and w.expires < today)
            for w, src in baseline.waivers
        ]

    def _add_check(
        self,
        cls: type[Check],
        params: Mapping[str, Any],
        severity: Severity,
        baseline: Baseline,
        rule_id: str,
    ) -> None:
        try:
            check = cls(params, severity)
        except Exception as exc:  # pydantic ValidationError or a site check's own __init__
            raise ConfigError(
                f"bad params for check: {exc}".splitlines()[0],
                file=baseline.rule_source.get(rule_id),
                key=f"rules[id={rule_id}].params",
            ) from None
        self.pychecks.append(_PyCheck(check, severity))
        self.order.append(cls.id)

    def describe_checks(self) -> list[dict[str, Any]]:
        """The active checks (id, kind, severity, description), in run order."""
        out: list[dict[str, Any]] = [
            {
                "id": p.id,
                "kind": "rule",
                "severity": p.severity.label,
                "description": p.rule.description.strip(),
            }
            for p in self.programs
        ]
        out += [
            {
                "id": c.check.id,
                "kind": c.check.scope,
                "severity": c.severity.label,
                "description": c.check.description(),
            }
            for c in self.pychecks
        ]
        return out

    def run(
        self,
        devices: Sequence[DeviceLike],
        snapshot: Snapshot,
        previous: Snapshot | None = None,
        options: Mapping[str, Any] | None = None,
        jobs: int | None = None,
    ) -> RunOutcome:
        """Check every device against every applicable rule and check.

        Args:
            devices: Inventory devices, in report order.
            snapshot: The snapshot to check.
            previous: An earlier snapshot; Python checks see each device's earlier state (for
                counter deltas) as ``DeviceContext.previous``.
            options: Run-wide inputs for fabric checks (``FabricContext.options``).
            jobs: Worker processes for the per-device pass (default: one per CPU, at most
                :data:`MAX_JOBS`, and 1 for small fabrics). Results are identical for any value.
        """
        started = time.time()
        roles_by_name = {d.name.lower(): d.role for d in devices}
        work = _Work(self, devices, snapshot, previous, roles_by_name)
        results = ResultStore()
        device_rows: list[dict[str, Any]] = []
        warnings: list[str] = []
        collected: dict[str, dict[str, Any]] = {
            c.check.id: {} for c in self.pychecks if c.check.scope == "fabric"
        }
        summaries: dict[str, DeviceSummary] = {}
        for part in _run_parts(work, self._jobs(jobs, len(devices))):
            results.merge(part.results)
            device_rows.extend(part.rows)
            warnings.extend(part.warnings)
            for check_id, values in part.collected.items():
                collected[check_id].update(values)
            for dev, row, readable in zip(devices[part.lo : part.hi], part.rows, part.readable, strict=True):
                summaries[dev.name] = DeviceSummary(
                    dev.name,
                    dev.platform,
                    dev.role,
                    tuple(dev.groups),
                    public_vars(dev.vars),
                    readable,
                    row["status"],
                )
        fabric = FabricContext(
            summaries, {}, roles_by_name, {**(options or {}), "previous": previous is not None}
        )
        for pc in self.pychecks:
            if pc.check.scope != "fabric":
                continue
            fabric.collected = collected[pc.check.id]
            try:
                results.extend(pc.check.check_fabric(fabric))
            except Exception as exc:  # a check bug is an error result, never a crash
                results.append(
                    Result(
                        pc.check.id,
                        FABRIC_DEVICE,
                        None,
                        Status.ERROR,
                        pc.severity,
                        None,
                        None,
                        _exc_message(exc),
                    )
                )
        warnings.extend(self._apply_waivers(results.problems))
        problems = _group_problems(fabric, device_rows, results.problems)
        return RunOutcome(
            results, device_rows, warnings, started, time.time(), self.describe_checks(), problems
        )

    @staticmethod
    def _jobs(jobs: int | None, n_devices: int) -> int:
        if jobs is not None:
            return max(1, jobs)
        if n_devices < PARALLEL_MIN_DEVICES or "fork" not in multiprocessing.get_all_start_methods():
            return 1
        return max(1, min(MAX_JOBS, os.cpu_count() or 1))

    def check_range(self, work: _Work, lo: int, hi: int) -> _Part:
        """The per-device pass over ``work.devices[lo:hi]`` (in a worker process or in-line)."""
        part = _Part(lo, hi)
        collected = part.collected = {c.check.id: {} for c in self.pychecks if c.check.scope == "fabric"}
        for dev in work.devices[lo:hi]:
            state, problem = self._load(work.snapshot, dev)
            status = (
                "missing"
                if state is None and problem is None
                else "error"
                if state is None
                else state.get("status", "ok")
            )
            row: dict[str, Any] = {
                "name": dev.name,
                "platform": dev.platform,
                "role": dev.role,
                "status": status,
            }
            if problem:
                row["error"] = problem
            elif state is not None and state.get("errors"):
                row["errors"] = state["errors"]
            part.rows.append(row)
            readable = state is not None and status not in UNREADABLE_STATUSES
            part.readable.append(readable)
            if state is not None:
                part.warnings.extend(_identity_warnings(dev, state))
            if not readable:
                reason = problem or _unreadable_reason(status, state, work.snapshot, dev.name)
                part.results.extend(self._unreadable_results(dev, reason))
                continue
            assert state is not None
            prev = (
                _previous_state(work.previous, dev.name, part.warnings) if work.previous is not None else None
            )
            self._check_device(dev, state, work.roles_by_name, part.results, collected, prev)
        return part

    # -- per device ---------------------------------------------------------------------------
    @staticmethod
    def _load(snapshot: Snapshot, dev: DeviceLike) -> tuple[dict[str, Any] | None, str | None]:
        try:
            return snapshot.load(dev.name), None
        except StateError as exc:
            return None, f"state unusable: {exc}"

    def _unreadable_results(self, dev: DeviceLike, reason: str) -> Iterator[Result]:
        for prog in self.programs:
            if prog.selects(dev):
                yield Result(prog.id, dev.name, None, Status.ERROR, prog.severity, None, None, reason)
        for pc in self.pychecks:
            if pc.check.scope == "device" and pc.check.applies_to(dev.role, dev.platform):
                yield Result(pc.check.id, dev.name, None, Status.ERROR, pc.severity, None, None, reason)

    def _check_device(
        self,
        dev: DeviceLike,
        state: Mapping[str, Any],
        roles_by_name: Mapping[str, str],
        results: ResultStore,
        collected: dict[str, dict[str, Any]],
        previous: Mapping[str, Any] | None = None,
    ) -> None:
        ifaces = state.get("interfaces")
        ordered: list[tuple[str, Mapping[str, Any]]] | None = None
        selections: dict[tuple[Any, ...], tuple[tuple[str, ...], list[Mapping[str, Any]]]] = {}
        name = dev.name
        for prog in self.programs:
            if not prog.selects(dev):
                continue
            try:
                compiled = prog.compiled(dev)
            except ConfigError as exc:
                results.append(Result(prog.id, name, None, Status.ERROR, prog.severity, None, None, str(exc)))
                continue
            if not prog.per_interface:
                r = prog.evaluate(name, None, state, compiled)
                results.add_block(
                    prog.id, name, prog.severity, compiled.expected, _DEVICE, None if r is None else {0: r}
                )
                continue
            if not isinstance(ifaces, Mapping):
                results.append(
                    Result(
                        prog.id,
                        name,
                        None,
                        Status.ERROR,
                        prog.severity,
                        None,
                        None,
                        "interfaces not collected",
                    )
                )
                continue
            if ordered is None:
                ordered = [
                    (sys.intern(n), ifaces[n])
                    for n in sorted(ifaces, key=natural_key)
                    if isinstance(ifaces[n], Mapping)
                ]
            key = prog.selector_key
            selection = selections.get(key)
            if selection is None:
                chosen = prog.select_interfaces(dev, ordered, roles_by_name)
                selection = selections[key] = (tuple(n for n, _ in chosen), [b for _, b in chosen])
            subjects, bodies = selection
            if not subjects:
                results.append(
                    Result(
                        prog.id, name, None, Status.SKIPPED, prog.severity, None, None,
                        "no interface matches the rule's interface selector",
                    )
                )  # fmt: skip
                continue
            evaluate = prog.evaluate
            problems: dict[int, Result] | None = None
            for i, body in enumerate(bodies):
                r = evaluate(name, subjects[i], body, compiled)
                if r is not None:
                    if problems is None:
                        problems = {}
                    problems[i] = r
            results.add_block(prog.id, name, prog.severity, compiled.expected, subjects, problems)
        if not self.pychecks:
            return
        ctx = DeviceContext(
            dev.name, dev.platform, dev.role, tuple(dev.groups), public_vars(dev.vars), state, roles_by_name,
            previous, _interval(previous, state),
        )  # fmt: skip
        for pc in self.pychecks:
            if not pc.check.applies_to(dev.role, dev.platform):
                continue
            try:
                if pc.check.scope == "fabric":
                    collected[pc.check.id][dev.name] = pc.check.collect(ctx)
                else:
                    results.extend(pc.check.check_device(ctx))
            except Exception as exc:  # a check bug is an error result, never a crash
                results.append(
                    Result(
                        pc.check.id, dev.name, None, Status.ERROR, pc.severity, None, None, _exc_message(exc)
                    )
                )

    # -- waivers ------------------------------------------------------------------------------
    def _apply_waivers(self, results: Iterable[Result]) -> list[str]:
        warnings = [
            f"waiver for {m.waiver.rule} on {m.waiver.devices} expired on {m.waiver.expires} "
            f"({m.source}): it no longer applies"
            for m in self.waivers
            if m.expired
        ]
        if not self.waivers:
            return warnings
        active = [m for m in self.waivers if not m.expired]
        expired = [m for m in self.waivers if m.expired]
        for r in results:
            if r.status is not Status.FAIL and r.status is not Status.ERROR:
                continue
            hit = next((m for m in active if m.matches(r)), None)
            if hit is not None:
                r.waiver = hit.waiver.reason
                r.message = f"{r.message} [waived: {hit.waiver.reason}]"
                r.status = Status.WAIVED
                continue
            old = next((m for m in expired if m.matches(r)), None)
            if old is not None:
                r.message = f"{r.message} [waiver expired {old.waiver.expires}]"
        return warnings


#: Fabrics smaller than this are checked in one process (a worker pool costs more than it saves).
PARALLEL_MIN_DEVICES = 2000
#: Worker processes at most; the per-device pass is CPU-bound and memory grows with each worker.
MAX_JOBS = 4
#: Devices per unit of work handed to a worker.
CHUNK_DEVICES = 256


@dataclass
class _Work:
    """What the per-device pass needs; shared with forked workers, never pickled."""

    engine: Engine
    devices: Sequence[DeviceLike]
    snapshot: Snapshot
    previous: Snapshot | None
    roles_by_name: Mapping[str, str]


@dataclass
class _Part:
    """The per-device pass over one slice of the devices: what a worker sends back."""

    lo: int
    hi: int
    results: ResultStore = field(default_factory=ResultStore)
    rows: list[dict[str, Any]] = field(default_factory=list)
    readable: list[bool] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    collected: dict[str, dict[str, Any]] = field(default_factory=dict)


_FORKED_WORK: _Work | None = None
_DEVICE: tuple[str | None, ...] = (None,)


def _forked_range(bounds: tuple[int, int]) -> _Part:
    assert _FORKED_WORK is not None
    return _FORKED_WORK.engine.check_range(_FORKED_WORK, *bounds)


def _run_parts(work: _Work, jobs: int) -> Iterator[_Part]:
    """The per-device pass, in order: in-line for one job, else over forked worker processes.

    Workers inherit the compiled engine by ``fork`` (nothing is pickled on the way in) and send
    back compact parts: results, device rows, and what fabric checks ``collect`` kept.
    """
    n = len(work.devices)
    if jobs <= 1 or n == 0:
        yield work.engine.check_range(work, 0, n)
        return
    global _FORKED_WORK  # noqa: PLW0603 - the fork start method shares it with the workers
    _FORKED_WORK = work
    try:
        bounds = [(lo, min(n, lo + CHUNK_DEVICES)) for lo in range(0, n, CHUNK_DEVICES)]
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            yield from pool.imap(_forked_range, bounds)
    finally:
        _FORKED_WORK = None


def _previous_state(previous: Snapshot, name: str, warnings: list[str]) -> dict[str, Any] | None:
    """A device's earlier state, or None (missing, unreadable: a warning, never a failure)."""
    try:
        doc = previous.load(name)
    except StateError as exc:
        warnings.append(f"previous snapshot: {exc}")
        return None
    if doc is None or doc.get("status", "ok") in UNREADABLE_STATUSES:
        return None
    return doc


def _interval(previous: Mapping[str, Any] | None, state: Mapping[str, Any]) -> float | None:
    """Seconds between two states' ``collected_at`` times, when both parse and are ordered."""
    if previous is None:
        return None
    try:
        t0 = dt.datetime.fromisoformat(str(previous["collected_at"]).replace("Z", "+00:00"))
        t1 = dt.datetime.fromisoformat(str(state["collected_at"]).replace("Z", "+00:00"))
    except (KeyError, ValueError):
        return None
    seconds = (t1 - t0).total_seconds()
    return seconds if seconds > 0 else None


def _unreadable_reason(status: str, state: Mapping[str, Any] | None, snapshot: Snapshot, name: str) -> str:
    if state is None:
        return f"no state collected ({snapshot.state_path(name)} missing)"
    errs = state.get("errors") or []
    first = errs[0].get("message") if errs and isinstance(errs[0], dict) else None
    return f"device {status}" + (f": {first}" if first else "")


def _identity_warnings(dev: DeviceLike, state: Mapping[str, Any]) -> list[str]:
    out = []
    for key, want in (("platform", dev.platform), ("role", dev.role)):
        got = state.get(key)
        if got is not None and got != want:
            out.append(f"{dev.name}: state says {key} {got!r}, inventory says {want!r}; using the inventory")
    return out


def _exc_message(exc: Exception) -> str:
    return f"check raised {type(exc).__name__}: {exc}".splitlines()[0]
