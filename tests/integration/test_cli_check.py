"""`fabline check` end to end, as a user runs it: real files, a real process, real exit codes."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from fabline import synthetic
from tests.conftest import REPO_ROOT

INVENTORY = REPO_ROOT / "inventory" / "lab.yml"
EXAMPLE = REPO_ROOT / "examples" / "lab-snapshot"
GOLDEN = REPO_ROOT / "tests" / "golden"


def fabline(
    *args: str | Path, cwd: Path = REPO_ROOT, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the real CLI in a subprocess."""
    full_env = {**os.environ, "COLUMNS": "200", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "fabline", *map(str, args)],
        cwd=cwd, env=full_env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    """The single stderr line of a failed command (asserting there is no traceback)."""
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stderr
    return lines[0]


def test_example_snapshot_reports_exactly_the_planted_faults(tmp_path: Path) -> None:
    proc = fabline(
        "check", "-i", INVENTORY, "--snapshot", EXAMPLE, "--out", tmp_path, "--format", "json,junit,md"
    )
    assert proc.returncode == 4, proc.stderr
    assert "verdict: FAIL (exit 4)" in proc.stdout
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["schema"] == "fabline.report/3"
    fails = {(r["check"], r["device"], r["subject"]) for r in report["results"] if r["status"] == "fail"}
    assert fails == {
        ("host-mtu", "gpu-002", "eth1"),
        ("host-roce-tos", "gpu-001", "eth2"),
        ("switch-pfc-priorities", "leaf-r1-a", "swp1"),
        ("switch-dscp-roce", "leaf-r2-a", "Ethernet2/1"),
        ("switch-fec-rs", "leaf-r3-a", "Ethernet1/3"),
        ("switch-pfc-watchdog", "spine-02", None),
        ("optics-rx-power", "gpu-002", "eth3"),
        ("optics-rx-power-margin", "gpu-002", "eth3"),
        ("fec-uncorrectable", "leaf-r0-a", "Ethernet8"),
        # fabric checks: each link fault at both ends of its link
        ("link-pfc", "leaf-r1-a", "swp1"),
        ("link-pfc", "gpu-001", "eth1"),
        ("link-dscp-map", "leaf-r2-a", "Ethernet2/1"),
        ("link-dscp-map", "gpu-002", "eth2"),
        ("link-fec", "leaf-r3-a", "Ethernet1/3"),
        ("link-fec", "spine-01", "Ethernet4/1"),
        # host ToS 104 has no ECN capability; gpu-002's correct ToS 106 (and its NCCL_IB_TC) is
        # lossy on the rail whose leaf port remapped DSCP 26
        ("host-tos-fabric", "gpu-001", "eth2"),
        ("host-tos-fabric", "gpu-002", "eth2"),
        ("host-tos-fabric", "gpu-002", "NCCL_IB_TC"),
    }
    assert len(synthetic.LAB_FAULTS) == 9  # one fault (DSCP 24 -> 3) shares a result with DSCP 26's
    assert report["summary"]["by_status"]["error"] == 0
    ids = [r["id"] for r in report["results"]]
    assert len(ids) == len(set(ids))
    assert (
        sum(n for by in report["passes"].values() for n in by.values())
        == report["summary"]["by_status"]["pass"]
    )
    junit = ET.parse(tmp_path / "report.junit.xml").getroot()
    cases = junit.findall(".//testcase")
    assert len({(c.get("classname"), c.get("name")) for c in cases}) == len(cases)
    # one failing test case per check and device with a failure (18 findings on 17 of them)
    failing = {(f"fabline.{c}", d) for c, d, _ in fails}
    assert {(c.get("classname"), c.get("name")) for c in cases if c.find("failure") is not None} == failing
    assert int(junit.get("failures", "0")) == len(failing) == 17
    md = (tmp_path / "report.md").read_text()
    assert md.startswith("# fabline compliance report: FAIL")
    assert "### `host-roce-tos` (critical): 1 failed, 0 errors" in md


def _sanitize(text: str) -> str:
    """Replace run times and machine paths so golden files are stable."""
    text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "<TIME>", text)
    text = re.sub(r'("duration_s": )[0-9.]+', r"\g<1><DURATION>", text)
    text = re.sub(r'(time=")[0-9.]+', r"\g<1><DURATION>", text)
    return text.replace(str(REPO_ROOT), "<REPO>")


@pytest.mark.parametrize("name", ["report.json", "report.junit.xml", "report.md"])
def test_report_golden_files(tmp_path: Path, name: str) -> None:
    proc = fabline(
        "check", "-i", "inventory/lab.yml", "--snapshot", "examples/lab-snapshot", "-o", tmp_path, "-q"
    )
    assert proc.returncode == 4
    got = _sanitize((tmp_path / name).read_text())
    golden = GOLDEN / name
    if os.environ.get("FABLINE_UPDATE_GOLDEN"):
        golden.write_text(got)
    assert got == golden.read_text(), f"{name} differs from {golden} (FABLINE_UPDATE_GOLDEN=1 to re-record)"


def _clean_lab(tmp_path: Path) -> Path:
    snap = tmp_path / "clean"
    synthetic.write_snapshot(synthetic.lab_fabric(), snap)
    return snap


def test_clean_fabric_exits_zero(tmp_path: Path) -> None:
    proc = fabline("check", "-i", INVENTORY, "--snapshot", _clean_lab(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "verdict: PASS (exit 0)" in proc.stdout


def test_errors_without_failures_exit_three_and_name_the_device(tmp_path: Path) -> None:
    snap = _clean_lab(tmp_path)
    (snap / "state" / "leaf-r1-a.json").unlink()
    (snap / "state" / "gpu-002.json").write_text('{"schema": "fabline.state/1", "name": "gpu-0')
    proc = fabline("check", "-i", INVENTORY, "--snapshot", snap, "-o", tmp_path / "r", "-f", "json")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    devices = {d["name"]: d["status"] for d in report["devices"]}
    assert devices["leaf-r1-a"] == "missing"
    assert devices["gpu-002"] == "error"
    errs = {r["device"] for r in report["results"] if r["status"] == "error"}
    assert errs == {"leaf-r1-a", "gpu-002"}
    passed = {device for by_device in report["passes"].values() for device in by_device}
    assert not passed & errs
    assert "leaf-r0-a" in passed


def test_fail_on_threshold(tmp_path: Path) -> None:
    snap = tmp_path / "snap"
    synthetic.write_snapshot(
        synthetic.lab_fabric(), snap, [synthetic.Fault("spine-01", "qos.pfc_watchdog.enabled", False)]
    )
    assert fabline("check", "-i", INVENTORY, "--snapshot", snap, "-q").returncode == 4
    assert (
        fabline("check", "-i", INVENTORY, "--snapshot", snap, "-q", "--fail-on", "critical").returncode == 0
    )


def test_limit_checks_only_matching_devices(tmp_path: Path) -> None:
    proc = fabline(
        "check",
        "-i",
        INVENTORY,
        "--snapshot",
        EXAMPLE,
        "-l",
        "fabric:!leaf-r2-a",
        "-o",
        tmp_path,
        "-f",
        "json",
        "-q",
    )
    report = json.loads((tmp_path / "report.json").read_text())
    assert {d["name"] for d in report["devices"]} == {
        "spine-01",
        "spine-02",
        "leaf-r0-a",
        "leaf-r1-a",
        "leaf-r3-a",
    }
    assert proc.returncode == 4


def test_baseline_overlay_and_waiver_file(tmp_path: Path) -> None:
    overlay = tmp_path / "site.yml"
    overlay.write_text(
        "rules:\n"
        "  - {id: optics-rx-power-margin, enabled: false}\n"
        "  - {id: switch-pfc-watchdog, severity: info}\n"
        "waivers:\n"
        "  - {rule: host-*, devices: 'gpu-00?', reason: 'hosts re-imaged in CHG-42', expires: 2099-01-01}\n"
    )
    proc = fabline(
        "check", "-i", INVENTORY, "--snapshot", EXAMPLE, "-b", "baseline/roce.yml", "-b", overlay,
        "-o", tmp_path, "-f", "json", "-q",
    )  # fmt: skip
    report = json.loads((tmp_path / "report.json").read_text())
    by = {(r["check"], r["device"], r["subject"]): r for r in report["results"]}
    assert ("optics-rx-power-margin", "gpu-002", "eth3") not in by
    assert by[("switch-pfc-watchdog", "spine-02", None)]["severity"] == "info"
    assert by[("host-mtu", "gpu-002", "eth1")]["status"] == "waived"
    assert by[("host-mtu", "gpu-002", "eth1")]["waiver"] == "hosts re-imaged in CHG-42"
    assert proc.returncode == 4  # switch faults remain


@pytest.mark.parametrize(
    ("args", "expect"),
    [
        (["-i", "nope.yml", "--snapshot", "examples/lab-snapshot"], "nope.yml"),
        (["-i", "inventory/lab.yml", "--snapshot", "nowhere"], "nowhere: snapshot folder not found"),
        (["-i", "inventory/lab.yml", "--snapshot", "inventory"], "inventory: snapshot has no state/ folder"),
        (
            ["-i", "inventory/lab.yml", "--snapshot", "examples/lab-snapshot", "-b", "missing.yml"],
            "missing.yml: baseline not found",
        ),
        (["-i", "inventory/lab.yml", "--snapshot", "examples/lab-snapshot", "-l", "nomatch*"], "nomatch"),
    ],
)
def test_bad_input_is_one_line_exit_two(args: list[str], expect: str) -> None:
    proc = fabline("check", *args)
    assert proc.returncode == 2
    line = one_line_error(proc)
    assert line.startswith("fabline: error: ")
    assert expect in line


@pytest.mark.parametrize(
    ("baseline", "expect"),
    [
        (
            "rules:\n  - id: x\n    description: d\n    severity: major\n    expect: [{path: mtu, equals: 1}\n",
            "bad.yml:6: malformed YAML: expected ',' or ']', but got '<stream end>' (while parsing a flow sequence that starts at line 5)",
        ),
        (
            "rules:\n  - id: x\n    descripton: d\n    severity: major\n    expect: [{path: mtu, equals: 1}]\n",
            "bad.yml:3: rules[0].descripton: unknown key (did you mean 'description'?)",
        ),
        (
            "rules:\n  - id: x\n    description: d\n    severity: major\n    expect:\n      - {path: mtu, equal: 1}\n",
            "bad.yml:6: rules[0].expect[0].equal: unknown key (did you mean 'equals'?)",
        ),
        (
            "rules:\n  - id: x\n    description: d\n    severity: huge\n    expect: [{path: mtu, equals: 1}]\n",
            "bad.yml:4: rules[0].severity: Input should be 'critical', 'major', 'minor' or 'info'",
        ),
        (
            "rules:\n  - id: x\n    description: d\n    severity: major\n    expect: [{path: mtu, regex: '('}]\n",
            "invalid regex",
        ),
        (
            "rules:\n  - id: x\n    description: d\n    severity: major\n    expect: [{path: mtu, min: [1]}]\n",
            "bad.yml:5: rules[0].expect[0].min",
        ),
        ("rules:\n  - id: not-a-check\n    severity: major\n", "not-a-check"),
        ("rules: {}\n", "bad.yml:1: rules: Input should be a valid list"),
        ("- 1\n", "bad.yml: a baseline file is a mapping"),
        ("waivers:\n  - {rule: x, reason: ''}\n", "bad.yml:2: waivers[0].reason: a waiver needs a reason"),
        ("waivers:\n  - {rule: x, reason: r, expires: someday}\n", "bad.yml:2: waivers[0].expires"),
    ],
)
def test_bad_baseline_names_file_line_and_key(tmp_path: Path, baseline: str, expect: str) -> None:
    bad = tmp_path / "bad.yml"
    bad.write_text(baseline)
    proc = fabline("validate", "-i", INVENTORY, "-b", bad, cwd=tmp_path)
    assert proc.returncode == 2
    line = one_line_error(proc)
    assert expect in line.replace(str(tmp_path) + "/", "")


def test_validate_ok_and_snapshot_schema(tmp_path: Path) -> None:
    proc = fabline("validate", "-i", INVENTORY, "--snapshot", EXAMPLE)
    assert proc.returncode == 0, proc.stderr
    assert "8 devices" in proc.stdout
    snap = tmp_path / "s"
    shutil.copytree(EXAMPLE, snap)
    doc = json.loads((snap / "state" / "leaf-r0-a.json").read_text())
    doc["interfaces"]["Ethernet0"]["fec"] = "reed-solomon"
    (snap / "state" / "leaf-r0-a.json").write_text(json.dumps(doc))
    proc = fabline("validate", "-i", INVENTORY, "--snapshot", snap)
    assert proc.returncode == 2
    assert "leaf-r0-a.json: interfaces.Ethernet0.fec: 'reed-solomon' is not one of" in proc.stderr


def test_internal_error_is_one_line_exit_one(tmp_path: Path) -> None:
    checks = tmp_path / "checks"
    checks.mkdir()
    (checks / "boom.py").write_text(
        "from fabline.checks import Check\n"
        "class Boom(Check):\n"
        "    '''Explodes in its constructor.'''\n"
        "    id = 'boom'\n"
        "    def __init__(self, params=None, severity=None):\n"
        "        raise RuntimeError('kaboom')\n"
    )
    proc = fabline("check", "-i", INVENTORY, "--snapshot", EXAMPLE, "--checks", checks)
    assert proc.returncode == 2  # a site check that cannot be built is a configuration error
    assert "boom" in one_line_error(proc)


def test_site_check_import_error_names_file_and_line(tmp_path: Path) -> None:
    checks = tmp_path / "checks"
    checks.mkdir()
    (checks / "bad.py").write_text("import os\n\nraise ValueError('nope')\n")
    proc = fabline("validate", "-i", INVENTORY, "--checks", checks)
    assert proc.returncode == 2
    assert one_line_error(proc).endswith("bad.py:3: cannot import: ValueError: nope")


def test_secrets_never_reach_output_or_reports(tmp_path: Path) -> None:
    secret = "s3cr3t-Pa55"
    env = {"FABLINE_LAB_PASSWORD": secret}
    runs = [
        fabline("check", "-i", INVENTORY, "--snapshot", EXAMPLE, "-o", tmp_path, env=env),
        fabline("inventory", "-i", INVENTORY, "--host", "leaf-r0-a", env=env),
        fabline("inventory", "-i", INVENTORY, env=env),
    ]
    for proc in runs:
        assert secret not in proc.stdout + proc.stderr
    assert "********" in runs[1].stdout
    for f in tmp_path.iterdir():
        assert secret not in f.read_text()


def test_checks_list_json_has_every_rule_with_description() -> None:
    proc = fabline("checks", "list", "--json")
    assert proc.returncode == 0
    rows = json.loads(proc.stdout)
    ids = [r["id"] for r in rows]
    assert "host-roce-tos" in ids and "device-collection" in ids and "hostname-matches-inventory" in ids
    assert all(r["description"] and r["severity"] in ("critical", "major", "minor", "info") for r in rows)


def test_parse_command_prints_fragment(samples: Path) -> None:
    proc = fabline(
        "parse",
        "--platform",
        "sonic",
        "--command",
        "show interfaces status",
        samples / "sonic" / "show_interfaces_status-cmdref.txt",
    )
    assert proc.returncode == 0, proc.stderr
    frag = json.loads(proc.stdout)
    assert frag["interfaces"]["Ethernet0"]["mtu"] == 9100
    bad = fabline(
        "parse", "--platform", "sonic", "--command", "show interfaces status", samples / "MANIFEST.md"
    )
    assert bad.returncode == 2
    assert "sonic: 'show interfaces status': expected" in one_line_error(bad)
    denied = fabline(
        "parse",
        "--platform",
        "linux",
        "--command",
        "mlnx_qos -i eth0 --pfc 0,0,0,1,0,0,0,0",
        samples / "MANIFEST.md",
    )
    assert denied.returncode == 2
    assert "read-only allow-list" in one_line_error(denied)


def test_init_creates_a_workspace_that_checks(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    proc = fabline("init", ws)
    assert proc.returncode == 0, proc.stderr
    for part in (
        "inventory/lab.yml",
        "baseline/roce.yml",
        "checks/hostname_matches_inventory.py",
        "examples/lab-snapshot/state/gpu-001.json",
        "reports",
        ".gitignore",
    ):
        assert (ws / part).exists(), part
    run = fabline("check", "-i", "inventory/lab.yml", "--snapshot", "examples/lab-snapshot", "-q", cwd=ws)
    assert run.returncode == 4
    again = fabline("init", ws)
    assert again.returncode == 2
    assert "not empty" in one_line_error(again)


def test_a_command_line_process_ends_without_teardown_but_flushes_and_runs_exit_handlers(
    tmp_path: Path,
) -> None:
    """The ``fabline`` process ends with ``os._exit`` after a check (no freeing of the run's objects),
    yet everything a normal exit does for the user still happens: piped output complete, exit
    handlers run, the exit code kept; a caller that passes arguments keeps its process."""
    marker = tmp_path / "atexit-ran"
    script = (
        "import atexit, sys\n"
        f"atexit.register(lambda: open({str(marker)!r}, 'w').write('yes'))\n"
        "from fabline.cli import main\n"
        f"sys.argv = ['fabline', 'check', '-i', {str(INVENTORY)!r}, '--snapshot', {str(EXAMPLE)!r},"
        f" '--out', {str(tmp_path / 'out')!r}, '--format', 'json,md']\n"
        "main()\n"
        "print('not reached')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO_ROOT, env={**os.environ, "COLUMNS": "200"},
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 4, proc.stderr
    assert "verdict: FAIL (exit 4)" in proc.stdout
    assert proc.stdout.rstrip().endswith("report.md"), proc.stdout  # the last line flushed
    assert marker.read_text() == "yes"
    assert json.loads((tmp_path / "out" / "report.json").read_text())["summary"]["by_status"]["fail"] > 0
    caller = (
        "from fabline.cli import main\n"
        "try:\n"
        f"    main(['check', '-i', {str(INVENTORY)!r}, '--snapshot', {str(EXAMPLE)!r}, '-q'])\n"
        "except SystemExit as exc:\n"
        "    print('caller goes on', exc.code)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", caller],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.stdout.strip() == "caller goes on 4", proc.stderr
