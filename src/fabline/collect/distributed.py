"""Multi-site collection on Dask distributed: one collector per site, this process writes the snapshot.

``fabline collect ... --scheduler tcp://HOST:8786`` splits the inventory by site (the
``fabline_site`` variable, or the child groups of the Ansible group ``--site-group`` names). Each
site's devices become a few long Dask tasks, *shards* (:func:`collect_shard`): one per collector of
the site, pinned there with a worker resource (a site's collector is started with ``dask worker ...
--resources "site-a=1"``, and a shard asks for all of it). A shard runs the existing collector for
its devices, ``--workers`` at a time on threads of its own
(:func:`fabline.collect.collector._safe_gather`, then :func:`fabline.collect.device.finish_device`,
so parsing happens at the site too), and sends the devices back as they finish, their state
already serialized as the snapshot stores it (:class:`ShippedResult`), through a Dask queue at the
scheduler: the devices a collector finishes within half a second share one message
(:class:`_Sender`). This process stays the snapshot's one writer: it takes the devices from the
queue as they arrive, writes each (:func:`fabline.collect.finisher.write_result`) and reports it
to the ordinary collection run, so the layout, the manifest and ``--resume`` are the ones of a
local collection.

Why shards that stream, and not a task per device (as until session 7): a Dask task costs about ten
messages through the scheduler (submit, assign, started, finished, fetch, release...), about 6 ms
of CPU a device over the scheduler, the collector and the client; a queued device costs a share of
one put and of a batched get (docs/benchmarks.md). What a task per device gave is kept:

- results stream back as they finish, so nothing already received is lost when a collector dies
  later (what it loses is what it had not finished, or finished in its last half second), and
  memory stays bounded (the queue holds about :func:`queue_slots` devices; a collector waits while
  it is full);
- a collector that dies takes only the devices of its shard the client has not received; fabline
  puts exactly those in a new shard, once, for the same site (its own retry, whatever the
  scheduler's ``distributed.scheduler.allowed-failures``: with a setting above 0 the scheduler
  would run the whole shard again itself; fabline cancels that run, :class:`ShardStarted`, so a
  device is tried on at most two collectors either way);
- a collector runs one shard at a time, so at most ``--workers`` devices at once, like a local
  collection.

What crosses the scheduler holds no secret: the device's address, port, user, key-file path and
the variables the collector reads (:data:`COLLECTOR_VARS`), and for the password the *unrendered*
inventory text it comes from (``{{ lookup('env', 'FABRIC_PASSWORD') }}``), which the worker
renders in its own environment. A password written in clear in the inventory is refused with
``--scheduler`` (it would travel in clear); the check looks for the password as this process
resolves it in everything a task carries.

Dask is imported only here, and this module only when ``--scheduler`` is given.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import pickle
import queue
import re
import threading
import time
import uuid
from collections.abc import Callable, Collection, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from jinja2 import meta

from fabline.collect.collector import CollectOptions, _safe_gather, default_session_factory
from fabline.collect.device import (
    ECMP_PREFIX_VAR,
    DeviceRef,
    DeviceResult,
    Gathered,
    RetryPolicy,
    finish_device,
    now_iso,
)
from fabline.collect.finisher import write_result
from fabline.collect.profiles import Profile
from fabline.collect.transports import Session
from fabline.collect.writer import state_bytes, write_device
from fabline.errors import ConfigError, FablineError
from fabline.inventory import Device, HostVars, Inventory
from fabline.inventory.varstemplates import VarError, VarsTemplater
from fabline.perf import GcSweeper
from fabline.secret_keys import is_secret_key
from fabline.state import schema_fingerprint

#: The host variable that names a device's site.
SITE_VAR = "fabline_site"
#: The inventory variables the collector reads besides the connection ones (device.select_interfaces).
#: The inventory variables a collection itself reads (interface choice, the ECMP probe prefix).
COLLECTOR_VARS = ("rail_interfaces", ECMP_PREFIX_VAR)
_PASSWORD_KEYS = ("ansible_password", "ansible_ssh_pass")
# Dask parses "--resources site-a=1,gpu=2" on commas, blanks and '=': a site name is a plain word.
_SITE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
# How often the run looks at the scheduler's worker list (sites left without a collector): each
# look is a call the scheduler answers with every worker's details.
_WATCH_S = 2.0
# How long the client pauses when the queue was empty. It reads without waiting at the scheduler:
# a read that waits and times out there is logged by the scheduler as an error with a traceback.
_WAIT_S = 0.1
# How long a finished device may wait on its collector for others to share its message.
_LINGER_S = 0.5
# How long a collector waits before it looks again at a full queue (and checks it is still wanted).
_FULL_WAIT_S = 0.2
#: Collectors a device is tried on: the first, and fabline's one retry when that collector died.
TRIES = 2


class SchedulerUnavailable(FablineError):
    """The Dask scheduler named by ``--scheduler`` cannot be reached (one line, exit 2)."""


# ---------------------------------------------------------------------------------------------
# what a task carries


@dataclass(frozen=True)
class SecretRecipe:
    """How a site renders a device's password: the inventory's unrendered text, never the value.

    Attributes:
        key: ``ansible_password`` or ``ansible_ssh_pass``.
        raw: That variable and every host variable its template refers to, unrendered.
        magic: ``inventory_hostname``, ``inventory_hostname_short`` and ``group_names``.
    """

    key: str
    raw: Mapping[str, Any]
    magic: Mapping[str, Any]

    def resolve(self, host: str) -> str | None:
        """Render the password in this process's environment (the site's); None when empty.

        Raises:
            ConfigError: The template cannot be rendered here (the message names no value).
        """
        try:
            values = _templater().render_vars(host, self.raw, self.magic, dict)
        except VarError as exc:
            raise ConfigError(exc.message) from None
        value = values.get(self.key)
        return None if value is None or value == "" else str(value)


_site_templater: list[VarsTemplater] = []
_site_templater_lock = threading.Lock()


def _templater() -> VarsTemplater:
    """This process's one templater of the passwords' inventory text (a new one per device cost 2 ms).

    A :class:`~fabline.inventory.varstemplates.VarsTemplater` is a sandboxed Jinja2 environment
    that compiles each distinct text once: shared by the devices of every shard this collector
    runs, as the client shares one over a local collection's inventory. An ``env`` lookup is
    still read from the environment for each device (the templater never keeps its result).
    """
    with _site_templater_lock:
        if not _site_templater:
            _site_templater.append(VarsTemplater())
        return _site_templater[0]


@dataclass(frozen=True)
class RemoteDevice:
    """One device as a site collector receives it: no password, only how to find it at the site.

    Attributes:
        device: The device with ``password`` unset and only :data:`COLLECTOR_VARS` in ``vars``.
        site: The site whose collectors may run it (a Dask worker resource).
        secret: How the site renders the password, when the inventory sets one.
    """

    device: Device
    site: str
    secret: SecretRecipe | None = None

    def resolve(self) -> Device:
        """The device with its password rendered in this process's environment (on the worker)."""
        if self.secret is None:
            return self.device
        return replace(self.device, password=self.secret.resolve(self.device.name))


def site_of(device: Device, inventory: Inventory, site_group: str | None) -> str:
    """The site a device is collected from: a child group of ``site_group``, else ``fabline_site``.

    Raises:
        ConfigError: No site, two sites, or a site name Dask cannot use as a resource.
    """
    site: str | None = None
    if site_group is not None:
        children = inventory.groups[site_group].children
        found = [g for g in children if g in device.groups]
        if len(found) > 1:
            raise ConfigError(
                f"host {device.name!r} is in {len(found)} sites of --site-group {site_group} "
                f"({', '.join(found)}); a device is collected from one site"
            )
        site = found[0] if found else None
    if site is None:
        value = device.vars.get(SITE_VAR)
        site = None if value in (None, "") else str(value)
    if site is None:
        where = f"a child group of --site-group {site_group}, or " if site_group else ""
        raise ConfigError(
            f"host {device.name!r} has no site for --scheduler: put it in {where}set {SITE_VAR}",
            key=SITE_VAR,
        )
    if not _SITE_NAME.fullmatch(site):
        raise ConfigError(
            f"host {device.name!r}: site {site!r} is not a plain name (letters, digits, '_', '.', '-'), "
            "which a Dask worker resource needs",
            key=SITE_VAR,
        )
    return site


def secret_recipe(inventory: Inventory, device: Device) -> SecretRecipe | None:
    """The unrendered inventory text a site needs to render the device's password, or None.

    Raises:
        ConfigError: The password is written in clear in the inventory (it would cross the
            scheduler as it is): with ``--scheduler`` it must come from ``lookup('env', ...)``.
    """
    raw = inventory.host_vars(device.name)
    key = next((k for k in _PASSWORD_KEYS if raw.get(k) not in (None, "")), None)
    if key is None:
        return None
    needed: dict[str, Any] = {}
    stack = [key]
    env = VarsTemplater().env
    while stack:
        name = stack.pop()
        if name in needed or name not in raw:
            continue
        needed[name] = raw[name]
        for text in _strings(raw[name]):
            if "{{" in text or "{%" in text:
                with contextlib.suppress(Exception):  # a syntax error is reported by the site
                    stack.extend(meta.find_undeclared_variables(env.parse(text)))
    recipe = SecretRecipe(
        key,
        needed,
        {
            "inventory_hostname": device.name,
            "inventory_hostname_short": device.name.split(".", maxsplit=1)[0],
            "group_names": list(device.groups),
        },
    )
    secret = device.password
    if secret and any(secret in text for text in _strings(dict(needed))):
        raise ConfigError(
            f"host {device.name!r}: {key} is written in the inventory; with --scheduler a password must "
            "come from \"{{ lookup('env', 'NAME') }}\" so each site resolves it and it never crosses the "
            "scheduler",
            key=key,
        )
    return recipe


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


def remote_devices(
    inventory: Inventory, devices: list[Device], site_group: str | None
) -> dict[str, RemoteDevice]:
    """Every device as a site collector will receive it, by name (see :class:`RemoteDevice`).

    Raises:
        ConfigError: An unknown ``--site-group``, a device without a site, or a password in clear.
    """
    if site_group is not None and site_group not in inventory.groups:
        raise ConfigError(f"--site-group {site_group}: no such group in the inventory")
    out: dict[str, RemoteDevice] = {}
    for device in devices:
        kept = {k: device.vars[k] for k in COLLECTOR_VARS if k in device.vars and not is_secret_key(k)}
        bare = replace(device, password=None, vars=HostVars(kept))
        remote = RemoteDevice(bare, site_of(device, inventory, site_group), secret_recipe(inventory, device))
        if device.password and device.password.encode("utf-8") in pickle.dumps(remote):
            # The last guard: nothing a task carries may hold the password as resolved here.
            raise ConfigError(f"host {device.name!r}: its password would cross the scheduler; refused")
        out[device.name] = remote
    return out


# ---------------------------------------------------------------------------------------------
# the worker side


_factories: dict[CollectOptions, Callable[[Device, Profile], Session]] = {}
_factories_lock = threading.Lock()
#: Dask's statistical profiler on a worker: every 10 ms, on the worker's event loop, it walks the
#: stack of each busy task thread. A collector's task threads are 16-32 SSH sessions holding the
#: interpreter lock in turn; on a loaded machine the profiler then kept the event loop from
#: sending heartbeats for minutes (306 s and 592 s in two runs, docs/benchmarks.md) and the
#: scheduler removed the collector with its devices. A collector stops it on its first task.
_PROFILER_CALLBACKS = ("profile", "profile-cycle")
_profiler_stopped: set[str] = set()  # worker addresses
#: The devices this collector is collecting now, not yet sent back (what :func:`collecting_now` reports).
collecting: set[str] = set()


#: The devices of :data:`collecting` already finished, waiting in a shard's sender for their message.
sending: set[str] = set()


class _SharedSweeper:
    """The garbage-collector policy of a local collection (:class:`fabline.perf.GcSweeper`), on a collector.

    Left on, the cyclic collector's passes rescan the whole worker (Dask's objects, the parsers,
    every session's) over and over while the shard's threads parse; paused, with one pass every
    :attr:`~fabline.perf.GcSweeper.EVERY` finished devices that frees the sessions' cycles and
    freezes what survives, it looks only at what is new. Shards of several sites on one worker
    share one pause; the collector is back as it was once the last one ends.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.shards = 0
        self.sweeper: GcSweeper | None = None

    @contextlib.contextmanager
    def __call__(self) -> Iterator[Callable[[], None]]:
        """Pause the collector for one shard; yields the per-device tick."""
        with self.lock:
            self.shards += 1
            if self.sweeper is None:
                self.sweeper = GcSweeper()
            sweeper = self.sweeper
        try:
            yield sweeper.tick
        finally:
            with self.lock:
                self.shards -= 1
                if self.shards == 0 and self.sweeper is not None:
                    self.sweeper.close()
                    self.sweeper = None


_swept_gc = _SharedSweeper()


def collecting_now() -> list[str]:
    """The devices this process is collecting for a shard now, not yet sent back (``client.run`` it)."""
    return sorted(collecting)


def sending_now() -> list[str]:
    """The devices this process has finished and not yet sent back (``client.run`` it)."""
    return sorted(sending)


@dataclass
class ShippedResult(DeviceResult):
    """A finished device as a site collector sends it back: its files' contents, ready to write.

    The client writes ``state_json`` as it is (:func:`fabline.collect.writer.write_device`): it
    neither rebuilds the state document from the pickle (thousands of small objects, about a
    millisecond a device) nor serializes it again. ``state`` keeps only the status and errors,
    what the manifest entry and the progress report read. ``state_schema`` is the fingerprint of
    the state schema the collector's fabline validated it against (recorded with its digest).
    The command records come as the manifest entry lists them (``commands``; ``records`` is
    empty): plain dictionaries cost the client a third of the records' unpickling, and nothing
    to convert (twice: the entry beside the device's files and the manifest's).
    """

    state_json: bytes = b""
    state_schema: str = ""
    commands: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def of(cls, result: DeviceResult) -> ShippedResult:
        """``result`` with its state serialized as the snapshot stores it."""
        kept = {f.name: getattr(result, f.name) for f in fields(DeviceResult)}
        kept["state"] = {"status": result.state.get("status"), "errors": result.state.get("errors", [])}
        kept["records"] = []
        return cls(
            **kept,
            state_json=state_bytes(result.state),
            state_schema=schema_fingerprint(),
            commands=result.command_entries(),
        )

    def command_entries(self) -> list[dict[str, Any]]:
        """The command records as the collector converted them."""
        return self.commands

    @property
    def command_count(self) -> int:
        """How many commands the device was sent."""
        return len(self.commands)


@dataclass(frozen=True)
class Shard:
    """One long Dask task: some of a site's devices, collected by one collector, streamed back.

    Attributes:
        site: The site (a Dask worker resource: the task asks for all of it, so a collector
            started with ``--resources "site=1"`` runs one shard at a time).
        devices: The devices, collected ``--workers`` at a time on the collector's own threads.
        queue: The Dask queue (at the scheduler) the finished devices are put in as they finish,
            a few to a message (:class:`_Sender`), where a task per device cost about ten messages.
    """

    site: str
    devices: tuple[RemoteDevice, ...]
    queue: str


class ShardAbandoned(Exception):
    """The client no longer wants this shard (cancelled, or gone): stop starting devices."""


@dataclass(frozen=True)
class ShardStarted:
    """The first message of a shard: which collector runs it (a second one: the scheduler runs it again).

    With ``distributed.scheduler.allowed-failures`` above 0, the scheduler runs a shard whose
    collector died once more, whole, on another collector of the site. The client learns it from
    this message (or sees the collector gone first), cancels that run and puts only the devices
    it has not received in a new shard: fabline's one retry, as with the setting at 0.
    """

    key: str
    worker: str


def collect_shard(shard: Shard, options: CollectOptions) -> int:
    """Run on a site's Dask worker: collect and parse the shard's devices, stream them back finished.

    The devices are collected on ``--workers`` threads of the shard's own; each finished device
    (a :class:`ShippedResult`) goes to the shard's sender (:class:`_Sender`), which puts the
    devices finished meanwhile in the shard's Dask queue as one message (at most
    :func:`batch_size` devices, and no device waits more than :data:`_LINGER_S` for others to
    join it). A put returns once the scheduler holds it, so a device the client has not received
    is one this collector had not finished, or finished less than a moment before it died. Before
    starting each device the shard checks that the client still wants it (a cancelled task stops
    starting devices). The password is rendered here, in the worker's environment. Returns the
    number of devices sent.

    Raises:
        Exception: The first failure to send devices back (the shard stops starting devices).
    """
    from distributed import Queue, get_client, get_worker

    dask_worker = get_worker()
    key = dask_worker.get_current_task()
    worker = dask_worker.address
    with _factories_lock:
        factory = _factories.get(options)
        if factory is None:
            factory = _factories[options] = default_session_factory(options)
        first = worker not in _profiler_stopped
        _profiler_stopped.add(worker)
    if first:
        _stop_profiler(dask_worker)
    results: Any = Queue(shard.queue, client=get_client())  # type: ignore[no-untyped-call]

    def wanted() -> bool:
        ts = dask_worker.state.tasks.get(key)
        return ts is not None and ts.state != "cancelled"

    results.put(pickle.dumps(ShardStarted(str(key), worker), pickle.HIGHEST_PROTOCOL))
    sender = _Sender(results, batch_size(options), queue_items(options), wanted, shard.site)
    failures: list[BaseException] = []

    def one(remote: RemoteDevice, tick: Callable[[], None]) -> None:
        if failures or sender.failure is not None or not wanted():
            return
        name = remote.device.name
        collecting.add(name)
        try:
            sender.add(_collect_one(remote, factory, options, worker))
        except BaseException as exc:
            collecting.discard(name)
            failures.append(exc)
            raise
        tick()

    try:
        threads = max(1, min(options.workers, len(shard.devices)))
        with (
            _swept_gc() as tick,
            ThreadPoolExecutor(max_workers=threads, thread_name_prefix="fabline-collect") as pool,
        ):
            for future in [pool.submit(one, r, tick) for r in shard.devices]:
                with contextlib.suppress(BaseException):
                    future.result()
        sender.close()  # sends what is left; raises the first failure to send
    finally:
        sender.stop()
        with contextlib.suppress(Exception):
            results.close()
    if failures:
        raise failures[0]
    return sender.sent


class _Sender:
    """A shard's one sending thread: the devices finished meanwhile go to the queue as one message.

    The collecting threads hand each finished device over (:meth:`add`) and go on with the next
    one. The sender waits up to :data:`_LINGER_S` after the first device for ``batch`` devices to
    share a message, pickles them together and puts them in the queue: one message and one
    round trip to the scheduler for several devices, where one each cost the collector and the
    scheduler about as much again as the device's bytes (docs/benchmarks.md). The queue itself
    is unbounded at the scheduler: before each put the sender asks its size and waits while it
    holds ``limit`` messages (the client is behind), so a put never waits at the scheduler, where
    a put that times out is logged as an error. While ``2 x batch`` devices wait to be sent, the
    collecting threads wait too.
    """

    def __init__(self, results: Any, batch: int, limit: int, wanted: Callable[[], bool], site: str) -> None:
        self.results = results
        self.batch = batch
        self.limit = limit
        self.wanted = wanted
        self.site = site
        self.cond = threading.Condition()
        self.pending: list[ShippedResult] = []
        self.first_at = 0.0  # when the oldest device waiting was handed over
        self.closing = False
        self.failure: BaseException | None = None
        self.sent = 0
        self.thread = threading.Thread(target=self._run, name="fabline-send", daemon=True)
        self.thread.start()

    def add(self, result: ShippedResult) -> None:
        """Hand one finished device over to be sent (waits while ``2 x batch`` devices wait already).

        Raises:
            Exception: Sending failed; nothing more is sent.
        """
        with self.cond:
            while len(self.pending) >= 2 * self.batch and self.failure is None:
                self.cond.wait()
            if self.failure is not None:
                raise ShardAbandoned(self.site) from self.failure
            if not self.pending:
                self.first_at = time.monotonic()
            self.pending.append(result)
            sending.add(result.name)
            self.cond.notify_all()

    def close(self) -> None:
        """Send every device handed over, then stop.

        Raises:
            Exception: The first failure to send.
        """
        with self.cond:
            self.closing = True
            self.cond.notify_all()
        self.thread.join()
        if self.failure is not None:
            raise self.failure

    def stop(self) -> None:
        """Stop without sending what is left (the shard failed); a no-op after :meth:`close`."""
        if not self.thread.is_alive():
            return
        with self.cond:
            self.closing = True
            if self.failure is None:
                self.failure = ShardAbandoned(self.site)
            self.cond.notify_all()
        self.thread.join()
        for result in self.pending:
            sending.discard(result.name)
            collecting.discard(result.name)

    def _run(self) -> None:
        items: list[ShippedResult] = []
        try:
            while True:
                with self.cond:
                    while not self.pending and not self.closing:
                        self.cond.wait()
                    if self.failure is not None or not self.pending:
                        return
                    while len(self.pending) < self.batch and not self.closing:
                        left = self.first_at + _LINGER_S - time.monotonic()
                        if left <= 0:
                            break
                        self.cond.wait(left)
                    if self.failure is not None:
                        return
                    items, self.pending = self.pending[: self.batch], self.pending[self.batch :]
                    self.cond.notify_all()  # room for the collecting threads
                self._put(pickle.dumps(items, pickle.HIGHEST_PROTOCOL))
                self.sent += len(items)
                for result in items:
                    sending.discard(result.name)
                    collecting.discard(result.name)
                items = []
        except BaseException as exc:
            with self.cond:
                if self.failure is None:
                    self.failure = exc
                self.cond.notify_all()
            for result in items:  # not sent: the shard fails, the client retries them
                sending.discard(result.name)
                collecting.discard(result.name)

    def _put(self, payload: bytes) -> None:
        while self.results.qsize() >= self.limit:  # the client is behind: wait, unless it gave up on us
            if not self.wanted():
                raise ShardAbandoned(self.site)
            time.sleep(_FULL_WAIT_S)
        self.results.put(payload)


def _collect_one(
    remote: RemoteDevice, factory: Callable[[Device, Profile], Session], options: CollectOptions, worker: str
) -> ShippedResult:
    """Collect and parse one device on this collector: :class:`ShippedResult`, its state as bytes."""
    try:
        device = remote.resolve()
    except ConfigError as exc:
        ref = remote.device
        gathered = Gathered(
            DeviceRef(ref.name, ref.platform, ref.role),
            failure=("error", "collector", f"site {remote.site}: {exc}"),
            started_at=now_iso(),
        )
    else:
        gathered = _safe_gather(device, factory, RetryPolicy(retries=options.retries))
    result = finish_device(gathered)
    result.extra = {"site": remote.site, "collector": worker}
    return ShippedResult.of(result)


def queue_slots(options: CollectOptions) -> int:
    """Finished devices the scheduler holds for the client, about (a collector waits beyond that)."""
    return 4 * options.workers


def batch_size(options: CollectOptions) -> int:
    """Finished devices one queue message carries at most (``--workers`` / 2, 1 to 16)."""
    return max(1, min(16, options.workers // 2))


def queue_items(options: CollectOptions) -> int:
    """Messages the queue holds before a collector waits: :func:`queue_slots` devices in full messages.

    Each collector looks before it puts, so the queue may hold one more message per collector.
    """
    return max(2, -(-queue_slots(options) // batch_size(options)))


def _write(out: Path, result: DeviceResult) -> DeviceResult:
    """Write a device a collector sent back (its state file as bytes), or one that failed here."""
    if not isinstance(result, ShippedResult):
        return write_result(out, result)
    result.state_digest = write_device(
        out, result.name, result.state_json, result.raw, result.manifest_entry(), schema=result.state_schema
    )
    result.raw = {}
    result.state_json = b""
    return result


def _stop_profiler(dask_worker: Any) -> None:
    """Stop Dask's statistical profiler on this collector (see :data:`_PROFILER_CALLBACKS`).

    Its timers belong to the worker's event loop, so they are stopped from there. The same as
    starting the worker with ``DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED=False``; a Dask whose
    worker has no such timers is left as it is.
    """
    callbacks = getattr(dask_worker, "periodic_callbacks", None) or {}
    for name in _PROFILER_CALLBACKS:
        callback = callbacks.get(name)
        if callback is not None:
            with contextlib.suppress(Exception):
                dask_worker.loop.add_callback(callback.stop)


# ---------------------------------------------------------------------------------------------
# the client side


def connect(address: str, timeout: float) -> Any:
    """A Dask client of the scheduler at ``address``.

    Raises:
        SchedulerUnavailable: Nothing answers there within ``timeout`` seconds.
    """
    from distributed import Client

    try:
        with _quiet():
            return Client(address, timeout=timeout, set_as_default=False)  # type: ignore[no-untyped-call]
    except (OSError, TimeoutError, ValueError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise SchedulerUnavailable(f"cannot reach the Dask scheduler at {address}: {reason}") from None


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    # Dask logs its own view of a lost scheduler or worker on stderr; the run reports those
    # itself, one line per device, so its loggers stay at errors the user can act on.
    loggers = [logging.getLogger(n) for n in ("distributed", "distributed.client", "distributed.worker")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


def failed_result(remote: RemoteDevice, message: str) -> DeviceResult:
    """A device no site collector could finish: status ``error``, kind ``collector``, the reason."""
    d = remote.device
    result = finish_device(
        Gathered(
            DeviceRef(d.name, d.platform, d.role),
            failure=("error", "collector", message),
            started_at=now_iso(),
        )
    )
    result.extra = {"site": remote.site}
    return result


class DaskBackend:
    """A :data:`fabline.collect.collector.Backend` that collects on the sites' Dask workers.

    Args:
        address: The scheduler (``tcp://HOST:8786``, ``tls://...``).
        remote: Every device of the inventory as the sites will receive it (:func:`remote_devices`).
        options: The run's options (``workers`` devices at once per collector; ``timeout`` also
            bounds the wait for the scheduler, and how long a site may be left without any
            collector before its devices are given up as ``error``).

    TLS (``tls://`` addresses) takes its certificates from Dask's own configuration
    (``distributed.comm.tls.*``, e.g. ``DASK_DISTRIBUTED__COMM__TLS__CA_FILE``), as the scheduler
    and workers do.
    """

    def __init__(self, address: str, remote: Mapping[str, RemoteDevice], options: CollectOptions) -> None:
        self.address = address
        self.remote = remote
        self.options = options
        self.client: Any = None

    def connect(self) -> None:
        """Connect now (before the snapshot is started), so an unreachable scheduler is exit 2."""
        if self.client is None:
            self.client = connect(self.address, self.options.timeout)

    def __call__(self, todo: list[Device], out: Path, report: Callable[[DeviceResult], None]) -> list[str]:
        """Collect ``todo`` on the sites' workers; write and report each device as it comes back."""
        self.connect()
        try:
            with _quiet():
                return _Run(self, todo, out, report).run()
        finally:
            with _quiet(), contextlib.suppress(Exception):
                self.client.close(timeout=5)
            self.client = None


def _site_workers(client: Any) -> dict[str, set[str]]:
    """Site (resource name) -> addresses of the workers that advertise it, as the scheduler sees them."""
    info = client.scheduler_info(n_workers=-1)
    sites: dict[str, set[str]] = collections.defaultdict(set)
    for address, worker in (info.get("workers") or {}).items():
        for resource, amount in (worker.get("resources") or {}).items():
            if amount and amount > 0:
                sites[resource].add(address)
    return sites


class _Run:
    """One distributed collection: a shard per collector of each site, devices received one by one."""

    def __init__(
        self, backend: DaskBackend, todo: list[Device], out: Path, report: Callable[[DeviceResult], None]
    ) -> None:
        self.backend = backend
        self.client = backend.client
        self.out = out
        self.report = report
        self.options = backend.options
        self.pending: dict[str, collections.deque[RemoteDevice]] = collections.defaultdict(collections.deque)
        for device in todo:
            remote = backend.remote[device.name]
            self.pending[remote.site].append(remote)
        self.sites = list(self.pending)
        self.shards: dict[Any, Shard] = {}  # shard future -> shard
        self.by_key: dict[str, Any] = {}  # shard key -> its future
        self.started_on: dict[str, str] = {}  # shard key -> the collector that said it runs it
        self.reruns: set[str] = set()  # shard keys the scheduler started a second time
        self.expected: dict[str, Any] = {}  # device not received yet -> the future of its shard
        self.tries: collections.Counter[str] = collections.Counter()  # device -> shards it was in
        self.per_site: collections.Counter[str] = collections.Counter()  # devices in shards, not received
        self.ended: queue.SimpleQueue[Any] = queue.SimpleQueue()  # shard futures, as they end
        self.orphaned_since: dict[str, float] = {}
        self.lost: dict[str, set[str]] = collections.defaultdict(set)  # site -> workers seen, then gone
        self.seen: dict[str, set[str]] = {}
        self.warnings: list[str] = []
        self.token = now_iso().replace(":", "")
        self.numbered = 0
        self.results: Any = None

    def run(self) -> list[str]:
        from distributed import Queue

        workers = _site_workers(self.client)
        self.seen = {site: set(workers.get(site, ())) for site in self.sites}
        for site in self.sites:
            if not workers.get(site):
                self._give_up(
                    site, f"no collector for site {site} (no Dask worker advertises the resource {site!r})"
                )
        name = f"fabline-collect-{self.token}-{uuid.uuid4().hex[:8]}"
        # Unbounded at the scheduler: the collectors look at its size before each put (_Sender).
        self.results = Queue(name, client=self.client)  # type: ignore[no-untyped-call]
        last_watch = time.monotonic()
        try:
            while self.shards or any(self.pending.values()):
                self._submit(workers)
                self._receive(wait=True)
                self._ended()
                self._rerun()
                now = time.monotonic()
                if now - last_watch >= _WATCH_S:
                    last_watch = now
                    workers = self._watch(now)
        except BaseException:
            if self.shards:
                with contextlib.suppress(Exception):
                    self.client.cancel(list(self.shards))
            raise
        finally:
            with contextlib.suppress(Exception):
                self.results.close()
        return self.warnings

    def _submit(self, workers: Mapping[str, set[str]]) -> None:
        """The devices waiting for a collector, as shards: one per collector of the site not busy with one."""
        if self.client.status != "running":
            return  # reconnecting to the scheduler, or given up on it (_watch decides)
        for site, waiting in self.pending.items():
            if not waiting:
                continue
            busy = sum(1 for shard in self.shards.values() if shard.site == site)
            count = max(1, min(len(waiting), len(workers.get(site, ())) - busy))
            devices = list(waiting)
            waiting.clear()
            for i in range(count):
                shard = Shard(site, tuple(devices[i::count]), self.results.name)  # switches and hosts mixed
                again = max(self.tries[r.device.name] for r in shard.devices) + 1
                self.numbered += 1
                key = f"fabline-shard-{self.token}-{site}-{self.numbered}" + (
                    f"-try{again}" if again > 1 else ""
                )
                future = self.client.submit(
                    collect_shard, shard, self.options, key=key, resources={site: 1}, pure=False
                )
                self.shards[future] = shard
                self.by_key[key] = future
                for remote in shard.devices:
                    self.tries[remote.device.name] += 1
                    self.expected[remote.device.name] = future
                self.per_site[site] += len(shard.devices)
                future.add_done_callback(self.ended.put)

    def _receive(self, wait: bool) -> None:
        """Write every finished device the queue holds (with ``wait``, pause a moment when it holds none)."""
        payloads: list[bytes] = []
        if self.client.status == "running":
            with contextlib.suppress(Exception):  # the scheduler is gone: _watch decides
                payloads = self.results.get(batch=True)  # all it holds, at once
        if wait and not payloads:
            time.sleep(_WAIT_S)
        for payload in payloads:
            batch: list[ShippedResult] | ShardStarted = pickle.loads(payload)
            if isinstance(batch, ShardStarted):
                if batch.key in self.started_on:
                    self.reruns.add(batch.key)  # its collector died; the scheduler runs it again
                self.started_on[batch.key] = batch.worker
                continue
            for result in batch:
                future = self.expected.pop(result.name, None)
                if future is None:
                    continue  # sent twice (a shard the scheduler ran again), or its site was given up
                self.per_site[self.shards[future].site] -= 1
                self.report(_write(self.out, result))

    def _ended(self) -> None:
        """Shards that ended: their devices not received are retried once on the site, or ``error``."""
        while True:
            try:
                future = self.ended.get_nowait()
            except queue.Empty:
                return
            shard = self.shards.get(future)
            if shard is None:
                continue  # given up meanwhile
            self._receive(wait=False)  # what it sent before it ended is in the queue: take it first
            retry = self._collector_died(future) or future.status == "finished"
            self._settle(future, shard, retry)
            future.release()

    def _settle(self, future: Any, shard: Shard, retry: bool, reason: str | None = None) -> None:
        """An ended shard: its devices not received are retried once on the site, or ``error`` with
        ``reason`` (by default, what the shard's future says: :meth:`_why`).
        """
        del self.shards[future]
        self.by_key.pop(future.key, None)
        left = [r for r in shard.devices if self.expected.get(r.device.name) is future]
        for remote in left:
            del self.expected[remote.device.name]
        self.per_site[shard.site] -= len(left)
        why = (reason or self._why(shard.site, future)) if left else ""
        for remote in left:
            if retry and self.tries[remote.device.name] < TRIES:
                # fabline's own retry: once, on whichever collector of the site the scheduler picks.
                self.pending[shard.site].append(remote)
            else:
                self.report(write_result(self.out, failed_result(remote, why)))

    def _rerun(self, lost: Collection[str] = ()) -> None:
        """Shards whose collector died while the scheduler keeps their task: cancel, retry what is left.

        The scheduler runs such a shard again itself when ``allowed-failures`` is above 0 (whole:
        the devices the client has are collected again). Seen from here: a shard that said twice
        it started (:class:`ShardStarted`), or whose collector is ``lost``. It is cancelled and its
        devices not received go to a new shard, once, as when the scheduler gives up on the task.
        """
        doomed = [self.by_key[k] for k in self.reruns if k in self.by_key]
        self.reruns.clear()
        if lost:
            doomed += [f for f in self.shards if self.started_on.get(f.key) in lost and not f.done()]
        for future in dict.fromkeys(doomed):
            shard = self.shards.get(future)
            if shard is None:
                continue
            with contextlib.suppress(Exception):
                self.client.cancel([future])
            self._receive(wait=False)  # what it sent before it died: take it first
            died = (
                f"site {shard.site}: its collector died while collecting it, and again on fabline's one retry"
            )
            self._settle(future, shard, True, died)

    @staticmethod
    def _collector_died(future: Any) -> bool:
        """Whether the shard failed because its collector died while running it."""
        from distributed import KilledWorker

        if future.status in ("lost", "pending"):
            return True
        return bool(future.status == "error" and isinstance(future.exception(), KilledWorker))

    def _why(self, site: str, future: Any) -> str:
        """Why a device of this ended shard did not come back (the second time, for a retried one)."""
        if self._collector_died(future):
            return f"site {site}: its collector died while collecting it, and again on fabline's one retry"
        if future.status == "finished":
            return (
                f"site {site}: its collector ended without sending it back, and again on fabline's one retry"
            )
        if future.status == "cancelled":
            return f"site {site}: the task was cancelled (the Dask scheduler went away?)"
        exc = future.exception()
        text = f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:200]}"
        # A device's own failures are in its state (redacted on the collector); this is the shard's.
        return f"site {site}: the collector failed: {text}"

    def _watch(self, now: float) -> dict[str, set[str]]:
        """The scheduler's worker list; a site with work and no collector left is given up after a grace."""
        try:
            workers = _site_workers(self.client)
        except Exception:
            workers = None
        if self.client.status not in ("running", "connecting"):
            for site in self.sites:
                self._give_up(site, f"site {site}: lost the Dask scheduler at {self.backend.address}")
            return workers or {}
        if workers is None:
            return {}  # no answer this time: nothing is known to be gone
        vanished: set[str] = set()
        for site, seen in self.seen.items():
            vanished |= seen - workers.get(site, set())
        # A shard whose collector is gone and that the scheduler keeps (allowed-failures > 0).
        self._rerun(vanished)
        for site, seen in self.seen.items():
            current = workers.get(site, set())
            self.lost[site] |= seen - current
            seen |= current
            busy = self.per_site[site] > 0 or self.pending.get(site)
            if current or not busy:
                self.orphaned_since.pop(site, None)
                continue
            since = self.orphaned_since.setdefault(site, now)
            # A restarted collector (systemd, the nanny) has --timeout seconds to come back.
            if now - since >= self.options.timeout:
                gone = ", ".join(sorted(self.lost[site])) or "?"
                self._give_up(site, f"no collector for site {site}: its collector {gone} was lost mid-run")
                self.orphaned_since.pop(site, None)
        return workers

    def _give_up(self, site: str, reason: str) -> None:
        """Every device of a site still to do ends as ``error`` with the reason; the run goes on."""
        doomed = [f for f, shard in self.shards.items() if shard.site == site]
        if doomed:
            with contextlib.suppress(Exception):
                self.client.cancel(doomed)
        left: list[RemoteDevice] = []
        for future in doomed:
            shard = self.shards.pop(future)
            left.extend(r for r in shard.devices if self.expected.get(r.device.name) is future)
        for remote in left:
            del self.expected[remote.device.name]
        self.per_site[site] -= len(left)
        left.extend(self.pending.pop(site, collections.deque()))
        for remote in left:
            self.report(write_result(self.out, failed_result(remote, reason)))
        if left:
            self.warnings.append(f"{reason}: {len(left)} devices not collected")


def dask_backend(
    address: str, inventory: Inventory, devices: list[Device], site_group: str | None, options: CollectOptions
) -> DaskBackend:
    """The backend of ``--scheduler``: devices checked and split by site, the scheduler reached.

    Raises:
        ConfigError: A device without a site, an unknown ``--site-group``, a password in clear.
        SchedulerUnavailable: The scheduler cannot be reached.
    """
    backend = DaskBackend(address, remote_devices(inventory, devices, site_group), options)
    backend.connect()
    return backend
