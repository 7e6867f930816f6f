"""SONiC (config_db JSON and the sonic-utilities show commands): read-only commands and their parsers.

Every command here only reads: ``show`` commands and a ``cat`` of the saved CONFIG_DB. The
parsers live in :mod:`fabline.platforms.sonic_configdb` (CONFIG_DB JSON in all its forms) and
:mod:`fabline.platforms.sonic_show` (sonic-utilities text tables); ``docs/platforms/sonic.md``
says what each command feeds and which vendor quirks the parsers handle.
"""

from __future__ import annotations

from typing import Any

from fabline.platforms.base import Command, Releases
from fabline.platforms.linux import parse_carrier_changes
from fabline.platforms.routing import (
    parse_frr_bgp_summary_json,
    parse_frr_bgp_summary_text,
    parse_frr_route_json,
)
from fabline.platforms.sonic_configdb import parse_show_runningconfiguration_all
from fabline.platforms.sonic_show import (
    parse_redis_hgetall_switch_table,
    parse_show_ecn,
    parse_show_interfaces_autoneg_status,
    parse_show_interfaces_counters,
    parse_show_interfaces_counters_fec_stats,
    parse_show_interfaces_description,
    parse_show_interfaces_fec_status,
    parse_show_interfaces_flap,
    parse_show_interfaces_status,
    parse_show_interfaces_transceiver_eeprom,
    parse_show_interfaces_transceiver_status,
    parse_show_lldp_neighbors,
    parse_show_lldp_table,
    parse_show_pfc_asymmetric,
    parse_show_pfc_counters,
    parse_show_pfc_priority,
    parse_show_pfcwd_config,
    parse_show_pfcwd_stats,
    parse_show_platform_summary,
    parse_show_priority_group_drop_counters,
    parse_show_queue_counters,
    parse_show_queue_wredcounters,
    parse_show_version,
)
from fabline.platforms.spec import MtuKind, MtuSemantics, Platform, PlatformSpec, RunPlan
from fabline.platforms.synthetic_fill import fill_missing, fill_priorities, roce_dscp_map
from fabline.platforms.toolkit import fill_storm_counters

_CONFIG_FEEDS = (
    "interfaces.*.{admin_up, mtu, speed_gbps, fec, autoneg, description, alias, pfc_asymmetric, trust, "
    "dscp_to_priority, dscp_to_tc_map, pfc_priorities, ecn, buffer_pg, pfc_watchdog}; qos.{pfc_watchdog, "
    "buffer_mode, maps, wred_profiles, buffer_profiles}; facts.{hostname, hwsku, sonic_platform}"
)
_OPTICS_FEEDS = (
    "interfaces.*.optics.{present, vendor, part_number, serial, type, revision, firmware, temperature_c, "
    "rx_power_dbm, tx_power_dbm}"
)
_STATUS_FEEDS = (
    "interfaces.*.{admin_up, oper_up, mtu, speed_gbps, fec, alias, pfc_asymmetric, transceiver_type}"
)

#: ``show interfaces flap``: new in SONiC 202505 (its release notes list it among the new features).
FLAP_RELEASES = Releases(
    since="202505",
    source="SONiC 202505 release notes, 'Link flap count and last flap time' (sonic-utilities PR 3724); "
    "sonic-utilities doc/Command-Reference.md, 'show interfaces flap'",
    feeds=("interfaces.*.last_flap_epoch_s",),
)

_BGP_FEEDS = "bgp.{asn, router_id, neighbors.*.{remote_asn, state, admin_down, prefixes_received, hostname, description}}"
_ROUTE_FEEDS = "bgp.ecmp.{prefix, paths, next_hops, interfaces, protocol}"

COMMANDS: tuple[Command, ...] = (
    Command("show runningconfiguration all", parse_show_runningconfiguration_all, _CONFIG_FEEDS),
    Command("cat /etc/sonic/config_db.json", parse_show_runningconfiguration_all, _CONFIG_FEEDS, kind="file"),
    # The same CONFIG_DB, printed by the tools underneath (nested and flat 'TABLE|key' forms).
    Command("sonic-cfggen -d --print-data", parse_show_runningconfiguration_all, _CONFIG_FEEDS),
    Command("sonic-db-dump -n CONFIG_DB -y", parse_show_runningconfiguration_all, _CONFIG_FEEDS),
    Command(
        "show version",
        parse_show_version,
        "facts.{os_version, model, serial, hwsku, asic, sonic_platform, distribution, kernel, uptime_s}",
    ),
    Command(
        "show platform summary",
        parse_show_platform_summary,
        "facts.{model, serial, hwsku, asic, sonic_platform}",
    ),
    Command("show interfaces status", parse_show_interfaces_status, _STATUS_FEEDS),
    Command("show interfaces status {interface}", parse_show_interfaces_status, _STATUS_FEEDS),
    Command(
        "show interfaces description",
        parse_show_interfaces_description,
        "interfaces.*.{description, admin_up, oper_up, alias}",
    ),
    Command("show interfaces fec status", parse_show_interfaces_fec_status, "interfaces.*.{fec, fec_admin}"),
    Command("show interfaces autoneg status", parse_show_interfaces_autoneg_status, "interfaces.*.autoneg"),
    Command(
        "show lldp table",
        parse_show_lldp_table,
        "interfaces.*.lldp.{device, port, port_id, port_description, other_neighbors}",
    ),
    Command(
        "show lldp neighbors",
        parse_show_lldp_neighbors,
        "interfaces.*.lldp.{device, port, port_id, port_description, chassis_id, other_neighbors}",
    ),
    Command("show pfc priority", parse_show_pfc_priority, "interfaces.*.pfc_priorities"),
    Command("show pfc asymmetric", parse_show_pfc_asymmetric, "interfaces.*.pfc_asymmetric"),
    Command(
        "show pfcwd config",
        parse_show_pfcwd_config,
        "qos.pfc_watchdog.{enabled, detection_ms, restoration_ms, action, poll_interval_ms, big_red_switch}; "
        "interfaces.*.pfc_watchdog",
    ),
    Command(
        "show pfcwd stats",
        parse_show_pfcwd_stats,
        "interfaces.*.counters.{pfcwd_storms_detected, pfcwd_storms_restored}; interfaces.*.pfcwd_stormed_queues",
    ),
    # The switch's kernel netdevs follow the front-panel ports: one read gives every port's flaps.
    Command(
        "grep -H . /sys/class/net/*/carrier_changes",
        parse_carrier_changes,
        "interfaces.*.counters.link_flaps",
        kind="file",
    ),
    # The last link change per port (issue 15 item 3): sonic-utilities PR 3724, first in 202505.
    Command(
        "show interfaces flap",
        parse_show_interfaces_flap,
        "interfaces.*.last_flap_epoch_s",
        releases=FLAP_RELEASES,
    ),
    Command("show ecn", parse_show_ecn, "qos.wred_profiles"),
    # The ECMP hash seed orchagent programs (issue 15 item 7): APPL_DB, not CONFIG_DB.
    Command(
        "redis-cli -n 0 HGETALL SWITCH_TABLE:switch",
        parse_redis_hgetall_switch_table,
        "load_balance.hash_seed",
        unavailable=("Could not connect to Redis",),
    ),
    Command(
        "show interfaces transceiver eeprom --dom", parse_show_interfaces_transceiver_eeprom, _OPTICS_FEEDS
    ),
    Command(
        "show interfaces transceiver eeprom --dom {interface}",
        parse_show_interfaces_transceiver_eeprom,
        _OPTICS_FEEDS,
    ),
    Command("show interfaces transceiver eeprom", parse_show_interfaces_transceiver_eeprom, _OPTICS_FEEDS),
    Command(
        "show interfaces transceiver eeprom {interface}",
        parse_show_interfaces_transceiver_eeprom,
        _OPTICS_FEEDS,
    ),
    Command("show interfaces transceiver info", parse_show_interfaces_transceiver_eeprom, _OPTICS_FEEDS),
    Command(
        "show interfaces transceiver info {interface}",
        parse_show_interfaces_transceiver_eeprom,
        _OPTICS_FEEDS,
    ),
    Command(
        "show interfaces transceiver status",
        parse_show_interfaces_transceiver_status,
        "interfaces.*.optics.{module_state, cmis_state, active_flags}",
    ),
    Command(
        "show interfaces transceiver status {interface}",
        parse_show_interfaces_transceiver_status,
        "interfaces.*.optics.{module_state, cmis_state, active_flags}",
    ),
    Command(
        "show pfc counters", parse_show_pfc_counters, "interfaces.*.counters.{pfc_rx_pause, pfc_tx_pause}"
    ),
    Command(
        "show interfaces counters",
        parse_show_interfaces_counters,
        "interfaces.*.counters.{rx_ok, rx_errors, rx_drops, rx_overruns, "
        "tx_ok, tx_errors, tx_drops, tx_overruns}",
    ),
    Command(
        "show interfaces counters fec-stats",
        parse_show_interfaces_counters_fec_stats,
        "interfaces.*.counters.{fec_corrected, fec_uncorrectable, fec_symbol_errors}; interfaces.*.fec_pre_ber",
    ),
    Command(
        "show priority-group drop counters",
        parse_show_priority_group_drop_counters,
        "interfaces.*.counters.pg_dropped",
    ),
    Command("show queue counters", parse_show_queue_counters, "interfaces.*.counters.queue_dropped"),
    Command(
        "show queue wredcounters",
        parse_show_queue_wredcounters,
        "interfaces.*.counters.{ecn_marked, wred_dropped}",
    ),
    Command(
        "show queue wredcounters {interface} --json",
        parse_show_queue_wredcounters,
        "interfaces.*.counters.{ecn_marked, wred_dropped}",
    ),
    # FRR in the bgp container; SONiC's /usr/bin/vtysh runs it there (the admin user is in the
    # docker group). JSON: one summary for every session, one route lookup for the probe.
    Command("vtysh -c 'show bgp summary json'", parse_frr_bgp_summary_json, _BGP_FEEDS),
    Command("vtysh -c 'show ip bgp summary json'", parse_frr_bgp_summary_json, _BGP_FEEDS),
    Command("vtysh -c 'show bgp ipv4 unicast summary'", parse_frr_bgp_summary_text, _BGP_FEEDS),
    Command("vtysh -c 'show ip route {prefix} json'", parse_frr_route_json, _ROUTE_FEEDS),
)


# --- what a collection of a healthy device adds to a synthetic state (PlatformSpec.synthetic_extras)

#: What a collection adds to the synthetic state of a SONiC switch port that is up (from the
#: simulator's outputs of the SONiC collection profile, parsed by the SONiC parsers: ``show
#: interfaces transceiver status``, ``show pfcwd config``, ``show queue counters``, ``show
#: priority-group drop counters``, ``show interfaces counters fec-stats``, carrier changes).
#: ``show pfcwd stats`` lists no queue of a clean switch: the parse marks the storm counters read
#: and gives every port no storm (``pfcwd_stormed_queues: []``, ``pfcwd_storms_detected: {}``).
_SONIC_PORT: dict[str, Any] = {
    "alias": None,  # etp<n>
    "pfc_asymmetric": False,
    "transceiver_type": "OSFP 8X Pluggable Transceiver",
    "dscp_to_tc_map": "AZURE",
    "pfc_watchdog": {"enabled": True, "detection_ms": 200, "restoration_ms": 200, "action": "drop"},
    "fec_pre_ber": 1.48e-09,
    "frame_bytes": 9100,
    "frame_bytes_tagged": 9100,
}
_SONIC_OPTICS: dict[str, Any] = {
    "present": True, "firmware": "46.120.10", "type": "OSFP 8X Pluggable Transceiver", "revision": "A2",
    "module_state": "ModuleReady", "cmis_state": "READY", "active_flags": [],
}  # fmt: skip
_SONIC_FACTS: dict[str, Any] = {
    "hwsku": "Mellanox-SN5600-V256", "sonic_platform": "x86_64-nvidia_sn5600-r0", "asic": "mellanox",
    "distribution": "Debian 12.5", "kernel": "6.1.0-11-2-amd64", "uptime_s": 1048440,
}  # fmt: skip


def synthetic_extras(doc: dict[str, Any]) -> None:
    """What a collection of a healthy SONiC switch adds to its synthetic state (:func:`fabline.synthetic.as_collected`)."""
    fill_missing(doc.setdefault("facts", {}), _SONIC_FACTS)
    qos = doc.setdefault("qos", {})
    fill_missing(
        qos.setdefault("pfc_watchdog", {}),
        {"action": "drop", "poll_interval_ms": 200, "stats_collected": True},
    )
    for name, body in doc.get("interfaces", {}).items():
        if name.startswith("Ethernet") and isinstance(body, dict):  # toolkit.fill_storm_counters
            body.setdefault("pfcwd_stormed_queues", [])
            body.setdefault("counters", {}).setdefault("pfcwd_storms_detected", {})
    fill_missing(qos, {"buffer_mode": "traditional", "maps": {"dscp_to_tc_map": {"AZURE": roce_dscp_map()}},
                "wred_profiles": {"AZURE_LOSSLESS": {"ecn_mode": "ecn_all", "enabled": True, "min_bytes": 150000,
                                                     "max_bytes": 1500000, "probability_pct": 5}}})  # fmt: skip
    for n, body in enumerate(doc.get("interfaces", {}).values()):
        if not body.get("oper_up"):
            continue
        fill_missing(body, {**_SONIC_PORT, "alias": f"etp{n + 1}"})
        lldp = body.get("lldp")
        if isinstance(lldp, dict):
            lldp.setdefault("port_description", lldp.get("port"))
            body.setdefault("description", f"{lldp.get('device')}:{lldp.get('port')}")
        ecn = body.get("ecn")
        if isinstance(ecn, dict):
            for profile in ecn.values():
                if isinstance(profile, dict):
                    fill_missing(profile, {"profile": "AZURE_LOSSLESS", "ecn_mode": "ecn_all"})
        optics = body.get("optics")
        if isinstance(optics, dict):
            fill_missing(optics, _SONIC_OPTICS)
        counters = body.get("counters")
        if isinstance(counters, dict):
            for key in ("pfc_rx_pause", "pfc_tx_pause", "pg_dropped", "queue_dropped"):
                fill_priorities(counters, key)
            counters.setdefault("fec_symbol_errors", counters.get("fec_corrected", 0))
            counters.setdefault("link_flaps", 1)


PLATFORM = PlatformSpec(
    id=Platform.SONIC,
    description="SONiC (config_db JSON and the sonic-utilities show commands)",
    kind="switch",
    commands=COMMANDS,
    run=RunPlan(
        platform=Platform.SONIC,
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
            # Loss on the lossless class and PFC storms (issue 15 items 2 and 4): whole-switch tables.
            "show priority-group drop counters",
            "show queue counters",
            "show pfcwd stats",
            "grep -H . /sys/class/net/*/carrier_changes",
            # 202505+ only (FLAP_RELEASES): sent once the release is known, not to 202311.
            "show interfaces flap",
            # DOM alarm and warning flags of every module (issue 15 item 5).
            "show interfaces transceiver status",
            # The ECMP hash seed (APPL_DB SWITCH_TABLE:switch; switch.json derives it per device type).
            "redis-cli -n 0 HGETALL SWITCH_TABLE:switch",
            "vtysh -c 'show bgp summary json'",
        ),
        route_commands=("vtysh -c 'show ip route {prefix} json'",),
        # Ports 'show pfcwd stats' leaves out had no storm and are in none now.
        finalize=fill_storm_counters,
    ),
    network_os=("sonic", "dellemc.enterprise_sonic.sonic"),
    # Port names step by the 8 lanes of a 400G/800G port.
    port_name=lambda index: f"Ethernet{index * 8}",
    # PORT's mtu is the frame size the ASIC accepts.
    mtu=MtuSemantics(MtuKind.FRAME, fabric_mtu=9100),
    os_version="SONiC.202311.1",
    config_command="show runningconfiguration all",
    synthetic_extras=synthetic_extras,
    remediation="fabline.remediate.sonic:REMEDIATION",
)
