"""``group_vars`` and ``host_vars`` folders (ansible.plugins.vars.host_group_vars), read on demand."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fabline.errors import ConfigError
from fabline.inventory.files import YAML_EXTS, load_json, load_yaml_text, read_text, yaml_line

_VARS_EXTS = ("", ".yml", ".yaml", ".json")


class VarsDir:
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


class VarsDirs:
    """The ``group_vars`` (or ``host_vars``) folders of every inventory source, in source order.

    Ansible's ``host_group_vars`` plugin reads the folder beside each ``-i`` source in turn, the
    later source's values winning (``get_vars_from_inventory_sources``); one source is one folder.
    """

    def __init__(self, folders: list[Path]) -> None:
        unique: dict[Path, VarsDir] = {}
        for folder in folders:
            unique.setdefault(folder, VarsDir(folder))
        self._unique = list(unique.values())
        self.dirs = [unique[folder] for folder in folders]

    def layers(self, name: str) -> list[tuple[str, dict[str, Any]]]:
        """(file, vars) for one entity from every folder, in load order."""
        return [layer for d in self.dirs for layer in d.layers(name)]

    def layers_of(self, names: list[str] | tuple[str, ...]) -> list[tuple[str, dict[str, Any]]]:
        """(file, vars) for several entities: folder by folder, each folder's entities in order."""
        return [layer for d in self.dirs for name in names for layer in d.layers(name)]

    def orphans(self, names: Mapping[str, Any]) -> list[str]:
        """Entries of any folder that belong to no known group/host, as paths."""
        return [path for d in self._unique for path in d.orphans(names)]


def _vars_dir_files(folder: Path) -> list[Path]:
    found: list[Path] = []
    for path in sorted(folder.iterdir(), key=lambda p: p.name):
        if path.name.startswith(".") or path.name.endswith("~"):
            continue
        ext = path.suffix
        if path.is_dir() and not ext:
            found.extend(_vars_dir_files(path))
        elif path.is_file() and (not ext or ext in YAML_EXTS):
            found.append(path)
    return found


def _load_vars_file(path: Path) -> dict[str, Any]:
    text = read_text(path)
    data = load_json(text, path) if path.suffix == ".json" else load_yaml_text(text, str(path))
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"a vars file must be a mapping of variables, got {type(data).__name__}", file=path)
    for key in data:
        if not isinstance(key, str):
            raise ConfigError(
                f"variable name {key!r} must be a string", file=path, line=yaml_line(text, (key,))
            )
    return data
