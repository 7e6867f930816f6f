"""Collection profiles: which allow-listed commands a collection runs on each platform, in one place.

A profile is data. ``device_commands`` run once per device (configuration views first, so the
operational views that follow win the merge, as ``docs/platforms/*.md`` ask); ``interface_commands``
run once per interface the device reports (``{interface}``); ``rdma_commands`` once per RDMA device a
Linux host reported (``{rdma_device}``). Every template must be on the platform's read-only
allow-list (:data:`fabline.platforms.PLATFORMS`); :func:`check_profiles` proves it and the collector
refuses any concrete command line that does not match (see :func:`fabline.collect.plan.allowed`).

The simulator (``fabline.sim``) answers exactly these commands; a command added here needs a
renderer there.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fabline.platforms import PLATFORMS
from fabline.platforms.cumulus import apply_port_defaults
from fabline.platforms.linux import attach_rdma_devices

Finalizer = Callable[[dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class Profile:
    """What a collection runs on one platform, and how it connects.

    Attributes:
        platform: Platform id.
        transport: ``netmiko`` (an interactive CLI session) or ``exec`` (paramiko exec channels,
            one per command, real exit codes).
        device_type: The netmiko ``device_type`` for ``netmiko`` transports.
        device_commands: Run once per device, in this order.
        interface_commands: Templates with ``{interface}``, run for every selected interface.
        interface_pattern: Which interface names (from the device commands' state) get the
            per-interface commands; ``None`` = every reported interface.
        rdma_commands: Templates with ``{rdma_device}`` (Linux), run for every RDMA device that the
            per-interface commands reported as some interface's ``nic.rdma_device``.
        rdma_sources: The command templates whose outputs name each interface's RDMA device
            (``nic.rdma_device``): parsed on the collecting thread to plan the ``rdma_commands``
            (everything else is parsed after the session, off the collecting thread).
        rdma_listing: The command templates listing every RDMA device of the host
            (``host.rdma_devices``): parsed to plan only when no chosen interface names one.
        finalize: Post-merge hook over the merged state (switch-wide defaults, RDMA-device joins).
        shell: The CLI is a POSIX shell (bash on SONiC and Cumulus): commands go in batches as one
            script line with end markers, instead of one prompt round trip each.
    """

    platform: str
    transport: str
    device_type: str | None
    device_commands: tuple[str, ...]
    interface_commands: tuple[str, ...] = ()
    interface_pattern: str | None = None
    rdma_commands: tuple[str, ...] = ()
    rdma_sources: tuple[str, ...] = ()
    rdma_listing: tuple[str, ...] = ()
    finalize: Finalizer | None = None
    shell: bool = False

    def templates(self) -> tuple[str, ...]:
        """Every command template of the profile, in run order."""
        return self.device_commands + self.interface_commands + self.rdma_commands

    def wants_interface(self, name: str) -> bool:
        """Whether per-interface commands run for this interface.

        Example:
            >>> PROFILES["cumulus"].wants_interface("swp1"), PROFILES["cumulus"].wants_interface("eth0")
            (True, False)
        """
        return self.interface_pattern is None or re.fullmatch(self.interface_pattern, name) is not None


PROFILES: dict[str, Profile] = {
    p.platform: p
    for p in (
        Profile(
            platform="sonic",
            # SONiC's admin login is bash with the click `show` commands; netmiko's Linux driver
            # handles that prompt (its dell_sonic/edgecore_sonic drivers enter sonic-cli instead).
            transport="netmiko",
            device_type="linux",
            shell=True,
            device_commands=(
                "show runningconfiguration all",
                "show version",
                "show interfaces status",
                "show lldp table",
                "show interfaces transceiver eeprom --dom",
                "show pfc counters",
                # SONiC 202305+; older images answer click's 'No such command' (unavailable).
                "show interfaces counters fec-stats",
            ),
        ),
        Profile(
            platform="cumulus",
            transport="netmiko",
            device_type="cumulus_linux",
            shell=True,
            device_commands=(
                "nv config show -o json",
                "nv show system",
                "decode-syseeprom",
                "nv show qos roce",
                "nv show interface -o json",
                "net show interface all json",
            ),
            interface_commands=(
                "nv show interface {interface} qos roce status",
                "nv show interface {interface} qos roce counters",
                # After 'nv config show' so the operational watchdog state wins the merge.
                "nv show interface {interface} qos pfc-watchdog",
                "nv show interface {interface} transceiver",
            ),
            interface_pattern=r"swp\d+(s\d+)?",
            finalize=apply_port_defaults,
        ),
        Profile(
            platform="arista_eos",
            transport="netmiko",
            device_type="arista_eos",
            device_commands=(
                "show running-config",
                "show version | json",
                "show interfaces | json",
                "show lldp neighbors | json",
                "show interfaces transceiver | json",
                # Every lane's rx/tx power (the plain view shows lane 1 of a 4-lane port only);
                # after it, so the per-lane lists win the merge.
                "show interfaces transceiver dom thresholds | json",
                "show interfaces counters errors | json",
                "show priority-flow-control",
            ),
        ),
        Profile(
            platform="cisco_nxos",
            transport="netmiko",
            device_type="cisco_nxos",
            device_commands=(
                "show running-config",
                "show version",
                "show interface",
                "show lldp neighbors detail",
                "show interface transceiver details",
            ),
        ),
        Profile(
            platform="linux",
            transport="exec",
            device_type=None,
            device_commands=(
                "cat /proc/sys/kernel/hostname",
                "cat /etc/os-release",
                "uname -r",
                "ip -j -d link show",
                "show_gids",
                "lldpctl -f json",
                "lsmod",
                "cat /etc/nccl.conf",
                "ibv_devinfo",
            ),
            interface_commands=(
                "ethtool {interface}",
                "ethtool -i {interface}",
                "ethtool -I --show-fec {interface}",
                "ethtool -m {interface}",
                "ethtool -S {interface}",
                "mlnx_qos -i {interface}",
                "grep -H . /sys/class/net/{interface}/ecn/roce_*/enable/*",
                "grep -H . /sys/class/net/{interface}/device/infiniband/*/ports/1/hw_counters/*",
            ),
            rdma_commands=("cat /sys/kernel/config/rdma_cm/{rdma_device}/ports/1/default_roce_tos",),
            rdma_sources=(
                "show_gids",
                "grep -H . /sys/class/net/{interface}/device/infiniband/*/ports/1/hw_counters/*",
            ),
            rdma_listing=("ibv_devinfo",),
            finalize=attach_rdma_devices,
        ),
    )
}


def check_profiles() -> list[str]:
    """Every profile template that is not on its platform's allow-list (empty when all are).

    Example:
        >>> check_profiles()
        []
    """
    problems = []
    for profile in PROFILES.values():
        commands = PLATFORMS[profile.platform].commands
        known = {c.template for c in commands}
        for template in profile.templates() + profile.rdma_sources + profile.rdma_listing:
            if template not in known:
                problems.append(f"{profile.platform}: {template!r} is not on the read-only allow-list")
    return problems
