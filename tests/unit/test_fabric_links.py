"""Link checks on small synthetic fabrics: clean twins, each property at both ends, ambiguous LLDP."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabline import synthetic
from fabline.checks.linkgraph import canonical_port
from fabline.engine import RunOutcome
from fabline.results import Result, SkipBlock, Status, block_count
from fabline.synthetic import Fault
from tests.unit.test_fabric_support import one, run_fabric, table

LAB = synthetic.lab_fabric()
PROPERTY_CHECKS = [
    "link-mtu",
    "link-speed",
    "link-fec",
    "link-autoneg",
    "link-trust",
    "link-pfc",
    "link-dscp-map",
]


@pytest.mark.parametrize(
    "fabric",
    [LAB, synthetic.rail_fabric(1024), synthetic.rail_fabric(256, leaf_platforms=("cumulus", "arista_eos"),
                                                               spine_platforms=("cisco_nxos", "sonic"))],
    ids=["lab", "rail-1024", "rail-256-mixed"],
)  # fmt: skip
def test_clean_twins_have_no_failures_and_no_errors(tmp_path: Path, fabric: synthetic.Fabric) -> None:
    out = run_fabric(tmp_path, fabric)
    bad = [r for r in out.results if r.status in (Status.FAIL, Status.ERROR)]
    assert bad == []
    passes = table(out, Status.PASS)
    assert {c for c, _, _ in passes} >= {"link-lldp", *PROPERTY_CHECKS, "rail-cabling", "clos-shape"}


# fault(s), check, the two ends that must fail (and nothing else in that check)
PROPERTY_CASES = [
    ([Fault("leaf-r1-a", "speed_gbps", 200, "swp3")], "link-speed", ("leaf-r1-a", "swp3"), ("spine-01", "Ethernet2/1")),
    ([Fault("leaf-r3-a", "fec", "fc", "Ethernet1/3")], "link-fec", ("leaf-r3-a", "Ethernet1/3"), ("spine-01", "Ethernet4/1")),
    ([Fault("gpu-001", "fec", "none", "eth0")], "link-fec", ("gpu-001", "eth0"), ("leaf-r0-a", "Ethernet0")),
    ([Fault("gpu-002", "autoneg", True, "eth3")], "link-autoneg", ("gpu-002", "eth3"), ("leaf-r3-a", "Ethernet1/2")),
    ([Fault("leaf-r2-a", "trust", "pcp", "Ethernet1/1")], "link-trust", ("leaf-r2-a", "Ethernet1/1"), ("gpu-001", "eth2")),
    ([Fault("leaf-r1-a", "pfc_priorities", [3, 4], "swp1")], "link-pfc", ("leaf-r1-a", "swp1"), ("gpu-001", "eth1")),
    ([Fault("spine-02", "pfc_priorities", [], "Ethernet1/1")], "link-pfc", ("spine-02", "Ethernet1/1"), ("leaf-r0-a", "Ethernet24")),
    ([Fault("leaf-r2-a", "dscp_to_priority.26", 0, "Ethernet2/1")], "link-dscp-map", ("leaf-r2-a", "Ethernet2/1"), ("gpu-002", "eth2")),
    # host L3 9216 + 18 > SONiC frame 9100
    ([Fault("gpu-001", "mtu", 9216, "eth0")], "link-mtu", ("gpu-001", "eth0"), ("leaf-r0-a", "Ethernet0")),
    # host 9000 + 18 > NX-OS frame 9000
    ([Fault("leaf-r3-a", "mtu", 9000, "Ethernet1/1")], "link-mtu", ("leaf-r3-a", "Ethernet1/1"), ("gpu-001", "eth3")),
    # SONiC frame 9000 next to EOS: below the 9018-byte host frame
    ([Fault("leaf-r0-a", "mtu", 9000, "Ethernet16")], "link-mtu", ("leaf-r0-a", "Ethernet16"), ("spine-01", "Ethernet1/1")),
]  # fmt: skip


@pytest.mark.parametrize(("faults", "check", "end_a", "end_b"), PROPERTY_CASES)
def test_property_mismatch_is_reported_at_both_ends(
    tmp_path: Path, faults: list[Fault], check: str, end_a: tuple[str, str], end_b: tuple[str, str]
) -> None:
    out = run_fabric(tmp_path, LAB, faults, checks=[check])
    assert table(out, Status.FAIL) == {(check, *end_a), (check, *end_b)}
    assert table(out, Status.ERROR) == set()
    for (dev, port), (peer, peer_port) in ((end_a, end_b), (end_b, end_a)):
        r = one(out, check, dev, port)
        assert r.message.startswith(f"{dev} {port} <-> {peer} {peer_port}: ")
        assert r.actual["device"] == dev and r.actual["interface"] == port
        assert r.expected["peer_device"] == peer and r.expected["peer_interface"] == peer_port


def test_mtu_semantics_host_below_switch_frame_passes(tmp_path: Path) -> None:
    """A host at 1500 fits every switch port (the host-mtu rule reports it, not the link)."""
    out = run_fabric(tmp_path, LAB, [Fault("gpu-002", "mtu", 1500, "eth1")], checks=["link-mtu"])
    assert table(out, Status.FAIL) == set()
    assert one(out, "link-mtu", "gpu-002", "eth1").status is Status.PASS


def test_mtu_same_platform_switches_must_be_equal_and_vlan_overhead(tmp_path: Path) -> None:
    fabric = synthetic.rail_fabric(64, radix=8)  # all SONiC
    leaf = next(d for d in fabric.devices if d.role == "leaf")
    link = next(link for link in fabric.links if link[0] == leaf.name and link[2].startswith("spine"))
    out = run_fabric(tmp_path, fabric, [Fault(leaf.name, "mtu", 9216, link[1])], checks=["link-mtu"])
    assert table(out, Status.FAIL) == {("link-mtu", leaf.name, link[1]), ("link-mtu", link[2], link[3])}
    assert "same platform: must be equal" in one(out, "link-mtu", leaf.name, link[1]).message
    # 9000 + 14 + 4 + 4 (VLAN tag) = 9022 still fits SONiC's 9100; host 9080 + 22 does not
    host_link = next(link for link in fabric.links if link[0].startswith("gpu"))
    tagged = "rules:\n  - {id: link-mtu, params: {vlan_tagged: true}}\n"
    out = run_fabric(tmp_path / "v", fabric, [Fault(host_link[0], "mtu", 9080, host_link[1])],
                     checks=["link-mtu"], baseline=tagged)  # fmt: skip
    r = one(out, "link-mtu", host_link[0], host_link[1])
    assert r.status is Status.FAIL and "9102" in r.message
    out = run_fabric(
        tmp_path / "u", fabric, [Fault(host_link[0], "mtu", 9080, host_link[1])], checks=["link-mtu"]
    )
    assert one(out, "link-mtu", host_link[0], host_link[1]).status is Status.PASS


def test_eos_l2_mtu_is_the_frame_size(tmp_path: Path) -> None:
    faults = [Fault("leaf-r2-a", "l2_mtu", 9000, "Ethernet1/1")]  # EOS mtu 9214 stays, frame limit 9000
    out = run_fabric(tmp_path, LAB, faults, checks=["link-mtu"])
    assert table(out, Status.FAIL) == {
        ("link-mtu", "leaf-r2-a", "Ethernet1/1"),
        ("link-mtu", "gpu-001", "eth2"),
    }


def test_dscp_map_compares_only_dscps_both_ends_map(tmp_path: Path) -> None:
    # EOS records only explicitly mapped DSCPs: a partial map that agrees passes
    partial = {"26": 3, "48": 6}
    out = run_fabric(tmp_path, LAB, [Fault("leaf-r2-a", "dscp_to_priority", partial, "Ethernet1/1")],
                     checks=["link-dscp-map"])  # fmt: skip
    assert table(out, Status.FAIL) == set()
    out = run_fabric(tmp_path / "b", LAB, [Fault("leaf-r2-a", "dscp_to_priority", {"26": 0}, "Ethernet1/1")],
                     checks=["link-dscp-map"])  # fmt: skip
    r = one(out, "link-dscp-map", "gpu-001", "eth2")
    assert r.status is Status.FAIL
    assert r.message.endswith("DSCP 26 -> 3 here, 0 at the peer")


def test_missing_value_at_one_end_is_an_error_naming_that_end(tmp_path: Path) -> None:
    out = run_fabric(tmp_path, LAB, [Fault("leaf-r1-a", "fec", None, "swp2")], checks=["link-fec"])
    assert table(out, Status.ERROR) == {("link-fec", "leaf-r1-a", "swp2"), ("link-fec", "gpu-002", "eth1")}
    assert one(out, "link-fec", "gpu-002", "eth1").message == "fec not collected at the peer"
    assert one(out, "link-fec", "leaf-r1-a", "swp2").message == "fec not collected here"


# ------------------------------------------------------------------------------ ambiguous LLDP


def test_no_lldp_at_either_end_of_an_up_port(tmp_path: Path) -> None:
    faults = [Fault("leaf-r0-a", "lldp", None, "Ethernet0"), Fault("gpu-001", "lldp", None, "eth0")]
    out = run_fabric(tmp_path, LAB, faults, checks=["link-lldp", "link-fec"])
    assert table(out, Status.FAIL) == {
        ("link-lldp", "leaf-r0-a", "Ethernet0"),
        ("link-lldp", "gpu-001", "eth0"),
    }
    assert "no LLDP neighbour on an up port" in one(out, "link-lldp", "gpu-001", "eth0").message
    # nothing to pair: the property checks say nothing about these ports (and never pass them)
    assert not [r for r in out.results if r.check == "link-fec" and r.subject in ("Ethernet0", "eth0")
                and r.device in ("leaf-r0-a", "gpu-001")]  # fmt: skip


def test_one_sided_lldp_pairs_the_link_and_flags_the_silent_end(tmp_path: Path) -> None:
    out = run_fabric(
        tmp_path, LAB, [Fault("gpu-001", "lldp", None, "eth0")], checks=["link-lldp", "link-fec"]
    )
    assert table(out, Status.FAIL) == {("link-lldp", "gpu-001", "eth0")}
    assert one(out, "link-lldp", "leaf-r0-a", "Ethernet0").status is Status.PASS
    assert "leaf-r0-a Ethernet0 sees it" in one(out, "link-lldp", "gpu-001", "eth0").message
    assert one(out, "link-fec", "gpu-001", "eth0").status is Status.PASS  # compared from the leaf's LLDP
    assert one(out, "link-fec", "leaf-r0-a", "Ethernet0").status is Status.PASS


def test_unknown_peer_is_an_error_never_a_pass(tmp_path: Path) -> None:
    faults = [Fault("leaf-r0-a", "lldp.device", "mystery-sw1", "Ethernet0")]
    out = run_fabric(tmp_path, LAB, faults, checks=["link-lldp", "link-fec"])
    for check in ("link-lldp", "link-fec"):
        r = one(out, check, "leaf-r0-a", "Ethernet0")
        assert r.status is Status.ERROR
        assert "'mystery-sw1' is not in the inventory" in r.message
    # gpu-001 eth0 names leaf-r0-a Ethernet0, which names someone else: disagreeing LLDP
    assert one(out, "link-lldp", "gpu-001", "eth0").status is Status.FAIL
    assert one(out, "link-fec", "gpu-001", "eth0").status is Status.ERROR


def test_ignored_peers_are_not_fabric_links(tmp_path: Path) -> None:
    faults = [Fault("leaf-r0-a", "lldp.device", "oob-sw1", "Ethernet0")]
    base = "rules:\n  - {id: link-fec, params: {ignore_peers: ['oob-*']}}\n"
    out = run_fabric(tmp_path, LAB, faults, checks=["link-fec"], baseline=base)
    assert not [r for r in out.results if (r.device, r.subject) == ("leaf-r0-a", "Ethernet0")]


def test_peer_not_collected_gives_error_on_it_and_no_pass(tmp_path: Path) -> None:
    out = run_fabric(tmp_path, LAB, drop=["leaf-r1-a"], checks=["link-lldp", "link-pfc"])
    for check in ("link-lldp", "link-pfc"):
        assert one(out, check, "gpu-001", "eth1").status is Status.SKIPPED
        err = one(out, check, "leaf-r1-a", "swp1")
        assert err.status is Status.ERROR
        assert err.message == "link not checked: this device could not be read"
    touching = [r for r in out.results if "leaf-r1-a" in (r.device, *r.message.split())]
    assert touching and all(r.status is not Status.PASS for r in touching)
    assert {r.device for r in out.results if r.status is Status.ERROR} == {"leaf-r1-a"}


def test_disagreeing_lldp_fails_at_every_port_involved(tmp_path: Path) -> None:
    # gpu-001 eth0 claims leaf-r0-a Ethernet8, which sees gpu-002 eth0; leaf-r0-a Ethernet0 still sees gpu-001 eth0
    out = run_fabric(
        tmp_path, LAB, [Fault("gpu-001", "lldp.port", "Ethernet8", "eth0")], checks=["link-lldp", "link-fec"]
    )
    assert table(out, Status.FAIL) == {
        ("link-lldp", "gpu-001", "eth0"),
        ("link-lldp", "leaf-r0-a", "Ethernet0"),
        ("link-lldp", "leaf-r0-a", "Ethernet8"),
    }
    assert "sees gpu-002 eth0 as its neighbour" in one(out, "link-lldp", "gpu-001", "eth0").message
    assert (
        "also seen as the neighbour of gpu-001 eth0"
        in one(out, "link-lldp", "leaf-r0-a", "Ethernet8").message
    )
    assert one(out, "link-fec", "gpu-001", "eth0").status is Status.ERROR
    assert (
        one(out, "link-fec", "leaf-r0-a", "Ethernet8").status is Status.PASS
    )  # its own pairing is consistent


def test_several_neighbours_on_one_port(tmp_path: Path) -> None:
    faults = [Fault("leaf-r1-a", "lldp.other_neighbors", [{"device": "gpu-009", "port": "eth1"}], "swp1")]
    out = run_fabric(tmp_path, LAB, faults, checks=["link-lldp"])
    assert table(out, Status.FAIL) == {("link-lldp", "leaf-r1-a", "swp1")}
    assert "several LLDP neighbours" in one(out, "link-lldp", "leaf-r1-a", "swp1").message


def test_lldp_names_are_matched_without_case_domain_or_abbreviation(tmp_path: Path) -> None:
    faults = [
        Fault("gpu-001", "lldp.device", "LEAF-R3-A.lab.example.net", "eth3"),
        Fault("gpu-001", "lldp.port", "Eth1/1", "eth3"),
    ]
    out = run_fabric(tmp_path, LAB, faults, checks=["link-lldp"])
    assert table(out, Status.FAIL) == set()
    assert one(out, "link-lldp", "gpu-001", "eth3").status is Status.PASS
    assert one(out, "link-lldp", "leaf-r3-a", "Ethernet1/1").status is Status.PASS


def test_down_port_without_lldp_is_not_reported(tmp_path: Path) -> None:
    out = run_fabric(tmp_path, LAB, checks=["link-lldp"])
    assert not [
        r for r in out.results if (r.device, r.subject) == ("spine-01", "Ethernet5/1")
    ]  # unused, down


@pytest.mark.parametrize(
    ("name", "canon"), [("Ethernet1/1", "ethernet1/1"), ("Eth1/1", "ethernet1/1"), ("Et3", "ethernet3"),
                        ("swp1s0", "swp1s0"), ("eth0", "ethernet0")],
)  # fmt: skip
def test_canonical_port(name: str, canon: str) -> None:
    assert canonical_port(name) == canon


def test_two_ports_naming_one_port_of_an_unreadable_device_give_one_error(tmp_path: Path) -> None:
    faults = [Fault("gpu-002", "lldp.port", "swp1", "eth1")]  # gpu-002 eth1 also claims leaf-r1-a swp1
    out = run_fabric(tmp_path, LAB, faults, drop=["leaf-r1-a"], checks=["link-fec"])
    errs = [r for r in out.results if r.status is Status.ERROR]
    assert sorted((r.device, r.subject) for r in errs) == [("leaf-r1-a", f"swp{i}") for i in (1, 3, 4)]
    skipped = {(r.device, r.subject) for r in out.results if r.status is Status.SKIPPED}
    assert skipped == {
        ("gpu-001", "eth1"),
        ("gpu-002", "eth1"),
        ("spine-01", "Ethernet2/1"),
        ("spine-02", "Ethernet2/1"),
    }


def test_hosts_without_lldp_agent_can_be_exempted(tmp_path: Path) -> None:
    faults = [Fault("gpu-001", "lldp", None, f"eth{i}") for i in range(4)]
    faults.append(Fault("gpu-002", "lldp", None, "eth0"))
    faults.append(Fault("leaf-r0-a", "lldp", None, "Ethernet8"))  # gpu-002 eth0: no LLDP at either end
    out = run_fabric(tmp_path, LAB, faults, checks=["link-lldp"])
    assert table(out, Status.FAIL) == {("link-lldp", "gpu-001", f"eth{i}") for i in range(4)} | {
        ("link-lldp", "gpu-002", "eth0"),
        ("link-lldp", "leaf-r0-a", "Ethernet8"),
    }
    base = "rules:\n  - {id: link-lldp, params: {require_lldp_roles: [spine, leaf]}}\n"
    out = run_fabric(tmp_path / "x", LAB, faults, checks=["link-lldp"], baseline=base)
    assert table(out, Status.FAIL) == {("link-lldp", "leaf-r0-a", "Ethernet8")}
    assert one(out, "link-lldp", "gpu-001", "eth0").status is Status.PASS  # paired from the leaf's LLDP


# ------------------------------------------------------------------ what is missing folds (issue 14)

BIG = synthetic.rail_fabric(1024)  # 128 servers, 32 leaves, 16 spines: 2,048 links
BIG_HOSTS = [d for d in BIG.devices if d.role == "host"]


def _rows(out: RunOutcome, check: str) -> list[Result]:
    return [r for r in out.results.problems if r.check == check]


def test_a_field_a_platform_lacks_is_one_row_per_device_on_thousands_of_links(tmp_path: Path) -> None:
    """No host collected ``fec`` (errors) nor ``trust`` (its source cannot: skipped): every host link
    is missing a value at one end, and each device says so once per check, naming its ports."""
    faults = [
        Fault(h.name, f, None, port)
        for h in BIG_HOSTS
        for port in h.rail_interfaces
        for f in ("fec", "trust")
    ]
    faults += [Fault(h.name, "unsupported", {"interfaces.*.trust": "no trust getter"}) for h in BIG_HOSTS]
    out = run_fabric(tmp_path, BIG, faults, checks=["link-fec", "link-trust"])
    host_links = sum(len(h.rail_interfaces) for h in BIG_HOSTS)
    assert len(BIG.links) >= 2000 and host_links == 1024
    leaves = {leaf for h in BIG_HOSTS for leaf, _ in (BIG.peers()[(h.name, p)] for p in h.rail_interfaces)}
    for check, status, here, there in (
        ("link-fec", Status.ERROR, "fec not collected here", "fec not collected at the peer"),
        ("link-trust", Status.SKIPPED, "trust not provided here (no trust getter)",
         "trust not provided at the peer (no trust getter)"),
    ):  # fmt: skip
        rows = _rows(out, check)
        assert len(rows) == len(BIG_HOSTS) + len(leaves)  # was one row per link end: 2,048
        assert all(type(r) is SkipBlock and r.status is status for r in rows)
        assert {r.message for r in rows if r.device.startswith("gpu")} == {here}
        assert {r.message for r in rows if not r.device.startswith("gpu")} == {there}
        assert sum(block_count(r) for r in rows) == 2 * host_links  # every end still has its result
        assert len(table(out, status, check)) == 2 * host_links
    uplinks = {(d, s) for _, d, s in table(out, Status.PASS, "link-fec")}
    assert uplinks == {(d, s) for _, d, s in table(out, Status.PASS, "link-trust")}
    assert len(uplinks) == 2 * (len(BIG.links) - host_links)
    assert out.results.summary()["by_status"]["error"] == 2 * host_links
    # grouped: the hosts' blocks and the leaves' blocks, each problem listing its ports (bounded)
    (at_hosts, at_leaves) = sorted((p for p in out.problems if p.family == "fec-mode"), key=lambda p: p.where)
    for p, devices in ((at_hosts, BIG_HOSTS), (at_leaves, leaves)):
        assert p.kind == "fleet" and p.location["ports_total"] == host_links
        assert len(p.location["ports"]) == 64 and len(p.location["devices"]) == len(devices)


def test_links_to_unreadable_devices_fold_at_both_ends(tmp_path: Path) -> None:
    """Every host unreadable: each leaf's host ports are one skipped row, each host's ports one error row."""
    out = run_fabric(tmp_path, BIG, drop=[h.name for h in BIG_HOSTS], checks=["link-pfc"])
    rows = _rows(out, "link-pfc")
    skipped = [r for r in rows if r.status is Status.SKIPPED]
    errors = [r for r in rows if r.status is Status.ERROR]
    assert len(errors) == len(BIG_HOSTS) and {r.device for r in errors} == {h.name for h in BIG_HOSTS}
    assert {r.message for r in errors} == {"link not checked: this device could not be read"}
    assert all(type(r) is SkipBlock and r.count == 8 for r in errors)
    assert len(skipped) == len({r.device for r in skipped}) == 32  # the leaves
    assert {r.message for r in skipped} == {
        "not compared: the peer could not be read (missing); the error is reported there"
    }
    assert sum(block_count(r) for r in rows) == 2 * 1024
