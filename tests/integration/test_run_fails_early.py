"""Commands that collect then check say a configuration mistake before they reach any device.

``fabline run`` and ``fabline drift`` (collecting) read the inventory, then prepare the check
(baselines, checks, cabling plan, ``--previous``, the reference run's snapshot) and only then
collect: a typo in the baseline is a one-line error at once, not after an hour of collection.
The inventory's one device is on a closed loopback port: were the collection started, it would
write its snapshot folder (with the device's failure), which these tests require absent.

Network: 127.0.0.1 only (a port nothing listens on).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fabline.cli import main


def _cli(*args: Any) -> Any:
    return CliRunner().invoke(main, [str(a) for a in args], env={"COLUMNS": "200"})


@pytest.fixture
def inventory(tmp_path: Path) -> Path:
    path = tmp_path / "inv.yml"
    path.write_text(
        "all:\n  hosts:\n    gpu-01:\n      ansible_host: 127.0.0.1\n      ansible_port: 1\n"
        "      ansible_user: nobody\n      fabline_role: host\n      fabline_platform: linux\n"
    )
    return path


def _last_line(result: Any) -> str:
    return str(result.output).strip().splitlines()[-1]


def test_run_with_a_baseline_typo_stops_before_collecting(tmp_path: Path, inventory: Path) -> None:
    baseline = tmp_path / "b.yml"
    baseline.write_text("rules:\n  - id: link-mtuu\n    params: {}\n")  # a Python check id, misspelt
    result = _cli("run", "-i", inventory, "-s", tmp_path / "snap", "-o", tmp_path / "out", "-b", baseline)
    assert result.exit_code == 2, result.output
    line = _last_line(result)
    assert line.startswith("fabline: error: ") and str(baseline) in line and "link-mtuu" in line
    assert "did you mean" in line and "link-mtu" in line
    assert not (tmp_path / "snap").exists()


def test_run_with_a_missing_cabling_plan_or_previous_stops_before_collecting(
    tmp_path: Path, inventory: Path
) -> None:
    plan = _cli("run", "-i", inventory, "-s", tmp_path / "snap", "-o", tmp_path / "out",
                "--cabling", tmp_path / "no-plan.csv")  # fmt: skip
    assert plan.exit_code == 2 and "cabling plan not found" in _last_line(plan), plan.output
    previous = _cli("run", "-i", inventory, "-s", tmp_path / "snap", "-o", tmp_path / "out",
                    "--previous", tmp_path / "no-such-snapshot")  # fmt: skip
    assert previous.exit_code == 2 and "snapshot folder not found" in _last_line(previous), previous.output
    assert not (tmp_path / "snap").exists()


def test_drift_with_a_baseline_typo_stops_before_collecting(tmp_path: Path, inventory: Path) -> None:
    baseline = tmp_path / "b.yml"
    baseline.write_text("rules:\n  - id: mtu\n    expect: [{path: mtu, equalz: 9000}]\n")  # no such operator
    result = _cli("drift", "-i", inventory, "--db", tmp_path / "h.sqlite", "--collect-to", tmp_path / "night",
                  "-b", baseline)  # fmt: skip
    assert result.exit_code == 2, result.output
    assert _last_line(result).startswith("fabline: error: ") and str(baseline) in _last_line(result)
    assert not (tmp_path / "night").exists()
