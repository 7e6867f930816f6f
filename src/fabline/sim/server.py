"""The simulator: every device of a fabric served over real SSH (asyncssh) from one process.

Each device listens on its own loopback address (``127.10.x.y``, any 127/8 address binds without
root) on one port, with its own host key. With ``eapi_port``, every Arista EOS device (and every
``napalm`` device, simulated as EOS) also serves eAPI (HTTPS JSON-RPC, :mod:`fabline.sim.eapi`)
on that port of its address. A background thread runs one asyncio loop for all of them;
:func:`run_simulator` starts it and stops it cleanly (no thread or socket left behind, so the
next start on the same addresses works).
"""

from __future__ import annotations

import asyncio
import random
import re
import socket
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import asyncssh

from fabline import synthetic
from fabline.platforms import get_platform
from fabline.sim.device import SimDevice
from fabline.sim.dialects import Dialect, Session, dialect
from fabline.sim.eapi import EapiHandler, EapiTls, make_tls
from fabline.sim.faults import RisingCounter, TransportFault
from fabline.sim.render import render
from fabline.sim.render.common import Answer, split_words
from fabline.sim.shell import SessionDrop

__all__ = ["Simulator", "TransportFault", "run_simulator"]

AnyFault = synthetic.Fault | TransportFault | RisingCounter

#: Key exchange methods every device offers: OpenSSH 9.2's defaults (Debian 12, the base of SONiC
#: and Cumulus Linux 5.x; EOS and NX-OS offer a subset) that asyncssh has, without the
#: post-quantum hybrids OpenSSH only added later (sntrup761 in 9.0, ML-KEM in 9.9). The client's
#: order picks the method; with the hybrids offered paramiko picks mlkem768x25519, which costs
#: each side more per login than curve25519 for no realism a switch would show.
KEX_ALGS = (
    "curve25519-sha256",
    "curve25519-sha256@libssh.org",
    "ecdh-sha2-nistp256",
    "ecdh-sha2-nistp384",
    "ecdh-sha2-nistp521",
    "diffie-hellman-group-exchange-sha256",
    "diffie-hellman-group16-sha512",
    "diffie-hellman-group18-sha512",
    "diffie-hellman-group14-sha256",
)

# What a terminal echoes and adds to the input line as typed: anything but control characters (tab
# is typed text, DEL is backspace).
_TYPED = re.compile(r"[^\x00-\x08\x0a-\x1f\x7f]+")


def address_of(base: str, index: int) -> str:
    """The loopback address of the ``index``-th device (the layout of ``synthetic.inventory``).

    Example:
        >>> address_of("127.10", 0), address_of("127.10", 251)
        ('127.10.0.1', '127.10.1.2')
    """
    return f"{base}.{index // 250}.{index % 250 + 1}"


def _garbage(seed: str, size: int = 600) -> str:
    rnd = random.Random(seed)
    chunk = bytes(rnd.randrange(256) for _ in range(size))
    # Binary bytes (NULs and control codes among them) as a terminal passes them through.
    return chunk.decode("latin-1").replace("\r", "\x00") + "\n"


async def _keep_config() -> None:
    return None


# SSH_MSG_IGNORE (RFC 4253) with an empty string: what asyncssh sends before every packet once
# encryption is on (a countermeasure against chosen-plaintext attacks on CBC ciphers).
_MSG_IGNORE = 2
_EMPTY = (b"\0\0\0\0",)


def _without_ignore(send: Callable[..., None]) -> Callable[..., None]:
    """A connection's ``send_packet`` that leaves out asyncssh's empty SSH_MSG_IGNORE packets.

    OpenSSH and the network OSes do not send them; here they doubled the packets of every session,
    and the client pays for each (paramiko decrypts and checks every packet in Python). asyncssh
    calls ``self.send_packet`` for them, so the per-connection replacement sees them.
    """

    def send_packet(pkttype: int, *args: bytes, **kwargs: Any) -> None:
        if pkttype == _MSG_IGNORE and args == _EMPTY:
            return
        send(pkttype, *args, **kwargs)

    return send_packet


class _Server(asyncssh.SSHServer):
    def __init__(self, sim: Simulator, dev: SimDevice) -> None:
        self.sim = sim
        self.dev = dev

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        self.conn = conn
        self.sim._connections.add(conn)
        self.dev.sessions += 1
        # asyncssh builds the server options again at each login, in a worker thread, to apply
        # sshd_config Match blocks for the user and client address. The simulator has no config,
        # so that gives the options the connection already has; skip the rebuild and the thread.
        conn.reload_config = _keep_config  # type: ignore[method-assign]
        conn.send_packet = _without_ignore(conn.send_packet)  # type: ignore[method-assign]

    def connection_lost(self, exc: Exception | None) -> None:
        self.sim._connections.discard(self.conn)

    def begin_auth(self, username: str) -> bool:
        return True

    def password_auth_supported(self) -> bool:
        return True

    def validate_password(self, username: str, password: str) -> Any:
        if self.dev.transport_fault("auth_failure"):
            return False
        ok = username == self.sim.username and password == self.sim.password
        slow = self.dev.transport_fault("slow_login")
        if (
            slow is not None and get_platform(self.dev.platform).transport == "exec"
        ):  # an exec session's login
            return _later(ok, slow.seconds)  # asyncssh awaits a coroutine answer
        return ok

    def public_key_auth_supported(self) -> bool:
        return bool(self.sim._authorized)

    def validate_public_key(self, username: str, key: asyncssh.SSHKey) -> bool:
        if self.dev.transport_fault("auth_failure") or username != self.sim.username:
            return False
        return key.public_data in self.sim._authorized


async def _later(answer: bool, seconds: float) -> bool:
    await asyncio.sleep(seconds)
    return answer


#: What a runaway command prints: an ``ethtool -S``-like counter line, over and over.
_STREAM_LINE = "     rx_prio3_pause_duration: 18446744073709551615\n"


class Simulator:
    """A running simulated fabric.

    Attributes:
        addresses: Device name -> (loopback address, port) of its SSH listener.
        username: The login every device accepts.
        password: Its password.
        devices: Device name -> :class:`~fabline.sim.device.SimDevice`.
        eapi_port: TCP port of the EOS devices' eAPI listeners (None: no eAPI).
        eapi_addresses: EOS device name -> (loopback address, port) of its eAPI listener.
        eapi_tls: The eAPI certificates (CA, server, rogue), generated at start; None before.
    """

    def __init__(
        self,
        fabric: synthetic.Fabric,
        faults: Sequence[AnyFault] = (),
        *,
        username: str = "admin",
        password: str = "admin",
        address_base: str = "127.10",
        port: int = 2222,
        host_key_dir: Path | None = None,
        authorized_keys: Sequence[str | Path] = (),
        eapi_port: int | None = None,
        writable: bool = False,
    ) -> None:
        self.fabric = fabric
        self.eapi_port = eapi_port
        self.eapi_tls: EapiTls | None = None
        self.username = username
        self.password = password
        self.address_base = address_base
        self.port = port
        self.host_key_dir = host_key_dir
        names = {d.name for d in fabric.devices}
        for f in faults:
            if f.device not in names:
                raise ValueError(f"fault on unknown device {f.device!r}")
        links: dict[str, list[tuple[str, str, str, str]]] = {}
        for link in fabric.links:
            links.setdefault(link[0], []).append(link)
            if link[2] != link[0]:
                links.setdefault(link[2], []).append(link)
        self.devices: dict[str, SimDevice] = {}
        plan = synthetic.bgp_plan(fabric)
        for i, spec in enumerate(fabric.devices):
            dev = SimDevice(
                spec,
                address_of(address_base, i),
                port,
                links.get(spec.name, []),
                writable=writable,
                bgp=plan.get(spec.name),
            )
            self.devices[spec.name] = dev
        for f in faults:
            dev = self.devices[f.device]
            if isinstance(f, TransportFault):
                dev.transport.append(f)
            elif isinstance(f, RisingCounter):
                dev.rising.append(f)
            else:
                dev.faults.append(f)
        self.addresses: dict[str, tuple[str, int]] = {n: (d.address, d.port) for n, d in self.devices.items()}
        self.eapi_addresses: dict[str, tuple[str, int]] = (
            {n: (d.address, eapi_port) for n, d in self.devices.items() if _serves_eapi(d.platform)}
            if eapi_port is not None
            else {}
        )
        self._authorized = {self._public_data(k) for k in authorized_keys}
        self._keys: dict[str, asyncssh.SSHKey] = {}
        self._dialects: dict[str, Dialect] = {}
        self._connections: set[asyncssh.SSHServerConnection] = set()
        self._servers: list[Any] = []
        self._silent: set[asyncio.StreamWriter] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    # -- public API -------------------------------------------------------------------------

    def inventory(
        self, *, password_env: str | None = None, eapi_ca_file: str | Path | None = None
    ) -> dict[str, Any]:
        """An Ansible YAML inventory (as a dict) that reaches every simulated device.

        Like :func:`fabline.synthetic.inventory` (groups ``spine``/``leaf`` under ``fabric``,
        ``gpu_hosts``; ``fabline_platform``, ``fabline_role``, ``rail``, ``plane``,
        ``rail_interfaces``) plus ``ansible_port`` and ``ansible_user``. The password is never
        written; with ``password_env`` the inventory looks it up from that environment variable.
        With ``eapi_ca_file`` (where the caller wrote :attr:`EapiTls.ca_pem`), the EOS devices are
        reached over eAPI: ``ansible_connection: ansible.netcommon.httpapi``,
        ``ansible_httpapi_port`` and ``fabline_eapi_ca_file``. Devices of the ``napalm`` platform
        (simulated as EOS switches) get ``napalm_driver: eos`` and the same eAPI settings (their
        certificate pinned by fingerprint when no CA file is given).
        """
        inv = synthetic.inventory(self.fabric, address_base=self.address_base)
        stack = [inv["all"]]
        while stack:
            group = stack.pop()
            for name, hv in group.get("hosts", {}).items():
                hv["ansible_host"], hv["ansible_port"] = self.addresses[name]
                hv["ansible_user"] = self.username
                if (
                    name in self.eapi_addresses
                    and get_platform(self.devices[name].platform).run.transport == "napalm"
                ):
                    # Read through NAPALM's getters: its eos driver, over this device's eAPI.
                    hv["napalm_driver"] = "eos"
                    hv["ansible_httpapi_port"] = self.eapi_addresses[name][1]
                    if eapi_ca_file is not None:
                        hv["fabline_eapi_ca_file"] = str(eapi_ca_file)
                    elif self.eapi_tls is not None:
                        hv["fabline_eapi_fingerprint"] = self.eapi_tls.fingerprint
                elif eapi_ca_file is not None and name in self.eapi_addresses:
                    hv["ansible_connection"] = "ansible.netcommon.httpapi"
                    hv["ansible_httpapi_port"] = self.eapi_addresses[name][1]
                    hv["fabline_eapi_ca_file"] = str(eapi_ca_file)
            stack.extend(group.get("children", {}).values())
        if password_env:
            inv["all"]["vars"] = {"ansible_password": "{{ lookup('env', '" + password_env + "') }}"}
        return inv

    def host_key_fingerprints(self) -> dict[str, str]:
        """Device name -> SHA256 fingerprint of its host key (as ``ssh-keygen -l`` prints it)."""
        return {name: str(key.get_fingerprint("sha256")) for name, key in self._keys.items()}

    def host_keys(self) -> dict[str, str]:
        """Device name -> public host key in OpenSSH format (for a known_hosts file)."""
        return {name: key.export_public_key("openssh").decode().strip() for name, key in self._keys.items()}

    def start(self) -> None:
        """Start every listener in a background thread; returns once all are bound.

        Raises:
            OSError: An address/port is taken (the message names it).
        """
        self._load_keys()
        if self.eapi_addresses and self.eapi_tls is None:
            self.eapi_tls = make_tls([a for a, _p in self.eapi_addresses.values()])
        loop = asyncio.new_event_loop()
        self._loop = loop
        ready: threading.Event = threading.Event()
        failure: list[BaseException] = []

        def main() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self._start_all())
            except BaseException as exc:  # reported to the caller
                failure.append(exc)
                ready.set()
                loop.run_until_complete(self._close_all())
                loop.run_until_complete(loop.shutdown_default_executor())
                loop.close()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self._close_all())
            loop.run_until_complete(loop.shutdown_default_executor())
            loop.close()

        self._thread = threading.Thread(target=main, name="fabline-sim", daemon=True)
        self._thread.start()
        ready.wait()
        if failure:
            self._thread.join()
            self._thread = None
            exc = failure[0]
            if isinstance(exc, OSError):
                raise exc
            raise RuntimeError(f"simulator failed to start: {exc}") from exc

    def stop(self) -> None:
        """Close every listener and session and join the thread (idempotent)."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        with suppress(RuntimeError):
            loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        self._thread = None
        self._loop = None

    # -- internals --------------------------------------------------------------------------

    @staticmethod
    def _public_data(key: str | Path) -> bytes:
        if isinstance(key, Path) or not key.lstrip().startswith(("ssh-", "ecdsa-")):
            return bytes(asyncssh.read_public_key(str(key)).public_data)
        return bytes(asyncssh.import_public_key(key).public_data)

    def _load_keys(self) -> None:
        for name in self.devices:
            if name in self._keys:
                continue
            if self.host_key_dir is None:
                self._keys[name] = asyncssh.generate_private_key("ssh-ed25519")
                continue
            path = self.host_key_dir / f"{name}.key"
            if path.exists():
                self._keys[name] = asyncssh.read_private_key(str(path))
            else:
                self.host_key_dir.mkdir(parents=True, exist_ok=True)
                key = asyncssh.generate_private_key("ssh-ed25519")
                key.write_private_key(str(path))
                self._keys[name] = key

    async def _start_all(self) -> None:
        # Bind concurrently: each listen resolves its address first, and 300 of those in a row
        # are most of the start-up time.
        listens = [self._listen(dev) for dev in self.devices.values()]
        listens += [self._listen_eapi(self.devices[name]) for name in self.eapi_addresses]
        results = await asyncio.gather(*listens, return_exceptions=True)
        self._servers.extend(r for r in results if r is not None and not isinstance(r, BaseException))
        for r in results:
            if isinstance(r, BaseException):
                raise r

    @staticmethod
    def _bind(dev: SimDevice, port: int) -> socket.socket:
        # Binding here (no name resolution) keeps 300 listeners to a few milliseconds.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((dev.address, port))
            sock.listen(128)
            sock.setblocking(False)
        except OSError as exc:
            sock.close()
            raise OSError(
                exc.errno, f"cannot listen on {dev.address}:{port} for {dev.name}: {exc.strerror}"
            ) from None
        return sock

    async def _listen_eapi(self, dev: SimDevice) -> Any:
        assert self.eapi_tls is not None and self.eapi_port is not None
        if dev.transport_fault("refused"):
            return None
        sock = self._bind(dev, self.eapi_port)
        if dev.transport_fault("no_answer"):
            return await asyncio.start_server(self._silent_client, sock=sock)
        handler = EapiHandler(dev, self.username, self.password, self.run_command)
        ctx = self.eapi_tls.server_context(rogue=dev.transport_fault("tls_mismatch") is not None)
        return await asyncio.start_server(handler.serve, sock=sock, ssl=ctx, ssl_handshake_timeout=60)

    async def _listen(self, dev: SimDevice) -> Any:
        if dev.transport_fault("refused"):
            return None
        sock = self._bind(dev, dev.port)
        try:
            if dev.transport_fault("no_answer"):
                return await asyncio.start_server(self._silent_client, sock=sock)
            return await asyncssh.create_server(
                lambda: _Server(self, dev),
                sock=sock,
                server_host_keys=[self._keys[dev.name]],
                process_factory=lambda proc: self._session(dev, proc),
                encoding=None,
                line_editor=False,
                login_timeout=60,
                kex_algs=list(KEX_ALGS),
                # asyncssh re-reads the server options at each login; without this it looks the
                # machine's FQDN up again each time (for GSS-API, which no device offers).
                gss_host=None,
            )
        except BaseException:
            sock.close()
            raise

    async def _close_all(self) -> None:
        for conn in list(self._connections):
            conn.abort()
        for w in list(self._silent):
            w.close()
        for server in self._servers:
            server.close()
        for server in self._servers:
            with suppress(Exception):
                await server.wait_closed()
        self._servers.clear()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _silent_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        # A device that accepts TCP and never speaks SSH: read until the client gives up.
        self._silent.add(writer)
        try:
            while await reader.read(4096):
                pass
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            self._silent.discard(writer)
            writer.close()

    def dialect_of(self, dev: SimDevice) -> Dialect:
        """The login-shell dialect of a device's platform."""
        d = self._dialects.get(dev.platform)
        if d is None:
            d = self._dialects[dev.platform] = dialect(dev.platform)
        return d

    def run_command(self, dev: SimDevice, line: str) -> Answer:
        """One simple command on a device, with its transport faults applied.

        Raises:
            SessionDrop: A ``drop`` fault cuts this command's answer.
        """
        if dev.writable:
            from fabline.sim.config import configure_command

            try:
                configured = configure_command(dev, split_words(line))
            except ValueError:
                configured = None
            if configured is not None:
                return configured
        if not dev.transport:
            return dev.answer(line, render)
        allowed = _allowed(dev.platform, line)
        for kind in ("missing_command", "garbled", "drop", "stream_forever", "trickle_forever"):
            f = dev.transport_fault(kind, line) if allowed else None
            if f is None:
                continue
            if kind == "missing_command":
                return self.dialect_of(dev).unknown(line)
            answer = dev.answer(line, render)
            if kind == "garbled":
                return Answer(_garbage(dev.name + line), answer.code, answer.err)
            half = answer.out[: max(1, len(answer.out) // 2)]
            if kind == "drop":
                raise SessionDrop(half)
            raise SessionDrop(half, "fast" if kind == "stream_forever" else "slow")
        return dev.answer(line, render)

    async def _session(self, dev: SimDevice, process: asyncssh.SSHServerProcess[bytes]) -> None:
        d = self.dialect_of(dev)
        conn = process.channel.get_connection()
        slow = dev.transport_fault("slow") if dev.transport else None
        try:
            if slow is not None:
                await asyncio.sleep(slow.seconds)
            if process.command is not None:
                if dev.writable:
                    from fabline.sim.config import STDIN, wants_stdin

                    if wants_stdin(process.command):
                        # Read to EOF, as `ssh dev 'config apply-patch /dev/stdin' < patch.json`
                        # does; the value lives in this session's task context only.
                        data = await process.stdin.read()
                        STDIN.set(data.decode("utf-8", "replace"))
                try:
                    answer = d.exec_channel(dev, process.command, self.run_command)
                except SessionDrop as drop:
                    process.stdout.write(drop.partial.encode("utf-8", "replace"))
                    await process.stdout.drain()
                    if drop.stream:
                        await self._stream_forever(dev, process, drop.stream, "\n")
                        return
                    conn.abort()
                    return
                process.stdout.write(answer.out.encode("utf-8", "replace"))
                if answer.err:
                    process.stderr.write(answer.err.encode("utf-8", "replace"))
                process.exit(answer.code)
                return
            await self._interactive(dev, d, process)
        except (asyncssh.BreakReceived, asyncssh.TerminalSizeChanged, ConnectionError, asyncssh.Error):
            process.exit(0)
        except SessionDrop:
            conn.abort()

    async def _interactive(  # noqa: C901 - one terminal session's read/echo/dispatch loop
        self, dev: SimDevice, d: Dialect, process: asyncssh.SSHServerProcess[bytes]
    ) -> None:
        slow = dev.transport_fault("slow_login")
        if slow is not None:
            await asyncio.sleep(slow.seconds)  # the first prompt comes late (AAA server, busy CPU)
        size = process.get_terminal_size()
        s = Session(dev, process.get_extra_info("username") or self.username)
        if d.pager:
            s.page_lines = max(0, (size[1] or 24) - 1)
        conn = process.channel.get_connection()

        buffered: list[str] = []

        def write(text: str) -> None:
            buffered.append(text)

        def flush() -> None:
            # One write per input chunk: a client that hangs up right after its last line
            # (netmiko's 'exit') costs one failed send, not one per echoed character.
            if buffered and not conn.is_closed():
                text = "".join(buffered)
                if "\r\n" in text:
                    text = text.replace("\r\n", "\n")
                process.stdout.write(text.replace("\n", "\r\n").encode("utf-8", "replace"))
            buffered.clear()

        write(d.banner(s))
        write(d.prompt(s))
        flush()
        line = ""
        skip_lf = False
        pending: list[str] = []
        while not s.closed:
            try:
                data = await process.stdin.read(4096)
            except (asyncssh.TerminalSizeChanged, asyncssh.BreakReceived):
                continue
            if not data:
                break
            text = data.decode("utf-8", "replace")
            i, end = 0, len(text)
            while i < end:
                if not pending:
                    # Typed text up to the next control character: echoed and kept in one go.
                    run = _TYPED.match(text, i)
                    if run is not None:
                        line += run.group()
                        write(run.group())
                        skip_lf = False
                        i = run.end()
                        continue
                ch = text[i]
                i += 1
                if pending:
                    # The pager waits for a key: space/enter shows more, anything else stops.
                    write("\r" + " " * len(d.more) + "\r")
                    if ch in " \r\n":
                        self._page(write, d, s, pending)
                    else:
                        pending.clear()
                    if not pending:
                        write(d.prompt(s))
                    skip_lf = ch == "\r"
                    continue
                if ch == "\n" and skip_lf:
                    skip_lf = False
                    continue
                skip_lf = False
                if ch in "\r\n":
                    skip_lf = ch == "\r"
                    write("\n")
                    try:
                        out = d.execute(s, line.strip(), self.run_command)
                    except SessionDrop as drop:
                        write(drop.partial)
                        flush()
                        await process.stdout.drain()
                        if drop.stream:
                            await self._stream_forever(dev, process, drop.stream, "\r\n")
                            return
                        conn.abort()
                        return
                    line = ""
                    if s.closed:
                        write(out)
                        break
                    lines = out.splitlines(keepends=True) if d.pager and s.page_lines else []
                    if len(lines) > s.page_lines:
                        pending.extend(lines)
                        self._page(write, d, s, pending)
                        if pending:
                            continue
                    else:
                        write(out)
                    write(d.prompt(s))
                elif ch == "\x03":
                    write("^C\n" + d.prompt(s))
                    line = ""
                elif ch == "\x04" and not line:
                    s.closed = True
                    break
                elif ch in "\x7f\x08":
                    if line:
                        line = line[:-1]
                        write("\b \b")
                elif ch == "\t" or ch >= " ":
                    line += ch
                    write(ch)
            flush()
        flush()
        await process.stdout.drain()
        process.exit(0)

    @staticmethod
    async def _stream_forever(
        dev: SimDevice, process: asyncssh.SSHServerProcess[bytes], speed: str, newline: str
    ) -> None:
        """Print counter lines until the client closes the channel (it never ends by itself)."""
        line = _STREAM_LINE.replace("\n", newline).encode()
        chunk = line * (1 if speed == "slow" else 64 * 1024 // len(line))
        f = dev.transport_fault("trickle_forever")
        pause = f.seconds if f is not None else 0.1
        try:
            while not process.is_closing():
                process.stdout.write(chunk)
                await process.stdout.drain()
                if speed == "slow":
                    await asyncio.sleep(pause)
        except (OSError, asyncssh.Error):
            pass

    @staticmethod
    def _page(write: Any, d: Dialect, s: Session, pending: list[str]) -> None:
        page = pending[: s.page_lines]
        del pending[: s.page_lines]
        write("".join(page))
        if pending:
            write(d.more)


def _serves_eapi(platform: str) -> bool:
    """Whether a simulated device of this platform answers eAPI (EOS, and NAPALM's eos driver)."""
    run = get_platform(platform).run
    return run.httpapi == "eapi" or run.transport == "napalm"


def _allowed(platform: str, line: str) -> bool:
    try:
        get_platform(platform).match(line)
    except KeyError:
        return False
    return True


@contextmanager
def run_simulator(
    fabric: synthetic.Fabric,
    faults: Sequence[AnyFault] = (),
    *,
    username: str = "admin",
    password: str = "admin",
    address_base: str = "127.10",
    port: int = 2222,
    host_key_dir: Path | None = None,
    authorized_keys: Sequence[str | Path] = (),
    eapi_port: int | None = None,
    writable: bool = False,
) -> Iterator[Simulator]:
    """Serve every device of the fabric over real SSH in a background thread (own asyncio loop).

    Args:
        fabric: The fabric (``synthetic.lab_fabric()``, ``synthetic.rail_fabric(n)``, or one
            changed by :mod:`fabline.sim.faults` helpers such as ``rail_miswire``).
        faults: State faults (``synthetic.Fault``), rising counters and transport faults.
        username: Login accepted by every device.
        password: Its password.
        address_base: First two octets of the loopback addresses (``127.10`` -> ``127.10.0.1``...).
        port: TCP port every device listens on (each on its own address).
        host_key_dir: Keep host keys here (``<device>.key``) so they survive restarts; by default
            each start generates new ones.
        authorized_keys: Public keys (OpenSSH text or ``.pub`` paths) accepted for ``username``;
            without any, only password authentication is offered.
        eapi_port: Serve eAPI (HTTPS) on this port of every Arista EOS device's address.
        writable: Accept configuration (SONiC ``config apply-patch``, NVUE ``nv set``, EOS/NX-OS
            configuration mode, host writes) and change the device state as the NOS would
            (:mod:`fabline.sim.config`); by default every device is read-only.

    Yields:
        The running :class:`Simulator`; it is stopped when the block exits.
    """
    sim = Simulator(
        fabric,
        faults,
        username=username,
        password=password,
        address_base=address_base,
        port=port,
        host_key_dir=host_key_dir,
        authorized_keys=authorized_keys,
        eapi_port=eapi_port,
        writable=writable,
    )
    sim.start()
    try:
        yield sim
    finally:
        sim.stop()
