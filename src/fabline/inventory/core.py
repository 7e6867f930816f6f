"""The loaded inventory: merged variables, ``ansible-inventory --list``, host patterns, devices."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from fabline.errors import ConfigError, did_you_mean
from fabline.inventory.groups import GroupClosure
from fabline.inventory.model import ROLES, Device, Group, HostEntry, HostVars
from fabline.inventory.patterns import PatternError, order_patterns, select_terms, split_host_pattern
from fabline.inventory.sources import BuildError, SourceBuilder
from fabline.inventory.varsdirs import VarsDirs
from fabline.inventory.varstemplates import VarError, VarsTemplater
from fabline.platforms.spec import host_platform, network_os_aliases, platform_for_network_os, platform_ids

# Variables ansible-inventory never prints (ansible.constants.INTERNAL_STATIC_VARS, ansible-core 2.19).
INTERNAL_STATIC_VARS = frozenset(
    {
        "ansible_async_path", "ansible_collection_name", "ansible_config_file",
        "ansible_dependent_role_names", "ansible_diff_mode", "ansible_facts", "ansible_forks",
        "ansible_inventory_sources", "ansible_limit", "ansible_play_batch", "ansible_play_hosts",
        "ansible_play_hosts_all", "ansible_play_role_names", "ansible_playbook_python",
        "ansible_role_name", "ansible_role_names", "ansible_run_tags", "ansible_skip_tags",
        "ansible_verbosity", "ansible_version", "group_names", "groups", "hostvars", "inventory_dir",
        "inventory_file", "inventory_hostname", "inventory_hostname_short", "play_hosts",
        "playbook_dir", "role_name", "role_names", "role_path", "role_uuid",
    }
)  # fmt: skip


class Inventory:
    """A loaded inventory: hosts, groups, merged variables, patterns and fabline devices.

    Attributes:
        hosts: Hosts in the order the inventory sources declare them.
        groups: ``all``, ``ungrouped`` and every group, in the order they were declared.
        source: The inventory path as given (several sources joined by ", ").
        sources: The sources, in the order they were read.
    """

    def __init__(
        self,
        source: str,
        *,
        hosts: dict[str, HostEntry],
        groups: dict[str, Group],
        var_files: dict[tuple[str, str], dict[str, str]],
        group_vars: VarsDirs,
        host_vars: VarsDirs,
    ) -> None:
        self.hosts = hosts
        self.groups = groups
        self.source = source
        self.sources: list[Path] = [Path(source)]
        self._var_files = var_files
        self._group_vars = group_vars
        self._host_vars = host_vars
        self._closure = GroupClosure(groups)
        self._sorted_cache: dict[tuple[str, ...], tuple[str, ...]] = {}
        self._group_layer_cache: dict[tuple[str, ...], dict[str, Any]] = {}
        self._group_hosts_cache: dict[str, list[str]] = {}
        self._templater = VarsTemplater()

    # -- variables ------------------------------------------------------------------------------

    def _sorted_groups(self, name: str) -> tuple[str, ...]:
        direct = tuple(self.hosts[name].groups)
        got = self._sorted_cache.get(direct)
        if got is None:
            groups = [self.groups[g] for g in self._closure.of_host(list(direct)) if g != "all"]
            groups.sort(key=lambda g: (g.depth, g.priority, g.name))
            got = self._sorted_cache[direct] = tuple(g.name for g in groups)
        return got

    def host_groups(self, name: str) -> list[str]:
        """Every group the host is in, transitively, sorted by name, without ``all``.

        This is Ansible's ``group_names`` (it includes ``ungrouped`` for an ungrouped host).

        Raises:
            ConfigError: Unknown host.
        """
        self._host(name)
        return sorted(self._sorted_groups(name))

    def host_vars(self, name: str) -> dict[str, Any]:
        """The host's variables merged with Ansible's precedence, raw (templates not rendered).

        Raises:
            ConfigError: Unknown host, or a ``group_vars``/``host_vars`` file that cannot be read.
        """
        host = self._host(name)
        order = self._sorted_groups(name)
        base = self._group_layer_cache.get(order)
        if base is None:
            base = dict(self.groups["all"].vars)
            for g in order:
                base.update(self.groups[g].vars)
            for _file, data in self._group_vars.layers("all"):
                base.update(data)
            for _file, data in self._group_vars.layers_of(order):
                base.update(data)
            self._group_layer_cache[order] = base
        merged = dict(base)
        merged.update(host.vars)
        for _file, data in self._host_vars.layers(name):
            merged.update(data)
        return merged

    def var_origin(self, name: str, key: str) -> str | None:
        """The file that gave the host its final value of ``key`` (None if the key is unset)."""
        for file, data in reversed(self._host_vars.layers(name)):
            if key in data:
                return str(file)
        if key in self.hosts[name].vars:
            return self._var_files.get(("host", name), {}).get(key)
        order = self._sorted_groups(name)
        for g in (*reversed(order), "all"):
            for file, data in reversed(self._group_vars.layers(g)):
                if key in data:
                    return str(file)
        for g in (*reversed(order), "all"):
            if key in self.groups[g].vars:
                return self._var_files.get(("group", g), {}).get(key)
        return None

    def orphan_vars_files(self) -> list[str]:
        """``group_vars``/``host_vars`` entries that match no group or host.

        Ansible ignores them silently; they are usually typos (``group_vars/leafs.yml``), so
        ``fabline validate`` can warn about them.
        """
        return self._group_vars.orphans(self.groups) + self._host_vars.orphans(self.hosts)

    def _host(self, name: str) -> HostEntry:
        try:
            return self.hosts[name]
        except KeyError:
            raise ConfigError(
                f"unknown host {name!r}" + did_you_mean(name, self.hosts), file=self.source
            ) from None

    # -- ansible-inventory --list -----------------------------------------------------------------

    def to_ansible_list(self, limit: str | None = None) -> dict[str, Any]:
        """The JSON document ``ansible-inventory -i PATH --list [--limit LIMIT]`` prints.

        The shape is ansible-core 2.19's. Variables are not templated (ansible-inventory does not
        template either); dates become ISO strings as in Ansible's JSON encoder.

        Raises:
            ConfigError: A limit that matches no host (see :meth:`select`).
        """
        out: dict[str, Any] = {}
        seen: set[str] = set()
        available = set(self.select(limit)) if limit not in (None, "", "all", "*") else None

        def fmt(group: Group) -> None:
            entry: dict[str, Any] = {}
            members = group.hosts if available is None else [h for h in group.hosts if h in available]
            if group.name != "all" and members:
                entry["hosts"] = list(members)
            out[group.name] = entry
            for child in group.children:
                if child not in seen:
                    seen.add(child)
                    fmt(self.groups[child])
            if group.children:
                entry["children"] = list(group.children)
            if not entry:
                del out[group.name]

        fmt(self.groups["all"])
        hostvars: dict[str, Any] = {}
        for name in self.hosts:
            if available is not None and name not in available:
                continue
            data = {k: _jsonable(v) for k, v in self.host_vars(name).items() if k not in INTERNAL_STATIC_VARS}
            if data:
                hostvars[name] = data
        out["_meta"] = {"hostvars": hostvars, "profile": "inventory_legacy"}
        return out

    # -- patterns -----------------------------------------------------------------------------------

    def group_hosts(self, group: str) -> list[str]:
        """All hosts of a group and its descendants, in Ansible's order (own hosts, then by level)."""
        got = self._group_hosts_cache.get(group)
        if got is None:
            order = [group, *self.groups[group].children]
            seen_groups = set(order)
            frontier = list(self.groups[group].children)
            while frontier:
                nxt = []
                for g in frontier:
                    for child in self.groups[g].children:
                        if child not in seen_groups:
                            seen_groups.add(child)
                            order.append(child)
                            nxt.append(child)
                frontier = nxt
            seen: set[str] = set()
            got = []
            for g in order:
                for h in self.groups[g].hosts:
                    if h not in seen:
                        seen.add(h)
                        got.append(h)
            self._group_hosts_cache[group] = got
        return got

    def select(self, pattern: str | None, *, strict: bool = True) -> list[str]:
        """Hosts matching an Ansible host pattern, in Ansible's order.

        Supports ``all``/``*``, names, globs (``leaf*``), regexes (``~leaf-r[0-9]``), unions
        (``spine:leaf``, ``spine,leaf``), intersections (``fabric:&pod_b``), exclusions
        (``fabric:!leaf-r2-a``) and subscripts on groups (``leaf[0:1]``, ``leaf[-1]``).

        Args:
            pattern: The host pattern; None, ``all`` or ``*`` select every host.
            strict: For ``--limit``: a term matching no group or host, or an empty result, is an
                error. With False (Ansible's behaviour, for generic selectors such as a baseline
                rule's ``hosts``) such terms are ignored and the result may be empty.

        Raises:
            ConfigError: Malformed pattern (bad regex, subscript out of range) or, when strict, a
                term that matches no group or host, or nothing selected.
        """
        if pattern is None or pattern.strip() in ("", "all", "*"):
            if self.hosts or not strict:
                return list(self.group_hosts("all"))
            return self._no_match(pattern or "all")
        try:
            result = select_terms(
                order_patterns(split_host_pattern(pattern)),
                self.hosts,
                self.groups,
                self.group_hosts,
                self.source,
                strict=strict,
            )
        except PatternError as exc:
            raise ConfigError(str(exc), file=self.source) from None
        if not result and strict:
            self._no_match(pattern)
        return result

    def _no_match(self, pattern: str) -> list[str]:
        raise ConfigError(f"--limit {pattern!r} matches no host in {self.source}")

    # -- fabline devices ----------------------------------------------------------------------------

    def devices(self, limit: str | None = None) -> list[Device]:
        """Resolve the (selected) hosts into devices, in inventory order.

        Raises:
            ConfigError: A limit matching nothing; a missing or unknown ``fabline_role`` /
                ``fabline_platform`` / ``ansible_network_os``; a bad ``ansible_port``; a template that
                refers to an undefined variable or cannot be rendered.
        """
        wanted = set(self.select(limit)) if limit not in (None, "", "all", "*") else None
        return [self.device(name) for name in self.hosts if wanted is None or name in wanted]

    def device(self, name: str) -> Device:
        """Resolve one host into a :class:`Device` (see :meth:`devices` for errors)."""
        raw = self.host_vars(name)
        groups = tuple(self.host_groups(name))
        magic = {
            "inventory_hostname": name,
            "inventory_hostname_short": name.split(".", maxsplit=1)[0],
            "group_names": list(groups),
        }
        try:
            values = self._templater.render_vars(name, raw, magic, self._groups_var)
        except VarError as exc:
            raise ConfigError(exc.message, file=self._where(name, exc.key)) from None
        role = self._role(name, values)
        platform = self._platform(name, values, role)
        return Device(
            name=name,
            platform=platform,
            role=role,
            groups=groups,
            host=self._str_var(name, values, "ansible_host") or name,
            port=self._port(name, values),
            user=self._str_var(name, values, "ansible_user"),
            password=self._secret_var(name, values),
            key_file=self._str_var(name, values, "ansible_ssh_private_key_file"),
            network_os=self._str_var(name, values, "ansible_network_os"),
            vars=HostVars(values),
        )

    def _groups_var(self) -> dict[str, list[str]]:
        return {g: self.group_hosts(g) for g in self.groups}

    def _where(self, name: str, key: str) -> str:
        return self.var_origin(name, key) or self.hosts[name].source or self.source

    def _role(self, name: str, values: Mapping[str, Any]) -> str:
        role = values.get("fabline_role")
        if role is None:
            raise ConfigError(
                f"host {name!r} has no fabline_role (one of {', '.join(ROLES)}; set it in group_vars)",
                file=self.hosts[name].source or self.source,
                key="fabline_role",
            )
        if role not in ROLES:
            raise ConfigError(
                f"host {name!r}: unknown role {role!r}, expected one of {', '.join(ROLES)}"
                + did_you_mean(str(role), ROLES),
                file=self._where(name, "fabline_role"),
                key="fabline_role",
            )
        return str(role)

    def _platform(self, name: str, values: Mapping[str, Any], role: str) -> str:
        platform = values.get("fabline_platform")
        if platform is not None:
            known = platform_ids()
            if platform not in known:
                raise ConfigError(
                    f"host {name!r}: unknown platform {platform!r}, expected one of {', '.join(known)}"
                    + did_you_mean(str(platform), known),
                    file=self._where(name, "fabline_platform"),
                    key="fabline_platform",
                )
            return str(platform)
        network_os = values.get("ansible_network_os")
        if network_os is None:
            if role == "host":
                return host_platform()
            raise ConfigError(
                f"host {name!r} ({role}) has neither fabline_platform nor ansible_network_os "
                f"(one of {', '.join(platform_ids())})",
                file=self.hosts[name].source or self.source,
                key="fabline_platform",
            )
        mapped = platform_for_network_os(str(network_os))
        if mapped is None:
            raise ConfigError(
                f"host {name!r}: ansible_network_os {network_os!r} is not a fabline platform; "
                f"set fabline_platform (one of {', '.join(platform_ids())})"
                + did_you_mean(str(network_os), network_os_aliases()),
                file=self._where(name, "ansible_network_os"),
                key="ansible_network_os",
            )
        return mapped

    def _str_var(self, name: str, values: Mapping[str, Any], key: str) -> str | None:
        value = values.get(key)
        if value is None or value == "":
            return None
        if isinstance(value, (dict, list, bool)):
            raise ConfigError(
                f"host {name!r}: {key} must be a string, got {type(value).__name__}",
                file=self._where(name, key),
                key=key,
            )
        return str(value)

    def _secret_var(self, name: str, values: Mapping[str, Any]) -> str | None:
        for key in ("ansible_password", "ansible_ssh_pass"):
            value = values.get(key)
            if value is not None and value != "":
                if not isinstance(value, (str, int)) or isinstance(value, bool):
                    raise ConfigError(
                        f"host {name!r}: {key} must be a string, got {type(value).__name__}",
                        file=self._where(name, key),
                        key=key,
                    )
                return str(value)
        return None

    def _port(self, name: str, values: Mapping[str, Any]) -> int | None:
        value = values.get("ansible_port")
        if value is None or value == "":
            return None
        try:
            port = int(value) if not isinstance(value, bool) and isinstance(value, (int, str)) else -1
        except ValueError:
            port = -1
        if not 0 < port < 65536:
            raise ConfigError(
                f"host {name!r}: ansible_port must be a TCP port number (1-65535), got {value!r}",
                file=self._where(name, "ansible_port"),
                key="ansible_port",
            )
        return port


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (_dt.date, _dt.datetime)):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return value


#: One inventory source (file, folder, script, plugin configuration) or several, as ``-i`` gives them.
Sources = str | Path | Sequence[str | Path]


def source_paths(sources: Sources) -> list[Path]:
    """The sources as paths, in the order given (one path or several)."""
    return [Path(sources)] if isinstance(sources, str | Path) else [Path(p) for p in sources]


def sources_label(sources: Sources) -> str:
    """How reports and messages name the inventory: its path, or the paths joined by ", "."""
    return ", ".join(str(p) for p in source_paths(sources))


def load_inventory(path: Sources) -> Inventory:
    """Load an Ansible inventory from one source or several (``-i`` repeated), merged as Ansible merges.

    A source is a YAML/INI/JSON file or a directory of them, the JSON ``ansible-inventory --list``
    prints, an executable inventory script, or an inventory plugin configuration (``plugin:``,
    handled by ansible-core when ``fabline[ansible]`` is installed). Sources are read in order into
    one inventory; each source's ``group_vars``/``host_vars`` folders apply, later ones winning.

    Raises:
        ConfigError: Missing path, malformed YAML/INI (file:line), a group loop, a bad range, a name
            used for both a host and a group, a bad ``group_vars``/``host_vars`` file, or a script or
            plugin that fails (one line naming it).
    """
    sources = source_paths(path)
    label = sources_label(sources)
    if not sources:
        raise ConfigError("no inventory source given")
    for src in sources:
        if not src.exists():
            raise ConfigError("inventory not found", file=src)
    builder = SourceBuilder()
    for src in sources:
        builder.parse_source(src)
    try:
        builder.reconcile()
    except BuildError as exc:
        raise ConfigError(str(exc), file=label) from None
    clash = [name for name in builder.hosts if name in builder.groups]
    if clash:
        host = builder.hosts[clash[0]]
        raise ConfigError(
            f"{clash[0]!r} is both a host and a group; rename one (patterns and --limit would be ambiguous)",
            file=host.source or label,
        )
    bases = [src if src.is_dir() else src.parent for src in sources]
    inventory = Inventory(
        label,
        hosts=builder.hosts,
        groups=builder.groups,
        var_files=builder.var_files,
        group_vars=VarsDirs([base / "group_vars" for base in bases]),
        host_vars=VarsDirs([base / "host_vars" for base in bases]),
    )
    inventory.sources = sources
    # Ansible's host order is `all`'s (own hosts, then group by group, level by level).
    ordered = inventory.group_hosts("all")
    inventory.hosts = {name: builder.hosts[name] for name in ordered}
    for name, host in builder.hosts.items():
        inventory.hosts.setdefault(name, host)
    # Read every vars file now so that a malformed one fails at load time, not mid-run.
    for name in builder.groups:
        inventory._group_vars.layers(name)
    for name in builder.hosts:
        inventory._host_vars.layers(name)
    return inventory
