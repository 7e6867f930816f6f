"""``fabline demo``: the main job end to end on an embedded simulated fabric.

Starts the bundled lab fabric (one device of every switch platform, two GPU hosts, rail-optimized)
with planted faults, collects it over real SSH with the real collectors (with ``eapi``, the Arista
EOS switches over eAPI, their certificate checked against the simulator's CA), checks it against the
default baseline and writes the snapshot and the reports. ``docs/collection.md`` lists the faults.
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from fabline import synthetic
from fabline.collect.collector import CollectOptions, CollectSummary, Progress, collect
from fabline.errors import ConfigError
from fabline.synthetic import Fault

#: The environment variable the demo inventory reads the simulator's password from.
PASSWORD_ENV = "FABLINE_DEMO_PASSWORD"


def demo_fabric() -> tuple[synthetic.Fabric, synthetic.Fabric, list[Any]]:
    """The demo's intended fabric, the fabric as built (one rail miswire), and its planted faults.

    Returns:
        ``(intended, built, faults)``: ``intended`` gives the cabling plan, ``built`` is served.
    """
    from fabline.sim import TransportFault
    from fabline.sim.faults import bgp_session_down, rail_miswire

    intended = synthetic.lab_fabric()
    # gpu-001 cabled by port adjacency: its rail-0 NIC in the rail-1 leaf and the other way round.
    built = rail_miswire(intended, "gpu-001", rails=(0, 1))
    faults: list[Any] = [
        # docs/collection.md lists each fault and the results that report it. They follow the
        # bundled example's (synthetic.LAB_FAULTS), except the DSCP remap: EOS maps DSCP switch-wide,
        # so it sits on the SONiC leaf, whose maps are bound per port.
        Fault("gpu-002", "mtu", 1500, "eth1", "host NIC left at the default MTU"),
        Fault("gpu-001", "nic.roce_tos", 104, "eth2", "RDMA-CM ToS without ECN capability (DSCP 26 << 2)"),
        Fault("leaf-r1-a", "pfc_priorities", [3, 4], "swp1", "PFC enabled on an extra priority"),
        Fault("leaf-r0-a", "dscp_to_priority.26", 0, "Ethernet8", "RoCE DSCP remapped to the lossy class"),
        Fault(
            "leaf-r0-a", "dscp_to_priority.24", 3, "Ethernet8", "another DSCP put in the lossless priority"
        ),
        Fault("leaf-r3-a", "fec", "fc", "Ethernet1/3", "Fire-code FEC on a 400G uplink"),
        Fault("spine-02", "qos.pfc_watchdog.enabled", False, None, "PFC watchdog off"),
        Fault(
            "gpu-002", "optics.rx_power_dbm", [-1.2, -10.4, -1.1, -1.3], "eth3", "dirty connector on one lane"
        ),
        Fault("leaf-r0-a", "counters.fec_uncorrectable", 17, "Ethernet8", "uncorrectable FEC codewords"),
        # Issue 15: loss on the lossless class, a PFC storm, a flapping link (one snapshot shows them).
        Fault("leaf-r0-a", "pfcwd_stormed_queues", [3], "Ethernet0", "PFC storm on the lossless queue now"),
        Fault(
            "leaf-r0-a", "counters.pfcwd_storms_detected", {"3": 1}, "Ethernet0", "the watchdog's storm count"
        ),
        Fault("leaf-r0-a", "counters.pg_dropped", {"3": 4096}, "Ethernet0", "drops on the lossless PG"),
        Fault("leaf-r3-a", "last_flap_age_s", 300, "Ethernet1/4", "uplink flapped five minutes ago"),
        # Inside the GPU servers (issue 16): a NIC trained at half width, NCCL on a RoCE v1 GID,
        # CNPs stamped with a DSCP the leaf does not put into the strict CNP class.
        Fault("gpu-002", "nic.pcie.width", 8, "eth0", "rail NIC trained at PCIe x8 of x16"),
        Fault("gpu-001", "host.nccl_env.NCCL_IB_GID_INDEX", "2", None, "NCCL_IB_GID_INDEX on a RoCE v1 GID"),
        Fault("gpu-001", "nic.cnp_dscp", 46, "eth3", "CNPs sent with DSCP 46 instead of 48"),
        # The eBGP session of one leaf-spine link is down (the link is up): the leaf loses a path.
        *bgp_session_down(built, "leaf-r2-a", "Ethernet4/1"),
        # lldpd is not installed on this host: recorded as unavailable, the device is 'partial'.
        TransportFault("gpu-002", "missing_command", "lldpctl -f json"),
    ]
    return intended, built, faults


@dataclass
class DemoRun:
    """What the demo produced."""

    out: Path
    inventory: Path
    snapshot: Path
    cabling: Path
    summary: CollectSummary
    devices: int
    address: str
    eapi: list[str] | None = None  # the EOS switches collected over eAPI (host:port), when asked


#: eAPI listens this far above the SSH port (2222 -> 8443), on the same loopback addresses.
EAPI_PORT_OFFSET = 6221


@contextmanager
def _simulator(
    fabric: synthetic.Fabric, faults: Sequence[Any], password: str, keys: Path, eapi: bool = False
) -> Iterator[Any]:
    """The simulator on the first free port from 2222 (another demo may hold the first)."""
    from fabline.sim import run_simulator

    last: OSError | None = None
    for port in range(2222, 2242):
        try:
            cm = run_simulator(fabric, faults, password=password, port=port, host_key_dir=keys,
                               eapi_port=port + EAPI_PORT_OFFSET if eapi else None)  # fmt: skip
            sim = cm.__enter__()
        except OSError as exc:
            last = exc
            continue
        try:
            yield sim
        finally:
            cm.__exit__(None, None, None)
        return
    raise ConfigError(f"cannot start the simulated fabric: no free port in 2222-2241 on 127.10.x.y ({last})")


def run_demo(out: Path, progress: Progress | None = None, workers: int = 32, eapi: bool = False) -> DemoRun:
    """Serve the demo fabric, collect it into ``out/snapshot`` and return what was written.

    The simulator's password is random per run and reaches the collector only through the
    environment (``{{ lookup('env', ...) }}`` in the written inventory), as a site would do it.
    With ``eapi`` the EOS switches are collected over eAPI (``ansible_connection: httpapi``), their
    certificate verified against the simulator's CA, written to ``out/eapi-ca.pem``.

    Raises:
        ConfigError: ``out/snapshot`` exists and is not an earlier demo snapshot.
    """
    from fabline.inventory import load_inventory

    snapshot = out / "snapshot"
    if snapshot.exists():
        if not (snapshot / "manifest.json").exists():
            raise ConfigError("exists and is not a fabline snapshot; choose another --out", file=snapshot)
        shutil.rmtree(snapshot)
    out.mkdir(parents=True, exist_ok=True)
    intended, built, faults = demo_fabric()
    password = secrets.token_urlsafe(12)
    cabling = out / "cabling.csv"
    cabling.write_text(synthetic.cabling_plan_csv(intended), "utf-8")
    inventory = out / "inventory.yml"
    with _simulator(built, faults, password, out / ".sim-hostkeys", eapi) as sim:
        ca = None
        if eapi:
            ca = (out / "eapi-ca.pem").resolve()
            ca.write_text(sim.eapi_tls.ca_pem, "ascii")
        inventory.write_text(
            "# The demo fabric served by `fabline demo` (the password comes from the environment).\n"
            + yaml.safe_dump(sim.inventory(password_env=PASSWORD_ENV, eapi_ca_file=ca), sort_keys=False),
            "utf-8",
        )
        previous = os.environ.get(PASSWORD_ENV)
        os.environ[PASSWORD_ENV] = password
        try:
            devices = load_inventory(inventory).devices(None)
            host, port = next(iter(sim.addresses.values()))
            options = CollectOptions(workers=workers, timeout=10, retries=1, known_hosts=out / "known_hosts")
            summary = collect(devices, snapshot, options, inventory_source=str(inventory), progress=progress)
        finally:
            if previous is None:
                os.environ.pop(PASSWORD_ENV, None)
            else:
                os.environ[PASSWORD_ENV] = previous
    over_eapi = [f"{h}:{p}" for h, p in sim.eapi_addresses.values()] if eapi else None
    return DemoRun(out, inventory, snapshot, cabling, summary, len(devices), f"{host}:{port}", over_eapi)
