"""The benchmark fabric (bench/generate.py) is as heavy as a collection and clean; its next night is healthy.

A small Clos of the same shape as issue 14's 100k-GPU fabric: every state carries what a collection of
its platform yields today (``synthetic.as_collected``), zero faults give zero failures and zero
errors, and the "next night" of ``bench/scale_bench.py`` moves the counters a busy healthy fabric
moves, so the counter-delta checks pass against the first night.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from fabline.results import Status
from fabline.runner import run_check
from fabline.snapshot import read_digests

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

import generate  # noqa: E402
import scale_bench  # noqa: E402

BASE = REPO / "baseline" / "roce.yml"


def test_the_clean_benchmark_fabric_passes_tonight_and_the_next_night(tmp_path: Path) -> None:
    counts = generate.generate(256, tmp_path / "fab", 16, 0.0, shape="clos")
    assert counts["faults"] == 0 and counts["host"] == 32
    snap = tmp_path / "fab" / "snapshot"
    leaf = json.loads(next((snap / "state").glob("leaf-*.json")).read_text())
    port = next(b for b in leaf["interfaces"].values() if b.get("oper_up"))
    assert port["counters"]["pg_dropped"]["3"] == 0 and port["optics"]["active_flags"] == []
    assert port["fec_pre_ber"] < 1e-6 and port["pfc_watchdog"]["enabled"] is True
    host = json.loads(next((snap / "state").glob("gpu-*.json")).read_text())
    nic = next(iter(host["interfaces"].values()))
    assert nic["counters"]["rx_prio_discards"]["3"] == 0 and nic["counters"]["roce_out_of_sequence"] == 0
    assert nic["nic"]["pcie"]["width"] == 16 and host["host"]["rdma_devices"]

    inventory = tmp_path / "fab" / "inventory.yml"
    report, _ = run_check(
        inventory=inventory, snapshot=snap, baselines=[BASE], checks_dir=None, limit=None, out=None,
        formats=[], fail_on="minor",
    )  # fmt: skip
    by_status = report.summary["by_status"]
    assert (by_status["fail"], by_status["error"]) == (0, 0), report.outcome.results.problems[:5]
    # lossless-drops judges the counters each platform has (SONiC PG/queue drops, NIC discards).
    assert report.pass_counts()["lossless-drops"]

    after = tmp_path / "after"
    scale_bench.next_night(snap, after)
    # Both nights carry the digest index a collection writes (the check skips their schema pass).
    assert (
        len(read_digests(snap))
        == len(read_digests(after))
        == sum(counts[r] for r in ("host", "leaf", "spine"))
    )
    moved = json.loads((after / "state" / host["name"]).with_suffix(".json").read_text())
    now = next(iter(moved["interfaces"].values()))["counters"]
    assert now["fec_corrected"] > nic["counters"]["fec_corrected"] and now["cnp_sent"] > 0
    assert now["roce_out_of_sequence"] == 0 and now["link_flaps"] == nic["counters"]["link_flaps"]
    report, _ = run_check(
        inventory=inventory, snapshot=after, baselines=[BASE], checks_dir=None, limit=None, out=None,
        formats=[], fail_on="minor", previous=snap,
    )  # fmt: skip
    by_status = report.summary["by_status"]
    assert (by_status["fail"], by_status["error"]) == (0, 0), report.outcome.results.problems[:5]
    passes = report.pass_counts()
    for check in (
        "pfc-pause-rate",
        "lossless-drops-delta",
        "roce-errors-delta",
        "fec-corrected-rate",
        "link-flaps",
    ):
        assert passes.get(check), check
    assert not [r for r in report.outcome.results.problems if r.status is Status.ERROR]
