"""Typed views of state schema v1, for mypy: ``TypedDict`` mirrors of the shipped JSON Schema.

States stay plain dicts at run time (the checks walk them directly; nothing is converted). These
types only tell mypy the shape: every field is optional (a missing field means "not collected"),
except a document's ``schema`` and ``name``. Platforms may add fields of their own
(``docs/platforms/*.md``); those are not listed here and are read as ``Mapping[str, Any]``.
``tests/unit/test_state_types.py`` keeps these types and ``schemas/state-1.schema.json`` equal:
same fields, same JSON types, same enums.
"""

# No ``from __future__ import annotations``: TypedDict reads ``Required[...]`` from evaluated
# annotations (Python 3.11).
from typing import Any, Literal, Required, TypedDict

Fec = Literal["rs", "fc", "none", "auto"]
Trust = Literal["dscp", "pcp"]
Role = Literal["spine", "leaf", "host"]
DeviceStatus = Literal["ok", "partial", "unreachable", "auth_failed", "timeout", "error"]


class CommandError(TypedDict, total=False):
    """One command that did not give a usable answer (``errors[]``)."""

    command: str | None
    kind: str
    message: Required[str]


class Facts(TypedDict, total=False):
    """What a device says about itself."""

    hostname: str
    os_version: str
    kernel: str
    model: str
    serial: str
    vendor: str
    asic: str
    uptime_s: float
    bios_version: str
    # Added by platforms (docs/state-schema.md, "Fields particular to a platform").
    applied: dict[str, Any]
    build: str
    part_number: str
    base_mac: str
    hwsku: str
    sonic_platform: str
    distribution: str


class PfcWatchdog(TypedDict, total=False):
    """The PFC watchdog (switch-wide under ``qos``)."""

    enabled: bool
    detection_ms: int
    restoration_ms: int
    action: str
    poll_interval_ms: int
    big_red_switch: bool
    stats_collected: bool


class PortPfcWatchdog(TypedDict, total=False):
    """The PFC watchdog of one port (``interfaces.*.pfc_watchdog``)."""

    enabled: bool
    detection_ms: int
    restoration_ms: int
    action: str
    deadlock_count: dict[str, int]


class WredProfile(TypedDict, total=False):
    """A SONiC WRED profile (``qos.wred_profiles.NAME``): ECN mode, green thresholds, probability."""

    enabled: bool
    min_bytes: int
    max_bytes: int
    probability_pct: float
    ecn_mode: str


class BufferProfile(TypedDict, total=False):
    """A SONiC buffer profile (``qos.buffer_profiles.NAME``)."""

    pool: str
    size_bytes: int
    xon_bytes: int
    xoff_bytes: int
    xon_offset_bytes: int
    static_th_bytes: int
    dynamic_th: int


class RoceProfile(TypedDict, total=False):
    """Cumulus's switch-wide RoCE profile (``qos.roce``)."""

    enabled: bool
    mode: str
    cable_length_m: int
    congestion_mode: str
    priority_to_tc: dict[str, int]
    tc_scheduler: dict[str, str]
    applied: dict[str, Any]


class Qos(TypedDict, total=False):
    """Switch-wide QoS."""

    pfc_watchdog: PfcWatchdog
    buffer_mode: str
    lossless_priorities: list[int]
    dscp_to_priority: dict[str, int]
    maps: dict[str, dict[str, dict[str, int]]]
    wred_profiles: dict[str, WredProfile]
    buffer_profiles: dict[str, BufferProfile]
    roce: RoceProfile
    port_defaults: "PortQos"


class Gpu(TypedDict, total=False):
    """One GPU of a server (``host.gpus["0"]``, keyed by the nvidia-smi index)."""

    pci_address: str
    name: str
    vbios: str
    numa_node: int
    nic_paths: dict[str, str]


class RdmaDevice(TypedDict, total=False):
    """One RDMA device of a GPU server (``host.rdma_devices["mlx5_0"]``), port 1's values."""

    firmware: str
    board_id: str
    node_guid: str
    port_state: str
    link_layer: str
    active_mtu: int
    max_mtu: int
    roce_tos: int
    cc_config: dict[str, str]


class PcieBridge(TypedDict, total=False):
    """One PCIe bridge (``host.pcie_bridges["0000:17:01.0"]``, from ``sudo -n lspci -vvv``)."""

    secondary: int
    subordinate: int
    name: str
    acs_ctl: list[str]
    config_readable: bool


class Host(TypedDict, total=False):
    """What a GPU server says about its RDMA stack (linux hosts)."""

    gpudirect_rdma: bool
    nccl_env: dict[str, str]
    nccl_sources: dict[str, str]
    kernel_modules: list[str]
    iommu_params: list[str]
    gpu_driver: str
    fabric_manager: str
    cuda_version: str
    pcie_bridges: dict[str, PcieBridge]
    gpus: dict[str, Gpu]
    rdma_devices: dict[str, RdmaDevice]


class EcnQueue(TypedDict, total=False):
    """WRED/ECN of one queue (``ecn["3"]``)."""

    enabled: bool
    min_bytes: int
    max_bytes: int
    probability_pct: float
    profile: str
    ecn_mode: str
    red_enabled: bool
    min_segments: int
    max_segments: int
    min_us: float
    max_us: float


class LldpNeighbor(TypedDict, total=False):
    """One LLDP neighbour (``toolkit.lldp_entry`` builds it on every platform)."""

    device: str
    port: str
    port_id: str
    port_description: str
    chassis_id: str
    mgmt_ip: str


class Lldp(LldpNeighbor, total=False):
    """The LLDP neighbour heard on a port; any more heard on it are ``other_neighbors``."""

    other_neighbors: list[LldpNeighbor]


class PortQos(TypedDict, total=False):
    """The QoS fields a Cumulus switch gives every port by default (``qos.port_defaults``)."""

    trust: Trust
    trust_modes: list[Trust]
    dscp_to_priority: dict[str, int]
    pcp_to_priority: dict[str, int]
    pfc_priorities: list[int]
    pfc_rx: bool
    pfc_tx: bool
    ecn: dict[str, EcnQueue]


class Optics(TypedDict, total=False):
    """The transceiver of a port; power per lane."""

    vendor: str
    part_number: str
    serial: str
    type: str
    temperature_c: float
    rx_power_dbm: list[float]
    tx_power_dbm: list[float]
    present: bool
    identifier: str
    revision: str
    firmware: str
    status: str
    module_state: str
    cmis_state: str
    active_flags: list[str]
    rx_no_light_lanes: list[int]


class Counters(TypedDict, total=False):
    """Cumulative counters of a port since the last clear."""

    fec_corrected: int
    fec_uncorrectable: int
    crc_errors: int
    pfc_rx_pause: dict[str, int]
    pfc_tx_pause: dict[str, int]
    ecn_marked: int
    cnp_sent: int
    cnp_handled: int
    # Loss on the lossless class (issue 15 item 2): per PG / unicast queue (= traffic class) index.
    pg_dropped: dict[str, int]
    queue_dropped: dict[str, int]
    rx_prio_discards: dict[str, int]
    roce_rx_discards: int
    roce_tx_discards: int
    rx_discards_phy: int
    rx_out_of_buffer: int
    # RoCE transport errors of a host's RDMA device (mlx5 hw_counters).
    roce_out_of_sequence: int
    roce_packet_seq_err: int
    roce_local_ack_timeout_err: int
    roce_out_of_buffer: int
    roce_duplicate_request: int
    roce_implied_nak_seq_err: int
    roce_rnr_nak_retry_err: int
    roce_adp_retrans: int
    roce_adp_retrans_to: int
    # PFC storms and pauses without a priority (issue 15 item 4).
    pfcwd_storms_detected: dict[str, int]
    pfcwd_storms_restored: dict[str, int]
    roce_pfc_rx_pause: int
    roce_pfc_tx_pause: int
    pfc_rx_frames: int
    pfc_tx_frames: int
    # Link flaps (issue 15 item 3): up/down transitions.
    link_flaps: int
    interface_resets: int
    # Added by platforms.
    fec_corrected_bits: int
    fec_symbol_errors: int
    wred_dropped: int
    rx_ok: int
    tx_ok: int
    rx_errors: int
    tx_errors: int
    rx_drops: int
    tx_drops: int
    rx_overruns: int
    tx_overruns: int
    rx_discards: int
    tx_discards: int
    rx_octets: int
    tx_octets: int


class Pcie(TypedDict, total=False):
    """The PCIe link of a NIC's device (``nic.pcie``); ``present`` false: no PCIe device reports a link."""

    present: bool
    width: int
    max_width: int
    speed_gts: float
    max_speed_gts: float


class Gid(TypedDict, total=False):
    """One entry of an RDMA port's GID table (``nic.gids[]``, as ``show_gids`` lists it)."""

    index: int
    gid: str
    version: str
    ipv4: str


class Dcqcn(TypedDict, total=False):
    """DCQCN parameters of a NIC's ECN notification (``np``) and reaction (``rp``) points."""

    np: dict[str, int]
    rp: dict[str, int]


class HostNic(TypedDict, total=False):
    """A GPU server's RDMA NIC behind a netdev (``nic``)."""

    rdma_device: str
    driver: str
    driver_version: str
    firmware: str
    roce_tos: int
    ecn_np_priorities: list[int]
    ecn_rp_priorities: list[int]
    pci_address: str
    numa_node: int
    pcie: Pcie
    iommu_domain: str
    cnp_dscp: int
    cnp_802p_prio: int
    dcqcn: Dcqcn
    roce_active_mtu: int
    gids: list[Gid]
    psid: str


class Interface(TypedDict, total=False):
    """One interface (``interfaces["Ethernet0"]``)."""

    admin_up: bool
    oper_up: bool
    mtu: int
    frame_bytes: int
    frame_bytes_tagged: int
    speed_gbps: float
    fec: Fec
    autoneg: bool
    trust: Trust
    dscp_to_priority: dict[str, int]
    pfc_priorities: list[int]
    ecn: dict[str, EcnQueue]
    lldp: Lldp
    optics: Optics
    counters: Counters
    nic: HostNic
    description: str
    pfcwd_stormed_queues: list[int]
    last_flap_epoch_s: float
    last_flap_age_s: int
    fec_pre_ber: float
    # Added by platforms (docs/state-schema.md, "Fields particular to a platform").
    alias: str
    applied: dict[str, Any]
    l2_mtu: int
    fec_admin: Fec
    fec_allowed: list[Fec]
    fec_configured: list[str]
    trust_modes: list[Trust]
    pcp_to_priority: dict[str, int]
    priority_to_tc: dict[str, int]
    pfc_mode: Literal["on", "off", "auto"]
    pfc_rx: bool
    pfc_tx: bool
    pfc_asymmetric: bool
    pfc_watchdog: PortPfcWatchdog
    roce_mode: str
    dcbx_mode: str
    cable_length_m: int
    dscp_to_tc_map: str
    buffer_pg: dict[str, str]
    transceiver_type: str


#: A BGP session's FSM state (``bgp.neighbors.*.state``), lower case.
BgpSessionState = Literal["established", "active", "idle", "connect", "opensent", "openconfirm"]


class BgpNeighbor(TypedDict, total=False):
    """One BGP session (``bgp.neighbors["10.0.0.1"]``, or an interface for an unnumbered one)."""

    remote_asn: int
    state: BgpSessionState
    admin_down: bool
    prefixes_received: int
    description: str
    hostname: str


class Ecmp(TypedDict, total=False):
    """The route to the ECMP probe prefix (``bgp.ecmp``): ``paths`` active next hops (0: no route)."""

    prefix: str
    paths: int
    next_hops: list[str]
    interfaces: list[str]
    protocol: str


class Bgp(TypedDict, total=False):
    """The BGP underlay as the switch shows it (config and operational state merged)."""

    asn: int
    router_id: str
    maximum_paths: int
    neighbors: dict[str, BgpNeighbor]
    ecmp: Ecmp


class LoadBalance(TypedDict, total=False):
    """ECMP load balancing: hash fields (neutral names), seed, algorithm, adaptive routing on/off."""

    hash_fields: list[str]
    hash_seed: int
    hash_algorithm: str
    adaptive_routing: bool


class StateBody(TypedDict, total=False):
    """A state document's body: what parsers write (a fragment of one command, or all merged).

    ``unsupported``: state paths the device's source cannot provide -> why. ``environment``: the
    NAPALM platform's ``get_environment`` readings, free-form in the schema.
    """

    platform: str
    role: Role
    status: DeviceStatus
    errors: list[CommandError]
    collected_at: str
    source: Literal["intended"]
    unsupported: dict[str, str]
    facts: Facts
    qos: Qos
    host: Host
    interfaces: dict[str, Interface]
    environment: dict[str, Any]
    bgp: Bgp
    load_balance: LoadBalance


class State(StateBody, total=False):
    """A whole state document (one device): its body with the schema id and the device name."""

    schema: Required[str]
    name: Required[str]


__all__ = [
    "Bgp",
    "BgpNeighbor",
    "BgpSessionState",
    "BufferProfile",
    "CommandError",
    "Counters",
    "Dcqcn",
    "DeviceStatus",
    "Ecmp",
    "EcnQueue",
    "Facts",
    "Fec",
    "Gid",
    "Gpu",
    "Host",
    "HostNic",
    "Interface",
    "Lldp",
    "LldpNeighbor",
    "LoadBalance",
    "Optics",
    "Pcie",
    "PfcWatchdog",
    "PortPfcWatchdog",
    "PortQos",
    "Qos",
    "RdmaDevice",
    "RoceProfile",
    "Role",
    "State",
    "StateBody",
    "Trust",
    "WredProfile",
]
