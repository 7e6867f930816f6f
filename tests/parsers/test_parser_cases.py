"""Data-driven parser tests: every case file pairs a real output with its expected fragment.

A case is one YAML file in ``tests/parsers/cases/<platform>/``::

    sample: sonic/show_version-cmdref-msn2700.txt   # under tests/samples (real output)
    # or  local: sonic/breakout-ports.txt            # under tests/parsers/local (own edge cases)
    command: show version                           # the command line as run on the device
    expected: {facts: {os_version: ...}}            # the exact fragment the parser must return
    # or  error: "expected a ..."                   # a ParseError whose message contains this

Adding a case is adding a file (ntc-templates style). ``test_every_sample_is_accounted_for``
makes sure no real sample is silently ignored.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from fabline.errors import ParseError
from fabline.platforms import parse_output
from tests.conftest import sample_files, samples_dir

HERE = Path(__file__).parent
CASES = sorted((HERE / "cases").glob("*/*.yml"))


def _load_case(path: Path) -> dict[str, Any]:
    case = yaml.safe_load(path.read_text("utf-8"))
    assert isinstance(case, dict), f"{path}: a case is a mapping"
    assert "command" in case, f"{path}: missing 'command'"
    assert ("expected" in case) != ("error" in case), f"{path}: give exactly one of expected/error"
    assert ("sample" in case) != ("local" in case), f"{path}: give exactly one of sample/local"
    return case


def _output_of(case: dict[str, Any]) -> str:
    path = samples_dir() / case["sample"] if "sample" in case else HERE / "local" / case["local"]
    assert path.is_file(), f"sample file missing: {path}"
    return path.read_text("utf-8", errors="replace")


@pytest.mark.parametrize("case_path", CASES, ids=[f"{p.parent.name}/{p.stem}" for p in CASES])
def test_parser_case(case_path: Path) -> None:
    case = _load_case(case_path)
    platform = case_path.parent.name
    output = _output_of(case)
    if "error" in case:
        with pytest.raises(ParseError) as info:
            parse_output(platform, case["command"], output)
        assert case["error"] in str(info.value)
        return
    got = parse_output(platform, case["command"], output)
    assert got == case["expected"]


def test_every_sample_is_accounted_for() -> None:
    """Each real sample is a parser case or listed in uncovered/<platform>.yml with a reason."""
    used = {_load_case(p).get("sample") for p in CASES}
    uncovered: dict[str, str] = {}
    for listing in sorted((HERE / "uncovered").glob("*.yml")):
        uncovered.update(yaml.safe_load(listing.read_text("utf-8")) or {})
    for name, reason in uncovered.items():
        assert isinstance(reason, str) and reason.strip(), f"uncovered sample {name} needs a reason"
    stale = sorted(set(uncovered) - set(sample_files()))
    assert not stale, f"uncovered/*.yml names samples that do not exist: {stale}"
    missing = [rel for rel in sample_files() if rel not in used and rel not in uncovered]
    assert not missing, f"samples with neither a parser case nor a reason: {missing}"


def test_every_expected_fragment_is_valid_state() -> None:
    """Every expected fragment, of every platform, is valid state schema v1."""
    import jsonschema

    from fabline.state import schema_document

    validator = jsonschema.Draft202012Validator(schema_document())
    problems = []
    for path in CASES:
        case = _load_case(path)
        if "expected" in case:
            doc = {"schema": "fabline.state/1", "name": "x", **case["expected"]}
            problems += [
                f"{path.name}: {list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(doc)
            ]
    assert not problems, problems[:5]


def test_every_command_of_every_platform_has_a_case() -> None:
    """The allow-list is tested whole: each command template has at least one case."""
    from fabline.platforms import PLATFORMS

    for platform_id, platform in PLATFORMS.items():
        used = [_load_case(p)["command"] for p in CASES if p.parent.name == platform_id]
        missing = [c.template for c in platform.commands if not any(c.pattern().match(u) for u in used)]
        assert not missing, f"{platform_id}: commands without a parser case: {missing}"


def test_every_parser_declares_its_input() -> None:
    """Every allow-listed command's parser is declared (``text_parser`` / ``json_parser``, docs/platforms.md).

    The dispatcher then owns what every parser shares: the text check or the JSON load, and the
    empty-result ParseError; a parser that calls ``check_text``/``load_json`` on its own output
    repeats it.
    """
    from fabline.platforms import PLATFORMS
    from fabline.platforms.base import DeclaredParser

    undeclared = sorted(
        f"{platform}: {cmd.template} ({getattr(cmd.parser, '__name__', cmd.parser)})"
        for platform, spec in PLATFORMS.items()
        for cmd in spec.commands
        if not isinstance(cmd.parser, DeclaredParser)
    )
    assert undeclared == []
