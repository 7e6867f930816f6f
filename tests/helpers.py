"""Small builders shared by unit tests: devices, snapshots, baselines written to real files."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fabline.baseline import load_baseline
from fabline.checks import Check
from fabline.checks.registry import builtin_checks
from fabline.engine import Engine, RunOutcome
from fabline.snapshot import Snapshot


@dataclass(frozen=True)
class FakeDevice:
    """An inventory device as the engine sees it."""

    name: str
    platform: str = "sonic"
    role: str = "leaf"
    groups: tuple[str, ...] = ()
    vars: Mapping[str, Any] = field(default_factory=dict)


REPO_BASELINE = Path(__file__).resolve().parents[1] / "baseline" / "roce.yml"


def checked_inline_and_forked(devices: Any, snapshot: Path) -> tuple[RunOutcome, RunOutcome]:
    """A synthetic fabric's devices (``synthetic.Fabric.devices``) checked against the repository's
    baseline and every built-in check, in-line (``jobs=1``) and over two forked workers."""
    inventory = [
        FakeDevice(
            d.name,
            d.platform,
            d.role,
            (),
            {"rail_interfaces": d.rail_interfaces} if d.rail_interfaces else {},
        )
        for d in devices
    ]
    engine = Engine(load_baseline([REPO_BASELINE]), builtin_checks(), lambda p: set())
    return engine.run(inventory, Snapshot(snapshot), jobs=1), engine.run(
        inventory, Snapshot(snapshot), jobs=2
    )


def state(name: str, **body: Any) -> dict[str, Any]:
    """A state document with the required keys."""
    return {"schema": "fabline.state/1", "name": name, "status": "ok", **body}


def write_snapshot(root: Path, docs: list[dict[str, Any]], raw: Mapping[str, str] | None = None) -> Path:
    """Write states (and raw file contents by device name, for corrupt-file tests)."""
    sd = root / "state"
    sd.mkdir(parents=True, exist_ok=True)
    for doc in docs:
        (sd / f"{doc['name']}.json").write_text(json.dumps(doc), "utf-8")
    for name, text in (raw or {}).items():
        (sd / f"{name}.json").write_text(text, "utf-8")
    return root


def write_yaml(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), "utf-8")
    return path


def run(
    tmp: Path,
    baseline_yaml: str,
    devices: list[FakeDevice],
    docs: list[dict[str, Any]],
    *,
    raw: Mapping[str, str] | None = None,
    checks: Mapping[str, type[Check]] | None = None,
    today: Any = None,
) -> RunOutcome:
    """Run the engine on real files: one baseline, states, fake devices."""
    bpath = write_yaml(tmp / "baseline.yml", baseline_yaml)
    snap = write_snapshot(tmp / "snap", docs, raw)
    registry = dict(checks) if checks is not None else {}
    engine = Engine(
        load_baseline([bpath]), registry, lambda p: {d.name for d in devices if p in d.name}, today
    )
    return engine.run(devices, Snapshot(snap))


def by_id(outcome: RunOutcome) -> dict[str, Any]:
    """Results keyed by their id."""
    return {r.id: r for r in outcome.results}


def statuses(doc: Mapping[str, Any]) -> dict[tuple[str, str], set[str]]:
    """(check, device) -> the statuses of its results in a report.json document (report/2: the
    non-pass results in ``results``, the passes counted in ``passes``)."""
    out: dict[tuple[str, str], set[str]] = {}
    for r in doc["results"]:
        out.setdefault((r["check"], r["device"]), set()).add(r["status"])
    for check, by_device in doc.get("passes", {}).items():
        for device in by_device:
            out.setdefault((check, device), set()).add("pass")
    return out


__all__ = [
    "FakeDevice",
    "builtin_checks",
    "by_id",
    "run",
    "state",
    "statuses",
    "write_snapshot",
    "write_yaml",
]
