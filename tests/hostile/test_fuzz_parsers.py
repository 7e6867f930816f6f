"""Fuzzing every parser with mutations of the real samples its cases use (issue 11, "Done when").

Each input is a real output from ``tests/samples`` (or a case's own ``tests/parsers/local`` file)
mutated by hypothesis: slices deleted, duplicated or cut, lines swapped, hostile tokens inserted
(range bombs, 5,000-digit numbers, deep brackets, NaN, escape sequences, NUL, HTML). The parser of
the sample's own command must either return a fragment that is valid state, or raise
``ParseError``; anything else (an exception that ``fabline parse`` reports as "internal error",
exit 1) or an input that takes seconds is a failure hypothesis shrinks and prints.

Profiles (``FABLINE_FUZZ=<name>``, default ``ci``):

- ``ci``: 250 inputs per platform (about a minute on two cores; runs in CI with the suite);
- ``long``: 20,000 inputs per platform, for a local hunt (``FABLINE_FUZZ=long pytest
  tests/hostile/test_fuzz_parsers.py``; about an hour). Hypothesis keeps what it found in
  ``.hypothesis/`` and replays it first next time.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabline.errors import ParseError
from fabline.platforms import PLATFORMS, parse_output
from fabline.state import schema_problem
from tests.conftest import samples_dir

CASES = Path(__file__).resolve().parents[1] / "parsers" / "cases"
LOCAL = Path(__file__).resolve().parents[1] / "parsers" / "local"
#: Per input. A bounded parser answers in milliseconds; a backtracking regex took 26 s.
BOUND_S = 3.0

settings.register_profile(
    "ci",
    max_examples=250,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.register_profile(
    "long",
    max_examples=20_000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
PROFILE = os.environ.get("FABLINE_FUZZ", "ci")

#: Tokens the probe found dangerous, inserted whole.
HOSTILE = (
    "9" * 5000,
    "0-4294967295",
    "3-1000000",
    "swp1-swp99999999",
    "[" * 3000,
    "{" * 3000,
    '{"a":' * 200,
    "-.",
    "NaN",
    "Infinity",
    "1e999",
    "-inf",
    "null",
    "true",
    "[]",
    "{}",
    '"',
    "\\",
    "\x1b[31m",
    "\x1b]0;title\x07",
    "\x00",
    "\r",
    "\t",
    "<img src=x onerror=alert(1)>",
    "| --- |",
    "N/A",
    "-",
    ",",
    ":",
    "|",
    "=",
    "  ",
    "\n",
    "1." * 3000,
    "Ethernet0",
    "% Invalid input",
)


def _cases() -> dict[str, list[tuple[str, str]]]:
    """(command, output) of every success case, per platform."""
    out: dict[str, list[tuple[str, str]]] = {}
    for path in sorted(CASES.glob("*/*.yml")):
        case = yaml.safe_load(path.read_text("utf-8"))
        if "expected" not in case:
            continue
        source = samples_dir() / case["sample"] if "sample" in case else LOCAL / case["local"]
        out.setdefault(path.parent.name, []).append(
            (case["command"], source.read_text("utf-8", errors="replace"))
        )
    return out


CASES_BY_PLATFORM = _cases()


#: Values of every JSON type (and the edges of each) for retyping one node of a JSON sample.
JSON_VALUES = st.one_of(
    st.sampled_from(
        (None, True, False, 0, -1, 10**20, 9.5, -0.0, "", "x", "9" * 50, [], {}, [[]], {"a": {}})
    ),
    st.text(max_size=8),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
)


def _json_paths(
    doc: Any, path: tuple[Any, ...] = (), out: list[tuple[Any, ...]] | None = None
) -> list[tuple[Any, ...]]:
    out = [] if out is None else out
    if len(out) > 5000 or len(path) > 50:
        return out
    out.append(path)
    if isinstance(doc, dict):
        for key, value in doc.items():
            _json_paths(value, (*path, key), out)
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            _json_paths(value, (*path, i), out)
    return out


def _retype(draw: st.DrawFn, text: str) -> str:
    """One node of a JSON output given a value of another type (the probe's 'wrong JSON types')."""
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
    try:
        doc = json.loads(text[start:]) if start >= 0 else None
    except (ValueError, RecursionError):  # not JSON (any more): nothing to retype
        return text
    if doc is None:
        return text
    path = draw(st.sampled_from(_json_paths(doc)))
    value = draw(JSON_VALUES)
    if not path:
        return json.dumps(value)
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return json.dumps(doc, indent=1)


@st.composite
def mutated(draw: st.DrawFn, platform: str) -> tuple[str, str]:
    """A real (command, output) of the platform, mutated one to four times."""
    command, text = draw(st.sampled_from(CASES_BY_PLATFORM[platform]))
    for _ in range(draw(st.integers(1, 4))):
        op = draw(
            st.sampled_from(("insert", "delete", "duplicate", "cut", "swap", "replace_digits", "retype"))
        )
        at = draw(st.integers(0, len(text)))
        if op == "retype":
            text = _retype(draw, text)
        elif op == "insert":
            token = draw(st.one_of(st.sampled_from(HOSTILE), st.text(max_size=12)))
            text = text[:at] + token + text[at:]
        elif op == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 400)) :]
        elif op == "duplicate":
            end = min(len(text), at + draw(st.integers(1, 2000)))
            text = text[:end] + text[at:end] * draw(st.integers(1, 3)) + text[end:]
        elif op == "cut":
            text = text[:at]
        elif op == "swap":
            lines = text.splitlines()
            if len(lines) > 1:
                i, j = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
                lines[i], lines[j] = lines[j], lines[i]
                text = "\n".join(lines)
        else:
            digits = next((k for k in range(at, min(len(text), at + 400)) if text[k].isdigit()), None)
            if digits is not None:
                text = (
                    text[:digits]
                    + draw(st.sampled_from(("9" * 5000, "4294967296", "-1", "9" * 25)))
                    + text[digits:]
                )
    return command, text


def _check(platform: str, command: str, text: str) -> None:
    start = time.perf_counter()
    try:
        fragment: Any = parse_output(platform, command, text)
    except ParseError:
        fragment = None
    elapsed = time.perf_counter() - start
    assert elapsed < BOUND_S, f"{platform} {command!r}: {elapsed:.1f} s on a {len(text):,}-character input"
    if fragment is not None:
        assert (isinstance(fragment, dict) and fragment) or getattr(
            PLATFORMS[platform].match(command)[0].parser, "may_be_empty", False
        ), fragment
        problem = schema_problem(fragment)
        assert problem is None, problem


#: Platforms the fuzzer still breaks (known defects, not yet fixed; each says where it stands).
KNOWN: dict[str, str] = {}


@pytest.mark.parametrize(
    "platform",
    [
        pytest.param(p, marks=pytest.mark.xfail(reason=KNOWN[p], strict=False)) if p in KNOWN else p
        for p in sorted(CASES_BY_PLATFORM)
    ],
)
def test_mutated_real_outputs_parse_or_fail_cleanly(platform: str) -> None:
    @settings(settings.get_profile(PROFILE))
    @given(mutated(platform))
    def run(example: tuple[str, str]) -> None:
        _check(platform, *example)

    run()
