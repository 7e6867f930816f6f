"""Interrupted collections: what was finished before a SIGKILL is never lost or skipped.

Issue 11, item 12: after a SIGKILL, ``--resume`` ended with a "complete" manifest that lacked the
devices finished before the kill (``manifest.json`` is rewritten only every couple of seconds),
and ``--reparse`` then skipped them silently. Each device's manifest entry is now written with its
files (``manifest.d/<device>.json``), so ``--resume`` and ``--reparse`` rebuild the manifest from
what is on disk, and a device ``--reparse`` cannot re-parse is named in the report's warnings.
(Ctrl-C closing the sessions at once is in ``test_hostile_collect_stream.py``.)
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path
from typing import Any

from fabline import synthetic
from fabline.sim import TransportFault
from tests.helpers import statuses
from tests.hostile.collect_support import fabline
from tests.hostile.test_hostile_collect_stream import _finish, _start
from tests.integration.test_collect_sim import LAB, PASSWORD, PASSWORD_ENV, simulator, write_inventory

FABRIC = synthetic.Fabric(
    [
        *LAB.devices[:4],
        synthetic.DeviceSpec("gpu-trickle", "host", "linux", ports=1, rail_interfaces=["eth0"]),
    ],
    [],
)
TRICKLE = TransportFault("gpu-trickle", "trickle_forever", "cat /etc/os-release", seconds=0.2)
QUICK = ["--host-key-policy", "ignore", "--timeout", "5", "--retries", "0"]


def _manifest(snap: Path) -> dict[str, Any]:
    return json.loads((snap / "manifest.json").read_text())


def _check(inv: Path, snap: Path, out: Path) -> dict[str, Any]:
    ran = fabline(
        "check", "-i", inv, "--snapshot", snap, "--reparse", "-o", out, "-f", "json", timeout=120,
        env={PASSWORD_ENV: PASSWORD},
    )  # fmt: skip
    assert ran.code in (0, 3, 4), ran.err[-2000:]
    return json.loads((out / "report.json").read_text())  # type: ignore[no-any-return]


def test_sigkill_then_resume_keeps_every_finished_device(tmp_path: Path) -> None:
    snap = tmp_path / "snap"
    finished = [d.name for d in FABRIC.devices if d.name != "gpu-trickle"]
    with simulator(FABRIC, [TRICKLE], base="127.44") as sim:
        port = next(iter(sim.addresses.values()))[1]
        inv = write_inventory(sim, tmp_path / "inv.yml")
        proc = _start("collect", "-i", inv, "-o", snap, "--command-timeout", "600", *QUICK)
        deadline = time.monotonic() + 90
        while not all((snap / "state" / f"{n}.json").exists() for n in finished):
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[1][-2000:]
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)  # no cleanup: the manifest is whatever was last written
        proc.communicate(timeout=30)
    before = _manifest(snap)
    assert before["complete"] is False
    lost = [n for n in finished if n not in before["devices"]]  # usually most of them
    with simulator(FABRIC, [], base="127.44", port=port):
        proc = _start("collect", "-i", inv, "--resume", snap, *QUICK)
        memory, err = _finish(proc, timeout=120)
    assert memory["code"] in (0, 3), err[-2000:]
    assert f"({len(finished)} already done)" in err, err[-2000:]
    after = _manifest(snap)
    assert after["complete"] is True
    assert set(after["devices"]) == {d.name for d in FABRIC.devices}
    for name in finished:
        entry = after["devices"][name]
        assert entry["commands"], (name, lost)  # the command records came back from manifest.d/
        assert "rebuilt" not in entry
    report = _check(inv, snap, tmp_path / "out")
    assert not [w for w in report["warnings"] if "--reparse" in w], report["warnings"]
    assert {device for _, device in statuses(report)} >= set(finished)


def test_reparse_rebuilds_missing_entries_and_names_what_it_cannot(tmp_path: Path) -> None:
    snap = tmp_path / "snap"
    fabric = synthetic.Fabric(LAB.devices[:3], [])
    with simulator(fabric, [], base="127.45") as sim:
        inv = write_inventory(sim, tmp_path / "inv.yml")
        proc = _start("collect", "-i", inv, "-o", snap, *QUICK)
        memory, err = _finish(proc, timeout=120)
        assert memory["code"] == 0, err[-2000:]
    names = [d.name for d in fabric.devices]
    states = {n: json.loads((snap / "state" / f"{n}.json").read_text()) for n in names}
    manifest = _manifest(snap)
    manifest["devices"] = {}  # as a kill between two manifest writes leaves it
    (snap / "manifest.json").write_text(json.dumps(manifest))
    (snap / "manifest.d" / f"{names[0]}.json").unlink()  # an older snapshot: no entry on disk either
    report = _check(inv, snap, tmp_path / "out")
    assert f"--reparse left 1 device(s) as they were: {names[0]} (no manifest entry)" in report["warnings"]
    rebuilt = _manifest(snap)
    assert set(rebuilt["devices"]) == set(names[1:])
    for name in names[1:]:
        again = json.loads((snap / "state" / f"{name}.json").read_text())
        assert again == states[name]  # re-parsed from raw/ with the entry from manifest.d/


def test_a_hostile_manifest_entry_is_a_failed_record_not_a_crash(tmp_path: Path) -> None:
    snap = tmp_path / "snap"
    fabric = synthetic.Fabric(LAB.devices[:1], [])
    with simulator(fabric, [], base="127.46") as sim:
        inv = write_inventory(sim, tmp_path / "inv.yml")
        proc = _start("collect", "-i", inv, "-o", snap, *QUICK)
        memory, err = _finish(proc, timeout=120)
        assert memory["code"] == 0, err[-2000:]
    name = fabric.devices[0].name
    manifest = _manifest(snap)
    commands = manifest["devices"][name]["commands"]
    commands[0].update(duration_s="soon", status="made-up", exit_code="zero", file=["x"])
    commands.append("not an object")
    (snap / "manifest.json").write_text(json.dumps(manifest))
    _check(inv, snap, tmp_path / "out")
    records = _manifest(snap)["devices"][name]["commands"]
    assert records[0]["status"] == "failed" and records[-1]["status"] == "failed"
    assert records[-1]["message"] == "manifest: command record is not an object"
