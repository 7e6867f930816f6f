"""Jinja2 references to inventory variables inside baseline values (``{{ roce_priority }}``).

A string that is exactly one ``{{ expression }}`` keeps the expression's native type (as Ansible
does): ``"{{ roce_priority }}"`` with ``roce_priority: 3`` is the integer 3, not ``"3"``; a bare
reference to a string that reads as a number (INI ``[group:vars]`` values are strings) is typed
too, and ``"{{ roce_tos | string }}"`` stays a string.
Undefined variables are errors, never empty strings.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import yaml
from jinja2 import StrictUndefined, TemplateError, Undefined, meta
from jinja2.sandbox import SandboxedEnvironment

_SINGLE = re.compile(r"^\s*\{\{((?:(?!\}\}).)*)\}\}\s*$", re.DOTALL)
_PLAIN_REF = re.compile(r"^\s*\{\{\s*[A-Za-z_][\w.]*\s*\}\}\s*$")


# Sandboxed: templates come from user files, not from code.
_TEXT_ENV = SandboxedEnvironment(undefined=StrictUndefined, autoescape=False)


class TemplateValueError(ValueError):
    """A template in a value could not be rendered (undefined variable, syntax error)."""


def variables_of(value: Any) -> frozenset[str]:
    """Names of the variables a value's templates reference.

    Example:
        >>> sorted(variables_of({"to": "{{ roce_priority }}", "keys": ["{{ roce_dscp }}"]}))
        ['roce_dscp', 'roce_priority']
    """
    names: set[str] = set()
    for text in _strings(value):
        if "{{" in text or "{%" in text:
            try:
                names |= meta.find_undeclared_variables(_TEXT_ENV.parse(text))
            except TemplateError as exc:
                raise TemplateValueError(f"bad template {text!r}: {exc}") from None
    return frozenset(names)


def render(value: Any, context: Mapping[str, Any]) -> Any:
    """Render every template inside ``value`` (dicts, lists, strings) against ``context``.

    Example:
        >>> render({"exactly": ["{{ p }}"]}, {"p": 3})
        {'exactly': [3]}

    Raises:
        TemplateValueError: Undefined variable or template syntax error.
    """
    if isinstance(value, str):
        if "{{" not in value and "{%" not in value:
            return value
        try:
            single = _SINGLE.match(value)
            if single:
                # compile_expression keeps the native value (no string round trip).
                expr = _TEXT_ENV.compile_expression(single.group(1), undefined_to_none=False)
                out = expr(**context)
                if isinstance(out, Undefined):
                    out._fail_with_undefined_error()
                # A bare reference to a string variable ("3" from an INI [group:vars]) is typed
                # like YAML would type it; an explicit filter (``| string``) keeps its result.
                return _typed(out) if _PLAIN_REF.match(value) else out
            return _TEXT_ENV.from_string(value).render(**context)
        except TemplateError as exc:
            raise TemplateValueError(f"{value!r}: {exc}") from None
    if isinstance(value, dict):
        return {render(k, context): render(v, context) for k, v in value.items()}
    if isinstance(value, list):
        return [render(v, context) for v in value]
    return value


def _typed(out: Any) -> Any:
    """Native result; strings that are YAML scalars/lists ("3", "[3, 4]") become typed values."""
    if isinstance(out, str):
        try:
            parsed = yaml.safe_load(out)
        except yaml.YAMLError:
            return out
        if isinstance(parsed, int | float | bool | list) or parsed is None:
            return parsed if parsed is not None else out
    return out


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []
