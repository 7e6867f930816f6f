"""Names from outside that become paths, and files read from a snapshot folder, kept bounded.

A device name comes from the inventory, a manifest or the history; a raw file name comes from a
manifest; a snapshot folder may be shared with other people. None of them is trusted to stay where
fabline writes or reads:

- :func:`device_name_problem` is the one rule for a device name: a single, plain file name
  (the inventory loader rejects every other name at load time);
- :func:`under` is the one way to build a path inside a snapshot: every part is one plain path
  component and the result, with every existing symbolic link resolved, lies inside the snapshot;
- :func:`read_regular` reads a regular file only (never a FIFO, a device, a folder), without
  following a symbolic link in its last component, and at most a given number of bytes;
  :func:`read_under` reads one inside a snapshot with the guarantee of :func:`under`, resolving
  nothing when no link is on the way.

See ``docs/security.md`` for the threat model these serve.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path

from fabline.errors import FablineError

#: Longest device name: room for ``.<name>.old``/temporary suffixes within a 255-byte file name.
MAX_NAME_LENGTH = 200
#: A state file larger than this is refused (the largest real switch state is a few MiB).
MAX_STATE_BYTES = 64 * 1024 * 1024
#: A ``manifest.json`` larger than this is refused (10k devices with 81 commands each: ~150 MiB).
MAX_MANIFEST_BYTES = 512 * 1024 * 1024
#: A raw output file larger than this is refused by ``--reparse`` (collection caps outputs lower).
MAX_RAW_BYTES = 256 * 1024 * 1024

#: Opening a file to read: never blocking (a FIFO), never through a link as the last component.
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_FADVISE = getattr(os, "posix_fadvise", None)  # Linux and most Unixes; not macOS or Windows
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0)

# Letters, digits and the punctuation host names, FQDNs and IP addresses (v4, v6 with zone) use.
# No separator, no shell or glob character, no whitespace or control character; the first
# character is alphanumeric or '_', so neither '.', '..', a hidden file nor an option ('-x').
_DEVICE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:@%+=,~-]*")


class SnapshotPathError(FablineError):
    """A path inside a snapshot would leave it, or a file there is not one fabline may read."""


def device_name_problem(name: object) -> str | None:
    """Why ``name`` cannot be a device name (it is a file name in a snapshot), or None.

    Example:
        >>> [device_name_problem(n) for n in ("leaf-01.dc1", "10.0.0.1", "fe80::1%eth0")]
        [None, None, None]
        >>> device_name_problem("/../../etc")
        "contains '/'"
        >>> device_name_problem("..")
        'is a relative path component'
    """
    if not isinstance(name, str):
        return f"is a {type(name).__name__}, not a string"
    if not name:
        return "is empty"
    if name in (".", ".."):
        return "is a relative path component"
    for bad in ("/", "\\", "\0"):
        if bad in name:
            return f"contains {bad!r}"
    if len(name) > MAX_NAME_LENGTH:
        return f"is longer than {MAX_NAME_LENGTH} characters"
    if not _DEVICE_NAME.fullmatch(name):
        return "must start with a letter, digit or '_' and contain only letters, digits and '_.:@%+=,~-'"
    return None


def _component_problem(part: str) -> str | None:
    if not part:
        return "is empty"
    if part in (".", ".."):
        return "is a relative path component"
    if "/" in part or "\0" in part or os.sep in part:
        return "is not a single file name"
    return None


def under(root: Path, *parts: str) -> Path:
    """``root/part/...``, proven to stay inside ``root``.

    Each part must be one path component (no separator, no NUL, not ``.``/``..``), and the joined
    path, with every symbolic link that exists along it resolved, must lie inside ``root`` (also
    resolved). A link that stays inside the snapshot is allowed.

    Example:
        >>> import tempfile
        >>> root = Path(tempfile.mkdtemp())
        >>> under(root, "state", "leaf1.json") == root / "state" / "leaf1.json"
        True
        >>> under(root, "state", "../../etc")
        Traceback (most recent call last):
        ...
        fabline.paths.SnapshotPathError: ...: state/../../etc: is not a single file name

    Raises:
        SnapshotPathError: A part that is not one plain component, or a path leading outside.
    """
    for part in parts:
        problem = _component_problem(part)
        if problem:
            raise SnapshotPathError(f"{root}: {'/'.join(parts)}: {problem}")
    path = root.joinpath(*parts)
    base = root.resolve()
    real = path.resolve()
    if real != base and not real.is_relative_to(base):
        raise SnapshotPathError(f"{path}: leads outside the snapshot (to {real})")
    return path


def read_regular(path: Path, limit: int) -> bytes:
    """The bytes of a regular file, at most ``limit`` of them, never following a final symlink.

    A FIFO, a device, a socket or a folder is refused without blocking (the file is opened
    non-blocking and checked before any read); so is a file larger than ``limit``, also one that
    grows while it is read.

    Raises:
        SnapshotPathError: Not a regular file, a symbolic link, or larger than ``limit``.
        OSError: The file cannot be opened or read (missing, no permission).
    """
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError as exc:
        if path.is_symlink():
            raise SnapshotPathError(f"{path}: is a symbolic link (not read)") from None
        raise exc from None
    return _read_fd(fd, path, limit)


def _read_fd(fd: int, path: Path | str, limit: int) -> bytes:
    """The bytes of the open file ``fd`` (closed here) if it is a regular file of at most ``limit``."""
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SnapshotPathError(f"{path}: is not a regular file ({_kind(info.st_mode)})")
        if info.st_size > limit:
            raise SnapshotPathError(f"{path}: is larger than {_size(limit)} ({_size(info.st_size)})")
        chunks: list[bytes] = []
        left = limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > limit:
            raise SnapshotPathError(f"{path}: is larger than {_size(limit)} (it grew while read)")
        return data
    finally:
        os.close(fd)


def read_under(root: Path, *parts: str, limit: int) -> bytes:
    """:func:`read_regular` of :func:`under` (``root/parts``): a bounded read inside a snapshot.

    The common case resolves nothing (resolving two paths per file was about 60 us of the 215 us
    a diff spends loading one state of the 100k-GPU fabric): when every folder between ``root`` and the file is a real folder, not a symbolic
    link (one ``lstat`` each), and the file itself opens with ``O_NOFOLLOW``, the file is an entry
    of folders inside ``root``, so it is read from that descriptor. Anything else (a link on the
    way, a link as the file, a file that does not open) takes the checked path: :func:`under`
    resolves it, a link that stays inside the snapshot is read through its target, one leading
    out is refused. Nothing is cached: a folder swapped for a link between two reads is seen.

    Raises:
        SnapshotPathError: The path leaves the snapshot, or is not a regular file within ``limit``.
        OSError: The file cannot be opened or read (missing, no permission).
    """
    if _NOFOLLOW:
        # Text paths, no Path objects: this runs once per state of a check (15,000 on 100k GPUs).
        text = os.path.join(root, *parts)  # noqa: PTH118 - no Path object per state read
        if _plain_folders(text, parts):
            try:
                fd = os.open(text, _READ_FLAGS)
            except OSError:
                pass  # a link, or missing: the checked path below says which, as it always did
            else:
                return _read_fd(fd, text, limit)
    path = under(root, *parts)
    if path.is_symlink():
        # A link that stays inside the snapshot (checked above) is read through its target.
        path = path.resolve()
    return read_regular(path, limit)


class ReadAhead:
    """Asks the kernel to start reading files of one folder inside a snapshot into its page cache.

    A run that reads thousands of states one after another waits for the disk on each one whose
    pages the kernel dropped since the last run (on the 100k-GPU fabric, a cold run spent 3 s
    more than a warm one). Hinting a few files ahead lets the disk read them while the current
    one is parsed. A hint is never an error and never blocks: only a plain file name in the folder
    opened here is hinted, opened without following a link and without blocking, and only when it
    is a regular file. The folder is opened once, when it and each folder on the way from ``root``
    are real folders (no hint otherwise); the read itself (:func:`read_under`) checks its path
    again, whatever was hinted. Use as a context manager (it holds the folder open).
    """

    def __init__(self, root: Path, *folder: str) -> None:
        self._fd: int | None = None
        if _FADVISE is None or not folder:
            return
        text = os.path.join(root, *folder)  # noqa: PTH118 - a text path, as read_under
        # the folders on the way, and the folder itself, are real folders inside root
        if not _plain_folders(os.path.join(text, "-"), (*folder, "-")):  # noqa: PTH118
            return
        try:
            self._fd = os.open(text, _DIR_FLAGS)
        except OSError:
            self._fd = None

    def hint(self, name: str) -> None:
        """Hint the file ``name`` of the folder (a no-op for anything but a regular file there)."""
        fd_dir = self._fd
        if fd_dir is None or _component_problem(name):
            return
        try:
            fd = os.open(name, _READ_FLAGS, dir_fd=fd_dir)
        except OSError:
            return
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                _FADVISE(fd, 0, 0, os.POSIX_FADV_WILLNEED)  # type: ignore[misc]
        except OSError:
            pass
        finally:
            os.close(fd)

    def close(self) -> None:
        """Let go of the folder."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> ReadAhead:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _plain_folders(path: str, parts: tuple[str, ...]) -> bool:
    """Whether ``path`` (``root/parts``) cannot leave ``root``: each of ``parts`` is one plain name
    and each folder among them (all but the last) is a real folder, not a symbolic link.
    """
    if not parts:
        return False
    for part in parts:
        if _component_problem(part):
            return False
    parent = os.path.dirname(path)  # noqa: PTH120
    for _ in range(len(parts) - 1):
        try:
            if not stat.S_ISDIR(os.lstat(parent).st_mode):
                return False
        except OSError:
            return False
        parent = os.path.dirname(parent)  # noqa: PTH120
    return True


def create_files(folder: Path, files: Mapping[str, str]) -> None:
    """Create each ``name -> text`` file (UTF-8) new inside ``folder``, which this process just made.

    The cheap form of :func:`under` for many files in a fresh folder (a device's raw outputs,
    written into the temporary folder ``mkdtemp`` made for them, mode 0700, so no one else can
    add anything to it): each name must be one plain path component, and each file is created
    relative to the folder's open descriptor with ``O_CREAT | O_EXCL | O_NOFOLLOW``, so it can
    never follow, replace or write through anything already there. No path is resolved per file
    (resolving two paths per file was a third of a collection's finishing CPU).

    Example:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> create_files(folder, {"show_version.txt": "EOS 4.30\\n"})
        >>> (folder / "show_version.txt").read_text()
        'EOS 4.30\\n'
        >>> create_files(folder, {"../escape.txt": "x"})
        Traceback (most recent call last):
        ...
        fabline.paths.SnapshotPathError: ...: ../escape.txt: is not a single file name

    Raises:
        SnapshotPathError: A name that is not one plain path component.
        FileExistsError: A file of that name is already there (or a link is).
    """
    for name in files:
        problem = _component_problem(name)
        if problem:
            raise SnapshotPathError(f"{folder}: {name}: {problem}")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    dir_fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        for name, text in files.items():
            data = memoryview(text.encode("utf-8"))
            fd = os.open(name, flags, 0o666, dir_fd=dir_fd)
            try:
                while data:
                    data = data[os.write(fd, data) :]
            finally:
                os.close(fd)
    finally:
        os.close(dir_fd)


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a file"


def _size(n: int) -> str:
    return f"{n / (1024 * 1024):.0f} MiB" if n >= 1024 * 1024 else f"{n} bytes"
