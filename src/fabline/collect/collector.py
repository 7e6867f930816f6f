"""The collection run: a bounded pool over the inventory's devices, writing the snapshot as it goes.

At most ``workers`` devices are in flight; work is submitted as slots free up, so a 10k-device
inventory never becomes 10k queued tasks. The SSH threads only gather; each gathered device goes to
the finisher (:mod:`fabline.collect.finisher`), which parses it and writes its files atomically,
and it counts as done once they are on disk. The manifest is rewritten at most every couple of
seconds and at the end, also after Ctrl-C.
"""

from __future__ import annotations

import dataclasses
import math
import queue
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fabline import __version__
from fabline.collect.defaults import DEFAULT_COMMAND_TIMEOUT
from fabline.collect.device import DeviceRef, DeviceResult, Gathered, RetryPolicy, gather_device, now_iso
from fabline.collect.eapi import EapiSession, TlsPolicy, eapi_port, wants_eapi
from fabline.collect.finisher import Finisher
from fabline.collect.hostkeys import HostKeyStore
from fabline.collect.profiles import PROFILES, Profile
from fabline.collect.transports import (
    DEFAULT_MAX_OUTPUT,
    ConnectOptions,
    ExecSession,
    LiveSockets,
    NetmikoSession,
    Session,
)
from fabline.collect.writer import (
    MANIFEST_SCHEMA,
    read_entry,
    read_manifest,
    write_digests,
    write_json_atomic,
)
from fabline.errors import ConfigError
from fabline.inventory import Device
from fabline.paths import under
from fabline.perf import GcSweeper
from fabline.state import UNREADABLE_STATUSES, StateError, load_state_file

DEFAULT_WORKERS = 32

#: Collects ``todo`` somewhere else and writes each finished device into ``out`` (the snapshot),
#: calling ``report`` once its files are on disk; returns warnings about the run itself.
Backend = Callable[[list[Device], Path, Callable[[DeviceResult], None]], list[str]]


@dataclass(frozen=True)
class CollectOptions:
    """Settings of one collection run (the ``fabline collect`` options).

    Attributes:
        workers: Devices collected at once.
        timeout: Seconds for the whole login (TCP connect to the first prompt), and the most a
            command may stay silent.
        retries: Extra connect attempts after a connect failure (never after an auth failure).
        pace: Minimum seconds between two commands on one device.
        host_key_policy: ``accept-new`` (trust on first use), ``strict`` or ``ignore``.
        known_hosts: The known_hosts file (None: first-seen keys are kept for this run only, in memory;
            the CLI default is ``./.fabline/known_hosts``).
        default_port: SSH port for devices without ``ansible_port``.
        command_timeout: Total seconds one command may take (a device's ``fabline_command_timeout``
            overrides it).
        max_output: Most bytes one command, or one batch of commands sent together, may print (a
            device's ``fabline_max_output`` overrides it).
    """

    workers: int = DEFAULT_WORKERS
    timeout: float = 30.0
    retries: int = 2
    pace: float = 0.0
    host_key_policy: str = "accept-new"
    known_hosts: Path | None = None
    default_port: int = 22
    command_timeout: float = DEFAULT_COMMAND_TIMEOUT
    max_output: int = DEFAULT_MAX_OUTPUT


#: Smallest --max-output: below this even a device's version banner would not fit.
MIN_MAX_OUTPUT = 4096


def check_options(options: CollectOptions) -> None:
    """Refuse settings that would disable a bound: NaN, infinite, zero or negative values.

    Example:
        >>> check_options(CollectOptions(timeout=float("nan")))
        Traceback (most recent call last):
        ...
        fabline.errors.ConfigError: --timeout must be a positive, finite number of seconds, got nan

    Raises:
        ConfigError: The first bad option, named as on the command line.
    """
    for flag, value in (("--timeout", options.timeout), ("--command-timeout", options.command_timeout)):
        if not math.isfinite(value) or value <= 0:
            raise ConfigError(f"{flag} must be a positive, finite number of seconds, got {value:g}")
    if not math.isfinite(options.pace) or options.pace < 0:
        raise ConfigError(f"--pace must be 0 or a positive, finite number of seconds, got {options.pace:g}")
    if options.workers < 1:
        raise ConfigError(f"--workers must be at least 1, got {options.workers}")
    if options.retries < 0:
        raise ConfigError(f"--retries must be 0 or more, got {options.retries}")
    if options.max_output < MIN_MAX_OUTPUT:
        raise ConfigError(f"--max-output must be at least {MIN_MAX_OUTPUT} bytes, got {options.max_output}")
    if not 0 < options.default_port < 65536:
        raise ConfigError(f"default SSH port must be 1-65535, got {options.default_port}")


def parse_size(text: str | int) -> int:
    """A byte count: a number, optionally with a binary suffix (``K``, ``M``, ``G``, ``KiB``...).

    Example:
        >>> parse_size("16M"), parse_size("512KiB"), parse_size(4096), parse_size("1g")
        (16777216, 524288, 4096, 1073741824)

    Raises:
        ValueError: Not a byte count.
    """
    if isinstance(text, bool):
        raise ValueError(f"not a byte count: {text!r}")
    if isinstance(text, int):
        return text
    raw = str(text).strip()
    units = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}
    low = raw.lower().removesuffix("ib").removesuffix("b")
    unit = low[-1:] if low[-1:] in ("k", "m", "g") else ""
    number = low[: len(low) - len(unit)].strip()
    if not number.isdigit() or len(number) > 15:
        raise ValueError(f"not a byte count: {raw!r} (use e.g. 16M or 1048576)")
    return int(number) * units[unit]


def device_limits(device: Device, options: CollectOptions) -> tuple[float, int]:
    """The device's command deadline and output cap: its inventory vars, else the run's options.

    ``fabline_command_timeout`` (seconds) and ``fabline_max_output`` (bytes, ``16M`` style) let a
    slow or verbose device have its own bounds.

    Raises:
        ConfigError: A value that is not a positive, finite number of seconds or a byte count of
            at least 4 KiB, naming the host and the variable.
    """
    seconds, size = options.command_timeout, options.max_output
    value = device.vars.get("fabline_command_timeout")
    if value is not None:
        try:
            seconds = float(value) if not isinstance(value, bool) else math.nan
        except (TypeError, ValueError):
            seconds = math.nan
        if not math.isfinite(seconds) or seconds <= 0:
            raise ConfigError(
                f"host {device.name!r}: fabline_command_timeout must be a positive, finite number of "
                f"seconds, got {value!r}",
                key="fabline_command_timeout",
            )
    value = device.vars.get("fabline_max_output")
    if value is not None:
        try:
            size = parse_size(value)
        except ValueError:
            size = -1
        if size < MIN_MAX_OUTPUT:
            raise ConfigError(
                f"host {device.name!r}: fabline_max_output must be a byte count of at least "
                f"{MIN_MAX_OUTPUT} (e.g. 16M), got {value!r}",
                key="fabline_max_output",
            )
    return seconds, size


@dataclass
class CollectSummary:
    """What a run did: counts by device status, and where it wrote."""

    out: Path
    run_id: str
    collected: int = 0
    skipped_done: int = 0
    by_status: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0
    failed: list[tuple[str, str, str]] = field(default_factory=list)  # (device, status, first error)
    warnings: list[str] = field(default_factory=list)  # about the run itself, not a device

    @property
    def line(self) -> str:
        """One-line summary.

        Example:
            >>> s = CollectSummary(Path("snap"), "r1", collected=3, by_status=Counter(ok=2, timeout=1), seconds=1.5)
            >>> s.line
            'collected 3 devices in 1.5 s: ok 2, timeout 1 -> snap'
        """
        parts = ", ".join(f"{k} {v}" for k, v in sorted(self.by_status.items(), key=lambda kv: kv[0] != "ok"))
        resumed = f" ({self.skipped_done} already done)" if self.skipped_done else ""
        return f"collected {self.collected} devices{resumed} in {self.seconds:.1f} s: {parts or 'nothing'} -> {self.out}"


def first_error(errors: list[dict[str, Any]]) -> str:
    """The first error of a device as one line, naming its command, with a count of the others.

    Example:
        >>> first_error([{"command": "lldpctl -f json", "kind": "unavailable", "message": "command not found"},
        ...              {"command": "lsmod", "kind": "parse", "message": "binary output"}])
        'lldpctl -f json: command not found (and 1 more)'
    """
    err = errors[0]
    text = f"{err['command']}: {err['message']}" if err.get("command") else str(err.get("message", ""))
    return text + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else "")


class Progress:
    """Progress reporting interface: a rich bar on a terminal, log lines otherwise."""

    def start(self, total: int) -> None:
        """Called once before the first device."""

    def device_done(self, result: DeviceResult) -> None:
        """Called as each device finishes (from the collecting thread)."""

    def finish(self) -> None:
        """Called once at the end."""


class LineProgress(Progress):
    """One plain log line per finished device (for logs and CI)."""

    def __init__(self, emit: Callable[[str], None]) -> None:
        self.emit = emit
        self.total = 0
        self.done = 0

    def start(self, total: int) -> None:
        """Remember the total."""
        self.total = total

    def device_done(self, result: DeviceResult) -> None:
        """Print ``[n/total] device status (commands, seconds)`` with the first error if any."""
        self.done += 1
        errors = result.state.get("errors") or []
        first = f": {first_error(errors)}" if errors else ""
        self.emit(
            f"collect [{self.done}/{self.total}] {result.name} {result.status} "
            f"({result.command_count} commands, {result.duration_s:.1f} s){first}"
        )


class RichProgress(Progress):
    """A rich progress bar: devices done, failures, elapsed time and ETA."""

    def __init__(self) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.progress import Progress as Bar

        self.bar = Bar(
            TextColumn("collect"), BarColumn(), MofNCompleteColumn(), TextColumn("failed {task.fields[failed]}"),
            TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn(), transient=False,
        )  # fmt: skip
        self.failed = 0
        self.task: Any = None

    def start(self, total: int) -> None:
        """Show the bar."""
        self.bar.start()
        self.task = self.bar.add_task("collect", total=total, failed=0)

    def device_done(self, result: DeviceResult) -> None:
        """Advance the bar."""
        if result.status != "ok":
            self.failed += 1
        self.bar.update(self.task, advance=1, failed=self.failed)

    def finish(self) -> None:
        """Stop the bar."""
        self.bar.stop()


def open_session(
    device: Device,
    transport: str,
    device_type: str | None,
    store: HostKeyStore,
    options: ConnectOptions,
    shell: bool = False,
) -> Session:
    """Open the session the platform's profile names (``exec``/``netmiko``: SSH,
    :mod:`fabline.collect.transports`; ``eapi``: the device's HTTP API, :mod:`fabline.collect.eapi`;
    ``napalm``: a NAPALM driver's getters, :mod:`fabline.collect.getters`).

    Raises:
        ConnectFailure: The device could not be logged into.
    """
    if transport == "exec":
        return ExecSession(device, store, options)
    if transport == "eapi":
        return EapiSession(device, options, device.platform)
    if transport == "napalm":
        from fabline.collect.getters import NapalmSession  # NAPALM's stack only when a device uses it

        return NapalmSession(device, options)
    if transport == "netmiko" and device_type:
        return NetmikoSession(device, device_type, store, options, scripts=shell)
    raise ValueError(f"unknown transport {transport!r}")


def default_session_factory(
    options: CollectOptions, sessions: LiveSockets | None = None
) -> Callable[[Device, Profile], Session]:
    """Open real SSH sessions with the run's host-key store, timeouts and output cap.

    ``sessions`` tracks every open socket, so an interruption can close them all at once.
    """
    store = HostKeyStore(options.known_hosts, options.host_key_policy)
    connect = ConnectOptions(
        timeout=options.timeout, pace=options.pace, default_port=options.default_port,
        command_timeout=options.command_timeout, max_output=options.max_output, sessions=sessions,
    )  # fmt: skip

    def factory(device: Device, profile: Profile) -> Session:
        seconds, size = device_limits(device, options)
        mine = connect
        if (seconds, size) != (connect.command_timeout, connect.max_output):
            mine = dataclasses.replace(connect, command_timeout=seconds, max_output=size)
        transport = "eapi" if wants_eapi(device, profile.httpapi) else profile.transport
        return open_session(device, transport, profile.device_type, store, mine, profile.shell)

    return factory


def _done_devices(out: Path) -> dict[str, dict[str, Any]]:
    """Devices of an earlier run that need no new collection (a readable state whose status is
    usable), with their states.
    """
    done = {}
    for path in under(out, "state").glob("*.json"):
        try:
            doc = load_state_file(path)
        except StateError:
            continue
        if doc.get("status", "ok") not in UNREADABLE_STATUSES:
            done[path.stem] = doc
    return done


def _kept_entries(out: Path, done: dict[str, dict[str, Any]], previous: Any) -> dict[str, Any]:
    """Manifest entries of the devices a resumed run keeps, rebuilt from disk where the earlier
    manifest lacks them (a run killed between two manifest writes).

    The entry written with the device's files (``manifest.d/``) is used; failing that (a snapshot
    from an older fabline), one is made from the state, without command records.
    """
    previous = previous if isinstance(previous, dict) else {}
    kept: dict[str, Any] = {}
    for name in sorted(done):
        entry = previous.get(name)
        if not isinstance(entry, dict):
            entry = read_entry(out, name)
        if entry is None:
            state = done[name]
            entry = {
                "platform": state.get("platform"), "role": state.get("role"), "status": state.get("status", "ok"),
                "started_at": state.get("collected_at"), "errors": state.get("errors", []), "commands": [],
                "rebuilt": f"from state/{name}.json: the command records were lost",
            }  # fmt: skip
        kept[name] = entry
    return kept


def collect(
    devices: Iterable[Device],
    out: Path,
    options: CollectOptions = CollectOptions(),
    *,
    inventory_source: str = "",
    limit: str | None = None,
    resume: bool = False,
    progress: Progress | None = None,
    session_factory: Callable[[Device, Profile], Session] | None = None,
    backend: Backend | None = None,
) -> CollectSummary:
    """Collect every device into the snapshot folder ``out``.

    With ``resume``, devices whose state in ``out`` is already usable (``ok`` or ``partial``) are
    kept as they are and only the missing or unreadable ones are collected. With ``backend`` the
    devices are collected elsewhere (:mod:`fabline.collect.distributed`) and this process still
    writes the snapshot: same layout, same manifest.

    Raises:
        ConfigError: Bad options, or a device whose platform has no collection profile.
    """
    check_options(options)
    devices = list(devices)
    for d in devices:
        if d.platform not in PROFILES:
            raise ConfigError(f"host {d.name}: platform {d.platform!r} has no collection profile")
        device_limits(d, options)  # a bad per-device bound fails before any session opens
        if PROFILES[d.platform].transport == "napalm":
            from fabline.collect.getters import driver_name

            if driver_name(d) == "eos":  # a bad driver name, fingerprint or CA file fails here, not later
                TlsPolicy.of(d).context()
                eapi_port(d)
        elif wants_eapi(d, PROFILES[d.platform].httpapi):
            TlsPolicy.of(d).context()  # a bad fingerprint or CA file fails before any session opens
            eapi_port(d)
    sessions = LiveSockets()
    factory = session_factory or default_session_factory(options, sessions)
    retry = RetryPolicy(retries=options.retries)
    progress = progress or Progress()
    started = time.monotonic()
    out.mkdir(parents=True, exist_ok=True)
    manifest_path = under(out, "manifest.json")
    for folder in ("raw", "state"):
        under(out, folder)  # a folder linking out of the snapshot stops the run before any write
    previous = read_manifest(out) if resume else None
    done = _done_devices(out) if resume else {}
    todo = slow_first([d for d in devices if d.name not in done])
    summary = CollectSummary(out, uuid.uuid4().hex[:12], skipped_done=len(devices) - len(todo))
    manifest: dict[str, Any] = {
        "schema": MANIFEST_SCHEMA,
        "run_id": summary.run_id,
        "fabline_version": __version__,
        "started_at": now_iso(),
        "finished_at": None,
        "complete": False,
        "inventory": inventory_source,
        "limit": limit,
        "resumed_from": (previous or {}).get("run_id") if resume else None,
        "options": {
            "workers": options.workers,
            "timeout_s": options.timeout,
            "command_timeout_s": options.command_timeout,
            "max_output_bytes": options.max_output,
            "retries": options.retries,
            "pace_s": options.pace,
            "host_key_policy": options.host_key_policy,
        },
        "devices": _kept_entries(out, done, (previous or {}).get("devices")) if resume else {},
    }
    lock = threading.Lock()
    next_write = [0.0]

    def save(final: bool = False) -> None:
        # Rewritten at most every 2 s, and never for more than a tenth of the time: a 10k-device
        # manifest (a million command records) takes a while to write.
        with lock:
            started = time.monotonic()
            if not final and started < next_write[0]:
                return
            write_json_atomic(manifest_path, manifest)
            write_digests(out, manifest["devices"])
            took = time.monotonic() - started
            next_write[0] = started + max(2.0, 10 * took)

    save(final=True)
    # Made before any collecting thread: with fork, its worker process starts now. A backend
    # parses elsewhere and needs none.
    finisher = Finisher(out) if backend is None else Finisher(out, use_processes=False)
    sweeper = GcSweeper()

    def report(result: DeviceResult) -> None:
        with lock:
            manifest["devices"][result.name] = result.manifest_entry()
        summary.collected += 1
        summary.by_status[result.status] += 1
        if result.status != "ok":
            errors = result.state.get("errors") or []
            summary.failed.append((result.name, result.status, first_error(errors) if errors else ""))
        progress.device_done(result)
        save()
        sweeper.tick()

    progress.start(len(todo))
    try:
        if backend is not None:
            summary.warnings.extend(backend(todo, out, report))
        else:
            _run(
                todo, options.workers, lambda d: _safe_gather(d, factory, retry, sessions), finisher, report,
                abort=sessions.close_all,
            )  # fmt: skip
        manifest["complete"] = True
    finally:
        finisher.close()
        sweeper.close()
        if finisher.lost_worker:
            summary.warnings.append(
                f"{finisher.lost_worker}; the rest was parsed and written in this process"
            )
        progress.finish()
        manifest["finished_at"] = now_iso()
        save(final=True)
        summary.seconds = time.monotonic() - started
    return summary


def slow_first(devices: list[Device]) -> list[Device]:
    """The devices in the order their sessions start: the slowest kinds first, else inventory order.

    An interactive switch CLI answers one command per round trip (EOS, NX-OS: about a second per
    switch) or prints megabytes of interface tables; a GPU server's exec channels take a fraction
    of a second. Started last, as inventory order often has it (the servers listed before the
    fabric), the switches ran almost alone at the end of a collection, and their large outputs
    were parsed after everything else; started first, the servers fill the gaps. The order
    changes no result: each device is collected, parsed and written on its own.

    Example:
        >>> from types import SimpleNamespace as D
        >>> order = slow_first([D(name="gpu1", platform="linux"), D(name="leaf1", platform="cumulus"),
        ...                     D(name="spine1", platform="arista_eos"), D(name="gpu2", platform="linux")])
        >>> [d.name for d in order]
        ['spine1', 'leaf1', 'gpu1', 'gpu2']
    """

    def rank(device: Device) -> int:
        profile = PROFILES[device.platform]
        if profile.transport != "netmiko":
            return 2
        return 1 if profile.shell else 0

    return sorted(devices, key=rank)


class Interrupted(Exception):
    """The run was interrupted while this device was being collected: it is not written."""


def _safe_gather(
    device: Device,
    factory: Callable[[Device, Profile], Session],
    retry: RetryPolicy,
    sessions: LiveSockets | None = None,
) -> Gathered:
    """gather_device, with a bug in it turned into the device's ``error`` state (the run goes on).

    A device whose sessions were closed by an interruption raises :class:`Interrupted`: what it
    gathered is incomplete, so it is left for ``--resume`` rather than written as a failure.
    """
    try:
        gathered = gather_device(device, factory, retry)
    except Exception as exc:
        from fabline.collect.transports import redact

        message = redact(f"internal error: {type(exc).__name__}: {exc}".splitlines()[0], device.password)
        return Gathered(
            DeviceRef(device.name, device.platform, device.role),
            failure=("error", "internal", message),
            started_at=now_iso(),
        )
    if sessions is not None and sessions.closed:
        raise Interrupted(device.name)
    return gathered


def _run(
    devices: list[Device],
    workers: int,
    gather: Callable[[Device], Gathered],
    finisher: Finisher,
    done: Callable[[DeviceResult], None],
    abort: Callable[[], None] = lambda: None,
) -> None:
    """Gather devices on at most ``workers`` threads, finish each as it comes, report each when written.

    On an interruption, devices not started are cancelled and ``abort`` closes the sessions in
    flight at once (those devices are left for ``--resume``); every device gathered before is
    still finished and reported before it returns.
    """
    gathering: set[Future[Gathered]] = set()
    finishing: set[Future[DeviceResult]] = set()
    # Futures report here as they complete: the loop waits on one queue, not on every future.
    completed: queue.SimpleQueue[Future[Any]] = queue.SimpleQueue()
    it = iter(devices)
    exhausted = False

    def handle(f: Future[Any], stopping: bool = False) -> None:
        if f in gathering:
            gathering.discard(f)
            if stopping and (f.cancelled() or f.exception() is not None):
                return  # interrupted itself: nothing was gathered
            submitted = finisher.submit(f.result())
            finishing.add(submitted)
            submitted.add_done_callback(completed.put)
        else:
            finishing.discard(f)
            if stopping and (f.exception() is not None):
                return  # the error that stopped the run is already on its way up
            done(f.result())

    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="fabline-collect") as pool:
        try:
            while not exhausted or gathering or finishing:
                while not exhausted and len(gathering) < workers:
                    device = next(it, None)
                    if device is None:
                        exhausted = True
                        break
                    future = pool.submit(gather, device)
                    gathering.add(future)
                    future.add_done_callback(completed.put)
                if not gathering and not finishing:
                    break  # nothing to gather (a --resume with every device done): nothing will complete
                handle(completed.get())
        except BaseException:
            for f in gathering:
                f.cancel()
            abort()
            while gathering or finishing:
                handle(completed.get(), stopping=True)
            raise
