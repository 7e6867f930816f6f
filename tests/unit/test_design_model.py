"""Design model (generate, dump/load, validation errors), topology, inventory and cabling plan."""

from __future__ import annotations

import csv
import io
from collections import Counter
from pathlib import Path

import pytest
import yaml

from fabline.checks.fabric.cabling import load_cabling_plan
from fabline.design.model import Design, dump_design, generate, load_design
from fabline.design.plans import CABLING_HEADER, cabling_csv, inventory_dict, write_plans
from fabline.design.sizing import SizingInput
from fabline.design.topology import Topology
from fabline.errors import ConfigError
from fabline.platforms import PLATFORMS


def _design(**kw: int) -> Design:
    return generate(SizingInput(**{"gpus": 1024, "switch_ports": 64, **kw}))


def test_generate_1024() -> None:
    d = _design()
    roles = Counter(sw.role for sw in d.switches)
    assert roles == {"leaf": 32, "spine": 16}
    assert d.hosts.count == 128
    assert len({sw.asn for sw in d.switches if sw.role == "leaf"}) == 32
    assert {sw.asn for sw in d.switches if sw.role == "spine"} == {65100}
    assert len({sw.loopback for sw in d.switches}) == 48


def test_qos_from_baseline_vars() -> None:
    d = generate(
        SizingInput(gpus=16, switch_ports=8),
        qos_vars={"roce_priority": 4, "roce_dscp": 24, "ecn_min_bytes": [10000, 2000000]},
    )
    assert d.qos.leaf.roce_priority == 4 and d.qos.spine.roce_dscp == 24
    assert d.qos.leaf.ecn_min_bytes == 150000  # a range gives the NVIDIA default inside it
    assert d.qos.host.roce_priority == 4 and d.qos.host.roce_tos == 24 << 2 | 2


def test_infeasible_generate_refused() -> None:
    with pytest.raises(ConfigError, match="infeasible"):
        generate(SizingInput(gpus=100_000, switch_ports=128))


def test_dump_load_roundtrip(tmp_path: Path) -> None:
    d = _design()
    path = tmp_path / "design.yml"
    path.write_text(dump_design(d))
    assert load_design(path) == d


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "design.yml"
    path.write_text(text)
    return path


def test_unknown_key_names_file_line_key(tmp_path: Path) -> None:
    text = dump_design(generate(SizingInput(gpus=16, switch_ports=8)))
    text = text.replace("  ecn_probability_pct: 5\n", "  ecn_probabilty_pct: 5\n", 1)
    path = _write(tmp_path, text)
    line = text.splitlines().index("    ecn_probabilty_pct: 5") + 1
    with pytest.raises(ConfigError) as err:
        load_design(path)
    msg = str(err.value)
    assert msg.startswith(f"{path}:{line}: qos.leaf.ecn_probabilty_pct: unknown key")
    assert "ecn_probability_pct" in msg


def test_inconsistent_design_errors(tmp_path: Path) -> None:
    text = dump_design(generate(SizingInput(gpus=16, switch_ports=8)))
    cases = {
        "count: 2": ("count: 3", "hosts.count is 3"),
        "name: leaf-r1-000,": ("name: leaf-r0-000,", "duplicate switch name"),
        "gpus: 16": ("gpus: 100000", "infeasible sizing"),
        "loopback: 10.0.0.1}": ("loopback: 10.0.0.300}", "not an IPv4 address"),
        "platform: sonic, plane: 0, rail: 0": ("platform: junos, plane: 0, rail: 0", "platform"),
    }
    for old, (new, want) in cases.items():
        assert old in text, old
        path = _write(tmp_path, text.replace(old, new, 1))
        with pytest.raises(ConfigError, match=want):
            load_design(path)


def test_missing_design_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="design not found"):
        load_design(tmp_path / "nope.yml")


def test_cabling_plan_shape() -> None:
    d = _design()
    topo = Topology(d)
    text = cabling_csv(topo)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert text.splitlines()[0] == CABLING_HEADER == "device,port,peer_device,peer_port,rail,plane"
    assert len(rows) == 1024 + 1024
    host_rows = [r for r in rows if r["device"].startswith("gpu-")]
    # Rail-optimized: NIC ethN of every server lands on a leaf of rail N.
    for r in host_rows:
        assert r["port"] == f"eth{r['rail']}"
        assert r["peer_device"].startswith(f"leaf-r{r['rail']}-")
    fabric = [r for r in rows if r["device"].startswith("leaf-")]
    pairs = Counter((r["device"], r["peer_device"]) for r in fabric)
    leaves = {sw.name for sw in d.switches if sw.role == "leaf"}
    spines = {sw.name for sw in d.switches if sw.role == "spine"}
    assert set(pairs) == {(leaf, spine) for leaf in leaves for spine in spines}
    assert set(pairs.values()) == {2}
    # No port is used twice at either end.
    ends = [(r["device"], r["port"]) for r in rows] + [(r["peer_device"], r["peer_port"]) for r in rows]
    assert len(ends) == len(set(ends))


def test_cabling_plan_is_read_by_the_fabric_checks(tmp_path: Path) -> None:
    written = write_plans(_design(), tmp_path)
    assert [p.name for p in written] == ["design.yml", "inventory.yml", "cabling.csv"]
    plan = load_cabling_plan(tmp_path / "cabling.csv")
    assert len(plan) == 2048


def test_inventory_vars() -> None:
    d = _design(planes=2, switch_ports=128)
    inv = inventory_dict(d)
    children = inv["all"]["children"]
    leaves = children["fabric"]["children"]["leaf"]["hosts"]
    spines = children["fabric"]["children"]["spine"]["hosts"]
    hosts = children["gpu_hosts"]
    assert hosts["vars"]["rail_interfaces"] == [f"eth{i}" for i in range(16)]
    assert hosts["vars"]["fabline_role"] == "host" and len(hosts["hosts"]) == 128
    leaf = leaves["leaf-r9-000"]
    assert (leaf["rail"], leaf["plane"], leaf["fabline_role"]) == (9, 1, "leaf")
    assert {v["plane"] for v in spines.values()} == {0, 1}
    # Each switch says the release its config is rendered for, so a collection sends only what it has.
    for sw in d.switches:
        got = (leaves | spines)[sw.name]["fabline_os_version"]
        assert got == d.os_version[sw.platform] == PLATFORMS[sw.platform].os_version
    yaml.safe_dump(inv)


def test_multi_plane_links_stay_in_their_plane() -> None:
    d = generate(SizingInput(gpus=64, switch_ports=16, planes=2))
    topo = Topology(d)
    plane = {sw.name: sw.plane for sw in d.switches}
    for link in topo.links():
        if link.device in plane:
            assert plane[link.device] == plane[link.peer_device] == link.plane
        else:
            assert plane[link.peer_device] == link.plane == int(link.port[3:]) // 8


def test_addresses_are_unique_and_paired() -> None:
    d = _design()
    topo = Topology(d)
    seen: dict[str, str] = {}
    for sw in d.switches:
        for p in topo.switch_ports(sw):
            if p.address is None:
                continue
            addr = p.address.split("/")[0]
            assert addr not in seen, (addr, sw.name, seen.get(addr))
            seen[addr] = sw.name
    leaf = next(sw for sw in d.switches if sw.role == "leaf")
    up = next(p for p in topo.leaf_ports(leaf) if p.kind == "fabric")
    spine = d.switches[[sw.name for sw in d.switches].index(up.peer)]
    back = next(p for p in topo.spine_ports(spine) if p.name == up.peer_port)
    assert back.peer == leaf.name and back.peer_port == up.name
    assert back.peer_address == up.address.split("/")[0] and up.peer_address == back.address.split("/")[0]


@pytest.mark.parametrize("name", ["sizing", "model", "topology", "plans", "render", "intended", "diff"])
def test_doctests(name: str) -> None:
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(f"fabline.design.{name}"))
    assert result.failed == 0
