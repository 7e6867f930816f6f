"""The simulator's shell subset, CLI dialects, fault helpers and renderer edge cases (no SSH)."""

from __future__ import annotations

import random
import shlex

import pytest

from fabline import synthetic
from fabline.errors import CommandUnavailable, ParseError
from fabline.platforms import parse_output
from fabline.sim import TransportFault
from fabline.sim.dialects import Session, dialect
from fabline.sim.faults import (
    dscp_remapped,
    fec_mismatch,
    firmware_skew,
    low_rx_power,
    pfc_off,
    rail_miswire,
    rising_fec,
    wrong_mtu,
)
from fabline.sim.render import render
from fabline.sim.render.common import Answer, split_words
from fabline.sim.server import Simulator
from fabline.sim.shell import SessionDrop, Shell, _tokens


def _echo_shell() -> Shell:
    def simple(line: str) -> Answer:
        if line.startswith("fail"):
            return Answer("", 3, "failed\n")
        if line.startswith("bad"):
            return Answer("", 127, f"bash: {line}: command not found\n")
        return Answer(f"ran {line}\n")

    return Shell(simple, lambda w: Answer("", 127, f"bash: {w}: command not found\n"))


@pytest.mark.parametrize(
    ("script", "out", "err", "code"),
    [
        ("tool -a x", "ran tool -a x\n", "", 0),
        ("echo A; tool; echo B", "A\nran tool\nB\n", "", 0),
        ("fail && echo no", "", "failed\n", 3),
        ("fail || echo yes", "yes\n", "failed\n", 0),
        ("fail; echo $?", "3\n", "failed\n", 0),
        ("bad 2>&1", "bash: bad: command not found\n", "", 127),
        ("bad 2>/dev/null", "", "", 127),
        ("tool >/dev/null", "", "", 0),
        ("sudo timeout 5 tool x", "ran tool x\n", "", 0),
        ("LC_ALL=C tool", "ran tool\n", "", 0),
        ("sh -c 'echo in; tool'", "in\nran tool\n", "", 0),
        ("printf '%s=%s\\n' a b", "a=b\n", "", 0),
        ("echo -n x", "x", "", 0),
        ("exit 4; echo never", "", "", 4),
        ("tool | head -n 1", "ran tool\n", "", 0),
        ("tool | grep -v ran", "", "", 1),
        ("tool\necho two", "ran tool\ntwo\n", "", 0),
        ("echo 'a;b'", "a;b\n", "", 0),
        ("grep -H . '/sys/x/*'", "ran grep -H . /sys/x/*\n", "", 0),
    ],
)
def test_shell_subset(script: str, out: str, err: str, code: int) -> None:
    assert _echo_shell().run(script) == Answer(out, code, err)


def test_shell_drop_keeps_what_was_sent() -> None:
    def simple(line: str) -> Answer:
        if line == "cut":
            raise SessionDrop("half")
        return Answer("first\n")

    with pytest.raises(SessionDrop) as exc:
        Shell(simple, lambda w: Answer("")).run("one; cut; three")
    assert exc.value.partial == "first\nhalf"


def test_unterminated_quote_is_a_bash_error() -> None:
    answer = _echo_shell().run("echo 'oops")
    assert answer.code == 2 and "syntax error" in answer.err


def _shlex_tokens(script: str) -> list[str]:
    lex = shlex.shlex(script, posix=True, punctuation_chars=";&|<>\n")
    lex.whitespace = " \t\r"
    lex.whitespace_split = True
    lex.commenters = "#"
    return list(lex)


def test_fast_tokenizers_split_as_shlex_does() -> None:
    # The regex fast paths (no quotes, escapes or comments) must give shlex's words exactly.
    pieces = [
        *"ab01 \t\r\n;&|<>$?-=./*_\x0b\x0c\u00e9",
        "echo",
        "2>&1",
        ">&2",
        "&&",
        "||",
        "'",
        '"',
        "\\",
        "#",
    ]
    rnd = random.Random(7)
    for _ in range(5000):
        script = "".join(rnd.choice(pieces) for _ in range(rnd.randrange(0, 20)))
        try:
            expected: list[str] | None = _shlex_tokens(script)
        except ValueError:
            expected = None
        try:
            got: list[str] | None = _tokens(script)
        except ValueError:
            got = None
        assert got == expected, script
        try:
            expected = shlex.split(script)
        except ValueError:
            expected = None
        try:
            got = split_words(script)
        except ValueError:
            got = None
        assert got == expected, script


@pytest.fixture(scope="module")
def lab() -> Simulator:
    return Simulator(synthetic.lab_fabric(), synthetic.LAB_FAULTS)


def _run(sim: Simulator, name: str, line: str) -> str:
    dev = sim.devices[name]
    return sim.dialect_of(dev).execute(Session(dev, "admin"), line, sim.run_command)


def test_eos_modes_terminal_and_errors(lab: Simulator) -> None:
    dev = lab.devices["spine-01"]
    d = lab.dialect_of(dev)
    s = Session(dev, "admin")
    assert d.prompt(s) == "spine-01#"
    assert d.execute(s, "terminal length 0", lab.run_command) == "Pagination disabled.\n"
    assert s.page_lines == 0
    assert d.execute(s, "terminal width 511", lab.run_command) == "Width set to 511 columns.\n"
    assert d.execute(s, "show bogus", lab.run_command) == "% Invalid input\n"
    assert "Authorization denied" in d.execute(s, "configure terminal", lab.run_command)
    d.execute(s, "disable", lab.run_command)
    assert d.prompt(s) == "spine-01>"
    assert "privileged mode required" in d.execute(s, "show running-config", lab.run_command)
    d.execute(s, "enable", lab.run_command)
    assert "hostname spine-01" in d.execute(s, "show running-config | no-more", lab.run_command)


def test_nxos_is_silent_on_terminal_and_marks_unknown(lab: Simulator) -> None:
    dev = lab.devices["leaf-r3-a"]
    d = lab.dialect_of(dev)
    s = Session(dev, "admin")
    assert d.prompt(s) == "leaf-r3-a# "
    assert d.execute(s, "terminal length 0", lab.run_command) == ""
    assert d.execute(s, "terminal width 511", lab.run_command) == ""
    out = d.execute(s, "show bogus", lab.run_command)
    assert "% Invalid command at '^' marker." in out
    with pytest.raises(CommandUnavailable):
        parse_output("cisco_nxos", "show version", out)


@pytest.mark.parametrize(
    ("name", "line", "needle"),
    [
        ("leaf-r0-a", "show bogus", 'Error: No such command "bogus".'),
        ("leaf-r0-a", "config interface mtu Ethernet0 1500", "Root privileges are required"),
        ("leaf-r0-a", "frobnicate", "bash: frobnicate: command not found"),
        ("leaf-r1-a", "nv set interface swp1 link mtu 1500", "read-only"),
        ("leaf-r1-a", "nv show bogus", "Invalid command"),
        ("gpu-001", "ethtool --set-fec eth0 encoding off", "read-only"),
    ],
)
def test_linux_based_errors_and_read_only(lab: Simulator, name: str, line: str, needle: str) -> None:
    assert needle in _run(lab, name, line)


def test_prompts_of_linux_based_platforms(lab: Simulator) -> None:
    for name, prompt in (("leaf-r0-a", "admin@leaf-r0-a:~$ "), ("leaf-r1-a", "admin@leaf-r1-a:mgmt:~$ "),
                         ("gpu-001", "admin@gpu-001:~$ ")):  # fmt: skip
        dev = lab.devices[name]
        assert dialect(dev.platform).prompt(Session(dev, "admin")) == prompt


def test_transport_faults_on_commands() -> None:
    faults = [
        TransportFault("gpu-001", "missing_command", "mlnx_qos -i eth0"),
        TransportFault("leaf-r2-a", "missing_command"),
        TransportFault("leaf-r0-a", "garbled", "show version"),
        TransportFault("gpu-002", "drop"),
    ]
    sim = Simulator(synthetic.lab_fabric(), faults)
    missing = sim.run_command(sim.devices["gpu-001"], "mlnx_qos -i eth0")
    assert missing.code == 127 and "command not found" in missing.err
    assert sim.run_command(sim.devices["gpu-001"], "mlnx_qos -i eth1").code == 0
    eos = sim.run_command(sim.devices["leaf-r2-a"], "show version")
    assert eos.out.startswith("% Invalid input")
    garbled = sim.run_command(sim.devices["leaf-r0-a"], "show version").out
    with pytest.raises(ParseError, match="binary output"):
        parse_output("sonic", "show version", garbled)
    # a command off the allow-list (session set-up, builtins) is never hit
    assert sim.run_command(sim.devices["gpu-002"], "hostname").out == "gpu-002\n"
    with pytest.raises(SessionDrop):
        sim.run_command(sim.devices["gpu-002"], "lsmod")


def test_unknown_fault_kind_and_device() -> None:
    with pytest.raises(ValueError, match="transport fault kind"):
        TransportFault("gpu-001", "melted")
    with pytest.raises(ValueError, match="unknown device"):
        Simulator(synthetic.lab_fabric(), [wrong_mtu("nope", "eth0")])


def test_state_fault_helpers_show_in_outputs() -> None:
    faults = [
        wrong_mtu("gpu-001", "eth0", 4200),
        pfc_off("leaf-r0-a", "Ethernet0"),
        dscp_remapped("leaf-r3-a", "Ethernet1/1", 26, 1),
        fec_mismatch("spine-01", "Ethernet1/1"),
        low_rx_power("gpu-002", "eth1", lane=2, dbm=-40.0),
        firmware_skew("gpu-002", "eth3", "28.36.1010"),
    ]
    sim = Simulator(synthetic.lab_fabric(), faults)

    def parsed(name: str, line: str) -> dict:  # type: ignore[type-arg]
        dev = sim.devices[name]
        return parse_output(dev.platform, line, dev.answer(line, render).out)["interfaces"]

    assert parsed("gpu-001", "ip -j -d link show")["eth0"]["mtu"] == 4200
    assert parsed("leaf-r0-a", "show runningconfiguration all")["Ethernet0"]["pfc_priorities"] == []
    assert parsed("leaf-r3-a", "show running-config")["Ethernet1/1"]["dscp_to_priority"]["26"] == 1
    assert parsed("leaf-r3-a", "show running-config")["Ethernet1/2"]["dscp_to_priority"]["26"] == 3
    assert parsed("spine-01", "show running-config")["Ethernet1/1"]["fec"] == "fc"
    assert parsed("gpu-002", "ethtool -m eth1")["eth1"]["optics"]["rx_power_dbm"][2] == -40.0
    assert parsed("gpu-002", "ethtool -i eth3")["eth3"]["nic"]["firmware"] == "28.36.1010"


def test_rising_fec_grows_per_session() -> None:
    sim = Simulator(synthetic.lab_fabric(), [rising_fec("gpu-002", "eth2", start=7, step=10)])
    dev = sim.devices["gpu-002"]
    seen = []
    for _ in range(3):
        dev.sessions += 1
        out = dev.answer("ethtool -I --show-fec eth2", render).out
        seen.append(
            parse_output("linux", "ethtool -I --show-fec eth2", out)["interfaces"]["eth2"]["counters"][
                "fec_uncorrectable"
            ]
        )
    assert seen == [7, 17, 27]


def test_rail_miswire_needs_a_host() -> None:
    with pytest.raises(ValueError, match="not a host"):
        rail_miswire(synthetic.lab_fabric(), "leaf-r0-a")


def test_host_files_and_globs(lab: Simulator) -> None:
    out = _run(lab, "gpu-001", "ls /sys/class/infiniband/*/device/net")
    assert "eth0" in out and "eth3" in out
    out = _run(lab, "gpu-001", "cat /sys/kernel/config/rdma_cm/mlx5_2/ports/1/default_roce_tos")
    assert out == "104\n"  # planted: RDMA-CM ToS without ECN capability on gpu-001 eth2
    out = _run(lab, "gpu-001", "cat /etc/missing")
    assert "No such file or directory" in out
    assert "Is a directory" in _run(lab, "gpu-001", "cat /sys/class/net/eth0/")
    assert "Is a directory" in _run(lab, "gpu-001", "cat /")
    assert "No such file" in _run(lab, "gpu-001", "cat /sys/class/net/eth")
    out = _run(lab, "gpu-001", "grep -H . /sys/class/net/eth0/ecn/roce_np/enable/[0-1]")
    assert out.splitlines() == [f"/sys/class/net/eth0/ecn/roce_np/enable/{p}:0" for p in (0, 1)]
    out = _run(lab, "gpu-001", "cat /sys/class/net/eth9*/mtu")
    assert "cat: /sys/class/net/eth9*/mtu: No such file or directory" in out


def test_asyncssh_ignore_packets_are_left_out() -> None:
    from fabline.sim.server import _without_ignore

    sent: list[tuple[int, tuple[bytes, ...]]] = []
    send = _without_ignore(lambda pkttype, *args, **_kw: sent.append((pkttype, args)))
    send(2, b"\0\0\0\0")  # asyncssh's empty SSH_MSG_IGNORE
    send(2, b"\0\0\0\1x")  # an ignore packet with data is sent
    send(94, b"\0\0\0\0", b"\0\0\0\2hi", handler=None)
    assert sent == [(2, (b"\0\0\0\1x",)), (94, (b"\0\0\0\0", b"\0\0\0\2hi"))]


def test_linux_host_serves_declared_nccl_env_files_and_gpu_tools() -> None:
    """A setting whose source is an env file lives in that file (as 'export'), not in nccl.conf."""
    from fabline.platforms import parse_output
    from fabline.platforms.linux import FABRIC_MANAGER_COMMAND, NCCL_ENV_FILE_COMMAND
    from fabline.synthetic import Fault

    job = "/etc/profile.d/nccl-job.sh"
    sim = Simulator(
        synthetic.lab_fabric(),
        [
            Fault("gpu-001", "host.nccl_env.NCCL_IB_TC", "104"),
            Fault("gpu-001", "host.nccl_sources", {"NCCL_IB_TC": job}),
            Fault("gpu-002", "host.fabric_manager", "not-found"),
        ],
    )
    command = NCCL_ENV_FILE_COMMAND.format(env_file=job)
    out = _run(sim, "gpu-001", command)
    assert out == 'export NCCL_IB_TC="104"\n(end of file)\n'
    assert parse_output("linux", command, out) == {
        "host": {"nccl_env": {"NCCL_IB_TC": "104"}, "nccl_sources": {"NCCL_IB_TC": job}}
    }
    assert "NCCL_IB_TC" not in _run(sim, "gpu-001", "cat /etc/nccl.conf")
    assert "No such file" in _run(sim, "gpu-002", command)
    assert (
        _run(sim, "gpu-002", FABRIC_MANAGER_COMMAND)
        == "LoadState=not-found\nActiveState=inactive\nSubState=dead\n"
    )
    assert _run(sim, "gpu-001", FABRIC_MANAGER_COMMAND).startswith("LoadState=loaded\nActiveState=active")
