"""The closed loop, as a user runs it: design -> render -> check --intended, and render --diff.

Every platform in both roles (the golden design: SONiC, Cumulus and EOS leaves and spines, GPU
servers) is rendered, parsed back with the platform parsers and checked against the default
baseline. Rules tagged ``operational`` (link up, optics, counters) do not run on intended configs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

GOLDEN_DESIGN = REPO_ROOT / "tests" / "golden" / "configs" / "design.yml"
BASELINE = REPO_ROOT / "baseline" / "roce.yml"


def fabline(*args: str | Path, cwd: Path = REPO_ROOT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "fabline", *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True,
        check=False, timeout=300,
    )  # fmt: skip


@pytest.fixture(scope="module")
def fab(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("fab")
    shutil.copy(GOLDEN_DESIGN, d / "design.yml")
    r = fabline("design", d / "design.yml", "--out", d)
    assert r.returncode == 0, r.stderr
    r = fabline("render", d / "design.yml", "--out", d / "configs")
    assert r.returncode == 0, r.stderr
    assert "rendered 14 configs" in r.stdout
    return d


def check(fab: Path, configs: Path, out: Path, *extra: str) -> tuple[int, dict[str, object]]:
    r = fabline(
        "check", "-i", fab / "inventory.yml", "--intended", configs, "--cabling", fab / "cabling.csv",
        "-b", BASELINE, *extra, "-o", out, "-f", "json", "-q",
    )  # fmt: skip
    assert r.returncode in (0, 3, 4), r.stderr
    return r.returncode, json.loads((out / "report.json").read_text())


def test_fresh_design_passes(fab: Path, tmp_path: Path) -> None:
    code, report = check(fab, fab / "configs", tmp_path)
    results = report["results"]
    assert isinstance(results, list)
    bad = [
        (r["check"], r["device"], r["subject"], r["message"])
        for r in results
        if r["status"] in ("fail", "error")
    ]
    assert code == 0 and not bad
    passes = report["passes"]
    assert isinstance(passes, dict)
    passed = {(check, device) for check, by_device in passes.items() for device in by_device}
    for device in ("spine-000", "spine-001", "spine-002", "leaf-r0-000", "leaf-r1-000", "leaf-r2-000"):
        for rule in (
            "switch-mtu",
            "switch-pfc-priorities",
            "switch-dscp-roce",
            "switch-ecn-thresholds",
            "switch-fec-rs",
            "switch-pfc-watchdog",
            "link-mtu",
            "link-pfc",
        ):
            assert (rule, device) in passed, (rule, device)
    for rule in ("host-mtu", "host-roce-tos", "host-pfc-priorities", "host-nccl-ib-tc", "rail-cabling"):
        assert (rule, "gpu-00001") in passed, rule
    assert passes["cabling-plan"] and passes["clos-shape"]


def test_operational_rules_do_not_run_on_intended_configs(fab: Path, tmp_path: Path) -> None:
    # "Port is up", optics and counters cannot be judged from a config: those rules stay out.
    code, report = check(fab, fab / "configs", tmp_path)
    results, passes = report["results"], report["passes"]
    assert isinstance(results, list) and isinstance(passes, dict)
    assert code == 0
    ran = {r["check"] for r in results} | set(passes)
    assert ran.isdisjoint(
        {"switch-port-up", "host-link-up", "optics-rx-power", "fec-uncorrectable", "crc-errors"}
    )
    assert {"switch-mtu", "host-mtu", "switch-dscp-roce"} <= ran


def test_check_intended_leaves_no_temporary_folder(fab: Path, tmp_path: Path) -> None:
    # A private TMPDIR: only this run's folders can appear in it. Reports include HTML, which reads
    # the parsed configs' LLDP, so the folder must outlive the report writing and go after it.
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp)}
    args = ["check", "-i", fab / "inventory.yml", "--intended", fab / "configs", "-b", BASELINE, "-q"]
    ok = subprocess.run(
        [sys.executable, "-m", "fabline", *map(str, args), "-o", tmp_path / "out", "-f", "json,html"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    assert "links not drawn" not in (tmp_path / "out" / "report.html").read_text()
    # the reports name what was checked (the configs), not the temporary folder they were parsed into
    doc = json.loads((tmp_path / "out" / "report.json").read_text())
    assert doc["run"]["snapshot"] == str(fab / "configs")
    bad = subprocess.run(  # fails after the configs were parsed: the folder still goes
        [sys.executable, "-m", "fabline", *map(str, args), "--cabling", tmp_path / "no-plan.csv"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert bad.returncode == 2 and "cabling plan not found" in bad.stderr, bad.stderr
    assert list(tmp.glob("fabline-intended-*")) == []


BREAKS = [
    ("leaf-r0-000", "config_db.json", '"pfc_enable": "3"', '"pfc_enable": "3,4"', "switch-pfc-priorities"),
    ("spine-000", "config_db.json", '"26": "3"', '"26": "0"', "switch-dscp-roce"),
    ("leaf-r1-000", "startup.yaml", "probability: 5", "probability: 50", "switch-ecn-probability"),
    ("spine-001", "startup.yaml", "state: enable", "state: disable", "switch-pfc-watchdog"),
    ("spine-002", "startup-config", "mtu 9214", "mtu 1500", "switch-mtu"),
    ("leaf-r2-000", "startup-config", "encoding reed-solomon", "encoding fire-code", "switch-fec-rs"),
    ("gpu-00001", "host.yml", "roce_tos: 106", "roce_tos: 104", "host-roce-tos"),
]


@pytest.mark.parametrize(("device", "file", "old", "new", "rule"), BREAKS, ids=[b[4] for b in BREAKS])
def test_edited_config_fails(
    fab: Path, tmp_path: Path, device: str, file: str, old: str, new: str, rule: str
) -> None:
    configs = tmp_path / "configs"
    shutil.copytree(fab / "configs", configs)
    path = configs / device / file
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    code, report = check(fab, configs, tmp_path / "out")
    results = report["results"]
    assert isinstance(results, list)
    failed = {(r["check"], r["device"]) for r in results if r["status"] == "fail"}
    assert code == 4
    assert (rule, device) in failed


def test_missing_or_broken_config_is_an_error_not_a_pass(fab: Path, tmp_path: Path) -> None:
    configs = tmp_path / "configs"
    shutil.copytree(fab / "configs", configs)
    shutil.rmtree(configs / "spine-003")
    (configs / "leaf-r0-000" / "config_db.json").write_text('{"PORT": ')
    code, report = check(fab, configs, tmp_path / "out")
    results = report["results"]
    assert isinstance(results, list)
    assert code == 3
    for device in ("spine-003", "leaf-r0-000"):
        mine = [r for r in results if r["device"] == device]
        assert mine and not any(r["status"] == "pass" for r in mine)


def test_render_diff(fab: Path, tmp_path: Path) -> None:
    from fabline.design.intended import intended_snapshot
    from fabline.inventory import load_inventory

    running = intended_snapshot(
        fab / "configs", load_inventory(fab / "inventory.yml").devices(None), tmp_path / "run"
    )
    r = fabline("render", fab / "design.yml", "--diff", running)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "leaf-r0-000: in sync" in r.stdout
    state = running / "state" / "leaf-r2-000.json"
    doc = json.loads(state.read_text())
    doc["interfaces"]["Ethernet1/1"]["mtu"] = 1500
    doc["interfaces"]["Ethernet1/1"]["pfc_priorities"] = [3, 4]
    doc["interfaces"]["Ethernet1/1"]["oper_up"] = True  # operational extras are not drift
    state.write_text(json.dumps(doc))
    (running / "state" / "gpu-00002.json").unlink()
    r = fabline("render", fab / "design.yml", "--diff", running)
    assert r.returncode == 4
    assert "leaf-r2-000: 2 difference(s)" in r.stdout
    assert "[interfaces] Ethernet1/1 mtu: intended 9214, running 1500" in r.stdout
    assert "[qos] Ethernet1/1 pfc_priorities: intended [3], running [3, 4]" in r.stdout
    assert "gpu-00002: no running state" in r.stdout
    r = fabline("render", fab / "design.yml", "--diff", running, "--format", "json")
    data = json.loads(r.stdout)
    assert data["leaf-r2-000"]["status"] == "drift" and data["spine-000"]["status"] == "in_sync"
    # BGP: a session to the wrong AS and a missing one, as a collected state shows them
    state = running / "state" / "leaf-r0-000.json"
    doc = json.loads(state.read_text())
    peers = sorted(doc["bgp"]["neighbors"])
    doc["bgp"]["neighbors"][peers[0]]["remote_asn"] = 65999
    doc["bgp"]["neighbors"][peers[0]]["state"] = "active"  # operational: not drift
    del doc["bgp"]["neighbors"][peers[1]]
    state.write_text(json.dumps(doc))
    r = fabline("render", fab / "design.yml", "--diff", running)
    assert r.returncode == 4
    assert "leaf-r0-000: 2 difference(s)" in r.stdout
    assert f"[bgp] {peers[0]} remote_asn: intended 65100, running 65999" in r.stdout
    assert f"[bgp] {peers[1]} (neighbor): intended present, running absent" in r.stdout


def test_design_cli_infeasible_and_json(tmp_path: Path) -> None:
    r = fabline("design", "--gpus", "100000", "--switch-ports", "128", "--out", tmp_path / "x")
    assert r.returncode == 4
    assert "feasible: NO" in r.stdout and "131,072" in r.stdout
    assert not (tmp_path / "x").exists()
    r = fabline("design", "--gpus", "1024", "--switch-ports", "64", "--format", "json")
    data = json.loads(r.stdout)
    assert r.returncode == 0 and (data["leaves"], data["spines"], data["feasible"]) == (32, 16, True)


def test_design_cli_bad_input_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "design.yml"
    bad.write_text(GOLDEN_DESIGN.read_text().replace("  oversubscription: 1", "  oversubscripton: 1"))
    r = fabline("render", bad, "--out", tmp_path / "c")
    assert r.returncode == 2
    assert (
        r.stderr.count("\n") == 1
        and "sizing.oversubscripton: unknown key" in r.stderr
        and "oversubscription" in r.stderr
    )
    r = fabline("design", "--gpus", "0")
    assert r.returncode == 2 and "gpus: must be at least 1" in r.stderr
