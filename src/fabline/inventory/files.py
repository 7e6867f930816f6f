"""Reading inventory and vars files: UTF-8 text, YAML with Ansible's tags, errors with file:line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from fabline.errors import ConfigError
from fabline.userfiles import MAX_YAML_DEPTH, MAX_YAML_NODES, check_yaml_bounds, read_user_text

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
    """Parse YAML (or JSON) text within the user-file bounds; errors become ConfigError with file:line.

    A plain text (the usual inventory) is built in one pass over the parser's events
    (:func:`_plain_load`); anything else, and every error, takes the full loader.
    """
    plain = _plain_load(text)
    if plain is not _NOT_PLAIN:
        return plain
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


_NOT_PLAIN: Any = object()
#: The tags a plain scalar may resolve to on the quick path (a merge key ``<<`` or ``=`` is not).
_PLAIN_TAGS = frozenset(
    f"tag:yaml.org,2002:{t}" for t in ("null", "bool", "int", "float", "str", "timestamp")
)


def _plain_load(text: str) -> Any:
    """What ``yaml.load(text, Loader=_Loader)`` gives, built from the parser's events, or
    :data:`_NOT_PLAIN`.

    An inventory is mappings, sequences and untagged scalars; the loader's composer resolves every
    scalar's type with a regex walk and makes a node with two marks for it: 4 MB of YAML (15,000
    hosts) took a second. Here each distinct plain scalar is resolved and constructed once, by the
    loader's own resolver and constructors. Anything else (one document only: anchors, aliases, tags,
    merge keys, collection keys, more than one document, a limit of :func:`check_yaml_bounds`
    passed, a syntax error) is :data:`_NOT_PLAIN`, for the full loader to build or report.
    """
    loader = _Loader(text)
    constructors = type(loader).yaml_constructors
    seen: dict[str, Any] = {}
    stack: list[Any] = []  # the open collections (a dict or a list)
    keys: list[Any] = []  # per open collection: a dict's key waiting for its value, or _NOT_PLAIN
    result: Any = _NOT_PLAIN
    documents = nodes = 0
    try:
        while True:
            event = loader.get_event()
            kind = type(event)
            value: Any
            if kind is yaml.ScalarEvent:
                if event.anchor is not None or event.tag is not None:
                    return _NOT_PLAIN
                raw = event.value
                if event.implicit[0]:  # plain: its type from the resolver, once per distinct text
                    value = seen.get(raw, _NOT_PLAIN)
                    if value is _NOT_PLAIN:
                        tag = loader.resolve(yaml.ScalarNode, raw, (True, False))
                        if tag not in _PLAIN_TAGS:
                            return _NOT_PLAIN
                        value = seen[raw] = constructors[tag](loader, yaml.ScalarNode(tag, raw))
                else:  # quoted: a string
                    value = raw
                nodes += 1
            elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
                if event.anchor is not None or event.tag is not None:
                    return _NOT_PLAIN
                nodes += 1
                if len(stack) >= MAX_YAML_DEPTH:
                    return _NOT_PLAIN
                stack.append({} if kind is yaml.MappingStartEvent else [])
                keys.append(_NOT_PLAIN)
                continue
            elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
                value = stack.pop()
                if keys.pop() is not _NOT_PLAIN:
                    return _NOT_PLAIN

            elif kind is yaml.DocumentStartEvent:
                documents += 1
                if documents > 1:
                    return _NOT_PLAIN
                continue
            elif kind is yaml.StreamEndEvent:
                return result if nodes <= MAX_YAML_NODES else _NOT_PLAIN
            elif kind is yaml.StreamStartEvent or kind is yaml.DocumentEndEvent:
                continue
            else:  # an alias, or an event this reader does not know
                return _NOT_PLAIN
            if not stack:
                result = value
                continue
            top = stack[-1]
            if type(top) is list:
                top.append(value)
            elif keys[-1] is _NOT_PLAIN:
                if type(value) is dict or type(value) is list:
                    return _NOT_PLAIN  # a collection as a key: the loader says why it cannot be
                keys[-1] = value
            else:
                top[keys[-1]] = value
                keys[-1] = _NOT_PLAIN
    except (yaml.YAMLError, ValueError, TypeError):
        return _NOT_PLAIN
    finally:
        loader.dispose()


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
