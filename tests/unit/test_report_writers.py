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

from fabline.engine import RunOutcome
from fabline.errors import ConfigError, FablineError
from fabline.reports import Report, jsonreport, junit, write_reports
from fabline.results import PassBlock, Result, ResultStore, Severity, Status
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


def test_json_is_the_document_dumped_whole() -> None:
    report = _report(_store())
    want = orjson.dumps(jsonreport.document(report), option=orjson.OPT_INDENT_2, default=str) + b"\n"
    assert jsonreport.render_bytes(report) == want
    assert jsonreport.render_bytes(_report(_plain(_store()))) == want
    assert jsonreport.render(report) == want.decode("utf-8")
    assert len(json.loads(want)["results"]) == len(report.results)


def test_json_of_an_empty_run() -> None:
    report = _report(ResultStore())
    want = orjson.dumps(jsonreport.document(report), option=orjson.OPT_INDENT_2, default=str) + b"\n"
    assert jsonreport.render_bytes(report) == want


def test_junit_streamed_equals_one_result_at_a_time() -> None:
    text = junit.render(_report(_store()))
    assert text == junit.render(_report(_plain(_store())))
    # Control characters are not XML (as with ElementTree, they are written as they are).
    root = ET.fromstring(text.replace("\x01", "").replace("\x1f", "").encode("utf-8"))
    names = [(c.get("classname"), c.get("name")) for c in root.iter("testcase")]
    assert len(names) == len(_store())
    assert ("fabline.mtu", f"leaf<1> {AWKWARD[4]}") in names


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

    text = junit.render(_report(_store()))
    root = ET.fromstring(text)  # a CI server must be able to read it: no raw \x01 or \x1f
    subjects = [tc.get("name") for tc in root.iter("testcase")]
    assert any(name and "ctrl\ufffd\ufffd\x7f" in name for name in subjects), subjects
