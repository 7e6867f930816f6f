"""Inventory sources: YAML/JSON and INI files or directories, with ansible-core's InventoryData rules.

Mirrors the ``yaml`` and ``ini`` inventory plugins of ansible-core and ``inventory/data.py``'s
reconciliation (``all``/``ungrouped``, group depths); :class:`SourceBuilder` accumulates hosts and
groups from every source.
"""

from __future__ import annotations

import ast
import os
import re
import shlex
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fabline.errors import ConfigError, did_you_mean
from fabline.inventory.dynamic import add_script_data, is_script_json, load_script
from fabline.inventory.files import YAML_EXTS, load_json, load_yaml_text, read_text, yaml_line
from fabline.inventory.groups import GroupClosure
from fabline.inventory.model import Group, HostEntry
from fabline.inventory.patterns import PatternError, expand_hosts, split_port
from fabline.inventory.plugins import load_plugin_config
from fabline.paths import device_name_problem

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
_YAML_SECTIONS = ("vars", "children", "hosts")
_INI_SECTION = re.compile(r"^\[([^:\]\s]+)(?::(\w+))?\]\s*(?:\#.*)?$")
_INI_GROUPNAME = re.compile(r"^([^:\]\s]+)\s*(?:\#.*)?$")


class SourceBuilder:
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
        """Declare a group (once); returns its name."""
        if not isinstance(name, str) or not name:
            raise BuildError(f"invalid group name {name!r}")
        if name in (".", "..") or any(c in name for c in "/\\\0"):
            # The name becomes group_vars/<name>: it must be one plain file name.
            raise BuildError(f"group {name!r}: not a valid group name (it must be a plain file name)")
        if name not in self.groups:
            self.groups[name] = Group(name, source=self.file)
        return name

    def add_host(self, name: str, group: str | None, port: int | None) -> None:
        """Declare a host, in ``group`` when given."""
        if not isinstance(name, str) or not name:
            raise BuildError(f"invalid host name {name!r}")
        host = self.hosts.get(name)
        if host is None:
            # The name becomes raw/<name>/ and state/<name>.json in a snapshot, host_vars/<name>.
            problem = device_name_problem(name)
            if problem:
                raise BuildError(f"host {name!r}: not a valid device name (it {problem})")
            host = self.hosts[name] = HostEntry(name, source=self.file)
            if port:
                self.set_var("host", name, "ansible_port", int(port))
        if group is not None:
            g = self.groups[group]
            if group not in host.groups:
                g.hosts.append(name)
                host.groups.append(group)

    def add_child(self, parent: str, child: str) -> None:
        """Make ``child`` a child group of ``parent``."""
        p, c = self.groups[parent], self.groups[child]
        if parent == child:
            raise BuildError(f"group {child!r} cannot be a child of itself")
        if child in p.children:
            return
        if child in self._ancestors(parent):
            raise BuildError(
                f"adding group {child!r} as child to {parent!r} creates a recursive dependency loop"
            )
        p.children.append(child)
        if parent not in c.parents:
            c.parents.append(parent)

    def set_var(self, kind: str, name: str, key: Any, value: Any) -> None:
        """Set a variable of a host or group (``kind``)."""
        if not isinstance(key, str):
            raise BuildError(f"variable name {key!r} of {kind} {name!r} must be a string")
        if kind == "group":
            g = self.groups[name]
            if key == "ansible_group_priority":
                try:
                    g.priority = int(value)
                except (TypeError, ValueError):
                    raise BuildError(f"ansible_group_priority of group {name!r} must be an integer") from None
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
        """Finish the tree as Ansible does: ungrouped hosts and top-level groups under ``all``."""
        for g in list(self.groups.values()):
            if g.name != "all" and not g.parents:
                self.add_child("all", g.name)
        closure = GroupClosure(self.groups)
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
        """Read a YAML inventory source (``text`` for line numbers in errors)."""
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
        except BuildError as exc:
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
            except BuildError as exc:
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
            except BuildError as exc:
                raise self._yaml_error(str(exc), text, loc) from None
            for var, val in host_vars.items():
                self.set_var("host", host, var, val)

    def _yaml_error(
        self, message: str, text: str, loc: tuple[Any, ...], key: str | None = None
    ) -> ConfigError:
        return ConfigError(message, file=self.file, line=yaml_line(text, loc), key=key)

    # -- INI sources (ansible.plugins.inventory.ini) -----------------------------------------------

    def parse_ini(self, text: str) -> None:
        """Read an INI inventory source."""
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
                        raise BuildError(f"section [{group}:{state}] has unknown type {state!r}")
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
                    raise BuildError(f"invalid section entry {line!r} (no spaces allowed in section names)")
                if state == "hosts":
                    self._ini_host_line(line, group)
                elif state == "vars":
                    if "=" not in line:
                        raise BuildError(f"expected key=value, got {line!r}")
                    key, value = (part.strip() for part in line.split("=", 1))
                    self.set_var("group", group, key, _ini_value(value))
                else:
                    gm = _INI_GROUPNAME.match(line)
                    if not gm:
                        raise BuildError(f"expected a group name, got {line!r}")
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
        except BuildError as exc:
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
            raise BuildError(f"cannot parse host line {line!r}: {exc}") from None
        try:
            names, port = _expand_host_entry(tokens[0])
        except PatternError as exc:
            raise BuildError(str(exc)) from None
        if tokens[0].strip().endswith(":") and port is None:
            raise BuildError(f"invalid host {tokens[0]!r}: a trailing ':' must be followed by a port")
        if any(n.strip() == "---" for n in names):
            raise BuildError("invalid host '---' (this looks like a YAML file)")
        variables: dict[str, Any] = {}
        for token in tokens[1:]:
            if "=" not in token:
                raise BuildError(f"expected key=value host variable, got {token!r}")
            key, value = token.split("=", 1)
            variables[key] = _ini_value(value)
        for host in names:
            self.add_host(host, group, port)
            for key, value in variables.items():
                self.set_var("host", host, key, value)

    # -- files and directories ---------------------------------------------------------------------

    def parse_source(self, path: Path) -> None:
        """Read an inventory file or every source in a directory."""
        if path.is_dir():
            for entry in sorted(path.iterdir(), key=lambda p: p.name):
                if not _IGNORED_ENTRY.search(entry.name):
                    self.parse_source(entry)
            return
        self.file = str(path)
        if path.suffix == ".toml":
            raise ConfigError("TOML inventories are not supported (use YAML or INI)", file=path)
        if _is_program(path):
            # Ansible's script plugin runs any executable source; one that cannot be run as a
            # program (an executable YAML file) falls through to the file parsers, as there.
            self._dynamic(path, lambda: load_script(self, path))
            return
        text = read_text(path)
        if text.startswith("#!"):
            raise ConfigError(
                "this inventory script is not executable; Ansible and fabline run a script source "
                "only when it is (chmod +x)",
                file=path,
            )
        if path.suffix in YAML_EXTS or not path.suffix:
            self._parse_yaml_or_ini(path, text)
        else:
            self.parse_ini(text)

    def _parse_yaml_or_ini(self, path: Path, text: str) -> None:
        # Ansible tries the yaml plugin first for these names and falls back to ini on failure.
        yaml_error: ConfigError
        try:
            data = load_json(text, path) if path.suffix == ".json" else load_yaml_text(text, self.file)
        except ConfigError as exc:
            yaml_error = exc
        else:
            if isinstance(data, dict):
                if data.get("plugin"):
                    self._dynamic(path, lambda: load_plugin_config(self, path, data["plugin"]))
                    return
                # What `ansible-inventory --list [--export]` prints: a .json file in that form, or
                # any file with `_meta` (a YAML group given as a list stays a YAML error, as in Ansible).
                if is_script_json(data) and (path.suffix == ".json" or "_meta" in data):
                    self._dynamic(path, lambda: add_script_data(self, data, str(path)))
                    return
                self.parse_yaml(data, text)
                return
            if data is None:
                return  # an empty file: Ansible's ini plugin accepts it and adds nothing
            yaml_error = ConfigError(
                f"a YAML inventory must be a mapping of groups, got {type(data).__name__}", file=path
            )
        if path.suffix in YAML_EXTS:
            raise yaml_error
        try:
            self.parse_ini(text)
        except ConfigError:
            raise yaml_error from None

    def _dynamic(self, path: Path, load: Callable[[], None]) -> None:
        """Run a dynamic source's loader; an inventory rule it breaks is an error naming the source."""
        try:
            load()
        except BuildError as exc:
            raise ConfigError(str(exc), file=path) from None


def _is_program(path: Path) -> bool:
    """An executable file that starts like a program (``#!`` or an ELF header), run as a script."""
    if not path.is_file() or not os.access(path, os.X_OK):
        return False
    try:
        with path.open("rb") as fh:
            head = fh.read(4)
    except OSError:
        return False
    return head.startswith(b"#!") or head == b"\x7fELF"


class BuildError(Exception):
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
