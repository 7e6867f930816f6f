"""Hostile device output against the parsers (issue 11, items 3, 5, 6, 7, 10).

Every case here comes from the adversarial probe of the parsers: a range bomb in one config line,
JSON that breaks Python's limits, a field that made a regex quadratic, an output of another command,
a truncated output, a value the state schema forbids, an escape sequence in a device string. Each
must end as the command's ``ParseError`` (``fabline parse`` exit 2) or a clean, valid fragment, and
quickly: the time bound below is a guard against a bomb (seconds instead of minutes), not a speed
goal (those live in ``bench/``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from fabline.cli import main
from fabline.errors import ParseError
from fabline.platforms import PLATFORMS, parse_output
from fabline.state import schema_problem
from tests.conftest import samples_dir

CASES = Path(__file__).resolve().parents[1] / "parsers" / "cases"
LOCAL = Path(__file__).resolve().parents[1] / "parsers" / "local"
#: A bomb took 7.5 s to minutes; a bounded parser answers in milliseconds. Generous for a loaded CI box.
BOUND_S = 3.0


def bounded(call: Callable[[], Any]) -> Any:
    """Run ``call`` and assert it ended within :data:`BOUND_S`; return what it returned."""
    start = time.perf_counter()
    try:
        return call()
    finally:
        assert time.perf_counter() - start < BOUND_S


def rejects(platform: str, command: str, output: str, *needles: str) -> ParseError:
    """Assert the output is the command's ParseError (within the bound), its message naming ``needles``."""
    with pytest.raises(ParseError) as info:
        bounded(lambda: parse_output(platform, command, output))
    for needle in needles:
        assert needle in str(info.value), str(info.value)
    return info.value


# --- item 3: ranges bounded by their domain ---------------------------------------------------------


def test_eos_dscp_range_bomb_names_the_line() -> None:
    config = "hostname leaf1\nqos map dscp 0-1000000 to traffic-class 3\ninterface Ethernet1\n   mtu 9214\n"
    rejects("arista_eos", "show running-config", config, "qos map dscp 0-1000000", "DSCP", "0-63")


def test_sonic_pfc_enable_range_bomb() -> None:
    doc = {
        "DEVICE_METADATA": {"localhost": {"hostname": "leaf1"}},
        "PORT": {"Ethernet0": {"mtu": "9100"}},
        "PORT_QOS_MAP": {"Ethernet0": {"pfc_enable": "3-4294967295"}},
    }
    rejects("sonic", "show runningconfiguration all", json.dumps(doc), "priority 4294967295", "0-7")


def test_sonic_queue_index_range_bomb() -> None:
    doc = {"PORT": {"Ethernet0": {"mtu": "9100"}}, "QUEUE": {"Ethernet0|0-3000000": {"wred_profile": "X"}}}
    rejects("sonic", "cat /etc/sonic/config_db.json", json.dumps(doc), "3000000")


def test_sonic_show_pfc_priority_range_bomb() -> None:
    table = "Interface    Lossless priorities\n-----------  ---------------------\nEthernet0    3-99999999\n"
    rejects("sonic", "show pfc priority", table, "priority")


def test_nxos_pfc_cos_range_bomb_names_the_line() -> None:
    config = (
        "hostname n9k\npolicy-map type network-qos RDMA\n  class type network-qos c-8q-nq3\n"
        "    pause pfc-cos 0-1000000\nsystem qos\n  service-policy type network-qos RDMA\n"
    )
    rejects("cisco_nxos", "show running-config", config, "pause pfc-cos 0-1000000", "0-7")


def test_cumulus_port_set_range_bomb() -> None:
    conf = "traffic.packet_priority_source_set = [dscp]\npfc.port_group_list = [g]\npfc.g.cos_list = [3]\n"
    conf += "pfc.g.port_set = swp1-swp100000000\n"
    rejects("cumulus", "cat /etc/cumulus/datapath/traffic.conf", conf, "swp1-swp100000000")


def test_cumulus_nvue_dscp_range_bomb() -> None:
    table = (
        "                 operational  applied\n---------------  -----------  -------\nenable                        on\n"
        "mode             lossless\n"
        "\nRoCE PCP/DSCP->SP mapping configurations\n===========================================\n"
        "    pcp  dscp        switch-prio\n    ---  ----------  -----------\n 0  3    0-1000000   3\n"
    )
    rejects("cumulus", "nv show qos roce", table, "DSCP")


# --- item 5: JSON outside Python's limits, wrong types ----------------------------------------------


@pytest.mark.parametrize(
    ("platform", "command"),
    [
        ("arista_eos", "show version | json"),
        ("sonic", "show runningconfiguration all"),
        ("cumulus", "nv show interface -o json"),
        ("linux", "lldpctl -f json"),
    ],
)
@pytest.mark.parametrize(
    "document",
    [
        "[" * 200_000 + "]" * 200_000,  # deeper than the C scanner's recursion
        '{"a":' * 500 + "1" + "}" * 500,  # deeper than any device document
        '{"version": ' + "9" * 5000 + ', "modelName": "x"}',  # beyond the 4,300-digit limit
        '{"version": NaN, "modelName": "x"}',
        '{"version": 1e999, "modelName": "x"}',
        '{"version": -Infinity}',
    ],
    ids=["deep-200k", "deep-500", "int-5000-digits", "nan", "1e999", "-infinity"],
)
def test_json_beyond_limits_is_a_parse_error(platform: str, command: str, document: str) -> None:
    rejects(platform, command, document)


def test_json_is_read_by_orjson_and_refusals_by_the_standard_reader() -> None:
    """load_json reads with orjson; a document it refuses is read again so the ParseError says what it always said."""
    from fabline.platforms import ParseContext
    from fabline.platforms.base import load_json

    ctx = ParseContext("arista_eos", "show version | json")
    assert load_json('{"a": 1.5, "b": [1, -2], "c": "x"}', ctx) == {"a": 1.5, "b": [1, -2], "c": "x"}
    assert load_json('{"n": 18446744073709551615}', ctx) == {"n": 2**64 - 1}  # a 64-bit counter stays exact
    big = load_json('{"n": 18446744073709551616}', ctx)["n"]
    assert type(big) is float  # beyond 64 bits: a float, which the schema refuses where an integer is due
    assert load_json('["\\ud800"]', ctx) == json.loads('["\\ud800"]')  # orjson refuses it; read as before
    for document, said in [
        ('{"a": 1e999}', "number 1e999 is out of range"),
        ('{"a": NaN}', "NaN is not a JSON number"),
        ('{"a": }', "invalid JSON at line 1 column 7"),
        ('{"a": ' + "9" * 5000 + "}", "invalid JSON: Exceeds the limit"),
    ]:
        with pytest.raises(ParseError, match=said):
            load_json(document, ctx)


@pytest.mark.parametrize(
    ("platform", "command", "document"),
    [
        ("arista_eos", "show lldp neighbors | json", {"lldpNeighbors": [{"port": "Et1", "neighborDevice": 5}]}),
        (
            "arista_eos",
            "show lldp neighbors detail | json",
            {"lldpNeighbors": {"Ethernet1": {"lldpNeighborInfo": [{"systemName": ["x"], "chassisId": "a"}]}}},
        ),
        ("arista_eos", "show interfaces | json", {"interfaces": {"Ethernet1": {"interfaceStatus": "up", "mtu": -5}}}),
        ("linux", "ip -j -d link show", [{"ifname": "eth0", "mtu": -9000, "flags": ["UP"]}]),
        ("linux", "ip -j -d link show", [{"ifname": "eth0", "mtu": "9000", "flags": "UP"}]),
        ("cumulus", "nv show interface -o json", {"swp1": {"type": "swp", "link": {"mtu": 10**20}}}),
        ("cumulus", "net show interface all json", {"swp1": {"iface_obj": {"lldp": {"x": 1}}, "linkstate": 5}}),
        ("sonic", "show runningconfiguration all", {"PORT": {"Ethernet0": {"speed": "1e400", "mtu": []}}}),
    ],
    ids=["eos-lldp-int", "eos-lldp-list", "eos-negative-mtu", "ip-negative-mtu", "ip-types", "nvue-mtu-1e20",
         "nclu-types", "configdb-types"],
)  # fmt: skip
def test_wrong_json_types_never_crash(platform: str, command: str, document: Any) -> None:
    """A value of the wrong JSON type is a ParseError or is left out, never an exception or bad state."""
    try:
        fragment = bounded(lambda: parse_output(platform, command, json.dumps(document)))
    except ParseError:
        return
    assert schema_problem(fragment) is None, fragment


def test_fabline_parse_exits_2_on_deep_json(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    out.write_text("[" * 100_000)
    result = CliRunner().invoke(
        main, ["parse", "--platform", "sonic", "--command", "show runningconfiguration all", str(out)]
    )
    assert result.exit_code == 2, result.output
    assert "internal error" not in result.output


def test_eos_watchdog_timeout_dot_is_not_a_number() -> None:
    """``float('-.')`` was an internal error; a timeout that is no number is not read."""
    config = "hostname l1\npriority-flow-control pause watchdog default timeout -.\n"
    config += "priority-flow-control pause watchdog default recovery-time .\n"
    fragment = parse_output("arista_eos", "show running-config", config)
    # What the config says besides the watchdog is read (a running-config without the dynamic
    # load-balancing line says adaptive routing is off); no watchdog value is.
    assert fragment == {"facts": {"hostname": "l1"}, "load_balance": {"adaptive_routing": False}}


# --- item 6: no regex backtracks on a long field ----------------------------------------------------


def test_cumulus_transceiver_long_digit_field() -> None:
    """26 s on a 20,000-digit field once: now the line is refused, and a 4,000-digit one is linear."""
    head = "identifier     : QSFP28\nch-1-rx-power  : 0.8 mW / -"
    rejects("cumulus", "nv show interface swp1 transceiver", head + "1" * 20_000 + " dB\n", "a line of 20,0")
    fragment = bounded(
        lambda: parse_output("cumulus", "nv show interface swp1 transceiver", head + "1" * 4000 + " dB\n")
    )
    assert fragment == {"interfaces": {"swp1": {"optics": {"identifier": "QSFP28"}}}}


def _cases() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in sorted(CASES.glob("*/*.yml")):
        case = yaml.safe_load(path.read_text("utf-8"))
        if "expected" in case:
            out.append((path.parent.name, case))
    return out


def _text(case: dict[str, Any]) -> str:
    path = samples_dir() / case["sample"] if "sample" in case else LOCAL / case["local"]
    return path.read_text("utf-8", errors="replace")


SUCCESS_CASES = _cases()


@pytest.mark.parametrize(
    ("platform", "case"),
    SUCCESS_CASES,
    ids=[f"{p}/{c.get('sample') or c['local']}" for p, c in SUCCESS_CASES],
)
def test_long_fields_stay_linear(platform: str, case: dict[str, Any]) -> None:
    """Every real output with a 20,000-character token spliced into its first line of text."""
    text = _text(case)
    lines = text.splitlines() or [""]  # an empty answer (an empty file) gets the token as its one line
    at = next((i for i, line in enumerate(lines) if line.strip()), 0)
    for filler in ("7" * 20_000, "7" * 4000, "a" * 4000, " " * 4000 + "x", "-." * 2000, "1." * 2000):
        spliced = "\n".join([*lines[:at], lines[at] + filler, *lines[at + 1 :]])
        try:
            fragment = bounded(lambda text=spliced: parse_output(platform, case["command"], text))
        except ParseError:
            continue
        assert schema_problem(fragment) is None


# --- item 7: each parser recognises its own output ---------------------------------------------------


def test_cumulus_link_and_pfc_watchdog_views_are_not_swapped() -> None:
    link = "        operational  applied\n------  -----------  -------\nstate   up           up\nmtu     9216         9216\nspeed   400G\n"
    watchdog = "       operational  applied\n-----  -----------  -------\nstate  enabled      enabled\n"
    rejects("cumulus", "nv show interface swp1 qos pfc-watchdog", link)
    rejects("cumulus", "nv show interface swp1 link", watchdog)


def test_hostname_is_not_a_kernel_release() -> None:
    rejects("linux", "cat /proc/sys/kernel/hostname", "5.15.0-105-generic\n", "kernel release")
    assert parse_output("linux", "cat /proc/sys/kernel/hostname", "gpu-01\n") == {
        "facts": {"hostname": "gpu-01"}
    }


def test_sonic_db_dump_is_not_nvue_interface_json() -> None:
    dump = json.dumps(
        {"PORT|Ethernet0": {"type": "hash", "value": {"mtu": "9100"}, "ttl": -1, "expireat": 0}}
    )
    rejects("cumulus", "nv show interface -o json", dump)


def _commands(platform: str) -> list[tuple[str, str]]:
    """(parser name, a concrete command line) for every command of a platform."""
    out = []
    for cmd in PLATFORMS[platform].commands:
        params = dict.fromkeys(cmd.parameters, "eth0" if platform == "linux" else "Ethernet0")
        out.append((cmd.parser.__name__, cmd.render(**params)))
    return out


#: Platforms whose parsers still accept another command's sample (each entry is a known defect).
_CROSS_ACCEPT_KNOWN: dict[str, str] = {}


@pytest.mark.parametrize(
    "platform",
    [
        pytest.param(p, marks=pytest.mark.xfail(reason=_CROSS_ACCEPT_KNOWN[p], strict=True))
        if p in _CROSS_ACCEPT_KNOWN
        else p
        for p in sorted(PLATFORMS)
    ],
)
def test_no_parser_accepts_another_commands_sample(platform: str) -> None:
    """Each real sample of a platform goes through every other command of that platform: refused."""
    own: dict[str, set[str]] = {}
    for plat, case in SUCCESS_CASES:
        if plat == platform:
            own.setdefault(case.get("sample") or case["local"], set()).add(
                PLATFORMS[platform].match(case["command"])[0].parser.__name__
            )
    accepted = []
    for source, parsers in sorted(own.items()):
        text = _text({"sample": source} if (samples_dir() / source).is_file() else {"local": source})
        for parser, line in _commands(platform):
            if parser in parsers:
                continue
            try:
                parse_output(platform, line, text)
            except ParseError:
                continue
            accepted.append(f"{source} as {line!r}")
    assert not accepted, accepted


@pytest.mark.parametrize(
    ("platform", "case"),
    SUCCESS_CASES,
    ids=[f"{p}/{c.get('sample') or c['local']}" for p, c in SUCCESS_CASES],
)
def test_truncated_output_is_never_an_empty_success(platform: str, case: dict[str, Any]) -> None:
    """Cut after its header: a parse error, or a fragment that holds data (a marked parser may say 'none')."""
    text = _text(case)
    lines = text.splitlines()
    for keep in (1, 2, 3, len(lines) // 2):
        cut = "\n".join(lines[:keep]) + "\n"
        try:
            fragment = parse_output(platform, case["command"], cut)
        except ParseError:
            continue
        assert schema_problem(fragment) is None
        parser = PLATFORMS[platform].match(case["command"])[0].parser
        assert fragment or getattr(parser, "may_be_empty", False)


def test_fragment_outside_schema_ranges_is_rejected() -> None:
    config = "hostname l1\ninterface Ethernet1\n   priority-flow-control on\n   priority-flow-control priority 9 no-drop\n"
    rejects("arista_eos", "show running-config", config, "pfc_priorities", "7")
    links = "1: eth0: <BROADCAST,UP> mtu 99999999 qdisc mq state UP\n"
    rejects("linux", "ip link show", links, "mtu")


# --- item 10: control characters never leave the parser ----------------------------------------------


def test_escape_sequences_are_stripped_from_device_strings() -> None:
    text = (
        'Interface Ethernet1 detected 1 LLDP neighbors:\n\n  Neighbor 0800.2700.0001/"Ethernet2", age 3 seconds\n'
        "  Discovered 1 day, 2:33:44 ago; Last changed 1 day, 2:33:44 ago\n"
        "  - Chassis ID type: MAC address (4)\n    Chassis ID     : 0800.2700.0001\n"
        '  - Port ID type: Interface name (5)\n    Port ID        : "Ethernet2"\n'
        '  - System Name: "spine\x1b[2J\x1b]0;owned\x1b\\-1"\n'
    )
    fragment = parse_output("arista_eos", "show lldp neighbors detail", text)
    device = fragment["interfaces"]["Ethernet1"]["lldp"]["device"]
    assert "\x1b" not in device and device.startswith("spine")
    doc = {"lldpNeighbors": [{"port": "Et1", "neighborDevice": "a\u001b[31mred\r\nb", "neighborPort": "Et2"}]}
    fragment = parse_output("arista_eos", "show lldp neighbors | json", json.dumps(doc))
    assert fragment["interfaces"]["Ethernet1"]["lldp"]["device"] == "a [31mred b"


# --- item 11: redaction applies to what is stored and shown, never to what is parsed ----------------


@pytest.mark.parametrize("password", ["9000", "eth2", "BROADCAST"])
def test_a_password_that_is_a_common_token_does_not_change_the_evidence(password: str) -> None:
    """A password equal to the MTU, an interface name or a flag: parsed from the real answer."""
    from fabline.collect.device import collect_device
    from tests.unit.test_collect_device import HOST_FILES, FakeSession, factory_for
    from tests.unit.test_collect_transports import make_device

    device = make_device("gpu-1", "linux", 22, password=password, rail_interfaces=["eth2"])
    result = collect_device(device, factory_for(FakeSession(HOST_FILES)))
    assert [r.command for r in result.records if r.status == "parse_error"] == []
    eth2 = result.state["interfaces"]["eth2" if password != "eth2" else "********"]
    assert eth2["mtu"] == 9000 and eth2["admin_up"] is True
    raw = result.raw[next(r.file for r in result.records if r.command == "ip -j -d link show")]
    assert password not in raw.replace("********", "") and "********" in raw


def test_device_strings_are_inert_in_the_markdown_report() -> None:
    """An LLDP system name is set by whoever controls the neighbour (item 10, report side)."""
    from fabline.reports.markdown import _cell

    cell = _cell('spine <img src=x onerror="fetch(1)"> [x](javascript:1) `c` a|b \x1b[31mred\r\n&amp;')
    assert "<img" not in cell and "&lt;img" in cell
    assert "](" not in cell.replace("\\](", "") and "\\`c\\`" in cell and "a\\|b" in cell
    assert "\x1b" not in cell and "\n" not in cell and "&amp;amp;" in cell
    assert (
        _cell("leaf1 swp1 <-> gpu-1 eth2: pfc_priorities [3, 4]")
        == "leaf1 swp1 <-> gpu-1 eth2: pfc_priorities [3, 4]"
    )


# --- item 8: check judges only valid values ------------------------------------------------------

_MTU_BASELINE = """
rules:
  - id: switch-mtu
    description: A smaller port MTU drops jumbo RoCE frames.
    severity: critical
    select:
      roles: [leaf]
      interfaces: {name: "Ethernet[0-9]+", admin_up: true}
    expect:
      - {path: mtu, min: 9100}
  - id: host-mtu
    description: Hosts send 9000-byte RoCE frames.
    severity: major
    select: {roles: [host], interfaces: {in_var: rail_interfaces}}
    expect:
      - {path: mtu, equals: 9000}
"""


@pytest.mark.parametrize(
    ("field", "value"),
    [("mtu", 1e308), ("mtu", 9100.5), ("mtu", 1e20), ("mtu", "9100"), ("mtu", True), ("admin_up", "false")],
)
def test_a_corrupt_value_is_an_error_naming_the_field(tmp_path: Path, field: str, value: Any) -> None:
    from tests.helpers import FakeDevice, run, state

    body: dict[str, Any] = {"admin_up": True, "mtu": 9100, field: value}
    docs = [state("leaf1", interfaces={"Ethernet0": body, "Ethernet4": {"admin_up": True, "mtu": 9216}})]
    outcome = run(tmp_path, _MTU_BASELINE, [FakeDevice("leaf1")], docs)
    got = {(r.subject, r.status.value): r.message for r in outcome.results if r.check == "switch-mtu"}
    assert got.get(("Ethernet0", "error")) is not None, got
    assert f"interfaces.Ethernet0.{field} is invalid" in got[("Ethernet0", "error")]
    assert ("Ethernet4", "pass") in got or not any(k[0] == "Ethernet4" for k in got)


def test_a_rail_interface_missing_from_the_state_is_an_error(tmp_path: Path) -> None:
    from tests.helpers import FakeDevice, run, state

    host = FakeDevice("gpu1", platform="linux", role="host", vars={"rail_interfaces": ["eth2", "eth3"]})
    for interfaces in ({}, {"eth2": {"mtu": 9000}}):
        outcome = run(tmp_path, _MTU_BASELINE, [host], [state("gpu1", interfaces=interfaces)])
        results = {(r.subject, r.status.value): r.message for r in outcome.results if r.check == "host-mtu"}
        assert ("eth3", "error") in results, results
        assert "eth3 (in rail_interfaces) is not in the collected state" in results[("eth3", "error")]
        assert not any(status == "skipped" for _, status in results)


def test_eos_queue_drops_with_a_counters_block_of_the_wrong_type() -> None:
    """A VOQ block that is not an object (the fuzz test found ``true``) is read as absent."""
    import json

    from fabline.platforms import parse_output

    doc = {"interfaces": {"Ethernet48": {"trafficClasses": {
        "TC0": {"ingressVoqCounters": True, "egressQueueCounters": {"countersSum": {"droppedPackets": 3}}},
    }}}}  # fmt: skip
    fragment = parse_output("arista_eos", "show interfaces counters queue drops | json", json.dumps(doc))
    assert fragment["interfaces"]["Ethernet48"]["counters"]["queue_dropped"] == {"0": 3}
