"""Loading user YAML files with line numbers, and turning validation errors into one line.

User files (baseline, waivers, design) are validated against pydantic models with unknown keys
forbidden; the first problem becomes a :class:`~fabline.errors.ConfigError` that names the file,
the line and the key, with a did-you-mean for typos.

Every user YAML file (these, and the inventory's) is read and parsed within bounds
(:func:`read_user_text`, :func:`check_yaml_bounds`): a regular file of at most
:data:`MAX_YAML_BYTES`, nested at most :data:`MAX_YAML_DEPTH` levels, expanding through its
aliases to at most :data:`MAX_YAML_NODES` nodes (a "billion laughs" file of 1 KB expands to 10^9).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticCustomError

from fabline.errors import ConfigError, did_you_mean
from fabline.paths import SnapshotPathError, read_regular

#: Largest user YAML/JSON file (inventory, vars, baseline, design) fabline reads.
MAX_YAML_BYTES = 32 * 1024 * 1024
#: Deepest nesting of mappings and sequences in a user YAML file.
MAX_YAML_DEPTH = 100
#: Most nodes a user YAML file may expand to, aliases counted at their full size each time.
MAX_YAML_NODES = 10_000_000


def read_user_text(path: Path, what: str = "file", limit: int = MAX_YAML_BYTES) -> str:
    """The UTF-8 text of a user file: a regular file (links followed) of at most ``limit`` bytes.

    Raises:
        ConfigError: Missing, not a regular file (a FIFO, a device, a folder), too large, or not
            UTF-8, naming the file.
    """
    try:
        data = read_regular(path.resolve(), limit)
    except FileNotFoundError:
        raise ConfigError(f"{what} not found", file=path) from None
    except SnapshotPathError as exc:
        reason = str(exc).split(": ", 1)[-1]
        raise ConfigError(f"cannot read {what}: {reason}", file=path) from None
    except OSError as exc:
        raise ConfigError(f"cannot read {what}: {exc.strerror or type(exc).__name__}", file=path) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", file=path) from None


def _line(event: Any) -> int | None:
    mark = event.start_mark
    return int(mark.line) + 1 if mark is not None else None


def check_yaml_bounds(text: str, file: str | Path, loader: Any = yaml.SafeLoader) -> None:
    """Refuse a YAML text nested too deeply or expanding too far through its aliases.

    One pass over the parser's events (no recursion, nothing built): each collection and scalar
    counts one node, each alias the full size of what it refers to.

    Example:
        >>> rows = ["a: &a [x, x, x, x, x, x, x, x, x, x]"] + [
        ...     f"{c}: &{c} [" + ", ".join([f"*{p}"] * 10) + "]" for p, c in zip("abcdefg", "bcdefgh")]
        >>> check_yaml_bounds(chr(10).join(rows), "bomb.yml")
        Traceback (most recent call last):
        ...
        fabline.errors.ConfigError: bomb.yml:7: YAML expands to more than 10000000 nodes through its aliases (an alias bomb?)

    Raises:
        ConfigError: Naming the file and the line where a limit was passed. Malformed YAML is
            left for the loader to report.
    """
    depth = total = 0
    sizes: dict[str, int] = {}
    open_collections: list[tuple[str | None, int]] = []
    try:
        for event in yaml.parse(text, Loader=loader):
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_YAML_DEPTH:
                    raise ConfigError(
                        f"YAML nested deeper than {MAX_YAML_DEPTH} levels",
                        file=file,
                        line=_line(event),
                    )
                total += 1
                open_collections.append((event.anchor, total))
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
                anchor, start = open_collections.pop()
                if anchor is not None:
                    sizes[anchor] = total - start + 1
            elif isinstance(event, yaml.ScalarEvent):
                total += 1
                if event.anchor is not None:
                    sizes[event.anchor] = 1
            elif isinstance(event, yaml.AliasEvent):
                if event.anchor in (a for a, _ in open_collections):
                    raise ConfigError(
                        f"YAML alias *{event.anchor} refers to itself",
                        file=file,
                        line=_line(event),
                    )
                total += sizes.get(event.anchor or "", 1)
            if total > MAX_YAML_NODES:
                raise ConfigError(
                    f"YAML expands to more than {MAX_YAML_NODES} nodes through its aliases (an alias bomb?)",
                    file=file,
                    line=_line(event),
                )
    except yaml.YAMLError:
        return  # malformed: the loader says where


class LineDict(dict[Any, Any]):
    """A dict that remembers the line of itself and of each of its keys (1-based)."""

    line: int = 0
    key_lines: dict[Any, int]


class LineList(list[Any]):
    """A list that remembers the line of itself and of each item (1-based)."""

    line: int = 0
    item_lines: list[int]


class _LineLoader(yaml.SafeLoader):
    pass


def _construct_mapping(loader: _LineLoader, node: yaml.MappingNode) -> LineDict:
    loader.flatten_mapping(node)
    out = LineDict()
    out.line = node.start_mark.line + 1
    out.key_lines = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            hash(key)
        except TypeError:
            raise yaml.constructor.ConstructorError(
                None, None, "found an unhashable key", key_node.start_mark
            ) from None
        if key in out:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        out[key] = loader.construct_object(value_node, deep=True)
        out.key_lines[key] = key_node.start_mark.line + 1
    return out


def _construct_sequence(loader: _LineLoader, node: yaml.SequenceNode) -> LineList:
    out = LineList(loader.construct_object(child, deep=True) for child in node.value)
    out.line = node.start_mark.line + 1
    out.item_lines = [child.start_mark.line + 1 for child in node.value]
    return out


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_sequence)


class _CLineLoader(getattr(yaml, "CSafeLoader", _LineLoader)):  # type: ignore[misc]
    """:class:`_LineLoader` on libyaml's parser (the same objects and lines, ~8x faster)."""


_CLineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_CLineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_sequence)


def choice(value: Any, choices: Sequence[str]) -> str:
    """``value`` when it is one of ``choices`` (a pydantic validator for a choice known at run time).

    Raises:
        PydanticCustomError: Not one of them, worded as pydantic words a ``Literal``.

    Example:
        >>> choice("leaf", ("spine", "leaf"))
        'leaf'
    """
    if isinstance(value, str) and value in choices:
        return value
    quoted = [repr(c) for c in choices]
    expected = f"{', '.join(quoted[:-1])} or {quoted[-1]}" if len(quoted) > 1 else "".join(quoted)
    raise PydanticCustomError("literal_error", "Input should be {expected}", {"expected": expected})


def load_yaml(path: Path, what: str = "YAML file") -> Any:
    """Load a YAML file keeping line numbers (see :class:`LineDict`).

    Raises:
        ConfigError: Missing file or malformed YAML, naming ``file:line``.
    """
    text = read_user_text(path, what)
    # libyaml's parser first (the baseline is read on every check: 75 -> 8 ms); a text it refuses
    # goes through the pure-Python path as before, so every message about a bad file is unchanged.
    check_yaml_bounds(text, path, _CLineLoader)
    try:
        return yaml.load(text, Loader=_CLineLoader)
    except yaml.YAMLError:
        pass
    check_yaml_bounds(text, path)
    try:
        return yaml.load(text, Loader=_LineLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        problem = exc.problem or exc.context or "malformed YAML"
        if exc.context and exc.context_mark and exc.problem:
            # "while parsing a flow sequence" at line 5: the opening bracket is what to look at.
            problem += f" ({exc.context} that starts at line {exc.context_mark.line + 1})"
        raise ConfigError(f"malformed YAML: {problem}", file=path, line=line) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"malformed YAML: {exc}", file=path) from None


def line_of(data: Any, loc: Sequence[int | str]) -> int | None:
    """The line of the deepest node along ``loc`` that has one.

    Example:
        >>> d = yaml.load("a:\\n  - b: 1\\n    c: 2\\n", Loader=_LineLoader)
        >>> line_of(d, ("a", 0, "c"))
        3
    """
    line: int | None = getattr(data, "line", None)
    node = data
    for part in loc:
        if isinstance(node, LineDict) and part in node:
            line = node.key_lines.get(part, line)
            node = node[part]
        elif isinstance(node, LineList) and isinstance(part, int) and 0 <= part < len(node):
            line = node.item_lines[part]
            node = node[part]
        else:
            break
        inner = getattr(node, "line", None)
        if inner and isinstance(node, LineDict | LineList) and not isinstance(part, str):
            line = inner
    return line


def dotted(loc: Sequence[int | str]) -> str:
    """Render a validation location: ``rules[3].expect[0].equals``.

    Example:
        >>> dotted(("rules", 3, "expect", 0, "equals"))
        'rules[3].expect[0].equals'
    """
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def validate(model: type[BaseModel], data: Any, path: Path, *, base_loc: Sequence[int | str] = ()) -> Any:
    """Validate ``data`` against ``model``; the first error becomes one ConfigError line.

    Raises:
        ConfigError: Naming file, line and key, with a did-you-mean for unknown keys.
    """
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise config_error_from(exc, data, path, model, base_loc=base_loc) from None


def config_error_from(
    exc: ValidationError,
    data: Any,
    path: Path,
    model: type[BaseModel],
    *,
    base_loc: Sequence[int | str] = (),
) -> ConfigError:
    """Turn the first pydantic error into a ConfigError with file, line and key."""
    err = exc.errors()[0]
    # Drop pydantic's union/tag markers (e.g. 'function-after[...]') from the location.
    loc = tuple(
        p
        for p in err["loc"]
        if not (isinstance(p, str) and ("[" in p or ("-" in p and p.startswith("function"))))
    )
    line = line_of(data, loc)
    key = dotted((*base_loc, *loc)) or None
    if err["type"] == "extra_forbidden":
        allowed = _allowed_keys(model, loc[:-1])
        hint = did_you_mean(str(loc[-1]), allowed) if loc else ""
        msg = "unknown key" + hint
        if not hint and allowed:
            msg += f" (valid keys: {', '.join(sorted(allowed))})"
        return ConfigError(msg, file=path, line=line, key=key)
    msg = str(err["msg"])
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    return ConfigError(msg, file=path, line=line, key=key)


def _allowed_keys(model: type[BaseModel], loc: Sequence[int | str]) -> list[str]:
    """Field names (aliases) of the sub-model at ``loc``, for did-you-mean."""
    current: Any = model
    for part in loc:
        if isinstance(part, int):
            continue
        fields = getattr(current, "model_fields", None)
        if not fields:
            return []
        field = next((f for n, f in fields.items() if (f.alias or n) == part), None)
        if field is None:
            return []
        current = _inner_model(field.annotation)
        if current is None:
            return []
    fields = getattr(current, "model_fields", {})
    return [f.alias or n for n, f in fields.items()]


def _inner_model(annotation: Any) -> Any:
    """The BaseModel inside ``list[M]``, ``M | None``, ``dict[str, M]``..., if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _inner_model(arg)
        if found is not None:
            return found
    return None
