"""Re-parse a snapshot's raw evidence into its states (``fabline check --reparse``).

A parser fix then applies to old evidence without logging in again. The manifest says which
command each raw file holds and what happened to the commands that left no output (timeouts,
dropped sessions, refusals); those outcomes are kept, everything with output is parsed afresh
with the same code a collection uses, so a re-parse of an unchanged snapshot gives the same states.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from fabline import perf
from fabline.collect.device import COMMAND_STATUSES, CommandRecord, assemble_state, now_iso, parse_record
from fabline.collect.profiles import PROFILES
from fabline.collect.transports import Output
from fabline.collect.writer import (
    read_entry,
    read_manifest,
    state_bytes,
    write_digests,
    write_entry,
    write_json_atomic,
    write_state,
)
from fabline.errors import ConfigError
from fabline.inventory import Device
from fabline.paths import MAX_RAW_BYTES, SnapshotPathError, read_under, under
from fabline.snapshot import state_digest
from fabline.state import UNREADABLE_STATUSES


def reparse_snapshot(snapshot: Path, devices: list[Device], warn: Callable[[str], None] | None = None) -> int:
    """Rebuild ``state/<device>.json`` of the given devices from ``raw/``; returns how many.

    A device missing from ``manifest.json`` (a run killed before its manifest was rewritten) is
    re-parsed from its own entry in ``manifest.d/``. Devices never logged into are left as they
    are (they have no evidence); every other device that cannot be re-parsed is named through
    ``warn``, never skipped silently.

    Raises:
        ConfigError: The folder is not a snapshot written by ``fabline collect`` (no manifest).
    """
    if not snapshot.is_dir():
        raise ConfigError("snapshot folder not found", file=snapshot)
    manifest = read_manifest(snapshot)
    if manifest is None:
        raise ConfigError(
            "--reparse needs a snapshot written by fabline collect (manifest.json missing or unreadable)",
            file=snapshot / "manifest.json",
        )
    entries = manifest.get("devices")
    if not isinstance(entries, dict):
        entries = manifest["devices"] = {}
    work: list[tuple[Device, dict[str, Any]]] = []
    left: list[str] = []
    for device in devices:
        entry = entries.get(device.name)
        if not isinstance(entry, dict):
            entry = read_entry(snapshot, device.name)
            if entry is None:
                if under(snapshot, "state", f"{device.name}.json").exists():
                    left.append(f"{device.name} (no manifest entry)")
                continue
            entries[device.name] = entry
        if entry.get("status") in UNREADABLE_STATUSES - {"error"}:
            continue  # never logged into: nothing to re-parse, its state says why
        if (
            device.platform not in PROFILES
            or not isinstance(entry.get("commands"), list)
            or not entry["commands"]
        ):
            left.append(f"{device.name} (no command records)")
            continue
        work.append((device, entry))
    if left and warn is not None:
        shown = ", ".join(left[:5]) + (f" and {len(left) - 5} more" if len(left) > 5 else "")
        warn(f"--reparse left {len(left)} device(s) as they were: {shown}")
    count = 0
    for name, update in _reparse_all(snapshot, work):
        entries[name].update(update)
        write_entry(snapshot, name, entries[name])
        count += 1
    manifest["reparsed_at"] = now_iso()
    write_json_atomic(under(snapshot, "manifest.json"), manifest)
    write_digests(snapshot, entries)
    return count


_FORKED: tuple[Path, list[tuple[Device, dict[str, Any]]]] | None = None


def _reparse_one(snapshot: Path, device: Device, entry: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Re-parse one device, write its state; returns the manifest fields that changed."""
    profile = PROFILES[device.platform]
    records, parsed = _reparse_commands(snapshot, device.name, device.platform, entry["commands"])
    collected_at = entry.get("started_at") or now_iso()
    status, state = assemble_state(device, profile, parsed, records, collected_at)
    data = state_bytes(state)
    write_state(snapshot, device.name, data)
    return device.name, {
        "status": status,
        "errors": state["errors"],
        "commands": [r.to_json() for r in records],
        **state_digest(data),
    }


def _forked_one(index: int) -> tuple[str, dict[str, Any]]:
    assert _FORKED is not None
    snapshot, work = _FORKED
    device, entry = work[index]
    return _reparse_one(snapshot, device, entry)


def _reparse_all(
    snapshot: Path, work: list[tuple[Device, dict[str, Any]]]
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Re-parse every device: in-line for a few, else over forked worker processes.

    Parsing is CPU-bound: one process per core; the parent only merges the manifest entries.
    """
    jobs = perf.worker_count(len(work), minimum=perf.PARALLEL_MIN_REPARSE)
    if jobs < 2:
        for device, entry in work:
            yield _reparse_one(snapshot, device, entry)
        return
    global _FORKED  # noqa: PLW0603 - the fork start method shares it with the workers
    _FORKED = (snapshot, work)
    try:
        with perf.fork_pool(jobs) as pool:
            yield from pool.imap(_forked_one, range(len(work)), chunksize=16)
    finally:
        _FORKED = None


def _record(doc: Any) -> CommandRecord:
    """A command record from a manifest, whatever the manifest holds (a value of the wrong type is
    a ``failed`` record that says so, never a crash).
    """
    if not isinstance(doc, dict):
        return CommandRecord("?", "failed", message="manifest: command record is not an object")
    status = doc.get("status", "failed")
    try:
        duration = float(doc.get("duration_s") or 0.0)
    except (TypeError, ValueError, OverflowError):
        duration = 0.0
    exit_code = doc.get("exit_code")
    file = doc.get("file")
    message = doc.get("message")
    return CommandRecord(
        command=str(doc.get("command", "")),
        status=status if status in COMMAND_STATUSES else "failed",
        duration_s=duration,
        file=file if isinstance(file, str) else None,
        exit_code=exit_code if isinstance(exit_code, int) and not isinstance(exit_code, bool) else None,
        message=message if isinstance(message, str) else (None if message is None else str(message)),
    )


def _reparse_commands(
    snapshot: Path, name: str, platform: str, commands: list[dict[str, Any]]
) -> tuple[list[CommandRecord], list[tuple[CommandRecord, dict[str, Any]]]]:
    records: list[CommandRecord] = []
    parsed: list[tuple[CommandRecord, dict[str, Any]]] = []
    for doc in commands:
        record = _record(doc)
        records.append(record)
        if not record.file:
            continue
        # The file name comes from the manifest: it is read only inside raw/<device>/, bounded.
        try:
            data = read_under(snapshot, "raw", name, str(record.file), limit=MAX_RAW_BYTES)
        except SnapshotPathError as exc:
            record.status, record.message = "failed", f"raw output not read: {exc}"
            continue
        except OSError as exc:
            missing = isinstance(exc, FileNotFoundError)
            record.status, record.message = (
                "failed",
                (
                    f"raw output raw/{name}/{record.file} is "
                    + ("missing" if missing else f"unreadable ({exc.strerror})")
                ),
            )
            continue
        if record.exit_code not in (None, 0) and record.status in ("failed", "unavailable"):
            continue  # decided by the exit code (stderr is not evidence kept in raw/)
        fragment = parse_record(platform, record, Output(data.decode("utf-8", "replace"), record.exit_code))
        if fragment is not None:
            parsed.append((record, fragment))
    return records, parsed
