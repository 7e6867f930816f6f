"""Intended states from rendered configs (per platform) and the intended-vs-running diff."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from fabline.collect.writer import state_bytes
from fabline.design.diff import diff_device, diff_exit_code, diff_states, render_diff_text
from fabline.design.intended import intended_snapshot, intended_state, parse_host_settings
from fabline.design.model import load_design
from fabline.design.render import render_design
from fabline.errors import ConfigError
from fabline.inventory import Device
from fabline.state import load_state_file

ROOT = Path(__file__).resolve().parents[2]
DESIGN = ROOT / "tests" / "golden" / "configs" / "design.yml"


def _dev(name: str, platform: str, role: str) -> Device:
    return Device(name, platform, role, (), name, None, None, None, None, None, {})


@pytest.fixture(scope="module")
def configs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("configs")
    render_design(load_design(DESIGN), ROOT / "templates", out)
    return out


NAMES = {"spine-000", "leaf-r0-000", "gpu-00001", "spine-001", "leaf-r1-000", "spine-002", "leaf-r2-000"}


@pytest.mark.parametrize(
    ("name", "platform", "role", "port", "mtu", "peer"),
    [
        ("leaf-r0-000", "sonic", "leaf", "Ethernet0", 9100, ("gpu-00001", "eth0")),
        ("leaf-r1-000", "cumulus", "leaf", "swp1", 9216, ("gpu-00001", "eth1")),
        ("leaf-r2-000", "arista_eos", "leaf", "Ethernet1/1", 9214, ("gpu-00001", "eth2")),
        ("spine-001", "cumulus", "spine", "swp1", 9216, ("leaf-r0-000", "Ethernet40")),
    ],
)
def test_switch_states(
    configs: Path, name: str, platform: str, role: str, port: str, mtu: int, peer: tuple[str, str]
) -> None:
    doc = intended_state(_dev(name, platform, role), configs, NAMES, "2026-11-29T00:00:00Z")
    assert doc["status"] == "ok" and doc["source"] == "intended"
    body = doc["interfaces"][port]
    assert body["mtu"] == mtu and body["admin_up"] is True and body["fec"] == "rs"
    assert body["pfc_priorities"] == [3] and body["trust"] == "dscp"
    assert body["dscp_to_priority"]["26"] == 3 and body["dscp_to_priority"]["48"] == 6
    assert body["ecn"]["3"] == {
        **body["ecn"]["3"],
        "enabled": True,
        "min_bytes": 150000,
        "max_bytes": 1500000,
    }
    assert (body["lldp"]["device"], body["lldp"]["port"]) == peer
    assert "oper_up" not in body and "optics" not in body and "counters" not in body
    assert doc["qos"]["pfc_watchdog"]["enabled"] is True


def test_host_state(configs: Path) -> None:
    doc = intended_state(_dev("gpu-00001", "linux", "host"), configs, NAMES, "t")
    eth0 = doc["interfaces"]["eth0"]
    assert eth0["nic"] == {"roce_tos": 106, "ecn_np_priorities": [3], "ecn_rp_priorities": [3]}
    assert eth0["mtu"] == 9000 and eth0["lldp"] == {"device": "leaf-r0-000", "port": "Ethernet0"}
    assert doc["host"] == {
        "gpudirect_rdma": True,
        "nccl_env": {"NCCL_IB_TC": "106", "NCCL_IB_GID_INDEX": "3"},
    }


def test_snapshot_states_load(configs: Path, tmp_path: Path) -> None:
    devices = [_dev("leaf-r0-000", "sonic", "leaf"), _dev("spine-003", "arista_eos", "spine")]
    snap = intended_snapshot(configs, devices, tmp_path)
    for d in devices:
        assert load_state_file(snap / "state" / f"{d.name}.json")["name"] == d.name
        # Written as a collection writes a state: the collector's compact bytes.
        data = (snap / "state" / f"{d.name}.json").read_bytes()
        assert data == state_bytes(orjson.loads(data)) and data.count(b"\n") == 1
    with pytest.raises(ConfigError, match="rendered configs folder not found"):
        intended_snapshot(tmp_path / "nope", devices, tmp_path / "out")


def test_missing_and_unparseable_configs_are_error_states(configs: Path, tmp_path: Path) -> None:
    (tmp_path / "leaf-x").mkdir()
    (tmp_path / "leaf-x" / "config_db.json").write_text("{}")
    doc = intended_state(_dev("leaf-x", "sonic", "leaf"), tmp_path, set(), "t")
    assert doc["status"] == "error" and doc["errors"][0]["kind"] == "parse"
    doc = intended_state(_dev("leaf-y", "sonic", "leaf"), tmp_path, set(), "t")
    assert doc["status"] == "error" and doc["errors"][0]["kind"] == "missing"


def test_host_settings_errors_name_file_and_key(tmp_path: Path) -> None:
    path = tmp_path / "host.yml"
    text = "hostname: g1\ninterfaces:\n  eth0: {mtu: 9000, roce_toss: 106}\n"
    with pytest.raises(ConfigError) as err:
        parse_host_settings(text, path)
    assert str(err.value).startswith(f"{path}:3: interfaces.eth0.roce_toss: unknown key")
    with pytest.raises(ConfigError, match="malformed YAML"):
        parse_host_settings("a: [1,\n", path)


def test_diff_subset_and_features() -> None:
    want = {
        "interfaces": {"Ethernet0": {"mtu": 9100, "ecn": {"3": {"enabled": True, "min_bytes": 150000}},
                                     "dscp_to_priority": {"26": 3}, "lldp": {"device": "gpu-1", "port": "eth0"}},
                       "Ethernet8": {"mtu": 9100}},
        "qos": {"pfc_watchdog": {"enabled": True}, "port_defaults": {"trust": "dscp"}},
    }  # fmt: skip
    have = {
        "interfaces": {"Ethernet0": {"mtu": 9100, "oper_up": True, "ecn": {"3": {"enabled": True, "min_bytes": 20000}},
                                     "dscp_to_priority": {"26": 3, "24": 3}, "lldp": {"device": "gpu-2", "port": "eth0"}}},
        "qos": {"pfc_watchdog": {"enabled": False}},
    }  # fmt: skip
    changes = diff_device("leaf", want, have)
    got = [(c.feature, c.subject, c.path, c.running) for c in changes]
    assert got == [
        ("interfaces", "Ethernet8", "(interface)", None),
        ("qos", None, "qos.pfc_watchdog.enabled", False),
        ("qos", "Ethernet0", "dscp_to_priority", {"26": 3, "24": 3}),
        ("qos", "Ethernet0", "ecn.3.min_bytes", 20000),
        ("cabling", "Ethernet0", "lldp.device", "gpu-2"),
    ]


def test_diff_states_statuses_and_exit_codes() -> None:
    ok = {"status": "ok", "interfaces": {"e0": {"mtu": 1}}}
    result = diff_states({"a": ok, "b": ok, "c": {"status": "error", "errors": []}},
                         {"a": ok, "b": {"status": "ok", "interfaces": {"e0": {"mtu": 2}}}})  # fmt: skip
    assert {k: v["status"] for k, v in result.items()} == {
        "a": "in_sync",
        "b": "drift",
        "c": "no_intended_state",
    }
    assert diff_exit_code(result) == 4
    assert "b: 1 difference(s)\n  [interfaces] e0 mtu: intended 1, running 2" in render_diff_text(result)
    assert diff_exit_code(diff_states({"a": ok}, {})) == 3
    assert diff_exit_code(diff_states({"a": ok}, {"a": ok})) == 0


@pytest.mark.parametrize(
    ("name", "platform", "role"),
    [("leaf-r0-000", "sonic", "leaf"), ("leaf-r1-000", "cumulus", "leaf"), ("leaf-r2-000", "arista_eos", "leaf"),
     ("spine-001", "cumulus", "spine")],
)  # fmt: skip
def test_intended_bgp_is_the_designs(configs: Path, name: str, platform: str, role: str) -> None:
    """Every rendered config gives back the design's AS and one neighbour per fabric port, with its AS."""
    from fabline.design.topology import Topology

    design = load_design(DESIGN)
    sw = next(s for s in design.switches if s.name == name)
    ports = [p for p in Topology(design).switch_ports(sw) if p.kind == "fabric"]
    doc = intended_state(_dev(name, platform, role), configs, NAMES, "t")
    bgp = doc["bgp"]
    assert bgp["asn"] == sw.asn
    want = {p.peer_address: p.peer_asn for p in ports}
    assert {peer: body["remote_asn"] for peer, body in bgp["neighbors"].items()} == want
    assert {body.get("description") for body in bgp["neighbors"].values()} == {p.peer for p in ports}


def test_bgp_diff_names_the_peer_and_skips_what_the_running_state_cannot_show() -> None:
    want = {"asn": 65001, "router_id": "10.0.0.3", "maximum_paths": 128,
            "neighbors": {"10.1.0.0": {"remote_asn": 65100, "description": "spine-00"},
                          "10.1.0.2": {"remote_asn": 65100, "description": "spine-01"},
                          "10.1.0.4": {"remote_asn": 65100}}}  # fmt: skip
    have = {"asn": 65002, "router_id": "10.0.0.3",
            "neighbors": {"10.1.0.0": {"remote_asn": 65999, "state": "active"},
                          "10.1.0.4": {"remote_asn": 65100, "state": "established", "description": "spine-9"}}}  # fmt: skip
    changes = diff_device("leaf", {"bgp": want}, {"bgp": have})
    got = [(c.feature, c.subject, c.path, c.intended, c.running) for c in changes]
    assert got == [
        ("bgp", None, "bgp.asn", 65001, 65002),
        ("bgp", "10.1.0.0", "remote_asn", 65100, 65999),
        ("bgp", "10.1.0.2", "(neighbor)", "present", None),
    ]
    assert diff_device("leaf", {"bgp": want}, {}) == []  # nothing collected: nothing compared
    text = render_diff_text(
        diff_states({"leaf": {"status": "ok", "bgp": want}}, {"leaf": {"status": "ok", "bgp": have}})
    )
    assert "  [bgp] 10.1.0.0 remote_asn: intended 65100, running 65999" in text
