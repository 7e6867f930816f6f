"""A Linux host collected from a real OpenSSH server: real sshd, real bash, real iproute2 and ethtool.

The simulator answers in the formats of the samples; this test checks the exec transport against
the real thing: scripts of commands cut back by their end markers in real bash, real exit codes
(127 for a tool that is not installed, 1 for a missing file), stderr kept per command, AES-GCM
negotiated with OpenSSH, trust on first use of a real host key and refusal of a changed one.

Where the test may create a network namespace (root, iproute2), sshd runs inside one, on the
namespace end of a veth pair, and the host's rail NICs are veth interfaces with the MTUs set here
(9000 and 4200), so the parsed state can be checked against known values. Otherwise sshd listens on
127.0.0.1 in this namespace and the loopback interface is the one inspected. Network: the namespace
created here, or loopback.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import paramiko
import pytest
import yaml
from click.testing import CliRunner

from fabline.cli import main
from fabline.collect.transports import SSHClient

SSHD = shutil.which("sshd") or "/usr/sbin/sshd"

pytestmark = pytest.mark.skipif(
    not (Path(SSHD).exists() and hasattr(os, "geteuid") and os.geteuid() == 0),
    reason="needs OpenSSH's sshd (Debian: openssh-server) and root (.ci/run installs it and runs as root)",
)


@dataclass
class Target:
    """Where the real sshd listens and what the inspected interfaces are."""

    address: str
    port: int
    interfaces: dict[str, int | None]  # name -> MTU set by the test (None: whatever it is)
    namespace: str | None
    run: Any  # run(argv) in the target's namespace


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _sh(*argv: str) -> None:
    subprocess.run(argv, check=True, capture_output=True, text=True)


@contextlib.contextmanager
def _namespace() -> Iterator[Target | None]:
    """A network namespace with rail NICs eth0 (MTU 9000, reachable over veth) and eth1 (MTU 4200)."""
    ip = shutil.which("ip")
    tag = f"{os.getpid() % 100000}"
    ns, host_end = f"fabline-t{tag}", f"flt{tag}h"
    subnet = f"198.18.{os.getpid() % 250}"
    if (
        ip is None
        or subprocess.run([ip, "netns", "add", ns], check=False, capture_output=True).returncode != 0
    ):
        yield None
        return
    try:
        _sh(ip, "link", "add", host_end, "type", "veth", "peer", "name", f"flt{tag}n")
        _sh(ip, "link", "set", f"flt{tag}n", "netns", ns)
        _sh(ip, "-n", ns, "link", "set", f"flt{tag}n", "name", "eth0")
        _sh(ip, "-n", ns, "link", "set", "eth0", "mtu", "9000")
        _sh(ip, "-n", ns, "addr", "add", f"{subnet}.2/30", "dev", "eth0")
        _sh(ip, "-n", ns, "link", "add", "eth1", "mtu", "4200", "type", "veth", "peer", "name", "eth1p")
        for name in ("lo", "eth0", "eth1", "eth1p"):
            _sh(ip, "-n", ns, "link", "set", name, "up")
        _sh(ip, "link", "set", host_end, "mtu", "9000")
        _sh(ip, "addr", "add", f"{subnet}.1/30", "dev", host_end)
        _sh(ip, "link", "set", host_end, "up")
        yield Target(
            f"{subnet}.2", 22, {"eth0": 9000, "eth1": 4200}, ns,
            lambda argv: subprocess.Popen([ip, "netns", "exec", ns, *argv]),
        )  # fmt: skip
    finally:
        subprocess.run([ip, "link", "del", host_end], check=False, capture_output=True)
        subprocess.run([ip, "netns", "del", ns], check=False, capture_output=True)


def _host_key(path: Path) -> str:
    """Write a new ed25519 host key; returns its public line (``ssh-ed25519 AAAA...``)."""
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)
    return " ".join(path.with_suffix(".pub").read_text().split()[:2])


@contextlib.contextmanager
def _sshd(target: Target, work: Path, host_key: Path) -> Iterator[None]:
    """sshd on the target, key login for root only, until the block ends."""
    Path("/run/sshd").mkdir(exist_ok=True)  # sshd's privilege-separation directory
    config = work / "sshd_config"
    config.write_text(
        f"ListenAddress {target.address}\nPort {target.port}\nHostKey {host_key}\n"
        f"PidFile {work / 'sshd.pid'}\nAuthorizedKeysFile {work / 'authorized_keys'}\n"
        "PermitRootLogin prohibit-password\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
        "UsePAM no\nStrictModes no\nLogLevel ERROR\n"
    )
    proc = target.run([SSHD, "-D", "-e", "-f", str(config)])
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection((target.address, target.port), timeout=1) as s:
                    if s.recv(4).startswith(b"SSH-"):
                        break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("sshd did not start") from None
                time.sleep(0.1)
        yield
    finally:
        proc.terminate()
        proc.wait(10)


def _collect(work: Path, out: Path) -> Any:
    """``fabline collect`` of the test host into ``out``, trusting keys through ``work/known_hosts``."""
    args = [
        "collect",
        "-i",
        work / "inv.yml",
        "-o",
        out,
        "--known-hosts",
        work / "known_hosts",
        "--timeout",
        "20",
    ]
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def openssh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    work = tmp_path_factory.mktemp("openssh")
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(work / "id_ed25519")], check=True
    )
    (work / "authorized_keys").write_text((work / "id_ed25519.pub").read_text())
    with _namespace() as found:
        target = found or Target("127.0.0.1", _free_port(), {"lo": None}, None, subprocess.Popen)
        inventory = {
            "all": {
                "hosts": {
                    "gpu-real": {
                        "ansible_host": target.address, "ansible_port": target.port, "ansible_user": "root",
                        "ansible_ssh_private_key_file": str(work / "id_ed25519"),
                        "fabline_platform": "linux", "fabline_role": "host",
                        "rail_interfaces": list(target.interfaces),
                        "nccl_env_files": [str(work / "job.env"), str(work / "missing.env"), str(work / "empty.env")],
                        "fabline_sudo": True,  # the root-only reads are sent: real sudo answers
                    }
                }
            }
        }  # fmt: skip
        (work / "inv.yml").write_text(yaml.safe_dump(inventory))
        (work / "empty.env").write_text("")  # declared, empty: sets nothing (not a parse error)
        # A job launcher's env file: NCCL settings among others (a secret that must not leave the host).
        (work / "job.env").write_text(
            "export OMP_NUM_THREADS=8\nexport WANDB_API_KEY=s3cr3t-never-in-a-snapshot\n"
            'export NCCL_IB_TC=106\nNCCL_IB_GID_INDEX="3"\n# NCCL_DEBUG=INFO\n'
        )
        public = _host_key(work / "host_key")
        with _sshd(target, work, work / "host_key"):
            result = _collect(work, work / "snap")
        yield {"work": work, "target": target, "result": result, "public": public}


def _commands(snap: Path) -> dict[str, dict[str, Any]]:
    manifest = json.loads((snap / "manifest.json").read_text())
    return {c["command"]: c for c in manifest["devices"]["gpu-real"]["commands"]}


def test_real_host_collected_with_real_exit_codes(openssh: dict[str, Any]) -> None:
    result, snap = openssh["result"], openssh["work"] / "snap"
    assert result.exit_code == 0, result.output
    state = json.loads((snap / "state" / "gpu-real.json").read_text())
    # No RDMA NIC, no mlnx tools, no LLDP daemon here: read, but partly.
    assert state["status"] == "partial"
    by_cmd = _commands(snap)
    ip_link = by_cmd["ip -j -d link show"]
    assert ip_link["status"] == "ok" and ip_link["exit_code"] == 0
    json.loads((snap / "raw" / "gpu-real" / ip_link["file"]).read_text())  # the evidence as the host gave it
    # A tool that is not installed: bash's exit 127, recorded as unavailable (not a failure).
    assert by_cmd["show_gids"]["status"] == "unavailable" and by_cmd["show_gids"]["exit_code"] == 127
    # A file that is not there: cat's exit 1, its stderr in the message.
    nccl = by_cmd["cat /etc/nccl.conf"]
    assert nccl["status"] == "failed" and nccl["exit_code"] == 1 and "No such file" in nccl["message"]
    for name, mtu in openssh["target"].interfaces.items():
        iface = state["interfaces"][name]
        assert iface["admin_up"] is True
        if mtu is not None:
            assert iface["mtu"] == mtu
    if openssh["target"].namespace:  # veth interfaces: ethtool answers for them
        assert by_cmd["ethtool -i eth0"]["status"] == "ok"
        assert state["interfaces"]["eth0"]["nic"]["driver"] == "veth"
    # The host's own facts, read back through sshd and bash, equal what this machine says of itself.
    import platform

    assert state["facts"]["hostname"] == Path("/proc/sys/kernel/hostname").read_text().strip()
    assert state["facts"]["kernel"] == platform.release()
    os_release = dict(
        line.split("=", 1) for line in Path("/etc/os-release").read_text().splitlines() if "=" in line
    )
    assert state["facts"]["os_version"] == os_release["PRETTY_NAME"].strip('"')
    statuses = {c["status"] for c in by_cmd.values()}
    assert statuses <= {"ok", "unavailable", "failed", "parse_error"}, statuses


#: The checks of issue 16 (inside the GPU server) and the rules over what its commands collect.
GPU_SERVER_CHECKS = (
    "host-pcie-link", "gpu-nic-affinity", "host-iommu", "host-gpu-count", "host-fabric-manager",
    "nccl-gid-index", "nccl-ib-hca", "nccl-socket-ifname", "host-cnp-dscp", "host-cnp-priority",
    "host-roce-mtu", "host-cnp-fabric", "dcqcn-skew", "host-acs", "nic-cc-skew",
)  # fmt: skip


def test_gpu_server_commands_on_a_host_without_pcie_nic_or_gpu(
    openssh: dict[str, Any], tmp_path: Path
) -> None:
    """Every issue-16 command ran on the real host; no PCIe NIC, no GPU: 'not present', never a pass."""
    from fabline.platforms.linux import DMIDECODE_COMMAND, HOST_SYSFS_COMMAND, LSPCI_COMMAND, NVIDIA_SMI_QUERY

    snap = openssh["work"] / "snap"
    by_cmd = _commands(snap)
    state = json.loads((snap / "state" / "gpu-real.json").read_text())
    # The one sysfs read: real grep over the real /sys; files a veth or loopback lacks are silent
    # (--no-messages) and make grep exit 2, yet the answer is read.
    sysfs = by_cmd[HOST_SYSFS_COMMAND]
    assert sysfs["status"] == "ok", sysfs
    assert (snap / "raw" / "gpu-real" / sysfs["file"]).read_text().count("/address:") >= 1
    for name in openssh["target"].interfaces:
        assert state["interfaces"][name]["nic"]["pcie"] == {"present": False}, name
    assert isinstance(state["host"]["iommu_params"], list)  # from the real /proc/cmdline
    # No NVIDIA driver here: nvidia-smi is not installed (bash's 127), recorded as unavailable.
    for command in (NVIDIA_SMI_QUERY, "nvidia-smi topo -m"):
        if shutil.which("nvidia-smi") is None:
            assert by_cmd[command]["status"] == "unavailable" and by_cmd[command]["exit_code"] == 127
    # systemctl answers for a unit that is not installed; where systemd is not PID 1 (a container)
    # it cannot ask: 'unavailable' with systemctl's reason, never a failure of the host.
    manager = by_cmd["systemctl show --property=LoadState,ActiveState,SubState nvidia-fabricmanager"]
    assert manager["status"] in ("ok", "unavailable"), manager
    if manager["status"] == "unavailable":
        assert "systemd" in manager["message"] or "bus" in manager["message"], manager
    # The CUDA version comes from nvidia-smi's header: not installed here, unavailable (bash's 127).
    if shutil.which("nvidia-smi") is None:
        assert by_cmd["nvidia-smi"]["status"] == "unavailable" and by_cmd["nvidia-smi"]["exit_code"] == 127
    # The root-only reads were sent with sudo -n (fabline_sudo): without sudo on the host, bash's 127;
    # with it, the real tool answers as root (lspci's real bridges, dmidecode's BIOS or its
    # 'no SMBIOS' on a VM) or is not installed (sudo's own 'command not found'): never a parse error.
    for command in (LSPCI_COMMAND, DMIDECODE_COMMAND):
        record = by_cmd[command]
        assert record["status"] in ("ok", "unavailable"), record
        if shutil.which("sudo") is None:
            assert record["exit_code"] == 127, record
    if by_cmd[LSPCI_COMMAND]["status"] == "ok":
        assert isinstance(state["host"]["pcie_bridges"], dict)
    # No RDMA device here: no mlxconfig query to send (it runs per RDMA device of the rail NICs).
    assert not [c for c in by_cmd if c.startswith("sudo -n mlxconfig")]
    for command in (HOST_SYSFS_COMMAND, NVIDIA_SMI_QUERY, "nvidia-smi topo -m", "nvidia-smi"):
        assert by_cmd[command]["status"] != "parse_error", by_cmd[command]
    # Judged: each check is 'skipped' with the not-present reason (or not applicable), never a pass.
    result = CliRunner().invoke(
        main, ["check", "-i", str(openssh["work"] / "inv.yml"), "--snapshot", str(snap), "-o", str(tmp_path),
               "-f", "json", "-q"],
    )  # fmt: skip
    assert result.exit_code in (0, 3, 4), result.output
    report = json.loads((tmp_path / "report.json").read_text())
    mine = [r for r in report["results"] if r["check"] in GPU_SERVER_CHECKS and r["device"] == "gpu-real"]
    assert mine, "no result of the GPU server checks on the real host"
    assert {r["status"] for r in mine} <= {"skipped"}, [(r["check"], r["status"], r["message"]) for r in mine]
    passes = report.get("passes") or {}  # report/2 counts passes apart from the results
    assert not any((passes.get(check) or {}).get("gpu-real") for check in GPU_SERVER_CHECKS), passes
    by_check = {r["check"]: r for r in mine}
    for check in (
        "host-pcie-link",
        "host-iommu",
        "gpu-nic-affinity",
        "host-gpu-count",
        "host-fabric-manager",
    ):
        assert "not present" in by_check[check]["message"], by_check[check]
    for check in ("host-cnp-dscp", "host-roce-mtu"):
        assert by_check[check]["message"].startswith("not applicable"), by_check[check]


def test_declared_nccl_env_files_on_the_real_host(openssh: dict[str, Any], tmp_path: Path) -> None:
    """No /etc/nccl.conf, a declared env file sets NCCL: read (NCCL lines only) and judged, not skipped."""
    work, snap = openssh["work"], openssh["work"] / "snap"
    by_cmd = _commands(snap)
    job = by_cmd[f"sed -n '/NCCL_/p;$s/.*/(end of file)/p' {work / 'job.env'}"]
    assert job["status"] == "ok" and job["exit_code"] == 0
    raw = (snap / "raw" / "gpu-real" / job["file"]).read_text()
    assert "NCCL_IB_TC=106" in raw and "s3cr3t" not in raw and "OMP_NUM_THREADS" not in raw
    missing = by_cmd[f"sed -n '/NCCL_/p;$s/.*/(end of file)/p' {work / 'missing.env'}"]
    assert (
        missing["status"] == "failed" and missing["exit_code"] == 2 and "No such file" in missing["message"]
    )
    # An empty env file: sed exits 0 with no output; read as a file that sets nothing.
    empty = by_cmd[f"sed -n '/NCCL_/p;$s/.*/(end of file)/p' {work / 'empty.env'}"]
    assert empty["status"] == "ok" and empty["exit_code"] == 0, empty
    state = json.loads((snap / "state" / "gpu-real.json").read_text())
    assert state["host"]["nccl_env"] == {"NCCL_IB_TC": "106", "NCCL_IB_GID_INDEX": "3"}
    assert set(state["host"]["nccl_sources"].values()) == {str(work / "job.env")}
    assert "s3cr3t" not in (snap / "state" / "gpu-real.json").read_text()
    result = CliRunner().invoke(
        main,
        [
            "check",
            "-i",
            str(work / "inv.yml"),
            "--snapshot",
            str(snap),
            "-o",
            str(tmp_path),
            "-f",
            "json",
            "-q",
        ],
    )
    assert result.exit_code in (3, 4), result.output
    report = json.loads((tmp_path / "report.json").read_text())
    tc = [r for r in report["results"] if r["check"] == "host-nccl-ib-tc" and r["device"] == "gpu-real"]
    passes = (report.get("passes") or {}).get("host-nccl-ib-tc", {}).get("gpu-real")
    # judged from the env file although /etc/nccl.conf is missing: a pass, not 'not applicable'
    assert passes or [r["status"] for r in tc] == ["pass"], tc


def test_reparse_of_real_evidence_gives_the_same_state(openssh: dict[str, Any]) -> None:
    snap = openssh["work"] / "snap"
    before = json.loads((snap / "state" / "gpu-real.json").read_text())
    from fabline.collect.reparse import reparse_snapshot
    from fabline.inventory import load_inventory

    assert reparse_snapshot(snap, load_inventory(openssh["work"] / "inv.yml").devices()) == 1
    after = json.loads((snap / "state" / "gpu-real.json").read_text())
    assert after == before


def test_openssh_negotiates_aes_gcm_and_its_key_was_recorded(openssh: dict[str, Any]) -> None:
    target, work = openssh["target"], openssh["work"]
    recorded = (work / "known_hosts").read_text().split()
    assert " ".join(recorded[1:3]) == openssh["public"]  # trust on first use: the real key, kept
    with _sshd(target, work, work / "host_key"):
        client = SSHClient()
        client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
        client.connect(
            target.address, port=target.port, username="root", key_filename=str(work / "id_ed25519"),
            look_for_keys=False, allow_agent=False, timeout=10,
        )  # fmt: skip
        try:
            transport = client.get_transport()
            assert transport is not None
            assert transport.local_cipher == transport.remote_cipher == "aes128-gcm@openssh.com"
        finally:
            client.close()


def test_a_changed_real_host_key_is_refused(openssh: dict[str, Any]) -> None:
    target, work = openssh["target"], openssh["work"]
    _host_key(work / "new_host_key")
    with _sshd(target, work, work / "new_host_key"):
        result = _collect(work, work / "snap-changed")
    assert result.exit_code == 3, result.output
    state = json.loads((work / "snap-changed" / "state" / "gpu-real.json").read_text())
    assert state["status"] == "error" and state["errors"][0]["kind"] == "host_key"
