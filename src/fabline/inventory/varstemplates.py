"""Templated host variables: sandboxed Jinja2, native values, Ansible's ``env`` lookup."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from jinja2 import TemplateError, TemplateSyntaxError, Undefined, UndefinedError

from fabline.templating import TemplateLimitError, compile_value, environment


class _TemplateFailureError(Exception):
    """A template could not be rendered; the message never contains a variable's value."""


class VarError(Exception):
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


class VarsTemplater:
    """Renders host variables: sandboxed Jinja2, native types for ``"{{ expr }}"``, recursion guard."""

    def __init__(self) -> None:
        self.env = environment(lookup=_lookup, query=_query, q=_query)
        self._results: dict[tuple[Any, ...], Any] = {}

    def render_vars(
        self,
        host: str,
        raw: Mapping[str, Any],
        magic: Mapping[str, Any],
        groups: Callable[[], dict[str, list[str]]],
    ) -> dict[str, Any]:
        """A host's variables with every template rendered (``magic``: the Ansible magic variables)."""
        done: dict[str, Any] = {}
        stack: list[str] = []

        def resolve(key: str) -> Any:
            if key in done:
                return done[key]
            if key in stack:
                chain = " -> ".join([*stack[stack.index(key) :], key])
                raise VarError(f"host {host!r}: variable {key!r} refers to itself ({chain})", key)
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
                template = compile_value(self.env, text)
                fn, names = template.call, template.names
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
            except VarError:
                raise
            except UndefinedError as exc:
                raise VarError(f"host {host!r}: variable {key!r}: {exc.message}", key) from None
            except TemplateSyntaxError as exc:
                raise VarError(
                    f"host {host!r}: variable {key!r}: template syntax error: {exc.message}", key
                ) from None
            except TemplateLimitError as exc:
                raise VarError(f"host {host!r}: variable {key!r}: {exc.message}", key) from None
            except _TemplateFailureError as exc:
                raise VarError(f"host {host!r}: variable {key!r}: {exc}", key) from None
            except (
                TemplateError,
                ArithmeticError,
                TypeError,
                ValueError,
                LookupError,
                AttributeError,
            ) as exc:
                # The exception text may quote a value (a secret); name only its kind.
                raise VarError(
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
