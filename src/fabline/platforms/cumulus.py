"""NVIDIA Cumulus Linux 5.x (NVUE) and classic files: read-only commands; the merge of a device's state.

The parsers are split by the dialect they read, as the SONiC ones are: NVUE text tables
(:mod:`~fabline.platforms.cumulus_nvue`), NVUE JSON (:mod:`~fabline.platforms.cumulus_nvue_json`),
NCLU (:mod:`~fabline.platforms.cumulus_nclu`) and the classic files and tools
(:mod:`~fabline.platforms.cumulus_files`); the value spellings they share are in
:mod:`~fabline.platforms.cumulus_values`.

Vendor semantics (see ``docs/platforms/cumulus.md``):

- Port ``mtu`` is the L2 frame size Cumulus reports (9216 on a RoCE fabric).
- NVUE tables have ``operational`` and ``applied`` columns. A state field holds the operational
  value (the applied one when NVUE leaves operational blank, as for the ``enable`` knob); where
  both are present and differ, the interface (or ``qos.roce``) gets an ``applied`` sub-dict
  with the applied value under the same field name, e.g. ``{"speed_gbps": 100,
  "applied": {"speed_gbps": "auto"}}``.
- The RoCE profile (``nv show qos roce``), ``traffic.conf`` and NVUE's ``default-global`` QoS
  profiles are switch-wide: they land in ``qos.port_defaults`` (same field names as an
  interface). :func:`apply_port_defaults` copies them onto every ``swp`` port of a merged
  state that does not set the field itself.
- Priorities are Cumulus *switch priorities* (internal cos): ``dscp_to_priority`` maps a DSCP
  to the switch priority, ``pfc_priorities`` and ``ecn`` keys are switch priorities / traffic
  classes as the device names them. Trust ``pcp,dscp`` (both) classifies IP traffic, and so
  RoCEv2, by DSCP: ``trust`` is ``dscp`` and ``trust_modes`` keeps ``["pcp", "dscp"]``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

import yaml

from fabline.errors import ParseError
from fabline.platforms.base import Command, ParseContext, Releases, merge_fragments
from fabline.platforms.cumulus_files import parse_decode_syseeprom, parse_traffic_conf
from fabline.platforms.cumulus_lldpd import parse_lldp_detail
from fabline.platforms.cumulus_nclu import (
    parse_net_show_configuration_commands,
    parse_net_show_interface_all_json,
)
from fabline.platforms.cumulus_nvue import (
    parse_nv_show_interface_link,
    parse_nv_show_interface_link_phy_detail,
    parse_nv_show_interface_link_phy_diag,
    parse_nv_show_interface_qos_pfc_watchdog,
    parse_nv_show_interface_qos_roce_counters,
    parse_nv_show_interface_qos_roce_status,
    parse_nv_show_interface_transceiver,
    parse_nv_show_qos_roce,
    parse_nv_show_system,
)
from fabline.platforms.cumulus_nvue_json import parse_nv_config_show_json, parse_nv_show_interface_json
from fabline.platforms.cumulus_values import VOCABULARY
from fabline.platforms.linux import parse_carrier_changes
from fabline.platforms.routing import (
    parse_frr_bgp_summary_json,
    parse_frr_route_json,
    parse_nvue_bgp_neighbors,
    parse_nvue_rib_route,
)
from fabline.platforms.spec import MtuKind, MtuSemantics, Platform, PlatformSpec, RunPlan

#: Fields of an interface that a switch-wide QoS default can supply (see :func:`apply_port_defaults`).
PORT_DEFAULT_FIELDS = (
    "trust",
    "trust_modes",
    "dscp_to_priority",
    "pcp_to_priority",
    "pfc_priorities",
    "pfc_rx",
    "pfc_tx",
    "ecn",
)


# --- merge helper --------------------------------------------------------------------------------


def _fill_missing(into: dict[str, Any], defaults: Mapping[str, Any]) -> None:
    """Copy into ``into`` every key of ``defaults`` it lacks; shared sub-dicts are filled the same way.

    Example:
        >>> port = {"3": {"enabled": True, "min_bytes": 1}}
        >>> _fill_missing(port, {"3": {"min_bytes": 2, "probability_pct": 100}})
        >>> port
        {'3': {'enabled': True, 'min_bytes': 1, 'probability_pct': 100}}
    """
    for key, value in defaults.items():
        if key not in into:
            into[key] = copy.deepcopy(value)
        elif isinstance(into[key], dict) and isinstance(value, Mapping):
            _fill_missing(into[key], value)


def _switch_watchdog(ports: Mapping[str, Mapping[str, Any]]) -> dict[str, Any] | None:
    """``qos.pfc_watchdog`` from the per-port watchdog of the lossless (PFC-enabled) ``swp`` ports.

    NVUE has no switch-wide watchdog switch: it is on for the switch when it is on for every port
    that runs PFC. Unknown (``None``) when no port runs PFC, or when some lossless port's watchdog
    was not read and none read is off.

    Example:
        >>> _switch_watchdog({"swp1": {"pfc_priorities": [3], "pfc_watchdog": {"enabled": False}},
        ...                   "swp2": {"pfc_priorities": [3], "pfc_watchdog": {"enabled": True}}})
        {'enabled': False, 'disabled_ports': ['swp1']}
    """
    lossless = {n: b for n, b in ports.items() if b.get("pfc_priorities")}
    if not lossless:
        return None
    known = {
        n: b["pfc_watchdog"]["enabled"]
        for n, b in lossless.items()
        if isinstance(b.get("pfc_watchdog"), Mapping) and isinstance(b["pfc_watchdog"].get("enabled"), bool)
    }
    off = sorted(n for n, on in known.items() if not on)
    if off:
        return {"enabled": False, "disabled_ports": off}
    if len(known) < len(lossless):
        return None
    return {"enabled": True}


def apply_port_defaults(state: dict[str, Any]) -> dict[str, Any]:
    """Fill every ``swp`` port of a merged state from ``qos.port_defaults``; derive ``qos.pfc_watchdog``.

    Cumulus configures RoCE QoS switch-wide (``nv set qos roce``, ``default-global`` profiles,
    traffic.conf classification); checks read per-interface fields, so the collector calls this
    after merging a Cumulus device's fragments. A port's own value always wins, leaf by leaf:
    missing sub-keys are filled too, because a port's ``qos roce status`` table lists only some
    of them (no ECN ``probability`` row, only the RoCE and CNP rows of the DSCP map), while the
    switch-wide profile has the rest.

    The switch-wide ``qos.pfc_watchdog.enabled`` (which NVUE does not have: its watchdog is per
    port) is true when every port running PFC has its watchdog on, false with the
    ``disabled_ports`` when some has it off; it is left out when that is unknown.

    Example:
        >>> s = {"qos": {"port_defaults": {"trust": "dscp", "pfc_priorities": [3],
        ...                                "ecn": {"3": {"enabled": True, "probability_pct": 100}}}},
        ...      "interfaces": {"swp1": {"pfc_priorities": [4], "ecn": {"3": {"enabled": True}}}, "eth0": {}}}
        >>> apply_port_defaults(s)["interfaces"]["swp1"]
        {'pfc_priorities': [4], 'ecn': {'3': {'enabled': True, 'probability_pct': 100}}, 'trust': 'dscp'}
    """
    defaults = (state.get("qos") or {}).get("port_defaults") or {}
    ports: dict[str, dict[str, Any]] = {}
    for name, body in (state.get("interfaces") or {}).items():
        if not name.startswith("swp") or not isinstance(body, dict):
            continue
        ports[name] = body
        for field in PORT_DEFAULT_FIELDS:
            if field not in defaults:
                continue
            if field not in body:
                body[field] = copy.deepcopy(defaults[field])
            elif isinstance(body[field], dict) and isinstance(defaults[field], Mapping):
                _fill_missing(body[field], defaults[field])
    watchdog = _switch_watchdog(ports)
    if watchdog is not None:
        state.setdefault("qos", {})["pfc_watchdog"] = watchdog
    return state


# --- which releases have which command (NVIDIA's documentation) -----------------------------------
#
# The NVUE command reference (CumulusNetworks/docs, content/nvue-reference/) gives each command's
# "Version History: Introduced in Cumulus Linux X"; NCLU (`net ...`) and traffic.conf are the 3.x/4.x
# interfaces, which 5.x replaced with NVUE (`/etc/cumulus/datapath/qos/qos_features.conf` is the QoS
# file NVUE manages there). docs/platforms/cumulus.md has the table with the page of each row.

_REF = "NVUE command reference, content/nvue-reference/Show-Commands"
NVUE_5_0 = Releases(since="5.0", source=f"{_REF}/Interface.md, QoS.md, System.md: introduced in 5.0.0")
NVUE_CONFIG = Releases(since="5.0", source="NVUE command reference, Config-Commands.md: introduced in 5.0.0")
NVUE_LLDP = Releases(
    since="5.0", source=f"{_REF}/LLDP.md: 'nv show interface lldp-detail' introduced in 5.0.0"
)
PFC_WATCHDOG = Releases(
    since="5.6",
    source=f"{_REF}/QoS.md: 'nv show interface <id> qos pfc-watchdog' introduced in 5.6.0",
    feeds=("interfaces.*.pfc_watchdog", "qos.pfc_watchdog"),
)
TRANSCEIVER = Releases(
    since="5.11",
    source=f"{_REF}/Interface.md: 'nv show interface <interface> transceiver' introduced in 5.11.0",
    feeds=("interfaces.*.optics",),
)
PHY_DETAIL = Releases(
    since="5.10",
    source=f"{_REF}/Interface.md: 'nv show interface <interface-id> link phy-detail' introduced in 5.10.0 "
    "(not on Spectrum-1)",
    feeds=(
        "interfaces.*.counters.fec_uncorrectable",
        "interfaces.*.counters.fec_corrected",
        "interfaces.*.fec_pre_ber",
    ),
)
PHY_DIAG = Releases(
    since="5.10",
    source=f"{_REF}/Interface.md: 'nv show interface <interface-id> link phy-diag' introduced in 5.10.0 "
    "(not on Spectrum-1)",
    feeds=("interfaces.*.optics.active_flags", "interfaces.*.optics.firmware"),
)
CLASSIC = Releases(
    until="5.0",
    source="Cumulus Linux 3.x/4.x user guides (NCLU, traffic.conf); 5.x is NVUE-only",
)

NVUE_BGP = Releases(
    since="5.0", source=f"{_REF}/BGP.md: 'nv show vrf <vrf-id> router bgp neighbor' introduced in 5.0.0"
)
NVUE_RIB = Releases(
    since="5.0",
    source=f"{_REF}/RIB.md: 'nv show vrf <vrf-id> router rib <afi> route <route-id>' introduced in 5.0.0",
)
_BGP_FEEDS = "bgp.{asn, router_id, neighbors.*.{remote_asn, state, admin_down, prefixes_received, hostname, description}}"
_ROUTE_FEEDS = "bgp.ecmp.{prefix, paths, next_hops, interfaces, protocol}"

COMMANDS: tuple[Command, ...] = (
    Command(
        "nv config show -o json",
        parse_nv_config_show_json,
        "facts.hostname; interfaces.*.{mtu,speed_gbps,fec,autoneg,admin_up,description,QoS from "
        "named profiles,pfc_watchdog}; qos.roce; qos.buffer_mode; qos.port_defaults (configured values)",
        releases=NVUE_CONFIG,
    ),
    Command(
        "nv show interface -o json",
        parse_nv_show_interface_json,
        "interfaces.*.{admin_up,oper_up,mtu,speed_gbps,fec,autoneg,description}",
        releases=NVUE_5_0,
    ),
    Command(
        "nv show interface lldp-detail",
        parse_lldp_detail,
        "interfaces.*.lldp.{device,port,port_id,port_description,chassis_id,mgmt_ip,other_neighbors}",
        releases=NVUE_LLDP,
    ),
    Command(
        "nv show interface {interface} link",
        parse_nv_show_interface_link,
        "interfaces.IF.{admin_up,oper_up,autoneg,speed_gbps,fec,mtu,applied}",
        releases=NVUE_5_0,
    ),
    Command(
        "nv show qos roce",
        parse_nv_show_qos_roce,
        "qos.roce; qos.buffer_mode; qos.lossless_priorities; qos.port_defaults.{trust,trust_modes,"
        "dscp_to_priority,pcp_to_priority,pfc_priorities,pfc_rx,pfc_tx,ecn}",
        releases=NVUE_5_0,
    ),
    Command(
        "nv show interface {interface} qos roce status",
        parse_nv_show_interface_qos_roce_status,
        "interfaces.IF.{trust,trust_modes,dscp_to_priority,pcp_to_priority,pfc_priorities,pfc_rx,"
        "pfc_tx,ecn,roce_mode}",
        releases=NVUE_5_0,
    ),
    Command(
        "nv show interface {interface} qos roce counters",
        parse_nv_show_interface_qos_roce_counters,
        "interfaces.IF.counters.{ecn_marked,cnp_sent,roce_pfc_rx_pause,roce_pfc_tx_pause,"
        "roce_rx_discards,roce_tx_discards}",
        releases=NVUE_5_0,
    ),
    Command(
        "nv show interface {interface} qos pfc-watchdog",
        parse_nv_show_interface_qos_pfc_watchdog,
        "interfaces.IF.pfc_watchdog.{enabled,deadlock_count}, counters.pfcwd_storms_detected "
        "(qos.pfc_watchdog via apply_port_defaults)",
        releases=PFC_WATCHDOG,
    ),
    Command(
        "nv show interface {interface} transceiver",
        parse_nv_show_interface_transceiver,
        "interfaces.IF.optics.{vendor,part_number,serial,temperature_c,rx_power_dbm,tx_power_dbm,"
        "identifier,status}",
        releases=TRANSCEIVER,
    ),
    Command(
        "nv show interface {interface} link phy-detail",
        parse_nv_show_interface_link_phy_detail,
        "interfaces.IF.counters.{fec_uncorrectable (effective-errors), fec_corrected (rs-num-corr-err-bin1+)}, "
        "interfaces.IF.fec_pre_ber (raw-ber)",
        releases=PHY_DETAIL,
    ),
    Command(
        "nv show interface {interface} link phy-diag",
        parse_nv_show_interface_link_phy_diag,
        "interfaces.IF.optics.active_flags (the module's non-zero flag rows), optics.firmware "
        "(module-fw-version, the hex word as printed)",
        releases=PHY_DIAG,
    ),
    Command(
        "cat /etc/cumulus/datapath/traffic.conf",
        parse_traffic_conf,
        "qos.port_defaults.{trust,trust_modes,dscp_to_priority,pcp_to_priority}; "
        "interfaces.*.{pfc_priorities,pfc_rx,pfc_tx,ecn}",
        kind="file",
        releases=CLASSIC,
    ),
    Command(
        "net show interface all json",
        parse_net_show_interface_all_json,
        "interfaces.*.{admin_up,oper_up,mtu,speed_gbps,description,lldp.{device,port,mgmt_ip,other_neighbors}}",
        releases=CLASSIC,
    ),
    Command(
        "net show configuration commands",
        parse_net_show_configuration_commands,
        "facts.hostname; interfaces.*.{mtu,description,speed_gbps,autoneg,fec} (configured)",
        releases=CLASSIC,
    ),
    # The switch's kernel netdevs follow the front-panel ports: one read gives every port's flaps.
    Command(
        "grep -H . /sys/class/net/*/carrier_changes",
        parse_carrier_changes,
        "interfaces.*.counters.link_flaps",
        kind="file",
    ),
    Command(
        "nv show system",
        parse_nv_show_system,
        "facts.{hostname,os_version,build,uptime_s}",
        releases=NVUE_5_0,
    ),
    Command(
        "decode-syseeprom",
        parse_decode_syseeprom,
        "facts.{model,serial,vendor,part_number,base_mac}",
    ),
    # NVUE (5.x): the neighbour table and the RIB entry of the probe prefix (docs/platforms/cumulus.md).
    Command(
        "nv show vrf default router bgp neighbor", parse_nvue_bgp_neighbors, _BGP_FEEDS, releases=NVUE_BGP
    ),
    Command(
        "nv show vrf default router rib ipv4 route {prefix}",
        parse_nvue_rib_route,
        _ROUTE_FEEDS,
        releases=NVUE_RIB,
    ),
    # NCLU (3.x/4.x) prints FRR's own JSON.
    Command("net show bgp summary json", parse_frr_bgp_summary_json, _BGP_FEEDS, releases=CLASSIC),
    Command("net show route {prefix} json", parse_frr_route_json, _ROUTE_FEEDS, releases=CLASSIC),
)

_YAML: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_startup_yaml(text: str) -> dict[str, Any]:
    """A rendered NVUE ``startup.yaml`` as a state body: the ``nv config show -o json`` parser's view.

    Switch-wide QoS lands on the ports (:func:`apply_port_defaults`); with no switch-wide watchdog
    setting, ``qos.pfc_watchdog.enabled`` says whether every admin-up switch port has one.

    Raises:
        ParseError: Not YAML, or not an NVUE configuration.
    """
    platform, command = str(Platform.CUMULUS), "nv config show -o json"
    try:
        text = json.dumps(yaml.load(text, Loader=_YAML))
    except yaml.YAMLError as exc:
        raise ParseError(platform, command, "an NVUE startup.yaml", str(exc).splitlines()[0]) from None
    state = merge_fragments([parse_nv_config_show_json(text, ParseContext(platform, command))])
    apply_port_defaults(state)
    qos = state.setdefault("qos", {})
    if "pfc_watchdog" not in qos:
        ports = [
            body
            for name, body in (state.get("interfaces") or {}).items()
            if name.startswith("swp") and isinstance(body, dict) and body.get("admin_up") is True
        ]
        if ports:
            qos["pfc_watchdog"] = {
                "enabled": all((p.get("pfc_watchdog") or {}).get("enabled") is True for p in ports)
            }
    return state


PLATFORM = PlatformSpec(
    id=Platform.CUMULUS,
    description="NVIDIA Cumulus Linux 5.x (NVUE) and classic files",
    kind="switch",
    commands=COMMANDS,
    run=RunPlan(
        platform=Platform.CUMULUS,
        transport="netmiko",
        device_type="cumulus_linux",
        shell=True,
        device_commands=(
            "nv config show -o json",
            "nv show system",
            "decode-syseeprom",
            "nv show qos roce",
            "nv show interface -o json",
            # LLDP: NVUE's lldpd view on 5.x, NCLU on 3.x/4.x; each is sent only to the releases
            # that have it (Command.releases), after the release is known.
            "nv show interface lldp-detail",
            "net show interface all json",
            "grep -H . /sys/class/net/*/carrier_changes",
            # BGP: NVUE's neighbour table on 5.x, NCLU's FRR JSON on 3.x/4.x (per release, as LLDP).
            "nv show vrf default router bgp neighbor",
            "net show bgp summary json",
        ),
        route_commands=("nv show vrf default router rib ipv4 route {prefix}", "net show route {prefix} json"),
        interface_commands=(
            "nv show interface {interface} qos roce status",
            "nv show interface {interface} qos roce counters",
            # After 'nv config show' so the operational watchdog state wins the merge.
            "nv show interface {interface} qos pfc-watchdog",
            "nv show interface {interface} transceiver",
            # FEC health (issue 15 item 5): 5.10+, PHY_DETAIL.
            "nv show interface {interface} link phy-detail",
            # The module's DOM/fault flags (issue 15 item 5): 5.10+, PHY_DIAG.
            "nv show interface {interface} link phy-diag",
        ),
        interface_pattern=r"swp\d+(s\d+)?",
        finalize=apply_port_defaults,
    ),
    # The nvidia.nvue collection's hosts say `ansible_network_os: nvidia.nvue.httpapi` (with
    # `ansible_connection: ansible.netcommon.httpapi`); older inventories say `cumulus`.
    network_os=("cumulus", "cumulus_linux"),
    network_os_prefixes=("nvidia.nvue.",),
    port_name=lambda index: f"swp{index + 1}",
    # A switch port is a Linux netdev: its MTU is the kernel's L3 MTU (9216 -> 9234-byte frames).
    mtu=MtuSemantics(MtuKind.L3, fabric_mtu=9216),
    vocabulary=VOCABULARY,
    os_version="5.14.0",
    config_command="nv config show -o json",
    read_config=read_startup_yaml,
    # templates/cumulus/startup.yaml.j2 writes the QoS profiles (qos mapping/pfc/congestion-control),
    # which NVUE's object model has from 5.3 (nvueschema's per-release models; docs/design.md).
    config_releases=Releases(
        since="5.3", source="NVUE object model: qos mapping/pfc/congestion-control profiles from 5.3"
    ),
    remediation="fabline.remediate.cumulus:REMEDIATION",
)
