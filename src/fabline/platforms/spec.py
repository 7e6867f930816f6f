"""What a platform is: one frozen spec holding every fact about it, and the registry of specs.

A platform module (``fabline/platforms/<id>.py``) ends with one :class:`PlatformSpec`: its read-only
command allow-list (each command with its parser) and the few of them that may run as root, how a
collection connects and what it runs
(:class:`RunPlan`), the ``ansible_network_os`` values that name it, how it names front-panel ports,
what its ``mtu`` means (:class:`MtuSemantics`) and the words it uses for state values
(:class:`Vocabulary`, shared by its parsers and its simulator renderer). hier_config's drivers,
scrapli's platform definitions and netmiko's class mapper are the models.

Everything else derives from the registry (:func:`register`, filled by ``fabline.platforms``):
the inventory's platform and ``ansible_network_os`` tables, the baseline's platform names, the state
JSON Schema's platform enum, the switch list, the collection run plans and the allow-list's root
reads, the synthetic fabrics' port names and collected extras, ``fabline remediate``'s change
formats. Nothing outside a platform module branches on a platform id. ``docs/platforms.md`` ("How to
add a platform") walks through adding one.
"""

from __future__ import annotations

import contextlib
import enum
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, get_args

from fabline.platforms.base import ROOT_PREFIX, Command, Releases
from fabline.state_types import Fec, Trust

Finalizer = Callable[[dict[str, Any]], dict[str, Any]]

#: Ethernet header (14 bytes) plus FCS (4): what a frame adds to an L3 MTU.
L2_OVERHEAD_BYTES = 18
#: An 802.1Q tag.
VLAN_TAG_BYTES = 4


class Platform(enum.StrEnum):
    """The built-in platform ids (a member is its id string: ``Platform.SONIC == "sonic"``)."""

    SONIC = "sonic"
    CUMULUS = "cumulus"
    ARISTA_EOS = "arista_eos"
    CISCO_NXOS = "cisco_nxos"
    LINUX = "linux"
    NAPALM = "napalm"


class MtuKind(enum.StrEnum):
    """What a platform's reported ``mtu`` counts."""

    #: The IP (L3) MTU, as the Linux kernel counts it: the largest frame is ``mtu`` + 18 bytes
    #: (+ 4 with an 802.1Q tag, which the port accepts on top).
    L3 = "l3"
    #: The largest frame itself, header and FCS included, tagged or not.
    FRAME = "frame"


@dataclass(frozen=True)
class MtuSemantics:
    """What ``mtu`` means on a platform, and the value a RoCE fabric port carries there.

    Attributes:
        kind: What the reported ``mtu`` counts (:class:`MtuKind`).
        fabric_mtu: The ``mtu`` a RoCE fabric port reports on this platform (bytes), for designs
            and synthetic fabrics (9100 SONiC, 9216 Cumulus/NX-OS, 9214 EOS, 9000 hosts).
        frame_limit_field: An interface field that, when set (non-zero), is the port's frame limit
            and wins over ``mtu`` (EOS ``l2_mtu``).
    """

    kind: MtuKind
    fabric_mtu: int
    frame_limit_field: str | None = None

    def frame_bytes(self, body: Mapping[str, Any]) -> tuple[int, int] | None:
        """The largest untagged and 802.1Q-tagged frame (bytes) an interface carries, or None.

        Example:
            >>> MtuSemantics(MtuKind.L3, 9000).frame_bytes({"mtu": 9000})
            (9018, 9022)
            >>> MtuSemantics(MtuKind.FRAME, 9100).frame_bytes({"mtu": 9100})
            (9100, 9100)
            >>> MtuSemantics(MtuKind.L3, 9214, "l2_mtu").frame_bytes({"mtu": 9214, "l2_mtu": 9236})
            (9236, 9236)
            >>> MtuSemantics(MtuKind.L3, 9000).frame_bytes({}) is None
            True
        """
        if self.frame_limit_field:
            limit = body.get(self.frame_limit_field)
            if type(limit) is int and limit:
                return limit, limit
        mtu = body.get("mtu")
        if type(mtu) is not int:
            return None
        if self.kind is MtuKind.L3:
            return mtu + L2_OVERHEAD_BYTES, mtu + L2_OVERHEAD_BYTES + VLAN_TAG_BYTES
        return mtu, mtu

    def annotate(self, interfaces: Mapping[str, Any]) -> None:
        """Add ``frame_bytes`` / ``frame_bytes_tagged`` beside ``mtu`` on every interface lacking them.

        A state whose first interface with an ``mtu`` has them is taken as done (parsers and
        synthetic states give them to every interface).

        Example:
            >>> ifaces = {"eth0": {"mtu": 9000}, "lo": {}}
            >>> MtuSemantics(MtuKind.L3, 9000).annotate(ifaces); ifaces
            {'eth0': {'mtu': 9000, 'frame_bytes': 9018, 'frame_bytes_tagged': 9022}, 'lo': {}}
        """
        # A parsed state has them on every interface: the first interface with an mtu tells.
        first = next((b for b in interfaces.values() if type(b) is dict and "mtu" in b), None)
        if first is None or "frame_bytes" in first:
            return
        memo: dict[tuple[Any, Any], tuple[int, int] | None] = {}  # one pair object per distinct MTU
        limit_field = self.frame_limit_field
        for body in interfaces.values():
            if type(body) is not dict or "frame_bytes" in body:
                continue
            key = (body.get("mtu"), body.get(limit_field) if limit_field else None)
            if key not in memo:
                memo[key] = self.frame_bytes(body)
            frames = memo[key]
            if frames is not None:
                body["frame_bytes"], body["frame_bytes_tagged"] = frames


@dataclass(frozen=True)
class Vocabulary:
    """The words a platform prints for state values, shared by its parsers and its simulator renderer.

    Attributes:
        fec: State FEC mode (``rs``, ``fc``, ``none``, ``auto``) -> the word the platform prints.
        fec_aliases: Other words the platform prints for a state FEC mode (read, never written).
        trust: State trust mode (``dscp``, ``pcp``) -> the word the platform prints (and its
            simulator renderer writes).
        trust_aliases: Other words the platform prints for a state trust mode (read, never written).

    Speed units are not per platform: every platform's parsers read them with
    :func:`fabline.platforms.toolkit.speed_gbps`.
    """

    fec: Mapping[str, str] = field(default_factory=dict)
    fec_aliases: Mapping[str, str] = field(default_factory=dict)
    trust: Mapping[str, str] = field(default_factory=dict)
    trust_aliases: Mapping[str, str] = field(default_factory=dict)
    _fec_words: Mapping[str, Fec] = field(init=False, repr=False, compare=False, default_factory=dict)
    _trust_words: Mapping[str, Trust] = field(init=False, repr=False, compare=False, default_factory=dict)

    def fec_mode(self, word: str) -> Fec | None:
        """The state FEC mode of a word the platform prints (case-insensitive), or None.

        Example:
            >>> Vocabulary(fec={"rs": "RS", "fc": "BaseR"}, fec_aliases={"llrs": "rs"}).fec_mode("baser")
            'fc'
        """
        return self._fec_words.get(word.lower())

    def trust_mode(self, word: str) -> Trust | None:
        """The state trust mode of a word the platform prints (case-insensitive), or None.

        Example:
            >>> Vocabulary(trust={"dscp": "dscp", "pcp": "cos"}).trust_mode("COS")
            'pcp'
            >>> Vocabulary(trust={"dscp": "l3"}, trust_aliases={"802.1p": "pcp"}).trust_mode("802.1p")
            'pcp'
        """
        return self._trust_words.get(word.lower())

    def __post_init__(self) -> None:
        trust = {w.lower(): mode for mode, w in self.trust.items()}
        trust.update((w.lower(), mode) for w, mode in self.trust_aliases.items())
        object.__setattr__(self, "_trust_words", _state_words(trust, get_args(Trust)))
        words = {w.lower(): mode for mode, w in self.fec.items()}
        words.update((w.lower(), mode) for w, mode in self.fec_aliases.items())
        object.__setattr__(self, "_fec_words", _state_words(words, get_args(Fec)))


def _state_words(words: dict[str, str], modes: tuple[str, ...]) -> dict[str, Any]:
    """``words`` (platform word -> state mode), once every mode is checked to be one of ``modes``."""
    for word, mode in words.items():
        if mode not in modes:
            raise ValueError(f"vocabulary word {word!r} maps to {mode!r}, not one of {', '.join(modes)}")
    return words


#: A ``module:attribute`` reference (as an entry point names an object).
_OBJECT_REF = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")

#: How a collection can connect: an interactive CLI (netmiko), exec channels (Linux hosts), Arista
#: eAPI (:mod:`fabline.collect.eapi`), NAPALM getters (:mod:`fabline.collect.getters`).
TRANSPORTS = ("netmiko", "exec", "eapi", "napalm")


@dataclass(frozen=True)
class InterfaceSource:
    """Where a host's run plan finds the interfaces to inspect when the inventory names none.

    Attributes:
        command: A device command of the plan whose parsed output lists interfaces.
        needs: The ``nic`` field an interface must have there to be inspected (``rdma_device``).
        label: How the manifest and the docs name the choice (``RDMA netdevs (show_gids)``).
    """

    command: str
    needs: str
    label: str


@dataclass(frozen=True)
class RunPlan:
    """What a collection runs on one platform, and how it connects.

    A plan is data. ``device_commands`` run once per device (configuration views first, so the
    operational views that follow win the merge, as ``docs/platforms/*.md`` ask);
    ``interface_commands`` run once per interface the device reports (``{interface}``);
    ``rdma_commands`` once per RDMA device a Linux host reported (``{rdma_device}``). Every template
    must be on the platform's read-only allow-list; :func:`register` proves it and the collector
    refuses any concrete command line that does not match.

    Attributes:
        platform: Platform id.
        transport: ``netmiko`` (an interactive CLI session) or ``exec`` (paramiko exec channels,
            one per command, real exit codes).
        device_type: The netmiko ``device_type`` for ``netmiko`` transports.
        device_commands: Run once per device, in this order.
        interface_commands: Templates with ``{interface}``, run for every selected interface.
        interface_pattern: Which interface names (from the device commands' state) get the
            per-interface commands; ``None`` = every reported interface.
        rdma_commands: Templates with ``{rdma_device}`` (Linux), run for every RDMA device that the
            per-interface commands reported as some interface's ``nic.rdma_device``.
        rdma_sources: The command templates whose outputs name each interface's RDMA device
            (``nic.rdma_device``): parsed on the collecting thread to plan the ``rdma_commands``
            (everything else is parsed after the session, off the collecting thread).
        rdma_listing: The command templates listing every RDMA device of the host
            (``host.rdma_devices``): parsed to plan only when no chosen interface names one.
        interface_sources: A host's sources of the interfaces to inspect when its inventory has no
            ``rail_interfaces``, in order: the first that lists any wins.
        var_commands: Commands a device's inventory variable asks for, ``(variable, template)``:
            the template's one ``{param}`` is filled with each value the variable lists (a list or
            a comma-separated string). They run right after ``device_commands`` and merge after
            them (a declared NCCL env file overrides ``/etc/nccl.conf``, as NCCL reads them).
        route_commands: Templates with ``{prefix}``, run once for the device's ECMP probe prefix
            (the ``fabline_ecmp_prefix`` inventory variable; none when it is unset).
        finalize: Post-merge hook over the merged state (switch-wide defaults, RDMA-device joins).
        shell: The CLI is a POSIX shell (bash on SONiC and Cumulus): commands go in batches as one
            script line with end markers, instead of one prompt round trip each.
        httpapi: The transport used instead when the inventory asks for the device's HTTP API
            (``ansible_connection: ansible.netcommon.httpapi`` or ``fabline_transport``): ``eapi``
            on EOS (:mod:`fabline.collect.eapi`); None = SSH only.
    """

    platform: str
    transport: str
    device_type: str | None
    device_commands: tuple[str, ...]
    interface_commands: tuple[str, ...] = ()
    interface_pattern: str | None = None
    rdma_commands: tuple[str, ...] = ()
    rdma_sources: tuple[str, ...] = ()
    rdma_listing: tuple[str, ...] = ()
    interface_sources: tuple[InterfaceSource, ...] = ()
    var_commands: tuple[tuple[str, str], ...] = ()
    route_commands: tuple[str, ...] = ()
    finalize: Finalizer | None = None
    shell: bool = False
    httpapi: str | None = None

    def __post_init__(self) -> None:
        # A Platform member is its id, but states, messages and pickles carry the plain string.
        object.__setattr__(self, "platform", str(self.platform))

    def templates(self) -> tuple[str, ...]:
        """Every command template of the plan, in run order."""
        declared = tuple(template for _var, template in self.var_commands)
        return (
            self.device_commands
            + declared
            + self.interface_commands
            + self.rdma_commands
            + self.route_commands
        )

    def wants_interface(self, name: str) -> bool:
        """Whether per-interface commands run for this interface.

        Example:
            >>> get("cumulus").run.wants_interface("swp1"), get("cumulus").run.wants_interface("eth0")
            (True, False)
        """
        return self.interface_pattern is None or re.fullmatch(self.interface_pattern, name) is not None


@dataclass(frozen=True)
class PlatformSpec:
    """Every fact about one platform.

    Attributes:
        id: The platform id (``fabline_platform`` in the inventory, ``platform`` in a state).
        description: One line for docs and ``--help``.
        kind: ``switch`` or ``host``.
        commands: The read-only allow-list, each command with its parser.
        root_commands: The templates of ``commands`` that may run with ``sudo -n`` (read-only
            reads that need root). The allow-list refuses any other line starting with ``sudo``,
            and :func:`register` refuses a spec with a ``sudo -n`` command not listed here: a
            root read is always named twice, on purpose.
        run: What a collection runs and how it connects (transport, netmiko ``device_type``).
        network_os: ``ansible_network_os`` values (FQCN and short, lower-case) that name it.
        network_os_prefixes: ``ansible_network_os`` prefixes that name it (``nvidia.nvue.``).
        port_name: Canonical name of front-panel port ``index`` (0-based).
        mtu: What its ``mtu`` means.
        vocabulary: Words it prints for state values.
        os_version: A release it is modelled on (``facts.os_version`` of synthetic states).
        config_command: The allow-listed command that shows the whole running configuration
            (a rendered config is parsed as its output); None for hosts.
        read_config: Reads a rendered configuration file (as ``fabline render`` writes it) into a
            state body, where that is more than parsing it as ``config_command``'s output.
        config_releases: The releases the bundled config template (``templates/<id>/``) renders
            for (None: any); ``fabline render`` refuses a design whose ``os_version`` is outside.
        unsupported: State paths this platform's source cannot provide, with the reason (dotted
            prefixes, ``*`` for any interface: ``{"interfaces.*.ecn": "..."}``). Written into every
            state it collects (``unsupported``), so a rule that needs such a path ends ``skipped``
            with the reason instead of ``error`` (:func:`fabline.state.unsupported_reason`).
        synthetic_extras: Adds to a synthetic state (:func:`fabline.synthetic.as_collected`) what a
            collection of a healthy device of the platform yields beyond the fields every
            synthetic state has (health counters, transceiver status, the host's RDMA devices),
            keeping every value already there; None: nothing.
        remediation: Where ``fabline remediate`` finds its change format, as ``module:attribute``
            (a :class:`fabline.remediate.common.Remediator`: the emitter of a device's change and
            the playbook tasks that apply it). Imported only by a remediation, so the platform
            layer never loads its libraries (hier_config). None: its devices get no change, the
            plan says ``no change format for platform '<id>'``.
    """

    id: str
    description: str
    kind: Literal["switch", "host"]
    commands: tuple[Command, ...]
    run: RunPlan
    port_name: Callable[[int], str]
    mtu: MtuSemantics
    network_os: tuple[str, ...] = ()
    network_os_prefixes: tuple[str, ...] = ()
    vocabulary: Vocabulary = field(default_factory=Vocabulary)
    os_version: str = ""
    config_command: str | None = None
    read_config: Callable[[str], dict[str, Any]] | None = None
    unsupported: Mapping[str, str] = field(default_factory=dict)
    config_releases: Releases | None = None
    root_commands: frozenset[str] = frozenset()
    synthetic_extras: Callable[[dict[str, Any]], None] | None = None
    remediation: str | None = None

    def __post_init__(self) -> None:
        # A Platform member is its id, but states, messages and pickles carry the plain string.
        object.__setattr__(self, "id", str(self.id))

    @property
    def transport(self) -> str:
        """How a collection connects (``netmiko`` or ``exec``)."""
        return self.run.transport

    @property
    def device_type(self) -> str | None:
        """The netmiko ``device_type`` (None for the ``exec`` transport)."""
        return self.run.device_type

    def finish(self, body: dict[str, Any]) -> dict[str, Any]:
        """The last step of a parse, after the fragments are merged.

        The run plan's ``finalize`` hook, then the frame sizes every interface's ``mtu`` means
        (:meth:`MtuSemantics.annotate`).
        """
        if self.run.finalize is not None and body:
            body = self.run.finalize(body)
        interfaces = body.get("interfaces")
        if type(interfaces) is dict:
            self.mtu.annotate(interfaces)
        return body

    def match(self, command_line: str) -> tuple[Command, dict[str, str]]:
        """Find the allow-listed command a concrete command line is an instance of.

        Raises:
            KeyError: The command is not on the platform's read-only allow-list.
        """
        for cmd in self.commands:
            m = cmd.pattern().match(command_line)
            if m:
                return cmd, m.groupdict()
        raise KeyError(command_line)

    def problems(self) -> list[str]:
        """Why this spec is inconsistent (empty when it is not): plan commands off the allow-list, ..."""
        known = {c.template for c in self.commands}
        out = [
            f"{self.id}: {t!r} is not on the read-only allow-list"
            for t in self.run.templates() + self.run.rdma_sources + self.run.rdma_listing
            if t not in known
        ]
        out += [
            f"{self.id}: interface source {s.command!r} is not a device command of its run plan"
            for s in self.run.interface_sources
            if s.command not in self.run.device_commands
        ]
        if self.run.platform != self.id:
            out.append(f"{self.id}: its run plan says platform {self.run.platform!r}")
        if self.config_command is not None and self.config_command not in known:
            out.append(f"{self.id}: config command {self.config_command!r} is not on the allow-list")
        out += [
            f"{self.id}: root command {t!r} is not on the read-only allow-list"
            for t in sorted(self.root_commands)
            if t not in known
        ]
        out += [
            f"{self.id}: {c.template!r} runs with {ROOT_PREFIX.strip()} but is not one of its root_commands"
            for c in self.commands
            if c.needs_root and c.template not in self.root_commands
        ]
        out += [
            f"{self.id}: root command {t!r} does not start with {ROOT_PREFIX.strip()!r}"
            for t in sorted(self.root_commands)
            if not t.startswith(ROOT_PREFIX)
        ]
        if self.remediation is not None and not _OBJECT_REF.fullmatch(self.remediation):
            out.append(f"{self.id}: remediation {self.remediation!r} is not a 'module:attribute' reference")
        if self.run.transport not in TRANSPORTS:
            out.append(f"{self.id}: unknown transport {self.run.transport!r}")
        if self.run.httpapi not in (None, "eapi"):
            out.append(f"{self.id}: unknown HTTP API transport {self.run.httpapi!r}")
        return out


# --------------------------------------------------------------------------------------------
# The registry

_REGISTRY: dict[str, PlatformSpec] = {}
#: Read-only view of the registry, in registration order (the built-ins first).
PLATFORMS: Mapping[str, PlatformSpec] = MappingProxyType(_REGISTRY)


def register(spec: PlatformSpec) -> PlatformSpec:
    """Add a platform to the registry (built-ins are registered by ``fabline.platforms``).

    Raises:
        ValueError: The id or one of its ``ansible_network_os`` names is taken, or the spec is
            inconsistent (a run-plan command off its allow-list).
    """
    if spec.id in _REGISTRY:
        raise ValueError(f"platform {spec.id!r} is already registered")
    taken = network_os_aliases()
    clash = [n for n in spec.network_os if n in taken]
    if clash:
        raise ValueError(
            f"platform {spec.id!r}: ansible_network_os {clash[0]!r} already names {taken[clash[0]]!r}"
        )
    problems = spec.problems()
    if problems:
        raise ValueError("; ".join(problems))
    _REGISTRY[spec.id] = spec
    return spec


def unregister(platform_id: str) -> None:
    """Remove a platform from the registry (tests that register a toy platform undo it)."""
    _REGISTRY.pop(platform_id, None)


@contextlib.contextmanager
def registered(spec: PlatformSpec) -> Iterator[PlatformSpec]:
    """Register a platform for the duration of a ``with`` block."""
    register(spec)
    try:
        yield spec
    finally:
        unregister(spec.id)


def get(platform_id: str) -> PlatformSpec:
    """The spec of a platform id.

    Raises:
        KeyError: Unknown platform id.
    """
    return _REGISTRY[platform_id]


def platform_ids() -> tuple[str, ...]:
    """Every registered platform id, in registration order.

    Example:
        >>> platform_ids()
        ('sonic', 'cumulus', 'arista_eos', 'cisco_nxos', 'linux', 'napalm')
    """
    return tuple(_REGISTRY)


def switch_platforms() -> tuple[str, ...]:
    """The registered switch platform ids.

    Example:
        >>> switch_platforms()
        ('sonic', 'cumulus', 'arista_eos', 'cisco_nxos', 'napalm')
    """
    return tuple(p for p, s in _REGISTRY.items() if s.kind == "switch")


def host_platform() -> str:
    """The platform a host without ``fabline_platform`` or ``ansible_network_os`` runs (the first host kind).

    Example:
        >>> host_platform()
        'linux'
    """
    return next(p for p, s in _REGISTRY.items() if s.kind == "host")


def network_os_aliases() -> dict[str, str]:
    """Every ``ansible_network_os`` value that names a platform -> its platform id."""
    return {name: spec.id for spec in _REGISTRY.values() for name in spec.network_os}


def platform_for_network_os(network_os: str) -> str | None:
    """The platform an ``ansible_network_os`` value names, or None.

    Example:
        >>> platform_for_network_os("arista.eos.eos"), platform_for_network_os("nvidia.nvue.nvue")
        ('arista_eos', 'cumulus')
        >>> platform_for_network_os("junos") is None
        True
    """
    key = network_os.strip().lower()
    for spec in _REGISTRY.values():
        if key in spec.network_os or any(key.startswith(p) for p in spec.network_os_prefixes):
            return spec.id
    return None


class _RunPlans(Mapping[str, RunPlan]):
    """A live view: platform id -> its :class:`RunPlan`."""

    def __getitem__(self, platform_id: str) -> RunPlan:
        return _REGISTRY[platform_id].run

    def __iter__(self) -> Iterator[str]:
        return iter(_REGISTRY)

    def __len__(self) -> int:
        return len(_REGISTRY)


#: Platform id -> run plan, following the registry.
RUN_PLANS: Mapping[str, RunPlan] = _RunPlans()


__all__ = [
    "L2_OVERHEAD_BYTES",
    "PLATFORMS",
    "RUN_PLANS",
    "VLAN_TAG_BYTES",
    "Finalizer",
    "MtuKind",
    "MtuSemantics",
    "Platform",
    "PlatformSpec",
    "RunPlan",
    "Vocabulary",
    "get",
    "host_platform",
    "network_os_aliases",
    "platform_for_network_os",
    "platform_ids",
    "register",
    "registered",
    "switch_platforms",
    "unregister",
]
