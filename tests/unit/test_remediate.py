"""fabline remediate's pure parts: intended values, profile rebinding, the plan, the formats.

The closed loop over SSH is ``tests/integration/test_remediate_loop.py``; here each rule of the
translation is pinned on small states.
"""

from __future__ import annotations

import copy
import doctest
import importlib
import json
from pathlib import Path
from typing import Any

import jsonpatch
import pytest
import yaml

from fabline import synthetic
from fabline.remediate import cumulus, sonic
from fabline.remediate.common import Stages, rebind
from fabline.remediate.core import build_plan
from fabline.remediate.intent import intended_value
from fabline.remediate.model import Fix
from fabline.results import Result, Severity, Status
from fabline.sim.render.cumulus import nv_config
from fabline.sim.render.sonic import config_db


@pytest.mark.parametrize("name", ["intent", "common", "sonic", "cumulus"])
def test_doctests(name: str) -> None:
    result = doctest.testmod(importlib.import_module(f"fabline.remediate.{name}"))
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize(
    ("path", "ops", "current", "design", "value", "source"),
    [
        ("mtu", {"equals": 9000}, 1500, None, 9000, "baseline: mtu equals 9000"),
        ("mtu", {"min": 9100}, 1500, 9216, 9216, "the design's port MTU 9216"),
        ("mtu", {"min": 9100}, 1500, None, 9100, "the rule's minimum 9100"),
        ("pfc_priorities", {"exactly": [3]}, [3, 4], None, [3], "exactly [3]"),
        ("nic.ecn_np_priorities", {"contains": [3]}, [5], None, [3, 5], "the others kept"),
        ("ecn.3.min_bytes", {"range": [10000, 2000000]}, 5000, None, 150000, "the design's min_bytes 150000"),
        ("ecn.3.probability_pct", {"range": [1, 10]}, 50, None, 5, "the design's probability_pct 5"),
        ("ecn.3.max_bytes", {"range": [1, 10]}, 50, None, 1, "the range's low end 1"),
        (
            "dscp_to_priority",
            {"maps_only": {"keys": [26], "to": 3}},
            {"24": 3, "26": 0, "48": 6},
            None,
            {"24": 0, "26": 3, "48": 6},
            "24 moved to 0",
        ),
    ],
)
def test_intended_value(
    path: str, ops: dict[str, Any], current: Any, design: int | None, value: Any, source: str
) -> None:
    got, why = intended_value(path, ops, current, design)
    assert got == value
    assert source in why


def test_intended_value_refuses_operators_without_a_value() -> None:
    with pytest.raises(ValueError, match="gives no value"):
        intended_value("optics.rx_power_dbm", {"each": {"min": -9}}, [-10.0], None)


def test_rebind_never_edits_a_profile_a_healthy_port_uses() -> None:
    profiles, bindings = rebind({"p1": "A", "p2": "A"}, {"A": 1}, {"p2": 2}, lambda p: f"{p}-new")
    assert profiles == {"A": 1, "p2-new": 2} and bindings == {"p1": "A", "p2": "p2-new"}


def test_rebind_changes_a_profile_in_place_when_its_ports_all_get_the_value() -> None:
    profiles, bindings = rebind({"p1": "A", "p2": "B"}, {"A": 1, "B": 5}, {"p2": 2}, lambda p: "x")
    assert profiles == {"A": 1, "B": 2} and bindings == {"p1": "A", "p2": "B"}


def test_rebind_unbinds_a_port_whose_value_is_the_default() -> None:
    profiles, bindings = rebind(
        {"swp1": "swp1-pfc", "swp2": None}, {"default-global": 3, "swp1-pfc": 4}, {"swp1": 3}, lambda p: "x",
        "default-global",
    )  # fmt: skip
    assert profiles == {"default-global": 3} and bindings == {"swp1": None, "swp2": None}


class _Dev:
    def __init__(self, spec: synthetic.DeviceSpec) -> None:
        self.spec, self.name, self.platform = spec, spec.name, spec.platform


def _state(name: str, faults: list[synthetic.Fault]) -> dict[str, Any]:
    fabric = synthetic.lab_fabric()
    spec = next(d for d in fabric.devices if d.name == name)
    links = [lk for lk in fabric.links if name in (lk[0], lk[2])]
    return next(iter(synthetic.states(synthetic.Fabric([spec], links), faults)))


def _stages(before: dict[str, Any], after: dict[str, Any]) -> Stages:
    return Stages(before["name"], before, after, after, ())


def test_sonic_patch_gives_a_shared_dscp_map_a_copy_and_applies_with_jsonpatch() -> None:
    """A DSCP map bound to healthy ports is never edited: the fixed port gets its own."""
    before = _state("leaf-r0-a", [synthetic.Fault("leaf-r0-a", "dscp_to_priority.26", 0, "Ethernet0", "")])
    after = copy.deepcopy(before)
    after["interfaces"]["Ethernet0"]["dscp_to_priority"]["26"] = 3
    spec = next(d for d in synthetic.lab_fabric().devices if d.name == "leaf-r0-a")
    db = config_db(_Dev(spec), before)  # type: ignore[arg-type]
    # Ethernet0's faulty map is its own: fixing it rebinds it to the healthy ports' map and drops it.
    healthy, faulty = (db["PORT_QOS_MAP"][p]["dscp_to_tc_map"] for p in ("Ethernet8", "Ethernet0"))
    assert healthy != faulty
    ops = sonic.patch(db, sonic.intended_db(db, before, after))
    assert ops == [
        {"op": "remove", "path": f"/DSCP_TO_TC_MAP/{faulty}"},
        {"op": "replace", "path": "/PORT_QOS_MAP/Ethernet0/dscp_to_tc_map", "value": healthy},
    ]
    new = jsonpatch.JsonPatch(ops).apply(db)
    assert new["DSCP_TO_TC_MAP"][healthy]["26"] == "3"
    # Breaking a shared map the other way: one port leaves AZURE, the others keep it untouched.
    after2 = copy.deepcopy(after)
    after2["interfaces"]["Ethernet8"]["dscp_to_priority"]["10"] = 1
    db2 = jsonpatch.JsonPatch(ops).apply(db)
    ops2 = sonic.patch(db2, sonic.intended_db(db2, after, after2))
    assert not any(o["path"].startswith(f"/DSCP_TO_TC_MAP/{healthy}") for o in ops2)
    assert {
        "op": "replace",
        "path": "/PORT_QOS_MAP/Ethernet8/dscp_to_tc_map",
        "value": "FABLINE_Ethernet8",
    } in ops2


def test_sonic_cli_lines_name_the_sonic_utilities_commands() -> None:
    before = _state("leaf-r0-a", [])
    after = copy.deepcopy(before)
    after["interfaces"]["Ethernet0"].update(mtu=9100, fec="rs", pfc_priorities=[3, 4])
    after["interfaces"]["Ethernet8"]["ecn"]["3"]["min_bytes"] = 200000
    spec = next(d for d in synthetic.lab_fabric().devices if d.name == "leaf-r0-a")
    before["interfaces"]["Ethernet0"].update(mtu=1500, fec="fc")
    db = config_db(_Dev(spec), before)  # type: ignore[arg-type]
    lines = sonic.cli_lines(db, sonic.intended_db(db, before, after))
    assert "sudo config interface mtu Ethernet0 9100" in lines
    assert "sudo config interface fec Ethernet0 rs" in lines
    assert "sudo config interface pfc priority Ethernet0 4 on" in lines
    assert any(
        ln.startswith(
            "# new profile FABLINE_Ethernet8_Q3: sudo ecnconfig -p FABLINE_Ethernet8_Q3 -gmin 200000"
        )
        for ln in lines
    )


def test_cumulus_commands_and_patch_file_say_the_same() -> None:
    before = _state("leaf-r1-a", [synthetic.Fault("leaf-r1-a", "pfc_priorities", [3, 4], "swp1", "")])
    after = copy.deepcopy(before)
    after["interfaces"]["swp1"]["pfc_priorities"] = [3]
    after["interfaces"]["swp2"]["mtu"] = 9000
    spec = next(d for d in synthetic.lab_fabric().devices if d.name == "leaf-r1-a")
    tree = nv_config(_Dev(spec), before)[1]["set"]  # type: ignore[arg-type]
    lines = cumulus.commands(tree, cumulus.intended_tree(tree, before, after))
    assert lines == [
        "nv set interface swp2 link mtu 9000",
        "nv unset qos pfc swp1-pfc",
        "nv unset interface swp1 qos pfc",
    ]
    doc = yaml.safe_load(cumulus.patch_yaml(lines))
    assert doc == [
        {"set": {"interface": {"swp2": {"link": {"mtu": 9000}}}}},
        {"unset": {"qos": {"pfc": {"swp1-pfc": None}}, "interface": {"swp1": {"qos": {"pfc": None}}}}},
    ]


def _result(
    device: str, check: str, subject: str | None, expected: Any, status: Status = Status.FAIL
) -> Result:
    return Result(check, device, subject, status, Severity.MAJOR, expected, None, "m")


def test_plan_leaves_unreadable_devices_and_waived_findings_alone(tmp_path: Path) -> None:
    ok = _state("leaf-r1-a", [])
    states = {"leaf-r1-a": ok, "leaf-r0-a": {**_state("leaf-r0-a", []), "status": "unreachable"}}
    results = [
        _result("leaf-r0-a", "switch-mtu", "Ethernet0", {"mtu": {"min": 9100}}),
        _result("leaf-r1-a", "switch-mtu", "swp1", {"mtu": {"min": 9100}}, Status.WAIVED),
    ]
    plan = build_plan(results, states.get, {"leaf-r0-a": "sonic", "leaf-r1-a": "cumulus"}, tmp_path, {})
    assert plan.changes == [] and plan.work_orders == []
    assert "unreachable" in plan.skipped["leaf-r0-a"]
    assert "leaf-r0-a::switch-mtu::Ethernet0" in plan.unresolved
    assert "leaf-r1-a" not in plan.skipped


def test_plan_without_raw_configuration_says_so(tmp_path: Path) -> None:
    """A state-only snapshot has no running configuration: nothing is guessed."""
    states = {"leaf-r1-a": _state("leaf-r1-a", [])}
    results = [_result("leaf-r1-a", "switch-mtu", "swp1", {"mtu": {"min": 9100}})]
    plan = build_plan(results, states.get, {"leaf-r1-a": "cumulus"}, tmp_path, {"cumulus": 9216})
    assert plan.changes == []
    assert "no NVUE configuration in the snapshot" in plan.skipped["leaf-r1-a"]


def test_work_orders_carry_peer_and_cabling_row(tmp_path: Path) -> None:
    state = _state("leaf-r0-a", [])
    r = _result(
        "leaf-r0-a", "optics-rx-power", "Ethernet16", {"optics.rx_power_dbm": {"each": {"min": -9.0}}}
    )
    rows = synthetic.cabling_plan_csv(synthetic.lab_fabric()).splitlines()[1:]
    plan = build_plan([r], {"leaf-r0-a": state}.get, {"leaf-r0-a": "sonic"}, tmp_path, {}, rows)
    (order,) = plan.work_orders
    assert (order.port, order.peer_device, order.peer_port) == ("Ethernet16", "spine-01", "Ethernet1/1")
    assert order.cabling_row == "leaf-r0-a,Ethernet16,spine-01,Ethernet1/1,0,0"
    assert "clean both connectors" in order.action


def test_fix_is_plain_data() -> None:
    f = Fix("d", "c", None, "qos.pfc_watchdog.enabled", True, False, "baseline")
    assert json.loads(json.dumps(f.__dict__))["value"] is True


def _running(name: str, state: dict[str, Any]) -> str:
    from fabline.sim.render import arista_eos, cisco_nxos, normalize

    spec = next(d for d in synthetic.lab_fabric().devices if d.name == name)
    normalize(spec.platform, state)
    render = arista_eos.running_config if spec.platform == "arista_eos" else cisco_nxos.running_config
    return render(_Dev(spec), state)  # type: ignore[arg-type]


def test_eos_remediation_is_hier_config_of_the_running_config() -> None:
    from fabline.remediate.netcli import remediation

    before = _state("leaf-r2-a", [synthetic.Fault("leaf-r2-a", "mtu", 1500, "Ethernet1/1", ""),
                                  synthetic.Fault("leaf-r2-a", "fec", "fc", "Ethernet4/1", "")])  # fmt: skip
    running = _running("leaf-r2-a", before)
    safe = copy.deepcopy(before)
    safe["interfaces"]["Ethernet1/1"]["mtu"] = 9214
    after = copy.deepcopy(safe)
    after["interfaces"]["Ethernet4/1"]["fec"] = "rs"
    first, second = remediation("arista_eos", running, Stages("leaf-r2-a", before, safe, after, ()))
    assert first == "interface Ethernet1/1\n  mtu 9214"
    # EOS can allow several encodings: the old one is negated, not just overwritten.
    assert (
        second
        == "interface Ethernet4/1\n  no error-correction encoding fire-code\n  error-correction encoding reed-solomon"
    )


def test_nxos_single_valued_commands_are_replaced_not_negated() -> None:
    from fabline.remediate.netcli import remediation

    before = _state("leaf-r3-a", [synthetic.Fault("leaf-r3-a", "fec", "fc", "Ethernet1/3", ""),
                                  synthetic.Fault("leaf-r3-a", "qos.pfc_watchdog.enabled", False, None, "")])  # fmt: skip
    running = _running("leaf-r3-a", before)
    safe = copy.deepcopy(before)
    safe["qos"]["pfc_watchdog"]["enabled"] = True
    after = copy.deepcopy(safe)
    after["interfaces"]["Ethernet1/3"]["fec"] = "rs"
    first, second = remediation("cisco_nxos", running, Stages("leaf-r3-a", before, safe, after, ()))
    assert first == "priority-flow-control watch-dog-interval on"
    assert second == "interface Ethernet1/3\n  fec rs-fec"


def test_simulated_config_mode_refuses_bad_lines_and_abort_drops_the_session() -> None:
    from fabline.sim.dialects import Session, dialect
    from fabline.sim.server import Simulator

    sim = Simulator(synthetic.lab_fabric(), [], writable=True)
    dev = sim.devices["leaf-r2-a"]
    d, s = dialect(dev.platform), Session(dev, "admin")
    assert d.execute(s, "configure session t1", sim.run_command) == ""
    assert d.prompt(s) == "leaf-r2-a(config-s-t1)#"
    d.execute(s, "interface Ethernet1/1", sim.run_command)
    assert d.execute(s, "mtu 99999", sim.run_command).startswith("% Invalid input")
    assert d.execute(s, "mtu 9000", sim.run_command) == ""
    assert d.execute(s, "frobnicate", sim.run_command) == "% Invalid input\n"
    d.execute(s, "abort", sim.run_command)
    assert dev.state()["interfaces"]["Ethernet1/1"]["mtu"] == 9214
    d.execute(s, "configure terminal", sim.run_command)
    d.execute(s, "interface Ethernet1/1", sim.run_command)
    d.execute(s, "mtu 9000", sim.run_command)
    assert dev.state()["interfaces"]["Ethernet1/1"]["mtu"] == 9000  # terminal mode applies at once
    assert "mtu 9000" in sim.run_command(dev, "show running-config").out
    ro = Simulator(synthetic.lab_fabric(), [])
    s2 = Session(ro.devices["leaf-r3-a"], "admin")
    assert (
        dialect("cisco_nxos").execute(s2, "configure terminal", ro.run_command)
        == "% Permission denied for the role\n"
    )


def test_cli_errors_are_one_line(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from fabline.cli import main

    runner = CliRunner()
    result = runner.invoke(
        main, ["remediate", "--report", str(tmp_path / "nope.json"), "-o", str(tmp_path / "o")]
    )
    assert result.exit_code == 2 and "nope.json: report not found" in result.output
    assert len(result.output.strip().splitlines()) == 1
    (tmp_path / "bad.json").write_text('{"schema": "something/1"}')
    result = runner.invoke(
        main, ["remediate", "--report", str(tmp_path / "bad.json"), "-o", str(tmp_path / "o")]
    )
    assert result.exit_code == 2 and "schema 'something/1' is not one this fabline reads" in result.output
    assert "bad.json" in result.output and len(result.output.strip().splitlines()) == 1
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    snap = tmp_path / "snap"
    synthetic.write_snapshot(synthetic.lab_fabric(), snap)
    report = tmp_path / "r.json"
    report.write_text(
        json.dumps({"schema": "fabline.report/1", "run": {"snapshot": str(snap)}, "results": []})
    )
    result = runner.invoke(main, ["remediate", "--report", str(report), "-o", str(busy)])
    assert result.exit_code == 2 and "not a fabline remediation folder" in result.output
    assert (busy / "notes.txt").read_text() == "mine"
    result = runner.invoke(main, ["remediate", "--report", str(report), "-o", str(tmp_path / "fix")])
    assert result.exit_code == 0, result.output
    assert "0 device change(s)" in result.output
    assert "Nothing: every failing finding" in (tmp_path / "fix" / "plan.md").read_text()


def test_plan_skips_a_device_whose_state_file_is_broken(tmp_path: Path) -> None:
    from fabline.snapshot import Snapshot

    snap = tmp_path / "snap"
    synthetic.write_snapshot(synthetic.lab_fabric(), snap)
    (snap / "state" / "leaf-r1-a.json").write_text("{ truncated")
    r = _result("leaf-r1-a", "switch-mtu", "swp1", {"mtu": {"min": 9100}})
    plan = build_plan([r], Snapshot(snap).load, {"leaf-r1-a": "cumulus"}, snap, {})
    assert plan.changes == [] and plan.skipped["leaf-r1-a"].startswith("state not readable")
    assert "leaf-r1-a::switch-mtu::swp1" in plan.unresolved
