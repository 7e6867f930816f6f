"""Ansible-compatible inventory: read what ``ansible-inventory`` reads, resolve fabline devices.

The loader mirrors ansible-core's own rules (``inventory/data.py``, the ``yaml`` and ``ini``
inventory plugins, the ``host_group_vars`` vars plugin and ``VariableManager.get_vars``) so that
:meth:`Inventory.to_ansible_list` prints the same JSON as ``ansible-inventory -i PATH --list``:

* sources: a YAML/JSON file, an INI file, or a directory of them (sorted, recursively, skipping
  hidden files, ``group_vars``/``host_vars``, and Ansible's ignored extensions such as ``.retry``,
  ``.orig``, ``~``, ``.md``);
* ``group_vars/`` and ``host_vars/`` beside the inventory file or inside the inventory directory:
  the first of ``NAME``, ``NAME.yml``, ``NAME.yaml``, ``NAME.json`` (a directory ``NAME/`` is read
  file by file in sorted order);
* precedence, lowest first: ``all`` vars, other group vars from the inventory (by depth, then
  ``ansible_group_priority``, then name), ``group_vars/all``, ``group_vars/<group>`` (same order),
  the host's inventory vars, ``host_vars/<host>``.

fabline is stricter than Ansible where Ansible only warns: unknown keys in a YAML group, a name that
is both a host and a group, an unparsable file in an inventory directory, an empty host range and a
``--limit`` term matching nothing are :class:`~fabline.errors.ConfigError`.

Example:
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "hosts.ini").write_text("[leaf]\\nleaf[01:02] fabline_role=leaf\\n")
    >>> inv = load_inventory(d / "hosts.ini")
    >>> list(inv.hosts), inv.host_groups("leaf02"), inv.host_vars("leaf01")
    (['leaf01', 'leaf02'], ['leaf'], {'fabline_role': 'leaf'})
"""

from __future__ import annotations

import ast
import datetime as _dt
import json
import os
import re
import shlex
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import yaml
from jinja2 import TemplateError, TemplateSyntaxError, Undefined, UndefinedError, meta
from jinja2.runtime import StrictUndefined
from jinja2.sandbox import ImmutableSandboxedEnvironment

from fabline.errors import ConfigError, did_you_mean
from fabline.inventory_patterns import (
    PatternError,
    apply_subscript,
    compile_term,
    expand_hosts,
    is_wildcard,
    order_patterns,
    split_host_pattern,
    split_port,
    split_subscript,
)
from fabline.paths import device_name_problem
from fabline.platforms.spec import host_platform, network_os_aliases, platform_for_network_os, platform_ids

ROLES = ("spine", "leaf", "host")

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

# Directory entries Ansible never reads as inventory sources (IGNORED_ALWAYS + INVENTORY_IGNORE_EXTS).
_IGNORED_EXTS = (
    ".pyc",
    ".pyo",
    ".swp",
    ".bak",
    "~",
    ".rpm",
    ".md",
    ".txt",
    ".rst",
    ".orig",
    ".cfg",
    ".retry",
)
_IGNORED_ENTRY = re.compile(
    r"^\.|^host_vars$|^group_vars$|^vars_plugins$|" + "|".join(re.escape(ext) + "$" for ext in _IGNORED_EXTS)
)
_YAML_EXTS = (".yml", ".yaml", ".json")
_VARS_EXTS = ("", ".yml", ".yaml", ".json")
_YAML_SECTIONS = ("vars", "children", "hosts")
_INI_SECTION = re.compile(r"^\[([^:\]\s]+)(?::(\w+))?\]\s*(?:\#.*)?$")
_INI_GROUPNAME = re.compile(r"^([^:\]\s]+)\s*(?:\#.*)?$")
# Keys whose values are masked in a Device's repr (the values are still available to the code).
_SECRET_KEY = re.compile(r"pass|secret|token|private_key(?!_file)|community|psk", re.I)
_SINGLE_EXPRESSION = re.compile(r"^\{\{((?:(?!\}\}|\{\{|\{%|\{#).)*)\}\}$", re.S)


# ---------------------------------------------------------------------------------------------
# Model


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

    def __repr__(self) -> str:
        shown = {k: ("***" if _SECRET_KEY.search(k) else v) for k, v in self._data.items()}
        return f"HostVars({shown!r})"


class Named(Protocol):
    """What most of fabline needs of a device: its name, platform and role."""

    @property
    def name(self) -> str: ...

    @property
    def platform(self) -> str: ...

    @property
    def role(self) -> str: ...


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


# ---------------------------------------------------------------------------------------------
# YAML with Ansible's tags


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """Safe YAML loader that knows Ansible's ``!unsafe`` and refuses ``!vault`` clearly."""


def _construct_unsafe(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_mapping(node, deep=True)  # type: ignore[arg-type]


def _construct_vault(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    raise yaml.constructor.ConstructorError(
        None,
        None,
        "Ansible Vault values are not supported by fabline; use \"{{ lookup('env', 'NAME') }}\"",
        node.start_mark,
    )


_Loader.add_constructor("!unsafe", _construct_unsafe)
_Loader.add_constructor("!vault", _construct_vault)
_Loader.add_constructor("!vault-encrypted", _construct_vault)


def _load_yaml_text(text: str, path: str) -> Any:
    """Parse YAML (or JSON) text; errors become ConfigError with file:line."""
    try:
        return yaml.load(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = exc.problem or exc.context or "malformed YAML"
        raise ConfigError(f"malformed YAML: {problem}", file=path, line=line) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"malformed YAML: {exc}", file=path) from None


def _yaml_line(text: str, loc: tuple[Any, ...]) -> int | None:
    """Line (1-based) of the key at ``loc`` (a path of mapping keys) in a YAML text, if found."""
    try:
        node: Any = yaml.compose(text, Loader=_Loader)
    except yaml.YAMLError:
        return None
    line = None
    for key in loc:
        if not isinstance(node, yaml.MappingNode):
            return line
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode) and k.value == str(key):
                line, node = k.start_mark.line + 1, v
                break
        else:
            return line
    return line


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", file=path) from None
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror}", file=path) from None


# ---------------------------------------------------------------------------------------------
# Building the inventory (ansible-core InventoryData semantics)


class _Builder:
    """Accumulates groups and hosts from every source, then reconciles like InventoryData."""

    def __init__(self) -> None:
        self.groups: dict[str, Group] = {}
        self.hosts: dict[str, HostEntry] = {}
        # (entity kind, name) -> {var: file}; used to name the file in value errors.
        self.var_files: dict[tuple[str, str], dict[str, str]] = {}
        self.file = ""
        for name in ("all", "ungrouped"):
            self.groups[name] = Group(name)
        self.add_child("all", "ungrouped")

    # -- primitives ---------------------------------------------------------------------------

    def add_group(self, name: str) -> str:
        if not isinstance(name, str) or not name:
            raise _BuildError(f"invalid group name {name!r}")
        if name in (".", "..") or any(c in name for c in "/\\\0"):
            # The name becomes group_vars/<name>: it must be one plain file name.
            raise _BuildError(f"group {name!r}: not a valid group name (it must be a plain file name)")
        if name not in self.groups:
            self.groups[name] = Group(name, source=self.file)
        return name

    def add_host(self, name: str, group: str | None, port: int | None) -> None:
        if not isinstance(name, str) or not name:
            raise _BuildError(f"invalid host name {name!r}")
        host = self.hosts.get(name)
        if host is None:
            # The name becomes raw/<name>/ and state/<name>.json in a snapshot, host_vars/<name>.
            problem = device_name_problem(name)
            if problem:
                raise _BuildError(f"host {name!r}: not a valid device name (it {problem})")
            host = self.hosts[name] = HostEntry(name, source=self.file)
            if port:
                self.set_var("host", name, "ansible_port", int(port))
        if group is not None:
            g = self.groups[group]
            if name not in host.groups:
                g.hosts.append(name)
                host.groups.append(group)

    def add_child(self, parent: str, child: str) -> None:
        p, c = self.groups[parent], self.groups[child]
        if parent == child:
            raise _BuildError(f"group {child!r} cannot be a child of itself")
        if child in p.children:
            return
        if child in self._ancestors(parent):
            raise _BuildError(
                f"adding group {child!r} as child to {parent!r} creates a recursive dependency loop"
            )
        p.children.append(child)
        if parent not in c.parents:
            c.parents.append(parent)

    def set_var(self, kind: str, name: str, key: Any, value: Any) -> None:
        if not isinstance(key, str):
            raise _BuildError(f"variable name {key!r} of {kind} {name!r} must be a string")
        if kind == "group":
            g = self.groups[name]
            if key == "ansible_group_priority":
                try:
                    g.priority = int(value)
                except (TypeError, ValueError):
                    raise _BuildError(
                        f"ansible_group_priority of group {name!r} must be an integer"
                    ) from None
                return
            g.vars[key] = value
        else:
            self.hosts[name].vars[key] = value
        self.var_files.setdefault((kind, name), {})[key] = self.file

    def _ancestors(self, name: str) -> set[str]:
        seen: set[str] = set()
        todo = list(self.groups[name].parents)
        while todo:
            g = todo.pop()
            if g not in seen:
                seen.add(g)
                todo.extend(self.groups[g].parents)
        return seen

    # -- reconcile (InventoryData.reconcile_inventory) ------------------------------------------

    def reconcile(self) -> None:
        for g in list(self.groups.values()):
            if g.name != "all" and not g.parents:
                self.add_child("all", g.name)
        closure = _GroupClosure(self.groups)
        ungrouped = self.groups["ungrouped"]
        drop: set[str] = set()
        for host in self.hosts.values():
            mine = closure.of_host(host.groups)
            if "ungrouped" in mine:
                if mine - {"all", "ungrouped"}:
                    drop.add(host.name)
            elif not mine or mine == {"all"}:
                ungrouped.hosts.append(host.name)
                host.groups.append("ungrouped")
        if drop:
            ungrouped.hosts = [h for h in ungrouped.hosts if h not in drop]
            for name in drop:
                self.hosts[name].groups.remove("ungrouped")
        self._set_depths()

    def _set_depths(self) -> None:
        # Ansible's depth is the longest path from `all`; memoised walk over parents.
        depth: dict[str, int] = {"all": 0}

        def walk(name: str) -> int:
            if name not in depth:
                parents = self.groups[name].parents
                depth[name] = 1 + max((walk(p) for p in parents), default=-1)
            return depth[name]

        for g in self.groups.values():
            g.depth = walk(g.name)

    # -- YAML sources (ansible.plugins.inventory.yaml) ---------------------------------------------

    def parse_yaml(self, data: dict[Any, Any], text: str) -> None:
        for name, body in data.items():
            self._yaml_group(name, body, text, (name,))

    def _yaml_group(self, name: Any, body: Any, text: str, loc: tuple[Any, ...]) -> str:
        if not isinstance(name, str):
            raise self._yaml_error(f"group name {name!r} must be a string", text, loc)
        if body is not None and not isinstance(body, dict):
            raise self._yaml_error(
                f"group {name!r} must be a mapping with vars/children/hosts, got {type(body).__name__}",
                text,
                loc,
            )
        try:
            self.add_group(name)
        except _BuildError as exc:
            raise self._yaml_error(str(exc), text, loc) from None
        if not body:
            return name
        for key, value in body.items():
            here = (*loc, key)
            if key not in _YAML_SECTIONS:
                raise self._yaml_error(
                    f"unknown key in group {name!r}; expected one of vars, children, hosts"
                    + did_you_mean(str(key), _YAML_SECTIONS),
                    text,
                    here,
                    key=str(key),
                )
            if isinstance(value, str):
                value = {value: None}
            if value is None:
                continue
            if not isinstance(value, dict):
                raise self._yaml_error(
                    f"{key!r} of group {name!r} must be a mapping, got {type(value).__name__}",
                    text,
                    here,
                    key=key,
                )
            try:
                if key == "vars":
                    for var, val in value.items():
                        self.set_var("group", name, var, val)
                elif key == "children":
                    for sub, sub_body in value.items():
                        child = self._yaml_group(sub, sub_body, text, (*here, sub))
                        self.add_child(name, child)
                else:
                    for pattern, host_vars in value.items():
                        self._yaml_hosts(name, pattern, host_vars, text, (*here, pattern))
            except _BuildError as exc:
                raise self._yaml_error(str(exc), text, here, key=key) from None
        return name

    def _yaml_hosts(self, group: str, pattern: Any, host_vars: Any, text: str, loc: tuple[Any, ...]) -> None:
        if not isinstance(pattern, str):
            raise self._yaml_error(
                f"host name {pattern!r} in group {group!r} must be a string (quote numbers)", text, loc
            )
        if host_vars is None:
            host_vars = {}
        if not isinstance(host_vars, dict):
            raise self._yaml_error(
                f"variables of host {pattern!r} must be a mapping, got {type(host_vars).__name__}",
                text,
                loc,
            )
        try:
            names, port = _expand_host_entry(pattern)
        except PatternError as exc:
            raise self._yaml_error(str(exc), text, loc) from None
        for host in names:
            try:
                self.add_host(host, group, port)
            except _BuildError as exc:
                raise self._yaml_error(str(exc), text, loc) from None
            for var, val in host_vars.items():
                self.set_var("host", host, var, val)

    def _yaml_error(
        self, message: str, text: str, loc: tuple[Any, ...], key: str | None = None
    ) -> ConfigError:
        return ConfigError(message, file=self.file, line=_yaml_line(text, loc), key=key)

    # -- INI sources (ansible.plugins.inventory.ini) -----------------------------------------------

    def parse_ini(self, text: str) -> None:
        pending: dict[str, dict[str, Any]] = {}
        group, state = "ungrouped", "hosts"
        lineno = 0
        try:
            for lineno, raw in enumerate(text.splitlines(), start=1):
                line = raw.strip()
                if not line or line[0] in ";#":
                    continue
                m = _INI_SECTION.match(line)
                if m:
                    group, state = m.group(1), m.group(2) or "hosts"
                    if state not in ("hosts", "children", "vars"):
                        raise _BuildError(f"section [{group}:{state}] has unknown type {state!r}")
                    if group not in self.groups:
                        if state == "vars" and group not in pending:
                            pending[group] = {"line": lineno, "state": state, "name": group}
                        self.add_group(group)
                    if group in pending and state != "vars":
                        if pending[group]["state"] == "children":
                            self._ini_add_pending(group, pending)
                        elif pending[group]["state"] == "vars":
                            del pending[group]
                    continue
                if line.startswith("[") and line.endswith("]"):
                    raise _BuildError(f"invalid section entry {line!r} (no spaces allowed in section names)")
                if state == "hosts":
                    self._ini_host_line(line, group)
                elif state == "vars":
                    if "=" not in line:
                        raise _BuildError(f"expected key=value, got {line!r}")
                    key, value = (part.strip() for part in line.split("=", 1))
                    self.set_var("group", group, key, _ini_value(value))
                else:
                    gm = _INI_GROUPNAME.match(line)
                    if not gm:
                        raise _BuildError(f"expected a group name, got {line!r}")
                    child = gm.group(1)
                    if child not in self.groups:
                        if child not in pending:
                            pending[child] = {
                                "line": lineno,
                                "state": state,
                                "name": child,
                                "parents": [group],
                            }
                        else:
                            pending[child].setdefault("parents", []).append(group)
                    else:
                        self.add_child(group, child)
        except _BuildError as exc:
            raise ConfigError(str(exc), file=self.file, line=lineno) from None
        for decl in pending.values():
            if decl["state"] == "vars":
                msg = f"section [{decl['name']}:vars] is for undefined group {decl['name']!r}"
            else:
                msg = f"section [{decl['parents'][-1]}:children] includes undefined group {decl['name']!r}"
            raise ConfigError(msg, file=self.file, line=decl["line"])

    def _ini_add_pending(self, group: str, pending: dict[str, dict[str, Any]]) -> None:
        for parent in pending[group]["parents"]:
            self.add_child(parent, group)
            if parent in pending and pending[parent]["state"] == "children":
                self._ini_add_pending(parent, pending)
        del pending[group]

    def _ini_host_line(self, line: str, group: str) -> None:
        try:
            tokens = shlex.split(line, comments=True)
        except ValueError as exc:
            raise _BuildError(f"cannot parse host line {line!r}: {exc}") from None
        try:
            names, port = _expand_host_entry(tokens[0])
        except PatternError as exc:
            raise _BuildError(str(exc)) from None
        if tokens[0].strip().endswith(":") and port is None:
            raise _BuildError(f"invalid host {tokens[0]!r}: a trailing ':' must be followed by a port")
        if any(n.strip() == "---" for n in names):
            raise _BuildError("invalid host '---' (this looks like a YAML file)")
        variables: dict[str, Any] = {}
        for token in tokens[1:]:
            if "=" not in token:
                raise _BuildError(f"expected key=value host variable, got {token!r}")
            key, value = token.split("=", 1)
            variables[key] = _ini_value(value)
        for host in names:
            self.add_host(host, group, port)
            for key, value in variables.items():
                self.set_var("host", host, key, value)

    # -- files and directories ---------------------------------------------------------------------

    def parse_source(self, path: Path) -> None:
        if path.is_dir():
            for entry in sorted(path.iterdir(), key=lambda p: p.name):
                if not _IGNORED_ENTRY.search(entry.name):
                    self.parse_source(entry)
            return
        self.file = str(path)
        if path.suffix == ".toml":
            raise ConfigError("TOML inventories are not supported (use YAML or INI)", file=path)
        if os.access(path, os.X_OK):
            raise ConfigError(
                "executable inventory scripts are not supported (fabline reads YAML and INI inventories)",
                file=path,
            )
        text = _read_text(path)
        if text.startswith("#!"):
            raise ConfigError(
                "inventory scripts are not supported (fabline reads YAML and INI inventories)", file=path
            )
        if path.suffix in _YAML_EXTS or not path.suffix:
            self._parse_yaml_or_ini(path, text)
        else:
            self.parse_ini(text)

    def _parse_yaml_or_ini(self, path: Path, text: str) -> None:
        # Ansible tries the yaml plugin first for these names and falls back to ini on failure.
        yaml_error: ConfigError
        try:
            data = json.loads(text) if path.suffix == ".json" else _load_yaml_text(text, self.file)
        except json.JSONDecodeError as exc:
            yaml_error = ConfigError(f"malformed JSON: {exc.msg}", file=path, line=exc.lineno)
        except ConfigError as exc:
            yaml_error = exc
        else:
            if isinstance(data, dict):
                if data.get("plugin"):
                    raise ConfigError(
                        f"inventory plugin configurations are not supported (plugin: {data['plugin']})",
                        file=path,
                        key="plugin",
                    )
                self.parse_yaml(data, text)
                return
            if data is None:
                return  # an empty file: Ansible's ini plugin accepts it and adds nothing
            yaml_error = ConfigError(
                f"a YAML inventory must be a mapping of groups, got {type(data).__name__}", file=path
            )
        if path.suffix in _YAML_EXTS:
            raise yaml_error
        try:
            self.parse_ini(text)
        except ConfigError:
            raise yaml_error from None


class _BuildError(Exception):
    """An inventory rule was broken; the parser adds file and line."""


def _expand_host_entry(entry: str) -> tuple[list[str], int | None]:
    name, port = split_port(entry)
    return expand_hosts(name), port


def _ini_value(text: str) -> Any:
    """Type an INI value as Ansible does (Python literal if it is one, else the string).

    Example:
        >>> [_ini_value(v) for v in ("22", "True", "'22'", "a b", "[1, 2]", "1j")]
        [22, True, '22', 'a b', [1, 2], '1j']
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)
            value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text
    return _ini_coerce(value)


def _ini_coerce(value: Any) -> Any:
    if isinstance(value, (list, tuple, set)):
        return [_ini_coerce(v) for v in value]
    if isinstance(value, dict):
        return {k: _ini_coerce(v) for k, v in value.items()}
    if value is ...:
        return "..."
    if isinstance(value, complex):
        return str(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return value


class _GroupClosure:
    """Transitive group membership (a group and all its ancestors), cached per group set."""

    def __init__(self, groups: Mapping[str, Group]) -> None:
        self._groups = groups
        self._up: dict[str, frozenset[str]] = {}
        self._sets: dict[tuple[str, ...], frozenset[str]] = {}

    def of_group(self, name: str) -> frozenset[str]:
        got = self._up.get(name)
        if got is None:
            acc = {name}
            for parent in self._groups[name].parents:
                acc |= self.of_group(parent)
            got = self._up[name] = frozenset(acc)
        return got

    def of_host(self, direct: list[str]) -> frozenset[str]:
        key = tuple(direct)
        got = self._sets.get(key)
        if got is None:
            acc: set[str] = set()
            for g in direct:
                acc |= self.of_group(g)
            got = self._sets[key] = frozenset(acc)
        return got


# ---------------------------------------------------------------------------------------------
# group_vars / host_vars (ansible.plugins.vars.host_group_vars)


class _VarsDir:
    """The ``group_vars`` or ``host_vars`` folder of an inventory, read on demand."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.entries = frozenset(p.name for p in folder.iterdir()) if folder.is_dir() else frozenset()
        self._cache: dict[str, list[tuple[str, dict[str, Any]]]] = {}

    def layers(self, name: str) -> list[tuple[str, dict[str, Any]]]:
        """(file, vars) for an entity, in load order; empty if it has no file."""
        got = self._cache.get(name)
        if got is None:
            got = self._cache[name] = [(str(f), _load_vars_file(f)) for f in self._files(name)]
        return got

    def _files(self, name: str) -> list[Path]:
        if not self.entries:
            return []
        for ext in _VARS_EXTS:
            if name + ext in self.entries:
                path = self.folder / (name + ext)
                return _vars_dir_files(path) if path.is_dir() else [path]
        return []

    def orphans(self, names: Mapping[str, Any]) -> list[str]:
        """Entries that belong to no known group/host (e.g. ``group_vars/leafs.yml``), as paths."""
        out = []
        for entry in sorted(self.entries):
            if entry.startswith(".") or entry.endswith("~"):
                continue
            stem = next((entry[: -len(e)] for e in _VARS_EXTS[1:] if entry.endswith(e)), entry)
            if stem not in names and entry not in names:
                out.append(str(self.folder / entry))
        return out


def _vars_dir_files(folder: Path) -> list[Path]:
    found: list[Path] = []
    for path in sorted(folder.iterdir(), key=lambda p: p.name):
        if path.name.startswith(".") or path.name.endswith("~"):
            continue
        ext = path.suffix
        if path.is_dir() and not ext:
            found.extend(_vars_dir_files(path))
        elif path.is_file() and (not ext or ext in _YAML_EXTS):
            found.append(path)
    return found


def _load_vars_file(path: Path) -> dict[str, Any]:
    text = _read_text(path)
    if path.suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"malformed JSON: {exc.msg}", file=path, line=exc.lineno) from None
    else:
        data = _load_yaml_text(text, str(path))
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"a vars file must be a mapping of variables, got {type(data).__name__}", file=path)
    for key in data:
        if not isinstance(key, str):
            raise ConfigError(
                f"variable name {key!r} must be a string", file=path, line=_yaml_line(text, (key,))
            )
    return data


# ---------------------------------------------------------------------------------------------
# The inventory


class Inventory:
    """A loaded inventory: hosts, groups, merged variables, patterns and fabline devices.

    Attributes:
        hosts: Hosts in the order the inventory sources declare them.
        groups: ``all``, ``ungrouped`` and every group, in the order they were declared.
        source: The inventory path as given.
    """

    def __init__(
        self,
        source: str,
        *,
        hosts: dict[str, HostEntry],
        groups: dict[str, Group],
        var_files: dict[tuple[str, str], dict[str, str]],
        group_vars: _VarsDir,
        host_vars: _VarsDir,
    ) -> None:
        self.hosts = hosts
        self.groups = groups
        self.source = source
        self._var_files = var_files
        self._group_vars = group_vars
        self._host_vars = host_vars
        self._closure = _GroupClosure(groups)
        self._sorted_cache: dict[tuple[str, ...], tuple[str, ...]] = {}
        self._group_layer_cache: dict[tuple[str, ...], dict[str, Any]] = {}
        self._group_hosts_cache: dict[str, list[str]] = {}
        self._templater = _Templater()

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
            for g in order:
                for _file, data in self._group_vars.layers(g):
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
            result = self._evaluate(order_patterns(split_host_pattern(pattern)), strict)
        except PatternError as exc:
            raise ConfigError(str(exc), file=self.source) from None
        if not result and strict:
            self._no_match(pattern)
        return result

    def _no_match(self, pattern: str) -> list[str]:
        raise ConfigError(f"--limit {pattern!r} matches no host in {self.source}")

    def _evaluate(self, terms: list[str], strict: bool) -> list[str]:
        hosts: list[str] = []
        for term in terms:
            if term in self.hosts:
                if term not in hosts:
                    hosts.append(term)
                continue
            that = self._match_one(term, strict)
            if term[0] == "!":
                drop = set(that)
                hosts = [h for h in hosts if h not in drop]
            elif term[0] == "&":
                keep = set(that)
                hosts = [h for h in hosts if h in keep]
            else:
                have = set(hosts)
                for h in that:
                    if h not in have:
                        have.add(h)
                        hosts.append(h)
        return hosts

    def _match_one(self, term: str, strict: bool) -> list[str]:
        bare = term[1:] if term[0] in "&!" else term
        expr, subscript = split_subscript(bare)
        if not expr:
            raise PatternError(f"empty host pattern term {term!r}")
        matches = compile_term(expr)
        found: list[str] = []
        groups = [g for g in self.groups if matches(g)]
        for g in groups:
            found.extend(self.group_hosts(g))
        if not groups or is_wildcard(expr):
            found.extend(h for h in self.hosts if matches(h))
        if not found and not groups and strict:
            names = [*self.groups, *self.hosts] if len(self.hosts) < 5000 else list(self.groups)
            raise ConfigError(
                f"--limit term {expr!r} matches no group or host in {self.source}" + did_you_mean(expr, names)
            )
        found = list(dict.fromkeys(found))
        try:
            return apply_subscript(found, subscript)
        except IndexError:
            raise ConfigError(
                f"--limit {term!r}: subscript out of range ({len(found)} hosts match {expr!r})"
            ) from None

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
        except _VarError as exc:
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


# ---------------------------------------------------------------------------------------------
# Templating (Jinja2 sandbox, Ansible's env lookup)


class _TemplateFailureError(Exception):
    """A template could not be rendered; the message never contains a variable's value."""


class _VarError(Exception):
    """A host variable could not be templated; the inventory adds the file that set it."""

    def __init__(self, message: str, key: str) -> None:
        super().__init__(message)
        self.message = message
        self.key = key


def _lookup(plugin: str, *terms: Any, **kwargs: Any) -> Any:
    """Ansible's ``lookup('env', NAME, default='')``: unset variables give the default."""
    wantlist = bool(kwargs.pop("wantlist", False))
    default = kwargs.pop("default", "")
    if kwargs:
        raise _TemplateFailureError(f"lookup {plugin!r} got unknown options {sorted(kwargs)}")
    if plugin not in ("env", "ansible.builtin.env"):
        raise _TemplateFailureError(f"lookup {plugin!r} is not supported (fabline resolves only 'env')")
    values = [
        os.environ.get(str(term).split()[0], default) if str(term).split() else default for term in terms
    ]
    if wantlist:
        return values
    if len(values) == 1:
        return values[0]
    return ",".join(str(v) for v in values)


def _query(plugin: str, *terms: Any, **kwargs: Any) -> Any:
    return _lookup(plugin, *terms, wantlist=True, **kwargs)


def _to_bool(value: Any) -> bool:
    """Ansible's ``bool`` filter."""
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in ("yes", "on", "1", "true", "y", "t")


def _ternary(value: Any, true_val: Any, false_val: Any, none_val: Any = None) -> Any:
    if value is None and none_val is not None:
        return none_val
    return true_val if value else false_val


def _mandatory(value: Any, msg: str | None = None) -> Any:
    return value


class _Templater:
    """Renders host variables: sandboxed Jinja2, native types for ``"{{ expr }}"``, recursion guard."""

    def __init__(self) -> None:
        env = ImmutableSandboxedEnvironment(undefined=StrictUndefined, autoescape=False)
        env.globals.update(lookup=_lookup, query=_query, q=_query)
        env.filters.update(bool=_to_bool, ternary=_ternary, mandatory=_mandatory, d=env.filters["default"])
        self.env = env
        self._compiled: dict[str, tuple[Callable[..., Any], frozenset[str], bool]] = {}
        self._results: dict[tuple[Any, ...], Any] = {}

    def _compile(self, text: str) -> tuple[Callable[..., Any], frozenset[str], bool]:
        got = self._compiled.get(text)
        if got is None:
            names = frozenset(meta.find_undeclared_variables(self.env.parse(text)))
            single = _SINGLE_EXPRESSION.match(text.strip())
            if single:
                expr = self.env.compile_expression(single.group(1), undefined_to_none=False)
                got = (expr, names, True)
            else:
                got = (self.env.from_string(text).render, names, False)
            self._compiled[text] = got
        return got

    def render_vars(
        self,
        host: str,
        raw: Mapping[str, Any],
        magic: Mapping[str, Any],
        groups: Callable[[], dict[str, list[str]]],
    ) -> dict[str, Any]:
        done: dict[str, Any] = {}
        stack: list[str] = []

        def resolve(key: str) -> Any:
            if key in done:
                return done[key]
            if key in stack:
                chain = " -> ".join([*stack[stack.index(key) :], key])
                raise _VarError(f"host {host!r}: variable {key!r} refers to itself ({chain})", key)
            stack.append(key)
            try:
                done[key] = walk(raw[key], key)
            finally:
                stack.pop()
            return done[key]

        def walk(value: Any, key: str) -> Any:
            if isinstance(value, str):
                return render(value, key) if ("{{" in value or "{%" in value) else value
            if isinstance(value, dict):
                return {k: walk(v, key) for k, v in value.items()}
            if isinstance(value, list):
                return [walk(v, key) for v in value]
            return value

        def render(text: str, key: str) -> Any:
            try:
                fn, names, _single = self._compile(text)
                ctx: dict[str, Any] = {}
                for n in names:
                    if n in raw:
                        ctx[n] = resolve(n)
                    elif n in magic:
                        ctx[n] = magic[n]
                    elif n == "groups":
                        ctx[n] = groups()
                cache_key = _cache_key(text, ctx)
                if cache_key is not None and cache_key in self._results:
                    return self._results[cache_key]
                out = fn(**ctx)
                if isinstance(out, Undefined):
                    out._fail_with_undefined_error()
                # Only immutable results are shared between hosts.
                if cache_key is not None and isinstance(out, (str, int, float, bool, type(None))):
                    self._results[cache_key] = out
                return out
            except _VarError:
                raise
            except UndefinedError as exc:
                raise _VarError(f"host {host!r}: variable {key!r}: {exc.message}", key) from None
            except TemplateSyntaxError as exc:
                raise _VarError(
                    f"host {host!r}: variable {key!r}: template syntax error: {exc.message}", key
                ) from None
            except _TemplateFailureError as exc:
                raise _VarError(f"host {host!r}: variable {key!r}: {exc}", key) from None
            except (
                TemplateError,
                ArithmeticError,
                TypeError,
                ValueError,
                LookupError,
                AttributeError,
            ) as exc:
                # The exception text may quote a value (a secret); name only its kind.
                raise _VarError(
                    f"host {host!r}: variable {key!r}: template failed ({type(exc).__name__})", key
                ) from None

        for key in raw:
            resolve(key)
        return done


def _cache_key(text: str, ctx: Mapping[str, Any]) -> tuple[Any, ...] | None:
    # Results depend on the template, its inputs and (for lookups) the environment at call time;
    # only cache when every input is a hashable scalar and no env lookup is involved.
    if "lookup" in text or "query" in text or "q(" in text:
        return None
    items = []
    for k in sorted(ctx):
        v = ctx[k]
        if not isinstance(v, (str, int, float, bool, type(None))):
            return None
        items.append((k, type(v).__name__, v))
    return (text, *items)


# ---------------------------------------------------------------------------------------------
# Entry point


def load_inventory(path: str | Path) -> Inventory:
    """Load an Ansible inventory (YAML or INI file, or a directory of them) with its vars folders.

    Raises:
        ConfigError: Missing path, malformed YAML/INI (file:line), a group loop, a bad range, a name
            used for both a host and a group, or a bad ``group_vars``/``host_vars`` file.
    """
    src = Path(path)
    if not src.exists():
        raise ConfigError("inventory not found", file=path)
    builder = _Builder()
    builder.parse_source(src)
    try:
        builder.reconcile()
    except _BuildError as exc:
        raise ConfigError(str(exc), file=path) from None
    clash = [name for name in builder.hosts if name in builder.groups]
    if clash:
        host = builder.hosts[clash[0]]
        raise ConfigError(
            f"{clash[0]!r} is both a host and a group; rename one (patterns and --limit would be ambiguous)",
            file=host.source or path,
        )
    base = src if src.is_dir() else src.parent
    inventory = Inventory(
        str(path),
        hosts=builder.hosts,
        groups=builder.groups,
        var_files=builder.var_files,
        group_vars=_VarsDir(base / "group_vars"),
        host_vars=_VarsDir(base / "host_vars"),
    )
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


__all__ = [
    "ROLES",
    "Device",
    "Group",
    "HostEntry",
    "HostVars",
    "Inventory",
    "load_inventory",
    "platform_for_network_os",
]
