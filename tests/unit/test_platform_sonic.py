"""SONiC parsers beyond the case files: schema, command set, merge of one device's fragments, quirks."""

from __future__ import annotations

import doctest
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from fabline.errors import ParseError
from fabline.platforms import merge_fragments, parse_output, sonic, sonic_configdb, sonic_show
from fabline.state import schema_document
from tests.conftest import sample_files, samples_dir

CASES = Path(__file__).resolve().parents[1] / "parsers" / "cases" / "sonic"


def _cases() -> list[dict[str, Any]]:
    return [yaml.safe_load(p.read_text("utf-8")) for p in sorted(CASES.glob("*.yml"))]


def _sample(name: str) -> str:
    return (samples_dir() / "sonic" / name).read_text("utf-8")


@pytest.mark.parametrize("module", [sonic_configdb, sonic_show])
def test_doctests(module: Any) -> None:
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0


def test_command_set_is_read_only_and_each_template_matches_itself() -> None:
    templates = [c.template for c in sonic.COMMANDS]
    assert len(templates) == len(set(templates))
    for cmd in sonic.COMMANDS:
        # Read-only by construction: show commands, a cat, the two CONFIG_DB printers, a grep of
        # the kernel's sysfs (the netdevs' carrier_changes), FRR's shell running one show command
        # and one redis read (HGETALL) of APPL_DB's switch table.
        assert (
            cmd.template.startswith(
                (
                    "show ",
                    "cat /etc/sonic/",
                    "sonic-cfggen -d --print-data",
                    "sonic-db-dump -n CONFIG_DB",
                    "grep -H . /sys/class/net/",
                    "vtysh -c 'show ",
                )
            )
            or cmd.template == "redis-cli -n 0 HGETALL SWITCH_TABLE:switch"
        ), cmd.template
        assert cmd.parser.__name__.startswith("parse_")
        line = cmd.render(**dict.fromkeys(cmd.parameters, "Ethernet0"))
        matched, params = sonic.PLATFORM.match(line)
        assert matched is cmd, f"{line!r} matched {matched.template!r}"
        assert params == dict.fromkeys(cmd.parameters, "Ethernet0")


def test_every_minimum_command_of_issue_3_is_on_the_allow_list() -> None:
    for line in (
        "show runningconfiguration all",
        "show version",
        "show interfaces status",
        "show interfaces fec status",
        "show interfaces autoneg status",
        "show lldp table",
        "show pfc priority",
        "show pfcwd config",
        "show ecn",
        "show interfaces transceiver eeprom --dom Ethernet0",
        "show interfaces transceiver status Ethernet0",
        "show pfc counters",
        "show interfaces counters",
    ):
        sonic.PLATFORM.match(line)


def test_write_commands_are_refused() -> None:
    for line in ("config qos reload", "config interface fec Ethernet0 rs", "sudo config reload -y"):
        with pytest.raises(ParseError, match="read-only allow-list"):
            parse_output("sonic", line, "anything")


def test_merge_of_one_cisco_8101_device() -> None:
    """Fragments of one Cisco 8101 (status, optics, counters, version) merge into one state body."""
    state = merge_fragments(
        [
            parse_output("sonic", "show version", _sample("show_version-cisco8101-32h-o-before-upgrade.txt")),
            parse_output(
                "sonic", "show interfaces status", _sample("show_interfaces_status-cisco8101-400g-up.txt")
            ),
            parse_output(
                "sonic",
                "show interfaces transceiver eeprom Ethernet0",
                _sample("show_interfaces_transceiver_eeprom-cisco8101-qsfpdd-400g-dr4.txt"),
            ),
            parse_output(
                "sonic",
                "show interfaces transceiver status Ethernet0",
                _sample("show_interfaces_transceiver_status-cisco8101-qsfpdd-400g-dr4.txt"),
            ),
            parse_output(
                "sonic", "show interfaces counters", _sample("show_interfaces_counters-cisco8101.txt")
            ),
        ]
    )
    assert state["facts"]["model"] == "8101-32H-O"
    assert state["facts"]["os_version"] == "SONiC.HEAD.1.2.0-7995b757b"
    eth0 = state["interfaces"]["Ethernet0"]
    assert eth0["mtu"] == 9100 and eth0["speed_gbps"] == 400 and eth0["oper_up"] is True
    assert eth0["optics"]["vendor"] == "CISCO" and eth0["optics"]["part_number"] == "10-3627-01"
    assert eth0["optics"]["module_state"] == "ModuleReady" and eth0["optics"]["active_flags"] == []
    assert eth0["counters"]["rx_errors"] == 415
    assert state["interfaces"]["Ethernet32"]["oper_up"] is False
    # Ethernet248 appears in the counters but not in the status table.
    assert state["interfaces"]["Ethernet248"] == {
        "counters": dict.fromkeys(
            (
                "rx_ok",
                "rx_errors",
                "rx_drops",
                "rx_overruns",
                "tx_ok",
                "tx_errors",
                "tx_drops",
                "tx_overruns",
            ),
            0,
        )
    }
    validator = jsonschema.Draft202012Validator(schema_document())
    assert not list(validator.iter_errors({"schema": "fabline.state/1", "name": "8101", **state}))


def test_merge_of_the_command_reference_switch() -> None:
    """The Command Reference examples (one documented switch): config view and show views agree."""
    state = merge_fragments(
        [
            parse_output(
                "sonic", "show interfaces status", _sample("show_interfaces_status-utilities-test.txt")
            ),
            parse_output(
                "sonic",
                "show interfaces fec status",
                _sample("show_interfaces_fec_status-utilities-test.txt"),
            ),
            parse_output(
                "sonic",
                "show interfaces autoneg status",
                _sample("show_interfaces_autoneg_status-utilities-test.txt"),
            ),
            parse_output(
                "sonic",
                "show interfaces description",
                _sample("show_interfaces_description-utilities-test.txt"),
            ),
        ]
    )
    eth124 = state["interfaces"]["Ethernet124"]
    # status shows the configured FEC (auto); fec status, merged later, the operational one (rs).
    assert eth124["fec"] == "rs" and eth124["fec_admin"] == "auto"
    assert state["interfaces"]["Ethernet0"]["autoneg"] is True
    assert state["interfaces"]["Ethernet32"]["autoneg"] is False
    assert "autoneg" not in state["interfaces"]["Ethernet16"]  # N/A: not reported, never defaulted
    assert state["interfaces"]["Ethernet32"]["description"] == "Servers7:eth0"


def test_configdb_forms_agree() -> None:
    """Nested, flat and namespace-wrapped forms of the same tables give the same fragment."""
    nested = {
        "DEVICE_METADATA": {"localhost": {"hostname": "leaf1"}},
        "PORT": {"Ethernet0": {"mtu": "9100", "speed": "400000", "fec": "rs", "autoneg": "off"}},
        "PORT_QOS_MAP": {"Ethernet0": {"dscp_to_tc_map": "ROCE", "pfc_enable": "3"}},
        "DSCP_TO_TC_MAP": {"ROCE": {"26": "3", "48": "6"}},
        "QUEUE": {"Ethernet0|3": {"wred_profile": "ECN"}},
        "WRED_PROFILE": {"ECN": {"ecn": "ecn_all", "green_min_threshold": "150000"}},
    }
    flat = {f"{t}|{k}": v for t, entries in nested.items() for k, v in entries.items()}
    wrapped = {"localhost": nested}
    results = [
        parse_output("sonic", "show runningconfiguration all", json.dumps(doc))
        for doc in (nested, flat, wrapped)
    ]
    assert results[0] == results[1] == results[2]
    eth0 = results[0]["interfaces"]["Ethernet0"]
    assert eth0["dscp_to_priority"] == {"26": 3, "48": 6}
    assert eth0["pfc_priorities"] == [3] and eth0["fec"] == "rs" and eth0["autoneg"] is False
    assert eth0["ecn"]["3"] == {"profile": "ECN", "ecn_mode": "ecn_all", "enabled": True, "min_bytes": 150000}


def test_runningconfig_with_a_leading_prompt_line() -> None:
    text = "admin@sonic:~$ show runningconfiguration all\n" + '{"PORT": {"Ethernet0": {"mtu": "9100"}}}'
    assert parse_output("sonic", "show runningconfiguration all", text) == {
        "interfaces": {"Ethernet0": {"mtu": 9100}}
    }


def test_table_cells_follow_overlap_not_fixed_offsets() -> None:
    """A right-aligned name wider than its dash run (' Ethernet12' vs 'Ethernet12') stays whole."""
    frag = parse_output("sonic", "show pfc counters", _sample("show_pfc_counters-cmdref.txt"))
    assert set(frag["interfaces"]) == {"Ethernet0", "Ethernet4", "Ethernet8", "Ethernet12"}


def test_second_command_in_a_capture_is_not_parsed() -> None:
    """Documentation blocks run two commands; only the first command's output is this command's."""
    frag = parse_output(
        "sonic", "show interfaces autoneg status", _sample("show_interfaces_autoneg_status-cmdref.txt")
    )
    assert set(frag["interfaces"]) == {"Ethernet0", "Ethernet4"}


def test_lldp_mac_port_id_gives_way_to_description() -> None:
    frag = parse_output("sonic", "show lldp table", _sample("show_lldp_table-utilities-test.txt"))
    lldp = frag["interfaces"]["Ethernet0"]["lldp"]
    assert lldp["port"] == "First MAC" and lldp["port_id"] == "00:00:00:00:00:01"
    assert lldp["other_neighbors"][0]["port"] == "Second MAC"
    # Without a description the MAC is all there is.
    frag = parse_output("sonic", "show lldp table", _sample("show_lldp_table-dx010-issue18871.txt"))
    assert frag["interfaces"]["Ethernet116"]["lldp"] == {"port": "48:df:37:e0:24:e0"}


def test_every_sample_is_refused_by_the_other_sonic_parsers() -> None:
    """No real sample (any platform) is mistaken for another SONiC command's output.

    Each sample goes through every SONiC command; only the parsers its own cases name may accept
    it, every other one must raise ParseError (never another exception, never a quiet success).
    """
    own: dict[str, set[str]] = {}
    for case in _cases():
        if "sample" in case and "expected" in case:
            parser = sonic.PLATFORM.match(case["command"])[0].parser.__name__
            own.setdefault(case["sample"], set()).add(parser)
    accepted = []
    for rel in sample_files():
        text = (samples_dir() / rel).read_text("utf-8", errors="replace")
        for cmd in sonic.COMMANDS:
            if cmd.parser.__name__ in own.get(rel, set()):
                continue
            line = cmd.render(**dict.fromkeys(cmd.parameters, "Ethernet0"))
            try:
                parse_output("sonic", line, text)
            except ParseError:
                continue
            accepted.append(f"{rel} as {line!r}")
    assert not accepted, accepted[:10]


def test_show_interfaces_flap_is_sent_to_202505_and_later_only_and_the_simulator_follows() -> None:
    """'show interfaces flap' is new in SONiC 202505: 202311 neither gets it nor answers it."""
    from fabline import synthetic
    from fabline.collect.device import for_release
    from fabline.sim.render import render
    from fabline.sim.server import Simulator
    from fabline.synthetic import Fault

    keep, lacking = for_release("sonic", ["show version", "show interfaces flap"], "SONiC.202311.1")
    assert keep == ["show version"] and [r.command for r in lacking] == ["show interfaces flap"]
    assert "202505 and later" in (lacking[0].message or "")
    assert for_release("sonic", ["show interfaces flap"], "SONiC.202505.1")[0] == ["show interfaces flap"]

    old = Simulator(synthetic.lab_fabric()).devices["leaf-r0-a"]
    answer = old.answer("show interfaces flap", render)
    assert answer.code != 0 and 'No such command "flap"' in answer.err

    faults = [
        Fault("leaf-r0-a", "facts.os_version", "SONiC.202505.1"),
        Fault("leaf-r0-a", "last_flap_epoch_s", 1771671659.0, "Ethernet8"),
    ]
    new = Simulator(synthetic.lab_fabric(), faults).devices["leaf-r0-a"]
    got = parse_output("sonic", "show interfaces flap", new.answer("show interfaces flap", render).out)
    assert got["interfaces"]["Ethernet8"] == {"last_flap_epoch_s": 1771671659.0}
    assert got["interfaces"]["Ethernet0"] == {}


def test_show_interfaces_flap_unreadable_time_is_a_parse_error_naming_the_port() -> None:
    text = (samples_dir() / "sonic" / "show_interfaces_flap-cmdref.txt").read_text("utf-8")
    row = "Ethernet8            4035  Up       Up      Sat Feb 21 11:00:41 2026"
    assert row in text
    with pytest.raises(ParseError, match=r"Ethernet8: unreadable time 'Sat Feb 31 11:00:41 2026'"):
        parse_output("sonic", "show interfaces flap", text.replace(row, row.replace("Feb 21", "Feb 31")))


def test_ports_show_pfcwd_stats_leaves_out_had_no_storm_and_are_in_none_now() -> None:
    """The finalize hook: every port the stats leave out gets zero storms and no stormed queue."""
    status = parse_output(
        "sonic", "show interfaces status", _sample("show_interfaces_status-utilities-test.txt")
    )
    ports = sorted(status["interfaces"])
    stats = parse_output("sonic", "show pfcwd stats", _sample("show_pfcwd_stats-utilities-test.txt"))
    state = sonic.PLATFORM.finish(merge_fragments([status, stats]))
    listed = set(stats["interfaces"])
    left_out = [p for p in ports if p not in listed and p.startswith("Ethernet")]
    assert left_out
    assert "pfcwd_stormed_queues" not in state["interfaces"]["PortChannel0001"]  # not a port of its own
    for port in left_out:
        assert state["interfaces"][port]["pfcwd_stormed_queues"] == []
        assert state["interfaces"][port]["counters"]["pfcwd_storms_detected"] == {}
    assert state["interfaces"]["Ethernet0"]["pfcwd_stormed_queues"] == [3]
    # A switch that never stormed prints the header alone: every port is judged, none in storm.
    header_only = "\n".join(_sample("show_pfcwd_stats-utilities-test.txt").split("\n")[:2])
    read = {"qos": {"pfc_watchdog": {"stats_collected": True}}}
    assert parse_output("sonic", "show pfcwd stats", header_only) == {"interfaces": {}, **read}
    # Without 'show pfcwd stats' nothing is assumed.
    alone = sonic.PLATFORM.finish(merge_fragments([status]))
    assert all("pfcwd_stormed_queues" not in b for b in alone["interfaces"].values())


def test_the_ecmp_hash_seed_comes_from_appl_db_and_the_simulator_follows() -> None:
    """APPL_DB SWITCH_TABLE:switch: numbered (terminal) and bare (piped) replies; a planted seed reads back."""
    from fabline import synthetic
    from fabline.sim.render import render
    from fabline.sim.server import Simulator
    from fabline.synthetic import Fault

    command = "redis-cli -n 0 HGETALL SWITCH_TABLE:switch"
    bare = "ecmp_hash_seed\n10\nlag_hash_seed\n10\nfdb_aging_time\n600\n"
    assert parse_output("sonic", command, bare) == {"load_balance": {"hash_seed": 10}}
    assert parse_output("sonic", command, "(empty array)\n") == {}
    with pytest.raises(ParseError, match="numbered and bare reply lines mixed"):
        parse_output("sonic", command, '1) "ecmp_hash_seed"\n10\n')
    dev = Simulator(synthetic.lab_fabric(), [Fault("leaf-r0-a", "load_balance.hash_seed", 7)]).devices[
        "leaf-r0-a"
    ]
    answer = dev.answer(command, render).out
    assert answer.startswith('1) "ecmp_hash_seed"\n2) "7"\n')
    assert parse_output("sonic", command, answer) == {"load_balance": {"hash_seed": 7}}
