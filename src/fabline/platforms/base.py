"""The shape every platform module fills in: read-only commands, each with its parser.

A platform is data: a tuple of :class:`Command` entries (the read-only allow-list), each naming
the parser that turns its output into a state-schema-v1 fragment. A parser declares what it reads
and what it expects (:func:`text_parser`, :func:`json_parser`), and the dispatcher
(:mod:`fabline.platforms.dispatch`) owns the rest: the text is checked (:func:`check_text`) or the
JSON loaded (:func:`load_json`) before the parser's body sees it, an empty result is the
command's :class:`~fabline.errors.ParseError` (unless the parser is declared ``may_be_empty``),
and the fragment is bounded, cleaned and checked against the state schema. A parser raises
``ctx.reject(detail)`` when the output does not have the expected shape.

Example:
    >>> @text_parser("one 'mtu N' line")
    ... def parse_mtu(text: str, ctx: ParseContext) -> StateBody:
    ...     m = re.search(r"^mtu (\\d+)$", text, re.MULTILINE)
    ...     if not m:
    ...         raise ctx.reject("no mtu line")
    ...     return {"interfaces": {"eth0": {"mtu": int(m[1])}}}
    >>> parse_mtu("mtu 9000\\n", ParseContext("linux", "x"))
    {'interfaces': {'eth0': {'mtu': 9000}}}
    >>> parse_mtu("", ParseContext("linux", "x"))
    Traceback (most recent call last):
    ...
    fabline.errors.ParseError: linux: 'x': expected one 'mtu N' line (empty output)
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast

import orjson

from fabline.errors import CommandUnavailable, ParseError
from fabline.platforms.toolkit import ValueProblem, clip, dash_tables
from fabline.state_types import StateBody

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
    #: What the shared readers learned while parsing (``json``: load_json read the output).
    notes: dict[str, bool] = field(default_factory=dict, compare=False, repr=False)
    #: What the parser expects, as it declared (:func:`text_parser`, :func:`json_parser`).
    expected: str = field(default="", compare=False)

    @property
    def interface(self) -> str | None:
        """The interface named in a per-interface command, if any."""
        return self.params.get("interface")

    def require_interface(self, expected: str) -> str:
        """The interface of a per-interface command (``ethtool -S {interface}``).

        Raises:
            ParseError: The command line names no interface.
        """
        if not self.interface:
            raise self.fail(expected, "the command names no interface")
        return self.interface

    def fail(self, expected: str, detail: str | None = None) -> ParseError:
        """Build the ParseError for this command (``raise ctx.fail("...")``)."""
        return ParseError(self.platform, self.command, expected, detail)

    def reject(self, detail: str | None = None) -> ParseError:
        """Build the ParseError for this command, expecting what its parser declared (``raise ctx.reject()``)."""
        return ParseError(self.platform, self.command, self.expected or "this command's output", detail)

    def expecting(self, expected: str) -> ParseContext:
        """This context with what a declared parser expects (the dispatcher sets it).

        The same ``notes`` are shared. Built by copying the fields, not through the frozen
        ``__init__`` (five ``object.__setattr__`` calls): every output of a collection passes here.

        Example:
            >>> ctx = ParseContext("linux", "ethtool eth0", {"interface": "eth0"})
            >>> new = ctx.expecting("ethtool text")
            >>> new.expected, new.interface, new.notes is ctx.notes, ctx.expected
            ('ethtool text', 'eth0', True, '')
        """
        if expected == self.expected:
            return self
        new = object.__new__(ParseContext)
        new.__dict__.update(self.__dict__, expected=expected)
        return new


Parser = Callable[[str, ParseContext], Fragment]

#: A declared parser's own function: the checked text or loaded JSON in, a state fragment out,
#: typed with the state's ``TypedDict`` (:class:`~fabline.state_types.StateBody`) so mypy checks
#: the fields it writes (a plain ``dict[str, Any]`` return is refused).
ParserBody = Callable[[Any, ParseContext], StateBody]

#: The input kinds a parser declares: ``text`` (checked by :func:`check_text`) or ``json``
#: (loaded by :func:`load_json`).
InputKind = Literal["text", "json"]


class DeclaredParser:
    """A parser that declared its input kind and what it expects; called as any :data:`Parser`.

    Calling it with a command's output does the part every parser shares: the text is checked
    (empty, binary, over-long, an error banner) or the JSON document loaded and bounded, and the
    parser's body gets the checked text or the document, with ``ctx.expected`` set. The
    dispatcher (:func:`fabline.platforms.dispatch.run_parser`) adds the rest: the empty-result ``ParseError``, the bounds and
    the clean strings of the fragment.

    Attributes:
        body: The parser's own function, ``body(text_or_document, ctx) -> fragment``.
        reads: ``text`` or ``json``.
        expected: What the output should be, for every ``ParseError`` of the command.
        may_be_empty: The output can truly hold nothing (no LLDP neighbour): an empty fragment is
            a result, not a ``ParseError``.
        empty_ok: An empty answer is a real one (``cat`` or ``sed`` of an empty file, exit 0: the
            file sets nothing); the body gets ``""`` instead of the "empty output" ``ParseError``.
            A failed read never gets here: a non-zero exit with no output is ``failed``.
    """

    def __init__(
        self, body: ParserBody, reads: InputKind, expected: str, *,
        may_be_empty: bool = False, empty_ok: bool = False,
    ) -> None:  # fmt: skip
        self.body = body
        self.reads = reads
        self.expected = expected
        self.may_be_empty = may_be_empty
        self.empty_ok = empty_ok
        functools.update_wrapper(self, body)

    def __call__(self, output: str, ctx: ParseContext) -> Fragment:
        """Check or load the output, then run the parser's body on it."""
        ctx = ctx.expecting(self.expected)
        # The body's TypedDict is a plain dict at run time: the dispatcher walks it as one.
        if self.empty_ok and not output.strip():
            return cast(Fragment, self.body("", ctx))
        if self.reads == "json":
            return cast(Fragment, self.body(load_json(output, ctx, self.expected), ctx))
        return cast(Fragment, self.body(check_text(output, ctx, self.expected), ctx))

    def __repr__(self) -> str:
        return f"<{self.reads} parser {self.body.__module__}.{self.body.__name__}>"


def text_parser(
    expected: str, *, may_be_empty: bool = False, empty_ok: bool = False
) -> Callable[[Callable[[str, ParseContext], StateBody]], DeclaredParser]:
    """Declare a parser of text output: its body gets the checked text (see :class:`DeclaredParser`)."""

    def declare(body: Callable[[str, ParseContext], StateBody]) -> DeclaredParser:
        return DeclaredParser(body, "text", expected, may_be_empty=may_be_empty, empty_ok=empty_ok)

    return declare


def json_parser(expected: str, *, may_be_empty: bool = False) -> Callable[[ParserBody], DeclaredParser]:
    """Declare a parser of JSON output: its body gets the loaded document (see :class:`DeclaredParser`)."""

    def declare(body: ParserBody) -> DeclaredParser:
        return DeclaredParser(body, "json", expected, may_be_empty=may_be_empty)

    return declare


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


def release_key(release: str) -> tuple[int, ...] | None:
    """The comparable numbers of a NOS release (``5.9.1`` -> ``(5, 9, 1)``), or None.

    A build string around the number is allowed (``Cumulus Linux 5.11.0`` -> ``(5, 11, 0)``);
    missing parts count as 0 when compared (``5.9`` == ``5.9.0``).

    Example:
        >>> release_key("5.9.1"), release_key("Cumulus Linux 4.4.3"), release_key("unknown")
        ((5, 9, 1), (4, 4, 3), None)
    """
    m = re.search(r"(\d+(?:\.\d+){0,3})", release)
    if m is None:
        return None
    parts = tuple(int(p) for p in m.group(1).split("."))
    return parts + (0,) * (3 - len(parts)) if len(parts) < 3 else parts


#: Release numbers from here on are dates (SONiC ``202311``), not major versions.
_DATED = 190001


@dataclass(frozen=True)
class Releases:
    """The NOS releases that have a command, as the vendor documents it.

    Attributes:
        since: The first release that has the command (None: every release the platform covers).
        until: The first release that no longer has it (None: still there).
        source: Where this is documented (a vendor page, with the release it covers).
        feeds: State paths only this command provides (``interfaces.*.optics``): on a release
            without it they are recorded as unsupported, so a rule needing them is ``skipped``
            with the reason instead of failing on missing evidence.
    """

    since: str | None = None
    until: str | None = None
    source: str = ""
    feeds: tuple[str, ...] = ()

    def has(self, release: str | None) -> bool | None:
        """Whether a release has the command; None when the release is unknown or unreadable.

        A release numbered by date (SONiC's ``202505``) is compared only with a release string that
        carries such a date: ``SONiC.HEAD.32-21ea29a`` (a master build) is unknown, not release 32.

        Example:
            >>> Releases(since="5.11").has("5.9.1"), Releases(until="5.0").has("4.4.3"), Releases().has(None)
            (False, True, None)
            >>> Releases(since="202505").has("SONiC.202311.1"), Releases(since="202505").has("SONiC.HEAD.32-21ea29a")
            (False, None)
        """
        key = release_key(release) if release else None
        if key is None:
            return None
        bound = release_key(self.since or self.until or "")
        if bound is not None and (bound[0] >= _DATED) != (key[0] >= _DATED):
            return None  # one numbered by date, the other not: not comparable
        if self.since is not None and key < (release_key(self.since) or ()):
            return False
        return not (self.until is not None and key >= (release_key(self.until) or ()))

    def describe(self) -> str:
        """The releases in words: ``5.11 and later``, ``before 5.0``, ``5.0 to before 5.16``.

        Example:
            >>> Releases(since="5.11").describe(), Releases(until="5.0").describe()
            ('5.11 and later', 'before 5.0')
        """
        if self.since and self.until:
            return f"{self.since} to before {self.until}"
        if self.since:
            return f"{self.since} and later"
        if self.until:
            return f"before {self.until}"
        return "every release"


@dataclass(frozen=True)
class Command:
    """One read-only command of a platform.

    Attributes:
        template: The command line; ``{interface}`` (or other ``{name}``) marks a parameter.
        parser: Function from output to state fragment.
        feeds: Human-readable list of the state paths the command fills (for docs and ``--help``).
        kind: ``cli`` for a switch CLI / shell command, ``file`` for a file read with ``cat``.
        releases: The NOS releases that have the command (from the vendor's documentation); a
            collection of a device whose release lacks it does not send it and records why
            (``not_in_release``). None: every release has it.
        unavailable: Words of the command's stderr that say it cannot run on this device at all
            (``has not been booted with systemd``): with a non-zero exit, the command is
            ``unavailable`` with that line, not ``failed`` (whatever preamble it printed). A command run with
            ``sudo -n`` (:data:`ROOT_PREFIX`) is also ``unavailable`` when sudo itself refuses.
        only_source_of: State paths only this command provides (``host.pcie_bridges``): when the
            collector does not send it by the inventory's choice (a root-only read without
            ``fabline_sudo``), they are recorded in the state's ``unsupported`` with the reason, so
            what needs them is ``skipped``, and the device is not ``partial`` for it.
    """

    template: str
    parser: Parser
    feeds: str
    kind: str = "cli"
    releases: Releases | None = None
    unavailable: tuple[str, ...] = ()
    only_source_of: tuple[str, ...] = ()

    @property
    def needs_root(self) -> bool:
        """Whether the command runs with ``sudo -n`` (sent only where the inventory enables it)."""
        return self.template.startswith(ROOT_PREFIX)

    def unavailable_reason(self, exit_code: int | None, stderr: str) -> str | None:
        """Why a failed run means the command cannot run here (``unavailable``), or None.

        Example:
            >>> c = Command("sudo -n dmidecode --type bios", lambda t, c: {}, "facts.bios_version")
            >>> c.unavailable_reason(1, "sudo: a password is required\\n")
            'sudo: a password is required'
            >>> c.unavailable_reason(0, "sudo: a password is required\\n") is None
            True
        """
        if not exit_code:
            return None
        for line in stderr.splitlines():
            text = line.strip()
            if (self.needs_root and text.startswith("sudo:")) or any(w in text for w in self.unavailable):
                return text[:200]
        return None

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


#: The prefix of a command that needs root: ``sudo -n`` never prompts (it fails at once when a password
#: would be needed). Only the templates its platform spec lists in ``root_commands`` may
#: carry it, and the collector sends them only to a device whose inventory enables it.
ROOT_PREFIX = "sudo -n "

_ERROR_BANNERS = (
    re.compile(r"^\s*% ?Invalid (input|command)", re.MULTILINE),
    re.compile(r"command not found", re.IGNORECASE),
    re.compile(r"^\s*% ?(Incomplete|Ambiguous) command", re.MULTILINE),
    re.compile(
        r"^\s*(Error|Usage): .*(no such command|Invalid choice|unknown)", re.MULTILINE | re.IGNORECASE
    ),
    re.compile(r"^\s*% ?Unrecognized command", re.MULTILINE),
)


#: Each banner with the lower-case substrings one of which it cannot match without: the word it
#: names, not only ``%`` (NVUE tables print ``DWRR-50%``: a ``%`` alone ran three regexes over them).
_ERROR_BANNER_CHECKS = tuple(
    zip(
        _ERROR_BANNERS,
        (
            ("invalid",),
            ("command not found",),
            ("incomplete", "ambiguous"),
            ("error:", "usage:"),
            ("unrecognized",),
        ),
        strict=True,
    )
)
#: Every telltale: an output holding none of them (nearly all) skips the banner loop.
_BANNER_TELLTALES = tuple(t for _, telltales in _ERROR_BANNER_CHECKS for t in telltales)

#: Control characters below TAB mean binary output.
_BINARY_CHARS = tuple(map(chr, range(9)))


def check_text(output: str, ctx: ParseContext, expected: str, *, lines: bool = True) -> str:
    """Reject output that cannot be a command's answer: empty, binary, or an error banner.

    Returns the output unchanged. A declared parser (:func:`text_parser`) gets its output through
    here; a parser calls it itself only on a part of the output (one line of a file).

    Raises:
        CommandUnavailable: The device says it does not know the command.
        ParseError: Empty or binary output.
    """
    if not output or output.isspace():
        raise ctx.fail(expected, "empty output")
    if len(output) > MAX_OUTPUT_CHARS:
        raise ctx.fail(expected, f"output of {len(output):,} characters (the limit is {MAX_OUTPUT_CHARS:,})")
    # Text parsers match lines with regexes; capping a line caps what any pattern can cost on it.
    # (JSON may be one long line: load_json checks its own bounds.)
    if lines and len(output) > MAX_LINE_CHARS and (longest := longest_line_over(output, MAX_LINE_CHARS)):
        raise ctx.fail(expected, f"a line of {longest:,} characters (the limit is {MAX_LINE_CHARS:,})")
    start = output[:2000]
    # Nine substring scans in C are cheaper than one regex scan (every output of a collection
    # comes through here).
    if "\x00" in output or any(c in start for c in _BINARY_CHARS):
        raise ctx.fail(expected, "binary output")
    head = output[:4000]
    lower = head.lower()
    # Each banner needs a telltale substring; a regex runs only where its substring is present
    # (most outputs have none of them).
    if not any(t in lower for t in _BANNER_TELLTALES):
        return output
    for rx, telltales in _ERROR_BANNER_CHECKS:
        if not any(t in lower for t in telltales):
            continue
        m = rx.search(head)
        if m:
            # A MULTILINE '^\s*' match may start on the blank line before the banner.
            line = output[m.start() :].lstrip().splitlines()[0].strip()
            raise CommandUnavailable(ctx.platform, ctx.command, expected, f"device said {line!r}")
    return output


def longest_line_over(text: str, limit: int) -> int | None:
    """The length of the longest line of ``text`` if it is over ``limit`` characters, else None.

    A line of more than ``limit`` characters covers a whole aligned block of ``(limit + 1) // 2``
    characters; while every block holds a newline (one ``find`` each, stopping at the first) no
    line is too long, and the text is never split (a collection checks every output: splitting a
    400 KB output into lines cost more than the rest of the check).

    Example:
        >>> longest_line_over("ab\\ncd\\n" * 10, 3), longest_line_over("ab\\n" + "x" * 9 + "\\ncd", 8)
        (None, 9)
    """
    block = (limit + 1) // 2
    for start in range(0, len(text) - block + 1, block):
        if text.find("\n", start, start + block) < 0:
            longest = max(map(len, text.split("\n")))
            return longest if longest > limit else None
    return None


#: The largest output a parser reads. The collector caps what it keeps (``--max-output``); this
#: bound holds for every other way in (``fabline parse``, ``--reparse`` of an edited snapshot).
MAX_OUTPUT_CHARS = 64 * 1024 * 1024
#: The longest line a text parser reads (device CLIs print lines of at most a few hundred characters).
MAX_LINE_CHARS = 4096


def _finite(text: str) -> float:
    value = float(text)
    if value in (_INF, -_INF):
        raise ValueProblem(f"number {clip(text, 24)} is out of range")
    return value


_INF = float("inf")


def _reject_constant(word: str) -> Any:
    raise ValueProblem(f"{word} is not a JSON number")


def load_json(output: str, ctx: ParseContext, expected: str = "a JSON document") -> Any:
    """Parse JSON output (after :func:`check_text`), skipping a leading prompt/echo line.

    The document is bounded: at most :data:`MAX_OUTPUT_CHARS`, nesting within the decoder's stack
    (deeper is a ParseError, not a crash), finite numbers (no ``NaN``/``1e999``). It is read with
    orjson (a fifth of the standard reader's cost, which with its per-float hook was most of an EOS
    parse), which refuses ``NaN``, infinities and unpaired surrogates itself and reads an integer
    beyond 64 bits as a float (a field that must be an integer then fails the state schema). A
    document orjson refuses is read again by the standard reader, so the ParseError names the
    problem as before (an integer beyond Python's 4,300-digit limit, a bad constant, a position).

    Raises:
        ParseError: The output is not valid (or is truncated, or is unbounded) JSON.
    """
    text = check_text(output, ctx, expected, lines=False)
    ctx.notes["json"] = True
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
    if start < 0:
        raise ctx.fail(expected, "no JSON object in output")
    try:
        return orjson.loads(text[start:])
    except orjson.JSONDecodeError:
        pass  # the standard reader says why (or reads what orjson refuses: a document nested over 1,024)
    try:
        doc = json.loads(text[start:], parse_float=_finite, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise ctx.fail(expected, f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise ctx.fail(expected, "JSON nested deeper than the parser's stack") from None
    except ValueError as exc:  # ValueProblem, or an integer beyond Python's digit limit
        raise ctx.fail(expected, f"invalid JSON: {clip(str(exc).splitlines()[0])}") from None
    # Deep nesting that loads is bounded where it matters: a fragment nests at most
    # MAX_FRAGMENT_DEPTH levels (fabline.platforms.dispatch); a walk of every document would cost every collection.
    return doc


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
    """Rows of the first dash-underlined table in a text (see :func:`~fabline.platforms.toolkit.dash_tables`).

    Example:
        >>> split_dashed_table('''Port   Oper  Speed
        ... -----  ----  -----
        ... Eth0   up    400G
        ... ''')
        [{'Port': 'Eth0', 'Oper': 'up', 'Speed': '400G'}]
    """
    tables = dash_tables(text.splitlines())
    return list(tables[0].rows) if tables else []
