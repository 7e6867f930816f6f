"""Cumulus Linux collections follow the switch's release (issue 15, item 1), over real SSH.

The simulator answers as the release a switch claims (``facts.os_version``): 5.x has NVUE and no
NCLU, 4.x has NCLU and no NVUE. The collector sends a command only to the releases NVIDIA
documents it for (``Command.releases``): the release comes from the inventory
(``fabline_os_version``) or from the switch's own ``nv show system``; what a release lacks is a
``not_in_release`` record (not an error), and the state paths only it would give are
``unsupported`` with the reason, so rules needing them are ``skipped``. Network: 127.0.0.0/8 only.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabline import synthetic
from fabline.sim.faults import os_skew
from tests.integration.test_collect_sim import PASSWORD_ENV, cli, simulator, state

LAB = synthetic.lab_fabric()
LEAF = "leaf-r1-a"  # the lab's Cumulus leaf


def _records(snap: Path, name: str) -> dict[str, dict[str, Any]]:
    manifest = json.loads((snap / "manifest.json").read_text())
    return {r["command"]: r for r in manifest["devices"][name]["commands"]}


def _collect(tmp: Path, release: str, told: bool) -> tuple[Path, dict[str, Any]]:
    """Collect the Cumulus leaf of a lab whose leaf claims ``release`` (``told``: the inventory says so)."""
    with simulator(LAB, [os_skew(LEAF, release)], base="127.43") as sim:
        inv = sim.inventory(password_env=PASSWORD_ENV)
        if told:
            inv["all"]["children"]["fabric"]["children"]["leaf"]["hosts"][LEAF]["fabline_os_version"] = (
                release
            )
        (tmp / "inv.yml").write_text(yaml.safe_dump(inv, sort_keys=False))
        snap = tmp / "snap"
        result = cli(
            "collect", "-i", tmp / "inv.yml", "-o", snap, "--limit", LEAF, "--known-hosts", tmp / "kh"
        )
        assert "collected 1 devices" in result.output, result.output
    return snap, state(snap, LEAF)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    out = {}
    for key, release, told in (("5x", "5.9.1", False), ("4x", "4.4.3", False), ("4x-told", "4.4.3", True)):
        out[key] = _collect(tmp_path_factory.mktemp(f"cumulus-{key}"), release, told)
    yield out


def test_5x_reads_lldp_from_nvue_and_never_sends_nclu(run: dict[str, Any]) -> None:
    snap, got = run["5x"]
    assert got["status"] == "ok", got["errors"]
    assert got["facts"]["os_version"] == "5.9.1"
    want = next(s for s in synthetic.states(LAB) if s["name"] == LEAF)
    linked = {n: b["lldp"] for n, b in want["interfaces"].items() if b.get("lldp") and b.get("oper_up")}
    assert linked, "the lab leaf has LLDP neighbours"
    for name, lldp in linked.items():
        assert got["interfaces"][name]["lldp"]["device"] == lldp["device"], name
        assert got["interfaces"][name]["lldp"]["port"] == lldp["port"], name
    records = _records(snap, LEAF)
    assert records["nv show interface lldp-detail"]["status"] == "ok"
    nclu = records["net show interface all json"]
    assert nclu["status"] == "not_in_release" and "before 5.0" in nclu["message"]
    # 5.9 has no 'nv show interface <if> transceiver' (5.11+): not sent, and optics unsupported.
    transceiver = records["nv show interface {interface} transceiver"]
    assert transceiver["status"] == "not_in_release" and "5.11" in transceiver["message"]
    assert not any(r.startswith("nv show interface swp") and r.endswith("transceiver") for r in records)
    assert "5.11" in got["unsupported"]["interfaces.*.optics"]
    assert all("optics" not in b for b in got["interfaces"].values())


def test_4x_without_a_release_tries_nvue_and_reads_nclu(run: dict[str, Any]) -> None:
    snap, got = run["4x"]
    records = _records(snap, LEAF)
    # No NVUE on 4.x: bash says so; the release stays unknown, so NCLU is sent too.
    assert records["nv show system"]["status"] == "unavailable"
    assert records["net show interface all json"]["status"] == "ok"
    assert got["status"] == "partial"
    assert any(b.get("lldp") for b in got["interfaces"].values())


def test_4x_with_the_inventory_release_sends_only_what_it_has(run: dict[str, Any]) -> None:
    snap, got = run["4x-told"]
    records = _records(snap, LEAF)
    assert got["status"] == "ok", got["errors"]
    assert records["net show interface all json"]["status"] == "ok"
    assert {r["status"] for c, r in records.items() if c.startswith("nv ")} == {"not_in_release"}
    assert any(b.get("lldp") for b in got["interfaces"].values())
    assert got["errors"] == []


def test_a_5_15_switch_reads_back_through_the_renamed_knobs(tmp_path: Path) -> None:
    # 5.15 renamed 'qos roce enable on' to 'state enabled' and auto-negotiate on/off to
    # enabled/disabled (NVIDIA's "New and Changed NVUE Commands"): the simulated switch says so, and
    # the parsers read it (the RoCE profile is on, the ports' autoneg is known).
    snap, got = _collect(tmp_path, "5.15.0", False)
    assert got["status"] == "ok", got["errors"]
    assert got["qos"]["roce"]["enabled"] is True
    raw = (snap / "raw" / LEAF).iterdir()
    config = next(p for p in raw if p.name.startswith("nv_config_show"))
    assert '"state": "enabled"' in config.read_text()
    want = next(s for s in synthetic.states(LAB) if s["name"] == LEAF)
    for name, body in want["interfaces"].items():
        if "autoneg" in body:
            assert got["interfaces"][name]["autoneg"] == body["autoneg"], name
