"""Round trip: every allow-listed command the simulator answers, parsed by fabline's own parsers,
merged, gives back the state the simulator rendered (for the fields those commands cover).

No SSH here: the renderers are called directly (the SSH layer has its own integration tests).
"""

from __future__ import annotations

from typing import Any

import pytest

from fabline import synthetic
from fabline.collect.device import for_release
from fabline.errors import ParseError
from fabline.platforms import cumulus, get_platform, linux, merge_fragments, parse_output
from fabline.sim.render import render
from fabline.sim.server import Simulator

#: State paths (per interface unless they start with a top-level key) each platform's commands
#: are expected to give back; anything the parsers return must also agree with the state.
COVERED: dict[str, set[str]] = {
    "linux": {
        "admin_up", "oper_up", "mtu", "speed_gbps", "fec", "autoneg", "trust", "dscp_to_priority",
        "pfc_priorities", "lldp", "optics", "counters", "nic", "host.gpudirect_rdma", "host.nccl_env",
        "host.gpus", "host.gpu_driver", "host.fabric_manager", "host.iommu_params", "facts.bios_version",
        "facts.kernel", "facts.hostname",
    },
    "sonic": {
        "admin_up", "oper_up", "mtu", "speed_gbps", "fec", "autoneg", "trust", "dscp_to_priority",
        "pfc_priorities", "ecn", "lldp", "optics.vendor", "optics.part_number", "optics.serial",
        "optics.temperature_c", "optics.rx_power_dbm", "optics.tx_power_dbm",
        "counters.pfc_rx_pause", "counters.pfc_tx_pause", "counters.ecn_marked",
        "counters.fec_corrected", "counters.fec_uncorrectable",
        "qos.pfc_watchdog.enabled", "facts.os_version", "facts.serial", "facts.hostname",
        "bgp.asn", "bgp.router_id", "bgp.neighbors", "bgp.ecmp",
        "load_balance.hash_fields", "load_balance.hash_algorithm", "load_balance.hash_seed",
    },
    "arista_eos": {
        "admin_up", "oper_up", "mtu", "speed_gbps", "fec", "autoneg", "trust", "dscp_to_priority",
        "pfc_priorities", "ecn", "lldp", "optics.serial", "optics.rx_power_dbm",
        "optics.tx_power_dbm", "counters.crc_errors", "counters.ecn_marked", "qos.pfc_watchdog.enabled",
        "facts.os_version", "facts.serial", "facts.hostname",
        "bgp.asn", "bgp.router_id", "bgp.neighbors", "bgp.ecmp", "load_balance.hash_fields",
        "load_balance.adaptive_routing",
    },
    "cumulus": {
        "admin_up", "oper_up", "mtu", "speed_gbps", "fec", "autoneg", "trust", "dscp_to_priority",
        "pfc_priorities", "ecn", "lldp", "facts.os_version", "facts.serial", "facts.hostname",
        "facts.model", "counters.ecn_marked", "counters.cnp_sent", "optics", "qos.pfc_watchdog.enabled",
        "counters.fec_uncorrectable", "counters.fec_corrected", "fec_pre_ber",
        "bgp.asn", "bgp.router_id", "bgp.neighbors", "bgp.ecmp",
        "load_balance.hash_fields", "load_balance.hash_seed", "load_balance.adaptive_routing",
    },
    "cisco_nxos": {
        "admin_up", "oper_up", "mtu", "speed_gbps", "fec", "autoneg", "trust", "dscp_to_priority",
        "pfc_priorities", "ecn", "lldp", "optics", "counters.crc_errors", "counters.pfc_rx_pause",
        "counters.pfc_tx_pause", "counters.queue_dropped", "facts.os_version", "qos.pfc_watchdog.enabled",
        "facts.serial", "facts.hostname", "bgp.asn", "bgp.router_id", "bgp.neighbors", "bgp.ecmp",
    },
}  # fmt: skip

#: Platform formats that show only part of a field: (platform, field) -> what is compared.
#: NVUE's 'qos roce status' lists only the RoCE and CNP rows of the DSCP map, and prints
#: buffer sizes rounded to two decimals of KB/MB (within 0.5 %).
PARTIAL = {("cumulus", "dscp_to_priority"): ("26", "48")}
TOLERANCE = {("cumulus", "min_bytes"): 0.005, ("cumulus", "max_bytes"): 0.005}
#: Fields a platform's commands do not show on a port (none today: NVUE's 'qos roce status' has
#: no ECN probability row, but cumulus.apply_port_defaults fills it from the switch-wide profile).
#: BGP session descriptions: NX-OS's summary and NVUE's neighbour table do not print them.
NOT_SHOWN: set[tuple[str, str]] = {("cisco_nxos", "description")}
#: State values a platform prints with a prefix the parser keeps (none today).
PREFIXED: dict[tuple[str, str], str] = {}

#: Commands left out of a platform's round trip, with the reason.
SKIP: dict[str, dict[str, str]] = {
    "arista_eos": {
        # One row per lane interface: a 4-lane port shows lane 1 only, so the per-lane lists
        # come from 'dom thresholds | json' (collect it after these).
        "show interfaces transceiver | json": "lane 1 only",
        "show interfaces transceiver detail": "lane 1 only",
        "show interfaces transceiver": "lane 1 only",
    },
}


def command_lines(platform: str, state: dict[str, Any]) -> list[str]:
    """Every allow-listed command, per-interface templates once per interface."""
    lines = []
    ifaces = list(state.get("interfaces", {}))
    rdma = [
        b["nic"]["rdma_device"] for b in state["interfaces"].values() if "rdma_device" in b.get("nic", {})
    ]
    for cmd in get_platform(platform).commands:
        params = cmd.parameters
        if not params:
            lines.append(cmd.template)
        elif params == ("interface",):
            lines += [cmd.render(interface=i) for i in ifaces]
        elif params == ("rdma_device",):
            lines += [cmd.render(rdma_device=r) for r in rdma]
        elif params == ("prefix",):
            probe = (state.get("bgp") or {}).get("ecmp", {}).get("prefix")
            lines += [cmd.render(prefix=probe)] if probe else []
    return lines


def collect_direct(sim: Simulator, name: str) -> tuple[dict[str, Any], list[str]]:
    """Parse and merge every command's answer; returns the merged state and the failures."""
    dev = sim.devices[name]
    fragments = []
    failures = []
    release = (dev.state().get("facts") or {}).get("os_version")
    for line in command_lines(dev.platform, dev.state()):
        if line in SKIP.get(dev.platform, {}):
            continue
        answer = dev.answer(line, render)
        if not for_release(dev.platform, [line], release)[0]:
            # A command the release does not have (its documentation says so): the simulated
            # device must refuse it as that release does, never answer it.
            if answer.code == 0:
                failures.append(f"{line}: answered by {release}, which does not have it")
            continue
        try:
            fragments.append(parse_output(dev.platform, line, answer.out))
        except ParseError as exc:
            failures.append(f"{line}: {exc} | output: {answer.out[:200]!r} err {answer.err[:100]!r}")
    merged = merge_fragments(fragments)
    if dev.platform == "cumulus":
        cumulus.apply_port_defaults(merged)
    if dev.platform == "linux":
        linux.attach_rdma_devices(merged)
    return merged, failures


def _leaves(doc: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(doc, dict) and doc:
        out: dict[str, Any] = {}
        for k, v in doc.items():
            out.update(_leaves(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix: doc}


def differences(platform: str, state: dict[str, Any], parsed: dict[str, Any]) -> list[str]:
    """Covered state fields missing from the parse or parsed differently."""
    covered = COVERED[platform]
    problems = []
    want: dict[str, Any] = {}
    for name, body in state.get("interfaces", {}).items():
        for path, value in _leaves(body).items():
            want[f"interfaces.{name}.{path}"] = (path, value)
    for top in ("facts", "qos", "host", "bgp", "load_balance"):
        for path, value in _leaves(state.get(top, {}), top).items():
            want[path] = (path, value)
    got = _leaves(parsed)
    for full, (path, value) in want.items():
        if not any(path == c or path.startswith(c + ".") for c in covered):
            continue
        parts = path.split(".")
        keep = PARTIAL.get((platform, parts[0]))
        if keep is not None and len(parts) > 1 and parts[1] not in keep:
            continue
        if (platform, parts[-1]) in NOT_SHOWN:
            continue
        if (platform, full) in PREFIXED:
            value = PREFIXED[(platform, full)] + value
        tol = TOLERANCE.get((platform, parts[-1]))
        if full not in got:
            problems.append(f"{full}: not given back (state {value!r})")
        elif tol is not None and isinstance(value, int) and abs(got[full] - value) <= tol * value:
            continue
        elif got[full] != value:
            problems.append(f"{full}: parsed {got[full]!r}, state {value!r}")
    return problems


@pytest.fixture(scope="module")
def lab() -> Simulator:
    """The lab fabric with its planted faults (no listener started: renderers only)."""
    return Simulator(synthetic.lab_fabric(), synthetic.LAB_FAULTS)


@pytest.mark.parametrize(
    "name", ["gpu-001", "gpu-002", "leaf-r0-a", "leaf-r1-a", "leaf-r2-a", "leaf-r3-a", "spine-01", "spine-02"]
)
def test_round_trip(lab: Simulator, name: str) -> None:
    dev = lab.devices[name]
    merged, failures = collect_direct(lab, name)
    assert failures == []
    assert differences(dev.platform, dev.state(), merged) == []


MIXED = synthetic.rail_fabric(
    64,
    radix=8,
    leaf_platforms=("sonic", "cumulus", "arista_eos", "cisco_nxos"),
    spine_platforms=("cisco_nxos", "cumulus", "sonic", "arista_eos"),
)


@pytest.mark.parametrize("name", ["spine-000", "spine-001", "spine-002", "spine-003", "leaf-r0-000", "leaf-r0-001",
                                  "leaf-r1-000", "leaf-r1-001", "gpu-00003"])  # fmt: skip
def test_round_trip_mixed_clean_fabric(name: str) -> None:
    sim = Simulator(MIXED)
    dev = sim.devices[name]
    merged, failures = collect_direct(sim, name)
    assert failures == []
    assert differences(dev.platform, dev.state(), merged) == []
    assert {d.platform for d in MIXED.devices} == {"sonic", "cumulus", "arista_eos", "cisco_nxos", "linux"}
