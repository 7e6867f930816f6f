"""Python checks: the one small interface shared by built-in and site-local checks.

Declarative baseline rules cover "this field must hold that value". Anything that needs logic
(comparing two ends of a link, a fleet majority, a computation) is a :class:`Check` subclass:

    class HostnameCheck(Check):
        '''The device's own hostname matches its inventory name (why it matters...).'''

        id = "hostname-matches-inventory"
        severity = Severity.MINOR
        roles = ("leaf", "spine")

        def check_device(self, device: DeviceContext) -> Iterable[Result]:
            hostname = device.state.get("facts", {}).get("hostname")
            if hostname is None:
                yield self.error(device.name, None, "facts.hostname not collected")
            elif hostname == device.name:
                yield self.passed(device.name, None, actual=hostname)
            else:
                yield self.failed(device.name, None, f"hostname is {hostname!r}", expected=device.name, actual=hostname)

Device-scope checks get one :class:`DeviceContext` per readable device. Fabric-scope checks see
the whole fabric: ``collect`` is called once per device while states stream past (keep only what
you need, so a 100k-GPU fabric stays small in memory), then ``check_fabric`` once. A fabric check
that reads the LLDP link graph sets ``uses_links = True`` and calls ``fabric.links.graph()``: the
engine projects each device once and builds the graph once per run for every such check
(:mod:`fabline.checks.linkgraph`). Any exception a check raises becomes an ``error`` result; it
never stops the run.
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Literal, cast, get_args

import orjson
from pydantic import BaseModel, ConfigDict
from typing_extensions import TypeVar

from fabline.checks.linkgraph import LinkGraphs, canonical_port
from fabline.results import RULE_ID, Result, Severity, Status, bound_result
from fabline.state import unsupported_reason
from fabline.state_types import Interface, State


class NoParams(BaseModel):
    """Parameters of a check that takes none."""

    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True, slots=True)
class DeviceContext:
    """What a check sees of one device.

    Attributes:
        name: Inventory name.
        platform: Platform id.
        role: ``spine``, ``leaf`` or ``host``.
        groups: Inventory groups the device is in.
        vars: Inventory variables (merged, templated; secrets are not included).
        state: The state document (schema v1), as loaded; read it, never modify it.
        roles_by_name: Inventory role of every device by lower-case name, to classify LLDP peers.
        previous: The device's state in an earlier snapshot (``--previous``), for counter deltas;
            None when no earlier snapshot was given or it has no usable state for this device.
        interval_s: Seconds between the two snapshots' collection times, when both are known.
        memo: What one check derived from this device's state for the others in the same pass
            (e.g. the BGP view three underlay checks collect); keyed by the deriving function's
            qualified name. Lives as long as the context: one device, one run.
    """

    name: str
    platform: str
    role: str
    groups: tuple[str, ...]
    vars: Mapping[str, Any]
    state: State
    roles_by_name: Mapping[str, str]
    previous: State | None = None
    interval_s: float | None = None
    memo: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def interfaces(self) -> Mapping[str, Interface]:
        """The device's interfaces (empty when not collected)."""
        ifaces = self.state.get("interfaces")
        return ifaces if isinstance(ifaces, Mapping) else {}

    def peer_role(self, interface: Interface) -> str | None:
        """Inventory role of the interface's LLDP peer, or None when unknown."""
        return peer_role(interface, self.roles_by_name)


#: The ``device`` of a fabric-scope check's results that concern no single device.
FABRIC_DEVICE = "(fabric)"


@functools.lru_cache(maxsize=1 << 16)  # port names repeat on every device: sorting them is a lookup
def natural_key(name: str) -> tuple[Any, ...]:
    """Sort key that puts Ethernet2 before Ethernet10.

    Example:
        >>> sorted(["Ethernet10", "Ethernet2", "eth1"], key=natural_key)
        ['Ethernet2', 'Ethernet10', 'eth1']
    """
    return tuple((0, int(t), "") if t.isdigit() else (1, 0, t) for t in _NATURAL_TOKENS.findall(name))


_NATURAL_TOKENS = re.compile(r"\d+|\D+")


def natural_order(names: Iterable[str]) -> tuple[str, ...]:
    """``sorted(names, key=natural_key)``, remembered per distinct sequence of names (interned).

    Every switch of a model lists the same ports in the same order, so on a large fabric the sort
    runs once per model, not once per device and check; the names are the interned strings, shared
    by every device's results.

    Example:
        >>> natural_order({"Ethernet10": {}, "Ethernet2": {}, "eth1": {}})
        ('Ethernet2', 'Ethernet10', 'eth1')
    """
    key = tuple(names)
    hit = _ORDERS.get(key)
    if hit is None:
        hit = tuple(sys.intern(n) for n in sorted(key, key=natural_key))
        if len(_ORDERS) < 4096:
            _ORDERS[key] = hit
    return hit


_ORDERS: dict[tuple[str, ...], tuple[str, ...]] = {}


#: A subclass of ``str``, ``int``, ``dict`` or ``list`` (an :class:`~fabline.state.Invalid`) is
#: refused, not written as its base type.
_EXACT = orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME


def exact_key(value: Any) -> bytes | None:
    """Bytes that are equal exactly when two values read from a state are: for remembering what a
    pure function gave for a value (every host of a model carries the same DCQCN settings).

    The value's compact JSON text (orjson): types as written (``1``, ``1.0``, ``true`` and
    ``"1"`` differ), key order included. None for a value that is not plain JSON: a subclass (an
    :class:`~fabline.state.Invalid`), a key that is not text, an integer beyond 64 bits; the caller
    then computes. A state holds no NaN (the JSON reader refuses it), the one value JSON cannot
    tell from ``null``. Twice as fast as ``marshal.dumps`` on a host's DCQCN maps (2 us, not 4).

    Example:
        >>> [exact_key(v) for v in ({"a": 1}, {"a": 1.0}, {"a": True}, {"a": "1"})]
        [b'{"a":1}', b'{"a":1.0}', b'{"a":true}', b'{"a":"1"}']
        >>> from fabline.state import Invalid
        >>> exact_key([Invalid("interfaces.e0.mtu", "bad")]), exact_key({1: "a"}), exact_key(2**70)
        (None, None, None)
    """
    try:
        return orjson.dumps(value, option=_EXACT)
    except TypeError:  # orjson.JSONEncodeError is one
        return None


def peer_role(interface: Interface | Mapping[str, Any], roles_by_name: Mapping[str, str]) -> str | None:
    """Inventory role of an interface's LLDP neighbour (name match ignores case and domain).

    Example:
        >>> peer_role({"lldp": {"device": "GPU-001.example.net"}}, {"gpu-001": "host"})
        'host'
    """
    lldp = interface.get("lldp")
    if not isinstance(lldp, Mapping):
        return None
    peer = lldp.get("device")
    if not isinstance(peer, str):
        return None
    key = peer.lower()
    role = roles_by_name.get(key)
    if role is None and "." in key:
        role = roles_by_name.get(key.split(".", 1)[0])
    return role


P = TypeVar("P", bound=BaseModel, default=NoParams)


#: Why a check that compares two snapshots has nothing to judge (see ``Check.needs_previous``).
NO_PREVIOUS = "no previous snapshot (fabline check --previous SNAPDIR): counter deltas need two"


class Check(Generic[P]):
    """Base class of Python checks. The class docstring is the check's description.

    A check is generic over its parameter model: ``class LinkMtuCheck(LinkCheck[LinkMtuParams])``
    sets ``Params`` and lets mypy see ``self.params.host_mtu``. A class that defines an ``id`` is a
    check: its id and its docstring are checked when the class is defined (``TypeError``).

    Class attributes:
        id: Stable id (lower-case, ``-`` separated); baselines tune it by this id.
        severity: Default severity (a baseline rule with the same id may change it).
        scope: ``device`` (``check_device`` per device) or ``fabric`` (``collect`` + ``check_fabric``).
        roles / platforms: Applicability; None means all.
        uses_links: A fabric check that reads the link graph (``FabricContext.links``); the
            engine then projects every readable device for it (whatever ``roles``/``platforms``).
        needs_previous: A device check that compares each device with the previous snapshot
            (counter deltas): in a run without ``--previous`` the engine does not call it per
            device and gives it one fabric-level ``skipped`` result (:data:`NO_PREVIOUS`) instead
            of one per device.
        compares_previous: A device check that compares each device with the previous snapshot
            when there is one, and also judges something without it (``link-flaps``: the age of
            the last flap): in a run without ``--previous`` the engine still calls it per device
            and gives the comparison one fabric-level ``skipped`` result (:data:`NO_PREVIOUS`);
            the check yields nothing for a device it has nothing to judge on without one.
        tags: Baseline tags, as a rule's ``tags``: ``operational`` marks a check of live state only
            (hardware, runtime tables), which does not run on intended configs (``check --intended``).
        Params: A pydantic model of the check's parameters (unknown keys are errors); taken from
            the class's type argument when not set.
    """

    id: ClassVar[str]
    severity: ClassVar[Severity] = Severity.MAJOR
    scope: ClassVar[Literal["device", "fabric"]] = "device"
    roles: ClassVar[tuple[str, ...] | None] = None
    platforms: ClassVar[tuple[str, ...] | None] = None
    uses_links: ClassVar[bool] = False
    needs_previous: ClassVar[bool] = False
    compares_previous: ClassVar[bool] = False
    tags: ClassVar[tuple[str, ...]] = ()
    Params: ClassVar[type[BaseModel]] = NoParams
    params: P

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Take ``Params`` from the type argument; refuse a check without a valid id or a docstring.

        Raises:
            TypeError: The class defines an id that is not a rule id, has no docstring, or names
                two different parameter models.
        """
        super().__init_subclass__(**kwargs)
        for base in getattr(cls, "__orig_bases__", ()):
            args = [a for a in get_args(base) if isinstance(a, type) and issubclass(a, BaseModel)]
            if not args:
                continue
            own = cls.__dict__.get("Params")
            if own is not None and own is not args[0]:
                raise TypeError(
                    f"check class {cls.__name__}: Params {own.__name__} is not its type argument {args[0].__name__}"
                )
            cls.Params = args[0]
        check_id = cls.__dict__.get("id")
        if check_id is None:
            return  # a base class of checks, not a check
        if not isinstance(check_id, str) or not RULE_ID.match(check_id):
            raise TypeError(
                f"check class {cls.__name__}: id {check_id!r} is not lower-case letters, digits, '-'"
            )
        if not cls.description():
            raise TypeError(
                f"check {check_id!r} ({cls.__name__}) needs a docstring: it is the check's description"
            )

    def __init__(self, params: Mapping[str, Any] | None = None, severity: Severity | None = None) -> None:
        """Validate the parameters (a baseline rule's ``params``) and set the effective severity."""
        self.params = cast(P, self.Params.model_validate(dict(params or {})))
        self.effective_severity = severity if severity is not None else type(self).severity

    @classmethod
    def description(cls) -> str:
        """First paragraph of the docstring, on one line."""
        doc = (cls.__doc__ or "").strip().split("\n\n")[0]
        return " ".join(doc.split())

    def applies_to(self, role: str, platform: str) -> bool:
        """Whether the check runs on a device of this role and platform."""
        return (self.roles is None or role in self.roles) and (
            self.platforms is None or platform in self.platforms
        )

    # -- device scope -------------------------------------------------------------------------
    def check_device(self, device: DeviceContext) -> Iterable[Result]:
        """Results for one readable device (device-scope checks override this)."""
        return ()

    # -- fabric scope -------------------------------------------------------------------------
    def collect(self, device: DeviceContext) -> Any:
        """Keep what ``check_fabric`` needs from one device (fabric-scope checks override this)."""
        return None

    def check_fabric(self, fabric: FabricContext) -> Iterable[Result]:
        """Results over the whole fabric (fabric-scope checks override this)."""
        return ()

    # -- result helpers -----------------------------------------------------------------------
    # Every result they build is capped (:func:`fabline.results.bound_result`): long lists in
    # ``expected``/``actual`` keep their first items and a count, long messages are cut.
    def _result(
        self, status: Status, device: str, subject: str | None, message: str, expected: Any, actual: Any
    ) -> Result:
        # Bounded here so that no check, built-in or site-local, can put an unbounded list in a report.
        return bound_result(
            Result(self.id, device, subject, status, self.effective_severity, expected, actual, message)
        )

    def passed(self, device: str, subject: str | None, *, expected: Any = None, actual: Any = None) -> Result:
        """A pass result."""
        return self._result(Status.PASS, device, subject, "", expected, actual)

    def failed(
        self, device: str, subject: str | None, message: str, *, expected: Any = None, actual: Any = None
    ) -> Result:
        """A fail result with a one-line message."""
        return self._result(Status.FAIL, device, subject, message, expected, actual)

    def error(self, device: str, subject: str | None, message: str) -> Result:
        """An error result: could not be evaluated."""
        return self._result(Status.ERROR, device, subject, message, None, None)

    def skipped(self, device: str, subject: str | None, message: str) -> Result:
        """A skipped result: not applicable."""
        return self._result(Status.SKIPPED, device, subject, message, None, None)


#: Any check, whatever its parameters (for registries and the engine).
AnyCheck = Check[Any]


@dataclass
class DeviceSummary:
    """What fabric checks know about every inventory device, readable or not."""

    name: str
    platform: str
    role: str
    groups: tuple[str, ...]
    vars: Mapping[str, Any]
    readable: bool
    status: str
    #: State paths the device's source cannot provide, with the reason (state ``unsupported``).
    unsupported: Mapping[str, str] = field(default_factory=dict)

    def unsupported_reason(self, path: str) -> str | None:
        """Why ``path`` (e.g. ``interfaces.*.pfc_priorities``) is not provided by this device's source, or None."""
        return unsupported_reason(self.unsupported, path)

    @functools.cached_property
    def rail_positions(self) -> Mapping[str, int] | None:
        """A host's rail of each of its ``rail_interfaces`` (canonical port name -> position), or None.

        Example:
            >>> DeviceSummary("gpu-1", "linux", "host", (), {"rail_interfaces": ["eth0", "Eth1"]}, True, "ok").rail_positions
            {'ethernet0': 0, 'ethernet1': 1}
        """
        rails = self.vars.get("rail_interfaces")
        if not isinstance(rails, list):
            return None
        names: dict[str, int] = {}
        for i, name in enumerate(rails):
            names.setdefault(canonical_port(str(name)), i)
        return names


@dataclass
class FabricContext:
    """What a fabric-scope check sees: every device's summary and what its ``collect`` kept.

    Attributes:
        devices: Every selected inventory device by name (readable or not).
        collected: Per device name, the value ``collect`` returned (readable devices only).
        roles_by_name: Inventory role by lower-case device name.
        options: Run-wide inputs from the command line, e.g. ``cabling_plan`` (a Path to the
            expected-links CSV given with ``--cabling``) and ``previous`` (True when an earlier
            snapshot was given).
        notes: What a check wants the user told once about the run (for example what it
            inferred because the inventory did not say): the engine makes each a run warning,
            which the console and every report show.
        links: The run's link graph service: ``links.graph(ignore_peers)`` is the LLDP link
            graph, built once per run for every check that declared ``uses_links``.
    """

    devices: Mapping[str, DeviceSummary]
    collected: Mapping[str, Any]
    roles_by_name: Mapping[str, str]
    options: Mapping[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    links: LinkGraphs = field(default_factory=lambda: LinkGraphs({}, {}, projected=False))
