"""The platform registry is the one place a platform is declared; everything else derives from it.

A toy sixth platform (a spec and a simulator renderer, both defined here and registered for the
test only) is picked up by every derived table, collected over real SSH from the simulator on
loopback, parsed, written and checked, with no edit anywhere else. The shipped tables agree with
the registry: the state JSON Schema's platform enum, the ``Platform`` enum, the simulator's
renderers and the parser cases.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jsonschema
import pytest
import yaml

from fabline import synthetic
from fabline.baseline import Selector
from fabline.collect.allowlist import CommandRefused, allowed, root_templates
from fabline.collect.profiles import PROFILES, check_profiles
from fabline.design.model import default_port_mtu
from fabline.inventory import load_inventory, platform_for_network_os
from fabline.platforms import (
    PLATFORMS,
    MtuKind,
    MtuSemantics,
    Platform,
    PlatformSpec,
    RunPlan,
    host_platform,
    parse_output,
    platform_ids,
    registered,
    switch_platforms,
)
from fabline.platforms.base import Command, Fragment, ParseContext, json_parser, text_parser
from fabline.remediate.common import RawReader, Remediation, Stages, Tasks, port_changes
from fabline.remediate.core import build_plan
from fabline.remediate.model import DeviceChange
from fabline.remediate.playbook import playbook
from fabline.results import Result, Severity, Status
from fabline.sim import render as sim_render
from fabline.sim.render.common import Answer
from fabline.sim.render.linux import not_found
from fabline.state import schema_document
from tests.conftest import REPO_ROOT
from tests.helpers import statuses
from tests.integration.test_collect_sim import cli, simulator, write_inventory

if TYPE_CHECKING:
    from fabline.sim.device import SimDevice


# ----------------------------------------------------------------------------------------------
# The toy platform: what a sixth platform module and its simulator renderer would hold.


@text_parser("a 'ToyOS <release>' line")
def parse_toy_version(text: str, ctx: ParseContext) -> Fragment:
    """``toy show version``: ``ToyOS <release>``."""
    words = text.split()
    if len(words) != 2 or words[0] != "ToyOS":
        raise ctx.reject(f"got {text.strip()[:40]!r}")
    return {"facts": {"os_version": words[1]}}


@json_parser("a JSON object of ports")
def parse_toy_ports(data: Any, ctx: ParseContext) -> Fragment:
    """``toy show ports``: a JSON object port -> {up, mtu, peer, peer_port}."""
    if not isinstance(data, dict):
        raise ctx.reject("not an object")
    interfaces: dict[str, Any] = {}
    for name, port in data.items():
        body: dict[str, Any] = {"admin_up": port["up"], "oper_up": port["up"], "mtu": port["mtu"]}
        if port.get("peer"):
            body["lldp"] = {"device": port["peer"], "port": port["peer_port"]}
        interfaces[name] = body
    return {"interfaces": interfaces}


@text_parser("a 'BIOS <version>' line")
def parse_toy_bios(text: str, ctx: ParseContext) -> Fragment:
    """``sudo -n toy show bios`` (a read that needs root): ``BIOS <version>``."""
    words = text.split()
    if len(words) != 2 or words[0] != "BIOS":
        raise ctx.reject(f"got {text.strip()[:40]!r}")
    return {"facts": {"bios_version": words[1]}}


# Its change format: what a remediation module of the platform would hold (the spec names it).


def emit_toy(stages: Stages, raw: RawReader) -> DeviceChange:
    """ToyOS takes ``toy set port <port> mtu <n>`` lines."""
    change = DeviceChange(stages.device, "toyos", list(stages.fixes))
    diffs = port_changes(stages.before, stages.after)
    lines = [f"toy set port {port} mtu {diff['mtu']}" for port, diff in diffs.items() if "mtu" in diff]
    change.files[f"{stages.device}.toy.txt"] = "\n".join(lines) + "\n"
    change.steps += lines
    return change


def toy_tasks(change: DeviceChange, disruptive: bool) -> Tasks:
    """One script task for the traffic-safe part; ToyOS has no disruptive one."""
    if disruptive:
        return [], {}
    return [{"name": "toy apply", "ansible.builtin.script": f"devices/{change.device}.toy.txt"}], {}


TOY_REMEDIATION = Remediation(emit_toy, toy_tasks)


def toy_synthetic_extras(doc: dict[str, Any]) -> None:
    """What a collection of a healthy ToyOS switch adds to a synthetic state: its uptime."""
    doc.setdefault("facts", {}).setdefault("uptime_s", 86400)


TOY = PlatformSpec(
    id="toyos",
    description="ToyOS, a switch that exists only in this test",
    kind="switch",
    commands=(
        Command("toy show version", parse_toy_version, "facts.os_version"),
        Command("toy show ports", parse_toy_ports, "interfaces.*.{admin_up,oper_up,mtu,lldp}"),
        Command("sudo -n toy show bios", parse_toy_bios, "facts.bios_version"),
    ),
    root_commands=frozenset({"sudo -n toy show bios"}),
    run=RunPlan(
        platform="toyos",
        transport="exec",
        device_type=None,
        device_commands=("toy show version", "toy show ports"),
    ),
    network_os=("toyco.toyos.toyos", "toyos"),
    port_name=lambda index: f"tp{index + 1}",
    mtu=MtuSemantics(MtuKind.FRAME, fabric_mtu=9120),
    os_version="1.2.3",
    remediation=f"{__name__}:TOY_REMEDIATION",
    synthetic_extras=toy_synthetic_extras,
)


def render_toy(dev: SimDevice, line: str) -> Answer:
    """ToyOS answers its two commands from the device's state."""
    state = dev.state()
    if line == "toy show version":
        return Answer(f"ToyOS {state['facts']['os_version']}\n")
    if line == "toy show ports":
        ports = {
            name: {
                "up": bool(body.get("oper_up")),
                "mtu": body["mtu"],
                "peer": (body.get("lldp") or {}).get("device"),
                "peer_port": (body.get("lldp") or {}).get("port"),
            }
            for name, body in state["interfaces"].items()
        }
        return Answer(json.dumps(ports, indent=1) + "\n")
    return not_found(line.split(maxsplit=1)[0])


@pytest.fixture
def toy() -> Iterator[PlatformSpec]:
    """ToyOS registered (platform and simulator renderer) for one test."""
    with registered(TOY):
        sim_render.register_renderer(TOY.id, sim_render.Renderer(render_toy))
        try:
            yield TOY
        finally:
            del sim_render.RENDERERS[TOY.id]


# ----------------------------------------------------------------------------------------------
# The shipped tables agree with the registry.


def test_the_shipped_schema_enum_is_the_registry() -> None:
    shipped = json.loads((REPO_ROOT / "src/fabline/schemas/state-1.schema.json").read_text())
    assert shipped["properties"]["platform"]["enum"] == list(platform_ids())
    assert schema_document()["properties"]["platform"]["enum"] == list(platform_ids())


def test_the_platform_enum_is_the_registry() -> None:
    assert [p.value for p in Platform] == list(platform_ids())
    assert all(type(p) is str for p in platform_ids())  # plain strings in states and pickles


def test_every_platform_has_a_renderer_parser_cases_and_docs() -> None:
    assert set(sim_render.RENDERERS) == set(platform_ids())
    for p in platform_ids():
        assert list((REPO_ROOT / "tests/parsers/cases" / p).glob("*.yml")), p
        assert (REPO_ROOT / "docs/platforms" / f"{p}.md").is_file(), p
    assert check_profiles() == []


def test_registering_refuses_duplicates_and_inconsistent_specs(toy: PlatformSpec) -> None:
    with pytest.raises(ValueError, match="already registered"), registered(TOY):
        pass
    clash = PlatformSpec(**{**TOY.__dict__, "id": "toy2", "run": RunPlan("toy2", "exec", None, ())})
    with pytest.raises(ValueError, match=r"ansible_network_os 'toyco\.toyos\.toyos' already names 'toyos'"):
        registered(clash).__enter__()
    stray = RunPlan("toy3", "exec", None, ("toy reboot",))
    bad = PlatformSpec(**{**TOY.__dict__, "id": "toy3", "network_os": (), "run": stray})
    with pytest.raises(ValueError, match="'toy reboot' is not on the read-only allow-list"):
        registered(bad).__enter__()
    # A root read is named twice (its sudo -n command and root_commands), or the spec is refused.
    unlisted = PlatformSpec(**{**TOY.__dict__, "id": "toy4", "network_os": (), "root_commands": frozenset()})
    with pytest.raises(
        ValueError, match="'sudo -n toy show bios' runs with sudo -n but is not one of its root_commands"
    ):
        registered(unlisted).__enter__()
    stray_root = frozenset({*TOY.root_commands, "sudo -n toy reboot"})
    offlist = PlatformSpec(**{**TOY.__dict__, "id": "toy5", "network_os": (), "root_commands": stray_root})
    with pytest.raises(
        ValueError, match="root command 'sudo -n toy reboot' is not on the read-only allow-list"
    ):
        registered(offlist).__enter__()
    assert not {"toy2", "toy3", "toy4", "toy5"} & set(PLATFORMS)


# ----------------------------------------------------------------------------------------------
# A sixth platform: every derived table picks it up.


def test_a_registered_platform_reaches_every_derived_table(toy: PlatformSpec, tmp_path: Path) -> None:
    assert platform_ids()[-1] == "toyos" and "toyos" in switch_platforms()
    assert host_platform() == "linux"
    # Inventory: the platform id, its ansible_network_os names, and the error messages' lists.
    assert platform_for_network_os("ToyCo.ToyOS.ToyOS") == "toyos"
    inv = tmp_path / "inv.yml"
    hosts = {
        "t1": {"ansible_host": "127.0.0.1", "ansible_network_os": "toyos", "fabline_role": "leaf"},
        "t2": {"ansible_host": "127.0.0.1", "fabline_platform": "toyos", "fabline_role": "spine"},
    }
    inv.write_text(yaml.safe_dump({"all": {"hosts": hosts}}))
    devices = {d.name: d.platform for d in load_inventory(inv).devices()}
    assert devices == {"t1": "toyos", "t2": "toyos"}
    # Baseline selectors, the state schema, the collection plan and allow-list.
    assert Selector(platforms=["toyos"]).platforms == ["toyos"]
    with pytest.raises(ValueError, match="'napalm' or 'toyos'"):
        Selector(platforms=["toy"])
    assert schema_document()["properties"]["platform"]["enum"][-1] == "toyos"
    assert PROFILES["toyos"] is TOY.run and "toyos" in PROFILES and check_profiles() == []
    assert allowed("toyos", "toy show ports") == "toy show ports"
    with pytest.raises(CommandRefused, match="'toy reboot' is not on the read-only allow-list"):
        allowed("toyos", "toy reboot")
    # Its root reads: the allow-list's sudo rule is its spec's root_commands.
    assert allowed("toyos", "sudo -n toy show bios") == "sudo -n toy show bios"
    assert root_templates("toyos") == {"sudo -n toy show bios"}
    for line in ("sudo toy show bios", "sudo -n toy show ports", "sudo -n toy show bios; reboot"):
        with pytest.raises(CommandRefused):
            allowed("toyos", line)
    assert parse_output("toyos", "toy show version", "ToyOS 1.2.3\n") == {"facts": {"os_version": "1.2.3"}}
    # Port naming and MTU semantics: synthetic fabrics and designs.
    assert synthetic.port_name("toyos", 0) == "tp1"
    assert default_port_mtu()["toyos"] == 9120
    fabric = synthetic.rail_fabric(4, radix=4, leaf_platforms=("toyos",), spine_platforms=("toyos",))
    docs = list(synthetic.states(fabric))
    validator = jsonschema.Draft202012Validator(schema_document())
    for doc in docs:
        assert not list(validator.iter_errors(doc)), doc["name"]
    leaf = next(d for d in docs if d["platform"] == "toyos")
    assert leaf["facts"]["os_version"] == "1.2.3"
    assert {b["mtu"] for b in leaf["interfaces"].values()} == {9120}
    assert all(name.startswith("tp") for name in leaf["interfaces"])
    # What a collection of it adds to a synthetic state (bench data, clean-fabric tests).
    assert synthetic.as_collected(leaf)["facts"]["uptime_s"] == 86400
    assert not list(validator.iter_errors(leaf))


def test_a_registered_platform_is_collected_and_checked_end_to_end(toy: PlatformSpec, tmp_path: Path) -> None:
    """Real SSH from the simulator on loopback, the real collector, parsers, writer and checks."""
    fabric = synthetic.Fabric(
        [
            synthetic.DeviceSpec("toy-leaf", "leaf", "toyos", rail=0, ports=2),
            synthetic.DeviceSpec("gpu-01", "host", "linux", ports=1, rail_interfaces=["eth0"]),
        ],
        [("gpu-01", "eth0", "toy-leaf", "tp1")],
    )
    with simulator(fabric, base="127.46") as sim:
        inv = write_inventory(sim, tmp_path / "inv.yml")
        snap = tmp_path / "snap"
        result = cli("collect", "-i", inv, "-o", snap, "--known-hosts", tmp_path / "known_hosts")
        assert result.exit_code == 0, result.output
    got = json.loads((snap / "state" / "toy-leaf.json").read_text())
    assert (got["platform"], got["status"]) == ("toyos", "ok"), got.get("errors")
    assert got["facts"]["os_version"] == "1.2.3"
    assert got["interfaces"]["tp1"] == {
        "admin_up": True, "oper_up": True, "mtu": 9120, "lldp": {"device": "gpu-01", "port": "eth0"},
        "frame_bytes": 9120, "frame_bytes_tagged": 9120,  # its MTU semantics: mtu is the frame size
    }  # fmt: skip
    out = tmp_path / "reports"
    result = cli("check", "-i", inv, "--snapshot", snap, "--out", out, "-f", "json", "-q")
    assert result.exit_code in (0, 3, 4), result.output
    report = json.loads((out / "report.json").read_text())
    by_pair = statuses(report)
    assert any(device == "toy-leaf" for _, device in by_pair), "the toy switch was checked"
    link = [by_pair.get(("link-mtu", device)) for device in ("toy-leaf", "gpu-01")]
    assert link == [{"pass"}, {"pass"}], link


def test_a_registered_platform_is_remediated_through_its_spec(toy: PlatformSpec) -> None:
    """``fabline remediate`` finds a platform's change format and playbook tasks through its spec;
    a platform without one is refused by name."""
    interfaces = {"tp1": {"mtu": 1500}, "tp2": {"mtu": 9120}}
    states = {"t1": {"name": "t1", "platform": "toyos", "status": "ok", "interfaces": interfaces}}
    failing = [
        Result("switch-mtu", "t1", "tp1", Status.FAIL, Severity.MAJOR, {"mtu": {"min": 9100}}, None, "m")
    ]
    plan = build_plan(failing, states.get, {"t1": "toyos"}, None, {"toyos": TOY.mtu.fabric_mtu})
    assert [(c.device, c.platform) for c in plan.changes] == [("t1", "toyos")]
    assert plan.changes[0].files == {"t1.toy.txt": "toy set port tp1 mtu 9120\n"}  # the design's MTU
    assert plan.covered == {"t1::switch-mtu::tp1"} and not plan.skipped
    book = yaml.safe_load(playbook(plan) or "")
    assert book == [
        {"name": "t1 (toyos)", "hosts": "t1", "gather_facts": False,
         "tasks": [{"name": "toy apply", "ansible.builtin.script": "devices/t1.toy.txt"}]},
    ]  # fmt: skip
    # A platform with no change format: its devices are refused, the plan naming the platform.
    bare = PlatformSpec(
        **{**TOY.__dict__, "id": "toybare", "network_os": (), "remediation": None,
           "run": RunPlan("toybare", "exec", None, TOY.run.device_commands)}
    )  # fmt: skip
    with registered(bare):
        states["t1"]["platform"] = "toybare"
        plan = build_plan(failing, states.get, {"t1": "toybare"}, None, {})
    assert plan.changes == [] and playbook(plan) is None
    assert plan.skipped == {"t1": "no change format for platform 'toybare' yet"}
    assert plan.unresolved == {"t1::switch-mtu::tp1": "platform toybare has no change format"}
    # A spec naming its change format wrongly is refused when it is registered.
    with pytest.raises(
        ValueError, match="remediation 'toy-remediation' is not a 'module:attribute' reference"
    ):
        registered(PlatformSpec(**{**bare.__dict__, "remediation": "toy-remediation"})).__enter__()


def test_every_change_format_is_its_platforms_and_no_module_picks_one_by_id() -> None:
    """The shipped change formats load from their specs; the remediate package names no platform id."""
    from fabline.remediate.common import remediator

    formats = {p: remediator(p) for p in platform_ids()}
    assert [p for p, f in formats.items() if f is None] == ["napalm"]
    for f in formats.values():
        assert f is None or (callable(f.emit) and callable(f.tasks))
    dispatch = "".join(
        (REPO_ROOT / "src/fabline/remediate" / m).read_text("utf-8")
        for m in ("core.py", "playbook.py", "common.py", "output.py", "intent.py")
    )
    assert [p for p in platform_ids() if f'"{p}"' in dispatch or f"'{p}'" in dispatch] == []


def test_the_documented_mtu_rule_is_the_registry() -> None:
    """docs/state-schema.md states the MTU rule once; its table is each spec's MTU semantics."""
    doc = (REPO_ROOT / "docs/state-schema.md").read_text("utf-8")
    section = doc.split("### MTU and frame size", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0].startswith("`"):
            rows[cells[0].strip("`")] = cells
    assert list(rows) == list(platform_ids())
    for pid, (_, _, frame, tagged, fabric_mtu) in rows.items():
        sem = PLATFORMS[pid].mtu
        assert int(fabric_mtu) == sem.fabric_mtu, pid
        l3 = sem.kind is MtuKind.L3
        assert frame.endswith("`mtu` + 18") == l3 and tagged.endswith("`mtu` + 22") == l3, pid
        assert (sem.frame_limit_field is not None) == frame.startswith(f"`{sem.frame_limit_field}`"), pid
        body = {"mtu": sem.fabric_mtu}
        assert sem.frame_bytes(body) == ((body["mtu"] + 18, body["mtu"] + 22) if l3 else (body["mtu"],) * 2)


def test_parsers_and_renderers_share_each_platform_vocabulary() -> None:
    """A platform's FEC and trust words live once, in its spec; parser and simulator both use them."""
    from fabline.sim.render import arista_eos, cisco_nxos, cumulus, linux

    for pid, renderer_words in (
        ("cisco_nxos", cisco_nxos._FEC),
        ("cumulus", cumulus._FEC),
        ("linux", linux._FEC_WORD),
    ):
        assert renderer_words is PLATFORMS[pid].vocabulary.fec, pid
    eos = PLATFORMS["arista_eos"].vocabulary
    assert arista_eos._FEC["rs"] == f"error-correction encoding {eos.fec['rs']}"
    for spec in PLATFORMS.values():
        vocab = spec.vocabulary
        for mode, word in vocab.fec.items():
            assert vocab.fec_mode(word) == mode and vocab.fec_mode(word.upper()) == mode, (spec.id, word)
        for mode, word in vocab.trust.items():
            assert vocab.trust_mode(word) == mode, (spec.id, word)
    # Trust words: every switch platform with a trust setting has them, and its renderer writes them.
    for pid in ("arista_eos", "cisco_nxos", "cumulus"):
        assert set(PLATFORMS[pid].vocabulary.trust) == {"dscp", "pcp"}, pid
    assert PLATFORMS["cisco_nxos"].vocabulary.trust["dscp"] == cisco_nxos._TRUST_DSCP
    assert cumulus._mapping({}, "pcp")["trust"] == PLATFORMS["cumulus"].vocabulary.trust["pcp"] == "l2"
    nxos_config = (
        "class-map type qos match-any RDMA\n  match cos 3\npolicy-map type qos QOS\n  class RDMA\n"
        "    set qos-group 3\ninterface Ethernet1/1\n  service-policy type qos input QOS\n"
    )
    nxos = parse_output("cisco_nxos", "show running-config", nxos_config)["interfaces"]["Ethernet1/1"]
    assert (nxos["trust"], nxos["pcp_to_priority"]) == ("pcp", {"3": 3})
    # Each parser reads its platform's words (the simulator's round trips prove the rendered text).
    assert (
        parse_output(
            "linux",
            "ethtool --show-fec eth0",
            "FEC parameters for eth0:\nSupported/Configured FEC encodings: BaseR\nActive FEC encoding: BaseR\n",
        )["interfaces"]["eth0"]["fec"]
        == "fc"
    )


def test_the_collector_names_no_platform_command() -> None:
    """Commands belong to their platform spec: the per-device collection code names none of them."""
    device = (REPO_ROOT / "src/fabline/collect/device.py").read_text("utf-8")
    named = sorted(
        {
            t
            for spec in PLATFORMS.values()
            for t in spec.run.templates()
            if f'"{t}"' in device or f"'{t}'" in device or f"``{t}``" in device
        }
    )
    assert named == []


#: Where per-platform code lives, so naming a platform id there is expected: the platform modules,
#: the simulator's per-platform renderers, configurators and login dialects.
_PER_PLATFORM_CODE = ("platforms/", "sim/render/", "sim/config/", "sim/dialects.py")


def _id_branches(path: Path, ids: set[str]) -> list[str]:
    """Comparisons with a platform id literal and tables keyed on one, in one module's code."""
    tree = ast.parse(path.read_text("utf-8"))

    def is_id(node: ast.AST) -> bool:
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "Platform"
        ):
            return True  # Platform.SONIC
        return isinstance(node, ast.Constant) and node.value in ids

    def exempt(node: ast.AST) -> bool:
        # sys.platform == "linux" is the OS; a transport named like a platform ("napalm") is a transport.
        text = ast.unparse(node)
        return text == "sys.platform" or text.endswith("transport")

    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            literals = [
                e
                for o in operands
                for e in (o.elts if isinstance(o, ast.Tuple | ast.List | ast.Set) else [o])
            ]
            if any(is_id(e) for e in literals) and not any(exempt(o) for o in operands):
                found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.Dict) and any(k is not None and is_id(k) for k in node.keys):
            found.append(f"{path.name}:{node.lineno}: a table keyed on platform ids")
    return found


def test_no_code_outside_the_platforms_branches_on_a_platform_id() -> None:
    """Checks, the collector, the remediation, the synthetic fabrics: they ask the spec, never an id."""
    src = REPO_ROOT / "src" / "fabline"
    ids = set(platform_ids())
    found = [
        hit
        for path in sorted(src.rglob("*.py"))
        if not path.relative_to(src).as_posix().startswith(_PER_PLATFORM_CODE)
        for hit in _id_branches(path, ids)
    ]
    assert found == []
