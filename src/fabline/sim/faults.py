"""Faults a simulated fabric can carry, and helpers that plant the usual ones.

Three kinds:

- state faults (:class:`fabline.synthetic.Fault`): a field of a device's state set to a wrong
  value (MTU, PFC, DSCP map, FEC, optics, firmware); every command that shows the field shows
  the wrong value, rendered in the platform's own format;
- :class:`RisingCounter`: a counter that grows with every SSH session to the device, so two
  collections see it rise (uncorrectable FEC codewords);
- :class:`TransportFault`: the SSH or eAPI side misbehaves (authentication failure, no SSH banner, a
  session dropped mid-command, garbled output, a command the device does not know, a refused
  connection, an eAPI answer that never comes, a certificate the client does not trust).

BGP faults (:func:`bgp_session_down`, :func:`bgp_wrong_remote_asn`, :func:`ecmp_paths_limited`)
are state faults on the sessions of a port (``bgp.neighbor.<field>``) or the device's BGP; the
ECMP probe route follows from the sessions that stay established.

Cabling faults change the fabric itself (:func:`rail_miswire`), so LLDP on both ends agrees with
the wrong cabling, as on a real miswired rail.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabline import synthetic
from fabline.synthetic import Fabric, Fault

TRANSPORT_KINDS = (
    "auth_failure", "no_answer", "drop", "garbled", "missing_command", "slow", "stream_forever", "sudo_refused",
    "trickle_forever", "slow_login", "refused", "tls_mismatch",
)  # fmt: skip


@dataclass(frozen=True)
class TransportFault:
    """The SSH side of a device misbehaves.

    Attributes:
        device: Device name.
        kind: ``auth_failure`` (every login refused), ``no_answer`` (TCP accepted, no SSH banner
            ever), ``drop`` (the connection is dropped halfway through a command's output),
            ``garbled`` (a command answers binary garbage), ``missing_command`` (a command answers
            the platform's "command not found" / "% Invalid input" text; over eAPI error 1002),
            ``slow`` (every session, a login shell or an exec channel, starts answering only after
            ``seconds``: a device whose control-plane CPU is busy; over eAPI, the answer to the
            request carrying ``command``, or to every request when unset, comes after
            ``seconds``), ``stream_forever`` (a command prints counter lines without end, as fast
            as the session carries them), ``trickle_forever`` (a command prints one line every
            ``seconds`` without end, so it is never silent for long), ``slow_login`` (the login
            takes ``seconds``: the first prompt of a CLI session, or the password check of an exec
            session, comes that late), ``refused`` (nothing listens: the connection is refused)
            ``sudo_refused`` (a Linux host whose login user may not run ``sudo`` without a password:
            every ``sudo -n`` answers ``sudo: a password is required``, exit 1) and, for eAPI only,
            ``tls_mismatch`` (the device serves a self-signed certificate
            instead of the simulator CA's).
        command: The command the fault hits (``drop``, ``garbled``, ``missing_command``,
            ``stream_forever``, ``trickle_forever``, eAPI ``slow``); unset means the first
            allow-listed command of a session (``drop``) or every allow-listed command (the others).
        seconds: The delay of a ``slow`` session (or eAPI answer) or a ``slow_login``, the interval
            between the lines of ``trickle_forever``.
    """

    device: str
    kind: str
    command: str | None = None
    seconds: float = 2.0

    def __post_init__(self) -> None:
        if self.kind not in TRANSPORT_KINDS:
            raise ValueError(f"transport fault kind {self.kind!r} is not one of {', '.join(TRANSPORT_KINDS)}")


@dataclass(frozen=True)
class RisingCounter:
    """A counter that grows by ``step`` with every SSH session (``start`` at the first one).

    Attributes:
        device: Device name.
        interface: Interface whose counter rises.
        counter: Name under ``counters`` (default ``fec_uncorrectable``).
        start: Value shown in the first session.
        step: Increase per later session.
    """

    device: str
    interface: str
    counter: str = "fec_uncorrectable"
    start: int = 0
    step: int = 1000


def wrong_mtu(device: str, interface: str, mtu: int = 1500) -> Fault:
    """An interface left at a non-jumbo MTU.

    Example:
        >>> wrong_mtu("gpu-002", "eth1").value
        1500
    """
    return Fault(device, "mtu", mtu, interface, f"MTU {mtu}")


def pfc_off(device: str, interface: str) -> Fault:
    """PFC disabled on a port that should be lossless."""
    return Fault(device, "pfc_priorities", [], interface, "PFC off")


def pfc_extra(device: str, interface: str, priorities: tuple[int, ...] = (3, 4)) -> Fault:
    """PFC enabled on more priorities than the RoCE class."""
    return Fault(device, "pfc_priorities", list(priorities), interface, "PFC on extra priorities")


def dscp_remapped(device: str, interface: str, dscp: int = 26, priority: int = 0) -> Fault:
    """One DSCP mapped to another priority (RoCE traffic falls into a lossy class)."""
    return Fault(device, f"dscp_to_priority.{dscp}", priority, interface, f"DSCP {dscp} -> {priority}")


def fec_mismatch(device: str, interface: str, fec: str = "fc") -> Fault:
    """One end of a link on another FEC mode than its peer."""
    return Fault(device, "fec", fec, interface, f"FEC {fec}")


def low_rx_power(device: str, interface: str, lane: int = 1, dbm: float = -10.4) -> Fault:
    """One lane of an optic receiving too little light (dirty connector)."""
    lanes = [-1.2, -1.0, -1.1, -1.3]
    lanes[lane] = dbm
    return Fault(device, "optics.rx_power_dbm", lanes, interface, f"lane {lane} rx {dbm} dBm")


def firmware_skew(device: str, interface: str, firmware: str = "28.36.1010") -> Fault:
    """One host NIC on another firmware than the rest of the fleet."""
    return Fault(device, "nic.firmware", firmware, interface, f"NIC firmware {firmware}")


def os_skew(device: str, version: str) -> Fault:
    """One switch on another OS version than the rest of its platform."""
    return Fault(device, "facts.os_version", version, None, f"OS {version}")


def rising_fec(device: str, interface: str, start: int = 17, step: int = 1000) -> RisingCounter:
    """Uncorrectable FEC codewords that keep rising between collections."""
    return RisingCounter(device, interface, "fec_uncorrectable", start, step)


def _far_end(fabric: Fabric, device: str, port: str) -> tuple[str, str]:
    peer = fabric.peers().get((device, port))
    if peer is None:
        raise ValueError(f"{device} {port}: no link in this fabric")
    return peer


def bgp_session_down(fabric: Fabric, device: str, port: str, state: str = "active") -> list[Fault]:
    """The BGP session on one leaf-spine link down at both ends (the link itself stays up).

    Example:
        >>> [(f.device, f.interface) for f in bgp_session_down(synthetic.lab_fabric(), "leaf-r1-a", "swp4")]
        [('leaf-r1-a', 'swp4'), ('spine-02', 'Ethernet2/1')]
    """
    peer, peer_port = _far_end(fabric, device, port)
    return [
        Fault(device, "bgp.neighbor.state", state, port, f"BGP session {state}"),
        Fault(peer, "bgp.neighbor.state", state, peer_port, f"BGP session {state}"),
    ]


def bgp_wrong_remote_asn(fabric: Fabric, device: str, port: str, asn: int = 65999) -> list[Fault]:
    """A session configured with the wrong remote AS: it never establishes, at either end."""
    faults = bgp_session_down(fabric, device, port)
    return [Fault(device, "bgp.neighbor.remote_asn", asn, port, f"remote AS {asn}"), *faults]


def ecmp_paths_limited(device: str, paths: int = 1) -> Fault:
    """BGP multipath capped (``maximum-paths`` left low): the probe route has at most ``paths`` next hops."""
    return Fault(device, "bgp.maximum_paths", paths, None, f"maximum-paths {paths}")


def adaptive_routing_off(device: str) -> Fault:
    """One switch without adaptive routing on an AR fabric: it falls back to hash luck."""
    return Fault(device, "load_balance.adaptive_routing", False, None, "adaptive routing off")


def rail_miswire(fabric: Fabric, host: str, rails: tuple[int, int] = (0, 1)) -> Fabric:
    """A copy of ``fabric`` where a server is cabled by port adjacency: two rails swapped.

    The host's NICs of the two rails go to each other's leaf; LLDP on both ends shows the
    swapped cabling consistently, as a real miswire does.

    Example:
        >>> f = rail_miswire(synthetic.lab_fabric(), "gpu-001")
        >>> f.peers()[("gpu-001", "eth0")][0]
        'leaf-r1-a'
    """
    dev = next((d for d in fabric.devices if d.name == host), None)
    if dev is None or not dev.rail_interfaces:
        raise ValueError(f"{host}: not a host with rail interfaces in this fabric")
    a, b = (dev.rail_interfaces[r] for r in rails)
    return synthetic.swap_ports(fabric, host, a, b)
