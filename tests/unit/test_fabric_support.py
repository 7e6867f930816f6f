"""Builders for the fabric check tests: a synthetic fabric, written as real state files, checked by
the real engine with only the fabric checks (an empty baseline), and results as small tables."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from fabline import synthetic
from fabline.baseline import load_baseline
from fabline.checks import Check
from fabline.checks.fabric import FABRIC_CHECKS
from fabline.engine import Engine, RunOutcome
from fabline.results import Result, Status
from fabline.snapshot import Snapshot
from tests.helpers import FakeDevice, write_yaml

ALL = {cls.id: cls for cls in FABRIC_CHECKS}


def devices_of(fabric: synthetic.Fabric, **extra_vars: Mapping[str, Any]) -> list[FakeDevice]:
    """Inventory devices of a synthetic fabric (the vars the checks read), plus per-device extras."""
    out = []
    for d in fabric.devices:
        v: dict[str, Any] = {}
        if d.rail is not None:
            v.update(rail=d.rail, plane=d.plane)
        if d.rail_interfaces:
            v["rail_interfaces"] = list(d.rail_interfaces)
        v.update(extra_vars.get(d.name.replace("-", "_"), {}))
        out.append(FakeDevice(d.name, d.platform, d.role, (), v))
    return out


def run_fabric(
    tmp: Path,
    fabric: synthetic.Fabric,
    faults: Sequence[synthetic.Fault] = (),
    *,
    checks: Iterable[str] | None = None,
    baseline: str = "rules: []\n",
    drop: Iterable[str] = (),
    previous: Sequence[synthetic.Fault] | None = None,
    previous_at: str = "2026-11-29T07:00:00Z",
    options: Mapping[str, Any] | None = None,
    devices: list[FakeDevice] | None = None,
) -> RunOutcome:
    """Write the fabric's states (minus ``drop``), run the engine with the chosen fabric checks."""
    snap = tmp / "snap"
    synthetic.write_snapshot(fabric, snap, faults)
    for name in drop:
        (snap / "state" / f"{name}.json").unlink()
    prev = None
    if previous is not None:
        prev = tmp / "prev"
        synthetic.write_snapshot(fabric, prev, previous, collected_at=previous_at)
    registry: dict[str, type[Check]] = {k: v for k, v in ALL.items() if checks is None or k in set(checks)}
    bpath = write_yaml(tmp / "baseline.yml", baseline)
    devs = devices if devices is not None else devices_of(fabric)
    engine = Engine(load_baseline([bpath]), registry, lambda p: {d.name for d in devs if p in d.name})
    return engine.run(devs, Snapshot(snap), Snapshot(prev) if prev else None, options)


def table(out: RunOutcome, status: Status, check: str | None = None) -> set[tuple[str, str, str | None]]:
    """(check, device, subject) of every result with this status (and check id)."""
    return {
        (r.check, r.device, r.subject)
        for r in out.results
        if r.status is status and (check is None or r.check == check)
    }


def one(out: RunOutcome, check: str, device: str, subject: str | None) -> Result:
    """The single result of a check on a device and subject."""
    hits = [r for r in out.results if (r.check, r.device, r.subject) == (check, device, subject)]
    assert len(hits) == 1, hits
    return hits[0]


def edit_state(tmp: Path, name: str, edit: Any) -> None:
    """Change a written state file in place (``edit(doc)``) before a second run."""
    path = tmp / "snap" / "state" / f"{name}.json"
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(doc))


def test_support_runs_only_the_chosen_checks(tmp_path: Path) -> None:
    out = run_fabric(tmp_path, synthetic.lab_fabric(), checks=["link-fec"])
    assert {r.check for r in out.results} == {"link-fec"}
    assert len(out.results) == 32  # 16 links, both ends


def test_pass_blocks_are_stored_compactly_and_iterate_as_passes() -> None:
    from fabline.results import PassBlock, ResultStore, Severity

    store = ResultStore()
    store.extend([PassBlock("link-fec", "leaf1", Severity.MAJOR, ["Ethernet0", "Ethernet8"])])
    assert len(store) == 2 and store.problems == []
    assert [(r.device, r.subject, r.status) for r in store] == [
        ("leaf1", "Ethernet0", Status.PASS),
        ("leaf1", "Ethernet8", Status.PASS),
    ]
