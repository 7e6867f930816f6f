"""Results, statuses, severities and the exit code: one enum each and one function.

Every (rule, device, subject) gives exactly one :class:`Result`. A device that could not be read
never yields ``pass``: its results are ``error``.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from enum import IntEnum, StrEnum
from typing import Any


class Status(StrEnum):
    """Outcome of one rule on one subject."""

    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"  # could not evaluate: device unreachable, state missing/corrupt, field not collected
    SKIPPED = "skipped"  # not applicable
    WAIVED = "waived"  # failed (or errored) but covered by a valid waiver


class Severity(IntEnum):
    """How much a failure matters; ordered so ``>=`` compares importance."""

    INFO = 0
    MINOR = 1
    MAJOR = 2
    CRITICAL = 3

    @classmethod
    def parse(cls, name: str) -> Severity:
        """Severity from its lower-case name.

        Example:
            >>> Severity.parse("major")
            <Severity.MAJOR: 2>
        """
        return cls[name.upper()]

    @property
    def label(self) -> str:
        """Lower-case name, as written in baselines and reports."""
        return self.name.lower()


#: A rule or check id: lower-case letters, digits, ``-``, ``_``, ``.`` (baselines tune checks by it).
RULE_ID = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")


class ExitCode(IntEnum):
    """Process exit codes of every fabline command (documented in docs/exit-codes.md).

    The functions that choose one (:func:`exit_code` for a check run, then one per other
    command) live together at the end of this module: the one place exit codes are decided.
    """

    OK = 0
    INTERNAL = 1
    USAGE = 2
    ERRORS = 3
    FAILURES = 4
    INTERRUPTED = 130  # Ctrl-C (128 + SIGINT, as a shell reports it)


class Result:
    """One outcome. Plain slots object: checking 100k GPUs creates millions of these.

    Attributes:
        check: Rule or check id.
        device: Inventory name of the device.
        subject: Interface name, link id, or None for a device-level result.
        status: Outcome.
        severity: The rule's severity.
        expected: What the rule wanted (JSON-ready), None for pass results of simple rules.
        actual: What the state held (JSON-ready).
        message: One line for humans; empty for passes.
        waiver: The waiver reason when ``status`` is ``waived``.
    """

    __slots__ = (
        "actual",
        "check",
        "device",
        "expected",
        "message",
        "severity",
        "status",
        "subject",
        "waiver",
    )

    def __init__(
        self,
        check: str,
        device: str,
        subject: str | None,
        status: Status,
        severity: Severity,
        expected: Any = None,
        actual: Any = None,
        message: str = "",
    ) -> None:
        self.check = check
        self.device = device
        self.subject = subject
        self.status = status
        self.severity = severity
        self.expected = expected
        self.actual = actual
        self.message = message
        self.waiver: str | None = None

    @property
    def id(self) -> str:
        """Stable unique id: ``device::check::subject``."""
        return f"{self.device}::{self.check}::{self.subject or '-'}"

    def subject_text(self, limit: int = 8) -> str:
        """The subject for a person (``-`` for a device-level result; a block lists its subjects)."""
        return self.subject or "-"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form used by the JSON report (a block's row adds ``subjects`` and ``count``
        after ``subject``: :meth:`_add_subjects`).
        """
        out: dict[str, Any] = {
            "id": self.id,
            "check": self.check,
            "device": self.device,
            "subject": self.subject,
        }
        self._add_subjects(out)
        out["status"] = self.status.value
        out["severity"] = self.severity.label
        out["expected"] = self.expected
        out["actual"] = self.actual
        out["message"] = self.message
        if self.waiver is not None:
            out["waiver"] = self.waiver
        return out

    def _add_subjects(self, out: dict[str, Any]) -> None:
        """Add the keys a row of several subjects has (none: one result has one ``subject``)."""

    def __repr__(self) -> str:
        return f"Result({self.id}, {self.status.value}, {self.message!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as the constructor's arguments (a worker's part sends thousands of results:
        about half the bytes and time of the slots' default state dict).
        """
        return _reduced(
            self,
            (
                self.check,
                self.device,
                self.subject,
                self.status,
                self.severity,
                self.expected,
                self.actual,
                self.message,
            ),
        )


def _reduced(r: Result, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """``(class, args)`` for pickle, and the waiver as slot state when there is one."""
    if r.waiver is None:
        return (type(r), args)
    return (type(r), args, (None, {"waiver": r.waiver}))


#: At most this many items of one list or mapping in a result's ``expected``/``actual`` (a full
#: 64-entry DSCP map stays whole); the rest is replaced by a count.
MAX_ITEMS = 64
#: At most this many values in all of one ``expected`` or ``actual`` (nested lists and mappings).
MAX_NODES = 256
#: At most this many characters of one string value in ``expected``/``actual``.
MAX_VALUE_CHARS = 200
#: At most this many characters of a result's message.
MAX_MESSAGE_CHARS = 2000


def more_items(total: int, shown: int) -> str:
    """The marker that stands for the items left out of a capped list.

    Example:
        >>> more_items(3000, 64)
        '... and 2936 more (3000 in all)'
    """
    return f"... and {total - shown} more ({total} in all)"


def capped_join(items: Sequence[str], sep: str = "; ", limit: int = 8) -> str:
    """The first ``limit`` items joined by ``sep``, then how many more: the text of a capped list.

    Example:
        >>> capped_join(["a", "b", "c"], limit=2)
        'a; b; and 1 more'
    """
    shown = sep.join(items[:limit])
    return shown + (f"{sep}and {len(items) - limit} more" if len(items) > limit else "")


def _cap_text(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters in all, the cut saying how much was left out."""
    if len(text) <= limit:
        return text
    keep = limit - 40  # room for the suffix, so a capped text is within the limit (capping twice is a no-op)
    return f"{text[:keep]}... ({len(text) - keep} more characters)"


def bounded(value: Any) -> Any:
    """``value`` with every list and mapping capped: what a result may carry in ``expected``/``actual``.

    A list or tuple longer than :data:`MAX_ITEMS` keeps its first items and ends with
    :func:`more_items` (``MAX_ITEMS`` entries in all); a mapping keeps its first keys and gets a
    ``"..."`` key with the same count; strings longer than :data:`MAX_VALUE_CHARS` are cut with a
    count; in all about :data:`MAX_NODES` values are kept. Small values come back unchanged (the
    same object), and so does a value already bounded.

    Example:
        >>> capped = bounded(list(range(100)))
        >>> len(capped), capped[-1], bounded(capped) is capped
        (64, '... and 37 more (100 in all)', True)
        >>> x = {"mtu": 9216}
        >>> bounded(x) is x
        True
    """
    if value is None or type(value) in _SCALARS:
        return value
    # A capped value has at most one marker per container on top of its MAX_NODES values, so it
    # passes this test: bounding a bounded value returns it unchanged.
    if _small(value, [2 * MAX_NODES + 64]):
        return value
    return _cap(value, [MAX_NODES])


_SCALARS = frozenset({int, float, bool, type(None)})


def _small(value: Any, budget: list[int]) -> bool:
    """Whether ``value`` is within every bound (then it is kept as it is)."""
    budget[0] -= 1
    if budget[0] < 0:
        return False
    kind = type(value)
    if kind in _SCALARS:
        return True
    if kind is list or kind is tuple:
        return len(value) <= MAX_ITEMS and all(_small(v, budget) for v in value)
    if kind is dict:
        return len(value) <= MAX_ITEMS and all(
            _small(k, budget) and _small(v, budget) for k, v in value.items()
        )
    if isinstance(value, str):
        return len(value) <= MAX_VALUE_CHARS
    # Sets and other containers are rebuilt as lists; any other object is kept as it is.
    return not isinstance(value, Mapping | set | frozenset)


def _cap(value: Any, budget: list[int]) -> Any:
    budget[0] -= 1
    if isinstance(value, str):
        return _cap_text(value, MAX_VALUE_CHARS)
    if isinstance(value, Mapping):
        out: dict[Any, Any] = {}
        for i, (k, v) in enumerate(value.items()):
            if (i >= MAX_ITEMS - 1 and len(value) > MAX_ITEMS) or budget[0] <= 0:
                out["..."] = more_items(len(value), i)
                break
            out[_cap(k, budget)] = _cap(v, budget)
        return out
    if isinstance(value, list | tuple | set | frozenset):
        kept: list[Any] = []
        for i, v in enumerate(value):
            if (i >= MAX_ITEMS - 1 and len(value) > MAX_ITEMS) or budget[0] <= 0:
                kept.append(more_items(len(value), i))
                break
            kept.append(_cap(v, budget))
        return kept
    return value


def bound_result(r: Result) -> Result:
    """Cap ``r``'s ``expected``, ``actual`` (:func:`bounded`) and message in place; returns ``r``.

    Applied where results are built (the :class:`fabline.checks.Check` helpers, the engine for
    everything a Python check yields, the declarative rules' failures), so no result carries an
    unbounded list, whatever the fabric's size.

    Example:
        >>> r = bound_result(Result("x", "d", None, Status.FAIL, Severity.MAJOR, None, ["p"] * 500, "m" * 5000))
        >>> len(r.actual), len(r.message)
        (64, 1986)
    """
    expected, actual = r.expected, r.actual
    if expected is not None and type(expected) not in _SCALARS:
        r.expected = bounded(expected)
    if actual is not None and type(actual) not in _SCALARS:
        r.actual = bounded(actual)
    if len(r.message) > MAX_MESSAGE_CHARS:
        r.message = _cap_text(r.message, MAX_MESSAGE_CHARS)
    return r


def bounded_results(results: Iterable[Result]) -> Iterator[Result]:
    """Each of ``results`` through :func:`bound_result` (a :class:`PassBlock` as it is).

    The engine reads every Python check's results through this, so a check that builds
    :class:`Result` objects itself is bounded like one that uses the ``Check`` helpers.
    """
    for r in results:
        yield r if type(r) is PassBlock else bound_result(r)  # a SkipBlock's values are bounded too


def summarize(results: Iterable[Result]) -> dict[str, Any]:
    """Counts by status, by severity (of fail/error results) and by device.

    Example:
        >>> r = [Result("mtu", "leaf1", "Ethernet0", Status.FAIL, Severity.MAJOR)]
        >>> summarize(r)["by_status"]["fail"]
        1
    """
    by_status: Counter[str] = Counter()
    by_severity: Counter[str] = Counter()
    by_device: dict[str, Counter[str]] = {}
    for r in results:
        st = r.status.value
        by_status[st] += 1
        if r.status is Status.FAIL:
            by_severity[r.severity.label] += 1
        dev = by_device.get(r.device)
        if dev is None:
            dev = by_device[r.device] = Counter()
        dev[st] += 1
    return {
        "total": sum(by_status.values()),
        "by_status": {s.value: by_status.get(s.value, 0) for s in Status},
        "failures_by_severity": {s.label: by_severity.get(s.label, 0) for s in reversed(Severity)},
        "by_device": {d: {s.value: c.get(s.value, 0) for s in Status} for d, c in by_device.items()},
    }


def exit_code(results: Iterable[Result], fail_on: Severity = Severity.MINOR) -> ExitCode:
    """The exit code a CI job acts on.

    0 when nothing failed at or above ``fail_on`` and nothing errored; 4 when at least one
    ``fail`` is at or above ``fail_on``; 3 when some results are ``error`` and none such fail.

    Example:
        >>> exit_code([Result("x", "d", None, Status.FAIL, Severity.INFO)])
        <ExitCode.OK: 0>
        >>> exit_code([Result("x", "d", None, Status.ERROR, Severity.INFO)])
        <ExitCode.ERRORS: 3>
    """
    errors = False
    for r in results:
        if r.status is Status.FAIL and r.severity >= fail_on:
            return ExitCode.FAILURES
        if r.status is Status.ERROR:
            errors = True
    return ExitCode.ERRORS if errors else ExitCode.OK


def collection_exit_code(unreadable: int) -> ExitCode:
    """``fabline collect``: 3 when some devices could not be read at all, else 0 (``partial`` is read).

    Example:
        >>> collection_exit_code(0), collection_exit_code(2)
        (<ExitCode.OK: 0>, <ExitCode.ERRORS: 3>)
    """
    return ExitCode.ERRORS if unreadable else ExitCode.OK


def change_exit_code(new_errors: bool, new_failures: Iterable[Severity], fail_on: Severity) -> ExitCode:
    """``fabline diff`` / ``drift``: 4 when a result newly errors or newly fails at or above ``fail_on``.

    Example:
        >>> change_exit_code(False, [Severity.INFO], Severity.MINOR), change_exit_code(True, [], Severity.MINOR)
        (<ExitCode.OK: 0>, <ExitCode.FAILURES: 4>)
    """
    if new_errors or any(s >= fail_on for s in new_failures):
        return ExitCode.FAILURES
    return ExitCode.OK


def drift_exit_code(drifted: bool, uncompared: bool) -> ExitCode:
    """``fabline render --diff``: 4 drift, 3 some not compared (and no drift), else 0.

    4 when a device drifted from its intended config, 3 when some could not be compared and none
    drifted.

    Example:
        >>> drift_exit_code(True, True), drift_exit_code(False, True), drift_exit_code(False, False)
        (<ExitCode.FAILURES: 4>, <ExitCode.ERRORS: 3>, <ExitCode.OK: 0>)
    """
    if drifted:
        return ExitCode.FAILURES
    return ExitCode.ERRORS if uncompared else ExitCode.OK


def verdict_exit_code(ok: bool) -> ExitCode:
    """A yes/no answer (``fabline design``: is the fabric feasible): 0, or 4 (the request fails).

    Example:
        >>> verdict_exit_code(True), verdict_exit_code(False)
        (<ExitCode.OK: 0>, <ExitCode.FAILURES: 4>)
    """
    return ExitCode.OK if ok else ExitCode.FAILURES


def validation_exit_code(problems: int) -> ExitCode:
    """``fabline validate``: 2 when any input is invalid (the user's to fix), else 0.

    Example:
        >>> validation_exit_code(0), validation_exit_code(3)
        (<ExitCode.OK: 0>, <ExitCode.USAGE: 2>)
    """
    return ExitCode.USAGE if problems else ExitCode.OK


class PassBlock(Result):
    """Passes of one Python check on one device, as bare subject names (compact, like a rule's block).

    A check over a large fabric yields one of these per device instead of one :class:`Result` per
    passing port; :meth:`ResultStore.extend` keeps it as a block, and iterating the store gives the
    same ``pass`` results (``expected`` shared, no ``actual``). Seen outside a store it is one
    ``pass`` result with no subject. A tuple of subjects is stored as it is: checks that pass the
    same subjects on a device can share one (kept, pickled and loaded once).
    """

    __slots__ = ("subjects",)

    def __init__(
        self,
        check: str,
        device: str,
        severity: Severity,
        subjects: Sequence[str | None],
        expected: Any = None,
    ) -> None:
        super().__init__(check, device, None, Status.PASS, severity, expected)
        self.subjects: Sequence[Any] = subjects

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as the constructor's arguments (:meth:`Result.__reduce__`)."""
        return _reduced(self, (self.check, self.device, self.severity, self.subjects, self.expected))


class SkipBlock(Result):
    """Skipped (or errored) results of one check on one device that say the same thing.

    A field a platform does not collect makes a per-port rule skip on every port of every device
    of that platform: 400,000 identical "not collected" results on a 100k-GPU fabric, where one
    line per device says it all. A block is one such group: ``check``, ``device``, ``status``
    (``skipped``, or ``error`` for errors that share their message), ``severity``, ``message``,
    ``expected``, ``actual`` shared, and the ``subjects`` it stands for (at least two; a single
    subject is a plain :class:`Result`). ``subject`` is None; :attr:`count` is how many results
    the block stands for, :meth:`expand` gives them one by one.

    Checks may yield blocks directly; :class:`ResultStore` also folds consecutive results of one
    check and device that differ only in their subject into a block as they are added. The JSON
    report writes a block as one row with ``subjects`` (compact, :func:`compact_subjects`) and
    ``count``; every consumer (history, diff, grouping, JUnit, Markdown, HTML) reads it as one
    finding naming its subjects.

    Example:
        >>> b = SkipBlock("optics-alarms", "leaf1", Severity.MAJOR, ["Ethernet0", "Ethernet4", "Ethernet8"],
        ...               "optics.alarms not collected")
        >>> b.id, b.count, b.status.value, [r.id for r in b.expand()][-1]
        ('leaf1::optics-alarms::Ethernet0+2', 3, 'skipped', 'leaf1::optics-alarms::Ethernet8')
    """

    __slots__ = ("subjects",)

    def __init__(
        self,
        check: str,
        device: str,
        severity: Severity,
        subjects: Sequence[str | None],
        message: str,
        status: Status = Status.SKIPPED,
        expected: Any = None,
        actual: Any = None,
    ) -> None:
        if status is Status.PASS or status is Status.FAIL:
            raise ValueError(f"a SkipBlock holds skipped, error or waived results, not {status.value}")
        super().__init__(check, device, None, status, severity, expected, actual, message)
        self.subjects: Sequence[str | None] = subjects

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as the constructor's arguments (:meth:`Result.__reduce__`)."""
        return _reduced(
            self,
            (
                self.check,
                self.device,
                self.severity,
                self.subjects,
                self.message,
                self.status,
                self.expected,
                self.actual,
            ),
        )

    @property
    def count(self) -> int:
        """How many results the block stands for."""
        return len(self.subjects)

    @property
    def id(self) -> str:
        """``device::check::<first subject>+<how many more>``: unique in a run (a check gives one
        result per subject, so two blocks of one check and device never share their first subject)
        and stable while the block covers the same subjects.
        """
        return f"{self.device}::{self.check}::{_first_subject(self.subjects) or '-'}+{len(self.subjects) - 1}"

    def subject_text(self, limit: int = 8) -> str:
        """The subjects for a person: runs as ``Ethernet0..Ethernet508/4``, capped, with the count.

        Example:
            >>> SkipBlock("x", "d", Severity.INFO, ["swp1", "swp2", "swp3", "eth0"], "m").subject_text()
            'swp1..swp3, eth0 (4)'
        """
        return f"{compact_text(compact_subjects(self.subjects), limit)} ({len(self.subjects)})"

    def expand(self) -> Iterator[Result]:
        """The results the block stands for, one per subject (the waiver kept)."""
        for subject in self.subjects:
            r = Result(
                self.check, self.device, subject, self.status, self.severity, self.expected, self.actual,
                self.message,
            )  # fmt: skip
            r.waiver = self.waiver
            yield r

    def _add_subjects(self, out: dict[str, Any]) -> None:
        """The JSON report's row is a result row with ``subject`` null, ``subjects`` (compact) and ``count``."""
        out["subjects"] = _compact_of(self.subjects)
        out["count"] = len(self.subjects)

    def __repr__(self) -> str:
        return f"SkipBlock({self.id}, {self.status.value}, {len(self.subjects)}, {self.message!r})"


#: Statuses a :class:`ResultStore` folds into a :class:`SkipBlock` (a failure stays one result per subject).
BLOCK_STATUSES = frozenset({Status.SKIPPED, Status.ERROR})


def _first_subject(subjects: Sequence[str | None]) -> str | None:
    if isinstance(subjects, CompactSubjects):
        first = subjects.compact[0] if subjects.compact else None
        return first if first is None or isinstance(first, str) else f"{first[0]}{first[1]}"
    return subjects[0] if subjects else None


def _same_finding(a: Result, b: Result) -> bool:
    """Whether ``b`` says what ``a`` says (it may join ``a``'s block): everything but the subject."""
    return (
        a.status is b.status
        and a.message == b.message
        and a.check == b.check
        and a.device == b.device
        and a.severity is b.severity
        and a.waiver == b.waiver
        and a.actual == b.actual
        and a.expected == b.expected
    )


def block_count(r: Result) -> int:
    """How many results ``r`` stands for: a block's subjects, else 1."""
    return len(r.subjects) if type(r) is SkipBlock else 1


def expand_results(results: Iterable[Result]) -> Iterator[Result]:
    """``results`` with every :class:`SkipBlock` expanded into its per-subject results."""
    for r in results:
        if type(r) is SkipBlock:
            yield from r.expand()
        else:
            yield r


def compact_text(compact: Sequence[CompactItem], limit: int = 8) -> str:
    """A compact subject list for a person: ``Ethernet0..Ethernet508/4, mgmt0``, the first ``limit`` items.

    Example:
        >>> compact_text([["Ethernet", 0, 508, 4], ["swp", 1, 3, 1], None])
        'Ethernet0..Ethernet508/4, swp1..swp3, -'
    """
    parts: list[str] = []
    for item in compact:
        if item is None or isinstance(item, str):
            parts.append(item or "-")
        else:
            prefix, first, last, step = _range_item(item)
            parts.append(f"{prefix}{first}..{prefix}{last}" + (f"/{step}" if step != 1 else ""))
    return capped_join(parts, ", ", limit)


#: Passes of one check on one device: ``(check, device, severity, expected, subjects)``.
PassRun = tuple[str, str, Severity, Any, Sequence[str | None]]


#: One item of a compact subject list: a subject name, None (a device-level result), or a run of
#: names ``[prefix, first, last, step]`` standing for ``prefix + str(n)`` for n in first..last.
CompactItem = Any

_DIGITS = "0123456789"


def compact_subjects(subjects: Iterable[str | None]) -> list[CompactItem]:
    """Subject names in the compact form of ``report.json``'s ``pass_subjects`` (order kept).

    Consecutive names that differ only in a trailing number stepping evenly (``Ethernet0``,
    ``Ethernet4``, ... ``Ethernet508``) become one ``[prefix, first, last, step]`` list; other
    names stay as they are. :func:`expand_subjects` gives the names back, in the same order.
    Numbers with a leading zero are never folded (``eth01`` stays ``eth01``).

    Example:
        >>> compact_subjects(["Ethernet0", "Ethernet4", "Ethernet8", "eth1", None, "mgmt"])
        [['Ethernet', 0, 8, 4], 'eth1', None, 'mgmt']
        >>> expand_subjects(compact_subjects(["swp1", "swp2", "swp3"]))
        ['swp1', 'swp2', 'swp3']
    """
    if isinstance(subjects, CompactSubjects):
        return list(subjects.compact)
    out: list[CompactItem] = []
    run: list[Any] | None = None  # [prefix, first, last, step, count]

    def flush() -> None:
        if run is None:
            return
        prefix, first, last, step, count = run
        if count <= 2:
            out.extend(f"{prefix}{n}" for n in (first, last)[:count])
        else:
            out.append([prefix, first, last, step])

    for subject in subjects:
        # rstrip, not a regex: a 100k-GPU run compacts ten million names.
        prefix = subject.rstrip(_DIGITS) if subject is not None else None
        digits = subject[len(prefix) :] if subject is not None and prefix is not None else ""
        if not digits or (digits[0] == "0" and len(digits) > 1) or not digits.isascii():
            flush()
            run = None
            out.append(subject)
            continue
        n = int(digits)
        if run is not None and run[0] == prefix:
            if run[4] == 1 and n > run[2]:
                run[3], run[2], run[4] = n - run[2], n, 2
                continue
            if run[4] > 1 and n == run[2] + run[3]:
                run[2], run[4] = n, run[4] + 1
                continue
        flush()
        run = [prefix, n, n, 1, 1]
    flush()
    return out


def _compact_of(subjects: Sequence[str | None]) -> list[CompactItem]:
    """:func:`compact_subjects` of a block's subjects, made once per distinct list: a 100k-GPU
    run has 40,000 blocks of a few distinct port lists (``eth0`` .. ``eth7`` on every host).

    Example:
        >>> _compact_of(["swp1", "swp2", "swp3", "eth0"]), _compact_of(("swp1", "swp2", "swp3", "eth0"))
        ([['swp', 1, 3, 1], 'eth0'], [['swp', 1, 3, 1], 'eth0'])
    """
    if isinstance(subjects, CompactSubjects):
        return compact_subjects(subjects)
    try:
        frozen = _compact_frozen(tuple(subjects))
    except TypeError:  # an unhashable subject: no sharing
        return compact_subjects(subjects)
    return [list(item) if type(item) is tuple else item for item in frozen]  # fresh lists: the caller's


@functools.lru_cache(maxsize=1024)
def _compact_frozen(subjects: tuple[str | None, ...]) -> tuple[Any, ...]:
    return tuple(tuple(item) if type(item) is list else item for item in compact_subjects(subjects))


def expand_subjects(compact: Iterable[CompactItem]) -> list[str | None]:
    """The subject names of a compact list (:func:`compact_subjects`), in order.

    Raises:
        ValueError: An item that is neither a name, null nor ``[prefix, first, last, step]``.
    """
    out: list[str | None] = []
    for item in compact:
        if item is None or isinstance(item, str):
            out.append(item)
            continue
        prefix, first, last, step = _range_item(item)
        out.extend(f"{prefix}{n}" for n in range(first, last + 1, step))
    return out


def compact_count(compact: Iterable[CompactItem]) -> int:
    """How many subjects a compact list stands for, without expanding it.

    Example:
        >>> compact_count([["Ethernet", 0, 508, 4], "mgmt", None])
        130
    """
    total = 0
    for item in compact:
        if item is None or isinstance(item, str):
            total += 1
        else:
            _, first, last, step = _range_item(item)
            total += (last - first) // step + 1
    return total


def _range_item(item: Any) -> tuple[str, int, int, int]:
    if (
        isinstance(item, list | tuple)
        and len(item) == 4
        and isinstance(item[0], str)
        and all(type(v) is int for v in item[1:])
        and item[3] > 0
        and item[2] >= item[1]
    ):
        return item[0], item[1], item[2], item[3]
    raise ValueError(f"not a subject or a [prefix, first, last, step] run: {item!r}")


class CompactSubjects(Sequence[str | None]):
    """Subject names kept in their compact form, expanded only when iterated.

    What the run history gives back for the passes of a recorded run: ``len`` and the compact
    form cost nothing; a report that lists every pass expands them one block at a time.
    """

    __slots__ = ("_count", "compact")

    def __init__(self, compact: list[CompactItem], count: int | None = None) -> None:
        self.compact = compact
        self._count = compact_count(compact) if count is None else count

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[str | None]:
        return iter(expand_subjects(self.compact))

    def __getitem__(self, index: Any) -> Any:
        return expand_subjects(self.compact)[index]


#: Passes per check and device: ``{check: {device: count}}``, checks and devices in run order.
PassCounts = dict[str, dict[str, int]]


class PassSummary:
    """The passes of a run per check and device, built from the store without making results.

    Attributes:
        groups: ``{check: {device: [subject sequences]}}`` in run order (a subject sequence is a
            :data:`PassRun`'s subjects or a one-subject tuple; nothing is copied).
    """

    def __init__(self) -> None:
        self.groups: dict[str, dict[str, list[Sequence[str | None]]]] = {}

    def add(self, check: str, device: str, subjects: Sequence[str | None]) -> None:
        """Count ``subjects`` as passes of ``check`` on ``device``."""
        by_device = self.groups.get(check)
        if by_device is None:
            by_device = self.groups[check] = {}
        parts = by_device.get(device)
        if parts is None:
            by_device[device] = [subjects]
        else:
            parts.append(subjects)

    def counts(self) -> PassCounts:
        """``{check: {device: passes}}``."""
        return {
            check: {device: sum(len(p) for p in parts) for device, parts in by_device.items()}
            for check, by_device in self.groups.items()
        }

    def compact(self) -> dict[str, dict[str, list[CompactItem]]]:
        """``{check: {device: compact subjects}}`` (:func:`compact_subjects`).

        The subject tuples a declarative rule's block shares with the other rules of the same
        selector are compacted once.
        """
        cache: dict[int, tuple[Sequence[str | None], list[CompactItem]]] = {}

        def one(part: Sequence[str | None]) -> list[CompactItem]:
            hit = cache.get(id(part))
            if hit is None or hit[0] is not part:
                hit = cache[id(part)] = (part, compact_subjects(part))
            return hit[1]

        out: dict[str, dict[str, list[CompactItem]]] = {}
        for check, by_device in self.groups.items():
            out[check] = {}
            for device, parts in by_device.items():
                if len(parts) == 1:
                    out[check][device] = one(parts[0])
                else:
                    out[check][device] = compact_subjects(s for p in parts for s in p)
        return out


class ResultStore:
    """All results of a run, in run order, stored compactly.

    Checking a 100k-GPU fabric gives millions of results, almost all passes. Problems (anything
    but a pass) are :class:`Result` objects; the passes of a declarative rule on a device are
    kept as a block: the tuple of selected subjects (shared by every rule with the same interface
    selector) plus the problems by position. Passes become :class:`Result` objects only while
    iterated. Iterating yields every result in run order; :attr:`problems` holds the non-pass ones.

    Skipped and error results of one check on one device that differ only in their subject are
    kept as one :class:`SkipBlock` (yielded by a check, or folded here as they are added: a
    rule's problems on one device, consecutive results of a Python check). :attr:`problems` holds
    the block, iterating the store expands it, :meth:`runs` yields it whole; ``len`` and
    :meth:`summary` count each of its subjects.
    """

    def __init__(self) -> None:
        # A block is a Result (a SkipBlock too), or (check, device, severity, expected, subjects,
        # {index: Result} | None).
        self._blocks: list[Any] = []
        self.problems: list[Result] = []
        self._count = 0
        #: The SkipBlock this store made from the last results appended (more may join it), and
        #: its subject list.
        self._open: SkipBlock | None = None
        self._open_subjects: list[str | None] = []
        #: The passes of the first blocks, counted ahead (:meth:`count_passes`): how many blocks,
        #: the passes per device (every device of those blocks, 0 included) and per check and
        #: device. Still right when blocks are added after them: a block is only ever replaced by
        #: a non-pass of its device (a SkipBlock folding it), or by :meth:`replace`, which drops it.
        self._counted: tuple[int, dict[str, int], PassCounts] | None = None

    def append(self, r: Result) -> None:
        """Add one result (or one :class:`SkipBlock`).

        A skipped or error result that says what the result added just before it says (same
        check, device, status, message, severity, expected, actual; another subject) joins it in
        a :class:`SkipBlock`.
        """
        if type(r) is SkipBlock:
            self._blocks.append(r)
            self._count += len(r.subjects)
            self.problems.append(r)
            self._open = None
            return
        self._count += 1
        if r.status is Status.PASS:
            self._blocks.append(r)
            self._open = None
            return
        if r.status in BLOCK_STATUSES and r.subject is not None and self._blocks:
            last = self._blocks[-1]
            if self._open is not None and last is self._open and _same_finding(last, r):
                self._open_subjects.append(r.subject)
                return
            if (
                type(last) is Result
                and last.subject is not None
                and self.problems
                and self.problems[-1] is last
                and _same_finding(last, r)
            ):
                self._open_subjects = [last.subject, r.subject]
                block = SkipBlock(
                    r.check,
                    r.device,
                    r.severity,
                    self._open_subjects,
                    r.message,
                    r.status,
                    r.expected,
                    r.actual,
                )
                block.waiver = r.waiver
                self._blocks[-1] = self.problems[-1] = self._open = block
                return
        self._blocks.append(r)
        self._open = None
        self.problems.append(r)

    def extend(self, results: Iterable[Result], *, bounded: bool = False) -> None:
        """Add results (a :class:`PassBlock` is stored as one compact block).

        ``bounded``: each other result through :func:`bound_result` first, as
        :func:`bounded_results` would (what the engine does with a Python check's results), in
        this one loop: a device's two dozen checks, each yielding one result, make no second
        generator each.
        """
        for r in results:
            if type(r) is PassBlock:
                self.add_block(r.check, r.device, r.severity, r.expected, tuple(r.subjects), None)
            else:
                self.append(bound_result(r) if bounded else r)  # a SkipBlock's values are bounded too

    def add_block(
        self,
        check: str,
        device: str,
        severity: Severity,
        expected: Any,
        subjects: tuple[str | None, ...],
        problems: dict[int, Result] | None,
    ) -> None:
        """Add one rule's results on one device: every subject passed except ``problems[i]``.

        Skipped and error results among ``problems`` that say the same thing on several subjects
        are kept as one :class:`SkipBlock` each, after the rule's other results.
        """
        self._open = None
        blocks: list[SkipBlock] = []
        if problems is not None and len(problems) > 1:
            subjects, problems, blocks = _fold(subjects, problems)
        self._blocks.append((check, device, severity, expected, subjects, problems))
        self._count += len(subjects)
        if problems:
            self.problems.extend(r for r in problems.values() if r.status is not Status.PASS)
        for b in blocks:
            self.append(b)

    def merge(self, other: ResultStore) -> None:
        """Append another store's results (a worker's part) after this one's.

        When both stores counted all their passes ahead (:meth:`count_passes`), the counts add
        up, so the merged store's :meth:`tally` only walks what comes after.
        """
        mine, theirs = self._counted, other._counted
        if (
            theirs is not None
            and theirs[0] == len(other._blocks)
            and (mine[0] == len(self._blocks) if mine is not None else not self._blocks)
        ):
            n, by_device, passes = mine if mine is not None else (0, {}, {})
            for device, count in theirs[1].items():
                by_device[device] = by_device.get(device, 0) + count
            for check, counts in theirs[2].items():
                known = passes.get(check)
                if known is None:
                    passes[check] = dict(counts)
                elif known.keys().isdisjoint(counts):
                    known.update(counts)
                else:
                    for device, count in counts.items():
                        known[device] = known.get(device, 0) + count
            self._counted = (n + theirs[0], by_device, passes)
        self._blocks.extend(other._blocks)
        self.problems.extend(other.problems)
        self._count += other._count
        self._open = None

    def replace(self, old: Result, new: Sequence[Result]) -> None:
        """Put ``new`` where the problem ``old`` is (in run order and in :attr:`problems`).

        For waivers that cover some subjects of a :class:`SkipBlock`: the block is split into
        the waived part and the rest. ``new`` must stand for as many results as ``old``.
        """
        if sum(map(block_count, new)) != block_count(old):
            raise ValueError(f"{old!r} replaced by results standing for another number of subjects")
        at = next(i for i in range(len(self._blocks) - 1, -1, -1) if self._blocks[i] is old)
        self._blocks[at : at + 1] = list(new)
        self._counted = None  # the blocks moved: counted again by the next tally
        at = next(i for i in range(len(self.problems) - 1, -1, -1) if self.problems[i] is old)
        self.problems[at : at + 1] = list(new)
        self._open = None

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Result]:
        for block in self._blocks:
            if isinstance(block, Result):
                if type(block) is SkipBlock:
                    yield from block.expand()
                else:
                    yield block
                continue
            check, device, severity, expected, subjects, problems = block
            for i, subject in enumerate(subjects):
                r = problems.get(i) if problems else None
                yield (
                    r
                    if r is not None
                    else Result(check, device, subject, Status.PASS, severity, expected, None, "")
                )

    def runs(self) -> Iterator[Result | PassRun]:
        """Every result in run order, with passes kept in runs: what report writers stream.

        Yields a :class:`Result` (a :class:`SkipBlock` whole), or a :data:`PassRun` ``(check,
        device, severity, expected, subjects)`` standing for one ``pass`` result per subject (no
        ``actual``, no message). Expanding the runs and blocks gives exactly what iterating the
        store gives.
        """
        for block in self._blocks:
            if isinstance(block, Result):
                yield block
                continue
            check, device, severity, expected, subjects, problems = block
            if not problems:
                if subjects:
                    yield (check, device, severity, expected, subjects)
                continue
            start = 0
            for i in sorted(problems):
                if i > start:
                    yield (check, device, severity, expected, subjects[start:i])
                yield problems[i]
                start = i + 1
            if start < len(subjects):
                yield (check, device, severity, expected, subjects[start:])

    def passes(self) -> PassSummary:
        """The passes per check and device (:class:`PassSummary`), without making results."""
        out = PassSummary()
        for run in self.runs():
            if isinstance(run, Result):
                if run.status is Status.PASS:
                    out.add(run.check, run.device, (run.subject,))
            else:
                out.add(run[0], run[1], run[4])
        return out

    def not_passes(self) -> Iterator[Result]:
        """Every result that is not a pass (a :class:`SkipBlock` whole), in run order.

        What :meth:`runs` yields without the passes (the rows of a report that counts passes),
        without slicing the pass runs.
        """
        for block in self._blocks:
            if type(block) is tuple:
                problems = block[5]
                if problems:
                    for i in sorted(problems):
                        r = problems[i]
                        if r.status is not Status.PASS:
                            yield r
            elif block.status is not Status.PASS:
                yield block

    def first_severities(self) -> dict[str, Severity]:
        """Each check's severity in its first result, checks in the order of their first result
        (what :meth:`runs` yields first of each), without making results.
        """
        out: dict[str, Severity] = {}
        for block in self._blocks:
            if type(block) is tuple:
                check, _, severity, _, subjects, problems = block
                if check in out or not subjects:
                    continue
                first = problems.get(0) if problems else None
                out[check] = first.severity if first is not None else severity
            elif block.check not in out:
                out[block.check] = block.severity
        return out

    def summary(self) -> dict[str, Any]:
        """Counts by status, by severity of failures and by device, without materialising passes.

        A :class:`SkipBlock` counts once per subject.
        """
        return self.tally()[0]

    def count_passes(self) -> None:
        """Count the passes of every block now (a worker does, before it sends its part back), so
        that :meth:`tally` of the store its part is merged into does not walk these blocks again.
        """
        by_device, passes = self._count_blocks(0)
        self._counted = (len(self._blocks), {d: row[0] for d, row in by_device.items()}, passes)

    def _count_blocks(self, start: int) -> tuple[dict[str, list[int]], PassCounts]:
        """The passes of the blocks from ``start`` on: per device (a row of counts by status, the
        passes first; every device of those blocks has one) and per check and device.
        """
        pass_ = Status.PASS
        width = len(Status)
        by_device: dict[str, list[int]] = {}
        passes: PassCounts = {}
        for block in itertools.islice(self._blocks, start, None):
            if type(block) is tuple:
                check, device, _, _, subjects, problems = block
                n = len(subjects)
                if problems:
                    n -= sum(1 for r in problems.values() if r.status is not pass_)
            else:
                check, device = block.check, block.device
                n = 1 if block.status is pass_ else 0
            row = by_device.get(device)
            if row is None:
                row = by_device[device] = [0] * width
            if n:
                row[0] += n
                by_check = passes.get(check)
                if by_check is None:
                    by_check = passes[check] = {}
                by_check[device] = by_check.get(device, 0) + n
        return by_device, passes

    def tally(self) -> tuple[dict[str, Any], PassCounts]:
        """:meth:`summary` and the passes per check and device (what ``passes().counts()`` gives),
        in one pass over the blocks (over those after the ones counted ahead, :meth:`count_passes`).
        """
        pass_ = Status.PASS
        column = {s: i for i, s in enumerate(Status)}
        if self._counted is None:
            by_device, passes = self._count_blocks(0)
        else:
            start, counted_devices, counted = self._counted
            by_device = {d: [n] + [0] * (len(column) - 1) for d, n in counted_devices.items()}
            passes = {check: dict(counts) for check, counts in counted.items()}
            later_devices, later = self._count_blocks(start)
            for device, later_row in later_devices.items():
                known = by_device.get(device)
                if known is None:
                    by_device[device] = later_row
                else:
                    known[0] += later_row[0]
            for check, counts in later.items():
                known_counts = passes.setdefault(check, {})
                for device, n in counts.items():
                    known_counts[device] = known_counts.get(device, 0) + n
        by_status = dict.fromkeys(Status, 0)
        by_severity = dict.fromkeys(Severity, 0)
        not_pass = 0
        for r in self.problems:
            n = block_count(r)
            not_pass += n
            row = by_device.get(r.device)
            if row is None:
                row = by_device[r.device] = [0] * len(column)
            row[column[r.status]] += n
            by_status[r.status] += n
            if r.status is Status.FAIL:
                by_severity[r.severity] += n
        by_status[pass_] = self._count - not_pass
        names = [s.value for s in Status]
        summary = {
            "total": self._count,
            "by_status": {s.value: by_status[s] for s in Status},
            "failures_by_severity": {s.label: by_severity[s] for s in reversed(Severity)},
            "by_device": {d: dict(zip(names, row, strict=True)) for d, row in by_device.items()},
        }
        return summary, passes


def _fold(
    subjects: tuple[str | None, ...], problems: dict[int, Result]
) -> tuple[tuple[str | None, ...], dict[int, Result] | None, list[SkipBlock]]:
    """A rule block's problems with the skipped/error results that say the same thing on several
    subjects taken out as :class:`SkipBlock` objects: ``(subjects left, problems left, blocks)``.
    """
    groups: list[list[int]] = []
    for i, r in problems.items():
        if r.status not in BLOCK_STATUSES or r.subject is None:
            continue
        for g in groups:
            if _same_finding(problems[g[0]], r):
                g.append(i)
                break
        else:
            groups.append([i])
    folded = [g for g in groups if len(g) > 1]
    if not folded:
        return subjects, problems, []
    blocks: list[SkipBlock] = []
    gone: set[int] = set()
    for g in folded:
        r = problems[g[0]]
        block = SkipBlock(
            r.check, r.device, r.severity, [subjects[i] for i in g], r.message, r.status, r.expected, r.actual
        )
        block.waiver = r.waiver
        blocks.append(block)
        gone.update(g)
    kept: list[str | None] = []
    left: dict[int, Result] = {}
    for i, subject in enumerate(subjects):
        if i in gone:
            continue
        found = problems.get(i)
        if found is not None:
            left[len(kept)] = found
        kept.append(subject)
    return tuple(kept), left or None, blocks
