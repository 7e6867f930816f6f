"""The synthetic fabric generator: right Clos/rail shape, and the committed example matches it."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from fabline import synthetic
from tests.conftest import REPO_ROOT


def test_1024_gpus_on_64_port_switches_gives_32_leaves_16_spines() -> None:
    fabric = synthetic.rail_fabric(1024, radix=64)
    roles = Counter(d.role for d in fabric.devices)
    assert roles == {"host": 128, "leaf": 32, "spine": 16}
    leaf_spine = Counter(
        (a, b) for a, _, b, _ in fabric.links if a.startswith("leaf") and b.startswith("spine")
    )
    # Every leaf reaches every spine, with the same number of links (32 uplinks / 16 spines).
    assert len(leaf_spine) == 32 * 16
    assert set(leaf_spine.values()) == {2}
    spine_ports = Counter(b for a, _, b, _ in fabric.links if b.startswith("spine"))
    assert set(spine_ports.values()) == {64}


def test_rail_cabling_nic_i_reaches_a_leaf_of_rail_i() -> None:
    fabric = synthetic.rail_fabric(256, radix=64)
    rail_of = {d.name: d.rail for d in fabric.devices if d.role == "leaf"}
    for host, port, leaf, _ in (link for link in fabric.links if link[0].startswith("gpu")):
        assert rail_of[leaf] == int(port.removeprefix("eth")), (host, port, leaf)


def test_states_are_clean_and_faults_apply() -> None:
    fault = synthetic.Fault("gpu-002", "mtu", 1500, "eth1")
    docs = {d["name"]: d for d in synthetic.states(synthetic.lab_fabric(), [fault])}
    assert docs["gpu-002"]["interfaces"]["eth1"]["mtu"] == 1500
    assert docs["gpu-001"]["interfaces"]["eth1"]["mtu"] == 9000
    assert docs["leaf-r0-a"]["interfaces"]["Ethernet0"]["lldp"] == {"device": "gpu-001", "port": "eth0"}


def test_committed_example_snapshot_is_what_the_generator_makes(tmp_path: Path) -> None:
    synthetic.write_snapshot(synthetic.lab_fabric(), tmp_path, synthetic.LAB_FAULTS)
    committed = REPO_ROOT / "examples" / "lab-snapshot" / "state"
    made = tmp_path / "state"
    assert sorted(p.name for p in committed.iterdir()) == sorted(p.name for p in made.iterdir())
    for path in made.iterdir():
        assert (committed / path.name).read_text() == path.read_text(), (
            f"{path.name} differs: regenerate with synthetic.write_snapshot(lab_fabric(), "
            "Path('examples/lab-snapshot'), LAB_FAULTS)"
        )
