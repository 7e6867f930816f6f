"""Transports against a tiny asyncssh server of the test's own (real SSH on loopback).

The server answers exec channels (Linux hosts) and an interactive shell with a ``$`` prompt (the
SONiC shell netmiko drives) from a table of command -> output; the outputs are real samples or the
parser cases' constructed inputs (``tests/parsers/local/``), never invented here. The integration
tests (``tests/integration/test_collect*.py``) do the same against the full simulator.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncssh
import pytest

from fabline.collect.hostkeys import HostKeyStore
from fabline.collect.transports import (
    CommandFailure,
    ConnectFailure,
    ConnectOptions,
    ExecSession,
    NetmikoSession,
    Output,
)
from fabline.inventory import Device
from tests.conftest import samples_dir

SAMPLES = samples_dir()
LOCAL = Path(__file__).resolve().parents[1] / "parsers" / "local"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class MiniServer:
    """A one-device SSH server: exec answers + a ``$``-prompt shell, on 127.0.0.1:<port>."""

    answers: Mapping[str, str]
    password: str = "admin"
    prompt: str = "admin@sonic:~$ "
    drop_on: str | None = None  # a command that closes the connection instead of answering
    hang_on: str | None = None  # a command that never answers
    host_key: asyncssh.SSHKey = field(default_factory=lambda: asyncssh.generate_private_key("ssh-ed25519"))
    port: int = field(default_factory=free_port)
    auth_attempts: int = 0

    def __post_init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: Any = None

    def _answer(self, command: str) -> tuple[str, int]:
        if command in self.answers:
            return self.answers[command], 0
        return f"bash: {command.split(maxsplit=1)[0]}: command not found\n", 127

    def _shell_script(self, line: str) -> str:
        """A shell line: one command, or the collector's 'echo X""_BEGIN; cmd; echo X""_END $?; ...'."""
        out, code = "", 0
        for part in line.split("; "):
            if part.startswith("echo "):
                words = part[5:].replace('""', "").split()
                out += " ".join(str(code) if w == "$?" else w for w in words) + "\n"
            else:
                text, code = self._answer(part)
                out += text
        return out

    async def _handle(self, process: asyncssh.SSHServerProcess[str]) -> None:
        if process.command is not None:
            if process.command == self.drop_on:
                process.channel.get_connection().abort()
                return
            if process.command == self.hang_on:
                await asyncio.sleep(5)
            # The collector's scripts: 'cmd; echo MARK $?; echo MARK >&2; ...' (nothing else).
            code = 0
            for part in process.command.split("; "):
                if part.startswith("echo ") and part.endswith(" $?"):
                    process.stdout.write(f"{part[5:-3]} {code}\n")
                elif part.startswith("echo ") and part.endswith(" >&2"):
                    process.stderr.write(f"{part[5:-4]}\n")
                else:
                    if part == self.drop_on:  # what was answered before the drop reaches the client
                        await process.stdout.drain()
                        await asyncio.sleep(0.05)
                        process.channel.get_connection().abort()
                        return
                    text, code = self._answer(part)
                    (process.stdout if code == 0 else process.stderr).write(text)
            process.exit(code)
            return
        process.stdout.write(self.prompt)
        try:
            while True:
                line = (await process.stdin.readline()).strip()
                if line == self.drop_on:
                    process.channel.get_connection().abort()
                    return
                if line == self.hang_on:
                    await asyncio.sleep(5)
                if line in ("exit", "logout"):
                    process.exit(0)
                    return
                if line:
                    process.stdout.write(self._shell_script(line).replace("\n", "\r\n"))
                process.stdout.write(self.prompt)
        except (
            asyncssh.BreakReceived,
            asyncssh.TerminalSizeChanged,
            asyncssh.DisconnectError,
            BrokenPipeError,
        ):
            return

    def __enter__(self) -> MiniServer:
        server = self

        class _Auth(asyncssh.SSHServer):
            def begin_auth(self, username: str) -> bool:
                return True

            def password_auth_supported(self) -> bool:
                return True

            def validate_password(self, username: str, password: str) -> bool:
                server.auth_attempts += 1
                return password == server.password

        async def start() -> Any:
            return await asyncssh.create_server(
                _Auth, "127.0.0.1", self.port, server_host_keys=[self.host_key],
                process_factory=self._handle, encoding="utf-8",
            )  # fmt: skip

        self._thread.start()
        self._server = asyncio.run_coroutine_threadsafe(start(), self._loop).result(10)
        return self

    def __exit__(self, *exc: object) -> None:
        async def stop() -> None:
            for task in asyncio.all_tasks():  # sessions still hanging on purpose (hang_on)
                if task is not asyncio.current_task():
                    task.cancel()
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)

        asyncio.run_coroutine_threadsafe(stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)


def make_device(name: str, platform: str, port: int, password: str | None = "admin", **vars: Any) -> Device:
    role = "host" if platform == "linux" else "leaf"
    return Device(
        name=name, platform=platform, role=role, groups=(), host="127.0.0.1", port=port, user="admin",
        password=password, key_file=None, network_os=None, vars=vars,
    )  # fmt: skip


LINUX_ANSWERS = {
    "lsmod": (LOCAL / "linux" / "lsmod-gpu-host-constructed.txt").read_text(),
    "cat /etc/nccl.conf": (LOCAL / "linux" / "nccl_conf-constructed.txt").read_text(),
}
SONIC_ANSWERS = {
    "show version": (SAMPLES / "sonic" / "show_version-cmdref-msn2700.txt").read_text(),
    "show interfaces status": (SAMPLES / "sonic" / "show_interfaces_status-cmdref.txt").read_text(),
}


@pytest.fixture
def store(tmp_path: Path) -> HostKeyStore:
    return HostKeyStore(tmp_path / "known_hosts", "accept-new")


OPTS = ConnectOptions(timeout=5)


def test_exec_session_runs_parallel_channels_with_real_exit_codes(store: HostKeyStore) -> None:
    with MiniServer(LINUX_ANSWERS) as srv:
        session = ExecSession(make_device("gpu-1", "linux", srv.port), store, OPTS)
        try:
            results = {
                cmd: out for cmd, out, _s in session.run(["lsmod", "cat /etc/nccl.conf", "mlnx_qos -i eth0"])
            }
        finally:
            session.close()
    assert isinstance(results["lsmod"], Output) and results["lsmod"].exit_code == 0
    assert "nvidia_peermem" in results["lsmod"].text
    missing = results["mlnx_qos -i eth0"]
    assert isinstance(missing, Output) and missing.exit_code == 127 and "command not found" in missing.stderr


def test_netmiko_session_reads_sonic_shell(store: HostKeyStore) -> None:
    with MiniServer(SONIC_ANSWERS) as srv:
        session = NetmikoSession(make_device("leaf-1", "sonic", srv.port), "linux", store, OPTS)
        try:
            results = list(session.run(["show version", "show interfaces status"]))
        finally:
            session.close()
    version = results[0][1]
    assert isinstance(version, Output)
    assert "SONiC Software Version" in version.text
    assert "admin@sonic" not in version.text  # prompt stripped
    status = results[1][1]
    assert isinstance(status, Output) and "Ethernet0" in status.text


def test_auth_failure_is_classified_and_says_nothing_of_the_password(store: HostKeyStore) -> None:
    with MiniServer(LINUX_ANSWERS, password="right") as srv, pytest.raises(ConnectFailure) as info:
        ExecSession(make_device("gpu-1", "linux", srv.port, password="wrong-secret"), store, OPTS)
    assert info.value.status == "auth_failed" and info.value.retry is False
    assert "wrong-secret" not in info.value.message


def test_refused_port_is_unreachable_and_retryable(store: HostKeyStore) -> None:
    with pytest.raises(ConnectFailure) as info:
        ExecSession(make_device("gpu-1", "linux", free_port()), store, OPTS)
    assert (info.value.status, info.value.retry) == ("unreachable", True)
    assert "connection refused" in info.value.message


def test_tcp_accepted_but_no_banner_is_a_timeout(store: HostKeyStore) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        with pytest.raises(ConnectFailure) as info:
            ExecSession(make_device("gpu-1", "linux", port), store, ConnectOptions(timeout=0.5))
    # Two clocks race: the login deadline (the message names the step, "(no SSH banner)", when the
    # library says which; on a loaded machine it can cut the login before paramiko waits for the
    # banner at all) and paramiko's own banner wait of the same length. Either way: a timeout
    # naming the address and the limit.
    assert info.value.status == "timeout"
    assert info.value.message.startswith(
        (
            f"login to 127.0.0.1:{port} not finished within 0.5 s",
            f"no SSH banner/handshake from 127.0.0.1:{port} within 0.5 s",
        )
    ), info.value.message


@pytest.mark.parametrize("pace", [0.0, 0.01])  # one script / one command per channel
def test_dropped_session_is_reported_per_command(store: HostKeyStore, pace: float) -> None:
    with MiniServer(LINUX_ANSWERS, drop_on="lsmod") as srv:
        session = ExecSession(
            make_device("gpu-1", "linux", srv.port), store, ConnectOptions(timeout=3, pace=pace)
        )
        try:
            results = list(session.run(["cat /etc/nccl.conf", "lsmod", "cat /etc/nccl.conf"]))
        finally:
            session.close()
    assert isinstance(results[0][1], Output)
    assert isinstance(results[1][1], CommandFailure) and results[1][1].kind == "dropped"


def test_netmiko_shell_scripts_split_per_command(store: HostKeyStore) -> None:
    with MiniServer(SONIC_ANSWERS) as srv:
        session = NetmikoSession(make_device("leaf-1", "sonic", srv.port), "linux", store, OPTS, scripts=True)
        try:
            results = {
                c: o
                for c, o, _s in session.run(["show version", "show pfc counters", "show interfaces status"])
            }
        finally:
            session.close()
    for cmd in ("show version", "show interfaces status"):
        out = results[cmd]
        assert isinstance(out, Output) and out.exit_code == 0
        assert out.text == SONIC_ANSWERS[cmd]  # exactly the device's answer, nothing of the script
    missing = results["show pfc counters"]
    assert isinstance(missing, Output) and missing.exit_code == 127 and "command not found" in missing.text


def test_netmiko_command_timeout(store: HostKeyStore) -> None:
    with MiniServer(SONIC_ANSWERS, hang_on="show version") as srv:
        session = NetmikoSession(
            make_device("leaf-1", "sonic", srv.port), "linux", store, ConnectOptions(timeout=1)
        )
        try:
            results = list(session.run(["show version"]))
        finally:
            session.close()
    failure = results[0][1]
    assert isinstance(failure, CommandFailure) and failure.kind == "command_timeout"


def test_host_key_tofu_then_changed_key_refused(tmp_path: Path) -> None:
    known = tmp_path / "known_hosts"
    with MiniServer(LINUX_ANSWERS) as srv:
        ExecSession(make_device("gpu-1", "linux", srv.port), HostKeyStore(known, "accept-new"), OPTS).close()
        port = srv.port
    line = known.read_text()
    assert line.startswith(f"[127.0.0.1]:{port} ssh-ed25519 ")
    # Same address, new key: refused under accept-new and strict, accepted under ignore.
    with MiniServer(LINUX_ANSWERS, port=port) as srv:
        for policy in ("accept-new", "strict"):
            with pytest.raises(ConnectFailure) as info:
                ExecSession(make_device("gpu-1", "linux", port), HostKeyStore(known, policy), OPTS)
            assert info.value.kind == "host_key" and "changed" in info.value.message
        ExecSession(make_device("gpu-1", "linux", port), HostKeyStore(known, "ignore"), OPTS).close()
        assert srv.auth_attempts == 1  # the refused connections never sent the password
    assert known.read_text() == line


def test_strict_refuses_unknown_host(tmp_path: Path) -> None:
    known = tmp_path / "known_hosts"
    known.write_text("")
    with MiniServer(LINUX_ANSWERS) as srv:
        with pytest.raises(ConnectFailure) as info:
            ExecSession(make_device("gpu-1", "linux", srv.port), HostKeyStore(known, "strict"), OPTS)
        assert srv.auth_attempts == 0
    assert info.value.kind == "host_key" and "not in known_hosts" in info.value.message
    assert known.read_text() == ""


def test_script_forms_cut_back_exactly_under_real_bash(tmp_path: Path) -> None:
    """Both batching forms run by a real bash: outputs, exit codes and stderr land per command."""
    import subprocess

    from fabline.collect.transports import script, shell_line, split_script_output, split_shell_output

    sample = SAMPLES / "sonic" / "show_version-cmdref-msn2700.txt"
    (tmp_path / "nonl.txt").write_text("no newline at the end")
    commands = [
        f"cat {sample}",
        f"cat {tmp_path / 'missing.txt'}",
        "fabline-no-such-command-xyz",
        f"cat {tmp_path / 'nonl.txt'}",
    ]
    run = subprocess.run(
        ["bash", "-c", script(commands, "__FBL_T")], capture_output=True, text=True, check=False
    )
    exec_outs = split_script_output(Output(run.stdout, run.returncode, run.stderr), "__FBL_T", len(commands))
    # The interactive form: the shell echoes the line first (here: printed by hand), then runs it.
    line = shell_line(commands, "__FBL_S")
    shown = subprocess.run(["bash", "-c", line], capture_output=True, text=True, check=False).stdout
    shell_outs = split_shell_output(f"user@host:~$ {line}\n{shown}user@host:~$ ", "__FBL_S", len(commands))
    for outs in (exec_outs, shell_outs):
        assert all(isinstance(o, Output) for o in outs)
        first, missing, unknown, nonl = (o for o in outs if isinstance(o, Output))
        assert (first.text, first.exit_code) == (sample.read_text(), 0)
        assert missing.exit_code == 1 and unknown.exit_code == 127
        assert nonl.text == "no newline at the end"
    assert "No such file or directory" in exec_outs[1].stderr  # type: ignore[union-attr]
    assert "command not found" in exec_outs[2].stderr  # type: ignore[union-attr]


def test_pacing_spaces_commands_on_one_device(store: HostKeyStore) -> None:
    with MiniServer(LINUX_ANSWERS) as srv:
        session = ExecSession(
            make_device("gpu-1", "linux", srv.port), store, ConnectOptions(timeout=5, pace=0.3)
        )
        try:
            started = time.monotonic()
            results = list(session.run(["lsmod", "cat /etc/nccl.conf", "lsmod"]))
            elapsed = time.monotonic() - started
        finally:
            session.close()
    assert all(isinstance(out, Output) and out.exit_code == 0 for _c, out, _s in results)
    assert elapsed >= 0.6  # two gaps of at least 0.3 s between three commands
