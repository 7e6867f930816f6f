"""Rendered Arista EOS configs say what Arista's own data model renders for the same intent (issue 15, item 8).

``pyavd`` (Arista AVD's Python package) renders EOS CLI from its ``eos_cli_config_gen`` structured
config, whose schema lists the values EOS takes (for instance the speeds of a 400G port:
``400g-8``, ``400g-4``...). Each EOS switch of the golden design is rendered by fabline, and the same
intent (hostname, QoS maps, PFC watchdog timers, every port, loopback, BGP) is written as AVD
structured config, validated against AVD's schema and rendered by pyavd; the two configs must hold
the same lines under the same parents (AVD orders sections its own way, so blocks are compared,
not positions). The one fabline line AVD has no key for, the per-port ``priority-flow-control pause
watchdog``, is passed to AVD as the interface's raw ``eos_cli``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fabline.design.model import load_design
from fabline.design.render import Renderer, render_design
from fabline.platforms import parse_output
from fabline.platforms.arista_eos_config import config_tree

pyavd = pytest.importorskip("pyavd", reason="pyavd is in the dev extra (pip install -e '.[dev]')")

ROOT = Path(__file__).resolve().parents[2]
DESIGN = ROOT / "tests" / "golden" / "configs" / "design.yml"
TEMPLATES = ROOT / "templates"

#: AVD's speed value for a port speed (its schema: 'forced <N>gfull' only up to 100G).
AVD_SPEED = {10: "forced 10000full", 25: "forced 25gfull", 40: "forced 40gfull", 50: "forced 50gfull",
             100: "forced 100gfull", 200: "200g-4", 400: "400g-8", 800: "800g-8"}  # fmt: skip


def structured_config(context: dict[str, Any]) -> dict[str, Any]:
    """AVD ``eos_cli_config_gen`` input for one switch's design intent (the template's context)."""
    q, dev = context["qos"], context["device"]
    interfaces: list[dict[str, Any]] = []
    for p in context["ports"]:
        if not p.peer:
            interfaces.append({"name": p.name, "description": "unused", "shutdown": True})
            continue
        interfaces.append({
            "name": p.name, "description": f"{p.peer} {p.peer_port}", "shutdown": False,
            "mtu": context["port_mtu"], "speed": AVD_SPEED[int(p.speed_gbps)],
            "error_correction_encoding": {"enabled": True, "reed_solomon": True},
            "switchport": {"enabled": False}, "ip_address": p.address, "qos": {"trust": "dscp"},
            "priority_flow_control": {"enabled": True, "priorities": [{"priority": q["roce_priority"], "no_drop": True}]},
            "tx_queues": [{"id": q["roce_priority"], "random_detect": {"ecn": {"threshold": {
                "units": "bytes", "min": q["ecn_min_bytes"], "max": q["ecn_max_bytes"],
                "max_probability": q["ecn_probability_pct"]}}}}],
            "eos_cli": "priority-flow-control pause watchdog",
        })  # fmt: skip
    fabric = [p for p in context["ports"] if p.kind == "fabric"]
    return {
        "hostname": dev["name"],
        "service_routing_protocols_model": "multi-agent",
        "qos": {"map": {"dscp": [f"{q['roce_dscp']} to traffic-class {q['roce_priority']}",
                                 f"{q['cnp_dscp']} to traffic-class {q['cnp_priority']}"]}},
        "priority_flow_control": {"watchdog": {"timeout": f"{q['pfc_watchdog_detection_ms'] / 1000}",
                                               "recovery_time": f"{q['pfc_watchdog_restoration_ms'] / 1000}"}},
        "ethernet_interfaces": interfaces,
        "loopback_interfaces": [{"name": "Loopback0", "ip_address": f"{dev['loopback']}/32"}],
        "ip_routing": True,
        "router_bgp": {
            "as": str(dev["asn"]), "router_id": dev["loopback"], "maximum_paths": {"paths": 128, "ecmp": 128},
            "neighbors": [{"ip_address": p.peer_address, "remote_as": str(p.peer_asn), "description": p.peer}
                          for p in fabric],
            "address_family_ipv4": {"networks": [{"prefix": f"{dev['loopback']}/32"}]},
        },
    }  # fmt: skip


def blocks(text: str) -> dict[str, set[str]]:
    """Each top-level line with the set of every line below it (``!`` comments and ``end`` left out)."""
    out: dict[str, set[str]] = {}

    def walk(node: Any, into: set[str]) -> None:
        for child in node.children:
            into.add(child.text)
            walk(child, into)

    for root in config_tree(text):
        if root.text != "end":
            walk(root, out.setdefault(root.text, set()))
    return out


@pytest.fixture(scope="module")
def renders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, str]]:
    design = load_design(DESIGN)
    out = tmp_path_factory.mktemp("eos")
    render_design(design, TEMPLATES, out)
    renderer = Renderer(design, TEMPLATES)
    got = {}
    for sw in design.switches:
        if sw.platform != "arista_eos":
            continue
        validated = pyavd.validate_structured_config(structured_config(renderer.switch_context(sw)))
        assert not validated.validation_result.violations, validated.validation_result.violations
        got[sw.name] = (
            (out / sw.name / "startup-config").read_text(),
            pyavd.get_device_config(validated.validated_data),
        )
    assert got, "the golden design has EOS switches"
    return got


def test_every_line_is_what_pyavd_renders(renders: dict[str, tuple[str, str]]) -> None:
    for name, (fabline, avd) in renders.items():
        ours, theirs = blocks(fabline), blocks(avd)
        assert ours == theirs, (
            name,
            {
                k: (ours.get(k), theirs.get(k))
                for k in set(ours) ^ set(theirs) or [k for k in ours if ours[k] != theirs.get(k)]
            },
        )


def test_400g_ports_use_a_speed_avd_allows(renders: dict[str, tuple[str, str]]) -> None:
    for fabline, _ in renders.values():
        speeds = {ln.strip() for ln in fabline.splitlines() if ln.strip().startswith("speed ")}
        assert speeds == {"speed 400g-8"}


@pytest.mark.parametrize("gbps", sorted(AVD_SPEED))
def test_every_speed_the_template_emits_is_in_avd_schema_and_reads_back(gbps: int) -> None:
    result = pyavd.validate_structured_config(
        {"ethernet_interfaces": [{"name": "Ethernet1", "speed": AVD_SPEED[gbps]}]}
    )
    assert not result.validation_result.violations
    state = parse_output(
        "arista_eos", "show running-config", f"interface Ethernet1\n   speed {AVD_SPEED[gbps]}\n"
    )
    assert state["interfaces"]["Ethernet1"]["speed_gbps"] == gbps
