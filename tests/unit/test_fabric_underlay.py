"""The BGP underlay checks on synthetic fabrics: clean twins, each planted fault, unreadable inputs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fabline import synthetic
from fabline.baseline import load_baseline
from fabline.engine import Engine
from fabline.results import Status
from fabline.sim.faults import bgp_session_down, bgp_wrong_remote_asn, ecmp_paths_limited
from fabline.snapshot import Snapshot
from fabline.synthetic import Fault
from tests.helpers import FakeDevice, write_yaml
from tests.unit.test_fabric_support import ALL, edit_state, one, run_fabric, table

LAB = synthetic.lab_fabric()
CHECKS = ["bgp-sessions", "bgp-asn", "ecmp-fanout"]


def inventory_devices(fabric: synthetic.Fabric, **changes: dict[str, Any]) -> list[FakeDevice]:
    """The devices of ``synthetic.inventory`` (with bgp_asn and fabline_ecmp_prefix), vars changed per device."""
    inv = synthetic.inventory(fabric)
    hosts: dict[str, dict[str, Any]] = {}
    stack = [inv["all"]]
    while stack:
        group = stack.pop()
        hosts.update(group.get("hosts", {}))
        stack.extend(group.get("children", {}).values())
    out = []
    for d in fabric.devices:
        v = {
            k: x
            for k, x in hosts[d.name].items()
            if not k.startswith(("ansible_", "fabline_platform", "fabline_role"))
        }
        v.update(changes.get(d.name, {}))
        out.append(FakeDevice(d.name, d.platform, d.role, (), v))
    return out


def run(tmp: Path, fabric: synthetic.Fabric = LAB, faults: list[Fault] | None = None, **kw: Any) -> Any:
    devices = kw.pop("devices", None) or inventory_devices(fabric)
    return run_fabric(tmp, fabric, faults or [], checks=CHECKS, devices=devices, **kw)


def run_edited(tmp: Path, edits: dict[str, Any], devices: list[FakeDevice] | None = None) -> Any:
    """The lab's states with ``edits`` (device -> function changing its state document) applied."""
    synthetic.write_snapshot(LAB, tmp / "snap")
    for name, edit in edits.items():
        edit_state(tmp, name, edit)
    devs = devices or inventory_devices(LAB)
    registry = {c: ALL[c] for c in CHECKS}
    engine = Engine(load_baseline([write_yaml(tmp / "b.yml", "rules: []\n")]), registry, lambda p: set())
    return engine.run(devs, Snapshot(tmp / "snap"))


@pytest.mark.parametrize(
    "fabric",
    [LAB, synthetic.rail_fabric(512), synthetic.plane_fabric(16, rails=2, planes_per_rail=2, radix=8,
                                                             leaf_platforms=("cumulus", "cisco_nxos"))],
    ids=["lab", "rail-512", "planes"],
)  # fmt: skip
def test_clean_fabric_passes_every_underlay_check(tmp_path: Path, fabric: synthetic.Fabric) -> None:
    out = run(tmp_path, fabric)
    bad = [r for r in out.results if r.status is not Status.PASS]
    assert bad == []
    switches = {d.name for d in fabric.devices if d.role != "host"}
    leaves = {d.name for d in fabric.devices if d.role == "leaf"}
    assert {d for _, d, _ in table(out, Status.PASS, "bgp-sessions")} == switches
    assert {d for _, d, _ in table(out, Status.PASS, "ecmp-fanout")} == leaves


def test_a_down_session_fails_at_both_ends_and_costs_the_leaf_a_path(tmp_path: Path) -> None:
    out = run(tmp_path, faults=bgp_session_down(LAB, "leaf-r1-a", "swp4"))
    assert table(out, Status.FAIL, "bgp-sessions") == {
        ("bgp-sessions", "leaf-r1-a", "sessions"),
        ("bgp-sessions", "spine-02", "sessions"),
    }
    leaf = one(out, "bgp-sessions", "leaf-r1-a", "sessions")
    assert leaf.message == "leaf-r1-a: session 10.128.0.6 (spine-02) is active"
    spine = one(out, "bgp-sessions", "spine-02", "sessions")
    assert "session 10.128.0.7 (leaf-r1-a) is active" in spine.message
    ecmp = one(out, "ecmp-fanout", "leaf-r1-a", "ecmp")
    assert ecmp.status is Status.FAIL
    assert (
        ecmp.message == "leaf-r1-a: route to 10.0.0.5/32: 1 path(s), the plane's spines: 2 (multipath lost)"
    )
    assert table(out, Status.FAIL, "bgp-asn") == set()


def test_a_wrong_remote_as_is_named_with_the_peers_as(tmp_path: Path) -> None:
    out = run(tmp_path, faults=bgp_wrong_remote_asn(LAB, "leaf-r2-a", "Ethernet3/1"))
    assert table(out, Status.FAIL, "bgp-asn") == {("bgp-asn", "leaf-r2-a", "asn")}
    msg = one(out, "bgp-asn", "leaf-r2-a", "asn").message
    assert msg == "leaf-r2-a: session 10.128.0.8 to spine-01: remote AS 65999, spine-01 is AS 65100"
    assert ("bgp-sessions", "spine-01", "sessions") in table(out, Status.FAIL, "bgp-sessions")


def test_multipath_capped_below_the_spine_count_fails_only_ecmp(tmp_path: Path) -> None:
    out = run(tmp_path, faults=[ecmp_paths_limited("leaf-r0-a", 1)])
    assert {(c, d) for c, d, _ in table(out, Status.FAIL)} == {("ecmp-fanout", "leaf-r0-a")}
    result = one(out, "ecmp-fanout", "leaf-r0-a", "ecmp")
    assert result.actual == {"prefix": "10.0.0.4/32", "paths": 1}
    assert result.expected == {"prefix": "10.0.0.4/32", "min_paths": 2}


def test_min_paths_parameter_overrides_the_spine_count(tmp_path: Path) -> None:
    baseline = "rules:\n  - {id: ecmp-fanout, params: {min_paths: 4}}\n"
    out = run(tmp_path, baseline=baseline)
    assert {d for _, d, _ in table(out, Status.FAIL, "ecmp-fanout")} == {
        "leaf-r0-a",
        "leaf-r1-a",
        "leaf-r2-a",
        "leaf-r3-a",
    }
    assert "min_paths: 4" in one(out, "ecmp-fanout", "leaf-r3-a", "ecmp").message


def test_a_link_without_any_session_is_named(tmp_path: Path) -> None:
    def drop_session(doc: dict[str, Any]) -> None:
        del doc["bgp"]["neighbors"]["10.128.0.2"]  # leaf-r0-a's session to spine-02

    out = run_edited(tmp_path, {"leaf-r0-a": drop_session})
    result = one(out, "bgp-sessions", "leaf-r0-a", "sessions")
    assert result.status is Status.FAIL
    assert result.message == "leaf-r0-a: 1 link(s) to spine-02 but 0 BGP session(s)"


def test_local_as_off_the_plan_and_sessions_matched_by_description_or_port(tmp_path: Path) -> None:
    devices = inventory_devices(LAB, **{"spine-02": {"bgp_asn": 65200}})
    out = run(tmp_path, devices=devices)
    # spine-02 reports 65100: its own result and every leaf's session to it disagree with the plan
    assert one(out, "bgp-asn", "spine-02", "asn").message.startswith(
        "spine-02: local AS 65100, the plan says 65200"
    )
    assert "remote AS 65100, spine-02 is AS 65200" in one(out, "bgp-asn", "leaf-r3-a", "asn").message


def test_unnumbered_sessions_are_matched_to_their_port(tmp_path: Path) -> None:
    def unnumbered(doc: dict[str, Any]) -> None:
        neighbors = doc["bgp"]["neighbors"]
        ports = {"10.128.0.4": "swp3", "10.128.0.6": "swp4"}
        doc["bgp"]["neighbors"] = {ports[k]: {**v, "description": ""} for k, v in neighbors.items()}
        doc["bgp"]["neighbors"]["swp4"]["state"] = "idle"

    out = run_edited(tmp_path, {"leaf-r1-a": unnumbered})
    assert (
        one(out, "bgp-sessions", "leaf-r1-a", "sessions").message
        == "leaf-r1-a: session swp4 (spine-02) is idle"
    )


def test_a_switch_without_bgp_is_an_error_and_unreadable_ones_are_left_to_collection(tmp_path: Path) -> None:
    out = run(tmp_path, faults=[Fault("leaf-r0-a", "bgp", None)], drop=["spine-02"])
    # a state whose bgp is null: not collected
    assert one(out, "bgp-sessions", "leaf-r0-a", "bgp").status is Status.ERROR
    assert one(out, "ecmp-fanout", "leaf-r0-a", "bgp").status is Status.ERROR
    assert not [r for r in out.results if r.device == "spine-02"]


def test_no_probe_prefix_is_skipped_with_the_variable_to_set(tmp_path: Path) -> None:
    devices = inventory_devices(LAB, **{"leaf-r1-a": {"fabline_ecmp_prefix": None}})
    faults = [Fault("leaf-r1-a", "bgp.ecmp", None)]
    out = run(tmp_path, faults=faults, devices=devices)
    result = one(out, "ecmp-fanout", "leaf-r1-a", "ecmp")
    assert result.status is Status.SKIPPED
    assert "fabline_ecmp_prefix" in (result.message or "")


def test_history_diff_shows_a_session_going_down(tmp_path: Path) -> None:
    from fabline.history.diff import Side, diff_sides

    synthetic.write_snapshot(LAB, tmp_path / "before")
    faults = bgp_session_down(LAB, "leaf-r1-a", "swp4")
    synthetic.write_snapshot(LAB, tmp_path / "after", faults, collected_at="2026-11-30T08:00:00Z")
    changes = {(c.device, c.path, str(c.before), str(c.after)) for c in
               diff_sides(Side("b", tmp_path / "before"), Side("a", tmp_path / "after")).changes}  # fmt: skip
    assert ("leaf-r1-a", "bgp.neighbors.10.128.0.6.state", "established", "active") in changes
    assert ("spine-02", "bgp.neighbors.10.128.0.7.state", "established", "active") in changes
    assert ("leaf-r1-a", "bgp.ecmp.paths", "2", "1") in changes


def test_a_rendered_configuration_is_judged_on_its_configured_sessions_only(tmp_path: Path) -> None:
    """check --intended: no session state, no routes; a fabric link without a neighbour still fails."""

    def as_config(doc: dict[str, Any]) -> None:
        doc["source"] = "intended"
        doc["bgp"].pop("ecmp", None)
        for body in doc["bgp"]["neighbors"].values():
            for key in ("state", "admin_down", "prefixes_received"):
                body.pop(key, None)

    edits = {d.name: as_config for d in LAB.devices if d.role != "host"}
    out = run_edited(tmp_path, edits)
    assert [r for r in out.results if r.status in (Status.FAIL, Status.ERROR)] == []
    assert one(out, "ecmp-fanout", "leaf-r0-a", "ecmp").status is Status.SKIPPED

    def drop(doc: dict[str, Any]) -> None:
        as_config(doc)
        del doc["bgp"]["neighbors"]["10.128.0.2"]

    out = run_edited(tmp_path / "2", {**edits, "leaf-r0-a": drop})
    assert table(out, Status.FAIL) == {("bgp-sessions", "leaf-r0-a", "sessions")}


def test_partner_reads_addresses_as_ipaddress_does() -> None:
    """The /31 partner is read without address objects (200,000 sessions at 100k GPUs), and says
    what ``ipaddress`` says for every string: valid quads, leading zeros, out-of-range and
    non-ASCII digits, spaces, names, IPv6, wrong octet counts."""
    import ipaddress
    import itertools

    from fabline.checks.fabric.underlay import _partner

    def reference(text: str) -> str | None:
        try:
            ip = ipaddress.IPv4Address(text)
        except ValueError:
            return None
        return str(ipaddress.IPv4Address(int(ip) ^ 1))

    octets = ["0", "1", "00", "01", "9", "10", "99", "099", "100", "199", "200", "249", "250", "255", "256",
              "260", "300", "1000", "", "x", "\u0663", "\uff11", " 1", "1 ", "+1", "1_0", "-1"]  # fmt: skip
    texts = [".".join(q) for q in itertools.product(octets, ["0", "255", "01"], ["7"], octets)]
    texts += ["10.0.0.1\n", "1.1.1", "1.1.1.1.1", "", "...", "swp51", "fe80::1", "1.1.1.1%eth0", "Ethernet0"]
    assert [_partner(t) for t in texts] == [reference(t) for t in texts]
    assert _partner("10.128.0.1") == "10.128.0.0" and _partner("10.128.0.254") == "10.128.0.255"


def test_bgp_view_is_plain_tuples_that_become_the_named_view() -> None:
    """What a switch's collect keeps is plain tuples (a worker pickles it ten times faster); as_view
    makes the same Session objects of it, names as text."""
    import pickle

    from fabline.checks import DeviceContext
    from fabline.checks.fabric.underlay import BgpView, Session, as_view, bgp_view
    from fabline.state import Invalid

    neighbors = {
        "10.0.0.1": {"remote_asn": 65001, "state": "established", "description": "spine-1", "hostname": "s1"},
        "swp1": {"remote_asn": "x", "state": Invalid("bgp.neighbors.swp1.state", "bad"), "admin_down": True,
                 "hostname": Invalid("bgp.neighbors.swp1.hostname", "bad")},
        "skip": "not a mapping",
    }  # fmt: skip
    ctx = DeviceContext("leaf1", "sonic", "leaf", (), {}, {"bgp": {"asn": 65000, "neighbors": neighbors}}, {})  # type: ignore[typeddict-item]
    plain = bgp_view(ctx)
    assert type(plain) is tuple and all(type(s) is tuple for s in plain[2])
    assert pickle.loads(pickle.dumps(plain)) == plain
    view = as_view(plain)
    assert type(view) is BgpView and (view.has_bgp, view.asn, view.ecmp, view.intended) == (
        True,
        65000,
        None,
        False,
    )
    assert view.sessions == (
        Session("10.0.0.1", 65001, "established", False, ("spine-1", "s1")),
        Session("swp1", None, "bgp.neighbors.swp1.state is invalid (bad)", True, ("bgp.neighbors.swp1.hostname is invalid (bad)",)),
    )  # fmt: skip
    assert all(type(s) is Session for s in view.sessions)
    assert type(view.sessions[1].names[0]) is str and view.sessions[0].key == "10.0.0.1"


def test_a_forbidden_bgp_value_is_an_error_naming_it_not_zero_sessions(tmp_path: Path) -> None:
    """The schema replaces the whole ``bgp.neighbors`` by an Invalid marker: no check reads it as
    "no sessions" (a critical fail on a corrupt value), each says the field is invalid."""

    def corrupt(doc: dict[str, Any]) -> None:
        next(iter(doc["bgp"]["neighbors"].values()))["state"] = 7  # not a session state

    out = run_edited(tmp_path, {"leaf-r0-a": corrupt})
    for check in ("bgp-sessions", "bgp-asn", "ecmp-fanout"):
        result = one(out, check, "leaf-r0-a", "bgp")
        assert result.status is Status.ERROR
        assert result.message.startswith("leaf-r0-a: bgp.neighbors is invalid (7 is not one of")
    assert table(out, Status.FAIL, "bgp-sessions") <= {("bgp-sessions", "spine-01", "sessions"),
                                                       ("bgp-sessions", "spine-02", "sessions")}  # fmt: skip
