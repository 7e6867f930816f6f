"""The parse dispatcher: what every parser needs around it, owned in one place.

``run_parser`` runs one command's parser (a declared parser checks its text or loads its JSON
first: :class:`~fabline.platforms.base.DeclaredParser`), turns a value outside its domain into the
command's :class:`~fabline.errors.ParseError`, refuses an empty result unless the parser is
declared ``may_be_empty``, bounds the fragment's nesting and strings, strips control characters,
and checks it against the state schema: per output for ``fabline parse``, or once per device over
the merged fragments (:func:`checked_merge`) in a collection and a re-parse.

Example:
    >>> from fabline.platforms.base import ParseContext, text_parser
    >>> @text_parser("one 'mtu N' line")
    ... def parse_mtu(text: str, ctx: ParseContext) -> StateBody:
    ...     return {"interfaces": {"eth0": {"mtu": int(text.split()[1])}}} if text.startswith("mtu") else {}
    >>> run_parser(parse_mtu, "mtu 9000\\n", ParseContext("linux", "x"))
    {'interfaces': {'eth0': {'mtu': 9000}}}
    >>> run_parser(parse_mtu, "speed 400G\\n", ParseContext("linux", "x"))
    Traceback (most recent call last):
    ...
    fabline.errors.ParseError: linux: 'x': expected one 'mtu N' line (nothing readable in it (truncated, or another command's output?))
    >>> run_parser(parse_mtu, "mtu 99999999\\n", ParseContext("linux", "x"))
    Traceback (most recent call last):
    ...
    fabline.errors.ParseError: linux: 'x': expected values valid in the state schema (interfaces.eth0.mtu: 99999999 is greater than the maximum of 1048576)
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from fabline.platforms.base import Fragment, ParseContext, Parser, merge_fragments
from fabline.platforms.toolkit import ValueProblem, clip
from fabline.state import schema_problem

#: The deepest a fragment nests (interfaces.IF.ecn.Q.field is 5; QoS maps under qos.maps are 5).
MAX_FRAGMENT_DEPTH = 12
#: The longest string a fragment may hold (a description, a build string, an NCCL value).
MAX_FIELD_CHARS = 4096

#: Control characters (C0 but TAB, DEL, C1) raw in text, or escaped in JSON. Device strings go to
#: consoles and reports: an escape sequence in an LLDP system name must not reach a terminal.
_CONTROL_RAW = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_CONTROL_ESCAPED = re.compile(r"\\u00[01][0-9a-fA-F]|\\u00[89][0-9a-fA-F]|\\u007[fF]|\\[nrbf]")
_CONTROL_IN_STRING = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]+")
#: Every byte :data:`_CONTROL_RAW` does not match in ASCII text: deleting them leaves the control bytes.
_NOT_CONTROL_BYTES = bytes(b for b in range(256) if not ((b < 32 and b not in (9, 10, 13)) or b == 127))


def has_control(output: str) -> bool:
    """Whether an output holds a raw control character (C0 but TAB, LF, CR; DEL; C1).

    Every output of a collection is scanned: ASCII text (nearly all) through ``bytes.translate``
    deleting every other byte (one C loop that writes only what it keeps, about 14 times faster
    than the regex on a 400 KB NX-OS output).

    Example:
        >>> has_control("mtu 9216\\r\\n\\tok"), has_control("spine\\x1b[2J"), has_control("caf\\u00e9 \\x9b1m")
        (False, True, True)
    """
    if output.isascii():
        return bool(output.encode("ascii").translate(None, _NOT_CONTROL_BYTES))
    return _CONTROL_RAW.search(output) is not None


#: Why an empty fragment is a ParseError (the dispatcher's words for every parser).
EMPTY_DETAIL = "nothing readable in it (truncated, or another command's output?)"


def run_parser(parser: Parser, output: str, ctx: ParseContext, *, validate: bool = True) -> Fragment:
    """Run one parser with what every parser needs around it: bounds, validation, clean strings.

    The parser reads the output (a declared parser gets it checked or loaded: ``check_text`` and
    ``load_json`` bound its size and JSON nesting); here a value outside its domain
    (:class:`~fabline.platforms.toolkit.ValueProblem`) or nesting that exhausts the stack becomes
    the command's ``ParseError``; an empty result is one too unless the parser is declared ``may_be_empty``; the
    fragment's nesting and strings are bounded and control characters stripped from its strings;
    with ``validate`` the fragment must be valid state (types and ranges of the state JSON Schema).

    A device's collection passes ``validate=False`` and checks the device's merged fragments once
    (:func:`checked_merge`): an interface that several commands fill is checked once, not once per
    command.

    Raises:
        ParseError: The output is not this command's, or holds values no device has.
    """
    try:
        fragment = parser(output, ctx)
    except ValueProblem as exc:
        raise ctx.fail("values a device can hold", str(exc)) from None
    except (ValueError, OverflowError) as exc:  # int() of a 5,000-digit run, a float overflow
        raise ctx.fail(
            "values a device can hold", clip(str(exc).splitlines()[0] if str(exc) else "")
        ) from None
    except RecursionError:
        raise ctx.fail("output of bounded nesting", "nested too deep") from None
    if not isinstance(fragment, dict) or not _has_value(fragment):
        if getattr(parser, "may_be_empty", False) and isinstance(fragment, dict):
            return fragment
        raise ctx.fail(getattr(parser, "expected", None) or "output holding data", EMPTY_DETAIL)
    dirty = has_control(output) or ("\\" in output and _CONTROL_ESCAPED.search(output) is not None)
    # Strings and nesting taken from a text output are bounded by its line cap and the parser's
    # own structure; JSON can carry anything, so its fragments (and dirty ones) are walked.
    problem = _bound_fragment(fragment, dirty) if dirty or ctx.notes.get("json") else None
    if problem is None and validate:
        problem = schema_problem(fragment)
    if problem:
        raise ctx.fail(SCHEMA_EXPECTED, problem)
    return fragment


#: What a fragment the state schema refuses was expected to hold.
SCHEMA_EXPECTED = "values valid in the state schema"


def checked_merge(fragments: Sequence[Mapping[str, Any]]) -> tuple[Fragment, dict[int, str]]:
    """Merge one device's fragments (parsed with ``validate=False``), checking the state schema once.

    The merged body is checked as a whole: valid (the usual case) means every value that reaches
    the state is valid, at the cost of one pass over it. Invalid means some fragment is (merging
    only adds keys and replaces values, so it cannot make valid fragments invalid): each fragment
    is then checked alone, and the invalid ones are left out of the merge. A value a later
    fragment replaced is not checked: it reaches nothing.

    Returns:
        The merged body and, by position in ``fragments``, the problem of each fragment left out.

    Example:
        >>> merged, refused = checked_merge([{"interfaces": {"e1": {"mtu": 9000}}},
        ...                                  {"interfaces": {"e1": {"fec": "rs", "mtu": "big"}}}])
        >>> merged, refused
        ({'interfaces': {'e1': {'mtu': 9000}}}, {1: "interfaces.e1.mtu: 'big' is not of type 'integer'"})
    """
    merged = merge_fragments(fragments)
    if schema_problem(merged) is None:
        return merged, {}
    refused = {i: problem for i, f in enumerate(fragments) if (problem := schema_problem(f)) is not None}
    if not refused:  # cannot happen (see above); never write what the schema refuses
        refused = dict.fromkeys(range(len(fragments)), "the merged state is not valid state")
    return merge_fragments(f for i, f in enumerate(fragments) if i not in refused), refused


def _has_value(node: Any) -> bool:
    """Whether a fragment holds any value that is not an empty object (``[]`` is a value: none).

    Example:
        >>> _has_value({"interfaces": {"e1": {}}}), _has_value({"interfaces": {"e1": {"lldp": {}, "mtu": 1}}})
        (False, True)
    """
    if type(node) is not dict:
        return True
    # A loop, not any(generator): most fragments answer at their first leaf, and every output of
    # a collection is tested.
    for value in node.values():  # noqa: SIM110
        if type(value) is not dict or _has_value(value):
            return True
    return False


def _bound_fragment(fragment: Fragment, clean: bool) -> str | None:
    """Check nesting depth and string length of a fragment; strip control characters if ``clean``.

    Returns the first problem, naming its path, or None.
    """
    stack: list[tuple[Any, str, int]] = [(fragment, "", 0)]
    while stack:
        node, path, depth = stack.pop()
        if depth > MAX_FRAGMENT_DEPTH:
            return f"{path} nests deeper than {MAX_FRAGMENT_DEPTH} levels"
        items = node.items() if type(node) is dict else enumerate(node)
        for key, value in items:
            kind = type(value)
            if kind is str:
                if len(value) > MAX_FIELD_CHARS:
                    return (
                        f"{path}.{key} is {len(value):,} characters long (the limit is {MAX_FIELD_CHARS:,})"
                    )
                if clean and _CONTROL_IN_STRING.search(value):
                    node[key] = _CONTROL_IN_STRING.sub(" ", value).strip()
            elif kind is dict or kind is list:
                stack.append((value, f"{path}.{key}" if path else str(key), depth + 1))
        if clean and type(node) is dict:
            for key in [k for k in node if type(k) is str and _CONTROL_IN_STRING.search(k)]:
                node[_CONTROL_IN_STRING.sub(" ", key).strip()] = node.pop(key)
    return None
