"""The engine's per-device pass split over forked worker processes for large fabrics."""

from __future__ import annotations

import marshal
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from fabline.checks.linkgraph import DeviceView
from fabline.engine.rules import DeviceLike
from fabline.perf import fork_pool, worker_count
from fabline.results import ResultStore
from fabline.snapshot import Snapshot

#: Devices per unit of work handed to a worker.
CHUNK_DEVICES = 256


class RangeChecker(Protocol):
    """What runs the per-device pass over a slice of the devices (the engine)."""

    def check_range(self, work: Work, lo: int, hi: int) -> Part:
        """The per-device pass over ``work.devices[lo:hi]``."""
        ...


@dataclass
class Work:
    """What the per-device pass needs; shared with forked workers, never pickled."""

    engine: RangeChecker
    devices: Sequence[DeviceLike]
    snapshot: Snapshot
    previous: Snapshot | None
    roles_by_name: Mapping[str, str]


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


_FORKED_WORK: Work | None = None


def choose_jobs(jobs: int | None, n_devices: int) -> int:
    """Worker processes for the per-device pass: ``jobs`` if given, else by fabric size (:func:`fabline.perf.worker_count`)."""
    return worker_count(n_devices, jobs)


def _forked_range(bounds: tuple[int, int]) -> Part:
    assert _FORKED_WORK is not None
    part = _FORKED_WORK.engine.check_range(_FORKED_WORK, *bounds)
    for values in part.collected.values():
        share_equal_values(values)
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
        bounds = [(lo, min(n, lo + CHUNK_DEVICES)) for lo in range(0, n, CHUNK_DEVICES)]
        with fork_pool(jobs) as pool:
            yield from pool.imap(_forked_range, bounds)
    finally:
        _FORKED_WORK = None
