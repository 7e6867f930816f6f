"""The generated scan of a compiled rule only saves calls: it passes exactly what ``evaluate`` passes.

:func:`fabline.engine.rules.compile_scan` runs the fast path of ``RuleProgram.evaluate`` over all
of a device's interfaces as generated code; a body it passes is never evaluated. These tests hold
it to ``evaluate`` on every rule of the default baseline, over port bodies with hostile values.
The engine runs the rules of one interface selector in one pass (:func:`fabline.engine.rules.compile_scans`):
it leaves each rule exactly the positions that rule's own scan leaves.
"""

from __future__ import annotations

import copy
import random
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from fabline.baseline import default_baseline_path, load_baseline
from fabline.checks.registry import load_checks
from fabline.engine import rules
from fabline.engine.rules import RuleProgram, Unreadable
from fabline.state import Invalid
from fabline.synthetic import as_collected, lab_fabric, states
from tests.helpers import FakeDevice, by_id, run

BASELINE = load_baseline([default_baseline_path()])
PROGRAMS = [RuleProgram(r, BASELINE.vars, lambda _: set()) for r in BASELINE.rules if r.expect is not None]
PORTS: list[dict[str, Any]] = [
    body for doc in states(lab_fabric()) for body in (doc.get("interfaces") or {}).values()
]

HOSTILE: list[Any] = [
    None, True, False, 0, 3, 9100, 9100.0, 1e308, "", "rs", "dscp", [], [3], [3, 4], {}, {"3": 0}, {"26": 3},
    Invalid("interfaces.x.mtu", "bad"), {"3": {"enabled": True}}, {"rx": [1.0]},
]  # fmt: skip


def _device(program: RuleProgram) -> FakeDevice:
    role = next(iter(program.roles)) if program.roles else "leaf"
    platform = (
        next(iter(program.platforms)) if program.platforms else ("linux" if role == "host" else "sonic")
    )
    return FakeDevice("dev1", platform, role)


def _same_as_evaluate(program: RuleProgram, bodies: list[Any]) -> None:
    compiled = program.compiled(_device(program))
    left = set(program.scan(compiled)(bodies, compiled.predicates))
    for i, body in enumerate(bodies):
        verdict = program.evaluate("dev1", f"p{i}", body, compiled, None)
        if i not in left:
            assert verdict is None, (program.id, body, verdict)


def _mutations(rng: random.Random, body: dict[str, Any]) -> list[Any]:
    out: list[Any] = [body, Unreadable("not in the state"), {}]
    paths = [(k,) for k in body] + [(k, j) for k, v in body.items() if isinstance(v, dict) for j in v]
    for _ in range(30):
        bad = copy.deepcopy(body)
        path = rng.choice(paths) if paths else ("mtu",)
        node = bad
        for part in path[:-1]:
            node = node[part]
        if rng.random() < 0.2:
            node.pop(path[-1], None)
        else:
            node[path[-1]] = rng.choice(HOSTILE)
        out.append(bad)
    return out


def test_every_baseline_rule_on_hostile_port_bodies() -> None:
    rng = random.Random(14)
    assert len(PROGRAMS) > 20
    for program in PROGRAMS:
        bodies = [m for body in PORTS[:12] for m in _mutations(rng, body)]
        _same_as_evaluate(program, bodies)


def test_a_valid_port_is_passed_by_the_scan() -> None:
    """On clean ports the scan decides (else it would save nothing)."""
    passed = 0
    for program in PROGRAMS:
        compiled = program.compiled(_device(program))
        left = program.scan(compiled)(PORTS, compiled.predicates)
        passed += len(PORTS) - len(left)
    assert passed > len(PROGRAMS) * len(PORTS) // 4


def test_alternative_counters_are_decided_by_the_scan() -> None:
    """``on_missing: skip`` expectations (lossless-drops: the drop counters each platform has) pass
    in the scan when another one answers; only a port with none of them goes to ``evaluate``.
    """
    (program,) = [p for p in PROGRAMS if p.id == "lossless-drops"]
    compiled = program.compiled(_device(program))
    paths = [e.parts for e in compiled.exps]
    ports = [
        body for doc in states(lab_fabric()) for body in (as_collected(doc).get("interfaces") or {}).values()
    ]
    ports += [{**ports[0], "counters": {}}, {"counters": {"roce_rx_discards": 5, "pg_dropped": {"3": 0}}}]
    answered = [
        i for i, b in enumerate(ports) if any(rules._walk(b, parts) is not rules._MISSING for parts in paths)
    ]
    assert 0 < len(answered) < len(ports)
    left = program.scan(compiled)(ports, compiled.predicates)
    assert set(left) == (set(range(len(ports))) - set(answered)) | {len(ports) - 1}
    assert all(program.evaluate("dev1", "p", ports[i], compiled, None) is not None for i in left)
    _same_as_evaluate(program, ports)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 10_000) | st.floats(allow_nan=True) | st.sampled_from(["rs", "3", "dscp", ""]),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.sampled_from(["0", "3", "26", "enabled", "mtu", "x"]), c, max_size=3),
    max_leaves=8,
)  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_random_values_on_random_rules(data: st.DataObject) -> None:
    program = data.draw(st.sampled_from(PROGRAMS))
    body = copy.deepcopy(data.draw(st.sampled_from(PORTS)))
    _plant_random_values(data, program, body)
    _same_as_evaluate(program, [body])


def _plant_random_values(data: st.DataObject, program: RuleProgram, body: dict[str, Any]) -> None:
    """Set each of the program's expected paths in ``body`` to a random JSON value, or leave it, at random."""
    for exp in program.compiled(_device(program)).checks:
        if data.draw(st.booleans()):
            node: Any = body
            for part in exp.parts[:-1]:
                if not isinstance(node, dict):
                    break
                node = node.setdefault(part, {})
            else:
                if isinstance(node, dict):
                    node[exp.parts[-1]] = data.draw(json_values)


def test_results_are_those_of_evaluate_alone(tmp_path: Path, monkeypatch: Any) -> None:
    """The engine's results with the scan and with a scan that leaves every body to ``evaluate``."""
    docs = [as_collected(copy.deepcopy(d)) for d in states(lab_fabric())]  # with the counters of today
    rng = random.Random(7)
    for doc in docs:
        for body in (doc.get("interfaces") or {}).values():
            if rng.random() < 0.5:
                key = rng.choice(sorted(body))
                body[key] = rng.choice(HOSTILE)
    devices = [FakeDevice(d["name"], d["platform"], d["role"]) for d in docs]
    baseline = default_baseline_path().read_text("utf-8")

    def outcome(where: Path) -> dict[str, tuple[Any, ...]]:
        out = by_id(run(where, baseline, devices, docs, checks=load_checks(None)))
        return {k: (r.status, r.message, r.expected, r.actual) for k, r in out.items()}

    fast = outcome(tmp_path / "fast")
    monkeypatch.setattr(
        rules,
        "compile_scans",
        lambda shapes, inlines=None: (
            lambda bodies, predicates: tuple(list(range(len(bodies))) for _ in shapes)
        ),
    )
    slow = outcome(tmp_path / "slow")
    assert fast == slow
    assert sum(1 for v in fast.values() if v[0].value != "pass") > 20


EDGE_RULES = """
rules:
  - id: fec-present
    description: edge case
    severity: minor
    select: {interfaces: {}}
    expect: [{path: fec, present: true}]
  - id: fec-not-off
    description: edge case
    severity: minor
    select: {interfaces: {}}
    expect: [{path: fec, not_equals: "off"}]
  - id: alias-any
    description: edge case
    severity: minor
    select: {interfaces: {}}
    expect: [{path: nic.alias, regex: ".*"}]
  - id: flags-absent
    description: edge case
    severity: minor
    select: {interfaces: {}}
    when: [{path: optics.flags, absent: true}]
    expect: [{path: lldp.device, present: true}]
  - id: first-lane
    description: edge case
    severity: minor
    select: {interfaces: {}}
    expect: [{path: optics.rx.0, min: -10}]
"""


def test_edge_operators_on_invalid_lists_and_absent_paths(tmp_path: Path) -> None:
    path = tmp_path / "b.yml"
    path.write_text(EDGE_RULES, "utf-8")
    baseline = load_baseline([path])
    bad = Invalid("interfaces.e1.fec", "not a string")
    bodies: list[Any] = [
        {"fec": "rs", "nic": {"alias": "a"}, "lldp": {"device": "x"}, "optics": {"rx": [-1.0]}},
        {"fec": bad, "nic": {"alias": bad}, "lldp": {"device": bad}, "optics": {"rx": [bad], "flags": []}},
        {"fec": "off", "nic": "a string", "lldp": [], "optics": {"rx": "x"}},
        {"nic": {}, "optics": {"flags": bad}},
        Unreadable("gone"),
    ]
    for rule in baseline.rules:
        _same_as_evaluate(RuleProgram(rule, {}, lambda _: set()), bodies)
    programs = {r.id: RuleProgram(r, {}, lambda _: set()) for r in baseline.rules}
    compiled = programs["fec-present"].compiled(FakeDevice("dev1"))
    # The Invalid fec, the absent fec and the unreadable port are left to evaluate.
    assert programs["fec-present"].scan(compiled)(bodies, compiled.predicates) == [1, 3, 4]


def _groups() -> list[list[RuleProgram]]:
    """The default baseline's per-interface rules by selector and by the kind of device they take."""
    out: dict[tuple[object, ...], list[RuleProgram]] = {}
    for program in PROGRAMS:
        if program.per_interface:
            out.setdefault((program.selector_key, _device(program).role), []).append(program)
    return list(out.values())


def _same_as_each_rule(group: list[RuleProgram], bodies: list[Any]) -> None:
    compiled = tuple(p.compiled(_device(p)) for p in group)
    scan, predicates = rules.ScanCache().get(compiled)
    together = scan(bodies, predicates)
    alone = tuple(p.scan(c)(bodies, c.predicates) for p, c in zip(group, compiled, strict=True))
    assert together == alone, [p.id for p in group]


def test_one_scan_per_selector_leaves_each_rule_what_its_own_scan_leaves() -> None:
    rng = random.Random(15)
    groups = _groups()
    assert len(groups) >= 3 and max(map(len, groups)) >= 10
    for group in groups:
        bodies = [m for body in PORTS[:12] for m in _mutations(rng, body)]
        _same_as_each_rule(group, bodies)
        _same_as_each_rule(group, PORTS)
        _same_as_each_rule(group[::-1], bodies)  # another order, another scan


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_one_scan_per_selector_on_random_values(data: st.DataObject) -> None:
    group = data.draw(st.sampled_from(_groups()))
    body = copy.deepcopy(data.draw(st.sampled_from(PORTS)))
    for program in group:
        _plant_random_values(data, program, body)
    _same_as_each_rule(group, [body, {}, Unreadable("gone")])


def test_one_scan_per_selector_on_edge_rules(tmp_path: Path) -> None:
    """Paths through lists and strings, absent preconditions, Invalid values: every edge rule in one scan."""
    path = tmp_path / "b.yml"
    path.write_text(EDGE_RULES, "utf-8")
    programs = [RuleProgram(r, {}, lambda _: set()) for r in load_baseline([path]).rules]
    bad = Invalid("interfaces.e1.fec", "not a string")
    bodies: list[Any] = [
        {"fec": "rs", "nic": {"alias": "a"}, "lldp": {"device": "x"}, "optics": {"rx": [-1.0]}},
        {"fec": bad, "nic": {"alias": bad}, "lldp": {"device": bad}, "optics": {"rx": [bad], "flags": []}},
        {"fec": "off", "nic": "a string", "lldp": [], "optics": {"rx": "x"}},
        {"nic": {}, "optics": {"flags": bad}},
        {"optics": bad, "nic": bad, "lldp": bad},
        Unreadable("gone"),
    ]
    compiled = tuple(p.compiled(FakeDevice("dev1")) for p in programs)
    scan, predicates = rules.ScanCache().get(compiled)
    assert scan(bodies, predicates) == tuple(
        p.scan(c)(bodies, c.predicates) for p, c in zip(programs, compiled, strict=True)
    )


def test_in_line_tests_only_save_predicate_calls() -> None:
    """Where an operator's in-line test holds, its predicate passes the value too; the group scan
    with the in-line tests leaves every rule the positions it leaves without them.
    """
    from fabline.operators import compile_operators, inline_test

    specs: list[dict[str, Any]] = [
        {"equals": 9100}, {"equals": "dscp"}, {"equals": True}, {"equals": 1.5}, {"min": 100},
        {"max": 0}, {"range": [1, 5]}, {"exactly": []}, {"exactly": [3]}, {"exactly": [3, "a"]},
        {"contains": [3]}, {"contains": [True]}, {"contains": ["x"]},
        {"each": {"min": -10, "max": 4}}, {"each": {"min": -9.5}}, {"each": {"max": 2}},
    ]  # fmt: skip
    values: list[Any] = [*HOSTILE, 9100.0, 1.5, 100, 100.5, 5, 0.0, -1, float("nan"), float("inf"),
                         [True], [3.0], [3, "a"], ["a", 3], [1], "x", ["x"], [], [-1.2, 0.4, -3],
                         [-11, 0], [0, 5], [float("nan"), 1], [1, None], [-9.5, 2]]  # fmt: skip
    for spec in specs:
        predicate = compile_operators(spec)
        inline = inline_test(predicate)
        assert inline is not None, spec
        test, consts = inline
        namespace = {f"c{j}": c for j, c in enumerate(consts)}
        source = test.format("v", *namespace)
        held = 0
        for v in values:
            if eval(source, {**namespace, "v": v}):
                held += 1
                assert predicate(v) is None, (spec, v)
        assert held, spec
    rng = random.Random(16)
    for group in _groups():
        compiled = tuple(p.compiled(_device(p)) for p in group)
        shapes = tuple(c.shape for c in compiled)
        plain = rules.compile_scans(shapes)
        scan, args = rules.ScanCache().get(compiled)
        bodies = [m for body in PORTS[:12] for m in _mutations(rng, body)] + PORTS
        assert scan(bodies, args) == plain(bodies, tuple(p for c in compiled for p in c.predicates))


def test_interface_names_matched_once_select_as_the_patterns_do(tmp_path: Path) -> None:
    path = tmp_path / "b.yml"
    path.write_text(
        "rules:\n  - id: r\n    description: d\n    severity: minor\n    select: {interfaces: {name: 'Ethernet[0-9]+', "
        "exclude: 'Ethernet1[0-9]'}}\n    expect: [{path: mtu, min: 1}]\n",
        "utf-8",
    )
    (rule,) = load_baseline([path]).rules
    program = RuleProgram(rule, {}, lambda _: set())
    names = ["Ethernet0", "Ethernet12", "Ethernet120", "eth0", "Ethernet1", "Ethernet19", "Ethernet0s1"]
    ordered = [(n, {"mtu": 9000}) for n in names]
    for _ in range(2):  # the second time from the remembered matches
        chosen = [n for n, _ in program.select_interfaces(FakeDevice("d1"), ordered, {})]
        assert chosen == ["Ethernet0", "Ethernet120", "Ethernet1"]


VAR_RULES = """
vars: {mtu_min: 9000}
rules:
  - id: mtu-floor
    description: the port MTU is at least the device's floor
    severity: major
    select: {interfaces: {}}
    expect: [{path: mtu, min: "{{ mtu_min }}"}]
"""


def test_compiled_rules_are_remembered_by_the_variables_they_read(tmp_path: Path) -> None:
    """Devices of one kind share compiled rules only when the variables the rules read are equal:
    each is judged by its own values, and a compile error names its own device."""
    devices = [
        FakeDevice("leaf1"),  # the baseline's 9000
        FakeDevice("leaf2", vars={"mtu_min": 9000}),
        FakeDevice("leaf3", vars={"mtu_min": 9200}),
        FakeDevice("leaf4", vars={"mtu_min": 9000, "unrelated": 1}),
        FakeDevice("leaf5", vars={"mtu_min": "not a number"}),
        FakeDevice("leaf6", vars={"mtu_min": "not a number"}),
        FakeDevice("leaf7"),
    ]
    docs = [
        {"schema": "fabline.state/1", "name": d.name, "platform": "sonic", "role": "leaf", "status": "ok",
         "interfaces": {"Ethernet0": {"mtu": 9100}}}
        for d in devices
    ]  # fmt: skip
    out = run(tmp_path, VAR_RULES, devices, docs).results
    got = {r.device: (r.status.value, r.message) for r in out if r.check == "mtu-floor"}
    assert {d: v[0] for d, v in got.items()} == {
        "leaf1": "pass", "leaf2": "pass", "leaf3": "fail", "leaf4": "pass",
        "leaf5": "error", "leaf6": "error", "leaf7": "pass",
    }  # fmt: skip
    assert "leaf5" in got["leaf5"][1] and "leaf6" not in got["leaf5"][1]
    assert "leaf6" in got["leaf6"][1] and "leaf5" not in got["leaf6"][1]
