"""The engine's passes split over forked worker processes for large fabrics.

The per-device pass (:func:`run_parts`) goes over slices of the devices. The fabric checks that
follow it (:func:`run_fabric_checks`) go over groups of checks, once the data they read is in
this process: forked after it, the workers share it copy-on-write and send back only results.
"""

from __future__ import annotations

import marshal
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from fabline.checks.linkgraph import DeviceView
from fabline.engine.rules import DeviceLike
from fabline.perf import can_fork, fork_call, fork_pool, worker_count
from fabline.results import ResultStore
from fabline.snapshot import Snapshot

#: Devices per unit of work handed to a worker, at most.
CHUNK_DEVICES = 256
#: Units of work per worker, about: a unit is sized by the bytes of its states, so that the last
#: units are short whatever the devices (256 leaves with 128 ports each took 3.5 s on 100k GPUs,
#: as long as one worker could sit idle at the end while the other finished its last unit).
CHUNKS_PER_JOB = 32


class RangeChecker(Protocol):
    """What runs the per-device pass over a slice of the devices (the engine)."""

    def check_range(self, work: Work, lo: int, hi: int) -> Part:
        """The per-device pass over ``work.devices[lo:hi]``."""
        ...


class PairSlice(Protocol):
    """What a :class:`PairHook` does over one slice of the devices."""

    def wants(self, name: str) -> bool:
        """Whether the device's two states are wanted."""
        ...

    def add(self, name: str, before: Mapping[str, Any] | None, after: Mapping[str, Any] | None) -> None:
        """A device's previous and current state as written (None: not read as written; read them)."""
        ...

    def finish(self) -> Any:
        """What the slice gives back with its :class:`Part` (picklable)."""
        ...


class PairHook(Protocol):
    """Work on each device's two states while the per-device pass holds them (``drift``'s snapshot
    diff, :class:`fabline.history.diff.CheckedPairs`), so they are not read a second time.
    """

    def begin(self, lo: int) -> PairSlice:
        """The work over the slice starting at ``lo`` (in the process that checks it)."""
        ...

    def take(self, piece: Any) -> None:
        """A slice's :meth:`PairSlice.finish`, in the engine's process."""
        ...


@dataclass
class Work:
    """What the per-device pass needs; shared with forked workers, never pickled."""

    engine: RangeChecker
    devices: Sequence[DeviceLike]
    snapshot: Snapshot
    previous: Snapshot | None
    roles_by_name: Mapping[str, str]
    #: Work on both states of each device, given only with ``previous``.
    pair: PairHook | None = None


@dataclass
class Part:
    """The per-device pass over one slice of the devices: what a worker sends back."""

    lo: int
    hi: int
    results: ResultStore = field(default_factory=ResultStore)
    rows: list[dict[str, Any]] = field(default_factory=list)
    readable: list[bool] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    collected: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Device name -> its link-graph projection (when a fabric check uses the link graph).
    views: dict[str, DeviceView] = field(default_factory=dict)
    #: Device name -> its state's ``unsupported`` map (only devices that have one).
    unsupported: dict[str, dict[str, str]] = field(default_factory=dict)
    #: What the pair hook's slice gave (None: no hook).
    paired: Any = None


_FORKED_WORK: Work | None = None


def choose_jobs(jobs: int | None, n_devices: int) -> int:
    """Worker processes for the per-device pass: ``jobs`` if given, else by fabric size (:func:`fabline.perf.worker_count`)."""
    return worker_count(n_devices, jobs)


def _forked_range(bounds: tuple[int, int]) -> Part:
    assert _FORKED_WORK is not None
    part = _FORKED_WORK.engine.check_range(_FORKED_WORK, *bounds)
    for values in part.collected.values():
        share_equal_values(values)
    part.results.count_passes()  # here, beside the other worker, not in the parent after the pass
    return part


def share_equal_values(values: dict[str, Any], keep: int = 64) -> None:
    """Make the devices' equal values one object, so a part pickles each distinct value once.

    A fleet check keeps the same settings for most devices (one DCQCN dict per host, equal on
    12,500 hosts): shared, the parent loads about 40 % less of what the checks collected. Values
    are equal when their ``marshal`` bytes are: same types all the way down (``1`` is not
    ``1.0``), same key order. A value marshal cannot write (a named tuple) stays as it is; at most
    ``keep`` distinct values are remembered per check and part.

    Example:
        >>> v = {"a": ("host", {"x": 1}), "b": ("host", {"x": 1}), "c": ("host", {"x": 1.0})}
        >>> share_equal_values(v)
        >>> v["a"] is v["b"], v["a"] is v["c"], v["c"]
        (True, False, ('host', {'x': 1.0}))
    """
    seen: dict[bytes, Any] = {}
    for name, value in values.items():
        try:
            key = marshal.dumps(value)
        except ValueError:  # not made of plain types
            continue
        hit = seen.get(key)
        if hit is None:
            if len(seen) < keep:
                seen[key] = value
        elif hit is not value:
            values[name] = hit


def _state_bytes(snapshot: Snapshot, devices: Sequence[DeviceLike]) -> list[int]:
    """The size of each device's state file, as the cost of checking it (a missing one costs a little).

    Text paths, not :meth:`Snapshot.state_path`: this runs before the workers start (15,000
    ``lstat`` on 100k GPUs; building a Path for each was two thirds of the time).
    """
    folder = os.fspath(snapshot.state_dir)
    sizes = []
    for device in devices:
        try:
            sizes.append(max(os.lstat(f"{folder}/{device.name}.json").st_size, 4096))
        except (OSError, ValueError):
            sizes.append(4096)
    return sizes


def chunk_bounds(costs: Sequence[int], jobs: int) -> list[tuple[int, int]]:
    """Consecutive slices of the devices of about equal cost, for ``jobs`` workers.

    Each slice holds at most :data:`CHUNK_DEVICES` devices and costs about 1/(``jobs`` x
    :data:`CHUNKS_PER_JOB`) of the whole: a fabric's small host states go 256 at a time, its large
    switch states a few dozen at a time, and no worker's last slice keeps the run waiting long.

    Example (12,500 hosts of 32 KB, 2,600 switches of 250 KB, two workers):
        >>> b = chunk_bounds([32_000] * 12_500 + [250_000] * 2_600, 2)
        >>> len(b), b[0], b[-2], b[-1]
        (88, (0, 256), (14981, 15047), (15047, 15100))
    """
    n = len(costs)
    target = max(1, sum(costs) // max(1, jobs * CHUNKS_PER_JOB))
    bounds: list[tuple[int, int]] = []
    lo = acc = 0
    for i, cost in enumerate(costs):
        acc += cost
        if acc >= target or i + 1 - lo >= CHUNK_DEVICES:
            bounds.append((lo, i + 1))
            lo, acc = i + 1, 0
    if lo < n:
        bounds.append((lo, n))
    return bounds


def run_parts(work: Work, jobs: int) -> Iterator[Part]:
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
        bounds = chunk_bounds(_state_bytes(work.snapshot, work.devices), jobs)
        with fork_pool(jobs) as pool:
            yield from pool.imap(_forked_range, bounds)
    finally:
        _FORKED_WORK = None


# --------------------------------------------------------------------------------------------
# the fabric checks


@dataclass
class FabricOutcome:
    """What one fabric check gave: its results, its notes, and the link graph it asked for last.

    Attributes:
        results: The check's results (an error result if it raised).
        notes: What it appended to ``FabricContext.notes`` (run warnings).
        graph: The ``ignore_peers`` patterns of the link graph it asked for last (None: none).
    """

    results: ResultStore
    notes: list[str]
    graph: tuple[str, ...] | None


@dataclass
class FabricGroup:
    """Fabric checks that run in one process, by their index in run order.

    Checks of one module share what they derive from the link graph (``LinkGraph.memo`` is keyed
    by module): kept together, each derivation is made once, as in one process.

    Attributes:
        checks: The checks' indexes, in run order.
        links: Whether some check of the group reads the link graph (``uses_links``); a group
            that does not can run before the graph is built.
    """

    checks: list[int]
    links: bool = True


@dataclass
class FabricWork:
    """The fabric checks' pass: shared with forked workers, never pickled.

    Attributes:
        run_one: Runs the check at an index (in whatever process calls it).
        groups: Every check's index, in groups that each run in one process.
        prepare: Builds what the link checks share (the link graphs), in this process, before
            the workers that run them are forked.
    """

    run_one: Callable[[int], FabricOutcome]
    groups: list[FabricGroup]
    prepare: Callable[[], None]

    @property
    def count(self) -> int:
        """How many checks."""
        return sum(len(g.checks) for g in self.groups)


_FORKED_FABRIC: FabricWork | None = None


def _forked_group(group: int) -> list[FabricOutcome]:
    assert _FORKED_FABRIC is not None
    return [_FORKED_FABRIC.run_one(i) for i in _FORKED_FABRIC.groups[group].checks]


def run_fabric_checks(work: FabricWork, jobs: int) -> list[FabricOutcome]:
    """Every fabric check's outcome, in run order, whatever the number of ``jobs``.

    One job (or a single group, or a process with other threads running, which must not fork):
    in-line, in order. Otherwise the groups that do not read the link graph start first, in one
    forked child (:func:`fabline.perf.fork_call`), while this process builds what the link checks
    share (:attr:`FabricWork.prepare`: on 100k GPUs about as long as those groups take); then the
    link groups go over ``jobs`` workers forked after the build, the groups with the most checks
    first: they share the graph copy-on-write instead of building it each. Nothing else runs here
    meanwhile: a parent that works beside its forked children copies every page it touches.
    If the early child fails (killed, out of memory), its groups run here afterwards.
    """
    n = work.count
    if jobs <= 1 or len(work.groups) < 2 or not can_fork(alone=True):
        return [work.run_one(i) for i in range(n)]
    out: list[FabricOutcome | None] = [None] * n

    def biggest_first(groups: list[int]) -> list[int]:
        return sorted(groups, key=lambda g: -len(work.groups[g].checks))

    early = biggest_first([g for g, grp in enumerate(work.groups) if not grp.links])
    late = biggest_first([g for g, grp in enumerate(work.groups) if grp.links])
    if not early or not late:
        early, late = [], biggest_first(early + late)
    global _FORKED_FABRIC  # noqa: PLW0603 - the fork start method shares it with the workers
    _FORKED_FABRIC = work
    try:
        call = fork_call(lambda: [_forked_group(g) for g in early]) if early else None
        try:
            if any(work.groups[g].links for g in late):
                work.prepare()
            with fork_pool(min(jobs, len(late))) as pool:
                for g, outcomes in zip(late, pool.imap(_forked_group, late), strict=True):
                    _place(out, work.groups[g], outcomes)
        except BaseException:
            if call is not None:
                call.cancel()
            raise
        got = call.result() if call is not None else None
        for k, g in enumerate(early):
            _place(out, work.groups[g], got[k] if got is not None else _forked_group(g))
    finally:
        _FORKED_FABRIC = None
    assert all(o is not None for o in out)
    return out  # type: ignore[return-value]


def _place(out: list[FabricOutcome | None], group: FabricGroup, outcomes: list[FabricOutcome]) -> None:
    for i, outcome in zip(group.checks, outcomes, strict=True):
        out[i] = outcome
