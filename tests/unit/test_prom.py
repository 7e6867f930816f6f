"""report.prom: valid exposition text (Prometheus client parser) with the report's numbers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from fabline import synthetic
from fabline.history import record
from fabline.history.diff import Side, diff_sides
from fabline.reports import jsonreport, prom
from fabline.runner import report_context, run_check

REPO = Path(__file__).resolve().parents[2]


def _samples(text: str) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    out: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in text_string_to_metric_families(text):
        assert family.type == "gauge"
        assert family.documentation
        for s in family.samples:
            out.setdefault(s.name, {})[tuple(sorted(s.labels.items()))] = s.value
    return out


def _check(snapshot: Path, **kwargs: object):  # type: ignore[no-untyped-def]
    report, _ = run_check(
        inventory=REPO / "inventory" / "lab.yml", snapshot=snapshot, baselines=[REPO / "baseline" / "roce.yml"],
        checks_dir=None, limit=None, out=None, formats=[], fail_on="minor", **kwargs,  # type: ignore[arg-type]
    )  # fmt: skip
    return report


def test_prom_parses_and_matches_the_json_report() -> None:
    report = _check(REPO / "examples" / "lab-snapshot")
    doc = json.loads(jsonreport.render(report))
    m = _samples(prom.render(report))
    for status, n in doc["summary"]["by_status"].items():
        assert m["fabline_results"][(("status", status),)] == n
    for sev, n in doc["summary"]["failures_by_severity"].items():
        assert m["fabline_failures"][(("severity", sev),)] == n
    by_check: dict[tuple[str, str, str], int] = {}
    for r in doc["results"]:
        if r["status"] != "pass":
            key = (r["check"], r["severity"], r["status"])
            by_check[key] = by_check.get(key, 0) + r.get("count", 1)  # a block row stands for `count` results
    got = {
        (dict(k)["check"], dict(k)["severity"], dict(k)["status"]): v
        for k, v in m["fabline_check_results"].items()
    }
    assert got == by_check
    by_problem: dict[tuple[str, str], int] = {}
    for p in doc["problems"]:
        by_problem[(p["severity"], p["family"])] = by_problem.get((p["severity"], p["family"]), 0) + 1
    assert {
        (dict(k)["severity"], dict(k)["family"]): v for k, v in m["fabline_problems"].items()
    } == by_problem
    assert sum(m["fabline_problems"].values()) == len(doc["problems"]) == 8
    passes = {dict(k)["check"]: v for k, v in m["fabline_check_passes"].items()}
    assert passes == {c: sum(by.values()) for c, by in doc["passes"].items()}
    assert sum(passes.values()) == doc["summary"]["by_status"]["pass"]
    passed = {dict(k)["check"]: v for k, v in m["fabline_check_devices_passed"].items()}
    assert passed == {c: len(by) for c, by in doc["passes"].items()}
    assert m["fabline_devices"] == {(("status", "ok"),): len(doc["devices"])}
    assert m["fabline_run_exit_code"][()] == doc["run"]["exit_code"] == 4
    assert m["fabline_run_duration_seconds"][()] == pytest.approx(doc["run"]["duration_s"], abs=0.01)
    assert m["fabline_run_timestamp_seconds"][()] > 1.7e9
    assert "fabline_counter_rate_per_second" not in m  # no diff, no recorded previous run


def test_counter_rates_from_the_last_diff(tmp_path: Path) -> None:
    fabric = synthetic.lab_fabric()
    synthetic.write_snapshot(fabric, tmp_path / "b", collected_at="2026-11-29T08:00:00Z")
    faults = [
        synthetic.Fault("leaf-r0-a", "counters.fec_uncorrectable", 600, "Ethernet0"),
        synthetic.Fault("leaf-r1-a", "counters.pfc_rx_pause", {"3": 1200}, "swp1"),
        synthetic.Fault("leaf-r2-a", "counters.fec_corrected", 10, "Ethernet1/1"),  # was 1024: a reset
    ]
    synthetic.write_snapshot(fabric, tmp_path / "a", faults, collected_at="2026-11-29T08:01:00Z")
    report = _check(tmp_path / "a")
    diff = diff_sides(Side("b", tmp_path / "b"), Side("a", tmp_path / "a"))
    m = _samples(prom.render(report, report_context(report, ["prom"], diff=diff)))
    rate = m["fabline_counter_rate_per_second"]
    assert rate[(("counter", "fec_uncorrectable"),)] == 10.0
    assert rate[(("counter", "pfc_rx_pause.3"),)] == 20.0
    assert m["fabline_counter_resets"][(("counter", "fec_corrected"),)] == 1
    assert m["fabline_counter_delta"][(("counter", "fec_corrected"),)] == 10
    per_device = m["fabline_device_counter_rate_per_second"]
    assert per_device[(("counter", "fec_uncorrectable"), ("device", "leaf-r0-a"))] == 10.0


def test_counter_rates_from_the_previous_recorded_run(tmp_path: Path) -> None:
    fabric = synthetic.lab_fabric()
    synthetic.write_snapshot(fabric, tmp_path / "b", collected_at="2026-11-29T08:00:00Z")
    fault = synthetic.Fault("leaf-r0-a", "counters.crc_errors", 300, "Ethernet0")
    synthetic.write_snapshot(fabric, tmp_path / "a", [fault], collected_at="2026-11-29T08:00:30Z")
    db = tmp_path / "history.sqlite"
    first = _check(tmp_path / "b")
    record(first, tmp_path / "b", db)
    report = _check(tmp_path / "a", history=db)
    m = _samples(prom.render(report, report_context(report, ["prom"])))
    assert m["fabline_counter_rate_per_second"] == {(("counter", "crc_errors"),): 10.0}


def test_a_gone_previous_snapshot_is_a_warning_in_the_metrics(tmp_path: Path) -> None:
    import shutil

    fabric = synthetic.lab_fabric()
    synthetic.write_snapshot(fabric, tmp_path / "b", collected_at="2026-11-29T08:00:00Z")
    synthetic.write_snapshot(fabric, tmp_path / "a", collected_at="2026-11-29T08:00:30Z")
    db = tmp_path / "history.sqlite"
    record(_check(tmp_path / "b"), tmp_path / "b", db)
    shutil.rmtree(tmp_path / "b")
    report = _check(tmp_path / "a", history=db)
    context = report_context(report, ["prom"])
    assert context.counters is None
    text = prom.render(report, context)
    assert "fabline_counter_rate_per_second" not in _samples(text)
    (line,) = [x for x in text.splitlines() if x.startswith("# fabline warning:")]
    assert "snapshot" in line and "is gone" in line and str(tmp_path / "b") in line


def test_label_values_are_escaped() -> None:
    assert prom._labels({"check": 'a"b\\c\nd'}) == '{check="a\\"b\\\\c\\nd"}'
    (family,) = text_string_to_metric_families('# TYPE x gauge\nx{check="a\\"b\\\\c\\nd"} 1\n')
    assert family.samples[0].labels["check"] == 'a"b\\c\nd'
