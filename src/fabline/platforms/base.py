"""The shape every platform module fills in: read-only commands, each with its parser.

A platform is data: a tuple of :class:`Command` entries (the read-only allow-list), each naming
the parser that turns its output into a state-schema-v1 fragment. Parsers are pure functions
``parse_x(output, ctx) -> fragment``; they raise :class:`~fabline.errors.ParseError` (through
``ctx.fail``) when the output does not have the expected shape, never return an empty success.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from fabline.errors import CommandUnavailable, ParseError

Fragment = dict[str, Any]


@dataclass(frozen=True)
class ParseContext:
    """What a parser knows besides the text: platform, the exact command, its parameters.

    Attributes:
        platform: Platform id (``sonic``, ``cumulus``, ``arista_eos``, ``cisco_nxos``, ``linux``).
        command: The command line as run on the device.
        params: Values taken from the command line by its template, e.g. ``{"interface": "eth2"}``.
    """

    platform: str
    command: str
    params: Mapping[str, str] = field(default_factory=dict)

    @property
    def interface(self) -> str | None:
        """The interface named in a per-interface command, if any."""
        return self.params.get("interface")

    def fail(self, expected: str, detail: str | None = None) -> ParseError:
        """Build the ParseError for this command (``raise ctx.fail("...")``)."""
        return ParseError(self.platform, self.command, expected, detail)


Parser = Callable[[str, ParseContext], Fragment]


def _literal_rx(text: str) -> str:
    r"""Regex for a literal part of a command template; whitespace next to a ``{param}`` is kept.

    Example:
        >>> bool(re.fullmatch(_literal_rx("ethtool -m "), "ethtool  -m ")), _literal_rx(" link") == r"\s+link"
        (True, True)
    """
    words = r"\s+".join(map(re.escape, text.split()))
    lead = r"\s+" if text[:1].isspace() else ""
    trail = r"\s+" if text[-1:].isspace() and words else ""
    return lead + words + trail


@functools.lru_cache(maxsize=1024)
def _template_pattern(template: str) -> re.Pattern[str]:
    parts = re.split(r"(\{\w+\})", template)
    rx = "".join(f"(?P<{p[1:-1]}>\\S+)" if p.startswith("{") else _literal_rx(p) for p in parts)
    return re.compile(rf"^\s*{rx}\s*$")


@dataclass(frozen=True)
class Command:
    """One read-only command of a platform.

    Attributes:
        template: The command line; ``{interface}`` (or other ``{name}``) marks a parameter.
        parser: Function from output to state fragment.
        feeds: Human-readable list of the state paths the command fills (for docs and ``--help``).
        kind: ``cli`` for a switch CLI / shell command, ``file`` for a file read with ``cat``.
    """

    template: str
    parser: Parser
    feeds: str
    kind: str = "cli"

    @property
    def parameters(self) -> tuple[str, ...]:
        """Names of the ``{param}`` placeholders in the template."""
        return tuple(re.findall(r"\{(\w+)\}", self.template))

    def pattern(self) -> re.Pattern[str]:
        """A regex that matches a concrete command line of this template (built once per template)."""
        return _template_pattern(self.template)

    def render(self, **params: str) -> str:
        """The concrete command line for the given parameters."""
        return self.template.format(**params)


_ERROR_BANNERS = (
    re.compile(r"^\s*% ?Invalid (input|command)", re.MULTILINE),
    re.compile(r"command not found", re.IGNORECASE),
    re.compile(r"^\s*% ?(Incomplete|Ambiguous) command", re.MULTILINE),
    re.compile(
        r"^\s*(Error|Usage): .*(no such command|Invalid choice|unknown)", re.MULTILINE | re.IGNORECASE
    ),
    re.compile(r"^\s*% ?Unrecognized command", re.MULTILINE),
)


#: Each banner with the lower-case substrings one of which it cannot match without.
_ERROR_BANNER_CHECKS = tuple(
    zip(_ERROR_BANNERS, (("%",), ("command not found",), ("%",), ("error:", "usage:"), ("%",)), strict=True)
)

#: Control characters below TAB mean binary output (one regex scan: a collection checks every output).
_CONTROL_RX = re.compile(r"[\x00-\x08]")


def check_text(output: str, ctx: ParseContext, expected: str) -> str:
    """Reject output that cannot be a command's answer: empty, binary, or an error banner.

    Returns the output unchanged so a parser can write ``text = check_text(output, ctx, "...")``.

    Raises:
        CommandUnavailable: The device says it does not know the command.
        ParseError: Empty or binary output.
    """
    if not output or not output.strip():
        raise ctx.fail(expected, "empty output")
    if "\x00" in output or _CONTROL_RX.search(output, 0, 2000):
        raise ctx.fail(expected, "binary output")
    head = output[:4000]
    lower = head.lower()
    # Each banner needs a telltale substring; a regex runs only where its substring is present
    # (every output of a collection goes through here, and most have none of them).
    for rx, telltales in _ERROR_BANNER_CHECKS:
        if not any(t in lower for t in telltales):
            continue
        m = rx.search(head)
        if m:
            # A MULTILINE '^\s*' match may start on the blank line before the banner.
            line = output[m.start() :].lstrip().splitlines()[0].strip()
            raise CommandUnavailable(ctx.platform, ctx.command, expected, f"device said {line!r}")
    return output


def load_json(output: str, ctx: ParseContext, expected: str = "a JSON document") -> Any:
    """Parse JSON output (after :func:`check_text`), skipping a leading prompt/echo line.

    Raises:
        ParseError: The output is not valid (or is truncated) JSON.
    """
    import json

    text = check_text(output, ctx, expected)
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
    if start < 0:
        raise ctx.fail(expected, "no JSON object in output")
    try:
        return json.loads(text[start:])
    except json.JSONDecodeError as exc:
        raise ctx.fail(expected, f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None


def deep_merge(into: Fragment, fragment: Mapping[str, Any]) -> Fragment:
    """Merge a fragment into a state document in place; nested dicts merge, other values overwrite.

    Example:
        >>> deep_merge({"interfaces": {"Ethernet0": {"mtu": 9100}}},
        ...            {"interfaces": {"Ethernet0": {"fec": "rs"}}})
        {'interfaces': {'Ethernet0': {'mtu': 9100, 'fec': 'rs'}}}
    """
    for key, value in fragment.items():
        kind = type(value)
        # Most values are plain: test those by type (an ABC isinstance per value was a third of
        # the time a 320-device collection spent merging).
        if kind is dict or (kind not in _PLAIN and isinstance(value, Mapping)):
            current = into.get(key)
            if isinstance(current, dict):
                deep_merge(current, value)
            else:
                into[key] = deep_merge({}, value)
        else:
            into[key] = value
    return into


_PLAIN = frozenset({str, int, float, bool, list, tuple, type(None)})


def merge_fragments(fragments: Iterable[Mapping[str, Any]]) -> Fragment:
    """Merge the fragments of one device's commands, in order, into one state body."""
    state: Fragment = {}
    for frag in fragments:
        deep_merge(state, frag)
    return state


def text_blocks(text: str, head: re.Pattern[str] | str) -> list[tuple[re.Match[str], str]]:
    """Split text into blocks, each starting at a match of ``head`` (``re.MULTILINE`` for ``str``).

    Returns (head match, the text after it up to the next head) pairs; empty when no head matches.

    Example:
        >>> [(m[1], b.strip()) for m, b in text_blocks("Et1 is up\\n mtu 9214\\nEt2 is up\\n", r"^(\\S+) is up")]
        [('Et1', 'mtu 9214'), ('Et2', '')]
        >>> text_blocks("no heads here", r"^(\\S+) is up")
        []
    """
    heads = list(re.finditer(head, text, re.MULTILINE) if isinstance(head, str) else head.finditer(text))
    ends = [h.start() for h in heads[1:]] + [len(text)]
    # With no head, ends is [len(text)] and zip yields nothing: no blocks.
    return [(h, text[h.end() : end]) for h, end in zip(heads, ends, strict=False)]


def table_rows(
    text: str, ctx: ParseContext, expected: str, header: str, row: re.Pattern[str], title: str
) -> Iterator[re.Match[str]]:
    """Rows of a CLI table below its header line (regex ``header``, named ``title``), each matched by ``row``.

    Lines before the header, blank lines and dash-only rulers are skipped; a row ``row`` does not
    match is a ParseError (never silently dropped).

    Example:
        >>> ctx = ParseContext("x", "show t")
        >>> [m["a"] for m in table_rows("Port  Speed\\n----  -----\\nEt1   400G\\n", ctx, "t", r"Port\\s+Speed",
        ...                               re.compile(r"(?P<a>\\S+)\\s+(?P<b>\\S+)$"), "Port Speed")]
        ['Et1']
    """
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if re.match(header, ln)), None)
    if start is None:
        raise ctx.fail(expected, f"no {title!r} header")
    for line in lines[start + 1 :]:
        if not line.strip() or re.fullmatch(r"[\s-]+", line):
            continue
        m = row.match(line)
        if not m:
            raise ctx.fail(expected, f"unreadable row {line.strip()!r}")
        yield m


def split_dashed_table(text: str) -> list[dict[str, str]]:
    """Rows of a CLI table whose header is underlined by runs of dashes.

    Column boundaries come from the dash runs (``-----  ------``), so values with spaces inside
    a column stay whole. Lines before the header and blank lines are ignored; a line that does
    not reach the table's first column (a footer, a prompt) ends the table.

    Example:
        >>> split_dashed_table('''Port   Oper  Speed
        ... -----  ----  -----
        ... Eth0   up    400G
        ... ''')
        [{'Port': 'Eth0', 'Oper': 'up', 'Speed': '400G'}]
    """
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if i and re.fullmatch(r"\s*-+(\s+-+)*\s*", line) and "-" in line:
            spans = [(m.start(), m.end()) for m in re.finditer(r"-+", line)]
            header_line = lines[i - 1]
            break
    else:
        return []
    bounds = [(spans[k][0], spans[k + 1][0] if k + 1 < len(spans) else None) for k in range(len(spans))]

    def cut(line: str) -> list[str]:
        return [line[a:b].strip() if b is not None else line[a:].strip() for a, b in bounds]

    headers = cut(header_line.ljust(spans[-1][1]))
    rows: list[dict[str, str]] = []
    for line in lines[i + 1 :]:
        if not line.strip():
            continue
        if re.fullmatch(r"\s*-+(\s+-+)*\s*", line):
            continue
        cells = cut(line)
        if not cells[0]:
            break
        rows.append(dict(zip(headers, cells, strict=True)))
    return rows
