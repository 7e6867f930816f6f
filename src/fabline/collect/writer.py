"""The snapshot a collection writes: ``raw/<device>/<command-slug>.txt``, ``state/<device>.json``, ``manifest.json``
and ``state-digests.json``.

Each device's files are written atomically as the device finishes (raw folder renamed into place,
then its manifest entry ``manifest.d/<device>.json``, then the state file), so an interrupted run
keeps every device it completed, ``--resume`` can tell done from missing by the state file alone,
and the manifest can be rebuilt from disk after a crash (``manifest.json`` is rewritten only every
few seconds). A state's manifest entry records the SHA-256 of the state's bytes and the state schema
they were valid in; ``state-digests.json``, rewritten with the manifest, is the compact index of those
digests the check reads to skip re-validating the states it wrote (:meth:`fabline.snapshot.Snapshot.load`).
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from fabline.paths import (
    MAX_MANIFEST_BYTES,
    MAX_STATE_BYTES,
    SnapshotPathError,
    create_files,
    read_under,
    under,
)
from fabline.snapshot import DIGESTS, SCHEMA_KEY, digest_index, state_digest

MANIFEST_SCHEMA = "fabline.manifest/1"
#: Folder of the per-device manifest entries, written with each device's files.
ENTRIES = "manifest.d"


def _dumps(doc: Mapping[str, Any], indent: int | None) -> bytes:
    # orjson writes a 300-device manifest in milliseconds.
    option = orjson.OPT_APPEND_NEWLINE | (orjson.OPT_INDENT_2 if indent else 0)
    return orjson.dumps(doc, option=option)


@functools.lru_cache(maxsize=16384)
def command_slug(command: str) -> str:
    """The file stem of a command's raw output.

    Example:
        >>> command_slug("show interfaces | json"), command_slug("ethtool -I --show-fec eth0")
        ('show_interfaces_json', 'ethtool_-I_--show-fec_eth0')
        >>> command_slug("grep -H . /sys/class/net/eth0/ecn/roce_*/enable/*")
        'grep_-H_sys_class_net_eth0_ecn_roce_enable'
    """
    slug = _UNSAFE.sub("_", command)
    slug = _LONE_DOTS.sub("", slug)  # a lone '.' (grep's pattern)
    slug = _UNDERSCORES.sub("_", slug).strip("_.")
    return slug[:120] or "command"


_UNSAFE = re.compile(r"[^A-Za-z0-9.-]+")
_LONE_DOTS = re.compile(r"(?<![A-Za-z0-9])\.+(?![A-Za-z0-9])")
_UNDERSCORES = re.compile(r"_+")


def unique_file(command: str, used: set[str]) -> str:
    """The raw file name of a command, unique among ``used`` even on case-insensitive file systems.

    Example:
        >>> used = set()
        >>> unique_file("ethtool -i eth0", used), unique_file("ethtool -I eth0", used)
        ('ethtool_-i_eth0.txt', 'ethtool_-I_eth0~2.txt')
    """
    base = command_slug(command)
    name, n = base, 1
    while name.casefold() in used:
        n += 1
        name = f"{base}~{n}"
    used.add(name.casefold())
    return f"{name}.txt"


def write_json_atomic(path: Path, doc: Mapping[str, Any], indent: int | None = 1) -> None:
    """Write JSON to a temporary file beside ``path`` and rename it into place."""
    write_bytes_atomic(path, _dumps(doc, indent))


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``path`` and rename it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def state_bytes(state: Mapping[str, Any]) -> bytes:
    """A state document as a collection writes it to ``state/<device>.json``: compact JSON on one
    line (a state is read by programs; indented, a 100k-GPU snapshot's states took 1.9 times the
    bytes to store, read and digest; ``jq . state/<device>.json`` shows one indented).
    """
    return _dumps(state, None)


def write_state(root: Path, name: str, data: bytes) -> None:
    """Write a device's state file (the bytes of :func:`state_bytes`) atomically inside the snapshot."""
    write_bytes_atomic(under(root, "state", f"{name}.json"), data)


def write_digests(root: Path, entries: Mapping[str, Any]) -> None:
    """Rewrite ``state-digests.json`` from the manifest entries (``device -> entry``, see
    :func:`fabline.snapshot.digest_index`).
    """
    write_json_atomic(under(root, DIGESTS), digest_index(entries), indent=None)


def write_device(
    root: Path,
    name: str,
    state: Mapping[str, Any] | bytes,
    raw: Mapping[str, str],
    entry: Mapping[str, Any] | None = None,
    schema: str | None = None,
) -> dict[str, str]:
    """Write one device's raw outputs (``file name -> text``), manifest entry and state, atomically.

    The raw folder is built under a temporary name and swapped in; the state file goes last, so a
    state file on disk always has its evidence beside it. Every path is checked to stay inside the
    snapshot before anything is written or removed. ``state`` is one fabline assembled from
    fragments checked against the state schema: its digest (:func:`~fabline.snapshot.state_digest`)
    goes into the entry, and is returned for the manifest. ``state`` may also be the state file's
    bytes as :func:`state_bytes` made them (a site collector sends those), with ``schema`` the
    fingerprint of the schema the collector validated it against (its fabline's).

    Raises:
        SnapshotPathError: The device name is not one plain file name, or a path would leave the
            snapshot (``raw/``, ``state/`` or ``raw/<device>`` is a link out of it).
    """
    raw_root = under(root, "raw")
    final = under(root, "raw", name)
    old = under(root, "raw", f".{name}.old")
    under(root, "state", f"{name}.json")  # checked before anything is written
    data = state if isinstance(state, bytes) else state_bytes(state)
    digest = state_digest(data)
    if schema is not None:
        digest[SCHEMA_KEY] = schema
    raw_root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=raw_root))
    try:
        create_files(tmp, raw)  # tmp is ours (mkdtemp, 0700): no path resolved per file
        if final.exists() or final.is_symlink():
            shutil.rmtree(old, ignore_errors=True)
            final.replace(old)
            tmp.replace(final)
            shutil.rmtree(old, ignore_errors=True)
        else:
            tmp.replace(final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if entry is not None:
        write_entry(root, name, {**entry, **digest})
    write_state(root, name, data)
    return digest


def write_entry(root: Path, name: str, entry: Mapping[str, Any]) -> None:
    """Write a device's manifest entry to ``manifest.d/<device>.json`` (see :func:`read_entry`)."""
    write_json_atomic(under(root, ENTRIES, f"{name}.json"), entry, indent=None)


def read_entry(root: Path, name: str) -> dict[str, Any] | None:
    """A device's manifest entry as written with its files, or None when there is no usable one."""
    try:
        doc = json.loads(read_under(root, ENTRIES, f"{name}.json", limit=MAX_STATE_BYTES))
    except (OSError, ValueError, RecursionError, SnapshotPathError):
        return None
    return doc if isinstance(doc, dict) and isinstance(doc.get("commands", []), list) else None


def read_manifest(root: Path) -> dict[str, Any] | None:
    """The snapshot's manifest, or None when it has none or it is unreadable."""
    try:
        doc = json.loads(read_under(root, "manifest.json", limit=MAX_MANIFEST_BYTES))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(doc, dict) or doc.get("schema") != MANIFEST_SCHEMA:
        return None
    return doc
