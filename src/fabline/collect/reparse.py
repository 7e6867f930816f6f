"""Re-parse a snapshot's raw evidence into its states (``fabline check --reparse``).

A parser fix then applies to old evidence without logging in again. The manifest says which
command each raw file holds and what happened to the commands that left no output (timeouts,
dropped sessions, refusals); those outcomes are kept, everything with output is parsed afresh
with the same code a collection uses, so a re-parse of an unchanged snapshot gives the same states.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fabline.collect.device import CommandRecord, assemble_state, now_iso, parse_record
from fabline.collect.profiles import PROFILES
from fabline.collect.transports import Output
from fabline.collect.writer import read_manifest, write_json_atomic
from fabline.errors import ConfigError
from fabline.inventory import Device
from fabline.state import UNREADABLE_STATUSES


def reparse_snapshot(snapshot: Path, devices: list[Device]) -> int:
    """Rebuild ``state/<device>.json`` of the given devices from ``raw/``; returns how many.

    Devices without raw evidence (not in the manifest, or never logged into) are left as they are.

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
    entries: dict[str, Any] = manifest.get("devices") or {}
    count = 0
    for device in devices:
        entry = entries.get(device.name)
        profile = PROFILES.get(device.platform)
        if (
            not isinstance(entry, dict)
            or profile is None
            or entry.get("status") in UNREADABLE_STATUSES - {"error"}
        ):
            continue
        commands = entry.get("commands") or []
        if not commands:
            continue
        records, fragments = _reparse_commands(snapshot / "raw" / device.name, device.platform, commands)
        collected_at = entry.get("started_at") or now_iso()
        status, state = assemble_state(device, profile, fragments, records, collected_at)
        write_json_atomic(snapshot / "state" / f"{device.name}.json", state)
        entry["status"] = status
        entry["errors"] = state["errors"]
        entry["commands"] = [r.to_json() for r in records]
        count += 1
    manifest["reparsed_at"] = now_iso()
    write_json_atomic(snapshot / "manifest.json", manifest)
    return count


def _reparse_commands(
    raw_dir: Path, platform: str, commands: list[dict[str, Any]]
) -> tuple[list[CommandRecord], list[dict[str, Any]]]:
    records: list[CommandRecord] = []
    fragments: list[dict[str, Any]] = []
    for doc in commands:
        record = CommandRecord(
            command=str(doc.get("command", "")),
            status=str(doc.get("status", "failed")),
            duration_s=float(doc.get("duration_s") or 0.0),
            file=doc.get("file"),
            exit_code=doc.get("exit_code"),
            message=doc.get("message"),
        )
        records.append(record)
        if not record.file:
            continue
        path = raw_dir / record.file
        if not path.is_file():
            record.status, record.message = "failed", f"raw output {path} is missing"
            continue
        if record.exit_code not in (None, 0) and record.status in ("failed", "unavailable"):
            continue  # decided by the exit code (stderr is not evidence kept in raw/)
        fragment = parse_record(platform, record, Output(path.read_text("utf-8"), record.exit_code))
        if fragment is not None:
            fragments.append(fragment)
    return records, fragments
