"""The run record: what one check run produced, and the context its reports are given.

This is the results layer between the engine and the reporters. The engine returns a
:class:`RunOutcome`; the runner wraps it in a :class:`Report` (run metadata and exit code) and
computes a :class:`ReportContext` (trend points from the run history, counter deltas, rails and
LLDP links from the inventory and the snapshot) for the formats that draw them. Reporters are pure
functions of these two values: they never open a file, a database, the inventory or the snapshot.
A part of the context that could not be computed is a warning the reports show, never a silent gap.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from fabline.problems import Problem
from fabline.results import PassCounts, Result, ResultStore, Severity, Status


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
class Report:
    """What every report format renders.

    Attributes:
        outcome: Results, devices and warnings of the run.
        inventory: Inventory path as given.
        baselines: Baseline files, in overlay order.
        snapshot: Snapshot folder (with ``--intended``: the configs folder that was checked).
        fail_on: Severity threshold of exit code 4.
        exit_code: The process exit code this run ends with.
        limit: The ``--limit`` pattern, if any.
        version: fabline version.
        history_db: The run history the run was recorded in (None: not recorded).
        run_id: The run's id in that history.
        state_dir: Where this run's states are while it runs, when not in ``snapshot`` (the
            temporary folder the ``--intended`` configs are parsed into; gone after the run).
        passes: What report.json says about passes: ``counts`` per check and device (the
            default), ``subjects`` (the passing subjects too, compact), or ``results`` (every
            pass as its own result, for audits).
    """

    outcome: RunOutcome
    inventory: str
    baselines: list[str]
    snapshot: str
    fail_on: Severity
    exit_code: int
    limit: str | None = None
    version: str = ""
    history_db: str | None = None
    run_id: str | None = None
    state_dir: str | None = None
    passes: str = "counts"
    _summary: dict[str, Any] | None = field(default=None, repr=False)
    _pass_counts: PassCounts | None = field(default=None, repr=False)

    @property
    def results(self) -> ResultStore:
        """All results, in run order (iterable; passes are materialised on the fly)."""
        return self.outcome.results

    @property
    def summary(self) -> dict[str, Any]:
        """Counts by status, severity and device (computed once)."""
        if self._summary is None:
            self._tally()
        assert self._summary is not None
        return self._summary

    def pass_counts(self) -> PassCounts:
        """Passes per check and device (report.json's ``passes``; computed once)."""
        if self._pass_counts is None:
            self._tally()
        assert self._pass_counts is not None
        return self._pass_counts

    def _tally(self) -> None:
        """Both counts in one pass over the results (a count already known is kept)."""
        summary, passes = self.outcome.results.tally()
        if self._summary is None:
            self._summary = summary
        if self._pass_counts is None:
            self._pass_counts = passes

    def passes_by_check(self) -> dict[str, tuple[int, int]]:
        """Per check: (devices with passes, passes), in run order.

        Example:
            >>> from fabline.results import ResultStore, Severity
            >>> store = ResultStore()
            >>> store.add_block("mtu", "leaf1", Severity.MAJOR, None, ("Ethernet0", "Ethernet4"), None)
            >>> Report(RunOutcome(store, []), "inv", [], "snap", Severity.MINOR, 0).passes_by_check()
            {'mtu': (1, 2)}
        """
        return {check: (len(by), sum(by.values())) for check, by in self.pass_counts().items()}

    @property
    def problems(self) -> list[Problem]:
        """The findings grouped by cause (:mod:`fabline.problems`), most severe first."""
        return self.outcome.problems

    def findings(self) -> list[Result]:
        """Fail and error results, most severe first, then by check, device, subject."""
        probs = [r for r in self.outcome.results.problems if r.status in (Status.FAIL, Status.ERROR)]
        probs.sort(
            key=lambda r: (r.status is not Status.FAIL, -r.severity, r.check, r.device, r.subject or "")
        )
        return probs

    def timestamp(self, which: str = "started") -> str:
        """ISO 8601 UTC time of the run's start or finish."""
        t = self.outcome.started if which == "started" else self.outcome.finished
        return dt.datetime.fromtimestamp(t, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True, slots=True)
class CounterDelta:
    """The change of one cumulative counter of one interface between the two collections."""

    device: str
    subject: str
    counter: str
    before: int
    after: int
    delta: int
    per_second: float | None
    reset: bool
    seconds: float | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "device": self.device, "subject": self.subject, "counter": self.counter, "before": self.before,
            "after": self.after, "delta": self.delta, "per_second": self.per_second, "reset": self.reset,
            "seconds": self.seconds,
        }  # fmt: skip


@dataclass(frozen=True)
class TrendPoint:
    """One run on a trend chart.

    Attributes:
        label: What the chart prints under it (the run's start, or ``this run``).
        fail: Failed results.
        error: Error results.
        by_check: Failed results per check id.
    """

    label: str
    fail: int
    error: int
    by_check: Mapping[str, int]


@dataclass(frozen=True, slots=True)
class CounterTotal:
    """One counter's movement summed over every interface it moved on."""

    delta: int
    per_second: float
    resets: int
    interfaces: int


@dataclass(frozen=True)
class CounterDeltas:
    """Counter changes since an earlier collection, summed (for counter rates in the metrics).

    A 100k-GPU fabric moves 1.6 million interface counters a night: the context carries their
    sums per counter and the busiest devices, never the rows (``fabline.history.counters``).

    Attributes:
        since: The earlier side: a run id or a snapshot label.
        totals: Per counter (``pfc_rx_pause.3``): summed delta and rate, resets, interfaces moved.
        busiest: ``(device, counter, rate per second summed over the device's interfaces)``,
            fastest first (the first few hundred).
    """

    since: str
    totals: Mapping[str, CounterTotal]
    busiest: list[tuple[str, str, float]]

    @classmethod
    def of(cls, deltas: Iterable[CounterDelta], since: str) -> CounterDeltas:
        """Sum a list of interface counter deltas (a small diff, a test).

        Example:
            >>> d = CounterDelta("leaf1", "Ethernet0", "crc_errors", 1, 4, 3, 0.5, False, 6.0)
            >>> CounterDeltas.of([d, d], "last").totals["crc_errors"]
            CounterTotal(delta=6, per_second=1.0, resets=0, interfaces=2)
        """
        totals: dict[str, list[Any]] = {}
        per_device: dict[tuple[str, str], float] = {}
        for c in deltas:
            t = totals.setdefault(c.counter, [0, 0.0, 0, 0])
            t[0] += c.delta
            t[1] += c.per_second or 0.0
            t[2] += int(c.reset)
            t[3] += 1
            if c.per_second:
                per_device[(c.device, c.counter)] = per_device.get((c.device, c.counter), 0.0) + c.per_second
        busiest = sorted(((d, k, v) for (d, k), v in per_device.items()), key=lambda x: -x[2])
        return cls(since, {k: CounterTotal(*v) for k, v in totals.items()}, busiest)


@dataclass(frozen=True)
class Link:
    """One LLDP neighbour as a device's state reports it (``port`` on ``device`` sees the peer)."""

    device: str
    port: str
    peer: str
    peer_port: str


@dataclass(frozen=True)
class FabricLinks:
    """The LLDP neighbours the runner read for the fabric picture.

    Attributes:
        links: Neighbours, in the order the states were read.
        complete: True when every spine's and leaf's state was read; False when only the states of
            devices with a failing port were (a summarized picture of a large fabric).
    """

    links: list[Link]
    complete: bool


@dataclass
class ReportContext:
    """What reports draw beyond the run record, computed by the runner and passed in explicitly.

    Each part is None when no requested format needs it or it could not be computed; ``warnings``
    says why for the second case, and the reports that would have drawn it show the warning.

    Attributes:
        trend: Runs oldest first, ending with this one, for the trend charts.
        trend_note: Where the trend comes from, or why there is none.
        counters: Counter deltas since the previous collection.
        rails: Device name -> rail (inventory variable ``rail``), for the fabric picture.
        fabric: LLDP links for the fabric picture.
        warnings: Parts of the context that could not be computed, one line each.
    """

    trend: list[TrendPoint] | None = None
    trend_note: str = ""
    counters: CounterDeltas | None = None
    rails: Mapping[str, str] | None = None
    fabric: FabricLinks | None = None
    warnings: list[str] = field(default_factory=list)


__all__ = [
    "CounterDelta",
    "CounterDeltas",
    "CounterTotal",
    "FabricLinks",
    "Link",
    "Report",
    "ReportContext",
    "RunOutcome",
    "TrendPoint",
]
