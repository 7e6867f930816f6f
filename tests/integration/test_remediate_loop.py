"""The closed loop of issue 18: plant faults, collect, check, remediate, apply over SSH, check again.

The simulator runs writable: each device takes the change fabline wrote in its own platform's
form (SONiC ``config apply-patch``, Cumulus ``nv set``/``nv config apply``, ...) and changes its
state as the NOS would. Afterwards every configuration failure is gone, the physical findings are
still there and are work orders, and nothing that passed fails. Network: 127.0.0.0/8 only.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import jsonpatch
import pytest
import yaml

from fabline import synthetic
from fabline.baseline import default_baseline_path
from fabline.results import Status
from fabline.runner import run_check
from fabline.synthetic import Fault
from tests.integration.remediate_apply import apply_folder, run
from tests.integration.test_collect_sim import PASSWORD, PASSWORD_ENV, cli, simulator

#: Configuration faults per platform (the lab has one leaf per switch platform), and physical ones.
CONFIG_FAULTS: dict[str, list[Fault]] = {
    "sonic": [
        Fault("leaf-r0-a", "mtu", 1500, "Ethernet0", "port MTU left at the default"),
        Fault("leaf-r0-a", "dscp_to_priority.26", 0, "Ethernet8", "RoCE DSCP remapped to the lossy class"),
        Fault("leaf-r0-a", "dscp_to_priority.24", 3, "Ethernet8", "another DSCP in the lossless priority"),
        Fault("leaf-r0-a", "ecn.3.min_bytes", 5000, "Ethernet16", "ECN min threshold far too low"),
        Fault("leaf-r0-a", "fec", "fc", "Ethernet24", "Fire-code FEC on a 400G uplink"),
        Fault("leaf-r0-a", "qos.pfc_watchdog.enabled", False, None, "PFC watchdog off"),
    ],
    "cumulus": [
        Fault("leaf-r1-a", "pfc_priorities", [3, 4], "swp1", "PFC on an extra priority"),
        Fault("leaf-r1-a", "mtu", 1500, "swp2", "port MTU left at the default"),
        Fault("leaf-r1-a", "ecn.3.probability_pct", 50, "swp3", "ECN marking probability far too high"),
        Fault("leaf-r1-a", "fec", "fc", "swp4", "Fire-code FEC on a 400G uplink"),
    ],
    "arista_eos": [
        # EOS maps DSCP switch-wide: the simulator folds a port's remap into every port.
        Fault("leaf-r2-a", "dscp_to_priority.26", 0, "Ethernet4/1", "RoCE DSCP remapped to the lossy class"),
        Fault("leaf-r2-a", "dscp_to_priority.24", 3, "Ethernet4/1", "another DSCP in the lossless priority"),
        Fault("leaf-r2-a", "mtu", 1500, "Ethernet1/1", "port MTU left at the default"),
        Fault("leaf-r2-a", "ecn.3.max_bytes", 50000000, "Ethernet2/1", "ECN max threshold far too high"),
        Fault("leaf-r2-a", "trust", "pcp", "Ethernet3/1", "PCP trust on a routed port"),
        Fault("leaf-r2-a", "fec", "fc", "Ethernet4/1", "Fire-code FEC on a 400G uplink"),
        Fault("spine-02", "qos.pfc_watchdog.enabled", False, None, "PFC watchdog off"),
    ],
    "cisco_nxos": [
        Fault("leaf-r3-a", "mtu", 1500, "Ethernet1/1", "port MTU left at the default"),
        Fault(
            "leaf-r3-a",
            "pfc_priorities",
            [3, 4],
            "Ethernet1/2",
            "PFC on an extra priority (system-wide on NX-OS)",
        ),
        Fault("leaf-r3-a", "dscp_to_priority.26", 0, "Ethernet1/1", "RoCE DSCP remapped on one port"),
        Fault("leaf-r3-a", "ecn.3.min_bytes", 5000, "Ethernet1/4", "ECN min threshold far too low"),
        Fault("leaf-r3-a", "qos.pfc_watchdog.enabled", False, None, "PFC watchdog off"),
        Fault("leaf-r3-a", "fec", "fc", "Ethernet1/3", "Fire-code FEC on a 400G uplink"),
    ],
    "linux": [
        Fault("gpu-002", "mtu", 1500, "eth1", "host NIC left at the default MTU"),
        Fault("gpu-001", "nic.roce_tos", 104, "eth2", "RDMA-CM ToS without ECN capability"),
        Fault("gpu-001", "nic.ecn_np_priorities", [], "eth3", "ECN notification point off"),
        Fault("gpu-002", "pfc_priorities", [3, 4], "eth0", "PFC on an extra priority"),
        Fault("gpu-002", "dscp_to_priority.26", 0, "eth2", "RoCE DSCP remapped on the NIC"),
        Fault("gpu-002", "host.nccl_env.NCCL_IB_TC", "104", None, "NCCL ToS without ECN capability"),
        Fault("gpu-001", "host.gpudirect_rdma", False, None, "nvidia_peermem not loaded"),
    ],
}
PHYSICAL_FAULTS = [
    Fault("leaf-r0-a", "optics.rx_power_dbm", [-1.2, -10.4, -1.1, -1.3], "Ethernet16", "dirty connector"),
    Fault("leaf-r0-a", "counters.fec_uncorrectable", 17, "Ethernet8", "uncorrectable FEC codewords"),
]
PHYSICAL_CHECKS = {"optics-rx-power", "optics-rx-power-margin", "fec-uncorrectable"}


def _check(inv: Path, snap: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Status]:
    monkeypatch.setenv(PASSWORD_ENV, PASSWORD)
    report, _ = run_check(
        inventory=inv, snapshot=snap, baselines=[default_baseline_path()], checks_dir=None, limit=None,
        out=None, formats=[], fail_on="minor",
    )  # fmt: skip
    return {r.id: r.status for r in report.outcome.results}


def _collect(inv: Path, snap: Path, kh: Path) -> None:
    result = cli("collect", "-i", inv, "-o", snap, "--timeout", "5", "--known-hosts", kh)
    assert result.exit_code == 0, result.output


@pytest.fixture(scope="module")
def loop(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One loop over the lab fabric with every platform's faults planted; what each step gave."""
    tmp = tmp_path_factory.mktemp("loop")
    mp = pytest.MonkeyPatch()
    faults = [f for fs in CONFIG_FAULTS.values() for f in fs] + PHYSICAL_FAULTS
    inv, out = tmp / "inv.yml", tmp / "remediation"
    try:
        with simulator(synthetic.lab_fabric(), faults, base="127.61", writable=True) as sim:
            inv.write_text(yaml.safe_dump(sim.inventory(password_env=PASSWORD_ENV), sort_keys=False))
            _collect(inv, tmp / "before", tmp / "kh")
            before = _check(inv, tmp / "before", mp)
            result = cli("remediate", "-i", inv, "--snapshot", tmp / "before", "-o", out)
            assert result.exit_code == 0, result.output
            # The same plan from a saved report (no second check run).
            mp.setenv(PASSWORD_ENV, PASSWORD)
            cli("check", "-i", inv, "--snapshot", tmp / "before", "-o", tmp / "reports", "-f", "json")
            result = cli("remediate", "--report", tmp / "reports" / "report.json", "-o", tmp / "from-report")
            assert result.exit_code == 0, result.output
            answers = apply_folder(out, sim.addresses, PASSWORD)
            _collect(inv, tmp / "after", tmp / "kh")
            after = _check(inv, tmp / "after", mp)
    finally:
        mp.undo()
    plan = json.loads((out / "remediation.json").read_text())
    return {"before": before, "after": after, "plan": plan, "out": out, "answers": answers, "tmp": tmp}


def _platform_devices(platform: str) -> set[str]:
    return {f.device for f in CONFIG_FAULTS[platform]}


@pytest.mark.parametrize("platform", sorted(CONFIG_FAULTS))
def test_every_configuration_failure_is_gone(loop: dict[str, Any], platform: str) -> None:
    before, after, plan = loop["before"], loop["after"], loop["plan"]
    devices = _platform_devices(platform)
    fixed = [i for i in plan["covered"] if i.split("::")[0] in devices]
    config_failures = [
        i for i, s in before.items()
        if s is Status.FAIL and i.split("::")[0] in devices and i.split("::")[1] not in PHYSICAL_CHECKS
    ]  # fmt: skip
    assert config_failures, "the planted faults must fail first"
    assert set(config_failures) <= set(fixed), set(config_failures) - set(fixed)
    still = [i for i in fixed if after.get(i) is Status.FAIL]
    assert not still, still
    for f in CONFIG_FAULTS[platform]:
        assert any(i.startswith(f"{f.device}::") and (f.interface is None or i.endswith(f"::{f.interface}"))
                   for i in config_failures), f  # fmt: skip


def test_physical_findings_remain_and_are_work_orders(loop: dict[str, Any]) -> None:
    before, after, plan = loop["before"], loop["after"], loop["plan"]
    physical = sorted(
        i for i, s in before.items() if s is Status.FAIL and i.split("::")[1] in PHYSICAL_CHECKS
    )
    assert len(physical) >= 3, physical
    ordered = {i for w in plan["work_orders"] for i in w["ids"]}
    assert set(physical) <= ordered
    assert all(after[i] is Status.FAIL for i in physical)
    swap = next(w for w in plan["work_orders"] if w["check"] == "optics-rx-power")
    assert (swap["device"], swap["port"], swap["peer_device"]) == ("leaf-r0-a", "Ethernet16", "spine-01")


def test_a_saved_report_gives_the_same_changes(loop: dict[str, Any]) -> None:
    again = json.loads((loop["tmp"] / "from-report" / "remediation.json").read_text())
    assert again["changes"] == loop["plan"]["changes"]
    assert again["work_orders"] == loop["plan"]["work_orders"]
    for name in loop["plan"]["changes"][0]["files"]:
        assert (loop["tmp"] / "from-report" / "devices" / name).read_text() == (
            loop["out"] / "devices" / name
        ).read_text()


def test_nothing_that_passed_fails(loop: dict[str, Any]) -> None:
    before, after = loop["before"], loop["after"]
    broken = [i for i, s in before.items() if s is Status.PASS and after.get(i) is not Status.PASS]
    assert not broken, broken


def test_disruptive_steps_are_marked_and_last(loop: dict[str, Any]) -> None:
    plan = {c["device"]: c for c in loop["plan"]["changes"]}
    sonic, cumulus = plan["leaf-r0-a"], plan["leaf-r1-a"]
    assert sonic["steps"][-1] == sonic["disruptive"][-1]
    assert "leaf-r0-a.disruptive.patch.json" in sonic["files"]
    assert cumulus["disruptive"] == ["nv set interface swp4 link fec rs"]
    assert cumulus["steps"][-2:] == ["nv set interface swp4 link fec rs", "nv config apply --assume-yes"]
    md = (loop["out"] / "plan.md").read_text()
    assert "**Interrupts traffic on live ports (applied last):**" in md


def test_sonic_patches_are_json_patch_documents_for_the_collected_config_db(loop: dict[str, Any]) -> None:
    """jsonpatch (the library SONiC's generic config updater uses) applies them to the collected DB."""
    snap, out = loop["tmp"] / "before", loop["out"]
    from fabline.remediate.common import raw_output

    db = json.loads(raw_output(snap, "leaf-r0-a", ["show runningconfiguration all"]) or "null")
    for name in ("leaf-r0-a.patch.json", "leaf-r0-a.disruptive.patch.json"):
        doc = json.loads((out / "devices" / name).read_text())
        db = jsonpatch.JsonPatch(doc).apply(db)
    assert db["PORT"]["Ethernet0"]["mtu"] == "9100"
    assert db["PORT"]["Ethernet24"]["fec"] == "rs"
    ethernet8 = db["DSCP_TO_TC_MAP"][db["PORT_QOS_MAP"]["Ethernet8"]["dscp_to_tc_map"]]
    assert (ethernet8["26"], ethernet8["24"], ethernet8["48"]) == ("3", "0", "6")
    assert set(db["PFC_WD"]) >= {"GLOBAL", "Ethernet0", "Ethernet8"}


def test_a_bad_patch_changes_nothing(loop: dict[str, Any], tmp_path: Path) -> None:
    """The simulated GCU refuses a patch whose path is missing or whose value YANG refuses."""
    with simulator(synthetic.lab_fabric(), [], base="127.62", writable=True) as sim:
        addr = sim.addresses["leaf-r0-a"]
        bad = json.dumps([{"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "99999"}])
        out, err, code = run(addr, PASSWORD, "sudo config apply-patch /dev/stdin", bad)
        assert code != 0 and "Failed to apply patch due to: PORT|Ethernet0 mtu '99999'" in err
        missing = json.dumps([{"op": "replace", "path": "/PORT/Ethernet999/mtu", "value": "9100"}])
        out, err, code = run(addr, PASSWORD, "sudo config apply-patch /dev/stdin", missing)
        assert code != 0 and "Failed to apply patch" in err
        out, _, _ = run(addr, PASSWORD, "show interfaces status Ethernet0")
        assert " 9100 " in out
        out, err, code = run(sim.addresses["leaf-r1-a"], PASSWORD, "nv set interface swp1 link mtu 99999")
        assert code == 1 and "Invalid value" in err
    with simulator(synthetic.lab_fabric(), [], base="127.63") as sim:
        _, err, code = run(sim.addresses["leaf-r0-a"], PASSWORD, "sudo config apply-patch /dev/stdin", bad)
        assert code == 1 and "Root privileges are required" in err


#: What the playbook may use: modules the `ansible` community package ships.
PLAYBOOK_MODULES = {
    "ansible.builtin.copy", "ansible.builtin.command", "ansible.builtin.debug", "ansible.builtin.script",
    "arista.eos.eos_config", "cisco.nxos.nxos_config",
}  # fmt: skip
_TASK_KEYS = {"name", "become", "check_mode", "changed_when", "when", "loop", "tags"}


def test_playbook_orders_disruptive_plays_last_and_uses_shipped_modules(loop: dict[str, Any]) -> None:
    plays = yaml.safe_load((loop["out"] / "playbook.yml").read_text())
    tagged = [i for i, p in enumerate(plays) if "disruptive" in p.get("tags", [])]
    assert tagged and tagged == list(range(len(plays) - len(tagged), len(plays)))
    used = {k for p in plays for t in p["tasks"] for k in t if k not in _TASK_KEYS}
    assert used <= PLAYBOOK_MODULES, used - PLAYBOOK_MODULES
    assert {"arista.eos.eos_config", "cisco.nxos.nxos_config", "ansible.builtin.script"} <= used
    for p in plays:
        for t in p["tasks"]:
            for module, args in t.items():
                src = (
                    args.get("src")
                    if isinstance(args, dict)
                    else args
                    if module == "ansible.builtin.script"
                    else None
                )
                if isinstance(src, str):
                    assert (loop["out"] / src).is_file(), src
    eos = next(p for p in plays if p["hosts"] == "leaf-r2-a")
    assert eos["vars"]["ansible_network_os"] == "arista.eos.eos"


def test_playbook_passes_ansible_syntax_check(loop: dict[str, Any]) -> None:
    """ansible-playbook resolves every module the playbook names (the `ansible` package's collections)."""
    import shutil
    import subprocess
    import sys

    exe = Path(sys.executable).parent / "ansible-playbook"
    if not exe.exists():
        exe = Path(shutil.which("ansible-playbook") or "ansible-playbook")
    inv = loop["tmp"] / "inv.yml"
    env = {
        **os.environ,
        "ANSIBLE_LOCAL_TEMP": str(loop["tmp"] / "ansible-tmp"),
        "ANSIBLE_HOME": str(loop["tmp"] / "ansible-home"),
    }
    proc = subprocess.run(
        [str(exe), "--syntax-check", "-i", str(inv), str(loop["out"] / "playbook.yml")],
        capture_output=True, text=True, timeout=300, check=False, env=env, cwd=loop["out"],
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
