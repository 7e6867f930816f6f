"""Hostile snapshot folders: every path fabline writes or reads stays inside the snapshot, and a
state, manifest or raw file is read only as a bounded regular file.

Issue 11, items 1 and 4: names from the inventory, a manifest or the history never become a path
outside the snapshot (even if the inventory rule were bypassed), and a state file that is a link to
``/dev/zero``, a FIFO, a folder or a huge file is an ``error`` result for that device, never a hang.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from fabline.collect.reparse import reparse_snapshot
from fabline.collect.writer import read_manifest, write_device
from fabline.inventory import load_inventory
from fabline.paths import MAX_STATE_BYTES, SnapshotPathError, create_files, read_regular, read_under, under
from fabline.snapshot import Snapshot
from fabline.state import StateError
from tests.conftest import REPO_ROOT
from tests.hostile.collect_support import fabline, one_line_error

LAB_INVENTORY = REPO_ROOT / "inventory" / "lab.yml"
LAB_SNAPSHOT = REPO_ROOT / "examples" / "lab-snapshot"
STATE = {"schema": "fabline.state/1", "name": "leaf1", "status": "ok"}


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    folder = tmp_path / "outside" / "important"
    folder.mkdir(parents=True)
    (folder / "keep.txt").write_text("precious\n")
    return folder


def _untouched(victim: Path) -> None:
    assert sorted(p.name for p in victim.iterdir()) == ["keep.txt"]
    assert sorted(p.name for p in victim.parent.iterdir()) == ["important"]


# -- item 1: the writer, the reader and the re-parser check every path --------------------------


@pytest.mark.parametrize("name", ["/../../..{victim}", "../../outside/important", "..", "a/b", "a\0b", ""])
def test_writer_refuses_a_name_that_leaves_the_snapshot(tmp_path: Path, victim: Path, name: str) -> None:
    snap = tmp_path / "snap"
    with pytest.raises(SnapshotPathError):
        write_device(snap, name.format(victim=victim), STATE, {"show_version.txt": "x"})
    _untouched(victim)
    assert not (snap / "state").exists() or not list((snap / "state").iterdir())


@pytest.mark.parametrize("folder", ["raw", "state"])
def test_writer_refuses_a_folder_linked_out(tmp_path: Path, victim: Path, folder: str) -> None:
    snap = tmp_path / "snap"
    snap.mkdir()
    (snap / folder).symlink_to(victim)
    with pytest.raises(SnapshotPathError, match="leads outside the snapshot"):
        write_device(snap, "leaf1", STATE, {"show_version.txt": "x"})
    _untouched(victim)


def test_writer_refuses_a_device_folder_linked_out(tmp_path: Path, victim: Path) -> None:
    # Before: raw/<device> (a link to the victim) was renamed to .old and removed, through the link.
    snap = tmp_path / "snap"
    (snap / "raw").mkdir(parents=True)
    (snap / "raw" / "leaf1").symlink_to(victim)
    with pytest.raises(SnapshotPathError, match="leads outside the snapshot"):
        write_device(snap, "leaf1", STATE, {"show_version.txt": "x"})
    _untouched(victim)


@pytest.mark.parametrize("file", ["../../outside/important/keep.txt", "..", "a/b.txt", "a\0b", ""])
def test_writer_refuses_a_raw_file_name_that_leaves_the_device_folder(
    tmp_path: Path, victim: Path, file: str
) -> None:
    snap = tmp_path / "snap"
    with pytest.raises(SnapshotPathError, match=r"not a single file name|relative path component|is empty"):
        write_device(snap, "leaf1", STATE, {"show_version.txt": "x", file: "overwritten\n"})
    _untouched(victim)
    assert (victim / "keep.txt").read_text() == "precious\n"
    # Nothing half-written is left: no device folder, no temporary folder, no state.
    assert list((snap / "raw").iterdir()) == []
    assert not (snap / "state").exists() or not list((snap / "state").iterdir())


def test_raw_files_are_created_new_never_through_a_link(tmp_path: Path, victim: Path) -> None:
    folder = tmp_path / "fresh"
    folder.mkdir()
    (folder / "show_version.txt").symlink_to(victim / "keep.txt")
    with pytest.raises(FileExistsError):
        create_files(folder, {"show_version.txt": "overwritten\n"})
    assert (victim / "keep.txt").read_text() == "precious\n"
    create_files(folder, {"show_lldp.txt": "caf\u00e9 \u2713\n", "empty.txt": ""})
    assert (folder / "show_lldp.txt").read_bytes() == "caf\u00e9 \u2713\n".encode()
    assert (folder / "empty.txt").read_bytes() == b""


def test_writer_still_writes_a_plain_device(tmp_path: Path) -> None:
    write_device(tmp_path, "leaf1", STATE, {"show_version.txt": "x"})
    write_device(tmp_path, "leaf1", STATE, {"show_version.txt": "y"})
    assert (tmp_path / "raw" / "leaf1" / "show_version.txt").read_text() == "y"
    assert sorted(p.name for p in (tmp_path / "raw").iterdir()) == ["leaf1"]


@pytest.mark.parametrize("name", ["../outside/important/keep", "/etc/passwd", "..", "a\0b"])
def test_snapshot_load_never_reads_outside(tmp_path: Path, victim: Path, name: str) -> None:
    (tmp_path / "state").mkdir()
    (victim / "keep.json").write_text(json.dumps(STATE))
    snap = Snapshot(tmp_path)
    try:
        got = snap.load(name)
    except StateError as exc:
        assert "\n" not in str(exc)
    else:
        assert got is None


def test_state_folder_linked_out_is_refused(tmp_path: Path, victim: Path) -> None:
    (tmp_path / "snap").mkdir()
    (tmp_path / "snap" / "state").symlink_to(victim)
    with pytest.raises(SnapshotPathError, match="leads outside the snapshot"):
        Snapshot(tmp_path / "snap")


def test_a_link_inside_the_snapshot_is_followed(tmp_path: Path) -> None:
    (tmp_path / "state").mkdir()
    (tmp_path / "keep").mkdir()
    (tmp_path / "keep" / "leaf1.json").write_text(json.dumps(STATE))
    (tmp_path / "state" / "leaf1.json").symlink_to(tmp_path / "keep" / "leaf1.json")
    assert Snapshot(tmp_path).load("leaf1") == STATE


def _reparse_fixture(tmp_path: Path, file: str) -> tuple[Path, Any]:
    inv = tmp_path / "inv.yml"
    inv.write_text("leaf:\n  vars: {fabline_role: leaf, fabline_platform: sonic}\n  hosts:\n    leaf1:\n")
    snap = tmp_path / "snap"
    (snap / "raw" / "leaf1").mkdir(parents=True)
    (snap / "state").mkdir()
    manifest = {
        "schema": "fabline.manifest/1",
        "run_id": "r1",
        "devices": {
            "leaf1": {
                "status": "ok",
                "started_at": "2026-01-01T00:00:00Z",
                "commands": [{"command": "show version", "status": "ok", "file": file, "exit_code": 0}],
            }
        },
    }
    (snap / "manifest.json").write_text(json.dumps(manifest))
    return snap, load_inventory(inv).devices()


@pytest.mark.parametrize("file", ["../../../outside/important/keep.txt", "/etc/hostname", "..", "a/../../x"])
def test_reparse_never_reads_a_raw_file_outside(tmp_path: Path, victim: Path, file: str) -> None:
    snap, devices = _reparse_fixture(tmp_path, file)
    assert reparse_snapshot(snap, devices) == 1
    state = json.loads((snap / "state" / "leaf1.json").read_text())
    assert state["status"] == "error"
    [command] = json.loads((snap / "manifest.json").read_text())["devices"]["leaf1"]["commands"]
    assert command["status"] == "failed"
    assert command["message"].startswith("raw output not read: ")
    assert "precious" not in (snap / "state" / "leaf1.json").read_text()
    _untouched(victim)


def test_reparse_refuses_a_raw_link_out(tmp_path: Path, victim: Path) -> None:
    snap, devices = _reparse_fixture(tmp_path, "show_version.txt")
    (snap / "raw" / "leaf1" / "show_version.txt").symlink_to(victim / "keep.txt")
    reparse_snapshot(snap, devices)
    [command] = json.loads((snap / "manifest.json").read_text())["devices"]["leaf1"]["commands"]
    assert "leads outside the snapshot" in command["message"]


# -- item 4: a state, manifest or raw file that is not a bounded regular file ----------------------


def _plant(path: Path, kind: str) -> None:
    path.unlink(missing_ok=True)
    if kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    elif kind == "huge":
        with path.open("wb") as fh:  # sparse: costs no disk
            fh.truncate(100 * 1024**3)
    elif kind == "dangling":
        path.symlink_to(path.parent / "nowhere")
    else:
        raise AssertionError(kind)


KINDS = {
    "dev-zero": "leads outside the snapshot",
    "fifo": "is not a regular file (a FIFO)",
    "folder": "is not a regular file (a folder)",
    "huge": "is larger than 64 MiB",
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_check_turns_a_state_that_is_not_a_file_into_error_results(tmp_path: Path, kind: str) -> None:
    snap = tmp_path / "snap"
    shutil.copytree(LAB_SNAPSHOT, snap)
    _plant(snap / "state" / "leaf-r1-a.json", kind)
    ran = fabline(
        "check", "-i", LAB_INVENTORY, "--snapshot", snap, "-o", tmp_path / "out", "-f", "json", timeout=60
    )
    assert ran.code in (3, 4), ran.err[-2000:]
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    mine = [r for r in report["results"] if r["device"] == "leaf-r1-a"]
    assert mine
    assert {r["status"] for r in mine} == {"error"}
    assert any(KINDS[kind] in r["message"] for r in mine), mine[0]["message"]
    others = report["summary"]["by_device"]["leaf-r0-a"]
    assert others["pass"] > 0 and others["error"] == 0


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_validate_reports_a_state_that_is_not_a_file(tmp_path: Path, kind: str) -> None:
    snap = tmp_path / "snap"
    shutil.copytree(LAB_SNAPSHOT, snap)
    _plant(snap / "state" / "leaf-r1-a.json", kind)
    ran = fabline("validate", "-i", LAB_INVENTORY, "--snapshot", snap, timeout=60)
    assert ran.code == 2, ran.err[-2000:]
    assert KINDS[kind] in ran.err or KINDS[kind] in ran.out


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_reparse_manifest_that_is_not_a_file_is_one_line(tmp_path: Path, kind: str) -> None:
    snap = tmp_path / "snap"
    shutil.copytree(LAB_SNAPSHOT, snap)
    _plant(snap / "manifest.json", kind)
    ran = fabline(
        "check", "-i", LAB_INVENTORY, "--snapshot", snap, "--reparse", "-o", tmp_path / "out", timeout=60
    )
    line = one_line_error(ran)
    assert "manifest.json" in line


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_reparse_raw_file_that_is_not_a_file_is_a_failed_command(tmp_path: Path, kind: str) -> None:
    snap, devices = _reparse_fixture(tmp_path, "show_version.txt")
    _plant(snap / "raw" / "leaf1" / "show_version.txt", kind)
    reparse_snapshot(snap, devices)
    [command] = json.loads((snap / "manifest.json").read_text())["devices"]["leaf1"]["commands"]
    assert command["status"] == "failed"
    assert command["message"].startswith("raw output not read: ")


def test_read_regular_bounds(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 10)
    assert read_regular(path, 10) == b"x" * 10
    with pytest.raises(SnapshotPathError, match="larger than 9 bytes"):
        read_regular(path, 9)
    (tmp_path / "link").symlink_to(path)
    with pytest.raises(SnapshotPathError, match="is a symbolic link"):
        read_regular(tmp_path / "link", 10)
    assert under(tmp_path, "f") == path
    assert MAX_STATE_BYTES == 64 * 1024 * 1024


def test_resume_skips_nothing_it_cannot_read(tmp_path: Path) -> None:
    snap = tmp_path / "snap"
    (snap / "state").mkdir(parents=True)
    _plant(snap / "state" / "leaf1.json", "fifo")
    (snap / "manifest.json").write_text(json.dumps({"schema": "fabline.manifest/1", "devices": {}}))
    assert read_manifest(snap) == {"schema": "fabline.manifest/1", "devices": {}}
    from fabline.collect.collector import _done_devices

    assert _done_devices(snap) == {}


# -- read_under: every read stays inside the snapshot, also when the folders change between reads ----


def _state_in(folder: Path, name: str = "leaf1") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.json").write_text(json.dumps({**STATE, "name": name}))


def test_a_state_file_linked_out_is_refused(tmp_path: Path, victim: Path) -> None:
    _state_in(victim, "leaf2")
    _state_in(tmp_path / "snap" / "state")
    (tmp_path / "snap" / "state" / "leaf2.json").symlink_to(victim / "leaf2.json")
    snap = Snapshot(tmp_path / "snap")
    assert snap.load("leaf1") == STATE
    with pytest.raises(StateError, match="leads outside the snapshot"):
        snap.load("leaf2")
    with pytest.raises(SnapshotPathError, match="leads outside the snapshot"):
        read_under(tmp_path / "snap", "state", "leaf2.json", limit=MAX_STATE_BYTES)


def test_a_folder_swapped_for_a_link_out_after_a_read_is_refused(tmp_path: Path, victim: Path) -> None:
    """What was read before proves nothing about the folder now: a state/ replaced by a link out of
    the snapshot between two reads is refused, and so is a device's raw folder."""
    snap = tmp_path / "snap"
    _state_in(snap / "state")
    (snap / "raw" / "leaf1").mkdir(parents=True)
    (snap / "raw" / "leaf1" / "show_version.txt").write_text("inside\n")
    assert json.loads(read_under(snap, "state", "leaf1.json", limit=MAX_STATE_BYTES)) == STATE
    assert read_under(snap, "raw", "leaf1", "show_version.txt", limit=100) == b"inside\n"
    _state_in(victim)
    (victim / "show_version.txt").write_text("precious\n")
    (snap / "state").rename(snap / "state.old")
    (snap / "state").symlink_to(victim)
    with pytest.raises(SnapshotPathError, match="leads outside the snapshot"):
        read_under(snap, "state", "leaf1.json", limit=MAX_STATE_BYTES)
    shutil.rmtree(snap / "raw" / "leaf1")
    (snap / "raw" / "leaf1").symlink_to(victim)
    with pytest.raises(SnapshotPathError, match="leads outside the snapshot"):
        read_under(snap, "raw", "leaf1", "show_version.txt", limit=100)
    # the folder moved out of the snapshot and linked back in: still outside
    (snap / "state").unlink()
    (snap / "state.old").rename(tmp_path / "moved")
    (snap / "state").symlink_to(tmp_path / "moved")
    with pytest.raises(SnapshotPathError, match="leads outside the snapshot"):
        read_under(snap, "state", "leaf1.json", limit=MAX_STATE_BYTES)


def test_a_snapshot_made_again_at_the_same_path_is_read_afresh(tmp_path: Path) -> None:
    snap = tmp_path / "snap"
    _state_in(snap / "state")
    assert json.loads(read_under(snap, "state", "leaf1.json", limit=MAX_STATE_BYTES))["name"] == "leaf1"
    shutil.rmtree(snap)
    (snap / "state").mkdir(parents=True)
    (snap / "state" / "leaf1.json").write_text(json.dumps({**STATE, "status": "partial"}))
    assert json.loads(read_under(snap, "state", "leaf1.json", limit=MAX_STATE_BYTES))["status"] == "partial"
    (snap / "state" / "leaf1.json").unlink()
    with pytest.raises(FileNotFoundError):
        read_under(snap, "state", "leaf1.json", limit=MAX_STATE_BYTES)


def test_links_inside_the_snapshot_are_followed_at_any_depth(tmp_path: Path) -> None:
    snap = tmp_path / "snap"
    _state_in(snap / "keep")
    (snap / "state").symlink_to(snap / "keep")  # a folder linked inside the snapshot
    assert json.loads(read_under(snap, "state", "leaf1.json", limit=MAX_STATE_BYTES)) == STATE
    (snap / "keep" / "leaf9.json").symlink_to(snap / "keep" / "leaf1.json")  # a file linked inside
    assert json.loads(read_under(snap, "state", "leaf9.json", limit=MAX_STATE_BYTES)) == STATE
    (snap / "keep" / "leaf8.json").symlink_to("../../outside.json")  # relative, out
    (tmp_path / "outside.json").write_text(json.dumps(STATE))
    with pytest.raises(SnapshotPathError, match="leads outside the snapshot"):
        read_under(snap, "state", "leaf8.json", limit=MAX_STATE_BYTES)


@pytest.mark.parametrize(
    "parts",
    [("raw", "../../outside/important/keep.txt"), ("raw", "leaf1/../../../outside/important/keep.txt"),
     ("..", "outside", "important", "keep.txt"), ("raw", "/etc/hostname"), ("state", ""), ("state", "."), ()],
)  # fmt: skip
def test_read_under_refuses_names_that_are_not_one_component(
    tmp_path: Path, victim: Path, parts: tuple[str, ...]
) -> None:
    (tmp_path / "snap" / "raw" / "leaf1").mkdir(parents=True)
    (tmp_path / "snap" / "state").mkdir()
    with pytest.raises(SnapshotPathError):
        read_under(tmp_path / "snap", *parts, limit=100)


def test_read_under_resolves_nothing_on_plain_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cost side of the guarantee: reading 200 states of plain folders resolves no path (it
    resolved two per file: ~15 % of a 100k-GPU diff's CPU); a link on the way is still resolved."""
    snap = tmp_path / "snap"
    for i in range(200):
        _state_in(snap / "state", f"leaf{i}")
    resolved: list[Path] = []
    real_resolve = Path.resolve

    def counting(self: Path, strict: bool = False) -> Path:
        resolved.append(self)
        return real_resolve(self, strict)

    monkeypatch.setattr(Path, "resolve", counting)
    docs = [json.loads(read_under(snap, "state", f"leaf{i}.json", limit=MAX_STATE_BYTES)) for i in range(200)]
    assert [d["name"] for d in docs] == [f"leaf{i}" for i in range(200)] and resolved == []
    (snap / "state" / "alias.json").symlink_to(snap / "state" / "leaf7.json")
    assert json.loads(read_under(snap, "state", "alias.json", limit=MAX_STATE_BYTES))["name"] == "leaf7"
    assert resolved


# -- read-ahead hints: only files a read would take, never blocking, never an error ---------------


def _hinted(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Record every ``posix_fadvise`` the read-ahead gives: (the file it names, the advice)."""
    from fabline import paths

    calls: list[tuple[str, int]] = []

    def fadvise(fd: int, offset: int, length: int, advice: int) -> None:
        calls.append((str(Path(f"/proc/self/fd/{fd}").readlink()), advice))

    monkeypatch.setattr(paths, "_FADVISE", fadvise)
    return calls


@pytest.mark.skipif(
    not hasattr(os, "posix_fadvise") or not Path("/proc/self/fd").is_dir(), reason="Linux hint"
)
def test_read_ahead_hints_only_regular_files_inside(
    tmp_path: Path, victim: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _hinted(monkeypatch)
    snap_dir = tmp_path / "snap"
    _state_in(snap_dir / "state")
    _state_in(victim, "leaf2")
    (snap_dir / "state" / "leaf2.json").symlink_to(victim / "leaf2.json")  # a link out
    os.mkfifo(snap_dir / "state" / "fifo.json")  # would block a plain open
    (snap_dir / "state" / "dir.json").mkdir()
    snap = Snapshot(snap_dir)
    with snap.read_ahead() as ahead:
        for name in ("leaf1", "leaf2", "fifo", "dir", "missing", "../../outside/important/keep"):
            ahead.hint(f"{name}.json")  # never raises, never blocks
    assert calls == [(str(snap_dir / "state" / "leaf1.json"), os.POSIX_FADV_WILLNEED)]
    # a state/ folder swapped for a link out before the hints: nothing hinted through it
    calls.clear()
    _state_in(victim, "leaf1")
    (snap_dir / "state").rename(tmp_path / "old-state")
    (snap_dir / "state").symlink_to(victim)
    with snap.read_ahead() as ahead:
        ahead.hint("leaf1.json")
    assert calls == []


def test_reading_ahead_hints_each_state_a_window_before_it_is_read() -> None:
    from fabline.snapshot import reading_ahead

    class Hints:
        def __init__(self) -> None:
            self.hinted: list[str] = []
            self.closed = False

        def hint(self, name: str) -> None:
            self.hinted.append(name.removesuffix(".json"))

        def close(self) -> None:
            self.closed = True

    class Recorder:
        def __init__(self) -> None:
            self.hints = Hints()

        def read_ahead(self) -> Hints:
            return self.hints

    a, b = Recorder(), Recorder()
    names = [f"d{i}" for i in range(10)]
    seen = []
    for item in reading_ahead(list(range(10)), names, [a, b], window=3):  # type: ignore[list-item]
        seen.append(item)
        # when item i is handed out, every state up to i + 3 was hinted, none further
        assert a.hints.hinted == names[: min(item + 4, 10)]
    assert seen == list(range(10))
    assert a.hints.hinted == b.hints.hinted == names  # each once, in order, on both snapshots
    assert a.hints.closed and b.hints.closed
