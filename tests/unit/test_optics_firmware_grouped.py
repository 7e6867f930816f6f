"""optics-firmware-skew collects each device's modules grouped by (part number, firmware) instead of
one row per port (issue 14: the per-port rows were 10 MB of the workers' parts on 100k GPUs).

The property: on any fleet, the grouped check gives the same results, in the same order, as the
per-port algorithm it replaced (kept here as the reference).
"""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from fabline.checks import natural_key
from fabline.checks.fabric.fleet import OpticsFirmwareSkewCheck
from fabline.results import PassBlock, Result


def _reference(
    check: OpticsFirmwareSkewCheck, devices: dict[str, tuple[str, dict[str, Any]]]
) -> list[Result]:
    """The per-port algorithm: one (port, part number, firmware) row per module."""
    rows_by_device = {}
    for name, (platform, interfaces) in devices.items():
        rows = []
        for port, body in interfaces.items():
            optics = body.get("optics")
            if isinstance(optics, dict):
                pn, fw = optics.get("part_number"), optics.get("firmware")
                if isinstance(pn, str) and pn and isinstance(fw, str) and fw:
                    rows.append((port, pn, fw))
        rows_by_device[name] = (platform, rows)
    by_pn: dict[tuple[str, str], list[tuple[str, str, str]]] = {}
    for device, (platform, rows) in rows_by_device.items():
        for port, pn, fw in rows:
            by_pn.setdefault((pn, platform), []).append((device, port, fw))
    several = Counter(pn for pn, _ in by_pn)
    passes: dict[str, list[str | None]] = {}
    out: list[Result] = []
    for pn, platform in sorted(by_pn):
        members = by_pn[(pn, platform)]
        counts = Counter(fw for _, _, fw in members)
        top = counts.most_common(2)
        tie = len(top) == 2 and top[0][1] == top[1][1]
        majority = None if tie else top[0][0]
        spread = ", ".join(f"{v} ({n})" for v, n in counts.most_common())
        pinned = check.params.allowed.get(pn)
        for device, port, fw in sorted(members, key=lambda m: (m[0], natural_key(m[1]))):
            if (pinned is not None and fw in pinned) or (pinned is None and fw == majority):
                passes.setdefault(device, []).append(port)
                continue
            if pinned is not None:
                message = (
                    f"{device} {port}: {pn} runs firmware {fw}, not a pinned version ({', '.join(pinned)})"
                )
                expected: Any = pinned
            elif tie:
                message = f"{device} {port}: {pn} modules disagree on firmware with no majority: {spread}"
                expected = "one version"
            else:
                whose = f"of its {platform} modules " if several[pn] > 1 else ""
                message = (
                    f"{device} {port}: {pn} runs firmware {fw}; the majority {whose}run {majority} ({spread})"
                )
                expected = majority
            out.append(
                check.failed(
                    device, port, message, expected=expected, actual={"part_number": pn, "firmware": fw}
                )
            )
    for device in sorted(passes):
        out.append(PassBlock(check.id, device, check.effective_severity, passes[device]))
    return out


def _rows(results: list[Result]) -> list[tuple[Any, ...]]:
    return [
        (type(r).__name__, r.device, r.subject, r.status, r.message, r.expected, r.actual,
         tuple(getattr(r, "subjects", ()) or ()))
        for r in results
    ]  # fmt: skip


_PORTS = [f"Ethernet{i}" for i in range(1, 13)] + ["swp1", "swp2", "swp10", "eth0", "eth1"]
_module = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {
            "part_number": st.sampled_from(["MMA4Z00-NS", "MMS4X00-NS", "", 7]),
            "firmware": st.sampled_from(["2.4.0", "2.1.7", "0x2e820044", ""]),
        }
    ),
)
_device = st.tuples(
    st.sampled_from(["sonic", "cumulus_nvue"]),
    st.dictionaries(st.sampled_from(_PORTS), st.fixed_dictionaries({"optics": _module}), max_size=8),
)


@settings(max_examples=300, deadline=None)
@given(
    fleet=st.dictionaries(st.sampled_from([f"leaf-{i}" for i in range(8)]), _device, max_size=6),
    pin=st.one_of(st.none(), st.sampled_from([["2.4.0"], ["2.1.7", "0x2e820044"]])),
)
def test_grouped_collection_judges_as_the_per_port_rows(fleet: dict[str, Any], pin: list[str] | None) -> None:
    check = OpticsFirmwareSkewCheck({"allowed": {"MMA4Z00-NS": pin}} if pin else None)
    collected = {
        name: check.collect(SimpleNamespace(platform=platform, interfaces=interfaces))  # type: ignore[arg-type]
        for name, (platform, interfaces) in fleet.items()
    }
    got = list(check.check_fabric(SimpleNamespace(collected=collected)))  # type: ignore[arg-type]
    assert _rows(got) == _rows(_reference(check, fleet))


def test_a_device_of_one_firmware_is_one_group_shared_by_equal_devices() -> None:
    check = OpticsFirmwareSkewCheck()
    body = {"optics": {"part_number": "MMA4Z00-NS", "firmware": "2.4.0"}}
    a = check.collect(SimpleNamespace(platform="sonic", interfaces={"Ethernet8": body, "Ethernet0": body}))  # type: ignore[arg-type]
    b = check.collect(SimpleNamespace(platform="sonic", interfaces={"Ethernet8": body, "Ethernet0": body}))  # type: ignore[arg-type]
    assert a == ("sonic", (("MMA4Z00-NS", "2.4.0", ("Ethernet0", "Ethernet8")),))
    assert a[1][0][2] is b[1][0][2]  # the port names are one interned tuple
