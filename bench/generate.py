"""Generate synthetic rail-optimized fabrics in state schema v1 for the benchmarks.

    python bench/generate.py --gpus 100000 --out bench/out/100k

writes ``OUT/inventory.yml`` (Ansible YAML inventory) and ``OUT/snapshot/state/<device>.json``:
hosts x 8 NICs, leaves (radix/2 down, radix/2 up), spines; every state clean except a sprinkling of
planted faults, so the check does real failure reporting too.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

import yaml

from fabline import synthetic


def planted_faults(fabric: synthetic.Fabric, rate: float, seed: int = 7) -> list[synthetic.Fault]:
    """About ``rate`` of the hosts get a wrong MTU on one rail NIC (deterministic)."""
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
    gpus: int, out: Path, radix: int, fault_rate: float, plane_fault: bool = False
) -> dict[str, int]:
    """Write the fabric; returns its counts. ``plane_fault`` adds :func:`plane_dscp_fault`."""
    fabric = synthetic.rail_fabric(gpus, radix=radix, leaf_platforms=("sonic",), spine_platforms=("sonic",))
    out.mkdir(parents=True, exist_ok=True)
    (out / "inventory.yml").write_text(yaml.safe_dump(synthetic.inventory(fabric), sort_keys=False), "utf-8")
    state_dir = out / "snapshot" / "state"
    state_dir.mkdir(parents=True, exist_ok=True)
    n_ifaces = 0
    faults = planted_faults(fabric, fault_rate) + (plane_dscp_fault(fabric) if plane_fault else [])
    for doc in synthetic.states(fabric, faults):
        n_ifaces += len(doc["interfaces"])
        # Compact JSON, as a collector writes it.
        (state_dir / f"{doc['name']}.json").write_text(json.dumps(doc, separators=(",", ":")), "utf-8")
    roles = {r: sum(1 for d in fabric.devices if d.role == r) for r in ("host", "leaf", "spine")}
    return {"gpus": gpus, **roles, "interfaces": n_ifaces, "links": len(fabric.links)}


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
    args = ap.parse_args()
    t0 = time.perf_counter()
    counts = generate(args.gpus, args.out, args.radix, args.fault_rate, args.plane_fault)
    print(json.dumps({**counts, "seconds": round(time.perf_counter() - t0, 1)}))


if __name__ == "__main__":
    main()
