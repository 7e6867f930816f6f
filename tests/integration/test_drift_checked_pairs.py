"""``drift`` and ``diff -i`` compare the two snapshots in the check's per-device pass
(:class:`fabline.history.diff.CheckedPairs`): the diff is the one a separate read of both snapshots
gives (diff.json, diff.md, exit code, ``--counter-rows``), in-line and over forked workers, on a
night with real changes: state changes, moved counters with ties, resets, findings, devices added
and removed, an unreadable state, a value the schema pass marks, a device the inventory lacks.

Inputs are synthetic states (fabline.synthetic), not device output: the diff works on states.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from fabline import synthetic
from fabline.history import diff as diff_mod
from fabline.history.counters import CounterLimits
from fabline.history.diff import DEFAULT_VOLATILE, CheckedPairs, Side, diff_sides
from fabline.history.render import render_json, render_markdown
from fabline.runner import run_check

REPO = Path(__file__).resolve().parents[2]
BASE = REPO / "baseline" / "roce.yml"
IGNORE = (*DEFAULT_VOLATILE, "interfaces.*.description")


def _night(tmp_path: Path) -> tuple[Path, Path, Path, list[str]]:
    """(before, after, inventory, device names) of a 64-GPU rail fabric and its next night."""
    fabric = synthetic.rail_fabric(64, radix=16)
    before, after = tmp_path / "before", tmp_path / "after"
    synthetic.write_snapshot(fabric, before)
    host = next(d for d in fabric.devices if d.role == "host")
    faults = [synthetic.Fault(host.name, "mtu", 1500, host.rail_interfaces[0])]
    synthetic.write_snapshot(fabric, after, faults, collected_at="2026-11-29T08:00:00Z")
    inventory = tmp_path / "inventory.yml"
    inv = synthetic.inventory(fabric)
    hosts = inv["all"]["children"]["gpu_hosts"]
    hosts["hosts"] = dict(reversed(hosts["hosts"].items()))  # checked in another order than the names'
    inventory.write_text(json.dumps(inv), "utf-8")
    rng = random.Random(7)
    states = sorted((after / "state").glob("*.json"))
    for n, path in enumerate(states):
        doc = json.loads(path.read_bytes())
        for i, body in enumerate(doc["interfaces"].values()):
            counters = body.get("counters")
            if not counters:
                continue
            # ties (equal deltas on many ports) and a spread of rates
            counters["ecn_marked"] = counters.get("ecn_marked", 0) + (
                500 if i % 3 else rng.randrange(1, 10**6)
            )
            counters["cnp_handled"] = counters.get("cnp_handled", 0) + 100  # every port ties
            for prio in counters.get("pfc_rx_pause") or {}:
                counters["pfc_rx_pause"][prio] += rng.randrange(0, 50)
            if rng.random() < 0.05:  # a clear: a reset
                counters["fec_corrected"] = 1
            if n % 7 == 0 and i == 0:  # past crc-errors-delta's limit: a finding
                counters["crc_errors"] = counters.get("crc_errors", 0) + 3 + n
        if n % 11 == 0:
            body = next(iter(doc["interfaces"].values()))
            body["description"] = "moved"  # ignored (a user pattern)
            body["pfc_priorities"] = [3, 4]  # a state change
        path.write_bytes(json.dumps(doc).encode())
    names = [p.stem for p in states]
    (after / "state" / f"{names[1]}.json").unlink()  # gone the next night
    (before / "state" / f"{names[2]}.json").unlink()  # new the next night
    (after / "state" / f"{names[3]}.json").write_text("{not json")  # unreadable
    marked = json.loads((after / "state" / f"{names[4]}.json").read_bytes())
    next(iter(marked["interfaces"].values()))["mtu"] = "huge"  # the check's schema pass marks it
    (after / "state" / f"{names[4]}.json").write_text(json.dumps(marked))
    for root, at in ((before, "2026-11-28T08:00:00Z"), (after, "2026-11-29T08:00:00Z")):
        stray = json.loads((before / "state" / f"{names[5]}.json").read_bytes())
        stray.update(name="zz-stray", collected_at=at)  # in both snapshots, not in the inventory
        if root is after:
            for body in stray["interfaces"].values():
                if body.get("counters"):
                    body["counters"]["fec_corrected"] = body["counters"].get("fec_corrected", 0) + 99
        (root / "state" / "zz-stray.json").write_text(json.dumps(stray))
    return before, after, inventory, names


def _outputs(result: diff_mod.DiffResult, rows: Path) -> tuple[dict[str, Any], str, int, bytes]:
    doc = json.loads(render_json(result))
    doc["counters"].pop("rows_file")
    text = render_markdown(result).replace(str(rows), "ROWS")
    return doc, text, int(result.exit_code()), rows.read_bytes()


@pytest.mark.parametrize("forked", [False, True])
def test_the_checks_pairs_give_the_separate_diff(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forked: bool
) -> None:
    from fabline import perf

    before, after, inventory, _ = _night(tmp_path)
    if forked:
        monkeypatch.setattr(perf, "PARALLEL_MIN_DEVICES", 1)
        monkeypatch.setattr(perf.os, "cpu_count", lambda: 2)
        monkeypatch.setattr("fabline.engine.parallel.CHUNK_DEVICES", 16)
    limits = CounterLimits.from_baseline([BASE])
    side_b, side_a = Side("b", before), Side("a", after)

    old_rows = tmp_path / "old.jsonl"
    old = diff_sides(side_b, side_a, ignore=IGNORE, limits=limits, counter_rows=old_rows)

    new_rows = tmp_path / "out" / "new.jsonl"
    new_rows.parent.mkdir()
    pairs = CheckedPairs(before, after, IGNORE, limits, new_rows)
    report, _ = run_check(
        inventory=inventory, snapshot=after, baselines=[BASE], checks_dir=None, limit=None, out=None,
        formats=[], fail_on="minor", previous=before, pair=pairs,
    )  # fmt: skip
    checked = [d["name"] for d in report.outcome.devices]
    assert checked != sorted(checked)  # the check goes in inventory order, the diff in name order
    assert pairs.pieces and len(pairs.pieces) > (1 if forked else 0)
    read: list[int] = []
    real = diff_mod.worker_count
    monkeypatch.setattr(diff_mod, "worker_count", lambda n, *a: read.append(n) or real(n, *a))
    new = diff_sides(side_b, side_a, ignore=IGNORE, limits=limits, counter_rows=new_rows, pieces=pairs)
    assert read == [1]  # only the device the check did not cover (zz-stray) was read again

    got, want = _outputs(new, new_rows), _outputs(old, old_rows)
    assert got[0] == want[0]
    assert got[1:] == want[1:]
    assert sorted(p.name for p in new_rows.parent.iterdir()) == ["new.jsonl"]  # no part file left
    # the night has what the comparison is about
    doc = got[0]
    assert doc["only_before"] and doc["only_after"] and doc["unreadable"]
    assert {c["path"].rsplit(".", 1)[-1] for c in doc["changes"]} >= {"mtu", "pfc_priorities"}
    assert "huge" in [c["after"] for c in doc["changes"]]
    assert doc["counters"]["resets"] and doc["counters"]["over_limit"] and got[2] == 4
    assert "zz-stray" in got[3].decode()


def test_pieces_made_for_another_comparison_are_not_used(tmp_path: Path) -> None:
    before, after, inventory, _ = _night(tmp_path)
    limits = CounterLimits.from_baseline([BASE])
    rows = tmp_path / "rows.jsonl"
    pairs = CheckedPairs(before, after, IGNORE, limits, rows)
    run_check(
        inventory=inventory, snapshot=after, baselines=[BASE], checks_dir=None, limit=None, out=None,
        formats=[], fail_on="minor", previous=before, pair=pairs,
    )  # fmt: skip
    other = diff_sides(Side("b", before), Side("a", after), ignore=DEFAULT_VOLATILE, limits=limits,
                       counter_rows=rows, pieces=pairs)  # fmt: skip
    plain = diff_sides(Side("b", before), Side("a", after), ignore=DEFAULT_VOLATILE, limits=limits)
    assert other.to_dict()["changes"] == plain.to_dict()["changes"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["after", "before", "inventory.yml", "rows.jsonl"]
    with pytest.raises(ValueError, match="frame_bytes"):
        CheckedPairs(before, after, ("**.counters",), limits)


def test_drift_and_diff_i_print_what_they_did(tmp_path: Path) -> None:
    """The commands end to end: the same diff.json with the check's pairs as the separate diff gives."""
    import subprocess
    import sys

    before, after, inventory, _ = _night(tmp_path)

    def fabline(*args: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "fabline", *map(str, args)], cwd=tmp_path,
                              capture_output=True, text=True, check=False)  # fmt: skip

    db = tmp_path / "h.sqlite"
    assert fabline(
        "check", "-i", inventory, "--snapshot", before, "-b", BASE, "--history", db, "-q"
    ).returncode in (0, 3, 4)
    drift = fabline("drift", "-i", inventory, "--snapshot", after, "-b", BASE, "--db", db, "--no-record", "-q",
                    "-o", tmp_path / "drift", "-f", "json", "--counter-rows", tmp_path / "drift-rows.jsonl")  # fmt: skip
    diff_i = fabline("diff", before, after, "-i", inventory, "-b", BASE, "-f", "json", "-o",
                     tmp_path / "diff-i.json", "--counter-rows", tmp_path / "diff-i-rows.jsonl")  # fmt: skip
    plain = fabline("diff", before, after, "-b", BASE, "-f", "json", "-o", tmp_path / "plain.json",
                    "--counter-rows", tmp_path / "plain-rows.jsonl")  # fmt: skip
    assert drift.returncode == diff_i.returncode == plain.returncode == 4, (drift.stderr, diff_i.stderr)

    def counters_and_changes(path: Path) -> dict[str, Any]:
        doc = json.loads(path.read_text("utf-8"))
        doc["counters"].pop("rows_file")
        return {k: doc[k] for k in ("changes", "counters", "only_before", "only_after", "unreadable",
                                    "devices_compared")}  # fmt: skip

    want = counters_and_changes(tmp_path / "plain.json")
    assert counters_and_changes(tmp_path / "drift" / "diff.json") == want
    assert counters_and_changes(tmp_path / "diff-i.json") == want
    rows = (tmp_path / "plain-rows.jsonl").read_bytes()
    assert (
        (tmp_path / "drift-rows.jsonl").read_bytes() == rows == (tmp_path / "diff-i-rows.jsonl").read_bytes()
    )
