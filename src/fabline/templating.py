"""The one templating helper (inventory variables and baseline values share :func:`environment`).

Jinja2 references to inventory variables inside baseline values (``{{ roce_priority }}``).

A string that is exactly one ``{{ expression }}`` keeps the expression's native type (as Ansible
does): ``"{{ roce_priority }}"`` with ``roce_priority: 3`` is the integer 3, not ``"3"``; a bare
reference to a string that reads as a number (INI ``[group:vars]`` values are strings) is typed
too, and ``"{{ roce_tos | string }}"`` stays a string.
Undefined variables are errors, never empty strings.

Every template fabline renders from a user file (these baseline values, and the inventory's
variables in :mod:`fabline.inventory`) runs in a sandbox that is also bounded
(:class:`BoundedSandbox`): no ``include``/``import``/``extends``/``macro``/``call`` tags, no
``namespace``, strings and lists built by ``*``/``+``/``%`` or by padding filters of at most
:data:`MAX_TEMPLATE_SIZE`, integers of at most :data:`MAX_INT_BITS` bits, ``range`` of at most
:data:`MAX_RANGE` items per call and :data:`MAX_RANGE_TOTAL` per render, a rendered text of at most
:data:`MAX_TEMPLATE_SIZE` characters, and :data:`TEMPLATE_SECONDS` of wall-clock time per render.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import re
import signal
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import yaml
from jinja2 import StrictUndefined, TemplateError, Undefined, meta, nodes
from jinja2.exceptions import SecurityError
from jinja2.runtime import Context
from jinja2.sandbox import ImmutableSandboxedEnvironment, SandboxedEnvironment

#: A value that is one expression and nothing else (``{{ x | bool }}``): rendered to its native
#: value, not to text. The expression holds no other delimiter (``{{ a }} {{ b }}`` is text).
_SINGLE = re.compile(r"^\s*\{\{((?:(?!\}\}|\{\{|\{%|\{#).)*)\}\}\s*$", re.DOTALL)
_PLAIN_REF = re.compile(r"^\s*\{\{\s*[A-Za-z_][\w.]*\s*\}\}\s*$")

#: Longest string or list a template may build, and longest text it may render (characters).
MAX_TEMPLATE_SIZE = 1024 * 1024
#: Largest integer a template may compute, in bits (a 1,233-digit number).
MAX_INT_BITS = 4096
#: Items one ``range()`` call may produce.
MAX_RANGE = 10_000
#: Items all ``range()`` calls of one render may produce together (nested loops multiply).
MAX_RANGE_TOTAL = 100_000
#: Wall-clock seconds one render may take (enforced on the main thread, where fabline renders).
TEMPLATE_SECONDS = 2.0

#: Tags that reach outside the one template, or let it recurse.
_FORBIDDEN: tuple[tuple[type[nodes.Node], str], ...] = (
    (nodes.Include, "include"), (nodes.Import, "import"), (nodes.FromImport, "from ... import"),
    (nodes.Extends, "extends"), (nodes.Macro, "macro"), (nodes.CallBlock, "call"),
)  # fmt: skip
_BUDGET: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar(
    "fabline_range_budget", default=None
)


class TemplateLimitError(SecurityError):
    """A template exceeded one of fabline's template limits (size, range, time) or used a banned tag."""


def _sized(value: Any) -> int | None:
    return len(value) if isinstance(value, str | bytes | list | tuple) else None


def _check_binop(operator: str, left: Any, right: Any) -> None:
    """Refuse ``*``, ``**``, ``+`` and ``%`` whose result would exceed the limits, before computing it."""
    ints = isinstance(left, int) and isinstance(right, int)
    if operator == "**" and ints and right > 0 and abs(left) > 1:
        if right * abs(left).bit_length() > MAX_INT_BITS:
            raise TemplateLimitError(f"'**' result larger than {MAX_INT_BITS} bits")
    elif operator == "*":
        if ints and left.bit_length() + right.bit_length() > MAX_INT_BITS:
            raise TemplateLimitError(f"'*' result larger than {MAX_INT_BITS} bits")
        for seq, count in ((left, right), (right, left)):
            size = _sized(seq)
            if size is not None and isinstance(count, int) and size * count > MAX_TEMPLATE_SIZE:
                raise TemplateLimitError(f"'*' would build more than {MAX_TEMPLATE_SIZE} items")
    elif operator == "+":
        a, b = _sized(left), _sized(right)
        if a is not None and b is not None and a + b > MAX_TEMPLATE_SIZE:
            raise TemplateLimitError(f"'+' would build more than {MAX_TEMPLATE_SIZE} items")
    elif operator == "%" and isinstance(left, str):
        # '%*s' % (10**9, '') and '%01000000000d' pad to any width: bound every number involved.
        args = right if isinstance(right, tuple) else (right,)
        widths = [int(w) for w in re.findall(r"%[-+ #0]*(\d+)", left)]
        if any(isinstance(a, int) and abs(a) > MAX_TEMPLATE_SIZE for a in args) or any(
            w > MAX_TEMPLATE_SIZE for w in widths
        ):
            raise TemplateLimitError(f"'%' would pad to more than {MAX_TEMPLATE_SIZE} characters")


def _bounded_range(*args: int) -> range:
    """``range`` of at most :data:`MAX_RANGE` items, counted against the render's budget."""
    items = range(*args)
    if len(items) > MAX_RANGE:
        raise TemplateLimitError(f"range of {len(items)} items (at most {MAX_RANGE})")
    budget = _BUDGET.get()
    if budget is not None:
        budget[0] -= len(items)
        if budget[0] < 0:
            raise TemplateLimitError(f"ranges of more than {MAX_RANGE_TOTAL} items in one render")
    return items


def _width(name: str, width: Any) -> None:
    if isinstance(width, int) and abs(width) > MAX_TEMPLATE_SIZE:
        raise TemplateLimitError(f"'{name}' width {width} (at most {MAX_TEMPLATE_SIZE})")


def _bounded_filters(filters: dict[str, Any]) -> None:
    """Wrap the filters that pad or repeat text so their size is checked before they run."""
    center, indent, wordwrap, replace = (
        filters["center"],
        filters["indent"],
        filters["wordwrap"],
        filters["replace"],
    )

    def bounded_center(value: Any, width: int = 80) -> Any:
        _width("center", width)
        return center(value, width)

    def bounded_indent(s: Any, width: Any = 4, *args: Any, **kwargs: Any) -> Any:
        _width("indent", width if isinstance(width, int) else len(str(width)))
        lines = str(s).count("\n") + 1
        if lines * (width if isinstance(width, int) else len(str(width))) > MAX_TEMPLATE_SIZE:
            raise TemplateLimitError(f"'indent' would build more than {MAX_TEMPLATE_SIZE} characters")
        return indent(s, width, *args, **kwargs)

    def bounded_wordwrap(*args: Any, **kwargs: Any) -> Any:
        for value in (*args[2:], *kwargs.values()):
            _width("wordwrap", value)
        return wordwrap(*args, **kwargs)

    def bounded_replace(eval_ctx: Any, s: Any, old: Any, new: Any, count: int | None = None) -> Any:
        text = str(s)
        grow = max(0, len(str(new)) - len(str(old)))
        times = (len(text) + 1 if not str(old) else text.count(str(old))) if count is None else count
        if len(text) + grow * times > MAX_TEMPLATE_SIZE:
            raise TemplateLimitError(f"'replace' would build more than {MAX_TEMPLATE_SIZE} characters")
        return replace(eval_ctx, s, old, new, count)

    bounded_replace.jinja_pass_arg = replace.jinja_pass_arg  # type: ignore[attr-defined]
    filters.update(
        center=bounded_center, indent=bounded_indent, wordwrap=bounded_wordwrap, replace=bounded_replace
    )
    fmt = filters["format"]

    def bounded_format(value: Any, *args: Any, **kwargs: Any) -> Any:
        _check_binop("%", str(value), tuple(args) + tuple(kwargs.values()))  # pads like '%'
        return fmt(value, *args, **kwargs)

    filters["format"] = bounded_format


class _Limits:
    """The bounds of :class:`BoundedSandbox`, as a mixin for both sandbox flavours."""

    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        env: Any = self
        env.globals["range"] = _bounded_range
        env.globals.pop("namespace", None)  # mutable state across loop iterations: doubling bombs
        env.filters = dict(env.filters)
        _bounded_filters(env.filters)

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        """Check the result's size first, then compute it."""
        _check_binop(operator, left, right)
        return super().call_binop(context, operator, left, right)  # type: ignore[misc]

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        """``str.format`` in templates: no width, precision or number argument beyond the size limit."""
        fmt = super().wrap_str_format(value)  # type: ignore[misc]
        if fmt is None:
            return None
        for widths in re.findall(r"(\d+)(?:\.(\d+))?[a-zA-Z%]?}", str(value.__self__)):
            if any(w and int(w) > MAX_TEMPLATE_SIZE for w in widths):
                raise TemplateLimitError(f"format width beyond {MAX_TEMPLATE_SIZE} characters")

        def bounded(*args: Any, **kwargs: Any) -> str:
            for arg in (*args, *kwargs.values()):
                if isinstance(arg, int) and abs(arg) > MAX_TEMPLATE_SIZE:
                    raise TemplateLimitError(f"format argument beyond {MAX_TEMPLATE_SIZE}")
            return str(fmt(*args, **kwargs))

        return bounded

    def check(self, source: str) -> bool:
        """Refuse a template that uses a banned tag (``include``, ``import``, ``macro``...).

        Returns whether it loops (``{% for %}``): only then can it run for long, so only then does
        :func:`bounded_call` need its clock (which costs a couple of system calls per render).

        Raises:
            TemplateLimitError: Naming the tag.
            TemplateSyntaxError: The text is not a template.
        """
        tree = self.parse(source)  # type: ignore[attr-defined]
        for node_type, tag in _FORBIDDEN:
            if tree.find(node_type) is not None:
                raise TemplateLimitError(f"'{{% {tag} %}}' is not allowed in fabline templates")
        return tree.find(nodes.For) is not None


class BoundedSandbox(_Limits, SandboxedEnvironment):
    """Jinja2's sandbox, bounded in size, ranges, time and tags (see the module docstring)."""


class BoundedImmutableSandbox(_Limits, ImmutableSandboxedEnvironment):
    """:class:`BoundedSandbox` where lists and dicts cannot be changed (inventory variables)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        #: The value templates compiled in this environment, by text (:func:`compile_value`).
        self.value_templates: dict[str, ValueTemplate] = {}


@dataclass(frozen=True)
class ValueTemplate:
    """One template in a value (an inventory variable, a baseline value), compiled once.

    Attributes:
        call: ``call(**variables)``: the native value of a single expression (``"{{ n + 1 }}"``
            gives an int), else the rendered text; within the per-render limits.
        names: The variables the template references.
        single: Whether the template is one expression (a native value) rather than text.
    """

    call: Callable[..., Any]
    names: frozenset[str]
    single: bool


#: Distinct value templates kept per environment (a fleet's inventory repeats the same few).
MAX_CACHED_TEMPLATES = 65_536


def compile_value(env: BoundedImmutableSandbox, text: str) -> ValueTemplate:
    """Compile a value's template once per environment: the one native-value rule of fabline.

    Inventory variables (:mod:`fabline.inventory.varstemplates`) and baseline values
    (:func:`render`) both come here, so both have the same filters, limits and native values.

    Example:
        >>> t = compile_value(environment(), "{{ flag | bool }}")
        >>> t.call(flag="yes"), t.names, t.single
        (True, frozenset({'flag'}), True)
        >>> compile_value(environment(), "mtu {{ n }}").call(n=9000)
        'mtu 9000'

    Raises:
        TemplateLimitError: A banned tag.
        TemplateSyntaxError: Not a template.
    """
    hit = env.value_templates.get(text)
    if hit is not None:
        return hit
    loops = env.check(text)  # no include/import/macro: a value is one bounded template
    names = frozenset(meta.find_undeclared_variables(env.parse(text)))
    single = _SINGLE.match(text)
    if single:
        expr = env.compile_expression(single.group(1), undefined_to_none=False)
        compiled = ValueTemplate(functools.partial(bounded_call, expr, loops), names, True)
    else:
        compiled = ValueTemplate(functools.partial(render_text, env.from_string(text), loops), names, False)
    if len(env.value_templates) < MAX_CACHED_TEMPLATES:
        env.value_templates[text] = compiled
    return compiled


@contextlib.contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    # SIGALRM interrupts a template's Python loop wherever it is; only the main thread gets signals,
    # and an alarm someone else set is left alone.
    if threading.current_thread() is not threading.main_thread() or signal.getitimer(signal.ITIMER_REAL)[0]:
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise TemplateLimitError(f"template took longer than {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def bounded_call(fn: Callable[..., Any], loops: bool = True, **context: Any) -> Any:
    """Run a compiled template or expression within the per-render limits.

    With ``loops`` (see :meth:`BoundedSandbox.check`) the render also gets its range budget and
    its wall-clock limit; without loops its work is bounded by the size limits alone.

    Raises:
        TemplateLimitError: A limit was exceeded (also for memory or recursion running out).
    """
    token = _BUDGET.set([MAX_RANGE_TOTAL]) if loops else None
    try:
        with _deadline(TEMPLATE_SECONDS) if loops else contextlib.nullcontext():
            out = fn(**context)
    except MemoryError:
        raise TemplateLimitError("template ran out of memory") from None
    except RecursionError:
        raise TemplateLimitError("template nested too deeply") from None
    finally:
        if token is not None:
            _BUDGET.reset(token)
    if isinstance(out, str) and len(out) > MAX_TEMPLATE_SIZE:
        raise TemplateLimitError(f"rendered text longer than {MAX_TEMPLATE_SIZE} characters")
    return out


def render_text(template: Any, loops: bool = True, **context: Any) -> str:
    """Render a template to text within the limits, stopping as soon as the text is too long."""

    def generate(**ctx: Any) -> str:
        chunks: list[str] = []
        size = 0
        for chunk in template.generate(**ctx):
            size += len(chunk)
            if size > MAX_TEMPLATE_SIZE:
                raise TemplateLimitError(f"rendered text longer than {MAX_TEMPLATE_SIZE} characters")
            chunks.append(chunk)
        return "".join(chunks)

    return str(bounded_call(generate, loops, **context))


def _to_bool(value: Any) -> bool:
    """Ansible's ``bool`` filter.

    Example:
        >>> [_to_bool(v) for v in (True, "yes", "On", 1, "0", "false", None)]
        [True, True, True, True, False, False, False]
    """
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in ("yes", "on", "1", "true", "y", "t")


def _ternary(value: Any, true_val: Any, false_val: Any, none_val: Any = None) -> Any:
    """Ansible's ``ternary`` filter."""
    if value is None and none_val is not None:
        return none_val
    return true_val if value else false_val


def _mandatory(value: Any, msg: str | None = None) -> Any:
    """Ansible's ``mandatory`` filter (an undefined value already fails: StrictUndefined)."""
    return value


#: Ansible's filters that inventory variables and baseline values share (beside Jinja2's own).
FILTERS: dict[str, Callable[..., Any]] = {"bool": _to_bool, "ternary": _ternary, "mandatory": _mandatory}


def environment(**globals_: Any) -> BoundedImmutableSandbox:
    """The one template environment: bounded, immutable sandbox, StrictUndefined, Ansible's filters.

    Inventory variables add Ansible's ``lookup``/``query`` globals; baseline values add none (an
    expected value is printed in every report, so it may not read the environment).
    """
    env = BoundedImmutableSandbox(undefined=StrictUndefined, autoescape=False)
    env.filters.update(FILTERS, d=env.filters["default"])
    env.globals.update(globals_)
    return env


# Sandboxed and bounded: templates come from user files, not from code.
_TEXT_ENV = environment()


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
                names |= compile_value(_TEXT_ENV, text).names
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
            template = compile_value(_TEXT_ENV, value)
            out = template.call(**context)
            if not template.single:
                return out
            if isinstance(out, Undefined):
                out._fail_with_undefined_error()
            # A bare reference to a string variable ("3" from an INI [group:vars]) is typed
            # like YAML would type it; an explicit filter (``| string``) keeps its result.
            return _typed(out) if _PLAIN_REF.match(value) else out
        except TemplateError as exc:
            raise TemplateValueError(f"{value!r}: {exc}") from None
        except (ArithmeticError, TypeError, ValueError, LookupError, AttributeError) as exc:
            # A value of the wrong kind in an expression ('a' - 1, 1 / 0): name only its kind.
            raise TemplateValueError(f"{value!r}: template failed ({type(exc).__name__})") from None
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
