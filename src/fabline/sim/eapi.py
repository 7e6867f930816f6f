"""Arista eAPI for the simulated EOS switches: JSON-RPC 2.0 ``runCmds`` over HTTPS.

What a real EOS switch with ``management api http-commands`` answers, as Arista documents it and
as its clients (pyeapi, NAPALM's EOS driver, ANTA) expect: ``POST /command-api`` with HTTP Basic
authentication and a body ``{"jsonrpc": "2.0", "method": "runCmds", "params": {"version": 1,
"cmds": [...], "format": "json"|"text"}, "id": ...}``. The answer's ``result`` holds one entry per
command: for ``json`` the command's JSON document (the same document its CLI ``| json`` prints,
rendered by :mod:`fabline.sim.render.arista_eos`), for ``text`` ``{"output": "<CLI text>"}``.
Commands run in order and the first failing one stops the request: the answer is then an
``error`` whose ``data`` holds the results so far plus ``{"errors": [...]}`` for the failed one
(code 1002 ``invalid command``, 1003 for a command that has no JSON form). A bad JSON-RPC envelope
gets the JSON-RPC codes (-32700, -32600, -32601, -32602); wrong credentials get HTTP 401.

The certificates are generated at start (:class:`EapiTls`): a private CA and one server
certificate naming every EOS device's address, so a client can pin the CA bundle
(:attr:`EapiTls.ca_pem`) or the server certificate's fingerprint (:attr:`EapiTls.fingerprint`).
A ``tls_mismatch`` fault serves another, self-signed certificate.
"""

from __future__ import annotations

import asyncio
import base64
import datetime as dt
import hashlib
import ipaddress
import json
import ssl
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fabline.sim.render.common import Answer
from fabline.sim.shell import SessionDrop

if TYPE_CHECKING:
    from fabline.sim.device import SimDevice

#: Largest request body accepted (a real eAPI request is a few KB).
MAX_BODY = 1 << 20

RunCommand = Callable[["SimDevice", str], Answer]


def fingerprint_of(der: bytes) -> str:
    """The SHA-256 fingerprint of a DER certificate, as ``openssl x509 -fingerprint -sha256`` prints it.

    Example:
        >>> fingerprint_of(b"x")[:20]
        'SHA256:2D:71:16:42:B'
    """
    digest = hashlib.sha256(der).hexdigest().upper()
    return "SHA256:" + ":".join(digest[i : i + 2] for i in range(0, len(digest), 2))


@dataclass(frozen=True)
class EapiTls:
    """The simulator's TLS material (PEM text), generated per start.

    Attributes:
        ca_pem: The private CA's certificate: what a site pins as its CA bundle.
        cert_pem: The server certificate (signed by the CA, naming every EOS address).
        key_pem: Its private key.
        rogue_cert_pem: A self-signed certificate for the same names (``tls_mismatch`` faults).
        rogue_key_pem: Its private key.
    """

    ca_pem: str
    cert_pem: str
    key_pem: str
    rogue_cert_pem: str
    rogue_key_pem: str

    @property
    def fingerprint(self) -> str:
        """SHA-256 fingerprint of the server certificate (``SHA256:AB:CD:...``)."""
        return fingerprint_of(ssl.PEM_cert_to_DER_cert(self.cert_pem))

    def server_context(self, rogue: bool = False) -> ssl.SSLContext:
        """A server-side TLS context serving the CA-signed certificate (or the rogue one)."""
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        cert, key = (self.rogue_cert_pem, self.rogue_key_pem) if rogue else (self.cert_pem, self.key_pem)
        # ssl loads a chain only from files: write both to a private temporary folder, load, delete.
        with tempfile.TemporaryDirectory() as tmp:
            cert_file, key_file = Path(tmp) / "cert.pem", Path(tmp) / "key.pem"
            cert_file.write_text(cert, "ascii")
            key_file.write_text(key, "ascii")
            ctx.load_cert_chain(cert_file, key_file)
        return ctx


def make_tls(addresses: list[str]) -> EapiTls:
    """Generate a CA, a server certificate for ``addresses`` (plus localhost) and a rogue one."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = dt.datetime.now(dt.UTC)

    def name(cn: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "fabline simulator"),
                          x509.NameAttribute(NameOID.COMMON_NAME, cn)])  # fmt: skip

    def pem_key(key: ec.EllipticCurvePrivateKey) -> str:
        return key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ).decode("ascii")

    ca_usage = x509.KeyUsage(
        digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
        key_encipherment=False, data_encipherment=False, key_agreement=False, encipher_only=False,
        decipher_only=False,
    )  # fmt: skip
    sans: list[x509.GeneralName] = [x509.DNSName("localhost")]
    sans += [x509.IPAddress(ipaddress.ip_address(a)) for a in sorted(set(addresses))]
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(name("fabline simulator CA"))
        .issuer_name(name("fabline simulator CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(ca_usage, critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )

    def leaf(key: ec.EllipticCurvePrivateKey, issuer: x509.Name, signer: ec.EllipticCurvePrivateKey) -> str:
        cert = (
            x509.CertificateBuilder()
            .subject_name(name("eapi.fabline.sim"))
            .issuer_name(issuer)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(sans), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(signer.public_key()), critical=False
            )
            .sign(signer, hashes.SHA256())
        )
        return cert.public_bytes(serialization.Encoding.PEM).decode("ascii")

    server_key = ec.generate_private_key(ec.SECP256R1())
    rogue_key = ec.generate_private_key(ec.SECP256R1())
    return EapiTls(
        ca_pem=ca.public_bytes(serialization.Encoding.PEM).decode("ascii"),
        cert_pem=leaf(server_key, ca.subject, ca_key),
        key_pem=pem_key(server_key),
        rogue_cert_pem=leaf(rogue_key, name("eapi.fabline.sim"), rogue_key),
        rogue_key_pem=pem_key(rogue_key),
    )


# ---------------------------------------------------------------------------------------------
# JSON-RPC


def _rpc_error(req_id: Any, code: int, message: str, data: list[Any] | None = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": req_id, "error": error}


def _invalid(line: str) -> str:
    """EOS's parser error for a command it does not know (the token is the last word: an approximation)."""
    words = line.split()
    return f"Invalid input (at token {max(0, len(words) - 1)}: '{words[-1] if words else ''}')"


def run_cmds(dev: SimDevice, body: bytes, run_command: RunCommand) -> dict[str, Any]:
    """Answer one JSON-RPC request body as EOS's eAPI does.

    Raises:
        SessionDrop: A ``drop`` fault cuts the answer (the connection is closed without one).
    """
    try:
        request = json.loads(body)
    except ValueError:
        return _rpc_error(None, -32700, "Parse error")
    if not isinstance(request, dict):
        return _rpc_error(None, -32600, "Invalid request")
    req_id = request.get("id")
    if request.get("jsonrpc") != "2.0":
        return _rpc_error(req_id, -32600, "Expected field 'jsonrpc' not specified")
    if request.get("method") != "runCmds":
        return _rpc_error(req_id, -32601, f"Method not found: {request.get('method')!r}")
    params = request.get("params")
    if not isinstance(params, dict) or not isinstance(params.get("cmds"), list):
        return _rpc_error(req_id, -32602, "Invalid params: 'cmds' must be a list of commands")
    fmt = params.get("format", "json")
    if fmt not in ("json", "text"):
        return _rpc_error(req_id, -32602, f"Invalid params: unknown format {fmt!r}")
    cmds = params["cmds"]
    results: list[Any] = []
    for i, cmd in enumerate(cmds):
        line = cmd.get("cmd") if isinstance(cmd, dict) else cmd
        if not isinstance(line, str):
            return _rpc_error(req_id, -32602, "Invalid params: a command is not a string")
        line = " ".join(line.split())
        result, failure = _one(dev, line, fmt, run_command)
        if failure is not None:
            code, reason, errors = failure
            entry: dict[str, Any] = {"errors": errors}
            if fmt == "text":
                entry["output"] = "".join(f"% {e}\n" for e in errors)
            message = f"CLI command {i + 1} of {len(cmds)} '{line}' failed: {reason}"
            return _rpc_error(req_id, code, message, [*results, entry])
        results.append(result)
    return {"jsonrpc": "2.0", "id": req_id, "result": results}


def _one(
    dev: SimDevice, line: str, fmt: str, run_command: RunCommand
) -> tuple[Any, tuple[int, str, list[str]] | None]:
    """One command's result, or ``(code, reason, errors)`` when it fails."""
    if line in ("enable", "disable"):  # privilege changes answer an empty result
        return ({} if fmt == "json" else {"output": ""}), None
    if fmt == "text":
        text = run_command(dev, line)
        if text.out.startswith("% Invalid input"):
            return None, (1002, "invalid command", [_invalid(line)])
        return {"output": text.out}, None
    answer = run_command(dev, f"{line} | json")
    if not answer.out.startswith("% Invalid input"):
        return json.loads(answer.out), None
    # No JSON form: a command the CLI knows in text is 'unconverted', anything else invalid.
    planted = dev.transport_fault("missing_command", f"{line} | json") is not None
    if not planted and not run_command(dev, line).out.startswith("% Invalid input"):
        return None, (1003, "unconverted command", ["This is an unconverted command"])
    return None, (1002, "invalid command", [_invalid(line)])


# ---------------------------------------------------------------------------------------------
# HTTP


def _http(status: str, body: bytes, content_type: str = "application/json", extra: str = "") -> bytes:
    head = (
        f"HTTP/1.1 {status}\r\nServer: nginx\r\nContent-Type: {content_type}\r\n"
        f"Content-Length: {len(body)}\r\n{extra}\r\n"
    )
    return head.encode("ascii") + body


class EapiHandler:
    """One device's eAPI endpoint: HTTP/1.1 requests on a TLS stream, answered per :func:`run_cmds`.

    Args:
        dev: The simulated device.
        username: The accepted login.
        password: Its password.
        run_command: The simulator's command runner (applies ``missing_command`` and ``drop``).
    """

    def __init__(self, dev: SimDevice, username: str, password: str, run_command: RunCommand) -> None:
        self.dev = dev
        token = base64.b64encode(f"{username}:{password}".encode()).decode("ascii")
        self._authorization = f"Basic {token}"
        self.run_command = run_command

    def _no_faults(self, dev: SimDevice, line: str) -> Answer:
        from fabline.sim.render import render

        return dev.answer(line, render)

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Answer requests on one connection until the client closes it."""
        try:
            while await self._one_request(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ssl.SSLError):
            pass
        except asyncio.CancelledError:  # the simulator stops: a held (slow) answer ends quietly
            pass
        finally:
            writer.close()

    async def _one_request(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        start = await reader.readline()
        if not start:
            return False
        parts = start.decode("latin-1").split()
        headers: dict[str, str] = {}
        while True:
            line = await reader.readline()
            if line in (b"\r\n", b"\n", b""):
                break
            key, _sep, value = line.decode("latin-1").partition(":")
            headers[key.strip().lower()] = value.strip()
        try:
            length = int(headers.get("content-length", "0"))
        except ValueError:
            length = -1
        if len(parts) != 3 or length < 0 or length > MAX_BODY:
            writer.write(_http("400 Bad Request", b"", "text/plain", "Connection: close\r\n"))
            await writer.drain()
            return False
        body = await reader.readexactly(length) if length else b""
        keep = headers.get("connection", "").lower() != "close"
        method, path = parts[0], parts[1]
        if path != "/command-api":
            writer.write(_http("404 Not Found", b"Not Found", "text/plain"))
        elif method != "POST":
            writer.write(_http("405 Method Not Allowed", b"", "text/plain", "Allow: POST\r\n"))
        elif headers.get("authorization") != self._authorization or self.dev.transport_fault("auth_failure"):
            page = b"Unable to authenticate user: Bad username/password combination"
            writer.write(
                _http("401 Unauthorized", page, "text/plain", 'WWW-Authenticate: Basic realm="eAPI"\r\n')
            )
        else:
            slow = self._slow(body)
            if slow is not None:  # the simulator's stop cancels a held answer
                await asyncio.sleep(slow)
            try:
                answer = run_cmds(self.dev, body, self.run_command)
            except SessionDrop:
                # The headers promise the whole answer; half of it comes, then the connection closes.
                whole = _http("200 OK", json.dumps(run_cmds(self.dev, body, self._no_faults)).encode())
                writer.write(whole[: len(whole) - 40])
                await writer.drain()
                return False
            writer.write(_http("200 OK", json.dumps(answer).encode()))
        await writer.drain()
        return keep

    def _slow(self, body: bytes) -> float | None:
        """How long a ``slow`` fault holds this request (its command, or every request when unset)."""
        fault = self.dev.transport_fault("slow")
        if fault is None:
            return None
        if fault.command is None:
            return fault.seconds
        try:
            cmds = json.loads(body)["params"]["cmds"]
        except (ValueError, KeyError, TypeError):
            return None
        wanted = " ".join(fault.command.split())
        hit = any(" ".join(str(c.get("cmd") if isinstance(c, dict) else c).split()) == wanted for c in cmds)
        return fault.seconds if hit else None
