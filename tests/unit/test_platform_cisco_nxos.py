"""Cisco NX-OS parsers beyond the case files: schema, command coverage, merge of one device, quirks."""

from __future__ import annotations

import contextlib
import doctest
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from fabline.errors import ParseError
from fabline.platforms import (
    cisco_nxos,
    cisco_nxos_config,
    cisco_nxos_counters,
    cisco_nxos_names,
    get_platform,
    merge_fragments,
    parse_output,
)
from fabline.state import schema_document
from tests.conftest import samples_dir

CASES = Path(__file__).resolve().parents[1] / "parsers" / "cases" / "cisco_nxos"


def _cases() -> list[dict[str, Any]]:
    return [yaml.safe_load(p.read_text("utf-8")) for p in sorted(CASES.glob("*.yml"))]


def _sample(name: str) -> str:
    return (samples_dir() / "cisco_nxos" / name).read_text("utf-8")


@pytest.mark.parametrize("module", [cisco_nxos, cisco_nxos_config, cisco_nxos_counters, cisco_nxos_names])
def test_doctests(module: Any) -> None:
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0


def test_merge_of_one_device() -> None:
    """r1 (Batfish n9kv lab): show version and show interface merge into one state."""
    state = merge_fragments(
        [
            parse_output("cisco_nxos", "show version", _sample("batfish-lab-show_version-n9kv-r1.txt")),
            parse_output("cisco_nxos", "show interface", _sample("batfish-lab-show_interface-n9kv-r1.txt")),
        ]
    )
    assert state["facts"]["hostname"] == "r1"
    assert state["facts"]["os_version"] == "10.3(9)"
    assert state["interfaces"]["Ethernet1/1"] == {
        "oper_up": True,
        "admin_up": True,
        "mtu": 1500,
        "speed_gbps": 1,
        "autoneg": True,
        "fec": "none",
        "fec_admin": "auto",
        "counters": {"crc_errors": 0, "pfc_rx_frames": 0, "pfc_tx_frames": 0, "interface_resets": 3},
        "last_flap_age_s": 420,  # "Last link flapped 00:07:00"
    }
    assert "loopback0" not in state["interfaces"]
    jsonschema.validate({"schema": "fabline.state/1", "name": "r1", **state}, schema_document())


def test_cos_classification_is_trust_pcp_and_pause_no_drop_makes_the_group_lossless() -> None:
    """Microsoft SDN TOR1: class RDMA matches cos 3 -> qos-group 3; network-qos RDMA pause no-drop."""
    got = parse_output("cisco_nxos", "show running-config", _sample("msft-sdn-nexus3132-tor1-rdma-pfc.cfg"))
    assert got["qos"] == {"lossless_priorities": [3]}
    port = got["interfaces"]["Ethernet1/3/1"]
    assert port["trust"] == "pcp" and port["pcp_to_priority"] == {"3": 3}
    assert port["pfc_mode"] == "on" and port["pfc_priorities"] == [3]
    assert "dscp_to_priority" not in port


def test_pfc_mode_auto_leaves_pfc_priorities_unknown() -> None:
    config = (
        "policy-map type network-qos NQ\n  class type network-qos c-8q-nq3\n    pause pfc-cos 3\n"
        "system qos\n  service-policy type network-qos NQ\n"
        "interface Ethernet1/1\n  priority-flow-control mode auto\n"
        "interface Ethernet1/2\n  priority-flow-control mode on\n"
    )
    got = parse_output("cisco_nxos", "show running-config", config)["interfaces"]
    assert got["Ethernet1/1"] == {"pfc_mode": "auto"}
    assert got["Ethernet1/2"] == {"pfc_mode": "on", "pfc_priorities": [3]}


def test_dscp_names_and_interface_policy_override_system_policy() -> None:
    config = (
        "class-map type qos match-any A\n  match dscp af31,ef\n"
        "class-map type qos match-any B\n  match dscp 26\n"
        "policy-map type qos PA\n  class A\n    set qos-group 3\n"
        "policy-map type qos PB\n  class B\n    set qos-group 4\n"
        "system qos\n  service-policy type qos input PA\n"
        "interface Ethernet1/1\n  mtu 9216\n"
        "interface Ethernet1/2\n  service-policy type qos input PB no-stats\n"
    )
    got = parse_output("cisco_nxos", "show running-config", config)["interfaces"]
    assert got["Ethernet1/1"]["dscp_to_priority"] == {"26": 3, "46": 3}
    assert got["Ethernet1/2"]["dscp_to_priority"] == {"26": 4}


def test_lldp_null_system_name_is_absent_and_mac_port_prefers_description() -> None:
    got = parse_output(
        "cisco_nxos", "show lldp neighbors detail", _sample("genie-show_lldp_neighbors_detail-2.txt")
    )
    assert "device" not in got["interfaces"]["Ethernet1/14"]["lldp"]  # "System Name: null"
    text = (
        "Chassis id: 98f2.b3ff.07f4\nPort id: 98f2.b3ff.07f5\nLocal Port id: Eth1/5\n"
        "Port Description: eth2\nSystem Name: gpu-07\n"
    )
    lldp = parse_output("cisco_nxos", "show lldp neighbors detail", text)["interfaces"]["Ethernet1/5"]["lldp"]
    assert lldp == {
        "device": "gpu-07",
        "port": "eth2",
        "port_id": "98f2.b3ff.07f5",  # the MAC the description replaced (the one LLDP rule)
        "port_description": "eth2",
        "chassis_id": "98f2.b3ff.07f4",
    }


def test_lane_dom_values_skip_na() -> None:
    got = parse_output(
        "cisco_nxos",
        "show interface transceiver details",
        _sample("genie-show_interface_transceiver_details-3.txt"),
    )
    psm4 = got["interfaces"]["Ethernet1/50"]["optics"]
    assert psm4["rx_power_dbm"] == [-13.97, -14.68, -15.08, -13.66]
    assert "tx_power_dbm" not in psm4  # every lane prints Tx Power N/A


def test_any_output_to_any_command_is_a_fragment_or_a_parse_error() -> None:
    """Every sample, whole and cut in half, fed to every command: never another exception."""
    local = Path(__file__).resolve().parents[1] / "parsers" / "local" / "cisco_nxos"
    files = sorted((samples_dir() / "cisco_nxos").glob("*")) + sorted(local.glob("*"))
    assert len(files) > 20
    for path in files:
        text = path.read_text("utf-8", errors="replace")
        for command in get_platform("cisco_nxos").commands:
            for chunk in (text, text[: len(text) // 2]):
                with contextlib.suppress(ParseError):
                    parse_output("cisco_nxos", command.template, chunk)


def test_pfc_detail_row_that_does_not_fit_its_priorities_is_a_parse_error_naming_the_port() -> None:
    text = _sample("zartbot-n93180fx2-show_interface_priority-flow-control_detail.txt")
    broken = text.replace(
        "    Tx  |0            |0            |0            |0            |0            |143",
        "    Tx  |0 |x|143",
        1,
    )
    with pytest.raises(ParseError, match=r"Ethernet1/52: a row of 5 cells under 8 priorities"):
        parse_output("cisco_nxos", "show interface priority-flow-control detail", broken)


def test_queuing_drops_of_the_lossless_group_reach_the_lossless_drop_checks() -> None:
    """A drop planted on the simulated NX-OS switch's qos-group 3 is read back as queue_dropped.3."""
    from fabline import synthetic
    from fabline.sim.render import render
    from fabline.sim.server import Simulator
    from fabline.synthetic import Fault

    fault = Fault("leaf-r3-a", "counters.queue_dropped", {"3": 512}, "Ethernet1/1")
    dev = Simulator(synthetic.lab_fabric(), [fault]).devices["leaf-r3-a"]
    got = parse_output(
        "cisco_nxos", "show queuing interface", dev.answer("show queuing interface", render).out
    )
    dropped = got["interfaces"]["Ethernet1/1"]["counters"]["queue_dropped"]
    assert dropped["3"] == 512 and dropped["0"] == 0
    assert got["interfaces"]["Ethernet1/2"]["counters"]["queue_dropped"]["3"] == 0


def test_pfc_watchdog_storms_planted_on_the_simulator_read_back_and_unlisted_ports_had_none() -> None:
    """'show queuing pfc-queue detail | json': shutdowns per qos-group; the finalize hook fills the rest."""
    from fabline import synthetic
    from fabline.sim.render import render
    from fabline.sim.server import Simulator
    from fabline.synthetic import Fault

    command = "show queuing pfc-queue detail | json"
    faults = [
        Fault("leaf-r3-a", "counters.pfcwd_storms_detected", {"3": 4}, "Ethernet1/2"),
        Fault("leaf-r3-a", "counters.pfcwd_storms_restored", {"3": 3}, "Ethernet1/2"),
    ]
    dev = Simulator(synthetic.lab_fabric(), faults).devices["leaf-r3-a"]
    got = parse_output("cisco_nxos", command, dev.answer(command, render).out)
    assert got["qos"] == {"pfc_watchdog": {"stats_collected": True}}
    assert got["interfaces"]["Ethernet1/2"]["counters"] == {
        "pfcwd_storms_detected": {"3": 4},
        "pfcwd_storms_restored": {"3": 3},
    }
    running = parse_output("cisco_nxos", "show running-config", dev.answer("show running-config", render).out)
    state = cisco_nxos.PLATFORM.finish(merge_fragments([running, got]))
    quiet = [n for n, b in state["interfaces"].items() if n.startswith("Ethernet") and n != "Ethernet1/2"]
    assert quiet and all(
        sum(state["interfaces"][n]["counters"]["pfcwd_storms_detected"].values()) == 0 for n in quiet
    )
    assert state["interfaces"]["Ethernet1/2"]["pfcwd_stormed_queues"] == [3]  # shut 4 times, restored 3
    assert all(state["interfaces"][n]["pfcwd_stormed_queues"] == [] for n in quiet)


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"if_name_str": "Ethernet1/1 Interface PFC watchdog", "TABLE_qosgrp_stats": {"ROW_qosgrp_stats": {
            "eq-qosgrp": 3, "TABLE_qosgrp_stats_entry": {"ROW_qosgrp_stats_entry": {"q-shutdown": "many"}}}}},
         r"Ethernet1/1 qos-group 3 q-shutdown: 'many' is not a count"),
        ({"if_name_str": "Ethernet1/1", "TABLE_qosgrp_stats": {"ROW_qosgrp_stats": {"eq-qosgrp": 9}}},
         r"Ethernet1/1: qos-group 9 is not 0-7"),
        ({"if_name_str": "Interface PFC watchdog"}, r"'if_name_str' names no port"),
    ],
)  # fmt: skip
def test_pfc_watchdog_json_that_does_not_fit_is_a_parse_error_naming_the_place(
    row: dict[str, Any], message: str
) -> None:
    import json

    doc = {"TABLE_module": {"ROW_module": {"TABLE_queuing_interface": {"ROW_queuing_interface": row}}}}
    with pytest.raises(ParseError, match=message):
        parse_output("cisco_nxos", "show queuing pfc-queue detail | json", json.dumps(doc))


def test_dlb_is_read_from_10_5_on_and_the_simulator_follows_the_release() -> None:
    """'hardware profile dlb' = adaptive routing on 10.5+; before 10.5 NX-OS has no DLB: not read."""
    from fabline import synthetic
    from fabline.sim.render import render
    from fabline.sim.server import Simulator
    from fabline.synthetic import Fault

    def read(release: str, on: bool) -> dict[str, Any]:
        faults = [
            Fault("leaf-r3-a", "facts.os_version", release),
            Fault("leaf-r3-a", "load_balance.adaptive_routing", on),
        ]
        dev = Simulator(synthetic.lab_fabric(), faults).devices["leaf-r3-a"]
        got = parse_output("cisco_nxos", "show running-config", dev.answer("show running-config", render).out)
        return dict(got.get("load_balance", {}))

    assert read("10.5(1)F", True)["adaptive_routing"] is True
    assert read("10.5(1)F", False)["adaptive_routing"] is False
    assert "adaptive_routing" not in read("10.4(3)", True)  # no DLB before 10.5: not compared
    # 'show running-config interface' is a part of the configuration: nothing said about DLB.
    part = _sample("azurelocal-tor1-show_run_int-storage-pfc.txt")
    assert "load_balance" not in parse_output("cisco_nxos", "show running-config interface", part)
