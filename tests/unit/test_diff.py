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
    # ...but the counter one shows as a counter delta.
    fec = [c for c in result.counters if c.counter == "fec_uncorrectable"]
    assert [(c.device, c.subject, c.delta) for c in fec] == [("leaf-r0-a", "Ethernet8", 17)]
    assert result.devices_compared == 8
    assert not result.results_compared


def test_identical_snapshots_have_no_changes_and_no_counters(tmp_path: Path) -> None:
    before = _write(tmp_path / "b", _lab())
    after = _write(tmp_path / "a", _lab(at="2026-11-29T09:00:00Z"))
    result = diff_sides(Side("b", before), Side("a", after))
    assert result.changes == [] and result.counters == []


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
    assert doc["only_before"] == ["spine-01"] and doc["schema"] == "fabline.diff/1"


def test_missing_snapshot_is_a_config_error(tmp_path: Path) -> None:
    snap = _write(tmp_path / "s", _lab())
    with pytest.raises(ConfigError, match="snapshot folder not found"):
        diff_sides(Side("b", snap), Side("a", tmp_path / "nope"))


def test_json_fields_of_the_issue(tmp_path: Path) -> None:
    before = _write(tmp_path / "b", _lab())
    after = _write(tmp_path / "a", _lab(synthetic.LAB_FAULTS, at="2026-11-29T08:10:00Z"))
    doc = diff_sides(Side("b", before, []), Side("a", after, [_r("x", "d", Status.FAIL)])).to_dict()
    assert set(doc["changes"][0]) >= {"device", "path", "before", "after"}
    assert set(doc["counters"][0]) >= {"device", "subject", "counter", "delta", "per_second", "reset"}
    assert doc["counters"][0]["per_second"] == pytest.approx(17 / 600)
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
    serial = diff_sides(Side("b", before), Side("a", after))
    monkeypatch.setattr(perf, "PARALLEL_MIN_DEVICES", 1)
    monkeypatch.setattr(perf.os, "cpu_count", lambda: 2)
    assert perf.worker_count(len(fabric.devices)) == 2
    forked = diff_sides(Side("b", before), Side("a", after))
    assert forked.to_dict() == serial.to_dict()
    assert [(c.device, c.path) for c in forked.changes] == [
        (host.name, f"interfaces.{host.rail_interfaces[0]}.mtu")
    ]
    assert [(c.device, c.counter, c.per_second) for c in forked.counters] == [
        ("leaf-r0-000", "crc_errors", 1.0)
    ]
    assert forked.devices_compared == len(fabric.devices)


def test_every_default_volatile_pattern_is_documented() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "operations.md").read_text("utf-8")
    for pattern in DEFAULT_VOLATILE:
        assert f"`{pattern}`" in doc, pattern
