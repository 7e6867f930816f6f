"""One simulated device: its spec, its state (built on first use) and its rendered answers.

The state is what :func:`fabline.synthetic.states` gives for the device with the fabric's
state-level faults applied; every command's answer is rendered from it on first use and cached,
so a fabric of thousands of devices costs nothing until someone logs in.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from fabline import synthetic
from fabline.sim.faults import RisingCounter, TransportFault
from fabline.sim.render import normalize
from fabline.sim.render.common import Answer

Renderer = Callable[["SimDevice", str], Answer]
T = TypeVar("T")


@dataclass
class SimDevice:
    """A device of the simulated fabric.

    Attributes:
        spec: The device as the fabric describes it.
        address: Loopback address its SSH listener binds.
        port: TCP port of the listener.
        links: The fabric links that touch this device.
        faults: State-level faults planted on this device.
        rising: Counters that grow with every SSH session (``RisingCounter``).
        transport: Transport faults of this device.
        sessions: SSH sessions opened so far (drives rising counters).
        writable: The login may configure the device (``run_simulator(..., writable=True)``);
            otherwise every configuration command is refused, as for a read-only account.
        pending: Configuration staged but not applied yet (the NVUE pending revision).
        bgp: Its BGP plan (AS, sessions, probe prefix), planned over the whole fabric.
    """

    spec: synthetic.DeviceSpec
    address: str
    port: int
    links: list[tuple[str, str, str, str]] = field(default_factory=list)
    faults: list[synthetic.Fault] = field(default_factory=list)
    rising: list[RisingCounter] = field(default_factory=list)
    transport: list[TransportFault] = field(default_factory=list)
    sessions: int = 0
    writable: bool = False
    pending: dict[str, Any] | None = None
    #: The device's BGP plan, from the whole fabric (:func:`fabline.synthetic.bgp_plan`).
    bgp: synthetic.DeviceBgp | None = None
    _state: dict[str, Any] | None = field(default=None, repr=False)
    _cache: dict[tuple[str, int], Answer] = field(default_factory=dict, repr=False)
    _derived: dict[tuple[str, int], Any] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def name(self) -> str:
        """The device name (also its hostname)."""
        return self.spec.name

    @property
    def platform(self) -> str:
        """Platform id."""
        return self.spec.platform

    def base_state(self) -> dict[str, Any]:
        """The device's state with its state-level faults (built once)."""
        with self._lock:
            if self._state is None:
                fabric = synthetic.Fabric([self.spec], self.links)
                plan = {self.name: self.bgp} if self.bgp is not None else {}
                state = next(iter(synthetic.states(fabric, self.faults, bgp=plan)))
                normalize(self.platform, state)
                self._state = state
            return self._state

    def state(self) -> dict[str, Any]:
        """The state the device shows now: base state plus rising counters at this session."""
        base = self.base_state()
        if not self.rising:
            return base
        doc = copy.deepcopy(base)
        for r in self.rising:
            counters = doc["interfaces"].setdefault(r.interface, {}).setdefault("counters", {})
            counters[r.counter] = r.start + r.step * max(0, self.sessions - 1)
        return doc

    def configure(self, change: Callable[[dict[str, Any]], None]) -> None:
        """Change the device's state in place, as an applied configuration change does.

        Every rendered answer and derived table is dropped: the next command shows the new state
        (folded again into what the platform can show).
        """
        state = self.base_state()
        with self._lock:
            change(state)
            normalize(self.platform, state)
            self._cache.clear()
            self._derived.clear()

    def answer(self, command: str, renderer: Renderer) -> Answer:
        """The answer to ``command``, rendered on first use (again per session if counters rise)."""
        key = (" ".join(command.split()), self.sessions if self.rising else 0)
        hit = self._cache.get(key)
        if hit is None:
            hit = renderer(self, key[0])
            self._cache[key] = hit
        return hit

    def derived(self, name: str, build: Callable[[], T]) -> T:
        """A value computed from the state (a host's file table), built once per state version.

        ``build`` must depend only on :meth:`state`; like answers, it is built again per session
        when counters rise.
        """
        key = (name, self.sessions if self.rising else 0)
        if key not in self._derived:
            self._derived[key] = build()
        return cast(T, self._derived[key])

    def transport_fault(self, kind: str, command: str | None = None) -> TransportFault | None:
        """The transport fault of this kind that applies to ``command`` (any command when unset)."""
        for f in self.transport:
            if f.kind != kind:
                continue
            if command is None or f.command is None:
                return f
            if " ".join(f.command.split()) == " ".join(command.split()):
                return f
        return None
