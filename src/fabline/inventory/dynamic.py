"""Dynamic inventory sources: ``ansible-inventory --list`` JSON and executable inventory scripts.

Both speak Ansible's script protocol (ansible-core ``plugins/inventory/script.py``): one JSON
object whose keys are groups, each a mapping of ``hosts`` (a list), ``vars`` and ``children`` (a
list), or a bare list of hosts; ``_meta.hostvars`` maps each host to its variables. A script is run
with ``--list``; when its answer has no ``_meta.hostvars`` it is run again with ``--host NAME`` for
each host, as Ansible does. The JSON that ``ansible-inventory --list`` (or ``--list --export``)
prints is that same form, so a saved copy is read the same way.

Unlike Ansible, a script that runs too long is stopped (``FABLINE_INVENTORY_TIMEOUT`` seconds,
default 60, for each call), its output is bounded, and every failure is one line naming the script:
its exit status and the last line of its standard error, or why its output is not an inventory.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

from fabline.errors import ConfigError

#: Seconds one script call may take (``--list``, or ``--host NAME``), unless FABLINE_INVENTORY_TIMEOUT says.
DEFAULT_TIMEOUT_S = 60.0
#: Largest answer read from a script (a 100k-host NetBox inventory with hostvars is well below it).
MAX_OUTPUT_BYTES = 512 * 1024 * 1024
_STDERR_KEEP = 64 * 1024


class SourceSink(Protocol):
    """What a source adds to: the inventory builder's primitives (ansible-core's InventoryData API)."""

    file: str

    def add_group(self, name: str) -> str:
        """Add a group (once); returns its name."""
        ...

    def add_host(self, name: str, group: str | None, port: int | None) -> None:
        """Add a host, in ``group`` when given (a host is listed once per group)."""
        ...

    def add_child(self, parent: str, child: str) -> None:
        """Make ``child`` a child group of ``parent``."""
        ...

    def set_var(self, kind: str, name: str, key: Any, value: Any) -> None:
        """Set a variable of a ``group`` or ``host``; a later value replaces an earlier one."""
        ...


def script_timeout() -> float:
    """The per-call timeout: ``FABLINE_INVENTORY_TIMEOUT`` seconds when set to a positive number."""
    raw = os.environ.get("FABLINE_INVENTORY_TIMEOUT", "")
    try:
        value = float(raw)
    except ValueError:
        return DEFAULT_TIMEOUT_S
    return value if value > 0 else DEFAULT_TIMEOUT_S


def is_script_json(data: Any) -> bool:
    """Whether parsed JSON is in the script/``--list`` form rather than a YAML-style inventory.

    The ``--list`` form has ``_meta``, or groups whose ``hosts``/``children`` are lists (a YAML
    inventory's are mappings), or groups given as bare host lists.

    Example:
        >>> is_script_json({"_meta": {"hostvars": {}}, "all": {"children": ["ungrouped"]}})
        True
        >>> is_script_json({"all": {"children": {"leaf": {"hosts": {"leaf01": None}}}}})
        False
    """
    if not isinstance(data, dict):
        return False
    if "_meta" in data:
        return True
    for body in data.values():
        if isinstance(body, list):
            return True
        if isinstance(body, dict) and (
            isinstance(body.get("hosts"), list) or isinstance(body.get("children"), list)
        ):
            return True
    return False


def add_script_data(
    sink: SourceSink, data: Any, source: str, host_vars: Callable[[str], Any] | None = None
) -> None:
    """Add one script/``--list`` answer to the inventory, as ansible-core's script plugin does.

    Args:
        sink: The inventory builder.
        data: The parsed ``--list`` answer.
        source: The file or script named in errors.
        host_vars: Called with each host name when the answer has no ``_meta.hostvars`` (a script's
            ``--host NAME``); None for a saved file, whose hosts then have no variables of their own.

    Raises:
        ConfigError: The answer is not an inventory (not an object, a group or ``hosts`` of the wrong
            type, ``_meta.hostvars`` not an object).
    """
    if not isinstance(data, dict):
        raise ConfigError(
            f"an inventory in --list form must be a JSON object, got {_kind(data)}", file=source
        )
    meta: dict[str, Any] | None = None
    hosts: list[str] = []
    seen: set[str] = set()
    for group, body in data.items():
        if group == "_meta":
            meta = _meta_hostvars(body, source)
            continue
        for name in _add_group(sink, group, body, source):
            if name not in seen:
                seen.add(name)
                hosts.append(name)
    for name in hosts:
        if meta is not None:
            variables = meta.get(name) or {}
        elif host_vars is not None:
            variables = host_vars(name)
        else:
            variables = {}
        if not isinstance(variables, dict):
            raise ConfigError(
                f"variables of host {name!r} must be an object, got {_kind(variables)}", file=source
            )
        for key, value in variables.items():
            sink.set_var("host", name, key, value)


def _meta_hostvars(body: Any, source: str) -> dict[str, Any]:
    hostvars = body.get("hostvars") if isinstance(body, dict) else None
    if not isinstance(hostvars, dict):
        raise ConfigError(
            f"'_meta.hostvars' must be an object, got {_kind(hostvars)}", file=source, key="_meta"
        )
    return hostvars


def _add_group(sink: SourceSink, group: str, body: Any, source: str) -> list[str]:
    """One group of the answer (ansible-core's ``_parse_group``); returns its hosts."""
    if not isinstance(group, str) or not group:
        raise ConfigError(f"invalid group name {group!r}", file=source)
    sink.add_group(group)
    if not isinstance(body, dict):
        body = {"hosts": body}  # a bare list of hosts (the oldest form)
    elif not any(k in body for k in ("hosts", "vars", "children")):
        body = {"hosts": [group], "vars": body}  # Ansible's reading of a malformed group: one host
    hosts = _names(body, "hosts", group, source)
    for name in hosts:
        sink.add_host(name, group, None)
    variables = body.get("vars", {})
    if not isinstance(variables, dict):
        raise ConfigError(
            f"'vars' of group {group!r} must be an object, got {_kind(variables)}", file=source, key=group
        )
    for key, value in variables.items():
        sink.set_var("group", group, key, value)
    for child in _names(body, "children", group, source):
        sink.add_group(child)
        sink.add_child(group, child)
    return hosts


def _names(body: dict[str, Any], field: str, group: str, source: str) -> list[str]:
    """A group's ``hosts`` or ``children``: a list of non-empty names."""
    names = body.get(field, [])
    if not isinstance(names, list):
        raise ConfigError(
            f"'{field}' of group {group!r} must be a list, got {_kind(names)}", file=source, key=group
        )
    for name in names:
        if not isinstance(name, str) or not name:
            raise ConfigError(
                f"invalid name {name!r} in '{field}' of group {group!r}", file=source, key=group
            )
    return names


def _kind(value: Any) -> str:
    return "nothing" if value is None else type(value).__name__


# ---------------------------------------------------------------------------------------------
# Executable scripts


def load_script(sink: SourceSink, path: Path, timeout: float | None = None) -> None:
    """Run an executable inventory script (``--list``, then ``--host NAME`` if needed) and add its answer.

    Raises:
        ConfigError: The script cannot be started, exits non-zero, runs past the timeout, prints more
            than :data:`MAX_OUTPUT_BYTES` or something that is not an inventory (one line, naming it).
    """
    limit = script_timeout() if timeout is None else timeout
    answer = _parse_answer(_run(path, ["--list"], limit), path, "--list")

    def host_vars(name: str) -> Any:
        text = _run(path, ["--host", name], limit)
        return _parse_answer(text, path, f"--host {name}") if text.strip() else {}

    add_script_data(sink, answer, str(path), host_vars)


def _parse_answer(text: str, path: Path, call: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        start = " ".join(text.strip().split())[:60]
        shown = f"; it starts with {start!r}" if start else "; it printed nothing"
        raise ConfigError(
            f"inventory script {call} printed something that is not JSON ({exc.msg}, line {exc.lineno}){shown}",
            file=path,
        ) from None


def _run(path: Path, args: list[str], timeout: float) -> str:
    """Run the script in its own session; stop it (and what it started) at the deadline."""
    try:
        proc = subprocess.Popen(
            [str(path), *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # a process group of its own: a timeout kills the script's children too
        )
    except OSError as exc:
        raise ConfigError(f"inventory script cannot be run: {exc.strerror or exc}", file=path) from None
    out, err, problem = _read_bounded(proc, timeout)
    if problem:
        _kill(proc)
        raise ConfigError(f"inventory script {args[0]} {problem}", file=path)
    code = proc.wait()
    if code != 0:
        said = _last_line(err)
        status = f"killed by signal {-code}" if code < 0 else f"exit status {code}"
        raise ConfigError(
            f"inventory script {' '.join(args)} failed with {status}"
            + (f": {said}" if said else " (no stderr)"),
            file=path,
        )
    try:
        return out.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(
            f"inventory script {args[0]} printed something that is not UTF-8 text", file=path
        ) from None


def _read_bounded(proc: subprocess.Popen[bytes], timeout: float) -> tuple[bytes, bytes, str | None]:
    """Both pipes until EOF, at most MAX_OUTPUT_BYTES of stdout and the tail of stderr, before the deadline."""
    assert proc.stdout is not None and proc.stderr is not None
    deadline = time.monotonic() + timeout
    out = bytearray()
    err = bytearray()
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ, out)
    sel.register(proc.stderr, selectors.EVENT_READ, err)
    try:
        while sel.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                return (
                    bytes(out),
                    bytes(err),
                    f"did not finish within {timeout:g} s (stopped; FABLINE_INVENTORY_TIMEOUT sets the limit)",
                )
            for key, _ in sel.select(left):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    sel.unregister(key.fileobj)
                    continue
                buf: bytearray = key.data
                buf.extend(chunk)
                if buf is out and len(out) > MAX_OUTPUT_BYTES:
                    return (
                        b"",
                        bytes(err),
                        f"printed more than {MAX_OUTPUT_BYTES // (1024 * 1024)} MiB (stopped)",
                    )
                if buf is err and len(err) > 2 * _STDERR_KEEP:
                    del err[:-_STDERR_KEEP]
    finally:
        sel.close()
        proc.stdout.close()
        proc.stderr.close()
    remaining = max(0.0, deadline - time.monotonic())
    try:
        proc.wait(timeout=remaining)
    except subprocess.TimeoutExpired:
        return (
            bytes(out),
            bytes(err),
            f"did not exit within {timeout:g} s (stopped; FABLINE_INVENTORY_TIMEOUT sets the limit)",
        )
    return bytes(out), bytes(err), None


def _kill(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.wait()


def _last_line(data: bytes) -> str:
    lines = [ln.strip() for ln in data.decode("utf-8", errors="replace").splitlines() if ln.strip()]
    return lines[-1][:200] if lines else ""


def read_list_json(sink: SourceSink, data: Mapping[str, Any], path: Path) -> None:
    """Add a saved ``ansible-inventory --list`` (or ``--list --export``) answer read from a file."""
    add_script_data(sink, dict(data), str(path))
