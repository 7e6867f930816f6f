"""State schema v1: the one vendor-neutral document per device that every check reads.

The public contract is documented in ``docs/state-schema.md`` and shipped as a JSON Schema
(``fabline/schemas/state-1.schema.json``). States are plain dicts: the check engine walks them
directly, so loading 100k ports costs what the JSON parser costs and little more.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import json
from importlib import resources
from pathlib import Path
from typing import Any

import orjson

from fabline.paths import MAX_STATE_BYTES, SnapshotPathError, read_regular
from fabline.platforms.spec import PLATFORMS, platform_ids
from fabline.schema_check import Check, compile_schema, problem_text

SCHEMA_ID = "fabline.state/1"
ROLES = ("spine", "leaf", "host")
DEVICE_STATUSES = ("ok", "partial", "unreachable", "auth_failed", "timeout", "error")
#: Statuses whose state cannot be trusted for anything: no check may pass on them.
UNREADABLE_STATUSES = frozenset({"unreachable", "auth_failed", "timeout", "error"})


class StateError(Exception):
    """A state file cannot be used; the device's results become ``error``."""


def load_state_file(path: Path) -> dict[str, Any]:
    """Read and minimally validate one state document (a regular file of at most 64 MiB).

    Only the top-level contract is checked here (a JSON object with ``schema`` and, when present,
    a ``interfaces`` object of objects); field-level type problems surface as ``error`` results of
    the rules that read them, so one bad field does not hide the rest of the device.

    Raises:
        StateError: Unreadable, truncated or not a fabline state document.
    """
    try:
        data = read_regular(path, MAX_STATE_BYTES)
    except SnapshotPathError as exc:
        raise StateError(str(exc)) from None
    except OSError as exc:
        raise StateError(f"{path}: cannot read: {exc.strerror}") from None
    return parse_state(path, data)


def parse_state(
    path: Path | str,
    data: bytes,
    *,
    checked: bool = True,
    validated: bool = False,
    marks: list[str] | None = None,
) -> dict[str, Any]:
    """Parse and minimally validate the bytes of a state document (see :func:`load_state_file`).

    ``checked=False`` reads the document as it is written: no schema pass (a forbidden value is
    not replaced by an :class:`Invalid`) and no derived frame sizes. What a diff of two snapshots
    reads, which compares values and needs neither (it is half the cost of reading a state).
    ``validated=True`` says these bytes are the very ones fabline checked against this state schema
    when it wrote them (their digest matched the snapshot's ``state-digests.json``, see
    :meth:`fabline.snapshot.Snapshot.load`): the schema pass is skipped (it would mark nothing),
    the frame sizes are still derived. ``marks`` receives the paths the schema pass marked invalid.

    Raises:
        StateError: Not JSON, or not a fabline state document.
    """
    try:
        doc = orjson.loads(data)
    except (ValueError, RecursionError) as exc:
        raise StateError(f"{path}: invalid JSON ({_short(exc)})") from None
    problem = structural_problem(doc)
    if problem:
        raise StateError(f"{path}: {problem}")
    if not checked:
        return doc  # type: ignore[no-any-return]
    if not validated:
        marked = mark_invalid(doc)
        if marks is not None:
            marks.extend(marked)
    add_frame_bytes(doc)
    return doc  # type: ignore[no-any-return]


class Invalid(str):
    """A state value the schema forbids (``mtu: 1e308``, ``admin_up: "false"``), kept in its place.

    A rule that reads it gives ``error`` naming the field (never a pass, a fail on a corrupt value,
    or a silently unselected interface); see :func:`mark_invalid`. It is a string (the message),
    so a report or a Python check that prints it stays readable and a numeric comparison raises.
    """

    path: str
    reason: str

    def __new__(cls, path: str, reason: str) -> Invalid:
        """The marker for the field at ``path`` (dotted), invalid for ``reason``."""
        self = super().__new__(cls, f"{path} is invalid ({reason})")
        self.path, self.reason = path, reason
        return self

    def __reduce__(self) -> tuple[type[Invalid], tuple[str, str]]:
        # Pickled as its constructor's arguments: a forked worker sends it back to the parent
        # (str's own reduction would call __new__ with the message alone, which fails to load).
        return (Invalid, (self.path, self.reason))


def _field_path(parts: list[Any]) -> list[Any]:
    """Where an invalid value is replaced: the interface field, else the section field."""
    return parts[:3] if parts[:1] == ["interfaces"] else parts[:2]


def mark_invalid(doc: dict[str, Any]) -> list[str]:
    """Replace every field the state schema forbids by an :class:`Invalid` naming it; return the paths.

    A valid document (the usual case) costs one compiled-schema pass; only an invalid one is
    walked for all its problems. A field is an interface's (``interfaces.Ethernet0.mtu``) or a
    section's (``qos.lossless_priorities``); an invalid ``mtu`` also makes the frame sizes derived
    from it invalid.

    Example:
        >>> doc = {"interfaces": {"e1": {"mtu": 9100.5, "admin_up": "false", "fec": "rs"}}}
        >>> mark_invalid(doc), doc["interfaces"]["e1"]["fec"]
        (['interfaces.e1.admin_up', 'interfaces.e1.mtu'], 'rs')
        >>> print(doc["interfaces"]["e1"]["mtu"])
        interfaces.e1.mtu is invalid (9100.5 is not of type 'integer')
    """
    if schema_problem(doc) is None:
        return []
    import jsonschema

    schema = dict(schema_document())
    schema.pop("required", None)
    found: dict[tuple[Any, ...], str] = {}
    for error in jsonschema.Draft202012Validator(schema).iter_errors(doc):
        field = _field_path(list(error.absolute_path))
        if len(field) >= 2:
            found.setdefault(tuple(field), error.message[:200])
    marked = []
    for parts, reason in sorted(found.items(), key=lambda kv: [str(p) for p in kv[0]]):
        node: Any = doc
        for part in parts[:-1]:
            node = node[part]
        name = ".".join(str(p) for p in parts)
        node[parts[-1]] = Invalid(name, reason)
        marked.append(name)
        if parts[0] == "interfaces" and parts[-1] == "mtu":
            for derived in ("frame_bytes", "frame_bytes_tagged"):
                node[derived] = Invalid(name, reason)
    return marked


def add_frame_bytes(doc: dict[str, Any]) -> None:
    """Give every interface with an ``mtu`` its ``frame_bytes`` / ``frame_bytes_tagged`` (in place).

    Collected states carry them (the parsers add them); a document written before they existed, or
    by hand, gets them here from its platform's MTU semantics, so the checks read one meaning.

    Example:
        >>> doc = {"platform": "sonic", "interfaces": {"Ethernet0": {"mtu": 9100}}}
        >>> add_frame_bytes(doc); doc["interfaces"]["Ethernet0"]
        {'mtu': 9100, 'frame_bytes': 9100, 'frame_bytes_tagged': 9100}
    """
    interfaces = doc.get("interfaces")
    spec = PLATFORMS.get(doc.get("platform"))  # type: ignore[arg-type]
    if interfaces and spec is not None:
        spec.mtu.annotate(interfaces)


def structural_problem(doc: Any) -> str | None:
    """Return why a parsed document is not a usable state, or None if it is.

    Example:
        >>> structural_problem({"schema": "fabline.state/1", "name": "leaf1", "interfaces": {}})
        >>> structural_problem({"schema": "other"})
        "schema is 'other', expected 'fabline.state/1'"
    """
    if not isinstance(doc, dict):
        return "not a JSON object"
    if doc.get("schema") != SCHEMA_ID:
        return f"schema is {doc.get('schema')!r}, expected {SCHEMA_ID!r}"
    if not isinstance(doc.get("name", ""), str):
        return "name is not a string"
    status = doc.get("status", "ok")
    if status not in DEVICE_STATUSES:
        return f"status {status!r} is not one of {', '.join(DEVICE_STATUSES)}"
    for key in ("interfaces", "facts", "qos", "host"):
        if key in doc and not isinstance(doc[key], dict):
            return f"{key} is not an object"
    ifaces = doc.get("interfaces", {})
    for name, body in ifaces.items():
        if not isinstance(body, dict):
            return f"interfaces.{name} is not an object"
    return None


def unsupported_reason(unsupported: Any, path: str) -> str | None:
    """Why a state path is one the device's source cannot provide (its ``unsupported`` map), or None.

    ``unsupported`` maps dotted path prefixes to reasons; a ``*`` segment matches any one segment
    (an interface name). A path is unsupported when some key is a prefix of it, segment by segment.

    Example:
        >>> gaps = {"interfaces.*.ecn": "no ECN getter", "qos": "no QoS getter"}
        >>> unsupported_reason(gaps, "interfaces.Ethernet1.ecn.3.enabled"), unsupported_reason(gaps, "qos.pfc_watchdog.enabled")
        ('no ECN getter', 'no QoS getter')
        >>> unsupported_reason(gaps, "interfaces.Ethernet1.mtu") is None, unsupported_reason(None, "qos") is None
        (True, True)
    """
    if not unsupported or not isinstance(unsupported, dict):
        return None
    parts = path.split(".")
    for key, reason in unsupported.items():
        pattern = str(key).split(".")
        if len(pattern) <= len(parts) and all(p in ("*", q) for p, q in zip(pattern, parts, strict=False)):
            return str(reason)
    return None


def schema_document() -> dict[str, Any]:
    """The JSON Schema of state schema v1, its platform enum following the platform registry.

    The shipped file lists the built-in platforms (a test keeps the two equal); a platform
    registered at run time is a valid ``platform`` too.
    """
    text = resources.files("fabline").joinpath("schemas/state-1.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    schema["properties"]["platform"]["enum"] = list(platform_ids())
    return schema


def schema_problem(doc: Any) -> str | None:
    """Why a state document or a parser's fragment breaks the state schema's types and ranges.

    The first problem, naming the field; None when the document is valid. Keys a document may
    omit are not required here, so a fragment (one command's share of a state) is checked the same
    way (:func:`state_check`, compiled from the shipped JSON Schema by :mod:`fabline.schema_check`).

    Example:
        >>> schema_problem({"interfaces": {"Ethernet0": {"pfc_priorities": [3, 9]}}})
        'interfaces.Ethernet0.pfc_priorities[1]: 9 is greater than the maximum of 7'
        >>> schema_problem({"interfaces": {"Ethernet0": {"mtu": 9100}}})
    """
    found = state_check()(doc)
    return problem_text(found) if found else None


@functools.cache
def schema_fingerprint() -> str:
    """What a state was validated against: a short digest of :func:`schema_document` (this fabline's
    state schema, platform list included). A digest recorded under another fingerprint (an older or
    newer fabline, another schema) is not trusted: that state gets the full schema pass.
    """
    text = json.dumps(schema_document(), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@functools.cache
def state_check() -> Check:
    """The compiled state schema (without its required keys: a fragment is a partial state)."""
    schema = schema_document()
    schema.pop("required", None)
    return compile_schema(schema)


def _short(exc: Exception) -> str:
    msg = str(exc)
    return msg if len(msg) < 120 else msg[:117] + "..."


def parse_time(text: Any) -> float | None:
    """UNIX time of an ISO 8601 timestamp, None when absent or unreadable.

    Example:
        >>> parse_time("1970-01-01T00:01:00Z"), parse_time("yesterday")
        (60.0, None)
    """
    if not isinstance(text, str):
        return None
    try:
        t = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    if t.tzinfo is None:
        t = t.replace(tzinfo=dt.UTC)
    return t.timestamp()
