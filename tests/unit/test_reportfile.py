"""Reading a saved report.json back (fabline.reportfile): report/3, and report/2 and /1 as older fabline wrote them.

``tests/fixtures/reports/report-1.json`` was written by fabline before report/2 (commit 9a759ff):
``fabline check -i inventory/lab.yml --snapshot examples/lab-snapshot -l 'gpu-002,leaf-r1-a' -f json``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fabline.errors import ConfigError
from fabline.reportfile import load_report
from fabline.results import SkipBlock, Status, expand_results, expand_subjects
from fabline.runner import run_check
from tests.conftest import REPO_ROOT

OLD = REPO_ROOT / "tests" / "fixtures" / "reports" / "report-1.json"


@pytest.fixture(scope="module")
def new_reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The same run as the report/1 fixture, written as report/3 in each pass mode."""
    out = {}
    for mode in ("counts", "subjects", "results"):
        folder = tmp_path_factory.mktemp(mode)
        run_check(
            inventory=(REPO_ROOT / "inventory" / "lab.yml",), snapshot=REPO_ROOT / "examples" / "lab-snapshot",
            baselines=[REPO_ROOT / "baseline" / "roce.yml"], checks_dir=REPO_ROOT / "checks", limit="gpu-002,leaf-r1-a",
            out=folder, formats=["json"], fail_on="minor", passes=mode,
        )  # fmt: skip
        out[mode] = folder / "report.json"
    return out


def test_a_report_1_file_is_read(tmp_path: Path) -> None:
    """The file an older fabline wrote: findings from ``results``, passes counted from them."""
    old = load_report(OLD)
    assert old.schema == "fabline.report/1"
    old_doc = json.loads(OLD.read_text())
    assert len(old.findings) == sum(1 for r in old_doc["results"] if r["status"] != "pass") == 65
    assert (
        sum(n for by in old.passes.values() for n in by.values()) == old.summary["by_status"]["pass"] == 149
    )
    assert old.passes["host-mtu"] == {"gpu-002": 3}
    by_id = old.findings_by_id()
    assert all(f in by_id for p in old.problems for f in p["findings"]) and len(old.problems) == 40


def test_report_1_and_report_3_of_one_run_read_the_same(new_reports: dict[str, Path], tmp_path: Path) -> None:
    """Every pass mode of report/3, and the same run as report/1 wrote it (every result in
    ``results``, no ``passes``, no blocks), give the same findings, passes, summary and problems."""
    audit = json.loads(new_reports["results"].read_text())
    as_1 = {k: v for k, v in audit.items() if k not in ("passes",)}
    # report/1 had no blocks: each block row becomes its results, one per subject.
    as_1["results"] = [
        row
        for r in audit["results"]
        for row in (
            [
                {**r, "subject": s, "id": f"{r['device']}::{r['check']}::{s or '-'}"}
                for s in expand_subjects(r["subjects"])
            ]
            if "subjects" in r
            else [r]
        )
    ]
    for row in as_1["results"]:
        row.pop("subjects", None), row.pop("count", None)
    as_1["schema"] = "fabline.report/1"
    as_1["run"] = {k: v for k, v in audit["run"].items() if k != "passes"}
    (tmp_path / "report-1.json").write_text(json.dumps(as_1), "utf-8")
    old = load_report(tmp_path / "report-1.json")
    assert old.schema == "fabline.report/1"
    for mode, path in new_reports.items():
        new = load_report(path)
        assert new.schema == "fabline.report/3" and new.run["passes"] == mode
        assert [(r.id, r.status, r.severity, r.message) for r in expand_results(new.findings)] == [
            (r.id, r.status, r.severity, r.message) for r in old.findings
        ]
        assert new.passes == old.passes
        assert new.summary == old.summary and new.devices == old.devices
        assert [p["id"] for p in new.problems] == [p["id"] for p in old.problems]
        by_id = new.findings_by_id()
        assert all(f in by_id for p in new.problems for f in p["findings"])
    assert any(type(r) is SkipBlock for r in load_report(new_reports["counts"]).findings)
    subjects = load_report(new_reports["subjects"]).pass_subjects
    assert subjects is not None
    old_subjects: dict[str, dict[str, list[str | None]]] = {}
    for r in audit["results"]:
        if r["status"] == "pass":
            old_subjects.setdefault(r["check"], {}).setdefault(r["device"], []).append(r["subject"])
    assert {c: {d: expand_subjects(v) for d, v in by.items()} for c, by in subjects.items()} == old_subjects


def test_findings_are_results(new_reports: dict[str, Path]) -> None:
    saved = load_report(new_reports["counts"])
    fail = next(r for r in saved.findings if r.status is Status.FAIL)
    assert fail.id == f"{fail.device}::{fail.check}::{fail.subject or '-'}" and fail.message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[1, 2]", "the top level is not an object"),
        ('{"schema": "fabline.report/9"}', "schema 'fabline.report/9' is not one this fabline reads"),
        ('{"schema": "fabline.report/2", "results": {}}', "results: expected a list"),
        ('{"schema": "fabline.report/2", "results": [{"check": "x"}]}', "result 0 is not a fabline result (missing 'device')"),
        ('{"schema": "fabline.report/2", "results": [], "passes": {"x": {"d": "3"}}}', "passes: expected {check: {device: count}}"),
        ("{not json", "not a JSON report"),
    ],
)  # fmt: skip
def test_bad_reports_are_one_line_errors(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "report.json"
    path.write_text(text, "utf-8")
    with pytest.raises(ConfigError) as err:
        load_report(path)
    assert str(err.value).startswith(str(path)) and message in str(err.value)
    assert "\n" not in str(err.value)


def test_a_missing_report(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="report not found"):
        load_report(tmp_path / "nope.json")


def test_reports_validate_against_the_report_3_schema(new_reports: dict[str, Path]) -> None:
    """``schemas/report-3.schema.json`` describes what the writer writes, in every pass mode."""
    import jsonschema

    schema = json.loads((REPO_ROOT / "src" / "fabline" / "schemas" / "report-3.schema.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    for path in new_reports.values():
        errors = [
            f"{list(e.absolute_path)}: {e.message}"
            for e in validator.iter_errors(json.loads(path.read_text()))
        ]
        assert errors == [], (path, errors[:5])
    old = json.loads(OLD.read_text())
    assert not validator.is_valid(old)  # report/1 is another schema
