"""``fabline drift`` with live collection: the nightly job against the in-process simulator.

Network: 127.0.0.0/8 only (the simulator listens on loopback addresses).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from fabline import synthetic
from fabline.cli import main
from fabline.sim import run_simulator

PASSWORD = "drift-Pw-93c1a7"
PASSWORD_ENV = "FABLINE_TEST_DRIFT_PASSWORD"


def _cli(*args: Any) -> Any:
    return CliRunner().invoke(main, [str(a) for a in args], env={PASSWORD_ENV: PASSWORD, "COLUMNS": "200"})


def test_drift_collects_checks_records_and_compares(tmp_path: Path) -> None:
    fabric = synthetic.lab_fabric()
    for _ in range(20):
        try:
            cm = run_simulator(
                fabric, (), password=PASSWORD, address_base="127.47", port=random.randint(20000, 60000)
            )
            sim = cm.__enter__()
            break
        except OSError:
            continue
    else:
        raise RuntimeError("no free port for the simulator")
    try:
        inv = tmp_path / "inv.yml"
        inv.write_text(yaml.safe_dump(sim.inventory(password_env=PASSWORD_ENV), sort_keys=False))
        db = tmp_path / "history.sqlite"
        known_hosts = tmp_path / "known_hosts"
        common = ["drift", "-i", inv, "--db", db, "--known-hosts", known_hosts]
        first = _cli(*common, "--collect-to", tmp_path / "night1")
        # The first night exits with the check's own code (the site check in ./checks errors on hosts).
        assert first.exit_code in (0, 3, 4), first.output + repr(first.exception)
        assert (tmp_path / "night1" / "state" / "leaf-r0-a.json").is_file()
        # collect's options, as collect takes them.
        second = _cli(*common, "--collect-to", tmp_path / "night2", "-o", tmp_path / "out", "-f", "json",
                      "--workers", "3", "--timeout", "7.5", "--command-timeout", "20", "--max-output", "1M")  # fmt: skip
        bad = _cli(*common, "--collect-to", tmp_path / "night3", "--timeout", "nan")
    finally:
        cm.__exit__(None, None, None)
    # The first night recorded the devices' host keys where --known-hosts said (trust on first use).
    host, port = sim.addresses["leaf-r0-a"]
    assert f"[{host}]:{port} " in known_hosts.read_text()
    options = json.loads((tmp_path / "night2" / "manifest.json").read_text())["options"]
    assert (
        options["workers"],
        options["timeout_s"],
        options["command_timeout_s"],
        options["max_output_bytes"],
    ) == (3, 7.5, 20.0, 1024 * 1024)
    assert options["host_key_policy"] == "accept-new"
    assert bad.exit_code == 2
    assert bad.output.strip().splitlines()[-1] == (
        "fabline: error: --timeout must be a positive, finite number of seconds, got nan"
    )
    assert not (tmp_path / "night3").exists()
    assert second.exit_code == 0, second.output  # same fabric twice: nothing new
    diff = json.loads((tmp_path / "out" / "diff.json").read_text())
    assert diff["devices_compared"] == len(fabric.devices)
    assert diff["new_failures"] == [] and diff["new_errors"] == []
    assert all(not c["path"].endswith("collected_at") for c in diff["changes"])
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["run"]["snapshot"] == str(tmp_path / "night2")
    runs = json.loads(_cli("history", "--db", db, "--json").output)
    assert [r["snapshot"] for r in runs] == [str(tmp_path / "night1"), str(tmp_path / "night2")]
