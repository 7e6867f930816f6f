"""Inventory plugin configurations (``plugin: <fqcn>``), handed to ansible-core's own plugins.

A YAML file whose top-level ``plugin`` key names an inventory plugin (``netbox.netbox.nb_inventory``,
``networktocode.nautobot.inventory``, ``ansible.builtin.constructed``, ``generator``...) is parsed by
ansible-core itself, through its ``auto`` plugin, exactly as ``ansible-inventory -i FILE`` would:
fabline does not reimplement NetBox's or Nautobot's APIs. ansible-core is the optional extra
``fabline[ansible]``; without it such a file is a one-line error naming the extra.

The plugin sees the inventory read so far from the earlier ``-i`` sources (``constructed`` builds
groups from it), and what it adds or changes is read back into fabline's inventory. Variables stay
raw: a ``{{ lookup('env', ...) }}`` is rendered by fabline when it makes a device, never written out.
"""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol

from fabline.errors import ConfigError
from fabline.inventory.dynamic import SourceSink

#: The optional extra that brings ansible-core.
EXTRA = "fabline[ansible]"
# Variables Ansible sets on every host it parses and never prints (INTERNAL_STATIC_VARS).
_MAGIC = frozenset({"inventory_file", "inventory_dir"})


class PluginSink(SourceSink, Protocol):
    """The inventory builder: its hosts and groups so far, and its primitives."""

    @property
    def hosts(self) -> Mapping[str, Any]:
        """Hosts read so far (each with ``vars`` and ``groups``)."""
        ...

    @property
    def groups(self) -> Mapping[str, Any]:
        """Groups read so far (each with ``children``, ``vars`` and ``priority``)."""
        ...


def _ansible() -> Any:
    """ansible-core's modules (imported late: fabline works without them)."""
    try:
        from ansible.inventory.data import InventoryData
        from ansible.parsing.dataloader import DataLoader
        from ansible.plugins import loader as plugin_loader
    except ImportError:
        return None
    return InventoryData, DataLoader, plugin_loader


def load_plugin_config(sink: PluginSink, path: Path, plugin: Any) -> None:
    """Parse one plugin configuration file with ansible-core and add what it produces.

    Raises:
        ConfigError: ansible-core is not installed (names the extra), or the plugin fails (its
            message, one line).
    """
    modules = _ansible()
    if modules is None:
        raise ConfigError(
            f"inventory plugin {plugin!r} needs ansible-core: install the extra {EXTRA} "
            f"(pip install '{EXTRA}')",
            file=path,
            key="plugin",
        )
    inventory_data, data_loader, plugin_loader = modules
    with _quiet():
        if hasattr(plugin_loader, "init_plugin_loader"):
            plugin_loader.init_plugin_loader([])  # collections (netbox.netbox...) become loadable
        if plugin_loader.inventory_loader.get(str(plugin)) is None:
            collection = ".".join(str(plugin).split(".")[:2]) if str(plugin).count(".") >= 2 else ""
            hint = f" (ansible-galaxy collection install {collection})" if collection else ""
            raise ConfigError(f"inventory plugin {plugin!r} is not installed{hint}", file=path, key="plugin")
        auto = plugin_loader.inventory_loader.get("auto")
        data = inventory_data()
        _seed(data, sink)
        source = str(path)
        if not auto.verify_file(source):
            raise ConfigError(
                "an inventory plugin configuration must be a .yml or .yaml file", file=path, key="plugin"
            )
        data.current_source = source
        try:
            auto.parse(data, data_loader(), source, cache=False)
            data.reconcile_inventory()
        except Exception as exc:  # ansible's errors are many classes; each is reported in one line
            raise ConfigError(f"inventory plugin {plugin!r} failed: {_one_line(exc)}", file=path) from None
    _read_back(data, sink)


def _seed(data: Any, sink: PluginSink) -> None:
    """Give ansible-core the inventory read so far (groups, hosts, their inventory variables)."""
    for name in sink.groups:
        data.add_group(name)
    for name, group in sink.groups.items():
        for child in group.children:
            data.add_child(name, child)
        for key, value in group.vars.items():
            data.set_variable(name, key, value)
        if group.priority != 1:
            data.groups[name].set_priority(group.priority)
    for name, host in sink.hosts.items():
        groups = [g for g in host.groups if g != "ungrouped"] or [None]
        for group in groups:
            data.add_host(name, group)
        for key, value in host.vars.items():
            data.set_variable(name, key, value)


def _read_back(data: Any, sink: PluginSink) -> None:
    """Add the groups, memberships and variables ansible-core now has that the builder lacks."""
    for name in data.groups:
        sink.add_group(_plain(name))
    for name, group in data.groups.items():
        for child in group.child_groups:
            sink.add_child(_plain(name), _plain(child.name))
    for name, group in data.groups.items():
        for host in group.hosts:
            sink.add_host(_plain(host.name), _plain(name) if name != "ungrouped" else None, None)
        for key, value in group.vars.items():
            if key not in sink.groups[_plain(name)].vars or sink.groups[_plain(name)].vars[key] != value:
                sink.set_var("group", _plain(name), _plain(key), _plain(value))
        if group.priority != sink.groups[_plain(name)].priority:
            sink.set_var("group", _plain(name), "ansible_group_priority", group.priority)
    for name, host in data.hosts.items():
        if _plain(name) not in sink.hosts:
            sink.add_host(_plain(name), None, None)
        mine = sink.hosts[_plain(name)].vars
        for key, value in host.vars.items():
            if key in _MAGIC:
                continue
            if key not in mine or mine[key] != value:
                sink.set_var("host", _plain(name), _plain(key), _plain(value))


def _plain(value: Any) -> Any:
    """ansible-core 2.19 tags strings, lists and dicts with their origin; fabline keeps plain values."""
    return json.loads(json.dumps(value, default=str))


def _one_line(exc: BaseException) -> str:
    text = str(getattr(exc, "message", "") or exc) or type(exc).__name__
    first = " ".join(text.strip().splitlines()[0].split()) if text.strip() else type(exc).__name__
    return first[:300]


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """ansible-core's Display writes warnings to stdout/stderr; fabline reports failures itself."""
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        yield
