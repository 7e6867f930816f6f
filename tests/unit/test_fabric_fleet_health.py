"""Fleet skew, counter deltas across two snapshots, and the host application layer vs the fabric."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fabline import synthetic
from fabline.checks.fabric.health import counter_delta
from fabline.errors import ConfigError
from fabline.results import Status
from fabline.synthetic import Fault
from tests.unit.test_fabric_support import one, run_fabric, table

LAB = synthetic.lab_fabric()
RAIL = synthetic.rail_fabric(256)  # 32 hosts, 8 leaves, 4 spines, all SONiC


# ------------------------------------------------------------------------------ version / QoS skew


def test_version_skew_names_the_odd_one_and_the_majority(tmp_path: Path) -> None:
    faults = [
        Fault("leaf-r3-000", "facts.os_version", "SONiC.202305.2"),
        *(Fault("gpu-00007", "nic.firmware", "28.38.1002", f"eth{i}") for i in range(8)),
    ]
    out = run_fabric(tmp_path, RAIL, faults, checks=["version-skew"])
    assert table(out, Status.FAIL) == {
        ("version-skew", "leaf-r3-000", "os_version"),
        ("version-skew", "gpu-00007", "nic_firmware"),
    }
    r = one(out, "version-skew", "leaf-r3-000", "os_version")
    assert r.message == (
        "leaf-r3-000: os_version SONiC.202305.2; the majority of leafs on sonic model 64x400G run "
        "SONiC.202311.1 (SONiC.202311.1 (7), SONiC.202305.2 (1))"
    )
    assert (r.expected, r.actual) == ("SONiC.202311.1", "SONiC.202305.2")
    assert one(out, "version-skew", "gpu-00001", "nic_firmware").status is Status.PASS


def test_version_skew_within_one_host_and_ties(tmp_path: Path) -> None:
    out = run_fabric(
        tmp_path, LAB, [Fault("gpu-001", "nic.firmware", "28.38.1002", "eth3")], checks=["version-skew"]
    )
    fails = table(out, Status.FAIL)
    assert ("version-skew", "gpu-001", "nic_firmware") in fails
    assert "NICs of one device run different nic_firmware values: 28.38.1002, 28.39.1002" in one(
        out, "version-skew", "gpu-001", "nic_firmware").message  # fmt: skip
    # two spines, two versions: no majority, both named
    out = run_fabric(
        tmp_path / "t", LAB, [Fault("spine-02", "facts.os_version", "4.31.1F")], checks=["version-skew"]
    )
    assert table(out, Status.FAIL) == {
        ("version-skew", "spine-01", "os_version"),
        ("version-skew", "spine-02", "os_version"),
    }
    assert "no majority" in one(out, "version-skew", "spine-01", "os_version").message


def test_version_skew_pinned_versions(tmp_path: Path) -> None:
    base = "rules:\n  - {id: version-skew, params: {allowed: {os_version: ['4.32.2F', '4.31.1F']}}}\n"
    out = run_fabric(
        tmp_path,
        LAB,
        [Fault("spine-02", "facts.os_version", "4.31.1F")],
        checks=["version-skew"],
        baseline=base,
    )
    assert one(out, "version-skew", "spine-02", "os_version").status is Status.PASS
    assert one(out, "version-skew", "leaf-r0-a", "os_version").status is Status.FAIL  # SONiC not pinned
    bad = "rules:\n  - {id: version-skew, params: {allowed: {firmware: ['1']}}}\n"
    with pytest.raises(ConfigError, match="allowed: unknown field 'firmware'"):
        run_fabric(tmp_path / "b", LAB, checks=["version-skew"], baseline=bad)


def test_qos_skew_on_switches_only(tmp_path: Path) -> None:
    faults = [Fault("leaf-r1-000", "ecn.3.min_bytes", 50000, f"Ethernet{8 * i}") for i in range(64)]
    out = run_fabric(tmp_path, RAIL, faults, checks=["qos-skew"])
    assert table(out, Status.FAIL) == {("qos-skew", "leaf-r1-000", "ecn_profiles")}
    assert {r.device for r in out.results} == {d.name for d in RAIL.devices if d.role != "host"}


# ------------------------------------------------------------------------------ counter deltas


def test_delta_checks_skip_without_previous_snapshot(tmp_path: Path) -> None:
    out = run_fabric(tmp_path, LAB, checks=["fec-uncorrectable-delta", "crc-errors-delta", "pfc-pause-rate"])
    # one fabric-level skip per check for the run, not one per device
    assert {r.status for r in out.results} == {Status.SKIPPED}
    assert sorted((r.check, r.device) for r in out.results) == [
        ("crc-errors-delta", "(fabric)"), ("fec-uncorrectable-delta", "(fabric)"), ("pfc-pause-rate", "(fabric)"),
    ]  # fmt: skip
    assert all("--previous" in r.message for r in out.results)


def test_delta_checks_judge_every_device_with_a_previous_snapshot(tmp_path: Path) -> None:
    """With ``--previous`` the checks run per device again: no fabric-level skip."""
    out = run_fabric(tmp_path, LAB, previous=[], checks=["fec-uncorrectable-delta"])
    assert {r.device for r in out.results} == {d.name for d in LAB.devices}
    assert all("--previous" not in r.message for r in out.results)


def test_fec_and_crc_deltas_with_reset(tmp_path: Path) -> None:
    before = [Fault("leaf-r0-a", "counters.fec_uncorrectable", 17, "Ethernet8"),
              Fault("leaf-r0-a", "counters.fec_uncorrectable", 40, "Ethernet0"),
              Fault("gpu-001", "counters.crc_errors", 5, "eth0")]  # fmt: skip
    now = [Fault("leaf-r0-a", "counters.fec_uncorrectable", 17, "Ethernet8"),  # old total, no new errors
           Fault("leaf-r0-a", "counters.fec_uncorrectable", 3, "Ethernet0"),  # cleared, then 3 new
           Fault("gpu-001", "counters.crc_errors", 9, "eth0")]  # fmt: skip
    out = run_fabric(
        tmp_path, LAB, now, previous=before, checks=["fec-uncorrectable-delta", "crc-errors-delta"]
    )
    assert table(out, Status.FAIL) == {
        ("fec-uncorrectable-delta", "leaf-r0-a", "Ethernet0"),
        ("crc-errors-delta", "gpu-001", "eth0"),
    }
    assert one(out, "fec-uncorrectable-delta", "leaf-r0-a", "Ethernet8").status is Status.PASS
    reset = one(out, "fec-uncorrectable-delta", "leaf-r0-a", "Ethernet0")
    assert reset.actual == {"before": 40, "after": 3, "delta": 3, "interval_s": 3600.0, "reset": True}
    assert (
        reset.message
        == "leaf-r0-a Ethernet0: fec_uncorrectable rose by 3 in 3600 s since a counter reset (max 0)"
    )
    assert one(out, "crc-errors-delta", "gpu-001", "eth0").actual["delta"] == 4


def test_pfc_pause_rate_uses_the_interval(tmp_path: Path) -> None:
    now = [Fault("leaf-r1-a", "counters.pfc_rx_pause", {"3": 720000}, "swp3"),  # 200/s over 3600 s
           Fault("leaf-r1-a", "counters.pfc_tx_pause", {"3": 36000}, "swp4"),  # 10/s
           Fault("leaf-r1-a", "counters.ecn_marked", 12, "swp3")]  # fmt: skip
    out = run_fabric(tmp_path, LAB, now, previous=[], checks=["pfc-pause-rate"])
    assert table(out, Status.FAIL) == {("pfc-pause-rate", "leaf-r1-a", "swp3")}
    r = one(out, "pfc-pause-rate", "leaf-r1-a", "swp3")
    assert (
        r.message
        == "leaf-r1-a swp3: 200 PFC pause frames/s received on priority 3 (max 100); ECN marked 12 in the same interval"
    )
    assert one(out, "pfc-pause-rate", "leaf-r1-a", "swp4").status is Status.PASS
    strict = "rules:\n  - {id: pfc-pause-rate, params: {max_per_s: 5}}\n"
    out2 = run_fabric(tmp_path / "strict", LAB, now, previous=[], checks=["pfc-pause-rate"], baseline=strict)
    assert one(out2, "pfc-pause-rate", "leaf-r1-a", "swp4").actual["pause_per_s"] == {
        "rx.3": 0.0,
        "tx.3": 10.0,
    }
    out = run_fabric(
        tmp_path / "same",
        LAB,
        now,
        previous=[],
        previous_at="2026-11-29T08:00:00Z",
        checks=["pfc-pause-rate"],
    )
    assert {r.status for r in out.results} == {Status.SKIPPED}  # same collection time: no rate


def test_counter_delta_helper() -> None:
    assert counter_delta(5, 5) == (0, False)
    assert counter_delta(2**63, 10) == (10, True)


# ------------------------------------------------------------------------------ host application layer


@pytest.mark.parametrize(
    ("faults", "fails", "text"),
    [
        ([Fault("gpu-001", "nic.roce_tos", 104, "eth2")], {("gpu-001", "eth2")}, "ToS 104 = DSCP 26 with Not-ECT"),
        ([Fault("gpu-001", "nic.ecn_rp_priorities", [4], "eth0")], {("gpu-001", "eth0")}, "ECN reaction point not enabled on priority 3"),
        ([Fault("gpu-002", "host.nccl_env.NCCL_IB_TC", "104")], {("gpu-002", "NCCL_IB_TC")}, "NCCL_IB_TC: ToS 104 = DSCP 26 with Not-ECT"),
        # the leaf moved RoCE to DSCP 24: the host's correct-by-baseline 106 is lossy on that rail
        ([Fault("leaf-r2-a", "dscp_to_priority.26", 0, "Ethernet1/1"), Fault("leaf-r2-a", "dscp_to_priority.24", 3, "Ethernet1/1")],
         {("gpu-001", "eth2"), ("gpu-001", "NCCL_IB_TC")}, "not a lossless DSCP of the fabric ([24])"),
    ],
)  # fmt: skip
def test_host_tos_against_the_leafs_lossless_dscps(
    tmp_path: Path, faults: list[Fault], fails: set[tuple[str, str]], text: str
) -> None:
    out = run_fabric(tmp_path, LAB, faults, checks=["host-tos-fabric"])
    assert table(out, Status.FAIL) == {("host-tos-fabric", d, s) for d, s in fails}
    assert table(out, Status.ERROR) == set()
    first = sorted(fails)[-1] if len(fails) == 1 else ("gpu-001", "eth2")
    assert text in one(out, "host-tos-fabric", *first).message


def test_host_tos_clean_and_not_collected(tmp_path: Path) -> None:
    out = run_fabric(tmp_path, LAB, checks=["host-tos-fabric"])
    assert {r.status for r in out.results} == {Status.PASS}
    assert len(out.results) == 2 * 4 + 2  # every rail NIC and NCCL_IB_TC of both hosts
    out = run_fabric(tmp_path / "m", LAB, [Fault("gpu-001", "nic.roce_tos", None, "eth1"),
                                             Fault("leaf-r3-a", "pfc_priorities", None, "Ethernet1/2")],
                     checks=["host-tos-fabric"])  # fmt: skip
    assert table(out, Status.ERROR) == {
        ("host-tos-fabric", "gpu-001", "eth1"),
        ("host-tos-fabric", "gpu-002", "eth3"),
    }


def test_qos_skew_watchdog_timers_not_on_off(tmp_path: Path) -> None:
    faults = [
        Fault("leaf-r2-000", "qos.pfc_watchdog.detection_ms", 400),
        Fault("leaf-r5-000", "qos.pfc_watchdog.enabled", False),
    ]
    out = run_fabric(tmp_path, RAIL, faults, checks=["qos-skew"])
    assert table(out, Status.FAIL) == {("qos-skew", "leaf-r2-000", "pfc_watchdog")}
    assert "detection_ms=400" in one(out, "qos-skew", "leaf-r2-000", "pfc_watchdog").message


# ------------------------------------------------------------------------------ PFC headroom

# the buffer data of the SONiC parser case tests/parsers/cases/sonic/local-configdb-breakout-roce.yml
PROFILES = {"pg_lossless_100000_5m_profile": {"pool": "ingress_lossless_pool", "size_bytes": 19456,
            "xon_bytes": 19456, "xoff_bytes": 37888, "dynamic_th": 1}}  # fmt: skip


def _buffers(leaf: str, port: str, speed: int = 100) -> list[Fault]:
    return [
        Fault(leaf, "qos.buffer_profiles", PROFILES),
        Fault(leaf, "buffer_pg", {"3": "pg_lossless_100000_5m_profile"}, port),
        Fault(leaf, "speed_gbps", speed, port),
    ]


def test_pfc_headroom_against_cable_length(tmp_path: Path) -> None:
    faults = _buffers("leaf-r0-a", "Ethernet0")
    out = run_fabric(tmp_path, LAB, faults, checks=["pfc-headroom"])
    assert one(out, "pfc-headroom", "leaf-r0-a", "Ethernet0").status is Status.PASS  # 100G, 40 m: 35,700 B
    assert one(out, "pfc-headroom", "leaf-r1-a", None).status is Status.SKIPPED  # no buffer data
    base = "rules:\n  - {id: pfc-headroom, params: {default_cable_length_m: 300}}\n"
    out = run_fabric(tmp_path / "far", LAB, faults, checks=["pfc-headroom"], baseline=base)
    r = one(out, "pfc-headroom", "leaf-r0-a", "Ethernet0")
    assert r.status is Status.FAIL
    assert r.message == (
        "leaf-r0-a Ethernet0: PG 3 (pg_lossless_100000_5m_profile) xoff 37888 B < 68200 B needed "
        "(100G, 300 m, 9100-byte frames)"
    )
    out = run_fabric(
        tmp_path / "fast", LAB, _buffers("leaf-r0-a", "Ethernet0", speed=400), checks=["pfc-headroom"]
    )
    assert one(out, "pfc-headroom", "leaf-r0-a", "Ethernet0").status is Status.FAIL  # a 100G profile on 400G


# ------------------------------------------------------------------------------ values by their exact bytes


def test_fleet_values_remembered_by_exact_value() -> None:
    """The DCQCN, mlxconfig and ECN summaries are remembered per distinct value: 1, 1.0, True and
    "1" stay apart, key order is part of the value, an Invalid is computed each time.
    """
    import doctest

    from fabline.checks.fabric import fleet
    from fabline.state import Invalid

    assert doctest.testmod(fleet).failed == 0
    check = fleet.DcqcnSkewCheck()
    hosts = [
        {f"e{n}": {"nic": {"dcqcn": {"rp": {"rpg_gd": v, "rpg_ai_rate": 5}}}} for n in range(2)}
        for v in (1, 1.0, True, "1", 1, Invalid("interfaces.e0.nic.dcqcn.rp.rpg_gd", "bad"))
    ]
    hosts.append({"e0": {"nic": {"dcqcn": {"rp": {"rpg_ai_rate": 5, "rpg_gd": 1}}}}, "e1": {"nic": {}}})
    hosts.append(
        {"e0": {"nic": {"dcqcn": {"rp": {"rpg_gd": 1}}}}, "e1": {"nic": {"dcqcn": {"rp": {"rpg_gd": 2}}}}}
    )
    for _ in range(2):
        for ifaces in hosts:
            ctx = fleet.DeviceContext("h", "linux", "host", (), {}, {"interfaces": ifaces}, {})  # type: ignore[typeddict-item]
            assert check.field_values(ctx) == fleet._dcqcn_values(ifaces)
    assert [check.field_values(fleet.DeviceContext("h", "linux", "host", (), {}, {"interfaces": i}, {}))["rp.rpg_gd"]  # type: ignore[typeddict-item]
            for i in hosts] == ["1", "1.0", "True", "1", "1", "interfaces.e0.nic.dcqcn.rp.rpg_gd is invalid (bad)", "1", "1, 2"]  # fmt: skip
    cc = fleet.NicCcSkewCheck()
    for configs in (
        {"a": {"cc_config": {"X_P1": 1}}, "b": {"cc_config": {"X_P1": 1.0}}},
        {"a": {"cc_config": {"X_P1": 1}}},
    ):
        ctx = fleet.DeviceContext("h", "linux", "host", (), {}, {"host": {"rdma_devices": configs}}, {})  # type: ignore[typeddict-item]
        assert cc.field_values(ctx) == fleet._cc_config_values({"rdma_devices": configs})
    assert cc.field_values(ctx) == {"X_P1": "1"}


def test_ecn_profiles_of_the_maps_kept_are_those_of_every_port() -> None:
    """_ecn_maps leaves out a map equal to the one before it: the profiles text is the same as
    over every port's map (1 and 1.0, True and 1 included)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from fabline.checks.fabric import fleet

    value = st.sampled_from([0, 1, 1.0, True, False, 5000, "x", None])
    profile = st.fixed_dictionaries(
        {"enabled": value}, optional={"min_bytes": value, "max_bytes": value, "probability_pct": value}
    )
    ecn = st.dictionaries(st.sampled_from(["3", "4"]), profile, max_size=2)

    @settings(max_examples=300, deadline=None)
    @given(st.lists(ecn, max_size=6))
    def same(maps: list[dict[str, Any]]) -> None:
        ifaces = {f"e{i}": {"ecn": m} for i, m in enumerate(maps)}
        kept = fleet._ecn_maps(ifaces)  # type: ignore[arg-type]
        assert fleet._ecn_profiles(kept) == fleet._ecn_profiles(maps)

    same()
