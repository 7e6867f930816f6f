"""Inside the GPU server (issue 16): PCIe link, GPU-NIC affinity, IOMMU, GPUs, NCCL, CNPs, DCQCN, versions.

Each check runs on the lab fabric's synthetic states (clean: every check passes) with one planted
fault, through the real engine; messages are asserted whole where they are the user's guidance.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fabline import synthetic
from fabline.checks.fabric.fleet import DcqcnSkewCheck, NicCcSkewCheck
from fabline.results import Status
from fabline.synthetic import Fault
from tests.unit.test_fabric_support import edit_state, one, run_fabric, table

LAB = synthetic.lab_fabric()
HOST_CHECKS = [
    "host-pcie-link", "gpu-nic-affinity", "host-iommu", "host-gpu-count", "host-fabric-manager",
    "nccl-gid-index", "nccl-ib-hca", "nccl-socket-ifname", "host-cnp-fabric", "dcqcn-skew",
    "incompatible-versions", "host-acs", "nic-cc-skew",
]  # fmt: skip


def test_a_clean_fabric_passes_every_gpu_server_check(tmp_path: Path) -> None:
    out = run_fabric(tmp_path, LAB, checks=HOST_CHECKS)
    assert table(out, Status.FAIL) == set() and table(out, Status.ERROR) == set()
    passed = {r.check for r in out.results if r.status is Status.PASS}
    assert passed == set(HOST_CHECKS) - {"nccl-socket-ifname", "incompatible-versions"}
    # unset NCCL_SOCKET_IFNAME and no declared incompatible pair: skipped with the reason, not passed
    assert one(out, "nccl-socket-ifname", "gpu-001", None).message == (
        "NCCL_SOCKET_IFNAME not set: NCCL picks the interface"
    )
    assert one(out, "incompatible-versions", "(fabric)", None).status is Status.SKIPPED


# ----------------------------------------------------------------------------------------- PCIe


@pytest.mark.parametrize(
    ("pcie", "status", "message"),
    [
        ({"width": 8}, Status.FAIL, "gpu-002 eth1: PCIe link trained at x8 of x16"),
        ({"speed_gts": 16.0}, Status.FAIL, "gpu-002 eth1: PCIe link trained at 16 GT/s of 32 GT/s"),
        ({"width": 8, "max_width": 8}, Status.FAIL, "gpu-002 eth1: PCIe link trained at x8, below x16"),
        (
            {"present": False},
            Status.SKIPPED,
            "eth1: no PCIe device reports a link behind this netdev: not present",
        ),
        ({"speed_gts": None}, Status.ERROR, "eth1: PCIe link width or speed not reported (link down?)"),
    ],
)
def test_pcie_link(tmp_path: Path, pcie: dict[str, Any], status: Status, message: str) -> None:
    def edit(doc: dict[str, Any]) -> None:
        body = doc["interfaces"]["eth1"]["nic"]["pcie"]
        if pcie == {"present": False}:
            doc["interfaces"]["eth1"]["nic"]["pcie"] = {"present": False}
            return
        for key, value in pcie.items():
            if value is None:
                body.pop(key)
            else:
                body[key] = value

    run_fabric(tmp_path, LAB, checks=["host-pcie-link"])
    edit_state(tmp_path, "gpu-002", edit)
    out = run_fabric_again(tmp_path, ["host-pcie-link"])
    r = one(out, "host-pcie-link", "gpu-002", "eth1")
    assert r.status is status
    assert r.message.startswith(message), r.message
    assert one(out, "host-pcie-link", "gpu-001", "eth1").status is Status.PASS


def run_fabric_again(tmp: Path, checks: list[str], fabric: synthetic.Fabric = LAB) -> Any:
    """Run the chosen checks on the states already written (and edited) under ``tmp/snap``."""
    from fabline.baseline import load_baseline
    from fabline.engine import Engine
    from fabline.snapshot import Snapshot
    from tests.helpers import write_yaml
    from tests.unit.test_fabric_support import ALL, devices_of

    devs = devices_of(fabric)
    engine = Engine(
        load_baseline([write_yaml(tmp / "baseline.yml", "rules: []\n")]),
        {k: v for k, v in ALL.items() if k in checks},
        lambda p: {d.name for d in devs if p in d.name},
    )
    return engine.run(devs, Snapshot(tmp / "snap"), None, None)


def test_pcie_not_collected_is_an_error(tmp_path: Path) -> None:
    run_fabric(tmp_path, LAB, checks=["host-pcie-link"])
    edit_state(tmp_path, "gpu-001", lambda d: d["interfaces"]["eth0"]["nic"].pop("pcie"))
    out = run_fabric_again(tmp_path, ["host-pcie-link", "host-iommu"])
    assert one(out, "host-pcie-link", "gpu-001", "eth0").message == "nic.pcie (host sysfs read) not collected"
    assert one(out, "host-iommu", "gpu-001", "eth0").status is Status.ERROR


def _drop_host_sysfs(status: str) -> Any:
    def edit(doc: dict[str, Any]) -> None:
        doc["status"] = status
        for body in doc["interfaces"].values():
            for key in ("pcie", "cnp_dscp", "gids", "rdma_device"):
                body.get("nic", {}).pop(key, None)
        doc["host"].pop("gpus", None)

    return edit


@pytest.mark.parametrize(("status", "want"), [("ok", Status.SKIPPED), ("partial", Status.ERROR)])
def test_a_host_read_missing_on_every_nic_is_one_result_per_host(
    tmp_path: Path, status: str, want: Status
) -> None:
    """Issue 14: fields a host's collection lacks on every rail NIC (an older collection, or a read that
    failed) give one device-level result per check: skipped ("not collected") on a complete collection,
    error on a partial one; never one error per port."""
    checks = ["host-pcie-link", "host-iommu", "nccl-gid-index", "host-cnp-fabric", "gpu-nic-affinity"]
    run_fabric(tmp_path, LAB, checks=checks)
    edit_state(tmp_path, "gpu-001", _drop_host_sysfs(status))
    out = run_fabric_again(tmp_path, checks)
    mine = [r for r in out.results if r.device == "gpu-001"]
    assert sorted(r.check for r in mine) == sorted(checks)  # one result each
    for r in mine:
        assert r.subject is None and r.status is want and "not collected" in r.message, r


# ------------------------------------------------------------------------------------- affinity


def test_affinity_follows_the_rail_plan_and_names_the_nearest_gpu(tmp_path: Path) -> None:
    # GPU 1's own NIC (mlx5_1) sits across the socket; mlx5_1 is next to GPU 0 instead.
    faults = [
        Fault("gpu-001", "host.gpus.1.nic_paths.mlx5_1", "SYS"),
        Fault("gpu-001", "host.gpus.0.nic_paths.mlx5_1", "PIX"),
        Fault("gpu-001", "nic.numa_node", 1, "eth1"),
    ]
    out = run_fabric(tmp_path, LAB, faults, checks=["gpu-nic-affinity"])
    assert table(out, Status.FAIL) == {("gpu-nic-affinity", "gpu-001", "eth1")}
    r = one(out, "gpu-nic-affinity", "gpu-001", "eth1")
    assert r.message == (
        "gpu-001 eth1 (rail 1): GPU 1 reaches mlx5_1 over SYS, not PIX/PXB; mlx5_1 is PIX to GPU 0; "
        "eth1 is on NUMA node 1, GPU 1 on 0"
    )


def test_affinity_params_and_missing_gpu(tmp_path: Path) -> None:
    faults = [Fault("gpu-002", "host.gpus.0.nic_paths.mlx5_0", "PHB")]
    out = run_fabric(
        tmp_path, LAB, faults, checks=["gpu-nic-affinity"],
        baseline="rules:\n  - {id: gpu-nic-affinity, params: {allowed_paths: [PIX, PXB, PHB]}}\n",
    )  # fmt: skip
    assert table(out, Status.FAIL) == set()
    edit_state(tmp_path, "gpu-002", lambda d: d["host"]["gpus"].pop("3"))
    out = run_fabric_again(tmp_path, ["gpu-nic-affinity", "host-gpu-count"])
    assert one(out, "gpu-nic-affinity", "gpu-002", "eth3").message == (
        "gpu-002 eth3: rail 3 has no GPU 3 (nvidia-smi lists 3)"
    )
    assert one(out, "host-gpu-count", "gpu-002", None).message == "gpu-002: 3 GPUs for 4 rail NICs"


def test_no_nvidia_smi_is_not_present_and_no_gpus_collected_is_not_judged(tmp_path: Path) -> None:
    """No nvidia-smi: not present. GPUs absent from a complete collection: skipped, not collected (one
    result per host, issue 14); from a partial one (a command failed): error."""
    run_fabric(tmp_path, LAB, checks=["gpu-nic-affinity"])

    def no_driver(doc: dict[str, Any]) -> None:
        doc["host"].pop("gpus")
        doc["status"] = "partial"
        doc["errors"] = [
            {"command": "nvidia-smi topo -m", "kind": "unavailable", "message": "command not found on the device (exit 127)"}
        ]  # fmt: skip

    edit_state(tmp_path, "gpu-001", no_driver)
    edit_state(tmp_path, "gpu-002", lambda d: d["host"].pop("gpus"))
    checks = ["gpu-nic-affinity", "host-gpu-count", "host-fabric-manager"]
    out = run_fabric_again(tmp_path, checks)
    for check in checks:
        r = one(out, check, "gpu-001", None)
        assert r.status is Status.SKIPPED
        assert r.message == (
            "no NVIDIA GPU on this host: not present (nvidia-smi topo -m: command not found on the device (exit 127))"
        )
        r = one(out, check, "gpu-002", None)
        assert (r.status, r.message) == (
            Status.SKIPPED,
            "host.gpus (nvidia-smi) not collected on this host: not judged",
        )

    def failed(doc: dict[str, Any]) -> None:
        doc["status"] = "partial"
        doc["errors"] = [{"command": "nvidia-smi -q -x", "kind": "timeout", "message": "no answer in 30 s"}]

    edit_state(tmp_path, "gpu-002", failed)
    out = run_fabric_again(tmp_path, checks)
    for check in checks:
        assert one(out, check, "gpu-002", None).status is Status.ERROR


# ---------------------------------------------------------------------------------------- IOMMU


def test_iommu_translation_fails_passthrough_and_no_group_pass(tmp_path: Path) -> None:
    faults = [
        Fault("gpu-001", "nic.iommu_domain", "DMA-FQ", "eth2"),
        Fault("gpu-001", "host.iommu_params", ["intel_iommu=on"]),
        Fault("gpu-002", "nic.iommu_domain", None, "eth2"),
    ]
    out = run_fabric(tmp_path, LAB, faults, checks=["host-iommu"])
    assert table(out, Status.FAIL) == {("host-iommu", "gpu-001", "eth2")}
    assert one(out, "host-iommu", "gpu-001", "eth2").message == (
        "gpu-001 eth2: the IOMMU translates the NIC's DMA (group type DMA-FQ); boot with iommu=pt for "
        "GPUDirect RDMA (kernel parameters: intel_iommu=on)"
    )


# ------------------------------------------------------------------------------ fabric manager


def test_fabric_manager_on_nvswitch_systems_only(tmp_path: Path) -> None:
    faults = [
        Fault("gpu-001", "host.fabric_manager", "inactive"),
        Fault("gpu-002", "host.fabric_manager", "inactive"),
        *(Fault("gpu-002", f"host.gpus.{i}.name", "NVIDIA L40S") for i in range(4)),
    ]
    out = run_fabric(tmp_path, LAB, faults, checks=["host-fabric-manager"])
    assert one(out, "host-fabric-manager", "gpu-001", None).message == (
        "gpu-001: nvidia-fabricmanager is inactive on an NVSwitch system"
    )
    assert one(out, "host-fabric-manager", "gpu-002", None).message == "GPUs NVIDIA L40S: no NVSwitch system"


# ----------------------------------------------------------------------------------------- NCCL


def test_gid_index_on_roce_v1_fails_once_per_host(tmp_path: Path) -> None:
    faults = [Fault("gpu-001", "host.nccl_env.NCCL_IB_GID_INDEX", "2")]
    out = run_fabric(tmp_path, LAB, faults, checks=["nccl-gid-index"])
    assert table(out, Status.FAIL) == {("nccl-gid-index", "gpu-001", "NCCL_IB_GID_INDEX")}
    assert one(out, "nccl-gid-index", "gpu-001", "NCCL_IB_GID_INDEX").message == (
        "gpu-001: NCCL_IB_GID_INDEX: GID 2 is not RoCE v2 IPv4 (mlx5_0: RoCE v1; mlx5_1: RoCE v1; "
        "mlx5_2: RoCE v1; mlx5_3: RoCE v1; RoCE v2 IPv4 at 3)"
    )
    # gpu-002's index works: the odd host is the one with the wrong index, not a tie of two
    assert table(out, Status.PASS) == {("nccl-gid-index", "gpu-002", f"eth{i}") for i in range(4)}


def test_gid_index_the_same_fleet_wide(tmp_path: Path) -> None:
    rail = synthetic.rail_fabric(32)  # 4 hosts
    # One host whose RoCE v2 IPv4 GID sits at index 5 and whose NCCL setting follows it: valid
    # on that host, but not the fleet's index.
    moved = [{**g, "index": g["index"] + 2} for g in synthetic.host_gids("gpu-00003", 0)]

    def edit(doc: dict[str, Any]) -> None:
        doc["host"]["nccl_env"]["NCCL_IB_GID_INDEX"] = "5"
        for body in doc["interfaces"].values():
            body["nic"]["gids"] = moved

    run_fabric(tmp_path, rail, checks=["nccl-gid-index"])
    edit_state(tmp_path, "gpu-00003", edit)
    out = run_fabric_again(tmp_path, ["nccl-gid-index"], rail)
    assert table(out, Status.FAIL) == {("nccl-gid-index", "gpu-00003", "NCCL_IB_GID_INDEX")}
    assert one(out, "nccl-gid-index", "gpu-00003", "NCCL_IB_GID_INDEX").message == (
        "gpu-00003: NCCL_IB_GID_INDEX 5; the fleet uses 3 (3 hosts), 5 (1 hosts)"
    )


def test_gid_index_unset_or_no_nccl_settings_is_skipped(tmp_path: Path) -> None:
    run_fabric(tmp_path, LAB, checks=["nccl-gid-index"])
    edit_state(tmp_path, "gpu-001", lambda d: d["host"]["nccl_env"].pop("NCCL_IB_GID_INDEX"))
    edit_state(tmp_path, "gpu-002", lambda d: d["host"].pop("nccl_env"))
    out = run_fabric_again(tmp_path, ["nccl-gid-index"])
    assert one(out, "nccl-gid-index", "gpu-001", None).message == (
        "NCCL_IB_GID_INDEX not set: NCCL selects the GID itself"
    )
    assert one(out, "nccl-gid-index", "gpu-002", None).status is Status.SKIPPED


@pytest.mark.parametrize(
    ("spec", "status", "message"),
    [
        ("mlx5_0,mlx5_1,mlx5_2,mlx5_3", Status.PASS, ""),
        ("=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1", Status.PASS, ""),
        ("mlx5_0,mlx5_1", Status.FAIL, "gpu-001: NCCL_IB_HCA 'mlx5_0,mlx5_1' leaves out rail HCAs mlx5_2, mlx5_3"),
        ("^mlx5_3", Status.FAIL, "gpu-001: NCCL_IB_HCA '^mlx5_3' leaves out rail HCAs mlx5_3 and also selects mlx5_4 (not a rail NIC)"),
        (None, Status.FAIL, "gpu-001: NCCL_IB_HCA unset (every RDMA device) also selects mlx5_4 (not a rail NIC)"),
    ],
)  # fmt: skip
def test_nccl_ib_hca_selects_exactly_the_rail_hcas(
    tmp_path: Path, spec: str | None, status: Status, message: str
) -> None:
    def edit(doc: dict[str, Any]) -> None:
        # a storage NIC the host lists besides its rails (ibv_devinfo)
        doc["host"]["rdma_devices"] = {"mlx5_4": {"link_layer": "Ethernet"}}
        if spec is not None:
            doc["host"]["nccl_env"]["NCCL_IB_HCA"] = spec

    run_fabric(tmp_path, LAB, checks=["nccl-ib-hca"])
    edit_state(tmp_path, "gpu-001", edit)
    out = run_fabric_again(tmp_path, ["nccl-ib-hca"])
    r = one(out, "nccl-ib-hca", "gpu-001", "NCCL_IB_HCA")
    assert r.status is status
    assert r.message == message


def test_nccl_socket_ifname_off_the_rails(tmp_path: Path) -> None:
    faults = [
        Fault("gpu-001", "host.nccl_env.NCCL_SOCKET_IFNAME", "eth"),
        Fault("gpu-002", "host.nccl_env.NCCL_SOCKET_IFNAME", "=bond0"),
    ]
    out = run_fabric(tmp_path, LAB, faults, checks=["nccl-socket-ifname"])
    assert one(out, "nccl-socket-ifname", "gpu-001", "NCCL_SOCKET_IFNAME").message == (
        "gpu-001: NCCL_SOCKET_IFNAME 'eth' selects rail NICs eth0, eth1, eth2, eth3"
    )
    assert one(out, "nccl-socket-ifname", "gpu-002", "NCCL_SOCKET_IFNAME").status is Status.PASS


# ------------------------------------------------------------------------------------ CNP/DCQCN


def test_cnp_dscp_against_the_leaf_map(tmp_path: Path) -> None:
    out = run_fabric(
        tmp_path, LAB, [Fault("gpu-001", "nic.cnp_dscp", 46, "eth3")], checks=["host-cnp-fabric"]
    )
    assert table(out, Status.FAIL) == {("host-cnp-fabric", "gpu-001", "eth3")}
    r = one(out, "host-cnp-fabric", "gpu-001", "eth3")
    assert r.message == (
        "gpu-001 eth3 <-> leaf-r3-a Ethernet1/1: the NIC sends CNPs with DSCP 46; leaf-r3-a maps DSCP 46 to "
        "priority 0, not the strict CNP priority 6 (DSCP 48 is)"
    )
    # the leaf moving CNPs to DSCP 46 / priority 6 makes the host right and the others wrong
    faults = [Fault("leaf-r3-a", "dscp_to_priority.46", 6, "Ethernet1/1")]
    out = run_fabric(tmp_path / "moved", LAB, faults, checks=["host-cnp-fabric"])
    assert one(out, "host-cnp-fabric", "gpu-001", "eth3").status is Status.PASS


def test_dcqcn_skew_names_the_odd_host_and_takes_pins(tmp_path: Path) -> None:
    rail = synthetic.rail_fabric(32)
    faults = [Fault("gpu-00002", "nic.dcqcn.rp.rpg_ai_rate", 50, f"eth{i}") for i in range(8)]
    out = run_fabric(tmp_path, rail, faults, checks=["dcqcn-skew"])
    assert table(out, Status.FAIL) == {("dcqcn-skew", "gpu-00002", "rp.rpg_ai_rate")}
    assert one(out, "dcqcn-skew", "gpu-00002", "rp.rpg_ai_rate").message == (
        "gpu-00002: rp.rpg_ai_rate 50; the majority of hosts on linux model DGX-H100 run 5 (5 (3), 50 (1))"
    )
    pinned = "rules:\n  - {id: dcqcn-skew, params: {allowed: {rp.rpg_ai_rate: ['50']}}}\n"
    out = run_fabric(tmp_path / "pin", rail, faults, checks=["dcqcn-skew"], baseline=pinned)
    assert {d for _c, d, s in table(out, Status.FAIL) if s == "rp.rpg_ai_rate"} == {
        "gpu-00000", "gpu-00001", "gpu-00003"
    }  # fmt: skip
    with pytest.raises(ValueError, match="is not a parameter"):
        DcqcnSkewCheck({"allowed": {"rpg_ai_rate": ["5"]}})


# -------------------------------------------------------------------------------------- versions


def test_version_skew_covers_kernel_gpu_driver_and_bios(tmp_path: Path) -> None:
    rail = synthetic.rail_fabric(32)
    faults = [
        Fault("gpu-00001", "facts.kernel", "6.8.0-1008-nvidia"),
        *(Fault(f"gpu-0000{i}", "facts.kernel", "5.15.0-105-generic") for i in (0, 2, 3)),
        Fault("gpu-00002", "host.gpu_driver", "550.54.15"),
        Fault("gpu-00003", "facts.bios_version", "1.9.0"),
    ]
    out = run_fabric(tmp_path, rail, faults, checks=["version-skew"])
    assert table(out, Status.FAIL) == {
        ("version-skew", "gpu-00001", "kernel"),
        ("version-skew", "gpu-00002", "gpu_driver"),
        ("version-skew", "gpu-00003", "bios_version"),
    }
    pinned = "rules:\n  - {id: version-skew, params: {allowed: {gpu_driver: ['550.54.15']}}}\n"
    out = run_fabric(tmp_path / "pin", rail, faults, checks=["version-skew"], baseline=pinned)
    assert {d for _c, d, s in table(out, Status.FAIL) if s == "gpu_driver"} == {
        "gpu-00000", "gpu-00001", "gpu-00003"
    }  # fmt: skip


def test_incompatible_versions_pair_switch_os_and_nic_firmware(tmp_path: Path) -> None:
    baseline = (
        "rules:\n  - id: incompatible-versions\n    params:\n      pairs:\n"
        "        - {switch_os: 'SONiC.2023*', nic_firmware: '28.39.*', reason: 'CNPs dropped (case 4711)'}\n"
    )
    out = run_fabric(tmp_path, LAB, checks=["incompatible-versions"], baseline=baseline)
    # leaf-r0-a (SONiC) serves rail 0: each host's rail-0 NIC is cabled to it
    assert table(out, Status.FAIL) == {
        ("incompatible-versions", "gpu-001", "eth0"),
        ("incompatible-versions", "gpu-002", "eth0"),
    }
    msg = one(out, "incompatible-versions", "gpu-001", "eth0").message
    assert (
        msg
        == "gpu-001 eth0: NIC firmware 28.39.1002 with leaf-r0-a on SONiC.202311.1: CNPs dropped (case 4711)"
    )
    assert one(out, "incompatible-versions", "gpu-001", "eth1").status is Status.PASS


# ------------------------------------------------------------------ reads that need root (sudo -n)


#: The collection error of a root-only read the inventory does not enable (collect/device.py NO_SUDO).
def _no_sudo(command: str) -> dict[str, Any]:
    from fabline.collect.device import NO_SUDO

    return {"command": command, "kind": "unavailable", "message": NO_SUDO}


def test_acs_on_a_switch_port_between_gpu_and_nic_fails(tmp_path: Path) -> None:
    faults = [Fault("gpu-001", "host.pcie_bridges", synthetic.pcie_bridges(4, acs_on=[2]))]
    out = run_fabric(tmp_path, LAB, faults, checks=["host-acs"])
    assert table(out, Status.FAIL) == {("host-acs", "gpu-001", "eth2")}
    message = one(out, "host-acs", "gpu-001", "eth2").message
    assert message.startswith(
        "gpu-001 eth2 (rail 2): ACS redirects peer-to-peer traffic between GPU 2 and the NIC on 0000:37:00.0"
    )
    assert "SrcValid ReqRedir CmpltRedir UpstreamFwd" in message and "0000:37:01.0" in message
    # DirectTrans alone redirects nothing: harmless by default.
    bridges = synthetic.pcie_bridges(4)
    bridges["0000:37:00.0"]["acs_ctl"] = ["DirectTrans"]
    out = run_fabric(
        tmp_path / "dt", LAB, [Fault("gpu-001", "host.pcie_bridges", bridges)], checks=["host-acs"]
    )
    assert table(out, Status.FAIL) == set()


def test_acs_unreadable_without_sudo_is_skipped_with_the_reason(tmp_path: Path) -> None:
    run_fabric(tmp_path, LAB, checks=["host-acs"])

    def no_sudo(doc: dict[str, Any]) -> None:  # not sent (no fabline_sudo): unsupported, device ok
        doc["host"].pop("pcie_bridges")
        doc["unsupported"] = {"host.pcie_bridges": "sudo -n lspci -vvv: " + _no_sudo("")["message"]}

    def refused(doc: dict[str, Any]) -> None:  # sent, sudo wants a password: an unavailable error
        doc["host"].pop("pcie_bridges")
        doc["errors"] = [
            {
                "command": "sudo -n lspci -vvv",
                "kind": "unavailable",
                "message": "sudo: a password is required",
            }
        ]

    edit_state(tmp_path, "gpu-001", no_sudo)
    edit_state(tmp_path, "gpu-002", refused)
    out = run_fabric_again(tmp_path, ["host-acs"])
    r = one(out, "host-acs", "gpu-001", None)
    assert r.status is Status.SKIPPED and r.message.startswith(
        "ACS state not readable: unavailable (sudo -n lspci -vvv: needs root: not run (fabline_sudo"
    )
    r = one(out, "host-acs", "gpu-002", None)
    assert r.status is Status.SKIPPED and r.message == (
        "ACS state not readable: unavailable (sudo -n lspci -vvv: sudo: a password is required)"
    )
    edit_state(tmp_path, "gpu-002", lambda d: d.update(errors=[]))  # not collected, nothing said why
    r = one(run_fabric_again(tmp_path, ["host-acs"]), "host-acs", "gpu-002", None)
    assert r.status is Status.SKIPPED and "not collected" in r.message


def test_nic_cc_skew_names_the_odd_host_takes_pins_and_skips_without_sudo(tmp_path: Path) -> None:
    rail = synthetic.rail_fabric(32)
    faults = [
        Fault("gpu-00002", f"host.rdma_devices.mlx5_{i}.cc_config.RPG_AI_RATE_P1", "10") for i in range(8)
    ]
    out = run_fabric(tmp_path, rail, faults, checks=["nic-cc-skew"])
    assert table(out, Status.FAIL) == {("nic-cc-skew", "gpu-00002", "RPG_AI_RATE_P1")}
    assert one(out, "nic-cc-skew", "gpu-00002", "RPG_AI_RATE_P1").message == (
        "gpu-00002: RPG_AI_RATE_P1 10; the majority of hosts on linux model DGX-H100 run 5 (5 (3), 10 (1))"
    )
    pinned = "rules:\n  - {id: nic-cc-skew, params: {allowed: {RPG_AI_RATE_P1: ['10']}}}\n"
    out = run_fabric(tmp_path / "pin", rail, faults, checks=["nic-cc-skew"], baseline=pinned)
    assert {d for _c, d, s in table(out, Status.FAIL) if s == "RPG_AI_RATE_P1"} == {
        "gpu-00000", "gpu-00001", "gpu-00003"
    }  # fmt: skip

    def no_sudo(doc: dict[str, Any]) -> None:
        doc["host"].pop("rdma_devices")
        doc["unsupported"] = {
            "host.rdma_devices.*.cc_config": "sudo -n mlxconfig -d mlx5_0 query: " + _no_sudo("")["message"]
        }

    edit_state(tmp_path, "gpu-00002", no_sudo)
    out = run_fabric_again(tmp_path, ["nic-cc-skew"], rail)
    r = one(out, "nic-cc-skew", "gpu-00002", None)
    assert r.status is Status.SKIPPED and "sudo -n mlxconfig -d mlx5_0 query: needs root" in r.message
    assert table(out, Status.FAIL) == set()
    with pytest.raises(ValueError, match=r"is not a parameter \(an mlxconfig name"):
        NicCcSkewCheck({"allowed": {"rpg_ai_rate": ["5"]}})


def test_version_skew_covers_cuda(tmp_path: Path) -> None:
    rail = synthetic.rail_fabric(32)
    out = run_fabric(
        tmp_path, rail, [Fault("gpu-00001", "host.cuda_version", "12.1")], checks=["version-skew"]
    )
    assert table(out, Status.FAIL) == {("version-skew", "gpu-00001", "cuda_version")}
    assert one(out, "version-skew", "gpu-00001", "cuda_version").message == (
        "gpu-00001: cuda_version 12.1; the majority of hosts on linux model DGX-H100 run 12.2 (12.2 (3), 12.1 (1))"
    )


def test_fabric_manager_without_systemd_is_not_present(tmp_path: Path) -> None:
    run_fabric(tmp_path, LAB, checks=["host-fabric-manager"])
    command = "systemctl show --property=LoadState,ActiveState,SubState nvidia-fabricmanager"

    def no_systemd(doc: dict[str, Any]) -> None:
        doc["host"].pop("fabric_manager")
        doc["errors"] = [
            {"command": command, "kind": "unavailable",
             "message": "System has not been booted with systemd as init system (PID 1). Can't operate."}
        ]  # fmt: skip

    edit_state(tmp_path, "gpu-001", no_systemd)
    out = run_fabric_again(tmp_path, ["host-fabric-manager"])
    r = one(out, "host-fabric-manager", "gpu-001", None)
    assert r.status is Status.SKIPPED and r.message.startswith(
        "no systemd to ask: not present (systemctl show"
    )


def test_acs_pci_addresses_not_collected_fold_into_one_row_per_host(tmp_path: Path) -> None:
    """Issue 14: the message is the same on every port (the subject names the port), one per reason,
    so a host whose GPU addresses were not collected is one row of its report, not one per rail."""
    from fabline.results import SkipBlock, block_count

    run_fabric(tmp_path, LAB, checks=["host-acs"])

    def no_gpu_addresses(doc: dict[str, Any]) -> None:
        for gpu in doc["host"]["gpus"].values():
            gpu.pop("pci_address")

    edit_state(tmp_path, "gpu-001", no_gpu_addresses)
    edit_state(tmp_path, "gpu-002", lambda d: d["interfaces"]["eth1"]["nic"].pop("pci_address"))
    out = run_fabric_again(tmp_path, ["host-acs"])
    rails = len(next(d for d in LAB.devices if d.name == "gpu-001").rail_interfaces)
    assert rails > 1
    errors = table(out, Status.ERROR, "host-acs")
    assert {(d, s) for _, d, s in errors} == {("gpu-001", f"eth{i}") for i in range(rails)} | {
        ("gpu-002", "eth1")
    }
    assert {one(out, "host-acs", "gpu-001", f"eth{i}").message for i in range(rails)} == {
        "PCI address of this rail's GPU not collected (host.gpus pci_address)"
    }
    assert (
        one(out, "host-acs", "gpu-002", "eth1").message
        == "PCI address of this NIC not collected (nic.pci_address)"
    )
    rows = [r for r in out.results.problems if r.check == "host-acs" and r.device == "gpu-001"]
    assert len(rows) == 1 and type(rows[0]) is SkipBlock and block_count(rows[0]) == rails


def test_acs_bridges_not_readable_fold_into_one_row_per_host(tmp_path: Path) -> None:
    """Issue 14: lspci not run as root reads no bridge's ACS: every port of the host says the same
    (the host's unreadable bridges, the subject names the port), so the host is one row."""
    from fabline.results import SkipBlock, block_count

    rails = len(next(d for d in LAB.devices if d.name == "gpu-001").rail_interfaces)
    assert rails > 1
    bridges = synthetic.pcie_bridges(rails)
    for bridge in bridges.values():
        bridge.pop("acs_ctl")
        bridge["config_readable"] = False
    partly = synthetic.pcie_bridges(rails)
    partly["0000:37:00.0"].pop("acs_ctl")
    partly["0000:37:00.0"]["config_readable"] = False  # rail 2's GPU-side bridge only
    faults = [Fault("gpu-001", "host.pcie_bridges", bridges), Fault("gpu-002", "host.pcie_bridges", partly)]
    out = run_fabric(tmp_path, LAB, faults, checks=["host-acs"])
    errors = table(out, Status.ERROR, "host-acs")
    assert {(d, s) for _, d, s in errors} == {("gpu-001", f"eth{i}") for i in range(rails)} | {
        ("gpu-002", "eth2")
    }
    messages = {one(out, "host-acs", "gpu-001", f"eth{i}").message for i in range(rails)}
    assert len(messages) == 1
    (message,) = messages
    assert message.startswith(
        "ACS of the PCIe bridges between GPUs and rail NICs not readable (lspci not run as root): 0000:"
    )
    assert message.endswith(": " + ", ".join(sorted(bridges)))  # every bridge on the host's paths
    assert one(out, "host-acs", "gpu-002", "eth2").message == (
        "ACS of the PCIe bridges between GPUs and rail NICs not readable (lspci not run as root): 0000:37:00.0"
    )
    rows = [r for r in out.results.problems if r.check == "host-acs" and r.device == "gpu-001"]
    assert len(rows) == 1 and type(rows[0]) is SkipBlock and block_count(rows[0]) == rails


def test_acs_verdicts_remembered_per_distinct_host_give_each_host_its_own_results() -> None:
    """host-acs judges each distinct (bridges, addresses) once: hosts sharing them, with a fault or
    without, get what a fresh check gives them, named after themselves; an Invalid value is judged.
    """
    from fabline.checks import DeviceContext
    from fabline.checks.fabric.gpuhost import HostAcsCheck
    from fabline.state import Invalid

    docs = [d for d in synthetic.states(LAB) if d["role"] == "host"]
    assert len(docs) >= 2
    faulty = synthetic.pcie_bridges(4, acs_on=[2])
    unreadable = synthetic.pcie_bridges(4)
    unreadable["0000:37:00.0"]["config_readable"] = False
    variants = [None, faulty, unreadable, {**faulty, "0000:37:01.0": Invalid("host.pcie_bridges.x", "bad")}]
    shared = HostAcsCheck()

    def judged(check: HostAcsCheck, doc: dict[str, Any], name: str) -> list[tuple[Any, ...]]:
        rails = [n for n in doc["interfaces"] if n.startswith("eth")]
        ctx = DeviceContext(name, "linux", "host", (), {"rail_interfaces": rails}, doc, {})  # type: ignore[arg-type]
        out = []
        for r in check.check_device(ctx):
            out.append(
                (r.device, r.subject, r.status, r.message, r.expected, r.actual, getattr(r, "subjects", None))
            )
        return out

    seen = []
    for bridges in variants:
        for doc in docs:
            if bridges is not None:
                doc = {**doc, "host": {**doc["host"], "pcie_bridges": bridges}}
            for name in ("gpu-a", "gpu-b"):
                mine = judged(shared, doc, name)
                assert mine == judged(HostAcsCheck(), doc, name)
                assert all(row[0] == name for row in mine)
                seen.extend(row[2] for row in mine)
    assert {Status.PASS, Status.FAIL, Status.ERROR} <= set(seen)
