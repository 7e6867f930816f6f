"""Waivers: accepted, dated exceptions that turn a fail or error into ``waived``."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from fabline.baseline import Waiver
from fabline.results import Result, ResultStore, SkipBlock, Status


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

    def covers(self, r: Result, subject: str | None) -> bool:
        """Whether the waiver covers ``subject`` of ``r`` (a :class:`SkipBlock`'s subjects one by one)."""
        w = self.waiver
        if not fnmatch.fnmatchcase(r.check, w.rule) or not fnmatch.fnmatchcase(r.device, w.devices):
            return False
        return w.subject is None or (subject is not None and fnmatch.fnmatchcase(subject, w.subject))


def apply_waivers(
    waivers: Sequence[WaiverMatcher], results: Iterable[Result], store: ResultStore | None = None
) -> list[str]:
    """Mark fail/error results a live waiver covers as waived; warnings for expired waivers.

    An error :class:`SkipBlock` whose subjects the waivers cover only in part is split (in
    ``store``, the store ``results`` come from) into a block per outcome: the waived subjects and
    the others.
    """
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
    for r in list(results):
        if r.status is not Status.FAIL and r.status is not Status.ERROR:
            continue
        if type(r) is SkipBlock:
            _waive_block(r, active, expired, store)
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


def _waive_block(
    block: SkipBlock,
    active: Sequence[WaiverMatcher],
    expired: Sequence[WaiverMatcher],
    store: ResultStore | None,
) -> None:
    """Waive a block's subjects the waivers cover: the whole block, or its parts (split in ``store``)."""
    outcomes: dict[tuple[str | None, str | None], list[str | None]] = {}
    for subject in block.subjects:
        hit = next((m for m in active if m.covers(block, subject)), None)
        old = None if hit is not None else next((m for m in expired if m.covers(block, subject)), None)
        key = (
            hit.waiver.reason if hit is not None else None,
            str(old.waiver.expires) if old is not None else None,
        )
        outcomes.setdefault(key, []).append(subject)
    if list(outcomes) == [(None, None)]:
        return
    parts: list[Result] = []
    for (reason, expires), subjects in outcomes.items():
        part: Result = (
            block
            if len(outcomes) == 1
            else SkipBlock(
                block.check, block.device, block.severity, subjects, block.message, block.status,
                block.expected, block.actual,
            )
            if len(subjects) > 1
            else Result(
                block.check, block.device, subjects[0], block.status, block.severity, block.expected,
                block.actual, block.message,
            )
        )  # fmt: skip
        if reason is not None:
            part.waiver = reason
            part.message = f"{part.message} [waived: {reason}]"
            part.status = Status.WAIVED
        elif expires is not None:
            part.message = f"{part.message} [waiver expired {expires}]"
        parts.append(part)
    if len(parts) > 1:
        if store is None:
            raise ValueError("a block partly covered by waivers needs its store to be split")
        store.replace(block, parts)
