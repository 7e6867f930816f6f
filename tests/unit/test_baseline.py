"""Loading and merging baselines: overlays by rule id, vars, waivers, and the shipped default."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabline.baseline import default_baseline_path, load_baseline, packaged_workspace
from fabline.errors import ConfigError
from tests.conftest import REPO_ROOT
from tests.helpers import write_yaml

BASE = """
vars: {roce_priority: 3, host_mtu: 9000}
rules:
  - id: a
    description: first
    severity: major
    expect: [{path: mtu, equals: 9000}]
  - id: b
    description: second
    severity: minor
    expect: [{path: fec, equals: rs}]
waivers:
  - {rule: a, reason: base waiver}
"""


def test_overlay_merges_by_rule_id_and_keeps_order(tmp_path: Path) -> None:
    base = write_yaml(tmp_path / "base.yml", BASE)
    site = write_yaml(
        tmp_path / "site.yml",
        """
        vars: {host_mtu: 4200}
        rules:
          - {id: b, severity: critical}
          - {id: a, enabled: false}
          - id: c
            description: third
            severity: info
            expect: [{path: trust, equals: dscp}]
        waivers:
          - {rule: c, reason: site waiver}
        """,
    )
    bl = load_baseline([base, site])
    assert [r.id for r in bl.rules] == ["a", "b", "c"]
    a, b, c = bl.rules
    assert not a.enabled and a.description == "first"
    assert b.severity == "critical" and b.description == "second"
    assert c.severity == "info"
    assert bl.vars == {"roce_priority": 3, "host_mtu": 4200}
    assert [(w.reason, src.name) for w, src in bl.waivers] == [
        ("base waiver", "base.yml"),
        ("site waiver", "site.yml"),
    ]
    assert bl.rule_source == {"a": site, "b": site, "c": site}


def test_overlay_can_replace_expectations(tmp_path: Path) -> None:
    base = write_yaml(tmp_path / "base.yml", BASE)
    site = write_yaml(tmp_path / "site.yml", "rules:\n  - {id: a, expect: [{path: mtu, min: 4000}]}\n")
    (a, _) = load_baseline([base, site]).rules
    assert a.expect is not None and a.expect[0].operators() == {"min": 4000}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "rules:\n  - {id: x, description: d, severity: major, expect: []}\n",
            "expect must list at least one",
        ),
        ("rules:\n  - {id: x, severity: major, expect: [{path: mtu, equals: 1}]}\n", "needs a description"),
        ("rules:\n  - {id: x, description: d, expect: [{path: mtu, equals: 1}]}\n", "needs a severity"),
        (
            "rules:\n  - {id: X Y, description: d, severity: major, expect: [{path: m, equals: 1}]}\n",
            "must be lower-case",
        ),
        (
            "rules:\n  - {id: x, description: d, severity: major, expect: [{path: m}]}\n",
            "expectation needs an operator",
        ),
        (
            "rules:\n  - {id: x, description: d, severity: major, expect: [{path: m, each: {bogus: 1}}]}\n",
            "each: unknown operator 'bogus'",
        ),
        (
            "rules:\n  - {id: x, description: d, severity: major, select: {interfaces: {name: '('}}, expect: [{path: m, equals: 1}]}\n",
            "invalid regex",
        ),
        (
            "rules:\n  - {id: x, description: d, severity: major, select: {roles: [router]}, expect: [{path: m, equals: 1}]}\n",
            "Input should be 'spine', 'leaf' or 'host'",
        ),
        (
            "rules:\n  - {id: x, description: d, severity: major, expect: [{path: m, range: [9, 1]}]}\n",
            "range low 9 is above high 1",
        ),
        (
            "rules:\n  - {id: x, description: d, severity: major, expect: [{path: m, equals: 1}]}\n  - {id: x, enabled: false}\n",
            "duplicate rule id 'x'",
        ),
        ("version: 2\n", "version: Input should be 1"),
    ],
)
def test_bad_rules_are_config_errors(tmp_path: Path, text: str, message: str) -> None:
    path = write_yaml(tmp_path / "b.yml", text)
    with pytest.raises(ConfigError) as info:
        load_baseline([path])
    assert message in str(info.value)
    assert str(info.value).startswith(str(path))


def test_empty_file_is_an_empty_baseline(tmp_path: Path) -> None:
    bl = load_baseline([write_yaml(tmp_path / "empty.yml", "")])
    assert bl.rules == [] and bl.waivers == []


def test_shipped_default_encodes_the_practice() -> None:
    bl = load_baseline([REPO_ROOT / "baseline" / "roce.yml"])
    v = bl.vars
    assert (v["roce_priority"], v["roce_dscp"], v["cnp_dscp"], v["cnp_priority"], v["roce_tos"]) == (
        3,
        26,
        48,
        6,
        106,
    )
    assert v["roce_tos"] == v["roce_dscp"] << 2 | 0b10  # DSCP << 2 | ECT(0)
    assert (v["host_mtu"], v["switch_mtu_min"]) == (9000, 9100)
    ids = {r.id for r in bl.rules}
    for wanted in ("host-mtu", "switch-mtu", "switch-trust-dscp", "switch-dscp-roce", "switch-pfc-priorities",
                   "switch-ecn-enabled", "switch-fec-rs", "switch-autoneg-off", "switch-pfc-watchdog",
                   "host-roce-tos", "optics-rx-power", "fec-uncorrectable"):  # fmt: skip
        assert wanted in ids
    for r in bl.rules:
        if r.expect is not None:
            assert len(r.description) > 40, f"{r.id}: the description should say why it matters"


def test_default_baseline_path_prefers_the_workspace(tmp_path: Path) -> None:
    assert default_baseline_path(tmp_path) == packaged_workspace() / "baseline" / "roce.yml"
    local = write_yaml(tmp_path / "baseline" / "roce.yml", "rules: []\n")
    assert default_baseline_path(tmp_path) == local


def _lines(node: object) -> object:
    """A loaded YAML tree with every line the loader remembered (LineDict / LineList)."""
    from fabline.userfiles import LineDict, LineList

    if isinstance(node, LineDict):
        return (node.line, node.key_lines, {k: _lines(v) for k, v in node.items()})
    if isinstance(node, LineList):
        return (node.line, node.item_lines, [_lines(v) for v in node])
    return node


@pytest.mark.parametrize(
    "text", ["rules:\n  - id: a\n    x: 1\n  - id: a\n    x: [1, 2\n", "a: 1\na: 2\n", "a:\n\t- 1\n"]
)
def test_yaml_loaded_by_libyaml_as_by_pyyaml(tmp_path: Path, text: str) -> None:
    """load_yaml reads with libyaml's parser: the same objects and lines; a bad file, the same message."""
    import yaml

    from fabline.userfiles import _LineLoader, load_yaml

    shipped = default_baseline_path()
    assert _lines(load_yaml(shipped)) == _lines(yaml.load(shipped.read_text(), Loader=_LineLoader))
    bad = tmp_path / "bad.yml"
    bad.write_text(text)
    with pytest.raises(ConfigError) as exc:
        load_yaml(bad)
    try:
        yaml.load(text, Loader=_LineLoader)
    except yaml.MarkedYAMLError as py:
        mark = py.problem_mark or py.context_mark
        assert mark is not None and f"bad.yml:{mark.line + 1}: malformed YAML: {py.problem}" in str(exc.value)
