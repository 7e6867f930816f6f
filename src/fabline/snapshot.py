"""A snapshot folder: ``state/<device>.json`` (plus ``raw/``, ``manifest.json`` and ``state-digests.json`` from collection)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import orjson

from fabline.errors import ConfigError
from fabline.paths import (
    MAX_MANIFEST_BYTES,
    MAX_STATE_BYTES,
    ReadAhead,
    SnapshotPathError,
    read_under,
    under,
)
from fabline.state import StateError, parse_state, schema_fingerprint

#: The index of the state files fabline validated when it wrote them (``docs/collection.md``).
DIGESTS = "state-digests.json"
DIGESTS_SCHEMA = "fabline.state-digests/1"
#: Manifest entry keys of a state fabline wrote: the SHA-256 of the file's bytes, and the
#: :func:`~fabline.state.schema_fingerprint` of the state schema it was valid in.
DIGEST_KEY = "state_sha256"
SCHEMA_KEY = "state_schema"


def state_digest(data: bytes) -> dict[str, str]:
    """The manifest entry fields of a state this fabline validated and writes as ``data``.

    Example:
        >>> sorted(state_digest(b"{}"))
        ['state_schema', 'state_sha256']
    """
    return {DIGEST_KEY: hashlib.sha256(data).hexdigest(), SCHEMA_KEY: schema_fingerprint()}


def digest_index(entries: Mapping[str, Any]) -> dict[str, Any]:
    """The ``state-digests.json`` document of a snapshot's manifest entries (``device -> entry``).

    Digests are grouped by the schema fingerprint they were recorded under; entries without both
    fields (a device never logged into, a snapshot from an older fabline) are left out.

    Example:
        >>> digest_index({"leaf1": {"state_sha256": "ab", "state_schema": "f1"}, "leaf2": {"status": "timeout"}})
        {'schema': 'fabline.state-digests/1', 'algorithm': 'sha256', 'states': {'f1': {'leaf1': 'ab'}}}
    """
    by_schema: dict[str, dict[str, str]] = {}
    for name, entry in entries.items():
        if not isinstance(entry, dict):
            continue
        digest, schema = entry.get(DIGEST_KEY), entry.get(SCHEMA_KEY)
        if isinstance(digest, str) and isinstance(schema, str):
            by_schema.setdefault(schema, {})[name] = digest
    return {"schema": DIGESTS_SCHEMA, "algorithm": "sha256", "states": by_schema}


def read_digests(root: Path) -> dict[str, str]:
    """``device -> SHA-256`` of the states a snapshot's ``state-digests.json`` says this fabline's
    state schema validated; empty when there is none, it is unreadable, or it holds no digest
    recorded under this schema (every state then gets the full schema pass).
    """
    if not (root / DIGESTS).exists():
        return {}
    try:
        doc = orjson.loads(read_under(root, DIGESTS, limit=MAX_MANIFEST_BYTES))
    except (OSError, ValueError, SnapshotPathError):
        return {}
    if not isinstance(doc, dict) or doc.get("schema") != DIGESTS_SCHEMA or doc.get("algorithm") != "sha256":
        return {}
    states = doc.get("states")
    mine = states.get(schema_fingerprint()) if isinstance(states, dict) else None
    if not isinstance(mine, dict):
        return {}
    return {k: v for k, v in mine.items() if isinstance(v, str)}


class Snapshot:
    """Read access to a snapshot folder's device states.

    A folder that holds only ``state/*.json`` is a valid snapshot: users feed states from other
    sources. States are loaded one device at a time so a 100k-GPU fabric never sits in memory whole.
    """

    def __init__(self, root: Path) -> None:
        if not root.exists():
            raise ConfigError("snapshot folder not found", file=root)
        if not root.is_dir():
            raise ConfigError("snapshot is not a folder", file=root)
        state_dir = root / "state"
        if not state_dir.is_dir():
            raise ConfigError("snapshot has no state/ folder (expected state/<device>.json)", file=root)
        under(root, "state")  # a state/ that links out of the snapshot is refused here
        self.root = root
        self.state_dir = state_dir
        self._state_text = str(state_dir)
        self._digests: dict[str, str] | None = None
        #: Devices whose loaded state the schema pass marked (an :class:`~fabline.state.Invalid`
        #: in place of a value the file holds), in this process.
        self.marked: set[str] = set()

    @property
    def digests(self) -> dict[str, str]:
        """``device -> SHA-256`` of the states fabline validated when it wrote them (:func:`read_digests`, read once)."""
        if self._digests is None:
            self._digests = read_digests(self.root)
        return self._digests

    def device_names(self) -> list[str]:
        """Names of the devices that have a state file."""
        return sorted(p.stem for p in self.state_dir.glob("*.json"))

    def state_path(self, device: str) -> Path:
        """Where a device's state lives (not checked: :meth:`load` checks before it reads)."""
        return self.state_dir / f"{device}.json"

    def read_ahead(self) -> ReadAhead:
        """Hints that states are read soon: ``.hint(f"{device}.json")`` (:class:`~fabline.paths.ReadAhead`)."""
        return ReadAhead(self.root, "state")

    def load(self, device: str, *, checked: bool = True) -> dict[str, Any] | None:
        """The device's state, or None when the snapshot has none for it.

        The file is read only when it lies inside the snapshot (a link out of it is refused), is a
        regular file (never a FIFO, a device or a folder) and is at most 64 MiB. ``checked=False``
        skips the schema pass and the derived fields (:func:`~fabline.state.parse_state`).

        A state whose bytes have the SHA-256 the snapshot's ``state-digests.json`` records for it
        under this fabline's state schema is one fabline validated when it wrote it: its schema
        pass is skipped (a third of reading a state). Any other file (edited, written by other
        tools or another fabline, no digest index) gets the full pass.

        Raises:
            StateError: The file exists but is unreadable, outside the snapshot, not a regular
                file, too large, truncated or not a state document.
        """
        try:
            data = read_under(self.root, "state", f"{device}.json", limit=MAX_STATE_BYTES)
        except (SnapshotPathError, OSError) as exc:
            # Read first, asked after: a missing state costs the failed open, a present one no stat.
            missing = self.state_path(device)
            if not missing.exists() and not missing.is_symlink():
                return None
            if isinstance(exc, SnapshotPathError):
                raise StateError(str(exc)) from None
            raise StateError(f"{missing}: cannot read: {exc.strerror}") from None
        path = f"{self._state_text}/{device}.json"  # for messages; a text path costs less than a Path
        validated = False
        if checked:
            want = self.digests.get(device)
            validated = want is not None and hashlib.sha256(data).hexdigest() == want
        marks: list[str] = []
        doc = parse_state(path, data, checked=checked, validated=validated, marks=marks)
        if marks:
            self.marked.add(device)
        name = doc.get("name")
        if name is not None and name != device:
            raise StateError(f"{path}: name is {name!r}, expected {device!r} (the file name)")
        return doc


_T = TypeVar("_T")

#: How many states :func:`reading_ahead` hints before the one being read (about 1 MB of states
#: on the 100k-GPU fabric: enough for the disk to keep ahead of the parse).
READ_AHEAD = 16


def reading_ahead(
    items: Sequence[_T], names: Sequence[str], snapshots: Sequence[Snapshot], window: int = READ_AHEAD
) -> Iterator[_T]:
    """``items`` in order, hinting each snapshot to read the state of ``names[i + window]`` as
    ``items[i]`` is handed out (``names[i]`` is the device of ``items[i]``).

    Example:
        >>> list(reading_ahead(["a", "b"], ["a", "b"], []))
        ['a', 'b']
    """
    hints = [snap.read_ahead() for snap in snapshots]
    try:
        files = [f"{name}.json" for name in names]
        n = len(files)
        for i in range(min(window, n)):
            for h in hints:
                h.hint(files[i])
        for i, item in enumerate(items):
            j = i + window
            if j < n:
                for h in hints:
                    h.hint(files[j])
            yield item
    finally:
        for h in hints:
            h.close()
