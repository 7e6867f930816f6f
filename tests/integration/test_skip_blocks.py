"""Issue 14: a per-port field missing on every port is one result per device, not one per port.

The lab snapshot (``fabline.synthetic``) has no ``fec_pre_ber``, ``optics.active_flags`` nor
``pfcwd_stormed_queues``: ``fec-pre-ber``, ``optics-alarms`` and ``pfc-storm-active`` skip on every
up port of every switch ("not applicable: ... not present"; they are switch readings and never judge
a host). The second night also lost ``trust`` on every port of
one leaf: ``switch-trust-dscp`` errors on each of them with the same message. Each of these is one
``SkipBlock`` per device, and stays one through report.json, ``load_report``, the run history
(``history show``) and ``fabline diff``; JUnit and Markdown stay bounded.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from fabline import synthetic
from fabline.reportfile import load_report
from fabline.results import SkipBlock, Status, expand_results, expand_subjects

REPO = Path(__file__).resolve().parents[2]
INV = REPO / "inventory" / "lab.yml"
BASE = REPO / "baseline" / "roce.yml"
LEAF = "leaf-r0-a"


def fabline(*args: Any, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fabline", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )


def _up_ports(snap: Path, roles: tuple[str, ...] = ("leaf", "spine")) -> dict[str, list[str]]:
    """Each switch's up ports (``roles``: of devices of these roles)."""
    out = {}
    for path in sorted((snap / "state").glob("*.json")):
        doc = json.loads(path.read_text())
        if doc["role"] in roles:
            out[doc["name"]] = [n for n, b in doc["interfaces"].items() if b.get("oper_up")]
    return out


@pytest.fixture(scope="module")
def nights(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("nights")
    clean = root / "clean"
    synthetic.write_snapshot(synthetic.lab_fabric(), clean, collected_at="2026-11-27T02:00:00Z")
    lost = root / "lost"
    synthetic.write_snapshot(synthetic.lab_fabric(), lost, collected_at="2026-11-28T02:00:00Z")
    path = lost / "state" / f"{LEAF}.json"
    doc = json.loads(path.read_text())
    for body in doc["interfaces"].values():
        body.pop("trust", None)  # not collected on this leaf, on any port
    path.write_text(json.dumps(doc))
    return {"clean": clean, "lost": lost}


@pytest.fixture(scope="module")
def runs(nights: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Both nights checked with ``--history`` and ``-f json,junit,md`` in one working folder."""
    work = tmp_path_factory.mktemp("work")
    for name in ("clean", "lost"):
        proc = fabline("check", "-i", INV, "-b", BASE, "--snapshot", nights[name], "-q", "--history",
                       "--out", work / name, "-f", "json,junit,md", cwd=work)  # fmt: skip
        assert proc.returncode in (0, 3, 4), proc.stderr
    return work


def test_a_field_missing_on_every_port_is_one_row_per_device(runs: Path, nights: dict[str, Path]) -> None:
    doc = json.loads((runs / "lost" / "report.json").read_text())
    up = _up_ports(nights["lost"])
    rows = [r for r in doc["results"] if r["check"] == "fec-pre-ber"]
    # One row per switch (every switch has at least two up ports), each naming all its up ports.
    assert sorted(r["device"] for r in rows) == sorted(d for d, ports in up.items() if ports)
    for r in rows:
        assert r["status"] == "skipped" and r["subject"] is None and r["message"].endswith("not present")
        assert r["count"] == len(up[r["device"]]) and expand_subjects(r["subjects"]) == up[r["device"]]
        assert r["id"] == f"{r['device']}::fec-pre-ber::{up[r['device']][0]}+{r['count'] - 1}"
    # The errors of the leaf that lost 'trust': one row, every port findable.
    (err,) = [r for r in doc["results"] if r["check"] == "switch-trust-dscp" and r["device"] == LEAF]
    leaf_ports = _switch_ports(nights["lost"])
    assert err["status"] == "error" and err["count"] == len(leaf_ports) >= 4
    assert expand_subjects(err["subjects"]) == leaf_ports
    # The summary counts every result the rows stand for.
    by_status = Counter[str]()
    for r in doc["results"]:
        by_status[r["status"]] += r.get("count", 1)
    assert {s: n for s, n in doc["summary"]["by_status"].items() if s != "pass"} == {
        s: by_status.get(s, 0) for s in ("fail", "error", "skipped", "waived")
    }
    hosts = _up_ports(nights["lost"], ("host",))
    assert hosts and all(hosts.values())  # hosts with up ports, which these switch rules leave alone
    for check in ("fec-pre-ber", "optics-alarms", "pfc-storm-active"):  # per-port rules: a row per switch
        devices = [r["device"] for r in doc["results"] if r["check"] == check]
        assert len(devices) == len(set(devices)) == len([d for d, ports in up.items() if ports])
        assert not set(devices) & set(hosts)
    # The error is visible as a problem naming the block.
    assert any(err["id"] in p["findings"] for p in doc["problems"])


def _switch_ports(snap: Path) -> list[str]:
    doc = json.loads((snap / "state" / f"{LEAF}.json").read_text())
    return [n for n, b in doc["interfaces"].items() if b.get("admin_up")]


def test_blocks_round_trip_through_load_report_and_the_history(runs: Path) -> None:
    doc = json.loads((runs / "lost" / "report.json").read_text())
    saved = load_report(runs / "lost" / "report.json")
    assert saved.schema == "fabline.report/3"
    blocks = [r for r in saved.findings if type(r) is SkipBlock]
    assert blocks and [r.to_dict() for r in saved.findings] == [
        r for r in doc["results"] if r["status"] != "pass"
    ]
    expanded = list(expand_results(saved.findings))
    assert len(expanded) == sum(r.get("count", 1) for r in doc["results"])
    assert len({r.id for r in expanded}) == len(expanded)  # every subject has its own id again
    assert all(f in saved.findings_by_id() for p in saved.problems for f in p["findings"])
    shown = fabline("history", "show", "last", "-f", "json", cwd=runs)
    assert shown.returncode == 0, shown.stderr
    back = json.loads(shown.stdout)
    assert back["results"] == doc["results"] and back["summary"] == doc["summary"]
    assert back["problems"] == doc["problems"]
    console = fabline("history", "show", "last", cwd=runs)
    assert console.returncode == 0 and "Traceback" not in console.stderr


def test_diff_of_two_runs_names_the_block_once(runs: Path) -> None:
    out = runs / "diff.json"
    proc = fabline("diff", "last~1", "last", "-f", "json", "--out", out, cwd=runs)
    assert proc.returncode == 4, proc.stdout + proc.stderr  # a new error
    diff = json.loads(out.read_text())
    new = [r for r in diff["new_errors"] if r["check"] == "switch-trust-dscp"]
    assert len(new) == 1 and new[0]["device"] == LEAF and new[0]["count"] >= 4
    assert new[0]["before_status"] is None
    # The skip blocks are the same on both nights: not a change.
    assert not [r for r in diff["new_errors"] if r["status"] == "skipped"]


def test_junit_and_markdown_stay_bounded(runs: Path, nights: dict[str, Path]) -> None:
    tree = ElementTree.parse(runs / "lost" / "report.junit.xml")
    cases = tree.getroot().findall(".//testcase")
    ids = [c.get("id") for c in cases]
    assert len(ids) == len(set(ids))
    (leaf_case,) = [c for c in cases if c.get("id") == f"switch-trust-dscp::{LEAF}"]
    (error,) = leaf_case.findall("error")
    ports = _switch_ports(nights["lost"])
    assert f"{len(ports)} errors" in (error.get("message") or "")
    assert (error.text or "").count("\n") < 3  # one line for the block, not one per port
    fec = [c for c in cases if (c.get("classname") or "") == "fabline.fec-pre-ber"]
    assert len(fec) <= 3  # one case per role, the skipped results counted in it
    md = (runs / "lost" / "report.md").read_text()
    section = md.split("### `switch-trust-dscp`", 1)[1].split("\n### ", 1)[0]
    (row,) = [ln for ln in section.splitlines() if ln.startswith("| error |")]  # one row, not one per port
    assert LEAF in row and f"({len(ports)})" in row  # naming how many ports it stands for


def test_a_waiver_on_some_ports_splits_the_block(nights: dict[str, Path], tmp_path: Path) -> None:
    """A waiver covering two of the leaf's ports waives those two, the rest stay one error block."""
    from fabline.runner import run_check

    ports = _switch_ports(nights["lost"])
    base = tmp_path / "waive.yml"
    base.write_text(
        "waivers:\n"
        f"  - {{rule: switch-trust-dscp, devices: {LEAF}, subject: '{ports[0]}', reason: ticket 1, "
        "expires: 2099-01-01}\n"
        f"  - {{rule: switch-trust-dscp, devices: {LEAF}, subject: '{ports[1]}', reason: ticket 1, "
        "expires: 2099-01-01}\n",
        "utf-8",
    )
    report, _ = run_check(
        inventory=INV, snapshot=nights["lost"], baselines=[BASE, base], checks_dir=None, limit=LEAF,
        out=None, formats=[], fail_on="minor",
    )  # fmt: skip
    mine = [r for r in report.outcome.results.problems if r.check == "switch-trust-dscp"]
    assert [(r.status, len(getattr(r, "subjects", [r.subject]))) for r in mine] == [
        (Status.WAIVED, 2),
        (Status.ERROR, len(ports) - 2),
    ]
    assert report.summary["by_status"]["waived"] == 2
    assert sum(1 for r in report.outcome.results if r.check == "switch-trust-dscp") == len(ports)
