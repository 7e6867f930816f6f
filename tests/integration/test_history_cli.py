"""``fabline check --history``, ``history``, ``diff`` and ``drift`` end to end through the CLI.

Snapshots are synthetic states of the bundled lab fabric (fabline.synthetic), with planted faults.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fabline import synthetic

REPO = Path(__file__).resolve().parents[2]
INV = REPO / "inventory" / "lab.yml"
BASE = REPO / "baseline" / "roce.yml"


def fabline(*args: Any, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fabline", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )


def _snap(root: Path, faults: list[synthetic.Fault], at: str) -> Path:
    synthetic.write_snapshot(synthetic.lab_fabric(), root, faults, collected_at=at)
    return root


@pytest.fixture
def nights(tmp_path: Path) -> dict[str, Path]:
    """Three snapshots: clean, one MTU fault, and the MTU fault plus a PFC watchdog off and a CRC burst."""
    mtu = synthetic.Fault("gpu-002", "mtu", 1500, "eth1")
    wd = synthetic.Fault("spine-02", "qos.pfc_watchdog.enabled", False)
    crc = synthetic.Fault("leaf-r0-a", "counters.crc_errors", 120, "Ethernet0")
    return {
        "clean": _snap(tmp_path / "clean", [], "2026-11-27T02:00:00Z"),
        "mtu": _snap(tmp_path / "mtu", [mtu], "2026-11-28T02:00:00Z"),
        "worse": _snap(tmp_path / "worse", [mtu, wd, crc], "2026-11-28T02:01:00Z"),
    }


def test_check_records_and_history_lists_and_shows(tmp_path: Path, nights: dict[str, Path]) -> None:
    for name in ("clean", "mtu"):
        proc = fabline("check", "-i", INV, "-b", BASE, "--snapshot", nights[name], "-q", "--history",
                       "--out", tmp_path / f"out-{name}", "-f", "json", cwd=tmp_path)  # fmt: skip
        assert proc.returncode in (0, 4), proc.stderr
    assert (tmp_path / ".fabline" / "history.sqlite").is_file()
    listing = fabline("history", "--json", cwd=tmp_path)
    assert listing.returncode == 0, listing.stderr
    runs = json.loads(listing.stdout)
    assert len(runs) == 2
    assert [r["snapshot"] for r in runs] == [str(nights["clean"]), str(nights["mtu"])]
    reports = [json.loads((tmp_path / f"out-{n}" / "report.json").read_text()) for n in ("clean", "mtu")]
    assert [r["counts"] for r in runs] == [
        {"total": d["summary"]["total"], **d["summary"]["by_status"]} for d in reports
    ]
    table = fabline("history", "--since", "3650d", cwd=tmp_path)
    assert runs[0]["run_id"] in table.stdout and runs[1]["run_id"] in table.stdout
    shown = fabline("history", "show", runs[1]["run_id"], "-f", "json", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    doc = json.loads(shown.stdout)
    assert doc["summary"] == reports[1]["summary"]
    problems = [r for r in reports[1]["results"] if r["status"] != "pass"]
    assert [r for r in doc["results"] if r["status"] != "pass"] == problems
    assert doc["problems"] == reports[1]["problems"] and len(doc["problems"]) == 1  # kept in the history
    console = fabline("history", "show", "last", cwd=tmp_path)
    assert "verdict: FAIL (exit 4)" in console.stdout


def test_pass_summaries_round_trip_through_history_and_diff(tmp_path: Path, nights: dict[str, Path]) -> None:
    """report.json's ``passes`` (and ``pass_subjects``, and every pass with ``--passes results``)
    come back the same from the history, and ``fabline diff`` of the two recorded runs compares them."""
    docs = {}
    for name in ("clean", "mtu"):
        proc = fabline("check", "-i", INV, "-b", BASE, "--snapshot", nights[name], "-q", "--history",
                       "--out", tmp_path / name, "-f", "json", "--passes", "subjects", cwd=tmp_path)  # fmt: skip
        assert proc.returncode in (0, 4), proc.stderr
        docs[name] = json.loads((tmp_path / name / "report.json").read_text())
    clean, mtu = docs["clean"], docs["mtu"]
    assert clean["schema"] == "fabline.report/3" and clean["run"]["passes"] == "subjects"
    assert all(r["status"] != "pass" for r in clean["results"])
    assert (
        sum(n for by in clean["passes"].values() for n in by.values())
        == clean["summary"]["by_status"]["pass"]
    )
    assert mtu["passes"]["host-mtu"]["gpu-002"] == clean["passes"]["host-mtu"]["gpu-002"] - 1
    for ref, doc in (("last~1", clean), ("last", mtu)):
        shown = fabline("history", "show", ref, "-f", "json", "--passes", "subjects", cwd=tmp_path)
        assert shown.returncode == 0, shown.stderr
        back = json.loads(shown.stdout)
        assert back["passes"] == doc["passes"] and back["pass_subjects"] == doc["pass_subjects"]
        assert back["results"] == doc["results"] and back["summary"] == doc["summary"]
    audit = fabline("history", "show", "last", "-f", "json", "--passes", "results", cwd=tmp_path)
    every = json.loads(audit.stdout)["results"]
    assert sum(r.get("count", 1) for r in every) == mtu["summary"]["total"]  # a block row stands for `count`
    assert [r for r in every if r["status"] != "pass"] == mtu["results"]
    assert "gpu-002::host-mtu::eth0" in {r["id"] for r in every if r["status"] == "pass"}
    proc = fabline("diff", "last~1", "last", "-f", "json", cwd=tmp_path)
    assert proc.returncode == 4, proc.stderr
    diff = json.loads(proc.stdout)
    assert diff["passes_compared"] is True
    totals = diff["passes"]["by_check"]
    assert totals["host-mtu"] == {
        "before": sum(clean["passes"]["host-mtu"].values()),
        "after": sum(mtu["passes"]["host-mtu"].values()),
    }
    # the MTU fault turns one host-mtu pass into a failure (link-mtu judges the link, not the host port)
    assert diff["passes"]["changed"] == [{"check": "host-mtu", "device": "gpu-002", "before": 4, "after": 3}]
    assert diff["passes"]["changed_total"] == 1
    md = fabline("diff", "last~1", "last", "-f", "md", cwd=tmp_path)
    assert "## Passes changed" in md.stdout and "| host-mtu |" in md.stdout


def test_diff_two_snapshots_with_inventory(tmp_path: Path, nights: dict[str, Path]) -> None:
    proc = fabline("diff", nights["mtu"], nights["worse"], "-i", INV, "-b", BASE, "-f", "json",
                   "--counter-rows", tmp_path / "rows" / "counters.jsonl", cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 4, proc.stderr
    doc = json.loads(proc.stdout)
    assert [(c["device"], c["path"], c["before"], c["after"]) for c in doc["changes"]] == [
        ("spine-02", "qos.pfc_watchdog.enabled", True, False)
    ]
    # the CRC burst is the one counter that moved, and past crc-errors-delta's limit: a finding
    (crc,) = doc["counters"]["findings"]
    assert (crc["device"], crc["subject"], crc["counter"], crc["delta"], crc["per_second"], crc["reset"]) == (
        "leaf-r0-a", "Ethernet0", "crc_errors", 120, 2.0, False,
    )  # fmt: skip
    assert (crc["check"], crc["limit"]) == ("crc-errors-delta", {"max_delta": 0})
    (row,) = [json.loads(line) for line in (tmp_path / "rows" / "counters.jsonl").read_text().splitlines()]
    assert {k: v for k, v in crc.items() if k in row} == row
    new = {(r["check"], r["device"]) for r in doc["new_failures"]}
    assert ("switch-pfc-watchdog", "spine-02") in new
    assert ("host-mtu", "gpu-002") in {(r["check"], r["device"]) for r in doc["persisting"]}
    assert doc["resolved"] == [] and doc["new_errors"] == []
    # problems: the watchdog and the CRC burst are new, the host MTU one persists (same id)
    assert doc["problems_compared"] is True
    problems = doc["problems"]
    assert [p["family"] for p in problems["new"]] == ["pfc-watchdog", "signal"]
    assert [p["family"] for p in problems["persisting"]] == ["mtu"]
    assert problems["resolved"] == []
    back = fabline("diff", nights["worse"], nights["mtu"], "-i", INV, "-b", BASE, "-f", "json", cwd=tmp_path)
    assert back.returncode == 0, back.stderr
    back_doc = json.loads(back.stdout)
    assert ("switch-pfc-watchdog", "spine-02") in {(r["check"], r["device"]) for r in back_doc["resolved"]}
    assert sorted(p["id"] for p in back_doc["problems"]["resolved"]) == sorted(
        p["id"] for p in problems["new"]
    )
    assert [p["id"] for p in back_doc["problems"]["persisting"]] == [p["id"] for p in problems["persisting"]]
    md = fabline("diff", nights["mtu"], nights["worse"], "-i", INV, "-b", BASE, "-f", "md", cwd=tmp_path)
    assert "## New problems (2)" in md.stdout and "## Persisting problems (1)" in md.stdout
    assert "2 new problems, 1 persisting, 0 resolved" in md.stdout


def test_diff_without_inventory_compares_states_only(tmp_path: Path, nights: dict[str, Path]) -> None:
    proc = fabline(
        "diff", nights["clean"], nights["mtu"], "-f", "md", "--out", tmp_path / "d.md", cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    text = (tmp_path / "d.md").read_text()
    assert "`interfaces.eth1.mtu`" in text and "9000 | 1500" in text
    assert "results not compared" in text


def test_diff_run_ids_and_a_device_that_stopped_answering(tmp_path: Path, nights: dict[str, Path]) -> None:
    down = tmp_path / "down"
    _snap(down, [], "2026-11-29T02:00:00Z")
    state = json.loads((down / "state" / "leaf-r1-a.json").read_text())
    state.update(status="unreachable", interfaces={})
    (down / "state" / "leaf-r1-a.json").write_text(json.dumps(state))
    for snap in (nights["clean"], down):
        fabline(
            "check", "-i", INV, "-b", BASE, "--snapshot", snap, "-q", "--history", "h.sqlite", cwd=tmp_path
        )
    proc = fabline("diff", "last~1", "last", "--db", "h.sqlite", "-f", "json", cwd=tmp_path)
    assert proc.returncode == 4, proc.stderr
    doc = json.loads(proc.stdout)
    assert {r["device"] for r in doc["new_errors"]} == {"leaf-r1-a"}
    # one new problem (recorded in the history with the run): the leaf could not be read
    (new,) = doc["problems"]["new"]
    assert new["family"] == "unreadable" and new["cause"].startswith(
        "leaf-r1-a could not be read (unreachable)"
    )
    assert ("leaf-r1-a", "status", "ok", "unreachable") in [
        (c["device"], c["path"], c["before"], c["after"]) for c in doc["changes"]
    ]
    assert doc["before"]["run_id"] and doc["after"]["run_id"]


def test_drift_against_last_then_against_the_pinned_golden(tmp_path: Path, nights: dict[str, Path]) -> None:
    first = fabline("drift", "-i", INV, "-b", BASE, "--snapshot", nights["clean"], "-q", cwd=tmp_path)
    assert first.returncode == 0, first.stderr  # nothing to compare with; a clean check
    assert fabline("history", "pin", "last", cwd=tmp_path).returncode == 0
    out = tmp_path / "night2"
    second = fabline("drift", "-i", INV, "-b", BASE, "--snapshot", nights["mtu"], "--out", out, cwd=tmp_path)
    assert second.returncode == 4, second.stderr
    assert "1 new failures" in second.stdout
    assert "1 new problems, 0 persisting, 0 resolved" in " ".join(second.stdout.split())
    for name in ("report.json", "report.md", "report.html", "report.prom", "diff.json", "diff.md"):
        assert (out / name).is_file(), name
    diff = json.loads((out / "diff.json").read_text())
    runs = json.loads(fabline("history", "--json", cwd=tmp_path).stdout)
    assert diff["before"]["run_id"] == runs[0]["run_id"] and runs[0]["pins"] == ["golden"]
    assert [r["check"] for r in diff["new_failures"]] == ["host-mtu"]
    # Night 3 repeats night 2's state: against the golden (clean) run the failure is still new...
    third = fabline("drift", "-i", INV, "-b", BASE, "--snapshot", nights["mtu"], "-q", "-o", tmp_path / "n3",
                    "-f", "json", cwd=tmp_path)  # fmt: skip
    assert third.returncode == 4
    # ...and against the last run it is persisting, so nothing new.
    fourth = fabline("drift", "-i", INV, "-b", BASE, "--snapshot", nights["mtu"], "--against", "last", "-q",
                     "-o", tmp_path / "n4", "-f", "json", "--no-record", cwd=tmp_path)  # fmt: skip
    assert fourth.returncode == 0, fourth.stderr
    n4 = json.loads((tmp_path / "n4" / "diff.json").read_text())
    assert n4["persisting"]
    # the same cause keeps its problem id from night to night
    (same,) = n4["problems"]["persisting"]
    assert same["id"] == diff["problems"]["new"][0]["id"]
    assert n4["problems"]["new"] == n4["problems"]["resolved"] == []
    assert len(json.loads(fabline("history", "--json", cwd=tmp_path).stdout)) == 3  # --no-record kept it out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["diff", "missing-before", "missing-after"], "BEFORE: no snapshot folder 'missing-before'"),
        (["diff", "{clean}", "nowhere"], "AFTER: no snapshot folder 'nowhere'"),
        (["diff", "{clean}", "{file}"], "AFTER: not a snapshot folder"),
        (["diff", "{clean}", "{empty}"], "AFTER: snapshot has no state/ folder"),
        (["history"], "no run history here"),
        (["history", "show", "last"], "no run history here"),
        (["history", "--since", "yesterday", "--db", "{db}"], "--since 'yesterday'"),
        (["history", "show", "nope", "--db", "{db}"], "no run 'nope'"),
        (["diff", "{clean}", "nope", "--db", "{db}"], "no run 'nope'"),
        (["diff", "{clean}", "last", "--db", "{db}"], "needs -i INVENTORY"),
        (["drift", "-i", str(INV), "--snapshot", "{clean}", "--against", "x"], "--against x: no run history"),
        (
            ["drift", "-i", str(INV), "--snapshot", "{clean}", "--db", "{db}", "--against", "nope"],
            "no run 'nope'",
        ),
    ],
)
def test_bad_inputs_are_one_line_errors(
    tmp_path: Path, nights: dict[str, Path], args: list[str], message: str
) -> None:
    db = tmp_path / "one.sqlite"
    fabline(
        "check", "-i", INV, "-b", BASE, "--snapshot", nights["clean"], "-q", "--history", db, cwd=tmp_path
    )
    (tmp_path / "file.txt").write_text("x")
    (tmp_path / "empty").mkdir()
    fill = {"clean": nights["clean"], "file": tmp_path / "file.txt", "empty": tmp_path / "empty", "db": db}
    proc = fabline(*(a.format(**fill) for a in args), cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "Traceback" not in proc.stderr


def test_a_run_whose_snapshot_is_gone(tmp_path: Path) -> None:
    snap = _snap(tmp_path / "gone", [], "2026-11-27T02:00:00Z")
    fabline("check", "-i", INV, "-b", BASE, "--snapshot", snap, "-q", "--history", cwd=tmp_path)
    for f in (snap / "state").iterdir():
        f.unlink()
    (snap / "state").rmdir()
    proc = fabline("diff", "last", snap, cwd=tmp_path)
    assert proc.returncode == 2
    assert "snapshot is gone" in proc.stderr or "no state/ folder" in proc.stderr


def test_runs_with_mismatched_inventories(tmp_path: Path) -> None:
    """gpu-002 leaves the inventory and the snapshot; spine-02 exists only in the second snapshot's states."""
    import shutil

    inv2 = tmp_path / "inv2"
    shutil.copytree(REPO / "inventory", inv2)
    text = (inv2 / "lab.yml").read_text()
    start = text.index("        gpu-002:")
    end = text.find("\n        gpu-", start + 10)
    (inv2 / "lab.yml").write_text(text[:start] + (text[end + 1 :] if end != -1 else ""))
    mtu = synthetic.Fault("gpu-002", "mtu", 1500, "eth1")
    first = _snap(tmp_path / "n1", [mtu], "2026-11-27T02:00:00Z")
    second = _snap(tmp_path / "n2", [], "2026-11-28T02:00:00Z")
    (second / "state" / "gpu-002.json").unlink()
    (first / "state" / "spine-02.json").unlink()
    fabline("check", "-i", INV, "-b", BASE, "--snapshot", first, "-q", "--history", cwd=tmp_path)
    fabline(
        "check", "-i", inv2 / "lab.yml", "-b", BASE, "--snapshot", second, "-q", "--history", cwd=tmp_path
    )
    proc = fabline("diff", "last~1", "last", "-f", "json", cwd=tmp_path)
    assert proc.returncode in (0, 4), proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["only_before"] == ["gpu-002"]
    assert doc["only_after"] == ["spine-02"]
    assert any("different inventories" in w for w in doc["warnings"])
    # gpu-002's MTU failure is not "resolved": the device is simply not in the later run.
    assert all(r["device"] != "gpu-002" for r in doc["resolved"])
    # spine-02 had no state in the first run (errors there), so its errors are not new.
    assert all(r["device"] != "spine-02" for r in doc["new_errors"])
    assert doc["devices_compared"] == 6


def test_run_id_diff_judges_counters_by_the_baseline_recorded_with_the_run(
    tmp_path: Path, nights: dict[str, Path]
) -> None:
    """The CRC burst (120 errors) is past the default limit (0) but within the site's (500), which
    the runs were checked with: ``diff last~1 last`` judges by the recorded baseline, ``-b`` overrides."""
    site = tmp_path / "site.yml"
    site.write_text("rules:\n  - {id: crc-errors-delta, params: {max_delta: 500}}\n")
    for snap in (nights["mtu"], nights["worse"]):
        proc = fabline("check", "-i", INV, "-b", BASE, "-b", "site.yml", "--snapshot", snap, "-q",
                       "--history", "h.sqlite", cwd=tmp_path)  # fmt: skip
        assert proc.returncode in (0, 4), proc.stderr
    elsewhere = tmp_path / "elsewhere"  # the recorded paths hold from another folder
    elsewhere.mkdir()
    db = tmp_path / "h.sqlite"

    def crc(*extra: Any) -> tuple[dict[str, Any], str]:
        proc = fabline("diff", "last~1", "last", "--db", db, "-f", "json", *extra, cwd=elsewhere)
        assert proc.returncode == 4, proc.stderr  # new failures either way (the watchdog)
        doc = json.loads(proc.stdout)
        (stats,) = [s for s in doc["counters"]["by_counter"] if s["counter"] == "crc_errors"]
        return {"limit": stats["limit"]["max_delta"], "over": stats["over_limit"],
                "findings": len(doc["counters"]["findings"]), "warnings": doc["warnings"]}, doc["counters"]["limits_from"]  # fmt: skip

    got, source = crc()
    assert got == {"limit": 500, "over": 0, "findings": 0, "warnings": []}
    runs = json.loads(fabline("history", "--json", "--db", db, cwd=tmp_path).stdout)
    # The AFTER side, ``last``: the list is oldest first. Not the largest id: two runs recorded
    # within one second share the time part of their ids and differ by a random suffix.
    run_id = runs[-1]["run_id"]
    assert source == f"the baseline recorded with run {run_id} ({BASE}, {site})"
    got, source = crc("-b", BASE)  # -b overrides
    assert (got["limit"], got["over"], got["findings"], source) == (0, 1, 1, f"-b {BASE}")
    console = fabline("diff", "last~1", "last", "--db", db, cwd=elsewhere)
    assert f"counter limits from the baseline recorded with run {run_id}" in console.stdout
    site.write_text("rules:\n  - {id: crc-errors-delta, params: {max_delta: 50}}\n")  # changed since
    got, _ = crc()
    assert (got["limit"], got["over"]) == (50, 1) and "changed since the run was recorded" in got["warnings"][
        0
    ]
    site.unlink()  # gone: the default baseline, said so
    got, source = crc()
    assert (got["limit"], got["over"]) == (0, 1) and source.startswith("the default baseline (")
    assert f"baseline {site} is gone" in got["warnings"][0]


def test_diff_checks_both_snapshots_at_once_with_the_serial_results(
    nights: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``diff -i`` on a large fabric checks BEFORE in a forked process while it checks AFTER: the
    sides come back as two checks in a row make them; a failed worker check is redone in-line."""
    from fabline import perf
    from fabline.cli import history as cli_history
    from fabline.cli.common import checks_dir_or_default
    from fabline.history.diff import Side

    def sides(mode: str) -> tuple[dict[str, Any], dict[str, Any]]:
        before, after = Side("b", nights["mtu"]), Side("a", nights["worse"])
        args = ((INV,), [BASE], checks_dir_or_default(None), "minor")
        if mode == "serial":
            cli_history._check_side(before, *args)
            cli_history._check_side(after, *args, before.snapshot)
        else:
            before = cli_history.check_both_sides(before, after, *args)
        return tuple(  # type: ignore[return-value]
            {
                "problems": [r.to_dict() for r in s.problems or []],
                "devices": sorted(s.devices or ()),
                "groups": s.problem_groups,
                "passes": s.passes,
            }
            for s in (before, after)
        )

    serial = sides("serial")
    assert serial[1]["problems"] and serial[0]["problems"] != serial[1]["problems"]
    calls: list[int] = []
    real = perf.worker_count
    monkeypatch.setattr(perf, "worker_count", lambda n, jobs=None, **kw: calls.append(n) or real(n, 2, **kw))
    assert sides("overlapped") == serial
    assert calls  # the forked path was taken
    monkeypatch.setattr(cli_history, "_checked_side", _worker_check_failed)
    assert sides("overlapped") == serial


def _worker_check_failed(*args: Any) -> None:
    """What the forked check of BEFORE returns when it raised."""


def test_a_large_runs_pass_counts_read_in_a_forked_process_diff_the_same(
    tmp_path: Path, nights: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a run of PARALLEL_MIN_DEVICES devices or more, ``fabline diff`` reads the two runs' pass
    counts in a forked process while the snapshots are diffed (issue 14: ~1.5 s a side on 100k
    GPUs, before the diff's workers started); the output is the one the in-process read gives."""
    from click.testing import CliRunner

    from fabline import perf
    from fabline.cli import main as cli

    for name in ("clean", "mtu"):
        proc = fabline("check", "-i", INV, "-b", BASE, "--snapshot", nights[name], "-q", "--history",
                       "h.sqlite", cwd=tmp_path)  # fmt: skip
        assert proc.returncode in (0, 4), proc.stderr
    monkeypatch.chdir(tmp_path)
    outs = {}
    forks: list[int] = []
    real_fork_call = perf.fork_call
    monkeypatch.setattr(perf, "fork_call", lambda f: forks.append(1) or real_fork_call(f))
    for label, threshold in (("in-process", 10**9), ("forked", 1)):
        monkeypatch.setattr(perf, "PARALLEL_MIN_DEVICES", threshold)
        got = CliRunner().invoke(cli, ["diff", "last~1", "last", "--db", "h.sqlite", "-f", "json"])
        assert got.exit_code == 4, got.output
        outs[label] = json.loads(got.stdout)
        assert len(forks) == (0 if label == "in-process" else 2)  # one process per run's counts
    assert outs["forked"]["passes_compared"] is True
    assert outs["forked"]["passes"]["changed"] == [
        {"check": "host-mtu", "device": "gpu-002", "before": 4, "after": 3}
    ]
    assert outs["forked"] == outs["in-process"]
