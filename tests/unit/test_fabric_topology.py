"""Rail cabling, the cabling plan, the Clos shape and oversubscription on synthetic fabrics."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fabline import synthetic
from fabline.checks.fabric.cabling import load_cabling_plan
from fabline.errors import ConfigError
from fabline.results import MAX_ITEMS, Status, more_items
from fabline.synthetic import DeviceSpec, Fabric, Fault
from tests.conftest import REPO_ROOT
from tests.helpers import FakeDevice
from tests.unit.test_fabric_support import devices_of, one, run_fabric, table

LAB = synthetic.lab_fabric()
FIXTURES = REPO_ROOT / "tests" / "fixtures" / "fabric"
PLAN = FIXTURES / "lab-plan.csv"


# ------------------------------------------------------------------------------ rail cabling


def test_swapped_nics_fail_rail_cabling_at_the_exact_ports_and_nothing_else(tmp_path: Path) -> None:
    swapped = synthetic.swap_ports(LAB, "gpu-001", "eth0", "eth1")
    out = run_fabric(tmp_path, swapped)
    assert table(out, Status.FAIL) == {
        ("rail-cabling", "gpu-001", "eth0"),
        ("rail-cabling", "gpu-001", "eth1"),
        ("rail-cabling", "leaf-r0-a", "Ethernet0"),
        ("rail-cabling", "leaf-r1-a", "swp1"),
    }  # every link check still passes: that is why this mistake survives link tests
    assert table(out, Status.ERROR) == set()
    r = one(out, "rail-cabling", "gpu-001", "eth0")
    assert (
        r.message == "gpu-001 eth0 <-> leaf-r1-a swp1: gpu-001 eth0 is rail 0 but leaf-r1-a is a rail-1 leaf"
    )
    assert r.expected == {"leaf_rail": 0}
    leaf = one(out, "rail-cabling", "leaf-r1-a", "swp1")
    assert leaf.actual["peer_device"] == "gpu-001" and leaf.actual["peer_interface"] == "eth0"
    assert leaf.expected == {"host_rail": 1}


def test_rail_interface_without_any_lldp_is_an_error(tmp_path: Path) -> None:
    faults = [Fault("gpu-002", "lldp", None, "eth2"), Fault("leaf-r2-a", "lldp", None, "Ethernet2/1")]
    out = run_fabric(tmp_path, LAB, faults, checks=["rail-cabling"])
    assert table(out, Status.ERROR) == {("rail-cabling", "gpu-002", "eth2")}
    assert table(out, Status.FAIL) == set()


def test_rail_checked_from_the_leaf_when_the_host_is_unreadable(tmp_path: Path) -> None:
    swapped = synthetic.swap_ports(LAB, "gpu-002", "eth2", "eth3")
    out = run_fabric(tmp_path, swapped, drop=["gpu-002"], checks=["rail-cabling"])
    assert table(out, Status.FAIL) == {
        ("rail-cabling", "leaf-r2-a", "Ethernet2/1"),
        ("rail-cabling", "leaf-r3-a", "Ethernet1/2"),
    }


def test_leaf_without_rail_variable_and_host_port_outside_rails(tmp_path: Path) -> None:
    devices = [
        d if d.name != "leaf-r0-a" else type(d)(d.name, d.platform, d.role, (), {}) for d in devices_of(LAB)
    ]
    out = run_fabric(tmp_path, LAB, checks=["rail-cabling"], devices=devices)
    assert table(out, Status.ERROR) == {("rail-cabling", n, p) for n, p in
                                        [("gpu-001", "eth0"), ("gpu-002", "eth0"), ("leaf-r0-a", "Ethernet0"), ("leaf-r0-a", "Ethernet8")]}  # fmt: skip
    assert "has no 'rail' inventory variable" in one(out, "rail-cabling", "gpu-001", "eth0").message
    devices = devices_of(LAB, gpu_001={"rail_interfaces": ["eth1", "eth0", "eth2", "eth3"]})
    out = run_fabric(tmp_path / "b", LAB, checks=["rail-cabling"], devices=devices)
    assert table(out, Status.FAIL) == {("rail-cabling", d, p) for d, p in
                                       [("gpu-001", "eth0"), ("gpu-001", "eth1"), ("leaf-r0-a", "Ethernet0"), ("leaf-r1-a", "swp1")]}  # fmt: skip


def _with_extra_ports(fabric: Fabric, extra: list[tuple[str, str, str, str]], ports: int = 6) -> Fabric:
    devices = [
        DeviceSpec(
            d.name,
            d.role,
            d.platform,
            d.rail,
            d.plane,
            ports if d.role != "host" else d.ports,
            d.rail_interfaces,
        )
        for d in fabric.devices
    ]
    return Fabric(devices, [*fabric.links, *extra])


def test_host_cabled_to_a_spine(tmp_path: Path) -> None:
    f = synthetic.remove_link(LAB, "gpu-002", "eth3")
    f = _with_extra_ports(f, [("gpu-002", "eth3", "spine-02", "Ethernet6/1")], ports=8)
    out = run_fabric(tmp_path, f, checks=["rail-cabling"])
    assert table(out, Status.FAIL) == {
        ("rail-cabling", "gpu-002", "eth3"),
        ("rail-cabling", "spine-02", "Ethernet6/1"),
    }
    assert "cabled to a spine, not to a leaf" in one(out, "rail-cabling", "spine-02", "Ethernet6/1").message


# ------------------------------------------------------------------------------ cabling plan


def test_cabling_plan_clean_and_without_plan(tmp_path: Path) -> None:
    out = run_fabric(tmp_path, LAB, checks=["cabling-plan"], options={"cabling_plan": PLAN})
    assert table(out, Status.FAIL) == set() and table(out, Status.ERROR) == set()
    assert len(table(out, Status.PASS)) == 32
    out = run_fabric(tmp_path / "none", LAB, checks=["cabling-plan"])
    assert [(r.status, r.device) for r in out.results] == [(Status.SKIPPED, "(fabric)")]


def test_cabling_plan_finds_swapped_missing_and_extra_links(tmp_path: Path) -> None:
    f = synthetic.swap_ports(LAB, "gpu-001", "eth0", "eth1")
    f = synthetic.remove_link(f, "leaf-r3-a", "Ethernet1/4")
    f = _with_extra_ports(f, [("leaf-r0-a", "Ethernet32", "spine-01", "Ethernet5/1")], ports=8)
    out = run_fabric(tmp_path, f, checks=["cabling-plan"], options={"cabling_plan": PLAN})
    assert table(out, Status.FAIL) == {
        ("cabling-plan", "gpu-001", "eth0"), ("cabling-plan", "gpu-001", "eth1"),
        ("cabling-plan", "leaf-r0-a", "Ethernet0"), ("cabling-plan", "leaf-r1-a", "swp1"),
        ("cabling-plan", "leaf-r3-a", "Ethernet1/4"), ("cabling-plan", "spine-02", "Ethernet4/1"),
        ("cabling-plan", "leaf-r0-a", "Ethernet32"), ("cabling-plan", "spine-01", "Ethernet5/1"),
    }  # fmt: skip
    r = one(out, "cabling-plan", "gpu-001", "eth0")
    assert r.message == "gpu-001 eth0 is cabled to leaf-r1-a swp1; plan line 3 says leaf-r0-a Ethernet0"
    assert "port down; plan line" in one(out, "cabling-plan", "leaf-r3-a", "Ethernet1/4").message
    assert "link not in the cabling plan" in one(out, "cabling-plan", "spine-01", "Ethernet5/1").message


def test_cabling_plan_rail_and_plane_columns_are_checked_against_the_inventory(tmp_path: Path) -> None:
    text = PLAN.read_text()
    # Line 3 (gpu-001 eth0 <-> leaf-r0-a Ethernet0, wired as planned) written down as rail 1, and
    # line 5 (spine-01 <-> leaf-r0-a) as plane 2: the plan and the inventory disagree.
    lines = text.splitlines()
    assert lines[2] == "leaf-r0-a,Ethernet0,gpu-001,eth0,0,0" and lines[4].startswith(
        "spine-01,Ethernet1/1,leaf-r0-a,"
    )
    lines[2] = "leaf-r0-a,Ethernet0,gpu-001,eth0,1,0"
    lines[4] = lines[4].rsplit(",", 1)[0] + ",2"
    plan = tmp_path / "plan.csv"
    plan.write_text("\n".join(lines) + "\n")
    devices = devices_of(LAB, spine_01={"plane": 0})  # a spine serving plane 0 only
    out = run_fabric(tmp_path, LAB, checks=["cabling-plan"], options={"cabling_plan": plan}, devices=devices)
    assert table(out, Status.FAIL) == {
        ("cabling-plan", "leaf-r0-a", "Ethernet0"), ("cabling-plan", "gpu-001", "eth0"),
        ("cabling-plan", "leaf-r0-a", "Ethernet16"), ("cabling-plan", "spine-01", "Ethernet1/1"),
    }  # fmt: skip
    assert one(out, "cabling-plan", "leaf-r0-a", "Ethernet0").message == (
        "leaf-r0-a Ethernet0: plan line 3 says rail 1; the inventory's rail of leaf-r0-a is 0"
    )
    assert one(out, "cabling-plan", "gpu-001", "eth0").message == (
        "gpu-001 eth0: plan line 3 says rail 1; gpu-001 eth0 is rail_interfaces[0]"
    )
    assert "plan line 5 says plane 2; the inventory's plane of spine-01 is 0" in (
        one(out, "cabling-plan", "spine-01", "Ethernet1/1").message
    )
    assert len(table(out, Status.PASS)) == 28  # the other 14 links, both ends, as before


def test_cabling_plan_device_not_in_inventory(tmp_path: Path) -> None:
    plan = tmp_path / "plan.csv"
    plan.write_text(
        "device,port,peer_device,peer_port\ngpu-001,eth0,leaf-r0-a,Ethernet0\ngpu-777,eth0,leaf-r0-a,Ethernet9\n"
    )
    out = run_fabric(tmp_path, LAB, checks=["cabling-plan"], options={"cabling_plan": plan})
    errs = [r for r in out.results if r.status is Status.ERROR]
    assert [(r.device, r.message) for r in errs] == [
        ("(fabric)", "plan line 3: gpu-777 is not in the (selected) inventory")
    ]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("bad-rail.csv", "bad-rail.csv:2: rail must be an integer, got 'zero'"),
        ("bad-duplicate-port.csv", "bad-duplicate-port.csv:3: leaf-r0-a Ethernet0 is already cabled on line 2"),
        ("bad-column.csv", "bad-column.csv:1: unknown column 'rack' (columns: device, port, peer_device, peer_port, rail, plane)"),
        ("bad-short-row.csv", "bad-short-row.csv:3: expected 6 fields, got 3"),
        ("bad-empty-port.csv", "bad-empty-port.csv:2: port is empty"),
    ],
)  # fmt: skip
def test_bad_cabling_plan_is_a_config_error_naming_file_and_line(name: str, message: str) -> None:
    with pytest.raises(ConfigError) as exc:
        load_cabling_plan(FIXTURES / name)
    assert str(exc.value) == f"{FIXTURES / name}".replace(name, "") + message


def test_cabling_plan_parses_any_column_order(tmp_path: Path) -> None:
    plan = load_cabling_plan(PLAN)
    assert len(plan) == 16
    assert (plan[0].device, plan[0].port, plan[0].peer_device, plan[0].peer_port, plan[0].rail, plan[0].line) == (
        "gpu-001", "eth0", "leaf-r0-a", "Ethernet0", 0, 3)  # fmt: skip
    empty = tmp_path / "empty.csv"
    empty.write_text("# nothing\n")
    with pytest.raises(ConfigError, match="cabling plan is empty"):
        load_cabling_plan(empty)


def test_bad_plan_in_a_run_is_an_error_result_not_a_crash(tmp_path: Path) -> None:
    out = run_fabric(
        tmp_path, LAB, checks=["cabling-plan"], options={"cabling_plan": FIXTURES / "bad-rail.csv"}
    )
    (r,) = out.results
    assert r.status is Status.ERROR and "bad-rail.csv:2: rail must be an integer" in r.message


# ------------------------------------------------------------------------------ Clos shape, oversubscription


def test_missing_uplink_breaks_clos_shape_and_oversubscription(tmp_path: Path) -> None:
    f = synthetic.remove_link(LAB, "leaf-r0-a", "Ethernet16")  # the uplink to spine-01
    out = run_fabric(tmp_path, f, checks=["clos-shape", "leaf-oversubscription"])
    assert table(out, Status.FAIL) == {
        ("clos-shape", "leaf-r0-a", "uplinks"),
        ("clos-shape", "spine-01", "downlinks"),
        ("leaf-oversubscription", "leaf-r0-a", "bandwidth"),
    }
    assert one(out, "clos-shape", "leaf-r0-a", "uplinks").message.startswith(
        "leaf-r0-a uplinks: no link to spine-01"
    )
    assert "no link to leaf-r0-a" in one(out, "clos-shape", "spine-01", "downlinks").message
    over = one(out, "leaf-oversubscription", "leaf-r0-a", "bandwidth")
    assert over.actual == {"down_gbps": 800.0, "up_gbps": 400.0, "ratio": 2.0}
    assert over.message == "leaf-r0-a: 800G down vs 400G up (2.00:1), above 1:1"
    base = "rules:\n  - {id: leaf-oversubscription, params: {max_ratio: 2}}\n"
    out = run_fabric(tmp_path / "t", f, checks=["leaf-oversubscription"], baseline=base)
    assert table(out, Status.FAIL) == set()


def test_down_uplink_shows_in_oversubscription(tmp_path: Path) -> None:
    out = run_fabric(
        tmp_path, LAB, [Fault("leaf-r2-a", "oper_up", False, "Ethernet3/1")], checks=["leaf-oversubscription"]
    )
    assert table(out, Status.FAIL) == {("leaf-oversubscription", "leaf-r2-a", "bandwidth")}


def test_unequal_links_per_pair_and_slow_link_are_asymmetric(tmp_path: Path) -> None:
    fabric = synthetic.rail_fabric(1024)  # 32 leaves x 16 spines, 2 links per pair
    leaf = "leaf-r0-000"
    pair = [link for link in fabric.links if link[0] == leaf and link[2] == "spine-003"]
    assert len(pair) == 2
    out = run_fabric(tmp_path, synthetic.remove_link(fabric, leaf, pair[0][1]), checks=["clos-shape"])
    assert table(out, Status.FAIL) == {
        ("clos-shape", leaf, "uplinks"),
        ("clos-shape", "spine-003", "downlinks"),
    }
    assert "1 link(s) / 400G to spine-003" in one(out, "clos-shape", leaf, "uplinks").message
    out = run_fabric(
        tmp_path / "s", fabric, [Fault(leaf, "speed_gbps", 200, pair[1][1])], checks=["clos-shape"]
    )
    assert table(out, Status.FAIL) == {
        ("clos-shape", leaf, "uplinks"),
        ("clos-shape", "spine-003", "downlinks"),
    }


def test_leaf_leaf_link_fails_at_both_ends(tmp_path: Path) -> None:
    f = _with_extra_ports(LAB, [("leaf-r0-a", "Ethernet32", "leaf-r1-a", "swp5")])
    out = run_fabric(tmp_path, f, checks=["clos-shape"])
    assert table(out, Status.FAIL) == {
        ("clos-shape", "leaf-r0-a", "Ethernet32"),
        ("clos-shape", "leaf-r1-a", "swp5"),
    }
    assert "leaf-leaf link on the compute fabric" in one(out, "clos-shape", "leaf-r1-a", "swp5").message


def test_planes_leaf_reaches_only_its_planes_spines(tmp_path: Path) -> None:
    # two planes: spine-01 serves plane 0, spine-02 plane 1; every leaf (plane 0) is cabled to both
    devices = devices_of(LAB, spine_01={"plane": 0}, spine_02={"plane": 1})
    out = run_fabric(tmp_path, LAB, checks=["clos-shape"], devices=devices)
    fails = table(out, Status.FAIL)
    assert fails == {("clos-shape", f"leaf-r{r}-a", "uplinks") for r in range(4)}
    assert "1 link(s) to spine-02 of plane 1" in one(out, "clos-shape", "leaf-r2-a", "uplinks").message


def test_unreadable_leaf_is_error_and_spines_still_see_it(tmp_path: Path) -> None:
    out = run_fabric(tmp_path, LAB, drop=["leaf-r1-a"], checks=["clos-shape", "leaf-oversubscription"])
    assert one(out, "clos-shape", "leaf-r1-a", "uplinks").status is Status.ERROR
    assert one(out, "clos-shape", "spine-01", "downlinks").status is Status.PASS  # LLDP of the spines
    assert not [r for r in out.results if r.check == "leaf-oversubscription" and r.device == "leaf-r1-a"]


def test_cli_rejects_a_malformed_plan_before_checking(tmp_path: Path) -> None:
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "fabline", "check", "-i", "inventory/lab.yml", "--snapshot", "examples/lab-snapshot",
         "-q", "--cabling", str(FIXTURES / "bad-short-row.csv")],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 2
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in proc.stderr
    assert lines[0].endswith("bad-short-row.csv:3: expected 6 fields, got 3")
    good = subprocess.run(
        [sys.executable, "-m", "fabline", "check", "-i", "inventory/lab.yml", "--snapshot", "examples/lab-snapshot",
         "-q", "--cabling", str(PLAN), "-o", str(tmp_path), "-f", "json"],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert good.returncode == 4, good.stderr  # the planted faults, and no cabling finding
    import json

    doc = json.loads((tmp_path / "report.json").read_text())
    assert [r for r in doc["results"] if r["check"] == "cabling-plan"] == []  # no finding
    assert sum(doc["passes"]["cabling-plan"].values()) == 32


def _wide_plane(n_leaves: int) -> Fabric:
    """One plane: two spines and ``n_leaves`` leaves, each with one link to each spine."""
    spines = [DeviceSpec(f"spine-{s}", "spine", "sonic", plane=0, ports=n_leaves) for s in range(2)]
    leaves = [DeviceSpec(f"leaf-{k:04d}", "leaf", "sonic", rail=0, plane=0, ports=2) for k in range(n_leaves)]
    links = [
        (leaf.name, synthetic.port_name("sonic", s), spine.name, synthetic.port_name("sonic", k))
        for k, leaf in enumerate(leaves)
        for s, spine in enumerate(spines)
    ]
    return Fabric([*spines, *leaves], links, spine_planes=True)


def test_thousands_of_missing_links_give_bounded_results(tmp_path: Path) -> None:
    # spine-1 lost every link: 2,000 leaves miss it, and it misses 2,000 leaves
    wide = _wide_plane(2000)
    cut = Fabric(wide.devices, [link for link in wide.links if link[2] != "spine-1"], spine_planes=True)
    devices = devices_of(cut, spine_0={"plane": 0}, spine_1={"plane": 0})
    out = run_fabric(tmp_path, cut, checks=["clos-shape"], devices=devices)
    spine = one(out, "clos-shape", "spine-1", "downlinks")
    assert spine.status is Status.FAIL
    assert spine.actual[:2] == ["no link to leaf-0000", "no link to leaf-0001"]
    assert spine.actual[-1] == more_items(2000, MAX_ITEMS - 1) and len(spine.actual) == MAX_ITEMS
    assert spine.message.startswith("spine-1 downlinks: no link to leaf-0000; no link to leaf-0001;")
    assert "; and 1992 more" in spine.message
    assert len(table(out, Status.FAIL)) == 2001  # every leaf, and the spine
    assert max(len(json.dumps(r.to_dict())) for r in out.results) < 8_000


# ------------------------------------------------------------------------------ planes inferred from LLDP


def _no_planes(fabric: Fabric) -> list[FakeDevice]:
    return [FakeDevice(d.name, d.platform, d.role, (), {k: v for k, v in d.vars.items() if k != "plane"})
            for d in devices_of(fabric)]  # fmt: skip


def test_planes_are_inferred_from_lldp_when_the_inventory_has_no_plane_variables(tmp_path: Path) -> None:
    # 2 rails x 2 planes: 4 isolated pods of 2 leaves and 2 spines each
    fabric = synthetic.plane_fabric(8, rails=2, planes_per_rail=2, radix=4)
    inv = synthetic.inventory(fabric, planes=False)
    assert "plane" not in json.dumps(inv)
    out = run_fabric(tmp_path, fabric, checks=["clos-shape"], devices=_no_planes(fabric))
    assert table(out, Status.FAIL) == set() and table(out, Status.ERROR) == set()
    assert len(table(out, Status.PASS)) == 16  # 8 leaves and 8 spines, each judged in its own plane
    (note,) = [w for w in out.warnings if w.startswith("clos-shape")]
    assert "8 leaves and 8 spines have no 'plane' inventory variable; inferred 4 planes from LLDP" in note
    assert "4 of 2 leaves x 2 spines" in note and "Set 'plane' on every leaf and spine" in note
    # with the variables, the same fabric passes the same way and nothing is inferred
    declared = run_fabric(tmp_path / "declared", fabric, checks=["clos-shape"])
    assert len(table(declared, Status.PASS)) == 16 and not declared.warnings


def test_inferred_planes_still_find_a_missing_link_and_an_unconnected_leaf(tmp_path: Path) -> None:
    fabric = synthetic.plane_fabric(8, rails=2, planes_per_rail=2, radix=4)
    leaf, port, spine, _ = next(link for link in fabric.links if link[0] == "leaf-p01-000")
    cut = synthetic.remove_link(fabric, leaf, port)
    out = run_fabric(tmp_path, cut, checks=["clos-shape"], devices=_no_planes(fabric))
    assert table(out, Status.FAIL) == {("clos-shape", leaf, "uplinks"), ("clos-shape", spine, "downlinks")}
    assert one(out, "clos-shape", leaf, "uplinks").actual == [f"no link to {spine}"]
    # a leaf with no uplink at all: one failure naming the variable, not one per spine of the fabric
    lone = Fabric(
        cut.devices, [link for link in fabric.links if link[0] != "leaf-p02-001" or link[2].startswith("gpu")]
    )
    out = run_fabric(tmp_path / "lone", lone, checks=["clos-shape"], devices=_no_planes(fabric))
    r = one(out, "clos-shape", "leaf-p02-001", "uplinks")
    assert r.status is Status.FAIL and "set its 'plane' variable" in r.message and len(r.actual) == 1
    assert table(out, Status.FAIL) == {("clos-shape", "leaf-p02-001", "uplinks")}


def test_spines_take_the_plane_declared_in_their_component(tmp_path: Path) -> None:
    # leaves declare their planes, spines do not: each spine serves its component's plane only
    fabric = synthetic.plane_fabric(8, rails=2, planes_per_rail=2, radix=4)
    devices = [
        d if d.role != "spine" else FakeDevice(d.name, d.platform, d.role, (), {}) for d in devices_of(fabric)
    ]
    out = run_fabric(tmp_path, fabric, checks=["clos-shape"], devices=devices)
    assert table(out, Status.FAIL) == set() and len(table(out, Status.PASS)) == 16
    assert not [w for w in out.warnings if w.startswith("clos-shape")]  # nothing had to be inferred


def test_a_leaf_without_plane_takes_its_spines_plane_when_planes_are_cross_cabled(tmp_path: Path) -> None:
    """A miscabled uplink joins planes 0 and 1 into one LLDP component: a leaf without ``plane``
    there is judged against the one plane its spines declare, not against every spine."""
    fabric = synthetic.plane_fabric(8, rails=1, planes_per_rail=2, radix=4)
    moved = ("leaf-p00-000", "Ethernet24", "spine-p01-000", "Ethernet16")  # was to spine-p00-001
    cross = Fabric(fabric.devices, [moved if link[:2] == moved[:2] else link for link in fabric.links])
    devices = []
    for d in fabric.devices:
        v: dict[str, object] = {} if d.plane is None or d.name == "leaf-p00-001" else {"plane": d.plane}
        if d.rail is not None:
            v["rail"] = d.rail
        if d.rail_interfaces:
            v["rail_interfaces"] = list(d.rail_interfaces)
        devices.append(FakeDevice(d.name, d.platform, d.role, (), v))
    out = run_fabric(tmp_path, cross, checks=["clos-shape"], devices=devices)
    assert one(out, "clos-shape", "leaf-p00-001", "uplinks").status is Status.PASS
    bad = one(out, "clos-shape", "leaf-p00-000", "uplinks")
    assert bad.status is Status.FAIL
    assert bad.actual == ["no link to spine-p00-001", "1 link(s) to spine-p01-000 of plane 1"]
