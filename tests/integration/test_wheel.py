"""A non-editable install carries everything `fabline init` and the default baseline need."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

from tests.conftest import REPO_ROOT


def test_wheel_works_outside_the_clone(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(dist), str(REPO_ROOT)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    (wheel,) = dist.glob("fabline-*.whl")
    # Lean: the real device samples are test data (tests/samples), never package data.
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
    assert any(n.startswith("fabline/_workspace/baseline/") for n in names)  # the listing is real
    assert not [n for n in names if "samples/" in n or n.startswith("tests/")], "test data in the wheel"
    assert wheel.stat().st_size < 2_000_000  # the samples alone are 2.8 MB
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site), str(wheel)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PYTHONPATH": str(site)}

    def fabline(*args: str, cwd: Path = elsewhere) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "fabline", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120,
            check=False,
        )  # fmt: skip

    where = subprocess.run(
        [sys.executable, "-c", "import fabline; print(fabline.__file__)"], cwd=elsewhere, env=env,
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert where.stdout.startswith(str(site)), where.stdout  # the wheel, not the checkout
    assert fabline("init", "ws").returncode == 0
    ws = elsewhere / "ws"
    assert (ws / "baseline" / "roce.yml").read_text() == (REPO_ROOT / "baseline" / "roce.yml").read_text()
    # No baseline/ in the current folder: the packaged default applies.
    proc = fabline(
        "check",
        "-i",
        "ws/inventory/lab.yml",
        "--snapshot",
        "ws/examples/lab-snapshot",
        "-o",
        "out",
        "-f",
        "json",
    )
    assert proc.returncode == 4, proc.stdout + proc.stderr
    report = json.loads((elsewhere / "out" / "report.json").read_text())
    (baseline,) = report["run"]["baselines"]
    assert baseline.startswith(str(site)) and baseline.endswith("_workspace/baseline/roce.yml")
    assert report["summary"]["by_status"]["fail"] >= 9
    # Inside the new workspace its own baseline/ and checks/ are used.
    inside = fabline("check", "-i", "inventory/lab.yml", "--snapshot", "examples/lab-snapshot", "-q", cwd=ws)
    assert inside.returncode == 4
    listed = fabline("checks", "list", "--json", cwd=ws)
    assert "hostname-matches-inventory" in {r["id"] for r in json.loads(listed.stdout)}
