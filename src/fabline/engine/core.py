"""The check engine: baseline rules and Python checks over a snapshot's device states.

States stream through one device at a time. Declarative rules are compiled once into closures
(:mod:`fabline.engine.rules`), so the hot loop is a dict walk and a function call per
expectation. Results are plain slot objects. Fabric-scope checks keep only what their
``collect`` returns while states stream past. Large fabrics are split over forked workers
(:mod:`fabline.engine.parallel`); waivers are applied last (:mod:`fabline.engine.waivers`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from fabline.baseline import Baseline, severity_of
from fabline.checks import (
    FABRIC_DEVICE,
    NO_PREVIOUS,
    AnyCheck,
    Check,
    DeviceContext,
    DeviceSummary,
    FabricContext,
    natural_order,
)
from fabline.checks.linkgraph import LinkGraphs, Projector
from fabline.engine.parallel import (
    FabricGroup,
    FabricOutcome,
    FabricWork,
    PairHook,
    Part,
    Work,
    choose_jobs,
    run_fabric_checks,
    run_parts,
)
from fabline.engine.rules import DeviceLike, RuleProgram, ScanCache, _Compiled
from fabline.engine.waivers import WaiverMatcher, apply_waivers
from fabline.errors import ConfigError, did_you_mean
from fabline.perf import keep_until_exit
from fabline.problems import Problem, group
from fabline.record import RunOutcome
from fabline.results import Result, ResultStore, Severity, Status
from fabline.secret_keys import public_vars
from fabline.snapshot import Snapshot, reading_ahead
from fabline.state import UNREADABLE_STATUSES, StateError

if TYPE_CHECKING:
    from fabline.state_types import State

# --------------------------------------------------------------------------------------------
# the run


@dataclass
class _PyCheck:
    check: AnyCheck
    severity: Severity

    @property
    def collects(self) -> bool:
        """Whether the engine calls the check's ``collect``: a link check that does not override it
        reads only the link graph, so nothing per device is kept for it (``fabric.links`` has the views).
        """
        return not (self.check.uses_links and type(self.check).collect is Check.collect)


def _group_problems(
    fabric: FabricContext, device_rows: list[dict[str, Any]], findings: list[Result]
) -> list[Problem]:
    """The run's findings grouped into problems, with the facts the fabric checks left behind."""
    from fabline.checks.fabric.facts import problem_facts

    return group(findings, problem_facts(fabric, device_rows, findings))


#: How many distinct variable values one kind of device remembers its compiled rules for.
_KIND_MEMO = 1024
_NO_VALUE: Any = object()  # a variable the device does not set (its rule reads the baseline's)


class _Kind:
    """The rules of one kind of device (role, platform, groups) and what their compiling reads."""

    __slots__ = ("by_name", "memo", "programs", "var_names")

    def __init__(self, programs: list[RuleProgram]) -> None:
        self.programs = programs
        #: Every variable the programs read: equal values, equal compiled rules.
        self.var_names = tuple(sorted({n for p in programs for n in p.var_names}))
        #: A program has a ``hosts`` selector (chosen by device name): nothing is remembered.
        self.by_name = any(p.hosts is not None for p in programs)
        #: The compiled rules by the ``repr`` of the device's values of ``var_names``.
        self.memo: dict[str, list[tuple[RuleProgram, _Compiled | None, str | None]]] = {}


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
        registry: Mapping[str, type[AnyCheck]],
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
            if rule.enabled and exclude_tags.isdisjoint(cls.tags):
                self._add_check(cls, rule.params, severity_of(rule, cls.severity), baseline, rule.id)
        for check_id, cls in registry.items():
            if check_id not in configured and exclude_tags.isdisjoint(cls.tags):
                self._add_check(cls, {}, cls.severity, baseline, check_id)
        self._plans: dict[tuple[str, str, bool], list[tuple[_PyCheck, bool]]] = {}
        self._kinds: dict[tuple[str, str, tuple[str, ...]], _Kind] = {}
        self._scans = ScanCache()
        today = today or dt.date.today()
        self.waivers = [
            WaiverMatcher(w, str(src), w.expires is not None and w.expires < today)
            for w, src in baseline.waivers
        ]

    def _add_check(
        self,
        cls: type[AnyCheck],
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

    @property
    def uses_links(self) -> bool:
        """Whether a fabric check of this engine reads the link graph (the devices are then projected)."""
        return any(pc.check.scope == "fabric" and pc.check.uses_links for pc in self.pychecks)

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
        pair: PairHook | None = None,
    ) -> RunOutcome:
        """Check every device against every applicable rule and check.

        Args:
            devices: Inventory devices, in report order.
            snapshot: The snapshot to check.
            previous: An earlier snapshot; Python checks see each device's earlier state (for
                counter deltas) as ``DeviceContext.previous``.
            options: Run-wide inputs for fabric checks (``FabricContext.options``).
            jobs: Worker processes for the per-device pass (default: one per CPU, at most
                :data:`fabline.perf.MAX_JOBS`, and 1 for small fabrics). Results are identical for any value.
            pair: Work on both states of each device as they are read (with ``previous`` only):
                ``drift``'s snapshot diff (:class:`~fabline.engine.parallel.PairHook`).
        """
        started = time.time()
        roles_by_name = {d.name.lower(): d.role for d in devices}
        work = Work(self, devices, snapshot, previous, roles_by_name, pair if previous is not None else None)
        results = ResultStore()
        device_rows: list[dict[str, Any]] = []
        warnings: list[str] = []
        collected: dict[str, dict[str, Any]] = {
            c.check.id: {} for c in self.pychecks if c.check.scope == "fabric"
        }
        summaries: dict[str, DeviceSummary] = {}
        links = LinkGraphs({}, summaries, projected=self.uses_links)
        if self.uses_links:  # paired as the workers' parts arrive, not after them
            links.pair_as_added((d.name for d in devices), self._link_patterns())
        n_jobs = choose_jobs(jobs, len(devices))
        for part in run_parts(work, n_jobs):
            results.merge(part.results)
            device_rows.extend(part.rows)
            warnings.extend(part.warnings)
            for check_id, values in part.collected.items():
                collected[check_id].update(values)
            links.add(part.views)  # ports converted and indexed while the workers go on
            if work.pair is not None:
                work.pair.take(part.paired)
            for dev, row, readable in zip(devices[part.lo : part.hi], part.rows, part.readable, strict=True):
                summaries[dev.name] = DeviceSummary(
                    dev.name,
                    dev.platform,
                    dev.role,
                    tuple(dev.groups),
                    public_vars(dev.vars),
                    readable,
                    row["status"],
                    part.unsupported.get(dev.name, {}),
                )
        fabric = FabricContext(
            summaries, {}, roles_by_name, {**(options or {}), "previous": previous is not None},
            links=links,
        )  # fmt: skip
        for outcome in run_fabric_checks(self._fabric_work(fabric, collected), n_jobs):
            results.merge(outcome.results)
            fabric.notes.extend(outcome.notes)
            if outcome.graph is not None:  # the grouping's facts read the graph asked for last
                fabric.links.graph(outcome.graph)
        if previous is None:
            results.extend(self._without_previous(devices))
        warnings.extend(fabric.notes)
        warnings.extend(apply_waivers(self.waivers, results.problems, results))
        problems = _group_problems(fabric, device_rows, results.problems)
        # The link graphs and what the checks collected: freed when the process ends, not here
        # (about a second of freeing on 100k GPUs, for a process that ends after its reports).
        keep_until_exit(fabric, collected, work)
        return RunOutcome(
            results, device_rows, warnings, started, time.time(), self.describe_checks(), problems
        )

    def _fabric_work(self, fabric: FabricContext, collected: Mapping[str, dict[str, Any]]) -> FabricWork:
        """The fabric checks' pass over ``fabric``: each check's run, and their groups (by module)."""
        checks = [pc for pc in self.pychecks if pc.check.scope == "fabric"]

        def run_one(i: int) -> FabricOutcome:
            pc = checks[i]
            fabric.collected = collected[pc.check.id]
            noted = len(fabric.notes)
            fabric.links.asked = None
            store = ResultStore()
            try:
                store.extend(pc.check.check_fabric(fabric), bounded=True)
            except Exception as exc:  # a check bug is an error result, never a crash
                store.append(
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
            notes = fabric.notes[noted:]
            del fabric.notes[noted:]
            return FabricOutcome(store, notes, fabric.links.asked)

        def prepare() -> None:
            # Every link graph a link check will ask for (one, unless checks ignore other peers).
            for patterns in self._link_patterns():
                with contextlib.suppress(Exception):  # the check meets the error itself, as a result
                    fabric.links.prepare(patterns)

        groups: dict[str, FabricGroup] = {}
        for i, pc in enumerate(checks):
            group = groups.setdefault(type(pc.check).__module__, FabricGroup([], links=False))
            group.checks.append(i)
            group.links = group.links or pc.check.uses_links
        return FabricWork(run_one, list(groups.values()), prepare)

    def _link_patterns(self) -> list[tuple[str, ...]]:
        """The ``ignore_peers`` patterns of each link graph the link checks ask for, once each."""
        out: list[tuple[str, ...]] = []
        for pc in self.pychecks:
            if pc.check.scope == "fabric" and pc.check.uses_links:
                ignore = getattr(pc.check.params, "ignore_peers", None)
                patterns = tuple(ignore) if isinstance(ignore, list | tuple) else ()
                if patterns not in out:
                    out.append(patterns)
        return out

    def check_range(self, work: Work, lo: int, hi: int) -> Part:
        """The per-device pass over ``work.devices[lo:hi]`` (in a worker process or in-line)."""
        part = Part(lo, hi)
        part.collected = {c.check.id: {} for c in self.pychecks if c.check.scope == "fabric"}
        # One projection per device for every check that reads the link graph (shared values
        # interned across the slice's devices).
        projector = Projector() if self.uses_links else None
        paired = work.pair.begin(lo) if work.pair is not None else None
        devices = work.devices[lo:hi]
        sides = [work.snapshot] if work.previous is None else [work.snapshot, work.previous]
        for dev in reading_ahead(devices, [d.name for d in devices], sides):
            state, problem = self._load(work.snapshot, dev)
            earlier: tuple[dict[str, Any] | None, StateError | None] | None = None
            if paired is not None and paired.wants(dev.name):
                assert work.previous is not None
                earlier = _load_previous(work.previous, dev.name)
                # Before the checks see them; a state the schema pass marked is read again, as written.
                paired.add(
                    dev.name, _as_written(work.previous, dev.name, earlier[0]),
                    _as_written(work.snapshot, dev.name, state),
                )  # fmt: skip
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
            if state is not None and isinstance(state.get("unsupported"), dict):
                part.unsupported[dev.name] = state["unsupported"]
            if state is not None:
                part.warnings.extend(_identity_warnings(dev, state))
            if not readable:
                reason = problem or _unreadable_reason(status, state, work.snapshot, dev.name)
                part.results.extend(self._unreadable_results(dev, reason))
                continue
            assert state is not None
            prev = (
                _previous_state(work.previous, dev.name, part.warnings, earlier)
                if work.previous is not None
                else None
            )
            self._check_device(dev, state, work.roles_by_name, part, projector, prev, work.previous is None)
        if paired is not None:
            part.paired = paired.finish()
        return part

    # -- per device ---------------------------------------------------------------------------
    @staticmethod
    def _load(snapshot: Snapshot, dev: DeviceLike) -> tuple[dict[str, Any] | None, str | None]:
        try:
            return snapshot.load(dev.name), None
        except StateError as exc:
            return None, f"state unusable: {exc}"

    def _without_previous(self, devices: Sequence[DeviceLike]) -> Iterator[Result]:
        """A run without a previous snapshot: one fabric-level skip per check that needs one (or
        compares with one, ``Check.compares_previous``) and applies to some device (not one per
        device: 15,000 identical lines on a 100k-GPU fabric).
        """
        for pc in self.pychecks:
            check = pc.check
            if (check.needs_previous or check.compares_previous) and any(
                check.applies_to(d.role, d.platform) for d in devices
            ):
                yield Result(
                    check.id, FABRIC_DEVICE, None, Status.SKIPPED, pc.severity, None, None, NO_PREVIOUS
                )

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
        part: Part,
        projector: Projector | None,
        previous: Mapping[str, Any] | None = None,
        without_previous: bool = False,
    ) -> None:
        results, collected = part.results, part.collected
        ifaces = state.get("interfaces")
        unsupported = state.get("unsupported") or None
        name = dev.name
        selected = self._selected(dev)
        scanned = self._scan_rules(dev, selected, ifaces, roles_by_name)
        for k, (prog, compiled, error) in enumerate(selected):
            if compiled is None:
                results.append(
                    Result(prog.id, name, None, Status.ERROR, prog.severity, None, None, str(error))
                )
                continue
            if not prog.per_interface:
                r = prog.evaluate(name, None, state, compiled, unsupported)
                results.add_block(
                    prog.id, name, prog.severity, compiled.expected, _DEVICE, None if r is None else {0: r}
                )
                continue
            hit = scanned.get(k)
            if hit is None:  # the state has no interfaces mapping
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
            subjects, bodies, left = hit
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
            # The scan passed the bodies where everything holds; evaluate judges the rest.
            for i in left:
                r = evaluate(name, subjects[i], bodies[i], compiled, unsupported)
                if r is not None:
                    if problems is None:
                        problems = {}
                    problems[i] = r
            results.add_block(prog.id, name, prog.severity, compiled.expected, subjects, problems)
        if not self.pychecks:
            return
        # The states were checked against the schema when read: the checks see them typed (a cast,
        # no conversion: they stay the dicts that were loaded).
        ctx = DeviceContext(
            dev.name, dev.platform, dev.role, tuple(dev.groups), public_vars(dev.vars), cast("State", state),
            roles_by_name, cast("State | None", previous), _interval(previous, state),
        )  # fmt: skip
        if projector is not None:
            part.views[dev.name] = projector.project(ctx)
        for pc, collects in self._plan(dev.role, dev.platform, without_previous):
            try:
                if collects:
                    collected[pc.check.id][dev.name] = pc.check.collect(ctx)
                else:
                    results.extend(pc.check.check_device(ctx), bounded=True)
            except Exception as exc:  # a check bug is an error result, never a crash
                results.append(
                    Result(
                        pc.check.id, dev.name, None, Status.ERROR, pc.severity, None, None, _exc_message(exc)
                    )
                )

    def _selected(self, dev: DeviceLike) -> list[tuple[RuleProgram, _Compiled | None, str | None]]:
        """The rules that apply to the device, compiled for its variables (or the error compiling gave).

        Devices of a kind whose variables the kind's rules read are equal get the same list: it
        is remembered by those values (one ``repr`` per device, not one per rule). Not remembered:
        a kind with a ``hosts`` selector (chosen by name) and a list with an error (its message
        names the device).
        """
        kind = self._kind_of(dev)
        key = ""
        if not kind.by_name:
            names, vals = kind.var_names, dev.vars
            key = repr(tuple(vals.get(n, _NO_VALUE) for n in names)) if names else ""
            hit = kind.memo.get(key)
            if hit is not None:
                return hit
        var_keys: dict[Any, str] = {}  # rules using the same variables share their cache key
        selected: list[tuple[RuleProgram, _Compiled | None, str | None]] = []
        failed = False
        for prog in kind.programs:
            if prog.hosts is None or dev.name in prog.hosts:
                try:
                    selected.append((prog, prog.compiled(dev, var_keys), None))
                except ConfigError as exc:
                    selected.append((prog, None, str(exc)))
                    failed = True
        if not kind.by_name and not failed and len(kind.memo) < _KIND_MEMO:
            kind.memo[key] = selected
        return selected

    def _kind_of(self, dev: DeviceLike) -> _Kind:
        """The rules whose role, platform and group selectors take the device (a ``hosts``
        selector is the caller's to test): the same :class:`_Kind` for every device of a kind.
        """
        key = (dev.role, dev.platform, tuple(dev.groups))
        hit = self._kinds.get(key)
        if hit is None:
            hit = _Kind([p for p in self.programs if p.selects_kind(dev)])
            if len(self._kinds) < 4096:
                self._kinds[key] = hit
        return hit

    def _scan_rules(
        self,
        dev: DeviceLike,
        selected: list[tuple[RuleProgram, _Compiled | None, str | None]],
        ifaces: Any,
        roles_by_name: Mapping[str, str],
    ) -> dict[int, tuple[tuple[str, ...], list[Mapping[str, Any]], list[int]]]:
        """The per-interface rules of ``selected`` by interface selector: one selection and one
        scan for each selector's rules (:class:`~fabline.engine.rules.ScanCache`). By position in
        ``selected``: the selected subjects, their bodies, and the positions the rule's fast path
        leaves to ``evaluate``. Empty when the state has no interfaces mapping.
        """
        scanned: dict[int, tuple[tuple[str, ...], list[Mapping[str, Any]], list[int]]] = {}
        if not isinstance(ifaces, Mapping):
            return scanned
        by_selector: dict[tuple[Any, ...], list[int]] = {}
        for k, (prog, compiled, _) in enumerate(selected):
            if compiled is not None and prog.per_interface:
                members = by_selector.get(prog.selector_key)
                if members is None:
                    by_selector[prog.selector_key] = [k]
                else:
                    members.append(k)
        if not by_selector:
            return scanned
        ordered = [
            (n, body)
            for n in natural_order(ifaces)
            if type(body := ifaces[n]) is dict or isinstance(body, Mapping)  # the ABC test is slow
        ]
        for members in by_selector.values():
            chosen = selected[members[0]][0].select_interfaces(dev, ordered, roles_by_name)
            subjects = tuple(n for n, _ in chosen)
            bodies = [b for _, b in chosen]
            if not subjects:
                for k in members:
                    scanned[k] = (subjects, bodies, [])
                continue
            scan, predicates = self._scans.get(tuple(cast("_Compiled", selected[k][1]) for k in members))
            for k, left in zip(members, scan(bodies, predicates), strict=True):
                scanned[k] = (subjects, bodies, left)
        return scanned

    def _plan(self, role: str, platform: str, without_previous: bool) -> list[tuple[_PyCheck, bool]]:
        """The Python checks a device of this role and platform runs, in order, each with whether it
        is a fabric check's ``collect`` (else a device check's ``check_device``); once per kind of device.
        """
        key = (role, platform, without_previous)
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = [
                (pc, pc.check.scope == "fabric")
                for pc in self.pychecks
                if pc.check.applies_to(role, platform)
                # without a previous snapshot: one fabric-level skip for the run (see run())
                and not (without_previous and pc.check.needs_previous)
                and (pc.check.scope != "fabric" or pc.collects)
            ]
        return plan


_DEVICE: tuple[str | None, ...] = (None,)


def _load_previous(previous: Snapshot, name: str) -> tuple[dict[str, Any] | None, StateError | None]:
    try:
        return previous.load(name), None
    except StateError as exc:
        return None, exc


def _as_written(snapshot: Snapshot, name: str, doc: dict[str, Any] | None) -> dict[str, Any] | None:
    """``doc`` when it holds the values its file does (the schema pass marked nothing in it), else None."""
    return None if doc is None or name in snapshot.marked else doc


def _previous_state(
    previous: Snapshot,
    name: str,
    warnings: list[str],
    loaded: tuple[dict[str, Any] | None, StateError | None] | None = None,
) -> dict[str, Any] | None:
    """A device's earlier state, or None (missing, unreadable: a warning, never a failure).

    ``loaded``: what :func:`_load_previous` already gave for it.
    """
    doc, exc = loaded if loaded is not None else _load_previous(previous, name)
    if exc is not None:
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
