"""Health checks on counters as deltas between two snapshots (``fabline check --previous SNAPDIR``).

Counters are cumulative since boot or the last clear, so a total says little; the change between
two snapshots says what is happening now (DOMAIN "Health signals"). A counter lower than before
was reset (clear or reboot): the delta is then the current value (counted since the reset) and the
result says so. Without a previous snapshot these checks are ``skipped``, never ``pass``.
Absolute optics and counter thresholds are the declarative rules ``optics-*``,
``fec-uncorrectable`` and ``crc-errors`` of the default baseline.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, TypeGuard

from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import override

from fabline.checks import NO_PREVIOUS, Check, DeviceContext, natural_order
from fabline.results import PassBlock, Result, Severity
from fabline.state import parse_time
from fabline.state_types import Interface


def counter_delta(before: int, after: int) -> tuple[int, bool]:
    """The increase of a cumulative counter and whether it was reset in between.

    Example:
        >>> counter_delta(10, 15), counter_delta(10, 3)
        ((5, False), (3, True))
    """
    if after < before:
        return after, True
    return after - before, False


def _counters(body: Interface | None) -> Mapping[str, Any] | None:
    # Counters read by name from parameters and tables (one field among several): the generic
    # mapping, not the typed ``Counters``.
    if type(body) is not dict and not isinstance(body, Mapping):  # a dict first: the ABC check is slow
        return None
    c = body.get("counters")
    return c if type(c) is dict or isinstance(c, Mapping) else None


def _is_map(value: Any) -> TypeGuard[Mapping[str, Any]]:
    """``isinstance(value, Mapping)``, a dict (every loaded state's) decided without the ABC check."""
    return type(value) is dict or isinstance(value, Mapping)


NO_INTERVAL = "collection times of the two snapshots unknown: no rate"


def not_comparable(device: DeviceContext) -> str | None:
    """Why a counter check cannot compare this device's two snapshots (None: it can).

    Example:
        >>> not_comparable(DeviceContext("x", "sonic", "leaf", (), {}, {}, {})) == NO_PREVIOUS
        True
    """
    return NO_PREVIOUS if device.previous is None else None


def previous_interfaces(device: DeviceContext) -> Mapping[str, Interface]:
    """The device's interfaces in the previous snapshot (empty when there is none)."""
    ifaces = device.previous.get("interfaces") if device.previous is not None else None
    return ifaces if isinstance(ifaces, Mapping) else {}


class DeltaParams(BaseModel):
    """Parameters of an error-counter delta check."""

    model_config = ConfigDict(extra="forbid")

    max_delta: int = Field(0, ge=0, description="largest increase between the snapshots that passes")


class CounterDeltaCheck(Check[DeltaParams]):
    """Base of "this counter did not rise" checks (not registered itself)."""

    needs_previous = True

    counter: ClassVar[str]

    @override
    def check_device(self, device: DeviceContext) -> Iterable[Result]:
        if why := not_comparable(device):
            yield self.skipped(device.name, None, why)
            return
        before_ifaces = previous_interfaces(device)
        ok: list[str | None] = []
        ifaces = device.interfaces  # a property: read once
        for name in natural_order(ifaces):
            now = _counters(ifaces[name])
            after = now.get(self.counter) if now is not None else None
            if not isinstance(after, int):
                continue
            then = _counters(before_ifaces.get(name))
            before = then.get(self.counter) if then is not None else None
            if not isinstance(before, int):
                yield self.skipped(device.name, name, f"{self.counter} not in the previous snapshot")
                continue
            delta, reset = counter_delta(before, after)
            if delta <= self.params.max_delta:
                ok.append(name)
                continue
            actual: dict[str, Any] = {"before": before, "after": after, "delta": delta}
            if device.interval_s:
                actual["interval_s"] = device.interval_s
            if reset:
                actual["reset"] = True
            note = " since a counter reset" if reset else ""
            over = f" in {device.interval_s:g} s" if device.interval_s else ""
            yield self.failed(
                device.name, name,
                f"{device.name} {name}: {self.counter} rose by {delta}{over}{note} (max {self.params.max_delta})",
                expected={"max_delta": self.params.max_delta}, actual=actual,
            )  # fmt: skip
        if ok:
            yield PassBlock(
                self.id, device.name, self.effective_severity, ok, {"max_delta": self.params.max_delta}
            )


class FecUncorrectableDeltaCheck(CounterDeltaCheck):
    """No new uncorrectable FEC codewords between two snapshots.

    Each uncorrectable codeword is a dropped frame RoCE must retransmit (go-back-N); a rising
    count is a failing link now, unlike an old total (DOMAIN "Health signals", article 000).
    """

    id = "fec-uncorrectable-delta"
    severity = Severity.MAJOR
    counter = "fec_uncorrectable"


class CrcErrorsDeltaCheck(CounterDeltaCheck):
    """No new CRC errors between two snapshots: a rising count is a bad cable, optic or connector."""

    id = "crc-errors-delta"
    severity = Severity.MINOR
    counter = "crc_errors"


#: Per-port pause totals and the rate's label (direction.scope).
_PAUSE_TOTALS = (
    ("pfc_rx_frames", "rx.all"),
    ("pfc_tx_frames", "tx.all"),
    ("roce_pfc_rx_pause", "rx.roce"),
    ("roce_pfc_tx_pause", "tx.roce"),
)


class PauseParams(BaseModel):
    """Parameters of pfc-pause-rate."""

    model_config = ConfigDict(extra="forbid")

    max_per_s: float = Field(
        100.0, ge=0, description="largest PFC pause frames per second (rx or tx, any priority) that passes"
    )


class PfcPauseRateCheck(Check[PauseParams]):
    """PFC pause frames stay rare between two snapshots; ECN marks and CNPs should carry the load.

    PFC should be the airbag, not the brake: pause frames rising on one queue mean congestion is
    spreading hop by hop instead of being handled by ECN/DCQCN (DOMAIN "Health signals", article
    004). The rate is pause frames per second (received or sent, per priority) over the interval
    between the snapshots' collection times (per priority on SONiC, NX-OS and Linux); where a
    platform counts pauses per port only (EOS: all priorities, ``pfc_rx_frames``; Cumulus NVUE:
    the RoCE class, ``roce_pfc_rx_pause``) the
    port's total is judged; the result also shows the ECN-marked and CNP deltas,
    which tell whether congestion control reacted. The default limit (100/s) is a starting point
    to tune per site.
    """

    needs_previous = True

    id = "pfc-pause-rate"
    severity = Severity.MINOR

    @override
    def check_device(self, device: DeviceContext) -> Iterable[Result]:
        if why := not_comparable(device):
            yield self.skipped(device.name, None, why)
            return
        interval = device.interval_s
        if not interval:
            yield self.skipped(device.name, None, NO_INTERVAL)
            return
        before_ifaces = previous_interfaces(device)
        ok: list[str | None] = []
        expected = {"max_per_s": self.params.max_per_s}
        ifaces = device.interfaces  # a property: read once
        for name in natural_order(ifaces):
            now = _counters(ifaces[name])
            if now is None or not (
                any(_is_map(now.get(k)) for k in ("pfc_rx_pause", "pfc_tx_pause"))
                or any(isinstance(now.get(k), int) for k, _ in _PAUSE_TOTALS)
            ):
                continue
            then = _counters(before_ifaces.get(name)) or {}
            if self._quiet(now, then, interval):
                ok.append(name)  # what the full reading below would decide, without its dicts
                continue
            rates: dict[str, float] = {}
            resets = []
            for key in ("pfc_rx_pause", "pfc_tx_pause"):
                cur, old = now.get(key), then.get(key)
                if not isinstance(cur, Mapping):
                    continue
                old = old if isinstance(old, Mapping) else {}
                for prio, value in cur.items():
                    if not isinstance(value, int) or not isinstance(old.get(prio), int):
                        continue
                    delta, reset = counter_delta(old[prio], value)
                    if reset:
                        resets.append(f"{key}.{prio}")
                    rates[f"{key[4:6]}.{prio}"] = round(delta / interval, 3)
            # Platforms that count pauses per port, not per priority: EOS and NX-OS's 'show
            # interface' (all priorities), NVUE (the RoCE class); read only when no per-priority
            # rate was had (NX-OS has one from 'show interface priority-flow-control detail').
            per_priority = {k[:2] for k in rates}
            for key, label in _PAUSE_TOTALS:
                cur, old = now.get(key), then.get(key)
                if label[:2] in per_priority:
                    continue
                if not isinstance(cur, int) or not isinstance(old, int):
                    continue
                delta, reset = counter_delta(old, cur)
                if reset:
                    resets.append(key)
                rates[label] = round(delta / interval, 3)
            if not rates:
                yield self.skipped(device.name, name, "pause counters not in the previous snapshot")
                continue
            actual: dict[str, Any] = {"pause_per_s": rates, "interval_s": device.interval_s}
            for key in ("ecn_marked", "cnp_sent", "cnp_handled"):
                cur, old = now.get(key), then.get(key)
                if isinstance(cur, int) and isinstance(old, int):
                    actual[f"{key}_delta"] = counter_delta(old, cur)[0]
            if resets:
                actual["reset"] = resets
            worst_key = max(rates, key=lambda k: rates[k])
            if rates[worst_key] <= self.params.max_per_s:
                ok.append(name)
                continue
            direction = "received" if worst_key.startswith("rx") else "sent"
            ecn = actual.get("ecn_marked_delta")
            hint = "" if ecn is None else f"; ECN marked {ecn} in the same interval"
            which = worst_key.split(".")[1]
            where = {"all": "all priorities", "roce": "the RoCE class"}.get(which, f"priority {which}")
            yield self.failed(
                device.name, name,
                f"{device.name} {name}: {rates[worst_key]:g} PFC pause frames/s {direction} on {where} "
                f"(max {self.params.max_per_s:g}){hint}",
                expected=expected, actual=actual,
            )  # fmt: skip
        if ok:
            yield PassBlock(self.id, device.name, self.effective_severity, ok, expected)

    def _quiet(self, now: Mapping[str, Any], then: Mapping[str, Any], interval: float) -> bool:
        """Whether the port passes: a pause rate was had and the highest is within the limit.

        The decision of the full reading in :meth:`check_device` (the same counters, the same
        rounding: the highest rounded rate is the rounded highest delta over the interval) without
        building its rate labels and result: most ports of a healthy fabric pass. False sends the
        port to the full reading (a skip or a failure, said in full).
        """
        most = -1
        seen_rx = seen_tx = False
        for key in ("pfc_rx_pause", "pfc_tx_pause"):
            cur = now.get(key)
            if not _is_map(cur):
                continue
            old = then.get(key)
            if not _is_map(old):
                continue
            had = False
            for prio, value in cur.items():
                before = old.get(prio)
                if not isinstance(value, int) or not isinstance(before, int):
                    continue
                had = True
                delta = value - before if value >= before else value
                most = max(most, delta)
            if had:
                if key == "pfc_rx_pause":
                    seen_rx = True
                else:
                    seen_tx = True
        for key, label in _PAUSE_TOTALS:
            if seen_rx if label[0] == "r" else seen_tx:
                continue
            cur, before = now.get(key), then.get(key)
            if not isinstance(cur, int) or not isinstance(before, int):
                continue
            delta = cur - before if cur >= before else cur
            most = max(most, delta)
        return most >= 0 and round(most / interval, 3) <= self.params.max_per_s


class CountersDeltaParams(BaseModel):
    """Parameters of a delta check over several counters of a port."""

    model_config = ConfigDict(extra="forbid")

    max_delta: int = Field(
        0, ge=0, description="largest increase of any one counter between the snapshots that passes"
    )
    priorities: list[int] = Field(
        [3], description="the lossless priorities / traffic classes whose per-priority counters are read"
    )


class CountersDeltaCheck(Check[CountersDeltaParams]):
    """Base of "none of these counters rose" checks, with the rate over the interval (not registered).

    ``scalars`` are plain counters; ``per_priority`` are ``{"3": n}`` counters of which only the
    keys in ``priorities`` are read (the lossless class); ``any_key`` are per-queue counters read
    at every key (a storm on any queue). The result names every counter that rose, its delta and,
    when both collection times are known, its rate per second.
    """

    needs_previous = True

    scalars: ClassVar[tuple[str, ...]] = ()
    per_priority: ClassVar[tuple[str, ...]] = ()
    any_key: ClassVar[tuple[str, ...]] = ()
    what: ClassVar[str] = "counters"

    def _tables(self, counters: Mapping[str, Any] | None) -> set[str]:
        """The ``any_key`` tables present, even empty: a storm-free port's ``{}`` is zero storms."""
        if counters is None or not self.any_key:
            return set()
        return {k for k in self.any_key if isinstance(counters.get(k), Mapping)}

    def _values(self, counters: Mapping[str, Any] | None) -> dict[str, int]:
        out: dict[str, int] = {}
        if counters is None:
            return out
        for key in self.scalars:
            value = counters.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                out[key] = value
        keys = {str(p) for p in self.params.priorities}
        for key, only in [(k, keys) for k in self.per_priority] + [(k, None) for k in self.any_key]:
            table = counters.get(key)
            if not isinstance(table, Mapping):
                continue
            for sub, value in table.items():
                if (only is None or sub in only) and isinstance(value, int) and not isinstance(value, bool):
                    out[f"{key}.{sub}"] = value
        return out

    def _quiet(self, now: Mapping[str, Any], then: Mapping[str, Any]) -> bool:
        """Whether the port passes, decided without building :meth:`_values` of both snapshots:
        every counter read now was read before and none rose past ``max_delta`` (most ports of a
        healthy fabric). False sends the port to the full reading in :meth:`check_device` (which
        also passes a port read only in part, or with empty storm tables).
        """
        limit = self.params.max_delta
        common = False
        for key in self.scalars:
            after = now.get(key)
            if type(after) is not int:
                if after is None or type(after) is bool or not isinstance(after, int):
                    continue
                return False  # an int of another type: the full reading decides
            before = then.get(key)
            if type(before) is not int:
                return False
            common = True
            if (after - before if after >= before else after) > limit:
                return False
        if self.per_priority or self.any_key:
            keys = self._priority_keys
            for key in self._table_keys:
                table = now.get(key)
                if not _is_map(table):
                    continue
                old = then.get(key)
                if not _is_map(old):
                    old = {}
                only = keys if key in self.per_priority else None
                for sub, after in table.items():
                    if only is not None and sub not in only:
                        continue
                    if type(after) is not int:
                        if after is None or type(after) is bool or not isinstance(after, int):
                            continue
                        return False
                    before = old.get(sub)
                    if type(before) is not int:
                        return False
                    common = True
                    if (after - before if after >= before else after) > limit:
                        return False
        if common:
            return True
        # Nothing read but per-queue tables (a storm-free port's ``{}``): read both times passes.
        return any(_is_map(now.get(k)) and _is_map(then.get(k)) for k in self.any_key)

    @functools.cached_property
    def _priority_keys(self) -> frozenset[str]:
        """The ``per_priority`` keys read (the lossless priorities as the tables' keys)."""
        return frozenset(str(p) for p in self.params.priorities)

    @functools.cached_property
    def _table_keys(self) -> tuple[str, ...]:
        return (*self.per_priority, *self.any_key)

    @override
    def check_device(self, device: DeviceContext) -> Iterable[Result]:
        if why := not_comparable(device):
            yield self.skipped(device.name, None, why)
            return
        before_ifaces = previous_interfaces(device)
        expected = {"max_delta": self.params.max_delta}
        ok: list[str | None] = []
        ifaces = device.interfaces  # a property: read once
        for name in natural_order(ifaces):
            now_counters = _counters(ifaces[name])
            if now_counters is None:
                continue  # nothing read on this port
            then_counters = _counters(before_ifaces.get(name))
            if then_counters is not None and self._quiet(now_counters, then_counters):
                ok.append(name)  # what the full reading below would decide, without its dicts
                continue
            now = self._values(now_counters)
            now_tables = self._tables(now_counters)
            if not now and not now_tables:
                continue
            then = self._values(then_counters)
            # A per-queue table read in both snapshots: a queue it lacked before had zero (the
            # watchdog lists a queue from its first storm on), so that first storm is a rise.
            both = now_tables & self._tables(then_counters)
            for key in now:
                if key not in then and key.partition(".")[0] in both:
                    then[key] = 0
            common = [k for k in now if k in then]
            if not common:
                if not now and both:
                    ok.append(name)  # read both times, no storm on any queue
                elif now:
                    yield self.skipped(device.name, name, f"{self.what} not in the previous snapshot")
                continue
            rose: dict[str, dict[str, Any]] = {}
            for key in common:
                delta, reset = counter_delta(then[key], now[key])
                if delta <= self.params.max_delta:
                    continue
                row: dict[str, Any] = {"before": then[key], "after": now[key], "delta": delta}
                if device.interval_s:
                    row["per_s"] = round(delta / device.interval_s, 3)
                if reset:
                    row["reset"] = True
                rose[key] = row
            if not rose:
                ok.append(name)
                continue
            actual: dict[str, Any] = {"counters": rose}
            if device.interval_s:
                actual["interval_s"] = device.interval_s
            parts = []
            for key, row in rose.items():
                rate = f" ({row['per_s']:g}/s)" if "per_s" in row else ""
                parts.append(f"{key} +{row['delta']}{rate}{' since a reset' if row.get('reset') else ''}")
            over = f" in {device.interval_s:g} s" if device.interval_s else ""
            yield self.failed(
                device.name, name,
                f"{device.name} {name}: {self.what} rose{over}: {', '.join(parts)} (max {self.params.max_delta})",
                expected=expected, actual=actual,
            )  # fmt: skip
        if ok:
            yield PassBlock(self.id, device.name, self.effective_severity, ok, expected)


class LosslessDropsDeltaCheck(CountersDeltaCheck):
    """No packet of the lossless class was dropped between two snapshots (zero by default).

    The one signal that proves a "lossless" fabric is not: a drop on the RoCE priority means
    headroom too small for what arrives after PAUSE, a PFC watchdog that dropped a stormed queue,
    or a NIC that could not take what the wire delivered; RoCE recovers with go-back-N and the
    collective slows down (DOMAIN "Health signals"). Reads the lossless priorities' ingress
    priority-group drops (SONiC ``pg_dropped``), egress unicast-queue drops (SONiC, EOS, NX-OS
    ``queue_dropped``), NVUE's RoCE no-buffer discards (Cumulus ``roce_rx_discards``,
    ``roce_tx_discards``) and the host NIC's per-priority and port discards (mlx5
    ``rx_prio_discards``, ``rx_discards_phy``, ``rx_out_of_buffer``); the result gives each
    counter's delta and rate over the interval.
    """

    id = "lossless-drops-delta"
    severity = Severity.CRITICAL
    scalars = ("roce_rx_discards", "roce_tx_discards", "rx_discards_phy", "rx_out_of_buffer")
    per_priority = ("pg_dropped", "queue_dropped", "rx_prio_discards")
    what = "drops on the lossless class"


class RoceErrorsDeltaCheck(CountersDeltaCheck):
    """No new RoCE transport errors on a host's RDMA device between two snapshots.

    The RDMA NIC's own evidence of loss (mlx5 ``hw_counters``): packets that arrived out of
    sequence (a drop upstream), NAK sequence errors, local ACK timeouts (the request was sent
    again), receive-queue overruns (``out_of_buffer``), adaptive retransmissions. Each one is a
    go-back-N retransmission that stalls the queue pair: NCCL's bandwidth drops long before it
    times out. Zero by default on a lossless fabric.
    """

    id = "roce-errors-delta"
    severity = Severity.MAJOR
    scalars = (
        "roce_out_of_sequence", "roce_packet_seq_err", "roce_local_ack_timeout_err", "roce_out_of_buffer",
        "roce_implied_nak_seq_err", "roce_rnr_nak_retry_err", "roce_adp_retrans", "roce_adp_retrans_to",
        "roce_duplicate_request",
    )  # fmt: skip
    what = "RoCE transport errors"


class PfcStormsDeltaCheck(CountersDeltaCheck):
    """No new PFC watchdog storm between two snapshots, on any queue.

    The watchdog being on is ``switch-pfc-watchdog``; this is whether it fired: a queue paused
    longer than the detection time (a PFC storm or deadlock, often a host that stopped draining
    its receive queue) was detected and dropped or forwarded until restored. Each storm froze the
    lossless class on that port for at least the detection time. Reads the storm counts per queue
    (``pfcwd_storms_detected``: SONiC ``show pfcwd stats``, EOS watchdog counters, Cumulus deadlock
    counts, NX-OS ``show queuing pfc-queue detail``). Where the platform's counters list a port
    only from its first storm, the parse gives the ports they leave out an empty table
    (``qos.pfc_watchdog.stats_collected``): a queue missing from it before counts as zero, so the
    first storm between two snapshots fails here instead of being skipped.
    """

    id = "pfc-storms-delta"
    severity = Severity.MAJOR
    any_key = ("pfcwd_storms_detected",)
    what = "PFC watchdog storms"


class FecRateParams(BaseModel):
    """Parameters of fec-corrected-rate."""

    model_config = ConfigDict(extra="forbid")

    max_pre_fec_ber: float = Field(
        1e-6,
        gt=0,
        lt=1,
        description="largest pre-FEC bit error rate implied by the corrected codewords that passes",
    )


class FecCorrectedRateCheck(Check[FecRateParams]):
    """The corrected-codeword rate stays low: the pre-FEC BER early warning at 400G/800G PAM4.

    At PAM4 speeds RS-FEC corrects errors on every link all the time, so an uncorrectable codeword
    is the last symptom, not the first. A corrected-codeword rate climbing between two snapshots is
    a degrading optic, a dirty connector or a marginal cable while the link still passes traffic
    (DOMAIN "Health signals": a rising corrected count means a degrading link). The rate is turned
    into the pre-FEC bit error rate it implies at the port's speed: corrected bits per second
    (mlx5 ``fec_corrected_bits``) or, where only codewords are counted, at least one bit per
    corrected codeword, so the estimate is a lower bound. The default 1e-6 is two orders of
    magnitude below the RS(544,514) correction limit (about 2.4e-4) and above the 1e-8 a clean
    400G link shows: fix the link while it still works.
    """

    needs_previous = True

    id = "fec-corrected-rate"
    severity = Severity.MINOR

    @override
    def check_device(self, device: DeviceContext) -> Iterable[Result]:
        if why := not_comparable(device):
            yield self.skipped(device.name, None, why)
            return
        interval = device.interval_s
        if not interval:
            yield self.skipped(device.name, None, NO_INTERVAL)
            return
        before_ifaces = previous_interfaces(device)
        expected = {"max_pre_fec_ber": self.params.max_pre_fec_ber}
        ok: list[str | None] = []
        ifaces = device.interfaces  # a property: read once
        for name in natural_order(ifaces):
            body = ifaces[name]
            now = _counters(body)
            if now is None:
                continue
            key = next(
                (k for k in ("fec_corrected_bits", "fec_corrected") if isinstance(now.get(k), int)), None
            )
            if key is None:
                continue
            then = _counters(before_ifaces.get(name)) or {}
            if not isinstance(then.get(key), int):
                yield self.skipped(device.name, name, f"{key} not in the previous snapshot")
                continue
            speed = body.get("speed_gbps")
            if not isinstance(speed, (int, float)) or isinstance(speed, bool) or speed <= 0:
                yield self.skipped(device.name, name, "speed unknown: no bit error rate")
                continue
            delta, reset = counter_delta(then[key], now[key])
            per_s = delta / interval
            ber = per_s / (speed * 1e9)
            if ber <= self.params.max_pre_fec_ber:
                ok.append(name)
                continue
            actual: dict[str, Any] = {
                key: {"before": then[key], "after": now[key], "delta": delta},
                "per_s": round(per_s, 3), "pre_fec_ber": float(f"{ber:.3g}"), "interval_s": device.interval_s,
            }  # fmt: skip
            if reset:
                actual["reset"] = True
            what = "corrected bits" if key == "fec_corrected_bits" else "corrected codewords"
            bound = "" if key == "fec_corrected_bits" else " at least"
            yield self.failed(
                device.name, name,
                f"{device.name} {name}: {per_s:g} {what}/s at {speed:g}G: pre-FEC BER{bound} {ber:.2e} "
                f"(max {self.params.max_pre_fec_ber:g})",
                expected=expected, actual=actual,
            )  # fmt: skip
        if ok:
            yield PassBlock(self.id, device.name, self.effective_severity, ok, expected)


class FlapParams(BaseModel):
    """Parameters of link-flaps."""

    model_config = ConfigDict(extra="forbid")

    max_delta: int = Field(
        0, ge=0, description="largest rise of a port's flap counters between snapshots that passes"
    )
    recent_s: int = Field(
        3600, ge=0, description="a link whose last flap is younger than this many seconds fails (0: off)"
    )


#: Flap counters: kernel/EOS up-down transitions, NX-OS interface resets.
_FLAP_COUNTERS = ("link_flaps", "interface_resets")


def flap_age_s(body: Mapping[str, Any], collected_at: float | None) -> float | None:
    """Seconds between a port's last link flap and the collection, when the device says.

    NX-OS prints the age (``last_flap_age_s``); EOS the time (``last_flap_epoch_s``), taken
    against the state's ``collected_at``.

    Example:
        >>> flap_age_s({"last_flap_epoch_s": 1000.0}, 1600.0), flap_age_s({"last_flap_age_s": 42}, None)
        (600.0, 42.0)
    """
    age = body.get("last_flap_age_s")
    when = body.get("last_flap_epoch_s")
    if age is None and when is None:  # most ports of most platforms: neither is told
        return None
    if isinstance(age, (int, float)) and not isinstance(age, bool):
        return float(age)
    if isinstance(when, (int, float)) and not isinstance(when, bool) and collected_at is not None:
        return max(0.0, collected_at - float(when))
    return None


class LinkFlapsCheck(Check[FlapParams]):
    """A link that flapped between two snapshots, or very recently, is not a stable link.

    A port that bounced ten times between two runs is "up" at both: every bounce dropped the
    frames in flight (RoCE retransmits them with go-back-N), reset the queue pairs' rate state and,
    on a leaf-spine link, withdrew and re-added ECMP paths. Judges the rise of the flap counters
    (kernel ``carrier_changes`` on Linux, SONiC and Cumulus; EOS ``linkStatusChanges``; NX-OS
    ``interface resets``) with ``--previous``, and, in any run, a last flap younger than
    ``recent_s`` (EOS last status change, NX-OS "Last link flapped"). A flap count that only
    says how often a link went down since boot is not judged on its own.
    """

    id = "link-flaps"
    severity = Severity.MAJOR
    # Without --previous: the flap counters' rise is one fabric-level skip (the engine's), the
    # last flap's age is still judged where it was collected; a device without one says nothing.
    compares_previous = True

    @override
    def check_device(self, device: DeviceContext) -> Iterable[Result]:
        collected = parse_time(device.state.get("collected_at"))
        before_ifaces = previous_interfaces(device)
        expected = {"max_delta": self.params.max_delta, "recent_s": self.params.recent_s}
        ok: list[str | None] = []
        judged = False
        ifaces = device.interfaces  # a property: read once
        for name in natural_order(ifaces):
            body = ifaces[name]
            if type(body) is not dict and not isinstance(
                body, Mapping
            ):  # a dict first: the ABC check is slow
                continue
            age = flap_age_s(body, collected)
            if age is None and device.previous is None:
                continue  # nothing to judge: no flap time, and no earlier counters to compare with
            now = _counters(body) or {}
            counts = {k: now[k] for k in _FLAP_COUNTERS if isinstance(now.get(k), int)}
            if age is None and not counts:
                continue  # nothing to judge: no flap time, and no counters to compare
            judged = True
            problems: list[str] = []
            compared: list[tuple[str, int, int, int, bool]] = []
            if device.previous is not None and counts:
                then = _counters(before_ifaces.get(name)) or {}
                for key, after in counts.items():
                    before = then.get(key)
                    if not isinstance(before, int):
                        continue
                    delta, reset = counter_delta(before, after)
                    compared.append((key, before, after, delta, reset))
                    if delta > self.params.max_delta:
                        over = f" in {device.interval_s:g} s" if device.interval_s else ""
                        problems.append(f"{key} +{delta}{over}")
            if age is not None and self.params.recent_s and age < self.params.recent_s:
                problems.append(f"last flap {round(age)} s before the collection")
            if not problems:
                ok.append(name)
                continue
            actual: dict[str, Any] = {
                key: {"before": before, "after": after, "delta": delta, **({"reset": True} if reset else {})}
                for key, before, after, delta, reset in compared
            }
            if age is not None:
                actual["last_flap_age_s"] = round(age)
            yield self.failed(
                device.name, name,
                f"{device.name} {name}: link flapped: {', '.join(problems)} (max {self.params.max_delta} "
                f"between snapshots, none within {self.params.recent_s} s)",
                expected=expected, actual=actual,
            )  # fmt: skip
        if ok:
            yield PassBlock(self.id, device.name, self.effective_severity, ok, expected)
        elif not judged and device.previous is not None:
            yield self.skipped(device.name, None, "no flap counter")


HEALTH_CHECKS = (
    FecUncorrectableDeltaCheck, CrcErrorsDeltaCheck, PfcPauseRateCheck, LosslessDropsDeltaCheck,
    RoceErrorsDeltaCheck, PfcStormsDeltaCheck, LinkFlapsCheck, FecCorrectedRateCheck,
)  # fmt: skip
