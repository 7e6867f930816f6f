"""Cumulus platform: schema validity of every case, merging one switch's fragments, NVUE helpers."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from fabline.errors import ParseError
from fabline.platforms import get_platform, merge_fragments, parse_output
from fabline.platforms.base import ParseContext
from fabline.platforms.cumulus import COMMANDS, apply_port_defaults
from fabline.platforms.cumulus_nvue import read_tree_table
from fabline.platforms.cumulus_values import expand_ports, size_bytes
from fabline.state import schema_document
from tests.conftest import samples_dir

CASES = Path(__file__).resolve().parents[1] / "parsers" / "cases"
LOCAL = Path(__file__).resolve().parents[1] / "parsers" / "local"
EXPECTED = [
    (p, yaml.safe_load(p.read_text("utf-8")))
    for platform in ("cumulus", "linux")
    for p in sorted((CASES / platform).glob("*.yml"))
]
EXPECTED = [(p, c) for p, c in EXPECTED if "expected" in c]

#: Words that would make a command change a device; none may appear in an allow-listed template.
WRITE_WORDS = re.compile(
    r"\b(set|unset|add|del|delete|apply|commit|config apply|action|tee|rm|mv|mkdir)\b|>|--pfc|--trust|-w\b"
)


def _state(fragment: dict[str, Any], name: str = "x") -> dict[str, Any]:
    return {"schema": "fabline.state/1", "name": name, **fragment}


@pytest.mark.parametrize("case_path,case", EXPECTED, ids=[f"{p.parent.name}/{p.stem}" for p, _ in EXPECTED])
def test_expected_fragment_is_valid_state(case_path: Path, case: dict[str, Any]) -> None:
    jsonschema.validate(_state(case["expected"]), schema_document())


def _sample(rel: str) -> str:
    return (samples_dir() / rel).read_text("utf-8")


def test_merge_nvue_switch_fragments_and_port_defaults() -> None:
    """One CL 5.x switch: RoCE profile + a link table + a port's own RoCE status and counters."""
    fragments = [
        parse_output(
            "cumulus",
            "nv show qos roce",
            _sample("cumulus/nv_show_qos_roce-cl5.14-lossless-single-ipool.txt"),
        ),
        parse_output(
            "cumulus",
            "nv show interface swp11 link",
            _sample("cumulus/nv_show_interface_swp11_link-sn2700-100g-dr1-fec-off.txt"),
        ),
        parse_output(
            "cumulus",
            "nv show interface swp16 qos roce status",
            (LOCAL / "cumulus/nv_show_interface_swp16_qos_roce_status-docs.txt").read_text("utf-8"),
        ),
        parse_output(
            "cumulus",
            "nv show interface swp16 qos roce counters",
            _sample("cumulus/nv_show_interface_swp16_qos_roce_counters-cl5.14.txt"),
        ),
    ]
    state = apply_port_defaults(merge_fragments(fragments))
    swp11, swp16 = state["interfaces"]["swp11"], state["interfaces"]["swp16"]
    # swp11 reported only its link: the switch-wide RoCE profile fills its QoS.
    assert swp11["mtu"] == 9216 and swp11["fec"] == "none"
    assert swp11["pfc_priorities"] == [3]
    assert swp11["dscp_to_priority"]["26"] == 3 and len(swp11["dscp_to_priority"]) == 64
    assert swp11["ecn"]["3"]["min_bytes"] == 149996
    # swp16's own status wins over the profile leaf by leaf: its RoCE and CNP rows and its own
    # threshold stay; the DSCP rows and the ECN probability its table lacks come from the profile.
    assert swp16["dscp_to_priority"]["26"] == 3 and swp16["dscp_to_priority"]["48"] == 6
    assert len(swp16["dscp_to_priority"]) == 64
    assert swp16["ecn"]["3"]["min_bytes"] == 156672
    assert (
        swp16["ecn"]["3"]["probability_pct"] == state["qos"]["port_defaults"]["ecn"]["3"]["probability_pct"]
    )
    assert swp16["counters"]["ecn_marked"] == 693777677344
    assert state["qos"]["lossless_priorities"] == [3]
    jsonschema.validate(_state(state, "leaf"), schema_document())


def test_port_defaults_are_copies_not_shared() -> None:
    state = apply_port_defaults(
        {
            "qos": {"port_defaults": {"pfc_priorities": [3], "ecn": {"3": {"enabled": True}}}},
            "interfaces": {"swp1": {}, "swp2": {}},
        }
    )
    state["interfaces"]["swp1"]["ecn"]["3"]["enabled"] = False
    assert state["interfaces"]["swp2"]["ecn"]["3"]["enabled"] is True


def test_port_defaults_fill_missing_subkeys_port_values_win() -> None:
    state = apply_port_defaults(
        {
            "qos": {
                "port_defaults": {"ecn": {"3": {"enabled": True, "min_bytes": 1, "probability_pct": 100}}}
            },
            "interfaces": {"swp1": {"ecn": {"3": {"enabled": False, "min_bytes": 7}}}, "eth0": {}},
        }
    )
    assert state["interfaces"]["swp1"]["ecn"] == {
        "3": {"enabled": False, "min_bytes": 7, "probability_pct": 100}
    }
    assert state["interfaces"]["eth0"] == {}


@pytest.mark.parametrize(
    "ports,expected",
    [
        # every PFC port has its watchdog on: on for the switch
        ({"swp1": {"pfc_priorities": [3], "pfc_watchdog": {"enabled": True}},
          "swp2": {"pfc_priorities": []}}, {"enabled": True}),
        # one PFC port off: off, naming it
        ({"swp1": {"pfc_priorities": [3], "pfc_watchdog": {"enabled": True}},
          "swp2": {"pfc_priorities": [3], "pfc_watchdog": {"enabled": False}}},
         {"enabled": False, "disabled_ports": ["swp2"]}),
        # a PFC port whose watchdog was not read: unknown, not guessed
        ({"swp1": {"pfc_priorities": [3], "pfc_watchdog": {"enabled": True}},
          "swp2": {"pfc_priorities": [3]}}, None),
        # no port runs PFC: nothing to say
        ({"swp1": {"pfc_watchdog": {"enabled": False}}}, None),
    ],
)  # fmt: skip
def test_switch_pfc_watchdog_from_ports(ports: dict[str, Any], expected: dict[str, Any] | None) -> None:
    state = apply_port_defaults({"interfaces": ports})
    assert state.get("qos", {}).get("pfc_watchdog") == expected


def test_merge_classic_switch_nclu_and_traffic_conf() -> None:
    """One Cumulus 3.7 ToR (Microsoft SDN): NCLU MTUs + traffic.conf PFC/ECN on cos 4 (trust pcp+dscp)."""
    state = apply_port_defaults(
        merge_fragments(
            [
                parse_output(
                    "cumulus",
                    "net show configuration commands",
                    _sample("cumulus/net_show_configuration_commands-msft-sdn-sn2700-tor1.txt"),
                ),
                parse_output(
                    "cumulus",
                    "cat /etc/cumulus/datapath/traffic.conf",
                    _sample("cumulus/traffic.conf-msft-sdn-sn2700-pfc-ecn-cos4"),
                ),
            ]
        )
    )
    assert state["facts"]["hostname"] == "TOR1"
    swp1, swp20 = state["interfaces"]["swp1"], state["interfaces"]["swp20"]
    assert swp1 == {
        "mtu": 9216,
        "pfc_priorities": [4],
        "pfc_rx": True,
        "pfc_tx": True,
        "ecn": {
            "4": {
                "enabled": True,
                "min_bytes": 153600,
                "max_bytes": 1536000,
                "probability_pct": 100,
                "red_enabled": False,
            }
        },
        "trust": "dscp",
        "trust_modes": ["pcp", "dscp"],
        "pcp_to_priority": swp1["pcp_to_priority"],
        "dscp_to_priority": swp1["dscp_to_priority"],
    }
    assert swp1["pcp_to_priority"]["3"] == 4
    # swp20 has no NCLU mtu line: the MTU stays absent rather than defaulted.
    assert "mtu" not in swp20 and swp20["pfc_priorities"] == [4]
    assert len(state["interfaces"]) == 32
    jsonschema.validate(_state(state, "tor1"), schema_document())


@pytest.mark.parametrize("command", COMMANDS, ids=[c.template for c in COMMANDS])
def test_allow_list_is_read_only(command: Any) -> None:
    assert not WRITE_WORDS.search(command.template), command.template
    assert command.parser.__name__.startswith("parse_")


def test_per_interface_templates_match_and_capture() -> None:
    platform = get_platform("cumulus")
    command, params = platform.match("nv show interface swp3s1 qos roce status")
    assert command.template == "nv show interface {interface} qos roce status" and params == {
        "interface": "swp3s1"
    }
    with pytest.raises(KeyError):
        platform.match("nv set interface swp1 link mtu 1500")


def test_tree_table_nesting_and_misaligned_header() -> None:
    text = _sample("cumulus/nv_show_qos_roce-cl5.8-lossless.txt")
    table = read_tree_table(text, ParseContext("cumulus", "nv show qos roce"), "x")
    assert table.get("pfc", "pfc-priority").operational == "3"  # type: ignore[union-attr]
    assert table.get("enable").applied == "on"  # type: ignore[union-attr]
    assert table.get("mode").operational == "lossless"  # type: ignore[union-attr]
    assert set(table.sections) == {
        "RoCE PCP/DSCP->SP mapping configurations",
        "RoCE SP->TC mapping and ETS configurations",
        "RoCE pool config",
        "Exception List",
    }
    assert len(table.sections["RoCE pool config"]) == 4


def test_tree_table_without_header_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="no 'operational' column header"):
        read_tree_table("hostname leaf01\n", ParseContext("cumulus", "nv show system"), "the system table")


@pytest.mark.parametrize(
    ("spec", "ports"),
    [
        ("swp1-swp4,swp6", ["swp1", "swp2", "swp3", "swp4", "swp6"]),
        ("swp31-32", ["swp31", "swp32"]),
        ("swp50s0-swp50s3", ["swp50s0", "swp50s1", "swp50s2", "swp50s3"]),
        ("peerlink.4094", ["peerlink.4094"]),
    ],
)
def test_expand_ports(spec: str, ports: list[str]) -> None:
    assert expand_ports(spec) == ports


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("146.48 KB", 149996),
        ("1.43 MB", 1499464),
        ("0 Bytes", 0),
        ("13.47 MB", 14124319),
        ("inf", None),
        ("-", None),
    ],
)
def test_size_bytes(text: str, value: int | None) -> None:
    assert size_bytes(text) == value


def test_nvue_link_that_is_not_an_object_gives_no_fields() -> None:
    """A damaged answer with ``"link": true`` (found by the fuzz harness) is read, not a crash."""
    text = '{"eth0": {"link": {"mtu": 1500, "speed": "1G"}, "type": "eth"}, "swp1": {"link": true, "type": "swp"}}'
    got = parse_output("cumulus", "nv show interface -o json", text)
    assert got == {"interfaces": {"eth0": {"mtu": 1500, "speed_gbps": 1}, "swp1": {}}}


# --- which releases have which command (issue 15, item 1) -----------------------------------------

REPO = Path(__file__).resolve().parents[2]


def _release_table() -> dict[str, tuple[str, str]]:
    """docs/platforms/cumulus.md's 'Commands per release' table: command -> (releases, unsupported)."""
    text = (REPO / "docs" / "platforms" / "cumulus.md").read_text("utf-8")
    section = text.split("## Commands per release", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0].startswith("`"):
            rows[cells[0].strip("`")] = (cells[1], cells[2])
    return rows


def test_the_docs_release_table_is_the_code_s() -> None:
    table = _release_table()
    assert set(table) == {c.template for c in COMMANDS}
    for command in COMMANDS:
        releases, unsupported = table[command.template]
        if command.releases is None:
            assert releases == "every release", command.template
            continue
        assert releases == command.releases.describe(), command.template
        assert command.releases.source, f"{command.template}: the release range names its source"
        feeds = ", ".join(f"`{p}`" for p in command.releases.feeds) or "-"
        assert unsupported == feeds, command.template


@pytest.mark.parametrize(
    ("release", "lldp_source", "absent"),
    [
        ("5.14.0", "nv show interface lldp-detail", {"net show interface all json"}),
        ("5.9.1", "nv show interface lldp-detail", {"net show interface all json"}),
        ("5.0.0", "nv show interface lldp-detail", {"net show interface all json"}),
        ("4.4.3", "net show interface all json", {"nv show interface lldp-detail", "nv show system"}),
        ("3.7.15", "net show interface all json", {"nv config show -o json", "nv show qos roce"}),
    ],
)
def test_every_release_has_exactly_one_lldp_source(release: str, lldp_source: str, absent: set[str]) -> None:
    from fabline.collect.device import for_release

    plan = get_platform("cumulus").run
    keep, skipped = for_release("cumulus", plan.device_commands, release)
    lldp = [c for c in keep if c in ("nv show interface lldp-detail", "net show interface all json")]
    assert lldp == [lldp_source]
    assert absent <= {r.command for r in skipped}
    assert all(r.status == "not_in_release" and release in (r.message or "") for r in skipped)


@pytest.mark.parametrize(
    ("release", "has_watchdog", "has_transceiver"),
    [("5.5.1", False, False), ("5.6.0", True, False), ("5.10.1", True, False), ("5.11.0", True, True)],
)
def test_per_port_commands_follow_the_release(
    release: str, has_watchdog: bool, has_transceiver: bool
) -> None:
    from fabline.collect.device import for_release

    keep, _ = for_release("cumulus", get_platform("cumulus").run.interface_commands, release)
    assert ("nv show interface {interface} qos pfc-watchdog" in keep) is has_watchdog
    assert ("nv show interface {interface} transceiver" in keep) is has_transceiver


def test_an_unknown_release_sends_everything() -> None:
    from fabline.collect.device import for_release

    plan = get_platform("cumulus").run
    for release in (None, "", "unknown build"):
        keep, skipped = for_release("cumulus", plan.device_commands, release)
        assert keep == list(plan.device_commands) and skipped == []


def test_release_numbers_compare_as_numbers() -> None:
    from fabline.platforms.base import Releases, release_key

    assert release_key("5.10.0") > release_key("5.9.1")  # type: ignore[operator]
    assert release_key("5.9") == release_key("5.9.0")
    assert Releases(since="5.11").has("5.11.0-rc1") is True
    assert Releases(since="5.6", until="5.16").has("5.16.0") is False
    assert Releases(since="5.6", until="5.16").has("5.15.9") is True


@pytest.mark.parametrize(
    "qos",
    [
        {"congestion-control": "default-global"},
        {"mapping": ["default-global"], "pfc": 3},
        {"pfc": {"default-global": {"switch-priority": {"3": {}}}}, "congestion-control": None},
    ],
)
def test_nv_config_show_json_sections_of_the_wrong_type_are_ignored(qos: dict[str, Any]) -> None:
    """A QoS profile section or interface table that is not an object (the fuzz test found one) is
    read as absent, never an AttributeError."""
    doc = {"set": {"system": {"hostname": "leaf1"}, "qos": qos, "interface": ["swp1"]}}
    import json

    fragment = parse_output("cumulus", "nv config show -o json", json.dumps(doc))
    assert fragment["facts"] == {"hostname": "leaf1"}
    assert "interfaces" not in fragment or fragment["interfaces"] == {}
    pfc = fragment.get("qos", {}).get("port_defaults", {}).get("pfc_priorities")
    assert pfc in (None, [3])


def test_module_firmware_word_planted_on_a_5_10_switch_reads_back_as_printed() -> None:
    """'nv show interface IF link phy-diag' prints the state's hex firmware word; parsed lower case."""
    from fabline import synthetic
    from fabline.platforms import parse_output
    from fabline.sim.render import render
    from fabline.sim.server import Simulator
    from fabline.synthetic import Fault

    faults = [
        Fault("leaf-r1-a", "facts.os_version", "5.10.1"),
        Fault("leaf-r1-a", "optics.firmware", "0x2e820044", "swp3"),
    ]
    dev = Simulator(synthetic.lab_fabric(), faults).devices["leaf-r1-a"]
    command = "nv show interface swp3 link phy-diag"
    got = parse_output("cumulus", command, dev.answer(command, render).out)
    assert got["interfaces"]["swp3"]["optics"]["firmware"] == "0x2e820044"
