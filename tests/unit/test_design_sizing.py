"""Sizing arithmetic: the seeds' worked examples (done right), limits, infeasible cases and proposals."""

from __future__ import annotations

import pytest

from fabline.design.sizing import SizingInput, down_ports, max_gpus, render_text, size, three_tier_max
from fabline.errors import ConfigError


def test_seed_1024_gpus_on_64_port_switches() -> None:
    # Seed 004 claims 8 leaves + 6 spines; a non-blocking rail-optimized pod needs 32 + 16.
    s = size(SizingInput(gpus=1024, gpus_per_server=8, nic_speed_gbps=400, switch_ports=64))
    assert s.feasible
    assert (s.servers, s.leaves, s.spines, s.planes) == (128, 32, 16, 1)
    assert (s.down_ports, s.up_ports, s.leaves_per_rail, s.links_per_leaf_spine) == (32, 32, 4, 2)
    assert (s.host_links, s.fabric_links, s.transceivers) == (1024, 1024, 4096)
    assert s.max_gpus == 2048


def test_seed_100k_gpus_on_128_port_switches_is_infeasible_and_explained() -> None:
    # Seed 000: 1,563 leaves and 782 spines "in two tiers"; a plane tops out at 8,192 GPUs.
    s = size(SizingInput(gpus=100_000, switch_ports=128))
    assert not s.feasible
    assert s.max_gpus == 8192
    assert (
        "8,192 GPUs" in s.reason and "1,568 leaves per plane" in s.reason and "at most 128 leaves" in s.reason
    )
    text = "\n".join(s.proposals)
    assert "512 x 100G" in text and "131,072" in text and "4 planes" in text
    assert "three tiers" in text and "524,288" in text
    assert s.spines == 0 and s.fabric_links == 0


def test_breakout_proposal_is_itself_feasible() -> None:
    s = size(SizingInput(gpus=100_000, switch_ports=512, planes=4))
    assert s.feasible
    assert (s.link_speed_gbps, s.leaves_per_plane, s.spines_per_plane) == (100, 392, 256)
    assert (s.leaves, s.spines) == (392 * 4, 256 * 4)
    assert s.host_links == 12_500 * 8 * 4


def test_benchmark_design_131072_gpus() -> None:
    s = size(SizingInput(gpus=131_072, nic_speed_gbps=100, switch_ports=512))
    assert s.feasible and (s.leaves, s.spines, s.links_per_leaf_spine) == (512, 256, 1)
    # One GPU more does not fit the plane.
    assert not size(SizingInput(gpus=131_073, nic_speed_gbps=100, switch_ports=512)).feasible


@pytest.mark.parametrize(("radix", "expected"), [(64, 2048), (128, 8192), (512, 131_072), (32, 512)])
def test_max_gpus_is_r_squared_over_two(radix: int, expected: int) -> None:
    assert max_gpus(radix, 8) == expected == radix * radix // 2
    assert size(SizingInput(gpus=expected, switch_ports=radix)).feasible
    assert not size(SizingInput(gpus=expected + 1, switch_ports=radix)).feasible


def test_oversubscription_moves_ports_down() -> None:
    assert down_ports(64, 3) == 48
    s = size(SizingInput(gpus=1024, switch_ports=64, oversubscription=3))
    assert (s.down_ports, s.up_ports) == (48, 16)
    assert s.leaves_per_rail == 3  # ceil(128 servers / 48)
    # Each spine takes one link from each of the 24 leaves: 16 spines fill 24 of 64 ports.
    assert s.spines_per_plane * s.links_per_leaf_spine == 16
    assert s.leaves_per_plane * s.links_per_leaf_spine <= 64


def test_spines_never_exceed_their_ports() -> None:
    for gpus in (8, 64, 200, 1000, 2048):
        s = size(SizingInput(gpus=gpus, switch_ports=64))
        assert s.feasible
        assert s.leaves_per_plane * s.links_per_leaf_spine <= 64
        assert s.spines_per_plane * s.links_per_leaf_spine == s.up_ports


def test_three_tier_max() -> None:
    assert three_tier_max(64) == 65536


@pytest.mark.parametrize(
    ("kwargs", "key"),
    [
        ({"gpus": 0}, "gpus"),
        ({"gpus": 8, "switch_ports": 2}, "switch_ports"),
        ({"gpus": 8, "planes": 3}, "planes"),
        ({"gpus": 8, "oversubscription": 0}, "oversubscription"),
    ],
)
def test_bad_input_is_a_config_error(kwargs: dict[str, int], key: str) -> None:
    with pytest.raises(ConfigError) as err:
        size(SizingInput(**kwargs))
    assert err.value.key == key


def test_more_rails_than_ports() -> None:
    s = size(SizingInput(gpus=64, gpus_per_server=8, switch_ports=4))
    assert not s.feasible and "rails do not fit" in s.reason


def test_text_and_json_forms() -> None:
    s = size(SizingInput(gpus=1024))
    text = render_text(s)
    assert "feasible: yes" in text and "leaves 32, spines 16, planes 1" in text
    d = s.to_dict()
    for key in (
        "feasible",
        "leaves",
        "spines",
        "planes",
        "max_gpus",
        "host_links",
        "fabric_links",
        "transceivers",
        "reason",
    ):
        assert key in d
    assert d["request"]["gpus"] == 1024
    assert "feasible: NO" in render_text(size(SizingInput(gpus=100_000, switch_ports=128)))
