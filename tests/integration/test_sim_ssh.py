"""The simulator over real SSH: paramiko exec channels, netmiko CLI sessions, every fault kind,
clean stop (a second start on the same addresses works). Loopback only (127.10.x.y / 127.11.x.y).
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import asyncssh
import paramiko
import pytest
from netmiko import ConnectHandler

from fabline import synthetic
from fabline.platforms import parse_output
from fabline.sim import Simulator, TransportFault, run_simulator
from fabline.sim.faults import rail_miswire, rising_fec

# One port per test process, so concurrent runs (worktrees, CI shards) do not collide.
PORT = 20000 + os.getpid() % 40000
BASE = "127.11"


def _client(sim: Simulator, name: str, password: str = "admin") -> paramiko.SSHClient:
    host, port = sim.addresses[name]
    c = paramiko.SSHClient()
    c.set_missing_host_key_policy(paramiko.AutoAddPolicy())
    c.connect(
        host, port, username="admin", password=password, look_for_keys=False, allow_agent=False, timeout=5
    )
    return c


def _read_until(chan: paramiko.Channel, marker: bytes, buf: bytes = b"", seconds: float = 5) -> bytes:
    """What the shell channel sent until ``marker`` appeared (or ``seconds`` passed), after ``buf``."""
    deadline = time.time() + seconds
    while marker not in buf and time.time() < deadline:
        if chan.recv_ready():
            buf += chan.recv(65536)
        time.sleep(0.01)
    return buf


def _exec(c: paramiko.SSHClient, cmd: str) -> tuple[str, str, int]:
    _i, o, e = c.exec_command(cmd, timeout=5)
    out, err = o.read().decode(), e.read().decode()
    return out, err, o.channel.recv_exit_status()


FAULTS = [
    *synthetic.LAB_FAULTS,
    TransportFault("gpu-001", "missing_command", "lldpctl -f json"),
    TransportFault("gpu-001", "garbled", "lsmod"),
    TransportFault("gpu-002", "drop", "ibv_devinfo"),
    TransportFault("spine-02", "auth_failure"),
    TransportFault("leaf-r0-a", "garbled", "show version"),
    rising_fec("gpu-002", "eth2", start=5, step=100),
]


@pytest.fixture(scope="module")
def sim() -> Iterator[Simulator]:
    fabric = rail_miswire(synthetic.lab_fabric(), "gpu-001")
    with run_simulator(fabric, FAULTS, address_base=BASE, port=PORT) as s:
        yield s


def test_inventory_and_keys(sim: Simulator) -> None:
    inv = sim.inventory(password_env="SIMPW")
    hosts = inv["all"]["children"]["gpu_hosts"]["hosts"]
    assert hosts["gpu-001"]["ansible_host"] == sim.addresses["gpu-001"][0]
    assert hosts["gpu-001"]["ansible_port"] == PORT
    assert hosts["gpu-001"]["rail_interfaces"] == ["eth0", "eth1", "eth2", "eth3"]
    assert "admin" not in str(inv["all"].get("vars")), "the password never lands in the inventory"
    fps = sim.host_key_fingerprints()
    assert len(set(fps.values())) == len(sim.devices)
    assert all(fp.startswith("SHA256:") for fp in fps.values())


def test_host_exec_channels_exit_codes(sim: Simulator) -> None:
    c = _client(sim, "gpu-002")
    try:
        out, _err, code = _exec(c, "ethtool -i eth0")
        assert code == 0 and "driver: mlx5_core" in out
        out, err, code = _exec(c, "nosuchtool --x")
        assert code == 127 and "command not found" in err and out == ""
        out, _err, code = _exec(c, "ip -j -d link show")
        frag = parse_output("linux", "ip -j -d link show", out)
        assert frag["interfaces"]["eth1"]["mtu"] == 1500  # planted: host NIC left at 1500
        out, _e, code = _exec(c, "echo BEGIN; cat /etc/nccl.conf; echo END $?")
        assert out.startswith("BEGIN\n") and "NCCL_IB_TC=106" in out and out.endswith("END 0\n")
        out, _e, code = _exec(c, "mlnx_qos -i eth0 --pfc 0,0,0,1,0,0,0,0")
        assert code != 0, "the simulator is read-only"
    finally:
        c.close()


def test_rail_miswire_lldp_both_ends(sim: Simulator) -> None:
    # gpu-001 cabled by port adjacency: eth0 on rail 1's leaf, eth1 on rail 0's leaf.
    c = _client(sim, "leaf-r0-a")
    try:
        out, _e, _c = _exec(c, "show lldp table")
    finally:
        c.close()
    frag = parse_output("sonic", "show lldp table", out)
    assert frag["interfaces"]["Ethernet0"]["lldp"] == {
        "device": "gpu-001",
        "port": "eth1",
        "port_description": "eth1",
    }
    c = _client(sim, "gpu-002")
    try:
        out, _e, _c = _exec(c, "lldpctl -f json")
    finally:
        c.close()
    frag = parse_output("linux", "lldpctl -f json", out)
    assert frag["interfaces"]["eth0"]["lldp"]["device"] == "leaf-r0-a"


def test_missing_garbled_drop(sim: Simulator) -> None:
    c = _client(sim, "gpu-001")
    try:
        _o, err, code = _exec(c, "lldpctl -f json")
        assert code == 127 and "lldpctl: command not found" in err
        out, _e, code = _exec(c, "lsmod")
        assert "\x00" in out or any(ord(ch) < 9 for ch in out)
    finally:
        c.close()
    c = _client(sim, "gpu-002")
    try:
        _i, o, _e = c.exec_command("ibv_devinfo", timeout=5)
        out = o.read().decode()
        assert out.startswith("hca_id:"), "half of the answer arrives before the drop"
        assert "mlx5_3" not in out
        assert o.channel.recv_exit_status() == -1, "no exit status: the session went away"
        transport = c.get_transport()
        assert transport is None or not transport.is_active()
    finally:
        c.close()


def test_auth_failure_and_password(sim: Simulator) -> None:
    with pytest.raises(paramiko.AuthenticationException):
        _client(sim, "spine-02")
    with pytest.raises(paramiko.AuthenticationException):
        _client(sim, "spine-01", password="wrong")


def test_rising_fec_counter(sim: Simulator) -> None:
    values = []
    for _ in range(2):
        c = _client(sim, "gpu-002")
        try:
            out, _e, _c = _exec(c, "ethtool -I --show-fec eth2")
        finally:
            c.close()
        frag = parse_output("linux", "ethtool -I --show-fec eth2", out)
        values.append(frag["interfaces"]["eth2"]["counters"]["fec_uncorrectable"])
    assert values[1] - values[0] == 100


def test_netmiko_eos_pager_and_readonly(sim: Simulator) -> None:
    host, port = sim.addresses["spine-01"]
    conn = ConnectHandler(device_type="arista_eos", host=host, port=port, username="admin", password="admin")
    try:
        assert conn.find_prompt() == "spine-01#"
        out = conn.send_command("show running-config")
        frag = parse_output("arista_eos", "show running-config", out)
        assert frag["facts"]["hostname"] == "spine-01"
        assert frag["interfaces"]["Ethernet1/1"]["pfc_priorities"] == [3]
        assert "% Invalid input" in conn.send_command("show bogus")
        assert "Authorization denied" in conn.send_command("configure terminal", expect_string=r"#")
    finally:
        conn.disconnect()


def test_eos_pager_without_terminal_length(sim: Simulator) -> None:
    c = _client(sim, "spine-01")
    chan = c.invoke_shell(width=200, height=24)
    try:
        buf = b""
        chan.send(b"show running-config\n")
        buf = _read_until(chan, b"--More--", buf)
        assert b"--More--" in buf, "the EOS pager stops a long output"
        chan.send(b"q")
        chan.send(b"terminal length 0\n")
        buf = _read_until(chan, b"Pagination disabled", buf)
        assert b"Pagination disabled." in buf
    finally:
        c.close()


def test_line_editing_in_one_chunk(sim: Simulator) -> None:
    # Typed text, DEL, ^C and control characters arriving in one packet are handled as typed.
    c = _client(sim, "spine-01")
    chan = c.invoke_shell(width=200, height=24)
    try:
        chan.send(b"terminal length 0\r\nshow verx\x7fsion\r\nfoo\x03sho\x08\x08\x08\x01bad\r\n")
        buf = _read_until(chan, b"% Invalid input")
        assert b"spine-01#show verx\x08 \x08sion\r\nArista " in buf
        assert b"spine-01#foo^C\r\nspine-01#sho\x08 \x08\x08 \x08\x08 \x08bad\r\n% Invalid input\r\n" in buf
    finally:
        c.close()


@pytest.mark.parametrize(
    ("name", "device_type", "command", "prompt"),
    [
        ("leaf-r0-a", "linux", "show interfaces status", "admin@leaf-r0-a:~$"),
        ("leaf-r1-a", "cumulus_linux", "nv show interface -o json", "admin@leaf-r1-a:mgmt:~$"),
        ("leaf-r3-a", "cisco_nxos", "show interface", "leaf-r3-a#"),
    ],
)
def test_netmiko_platforms(sim: Simulator, name: str, device_type: str, command: str, prompt: str) -> None:
    host, port = sim.addresses[name]
    conn = ConnectHandler(device_type=device_type, host=host, port=port, username="admin", password="admin")
    try:
        assert conn.find_prompt() == prompt
        out = conn.send_command(command)
        platform = sim.devices[name].platform
        frag = parse_output(platform, command, out)
        assert frag["interfaces"]
    finally:
        conn.disconnect()


def test_garbled_switch_output(sim: Simulator) -> None:
    host, port = sim.addresses["leaf-r0-a"]
    conn = ConnectHandler(device_type="linux", host=host, port=port, username="admin", password="admin")
    try:
        out = conn.send_command("show version")
    finally:
        conn.disconnect()
    assert "SONiC Software Version" not in out


def _sim_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name == "fabline-sim" or t.name.startswith("asyncio_")]


def test_no_answer_then_clean_restart() -> None:
    fabric = synthetic.lab_fabric()
    faults = [TransportFault("gpu-001", "no_answer")]
    before = _sim_threads()
    for _round in range(2):
        with run_simulator(fabric, faults, address_base="127.12", port=PORT) as s:
            host, port = s.addresses["gpu-001"]
            sock = socket.create_connection((host, port), timeout=2)
            sock.settimeout(0.5)
            with pytest.raises(TimeoutError):
                sock.recv(64)  # TCP accepted, no SSH banner
            sock.close()
            c = _client(s, "gpu-002")
            c.close()
        assert _sim_threads() == before, "the simulator's thread and executor are gone"


def test_address_in_use_is_one_line() -> None:
    fabric = synthetic.lab_fabric()
    with (
        run_simulator(fabric, address_base="127.13", port=PORT),
        pytest.raises(OSError, match=r"cannot listen on 127\.13\.0\.1"),
        run_simulator(fabric, address_base="127.13", port=PORT),
    ):
        pass


def test_start_speed_320_devices() -> None:
    fabric = synthetic.rail_fabric(2048)
    assert len(fabric.devices) >= 300
    t = time.perf_counter()
    with run_simulator(fabric, address_base="127.14", port=PORT) as s:
        started = time.perf_counter() - t
        c = _client(s, "gpu-00100")
        out, _e, code = _exec(c, "ethtool eth3")
        c.close()
    assert code == 0 and "Speed: 400000Mb/s" in out
    assert started < 2.0, "about 0.15 s unloaded; generous for a busy CI machine"


def test_public_key_login_and_persistent_host_keys(tmp_path: Path) -> None:
    key = asyncssh.generate_private_key("ssh-ed25519")
    key.write_private_key(str(tmp_path / "id_ed25519"))
    other = asyncssh.generate_private_key("ssh-ed25519")
    other.write_private_key(str(tmp_path / "other"))
    public = key.export_public_key("openssh").decode()
    fabric = synthetic.lab_fabric()
    prints = []
    for _round in range(2):
        with run_simulator(fabric, address_base="127.17", port=PORT, host_key_dir=tmp_path / "keys",
                           authorized_keys=[public]) as s:  # fmt: skip
            prints.append(s.host_key_fingerprints())
            host, port = s.addresses["gpu-001"]
            c = paramiko.SSHClient()
            c.set_missing_host_key_policy(paramiko.AutoAddPolicy())
            c.connect(host, port, username="admin", key_filename=str(tmp_path / "id_ed25519"),
                      look_for_keys=False, allow_agent=False, timeout=5)  # fmt: skip
            assert _exec(c, "hostname")[0] == "gpu-001\n"
            c.close()
            c = paramiko.SSHClient()
            c.set_missing_host_key_policy(paramiko.AutoAddPolicy())
            with pytest.raises(paramiko.AuthenticationException):
                c.connect(host, port, username="admin", key_filename=str(tmp_path / "other"),
                          look_for_keys=False, allow_agent=False, timeout=5)  # fmt: skip
            c.close()
    assert prints[0] == prints[1], "host keys kept in host_key_dir survive a restart"
