"""Health checks on counters as deltas between two snapshots (``fabline check --previous SNAPDIR``).

Counters are cumulative since boot or the last clear, so a total says little; the change between
two snapshots says what is happening now (DOMAIN "Health signals"). A counter lower than before
was reset (clear or reboot): the delta is then the current value (counted since the reset) and the
result says so. Without a previous snapshot these checks are ``skipped``, never ``pass``.
Absolute optics and counter thresholds are the declarative rules ``optics-*``,
``fec-uncorrectable`` and ``crc-errors`` of the default baseline.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import override

from fabline.checks import Check, DeviceContext, natural_key
from fabline.results import PassBlock, Result, Severity

NO_PREVIOUS = "no previous snapshot (fabline check --previous SNAPDIR): counter deltas need two"


def counter_delta(before: int, after: int) -> tuple[int, bool]:
    """The increase of a cumulative counter and whether it was reset in between.

    Example:
        >>> counter_delta(10, 15), counter_delta(10, 3)
        ((5, False), (3, True))
    """
    if after < before:
        return after, True
    return after - before, False


def _counters(body: Any) -> Mapping[str, Any] | None:
    if not isinstance(body, Mapping):
        return None
    c = body.get("counters")
    return c if isinstance(c, Mapping) else None


class DeltaParams(BaseModel):
    """Parameters of an error-counter delta check."""

    model_config = ConfigDict(extra="forbid")

    max_delta: int = Field(0, ge=0, description="largest increase between the snapshots that passes")


class CounterDeltaCheck(Check[DeltaParams]):
    """Base of "this counter did not rise" checks (not registered itself)."""

    counter: ClassVar[str]

    @override
    def check_device(self, device: DeviceContext) -> Iterable[Result]:
        if device.previous is None:
            yield self.skipped(device.name, None, NO_PREVIOUS)
            return
        before_ifaces = device.previous.get("interfaces")
        before_ifaces = before_ifaces if isinstance(before_ifaces, Mapping) else {}
        ok: list[str | None] = []
        for name in sorted(device.interfaces, key=natural_key):
            now = _counters(device.interfaces[name])
            after = now.get(self.counter) if now is not None else None
            if not isinstance(after, int):
                continue
            then = _counters(before_ifaces.get(name))
            before = then.get(self.counter) if then is not None else None
            if not isinstance(before, int):
                yield self.skipped(device.name, name, f"{self.counter} not in the previous snapshot")
                continue
            delta, reset = counter_delta(before, after)
            actual: dict[str, Any] = {"before": before, "after": after, "delta": delta}
            if device.interval_s:
                actual["interval_s"] = device.interval_s
            if reset:
                actual["reset"] = True
            if delta <= self.params.max_delta:
                ok.append(name)
                continue
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
    between the snapshots' collection times; the result also shows the ECN-marked and CNP deltas,
    which tell whether congestion control reacted. The default limit (100/s) is a starting point
    to tune per site.
    """

    id = "pfc-pause-rate"
    severity = Severity.MINOR

    @override
    def check_device(self, device: DeviceContext) -> Iterable[Result]:
        if device.previous is None:
            yield self.skipped(device.name, None, NO_PREVIOUS)
            return
        if not device.interval_s:
            yield self.skipped(device.name, None, "collection times of the two snapshots unknown: no rate")
            return
        before_ifaces = device.previous.get("interfaces")
        before_ifaces = before_ifaces if isinstance(before_ifaces, Mapping) else {}
        ok: list[str | None] = []
        expected = {"max_per_s": self.params.max_per_s}
        for name in sorted(device.interfaces, key=natural_key):
            now = _counters(device.interfaces[name])
            if now is None or not any(
                isinstance(now.get(k), Mapping) for k in ("pfc_rx_pause", "pfc_tx_pause")
            ):
                continue
            then = _counters(before_ifaces.get(name)) or {}
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
                    rates[f"{key[4:6]}.{prio}"] = round(delta / device.interval_s, 3)
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
            yield self.failed(
                device.name, name,
                f"{device.name} {name}: {rates[worst_key]:g} PFC pause frames/s {direction} on priority "
                f"{worst_key.split('.')[1]} (max {self.params.max_per_s:g}){hint}",
                expected=expected, actual=actual,
            )  # fmt: skip
        if ok:
            yield PassBlock(self.id, device.name, self.effective_severity, ok, expected)


HEALTH_CHECKS = (FecUncorrectableDeltaCheck, CrcErrorsDeltaCheck, PfcPauseRateCheck)
