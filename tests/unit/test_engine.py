"""The check engine on real state files: selectors, expectations, missing data, unreadable devices."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable
from pathlib import Path

import pytest

from fabline.checks import Check, DeviceContext, FabricContext
from fabline.checks.builtin import DeviceCollectionCheck
from fabline.results import (
    MAX_ITEMS,
    MAX_MESSAGE_CHARS,
    ExitCode,
    Result,
    Severity,
    Status,
    exit_code,
    more_items,
)
from tests.helpers import FakeDevice, by_id, run, state

MTU_RULE = """
rules:
  - id: switch-mtu
    description: jumbo frames
    severity: critical
    select: {roles: [leaf], interfaces: {name: "Ethernet[0-9]+"}}
    expect:
      - {path: mtu, min: 9100}
"""


def test_interface_rule_pass_and_fail(tmp_path: Path) -> None:
    docs = [
        state("leaf1", interfaces={"Ethernet0": {"mtu": 9100}, "Ethernet8": {"mtu": 1500}, "Loopback0": {}})
    ]
    out = run(tmp_path, MTU_RULE, [FakeDevice("leaf1")], docs)
    res = by_id(out)
    assert res["leaf1::switch-mtu::Ethernet0"].status is Status.PASS
    bad = res["leaf1::switch-mtu::Ethernet8"]
    assert bad.status is Status.FAIL
    assert bad.severity is Severity.CRITICAL
    assert bad.expected == {"mtu": {"min": 9100}}
    assert bad.actual == {"mtu": 1500}
    assert bad.message == "mtu is 1500, below min 9100"
    assert "leaf1::switch-mtu::Loopback0" not in res  # name selector
    assert exit_code(out.results) is ExitCode.FAILURES


def test_role_selector_and_natural_interface_order(tmp_path: Path) -> None:
    docs = [
        state("leaf1", interfaces={f"Ethernet{i}": {"mtu": 9216} for i in (16, 8, 0)}),
        state("gpu1", interfaces={"eth0": {"mtu": 9000}}),
    ]
    out = run(tmp_path, MTU_RULE, [FakeDevice("leaf1"), FakeDevice("gpu1", "linux", "host")], docs)
    assert [r.subject for r in out.results] == ["Ethernet0", "Ethernet8", "Ethernet16"]
    assert exit_code(out.results) is ExitCode.OK


def test_missing_field_is_error_never_pass(tmp_path: Path) -> None:
    docs = [state("leaf1", interfaces={"Ethernet0": {"speed_gbps": 400}})]
    out = run(tmp_path, MTU_RULE, [FakeDevice("leaf1")], docs)
    (r,) = out.results
    assert r.status is Status.ERROR
    assert r.message == "mtu not collected"
    assert exit_code(out.results) is ExitCode.ERRORS


@pytest.mark.parametrize(
    ("unsupported", "on_missing", "status", "message"),
    [
        # A path the device's source declares it cannot provide: skipped with the reason, never error.
        (
            {"interfaces.*.mtu": "no MTU getter"},
            "error",
            Status.SKIPPED,
            "not applicable: mtu not provided (no MTU getter)",
        ),
        (
            {"interfaces": "nothing per port"},
            "error",
            Status.SKIPPED,
            "not applicable: mtu not provided (nothing per port)",
        ),
        # Another path declared: the absence is still an error.
        ({"interfaces.*.ecn": "no ECN getter"}, "error", Status.ERROR, "mtu not collected"),
        # A rule that says absence is a failure keeps failing.
        ({"interfaces.*.mtu": "no MTU getter"}, "fail", Status.FAIL, "mtu not present"),
    ],
)
def test_unsupported_paths_are_skipped_not_errors(
    tmp_path: Path, unsupported: dict[str, str], on_missing: str, status: Status, message: str
) -> None:
    rule = MTU_RULE.replace("{path: mtu, min: 9100}", f"{{path: mtu, min: 9100, on_missing: {on_missing}}}")
    docs = [state("leaf1", interfaces={"Ethernet0": {"speed_gbps": 400}}, unsupported=unsupported)]
    (r,) = run(tmp_path, rule, [FakeDevice("leaf1", "napalm")], docs).results
    assert (r.status, r.message) == (status, message)


@pytest.mark.parametrize(
    ("on_missing", "status"), [("error", Status.ERROR), ("fail", Status.FAIL), ("skip", Status.SKIPPED)]
)
def test_on_missing(tmp_path: Path, on_missing: str, status: Status) -> None:
    rule = f"""
    rules:
      - id: nccl-tc
        description: NCCL traffic class
        severity: major
        expect:
          - {{path: host.nccl_env.NCCL_IB_TC, equals: "106", on_missing: {on_missing}}}
    """
    out = run(tmp_path, rule, [FakeDevice("gpu1", "linux", "host")], [state("gpu1", host={"nccl_env": {}})])
    assert [r.status for r in out.results] == [status]


def test_on_missing_skip_judges_the_paths_that_are_there(tmp_path: Path) -> None:
    """Several ``on_missing: skip`` alternatives (lossless-drops: one counter per platform): a port
    with some of them is judged on those (pass or fail), one with none of them is skipped."""
    rule = """
    rules:
      - id: drops
        description: lossless drops
        severity: major
        select: {roles: [leaf], interfaces: {name: "Ethernet[0-9]+"}}
        expect:
          - {path: counters.roce_tx_discards, max: 0, on_missing: skip}
          - {path: counters.roce_rx_discards, max: 0, on_missing: skip}
    """
    ifaces = {
        "Ethernet0": {"counters": {"roce_tx_discards": 0}},
        "Ethernet4": {"counters": {"roce_tx_discards": 5}},
        "Ethernet8": {"counters": {}},
    }
    out = run(tmp_path, rule, [FakeDevice("leaf1")], [state("leaf1", interfaces=ifaces)])
    got = {r.subject: (r.status, r.message) for r in out.results}
    assert got["Ethernet0"] == (Status.PASS, "")
    assert got["Ethernet4"][0] is Status.FAIL and "counters.roce_tx_discards" in got["Ethernet4"][1]
    assert got["Ethernet8"] == (
        Status.SKIPPED,
        "not applicable: counters.roce_tx_discards, counters.roce_rx_discards not present",
    )


def test_unreachable_device_gives_errors_for_every_applicable_rule(tmp_path: Path) -> None:
    docs = [
        state("leaf1", status="unreachable", errors=[{"kind": "connect", "message": "connection refused"}]),
        state("leaf2", interfaces={"Ethernet0": {"mtu": 9216}}),
    ]
    devices = [FakeDevice("leaf1"), FakeDevice("leaf2")]
    out = run(tmp_path, MTU_RULE, devices, docs, checks={"device-collection": DeviceCollectionCheck})
    res = by_id(out)
    assert res["leaf1::switch-mtu::-"].status is Status.ERROR
    assert res["leaf1::switch-mtu::-"].message == "device unreachable: connection refused"
    assert res["leaf1::device-collection::-"].status is Status.ERROR
    assert res["leaf2::switch-mtu::Ethernet0"].status is Status.PASS
    assert not any(r.status is Status.PASS for r in out.results if r.device == "leaf1")
    assert [d["status"] for d in out.devices] == ["unreachable", "ok"]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ('{"schema": "fabline.state/1", "name": "leaf1", "interf', "invalid JSON"),
        ("", "invalid JSON"),
        ('{"schema": "other/9", "name": "leaf1"}', "schema is 'other/9'"),
        ('{"schema": "fabline.state/1", "name": "leaf9"}', "name is 'leaf9', expected 'leaf1'"),
        ('{"schema": "fabline.state/1", "name": "leaf1", "interfaces": []}', "interfaces is not an object"),
        ('{"schema": "fabline.state/1", "name": "leaf1", "status": "weird"}', "status 'weird' is not one of"),
        ("[1, 2]", "not a JSON object"),
    ],
)
def test_corrupt_state_is_error_and_others_go_on(tmp_path: Path, raw: str, message: str) -> None:
    docs = [state("leaf2", interfaces={"Ethernet0": {"mtu": 9216}})]
    out = run(tmp_path, MTU_RULE, [FakeDevice("leaf1"), FakeDevice("leaf2")], docs, raw={"leaf1": raw})
    res = by_id(out)
    bad = res["leaf1::switch-mtu::-"]
    assert bad.status is Status.ERROR
    assert message in bad.message
    assert res["leaf2::switch-mtu::Ethernet0"].status is Status.PASS
    assert out.devices[0]["status"] == "error"


def test_missing_state_file_is_error(tmp_path: Path) -> None:
    out = run(tmp_path, MTU_RULE, [FakeDevice("leaf1")], [])
    (r,) = out.results
    assert r.status is Status.ERROR
    assert "no state collected" in r.message
    assert out.devices[0]["status"] == "missing"


def test_interfaces_not_collected_and_none_selected(tmp_path: Path) -> None:
    docs = [state("leaf1"), state("leaf2", interfaces={"Loopback0": {"mtu": 65535}})]
    out = run(tmp_path, MTU_RULE, [FakeDevice("leaf1"), FakeDevice("leaf2")], docs)
    r1, r2 = out.results
    assert (r1.status, r1.message) == (Status.ERROR, "interfaces not collected")
    assert r2.status is Status.SKIPPED


def test_templates_use_baseline_vars_overridden_by_inventory_vars(tmp_path: Path) -> None:
    rule = """
    vars: {roce_priority: 3, roce_dscp: 26}
    rules:
      - id: pfc
        description: pfc on the lossless priority only
        severity: critical
        select: {interfaces: {}}
        expect:
          - {path: pfc_priorities, exactly: ["{{ roce_priority }}"]}
          - path: dscp_to_priority
            maps_only: {keys: ["{{ roce_dscp }}"], to: "{{ roce_priority }}"}
    """
    docs = [
        state("leaf1", interfaces={"Ethernet0": {"pfc_priorities": [3], "dscp_to_priority": {"26": 3}}}),
        state("leaf2", interfaces={"Ethernet0": {"pfc_priorities": [3], "dscp_to_priority": {"26": 3}}}),
        state(
            "leaf3", interfaces={"Ethernet0": {"pfc_priorities": [4], "dscp_to_priority": {"26": 4, "24": 4}}}
        ),
    ]
    # leaf3's site uses priority 4 but INI-style string vars: "4" must still compare as 4.
    devices = [
        FakeDevice("leaf1"),
        FakeDevice("leaf2", vars={"roce_priority": 4}),
        FakeDevice("leaf3", vars={"roce_priority": "4", "roce_dscp": "26"}),
    ]
    res = by_id(run(tmp_path, rule, devices, docs))
    assert res["leaf1::pfc::Ethernet0"].status is Status.PASS
    bad = res["leaf2::pfc::Ethernet0"]
    assert bad.status is Status.FAIL
    assert "pfc_priorities is [3], missing [4] and unexpected [3]" in bad.message
    assert "26 -> 3 (expected 4)" in bad.message
    leaf3 = res["leaf3::pfc::Ethernet0"]
    assert leaf3.status is Status.FAIL
    assert leaf3.message == "dscp_to_priority 24 also maps to 4"


def test_undefined_template_variable_is_an_error_result(tmp_path: Path) -> None:
    rule = """
    rules:
      - id: tos
        description: tos
        severity: major
        expect: [{path: tos, equals: "{{ roce_tos }}"}]
    """
    (r,) = run(tmp_path, rule, [FakeDevice("gpu1")], [state("gpu1", tos=106)]).results
    assert r.status is Status.ERROR
    assert "'roce_tos' is undefined" in r.message


def test_when_precondition_skips(tmp_path: Path) -> None:
    rule = """
    rules:
      - id: fec
        description: rs fec at 100G and above
        severity: major
        select: {interfaces: {}}
        when: [{path: speed_gbps, min: 100}]
        expect: [{path: fec, equals: rs}]
    """
    docs = [
        state(
            "leaf1",
            interfaces={
                "Ethernet0": {"speed_gbps": 25, "fec": "none"},
                "Ethernet1": {"speed_gbps": 400, "fec": "fc"},
                "Ethernet2": {},
            },
        )
    ]
    res = by_id(run(tmp_path, rule, [FakeDevice("leaf1")], docs))
    assert res["leaf1::fec::Ethernet0"].status is Status.SKIPPED
    assert res["leaf1::fec::Ethernet1"].status is Status.FAIL
    assert res["leaf1::fec::Ethernet2"].status is Status.SKIPPED


def test_absent_and_present(tmp_path: Path) -> None:
    rule = """
    rules:
      - id: no-legacy
        description: no legacy pause
        severity: minor
        expect: [{path: legacy_pause, absent: true}, {path: facts.serial, present: true}]
    """
    docs = [state("a", facts={"serial": "x"}), state("b", legacy_pause=True, facts={})]
    res = by_id(run(tmp_path, rule, [FakeDevice("a"), FakeDevice("b")], docs))
    assert res["a::no-legacy::-"].status is Status.PASS
    assert (
        res["b::no-legacy::-"].message
        == "legacy_pause is present, expected absent; facts.serial is not present"
    )


def test_interface_selectors_facing_in_var_and_admin(tmp_path: Path) -> None:
    rule = """
    rules:
      - id: host-ports
        description: host-facing ports
        severity: major
        select: {roles: [leaf], interfaces: {facing: host, admin_up: true}}
        expect: [{path: mtu, min: 9100}]
      - id: rail-nics
        description: rail nics
        severity: major
        select: {roles: [host], interfaces: {in_var: rail_interfaces}}
        expect: [{path: mtu, equals: 9000}]
    """
    leaf_ifaces = {
        "Ethernet0": {"admin_up": True, "mtu": 9100, "lldp": {"device": "GPU1.example.net", "port": "eth0"}},
        "Ethernet8": {"admin_up": True, "mtu": 9100, "lldp": {"device": "spine1", "port": "Ethernet1"}},
        "Ethernet16": {"admin_up": False, "mtu": 1500, "lldp": {"device": "gpu1", "port": "eth1"}},
        "Ethernet24": {"admin_up": True, "mtu": 1500},
    }
    docs = [
        state("leaf1", interfaces=leaf_ifaces),
        state("gpu1", interfaces={"eth0": {"mtu": 9000}, "eno1": {"mtu": 1500}}),
    ]
    devices = [
        FakeDevice("leaf1"),
        FakeDevice("spine1", role="spine"),
        FakeDevice("gpu1", "linux", "host", vars={"rail_interfaces": ["eth0"]}),
    ]
    out = run(tmp_path, rule, devices, docs)
    subjects = [(r.check, r.device, r.subject) for r in out.results if r.device != "spine1"]
    assert subjects == [("host-ports", "leaf1", "Ethernet0"), ("rail-nics", "gpu1", "eth0")]


def test_device_groups_and_hosts_selectors(tmp_path: Path) -> None:
    rule = """
    rules:
      - id: wd
        description: watchdog
        severity: major
        select: {groups: [pod_b], hosts: "leaf"}
        expect: [{path: qos.pfc_watchdog.enabled, equals: true}]
    """
    docs = [state(n, qos={"pfc_watchdog": {"enabled": False}}) for n in ("leaf1", "leaf2", "spine1")]
    devices = [
        FakeDevice("leaf1", groups=("pod_a",)),
        FakeDevice("leaf2", groups=("pod_b",)),
        FakeDevice("spine1", groups=("pod_b",)),
    ]
    out = run(tmp_path, rule, devices, docs)
    assert [(r.device, r.status) for r in out.results] == [("leaf2", Status.FAIL)]


WAIVED = """
rules:
  - id: switch-mtu
    description: jumbo frames
    severity: critical
    select: {interfaces: {}}
    expect: [{path: mtu, min: 9100}]
waivers:
  - {rule: switch-mtu, devices: "leaf1", subject: "Ethernet8", reason: "RMA pending, CHG-1", expires: 2026-12-31}
  - {rule: "switch-*", devices: "leaf2", reason: "old waiver", expires: 2026-01-01}
"""


def test_waivers_apply_and_expire(tmp_path: Path) -> None:
    docs = [
        state("leaf1", interfaces={"Ethernet0": {"mtu": 1500}, "Ethernet8": {"mtu": 1500}}),
        state("leaf2", interfaces={"Ethernet0": {"mtu": 1500}}),
    ]
    out = run(tmp_path, WAIVED, [FakeDevice("leaf1"), FakeDevice("leaf2")], docs, today=dt.date(2026, 11, 29))
    res = by_id(out)
    assert res["leaf1::switch-mtu::Ethernet0"].status is Status.FAIL
    waived = res["leaf1::switch-mtu::Ethernet8"]
    assert waived.status is Status.WAIVED
    assert waived.waiver == "RMA pending, CHG-1"
    expired = res["leaf2::switch-mtu::Ethernet0"]
    assert expired.status is Status.FAIL
    assert "[waiver expired 2026-01-01]" in expired.message
    assert any("expired on 2026-01-01" in w for w in out.warnings)
    # After its expiry date the first waiver stops applying too.
    later = run(tmp_path / "later", WAIVED, [FakeDevice("leaf1")], docs[:1], today=dt.date(2027, 1, 1))
    assert by_id(later)["leaf1::switch-mtu::Ethernet8"].status is Status.FAIL


def test_waived_only_run_exits_zero(tmp_path: Path) -> None:
    docs = [state("leaf1", interfaces={"Ethernet8": {"mtu": 1500}})]
    out = run(tmp_path, WAIVED, [FakeDevice("leaf1")], docs, today=dt.date(2026, 11, 29))
    assert exit_code(out.results) is ExitCode.OK


class _PeerCountCheck(Check):
    """Counts LLDP peers over the fabric (test check)."""

    id = "peer-count"
    scope = "fabric"

    def collect(self, device: DeviceContext) -> int:
        return sum(1 for i in device.interfaces.values() if "lldp" in i)

    def check_fabric(self, fabric: FabricContext) -> Iterable[Result]:
        for name, n in sorted(fabric.collected.items()):
            yield self.passed(name, None, actual=n) if n else self.failed(name, None, "no LLDP peers")
        for name, dev in fabric.devices.items():
            if not dev.readable:
                yield self.error(name, None, f"device {dev.status}")


class _BrokenCheck(Check):
    """Always raises (test check)."""

    id = "broken"
    roles = ("leaf",)

    def check_device(self, device: DeviceContext) -> Iterable[Result]:
        raise KeyError("oops")


def test_python_checks_device_and_fabric_scope_and_exceptions(tmp_path: Path) -> None:
    docs = [
        state("leaf1", interfaces={"Ethernet0": {"lldp": {"device": "gpu1", "port": "eth0"}}}),
        state("leaf2", interfaces={}),
        state("gpu1", status="auth_failed"),
    ]
    devices = [FakeDevice("leaf1"), FakeDevice("leaf2"), FakeDevice("gpu1", "linux", "host")]
    checks = {"peer-count": _PeerCountCheck, "broken": _BrokenCheck}
    res = by_id(run(tmp_path, "rules: []", devices, docs, checks=checks))
    assert res["leaf1::peer-count::-"].status is Status.PASS
    assert res["leaf2::peer-count::-"].message == "no LLDP peers"
    assert res["gpu1::peer-count::-"].status is Status.ERROR
    broken = res["leaf1::broken::-"]
    assert (broken.status, broken.message) == (Status.ERROR, "check raised KeyError: 'oops'")
    assert "gpu1::broken::-" not in res  # roles = leaf only


def test_baseline_tunes_python_check_severity_and_disables(tmp_path: Path) -> None:
    tuned = """
    rules:
      - {id: device-collection, severity: critical}
      - {id: broken, enabled: false}
    """
    docs = [
        state("leaf1", status="partial", errors=[{"command": "show ecn", "kind": "parse", "message": "bad"}])
    ]
    checks = {"device-collection": DeviceCollectionCheck, "broken": _BrokenCheck}
    out = run(tmp_path, tuned, [FakeDevice("leaf1")], docs, checks=checks)
    (r,) = out.results
    assert (r.check, r.status, r.severity) == ("device-collection", Status.FAIL, Severity.CRITICAL)
    assert r.message == "collection partial: show ecn: bad"


@pytest.mark.parametrize(
    ("results", "fail_on", "code"),
    [
        ([], Severity.MINOR, ExitCode.OK),
        ([Status.PASS, Status.SKIPPED, Status.WAIVED], Severity.MINOR, ExitCode.OK),
        ([Status.PASS, Status.ERROR], Severity.MINOR, ExitCode.ERRORS),
        ([Status.ERROR, Status.FAIL], Severity.MINOR, ExitCode.FAILURES),
        ([Status.FAIL], Severity.CRITICAL, ExitCode.OK),
        ([Status.FAIL, Status.ERROR], Severity.CRITICAL, ExitCode.ERRORS),
    ],
)
def test_exit_codes(results: list[Status], fail_on: Severity, code: ExitCode) -> None:
    rs = [Result("x", "d", str(i), st, Severity.MAJOR) for i, st in enumerate(results)]
    assert exit_code(rs, fail_on) is code


class _PauseDeltaCheck(Check):
    """PFC pauses between two snapshots (test check)."""

    id = "pause-delta"

    def check_device(self, device: DeviceContext) -> Iterable[Result]:
        if device.previous is None:
            yield self.skipped(device.name, None, "no previous snapshot")
            return
        now = device.state["interfaces"]["Ethernet0"]["counters"]["pfc_rx_pause"]["3"]
        before = device.previous["interfaces"]["Ethernet0"]["counters"]["pfc_rx_pause"]["3"]
        yield self.passed(device.name, None, actual={"delta": now - before, "interval_s": device.interval_s})


def test_previous_snapshot_reaches_checks_with_interval(tmp_path: Path) -> None:
    from fabline.baseline import load_baseline
    from fabline.engine import Engine
    from fabline.snapshot import Snapshot
    from tests.helpers import write_snapshot, write_yaml

    def doc(n: int, at: str) -> dict[str, object]:
        return state(
            "leaf1", collected_at=at, interfaces={"Ethernet0": {"counters": {"pfc_rx_pause": {"3": n}}}}
        )

    before = write_snapshot(tmp_path / "before", [doc(100, "2026-11-28T02:00:00Z")])
    after = write_snapshot(tmp_path / "after", [doc(160, "2026-11-29T02:00:00Z")])
    missing = write_snapshot(tmp_path / "empty", [])
    engine = Engine(
        load_baseline([write_yaml(tmp_path / "b.yml", "rules: []")]),
        {"pause-delta": _PauseDeltaCheck},
        lambda p: set(),
    )
    (r,) = engine.run([FakeDevice("leaf1")], Snapshot(after), Snapshot(before)).results
    assert r.actual == {"delta": 60, "interval_s": 86400.0}
    (r,) = engine.run([FakeDevice("leaf1")], Snapshot(after), Snapshot(missing)).results
    assert r.status is Status.SKIPPED
    (r,) = engine.run([FakeDevice("leaf1")], Snapshot(after)).results
    assert r.status is Status.SKIPPED


def test_parallel_pass_gives_identical_results(tmp_path: Path) -> None:
    """Worker processes (forked) change nothing in the results, their order or the devices' rows."""
    from fabline import synthetic
    from tests.helpers import checked_inline_and_forked, write_snapshot

    fabric = synthetic.rail_fabric(512, radix=32)
    faults = [
        synthetic.Fault("gpu-00003", "mtu", 1500, "eth2"),
        synthetic.Fault("leaf-r1-000", "fec", "fc", "Ethernet8"),
    ]
    docs = list(synthetic.states(fabric, faults))
    docs[5] = {"schema": "fabline.state/1", "name": docs[5]["name"], "status": "timeout"}
    # Values the state schema forbids become Invalid markers, which workers send back inside
    # results and collected views (a BGP session state, an MTU): they must travel by pickle.
    spine = next(d for d in docs if "bgp" in d and d["bgp"].get("neighbors"))
    next(iter(spine["bgp"]["neighbors"].values()))["state"] = 7
    spine["facts"]["os_version"] = 42  # what version-skew collects
    host = next(d for d in docs if d["name"] == "gpu-00007")
    next(iter(host["interfaces"].values()))["mtu"] = 1e308
    serial, parallel = checked_inline_and_forked(fabric.devices, write_snapshot(tmp_path, docs))
    assert [r.to_dict() for r in serial.results] == [r.to_dict() for r in parallel.results]
    assert serial.devices == parallel.devices
    assert serial.results.summary() == parallel.results.summary()
    assert len(serial.results.problems) > 2  # the faults and the timeout are there
    assert any(
        r.device == "gpu-00007" and r.status is Status.ERROR and "invalid" in (r.message or "")
        for r in parallel.results
    )
    assert any(r.device == spine["name"] and "invalid" in str(r.to_dict()) for r in parallel.results)


REPO_BASELINE = Path(__file__).resolve().parents[2] / "baseline" / "roce.yml"


def test_excluded_tags_keep_rules_out(tmp_path: Path) -> None:
    from fabline.baseline import load_baseline
    from fabline.engine import Engine
    from fabline.snapshot import Snapshot
    from tests.helpers import write_snapshot, write_yaml

    rules = """
    rules:
      - {id: up, description: link up, severity: major, tags: [operational], expect: [{path: oper_up, equals: true}]}
      - {id: mtu, description: mtu, severity: major, expect: [{path: mtu, equals: 9000}]}
    """
    bl = load_baseline([write_yaml(tmp_path / "b.yml", rules)])
    snap = Snapshot(write_snapshot(tmp_path / "s", [state("gpu1", mtu=9000)]))
    full = Engine(bl, {}, lambda p: set()).run([FakeDevice("gpu1")], snap)
    assert [(r.check, r.status) for r in full.results] == [("up", Status.ERROR), ("mtu", Status.PASS)]
    intended = Engine(bl, {}, lambda p: set(), exclude_tags=frozenset({"operational"})).run(
        [FakeDevice("gpu1")], snap
    )
    assert [(r.check, r.status) for r in intended.results] == [("mtu", Status.PASS)]


class _SiteListCheck(Check):
    """A site check that builds its results itself, with long lists (test check)."""

    id = "site-list"
    roles = ("leaf",)

    def check_device(self, device: DeviceContext) -> Iterable[Result]:
        ports = [f"Ethernet{i}" for i in range(5000)]
        yield Result(
            self.id, device.name, "raw", Status.FAIL, Severity.MAJOR, {"ports": ports}, ports, "x" * 10**5
        )
        yield self.failed(
            device.name, "helper", "; ".join(ports), expected=set(ports), actual={p: [p] * 300 for p in ports}
        )


def test_site_check_results_are_bounded_whether_built_raw_or_by_the_helpers(tmp_path: Path) -> None:
    docs = [state("leaf1", interfaces={})]
    res = by_id(run(tmp_path, "rules: []", [FakeDevice("leaf1")], docs, checks={"site-list": _SiteListCheck}))
    raw, helper = res["leaf1::site-list::raw"], res["leaf1::site-list::helper"]
    assert raw.actual[:2] == ["Ethernet0", "Ethernet1"] and raw.actual[-1] == more_items(5000, MAX_ITEMS - 1)
    assert raw.expected["ports"][-1] == "... and 4937 more (5000 in all)"
    assert len(raw.message) <= MAX_MESSAGE_CHARS and raw.message.endswith(" more characters)")
    assert len(helper.expected) == MAX_ITEMS and helper.actual["..."] == more_items(5000, 4)
    assert helper.actual["Ethernet0"][-1] == more_items(300, MAX_ITEMS - 1)  # capped once, not twice
    for r in (raw, helper):
        assert len(json.dumps(r.to_dict())) < 100_000


class _LinkedPairsCheck(Check):
    """Lists the LLDP links the run's link graph paired (test check, through ``fabric.links``)."""

    id = "linked-pairs"
    scope = "fabric"
    uses_links = True

    def check_fabric(self, fabric: FabricContext) -> Iterable[Result]:
        graph = fabric.links.graph()
        assert fabric.links.graph() is graph and fabric.links.built() is graph  # built once per run
        for end in graph.iter_ends():
            yield self.passed(
                end.device, end.port.name, actual=f"{end.status} {end.peer_device} {end.peer_port_name}"
            )


class _UndeclaredLinksCheck(Check):
    """Asks for the link graph without declaring ``uses_links`` (test check)."""

    id = "undeclared-links"
    scope = "fabric"

    def check_fabric(self, fabric: FabricContext) -> Iterable[Result]:
        fabric.links.graph()
        return []


def test_the_link_graph_is_an_engine_service_built_once_per_run(tmp_path: Path) -> None:
    """A fabric check that declares ``uses_links`` gets the run's graph from its context.

    Two runs in one process see their own fabric (nothing is cached at module level: the second
    run's graph knows the second run's links only); a check that did not declare it gets an error
    result naming the rule.
    """
    link = {"lldp": {"device": "leaf1", "port": "Ethernet0"}}
    devices = [FakeDevice("leaf1"), FakeDevice("gpu1", "linux", "host", vars={"rail_interfaces": ["eth0"]})]
    first = [
        state("leaf1", interfaces={"Ethernet0": {"lldp": {"device": "gpu1", "port": "eth0"}}}),
        state("gpu1", interfaces={"eth0": link}),
    ]
    res = by_id(run(tmp_path / "a", "rules: []", devices, first, checks={"linked-pairs": _LinkedPairsCheck}))
    assert res["leaf1::linked-pairs::Ethernet0"].actual == "ok gpu1 eth0"
    assert res["gpu1::linked-pairs::eth0"].actual == "ok leaf1 Ethernet0"
    second = [state("leaf1", interfaces={"Ethernet0": {}}), state("gpu1", interfaces={"eth0": link})]
    res = by_id(run(tmp_path / "b", "rules: []", devices, second, checks={"linked-pairs": _LinkedPairsCheck}))
    assert res["gpu1::linked-pairs::eth0"].actual == "one-sided leaf1 Ethernet0"
    assert res["leaf1::linked-pairs::Ethernet0"].actual == "claimed gpu1 eth0"
    res = by_id(
        run(tmp_path / "c", "rules: []", devices, first, checks={"undeclared-links": _UndeclaredLinksCheck})
    )
    error = res["(fabric)::undeclared-links::-"]
    assert error.status is Status.ERROR and "uses_links" in error.message


def test_no_module_level_caches_in_the_link_checks() -> None:
    """The link graph and its checks keep no state between runs: no module-level dict, list or set."""
    import ast

    import fabline.checks.fabric as fabric_checks
    from fabline.checks import linkgraph

    files = [Path(linkgraph.__file__), *Path(fabric_checks.__file__).parent.glob("*.py")]
    found = []
    for path in files:
        for node in ast.parse(path.read_text("utf-8")).body:
            value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
            if isinstance(value, ast.Dict | ast.List | ast.Set | ast.DictComp | ast.ListComp):
                found.append(f"{path.name}:{node.lineno}")
    assert found == [], f"module-level mutable values (per-run state belongs to the run): {found}"


def test_equal_collected_values_are_shared_only_when_equal_to_the_type() -> None:
    """A worker's part shares equal collected values (one object each, pickled once) and never
    merges values that merely compare equal: 1 and True, 1 and 1.0, other key orders, named tuples."""
    from typing import NamedTuple

    from fabline.engine.parallel import share_equal_values

    class Row(NamedTuple):
        a: int

    base = ("host", "linux", {"x": 1, "y": [1, 2]})
    values = {
        "h1": base,
        "h2": ("host", "linux", {"x": 1, "y": [1, 2]}),
        "h3": ("host", "linux", {"y": [1, 2], "x": 1}),  # other key order
        "h4": ("host", "linux", {"x": True, "y": [1, 2]}),
        "h5": ("host", "linux", {"x": 1.0, "y": [1, 2]}),
        "h6": Row(1),
        "h7": Row(1),
    }
    before = {k: repr(v) for k, v in values.items()}
    share_equal_values(values)
    assert values["h2"] is base and values["h1"] is base
    assert all(values[k] is not base for k in ("h3", "h4", "h5"))
    assert values["h6"] is not values["h7"]
    assert {k: repr(v) for k, v in values.items()} == before
    many = {f"d{i}": (i,) for i in range(10)} | {"again": (9,)}
    share_equal_values(many, keep=4)
    assert many["again"] is not many["d9"]  # past ``keep`` distinct values nothing more is remembered


class _NotingCheck(Check):
    """A fabric check that reads no link graph: a note for the run, a finding per leaf port (test check).

    It writes the process it ran in to the file ``options["pids"]`` names.
    """

    id = "noting"
    scope = "fabric"

    def collect(self, device: DeviceContext) -> object:
        return sorted(device.interfaces)

    def check_fabric(self, fabric: FabricContext) -> Iterable[Result]:
        _ran_in(fabric, self.id)
        fabric.notes.append(f"noting saw {len(fabric.collected)} devices")
        for name in sorted(fabric.collected):
            for port in fabric.collected[name]:
                yield self.failed(name, port, f"{name} {port} noted")


class _HalfwayCheck(Check):
    """A link check that yields one result, then raises (test check)."""

    id = "halfway"
    scope = "fabric"
    uses_links = True

    def check_fabric(self, fabric: FabricContext) -> Iterable[Result]:
        _ran_in(fabric, self.id)
        graph = fabric.links.graph(("nobody-*",))
        yield self.passed("leaf1", "Ethernet0", actual=len(graph.ends))
        raise KeyError("halfway")


def _ran_in(fabric: FabricContext, check: str) -> None:
    import os

    with Path(fabric.options["pids"]).open("a", encoding="utf-8") as f:
        f.write(f"{check} {os.getpid()}\n")


# Three modules, three groups of fabric checks: the engine keeps the checks of one module in one process.
_NotingCheck.__module__ = "site_checks.noting"
_HalfwayCheck.__module__ = "site_checks.halfway"


def test_fabric_checks_over_workers_give_identical_results(tmp_path: Path) -> None:
    """The fabric checks run in forked workers with jobs > 1 (forked once the link graph is
    built): the same results in the same order, the same notes, errors and grouped problems, and
    the graph the grouping reads, as in one process.
    """
    import os

    from fabline.baseline import load_baseline
    from fabline.engine import Engine
    from fabline.snapshot import Snapshot
    from tests.helpers import write_snapshot, write_yaml

    devices = [FakeDevice(f"leaf{i}") for i in range(1, 5)]
    devices += [
        FakeDevice(f"gpu{i}", "linux", "host", vars={"rail_interfaces": ["eth0"]}) for i in range(1, 5)
    ]
    docs = [
        state(
            f"leaf{i}",
            interfaces={"Ethernet0": {"lldp": {"device": f"gpu{i}", "port": "eth0"}}, "Ethernet1": {}},
        )
        for i in range(1, 5)
    ]
    docs += [
        state(f"gpu{i}", interfaces={"eth0": {"lldp": {"device": f"leaf{i}", "port": "Ethernet0"}}})
        for i in range(1, 4)  # gpu4 not collected: its leaf's end cannot be paired
    ]
    snap = Snapshot(write_snapshot(tmp_path / "snap", docs))
    checks = {"linked-pairs": _LinkedPairsCheck, "noting": _NotingCheck, "halfway": _HalfwayCheck}
    engine = Engine(load_baseline([write_yaml(tmp_path / "b.yml", "rules: []")]), checks, lambda p: set())
    outcomes = {}
    for jobs in (1, 2, 3):
        pids = tmp_path / f"pids-{jobs}"
        outcomes[jobs] = engine.run(devices, snap, options={"pids": pids}, jobs=jobs)
        ran = dict(line.split() for line in pids.read_text().splitlines())
        assert sorted(ran) == ["halfway", "noting"]
        if jobs == 1:
            assert set(ran.values()) == {str(os.getpid())}
        else:  # each group in a worker, not here
            assert str(os.getpid()) not in ran.values()
    serial = outcomes[1]
    assert [r.check for r in serial.results][:1] == ["linked-pairs"]
    halfway = [r for r in serial.results if r.check == "halfway"]
    assert [r.status for r in halfway] == [Status.PASS, Status.ERROR] and "KeyError" in halfway[1].message
    assert "noting saw 8 devices" not in serial.warnings and "noting saw 7 devices" in serial.warnings
    assert serial.problems
    for jobs in (2, 3):
        other = outcomes[jobs]
        assert [r.to_dict() for r in other.results] == [r.to_dict() for r in serial.results]
        assert other.warnings == serial.warnings
        assert [p.to_dict() for p in other.problems] == [p.to_dict() for p in serial.problems]
