"""Transports: how a collector talks to a device, chosen per platform by its profile.

- ``netmiko``: an interactive CLI session (prompt, echo, pager) for switch CLIs: Arista EOS, Cisco
  NX-OS, Cumulus and SONiC's shell. Commands run one after another on the one session; on a POSIX
  shell (SONiC, Cumulus) as script lines of up to :data:`SCRIPT_COMMANDS` commands.
- ``exec``: paramiko exec channels for Linux hosts: one SSH connection, scripts of up to
  :data:`EXEC_SCRIPT_COMMANDS` commands per channel, each command's real exit code carried by its
  end marker, several channels in flight at once (at most :data:`EXEC_CHANNELS`, below OpenSSH's
  default ``MaxSessions`` of 10; one command per channel with ``--pace``).

Connection problems become :class:`ConnectFailure` with the device status they mean; problems with
one command become :class:`CommandFailure`. Messages are fabline's own one-liners: a library's
exception text is never copied whole (it can hold addresses and settings, and must never hold a
password: :func:`redact` is applied to every message as a second guard).
"""

from __future__ import annotations

import contextlib
import logging
import re
import secrets
import select
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import paramiko

from fabline.collect.defaults import DEFAULT_COMMAND_TIMEOUT
from fabline.collect.hostkeys import HostKeyRefused, HostKeyStore
from fabline.inventory import Device

# paramiko logs routine teardown noise ("socket.send() raised exception." after a device closes the
# session on logout) at ERROR; with no handler configured Python would print it to stderr. A
# NullHandler keeps it out of the console without touching levels a user may have set.
logging.getLogger("paramiko").addHandler(logging.NullHandler())

#: Exec channels in flight per host connection (OpenSSH's sshd allows 10 sessions by default).
EXEC_CHANNELS = 8
#: Commands per exec-channel script. A channel costs a round trip and about a millisecond of CPU on
#: each end (paramiko is pure Python), so a host's commands go in a few scripts, not one channel each:
#: a host with 8 rail NICs needs two (its device commands, then its 72 per-interface ones).
EXEC_SCRIPT_COMMANDS = 128
#: Commands per script line typed into an interactive shell (SONiC, Cumulus): the line stays a few KB.
SCRIPT_COMMANDS = 32
#: Default most bytes one command, or one batch of commands sent together, may print
#: (``--max-output``, ``fabline_max_output``): the largest real output fabline reads is a few
#: hundred KB (a SONiC config_db.json), so 16 MiB is far above any real answer and keeps a fleet of
#: runaway devices to a bounded amount of memory.
DEFAULT_MAX_OUTPUT = 16 * 1024 * 1024


@dataclass(frozen=True)
class Output:
    """What one command gave: its text and, for exec channels, the exit code and stderr."""

    text: str
    exit_code: int | None = None
    stderr: str = ""


class ConnectFailure(Exception):
    """The device could not be logged into.

    Attributes:
        status: The device status it means: ``unreachable``, ``auth_failed``, ``timeout`` or ``error``.
        kind: The error kind recorded in state and manifest (e.g. ``host_key``).
        retry: Whether another attempt may help (never for an authentication failure).
    """

    def __init__(self, status: str, kind: str, message: str, *, retry: bool) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.message = message
        self.retry = retry


class CommandFailure(Exception):
    """One command failed on an open session.

    Attributes:
        kind: ``command_timeout``, ``output_too_large`` or ``dropped``.
        fatal: The session cannot be used for further commands.
    """

    def __init__(self, kind: str, message: str, *, fatal: bool) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.fatal = fatal


class Session(Protocol):
    """An open session to one device."""

    def run(self, commands: Sequence[str]) -> Iterator[tuple[str, Output | CommandFailure, float]]:
        """Run commands; yield ``(command, output or failure, seconds)`` in the given order."""
        ...

    def close(self) -> None:
        """Close the session (never raises)."""
        ...


class LiveSockets:
    """The sockets of a run's open sessions, so that an interruption closes all of them at once.

    Every session's TCP socket is registered while it is open. :meth:`close_all` shuts each down:
    a thread blocked reading from a device wakes up at once with the session dropped, and a
    session that opens afterwards is refused.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._socks: set[socket.socket] = set()
        self.closed = False

    def add(self, sock: socket.socket) -> None:
        """Register a new session's socket (it is shut down at once after :meth:`close_all`)."""
        with self._lock:
            if not self.closed:
                self._socks.add(sock)
                return
        _shutdown(sock)

    def discard(self, sock: socket.socket | None) -> None:
        """Forget a closed session's socket."""
        with self._lock:
            self._socks.discard(sock)

    def close_all(self) -> None:
        """Shut every registered socket down, and every one registered from now on."""
        with self._lock:
            self.closed = True
            socks, self._socks = list(self._socks), set()
        for sock in socks:
            _shutdown(sock)


def _shutdown(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


@dataclass(frozen=True)
class ConnectOptions:
    """Per-run connection settings.

    Attributes:
        timeout: Seconds for the whole login (TCP connect to the first prompt), and the most a
            command may stay silent.
        pace: Minimum seconds between two commands on one device (TACACS/RADIUS-backed fleets).
        default_port: SSH port when the inventory gives none.
        command_timeout: Total seconds one command may take, however much it prints.
        max_output: Most bytes one command, or one batch of commands sent together, may print.
        sessions: The run's open sockets (closed at once on an interruption), if tracked.
    """

    timeout: float = 30.0
    pace: float = 0.0
    default_port: int = 22
    command_timeout: float = DEFAULT_COMMAND_TIMEOUT
    max_output: int = DEFAULT_MAX_OUTPUT
    sessions: LiveSockets | None = field(default=None, compare=False)


class OutputTooLarge(Exception):
    """A command printed more than ``max_output`` bytes; what it printed is dropped."""


def _too_large(limit: int, fatal: bool) -> CommandFailure:
    return CommandFailure(
        "output_too_large", f"output too large: more than {_size(limit)}, cut off (--max-output)", fatal=fatal
    )


def _size(n: int) -> str:
    """A byte count for messages.

    Example:
        >>> _size(16 * 1024 * 1024), _size(1536), _size(100)
        ('16 MiB', '1.5 KiB', '100 bytes')
    """
    if n >= 1024 * 1024:
        return f"{n / 1024 / 1024:g} MiB"
    if n >= 1024:
        return f"{n / 1024:g} KiB"
    return f"{n} bytes"


class _Login:
    """The login of one session, held to ``timeout`` seconds in total.

    The session's TCP socket is opened here (so the run can close it on an interruption); a
    timer shuts it down when the login has not finished in time, which wakes whatever step the
    SSH library is blocked in (banner, key exchange, authentication, waiting for a prompt).
    """

    def __init__(self, options: ConnectOptions, where: str) -> None:
        self.options = options
        self.where = where
        self.sock: socket.socket | None = None
        self.expired = False
        self._timer = threading.Timer(options.timeout, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def open(self, host: str, port: int, timeout: float | None) -> socket.socket:
        """Connect the TCP socket of the session (paramiko's ``sock``)."""
        if self.options.sessions is not None and self.options.sessions.closed:
            raise ConnectFailure("error", "interrupted", "collection interrupted", retry=False)
        sock = socket.create_connection((host, port), timeout=timeout or self.options.timeout)
        self.sock = sock
        if self.options.sessions is not None:
            self.options.sessions.add(sock)
        if self.expired:
            _shutdown(sock)
        return sock

    def _expire(self) -> None:
        self.expired = True
        if self.sock is not None:
            _shutdown(self.sock)

    def done(self) -> None:
        """The login finished (or failed): stop the timer."""
        self._timer.cancel()

    def failure(self, exc: BaseException) -> ConnectFailure:
        """The failure a login exception means (a timeout when the timer cut it)."""
        self.done()
        self.release()
        if self.options.sessions is not None and self.options.sessions.closed:
            return ConnectFailure("error", "interrupted", "collection interrupted", retry=False)
        if self.expired:
            said = " ".join(str(e) for e in exception_chain(exc)).lower()
            step = " (no SSH banner)" if "banner" in said else ""
            return ConnectFailure(
                "timeout", "timeout",
                f"login to {self.where} not finished within {self.options.timeout:g} s{step}", retry=True,
            )  # fmt: skip
        if isinstance(exc, ConnectFailure):
            return exc
        return classify_connect_error(exc, self.where, self.options.timeout)

    def release(self) -> None:
        """Forget the socket (the session is closed)."""
        if self.options.sessions is not None:
            self.options.sessions.discard(self.sock)


def redact(text: str, *secrets: str | None) -> str:
    """Replace every secret (of 3+ characters) in a text with ``********``.

    Example:
        >>> redact("login as admin with s3cret failed", "s3cret", None)
        'login as admin with ******** failed'
    """
    for secret in secrets:
        if secret and len(secret) >= 3:
            text = text.replace(secret, "********")
    return text


def strip_echo(text: str, prompt: str, command: str) -> str:
    r"""Drop a leading ``prompt + command`` echo line that netmiko left in place.

    Some CLIs redraw the prompt with the typed line (line editors, EOS when it falls behind), so
    the echo netmiko strips is not always the first line; the evidence must start at the output.

    Example:
        >>> strip_echo("admin@sonic:~$ show version\nSONiC Software Version: x", "admin@sonic:~", "show version")
        'SONiC Software Version: x'
        >>> strip_echo("Version: x", "leaf1", "show version")
        'Version: x'
    """
    first, _sep, rest = text.partition("\n")
    line = first.strip()
    if prompt and line.startswith(prompt) and line.endswith(command):
        return rest
    return text


def script(commands: Sequence[str], marker: str) -> str:
    """One shell script running the commands in order, each followed by an end marker.

    The marker goes to stdout with the command's exit status and to stderr alone, so both streams
    can be cut back per command. Only allow-listed commands and ``echo`` are in it.

    Example:
        >>> script(["lsmod", "ibv_devinfo"], "__M")
        'lsmod; echo __M $?; echo __M >&2; ibv_devinfo; echo __M $?; echo __M >&2'
    """
    return "; ".join(f"{cmd}; echo {marker} $?; echo {marker} >&2" for cmd in commands)


def split_script_output(
    whole: Output, marker: str, count: int, failure: CommandFailure | None = None
) -> list[Output | CommandFailure]:
    r"""Cut a script's output back into one :class:`Output` per command.

    A command whose end marker never came was cut short (``failure``: the session dropped or went
    silent; by default a drop): it and every later one get that failure.

    Example:
        >>> whole = Output("a\n__M 0\nno newline__M 127\n", 0, "__M\nbash: x: command not found\n__M\n")
        >>> split_script_output(whole, "__M", 2)
        [Output(text='a\n', exit_code=0, stderr=''), Output(text='no newline', exit_code=127, stderr='bash: x: command not found\n')]
    """
    parts = _split_marked(whole.text, f"{marker} ")
    errs = whole.stderr.split(f"{marker}\n")
    out: list[Output | CommandFailure] = []
    for i in range(count):
        if i >= len(parts):
            out.append(
                failure
                or CommandFailure("dropped", "session dropped before the command finished", fatal=True)
            )
            continue
        text, code = parts[i]
        out.append(Output(text, code, errs[i] if i < len(errs) else ""))
    return out


def _split_marked(text: str, head: str) -> list[tuple[str, int]]:
    r"""Cut text at lines ``head + exit status``: each piece before one, with that status.

    A marker is a line of its own in the text or ends a last line without a newline. A marker-like
    line whose status is not a number is output, not a marker. (A fixed-string scan: the marker is
    new for every script, and a regex compiled per script cost more than the split itself.)

    Example:
        >>> _split_marked("a\nM 0\nb" + "M 1\n" + "rest" + "M x\n", "M ")
        [('a\n', 0), ('b', 1)]
    """
    pieces: list[tuple[str, int]] = []
    start = pos = 0
    while True:
        at = text.find(head, pos)
        if at < 0:
            return pieces
        end = text.find("\n", at)
        if end < 0:
            return pieces
        status = text[at + len(head) : end]
        digits = status[1:] if status.startswith("-") else status
        if digits.isascii() and digits.isdigit():
            pieces.append((text[start:at], int(status)))
            start = pos = end + 1
        else:
            pos = at + 1


def shell_line(commands: Sequence[str], marker: str) -> str:
    """One interactive shell line running the commands, framed by markers the echo cannot fake.

    Example:
        >>> shell_line(["show version"], "__M")
        'echo __M""_BEGIN; show version; echo __M""_END $?; echo __M""_DONE'
    """
    quoted = f'{marker}""'
    parts = [
        f"echo {quoted}_BEGIN",
        *(f"{cmd}; echo {quoted}_END $?" for cmd in commands),
        f"echo {quoted}_DONE",
    ]
    return "; ".join(parts)


def split_shell_output(
    text: str, marker: str, count: int, failure: CommandFailure | None = None
) -> list[Output | CommandFailure]:
    r"""Cut what an interactive shell printed for :func:`shell_line` back into one output per command.

    Everything before the ``BEGIN`` marker (the echoed line, a prompt) is dropped; a command
    without its ``END`` marker gets ``failure`` (by default a drop).

    Example:
        >>> split_shell_output('p$ echo __M""_BEGIN; ...\n__M_BEGIN\nv1\n__M_END 0\n__M_DONE\np$ ', "__M", 1)
        [Output(text='v1\n', exit_code=0, stderr='')]
    """
    begin = text.find(f"{marker}_BEGIN\n")
    body = text[begin + len(marker) + 7 :] if begin >= 0 else ""
    parts = _split_marked(body, f"{marker}_END ")
    out: list[Output | CommandFailure] = []
    for i in range(count):
        if i < len(parts):
            out.append(Output(*parts[i]))
        else:
            out.append(failure or CommandFailure("dropped", "no end marker in the output", fatal=True))
    return out


def exception_chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and every exception it was raised from or during, outermost first, each once."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        yield cur
        cur = cur.__cause__ or cur.__context__


def classify_connect_error(exc: BaseException, where: str, timeout: float) -> ConnectFailure:
    """Map a library's connect exception (netmiko wraps paramiko's) to a :class:`ConnectFailure`.

    Example:
        >>> f = classify_connect_error(ConnectionRefusedError(111, "refused"), "10.0.0.1:22", 5)
        >>> f.status, f.retry, f.message
        ('unreachable', True, 'connection refused by 10.0.0.1:22')
    """
    chain = list(exception_chain(exc))
    for e in chain:
        if isinstance(e, paramiko.AuthenticationException) and "timeout" in str(e).lower():
            # paramiko's "Authentication timeout.": the device did not answer, it did not refuse.
            return ConnectFailure(
                "timeout",
                "timeout",
                f"no authentication answer from {where} within {timeout:g} s",
                retry=True,
            )
        if isinstance(e, paramiko.AuthenticationException):
            return ConnectFailure(
                "auth_failed", "auth_failed", f"authentication failed at {where} (not retried)", retry=False
            )
        if isinstance(e, paramiko.BadHostKeyException):
            return ConnectFailure(
                "error",
                "host_key",
                f"host key of {where} changed since it was recorded in known_hosts: refused "
                "(remove the old entry if the change is expected)",
                retry=False,
            )
        if isinstance(e, HostKeyRefused):
            return ConnectFailure("error", "host_key", f"{e} at {where}", retry=False)
    # paramiko folds per-address socket errors into one; look at those instead.
    chain = [
        inner
        for e in chain
        for inner in (
            list(e.errors.values()) if isinstance(e, paramiko.ssh_exception.NoValidConnectionsError) else [e]
        )
    ]
    for e in chain:
        text = str(e)
        # "No existing session": paramiko gave up on the handshake (no banner) before auth.
        if isinstance(e, paramiko.SSHException) and (
            "banner" in text.lower() or "No existing session" in text
        ):
            return ConnectFailure(
                "timeout", "timeout", f"no SSH banner/handshake from {where} within {timeout:g} s", retry=True
            )
        if isinstance(e, ConnectionRefusedError):
            return ConnectFailure("unreachable", "unreachable", f"connection refused by {where}", retry=True)
        if isinstance(e, (socket.timeout, TimeoutError)):
            return ConnectFailure(
                "unreachable", "unreachable", f"no TCP answer from {where} within {timeout:g} s", retry=True
            )
        if isinstance(e, socket.gaierror):
            return ConnectFailure("unreachable", "unreachable", f"cannot resolve {where}", retry=False)
        if isinstance(e, OSError) and not isinstance(e, EOFError):
            reason = e.strerror or type(e).__name__
            return ConnectFailure(
                "unreachable", "unreachable", f"cannot connect to {where}: {reason}", retry=True
            )
    name = type(chain[-1]).__name__
    first = str(chain[-1]).strip().splitlines()[0] if str(chain[-1]).strip() else name
    if name in ("NetmikoTimeoutException", "ReadTimeout"):
        return ConnectFailure("timeout", "timeout", f"no CLI prompt from {where}: {first[:120]}", retry=True)
    return ConnectFailure(
        "error", "connect", f"SSH session to {where} failed: {name}: {first[:120]}", retry=True
    )


#: Ciphers tried first: AES-GCM is an AEAD cipher, so a packet needs no separate HMAC, which
#: paramiko computes and compares per packet in Python (about a third of its CPU per byte read).
#: Every other cipher paramiko knows stays on the list, after these, for devices without GCM.
AEAD_FIRST = ("aes128-gcm@openssh.com", "aes256-gcm@openssh.com")


def _transport(sock: Any, **kwargs: Any) -> paramiko.Transport:
    """A paramiko transport that prefers the AEAD ciphers (both OpenSSH and asyncssh offer them)."""
    transport = paramiko.Transport(sock, **kwargs)
    options = transport.get_security_options()
    known = tuple(options.ciphers)
    options.ciphers = tuple(c for c in AEAD_FIRST if c in known) + tuple(
        c for c in known if c not in AEAD_FIRST
    )
    return transport


class SSHClient(paramiko.SSHClient):  # type: ignore[misc]
    """paramiko's client, connecting with :func:`_transport` (for exec sessions and netmiko alike)."""

    #: The session's login (it opens the TCP socket), when fabline opened the session.
    fabline_login: _Login | None = None

    def connect(self, *args: Any, **kwargs: Any) -> None:
        """:meth:`paramiko.SSHClient.connect`, with the AEAD-first transport unless one is given.

        With a :class:`_Login` attached, the TCP socket is the login's (so its deadline and an
        interruption can close it).
        """
        kwargs.setdefault("transport_factory", _transport)
        if self.fabline_login is not None and kwargs.get("sock") is None:
            host = kwargs["hostname"] if "hostname" in kwargs else args[0]
            port = kwargs.get("port", args[1] if len(args) > 1 else 22)
            kwargs["sock"] = self.fabline_login.open(host, port, kwargs.get("timeout"))
        super().connect(*args, **kwargs)


def _auth_kwargs(device: Device) -> dict[str, Any]:
    """Paramiko connect arguments for the device's credentials (keys, agent, password)."""
    return {
        "username": device.user or "admin",
        "password": device.password,
        "key_filename": device.key_file,
        # The agent and ~/.ssh keys are tried only when the inventory names no password or key, so a
        # wrong key never costs a failed login on a device with password authentication.
        "allow_agent": device.password is None and device.key_file is None,
        "look_for_keys": device.password is None and device.key_file is None,
    }


# ---------------------------------------------------------------------------------------------
# exec channels (Linux hosts)


class ExecSession:
    """A paramiko connection running the commands as scripts on exec channels."""

    def __init__(self, device: Device, store: HostKeyStore, options: ConnectOptions) -> None:
        self.device = device
        self.options = options
        port = device.port or options.default_port
        self.where = f"{device.host}:{port}"
        client = SSHClient()
        store.prepare(client, device.host, port)
        self._login = client.fabline_login = _Login(options, self.where)
        try:
            client.connect(
                device.host,
                port=port,
                timeout=options.timeout,
                # The login deadline (_Login) ends the login; the library's own step timeouts
                # are only a backstop behind it.
                banner_timeout=options.timeout + 1,
                auth_timeout=options.timeout + 1,
                **_auth_kwargs(device),
            )
        except Exception as exc:
            client.close()
            raise self._login.failure(exc) from None
        self._login.done()
        self.client = client

    def run(self, commands: Sequence[str]) -> Iterator[tuple[str, Output | CommandFailure, float]]:
        """Run commands as scripts on parallel exec channels (one command per channel when pacing).

        Up to :data:`EXEC_CHANNELS` channels are in flight, each running a script of up to
        :data:`EXEC_SCRIPT_COMMANDS` commands separated by end markers that carry each command's exit
        status; results are split back per command, in order.
        """
        if self.options.pace > 0:
            for i, cmd in enumerate(commands):
                if i:
                    time.sleep(self.options.pace)
                yield from self._scripts([[cmd]])
            return
        size = EXEC_SCRIPT_COMMANDS
        groups = [list(commands[i : i + size]) for i in range(0, len(commands), size)]
        for i in range(0, len(groups), EXEC_CHANNELS):
            yield from self._scripts(groups[i : i + EXEC_CHANNELS])

    def _scripts(self, groups: list[list[str]]) -> Iterator[tuple[str, Output | CommandFailure, float]]:
        transport = self.client.get_transport()
        started = time.monotonic()
        marker = f"__FABLINE_{secrets.token_hex(6)}_END"
        channels: list[paramiko.Channel | CommandFailure] = []
        for group in groups:
            try:
                if transport is None or not transport.is_active():
                    raise EOFError("transport closed")
                chan = transport.open_session(timeout=self.options.timeout)
                chan.settimeout(self.options.timeout)
                chan.exec_command(group[0] if len(group) == 1 else script(group, marker))
                channels.append(chan)
            except (paramiko.SSHException, OSError, EOFError):
                channels.append(CommandFailure("dropped", "session closed by the device", fatal=True))
        for group, chan in zip(groups, channels, strict=True):
            if isinstance(chan, CommandFailure):
                for cmd in group:
                    yield cmd, chan, 0.0
                continue
            whole, failure = self._collect(chan, marker if len(group) > 1 else None)
            seconds = time.monotonic() - started
            if len(group) == 1:
                yield group[0], failure or whole, seconds
                continue
            outputs = split_script_output(whole, marker, len(group), failure)
            for cmd, out in zip(group, outputs, strict=True):
                yield cmd, out, seconds

    def _collect(self, chan: paramiko.Channel, marker: str | None) -> tuple[Output, CommandFailure | None]:
        """Read a channel to its end: the output (partial when cut short) and the failure, if any.

        Bounded three ways: ``timeout`` seconds without a byte, ``command_timeout`` seconds for
        each command (the clock restarts at each command's end marker when the channel runs a
        script), and ``max_output`` bytes for the channel in all. A channel cut short is closed,
        which stops the command on the device.
        """
        limit, step = self.options.max_output, self.options.command_timeout
        out: list[bytes] = []
        err: list[bytes] = []
        failure: CommandFailure | None = None
        code: int | None = None
        size = 0
        mark = marker.encode() if marker else None
        tail = b""
        deadline = time.monotonic() + step
        try:
            for read, sink in ((chan.recv, out), (chan.recv_stderr, err)):
                while True:
                    chan.settimeout(self._wait(deadline))
                    data = read(65536)
                    if not data:
                        break
                    size += len(data)
                    if size > limit:
                        raise OutputTooLarge
                    sink.append(data)
                    if mark is not None and sink is out:
                        seen = tail + data
                        if mark in seen:
                            deadline = time.monotonic() + step
                        tail = seen[-len(mark) :]
            # The exit status may follow the end of the streams; the channel closing without
            # one gives -1 (the session went away mid-command).
            if not chan.status_event.wait(self._wait(deadline)):
                raise TimeoutError
            code = chan.recv_exit_status()
            if code == -1:
                failure = CommandFailure("dropped", "session dropped before the command finished", fatal=True)
        except TimeoutError:
            if time.monotonic() >= deadline:
                message = f"not finished within {step:g} s (--command-timeout)"
            else:
                message = f"no complete answer within {self.options.timeout:g} s"
            failure = CommandFailure("command_timeout", message, fatal=False)
        except OutputTooLarge:
            failure = _too_large(limit, fatal=False)
        except (paramiko.SSHException, OSError, EOFError):
            failure = CommandFailure("dropped", "session dropped before the command finished", fatal=True)
        finally:
            chan.close()
        text = b"".join(out).decode("utf-8", errors="replace")
        return Output(text, code, b"".join(err).decode("utf-8", errors="replace")), failure

    def _wait(self, deadline: float) -> float:
        """Seconds to wait for the next bytes: the silence bound, or less near the deadline."""
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        return min(self.options.timeout, left)

    def close(self) -> None:
        """Close the connection."""
        with contextlib.suppress(Exception):
            self.client.close()
        self._login.release()


# ---------------------------------------------------------------------------------------------
# netmiko CLI sessions (switches)

_NETMIKO_CLASSES: dict[str, type[Any]] = {}


def normalize_crlf(text: str) -> str | None:
    r"""The line-feed normalisation of netmiko (to ``\n``) for text whose every CR starts a CRLF; else None.

    netmiko turns ``\r\r\r\n``, ``\r\r\n``, ``\r\n`` and ``\n\r`` into ``\n`` with one regex
    pass (NX-OS: ``\r\r\n\r``, ``\r\r\n``, ``\r\n``), then every CR left into ``\n``. When each CR
    is followed by a LF, no pattern with two CRs can match, and each match (``\r\n`` or
    ``\n\r\n``'s ``\n\r``) holds exactly one LF, as every LF left alone does: both give the text
    with its CRs removed, which is what replacing CRLF gives. Any other CR (a bare one, a
    repainted line) returns None: the caller runs netmiko's own regex.

    Example:
        >>> normalize_crlf("a\r\n\r\nb\r\n"), normalize_crlf("no cr"), normalize_crlf("x\ry\r\n")
        ('a\n\nb\n', 'no cr', None)
    """
    if "\r" not in text:
        return text
    fast = text.replace("\r\n", "\n")
    return None if "\r" in fast else fast


def _plain_linefeeds(base: type[Any]) -> bool:
    """Whether a netmiko class normalises line feeds as netmiko's base class or its NX-OS class do."""
    from netmiko.base_connection import BaseConnection
    from netmiko.cisco.cisco_nxos import CiscoNxosBase

    own = base.normalize_linefeeds
    return own is BaseConnection.normalize_linefeeds or own is CiscoNxosBase.normalize_linefeeds


def _find_prompt_kept(base: type[Any]) -> Callable[..., str]:
    """The ``find_prompt`` of a netmiko class, also keeping the prompt it found (``_fabline_prompt``)."""

    def find_prompt(self: Any, *args: Any, **kwargs: Any) -> str:
        prompt = str(base.find_prompt(self, *args, **kwargs))
        self._fabline_prompt = prompt
        return prompt

    return find_prompt


def _netmiko_class(device_type: str) -> type[Any]:
    """Netmiko's driver class for a device type, with fabline's host-key policy plugged in."""
    cls = _NETMIKO_CLASSES.get(device_type)
    if cls is None:
        from netmiko.ssh_dispatcher import CLASS_MAPPER

        base: Any = CLASS_MAPPER[device_type]

        def _build_ssh_client(self: Any) -> paramiko.SSHClient:
            client = SSHClient()
            self._fabline_store.prepare(client, self.host, self.port)
            client.fabline_login = self._fabline_login
            return client

        def read_channel(self: Any) -> str:
            # netmiko polls a closed channel until its read timeout; a session the device dropped
            # should fail at once as 'dropped', not as a timeout.
            out = str(base.read_channel(self))
            budget = self._fabline_budget
            if budget is not None:
                # netmiko keeps everything a command prints: stop reading past the byte cap.
                budget[0] -= len(out)
                if budget[0] < 0:
                    raise OutputTooLarge
            chan = getattr(self, "remote_conn", None)
            if (
                not out
                and chan is not None
                and (getattr(chan, "closed", False) or getattr(chan, "eof_received", False))
            ):
                raise EOFError("session closed by the device")
            return out

        def strip_ansi_escape_codes(self: Any, string_buffer: str) -> str:
            # Every code netmiko strips starts with ESC: most reads have none, and its ~35 regex
            # passes over each chunk read were a measurable share of a collection's CPU.
            if "\x1b" not in string_buffer:
                return string_buffer
            return str(base.strip_ansi_escape_codes(self, string_buffer))

        def normalize_linefeeds(self: Any, a_string: str) -> str:
            # netmiko runs a regex alternation over every chunk read (a quarter of a switch
            # session's CPU on megabytes of JSON); text whose only CRs end lines (CRLF) gives
            # the same as a plain replace: see normalize_crlf.
            if self.RESPONSE_RETURN == "\n":
                fast = normalize_crlf(a_string)
                if fast is not None:
                    return fast
            return str(base.normalize_linefeeds(self, a_string))

        members: dict[str, Any] = {
            "_build_ssh_client": _build_ssh_client,
            "read_channel": read_channel,
            "strip_ansi_escape_codes": strip_ansi_escape_codes,
            "find_prompt": _find_prompt_kept(base),
        }
        if _plain_linefeeds(base):
            members["normalize_linefeeds"] = normalize_linefeeds
        cls = type(f"Fabline{base.__name__}", (base,), members)
        _NETMIKO_CLASSES[device_type] = cls
    return cls


class NetmikoSession:
    """A netmiko CLI session; commands run one after another."""

    def __init__(
        self,
        device: Device,
        device_type: str,
        store: HostKeyStore,
        options: ConnectOptions,
        scripts: bool = False,
    ) -> None:
        from netmiko.exceptions import ReadTimeout

        self._read_timeout = ReadTimeout
        self.scripts = scripts
        self.device = device
        self.options = options
        port = device.port or options.default_port
        self.where = f"{device.host}:{port}"
        auth = _auth_kwargs(device)
        conn = _netmiko_class(device_type)(
            host=device.host,
            port=port,
            username=auth["username"],
            password=device.password or "",
            key_file=device.key_file,
            use_keys=auth["look_for_keys"] or device.key_file is not None,
            allow_agent=auth["allow_agent"],
            conn_timeout=options.timeout,
            # The login deadline (_Login) ends the login; these are only a backstop behind it.
            auth_timeout=options.timeout + 1,
            banner_timeout=options.timeout + 1,
            read_timeout_override=None,
            fast_cli=True,
            auto_connect=False,
        )
        conn._fabline_store = store
        conn._fabline_budget = None
        self._login = conn._fabline_login = _Login(options, self.where)
        self._broken = False
        try:
            conn._open()
        except Exception as exc:
            with contextlib.suppress(Exception):
                conn.paramiko_cleanup()
            raise self._login.failure(exc) from None
        self._login.done()
        self.conn = conn

    def run(self, commands: Sequence[str]) -> Iterator[tuple[str, Output | CommandFailure, float]]:
        """Run commands on the CLI session: as shell scripts on a POSIX shell, else one by one."""
        if self.scripts and self.options.pace <= 0 and len(commands) > 1:
            for i in range(0, len(commands), SCRIPT_COMMANDS):
                yield from self._script(commands[i : i + SCRIPT_COMMANDS])
            return
        for i, cmd in enumerate(commands):
            if i and self.options.pace > 0:
                time.sleep(self.options.pace)
            started = time.monotonic()
            # netmiko's read timeout is a total: the command deadline, never more than --timeout
            # (netmiko cannot tell a silent device from a slow one).
            wait = min(self.options.timeout, self.options.command_timeout)
            self.conn._fabline_budget = [self.options.max_output]
            failure: CommandFailure | None = None
            try:
                text = self.conn.send_command(cmd, read_timeout=wait, **self._prompt_kwargs())
            except self._read_timeout:
                failure = CommandFailure(
                    "command_timeout", f"no prompt after the command within {wait:g} s", fatal=True
                )
            except OutputTooLarge:
                failure = _too_large(self.options.max_output, fatal=True)
            except (OSError, EOFError, paramiko.SSHException):
                failure = CommandFailure("dropped", "session dropped before the command finished", fatal=True)
            finally:
                self.conn._fabline_budget = None
            if failure is not None:
                self._broken = True
                yield cmd, failure, time.monotonic() - started
                continue
            text = strip_echo(str(text), str(self.conn.base_prompt), cmd)
            yield cmd, Output(text), time.monotonic() - started

    def _prompt_kwargs(self) -> dict[str, Any]:
        """How ``send_command`` finds the end of an answer: the prompt found at login.

        netmiko's default looks for the prompt again before every command (an extra round trip,
        a typed newline, and its buffer-clearing sleeps: most of an EOS or NX-OS command's time).
        A read-only session never changes its prompt (no configuration mode, no ``enable``), so
        the one netmiko found at login is searched for instead, with the same pattern netmiko
        would build from it. Without one (a class that never looked), netmiko's default.
        """
        prompt = getattr(self.conn, "_fabline_prompt", None)
        if not prompt:
            return {}
        return {"expect_string": re.escape(prompt.strip()), "auto_find_prompt": False}

    def _script(self, group: Sequence[str]) -> Iterator[tuple[str, Output | CommandFailure, float]]:
        """Run commands as one line on the device's shell, cut back per command by end markers.

        In the script the markers are written ``X""_END`` so the shell's echo of the line never
        looks like the output ``X_END`` (the quotes vanish when the shell runs ``echo``). The
        session is read directly, so output that came before a drop or a timeout is kept.
        """
        started = time.monotonic()
        marker = f"__FABLINE_{secrets.token_hex(6)}"
        line = shell_line(group, marker)
        done_line, prompt = f"{marker}_DONE\n", str(self.conn.base_prompt)
        end_tag = f"{marker}_END "
        step = self.options.command_timeout
        # Each command has command_timeout seconds from the end of the one before it, and the
        # device may stay silent at most --timeout seconds.
        deadline = heard = started
        deadline += step
        buf = ""
        seen = 0  # where the search for the DONE line resumes: a long output is scanned once
        ends = 0  # where the search for the next END marker resumes
        failure: CommandFailure | None = None
        self.conn._fabline_budget = [self.options.max_output]
        try:
            self.conn.write_channel(line + self.conn.RETURN)
            while True:
                chunk = str(self.conn.read_channel())
                now = time.monotonic()
                buf += chunk.replace("\r\n", "\n")
                if chunk:
                    heard = now
                    while (at_end := buf.find(end_tag, ends)) >= 0:
                        ends, deadline = at_end + len(end_tag), now + step
                    ends = max(ends, len(buf) - len(end_tag))
                at = buf.find(done_line, seen)
                if at >= 0 and buf.find(prompt, at + len(done_line)) >= 0:
                    break
                seen = max(seen, len(buf) - len(done_line)) if at < 0 else at
                if now > deadline:
                    msg = f"not finished within {step:g} s (--command-timeout)"
                    failure = CommandFailure("command_timeout", msg, fatal=True)
                    break
                if now - heard > self.options.timeout:
                    msg = f"no complete answer within {self.options.timeout:g} s"
                    failure = CommandFailure("command_timeout", msg, fatal=True)
                    break
                if not chunk:
                    self._wait_for_data()
        except OutputTooLarge:
            failure = _too_large(self.options.max_output, fatal=True)
        except (OSError, EOFError, paramiko.SSHException):
            failure = CommandFailure("dropped", "session dropped before the command finished", fatal=True)
        finally:
            self.conn._fabline_budget = None
        if failure is not None:
            self._broken = True
        seconds = time.monotonic() - started
        for cmd, out in zip(group, split_shell_output(buf, marker, len(group), failure), strict=True):
            yield cmd, out, seconds

    def _wait_for_data(self, most: float = 0.05) -> None:
        """Wait until the session has bytes to read (or closes), at most ``most`` seconds.

        A paramiko channel can be waited on like a socket: no polling every few milliseconds,
        which cost each waiting session 200 wake-ups a second (and the interpreter lock to each).
        A session without a paramiko channel sleeps a little instead.
        """
        chan = getattr(self.conn, "remote_conn", None)
        if isinstance(chan, paramiko.Channel):
            with contextlib.suppress(OSError, ValueError):
                select.select([chan], [], [], most)
                return
        time.sleep(0.005)

    def close(self) -> None:
        """Log out (never raises); a broken session is just closed, not logged out of."""
        with contextlib.suppress(Exception):
            if self._broken:
                self.conn.paramiko_cleanup()
            else:
                self.conn.disconnect()
        self._login.release()
