"""Counter movement between two snapshots, summarized: a healthy night's diff stays a page long.

On a busy, healthy fabric every port's traffic counters move between two collections (FEC
corrected codewords, ECN marks, PFC pauses): a 100k-GPU fabric gives 1.6 million moved counters a
night. Listing each one is a 300 MB file nobody reads, so a diff keeps, per counter (``fec_corrected``,
``pfc_rx_pause.3``, ...):

* how many ports and devices it moved on, how many were reset, the summed delta and the summed
  and largest rate per second;
* its fastest movers (:data:`TOP_MOVERS`) and its first resets;
* the check that judges it with ``fabline check --previous`` and that check's limit from the
  baseline (:class:`CounterLimits`), and the ports past the limit: those are **findings**, listed
  (the first :data:`MAX_FINDINGS`, all counted) whatever else the summary leaves out.

Every row is still available on request: :class:`RowWriter` streams them as JSON Lines while
the devices are compared (``fabline diff --counter-rows FILE``), never holding them all.
Summaries of parts of the fabric (forked workers) merge into one (:meth:`CounterSummary.merge`).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from fabline.errors import ConfigError
from fabline.record import CounterDelta, CounterDeltas, CounterTotal
from fabline.results import Severity

#: Fastest movers kept per counter.
TOP_MOVERS = 5
#: Resets listed per counter (all are counted).
RESET_EXAMPLES = 5
#: Ports past their check's limit listed (all are counted).
MAX_FINDINGS = 200
#: (device, counter) summed rates kept for the metrics (``report.prom``'s busiest devices).
MAX_BUSIEST = 200

#: One moved counter: ``(device, subject, counter, before, after, delta, per_second, reset, seconds)``
#: in :class:`~fabline.record.CounterDelta` field order.
CounterRow = tuple[str, str, str, int, int, int, "float | None", bool, "float | None"]


@dataclass(frozen=True, slots=True)
class CounterLimit:
    """The check that judges a counter between two snapshots, and its limit.

    Attributes:
        check: The check id (``pfc-pause-rate``).
        severity: Its severity (the baseline's, else the check's own).
        param: What is limited: ``max_delta`` (the increase), ``max_per_s`` (the rate) or
            ``max_pre_fec_ber`` (the bit error rate the corrected codewords imply at the port's speed).
        value: The limit; a port passes at or below it.
    """

    check: str
    severity: Severity
    param: str
    value: float

    def judged(self, delta: int, per_second: float | None, speed_gbps: Any = None) -> float | None:
        """The value this limit compares for one moved counter (None: cannot be judged).

        Example:
            >>> CounterLimit("crc-errors-delta", Severity.MAJOR, "max_delta", 0).judged(3, None)
            3
            >>> CounterLimit("pfc-pause-rate", Severity.MINOR, "max_per_s", 100).judged(9000, None) is None
            True
        """
        if self.param == "max_delta":
            return delta
        if per_second is None:
            return None
        if self.param == "max_per_s":
            return per_second
        if type(speed_gbps) not in (int, float) or speed_gbps <= 0:
            return None
        return float(per_second / (speed_gbps * 1e9))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: ``{"check", "severity", "max_delta": 0}``."""
        return {"check": self.check, "severity": self.severity.label, self.param: self.value}


class CounterLimits:
    """Which check judges each counter (by its name in a diff), with the baseline's limits.

    Built from the counter-delta checks of :mod:`fabline.checks.fabric.health`, so a counter a
    check reads is judged here with the same limit: ``crc_errors`` by ``crc-errors-delta``
    (``max_delta``), ``pfc_rx_pause.3`` by ``pfc-pause-rate`` (``max_per_s``), ``pg_dropped.3`` by
    ``lossless-drops-delta`` (for its ``priorities``), ``fec_corrected`` by ``fec-corrected-rate``
    (``max_pre_fec_ber`` at the port's speed), ... A check disabled in the baseline judges nothing.
    """

    def __init__(
        self,
        exact: Mapping[str, CounterLimit],
        keyed: Mapping[str, tuple[frozenset[str] | None, CounterLimit]],
    ):
        self._exact = dict(exact)
        self._keyed = dict(keyed)
        self._cache: dict[str, CounterLimit | None] = {}

    def get(self, counter: str) -> CounterLimit | None:
        """The limit of a counter name (``crc_errors``, ``pfc_rx_pause.3``), None when no check judges it.

        Example:
            >>> limits = CounterLimits.from_rules({})
            >>> limits.get("pfc_rx_pause.3").check, limits.get("pg_dropped.3").check, limits.get("pg_dropped.0")
            ('pfc-pause-rate', 'lossless-drops-delta', None)
            >>> limits.get("ecn_marked") is None
            True
        """
        hit = self._cache.get(counter, False)
        if hit is not False:
            return hit  # type: ignore[return-value]
        limit = self._exact.get(counter)
        if limit is None and "." in counter:
            key, sub = counter.split(".", 1)
            keyed = self._keyed.get(key)
            if keyed is not None and (keyed[0] is None or sub in keyed[0]):
                limit = keyed[1]
        self._cache[counter] = limit
        return limit

    @classmethod
    def none(cls) -> CounterLimits:
        """No limits: counters are summarized, nothing is judged."""
        return cls({}, {})

    @classmethod
    def from_rules(
        cls, rules: Mapping[str, tuple[Mapping[str, Any], Severity | None, bool]]
    ) -> CounterLimits:
        """Limits from the baseline's tuning of the health checks: ``{check id: (params, severity,
        enabled)}`` (a check not given runs with its defaults).

        Raises:
            ConfigError: Parameters the check refuses.
        """
        from fabline.checks.fabric import health

        exact: dict[str, CounterLimit] = {}
        keyed: dict[str, tuple[frozenset[str] | None, CounterLimit]] = {}

        def make(check_cls: Any, param: str) -> tuple[Any, CounterLimit] | None:
            params, severity, enabled = rules.get(check_cls.id, ({}, None, True))
            if not enabled:
                return None
            try:
                check = check_cls(params, severity)
            except Exception as exc:  # pydantic's ValidationError, named by the check id
                raise ConfigError(f"bad params for check {check_cls.id}: {exc}".splitlines()[0]) from None
            value = float(getattr(check.params, param))
            return check, CounterLimit(check_cls.id, check.effective_severity, param, value)

        for one in (health.FecUncorrectableDeltaCheck, health.CrcErrorsDeltaCheck):
            made = make(one, "max_delta")
            if made:
                exact[one.counter] = made[1]
        for check_cls in (
            health.LosslessDropsDeltaCheck,
            health.RoceErrorsDeltaCheck,
            health.PfcStormsDeltaCheck,
        ):
            made = make(check_cls, "max_delta")
            if not made:
                continue
            check, limit = made
            for key in check_cls.scalars:
                exact[key] = limit
            for key in check_cls.per_priority:
                keyed[key] = (frozenset(str(p) for p in check.params.priorities), limit)
            for key in check_cls.any_key:
                keyed[key] = (None, limit)
        made = make(health.PfcPauseRateCheck, "max_per_s")
        if made:
            for key in ("pfc_rx_pause", "pfc_tx_pause"):
                keyed[key] = (None, made[1])
            for key, _ in health._PAUSE_TOTALS:  # per-port totals (EOS, NX-OS, NVUE)
                exact[key] = made[1]
        made = make(health.LinkFlapsCheck, "max_delta")
        if made:
            for key in health._FLAP_COUNTERS:
                exact[key] = made[1]
        made = make(health.FecCorrectedRateCheck, "max_pre_fec_ber")
        if made:
            for key in ("fec_corrected_bits", "fec_corrected"):
                exact[key] = made[1]
        return cls(exact, keyed)

    @classmethod
    def from_baseline(cls, paths: Sequence[Path]) -> CounterLimits:
        """Limits from baseline files (merged as ``fabline check`` merges them).

        Raises:
            ConfigError: A baseline that does not load, or health-check params it sets wrong.
        """
        from fabline.baseline import load_baseline

        baseline = load_baseline(paths)
        rules = {
            r.id: (r.params, Severity.parse(r.severity) if r.severity else None, r.enabled)
            for r in baseline.rules
            if r.expect is None
        }
        return cls.from_rules(rules)


class CounterStats:
    """One counter's movement over the devices summarized so far."""

    __slots__ = (
        "counter",
        "delta",
        "devices",
        "interfaces",
        "limit",
        "over",
        "rate_exact",
        "rate_max",
        "resets",
        "resets_kept",
        "top",
    )

    def __init__(self, counter: str, limit: CounterLimit | None) -> None:
        self.counter = counter
        self.limit = limit
        self.interfaces = 0
        self.devices = 0
        self.resets = 0
        self.delta = 0
        # The summed rate, exact: an integer count of 2**-1074 (every float's multiple), so parts
        # summed in any order and grouping give the same float (:attr:`rate_sum`).
        self.rate_exact = 0
        self.rate_max: float | None = None
        self.over = 0
        # min-heap of (rate, delta, -order, row): the fastest movers
        self.top: list[tuple[float, int, int, CounterRow]] = []
        # max-heap of (-order, row): the first resets in device order, whatever order they came in
        self.resets_kept: list[tuple[int, CounterRow]] = []

    @property
    def rate_sum(self) -> float:
        """The summed rate per second (the exact sum, rounded once)."""
        return self.rate_exact / _EXACT

    @property
    def reset_rows(self) -> list[CounterRow]:
        """The first resets (:data:`RESET_EXAMPLES`), in device order."""
        return [row for _, row in sorted(self.resets_kept, key=lambda e: -e[0])]

    def merge(self, other: CounterStats) -> None:
        """Add another part's movement of the same counter."""
        self.interfaces += other.interfaces
        self.devices += other.devices
        self.resets += other.resets
        self.delta += other.delta
        self.rate_exact += other.rate_exact
        if other.rate_max is not None and (self.rate_max is None or other.rate_max > self.rate_max):
            self.rate_max = other.rate_max
        self.over += other.over
        for entry in other.top:
            _keep_top(self.top, entry, TOP_MOVERS)
        for kept in other.resets_kept:
            _keep_top(self.resets_kept, kept, RESET_EXAMPLES)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "counter": self.counter,
            "check": self.limit.check if self.limit else None,
            "limit": self.limit.to_dict() if self.limit else None,
            "interfaces": self.interfaces,
            "devices": self.devices,
            "resets": self.resets,
            "delta": self.delta,
            "per_second": {"sum": round(self.rate_sum, 6), "max": self.rate_max},
            "over_limit": self.over,
            "top": [row_dict(e[3]) for e in sorted(self.top, reverse=True)],
            "resets_first": [row_dict(r) for r in self.reset_rows],
        }


#: More counter rows than any device has: row numbers of a part starting at its first device's
#: position times this never reach the next part's.
ROWS_PER_DEVICE_BOUND = 1 << 32


#: 2**1074: every finite float times it is an integer (:attr:`CounterStats.rate_exact`).
_EXACT = 1 << 1074


def exact(value: float) -> int:
    """``value`` as an exact integer count of 2**-1074 (finite floats only).

    Example:
        >>> 1e16 + 1.0 + 1.0, (exact(1e16) + exact(1.0) + exact(1.0)) / _EXACT
        (1e+16, 1.0000000000000002e+16)
    """
    n, d = value.as_integer_ratio()
    return n * (_EXACT // d)


def _keep_top(heap: list[Any], entry: Any, size: int) -> None:
    if len(heap) < size:
        heapq.heappush(heap, entry)
    elif entry > heap[0]:
        heapq.heapreplace(heap, entry)


def row_dict(row: CounterRow) -> dict[str, Any]:
    """A counter row as a JSON object (``diff.json``'s and ``--counter-rows``' form)."""
    device, subject, counter, before, after, delta, per_second, reset, seconds = row
    return {
        "device": device, "subject": subject, "counter": counter, "before": before, "after": after,
        "delta": delta, "per_second": per_second, "reset": reset, "seconds": seconds,
    }  # fmt: skip


class CounterSummary:
    """Counter movement of many devices, per counter, bounded whatever the fabric's size.

    Feed it one device at a time (:meth:`add_device`), merge parts (:meth:`merge`).
    """

    def __init__(self, limits: CounterLimits | None = None, first: int = 0) -> None:
        """``first``: the position of the first device fed, in the whole comparison's device order.

        Ties among the top movers go to the row seen first in that order, so a comparison split
        into parts (workers, any number of them) keeps the same rows as one made in one go.
        """
        self.limits = limits or CounterLimits.none()
        self.by_counter: dict[str, CounterStats] = {}
        self.moved = 0
        self.devices = 0
        # max-heap of (-order, row, limit, value): the first ports past a limit, in device order
        self._findings: list[tuple[int, CounterRow, CounterLimit, float]] = []
        self.findings_total = 0
        # min-heap of (summed rate, device, counter): the busiest (device, counter) pairs
        self.busiest: list[tuple[float, str, str]] = []
        self._order = first * ROWS_PER_DEVICE_BOUND

    def __len__(self) -> int:
        """Interface counters that moved (or were reset)."""
        return self.moved

    @property
    def resets(self) -> int:
        """Interface counters that were reset."""
        return sum(s.resets for s in self.by_counter.values())

    def add_device(
        self,
        rows: Sequence[CounterRow],
        interfaces: Mapping[str, Any] | None = None,
        position: int | None = None,
    ) -> None:
        """Count one device's moved counters (``interfaces``: its later state's, for port speeds).

        ``position``: the device's place in the whole comparison's device order, when devices are
        not fed in that order (the check's workers go in inventory order); by default it follows
        the device fed before. Whatever the order devices are fed in, the summary is the same.
        """
        if not rows:
            return
        self.devices += 1
        self.moved += len(rows)
        stats_of = self.by_counter
        seen: set[str] = set()
        rates: dict[str, float] = {}
        # a local in the loop: a million rows a night at 100k GPUs
        order = self._order if position is None else position * ROWS_PER_DEVICE_BOUND
        for row in rows:
            counter = row[2]
            stats = stats_of.get(counter)
            if stats is None:
                stats = stats_of[counter] = CounterStats(counter, self.limits.get(counter))
            if counter not in seen:
                seen.add(counter)
                stats.devices += 1
            stats.interfaces += 1
            delta, rate, reset = row[5], row[6], row[7]
            stats.delta += delta
            order += 1
            if reset:
                stats.resets += 1
                _keep_top(stats.resets_kept, (-order, row), RESET_EXAMPLES)
            if rate is not None:
                if stats.rate_max is None or rate > stats.rate_max:
                    stats.rate_max = rate
                if rate:
                    rates[counter] = rates.get(counter, 0.0) + rate
            key = rate if rate is not None else -1.0
            top = stats.top
            if len(top) < TOP_MOVERS:
                heapq.heappush(top, (key, delta, -order, row))
            else:
                # (key, delta, -order) > the smallest kept's, without making the two tuples (on a
                # tie the earlier row wins: devices may come out of order, see ``position``)
                least = top[0]
                if key > least[0] or (
                    key == least[0] and (delta > least[1] or (delta == least[1] and -order > least[2]))
                ):
                    heapq.heapreplace(top, (key, delta, -order, row))
            limit = stats.limit
            if limit is not None:
                speed = None
                if limit.param == "max_pre_fec_ber" and interfaces is not None:
                    body = interfaces.get(row[1])
                    speed = body.get("speed_gbps") if type(body) is dict else None
                value = limit.judged(delta, rate, speed)
                if value is not None and value > limit.value and not math.isnan(value):
                    stats.over += 1
                    self.findings_total += 1
                    _keep_top(self._findings, (-order, row, limit, value), MAX_FINDINGS)
        self._order = order
        device = rows[0][0]
        for counter, rate in rates.items():
            # A device's summed rate (its rows in its state's order) joins the counter's exactly.
            stats_of[counter].rate_exact += exact(rate)
            _keep_top(self.busiest, (rate, device, counter), MAX_BUSIEST)

    def merge(self, other: CounterSummary) -> None:
        """Add the summary of another part of the fabric (after this one's devices)."""
        self.moved += other.moved
        self.devices += other.devices
        for counter, stats in other.by_counter.items():
            mine = self.by_counter.get(counter)
            if mine is None:
                self.by_counter[counter] = stats
            else:
                mine.merge(stats)
        for kept in other._findings:
            _keep_top(self._findings, kept, MAX_FINDINGS)
        self.findings_total += other.findings_total
        for entry in other.busiest:
            _keep_top(self.busiest, entry, MAX_BUSIEST)

    @property
    def findings(self) -> list[tuple[CounterRow, CounterLimit, float]]:
        """The listed ports past their check's limit (the first :data:`MAX_FINDINGS` in device
        order): ``(row, limit, value)``.
        """
        return [(row, limit, value) for _, row, limit, value in sorted(self._findings, key=lambda f: -f[0])]

    def counters(self) -> list[CounterStats]:
        """Every counter that moved: those past a limit first, then by ports moved."""
        return sorted(self.by_counter.values(), key=lambda s: (-s.over, -s.interfaces, s.counter))

    def finding_dicts(self) -> list[dict[str, Any]]:
        """The listed ports past their check's limit, most severe first, as JSON objects."""
        out = []
        for row, limit, value in sorted(self.findings, key=lambda f: -f[1].severity):
            entry = row_dict(row)
            entry.update({"check": limit.check, "severity": limit.severity.label, "limit": {limit.param: limit.value},
                          "value": value})  # fmt: skip
            out.append(entry)
        return out

    def finding_severities(self) -> Iterable[Severity]:
        """The severity of every port past its limit (the listed ones; at least one per check)."""
        return (limit.severity for _, limit, _ in self.findings)

    def metrics(self, since: str) -> CounterDeltas:
        """The totals ``report.prom`` draws (:class:`~fabline.record.CounterDeltas`)."""
        totals = {
            s.counter: CounterTotal(s.delta, s.rate_sum, s.resets, s.interfaces)
            for s in self.by_counter.values()
        }
        busiest = [(device, counter, rate) for rate, device, counter in sorted(self.busiest, reverse=True)]
        return CounterDeltas(since=since, totals=totals, busiest=busiest)

    def to_dict(self, rows_file: str | None = None) -> dict[str, Any]:
        """JSON-ready form (``diff.json``'s ``counters``)."""
        busiest = sorted(self.busiest, reverse=True)[:20]
        return {
            "moved": self.moved,
            "devices": self.devices,
            "resets": self.resets,
            "over_limit": self.findings_total,
            "findings": self.finding_dicts(),
            "by_counter": [s.to_dict() for s in self.counters()],
            "busiest": [{"device": d, "counter": c, "per_second": round(r, 6)} for r, d, c in busiest],
            "rows_file": rows_file,
        }

    def deltas(self) -> list[CounterDelta]:
        """The rows kept in the summary (top movers, resets, findings) as :class:`CounterDelta`."""
        seen: dict[tuple[str, str, str], CounterRow] = {}
        for s in self.by_counter.values():
            for row in [e[3] for e in s.top] + s.reset_rows:
                seen[row[:3]] = row
        for row, _, _ in self.findings:
            seen[row[:3]] = row
        return [CounterDelta(*row) for row in sorted(seen.values())]


class RowWriter:
    """Every counter row as JSON Lines, appended as devices are compared (``--counter-rows``)."""

    def __init__(self, path: Path) -> None:
        import orjson

        self._dumps = orjson.dumps
        self.path = path
        self.rows = 0
        self._fh: IO[bytes] = path.open("wb")

    def offset(self) -> int:
        """Bytes written so far."""
        return self._fh.tell()

    def write(self, rows: Iterable[CounterRow]) -> None:
        """Append rows."""
        dumps, fh = self._dumps, self._fh
        for row in rows:
            fh.write(dumps(row_dict(row)))
            fh.write(b"\n")
            self.rows += 1

    def close(self) -> None:
        """Flush and close the file."""
        self._fh.close()
