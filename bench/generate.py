"""Generate synthetic rail-optimized fabrics in state schema v1 for the benchmarks.

    python bench/generate.py --gpus 100000 --out bench/out/100k
    python bench/generate.py --gpus 100000 --fabric clos --fault-rate 0 --out bench/out/clos-100k
    python bench/generate.py --gpus 100000 --fabric clos --fault-rate 0 --no-planes --out bench/out/clos-100k-np

writes ``OUT/inventory.yml`` (Ansible YAML inventory), ``OUT/snapshot/state/<device>.json`` and, as a
collection does, ``OUT/snapshot/state-digests.json`` (each state is checked against the state schema
first, as a collection checks what it writes, so the check skips re-validating them).
``--fabric rail`` (the default, the older speed figures): hosts x 8 NICs, leaves (radix/2 down,
radix/2 up), one spine layer shared by every leaf (not a buildable Clos above 64 spines).
``--fabric clos``: the buildable fabric of issue 14 (``synthetic.plane_fabric``): 8 rails, each
split into ``--planes-per-rail`` planes, per plane ``ceil(servers / planes_per_rail / (radix/2))``
leaves with radix/2 host ports and one link to each of the plane's radix/2 spines; at 100,000 GPUs
and radix 128: 12,500 hosts, 16 planes of 98 leaves and 64 spines (15,092 devices). ``rail`` and
``plane`` on the leaves, ``plane`` on the spines, unless ``--no-planes``. Every up port carries
what a collection yields (the full 64-entry DSCP map, PFC priorities, an ECN profile on switch
ports, 4-lane optics, counters, LLDP, and on hosts the ``nic`` block), and what a collection of a
SONiC switch or a GPU server yields today on top (``synthetic.as_collected``: per-priority pause and
drop counters, FEC symbol errors and pre-FEC BER, transceiver status and flags, the PFC watchdog per
port, link flaps; on hosts the RoCE error counters, per-priority discards, the RDMA devices, PCIe,
NUMA, IOMMU, CNP/DCQCN, GID table, NCCL settings, GPU and driver versions). Every state is clean
except ``--fault-rate`` of the hosts (a wrong MTU), so the check does real failure reporting too.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

import yaml

from fabline import synthetic
from fabline.collect.writer import state_bytes, write_digests
from fabline.snapshot import state_digest
from fabline.state import schema_problem


def stamp(snapshot: Path) -> int:
    """Check every state of ``snapshot`` against the state schema and write its ``state-digests.json``,
    as a collection does after validating what it parsed; returns how many states it holds.

    For a fabric generated before the index existed, or under another state schema.
    """
    entries: dict[str, dict[str, str]] = {}
    for path in sorted((snapshot / "state").glob("*.json")):
        data = path.read_bytes()
        problem = schema_problem(json.loads(data))
        if problem is not None:
            raise SystemExit(f"{path}: not valid state: {problem}")
        entries[path.stem] = state_digest(data)
    write_digests(snapshot, entries)
    return len(entries)


def planted_faults(fabric: synthetic.Fabric, rate: float, seed: int = 7) -> list[synthetic.Fault]:
    """About ``rate`` of the hosts get a wrong MTU on one rail NIC (deterministic)."""
    if rate <= 0:
        return []
    rng = random.Random(seed)
    hosts = [d for d in fabric.devices if d.role == "host"]
    picked = rng.sample(hosts, max(1, int(len(hosts) * rate))) if hosts else []
    return [synthetic.Fault(h.name, "mtu", 1500, h.rail_interfaces[0]) for h in picked]


def plane_dscp_fault(fabric: synthetic.Fabric, priority: int = 4) -> list[synthetic.Fault]:
    """A bad template push on a whole plane: every leaf's host ports map RoCE's DSCP 26 to ``priority``."""
    host_ports = {(b, bp) for a, _, b, bp in fabric.links if a.startswith("gpu-")}
    return [
        synthetic.Fault(leaf, "dscp_to_priority.26", priority, port)
        for leaf, port in sorted(host_ports)
        if leaf.startswith("leaf-")
    ]


def generate(
    gpus: int,
    out: Path,
    radix: int,
    fault_rate: float,
    plane_fault: bool = False,
    *,
    shape: str = "rail",
    planes_per_rail: int = 2,
    planes: bool = True,
) -> dict[str, int]:
    """Write the fabric; returns its counts.

    ``plane_fault`` adds :func:`plane_dscp_fault`; ``shape`` is ``rail`` (one shared spine layer)
    or ``clos`` (:func:`fabline.synthetic.plane_fabric`); ``planes=False`` leaves every ``plane``
    variable out of the inventory.
    """
    if shape == "clos":
        fabric = synthetic.plane_fabric(-(-gpus // 8), rails=8, planes_per_rail=planes_per_rail, radix=radix)
    else:
        fabric = synthetic.rail_fabric(
            gpus, radix=radix, leaf_platforms=("sonic",), spine_platforms=("sonic",)
        )
    out.mkdir(parents=True, exist_ok=True)
    inventory = synthetic.inventory(fabric, planes=planes)
    (out / "inventory.yml").write_text(yaml.safe_dump(inventory, sort_keys=False), "utf-8")
    state_dir = out / "snapshot" / "state"
    state_dir.mkdir(parents=True, exist_ok=True)
    n_ifaces = 0
    faults = planted_faults(fabric, fault_rate) + (plane_dscp_fault(fabric) if plane_fault else [])
    entries: dict[str, dict[str, str]] = {}
    for doc in synthetic.states(fabric, faults):
        synthetic.as_collected(doc)  # as heavy as a collection today (health counters, flags, host RDMA)
        n_ifaces += len(doc["interfaces"])
        problem = schema_problem(doc)
        if problem is not None:  # a generator bug: a collection never writes such a state
            raise SystemExit(f"{doc['name']}: not valid state: {problem}")
        # The bytes a collection writes (its own serializer), so reading and digesting them costs
        # what it costs after a collection.
        data = state_bytes(doc)
        (state_dir / f"{doc['name']}.json").write_bytes(data)
        entries[doc["name"]] = state_digest(data)
    write_digests(out / "snapshot", entries)
    roles = {r: sum(1 for d in fabric.devices if d.role == r) for r in ("host", "leaf", "spine")}
    return {"gpus": gpus, **roles, "interfaces": n_ifaces, "links": len(fabric.links), "faults": len(faults)}


def main() -> None:
    """Command line entry point."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpus", type=int, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--radix", type=int, default=128, help="switch ports at the NIC speed (default 128)")
    ap.add_argument("--fault-rate", type=float, default=0.01, help="share of hosts with a planted fault")
    ap.add_argument(
        "--plane-fault", action="store_true", help="every leaf host port maps DSCP 26 to priority 4"
    )
    ap.add_argument(
        "--fabric",
        choices=("rail", "clos"),
        default="rail",
        help="rail: one shared spine layer (older figures); clos: the buildable multi-plane fabric",
    )
    ap.add_argument(
        "--planes-per-rail", type=int, default=2, help="--fabric clos: planes each rail is split into"
    )
    ap.add_argument(
        "--no-planes", action="store_true", help="leave every 'plane' variable out of the inventory"
    )
    args = ap.parse_args()
    t0 = time.perf_counter()
    counts = generate(
        args.gpus,
        args.out,
        args.radix,
        args.fault_rate,
        args.plane_fault,
        shape=args.fabric,
        planes_per_rail=args.planes_per_rail,
        planes=not args.no_planes,
    )
    print(json.dumps({**counts, "seconds": round(time.perf_counter() - t0, 1)}))


if __name__ == "__main__":
    main()
