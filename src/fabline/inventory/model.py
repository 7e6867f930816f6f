"""The inventory's data: hosts and groups as declared, and devices as fabline resolves them."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from fabline.secret_keys import is_secret_key

ROLES = ("spine", "leaf", "host")


@dataclass
class HostEntry:
    """A host as the inventory files declare it.

    Attributes:
        name: Inventory hostname.
        vars: Variables set on the host in inventory files (not group or host_vars files), raw.
        source: The inventory file that first declared the host.
        groups: Groups the host is directly in, in the order it was added to them.
    """

    name: str
    vars: dict[str, Any] = field(default_factory=dict, repr=False)
    source: str = ""
    groups: list[str] = field(default_factory=list)


@dataclass
class Group:
    """An inventory group.

    Attributes:
        name: Group name.
        hosts: Hosts directly in the group, in inventory order.
        children: Child group names, in inventory order.
        vars: Variables set on the group in inventory files (raw; ``group_vars`` files are separate).
        parents: Parent group names.
        priority: ``ansible_group_priority`` (default 1); breaks ties between groups of equal depth.
        depth: Longest path from ``all`` (``all`` is 0); deeper groups win variable conflicts.
        source: The inventory file that first declared the group (None for ``all``/``ungrouped``).
    """

    name: str
    hosts: list[str] = field(default_factory=list)
    children: list[str] = field(default_factory=list)
    vars: dict[str, Any] = field(default_factory=dict, repr=False)
    parents: list[str] = field(default_factory=list)
    priority: int = 1
    depth: int = 0
    source: str | None = None


class HostVars(Mapping[str, Any]):
    """A read-only mapping of host variables whose repr hides secret values.

    Example:
        >>> HostVars({"ansible_user": "admin", "ansible_password": "s3cret"})
        HostVars({'ansible_user': 'admin', 'ansible_password': '***'})
    """

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[str, Any]) -> None:
        self._data = dict(data)

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    # The dict's own lookups: Mapping's get and ``in`` go through __getitem__ and a KeyError for
    # every variable a device does not set (the engine asks for about thirty per device).
    def get(self, key: str, default: Any = None) -> Any:
        """The value of ``key``, else ``default`` (as ``dict.get``)."""
        return self._data.get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __repr__(self) -> str:
        # Secrets are masked here; the values are still available to the code.
        shown = {k: ("***" if is_secret_key(k) else v) for k, v in self._data.items()}
        return f"HostVars({shown!r})"


class Named(Protocol):
    """What most of fabline needs of a device: its name, platform and role."""

    @property
    def name(self) -> str:
        """Inventory name."""
        ...

    @property
    def platform(self) -> str:
        """Platform id."""
        ...

    @property
    def role(self) -> str:
        """``spine``, ``leaf`` or ``host``."""
        ...


@dataclass(frozen=True)
class Device:
    """One inventory host resolved for fabline: platform, role, connection and templated vars.

    Attributes:
        name: Inventory hostname.
        platform: Platform id (``sonic``, ``cumulus``, ``arista_eos``, ``cisco_nxos``, ``linux``).
        role: ``spine``, ``leaf`` or ``host``.
        groups: Every group the host is in (transitively), sorted, without ``all``.
        host: Address to connect to (``ansible_host``, default the inventory name).
        port: ``ansible_port`` (TCP port), or None for the transport's default.
        user: ``ansible_user``.
        password: ``ansible_password`` or ``ansible_ssh_pass``; never shown in a repr.
        key_file: ``ansible_ssh_private_key_file``.
        network_os: ``ansible_network_os`` as written.
        vars: All merged host variables, templated; secrets are masked in its repr.
    """

    name: str
    platform: str
    role: str
    groups: tuple[str, ...]
    host: str
    port: int | None
    user: str | None
    password: str | None = field(repr=False)
    key_file: str | None
    network_os: str | None
    vars: Mapping[str, Any] = field(hash=False, compare=False)
