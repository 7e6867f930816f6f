"""Linux host platform: merging one host's fragments, RDMA device join, read-only allow-list."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from fabline.errors import CommandUnavailable, ParseError
from fabline.platforms import get_platform, merge_fragments, parse_output
from fabline.platforms.linux import COMMANDS, attach_rdma_devices, dscp_code
from fabline.state import schema_document
from tests.conftest import samples_dir

LOCAL = Path(__file__).resolve().parents[1] / "parsers" / "local" / "linux"
WRITE_WORDS = re.compile(
    r"\b(set|add|del|tee|rm|mv|mkdir|sysctl|modprobe)\b|>|--pfc|--trust|--set|-t\s|-w\b|\s-s\s"
)


def _local(name: str) -> str:
    return (LOCAL / name).read_text("utf-8")


def test_merge_gpu_host_fragments() -> None:
    """One host port (eth2 on mlx5_0): link, QoS, ECN, RDMA counters, RDMA-CM ToS, modules, NCCL."""
    fragments = [
        parse_output("linux", "ip -j -d link show", _local("ip_-j_-d_link_show-constructed.json")),
        parse_output("linux", "mlnx_qos -i eth2", _local("mlnx_qos-eth2-trust-pcp-constructed.txt")),
        parse_output(
            "linux",
            "grep -H . /sys/class/net/eth2/ecn/roce_*/enable/*",
            _local("ecn_enable-eth2-constructed.txt"),
        ),
        parse_output(
            "linux",
            "grep -H . /sys/class/net/eth2/device/infiniband/*/ports/1/hw_counters/*",
            _local("hw_counters-eth2-constructed.txt"),
        ),
        parse_output("linux", "ethtool -S eth2", _local("ethtool_-S-mlx5-constructed.txt")),
        parse_output(
            "linux",
            "cat /sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos",
            _local("default_roce_tos-106.txt"),
        ),
        parse_output("linux", "lsmod", _local("lsmod-gpu-host-constructed.txt")),
        parse_output("linux", "cat /etc/nccl.conf", _local("nccl_conf-constructed.txt")),
    ]
    state = attach_rdma_devices(merge_fragments(fragments))
    eth2 = state["interfaces"]["eth2"]
    assert eth2["mtu"] == 9000
    assert eth2["nic"] == {
        "pci_address": "0000:1a:00.0",
        "ecn_np_priorities": [3],
        "ecn_rp_priorities": [3],
        "rdma_device": "mlx5_0",
        "roce_tos": 106,
    }
    # Counters from ethtool -S and from RDMA hw_counters merge into one object.
    assert eth2["counters"]["pfc_rx_pause"]["3"] == 4711 and eth2["counters"]["cnp_sent"] == 88213
    assert eth2["trust"] == "pcp" and eth2["pfc_priorities"] == [3, 4]
    assert state["host"]["gpudirect_rdma"] is True
    assert state["host"]["nccl_env"]["NCCL_IB_TC"] == "106"
    # The ToS byte is DSCP << 2 | ECN: 106 is DSCP 26 with ECT(0).
    assert (eth2["nic"]["roce_tos"] >> 2, eth2["nic"]["roce_tos"] & 3) == (26, 2)
    jsonschema.validate({"schema": "fabline.state/1", "name": "gpu-01", **state}, schema_document())


def test_rdma_device_join_needs_the_netdev_mapping() -> None:
    state = merge_fragments(
        [
            parse_output(
                "linux",
                "ibv_devinfo",
                (samples_dir() / "linux_host/ibv_devinfo-cx7-roce-mlx5_2.txt").read_text(),
            ),
            parse_output(
                "linux",
                "cat /sys/kernel/config/rdma_cm/mlx5_2/ports/1/default_roce_tos",
                _local("default_roce_tos-104-no-ect.txt"),
            ),
            parse_output(
                "linux",
                "show_gids",
                (samples_dir() / "linux_host/show_gids-k8s-macvlan-pod-tabs.txt").read_text(),
            ),
        ]
    )
    attach_rdma_devices(state)
    assert state["interfaces"]["net3"]["nic"]["roce_tos"] == 104
    assert "roce_tos" not in state["interfaces"]["net1"]["nic"]  # mlx5_0: no ToS was read
    assert state["host"]["rdma_devices"]["mlx5_2"]["firmware"] == "28.42.1000"


def test_lsmod_gpudirect_absent_module_is_false() -> None:
    frag = parse_output("linux", "lsmod", _local("lsmod-no-peermem-constructed.txt"))
    assert frag["host"]["gpudirect_rdma"] is False


def test_command_not_found_is_unavailable() -> None:
    with pytest.raises(CommandUnavailable):
        parse_output("linux", "mlnx_qos -i eth2", _local("mlnx_qos-command-not-found.txt"))


def test_set_invocations_are_not_on_the_allow_list() -> None:
    with pytest.raises(ParseError, match="read-only allow-list"):
        parse_output("linux", "mlnx_qos -i eth2 --pfc 0,0,0,1,0,0,0,0", "PFC configuration:")
    with pytest.raises(ParseError, match="read-only allow-list"):
        parse_output("linux", "ethtool --set-fec eth2 encoding rs", "")


@pytest.mark.parametrize("command", COMMANDS, ids=[c.template for c in COMMANDS])
def test_allow_list_is_read_only(command: Any) -> None:
    assert not WRITE_WORDS.search(command.template), command.template
    assert command.parser.__name__.startswith("parse_")


def test_template_parameters() -> None:
    platform = get_platform("linux")
    _, params = platform.match("cat /sys/kernel/config/rdma_cm/mlx5_3/ports/1/default_roce_tos")
    assert params == {"rdma_device": "mlx5_3"}
    command, params = platform.match("ethtool -I --show-fec ens1f0np0")
    assert command.template == "ethtool -I --show-fec {interface}" and params == {"interface": "ens1f0np0"}


@pytest.mark.parametrize(
    ("word", "code"), [("0", 0), ("63", 63), ("64", None), ("AF41", 34), ("cs3", 24), ("VA", 44)]
)
def test_dscp_code(word: str, code: int | None) -> None:
    assert dscp_code(word) == code
