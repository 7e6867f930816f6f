"""Loading user YAML files with line numbers, and turning validation errors into one line.

User files (baseline, waivers, design) are validated against pydantic models with unknown keys
forbidden; the first problem becomes a :class:`~fabline.errors.ConfigError` that names the file,
the line and the key, with a did-you-mean for typos.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticCustomError

from fabline.errors import ConfigError, did_you_mean


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
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{what} not found", file=path) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {what}: {exc}", file=path) from None
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
