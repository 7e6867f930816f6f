"""load-balance-skew: switches of one role and plane hash and adaptively route alike."""

from __future__ import annotations

from pathlib import Path

from fabline import synthetic
from fabline.results import Status
from fabline.sim.faults import adaptive_routing_off
from fabline.synthetic import Fault
from tests.unit.test_fabric_support import devices_of, one, run_fabric, table

# 64 GPUs at radix 8: 8 rails x 4 leaves, 4 spines; leaves alternate Cumulus / SONiC
MIXED = synthetic.rail_fabric(128, radix=8, leaf_platforms=("cumulus", "sonic"), spine_platforms=("cumulus",))


def run(tmp: Path, faults: list[Fault], baseline: str = "rules: []\n") -> object:
    return run_fabric(tmp, MIXED, faults, checks=["load-balance-skew"], baseline=baseline)


def test_clean_fabric_passes(tmp_path: Path) -> None:
    out = run(tmp_path, [])
    assert [r for r in out.results if r.status is not Status.PASS] == []
    switches = {d.name for d in MIXED.devices if d.role != "host"}
    assert {d for _, d, _ in table(out, Status.PASS)} == switches


def test_one_switch_without_adaptive_routing_is_named_with_the_majority(tmp_path: Path) -> None:
    out = run(tmp_path, [adaptive_routing_off("leaf-r3-001")])
    assert table(out, Status.FAIL) == {("load-balance-skew", "leaf-r3-001", "adaptive_routing")}
    result = one(out, "load-balance-skew", "leaf-r3-001", "adaptive_routing")
    assert result.message.startswith(
        "leaf-r3-001: adaptive_routing off; the majority of leafs of plane 0 run on"
    )
    assert result.expected == "on"


def test_hash_fields_and_seed_are_compared_per_platform(tmp_path: Path) -> None:
    faults = [
        Fault("leaf-r0-000", "load_balance.hash_seed", 99),  # a Cumulus leaf (even index)
        Fault("leaf-r0-001", "load_balance.hash_fields", ["dst_ip", "src_ip"]),  # a SONiC leaf
    ]
    out = run(tmp_path, faults)
    assert table(out, Status.FAIL) == {
        ("load-balance-skew", "leaf-r0-000", "hash_seed"),
        ("load-balance-skew", "leaf-r0-001", "hash_fields"),
    }
    assert (
        "the majority of leafs of plane 0 on sonic run"
        in one(out, "load-balance-skew", "leaf-r0-001", "hash_fields").message
    )


def test_a_field_the_platform_does_not_show_is_not_compared(tmp_path: Path) -> None:
    # a state without load_balance (a platform or collection that has none) takes part in nothing
    out = run(tmp_path, [Fault("leaf-r1-000", "load_balance", None)])
    assert not [r for r in out.results if r.device == "leaf-r1-000"]
    assert table(out, Status.FAIL) == set()


def test_pinned_values_fail_every_other_value(tmp_path: Path) -> None:
    baseline = "rules:\n  - {id: load-balance-skew, params: {allowed: {hash_seed: ['11', '23']}}}\n"
    out = run(tmp_path, [Fault("spine-000", "load_balance.hash_seed", 7)], baseline=baseline)
    assert table(out, Status.FAIL) == {("load-balance-skew", "spine-000", "hash_seed")}
    assert devices_of(MIXED)  # the inventory the run used has planes on its leaves
