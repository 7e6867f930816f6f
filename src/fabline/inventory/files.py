"""Reading inventory and vars files: UTF-8 text, YAML with Ansible's tags, errors with file:line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from fabline.errors import ConfigError
from fabline.userfiles import check_yaml_bounds, read_user_text

#: Extensions read as YAML (JSON is YAML) in inventory directories and vars folders.
YAML_EXTS = (".yml", ".yaml", ".json")


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


def load_yaml_text(text: str, path: str) -> Any:
    """Parse YAML (or JSON) text within the user-file bounds; errors become ConfigError with file:line."""
    check_yaml_bounds(text, path, _Loader)
    try:
        return yaml.load(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = exc.problem or exc.context or "malformed YAML"
        raise ConfigError(f"malformed YAML: {problem}", file=path, line=line) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"malformed YAML: {exc}", file=path) from None


def yaml_line(text: str, loc: tuple[Any, ...]) -> int | None:
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


def read_text(path: Path) -> str:
    """An inventory file's text: a regular file (links followed) of at most 32 MiB.

    Raises:
        ConfigError: Not UTF-8, too large, not a regular file, or unreadable (naming the file).
    """
    return read_user_text(path, "inventory file")


def load_json(text: str, path: Path) -> Any:
    """Parse a JSON inventory or vars file.

    Raises:
        ConfigError: Malformed (file:line) or nested deeper than Python's recursion limit.
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"malformed JSON: {exc.msg}", file=path, line=exc.lineno) from None
    except RecursionError:
        raise ConfigError("JSON nested too deeply", file=path) from None
