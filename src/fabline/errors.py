"""The error classes of fabline.

Outcomes about devices are results, never exceptions. Exceptions are for bad user
configuration (:class:`ConfigError`, always one line naming the file, line and key) and for
device output a parser cannot read (:class:`ParseError`).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from pathlib import Path


class FablineError(Exception):
    """Root of every error fabline reports to the user as one line (exit code 2)."""


class ConfigError(FablineError):
    """A user file (inventory, baseline, design, state, waiver) is wrong.

    The message is rendered as ``FILE:LINE: KEY: problem`` with whichever parts are known.

    Example:
        >>> str(ConfigError("unknown key", file="baseline/roce.yml", line=12, key="severty"))
        'baseline/roce.yml:12: severty: unknown key'
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | Path | None = None,
        line: int | None = None,
        key: str | None = None,
    ) -> None:
        self.message = message
        self.file = str(file) if file is not None else None
        self.line = line
        self.key = key
        super().__init__(self._render())

    def _render(self) -> str:
        where = ""
        if self.file:
            where = self.file if self.line is None else f"{self.file}:{self.line}"
        parts = [p for p in (where, self.key) if p]
        prefix = ": ".join(parts)
        return f"{prefix}: {self.message}" if prefix else self.message


class ParseError(FablineError):
    """Device output does not have the shape its command's parser expects.

    Example:
        >>> str(ParseError("sonic", "show version", "a 'SONiC Software Version' line"))
        "sonic: 'show version': expected a 'SONiC Software Version' line"
    """

    def __init__(self, platform: str, command: str, expected: str, detail: str | None = None) -> None:
        self.platform = platform
        self.command = command
        self.expected = expected
        self.detail = detail
        msg = f"{platform}: {command!r}: expected {expected}"
        if detail:
            msg += f" ({detail})"
        super().__init__(msg)


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """Return ``" (did you mean 'x'?)"`` for the closest choice, or an empty string.

    Example:
        >>> did_you_mean("severty", ["severity", "description"])
        " (did you mean 'severity'?)"
    """
    match = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {match[0]!r}?)" if match else ""


class CommandUnavailable(ParseError):
    """The device does not know the command (``command not found``, ``% Invalid input``).

    Still a parse error for ``fabline parse``; the collector records it as ``unavailable``.
    """
