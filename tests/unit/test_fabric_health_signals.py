"""Issue 15 items 2-4: loss on the lossless class, RoCE errors, PFC storms, pauses everywhere, flaps."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from fabline import synthetic
from fabline.results import Status
from fabline.synthetic import Fault
from tests.conftest import REPO_ROOT
from tests.unit.test_fabric_support import one, run_fabric, table

LAB = synthetic.lab_fabric()
_DEFAULT = yaml.safe_load((REPO_ROOT / "baseline/roce.yml").read_text("utf-8"))


def default_rules(*ids: str) -> str:
    """The default baseline's vars and the named declarative rules, as a baseline file."""
    rules = [r for r in _DEFAULT["rules"] if r["id"] in ids]
    assert len(rules) == len(ids)
    return yaml.safe_dump({"vars": _DEFAULT["vars"], "rules": rules})


def test_lossless_drops_delta_reads_only_the_lossless_class_on_every_platform(tmp_path: Path) -> None:
    before = [
        Fault("leaf-r0-a", "counters.pg_dropped", {"0": 100, "3": 2}, "Ethernet0"),
        Fault("leaf-r0-a", "counters.queue_dropped", {"0": 7, "3": 0}, "Ethernet8"),
        Fault("leaf-r1-a", "counters.roce_rx_discards", 10, "swp1"),
        Fault("leaf-r2-a", "counters.queue_dropped", {"3": 50}, "Ethernet1/1"),
        Fault("gpu-001", "counters.rx_prio_discards", {"3": 0}, "eth0"),
        Fault("gpu-002", "counters.rx_discards_phy", 0, "eth1"),
    ]
    now = [
        Fault("leaf-r0-a", "counters.pg_dropped", {"0": 900, "3": 2}, "Ethernet0"),  # lossy PG only
        Fault("leaf-r0-a", "counters.queue_dropped", {"0": 7, "3": 36}, "Ethernet8"),
        Fault("leaf-r1-a", "counters.roce_rx_discards", 10, "swp1"),
        Fault("leaf-r2-a", "counters.queue_dropped", {"3": 4}, "Ethernet1/1"),  # cleared, then 4
        Fault("gpu-001", "counters.rx_prio_discards", {"3": 72}, "eth0"),
        Fault("gpu-002", "counters.rx_discards_phy", 0, "eth1"),
    ]
    out = run_fabric(tmp_path, LAB, now, previous=before, checks=["lossless-drops-delta"])
    assert table(out, Status.FAIL) == {
        ("lossless-drops-delta", "leaf-r0-a", "Ethernet8"),
        ("lossless-drops-delta", "leaf-r2-a", "Ethernet1/1"),
        ("lossless-drops-delta", "gpu-001", "eth0"),
    }
    r = one(out, "lossless-drops-delta", "leaf-r0-a", "Ethernet8")
    assert r.message == (
        "leaf-r0-a Ethernet8: drops on the lossless class rose in 3600 s: queue_dropped.3 +36 (0.01/s) (max 0)"
    )
    assert r.actual == {
        "counters": {"queue_dropped.3": {"before": 0, "after": 36, "delta": 36, "per_s": 0.01}},
        "interval_s": 3600.0,
    }
    reset = one(out, "lossless-drops-delta", "leaf-r2-a", "Ethernet1/1")
    assert reset.actual["counters"]["queue_dropped.3"]["reset"] is True
    assert "since a reset" in reset.message
    for device, port in (("leaf-r0-a", "Ethernet0"), ("leaf-r1-a", "swp1"), ("gpu-002", "eth1")):
        assert one(out, "lossless-drops-delta", device, port).status is Status.PASS
    # Priority 0 lossless too: the lossy PG's drops now count.
    wide = "rules:\n  - {id: lossless-drops-delta, params: {priorities: [0, 3]}}\n"
    out2 = run_fabric(
        tmp_path / "wide", LAB, now, previous=before, checks=["lossless-drops-delta"], baseline=wide
    )
    assert one(out2, "lossless-drops-delta", "leaf-r0-a", "Ethernet0").status is Status.FAIL


def test_roce_errors_and_pfc_storms_deltas(tmp_path: Path) -> None:
    before = [
        Fault("gpu-001", "counters.roce_out_of_sequence", 3, "eth2"),
        Fault("gpu-001", "counters.roce_local_ack_timeout_err", 0, "eth2"),
        Fault("leaf-r0-a", "counters.pfcwd_storms_detected", {"3": 2}, "Ethernet8"),
        Fault("leaf-r1-a", "counters.pfcwd_storms_detected", {"3": 0, "4": 1}, "swp2"),
    ]
    now = [
        Fault("gpu-001", "counters.roce_out_of_sequence", 1803, "eth2"),
        Fault("gpu-001", "counters.roce_local_ack_timeout_err", 12, "eth2"),
        Fault("leaf-r0-a", "counters.pfcwd_storms_detected", {"3": 2}, "Ethernet8"),
        Fault("leaf-r1-a", "counters.pfcwd_storms_detected", {"3": 0, "4": 3}, "swp2"),
    ]
    out = run_fabric(tmp_path, LAB, now, previous=before, checks=["roce-errors-delta", "pfc-storms-delta"])
    assert table(out, Status.FAIL) == {
        ("roce-errors-delta", "gpu-001", "eth2"),
        ("pfc-storms-delta", "leaf-r1-a", "swp2"),  # any queue, not only the lossless one
    }
    r = one(out, "roce-errors-delta", "gpu-001", "eth2")
    assert r.message == (
        "gpu-001 eth2: RoCE transport errors rose in 3600 s: roce_out_of_sequence +1800 (0.5/s), "
        "roce_local_ack_timeout_err +12 (0.003/s) (max 0)"
    )
    assert one(out, "pfc-storms-delta", "leaf-r0-a", "Ethernet8").status is Status.PASS
    storm = one(out, "pfc-storms-delta", "leaf-r1-a", "swp2")
    assert storm.actual["counters"] == {
        "pfcwd_storms_detected.4": {"before": 1, "after": 3, "delta": 2, "per_s": 0.001}
    }


def test_a_ports_first_storm_is_judged_once_the_storm_counters_were_read(tmp_path: Path) -> None:
    """Watchdog counters list a port from its first storm on: an empty table read before is zero."""
    before = [
        Fault("leaf-r0-a", "counters.pfcwd_storms_detected", {}, "Ethernet8"),  # read, no storm yet
        Fault("leaf-r0-a", "counters.pfcwd_storms_detected", {}, "Ethernet0"),
        Fault("leaf-r2-a", "counters.pfcwd_storms_detected", {"3": 1}, "Ethernet1/1"),  # queue 4 unlisted
    ]
    now = [
        Fault("leaf-r0-a", "counters.pfcwd_storms_detected", {"3": 1}, "Ethernet8"),  # the first storm
        Fault("leaf-r0-a", "counters.pfcwd_storms_detected", {}, "Ethernet0"),  # still none
        Fault("leaf-r0-a", "counters.pfcwd_storms_detected", {"3": 4}, "Ethernet16"),  # not read before
        Fault("leaf-r2-a", "counters.pfcwd_storms_detected", {"3": 1, "4": 2}, "Ethernet1/1"),
    ]
    out = run_fabric(tmp_path, LAB, now, previous=before, checks=["pfc-storms-delta"])
    assert table(out, Status.FAIL) == {
        ("pfc-storms-delta", "leaf-r0-a", "Ethernet8"),
        ("pfc-storms-delta", "leaf-r2-a", "Ethernet1/1"),
    }
    first = one(out, "pfc-storms-delta", "leaf-r0-a", "Ethernet8")
    assert first.actual["counters"] == {
        "pfcwd_storms_detected.3": {"before": 0, "after": 1, "delta": 1, "per_s": 0.0}
    }
    assert one(out, "pfc-storms-delta", "leaf-r2-a", "Ethernet1/1").actual["counters"] == {
        "pfcwd_storms_detected.4": {"before": 0, "after": 2, "delta": 2, "per_s": 0.001}
    }
    assert one(out, "pfc-storms-delta", "leaf-r0-a", "Ethernet0").status is Status.PASS  # zero storms
    skipped = one(out, "pfc-storms-delta", "leaf-r0-a", "Ethernet16")
    assert skipped.status is Status.SKIPPED and skipped.message.endswith("not in the previous snapshot")


def test_new_delta_checks_skip_without_previous_and_on_devices_without_counters(tmp_path: Path) -> None:
    ids = ["lossless-drops-delta", "roce-errors-delta", "pfc-storms-delta"]
    out = run_fabric(tmp_path, LAB, checks=ids)
    assert {r.status for r in out.results} == {Status.SKIPPED}
    out = run_fabric(tmp_path / "p", LAB, previous=[], checks=ids)
    assert not table(out, Status.FAIL) and not table(out, Status.PASS)  # no such counters in the lab states


def test_pfc_pause_rate_on_per_port_totals_eos_nxos_and_cumulus(tmp_path: Path) -> None:
    before = [
        Fault("spine-01", "counters.pfc_rx_frames", 1000, "Ethernet1/1"),
        Fault("leaf-r3-a", "counters.pfc_tx_frames", 0, "Ethernet1/3"),
        Fault("leaf-r1-a", "counters.roce_pfc_rx_pause", 0, "swp4"),
    ]
    now = [
        Fault("spine-01", "counters.pfc_rx_frames", 1_081_000, "Ethernet1/1"),  # 300/s
        Fault("leaf-r3-a", "counters.pfc_tx_frames", 3600, "Ethernet1/3"),  # 1/s
        Fault("leaf-r1-a", "counters.roce_pfc_rx_pause", 720_000, "swp4"),  # 200/s
    ]
    # The lab states carry per-priority pause counters: drop them where a platform has totals only.
    for device, port in (("spine-01", "Ethernet1/1"), ("leaf-r3-a", "Ethernet1/3"), ("leaf-r1-a", "swp4")):
        for key in ("pfc_rx_pause", "pfc_tx_pause"):
            before.append(Fault(device, f"counters.{key}", {}, port))
            now.append(Fault(device, f"counters.{key}", {}, port))
    out = run_fabric(tmp_path, LAB, now, previous=before, checks=["pfc-pause-rate"])
    fails = table(out, Status.FAIL)
    assert ("pfc-pause-rate", "spine-01", "Ethernet1/1") in fails
    assert ("pfc-pause-rate", "leaf-r1-a", "swp4") in fails
    assert ("pfc-pause-rate", "leaf-r3-a", "Ethernet1/3") not in fails
    assert one(out, "pfc-pause-rate", "spine-01", "Ethernet1/1").message == (
        "spine-01 Ethernet1/1: 300 PFC pause frames/s received on all priorities (max 100); "
        "ECN marked 0 in the same interval"
    )
    assert "on the RoCE class" in one(out, "pfc-pause-rate", "leaf-r1-a", "swp4").message
    assert one(out, "pfc-pause-rate", "leaf-r3-a", "Ethernet1/3").status is Status.PASS  # 1/s sent


def test_link_flaps_by_counter_delta_and_by_recency(tmp_path: Path) -> None:
    before = [
        Fault("gpu-001", "counters.link_flaps", 2, "eth0"),
        Fault("gpu-001", "counters.link_flaps", 2, "eth1"),
        Fault("leaf-r3-a", "counters.interface_resets", 1, "Ethernet1/1"),
    ]
    now = [
        Fault("gpu-001", "counters.link_flaps", 22, "eth0"),  # ten bounces
        Fault("gpu-001", "counters.link_flaps", 2, "eth1"),
        Fault("leaf-r3-a", "counters.interface_resets", 1, "Ethernet1/1"),
        Fault("leaf-r3-a", "last_flap_age_s", 420, "Ethernet1/2"),  # "00:07:00"
        Fault("leaf-r3-a", "last_flap_age_s", 86400 * 30, "Ethernet1/3"),
        # EOS: a last change 10 minutes before the collection (2026-11-29T08:00:00Z).
        Fault("spine-01", "last_flap_epoch_s", 1_795_938_600.0, "Ethernet1/1"),
    ]
    out = run_fabric(tmp_path, LAB, now, previous=before, checks=["link-flaps"])
    assert table(out, Status.FAIL) == {
        ("link-flaps", "gpu-001", "eth0"),
        ("link-flaps", "leaf-r3-a", "Ethernet1/2"),
        ("link-flaps", "spine-01", "Ethernet1/1"),
    }
    assert one(out, "link-flaps", "gpu-001", "eth0").message == (
        "gpu-001 eth0: link flapped: link_flaps +20 in 3600 s (max 0 between snapshots, none within 3600 s)"
    )
    assert one(out, "link-flaps", "spine-01", "Ethernet1/1").actual == {"last_flap_age_s": 600}
    for device, port in (("gpu-001", "eth1"), ("leaf-r3-a", "Ethernet1/1"), ("leaf-r3-a", "Ethernet1/3")):
        assert one(out, "link-flaps", device, port).status is Status.PASS
    # Without a previous snapshot only the recency is judged; counters alone are not a pass.
    single = run_fabric(tmp_path / "one", LAB, now, checks=["link-flaps"])
    assert table(single, Status.FAIL) == {
        ("link-flaps", "leaf-r3-a", "Ethernet1/2"),
        ("link-flaps", "spine-01", "Ethernet1/1"),
    }
    # The counters not compared: one fabric-level skip for the run, no device-level one (15,092
    # identical lines on the 100k-GPU fabric); a device with no last-flap time has no line.
    skips = [r for r in single.results if r.status is Status.SKIPPED]
    assert [(r.device, r.subject) for r in skips] == [("(fabric)", None)]
    assert "--previous" in skips[0].message
    assert not [r for r in single.results if r.device == "gpu-001"]
    # With --previous, no fabric-level skip.
    assert not [r for r in out.results if r.device == "(fabric)"]


def test_link_flaps_without_previous_and_no_flap_times_is_one_fabric_skip(tmp_path: Path) -> None:
    out = run_fabric(tmp_path, LAB, checks=["link-flaps"])
    assert [(r.check, r.device, r.status) for r in out.results] == [
        ("link-flaps", "(fabric)", Status.SKIPPED)
    ]


def test_default_rules_lossless_drops_and_active_storm(tmp_path: Path) -> None:
    faults = [
        Fault("leaf-r0-a", "counters.pg_dropped", {"0": 5, "3": 41}, "Ethernet0"),
        Fault("leaf-r0-a", "counters.pg_dropped", {"0": 5, "3": 0}, "Ethernet8"),
        Fault("leaf-r1-a", "counters.roce_tx_discards", 3, "swp1"),
        Fault("leaf-r0-a", "pfcwd_stormed_queues", [3], "Ethernet8"),
        Fault("leaf-r0-a", "pfcwd_stormed_queues", [], "Ethernet0"),
    ]
    out = run_fabric(
        tmp_path, LAB, faults, checks=[], baseline=default_rules("lossless-drops", "pfc-storm-active")
    )
    assert table(out, Status.FAIL, "lossless-drops") == {
        ("lossless-drops", "leaf-r0-a", "Ethernet0"),
        ("lossless-drops", "leaf-r1-a", "swp1"),
    }
    assert table(out, Status.FAIL, "pfc-storm-active") == {("pfc-storm-active", "leaf-r0-a", "Ethernet8")}
    assert one(out, "pfc-storm-active", "leaf-r0-a", "Ethernet0").status is Status.PASS


# ------------------------------------------------------------------------------ FEC and optics (item 5)


def test_fec_corrected_rate_as_a_pre_fec_ber_estimate(tmp_path: Path) -> None:
    # 400G for an hour: 4e5 corrected codewords/s imply a BER of at least 1e-6.
    before = [
        Fault("leaf-r0-a", "counters.fec_corrected", 1_000, "Ethernet0"),
        Fault("leaf-r0-a", "counters.fec_corrected", 1_000, "Ethernet8"),
        Fault("gpu-001", "counters.fec_corrected_bits", 0, "eth0"),
    ]
    now = [
        Fault("leaf-r0-a", "counters.fec_corrected", 1_000 + 2_000_000 * 3600, "Ethernet0"),  # BER >= 5e-6
        Fault("leaf-r0-a", "counters.fec_corrected", 1_000 + 36_000, "Ethernet8"),  # 10/s: 2.5e-11
        Fault("gpu-001", "counters.fec_corrected_bits", 800_000 * 3600, "eth0"),  # 8e5 bits/s: 2e-6
    ]
    out = run_fabric(tmp_path, LAB, now, previous=before, checks=["fec-corrected-rate"])
    assert table(out, Status.FAIL) == {
        ("fec-corrected-rate", "leaf-r0-a", "Ethernet0"),
        ("fec-corrected-rate", "gpu-001", "eth0"),
    }
    assert one(out, "fec-corrected-rate", "leaf-r0-a", "Ethernet0").message == (
        "leaf-r0-a Ethernet0: 2e+06 corrected codewords/s at 400G: pre-FEC BER at least 5.00e-06 (max 1e-06)"
    )
    host = one(out, "fec-corrected-rate", "gpu-001", "eth0")
    assert "corrected bits/s" in host.message and host.actual["pre_fec_ber"] == 2e-06
    assert one(out, "fec-corrected-rate", "leaf-r0-a", "Ethernet8").status is Status.PASS
    single = run_fabric(tmp_path / "one", LAB, now, checks=["fec-corrected-rate"])
    assert {r.status for r in single.results} == {Status.SKIPPED}


def test_default_rules_pre_fec_ber_tx_power_and_dom_flags(tmp_path: Path) -> None:
    faults = [
        Fault("spine-01", "fec_pre_ber", 3.2e-5, "Ethernet1/1"),
        Fault("spine-01", "fec_pre_ber", 1.5e-9, "Ethernet2/1"),
        Fault("gpu-002", "optics.tx_power_dbm", [0.4, -12.5, 0.3, 0.6], "eth2"),
        Fault("leaf-r0-a", "optics.active_flags", ["Rx power low warning flag on lane 2"], "Ethernet16"),
        Fault("leaf-r0-a", "optics.active_flags", [], "Ethernet24"),
    ]
    rules = default_rules("fec-pre-ber", "optics-tx-power", "optics-alarms")
    out = run_fabric(tmp_path, LAB, faults, checks=[], baseline=rules)
    assert table(out, Status.FAIL) == {
        ("fec-pre-ber", "spine-01", "Ethernet1/1"),
        ("optics-tx-power", "gpu-002", "eth2"),
        ("optics-alarms", "leaf-r0-a", "Ethernet16"),
    }
    assert one(out, "fec-pre-ber", "spine-01", "Ethernet2/1").status is Status.PASS
    assert one(out, "optics-alarms", "leaf-r0-a", "Ethernet24").status is Status.PASS


def test_optics_firmware_skew_by_part_number(tmp_path: Path) -> None:
    faults = [
        Fault(d, "optics.firmware", "2.4.0", p)
        for d, p in (("leaf-r0-a", "Ethernet0"), ("leaf-r0-a", "Ethernet8"), ("leaf-r0-a", "Ethernet16"))
    ] + [
        Fault("leaf-r0-a", "optics.firmware", "2.1.7", "Ethernet24"),
        Fault("gpu-001", "optics.firmware", "9.9", "eth0"),  # another part number: its own group
        Fault("gpu-001", "optics.part_number", "MCP4Y10-N00A", "eth0"),
    ]
    out = run_fabric(tmp_path, LAB, faults, checks=["optics-firmware-skew"])
    assert table(out, Status.FAIL) == {("optics-firmware-skew", "leaf-r0-a", "Ethernet24")}
    assert one(out, "optics-firmware-skew", "leaf-r0-a", "Ethernet24").message == (
        "leaf-r0-a Ethernet24: MMA4Z00-NS runs firmware 2.1.7; the majority run 2.4.0 (2.4.0 (3), 2.1.7 (1))"
    )
    pinned = "rules:\n  - {id: optics-firmware-skew, params: {allowed: {MMA4Z00-NS: ['2.1.7']}}}\n"
    out2 = run_fabric(tmp_path / "pin", LAB, faults, checks=["optics-firmware-skew"], baseline=pinned)
    assert {(r.device, r.subject) for r in out2.results if r.status is Status.FAIL} == {
        ("leaf-r0-a", "Ethernet0"),
        ("leaf-r0-a", "Ethernet8"),
        ("leaf-r0-a", "Ethernet16"),
    }


def test_optics_firmware_skew_compares_a_part_number_within_each_platform(tmp_path: Path) -> None:
    """Cumulus prints module firmware as NVUE's hex word: compared with Cumulus modules only."""
    pn = "MMA4Z00-NS"
    faults = [
        Fault("leaf-r0-a", "optics.firmware", "2.4.0", p) for p in ("Ethernet0", "Ethernet8", "Ethernet16")
    ]
    for port, word in (("swp1", "0x2e820043"), ("swp2", "0x2e820043"), ("swp3", "0x2e820044")):
        faults += [
            Fault("leaf-r1-a", "optics.part_number", pn, port),
            Fault("leaf-r1-a", "optics.firmware", word, port),
        ]
    out = run_fabric(tmp_path, LAB, faults, checks=["optics-firmware-skew"])
    assert table(out, Status.FAIL) == {("optics-firmware-skew", "leaf-r1-a", "swp3")}
    assert one(out, "optics-firmware-skew", "leaf-r1-a", "swp3").message == (
        "leaf-r1-a swp3: MMA4Z00-NS runs firmware 0x2e820044; the majority of its cumulus modules run "
        "0x2e820043 (0x2e820043 (2), 0x2e820044 (1))"
    )
    for device, port in (("leaf-r0-a", "Ethernet0"), ("leaf-r1-a", "swp1")):
        assert one(out, "optics-firmware-skew", device, port).status is Status.PASS


def test_link_optics_compares_rate_and_media_across_platform_wordings(tmp_path: Path) -> None:
    faults = [
        Fault("leaf-r2-a", "optics.type", "400GBASE-SR8", "Ethernet3/1"),  # uplink to spine-01
        Fault("spine-01", "optics.type", "QSFP-DD-400G-AOC", "Ethernet3/1"),
        Fault("leaf-r3-a", "optics.type", "400GBASE-DR4", "Ethernet1/3"),  # uplink to spine-01
        Fault("spine-01", "optics.type", "QDD-400G-DR4-S", "Ethernet4/1"),
        Fault("leaf-r0-a", "optics.type", "QSFP-DD Double Density 8X Pluggable Transceiver", "Ethernet16"),
        Fault("spine-01", "optics.type", "400GBASE-SR8", "Ethernet1/1"),
    ]
    out = run_fabric(tmp_path, LAB, faults, checks=["link-optics"])
    assert table(out, Status.FAIL) == {
        ("link-optics", "leaf-r2-a", "Ethernet3/1"),
        ("link-optics", "spine-01", "Ethernet3/1"),
    }
    r = one(out, "link-optics", "leaf-r2-a", "Ethernet3/1")
    assert r.message == (
        "leaf-r2-a Ethernet3/1 <-> spine-01 Ethernet3/1: optic 400G SR8 here, 400G AOC at the peer"
    )
    assert one(out, "link-optics", "leaf-r3-a", "Ethernet1/3").status is Status.PASS
    # A generic identifier names no media: that link is not compared (no result, no error).
    assert not [r for r in out.results if r.subject == "Ethernet16" and r.device == "leaf-r0-a"]


def test_new_counters_are_deltas_and_rates_in_diff_and_their_volatile_fields_are_not_changes() -> None:
    from fabline.history.diff import DEFAULT_VOLATILE, IgnoreSet, counter_deltas

    before = {
        "collected_at": "2026-11-29T08:00:00Z",
        "interfaces": {
            "Ethernet0": {"counters": {"pg_dropped": {"3": 0}, "link_flaps": 2}, "last_flap_age_s": 50,
                          "fec_pre_ber": 1e-9},
            "eth2": {"counters": {"roce_out_of_sequence": 10}},
        },
    }  # fmt: skip
    after = {
        "collected_at": "2026-11-29T08:01:40Z",
        "interfaces": {
            "Ethernet0": {"counters": {"pg_dropped": {"3": 500}, "link_flaps": 6}, "last_flap_age_s": 10,
                          "fec_pre_ber": 4e-7},
            "eth2": {"counters": {"roce_out_of_sequence": 60}},
        },
    }  # fmt: skip
    rows = {(c.subject, c.counter): (c.delta, c.per_second) for c in counter_deltas("leaf", before, after)}
    assert rows == {
        ("Ethernet0", "pg_dropped.3"): (500, 5.0),
        ("Ethernet0", "link_flaps"): (4, 0.04),
        ("eth2", "roce_out_of_sequence"): (50, 0.5),
    }
    ignore = IgnoreSet(DEFAULT_VOLATILE)
    assert ignore.matches("interfaces.Ethernet0.last_flap_age_s")
    assert ignore.matches("interfaces.Ethernet0.fec_pre_ber")
    assert not ignore.matches("interfaces.Ethernet0.optics.active_flags")  # a new alarm is a change


def _random_counters(rng: Any, before: dict[str, Any] | None) -> dict[str, Any]:
    """Counters of one port: the health checks' names, odd values among them (None, bools,
    floats, text, a reset, a key or a table missing), ``before`` moved on when given."""
    names = ("fec_uncorrectable", "crc_errors", "roce_rx_discards", "rx_discards_phy", "roce_out_of_sequence",
             "roce_adp_retrans", "pfc_rx_frames", "pfc_tx_frames", "roce_pfc_rx_pause", "ecn_marked",
             "fec_corrected", "link_flaps")  # fmt: skip
    tables = ("pg_dropped", "queue_dropped", "rx_prio_discards", "pfcwd_storms_detected", "pfc_rx_pause",
              "pfc_tx_pause")  # fmt: skip

    def value(old: Any) -> Any:
        roll = rng.random()
        if roll < 0.05:
            return rng.choice([None, True, False, 1.5, "12", -3])
        if not isinstance(old, int) or isinstance(old, bool):
            return rng.randrange(0, 1000)
        if roll < 0.1:
            return rng.randrange(0, max(1, old))  # a reset (or the same)
        return old + rng.choice([0, 0, 0, 1, 2, 50, 100_000])

    out: dict[str, Any] = {}
    for key in names:
        if rng.random() < 0.85:
            out[key] = value((before or {}).get(key))
    for key in tables:
        if rng.random() < 0.15:
            continue
        old = (before or {}).get(key)
        old = old if isinstance(old, dict) else {}
        prios = [p for p in ("0", "3", "4", "6") if rng.random() < 0.8]
        out[key] = {p: value(old.get(p)) for p in prios}
    return out


@pytest.mark.parametrize("seed", range(6))
def test_counter_checks_quick_pass_decides_as_the_full_reading(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The counter checks' pass without dicts (``_quiet``) gives the very results of the full
    reading on ports with odd, reset, missing and moving counters, at several limits."""
    import random

    from fabline.checks import DeviceContext
    from fabline.checks.fabric.health import (
        CountersDeltaCheck,
        LosslessDropsDeltaCheck,
        PfcPauseRateCheck,
        PfcStormsDeltaCheck,
        RoceErrorsDeltaCheck,
    )

    rng = random.Random(seed)
    devices = []
    for d in range(40):
        before: dict[str, Any] = {}
        now: dict[str, Any] = {}
        for p in range(24):
            port = f"Ethernet{p * 8}"
            if rng.random() < 0.9:
                before[port] = {"counters": _random_counters(rng, None)}
            if rng.random() < 0.95:
                now[port] = {"counters": _random_counters(rng, before.get(port, {}).get("counters"))}
        devices.append(
            DeviceContext(
                f"leaf{d}",
                "sonic",
                "leaf",
                (),
                {},
                {"interfaces": now},
                {},
                {"interfaces": before},
                rng.choice([None, 3600.0, 0.5]),
            )
        )
    checks = [
        cls(params)
        for cls in (LosslessDropsDeltaCheck, RoceErrorsDeltaCheck, PfcStormsDeltaCheck)
        for params in ({}, {"max_delta": 2}, {"max_delta": 60, "priorities": [3, 4]})
    ] + [
        PfcPauseRateCheck(params)
        for params in ({}, {"max_per_s": 0}, {"max_per_s": 0.01}, {"max_per_s": 1e9})
    ]

    def results() -> list[Any]:
        out = []
        for check in checks:
            for dev in devices:
                for r in check.check_device(dev):
                    out.append((r.to_dict(), list(getattr(r, "subjects", None) or ())))
        return out

    quick = results()
    monkeypatch.setattr(CountersDeltaCheck, "_quiet", lambda self, now, then: False)
    monkeypatch.setattr(PfcPauseRateCheck, "_quiet", lambda self, now, then, interval: False)
    full = results()
    assert quick == full
    passes = sum(len(subjects) for d, subjects in quick if d["status"] == "pass")
    assert passes > 500 and any(d["status"] == "fail" for d, _ in quick)
