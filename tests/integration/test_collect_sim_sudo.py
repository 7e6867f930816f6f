"""Root-only reads over SSH against the simulator: sudo -n where the inventory enables it (issue 16).

The lab fabric's two GPU servers, both with ``fabline_sudo: true``: gpu-001's login user may run the
three reads (the simulated host answers as root would) and carries planted faults (ACS redirecting on
the switch ports of rail 1, one NIC's firmware with another congestion-control step, a CUDA
straggler); gpu-002's sudo wants a password (``sudo_refused``). Network: the simulator's loopback
addresses (127.43.x.y) only.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabline import synthetic
from fabline.sim import TransportFault
from fabline.synthetic import Fault
from tests.integration.test_collect_sim import PASSWORD_ENV, cli, simulator, state

LAB = synthetic.lab_fabric()
FAULTS: list[Any] = [
    Fault("gpu-001", "host.pcie_bridges", synthetic.pcie_bridges(4, acs_on=[1])),
    Fault("gpu-001", "host.rdma_devices.mlx5_2.cc_config.RPG_AI_RATE_P1", "10"),
    Fault("gpu-001", "host.cuda_version", "12.1"),
    TransportFault("gpu-002", "sudo_refused"),
]
ROOT_READS = ("sudo -n lspci -vvv", "sudo -n dmidecode --type bios")
PINS = (
    "rules:\n"
    "  - {id: version-skew, params: {allowed: {cuda_version: ['12.2']}}}\n"
    "  - {id: nic-cc-skew, params: {allowed: {RPG_AI_RATE_P1: ['5']}}}\n"
)


@pytest.fixture(scope="module")
def sudo_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("collect-sudo")
    with simulator(LAB, FAULTS, base="127.43") as sim:
        inv = sim.inventory(password_env=PASSWORD_ENV)
        for hv in inv["all"]["children"]["gpu_hosts"]["hosts"].values():
            hv["fabline_sudo"] = True
        (tmp / "inv.yml").write_text(yaml.safe_dump(inv, sort_keys=False))
        snap = tmp / "snap"
        result = cli("collect", "-i", tmp / "inv.yml", "-o", snap, "-l", "gpu-*", "--known-hosts", tmp / "kh")
    (tmp / "pins.yml").write_text(PINS)
    checked = cli("check", "-i", tmp / "inv.yml", "--snapshot", snap, "-b", "baseline/roce.yml",
                  "-b", tmp / "pins.yml", "-l", "gpu-*", "-o", tmp / "report", "-f", "json", "-q")  # fmt: skip
    report = json.loads((tmp / "report" / "report.json").read_text())
    yield {"snap": snap, "result": result, "checked": checked, "report": report}


def _commands(snap: Path, device: str) -> dict[str, dict[str, Any]]:
    manifest = json.loads((snap / "manifest.json").read_text())
    return {c["command"]: c for c in manifest["devices"][device]["commands"]}


def test_root_reads_are_sent_and_parsed_where_sudo_works(sudo_run: dict[str, Any]) -> None:
    assert sudo_run["result"].exit_code in (0, 3), sudo_run["result"].output
    by_cmd = _commands(sudo_run["snap"], "gpu-001")
    for line in (*ROOT_READS, *(f"sudo -n mlxconfig -d mlx5_{i} query" for i in range(4))):
        assert by_cmd[line]["status"] == "ok", by_cmd[line]
    doc = state(sudo_run["snap"], "gpu-001")
    assert doc["status"] == "ok"
    assert doc["host"]["cuda_version"] == "12.1"
    assert doc["host"]["pcie_bridges"]["0000:27:00.0"]["acs_ctl"] == [
        "SrcValid",
        "ReqRedir",
        "CmpltRedir",
        "UpstreamFwd",
    ]
    assert doc["host"]["rdma_devices"]["mlx5_2"]["cc_config"]["RPG_AI_RATE_P1"] == "10"
    assert doc["facts"]["bios_version"] == synthetic.BIOS_VERSION


def test_sudo_refusing_is_unavailable_with_sudos_reason(sudo_run: dict[str, Any]) -> None:
    by_cmd = _commands(sudo_run["snap"], "gpu-002")
    for line in (*ROOT_READS, "sudo -n mlxconfig -d mlx5_0 query"):
        record = by_cmd[line]
        assert (record["status"], record["message"]) == ("unavailable", "sudo: a password is required"), (
            record
        )
    doc = state(sudo_run["snap"], "gpu-002")
    assert doc["status"] == "partial" and "pcie_bridges" not in doc["host"]  # asked for and refused
    assert by_cmd["nvidia-smi"]["status"] == "ok" and doc["host"]["cuda_version"] == "12.2"


def test_the_planted_faults_are_judged_and_refused_reads_skipped(sudo_run: dict[str, Any]) -> None:
    report = sudo_run["report"]
    fails = {(r["check"], r["device"], r["subject"]) for r in report["results"] if r["status"] == "fail"}
    assert ("host-acs", "gpu-001", "eth1") in fails
    assert ("version-skew", "gpu-001", "cuda_version") in fails
    assert ("nic-cc-skew", "gpu-001", "RPG_AI_RATE_P1") in fails
    assert not {f for f in fails if f[0] in ("host-acs", "nic-cc-skew") and f[1] == "gpu-002"}
    skipped = {
        r["check"]: r["message"]
        for r in report["results"]
        if r["device"] == "gpu-002" and r["status"] == "skipped" and r["check"] in ("host-acs", "nic-cc-skew")
    }
    assert skipped["host-acs"] == (
        "ACS state not readable: unavailable (sudo -n lspci -vvv: sudo: a password is required)"
    )
    assert "sudo: a password is required" in skipped["nic-cc-skew"]
