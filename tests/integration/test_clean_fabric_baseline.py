"""A clean simulated fabric passes the default baseline, end to end (issue 4, "Done when").

The simulator serves clean fabrics over real SSH, ``fabline run`` collects them with the real
collector (every platform's collection profile), parses them with the platform parsers and checks
them against the packaged default baseline (``baseline/roce.yml``): no ``fail``, no ``error``,
exit 0. Two fabrics: the bundled lab (every platform once) and a rail fabric with every switch
platform as both leaf and spine. Network: 127.0.0.0/8 only.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest

from fabline import synthetic
from fabline.platforms.spec import PLATFORMS
from tests.integration.test_collect_sim import cli, simulator, write_inventory

FABRICS = {
    "lab": synthetic.lab_fabric(),
    "mixed": synthetic.rail_fabric(
        64,
        radix=8,
        leaf_platforms=("sonic", "cumulus", "arista_eos", "cisco_nxos"),
        spine_platforms=("cisco_nxos", "cumulus", "sonic", "arista_eos"),
    ),
}
BASES = {"lab": "127.46", "mixed": "127.47"}


@pytest.fixture(scope="module", params=sorted(FABRICS))
def clean_run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """``fabline run`` over one clean simulated fabric (no faults), from a workspace with only the packaged files."""
    name = request.param
    tmp = tmp_path_factory.mktemp(f"clean-{name}")
    with simulator(FABRICS[name], base=BASES[name]) as sim, contextlib.chdir(tmp):
        inv = write_inventory(sim, tmp / "inv.yml")
        result = cli(
            "run", "-i", inv, "-s", tmp / "snap", "-o", tmp / "reports", "--host-key-policy", "ignore"
        )
    report = json.loads((tmp / "reports" / "report.json").read_text())
    return {"name": name, "tmp": tmp, "result": result, "report": report, "fabric": FABRICS[name]}


def _state(run: dict[str, Any], device: str) -> dict[str, Any]:
    return json.loads((run["tmp"] / "snap" / "state" / f"{device}.json").read_text())  # type: ignore[no-any-return]


def test_no_fail_no_error_exit_zero(clean_run: dict[str, Any]) -> None:
    bad = [
        (r["status"], r["check"], r["device"], r["subject"], r["message"])
        for r in clean_run["report"]["results"]
        if r["status"] in ("fail", "error")
    ]
    assert bad == []
    assert clean_run["result"].exit_code == 0, clean_run["result"].output


def test_every_device_collected_ok(clean_run: dict[str, Any]) -> None:
    statuses = {d.name: _state(clean_run, d.name)["status"] for d in clean_run["fabric"].devices}
    assert set(statuses.values()) == {"ok"}, {n: s for n, s in statuses.items() if s != "ok"}


def _first(run: dict[str, Any], platform: str) -> str:
    return next(d.name for d in run["fabric"].devices if d.platform == platform)


def test_formerly_missing_fields_are_collected(clean_run: dict[str, Any]) -> None:
    """The fields the gaps kept out: each is now in the state, with the simulated value."""
    cumulus = _state(clean_run, _first(clean_run, "cumulus"))
    port = next(
        b for n, b in cumulus["interfaces"].items() if n.startswith("swp") and b.get("pfc_priorities")
    )
    assert isinstance(port["ecn"]["3"]["probability_pct"], int)
    assert cumulus["qos"]["pfc_watchdog"]["enabled"] is True
    assert len(port["optics"]["rx_power_dbm"]) == 4
    assert cumulus["facts"]["os_version"] == PLATFORMS["cumulus"].os_version
    nxos = _state(clean_run, _first(clean_run, "cisco_nxos"))
    assert nxos["qos"]["pfc_watchdog"]["enabled"] is True
    eos = _state(clean_run, _first(clean_run, "arista_eos"))
    assert all(len(b["optics"]["rx_power_dbm"]) == 4 for b in eos["interfaces"].values() if "optics" in b)
    sonic = _state(clean_run, _first(clean_run, "sonic"))
    assert all(
        b["counters"]["fec_uncorrectable"] == 0
        for n, b in sonic["interfaces"].items()
        if n.startswith("Ethernet")
    )
    host = _state(clean_run, _first(clean_run, "linux"))
    nic = next(b["nic"] for b in host["interfaces"].values() if "nic" in b and "firmware" in b["nic"])
    assert nic["firmware"] == synthetic.NIC_FIRMWARE and nic["psid"].startswith("MT_")
