"""Snapshot diff: exact state changes (nothing volatile), counter deltas, rates, resets, results.

Inputs are synthetic states (fabline.synthetic), not device output: the diff works on states.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from fabline import synthetic
from fabline.errors import ConfigError
from fabline.history.diff import (
    DEFAULT_VOLATILE,
    IgnoreSet,
    Side,
    compare_results,
    counter_deltas,
    diff_sides,
    state_changes,
)
from fabline.results import Result, Severity, Status


def _write(root: Path, docs: list[dict[str, Any]]) -> Path:
    sd = root / "state"
    sd.mkdir(parents=True)
    for doc in docs:
        (sd / f"{doc['name']}.json").write_text(json.dumps(doc), "utf-8")
    return root


def _lab(faults: tuple[synthetic.Fault, ...] = (), at: str = "2026-11-29T08:00:00Z") -> list[dict[str, Any]]:
    return list(synthetic.states(synthetic.lab_fabric(), faults, collected_at=at))


def _churn(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The volatile noise of a second collection: counters up, optics drift, new uptime."""
    out = copy.deepcopy(docs)
    for doc in out:
        doc.setdefault("facts", {})["uptime_s"] = 86400 + len(doc["name"])
        for body in doc["interfaces"].values():
            if "counters" in body:
                body["counters"]["fec_corrected"] += 5000
            if "optics" in body:
                body["optics"]["temperature_c"] = 47.25
                body["optics"]["rx_power_dbm"] = [-1.4, -1.0, -1.2, -1.1]
    return out


def test_changes_found_exactly_and_nothing_volatile(tmp_path: Path) -> None:
    before = _write(tmp_path / "b", _lab())
    after = _write(tmp_path / "a", _churn(_lab(synthetic.LAB_FAULTS, at="2026-11-30T08:00:00Z")))
    result = diff_sides(Side("b", before), Side("a", after))
    got = {(c.device, c.path, json.dumps(c.before), json.dumps(c.after)) for c in result.changes}
    assert got == {
        ("gpu-002", "interfaces.eth1.mtu", "9000", "1500"),
        ("gpu-001", "interfaces.eth2.nic.roce_tos", "106", "104"),
        ("leaf-r1-a", "interfaces.swp1.pfc_priorities", "[3]", "[3, 4]"),
        ("leaf-r2-a", "interfaces.Ethernet2/1.dscp_to_priority.26", "3", "0"),
        ("leaf-r2-a", "interfaces.Ethernet2/1.dscp_to_priority.24", "0", "3"),
        ("leaf-r3-a", "interfaces.Ethernet1/3.fec", '"rs"', '"fc"'),
        ("spine-02", "qos.pfc_watchdog.enabled", "true", "false"),
    }
    # The two planted optics/counter faults are volatile readings: not state changes...
    assert not any("optics" in c.path or "counters" in c.path for c in result.changes)
    # ...but the counter one shows as a counter delta, past fec-uncorrectable-delta's limit (0).
    fec = result.counters.by_counter["fec_uncorrectable"]
    assert (fec.interfaces, fec.over) == (1, 1)
    assert [(r[0], r[1], r[5]) for _, _, _, r in fec.top] == [("leaf-r0-a", "Ethernet8", 17)]
    assert [(f["device"], f["check"]) for f in result.counters.finding_dicts()] == [
        ("leaf-r0-a", "fec-uncorrectable-delta")
    ]
    # every port's FEC corrected count moved (5000 in a day): summarized, well below the BER limit
    corrected = result.counters.by_counter["fec_corrected"]
    assert corrected.limit is not None and corrected.limit.check == "fec-corrected-rate"
    assert corrected.interfaces > 8 and corrected.over == 0
    assert result.devices_compared == 8
    assert not result.results_compared


def test_identical_snapshots_have_no_changes_and_no_counters(tmp_path: Path) -> None:
    before = _write(tmp_path / "b", _lab())
    after = _write(tmp_path / "a", _lab(at="2026-11-29T09:00:00Z"))
    result = diff_sides(Side("b", before), Side("a", after))
    assert result.changes == [] and result.counters.moved == 0 and result.counters.by_counter == {}


def test_added_and_removed_paths_and_whole_interfaces() -> None:
    ig = IgnoreSet(DEFAULT_VOLATILE)
    b = {"interfaces": {"Ethernet0": {"mtu": 9100, "fec": "rs"}, "Ethernet8": {"mtu": 9100}}}
    a = {"interfaces": {"Ethernet0": {"mtu": 9100, "speed_gbps": 400}, "Ethernet16": {"mtu": 9100}}}
    got = [(c.path, c.before, c.after, c.kind) for c in state_changes("leaf", b, a, ig)]
    assert got == [
        ("interfaces.Ethernet0.fec", "rs", None, "removed"),
        ("interfaces.Ethernet0.speed_gbps", None, 400, "added"),
        ("interfaces.Ethernet16", None, {"mtu": 9100}, "added"),
        ("interfaces.Ethernet8", {"mtu": 9100}, None, "removed"),
    ]


def test_a_new_interface_is_reported_without_its_volatile_fields() -> None:
    ig = IgnoreSet(DEFAULT_VOLATILE)
    a = {
        "interfaces": {
            "eth0": {"mtu": 9000, "counters": {"crc_errors": 3}, "optics": {"temperature_c": 40.0}}
        }
    }
    (change,) = state_changes("gpu", {"interfaces": {}}, a, ig)
    assert change.after == {"mtu": 9000, "optics": {}}


def test_user_patterns_extend_the_volatile_list() -> None:
    b = {"interfaces": {"eth0": {"mtu": 9000, "description": "old"}}}
    a = {"interfaces": {"eth0": {"mtu": 9000, "description": "new"}}}
    assert len(state_changes("gpu", b, a, IgnoreSet(DEFAULT_VOLATILE))) == 1
    ig = IgnoreSet([*DEFAULT_VOLATILE, "interfaces.*.description"])
    assert state_changes("gpu", b, a, ig) == []


@pytest.mark.parametrize(
    ("pattern", "path", "hit"),
    [
        ("**.counters", "interfaces.Ethernet0.counters", True),
        ("**.counters", "interfaces.Ethernet0.counters.pfc_rx_pause.3", True),
        ("**.counters", "interfaces.Ethernet0.mtu", False),
        ("**.uptime*", "facts.uptime_s", True),
        ("interfaces.*.optics.*_dbm", "interfaces.eth0.optics.rx_power_dbm", True),
        ("interfaces.*.optics.*_dbm", "interfaces.eth0.optics.serial", False),
        ("collected_at", "collected_at", True),
        ("collected_at", "facts.collected_at_x", False),
    ],
)
def test_ignore_patterns(pattern: str, path: str, hit: bool) -> None:
    assert IgnoreSet([pattern]).matches(path) is hit


def _counters_doc(at: str, **counters: Any) -> dict[str, Any]:
    return {"collected_at": at, "interfaces": {"Ethernet0": {"counters": counters}}}


def test_counter_deltas_rates_and_resets() -> None:
    b = _counters_doc(
        "2026-11-29T08:00:00Z", fec_corrected=1000, crc_errors=50, ecn_marked=7,
        pfc_rx_pause={"3": 100, "4": 5}, cnp_sent=0,
    )  # fmt: skip
    a = _counters_doc(
        "2026-11-29T08:01:40Z", fec_corrected=1500, crc_errors=2, ecn_marked=7,
        pfc_rx_pause={"3": 350, "4": 5}, cnp_sent=10,
    )  # fmt: skip
    got = {c.counter: (c.delta, c.per_second, c.reset, c.seconds) for c in counter_deltas("leaf", b, a)}
    assert got == {
        "fec_corrected": (500, 5.0, False, 100.0),
        "crc_errors": (2, None, True, 100.0),  # cleared: counted since the reset, no rate
        "pfc_rx_pause.3": (250, 2.5, False, 100.0),
        "cnp_sent": (10, 0.1, False, 100.0),
    }


def test_a_ports_first_storm_is_a_counter_delta_from_zero() -> None:
    """A storm table read before without the queue ({}: no storm yet) counts it from zero; pauses do not."""
    b = _counters_doc("2026-11-29T08:00:00Z", pfcwd_storms_detected={}, pfc_rx_pause={"3": 100})
    a = _counters_doc(
        "2026-11-29T08:01:40Z", pfcwd_storms_detected={"3": 2}, pfc_rx_pause={"3": 100, "4": 9}
    )  # fmt: skip
    got = {c.counter: (c.before, c.after, c.delta) for c in counter_deltas("leaf", b, a)}
    assert got == {"pfcwd_storms_detected.3": (0, 2, 2)}  # pfc_rx_pause.4 was not read before


def test_counter_rates_need_both_collection_times() -> None:
    b = _counters_doc("not a time", crc_errors=1)
    a = _counters_doc("2026-11-29T08:01:40Z", crc_errors=4)
    (c,) = counter_deltas("leaf", b, a)
    assert (c.delta, c.per_second, c.seconds) == (3, None, None)


def _r(check: str, device: str, status: Status, subject: str | None = None) -> Result:
    return Result(check, device, subject, status, Severity.MAJOR, None, None, f"{check} {status.value}")


def test_result_comparison() -> None:
    before = [
        _r("mtu", "leaf1", Status.FAIL, "Ethernet0"),  # persists
        _r("fec", "leaf1", Status.FAIL, "Ethernet8"),  # resolved
        _r("pfc", "leaf2", Status.FAIL),  # becomes an error: a new error, not resolved
        _r("unreachable", "leaf3", Status.ERROR),  # stays an error: not new
        _r("ecn", "leaf4", Status.FAIL),  # waived after: resolved
    ]
    after = [
        _r("mtu", "leaf1", Status.FAIL, "Ethernet0"),
        _r("pfc", "leaf2", Status.ERROR),
        _r("unreachable", "leaf3", Status.ERROR),
        _r("ecn", "leaf4", Status.WAIVED),
        _r("trust", "leaf5", Status.FAIL),  # new
        _r("device", "gpu1", Status.ERROR),  # new error
    ]
    new, resolved, persisting, new_errors = compare_results(before, after)
    assert [r["id"] for r in new] == ["leaf5::trust::-"]
    assert {r["id"]: r["after_status"] for r in resolved} == {
        "leaf1::fec::Ethernet8": "pass",
        "leaf4::ecn::-": "waived",
    }
    assert [r["id"] for r in persisting] == ["leaf1::mtu::Ethernet0"]
    assert [(r["id"], r["before_status"]) for r in new_errors] == [
        ("leaf2::pfc::-", "fail"),
        ("gpu1::device::-", None),
    ]


def test_exit_code_follows_new_failures_and_errors(tmp_path: Path) -> None:
    snap = _write(tmp_path / "s", _lab())
    quiet = diff_sides(Side("b", snap, []), Side("a", snap, [_r("x", "d", Status.FAIL)]))
    assert quiet.exit_code() == 4
    info = Result("x", "d", None, Status.FAIL, Severity.INFO)
    assert diff_sides(Side("b", snap, []), Side("a", snap, [info])).exit_code() == 0
    assert diff_sides(Side("b", snap, []), Side("a", snap, [_r("y", "d", Status.ERROR)])).exit_code() == 4
    assert diff_sides(Side("b", snap, []), Side("a", snap, [])).exit_code() == 0


def test_devices_on_one_side_and_unreadable_states_are_listed(tmp_path: Path) -> None:
    docs = _lab()
    before = _write(tmp_path / "b", [d for d in docs if d["name"] != "gpu-002"])
    after_docs = [d for d in docs if d["name"] != "spine-01"]
    after = _write(tmp_path / "a", after_docs)
    (after / "state" / "leaf-r0-a.json").write_text(
        '{"schema": "fabline.state/1", "name": "leaf-r0-a"', "utf-8"
    )
    result = diff_sides(Side("b", before), Side("a", after))
    assert result.only_before == ["spine-01"]
    assert result.only_after == ["gpu-002"]
    assert [(u["device"], u["side"]) for u in result.unreadable] == [("leaf-r0-a", "after")]
    assert "invalid JSON" in result.unreadable[0]["message"]
    assert result.devices_compared == 5
    doc = result.to_dict()
    assert doc["only_before"] == ["spine-01"] and doc["schema"] == "fabline.diff/2"


def test_missing_snapshot_is_a_config_error(tmp_path: Path) -> None:
    snap = _write(tmp_path / "s", _lab())
    with pytest.raises(ConfigError, match="snapshot folder not found"):
        diff_sides(Side("b", snap), Side("a", tmp_path / "nope"))


def test_json_fields_of_the_issue(tmp_path: Path) -> None:
    before = _write(tmp_path / "b", _lab())
    after = _write(tmp_path / "a", _lab(synthetic.LAB_FAULTS, at="2026-11-29T08:10:00Z"))
    doc = diff_sides(Side("b", before, []), Side("a", after, [_r("x", "d", Status.FAIL)])).to_dict()
    assert set(doc["changes"][0]) >= {"device", "path", "before", "after"}
    counters = doc["counters"]
    assert counters["moved"] == 1 and counters["over_limit"] == 1 and counters["rows_file"] is None
    (fec,) = counters["by_counter"]
    assert fec["counter"] == "fec_uncorrectable" and fec["check"] == "fec-uncorrectable-delta"
    assert set(fec["top"][0]) >= {"device", "subject", "counter", "delta", "per_second", "reset"}
    assert fec["top"][0]["per_second"] == pytest.approx(17 / 600)
    (finding,) = counters["findings"]
    assert finding["limit"] == {"max_delta": 0} and finding["severity"] == "major" and finding["value"] == 17
    for key in ("new_failures", "resolved", "persisting", "new_errors"):
        assert isinstance(doc[key], list)
    assert doc["new_failures"][0]["check"] == "x"


def test_forked_workers_give_the_serial_answer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fabline import perf

    fabric = synthetic.rail_fabric(512, radix=32)
    host = next(d for d in fabric.devices if d.role == "host")
    before = tmp_path / "b"
    after = tmp_path / "a"
    synthetic.write_snapshot(fabric, before)
    faults = [
        synthetic.Fault(host.name, "mtu", 1500, host.rail_interfaces[0]),
        synthetic.Fault("leaf-r0-000", "counters.crc_errors", 9, "Ethernet0"),
    ]
    synthetic.write_snapshot(fabric, after, faults, collected_at="2026-11-29T08:00:09Z")
    serial = diff_sides(Side("b", before), Side("a", after), counter_rows=tmp_path / "serial.jsonl")
    monkeypatch.setattr(perf, "PARALLEL_MIN_DEVICES", 1)
    monkeypatch.setattr(perf.os, "cpu_count", lambda: 2)
    assert perf.worker_count(len(fabric.devices)) == 2
    forked = diff_sides(Side("b", before), Side("a", after), counter_rows=tmp_path / "forked.jsonl")
    doc_s, doc_f = serial.to_dict(), forked.to_dict()
    assert doc_f["counters"].pop("rows_file") != doc_s["counters"].pop("rows_file")
    assert doc_f == doc_s
    assert (tmp_path / "forked.jsonl").read_bytes() == (tmp_path / "serial.jsonl").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b", "forked.jsonl", "serial.jsonl"]
    assert [(c.device, c.path) for c in forked.changes] == [
        (host.name, f"interfaces.{host.rail_interfaces[0]}.mtu")
    ]
    assert [(c.device, c.counter, c.per_second) for c in forked.counters.deltas()] == [
        ("leaf-r0-000", "crc_errors", 1.0)
    ]
    assert forked.devices_compared == len(fabric.devices)


def test_every_default_volatile_pattern_is_documented() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "operations.md").read_text("utf-8")
    for pattern in DEFAULT_VOLATILE:
        assert f"`{pattern}`" in doc, pattern


def _busy_night(fabric: synthetic.Fabric, root: Path, bump: dict[str, int]) -> tuple[Path, Path]:
    """The fabric's snapshot and its next night: every port's counters moved by ``bump``
    (``{"pfc_rx_pause.3": 40}``: one priority of a per-priority counter), a day later."""
    before, after = root / "b", root / "a"
    synthetic.write_snapshot(fabric, before, collected_at="2026-11-29T08:00:00Z")
    synthetic.write_snapshot(fabric, after, collected_at="2026-11-30T08:00:00Z")
    for path in (after / "state").glob("*.json"):
        doc = json.loads(path.read_text())
        for n, body in enumerate(doc["interfaces"].values()):
            counters = body.get("counters")
            for label, by in bump.items() if counters else ():
                key, _, prio = label.partition(".")
                if prio:
                    counters[key][prio] += by + n % 7
                else:
                    counters[key] += by + n % 7
        path.write_text(json.dumps(doc))
    return before, after


HEALTHY = {"fec_corrected": 50_000, "ecn_marked": 9_000, "pfc_rx_pause.3": 30, "pfc_tx_pause.3": 20}


def test_a_healthy_night_is_summarized_whatever_the_port_count(tmp_path: Path) -> None:
    """Every port's counters moved: diff.json keeps a summary per counter, the same size for 5x
    the ports; every row is in the --counter-rows file; nothing is a finding."""
    from fabline.history.render import render_json, render_markdown

    sizes = {}
    for gpus in (64, 512):
        before, after = _busy_night(synthetic.rail_fabric(gpus, radix=32), tmp_path / str(gpus), HEALTHY)
        rows = tmp_path / f"rows-{gpus}.jsonl"
        result = diff_sides(Side("b", before), Side("a", after), counter_rows=rows)
        summary = result.counters
        ports = sum(1 for r in rows.read_text().splitlines() if json.loads(r)["counter"] == "ecn_marked")
        assert summary.moved == len(rows.read_text().splitlines()) == 4 * ports
        assert summary.by_counter["ecn_marked"].interfaces == ports
        assert summary.findings_total == 0 and result.exit_code() == 0
        limits = {s.counter: s.limit.check if s.limit else None for s in summary.counters()}
        assert limits == {"fec_corrected": "fec-corrected-rate", "ecn_marked": None,
                          "pfc_rx_pause.3": "pfc-pause-rate", "pfc_tx_pause.3": "pfc-pause-rate"}  # fmt: skip
        doc = json.loads(render_json(result))
        assert doc["counters"]["moved"] == summary.moved and doc["counters"]["rows_file"] == str(rows)
        assert all(len(c["top"]) == 5 for c in doc["counters"]["by_counter"])
        sizes[gpus] = (len(render_json(result)), len(render_markdown(result)), ports)
    (json_s, md_s, ports_s), (json_l, md_l, ports_l) = sizes[64], sizes[512]
    assert ports_l > 5 * ports_s
    assert json_l < json_s * 1.2 and md_l < md_s * 1.2  # names get a digit longer, nothing more


def test_a_counter_past_its_checks_limit_is_a_finding(tmp_path: Path) -> None:
    fabric = synthetic.rail_fabric(64, radix=32)
    before, after = _busy_night(fabric, tmp_path, HEALTHY)
    leaf = next(d for d in fabric.devices if d.role == "leaf")
    path = after / "state" / f"{leaf.name}.json"
    doc = json.loads(path.read_text())
    port = next(p for p, b in doc["interfaces"].items() if "counters" in b)
    doc["interfaces"][port]["counters"]["crc_errors"] += 12
    doc["interfaces"][port]["counters"]["pfc_rx_pause"]["3"] += 86_400 * 500  # 500 pauses/s over the day
    path.write_text(json.dumps(doc))
    result = diff_sides(Side("b", before), Side("a", after))
    found = {
        (f["device"], f["subject"], f["counter"], f["check"], f["severity"])
        for f in result.counters.finding_dicts()
    }
    assert found == {
        (leaf.name, port, "crc_errors", "crc-errors-delta", "minor"),
        (leaf.name, port, "pfc_rx_pause.3", "pfc-pause-rate", "minor"),
    }
    assert result.exit_code() == 4 and result.exit_code(Severity.CRITICAL) == 0
    pause = result.counters.by_counter["pfc_rx_pause.3"]
    assert pause.over == 1 and max(pause.top)[3][:3] == (leaf.name, port, "pfc_rx_pause.3")
    from fabline.history.render import render_markdown

    md = render_markdown(result)
    assert "## Counters past their check's limit (2)" in md and f"| {port} | crc_errors | 12 |" in md
    # the baseline's limits are the ones applied: pauses allowed up to 1000/s, CRC check off
    from fabline.history.counters import CounterLimits

    base = tmp_path / "base.yml"
    base.write_text(
        "rules:\n  - id: pfc-pause-rate\n    params: {max_per_s: 1000}\n"
        "  - id: crc-errors-delta\n    enabled: false\n"
    )
    relaxed = diff_sides(Side("b", before), Side("a", after), limits=CounterLimits.from_baseline([base]))
    assert relaxed.counters.findings_total == 0 and relaxed.exit_code() == 0
    assert relaxed.counters.by_counter["crc_errors"].limit is None


def _block(device: str, ports: list[str], status: Status = Status.ERROR) -> Result:
    from fabline.results import SkipBlock

    return SkipBlock("switch-trust-dscp", device, Severity.MAJOR, ports, "trust not collected", status)


def test_blocks_are_compared_port_by_port() -> None:
    """An error block that gained a port is one new error (listed once, whole); the same ports as a
    block or as single results (a run recorded before blocks existed) are not new; a failure now
    skipped in a block is resolved as skipped."""
    ports = [f"Ethernet{n}" for n in range(0, 32, 4)]
    singles = [_r("switch-trust-dscp", "leaf1", Status.ERROR, p) for p in ports]
    new, resolved, persisting, new_errors = compare_results(
        [_block("leaf1", ports)], [_block("leaf1", ports)]
    )
    assert (new, resolved, persisting, new_errors) == ([], [], [], [])
    assert compare_results(singles, [_block("leaf1", ports)])[3] == []  # old per-port rows, same ports
    assert compare_results([_block("leaf1", ports)], [_block("leaf1", ports[:5])])[3] == []  # fewer
    grown = _block("leaf1", [*ports, "Ethernet32"])
    (entry,) = compare_results([_block("leaf1", ports)], [grown])[3]
    assert entry["id"] == grown.id and entry["count"] == 9 and entry["before_status"] is None
    fail = _r("optics-alarms", "leaf1", Status.FAIL, "Ethernet4")
    skipped = _block("leaf1", ports, Status.SKIPPED)
    skipped.check = "optics-alarms"
    (gone,) = compare_results([fail], [skipped])[1]
    assert gone["id"] == fail.id and gone["after_status"] == "skipped"
