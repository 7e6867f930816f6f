"""Diff of two snapshots (or two recorded runs): state changes, counter rates, result changes.

* **State changes**: every path whose value differs between the two states of a device, except
  volatile fields (:data:`DEFAULT_VOLATILE`, extended by the user). A plain dict walk finds the
  changed subtrees (most devices have none); DeepDiff then reports exactly what changed inside
  them. A list is reported whole (``pfc_priorities: [3] -> [3, 4]``), not element by element.
* **Counters**: deltas and rates per interface counter between the two collection times
  (``collected_at`` of each state). A counter lower than before was reset (clear or reboot): the
  delta is then the count since the reset, ``reset`` is true and no rate is given. They are
  summarized per counter (:mod:`fabline.history.counters`): ports moved, fastest movers, resets,
  and the ports past the limit of the check that judges the counter (findings); every row only
  on request (``counter_rows``: JSON Lines, streamed).
* **Results**: new failures, resolved failures, persisting failures, new errors, by result id.
* **Problems**: new, persisting and resolved problems (findings grouped by cause,
  :mod:`fabline.problems`), by problem id: the same cause keeps its id from run to run.
* **Passes**: the passes per check on each side (``report.json``'s ``passes``) and the check and
  device pairs whose count changed (a port gone, a rule added), the first :data:`MAX_PASS_CHANGES`.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fabline.history.counters import CounterLimits, CounterRow, CounterSummary, RowWriter
from fabline.perf import fork_pool, paused_gc, worker_count
from fabline.record import CounterDelta
from fabline.results import ExitCode, PassCounts, Result, Severity, Status, change_exit_code
from fabline.snapshot import Snapshot, reading_ahead
from fabline.state import StateError, parse_time

#: Paths never reported as state changes: counters, uptime, timestamps (``last_flap_*`` too), optics
#: readings, the pre-FEC BER (a rate that moves every poll), and the
#: frame sizes derived from ``mtu`` (a change shows once, as the ``mtu`` change). A
#: pattern is dotted; ``*`` matches one key (glob), a leading ``**.`` any depth; a matching path
#: excludes its whole subtree. Documented in docs/operations.md; ``--ignore`` adds more.
DEFAULT_VOLATILE: tuple[str, ...] = (
    "collected_at",
    "errors",
    "**.counters",
    "**.uptime*",
    "**.*_at",
    "**.*timestamp*",
    "**.last_*",
    "interfaces.*.optics.temperature_c",
    "interfaces.*.optics.*_dbm",
    "interfaces.*.optics.*bias*",
    "interfaces.*.optics.*voltage*",
    "interfaces.*.frame_bytes*",
    "interfaces.*.fec_pre_ber",
)

_MISSING: Any = object()
#: (check, device) pass count changes listed in the diff (the totals per check are all there).
MAX_PASS_CHANGES = 200


class _IgnoreNode:
    """A set of partly matched ignore patterns at one depth of a state (cached per key)."""

    __slots__ = ("_children", "_matcher", "states", "terminal")

    def __init__(self, matcher: IgnoreSet, states: frozenset[tuple[int, int]]) -> None:
        self._matcher = matcher
        self.states = states
        self.terminal = any(pos == len(matcher.patterns[i]) for i, pos in states)
        self._children: dict[str, _IgnoreNode] = {}

    def child(self, key: str) -> _IgnoreNode:
        hit = self._children.get(key)
        if hit is None:
            hit = self._children[key] = self._matcher.node(self._advance(key))
        return hit

    def _advance(self, key: str) -> frozenset[tuple[int, int]]:
        nxt: set[tuple[int, int]] = set()
        for i, pos in self.states:
            segs = self._matcher.patterns[i]
            if pos >= len(segs):
                continue
            seg = segs[pos]
            if seg == "**":
                nxt.add((i, pos))
                if pos + 1 < len(segs) and fnmatch.fnmatchcase(key, segs[pos + 1]):
                    nxt.add((i, pos + 2))
            elif fnmatch.fnmatchcase(key, seg):
                nxt.add((i, pos + 1))
        return frozenset(nxt)


class IgnoreSet:
    """Compiled volatile-path patterns.

    Example:
        >>> ig = IgnoreSet(["**.counters", "interfaces.*.optics.temperature_c"])
        >>> ig.matches("interfaces.Ethernet0.counters.crc_errors"), ig.matches("interfaces.Ethernet0.mtu")
        (True, False)
        >>> ig.matches("interfaces.eth0.optics.temperature_c"), ig.matches("counters")
        (True, True)
    """

    def __init__(self, patterns: Iterable[str]) -> None:
        self.patterns: list[tuple[str, ...]] = [tuple(p.split(".")) for p in patterns if p.strip()]
        self._nodes: dict[frozenset[tuple[int, int]], _IgnoreNode] = {}
        self.root = self.node(frozenset((i, 0) for i in range(len(self.patterns))))

    def node(self, states: frozenset[tuple[int, int]]) -> _IgnoreNode:
        """The shared node of a set of (pattern, position) states."""
        hit = self._nodes.get(states)
        if hit is None:
            hit = self._nodes[states] = _IgnoreNode(self, states)
        return hit

    def matches(self, path: str) -> bool:
        """Whether a dotted path (or one of its parents) is ignored."""
        node = self.root
        for part in path.split("."):
            if node.terminal:
                return True
            node = node.child(part)
        return node.terminal


@dataclass(frozen=True, slots=True)
class Change:
    """One changed state path of one device."""

    device: str
    path: str
    before: Any
    after: Any
    kind: str  # changed | added | removed

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"device": self.device, "path": self.path, "before": self.before, "after": self.after,
                "kind": self.kind}  # fmt: skip


@dataclass
class Side:
    """One input of a diff: a snapshot folder and, when known, its check results.

    Attributes:
        label: How the user named it (path or run id).
        snapshot: The snapshot folder.
        problems: Non-pass results (None when no check results are known for this side).
        run_id: The recorded run, when the input was a run.
        inventory_digest: Digest of the inventory the run used (runs only).
        devices: The devices the check covered (None: unknown).
        problem_groups: The run's problems as report.json entries (None: not known).
        passes: The run's passes per check and device (None: not known).
        baselines: The baseline files the run was checked with, as recorded (runs only).
        baseline_digest: Their digest when the run was recorded (runs only).
    """

    label: str
    snapshot: Path
    problems: list[Result] | None = None
    run_id: str | None = None
    inventory_digest: str | None = None
    devices: set[str] | None = None
    problem_groups: list[dict[str, Any]] | None = None
    passes: PassCounts | None = None
    baselines: list[str] | None = None
    baseline_digest: str | None = None
    #: The run's pass counts still being read (in a forked process, while the snapshots are
    #: diffed): called once for :attr:`passes` when the comparison needs them.
    pending_passes: Callable[[], PassCounts] | None = None


@dataclass
class DiffResult:
    """Everything ``fabline diff`` reports."""

    before: Side
    after: Side
    changes: list[Change] = field(default_factory=list)
    counters: CounterSummary = field(default_factory=CounterSummary)
    counter_rows: Path | None = None
    new_failures: list[dict[str, Any]] = field(default_factory=list)
    resolved: list[dict[str, Any]] = field(default_factory=list)
    persisting: list[dict[str, Any]] = field(default_factory=list)
    new_errors: list[dict[str, Any]] = field(default_factory=list)
    new_problems: list[dict[str, Any]] = field(default_factory=list)
    persisting_problems: list[dict[str, Any]] = field(default_factory=list)
    resolved_problems: list[dict[str, Any]] = field(default_factory=list)
    problems_compared: bool = False
    only_before: list[str] = field(default_factory=list)
    only_after: list[str] = field(default_factory=list)
    unreadable: list[dict[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    devices_compared: int = 0
    results_compared: bool = False
    passes_compared: bool = False
    pass_totals: dict[str, dict[str, int]] = field(default_factory=dict)
    pass_changes: list[dict[str, Any]] = field(default_factory=list)
    pass_changes_total: int = 0
    #: Where the counter limits come from, for a person (``-b FILE``, the baseline recorded with a run, ...).
    limits_from: str = ""

    def exit_code(self, fail_on: Severity = Severity.MINOR) -> ExitCode:
        """4 when there are new errors, new failures or counters past their check's limit at or
        above ``fail_on``, else 0.
        """
        severities = [Severity.parse(r["severity"]) for r in self.new_failures]
        severities.extend(self.counters.finding_severities())
        return change_exit_code(bool(self.new_errors), severities, fail_on)

    def to_dict(self) -> dict[str, Any]:
        """The JSON document (``fabline.diff/2``)."""
        return {
            "schema": "fabline.diff/2",
            "before": _side_dict(self.before),
            "after": _side_dict(self.after),
            "devices_compared": self.devices_compared,
            "results_compared": self.results_compared,
            "ignored_paths": self.ignored,
            "only_before": self.only_before,
            "only_after": self.only_after,
            "unreadable": self.unreadable,
            "warnings": self.warnings,
            "changes": [c.to_dict() for c in self.changes],
            "counters": {
                **self.counters.to_dict(str(self.counter_rows) if self.counter_rows else None),
                "limits_from": self.limits_from,
            },
            "new_failures": self.new_failures,
            "resolved": self.resolved,
            "persisting": self.persisting,
            "new_errors": self.new_errors,
            "problems_compared": self.problems_compared,
            "problems": {
                "new": self.new_problems,
                "persisting": self.persisting_problems,
                "resolved": self.resolved_problems,
            },
            "passes_compared": self.passes_compared,
            "passes": {
                "by_check": self.pass_totals,
                "changed": self.pass_changes,
                "changed_total": self.pass_changes_total,
            },
        }


def _side_dict(side: Side) -> dict[str, Any]:
    return {"label": side.label, "snapshot": str(side.snapshot), "run_id": side.run_id}


# --------------------------------------------------------------------------------------------
# state changes


def changed_subtrees(
    before: Mapping[str, Any], after: Mapping[str, Any], node: _IgnoreNode, prefix: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], Any, Any]]:
    """(path, before, after) of the largest differing subtrees, volatile paths left out.

    A dict present on both sides is descended into; anything else that differs is yielded whole
    (``_MISSING`` for a side that lacks it).
    """
    for key in before.keys() | after.keys() if before.keys() != after.keys() else before.keys():
        b = before.get(key, _MISSING)
        a = after.get(key, _MISSING)
        if a is b or (a == b and type(a) is type(b)):
            continue
        child = node.child(key) if node.states else node
        if child.terminal:
            continue
        if type(a) is dict and type(b) is dict:
            yield from changed_subtrees(b, a, child, (*prefix, key))
        elif _strip(b, child) != _strip(a, child):
            yield (*prefix, key), b, a


def _strip(value: Any, node: _IgnoreNode) -> Any:
    """``value`` without its ignored subpaths (only dicts are descended)."""
    if not node.states or type(value) is not dict:
        return value
    out = {}
    for k, v in value.items():
        child = node.child(k)
        if not child.terminal:
            out[k] = _strip(v, child)
    return out


def state_changes(
    device: str, before: Mapping[str, Any], after: Mapping[str, Any], ignore: IgnoreSet
) -> list[Change]:
    """Every non-volatile path that differs between two states of one device.

    Example:
        >>> ig = IgnoreSet(DEFAULT_VOLATILE)
        >>> b = {"interfaces": {"Ethernet8": {"mtu": 9216, "counters": {"crc_errors": 1}}}}
        >>> a = {"interfaces": {"Ethernet8": {"mtu": 1500, "counters": {"crc_errors": 9}}}}
        >>> [(c.path, c.before, c.after) for c in state_changes("leaf1", b, a, ig)]
        [('interfaces.Ethernet8.mtu', 9216, 1500)]
    """
    out: list[Change] = []
    for parts, b, a in changed_subtrees(before, after, ignore.root):
        node = ignore.root
        for p in parts:
            node = node.child(p)
        out.extend(_deep_changes(device, parts, _strip(b, node), _strip(a, node)))
    out.sort(key=lambda c: c.path)
    return out


def _deep_changes(device: str, parts: tuple[str, ...], b: Any, a: Any) -> list[Change]:
    """What changed inside one differing subtree, by DeepDiff; lists are reported whole."""
    if b is _MISSING or a is _MISSING or type(b) is not dict or type(a) is not dict:
        return [_change(device, parts, b, a)]
    from deepdiff import DeepDiff

    tree = DeepDiff(b, a, view="tree", verbose_level=2)
    seen: dict[tuple[str, ...], Change] = {}
    for levels in tree.values():
        for level in levels:
            rel = [str(p) for p in level.path(output_format="list")]
            # Collapse into the innermost dict: a list changes as one value.
            cut, obj_b, obj_a = [], b, a
            for p in rel:
                if type(obj_b) is not dict and type(obj_a) is not dict:
                    break
                cut.append(p)
                obj_b = obj_b.get(p, _MISSING) if type(obj_b) is dict else _MISSING
                obj_a = obj_a.get(p, _MISSING) if type(obj_a) is dict else _MISSING
            path = (*parts, *cut)
            if path not in seen:
                seen[path] = _change(device, path, obj_b, obj_a)
    return sorted(seen.values(), key=lambda c: c.path)


def _change(device: str, parts: Sequence[str], b: Any, a: Any) -> Change:
    kind = "added" if b is _MISSING else "removed" if a is _MISSING else "changed"
    return Change(device, ".".join(parts), None if b is _MISSING else b, None if a is _MISSING else a, kind)


# --------------------------------------------------------------------------------------------
# counters


#: Per-priority counter names, built once (a 100k-GPU diff has a million of them).
_LABELS: dict[tuple[str, str], str] = {}
#: Per-queue tables that list a queue only from its first event (the PFC watchdog's storm counts:
#: a port's table is ``{}`` until then): a queue missing before counts from zero.
_FROM_ZERO = frozenset({"pfcwd_storms_detected", "pfcwd_storms_restored"})


def counter_deltas(device: str, before: Mapping[str, Any], after: Mapping[str, Any]) -> list[CounterDelta]:
    """Deltas of every interface counter that moved or was reset between two states of a device.

    Per-priority counters (``pfc_rx_pause: {"3": n}``) are named ``pfc_rx_pause.3``. A queue
    missing from a storm-count table read in both states had none before (the first storm).

    Example:
        >>> b = {"collected_at": "2026-11-29T08:00:00Z", "interfaces": {"eth0": {"counters": {"cnp_sent": 100}}}}
        >>> a = {"collected_at": "2026-11-29T08:00:10Z", "interfaces": {"eth0": {"counters": {"cnp_sent": 150}}}}
        >>> c = counter_deltas("gpu-1", b, a)[0]
        >>> c.counter, c.delta, c.per_second, c.reset
        ('cnp_sent', 50, 5.0, False)
    """
    return [CounterDelta(*row) for row in counter_rows(device, before, after)]


def counter_rows(device: str, before: Mapping[str, Any], after: Mapping[str, Any]) -> list[CounterRow]:
    """:func:`counter_deltas` as plain tuples: the hot path of a large diff (no objects made twice)."""
    tb, ta = parse_time(before.get("collected_at")), parse_time(after.get("collected_at"))
    seconds = ta - tb if tb is not None and ta is not None and ta > tb else None
    out: list[CounterRow] = []
    append = out.append
    ib, ia = before.get("interfaces"), after.get("interfaces")
    if type(ib) is not dict or type(ia) is not dict:
        return out
    for name, body_a in ia.items():
        body_b = ib.get(name)
        if type(body_b) is not dict or type(body_a) is not dict:
            continue
        cb, ca = body_b.get("counters"), body_a.get("counters")
        if type(cb) is not dict or type(ca) is not dict or cb == ca:
            continue
        # A count is ``type(v) is int`` (never a bool); rows made in place: a million a night at 100k GPUs.
        for key, va in ca.items():
            vb = cb.get(key)
            if va == vb:
                continue
            if type(va) is dict and type(vb) is dict:
                for prio, xa in va.items():
                    xb = vb.get(prio)
                    if xb is None and key in _FROM_ZERO:
                        xb = 0
                    if type(xa) is int and type(xb) is int and xa != xb:
                        label = _LABELS.get((key, prio))
                        if label is None:
                            label = _LABELS[(key, prio)] = f"{key}.{prio}"
                        if xa < xb:  # cleared or rebooted in between: the count since, no rate
                            append((device, name, label, xb, xa, xa, None, True, seconds))
                        else:
                            d = xa - xb
                            append(
                                (
                                    device,
                                    name,
                                    label,
                                    xb,
                                    xa,
                                    d,
                                    d / seconds if seconds else None,
                                    False,
                                    seconds,
                                )
                            )
            elif type(va) is int and type(vb) is int:
                if va < vb:
                    append((device, name, key, vb, va, va, None, True, seconds))
                else:
                    d = va - vb
                    append((device, name, key, vb, va, d, d / seconds if seconds else None, False, seconds))
    return out


def counters_between(before: Path, after: Path, limits: CounterLimits | None = None) -> CounterSummary:
    """The counter movement of every device in both snapshots, summarized (unreadable states are
    left out), over forked workers on a large fabric.
    """
    snap_b, snap_a = Snapshot(before), Snapshot(after)
    names = sorted(set(snap_b.device_names()) & set(snap_a.device_names()))
    result = DiffResult(Side(str(before), before), Side(str(after), after))
    result.counters = CounterSummary(limits)
    with paused_gc():
        _run_devices(result, snap_b, snap_a, None, names, None)
    return result.counters


# --------------------------------------------------------------------------------------------
# results


def _brief(r: Result, other: Result | None) -> dict[str, Any]:
    out = r.to_dict()
    out["before_status"] = other.status.value if other is not None else None
    return out


def _subject_ids(r: Result) -> list[str]:
    """The per-subject result ids a result stands for: its own id, or one per subject of a block
    of skipped or error results (``fabline.results.SkipBlock``).
    """
    subjects = getattr(r, "subjects", None)
    if subjects is None or r.subject is not None:
        return [r.id]
    prefix = f"{r.device}::{r.check}::"
    return [prefix + (s or "-") for s in subjects]


def compare_results(
    before: Sequence[Result], after: Sequence[Result], after_devices: set[str] | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """(new failures, resolved, persisting, new errors) between the non-pass results of two runs.

    A result absent from a side counts as not failing there (a pass, or not evaluated), except
    that a failure of a device the later run did not cover at all (``after_devices``) is not
    "resolved": that device is listed as being on one side only.
    ``resolved`` entries are the *before* results with ``after_status``.

    Results are compared subject by subject: a block of errors that share their message (one
    result standing for many ports) is a new error when any of its ports did not error before,
    listed once, whole; a port of it that errored before is not new.
    """
    findings = (Status.FAIL, Status.ERROR)
    b: dict[str, Result] = {}
    for r in before:
        if r.status in findings:
            for rid in _subject_ids(r):
                b[rid] = r
    a_ids: set[str] = set()
    new_failures: list[dict[str, Any]] = []
    persisting: list[dict[str, Any]] = []
    new_errors: list[dict[str, Any]] = []
    for r in after:
        if r.status not in findings:
            continue
        ids = _subject_ids(r)
        a_ids.update(ids)
        if r.status is Status.FAIL:
            old = b.get(ids[0])
            (persisting if old is not None and old.status is Status.FAIL else new_failures).append(
                _brief(r, old)
            )
            continue
        fresh = [rid for rid in ids if (o := b.get(rid)) is None or o.status is not Status.ERROR]
        if fresh:
            new_errors.append(_brief(r, b.get(fresh[0])))
    gone = [
        r
        for r in dict.fromkeys(b.values())
        if r.status is Status.FAIL
        and r.id not in a_ids
        and (after_devices is None or r.device in after_devices)
    ]
    # What the gone failures are now: looked up only on their (device, check) pairs, so a run's
    # many skipped blocks are not expanded for nothing.
    wanted = {(r.device, r.check) for r in gone}
    now: dict[str, Status] = {}
    for r in after:
        if (r.device, r.check) in wanted:
            for rid in _subject_ids(r):
                now[rid] = r.status
    resolved: list[dict[str, Any]] = []
    for r in gone:
        entry = r.to_dict()
        status = now.get(r.id)
        entry["after_status"] = status.value if status is not None else "pass"
        resolved.append(entry)
    return new_failures, resolved, persisting, new_errors


def _problem_brief(p: Mapping[str, Any]) -> dict[str, Any]:
    """A problem entry without its (possibly long) list of finding ids."""
    return {k: v for k, v in p.items() if k != "findings"}


def compare_problems(
    before: Sequence[Mapping[str, Any]],
    after: Sequence[Mapping[str, Any]],
    after_devices: set[str] | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """(new, persisting, resolved) problems between two runs, by problem id.

    A problem of the earlier run whose devices the later run did not cover at all is not
    "resolved" (those devices are listed as being on one side only).

    Example:
        >>> b = [{"id": "p-1", "location": {"devices": ["leaf1"]}}, {"id": "p-2", "location": {"devices": ["leaf2"]}}]
        >>> a = [{"id": "p-2", "location": {"devices": ["leaf2"]}}, {"id": "p-3", "location": {"devices": ["gpu1"]}}]
        >>> [[p["id"] for p in part] for part in compare_problems(b, a)]
        [['p-3'], ['p-2'], ['p-1']]
    """
    ids_b = {p["id"] for p in before}
    ids_a = {p["id"] for p in after}
    new = [_problem_brief(p) for p in after if p["id"] not in ids_b]
    persisting = [_problem_brief(p) for p in after if p["id"] in ids_b]
    resolved = [
        _problem_brief(p)
        for p in before
        if p["id"] not in ids_a
        and (
            after_devices is None
            or not set(p.get("location", {}).get("devices", ())).isdisjoint(after_devices)
        )
    ]
    return new, persisting, resolved


def compare_passes(
    before: PassCounts, after: PassCounts
) -> tuple[dict[str, dict[str, int]], list[dict[str, Any]], int]:
    """(totals per check ``{check: {before, after}}``, the first changed (check, device) pairs,
    how many pairs changed) between the pass counts of two runs.

    Example:
        >>> totals, changed, n = compare_passes({"mtu": {"leaf1": 64, "leaf2": 64}}, {"mtu": {"leaf1": 63}})
        >>> totals, n
        ({'mtu': {'before': 128, 'after': 63}}, 2)
        >>> changed[0]
        {'check': 'mtu', 'device': 'leaf1', 'before': 64, 'after': 63}
    """
    totals: dict[str, dict[str, int]] = {}
    changed: list[dict[str, Any]] = []
    count = 0
    for check in list(before) + [c for c in after if c not in before]:
        b, a = before.get(check, {}), after.get(check, {})
        totals[check] = {"before": sum(b.values()), "after": sum(a.values())}
        if b == a:
            continue
        for device in list(b) + [d for d in a if d not in b]:
            nb, na = b.get(device, 0), a.get(device, 0)
            if nb != na:
                count += 1
                if len(changed) < MAX_PASS_CHANGES:
                    changed.append({"check": check, "device": device, "before": nb, "after": na})
    return totals, changed, count


# --------------------------------------------------------------------------------------------
# the diff


@dataclass
class DevicePiece:
    """The per-device part of a diff over some of its devices (one worker's), bounded.

    Everything is keyed by the device's position in the comparison's device order (names sorted),
    so pieces made in any order (a check's workers go in inventory order) join into the answer
    one pass in name order gives.

    Attributes:
        positions: The devices this piece covers (compared or not).
        changes: ``(position, that device's state changes)`` for the devices that have some.
        counters: Their counter movement, summarized.
        unreadable: ``(position, entry)`` per unreadable state.
        compared: Devices whose two states were read.
        rows_file: Where the piece's counter rows were written (None: not asked).
        rows_index: ``(position, offset, length)`` of each device's rows in ``rows_file``.
    """

    positions: list[int]
    changes: list[tuple[int, list[Change]]]
    counters: CounterSummary
    unreadable: list[tuple[int, dict[str, str]]]
    compared: int
    rows_file: Path | None
    rows_index: list[tuple[int, int, int]]


class PieceMaker:
    """Compares devices one at a time into a :class:`DevicePiece` (in whatever process it runs).

    A state not handed in is read here (as written: no schema pass).
    """

    def __init__(
        self,
        root_b: Path,
        root_a: Path,
        ignore: tuple[str, ...] | None,
        limits: CounterLimits,
        rows: Path | None,
        position: Mapping[str, int],
    ) -> None:
        self._snap_b, self._snap_a = Snapshot(root_b), Snapshot(root_a)
        #: Both sides, for a caller that reads ahead (:func:`~fabline.snapshot.reading_ahead`).
        self.snapshots = (self._snap_b, self._snap_a)
        self._matcher = IgnoreSet(ignore) if ignore is not None else None
        self._position = position
        self._writer = RowWriter(rows) if rows is not None else None
        self.piece = DevicePiece([], [], CounterSummary(limits), [], 0, rows, [])

    def wants(self, name: str) -> bool:
        """Whether ``name`` is one of the compared devices (it has a state on both sides)."""
        return name in self._position

    def add(
        self, name: str, before: Mapping[str, Any] | None = None, after: Mapping[str, Any] | None = None
    ) -> None:
        """Compare one device: its two states as written when given, else read here."""
        pos = self._position[name]
        piece = self.piece
        piece.positions.append(pos)
        docs = []
        for side, snap, doc in (("before", self._snap_b, before), ("after", self._snap_a, after)):
            if doc is None:
                try:
                    # As written: a diff compares values; the schema pass is the checks' business.
                    doc = snap.load(name, checked=False)
                except StateError as exc:
                    piece.unreadable.append((pos, {"device": name, "side": side, "message": str(exc)}))
                    continue
            docs.append(doc)
        if len(docs) != 2:
            return
        doc_b, doc_a = docs
        if doc_b is None or doc_a is None:
            return
        piece.compared += 1
        if self._matcher is not None:
            changes = state_changes(name, doc_b, doc_a, self._matcher)
            if changes:
                piece.changes.append((pos, changes))
        moved = counter_rows(name, doc_b, doc_a)
        if moved:
            interfaces = doc_a.get("interfaces")
            piece.counters.add_device(moved, interfaces if type(interfaces) is dict else None, pos)
            writer = self._writer
            if writer is not None:
                offset = writer.offset()
                writer.write(moved)
                piece.rows_index.append((pos, offset, writer.offset() - offset))

    def finish(self) -> DevicePiece:
        """The piece (its rows file closed)."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        return self.piece

    def close(self) -> None:
        """Close the rows file (on an error: the caller removes it)."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None


class CheckedPairs:
    """The per-device part of a snapshot diff made in a check's per-device pass (``drift``,
    ``diff -i``): the check with ``--previous`` reads both states of every device, so the diff
    compares them there, in the same workers, instead of reading both snapshots again.

    It is the engine's pair hook (:class:`fabline.engine.parallel.PairHook`): the engine calls
    :meth:`begin` per slice of its devices (in a worker or in-line), the slice's maker's ``add``
    per device with the states it read, and :meth:`take` with each slice's piece in this
    process. :func:`diff_sides` given it (``pieces=``) compares only the devices no slice covered
    (not in the check's inventory or ``--limit``) and joins the rest: the same diff as without it.

    Args:
        before: The earlier snapshot (the check's previous one).
        after: The later snapshot (the one checked).
        ignore: Volatile path patterns; they must hold :data:`DEFAULT_VOLATILE`'s derived frame
            sizes pattern (the check's states carry derived frame sizes a diff's reads lack).
        limits: The counter limits.
        counter_rows: Where every moved counter goes (None: not asked); the slices write parts beside it.
    """

    def __init__(
        self,
        before: Path,
        after: Path,
        ignore: Sequence[str],
        limits: CounterLimits,
        counter_rows: Path | None = None,
    ) -> None:
        if _FRAME_BYTES not in ignore:
            raise ValueError(f"the ignore patterns must hold {_FRAME_BYTES!r}")
        self.before, self.after = before, after
        names_b, names_a = Snapshot(before).device_names(), Snapshot(after).device_names()
        self.names = sorted(set(names_b) & set(names_a))
        self.position = {name: i for i, name in enumerate(self.names)}
        self.ignore = tuple(ignore)
        self.limits = limits
        self.counter_rows = counter_rows
        self.pieces: list[DevicePiece] = []

    def begin(self, lo: int) -> PieceMaker:
        """A maker for the slice of the check's devices that starts at ``lo``."""
        rows = None if self.counter_rows is None else _part_file(self.counter_rows, f"check{lo}")
        return PieceMaker(self.before, self.after, self.ignore, self.limits, rows, self.position)

    def take(self, piece: DevicePiece) -> None:
        """Keep a slice's piece (in the process that will diff)."""
        self.pieces.append(piece)

    def discard(self) -> None:
        """Remove the slices' row files (the diff did not use them)."""
        if self.counter_rows is not None:
            for part in self.counter_rows.parent.glob(f".{self.counter_rows.name}.part-check*"):
                part.unlink(missing_ok=True)
        self.pieces = []


_FRAME_BYTES = "interfaces.*.frame_bytes*"


def _part_file(rows: Path, tag: str) -> Path:
    return rows.with_name(f".{rows.name}.part-{tag}")


#: What one worker is given: both snapshot folders, the ignore patterns (None: counters only),
#: the devices with their positions, the counter limits, and where to write its counter rows.
_Job = tuple[Path, Path, "tuple[str, ...] | None", list[tuple[int, str]], CounterLimits, "Path | None"]


def _diff_devices(job: _Job) -> DevicePiece:
    """The piece of one worker's devices."""
    root_b, root_a, ignore, named, limits, rows = job
    with paused_gc():
        maker = PieceMaker(root_b, root_a, ignore, limits, rows, {n: p for p, n in named})
        try:
            names = [n for _, n in named]
            for name in reading_ahead(names, names, maker.snapshots):
                maker.add(name)
        finally:
            maker.close()
        return maker.finish()


def diff_sides(
    before: Side,
    after: Side,
    *,
    ignore: Sequence[str] = DEFAULT_VOLATILE,
    devices: Sequence[str] | None = None,
    limits: CounterLimits | None = None,
    counter_rows: Path | None = None,
    pieces: CheckedPairs | None = None,
) -> DiffResult:
    """Diff two sides: state changes and counters from the snapshots, results when both have them.

    Args:
        before: The earlier side.
        after: The later side.
        ignore: Volatile path patterns (the default list plus the user's).
        devices: Restrict to these device names (an inventory); None for every state file.
        limits: The counter checks' limits (:class:`~fabline.history.counters.CounterLimits`);
            None: the checks' own defaults.
        counter_rows: Write every moved counter here as JSON Lines (streamed); None: summary only.
        pieces: The devices a check already compared as it read them (:class:`CheckedPairs`,
            made with these snapshots, ``ignore``, ``limits`` and ``counter_rows``): only the
            others are read here. The answer is the same.

    Raises:
        ConfigError: A snapshot folder that is missing or has no ``state/``.
    """
    snap_b, snap_a = Snapshot(before.snapshot), Snapshot(after.snapshot)
    names_b, names_a = set(snap_b.device_names()), set(snap_a.device_names())
    if devices is not None:
        wanted = set(devices)
        names_b &= wanted
        names_a &= wanted
    result = DiffResult(before, after, ignored=list(ignore))
    result.counters = CounterSummary(limits if limits is not None else CounterLimits.from_rules({}))
    result.counter_rows = counter_rows
    only_b, only_a = names_b - names_a, names_a - names_b
    if before.devices is not None and after.devices is not None:
        only_b |= before.devices - after.devices
        only_a |= after.devices - before.devices
    result.only_before = sorted(only_b)
    result.only_after = sorted(only_a)
    names = sorted(names_b & names_a)
    if pieces is not None and (
        pieces.names != names
        or (pieces.before, pieces.after) != (before.snapshot, after.snapshot)
        or pieces.ignore != tuple(ignore)
        or pieces.limits is not result.counters.limits
        or pieces.counter_rows != counter_rows
    ):
        pieces.discard()  # made for another comparison: not used
        pieces = None
    with paused_gc():
        _run_devices(result, snap_b, snap_a, tuple(ignore), names, counter_rows, pieces)
    if before.problems is not None and after.problems is not None:
        result.results_compared = True
        result.new_failures, result.resolved, result.persisting, result.new_errors = compare_results(
            before.problems, after.problems, after.devices
        )
    if before.problem_groups is not None and after.problem_groups is not None:
        result.problems_compared = True
        result.new_problems, result.persisting_problems, result.resolved_problems = compare_problems(
            before.problem_groups, after.problem_groups, after.devices
        )
    for side in (before, after):
        if side.passes is None and side.pending_passes is not None:
            side.passes, side.pending_passes = side.pending_passes(), None
    if before.passes is not None and after.passes is not None:
        result.passes_compared = True
        result.pass_totals, result.pass_changes, result.pass_changes_total = compare_passes(
            before.passes, after.passes
        )
    if (
        before.inventory_digest
        and after.inventory_digest
        and before.inventory_digest != after.inventory_digest
    ):
        result.warnings.append(
            f"the two runs used different inventories ({before.label}: {before.inventory_digest[:12]}, "
            f"{after.label}: {after.inventory_digest[:12]})"
        )
    return result


def _run_devices(
    result: DiffResult,
    snap_b: Snapshot,
    snap_a: Snapshot,
    ignore: tuple[str, ...] | None,
    names: list[str],
    rows: Path | None,
    pieces: CheckedPairs | None = None,
) -> None:
    """State changes and counters of the devices in both snapshots, in-line or over workers.

    ``pieces``: what a check's workers already compared (:class:`CheckedPairs`); only the devices
    they did not cover are read here. Each worker summarizes its devices' counters (and writes
    their rows to its own part file when ``rows`` is asked for); the parent merges the summaries
    and joins the parts in device order, so no process holds every counter row.
    """
    limits = result.counters.limits
    done: list[DevicePiece] = list(pieces.pieces) if pieces is not None else []
    covered: set[int] = set()
    for piece in done:
        covered.update(piece.positions)
    todo = [(pos, name) for pos, name in enumerate(names) if pos not in covered]
    files: list[Path] = [p.rows_file for p in done if p.rows_file is not None]
    try:
        jobs = worker_count(len(todo))
        if not todo:
            pass
        elif jobs == 1:
            part = None if rows is None else _part_file(rows, "rest0")
            if part is not None:
                files.append(part)
            done.append(_diff_devices((snap_b.root, snap_a.root, ignore, todo, limits, part)))
        else:
            # Small parts: names sort by role and a switch's state is several times a host's, so a
            # few large parts left one worker every switch (23 s against 13 s of CPU on 100k GPUs).
            step = -(-len(todo) // (jobs * 32))
            starts = range(0, len(todo), step)
            parts = [None if rows is None else _part_file(rows, f"rest{n}") for n in range(len(starts))]
            files.extend(p for p in parts if p is not None)
            chunks: list[_Job] = [
                (snap_b.root, snap_a.root, ignore, todo[i : i + step], limits, parts[n])
                for n, i in enumerate(starts)
            ]
            with fork_pool(jobs) as pool:
                done.extend(pool.map(_diff_devices, chunks))
        if rows is not None:
            _join(done, rows)
    finally:
        for part in files:
            part.unlink(missing_ok=True)
    changes: list[tuple[int, list[Change]]] = []
    unreadable: list[tuple[int, dict[str, str]]] = []
    for piece in done:
        result.counters.merge(piece.counters)
        changes.extend(piece.changes)
        unreadable.extend(piece.unreadable)
        result.devices_compared += piece.compared
    changes.sort(key=lambda c: c[0])
    for _, device_changes in changes:
        result.changes.extend(device_changes)
    unreadable.sort(key=lambda u: u[0])  # stable: a device's before comes before its after
    result.unreadable.extend(u for _, u in unreadable)


def _join(pieces: list[DevicePiece], out: Path) -> None:
    """Write the pieces' counter rows into ``out`` in device order (beside it, then renamed)."""
    segments = sorted(
        (pos, piece.rows_file, offset, length)
        for piece in pieces
        if piece.rows_file is not None
        for pos, offset, length in piece.rows_index
    )
    tmp = out.with_name(f".{out.name}.tmp")
    handles: dict[Path, Any] = {}
    try:
        with tmp.open("wb") as fh:
            for _, path, offset, length in segments:
                src = handles.get(path)
                if src is None:
                    src = handles[path] = path.open("rb")
                src.seek(offset)
                fh.write(src.read(length))
    finally:
        for src in handles.values():
            src.close()
    tmp.replace(out)
