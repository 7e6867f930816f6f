"""A snapshot folder: ``state/<device>.json`` (plus ``raw/`` and ``manifest.json`` from collection)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fabline.errors import ConfigError
from fabline.paths import MAX_STATE_BYTES, SnapshotPathError, read_under, under
from fabline.state import StateError, parse_state


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

    def device_names(self) -> list[str]:
        """Names of the devices that have a state file."""
        return sorted(p.stem for p in self.state_dir.glob("*.json"))

    def state_path(self, device: str) -> Path:
        """Where a device's state lives (not checked: :meth:`load` checks before it reads)."""
        return self.state_dir / f"{device}.json"

    def load(self, device: str, *, checked: bool = True) -> dict[str, Any] | None:
        """The device's state, or None when the snapshot has none for it.

        The file is read only when it lies inside the snapshot (a link out of it is refused), is a
        regular file (never a FIFO, a device or a folder) and is at most 64 MiB. ``checked=False``
        skips the schema pass and the derived fields (:func:`~fabline.state.parse_state`).

        Raises:
            StateError: The file exists but is unreadable, outside the snapshot, not a regular
                file, too large, truncated or not a state document.
        """
        path = self.state_path(device)
        if not path.exists() and not path.is_symlink():
            return None
        try:
            data = read_under(self.root, "state", f"{device}.json", limit=MAX_STATE_BYTES)
        except SnapshotPathError as exc:
            raise StateError(str(exc)) from None
        except OSError as exc:
            raise StateError(f"{path}: cannot read: {exc.strerror}") from None
        doc = parse_state(path, data, checked=checked)
        name = doc.get("name")
        if name is not None and name != device:
            raise StateError(f"{path}: name is {name!r}, expected {device!r} (the file name)")
        return doc
