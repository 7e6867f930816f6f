"""A counter summary made in parts (the diff's workers) keeps the same top movers as one made in one go."""

from __future__ import annotations

from fabline.history.counters import TOP_MOVERS, CounterSummary


def _rows(device: str, ports: int, delta: int) -> list[tuple]:
    # (device, subject, counter, before, after, delta, per_second, reset, seconds)
    return [
        (device, f"eth{p}", "cnp_sent", 0, delta, delta, delta / 86400, False, 86400.0) for p in range(ports)
    ]


def _top(summary: CounterSummary) -> list[tuple[str, str]]:
    return [(r["device"], r["subject"]) for r in summary.by_counter["cnp_sent"].to_dict()["top"]]


def test_ties_go_to_the_first_rows_whatever_the_parts() -> None:
    # Every row ties: the top movers are the first rows in device order, also across parts.
    devices = [(f"gpu-{n:03d}", _rows(f"gpu-{n:03d}", 3, 49)) for n in range(12)]
    whole = CounterSummary()
    for _, rows in devices:
        whole.add_device(rows)
    expected = _top(whole)
    assert expected == [("gpu-000", "eth0"), ("gpu-000", "eth1"), ("gpu-000", "eth2"),
                        ("gpu-001", "eth0"), ("gpu-001", "eth1")][:TOP_MOVERS]  # fmt: skip
    for step in (1, 2, 5):
        merged = CounterSummary()
        # parts merged in any order: the rows' positions decide, not the order parts arrive in
        starts = list(range(0, len(devices), step))
        for start in reversed(starts):
            part = CounterSummary(first=start)
            for _, rows in devices[start : start + step]:
                part.add_device(rows)
            merged.merge(part)
        assert _top(merged) == expected, step


def test_a_larger_delta_still_wins_over_an_earlier_row() -> None:
    whole = CounterSummary()
    whole.add_device(_rows("gpu-000", 8, 10))
    late = CounterSummary(first=1)
    late.add_device(_rows("gpu-001", 1, 99))
    whole.merge(late)
    assert _top(whole)[0] == ("gpu-001", "eth0")


def test_devices_fed_in_any_order_give_the_summary_of_name_order() -> None:
    """A check's workers feed devices in inventory order, with their positions in name order: the
    first resets and findings, the top movers and the summed rates are those of one pass in name
    order, however the devices are split and ordered."""
    import random

    from fabline.history.counters import CounterLimits

    rng = random.Random(3)
    devices = []
    for n in range(40):
        name = f"gpu-{n:03d}"
        rows = []
        for p in range(6):
            delta = rng.choice([7, 7, 49, rng.randrange(1, 10**9)])
            seconds = 86400.0 + n
            rows.append((name, f"eth{p}", "cnp_sent", 0, delta, delta, delta / seconds, False, seconds))
            rows.append((name, f"eth{p}", "crc_errors", 0, p, p, p / seconds, False, seconds))
            rows.append((name, f"eth{p}", "fec_corrected", 9, 1, 1, None, True, seconds))
        devices.append(rows)
    limits = CounterLimits.from_rules({})

    def doc(summary: CounterSummary) -> dict:
        return summary.to_dict() | {"deltas": summary.deltas(), "metrics": summary.metrics("x")}

    whole = CounterSummary(limits)
    for rows in devices:
        whole.add_device(rows)
    assert whole.findings_total and whole.resets
    order = list(range(len(devices)))
    for split in (1, 3, 17):
        rng.shuffle(order)
        merged = CounterSummary(limits)
        for start in range(0, len(order), split):
            part = CounterSummary(limits)
            for pos in order[start : start + split]:
                part.add_device(devices[pos], None, pos)
            merged.merge(part)
        assert doc(merged) == doc(whole), split
