"""Collecting one device: plan its commands from its profile, run them, parse, assemble its state.

Nothing here raises for a device problem: connection failures, timeouts, missing commands and
unreadable output all end as the device's ``status`` and ``errors`` (state schema v1) and as
per-command records for the manifest.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from fabline.collect.profiles import PROFILES, Profile
from fabline.collect.transports import (
    CommandFailure,
    ConnectFailure,
    Output,
    Session,
    redact,
)
from fabline.collect.writer import unique_file
from fabline.errors import CommandUnavailable, FablineError, ParseError
from fabline.inventory import Device
from fabline.platforms import PLATFORMS
from fabline.platforms.base import Command, ParseContext, merge_fragments
from fabline.state import SCHEMA_ID

#: Command-record statuses; only ``ok`` feeds the state.
COMMAND_STATUSES = (
    "ok", "unavailable", "parse_error", "failed", "command_timeout", "dropped", "skipped", "refused",
)  # fmt: skip

# Interface and RDMA-device names come from device output (or the inventory) and end up in command
# lines: only plain names pass, so a hostile name can never add shell syntax to a command.
_SAFE_PARAM = {
    "exec": re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:@+-]{0,63}"),
    "netmiko": re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:/@+-]{0,63}"),
}


class CommandRefused(FablineError):
    """A command line that is not on the platform's read-only allow-list; it is never sent."""


def allowed(platform: str, command: str) -> str:
    """Return the command if it is an instance of an allow-listed template, else refuse it.

    Example:
        >>> allowed("linux", "ethtool -m eth0")
        'ethtool -m eth0'
        >>> allowed("linux", "ethtool --set-fec eth0 encoding rs")
        Traceback (most recent call last):
        ...
        fabline.collect.device.CommandRefused: linux: 'ethtool --set-fec eth0 encoding rs' is not on the read-only allow-list; refused
    """
    matched = match_command(platform, command)
    if matched is None:
        raise CommandRefused(f"{platform}: {command!r} is not on the read-only allow-list; refused")
    # A template parameter matches any non-blank text ('eth0;reboot' too): only plain names pass.
    rx = _SAFE_PARAM[PROFILES[platform].transport]
    for value in matched[1].values():
        if not rx.fullmatch(value) or ".." in value:
            raise CommandRefused(f"{platform}: {command!r}: {value!r} is not a plain name; refused")
    return command


@functools.cache
def _compiled(platform: str) -> tuple[tuple[Command, re.Pattern[str]], ...]:
    # Platform.match compiles each template's regex per call; a collection matches every command
    # line twice (refusal guard, parser choice), so the compiled allow-list is kept per platform.
    return tuple((cmd, cmd.pattern()) for cmd in PLATFORMS[platform].commands)


def match_command(platform: str, command: str) -> tuple[Command, dict[str, str]] | None:
    """The allow-listed command a concrete command line is an instance of, with its parameters.

    Example:
        >>> cmd, params = match_command("linux", "ethtool -S eth2")
        >>> cmd.template, params
        ('ethtool -S {interface}', {'interface': 'eth2'})
        >>> match_command("linux", "reboot") is None
        True
    """
    for cmd, rx in _compiled(platform):
        m = rx.match(command)
        if m:
            return cmd, m.groupdict()
    return None


def render(profile: Profile, template: str, **params: str) -> str:
    """A concrete command line from a profile template, refusing unsafe parameter values.

    Raises:
        CommandRefused: A parameter is not a plain name, or the result is not allow-listed.
    """
    rx = _SAFE_PARAM[profile.transport]
    for key, value in params.items():
        if not rx.fullmatch(value) or ".." in value:
            raise CommandRefused(f"{profile.platform}: {key} {value!r} is not a plain name; refused")
    return allowed(profile.platform, template.format(**params))


@dataclass
class CommandRecord:
    """What happened to one command (one entry of the manifest)."""

    command: str
    status: str
    duration_s: float = 0.0
    file: str | None = None
    exit_code: int | None = None
    message: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The manifest form (unset fields left out)."""
        doc: dict[str, Any] = {
            "command": self.command,
            "status": self.status,
            "duration_s": round(self.duration_s, 3),
        }
        for key in ("file", "exit_code", "message"):
            value = getattr(self, key)
            if value is not None:
                doc[key] = value
        return doc


@dataclass
class DeviceResult:
    """One device's outcome: its state document, raw outputs and command records."""

    name: str
    platform: str
    role: str
    status: str
    state: dict[str, Any]
    raw: dict[str, str] = field(default_factory=dict)
    records: list[CommandRecord] = field(default_factory=list)
    attempts: int = 1
    started_at: str = ""
    duration_s: float = 0.0

    def manifest_entry(self) -> dict[str, Any]:
        """The device's manifest entry."""
        return {
            "platform": self.platform,
            "role": self.role,
            "status": self.status,
            "started_at": self.started_at,
            "duration_s": round(self.duration_s, 3),
            "attempts": self.attempts,
            "errors": self.state.get("errors", []),
            "commands": [r.to_json() for r in self.records],
        }


def now_iso() -> str:
    """The current UTC time as ``YYYY-MM-DDTHH:MM:SSZ``."""
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# ---------------------------------------------------------------------------------------------
# parsing and state assembly (shared with --reparse)


def parse_record(platform: str, record: CommandRecord, output: Output) -> dict[str, Any] | None:
    """Parse one command's output; sets the record's status and message. Returns the fragment."""
    if output.exit_code == 127 or (output.exit_code and "command not found" in output.stderr):
        record.status = "unavailable"
        record.message = f"command not found on the device (exit {output.exit_code})"
        return None
    if output.exit_code and not output.text.strip():
        record.status = "failed"
        first = next((ln.strip() for ln in output.stderr.splitlines() if ln.strip()), "no output")
        record.message = f"exit {output.exit_code}: {first[:160]}"
        return None
    matched = match_command(platform, record.command)
    try:
        if matched is None:
            raise ParseError(platform, record.command, "a command on the platform's read-only allow-list")
        command, params = matched
        fragment = command.parser(output.text, ParseContext(platform, record.command, params))
    except CommandUnavailable as exc:
        record.status = "unavailable"
        record.message = str(exc)
        return None
    except ParseError as exc:
        record.status = "parse_error"
        record.message = str(exc)
        return None
    record.status = "ok"
    record.message = None
    return fragment


_ERROR_KIND = {
    "unavailable": "unavailable",
    "parse_error": "parse",
    "failed": "failed",
    "command_timeout": "timeout",
    "dropped": "dropped",
    "skipped": "skipped",
    "refused": "refused",
}


def assemble_state(
    device: Device,
    profile: Profile,
    fragments: Iterable[Mapping[str, Any]],
    records: list[CommandRecord],
    collected_at: str,
    failure: ConnectFailure | None = None,
) -> tuple[str, dict[str, Any]]:
    """Merge fragments into a state-schema-v1 document; returns ``(status, state)``.

    Status: the connect failure's when the device could not be logged into; ``ok`` when every
    command gave a parsed answer; ``error`` when none did; ``partial`` otherwise.
    """
    errors: list[dict[str, Any]] = []
    if failure is not None:
        errors.append({"command": None, "kind": failure.kind, "message": failure.message})
        status = failure.status
    else:
        for r in records:
            if r.status != "ok":
                errors.append(
                    {"command": r.command, "kind": _ERROR_KIND[r.status], "message": r.message or r.status}
                )
        good = sum(1 for r in records if r.status == "ok")
        status = "ok" if not errors else ("partial" if good else "error")
    body = merge_fragments(fragments)
    if profile.finalize is not None and body:
        body = profile.finalize(body)
    state: dict[str, Any] = {
        "schema": SCHEMA_ID,
        "name": device.name,
        "platform": device.platform,
        "role": device.role,
        "status": status,
        "errors": errors,
        "collected_at": collected_at,
    }
    for key, value in body.items():
        if key not in state:
            state[key] = value
    return status, state


# ---------------------------------------------------------------------------------------------
# which interfaces and RDMA devices get the per-interface commands


def select_interfaces(
    device: Device, profile: Profile, by_command: Mapping[str, Mapping[str, Any]]
) -> tuple[list[str], str]:
    """The interfaces to inspect, and where the list came from (for the manifest/docs).

    Linux: the inventory's ``rail_interfaces`` when set, else the RDMA netdevs (``show_gids``,
    which reads sysfs), else every physical netdev (``ip -d link`` shows a PCI parent). Switches:
    every reported interface the profile's pattern accepts, except administratively down ones.
    """
    if not profile.interface_commands:
        return [], "none"
    if profile.platform == "linux":
        rail = device.vars.get("rail_interfaces")
        if isinstance(rail, str):
            rail = [p.strip() for p in rail.split(",") if p.strip()]
        if isinstance(rail, list) and rail:
            return [str(x) for x in rail], "inventory rail_interfaces"
        gids = (by_command.get("show_gids") or {}).get("interfaces") or {}
        rdma = sorted(
            n for n, b in gids.items() if isinstance(b, dict) and (b.get("nic") or {}).get("rdma_device")
        )
        if rdma:
            return rdma, "RDMA netdevs (show_gids)"
        links = (by_command.get("ip -j -d link show") or {}).get("interfaces") or {}
        phys = sorted(
            n for n, b in links.items() if isinstance(b, dict) and (b.get("nic") or {}).get("pci_address")
        )
        return phys, "physical netdevs (ip -d link)"
    merged = merge_fragments(by_command.values())
    names = [
        n
        for n, b in (merged.get("interfaces") or {}).items()
        if profile.wants_interface(n) and not (isinstance(b, dict) and b.get("admin_up") is False)
    ]
    return names, "device interfaces"


def rdma_devices(state: Mapping[str, Any], interfaces: Iterable[str]) -> list[str]:
    """RDMA devices behind the inspected interfaces (else every RDMA device the host listed).

    Example:
        >>> rdma_devices({"interfaces": {"eth0": {"nic": {"rdma_device": "mlx5_0"}}},
        ...               "host": {"rdma_devices": {"mlx5_0": {}, "mlx5_1": {}}}}, ["eth0"])
        ['mlx5_0']
    """
    ifaces = state.get("interfaces") or {}
    found = []
    for name in interfaces:
        dev = ((ifaces.get(name) or {}).get("nic") or {}).get("rdma_device")
        if isinstance(dev, str) and dev not in found:
            found.append(dev)
    if not found:
        found = sorted(((state.get("host") or {}).get("rdma_devices") or {}).keys())
    return found


# ---------------------------------------------------------------------------------------------
# the device run


SessionFactory = Callable[[Device, Profile], Session]


@dataclass(frozen=True)
class RetryPolicy:
    """Retries for connect failures only (never for authentication failures: they lock accounts).

    Attributes:
        retries: Extra attempts after the first.
        backoff_s: Wait before the first retry; doubles each time, capped at 8 s.
    """

    retries: int = 2
    backoff_s: float = 0.5

    def delay(self, attempt: int) -> float:
        """Seconds to wait before attempt ``attempt`` (2 = the first retry).

        Example:
            >>> [RetryPolicy(backoff_s=1).delay(n) for n in (2, 3, 4, 9)]
            [1.0, 2.0, 4.0, 8.0]
        """
        return float(min(8.0, self.backoff_s * 2 ** (attempt - 2)))


def collect_device(
    device: Device,
    open_session: SessionFactory,
    retry: RetryPolicy = RetryPolicy(),
    sleep: Callable[[float], None] = time.sleep,
) -> DeviceResult:
    """Log into one device, run its profile and build its state. Never raises for device problems."""
    profile = PROFILES[device.platform]
    started = time.monotonic()
    started_at = now_iso()
    attempts = 0
    failure: ConnectFailure | None = None
    session: Session | None = None
    while True:
        attempts += 1
        try:
            session = open_session(device, profile)
            failure = None
            break
        except ConnectFailure as exc:
            failure = exc
            if not exc.retry or attempts > retry.retries:
                break
            sleep(retry.delay(attempts + 1))
    secrets = (device.password,)
    if session is None:
        assert failure is not None
        failure.message = redact(failure.message, *secrets)
        status, state = assemble_state(device, profile, [], [], started_at, failure)
        return DeviceResult(
            device.name, device.platform, device.role, status, state,
            attempts=attempts, started_at=started_at, duration_s=time.monotonic() - started,
        )  # fmt: skip
    run = _Run(device, profile, session, secrets)
    try:
        run.commands(list(profile.device_commands))
        interfaces, _source = select_interfaces(device, profile, run.by_command)
        run.commands(run.expand(profile.interface_commands, "interface", interfaces))
        if profile.rdma_commands and not run.dead:
            merged = merge_fragments(run.fragments)
            run.commands(run.expand(profile.rdma_commands, "rdma_device", rdma_devices(merged, interfaces)))
    finally:
        session.close()
    status, state = assemble_state(device, profile, run.fragments, run.records, started_at)
    return DeviceResult(
        device.name, device.platform, device.role, status, state, run.raw, run.records,
        attempts=attempts, started_at=started_at, duration_s=time.monotonic() - started,
    )  # fmt: skip


class _Run:
    """The command loop of one device session."""

    def __init__(
        self, device: Device, profile: Profile, session: Session, secrets: tuple[str | None, ...]
    ) -> None:
        self.device = device
        self.profile = profile
        self.session = session
        self.secrets = secrets
        self.records: list[CommandRecord] = []
        self.fragments: list[dict[str, Any]] = []
        self.by_command: dict[str, dict[str, Any]] = {}
        self.raw: dict[str, str] = {}
        self.dead: str | None = None
        self._used: set[str] = set()

    def expand(self, templates: Iterable[str], param: str, values: Iterable[str]) -> list[str]:
        out = []
        values = list(values)
        for value in values:
            for template in templates:
                try:
                    out.append(render(self.profile, template, **{param: value}))
                except CommandRefused as exc:
                    self.records.append(
                        CommandRecord(template.replace("{" + param + "}", "?"), "refused", message=str(exc))
                    )
        return out

    def commands(self, commands: list[str]) -> None:
        if not commands:
            return
        if self.dead:
            for cmd in commands:
                self.records.append(CommandRecord(cmd, "skipped", message=f"not run: {self.dead}"))
            return
        for cmd in commands:
            allowed(self.profile.platform, cmd)  # the last guard before anything is sent
        done = 0
        results = self.session.run(commands)
        try:
            for cmd, outcome, seconds in results:
                done += 1
                record = CommandRecord(cmd, "ok", seconds)
                if isinstance(outcome, CommandFailure):
                    record.status = "command_timeout" if outcome.kind == "command_timeout" else "dropped"
                    record.message = outcome.message
                    self.records.append(record)
                    if outcome.fatal:
                        self.dead = f"session unusable after {outcome.kind.replace('_', ' ')} on {cmd!r}"
                        break
                    continue
                text = redact(outcome.text, *self.secrets)
                record.file = unique_file(cmd, self._used)
                record.exit_code = outcome.exit_code
                self.raw[record.file] = text
                fragment = parse_record(
                    self.profile.platform,
                    record,
                    Output(text, outcome.exit_code, redact(outcome.stderr, *self.secrets)),
                )
                if record.message:
                    record.message = redact(record.message, *self.secrets)
                self.records.append(record)
                if fragment is not None:
                    self.fragments.append(fragment)
                    self.by_command[cmd] = fragment
        finally:
            close = getattr(results, "close", None)
            if close is not None:
                close()
        for cmd in commands[done:]:
            self.records.append(CommandRecord(cmd, "skipped", message=f"not run: {self.dead}"))
