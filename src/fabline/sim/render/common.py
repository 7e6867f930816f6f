"""What every platform renderer shares: the answer type, table layouts, number formats."""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from fabline.synthetic import DeviceSpec

T = TypeVar("T")

# Characters that need shlex's quoting rules; without them a command line splits on blanks.
_QUOTING = re.compile(r"['\"\\]")
_BLANKS = re.compile(r"[^ \t\r\n]+")


@dataclass(frozen=True)
class Answer:
    """A command's result as the device gives it.

    Attributes:
        out: Standard output (``\\n`` line ends; the shell turns them into ``\\r\\n`` on a PTY).
        code: Exit status (exec channels; 0 on a switch CLI).
        err: Standard error (Linux shells only).
    """

    out: str
    code: int = 0
    err: str = ""


class SimView(Protocol):
    """What a renderer needs of a simulated device (:class:`fabline.sim.device.SimDevice` is one).

    A protocol, so the renderers do not import the device module that imports them.
    """

    @property
    def name(self) -> str:
        """The device name (also its hostname)."""
        ...

    @property
    def platform(self) -> str:
        """Platform id."""
        ...

    @property
    def spec(self) -> DeviceSpec:
        """The device as the fabric describes it."""
        ...

    def state(self) -> dict[str, Any]:
        """The state the device shows now."""
        ...

    def transport_fault(self, kind: str, command: str | None = None) -> Any:
        """The transport fault of this kind planted on the device (``sudo_refused``), or None."""
        ...

    def derived(self, name: str, build: Callable[[], T]) -> T:
        """A value computed from the current state once and cached (``build`` makes it)."""
        ...


def split_words(line: str) -> list[str]:
    """``shlex.split(line)``, without shlex's character-by-character scan when nothing is quoted.

    Raises:
        ValueError: An unterminated quote (as ``shlex.split``).

    Example:
        >>> split_words("ethtool -i eth0"), split_words("echo 'a b'")
        (['ethtool', '-i', 'eth0'], ['echo', 'a b'])
    """
    if _QUOTING.search(line) is None:
        return _BLANKS.findall(line)
    return shlex.split(line)


def simple_table(
    headers: Sequence[str], rows: Sequence[Sequence[object]], *, align: str = "right", indent: str = ""
) -> str:
    """A table in python-tabulate's ``simple`` layout, the one sonic-utilities prints.

    Example:
        >>> print(simple_table(["Port", "MTU"], [["Ethernet0", 9100]]))
             Port   MTU
        ---------  ----
        Ethernet0  9100
    """
    cells = [[str(c) for c in row] for row in rows]
    widths = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(headers)]

    def line(values: Sequence[str]) -> str:
        if align == "right":
            parts = [v.rjust(w) for v, w in zip(values, widths, strict=True)]
        else:
            parts = [v.ljust(w) for v, w in zip(values, widths, strict=True)]
        return (indent + "  ".join(parts)).rstrip()

    out = [line(list(headers)), indent + "  ".join("-" * w for w in widths)]
    out.extend(line(r) for r in cells)
    return "\n".join(out)


def mw(dbm: float) -> float:
    """Milliwatts of a dBm power (the other half of a DOM reading).

    Example:
        >>> round(mw(0.0), 4), mw(-40.0) < 0.001
        (1.0, True)
    """
    return float(10 ** (dbm / 10))


def dbm_text(dbm: float) -> str:
    """A dBm value as DOM tools print it; -40 dBm and below is a dark lane (``-inf``).

    Example:
        >>> dbm_text(-1.2), dbm_text(-40.0)
        ('-1.20', '-inf')
    """
    if dbm <= -40.0 or math.isinf(dbm):
        return "-inf"
    return f"{dbm:.2f}"


def ranges(values: Sequence[int]) -> str:
    """Comma-separated values, the way most CLIs list priorities.

    Example:
        >>> ranges([3, 4])
        '3,4'
    """
    return ",".join(str(v) for v in values)


def storm_counts(body: dict[str, Any]) -> tuple[dict[str, int], dict[str, int]]:
    """A port's watchdog storms (detected, restored per queue) as a switch counts them.

    A queue in the state's ``pfcwd_stormed_queues`` is in a storm now: detected once more than
    restored (the storm not yet restored), as SONiC's captures show and EOS's and NX-OS's counts
    imply (:func:`fabline.platforms.toolkit.storm_entry` reads it back).
    """
    c = body.get("counters", {})
    detected = {str(q): int(n) for q, n in c.get("pfcwd_storms_detected", {}).items()}
    restored = {str(q): int(n) for q, n in c.get("pfcwd_storms_restored", {}).items()}
    for q in map(str, body.get("pfcwd_stormed_queues") or []):
        restored.setdefault(q, max(detected.get(q, 0) - 1, 0))
        detected[q] = max(detected.get(q, 0), restored[q] + 1)
    return detected, restored
