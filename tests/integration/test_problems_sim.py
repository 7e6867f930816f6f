"""The twelve planted faults of issue 17, served by the simulator and collected over real SSH.

The same faults as ``tests/unit/test_problems.py`` (synthetic states), but each device answers its
own platform's commands on a loopback address, the real collectors read them and the real parsers
turn them into states: the problems must come out the same. Network: 127.0.0.0/8 only.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from fabline import synthetic
from fabline.runner import run_check
from tests.integration.test_collect_sim import PASSWORD, PASSWORD_ENV, cli, simulator
from tests.unit.test_problems import BASELINE, lab_faults, where


def test_twelve_faults_over_ssh_give_twelve_problems(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    intended, built, faults = lab_faults()
    planted = [f for _, fs, _ in faults for f in fs]
    inv = tmp_path / "inv.yml"
    snap = tmp_path / "snap"
    with simulator(built, planted, base="127.47") as sim:
        inv.write_text(yaml.safe_dump(sim.inventory(password_env=PASSWORD_ENV), sort_keys=False))
        result = cli("collect", "-i", inv, "-o", snap, "--timeout", "5", "--known-hosts", tmp_path / "kh")
        assert result.exit_code == 0, result.output
    cabling = tmp_path / "cabling.csv"
    cabling.write_text(synthetic.cabling_plan_csv(intended))
    monkeypatch.setenv(PASSWORD_ENV, PASSWORD)
    report, _ = run_check(
        inventory=inv, snapshot=snap, baselines=[BASELINE], checks_dir=None, limit=None, out=None,
        formats=[], fail_on="minor", cabling=cabling,
    )  # fmt: skip
    problems = report.problems
    assert len(problems) == 12, "\n".join(f"{p.cause} {sorted(where(p), key=str)}" for p in problems)
    for name, _, spot in faults:
        holding = [p for p in problems if spot in where(p)]
        assert len(holding) == 1, (name, [p.cause for p in holding])
