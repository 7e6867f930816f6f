"""Arista EOS parsers beyond the case files: schema, command coverage, merge of one device, quirks."""

from __future__ import annotations

import contextlib
import doctest
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from fabline.errors import ParseError
from fabline.platforms import (
    arista_eos,
    arista_eos_config,
    arista_eos_names,
    get_platform,
    merge_fragments,
    parse_output,
)
from fabline.state import schema_document
from tests.conftest import samples_dir

CASES = Path(__file__).resolve().parents[1] / "parsers" / "cases" / "arista_eos"


def _cases() -> list[dict[str, Any]]:
    return [yaml.safe_load(p.read_text("utf-8")) for p in sorted(CASES.glob("*.yml"))]


def _sample(name: str) -> str:
    return (samples_dir() / "arista_eos" / name).read_text("utf-8")


@pytest.mark.parametrize("module", [arista_eos, arista_eos_config, arista_eos_names])
def test_doctests(module: Any) -> None:
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize(
    ("line", "parser"),
    [
        ("show interfaces status", arista_eos.parse_show_interfaces_status),
        ("show interfaces", arista_eos.parse_show_interfaces),
        ("show interfaces | json", arista_eos.parse_show_interfaces_json),
        ("show  lldp neighbors  detail | json", arista_eos.parse_show_lldp_neighbors_detail_json),
        ("show interfaces transceiver detail", arista_eos.parse_show_interfaces_transceiver_detail),
    ],
)
def test_command_lines_pick_their_parser(line: str, parser: Any) -> None:
    command, _ = arista_eos.PLATFORM.match(line)
    assert command.parser is parser


def test_merge_of_one_device() -> None:
    """DC1-LEAF1A (Batfish lab): version, interfaces and running-config merge into one state."""
    state = merge_fragments(
        [
            parse_output(
                "arista_eos", "show version | json", _sample("batfish-lab-show_version_json-veos-4.23.json")
            ),
            parse_output(
                "arista_eos",
                "show interfaces | json",
                _sample("batfish-lab-show_interfaces_json-veos-leaf1a.json"),
            ),
            parse_output(
                "arista_eos",
                "show running-config",
                _sample("batfish-lab-show_running-config-veos-leaf1a.txt"),
            ),
        ]
    )
    assert state["facts"] == {
        "os_version": "4.23.0.1F",
        "model": "vEOS",
        "uptime_s": 17831.27,
        "hostname": "DC1-LEAF1A",
    }
    assert state["interfaces"]["Ethernet5"] == {
        "admin_up": True,
        "oper_up": True,
        "mtu": 9214,
        "description": "server01_Eth1",
        "counters": {"crc_errors": 0, "link_flaps": 2},
        "last_flap_epoch_s": 1574871798.5923498,
    }
    assert state["interfaces"]["Ethernet1"]["mtu"] == 1500
    assert "Loopback0" not in state["interfaces"] and "Vlan110" not in state["interfaces"]
    jsonschema.validate({"schema": "fabline.state/1", "name": "DC1-LEAF1A", **state}, schema_document())


def test_lldp_detail_replaces_a_mac_port_id_by_the_description() -> None:
    summary = parse_output(
        "arista_eos", "show lldp neighbors | json", _sample("napalm-show_lldp_neighbors.json")
    )
    assert summary["interfaces"]["Ethernet1"]["lldp"]["port"] == "0800.274f.332d"  # no description to prefer
    detail = parse_output(
        "arista_eos",
        "show lldp neighbors detail | json",
        _sample("napalm-show_lldp_neighbors_detail_issue1153.json"),
    )
    # interfaceIdType macAddress "1ce7.1003.5413" with interfaceDescription "eth0"
    assert detail["interfaces"]["Ethernet1/1"]["lldp"]["port"] == "eth0"
    assert detail["interfaces"]["Ethernet1/1"]["lldp"]["chassis_id"] == "1ce7.1003.5413"
    # quoted interface-name id is unquoted
    assert detail["interfaces"]["Ethernet27/1"]["lldp"]["port"] == "et-0/0/20"


CONFIG_HEAD = "hostname t\n"


@pytest.mark.parametrize(
    ("queue_lines", "expected"),
    [
        (
            "random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes max-mark-probability 5",
            {"enabled": True, "min_bytes": 150_000, "max_bytes": 1_500_000, "probability_pct": 5},
        ),
        (
            "random-detect ecn minimum-threshold 2 mbytes maximum-threshold 10 mbytes",
            {"enabled": True, "min_bytes": 2_000_000, "max_bytes": 10_000_000},
        ),
        (
            "random-detect ecn minimum-threshold 320 segments maximum-threshold 640 segments weight 10",
            {"enabled": True, "min_segments": 320, "max_segments": 640},
        ),
        (
            "random-detect ecn minimum-threshold 3 milliseconds maximum-threshold 9 milliseconds",
            {"enabled": True, "min_us": 3000, "max_us": 9000},
        ),
    ],
)
def test_ecn_threshold_units(queue_lines: str, expected: dict[str, Any]) -> None:
    config = f"{CONFIG_HEAD}interface Ethernet1\n   tx-queue 3\n      {queue_lines}\n"
    got = parse_output("arista_eos", "show running-config", config)
    assert got["interfaces"]["Ethernet1"]["ecn"] == {"3": expected}


def test_interface_lines_override_the_service_profile() -> None:
    config = (
        "qos profile P\n   qos trust dscp\n   priority-flow-control on\n   priority-flow-control priority 3 no-drop\n"
        "interface Et7\n   service-profile P\n   qos trust cos\n   priority-flow-control priority 4 no-drop\n"
    )
    got = parse_output("arista_eos", "show running-config", config)["interfaces"]["Ethernet7"]
    assert got == {"trust": "pcp", "pfc_priorities": [3, 4]}


def test_global_pfc_off_empties_port_priorities() -> None:
    config = "priority-flow-control all off\ninterface Ethernet1\n   priority-flow-control on\n   priority-flow-control priority 3 no-drop\n"
    assert (
        parse_output("arista_eos", "show running-config", config)["interfaces"]["Ethernet1"]["pfc_priorities"]
        == []
    )


def test_several_fec_encodings_are_auto_with_the_allowed_list() -> None:
    got = parse_output(
        "arista_eos", "show running-config", _sample("avd-config-ethernet-interfaces-pfc-fec.cfg")
    )
    assert got["interfaces"]["Ethernet23"]["fec"] == "auto"
    assert got["interfaces"]["Ethernet23"]["fec_allowed"] == ["fc", "rs"]
    assert got["interfaces"]["Ethernet24"]["fec"] == "none"


def test_status_row_with_status_word_inside_the_name() -> None:
    """``- DISABLED routed (`` is a name; the real status (``disabled``) follows it."""
    got = parse_output("arista_eos", "show interfaces status", _sample("ntc-show_interfaces_status.txt"))
    assert got["interfaces"]["Ethernet3/2/4"] == {
        "admin_up": False,
        "oper_up": False,
        "speed_gbps": 10,
        "autoneg": True,
        "description": "- DISABLED routed (",
    }


def test_any_output_to_any_command_is_a_fragment_or_a_parse_error() -> None:
    """Every sample, whole and cut in half, fed to every command: never another exception."""
    local = Path(__file__).resolve().parents[1] / "parsers" / "local" / "arista_eos"
    files = sorted((samples_dir() / "arista_eos").glob("*")) + sorted(local.glob("*"))
    assert len(files) > 20
    for path in files:
        text = path.read_text("utf-8", errors="replace")
        for command in get_platform("arista_eos").commands:
            for chunk in (text, text[: len(text) // 2]):
                with contextlib.suppress(ParseError):
                    parse_output("arista_eos", command.template, chunk)


def test_pfc_watchdog_counters_list_only_ports_with_an_event_and_the_simulator_follows() -> None:
    """A storm planted on the simulated EOS switch reads back; storm-free ports are not listed."""
    from fabline import synthetic
    from fabline.sim.render import render
    from fabline.sim.server import Simulator
    from fabline.synthetic import Fault

    command = "show priority-flow-control counters watchdog | json"
    read = {"qos": {"pfc_watchdog": {"stats_collected": True}}}
    clean = Simulator(synthetic.lab_fabric()).devices["leaf-r2-a"]
    assert parse_output("arista_eos", command, clean.answer(command, render).out) == {
        "interfaces": {},
        **read,
    }
    port = next(iter(clean.state()["interfaces"]))
    faults = [
        Fault("leaf-r2-a", "counters.pfcwd_storms_detected", {"3": 2}, port),
        Fault("leaf-r2-a", "counters.pfcwd_storms_restored", {"3": 1}, port),
    ]
    dev = Simulator(synthetic.lab_fabric(), faults).devices["leaf-r2-a"]
    got = parse_output("arista_eos", command, dev.answer(command, render).out)
    assert got == {
        "interfaces": {
            port: {
                "counters": {"pfcwd_storms_detected": {"3": 2}, "pfcwd_storms_restored": {"3": 1}},
                "pfcwd_stormed_queues": [3],  # stuck once more than recovered: a storm now
            }
        },
        **read,
    }


def test_ports_the_watchdog_counters_leave_out_had_no_storm() -> None:
    """The finalize hook: a port not listed gets an empty storm table, once the counters were read."""
    config = parse_output("arista_eos", "show interfaces status", _sample("ntc-show_interfaces_status.txt"))
    ports = sorted(config["interfaces"])
    assert len(ports) >= 2
    listed = {"interfaces": {ports[0]: {"txQueues": {"3": {"stuckCount": 1, "recoveryCount": 1}}}}}
    command = "show priority-flow-control counters watchdog | json"
    storms = parse_output("arista_eos", command, json.dumps(listed))
    state = arista_eos.PLATFORM.finish(merge_fragments([config, storms]))
    assert state["interfaces"][ports[0]]["counters"]["pfcwd_storms_detected"] == {"3": 1}
    assert state["interfaces"][ports[1]]["counters"]["pfcwd_storms_detected"] == {}
    assert state["interfaces"][ports[0]]["pfcwd_stormed_queues"] == []  # stuck once, recovered once
    assert state["interfaces"][ports[1]]["pfcwd_stormed_queues"] == []  # not listed: no storm
    # Without the watchdog counters nothing is assumed.
    alone = arista_eos.PLATFORM.finish(merge_fragments([config]))
    assert all("pfcwd_storms_detected" not in b.get("counters", {}) for b in alone["interfaces"].values())


def test_pfc_watchdog_counter_that_is_not_a_count_is_a_parse_error_naming_port_and_queue() -> None:
    doc = '{"interfaces": {"Ethernet3/1": {"txQueues": {"3": {"stuckCount": "many"}}}}}'
    with pytest.raises(ParseError, match=r"Ethernet3/1 queue 3: stuckCount 'many' is not a count"):
        parse_output("arista_eos", "show priority-flow-control counters watchdog | json", doc)


def test_route_json_whose_vias_is_not_a_list_is_a_parse_error() -> None:
    """Found by the fuzz test: 'vias': true raised a TypeError instead of a ParseError."""
    doc = '{"vrfs": {"default": {"routes": {"1.0.4.0/24": {"vias": true, "routeType": "eBGP"}}}}}'
    with pytest.raises(ParseError, match=r"route 1.0.4.0/24: 'vias' is not a list"):
        parse_output("arista_eos", "show ip route 1.0.4.0/24 | json", doc)


def test_two_no_drop_priorities_read_back_from_the_simulator_in_every_list_form() -> None:
    """Priorities 3 and 4 print as '3 4' (the header's list form) and read back as [3, 4], never 34."""
    from fabline import synthetic
    from fabline.sim.render import render
    from fabline.sim.server import Simulator
    from fabline.synthetic import Fault

    sim = Simulator(synthetic.lab_fabric())
    port = next(
        n for n, b in sim.devices["leaf-r2-a"].state()["interfaces"].items() if b.get("pfc_priorities")
    )
    dev = Simulator(synthetic.lab_fabric(), [Fault("leaf-r2-a", "pfc_priorities", [3, 4], port)]).devices[
        "leaf-r2-a"
    ]
    text = dev.answer("show priority-flow-control", render).out
    row = next(line for line in text.splitlines() if line.startswith(port.replace("Ethernet", "Et") + " "))
    assert " 3 4 " in row
    got = parse_output("arista_eos", "show priority-flow-control", text)
    assert got["interfaces"][port]["pfc_priorities"] == [3, 4]
    for form in ("3,4", "3-4", "34"):
        assert parse_output(
            "arista_eos", "show priority-flow-control", text.replace(row, row.replace("3 4", form, 1))
        )["interfaces"][port]["pfc_priorities"] == [3, 4], form


def test_dlb_line_is_the_one_arista_s_data_model_renders_and_the_simulator_prints_it() -> None:
    """'ip hardware fib load-balance distribution dynamic' = adaptive routing; no line = off."""
    pyavd = pytest.importorskip("pyavd", reason="pyavd is in the dev extra")
    from fabline import synthetic
    from fabline.sim.render import render
    from fabline.sim.server import Simulator
    from fabline.synthetic import Fault

    structured = {
        "hostname": "leaf1-dlb",
        "ip_hardware": {
            "fib": {"load_balance_distribution": {"dynamic": {"enabled": True, "flow_set_size": 4}}}
        },
    }
    fixture = (
        Path(__file__).parents[1]
        / "parsers"
        / "local"
        / "arista_eos"
        / "avd-generated-ip-hardware-fib-dlb.cfg"
    )
    assert pyavd.get_device_config(structured) == fixture.read_text("utf-8")
    for on in (True, False):
        fault = Fault("leaf-r2-a", "load_balance.adaptive_routing", on)
        dev = Simulator(synthetic.lab_fabric(), [fault]).devices["leaf-r2-a"]
        got = parse_output("arista_eos", "show running-config", dev.answer("show running-config", render).out)
        assert got["load_balance"]["adaptive_routing"] is on


def test_a_storm_planted_now_reads_back_as_a_stormed_queue_on_eos_and_nxos() -> None:
    """A queue in a storm now: the simulators count one detection more than restorations."""
    from fabline import synthetic
    from fabline.sim.render import render
    from fabline.sim.server import Simulator
    from fabline.synthetic import Fault

    for device, port, command, platform in (
        ("leaf-r2-a", "Ethernet1/1", "show priority-flow-control counters watchdog | json", "arista_eos"),
        ("leaf-r3-a", "Ethernet1/1", "show queuing pfc-queue detail | json", "cisco_nxos"),
    ):
        fault = Fault(device, "pfcwd_stormed_queues", [3], port)
        dev = Simulator(synthetic.lab_fabric(), [fault]).devices[device]
        got = parse_output(platform, command, dev.answer(command, render).out)
        assert got["interfaces"][port]["pfcwd_stormed_queues"] == [3], platform
        counters = got["interfaces"][port]["counters"]
        assert counters["pfcwd_storms_detected"]["3"] == counters["pfcwd_storms_restored"]["3"] + 1
