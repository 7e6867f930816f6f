"""The eAPI transport: Arista EOS over HTTPS JSON-RPC, through NAPALM's EOS driver and its pyeapi connection.

Chosen per device by the inventory (:func:`wants_eapi`): ``ansible_connection:
ansible.netcommon.httpapi`` (Ansible's ``arista.eos`` way) or ``fabline_transport: eapi``. The
commands and parsers are the SSH ones: a profile command ``show X | json`` is sent as ``show X``
in a ``runCmds`` request with ``format: json`` (eAPI answers the very document the CLI's ``| json``
prints), every other command with ``format: text`` (``{"output": "<CLI text>"}``). The JSON
commands go in one request and the text ones in another; each command's result becomes the raw
evidence of that command, so ``--reparse`` and the parsers see what an SSH collection writes.

Read-only: :class:`GuardedEapiConnection` checks every command of every request against the EOS
allow-list before it is sent, NAPALM's own (``show version`` when the driver opens) included, and
fabline never enters ``enable`` (NAPALM's ``force_no_enable``).

TLS verification is on by default (the system trust store). A site pins its own CA bundle
(``fabline_eapi_ca_file``) or accepts one known certificate by its SHA-256 fingerprint
(``fabline_eapi_fingerprint``, checked after the handshake and before any request, so the
credentials never reach another server); ``fabline_eapi_verify: false`` (or Ansible's
``ansible_httpapi_validate_certs: false``) turns verification off, for labs only.

Faults are classified as over SSH (:class:`~fabline.collect.transports.ConnectFailure`,
:class:`~fabline.collect.transports.CommandFailure`): connection refused or no TCP answer
(``unreachable``), a certificate that is not trusted or a failed handshake (``error``, kind
``tls``), HTTP 401 (``auth_failed``, never retried), no TLS handshake or no answer within
``--timeout`` (``timeout``; ``command_timeout`` once the session is open), and an eAPI command
error (the CLI's ``% Invalid input`` text, so the parser records ``unavailable``; other codes
``failed``).

NAPALM and pyeapi are imported when the first eAPI session opens, so runs that never use eAPI do
not load them.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import socket
import ssl
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fabline.collect.allowlist import CommandRefused, allowed
from fabline.collect.transports import (
    CommandFailure,
    ConnectFailure,
    ConnectOptions,
    Output,
    _too_large,
    exception_chain,
)
from fabline.errors import ConfigError
from fabline.inventory import Device

# pyeapi logs every failed request with its traceback at ERROR (and NAPALM some at WARNING); with no
# handler configured Python would print them to stderr. fabline reports the fault itself, once.
for _name in ("pyeapi", "napalm"):
    logging.getLogger(_name).addHandler(logging.NullHandler())

#: ``ansible_connection`` values that mean "reach the device over its HTTP API".
HTTPAPI_CONNECTIONS = frozenset({"ansible.netcommon.httpapi", "httpapi", "netcommon.httpapi"})
#: ``fabline_transport`` values.
TRANSPORTS = ("ssh", "eapi")
#: The eAPI port when the inventory names none (``ansible_httpapi_port`` / ``fabline_eapi_port``).
DEFAULT_EAPI_PORT = 443
_JSON_SUFFIX = "| json"
_FALSE = frozenset({False, "false", "False", "no", "0"})


def wants_eapi(device: Device, httpapi: str | None) -> bool:
    """Whether the inventory asks for eAPI on this device (``httpapi``: its platform's HTTP API, if any).

    ``fabline_transport`` wins when set (``ssh`` or ``eapi``); otherwise an ``ansible_connection``
    of ``ansible.netcommon.httpapi`` means eAPI on a platform that has it (elsewhere SSH, as before).

    Raises:
        ConfigError: ``fabline_transport`` is not one of ``ssh``, ``eapi``, or asks for eAPI on a
            platform without it.
    """
    chosen = device.vars.get("fabline_transport")
    if chosen is not None:
        if chosen not in TRANSPORTS:
            raise ConfigError(
                f"host {device.name!r}: fabline_transport {chosen!r} is not one of {', '.join(TRANSPORTS)}",
                key="fabline_transport",
            )
        if chosen == "eapi" and httpapi != "eapi":
            raise ConfigError(
                f"host {device.name!r}: fabline_transport eapi, but platform {device.platform!r} has no eAPI",
                key="fabline_transport",
            )
        return bool(chosen == "eapi")
    return httpapi == "eapi" and str(device.vars.get("ansible_connection", "")) in HTTPAPI_CONNECTIONS


def normalize_fingerprint(text: str) -> str:
    """A SHA-256 certificate fingerprint as 64 lower-case hex digits (colons, case, prefix dropped).

    Example:
        >>> normalize_fingerprint("SHA256:AB:cd" + ":00" * 30)[:8]
        'abcd0000'
    """
    value = text.strip().lower()
    for prefix in ("sha256:", "sha256="):
        if value.startswith(prefix):
            value = value[len(prefix) :]
    return value.replace(":", "").replace(" ", "")


@dataclass(frozen=True)
class TlsPolicy:
    """How a device's eAPI certificate is verified.

    Attributes:
        ca_file: A CA bundle (PEM) the certificate must chain to, instead of the system store.
        fingerprint: The SHA-256 fingerprint (64 hex digits) the certificate must have; no chain
            or name check then (a pinned self-signed certificate is the common case).
        verify: False turns every check off (labs only).
    """

    ca_file: str | None = None
    fingerprint: str | None = None
    verify: bool = True

    @classmethod
    def of(cls, device: Device) -> TlsPolicy:
        """The policy the device's inventory variables ask for.

        Raises:
            ConfigError: A fingerprint that is not 64 hex digits, or a CA file that cannot be read.
        """
        v = device.vars
        verify = v.get("fabline_eapi_verify", v.get("ansible_httpapi_validate_certs", True)) not in _FALSE
        ca = v.get("fabline_eapi_ca_file")
        pin = v.get("fabline_eapi_fingerprint")
        fingerprint = None
        if pin:
            fingerprint = normalize_fingerprint(str(pin))
            if len(fingerprint) != 64 or any(c not in "0123456789abcdef" for c in fingerprint):
                raise ConfigError(
                    f"host {device.name!r}: fabline_eapi_fingerprint is not a SHA-256 fingerprint "
                    "(64 hex digits, colons allowed, e.g. from `openssl x509 -noout -fingerprint -sha256`)",
                    key="fabline_eapi_fingerprint",
                )
        return cls(ca_file=str(ca) if ca else None, fingerprint=fingerprint, verify=verify)

    def context(self) -> ssl.SSLContext:
        """The client TLS context (TLS 1.2 or later).

        Raises:
            ConfigError: The CA file cannot be read or holds no certificate.
        """
        if not self.verify or self.fingerprint:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        else:
            try:
                ctx = ssl.create_default_context(cafile=self.ca_file)
            except (OSError, ssl.SSLError) as exc:
                reason = getattr(exc, "strerror", None) or getattr(exc, "reason", None) or type(exc).__name__
                raise ConfigError(
                    f"fabline_eapi_ca_file {self.ca_file}: cannot load a CA bundle ({reason})",
                    key="fabline_eapi_ca_file",
                ) from None
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        return ctx


def eapi_port(device: Device) -> int:
    """The device's eAPI port: ``ansible_httpapi_port``, ``fabline_eapi_port``, else 443.

    Raises:
        ConfigError: Not a port number.
    """
    raw = device.vars.get("ansible_httpapi_port", device.vars.get("fabline_eapi_port", DEFAULT_EAPI_PORT))
    try:
        port = int(raw)
    except (TypeError, ValueError):
        port = 0
    if not 0 < port < 65536:
        raise ConfigError(
            f"host {device.name!r}: eAPI port {raw!r} is not a TCP port", key="ansible_httpapi_port"
        )
    return port


class FingerprintMismatch(ssl.SSLError):
    """The server's certificate is not the pinned one (raised before any request is sent)."""


class AnswerTooLarge(OSError):
    """An eAPI answer longer than ``--max-output`` (reading stops there)."""


class AnswerTooSlow(OSError):
    """An eAPI answer still arriving after ``--command-timeout`` per command of the request."""


@functools.cache
def _connection_class(platform: str | None) -> type[Any]:
    """The pyeapi HTTPS connection with TLS phases, pinning and the allow-list guard of ``platform``
    (None: no guard, for NAPALM's getters, whose allow-list is the getter names). Built lazily.
    """
    from pyeapi.eapilib import HttpsConnection, HttpsEapiConnection

    class _Https(HttpsConnection):  # type: ignore[misc]
        """One HTTPS connection that records how far it got (for the fault classification)."""

        fingerprint: str | None = None
        phase = "tcp"
        status: int | None = None
        #: Bounds of one answer: bytes, and seconds from the first byte (set by the session).
        max_output: int | None = None
        deadline_s: float | None = None

        def connect(self) -> None:
            self.phase = "tcp"
            sock = socket.create_connection((self.host, self.port), self.timeout)
            self.phase = "tls"
            try:
                self.sock = self._context.wrap_socket(sock, server_hostname=self.host)
            except BaseException:
                sock.close()
                raise
            if self.fingerprint is not None:
                der = self.sock.getpeercert(binary_form=True) or b""
                if hashlib.sha256(der).hexdigest() != self.fingerprint:
                    self.sock.close()
                    raise FingerprintMismatch("certificate fingerprint is not the pinned one")
            self.phase = "http"

        def getresponse(self) -> Any:
            response = super().getresponse()
            self.status = response.status
            whole, cap, budget = response.read, self.max_output, self.deadline_s

            def read(amt: int | None = None) -> bytes:
                # pyeapi reads the whole answer at once: read it in pieces, within the bounds.
                if amt is not None:
                    return bytes(whole(amt))
                end = time.monotonic() + budget if budget else None
                chunks: list[bytes] = []
                size = 0
                while chunk := whole(65536):
                    size += len(chunk)
                    if cap is not None and size > cap:
                        raise AnswerTooLarge(f"answer larger than {cap} bytes")
                    if end is not None and time.monotonic() > end:
                        raise AnswerTooSlow(f"answer still arriving after {budget:g} s")
                    chunks.append(chunk)
                return b"".join(chunks)

            response.read = read
            return response

    class GuardedEapiConnection(HttpsEapiConnection):  # type: ignore[misc]
        """pyeapi's HTTPS eAPI connection; every command is checked against the allow-list first."""

        def __init__(
            self,
            host: str,
            port: int | None = None,
            path: str | None = None,
            username: str | None = None,
            password: str | None = None,
            context: ssl.SSLContext | None = None,
            timeout: float = 60,
            fingerprint: str | None = None,
            **kwargs: Any,
        ) -> None:
            super().__init__(host, port, path, username, password, context=context, timeout=timeout)
            https = _Https(
                path or "/command-api", host, int(port or DEFAULT_EAPI_PORT), context=context, timeout=timeout
            )
            https.fingerprint = fingerprint
            self.transport = https

        def execute(self, commands: Sequence[Any], encoding: str = "json", **kwargs: Any) -> Any:
            for cmd in commands if platform is not None else ():
                line = cmd.get("cmd", "") if isinstance(cmd, Mapping) else str(cmd)
                allowed(str(platform), f"{line} {_JSON_SUFFIX}" if encoding == "json" else line)
            return super().execute(commands, encoding, **kwargs)

    return GuardedEapiConnection


def classify_eapi_error(exc: BaseException, connection: Any, where: str, timeout: float) -> ConnectFailure:
    """Map a failure to open an eAPI session to a :class:`ConnectFailure` (same statuses as SSH).

    ``connection`` is the pyeapi connection (its transport records the phase reached and the HTTP
    status); pyeapi keeps the socket-level exception it wrapped in ``socket_error``.
    """
    https = getattr(connection, "transport", None)
    phase = getattr(https, "phase", "tcp")
    status = getattr(https, "status", None)
    causes = list(exception_chain(exc))
    inner = getattr(connection, "socket_error", None)
    if isinstance(inner, BaseException):
        causes = [inner, *causes]
    for e in causes:
        if isinstance(e, CommandRefused):
            return ConnectFailure("error", "refused", str(e), retry=False)
    if status == 401:
        return ConnectFailure(
            "auth_failed",
            "auth_failed",
            f"authentication failed at {where} (HTTP 401, not retried)",
            retry=False,
        )
    for e in causes:
        if isinstance(e, FingerprintMismatch):
            return ConnectFailure(
                "error", "tls",
                f"TLS certificate of {where} does not match fabline_eapi_fingerprint: refused before login",
                retry=False,
            )  # fmt: skip
        if isinstance(e, ssl.SSLCertVerificationError):
            reason = e.verify_message or "not trusted"
            return ConnectFailure(
                "error", "tls",
                f"TLS certificate of {where} not trusted ({reason}); pin the site CA with fabline_eapi_ca_file "
                "or the certificate with fabline_eapi_fingerprint",
                retry=False,
            )  # fmt: skip
        if isinstance(e, ConnectionRefusedError):
            return ConnectFailure("unreachable", "unreachable", f"connection refused by {where}", retry=True)
        if isinstance(e, (socket.timeout, TimeoutError)):
            if phase == "tcp":
                return ConnectFailure(
                    "unreachable",
                    "unreachable",
                    f"no TCP answer from {where} within {timeout:g} s",
                    retry=True,
                )
            what = "TLS handshake" if phase == "tls" else "eAPI answer"
            return ConnectFailure(
                "timeout", "timeout", f"no {what} from {where} within {timeout:g} s", retry=True
            )
        if isinstance(e, ssl.SSLError):
            return ConnectFailure(
                "error",
                "tls",
                f"TLS handshake with {where} failed ({e.reason or 'protocol error'})",
                retry=False,
            )
        if isinstance(e, socket.gaierror):
            return ConnectFailure("unreachable", "unreachable", f"cannot resolve {where}", retry=False)
        if isinstance(e, OSError) and phase == "tcp":
            reason = e.strerror or type(e).__name__
            return ConnectFailure(
                "unreachable", "unreachable", f"cannot connect to {where}: {reason}", retry=True
            )
    if status is not None and status != 200:
        return ConnectFailure("error", "connect", f"eAPI at {where} answered HTTP {status}", retry=False)
    code = getattr(exc, "error_code", None)
    if code is not None:
        return ConnectFailure(
            "error", "connect", f"eAPI at {where} refused 'show version' (eAPI error {code})", retry=False
        )
    return ConnectFailure(
        "error",
        "connect",
        f"cannot open an eAPI session to {where} ({type(causes[-1]).__name__})",
        retry=True,
    )


class EapiSession:
    """An eAPI session to one EOS device, opened by NAPALM's EOS driver over a guarded connection.

    Raises:
        ConnectFailure: The session could not be opened (see :func:`classify_eapi_error`).
    """

    def __init__(self, device: Device, options: ConnectOptions, platform: str) -> None:
        from napalm import get_network_driver

        self.device = device
        self.options = options
        port = eapi_port(device)
        self.where = f"{device.host}:{port}"
        tls = TlsPolicy.of(device)
        driver = get_network_driver("eos")(
            device.host,
            device.user or "admin",
            device.password or "",
            timeout=options.timeout,
            optional_args={
                "transport": _connection_class(platform),
                "port": port,
                "context": tls.context(),
                "fingerprint": tls.fingerprint,
                # Read-only: no 'enable' in any request (the eAPI user's own privilege applies).
                "force_no_enable": True,
            },
        )
        try:
            driver.open()
        except Exception as exc:
            connection = getattr(getattr(driver, "device", None), "connection", None)
            raise classify_eapi_error(exc, connection, self.where, options.timeout) from None
        self.driver = driver
        self._node = driver.device
        self._https = getattr(getattr(self._node, "connection", None), "transport", None)
        if self._https is not None:
            self._https.max_output = options.max_output

    def run(self, commands: Sequence[str]) -> Iterator[tuple[str, Output | CommandFailure, float]]:
        """Run the commands, in order: each run of ``| json`` commands as one JSON request, each run
        of other commands as one text request (eAPI takes one format per request).

        A command error stops its request at that command (eAPI runs none after it); the rest of
        the request is sent again without it. A lost connection or a timeout ends the session.
        """
        runs: list[tuple[str, list[tuple[str, str]]]] = []
        for cmd in commands:
            stripped = cmd.strip()
            encoding = "json" if stripped.endswith(_JSON_SUFFIX) else "text"
            sent = stripped[: -len(_JSON_SUFFIX)].rstrip() if encoding == "json" else stripped
            if not runs or runs[-1][0] != encoding:
                runs.append((encoding, []))
            runs[-1][1].append((cmd, sent))
        first = True
        for encoding, batch in runs:
            while batch:
                if not first and self.options.pace > 0:
                    time.sleep(self.options.pace)
                first = False
                answered, batch = self._request(batch, encoding)
                for cmd, outcome, seconds in answered:
                    yield cmd, outcome, seconds
                    if isinstance(outcome, CommandFailure) and outcome.fatal:
                        return

    def _request(
        self, batch: list[tuple[str, str]], encoding: str
    ) -> tuple[list[tuple[str, Output | CommandFailure, float]], list[tuple[str, str]]]:
        """Send one ``runCmds``: what came back per command, and the commands still to send."""
        from pyeapi.eapilib import CommandError

        rest: list[tuple[str, str]] = []
        if self.options.pace > 0:  # one command per request, the pause between them
            batch, rest = batch[:1], batch[1:]
        started = time.monotonic()
        try:
            results = self._node.run_commands(
                [sent for _c, sent in batch], encoding=encoding, send_enable=False
            )
        except CommandError as exc:
            seconds = time.monotonic() - started
            done = [r for r in (exc.output or []) if isinstance(r, Mapping)]
            failed_at = min(max(0, len(done) - 1), len(batch) - 1)
            answered: list[tuple[str, Output | CommandFailure, float]] = [
                (cmd, _output(result, encoding), seconds)
                for (cmd, _s), result in zip(batch[:failed_at], done, strict=False)
            ]
            errors = done[failed_at].get("errors") if failed_at < len(done) else None
            answered.append((batch[failed_at][0], _command_error(exc, errors), seconds))
            return answered, batch[failed_at + 1 :] + rest
        except Exception as exc:
            return [(batch[0][0], self._failure(exc), time.monotonic() - started)], []
        seconds = time.monotonic() - started
        return [
            (cmd, _output(result, encoding), seconds)
            for (cmd, _s), result in zip(batch, results, strict=False)
        ], rest

    def _failure(self, exc: BaseException) -> CommandFailure:
        connection = getattr(self._node, "connection", None)
        inner = getattr(connection, "socket_error", None)
        for e in [inner, *exception_chain(exc)]:
            if isinstance(e, AnswerTooLarge):
                return _too_large(self.options.max_output, fatal=True)
            if isinstance(e, AnswerTooSlow):
                return CommandFailure("command_timeout", f"eAPI {e} (--command-timeout)", fatal=True)
            if isinstance(e, (socket.timeout, TimeoutError)):
                return CommandFailure(
                    "command_timeout", f"no eAPI answer within {self.options.timeout:g} s", fatal=True
                )
        return CommandFailure("dropped", "eAPI connection lost before the answer was complete", fatal=True)

    def close(self) -> None:
        """Close the driver (no request is sent: fabline opens no configuration session)."""
        with contextlib.suppress(Exception):
            self.driver.close()


def _output(result: Any, encoding: str) -> Output:
    """One command's eAPI result as the evidence an SSH collection would have written."""
    if encoding == "text":
        text = result.get("output", "") if isinstance(result, Mapping) else str(result)
        return Output(str(text))
    return Output(json.dumps(result, indent=2) + "\n")


def _command_error(exc: Any, errors: Any) -> Output:
    """A command eAPI refused to run: the CLI's own ``% ...`` text for invalid input, else a failure."""
    messages = [str(e) for e in errors] if isinstance(errors, list) and errors else [str(exc.error_text)]
    code = int(getattr(exc, "error_code", 1000) or 1000)
    if code == 1002:
        return Output("".join(f"% {m}\n" for m in messages))
    return Output("", exit_code=code, stderr=f"eAPI error {code}: {'; '.join(messages)}"[:300])
