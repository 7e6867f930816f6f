"""The JSON and JUnit writers stream passes from the store's runs; the text is what one result at a
time gives (the plain path), for awkward names, problems inside runs, waivers and odd values."""

from __future__ import annotations

import datetime as dt
import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from fabline.engine import RunOutcome
from fabline.errors import ConfigError, FablineError
from fabline.reports import Report, jsonreport, junit, write_reports
from fabline.results import (
    PassBlock,
    Result,
    ResultStore,
    Severity,
    SkipBlock,
    Status,
    block_count,
    compact_count,
    compact_subjects,
    expand_subjects,
)
from tests.conftest import REPO_ROOT

INVENTORY = REPO_ROOT / "inventory" / "lab.yml"
EXAMPLE = REPO_ROOT / "examples" / "lab-snapshot"

AWKWARD = [
    "Ethernet0",
    None,
    "",
    'quote"and&amp<tag>',
    "tab\there\nnewline\rcr",
    "ctrl\x01\x1f\x7f",
    "ünïcödé-端口",
    "back\\slash/",
    jsonreport._ID_MARK,  # a subject that looks like the template's marker takes the plain path
]


def _store() -> ResultStore:
    store = ResultStore()
    expected = {"mtu": {"eq": 9100}, "when": dt.date(2030, 1, 2), "list": [1, {"a": None}]}
    fail = Result(
        "mtu", "leaf<1>", AWKWARD[3], Status.FAIL, Severity.MAJOR, {"mtu": 1}, {"mtu": 2}, "mtu 2 != 1"
    )
    waived = Result("mtu", "leaf<1>", AWKWARD[5], Status.WAIVED, Severity.MAJOR, None, None, "x [waived: y]")
    waived.waiver = "ticket & reason"
    store.add_block("mtu", "leaf<1>", Severity.MAJOR, expected, tuple(AWKWARD), {3: fail, 5: waived})
    store.add_block("device-rule", 'sp"ine', Severity.CRITICAL, None, (None,), None)
    store.append(Result("py", "host1", "eth0", Status.PASS, Severity.MINOR, None, None, ""))
    err = Result("py", "host1", None, Status.ERROR, Severity.MINOR, None, None, "check raised KeyError: 'x'")
    store.append(err)
    store.extend([PassBlock("py", "host2", Severity.MINOR, ["eth0", "eth1"], {"ok": True})])
    store.add_block("mtu", "leaf2", Severity.MAJOR, expected, (), None)  # no subjects: no results
    store.add_block("empty-exp", "leaf2", Severity.INFO, {}, ("a", "b"), {1: fail})
    store.add_block("mark", jsonreport._ID_MARK, Severity.INFO, None, ("a",), None)
    return store


def _plain(store: ResultStore) -> ResultStore:
    """The same results, one Result object each (the writers' plain path)."""
    plain = ResultStore()
    for r in store:
        plain.append(r)
    return plain


def _report(store: ResultStore) -> Report:
    outcome = RunOutcome(store, [{"name": "leaf<1>", "status": "ok"}], ["a warning"], 1.7e9, 1.7e9 + 1.5)
    return Report(outcome, "inv.yml", ["b.yml"], "snap", Severity.MINOR, 4, None, "0.1.0")


def test_runs_expand_to_the_iteration_order() -> None:
    store = _store()
    expanded = []
    for run in store.runs():
        if isinstance(run, Result):
            expanded.append((run.check, run.device, run.subject, run.status, run.expected, run.message))
        else:
            check, device, _sev, expected, subjects = run
            expanded += [(check, device, s, Status.PASS, expected, "") for s in subjects]
    assert expanded == [(r.check, r.device, r.subject, r.status, r.expected, r.message) for r in store]


@pytest.mark.parametrize("passes", jsonreport.PASS_MODES)
def test_json_is_the_document_dumped_whole(passes: str) -> None:
    report = _report(_store())
    report.passes = passes
    want = orjson.dumps(jsonreport.document(report), option=orjson.OPT_INDENT_2, default=str) + b"\n"
    assert jsonreport.render_bytes(report) == want
    plain = _report(_plain(_store()))
    plain.passes = passes
    assert jsonreport.render_bytes(plain) == want
    assert jsonreport.render(report) == want.decode("utf-8")
    doc = json.loads(want)
    assert doc["schema"] == "fabline.report/3" and doc["run"]["passes"] == passes
    non_pass = [r for r in report.results if r.status is not Status.PASS]
    if passes == "results":  # the audit form: every result, as report/1 had them
        assert [r["id"] for r in doc["results"]] == [r.id for r in report.results]
    else:
        assert [r["id"] for r in doc["results"]] == [r.id for r in non_pass]
    counted: dict[str, dict[str, int]] = {}
    for r in report.results:
        if r.status is Status.PASS:
            counted.setdefault(r.check, {}).setdefault(r.device, 0)
            counted[r.check][r.device] += 1
    assert doc["passes"] == counted
    assert sum(n for d in doc["passes"].values() for n in d.values()) == doc["summary"]["by_status"]["pass"]
    if passes == "subjects":
        from fabline.results import expand_subjects

        got = {c: {d: expand_subjects(v) for d, v in by.items()} for c, by in doc["pass_subjects"].items()}
        want_subjects: dict[str, dict[str, list[str | None]]] = {}
        for r in report.results:
            if r.status is Status.PASS:
                want_subjects.setdefault(r.check, {}).setdefault(r.device, []).append(r.subject)
        assert got == want_subjects
    else:
        assert "pass_subjects" not in doc


def test_json_audit_form_is_streamed(tmp_path: Path) -> None:
    """``passes=results`` writes the file in parts: the writer never holds the whole text."""
    store = ResultStore()
    subjects = tuple(f"Ethernet{n}" for n in range(2048))
    for d in range(200):
        store.add_block("mtu", f"leaf{d}", Severity.MAJOR, {"mtu": {"min": 9100}}, subjects, None)
    report = _report(store)
    report.passes = "results"
    writes: list[int] = []

    class Sink:
        def write(self, data: bytes) -> int:
            writes.append(len(data))
            return len(data)

    jsonreport.write(report, None, Sink())  # type: ignore[arg-type]
    assert sum(writes) > 50 * jsonreport._CHUNK  # ~400k rows
    assert max(writes) < 2 * jsonreport._CHUNK


def test_json_of_an_empty_run() -> None:
    report = _report(ResultStore())
    want = orjson.dumps(jsonreport.document(report), option=orjson.OPT_INDENT_2, default=str) + b"\n"
    assert jsonreport.render_bytes(report) == want


def test_junit_streamed_equals_one_result_at_a_time() -> None:
    text = junit.render(_report(_store()))
    assert text == junit.render(_report(_plain(_store())))
    root = ET.fromstring(text.encode("utf-8"))  # what XML 1.0 cannot hold was replaced
    names = [(c.get("classname"), c.get("name")) for c in root.iter("testcase")]
    assert len(names) == len(set(names))
    # one case per check and device with findings (or waived), one per role for the rest
    assert ("fabline.mtu", "leaf<1>") in names and ("fabline.py", "host1") in names
    assert ("fabline.py", "other devices without findings") in names
    mtu = next(c for c in root.iter("testcase") if c.get("name") == "leaf<1>")
    failure = mtu.find("failure")
    assert failure is not None and failure.get("type") == "major"
    assert 'quote"and&amp<tag> [fail]: mtu 2 != 1' in (failure.text or "")


def _large_report(devices: int, failing: int) -> Report:
    """``devices`` leaves x 64 ports x 6 checks, all passing but ``host-mtu``'s port 3 on the first
    ``failing`` leaves and an unreachable spine."""
    store = ResultStore()
    ports = tuple(f"Ethernet{n}" for n in range(0, 256, 4))
    rows = []
    for d in range(devices):
        name = f"leaf-{d:05d}"
        rows.append({"name": name, "platform": "sonic", "role": "leaf", "status": "ok"})
        for check in ("switch-mtu", "switch-pfc", "switch-ecn", "link-mtu", "link-lldp"):
            store.add_block(check, name, Severity.MAJOR, {"x": {"eq": 1}}, ports, None)
        problems = {}
        if d < failing:
            problems[3] = Result("host-mtu", name, ports[3], Status.FAIL, Severity.CRITICAL, {"mtu": {"eq": 9100}},
                                 {"mtu": 1500}, "mtu is 1500, expected 9100")  # fmt: skip
        store.add_block("host-mtu", name, Severity.CRITICAL, None, ports, problems)
    rows.append({"name": "spine-1", "platform": "eos", "role": "spine", "status": "unreachable"})
    store.append(
        Result("device-collection", "spine-1", None, Status.ERROR, Severity.CRITICAL, None, None, "timeout")
    )
    outcome = RunOutcome(store, rows, [], 1.7e9, 1.7e9 + 9.0)
    return Report(outcome, "inv.yml", ["b.yml"], "snap", Severity.MINOR, 4, None, "0.1.0")


def test_junit_of_a_large_run_loads_in_an_independent_reader(tmp_path: Path) -> None:
    """A 3,000-device run (1.15 million results) is a few thousand test cases that junitparser
    (what CI plugins are built on) reads: unique ids, every failing device named, bounded size."""
    junitparser = pytest.importorskip("junitparser")
    report = _large_report(3000, failing=1200)
    assert len(report.results) == 3000 * 6 * 64 + 1
    path = tmp_path / "report.junit.xml"
    write_reports(report, ["junit"], tmp_path)
    assert path.stat().st_size < 1_000_000
    xml = junitparser.JUnitXml.fromfile(str(path))
    suites = {s.name: s for s in xml}
    assert list(suites) == ["switch-mtu", "switch-pfc", "switch-ecn", "link-mtu", "link-lldp", "host-mtu",
                            "device-collection"]  # fmt: skip
    cases = [(s.name, c.classname, c.name) for s in xml for c in s]
    assert len(cases) == len(set(cases)) == 5 + junit.MAX_DEVICE_CASES + 1 + 1
    assert xml.tests == len(cases) and xml.failures == junit.MAX_DEVICE_CASES + 1 and xml.errors == 1
    host_mtu = suites["host-mtu"]
    assert (host_mtu.tests, host_mtu.failures) == (junit.MAX_DEVICE_CASES + 1, junit.MAX_DEVICE_CASES + 1)
    first = next(c for c in host_mtu if c.name == "leaf-00000")
    (failure,) = first.result
    assert isinstance(failure, junitparser.Failure) and failure.type == "critical"
    assert failure.message.startswith("1 failed: Ethernet12: mtu is 1500")
    assert "Ethernet12 [fail]: mtu is 1500, expected 9100" in failure.text
    overflow = next(c for c in host_mtu if c.name == "leaf devices without findings")
    (failure,) = overflow.result
    assert "200 more devices with findings" in failure.text and "leaf-01000" in failure.text
    assert "devices: 1800, passes: 115200" in overflow.system_out
    ids = [c._elem.get("id") for s in xml for c in s]
    assert len(set(ids)) == len(ids)
    (spine,) = list(suites["device-collection"])
    assert spine.name == "spine-1" and isinstance(spine.result[0], junitparser.Error)


def test_junit_failure_text_is_capped() -> None:
    store = ResultStore()
    for n in range(500):
        store.append(
            Result("host-mtu", "gpu-1", f"eth{n}", Status.FAIL, Severity.MAJOR, None, None, "m" * 2000)
        )
    text = junit.render(_report(store))
    root = ET.fromstring(text.encode("utf-8"))
    (failure,) = root.iter("failure")
    lines = (failure.text or "").splitlines()
    assert len(lines) == junit.MAX_LINES + 1 and lines[-1] == "and 480 more (see report.json)"
    assert all(len(line) <= junit.MAX_LINE_CHARS for line in lines)
    assert failure.get("message", "").startswith("500 failed: eth0, eth1, eth2, eth3, eth4 and 495 more: mmm")


@pytest.mark.parametrize("formats", [["json", "junit", "md", "html", "prom"], ["md"], []])
def test_write_reports_writes_what_the_writers_render(tmp_path: Path, formats: list[str]) -> None:
    report = _report(_store())
    written = write_reports(report, formats, tmp_path)
    assert [p.name for p in written] == [f"report.{ {'junit': 'junit.xml'}.get(f, f) }" for f in formats]
    if "json" in formats:
        assert (tmp_path / "report.json").read_bytes() == jsonreport.render_bytes(report)
    if "junit" in formats:
        assert (tmp_path / "report.junit.xml").read_text("utf-8") == junit.render(report)
    assert not list(tmp_path.glob(".*.tmp"))


# -- several processes -----------------------------------------------------------------------

needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX only")
ALL = ["json", "junit", "md", "html", "prom"]


@needs_fork
def test_forked_writers_write_the_same_files(tmp_path: Path) -> None:
    report = _report(_store())
    serial = write_reports(report, ALL, tmp_path / "serial", jobs=1)
    forked = write_reports(report, ALL, tmp_path / "forked", jobs=2)
    assert [p.name for p in forked] == [p.name for p in serial]
    for a, b in zip(serial, forked, strict=True):
        assert a.read_bytes() == b.read_bytes(), a.name
    assert not list((tmp_path / "forked").glob(".*.tmp"))


class _Unpicklable(FablineError):
    def __init__(self, a: str, b: str) -> None:
        super().__init__(f"{a} and {b}")


@needs_fork
@pytest.mark.parametrize(
    "exc", [ConfigError("bad value", file="x.yml", key="k"), _Unpicklable("one", "two"), ValueError("odd")]
)
def test_an_error_in_a_writer_process_is_raised_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exc: Exception
) -> None:
    def broken(_report: Report, _context: object = None) -> str:
        raise exc

    monkeypatch.setattr(junit, "render", broken)
    with pytest.raises(Exception) as info:
        write_reports(_report(_store()), ["json", "junit", "md"], tmp_path, jobs=2)
    assert type(info.value).__name__ == type(exc).__name__
    assert str(info.value) == str(exc)
    assert isinstance(info.value, FablineError) == isinstance(exc, FablineError)
    assert any("junit report" in note for note in getattr(info.value, "__notes__", []))
    assert (tmp_path / "report.json").is_file()  # the other formats are still written


@needs_fork
def test_cli_error_from_a_writer_process_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Same line and exit code whether the failing report is written in-process or in a child."""
    from fabline import perf
    from fabline.cli import main

    args = ["check", "-i", INVENTORY, "--snapshot", EXAMPLE, "-q", "-f", "json,junit"]
    outputs = []
    for threshold in (10**9, 0):  # in-process, then forked
        monkeypatch.setattr(perf, "PARALLEL_MIN_RESULTS", threshold)
        out = tmp_path / str(threshold)
        (out / "report.junit.xml" / "in-the-way").mkdir(parents=True)  # the rename fails
        result = CliRunner().invoke(main, [*map(str, args), "-o", str(out)])
        assert result.exit_code == 2, result.output  # an unusable output path: the user's to fix
        lines = [ln for ln in result.output.splitlines() if ln.strip()]
        assert len(lines) == 1 and lines[0].startswith("fabline: error: ") and "Is a directory" in lines[0], (
            lines
        )
        outputs.append(lines[0].replace(str(out), "OUT"))
    assert outputs[0] == outputs[1]


def test_junit_is_well_formed_xml_even_with_control_characters() -> None:
    import xml.etree.ElementTree as ET

    from fabline.reports import junit

    store = _store()
    store.append(
        Result("py", "ctrl\x01dev", AWKWARD[5], Status.FAIL, Severity.MINOR, None, None, "bad\x1b[0m")
    )
    text = junit.render(_report(store))
    root = ET.fromstring(text)  # a CI server must be able to read it: no raw \x01 or \x1f
    assert "ctrl\ufffddev" in [c.get("name") for c in root.iter("testcase")]
    texts = [f.text or "" for f in root.iter("failure")]
    assert any("ctrl\ufffd\ufffd\x7f" in t for t in texts), texts  # a failing subject's name


# -- compact subjects ------------------------------------------------------------------------

_NAMES = st.one_of(
    st.none(),
    st.builds(lambda p, n, z: f"{p}{'0' if z else ''}{n}", st.sampled_from(["Ethernet", "eth", "swp1s", "", "Ethernet1/"]),
              st.integers(0, 600), st.booleans()),
    st.text(max_size=6),
)  # fmt: skip


@given(st.lists(_NAMES, max_size=80))
@settings(max_examples=300, deadline=None)
def test_compact_subjects_round_trip(subjects: list[str | None]) -> None:
    compact = compact_subjects(subjects)
    assert expand_subjects(compact) == subjects
    assert compact_count(compact) == len(subjects)
    assert len(compact) <= len(subjects)


def test_compact_subjects_fold_a_switchs_ports_into_one_run() -> None:
    ports = [f"Ethernet{n}" for n in range(0, 512, 4)]
    assert compact_subjects(ports) == [["Ethernet", 0, 508, 4]]
    assert compact_subjects(["eth0", "eth1", "eth3"]) == ["eth0", "eth1", "eth3"]  # two in a row stay names
    with pytest.raises(ValueError, match="not a subject"):
        expand_subjects([["Ethernet", 8, 0, 4]])


# -- skip blocks (issue 14) ----------------------------------------------------------------------


def _skip(
    device: str,
    subject: str | None,
    message: str = "fec_pre_ber not present",
    status: Status = Status.SKIPPED,
    check: str = "fec-pre-ber",
) -> Result:
    return Result(check, device, subject, status, Severity.MINOR, None, None, message)


def test_the_store_folds_what_says_the_same_thing_and_nothing_else() -> None:
    """Skipped/error results of one check and device with one message become one SkipBlock; a
    failure, another message, another device, a device-level result or a pass in between do not
    join; iterating the store gives every result as if nothing had been folded."""
    plain = [
        *(_skip("leaf1", f"Ethernet{n}") for n in range(0, 16, 4)),
        _skip("leaf1", "Ethernet16", "other reason"),
        *(_skip("leaf2", f"Ethernet{n}", "not collected", Status.ERROR) for n in range(3)),
        Result("fec-pre-ber", "leaf2", "Ethernet3", Status.FAIL, Severity.MINOR, None, 1e-3, "ber 1e-3"),
        _skip("leaf2", "Ethernet4", "not collected", Status.ERROR),
        _skip("leaf3", None),
        _skip("leaf3", None),
    ]
    store = ResultStore()
    store.extend(plain)
    store.add_block(
        "optics-alarms", "leaf1", Severity.MAJOR, None, ("swp1", "swp2", "swp3", "swp4"),
        {0: _skip("leaf1", "swp1", "flags", check="optics-alarms"), 2: _skip("leaf1", "swp3", "flags", check="optics-alarms")},
    )  # fmt: skip
    blocks = [r for r in store.problems if type(r) is SkipBlock]
    assert [(b.device, b.status, list(b.subjects)) for b in blocks] == [
        ("leaf1", Status.SKIPPED, ["Ethernet0", "Ethernet4", "Ethernet8", "Ethernet12"]),
        ("leaf2", Status.ERROR, ["Ethernet0", "Ethernet1", "Ethernet2"]),
        ("leaf1", Status.SKIPPED, ["swp1", "swp3"]),
    ]
    assert len(store.problems) == 8 and len(store) == len(plain) + 4
    assert sorted((r.id, r.status) for r in store) == sorted(
        [(r.id, r.status) for r in plain]
        + [(f"leaf1::optics-alarms::{s}", Status.PASS) for s in ("swp2", "swp4")]
        + [(f"leaf1::optics-alarms::{s}", Status.SKIPPED) for s in ("swp1", "swp3")]
    )
    summary = store.summary()
    assert summary["by_status"] == {"pass": 2, "fail": 1, "error": 4, "skipped": 9, "waived": 0}
    assert summary["total"] == len(store) == sum(summary["by_status"].values())
    assert blocks[0].id == "leaf1::fec-pre-ber::Ethernet0+3" and blocks[0].subject_text() == (
        "Ethernet0..Ethernet12/4 (4)"
    )
    with pytest.raises(ValueError, match="another number of subjects"):
        store.replace(blocks[0], [_skip("leaf1", "Ethernet0")])
    with pytest.raises(ValueError, match="not fail"):
        SkipBlock("x", "d", Severity.INFO, ["a", "b"], "m", Status.FAIL)


def test_a_yielded_block_is_kept_whole_and_written_as_one_row() -> None:
    store = ResultStore()
    store.extend([SkipBlock("pfc-storm-active", "leaf1", Severity.CRITICAL, [f"Ethernet{n}" for n in range(0, 512, 4)],
                            "not applicable: pfcwd_stormed_queues not present")])  # fmt: skip
    doc = json.loads(jsonreport.render(_report(store)))
    (row,) = doc["results"]
    assert row["subjects"] == [["Ethernet", 0, 508, 4]] and row["count"] == 128 and row["subject"] is None
    assert doc["summary"]["by_status"]["skipped"] == 128 and len(store) == 128


def test_a_block_row_is_its_results_row_with_subjects_and_count_after_subject() -> None:
    """One row writer for a result and a block (duplicates D3): the block's row is the row of the
    result it stands for, ``subject`` null, with ``subjects`` and ``count`` right after ``subject``."""
    block = SkipBlock("link-fec", "leaf1", Severity.MAJOR, ["Ethernet0", "Ethernet4", "Ethernet8"],
                      "fec not collected at the peer", Status.ERROR, {"fec": "rs"}, {"fec": None})  # fmt: skip
    block.waiver = "ticket 42"
    one = next(block.expand())
    one.subject = None
    row, base = block.to_dict(), one.to_dict()
    keys = list(base)
    at = keys.index("subject") + 1
    assert list(row) == [*keys[:at], "subjects", "count", *keys[at:]]
    assert row == {
        **base,
        "id": "leaf1::link-fec::Ethernet0+2",
        "subjects": [["Ethernet", 0, 8, 4]],
        "count": 3,
    }
    assert list(row)[-1] == "waiver"


def _mixed_store() -> ResultStore:
    """_store() plus folded skip blocks, a pass inside a rule block's problems, a waived block and
    devices whose only results are not passes."""
    store = _store()
    ok = Result("mtu", "leaf3", "swp2", Status.PASS, Severity.MAJOR, None, 9100, "")
    store.add_block(
        "mtu", "leaf3", Severity.MAJOR, None, ("swp1", "swp2", "swp3", "swp4"),
        {0: _skip("leaf3", "swp1", check="mtu"), 1: ok, 3: _skip("leaf3", "swp4", check="mtu")},
    )  # fmt: skip
    store.extend(_skip("leaf4", f"Ethernet{n}", "not collected", Status.ERROR) for n in range(5))
    store.add_block("only-problems", "leaf5", Severity.INFO, None, ("a",), {0: _skip("leaf5", "a")})
    waived = SkipBlock("py", "leaf6", Severity.MINOR, ["x", "y"], "m", Status.WAIVED)
    store.append(waived)
    store.append(Result("py", "host1", "eth1", Status.PASS, Severity.MINOR, None, None, ""))
    return store


@pytest.mark.parametrize("make", [_store, _mixed_store, lambda: _plain(_mixed_store()), ResultStore])
def test_tally_and_not_passes_are_what_one_result_at_a_time_gives(make: object) -> None:
    """The one-pass tally (summary and pass counts) and the rows of a report that counts passes
    equal what iterating every result gives (``summarize``, a count per check and device, the
    non-pass runs), orders included."""
    from fabline.results import summarize

    store = make()  # type: ignore[operator]
    summary, passes = store.tally()
    assert json.dumps(summary) == json.dumps(summarize(store))  # same keys in the same order
    assert store.summary() == summary
    counted: dict[str, dict[str, int]] = {}
    for r in store:
        if r.status is Status.PASS:
            counted.setdefault(r.check, {}).setdefault(r.device, 0)
            counted[r.check][r.device] += 1
    assert json.dumps(passes) == json.dumps(counted) and passes == store.passes().counts()
    runs = [r for r in store.runs() if isinstance(r, Result) and r.status is not Status.PASS]
    assert list(store.not_passes()) == runs
    report = _report(store)
    assert (report.summary, report.pass_counts()) == (summary, passes)


def test_block_rows_share_the_compacting_not_the_lists() -> None:
    """Blocks with equal subject lists are compacted once, yet every row gets lists of its own
    (a caller editing one row changes no other), equal to compact_subjects."""
    ports = [f"Ethernet{n}" for n in range(0, 512, 4)] + ["mgmt0", None]
    rows = [
        SkipBlock("pfc-storm-active", f"leaf{i}", Severity.CRITICAL, list(ports), "not present").to_dict()
        for i in range(3)
    ]
    assert all(r["subjects"] == compact_subjects(ports) for r in rows)
    rows[0]["subjects"][0][1] = 99
    rows[0]["subjects"].append("x")
    fresh = SkipBlock("pfc-storm-active", "leaf9", Severity.CRITICAL, ports, "not present").to_dict()
    assert rows[1]["subjects"] == fresh["subjects"] == compact_subjects(ports)


def _suites_by_walking(report: Report, roles: dict[str, str]) -> dict[str, tuple[str, dict, dict, dict]]:
    """JUnit's suites gathered by walking every run (the writer's former way), for comparison."""
    from collections import Counter

    suites: dict[str, tuple[str, dict, dict, dict]] = {}
    for run in report.results.runs():
        check = run.check if isinstance(run, Result) else run[0]
        severity = run.severity if isinstance(run, Result) else run[2]
        suite = suites.setdefault(check, (severity.label, {}, {}, {}))
        _, passes, skipped, by_device = suite
        if not isinstance(run, Result):
            passes.setdefault(report_role(roles, run[1]), Counter())[run[1]] += len(run[4])
        elif run.status is Status.PASS:
            passes.setdefault(report_role(roles, run.device), Counter())[run.device] += 1
        elif run.status is Status.SKIPPED:
            skipped.setdefault(report_role(roles, run.device), Counter())[run.device] += block_count(run)
        else:
            by_device.setdefault(run.device, []).append(run)
    return suites


def report_role(roles: dict[str, str], device: str) -> str:
    return roles.get(device, "other")


def test_junit_suites_from_pass_counts_equal_a_walk_over_every_result() -> None:
    """The JUnit writer takes the passes from the run's pass counts and walks only the other
    results: the same suites, in the order of each check's first result, with its severity."""
    store = ResultStore()
    ports = ("e0", "e1", "e2")
    skip = Result("b", "d1", "e9", Status.SKIPPED, Severity.MINOR, None, None, "n/a")
    store.append(skip)  # check b's first result is a skip
    store.add_block("a", "d1", Severity.MAJOR, None, ports, None)
    fail0 = Result("c", "d2", "e0", Status.FAIL, Severity.CRITICAL, None, 1, "x")
    store.add_block("c", "d2", Severity.MINOR, None, ports, {0: fail0})  # first result a problem
    store.add_block(
        "b", "d2", Severity.MINOR, None, ports, {1: Result("b", "d2", "e1", Status.ERROR, Severity.MINOR)}
    )
    store.add_block("e", "d3", Severity.MAJOR, None, (), None)  # no subjects: no result at all
    store.append(Result("e", "d1", "p", Status.PASS, Severity.INFO))
    store.extend(
        [PassBlock("f", "d3", Severity.MAJOR, ("e0", "e1")), PassBlock("f", "d1", Severity.MAJOR, ["e5"])]
    )
    store.add_block(
        "a", "d3", Severity.MAJOR, None, ports, {2: Result("a", "d3", "e2", Status.SKIPPED, Severity.MAJOR)}
    )
    rows = [{"name": "d1", "role": "leaf"}, {"name": "d2", "role": "host"}]
    report = Report(RunOutcome(store, rows, [], 1.7e9, 1.7e9 + 1.0), "inv", [], "snap", Severity.MINOR, 0)
    roles = {"d1": "leaf", "d2": "host"}
    got = junit._suites(report, roles)
    want = _suites_by_walking(report, roles)
    assert list(got) == list(want) == ["b", "a", "c", "e", "f"]
    for check, suite in got.items():
        severity, passes, skipped, by_device = want[check]
        assert suite.severity == severity, check
        assert {r: dict(c) for r, c in suite.passes.items()} == {r: dict(c) for r, c in passes.items()}, check
        assert {r: dict(c) for r, c in suite.skipped.items()} == {r: dict(c) for r, c in skipped.items()}, (
            check
        )
        assert suite.by_device == by_device, check
    assert got["c"].severity == "critical" and got["e"].severity == "info"
