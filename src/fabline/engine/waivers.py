"""Waivers: accepted, dated exceptions that turn a fail or error into ``waived``."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from fabline.baseline import Waiver
from fabline.results import Result, Status


@dataclass(frozen=True)
class WaiverMatcher:
    """One baseline waiver, with where it came from and whether it has expired."""

    waiver: Waiver
    source: str
    expired: bool

    def matches(self, r: Result) -> bool:
        """Whether the waiver covers this result (glob patterns on check, device, subject)."""
        w = self.waiver
        if not fnmatch.fnmatchcase(r.check, w.rule) or not fnmatch.fnmatchcase(r.device, w.devices):
            return False
        return w.subject is None or (r.subject is not None and fnmatch.fnmatchcase(r.subject, w.subject))


def apply_waivers(waivers: Sequence[WaiverMatcher], results: Iterable[Result]) -> list[str]:
    """Mark fail/error results a live waiver covers as waived; warnings for expired waivers."""
    warnings = [
        f"waiver for {m.waiver.rule} on {m.waiver.devices} expired on {m.waiver.expires} "
        f"({m.source}): it no longer applies"
        for m in waivers
        if m.expired
    ]
    if not waivers:
        return warnings
    active = [m for m in waivers if not m.expired]
    expired = [m for m in waivers if m.expired]
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
