"""Problems, not findings: grouping a run's failing results by cause (``fabline.problems``).

The fabrics are synthetic states (``fabline.synthetic``) checked by the real engine against the
shipped baseline, with the faults the simulator plants (``fabline.sim.faults``); the integration
test ``tests/integration/test_problems_sim.py`` plants the same faults behind real SSH.
"""

from __future__ import annotations

import json
import random
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from fabline import synthetic
from fabline.problems import (
    FAMILIES,
    MAX_LOCATION_PORTS,
    DeviceFacts,
    Facts,
    Problem,
    check_partition,
    deviation,
    family_of,
    group,
)
from fabline.reports import Report
from fabline.results import Result, Severity, SkipBlock, Status
from fabline.runner import run_check
from fabline.synthetic import Fault
from tests.conftest import REPO_ROOT

BASELINE = REPO_ROOT / "baseline" / "roce.yml"


def lab_faults() -> tuple[
    synthetic.Fabric, synthetic.Fabric, list[tuple[str, list[Fault], tuple[str, str | None]]]
]:
    """The twelve planted faults of issue 17 on the lab fabric: (intended, built, faults).

    Each fault is ``(name, state faults, (device, port) where it was planted)``.
    """
    from fabline.sim.faults import os_skew, rail_miswire

    intended = synthetic.lab_fabric()
    built = rail_miswire(intended, "gpu-001", rails=(0, 1))
    # The down uplink: no light, so no LLDP at either end; both ports stay admin up.
    built = synthetic.remove_link(built, "leaf-r0-a", "Ethernet24")
    faults: list[tuple[str, list[Fault], tuple[str, str | None]]] = [
        ("rail swap", [], ("gpu-001", "eth0")),
        ("MTU 1500 uplink", [Fault("leaf-r1-a", "mtu", 1500, "swp3")], ("leaf-r1-a", "swp3")),
        ("FEC mismatch", [Fault("leaf-r3-a", "fec", "fc", "Ethernet1/3")], ("leaf-r3-a", "Ethernet1/3")),
        ("host DSCP remap", [Fault("gpu-002", "dscp_to_priority.26", 0, "eth2")], ("gpu-002", "eth2")),
        ("extra PFC priority", [Fault("leaf-r1-a", "pfc_priorities", [3, 4], "swp2")], ("leaf-r1-a", "swp2")),
        ("OS straggler", [os_skew("spine-01", "4.31.1F")], ("spine-01", "os_version")),
        (
            "down uplink",
            [
                Fault("leaf-r0-a", "admin_up", True, "Ethernet24"),
                Fault("spine-02", "admin_up", True, "Ethernet1/1"),
            ],
            ("leaf-r0-a", "Ethernet24"),
        ),
        (
            "weak optic",
            [Fault("gpu-002", "optics.rx_power_dbm", [-1.2, -10.4, -1.1, -1.3], "eth3")],
            ("gpu-002", "eth3"),
        ),
        ("PFC watchdog off", [Fault("spine-02", "qos.pfc_watchdog.enabled", False)], ("spine-02", None)),
        ("wrong RoCE ToS", [Fault("gpu-001", "nic.roce_tos", 104, "eth2")], ("gpu-001", "eth2")),
        (
            "DSCP 8 lossless",
            [Fault("leaf-r0-a", "dscp_to_priority.8", 3, "Ethernet8")],
            ("leaf-r0-a", "Ethernet8"),
        ),
        (
            "FEC uncorrectable",
            # on SONiC, whose simulated counters carry it over SSH (EOS's do not)
            [Fault("leaf-r0-a", "counters.fec_uncorrectable", 17, "Ethernet16")],
            ("leaf-r0-a", "Ethernet16"),
        ),
    ]
    return intended, built, faults


def check_fabric(
    tmp: Path,
    built: synthetic.Fabric,
    faults: Sequence[Fault] = (),
    *,
    intended: synthetic.Fabric | None = None,
    states: list[dict[str, Any]] | None = None,
    plan: bool = True,
) -> Report:
    """Write the fabric's states, inventory and cabling plan; run the real check on them."""
    intended = intended or built
    snap = tmp / "snap"
    (snap / "state").mkdir(parents=True)
    for doc in states if states is not None else synthetic.states(built, faults):
        (snap / "state" / f"{doc['name']}.json").write_text(json.dumps(doc), "utf-8")
    inv = tmp / "inv.yml"
    inv.write_text(yaml.safe_dump(synthetic.inventory(intended)), "utf-8")
    cabling = None
    if plan:
        cabling = tmp / "cabling.csv"
        cabling.write_text(synthetic.cabling_plan_csv(intended), "utf-8")
    report, _ = run_check(
        inventory=inv, snapshot=snap, baselines=[BASELINE], checks_dir=None, limit=None, out=None,
        formats=[], fail_on="minor", cabling=cabling,
    )  # fmt: skip
    return report


def where(problem: Problem) -> set[tuple[str, str | None]]:
    """Every (device, subject) a problem's findings sit on."""
    return {(r.device, r.subject) for r in problem.findings}


@pytest.fixture(scope="module")
def twelve(tmp_path_factory: pytest.TempPathFactory) -> tuple[Report, list[Any]]:
    intended, built, faults = lab_faults()
    planted = [f for _, fs, _ in faults for f in fs]
    report = check_fabric(tmp_path_factory.mktemp("twelve"), built, planted, intended=intended)
    return report, faults


def test_twelve_faults_give_twelve_problems(twelve: tuple[Report, list[Any]]) -> None:
    report, faults = twelve
    problems = report.outcome.problems
    findings = [r for r in report.outcome.results.problems if r.status in (Status.FAIL, Status.ERROR)]
    assert len(findings) >= 35  # the "31 lines for 12 things" (39 here: the down uplink's plan rows)
    check_partition(findings, problems)
    assert len(problems) == 12, "\n".join(p.cause for p in problems)
    for name, _, spot in faults:
        holding = [p for p in problems if spot in where(p)]
        assert len(holding) == 1, (name, [p.cause for p in holding])
    # ... and no problem holds two faults
    for p in problems:
        assert sum(1 for _, _, spot in faults if spot in where(p)) == 1, p.cause


def test_twelve_faults_problem_shapes(twelve: tuple[Report, list[Any]]) -> None:
    problems = {
        p.family: p for p in twelve[0].outcome.problems if p.family in ("mtu", "port-state", "cabling")
    }
    mtu = problems["mtu"]
    assert mtu.kind == "link" and mtu.severity is Severity.CRITICAL
    assert {r.check for r in mtu.findings} == {"switch-mtu", "link-mtu"}
    assert mtu.where == "leaf-r1-a swp3 <-> spine-01 Ethernet2/1"
    assert mtu.cause == "MTU: leaf-r1-a swp3: mtu is 1500, below min 9100"
    down = problems["port-state"]
    # the down port and its consequences: both ends, oversubscription, Clos shape at both tiers,
    # the leaf's ECMP path that went with the link
    assert {r.check for r in down.findings} == {
        "switch-port-up", "leaf-oversubscription", "clos-shape", "cabling-plan", "ecmp-fanout"
    }  # fmt: skip
    assert down.kind == "link" and down.where == "leaf-r0-a Ethernet24 <-> spine-02 Ethernet1/1"
    # a physical problem says what to inspect, with the cabling-plan row
    assert down.inspect == [
        {"device": "leaf-r0-a", "port": "Ethernet24", "peer_device": "spine-02", "peer_port": "Ethernet1/1",
         "plan_line": 5}
    ]  # fmt: skip
    swap = problems["cabling"]
    assert {(r.device, r.subject) for r in swap.findings} == {
        ("gpu-001", "eth0"), ("gpu-001", "eth1"), ("leaf-r0-a", "Ethernet0"), ("leaf-r1-a", "swp1")
    }  # fmt: skip
    assert [(i["device"], i["port"], i["peer_device"], i["plan_line"]) for i in swap.inspect] == [
        ("gpu-001", "eth0", "leaf-r1-a", 2), ("gpu-001", "eth1", "leaf-r0-a", 6)
    ]  # fmt: skip


def test_twelve_faults_without_a_cabling_plan(tmp_path: Path) -> None:
    """Without a plan the down link's two ends are still one problem (Clos shape pairs them)."""
    intended, built, faults = lab_faults()
    report = check_fabric(
        tmp_path, built, [f for _, fs, _ in faults for f in fs], intended=intended, plan=False
    )
    assert len(report.outcome.problems) == 12, [p.cause for p in report.outcome.problems]


def test_problem_ids_are_stable_across_runs_and_orders(
    twelve: tuple[Report, list[Any]], tmp_path: Path
) -> None:
    report, _ = twelve
    findings = list(report.outcome.results.problems)
    ids = {p.id for p in report.outcome.problems}
    shuffled = findings[:]
    random.Random(7).shuffle(shuffled)
    facts = _facts_of(report)
    again = group(shuffled, facts)
    assert {p.id for p in again} == ids
    assert {p.id: sorted(r.id for r in p.findings) for p in again} == {
        p.id: sorted(r.id for r in p.findings) for p in group(findings, facts)
    }
    # one fault fixed: the other problems keep their ids, the fixed one is gone
    intended, built, faults = lab_faults()
    kept = [f for name, fs, _ in faults if name != "weak optic" for f in fs]
    fixed = check_fabric(tmp_path, built, kept, intended=intended)
    now = {p.id for p in fixed.outcome.problems}
    assert len(ids - now) == 1 and now < ids


def _facts_of(report: Report) -> Facts:
    """Facts equal to the ones the engine used (device roles; peers from the link findings)."""
    devices = {d["name"]: DeviceFacts(d["role"], 0, d["status"] in ("ok", "partial"), d["status"])
               for d in report.outcome.devices}  # fmt: skip
    return Facts(devices)


def test_spine_down_is_one_problem(tmp_path: Path) -> None:
    """An unreachable spine: its own errors, the leaves' dark uplinks, Clos and oversubscription."""
    fabric = synthetic.lab_fabric()
    spine_ports = [
        (a, ap) if b == "spine-02" else (b, bp) for a, ap, b, bp in fabric.links if "spine-02" in (a, b)
    ]
    dark = synthetic.Fabric(
        fabric.devices, [link for link in fabric.links if "spine-02" not in (link[0], link[2])]
    )
    faults = [Fault(dev, "admin_up", True, port) for dev, port in spine_ports]
    docs = [d for d in synthetic.states(dark, faults) if d["name"] != "spine-02"]
    docs.append({"schema": "fabline.state/1", "name": "spine-02", "platform": "arista_eos", "role": "spine",
                 "status": "unreachable", "errors": [{"kind": "unreachable", "message": "no route to host"}]})  # fmt: skip
    report = check_fabric(tmp_path, dark, states=docs, intended=fabric)
    problems = report.outcome.problems
    assert len(problems) == 1, [p.cause for p in problems]
    (p,) = problems
    assert p.family == "unreadable" and p.kind == "device"
    assert p.cause.startswith("spine-02 could not be read (unreachable)")
    checks = {r.check for r in p.findings}
    assert {"switch-port-up", "leaf-oversubscription", "clos-shape"} <= checks
    assert {r.device for r in p.findings} == {"spine-02", "leaf-r0-a", "leaf-r1-a", "leaf-r2-a", "leaf-r3-a"}


def test_spine_down_without_a_plan_is_one_problem(tmp_path: Path) -> None:
    fabric = synthetic.lab_fabric()
    dark = synthetic.Fabric(
        fabric.devices, [link for link in fabric.links if "spine-02" not in (link[0], link[2])]
    )
    spine_ports = [
        (a, ap) if b == "spine-02" else (b, bp) for a, ap, b, bp in fabric.links if "spine-02" in (a, b)
    ]
    docs = [d for d in synthetic.states(dark, [Fault(d, "admin_up", True, p) for d, p in spine_ports])
            if d["name"] != "spine-02"]  # fmt: skip
    docs.append({"schema": "fabline.state/1", "name": "spine-02", "platform": "arista_eos", "role": "spine",
                 "status": "timeout", "errors": [{"kind": "timeout", "message": "no SSH banner"}]})  # fmt: skip
    report = check_fabric(tmp_path, dark, states=docs, intended=fabric, plan=False)
    assert [p.family for p in report.outcome.problems] == ["unreadable"], [
        p.cause for p in report.outcome.problems
    ]


def test_fleet_wide_dscp_map_one_problem_per_wrong_value(tmp_path: Path) -> None:
    """A bad template push: every leaf's host ports map DSCP 26 to 4 (rails 0-3) or 5 (rails 4-7)."""
    fabric = synthetic.rail_fabric(256, radix=16)
    leaves = [d for d in fabric.devices if d.role == "leaf"]
    host_ports = {(b, bp) for a, _, b, bp in fabric.links if a.startswith("gpu-")}
    faults = [
        Fault(leaf.name, "dscp_to_priority.26", 4 if (leaf.rail or 0) < 4 else 5, port)
        for leaf in leaves
        for port in (synthetic.port_name(leaf.platform, i) for i in range(leaf.ports))
        if (leaf.name, port) in host_ports
    ]
    report = check_fabric(tmp_path, fabric, faults)
    problems = report.outcome.problems
    findings = [r for r in report.outcome.results.problems if r.status in (Status.FAIL, Status.ERROR)]
    check_partition(findings, problems)
    assert len(findings) > 4 * len(faults) // 2  # several findings per wrong port
    assert len(problems) == 2, [p.cause for p in problems]
    four, five = sorted(problems, key=lambda p: p.cause)
    assert four.kind == five.kind == "fleet"
    assert "26 -> 4" in four.cause and "26 -> 5" in five.cause
    assert four.cause == (
        f"traffic classification: plane 0: {len(leaves) // 2} leaves ({len(faults) // 2} ports): "
        "dscp_to_priority 26 -> 4 (expected 3)"
    )
    assert four.location["planes"] == [0] and four.location["roles"] == ["leaf"]
    # the hosts' own findings (host-tos-fabric, their end of link-dscp-map) ride along
    assert {r.check for r in four.findings} == {"switch-dscp-roce", "link-dscp-map", "host-tos-fabric"}


# --------------------------------------------------------------------------------------------
# the grouping rules on hand-made findings


def fail(check: str, device: str, subject: str | None, message: str = "", **kw: Any) -> Result:
    return Result(check, device, subject, Status.FAIL, Severity.MAJOR, kw.get("expected"), kw.get("actual"),
                  message or f"{device} {subject}: {check} failed")  # fmt: skip


def test_family_of_known_and_site_rules() -> None:
    assert family_of(fail("switch-mtu", "l", "e")) == family_of(fail("link-mtu", "l", "e")) == "mtu"
    assert family_of(fail("cabling-plan", "l", "e", "l e: port down; plan line 3 says s x")) == "port-state"
    assert family_of(fail("my-ntp", "l", None, expected={"ntp.servers": {"equals": 1}})) == "ntp"
    assert family_of(fail("my-check", "l", None)) == "my-check"
    assert set(FAMILIES.values()) <= {*FAMILIES.values()}


def test_deviation_strips_the_location() -> None:
    r = fail(
        "version-skew", "spine-1", "os_version", "spine-1: os_version 4.31; the majority of spines run 4.32"
    )
    assert deviation(r) == "os_version 4.31; the majority of spines run 4.32"
    assert (
        deviation(fail("host-mtu", "gpu-1", "eth1", "mtu is 1500, expected 9000"))
        == "mtu is 1500, expected 9000"
    )


def test_same_port_different_facts_are_different_problems() -> None:
    a = fail("switch-dscp-roce", "leaf1", "Ethernet8", "dscp_to_priority 26 -> 0 (expected 3)")
    b = fail("fec-uncorrectable", "leaf1", "Ethernet8", "counters.fec_uncorrectable is 17, above max 0")
    problems = group([a, b])
    assert len(problems) == 2


def test_an_unreadable_device_is_one_problem_not_one_per_rule() -> None:
    errs = [Result(c, "gpu-9", None, Status.ERROR, Severity.CRITICAL, None, None, "device unreachable: refused")
            for c in ("host-mtu", "host-pfc-priorities", "host-roce-tos", "device-collection")]  # fmt: skip
    link = Result("link-mtu", "gpu-9", "eth0", Status.ERROR, Severity.CRITICAL, None, None,
                  "link not checked: this device could not be read")  # fmt: skip
    facts = Facts(
        {"gpu-9": DeviceFacts("host", readable=False, status="unreachable"), "leaf1": DeviceFacts("leaf")}
    )
    (p,) = group([*errs, link], facts)
    assert p.status is Status.ERROR and p.severity is Severity.CRITICAL and p.family == "unreadable"
    assert p.cause == "gpu-9 could not be read (unreachable)"


def test_many_unrelated_single_findings_stay_apart_but_same_value_merges() -> None:
    same = [fail("host-mtu", f"gpu-{i}", "eth1", "mtu is 1500, expected 9000") for i in range(5)]
    other = fail("host-mtu", "gpu-9", "eth1", "mtu is 4200, expected 9000")
    facts = Facts({f"gpu-{i}": DeviceFacts("host", plane=1) for i in (*range(5), 9)})
    problems = group([*same, other], facts)
    assert len(problems) == 2
    fleet = next(p for p in problems if p.kind == "fleet")
    assert fleet.cause == "MTU: plane 1: 5 hosts: mtu is 1500, expected 9000"
    assert fleet.location["devices"] == [f"gpu-{i}" for i in range(5)]


# --------------------------------------------------------------------------------------------
# invariants on random result sets

CHECKS = [*FAMILIES, "site-rule", "other-check"]
DEVICES = [f"d{i}" for i in range(6)]
PORTS = ["e0", "e1", "e2", None, "bandwidth", "uplinks"]


@st.composite
def result_sets(draw: st.DrawFn) -> tuple[list[Result], Facts]:
    n = draw(st.integers(0, 40))
    results = []
    for _ in range(n):
        check = draw(st.sampled_from(CHECKS))
        dev = draw(st.sampled_from([*DEVICES, "(fabric)"]))
        port = draw(st.sampled_from(PORTS))
        status = draw(st.sampled_from(list(Status)))
        expected: Any = None
        if draw(st.booleans()):
            expected = {
                "peer_device": draw(st.sampled_from(DEVICES)),
                "peer_interface": draw(st.sampled_from(["e0", "e1"])),
            }
        actual: Any = None
        if check == "clos-shape" and draw(st.booleans()):
            actual = [f"no link to {draw(st.sampled_from(DEVICES))}"]
        msg = draw(
            st.sampled_from(["x is 1", "x is 2", f"{dev} {port}: y", f"{dev}: z", "device unreachable"])
        )
        sev = draw(st.sampled_from(list(Severity)))
        results.append(Result(check, dev, port, status, sev, expected, actual, msg))
    devices = {
        d: DeviceFacts(draw(st.sampled_from(["leaf", "spine", "host"])), draw(st.sampled_from([None, 0, 1])),
                       draw(st.booleans()), "ok", draw(st.booleans()))
        for d in DEVICES
    }  # fmt: skip
    peers = {
        (d, p): (draw(st.sampled_from(DEVICES)), "e0")
        for d in DEVICES
        for p in ("e0", "e1")
        if draw(st.booleans())
    }
    planned = {(d, "e2"): (draw(st.sampled_from(DEVICES)), "e2", 1) for d in DEVICES if draw(st.booleans())}
    return results, Facts(devices, peers, planned)


@settings(max_examples=300, deadline=None)
@given(result_sets(), st.randoms())
def test_every_finding_is_in_exactly_one_problem(
    data: tuple[list[Result], Facts], rnd: random.Random
) -> None:
    results, facts = data
    problems = group(results, facts)
    check_partition(results, problems)
    for p in problems:
        assert p.findings
        assert p.severity == max(r.severity for r in p.findings)
        assert p.status is (Status.FAIL if any(r.status is Status.FAIL for r in p.findings) else Status.ERROR)
        assert p.cause and p.where is not None
    # deterministic and order-independent: the same problems (ids and members) for any input order
    shuffled = results[:]
    rnd.shuffle(shuffled)
    again = group(shuffled, facts)
    assert sorted((p.id, sorted(map(id, p.findings))) for p in again) == sorted(
        (p.id, sorted(map(id, p.findings))) for p in problems
    )
    assert len({p.id for p in problems}) == len(problems)


# --------------------------------------------------------------------------------------------
# the reports lead with problems; the history keeps them


def test_reports_lead_with_problems(twelve: tuple[Report, list[Any]], tmp_path: Path) -> None:
    from io import StringIO

    from rich.console import Console

    from fabline.reports import write_reports
    from fabline.reports.console import print_summary

    report, _ = twelve
    n_findings = sum(len(p.findings) for p in report.problems)
    head = f"12 problems ({n_findings} findings)"
    buf = StringIO()
    print_summary(report, Console(file=buf, width=200, color_system=None))
    text = buf.getvalue()
    assert text.startswith(head), text[:200]
    assert "MTU: leaf-r1-a swp3: mtu is 1500, below min 9100" in text
    assert "inspect: leaf-r0-a Ethernet24 (peer spine-02 Ethernet1/1, plan line 5)" in text
    write_reports(report, ["json", "md", "html", "junit"], tmp_path)
    doc = json.loads((tmp_path / "report.json").read_text())
    assert [p["id"] for p in doc["problems"]] == [p.id for p in report.problems]
    findings = sorted(r["id"] for r in doc["results"] if r["status"] in ("fail", "error"))
    assert sorted(f for p in doc["problems"] for f in p["findings"]) == findings
    assert all(p["count"] == len(p["findings"]) for p in doc["problems"])
    md = (tmp_path / "report.md").read_text()
    assert md.index(f"## {head}") < md.index("| results |") < md.index("## Findings by check")
    html = (tmp_path / "report.html").read_text()
    assert html.index(head) < html.index("<h2>Failures by check</h2>")
    assert html.count("data-problem=") == 12
    # JUnit: one failing test case per check and device with findings, naming each failing subject
    junit = ET.fromstring((tmp_path / "report.junit.xml").read_text())
    failing = {(r.check, r.device) for r in report.findings()}
    cases = {
        (c.get("classname", "").removeprefix("fabline."), c.get("name")): c
        for c in junit.iter("testcase")
        if c.find("failure") is not None or c.find("error") is not None
    }
    assert set(cases) == failing
    for r in report.findings():
        verdict = cases[(r.check, r.device)].find("failure")
        verdict = verdict if verdict is not None else cases[(r.check, r.device)].find("error")
        assert verdict is not None and f"{r.subject or '-'} [{r.status.value}]: " in (verdict.text or "")


def test_history_keeps_problems_and_regroups_old_runs(
    twelve: tuple[Report, list[Any]], tmp_path: Path
) -> None:
    from fabline.history import record
    from fabline.history.store import HistoryStore

    report, _ = twelve
    db = tmp_path / "h.sqlite"
    record(report, Path(report.snapshot), db)
    with HistoryStore(db, create=False) as store:
        run = store.resolve("last")
        again = store.report(run)
        assert [p.to_dict() for p in again.problems] == [p.to_dict() for p in report.problems]
        # a run recorded before problems were: regrouped from its results (no link facts)
        store.conn.execute("DELETE FROM problems")
        assert store.problem_rows(run) is None
        regrouped = store.problem_groups(run)
    check_partition(store_findings := [r for p in regrouped for r in p.findings], regrouped)
    assert len(store_findings) == sum(len(p.findings) for p in report.problems)
    assert len(regrouped) >= 12


# ----------------------------------------------------------- blocks of errors (issue 14 noticed item)


def _error_block(
    device: str, ports: Sequence[str], message: str = "fec not collected at the peer"
) -> SkipBlock:
    return SkipBlock("link-fec", device, Severity.MAJOR, list(ports), message, Status.ERROR)


def test_a_blocks_subjects_are_the_problems_ports() -> None:
    """A block of errors on three ports is a problem at those ports, not a device-level one."""
    (p,) = group([_error_block("leaf1", ["Ethernet0", "Ethernet4", "Ethernet8"])])
    assert p.kind == "ports"
    assert p.location == {"devices": ["leaf1"], "ports": [("leaf1", "Ethernet0"), ("leaf1", "Ethernet4"),
                                                          ("leaf1", "Ethernet8")]}  # fmt: skip
    assert p.where == "leaf1 Ethernet0, Ethernet4, Ethernet8"
    assert p.cause == "FEC mode: leaf1 Ethernet0..Ethernet8/4 (3): fec not collected at the peer"
    # with a port finding of the same fact on the device, the block joins it: all their ports are listed
    one = Result("switch-fec-rs", "leaf1", "Ethernet9", Status.FAIL, Severity.MAJOR, None, None, "fec is fc")
    (q,) = group([_error_block("leaf1", ["Ethernet0", "Ethernet4"]), one])
    assert q.location["ports"] == [("leaf1", "Ethernet0"), ("leaf1", "Ethernet4"), ("leaf1", "Ethernet9")]


def test_a_large_blocks_ports_are_bounded_with_a_count() -> None:
    ports = [f"Ethernet{n}" for n in range(0, 4000, 4)]  # 1,000 ports of one device
    (p,) = group([_error_block("leaf1", ports)])
    assert p.kind == "ports" and len(p.location["ports"]) == MAX_LOCATION_PORTS == 64
    assert p.location["ports_total"] == 1000
    assert p.location["ports"] == sorted(("leaf1", s) for s in ports)[:64]
    assert p.where.endswith(" and 994 more")
    doc = json.loads(json.dumps(p.to_dict()))
    assert doc["location"]["ports_total"] == 1000 and doc["location"]["ports"][0] == ["leaf1", "Ethernet0"]
    assert len(json.dumps(doc)) < 5000


def test_blocks_on_many_devices_are_one_fleet_problem_listing_their_ports_bounded() -> None:
    blocks = [_error_block(f"leaf{i:03}", [f"Ethernet{n}" for n in range(0, 128, 4)]) for i in range(100)]
    facts = Facts({b.device: DeviceFacts("leaf", plane=0) for b in blocks})
    (p,) = group(blocks, facts)
    assert p.kind == "fleet" and p.cause.startswith("FEC mode: plane 0: 100 leaves (3200 ports): ")
    assert p.location["ports_total"] == 3200 and len(p.location["ports"]) == 64
    assert p.location["ports"][0] == ("leaf000", "Ethernet0")
    check_partition(blocks, [p])
