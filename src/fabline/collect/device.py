"""Collecting one device: plan its commands from its profile, run them, parse, assemble its state.

Nothing here raises for a device problem: connection failures, timeouts, missing commands and
unreadable output all end as the device's ``status`` and ``errors`` (state schema v1) and as
per-command records for the manifest.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fabline.collect.allowlist import (
    CommandRefused,
    added_later,
    allowed,
    match_command,
    release_restricted,
    releases_of,
    removed_later,
    render,
    split_by_release,
)
from fabline.collect.profiles import PROFILES, Profile
from fabline.collect.transports import (
    CommandFailure,
    ConnectFailure,
    Output,
    Session,
    redact,
)
from fabline.collect.writer import unique_file
from fabline.errors import CommandUnavailable, ParseError
from fabline.inventory import Device, Named
from fabline.platforms import PLATFORMS
from fabline.platforms.base import ROOT_PREFIX, ParseContext, merge_fragments
from fabline.platforms.dispatch import SCHEMA_EXPECTED, checked_merge, run_parser
from fabline.state import SCHEMA_ID

#: Command-record statuses; only ``ok`` feeds the state.
COMMAND_STATUSES = (
    "ok", "unavailable", "parse_error", "failed", "command_timeout", "output_too_large", "dropped", "skipped",
    "refused", "not_in_release",
)  # fmt: skip
#: The status of a command the device's release does not have (by the vendor's documentation): it
#: is never sent, and it is not an error of the device (``Command.releases``).
NOT_IN_RELEASE = "not_in_release"
#: The inventory variable that names a device's NOS release (``5.9.1``), when the inventory knows it.
RELEASE_VAR = "fabline_os_version"
#: The inventory variable that lets the collector run the root-only read commands with ``sudo -n``
#: (``docs/inventory.md``); without it they are recorded ``unavailable`` and never sent.
SUDO_VAR = "fabline_sudo"
#: The message of a root-only command a device's inventory does not enable.
NO_SUDO = f"needs root: not run ({SUDO_VAR} is not set for this device, so sudo -n is not used)"


def not_enabled(record: CommandRecord) -> bool:
    """Whether a command was not sent by the inventory's choice (a root-only read without ``fabline_sudo``).

    Its record says ``unavailable`` with the reason; it is not an error of the device (the device
    stays ``ok``): what only it provides is recorded ``unsupported`` with the reason instead.
    """
    return record.status == "unavailable" and record.message == NO_SUDO


def sudo_enabled(variables: Mapping[str, Any]) -> bool:
    """Whether a device's inventory variables let the collector use ``sudo -n`` (``fabline_sudo: true``).

    Example:
        >>> [sudo_enabled({SUDO_VAR: v}) for v in (True, "yes", "false", None)]
        [True, True, False, False]
    """
    value = variables.get(SUDO_VAR)
    if isinstance(value, str):
        return value.strip().lower() in ("true", "yes", "on", "1")
    return value is True or (type(value) is int and value == 1)


def for_release(
    platform: str, templates: Iterable[str], release: str | None
) -> tuple[list[str], list[CommandRecord]]:
    """The templates a release has, and a ``not_in_release`` record for each one it lacks.

    An unknown release (None, or no number in it) keeps every template: what the device lacks
    is then found out by running it (``unavailable``). The release knowledge is the platform's
    (:func:`fabline.collect.allowlist.split_by_release`).
    """
    keep, lacking = split_by_release(platform, templates, release)
    return keep, [CommandRecord(t, NOT_IN_RELEASE, message=why) for t, why in lacking]


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
    #: Extra manifest keys (a distributed collection's ``site`` and ``collector``).
    extra: dict[str, Any] = field(default_factory=dict)
    #: The written state's digest fields (:func:`fabline.snapshot.state_digest`), once it is on disk.
    state_digest: dict[str, str] = field(default_factory=dict)

    def manifest_entry(self) -> dict[str, Any]:
        """The device's manifest entry."""
        return (
            {
                "platform": self.platform,
                "role": self.role,
                "status": self.status,
                "started_at": self.started_at,
                "duration_s": round(self.duration_s, 3),
                "attempts": self.attempts,
                "errors": self.state.get("errors", []),
                "commands": self.command_entries(),
            }
            | self.state_digest
            | self.extra
        )

    def command_entries(self) -> list[dict[str, Any]]:
        """The command records as the manifest entry lists them."""
        return [r.to_json() for r in self.records]

    @property
    def command_count(self) -> int:
        """How many commands the device was sent."""
        return len(self.records)


def now_iso() -> str:
    """The current UTC time as ``YYYY-MM-DDTHH:MM:SSZ``."""
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# ---------------------------------------------------------------------------------------------
# parsing and state assembly (shared with --reparse)


def parse_record(platform: str, record: CommandRecord, output: Output) -> dict[str, Any] | None:
    """Parse one command's output; sets the record's status and message. Returns the fragment.

    The fragment is bounded and clean but not yet checked against the state schema: the device's
    fragments are checked once, merged (:func:`assemble_state`).
    """
    if output.exit_code == 127 or (output.exit_code and "command not found" in output.stderr):
        record.status = "unavailable"
        record.message = f"command not found on the device (exit {output.exit_code})"
        return None
    matched = match_command(platform, record.command)
    why = matched[0].unavailable_reason(output.exit_code, output.stderr) if matched is not None else None
    if why is not None:
        # The host cannot run it (sudo refused, no systemd, no SMBIOS table): not a failure of the
        # device, whatever preamble it printed first (dmidecode's '# dmidecode 3.4').
        record.status = "unavailable"
        record.message = why
        return None
    if output.exit_code and not output.text.strip():
        record.status = "failed"
        first = next((ln.strip() for ln in output.stderr.splitlines() if ln.strip()), "no output")
        record.message = f"exit {output.exit_code}: {first[:160]}"
        return None
    try:
        if matched is None:
            raise ParseError(platform, record.command, "a command on the platform's read-only allow-list")
        command, params = matched
        fragment = run_parser(
            command.parser, output.text, ParseContext(platform, record.command, params), validate=False
        )
    except CommandUnavailable as exc:
        record.status = "unavailable"
        record.message = str(exc)
        return None
    except ParseError as exc:
        record.status = "parse_error"
        record.message = str(exc)
        return None
    except Exception as exc:  # a parser bug: the output stays as evidence, the run goes on
        record.status = "parse_error"
        first = (str(exc).splitlines() or [""])[0][:160]
        record.message = f"{platform}: {record.command!r}: parser failed: {type(exc).__name__}: {first}"
        return None
    record.status = "ok"
    record.message = None
    return fragment


def redact_strings(fragment: dict[str, Any] | None, secrets: Iterable[str | None]) -> dict[str, Any] | None:
    """A parsed fragment with every secret replaced in its strings (keys and values); numbers kept.

    Example:
        >>> redact_strings({"interfaces": {"e1": {"description": "pw is s3cret", "mtu": 9000}}}, ["s3cret"])
        {'interfaces': {'e1': {'description': 'pw is ********', 'mtu': 9000}}}
    """
    if fragment is None:
        return None
    secrets = tuple(secrets)

    def clean(node: Any) -> Any:
        if isinstance(node, str):
            return redact(node, *secrets)
        if isinstance(node, dict):
            return {redact(k, *secrets) if isinstance(k, str) else k: clean(v) for k, v in node.items()}
        if isinstance(node, list):
            return [clean(v) for v in node]
        return node

    return clean(fragment)  # type: ignore[no-any-return]


_ERROR_KIND = {
    "unavailable": "unavailable",
    "parse_error": "parse",
    "failed": "failed",
    "command_timeout": "timeout",
    "output_too_large": "output_too_large",
    "dropped": "dropped",
    "skipped": "skipped",
    "refused": "refused",
}


@dataclass(frozen=True)
class DeviceRef:
    """A device's name, platform and role: what crosses to the finishing process (no credentials)."""

    name: str
    platform: str
    role: str


def assemble_state(
    device: Named,
    profile: Profile,
    parsed: Sequence[tuple[CommandRecord, Mapping[str, Any]]],
    records: list[CommandRecord],
    collected_at: str,
    failure: ConnectFailure | None = None,
) -> tuple[str, dict[str, Any]]:
    """Merge parsed fragments into a state-schema-v1 document; returns ``(status, state)``.

    ``parsed`` pairs each fragment (from :func:`parse_record`) with its command's record. The
    merged fragments are checked against the state schema once; a fragment holding a value the
    schema refuses is left out and its record becomes a ``parse_error`` naming the value.

    Status: the connect failure's when the device could not be logged into; ``ok`` when every
    command gave a parsed answer; ``error`` when none did; ``partial`` otherwise.
    """
    merged, refused = checked_merge([fragment for _, fragment in parsed])
    for index, problem in refused.items():
        record = parsed[index][0]
        record.status = "parse_error"
        record.message = str(ParseError(device.platform, record.command, SCHEMA_EXPECTED, problem))
    errors: list[dict[str, Any]] = []
    if failure is not None:
        errors.append({"command": None, "kind": failure.kind, "message": failure.message})
        status = failure.status
    else:
        for r in records:
            if r.status not in ("ok", NOT_IN_RELEASE) and not not_enabled(r):
                errors.append(
                    {"command": r.command, "kind": _ERROR_KIND[r.status], "message": r.message or r.status}
                )
        good = sum(1 for r in records if r.status == "ok")
        status = "ok" if not errors else ("partial" if good else "error")
    body = PLATFORMS[profile.platform].finish(merged)
    state: dict[str, Any] = {
        "schema": SCHEMA_ID,
        "name": device.name,
        "platform": device.platform,
        "role": device.role,
        "status": status,
        "errors": errors,
        "collected_at": collected_at,
    }
    unsupported = dict(PLATFORMS[device.platform].unsupported)
    for r in records:  # what the device's release lacks is unsupported there, with the reason
        rel = releases_of(device.platform, r.command) if r.status == NOT_IN_RELEASE else None
        for path in rel.feeds if rel is not None else ():
            unsupported.setdefault(path, r.message or NOT_IN_RELEASE)
        matched = match_command(device.platform, r.command) if not_enabled(r) else None
        for path in matched[0].only_source_of if matched is not None else ():
            unsupported.setdefault(path, f"{r.command}: {r.message}")
    if unsupported:  # what this source can never give: rules needing it are 'skipped', not 'error'
        state["unsupported"] = unsupported
    for key, value in body.items():
        if key not in state:
            state[key] = value
    return status, state


def device_release(device: Device) -> str | None:
    """The NOS release the inventory gives a device (``fabline_os_version``, e.g. ``5.9.1``), or None."""
    value = device.vars.get(RELEASE_VAR)
    return (
        str(value) if isinstance(value, (str, int, float)) and not isinstance(value, bool) and value else None
    )


# ---------------------------------------------------------------------------------------------
# which interfaces and RDMA devices get the per-interface commands


def select_interfaces(
    device: Device, profile: Profile, by_command: Mapping[str, Mapping[str, Any]]
) -> tuple[list[str], str]:
    """The interfaces to inspect, and where the list came from (for the manifest/docs).

    Hosts: the inventory's ``rail_interfaces`` when set, else the interfaces of the first of the
    run plan's ``interface_sources`` that lists any (Linux: the RDMA netdevs, else the physical
    ones). Switches: every reported interface the profile's pattern accepts, except
    administratively down ones.
    """
    if not profile.interface_commands:
        return [], "none"
    if PLATFORMS[profile.platform].kind == "host":
        rail = device.vars.get("rail_interfaces")
        if isinstance(rail, str):
            rail = [p.strip() for p in rail.split(",") if p.strip()]
        if isinstance(rail, list) and rail:
            return [str(x) for x in rail], "inventory rail_interfaces"
        found: list[str] = []
        label = "none"
        for source in profile.interface_sources:
            listed = (by_command.get(source.command) or {}).get("interfaces") or {}
            found = sorted(
                n for n, b in listed.items() if isinstance(b, dict) and (b.get("nic") or {}).get(source.needs)
            )
            label = source.label
            if found:
                break
        return found, label
    merged = merge_fragments(by_command.values())
    names = [
        n
        for n, b in (merged.get("interfaces") or {}).items()
        if profile.wants_interface(n) and not (isinstance(b, dict) and b.get("admin_up") is False)
    ]
    return names, "device interfaces"


def rdma_devices(
    fragments: Iterable[Mapping[str, Any]], interfaces: Iterable[str], complete: bool = True
) -> list[str] | None:
    """RDMA devices behind the inspected interfaces, from parsed fragments in run order.

    Each interface's ``nic.rdma_device`` is the last one a fragment names (as when merged). With
    ``complete`` (every source parsed) an interface may lack one, and when none has one every
    RDMA device the host listed (``host.rdma_devices``) is used; without it, None unless every
    interface has one (the plan then waits for more outputs).

    Example:
        >>> frags = [{"interfaces": {"eth0": {"nic": {"rdma_device": "mlx5_0"}}}},
        ...          {"host": {"rdma_devices": {"mlx5_0": {}, "mlx5_1": {}}}}]
        >>> rdma_devices(frags, ["eth0"]), rdma_devices(frags, ["eth0", "eth1"], complete=False)
        (['mlx5_0'], None)
        >>> rdma_devices(frags, ["eth9"])
        ['mlx5_0', 'mlx5_1']
    """
    by_interface: dict[str, str] = {}
    listed: set[str] = set()
    for fragment in fragments:
        for name, body in (fragment.get("interfaces") or {}).items():
            nic = body.get("nic") if isinstance(body, dict) else None
            dev = nic.get("rdma_device") if isinstance(nic, dict) else None
            if isinstance(dev, str):
                by_interface[name] = dev
        listed.update(((fragment.get("host") or {}).get("rdma_devices") or {}).keys())
    names = list(interfaces)
    if not complete and any(n not in by_interface for n in names):
        return None
    found: list[str] = []
    for name in names:
        dev = by_interface.get(name)
        if dev is not None and dev not in found:
            found.append(dev)
    return found or sorted(listed)


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


@dataclass
class Gathered:
    """What a device's session brought back, before parsing; crosses to the finishing process.

    It holds no credentials: outputs are redacted as they arrive and the device is a
    :class:`DeviceRef`. ``outputs`` maps a record's index to the output still to be parsed;
    ``fragments`` holds the outputs the command plan needed parsed already (and the record's
    status says how that went).
    """

    device: DeviceRef
    records: list[CommandRecord] = field(default_factory=list)
    outputs: dict[int, Output] = field(default_factory=dict)
    fragments: dict[int, dict[str, Any] | None] = field(default_factory=dict)
    raw: dict[str, str] = field(default_factory=dict)
    failure: tuple[str, str, str] | None = None  # (status, kind, message) of a connect failure
    attempts: int = 1
    started_at: str = ""
    duration_s: float = 0.0


#: The inventory variable naming the prefix whose ECMP fan-out a switch is asked about.
ECMP_PREFIX_VAR = "fabline_ecmp_prefix"


def probe_prefixes(device: Device, profile: Profile) -> list[str]:
    """The ECMP probe prefix of a device (``fabline_ecmp_prefix``), normalised; none when unset.

    The value becomes part of a command line, so only a valid IP prefix is used.

    Raises:
        ValueError: The variable is set but is not an IP prefix (the message names it).
    """
    if not profile.route_commands:
        return []
    value = device.vars.get(ECMP_PREFIX_VAR)
    if value is None or value == "":
        return []
    try:
        return [str(ipaddress.ip_network(str(value).strip(), strict=False))]
    except ValueError:
        raise ValueError(f"{ECMP_PREFIX_VAR} {str(value)[:60]!r} is not an IP prefix") from None


def collect_device(
    device: Device,
    open_session: SessionFactory,
    retry: RetryPolicy = RetryPolicy(),
    sleep: Callable[[float], None] = time.sleep,
) -> DeviceResult:
    """Log into one device, run its profile and build its state. Never raises for device problems."""
    return finish_device(gather_device(device, open_session, retry, sleep))


def gather_device(
    device: Device,
    open_session: SessionFactory,
    retry: RetryPolicy = RetryPolicy(),
    sleep: Callable[[float], None] = time.sleep,
) -> Gathered:
    """Log into one device and run its profile; parse only what the command plan needs.

    Never raises for device problems. :func:`finish_device` parses the rest and builds the state,
    so a collection can do that in another process while this thread talks to the next device.
    """
    profile = PROFILES[device.platform]
    started = time.monotonic()
    ref = DeviceRef(device.name, device.platform, device.role)
    gathered = Gathered(ref, started_at=now_iso())
    failure: ConnectFailure | None = None
    session: Session | None = None
    while True:
        try:
            session = open_session(device, profile)
            failure = None
            break
        except ConnectFailure as exc:
            failure = exc
            if not exc.retry or gathered.attempts > retry.retries:
                break
            sleep(retry.delay(gathered.attempts + 1))
            gathered.attempts += 1
    if session is None:
        assert failure is not None
        gathered.failure = (failure.status, failure.kind, redact(failure.message, device.password))
        gathered.duration_s = time.monotonic() - started
        return gathered
    run = _Run(device, profile, session, gathered)
    try:
        # Commands only some releases have are sent only to those: the release comes from the
        # inventory or, failing that, from the device's own answer to the first batch. Until it
        # is known, a command later releases removed, or one only newer releases have (unless it
        # is what tells the release), waits and goes with the per-interface ones (no extra round
        # trip); when the device does not tell its release either, it is tried then (an older
        # device answers 'unavailable').
        release = device_release(device)
        device_commands, skipped = for_release(profile.platform, profile.device_commands, release)
        deferred = [
            c
            for c in device_commands
            if release is None and (removed_later(profile.platform, c) or added_later(profile.platform, c))
        ]
        run.commands([c for c in device_commands if c not in deferred] + run.declared())
        restricted = deferred or any(
            release_restricted(profile.platform, t)
            for t in (*profile.interface_commands, *profile.route_commands)
        )
        if release is None and restricted:
            release = run.release()
            deferred, late = for_release(profile.platform, deferred, release)
            skipped += late
        templates, late = for_release(profile.platform, profile.interface_commands, release)
        gathered.records.extend(skipped + late)
        interfaces, _source = select_interfaces(device, profile, run.planning_view())
        per_interface = deferred + run.expand(templates, "interface", interfaces)
        # The ECMP probe goes with the per-interface commands: one round trip, not one more.
        routes, late = for_release(profile.platform, profile.route_commands, release)
        gathered.records.extend(late)
        try:
            per_interface += run.expand(routes, "prefix", probe_prefixes(device, profile))
        except ValueError as exc:
            run.records.extend(
                CommandRecord(t.replace("{prefix}", "?"), "refused", message=str(exc)) for t in routes
            )
        # The RDMA commands go with the per-interface ones (one round trip fewer) when the device
        # commands already name every interface's RDMA device; else they wait for those outputs.
        early = None
        if profile.rdma_commands:
            early = run.rdma_plan(interfaces, complete=False)
            if early is not None:
                per_interface += run.expand(profile.rdma_commands, "rdma_device", early)
        run.commands(per_interface)
        if profile.rdma_commands and early is None and not run.dead:
            devices = run.rdma_plan(interfaces, complete=True) or []
            run.commands(run.expand(profile.rdma_commands, "rdma_device", devices))
    finally:
        session.close()
    gathered.duration_s = time.monotonic() - started
    return gathered


def finish_device(gathered: Gathered) -> DeviceResult:
    """Parse what is left of a gathered device, in command order, and assemble its state."""
    ref = gathered.device
    profile = PROFILES[ref.platform]
    if gathered.failure is not None:
        status_, kind, message = gathered.failure
        failure = ConnectFailure(status_, kind, message, retry=False)
        status, state = assemble_state(ref, profile, [], [], gathered.started_at, failure)
        return DeviceResult(
            ref.name, ref.platform, ref.role, status, state,
            attempts=gathered.attempts, started_at=gathered.started_at, duration_s=gathered.duration_s,
        )  # fmt: skip
    parsed = []
    for index, record in enumerate(gathered.records):
        if index in gathered.fragments:
            fragment = gathered.fragments[index]
        elif index in gathered.outputs:
            fragment = parse_record(ref.platform, record, gathered.outputs[index])
        else:
            continue
        if fragment is not None:
            parsed.append((record, fragment))
    status, state = assemble_state(ref, profile, parsed, gathered.records, gathered.started_at)
    return DeviceResult(
        ref.name, ref.platform, ref.role, status, state, gathered.raw, gathered.records,
        attempts=gathered.attempts, started_at=gathered.started_at, duration_s=gathered.duration_s,
    )  # fmt: skip


class _Planning(Mapping[str, dict[str, Any]]):
    """A device's parsed outputs by command line, parsed when the command plan first looks."""

    def __init__(self, run: _Run) -> None:
        self.run = run

    def __getitem__(self, command: str) -> dict[str, Any]:
        index = self.run.index.get(command)
        fragment = self.run.parse(index) if index is not None else None
        if fragment is None:
            raise KeyError(command)
        return fragment

    def __iter__(self) -> Iterator[str]:
        return (cmd for cmd in list(self.run.index) if cmd in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)


class _Run:
    """The command loop of one device session."""

    def __init__(self, device: Device, profile: Profile, session: Session, gathered: Gathered) -> None:
        self.device = device
        self.profile = profile
        self.session = session
        self.secrets = (device.password,)
        self.gathered = gathered
        self.records = gathered.records
        self.index: dict[str, int] = {}  # command line -> its record, for outputs kept
        self.dead: str | None = None
        self._used: set[str] = set()

    def parse(self, index: int) -> dict[str, Any] | None:
        """Parse one kept output now (the command plan needs it); cached for the state."""
        g = self.gathered
        if index not in g.fragments:
            g.fragments[index] = parse_record(
                self.profile.platform, self.records[index], g.outputs.pop(index)
            )
            if self.records[index].message:
                self.records[index].message = redact(self.records[index].message or "", *self.secrets)
        return g.fragments[index]

    def release(self) -> str | None:
        """The NOS release the device reported so far (``facts.os_version``), or None."""
        for fragment in self.planning_view().values():
            version = (fragment.get("facts") or {}).get("os_version")
            if isinstance(version, str) and version:
                return version
        return None

    def rdma_plan(self, interfaces: list[str], complete: bool) -> list[str] | None:
        """The RDMA devices to run the RDMA commands for (see :func:`rdma_devices`).

        The host's device listing is parsed only when no chosen interface names a device.
        """
        found = rdma_devices(self.parsed(self.profile.rdma_sources), interfaces, complete)
        if found == [] and (complete or not interfaces):
            found = rdma_devices(self.parsed(self.profile.rdma_listing), [])
        return found

    def planning_view(self) -> Mapping[str, dict[str, Any]]:
        """The parsed outputs by command line, each parsed only if the plan reads it."""
        return _Planning(self)

    def parsed(self, templates: Iterable[str]) -> list[dict[str, Any]]:
        """The fragments of the kept outputs of these command templates, in run order."""
        names = set(templates)
        out = []
        for command, index in self.index.items():
            matched = match_command(self.profile.platform, command)
            if matched is not None and matched[0].template in names:
                fragment = self.parse(index)
                if fragment is not None:
                    out.append(fragment)
        return out

    def declared(self) -> list[str]:
        """The plan's ``var_commands`` for the values the device's inventory variables list."""
        out: list[str] = []
        for var, template in self.profile.var_commands:
            raw = self.device.vars.get(var)
            values = [p.strip() for p in raw.split(",")] if isinstance(raw, str) else raw
            if not isinstance(values, list):
                continue
            param = re.findall(r"\{(\w+)\}", template)[0]
            out += self.expand((template,), param, [str(v) for v in values if str(v).strip()])
        return out

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
        if not sudo_enabled(self.device.vars) and any(c.startswith(ROOT_PREFIX) for c in commands):
            # Root-only reads the inventory does not enable: recorded, never sent.
            root = [c for c in commands if c.startswith(ROOT_PREFIX)]
            self.records.extend(CommandRecord(c, "unavailable", message=NO_SUDO) for c in root)
            commands = [c for c in commands if not c.startswith(ROOT_PREFIX)]
            if not commands:
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
                    record.status = (
                        outcome.kind if outcome.kind in ("command_timeout", "output_too_large") else "dropped"
                    )
                    record.message = outcome.message
                    self.records.append(record)
                    if outcome.fatal:
                        self.dead = f"session unusable after {outcome.kind.replace('_', ' ')} on {cmd!r}"
                        break
                    continue
                # Redact what is stored and shown, never what is parsed: a password that is a
                # common token ('dscp', '9000') would otherwise rewrite the device's answer.
                text = redact(outcome.text, *self.secrets)
                record.file = unique_file(cmd, self._used)
                record.exit_code = outcome.exit_code
                self.gathered.raw[record.file] = text
                index = len(self.records)
                self.records.append(record)
                stderr = redact(outcome.stderr, *self.secrets)
                self.index[cmd] = index
                if text == outcome.text:
                    self.gathered.outputs[index] = Output(text, outcome.exit_code, stderr)
                else:
                    # The secret is in the output: parse it here, where the secret is known, and
                    # redact the fragment's strings, so nothing that crosses to the finishing
                    # process (Gathered) holds it.
                    self.gathered.outputs[index] = Output(outcome.text, outcome.exit_code, stderr)
                    self.parse(index)
                    self.gathered.fragments[index] = redact_strings(
                        self.gathered.fragments[index], self.secrets
                    )
        finally:
            close = getattr(results, "close", None)
            if close is not None:
                close()
        for cmd in commands[done:]:
            self.records.append(CommandRecord(cmd, "skipped", message=f"not run: {self.dead}"))
