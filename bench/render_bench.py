"""Render benchmark: every switch of the 131,072-GPU design, and per-device rate against pyavd.

    python bench/render_bench.py [--jobs 2] [--pyavd-python /path/to/venv/bin/python]

1. Full design: 131,072 GPUs, 8 per server, 100G links, 512-port switches (512 leaves, 256
   spines, one plane). Times design generation and rendering every switch config (SONiC leaves,
   EOS spines) into a temporary folder with ``--jobs`` worker processes.
2. Per device: one 64-port RoCE leaf on EOS (32 host ports, 32 uplinks, BGP to 32 spines),
   rendered by fabline's template (compiled once) and by Arista's pyavd ``get_device_config`` from
   an equivalent structured config, in the same run. pyavd is imported if installed here
   (``pip install .[bench]``), else run with ``--pyavd-python`` (a venv that has it).

Results go to stdout (and ``--json FILE``); docs/benchmarks.md records the measured figures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from fabline.design.model import generate
from fabline.design.render import Renderer, render_design
from fabline.design.sizing import SizingInput
from fabline.design.topology import Topology

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = ROOT / "templates"


def full_design(jobs: int) -> dict[str, Any]:
    """Generate and render every switch of the 131,072-GPU design."""
    t0 = time.perf_counter()
    design = generate(
        SizingInput(gpus=131_072, gpus_per_server=8, nic_speed_gbps=100, switch_ports=512),
        leaf_platform="sonic",
        spine_platform="arista_eos",
    )
    t1 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="fabline-render-bench-") as tmp:
        count = render_design(design, TEMPLATES, Path(tmp), hosts=False, jobs=jobs)
        t2 = time.perf_counter()
        size = sum(p.stat().st_size for p in Path(tmp).rglob("*") if p.is_file())
    return {
        "switches": count,
        "leaves": sum(1 for s in design.switches if s.role == "leaf"),
        "spines": sum(1 for s in design.switches if s.role == "spine"),
        "jobs": jobs,
        "generate_s": round(t1 - t0, 3),
        "render_s": round(t2 - t1, 3),
        "total_s": round(t2 - t0, 3),
        "ms_per_switch_wall": round((t2 - t1) / count * 1000, 2),
        "output_mb": round(size / 1e6, 1),
    }


def _leaf64() -> tuple[Renderer, Any]:
    design = generate(
        SizingInput(gpus=2048, switch_ports=64), leaf_platform="arista_eos", spine_platform="arista_eos"
    )
    renderer = Renderer(design, TEMPLATES)
    leaf = next(s for s in design.switches if s.role == "leaf")
    return renderer, leaf


def ours_per_device(repeat: int) -> dict[str, Any]:
    """fabline: one 64-port EOS leaf, template compiled once, context built per call."""
    renderer, leaf = _leaf64()
    _, text = renderer.render_switch(leaf)
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        renderer.render_switch(leaf)
        times.append(time.perf_counter() - t)
    return {"ms_per_device": round(statistics.median(times) * 1000, 3), "lines": len(text.splitlines())}


def structured_config() -> dict[str, Any]:
    """pyavd structured config equivalent to fabline's 64-port EOS leaf (same ports, QoS, BGP)."""
    renderer, leaf = _leaf64()
    q = renderer.design.qos.leaf
    topo: Topology = renderer.topo
    eth = []
    neighbors = []
    for p in topo.switch_ports(leaf):
        if p.peer is None:
            eth.append({"name": p.name, "description": "unused", "shutdown": True})
            continue
        eth.append({
            "name": p.name, "description": f"{p.peer} {p.peer_port}", "shutdown": False,
            "mtu": renderer.design.port_mtu[leaf.platform], "speed": f"forced {p.speed_gbps}gfull",
            "error_correction_encoding": {"enabled": True, "reed_solomon": True},
            "switchport": {"enabled": False}, "ip_address": p.address, "service_profile": "ROCE",
            "priority_flow_control": {"enabled": True, "priorities": [{"priority": q.roce_priority, "no_drop": True}]},
        })  # fmt: skip
        if p.kind == "fabric":
            neighbors.append(
                {"ip_address": p.peer_address, "remote_as": str(p.peer_asn), "description": p.peer}
            )
    return {
        "hostname": leaf.name,
        "qos": {
            "map": {
                "dscp_to_traffic_class": [
                    f"{q.roce_dscp} to {q.roce_priority}",
                    f"{q.cnp_dscp} to {q.cnp_priority}",
                ]
            }
        },
        "qos_profiles": [
            {
                "name": "ROCE",
                "trust": "dscp",
                "tx_queues": [
                    {
                        "id": q.roce_priority,
                        "random_detect": {
                            "ecn": {
                                "threshold": {
                                    "min": q.ecn_min_bytes,
                                    "max": q.ecn_max_bytes,
                                    "units": "bytes",
                                    "max_probability": q.ecn_probability_pct,
                                }
                            }
                        },
                    }
                ],
            }
        ],
        "ethernet_interfaces": eth,
        "router_bgp": {"as": str(leaf.asn), "router_id": leaf.loopback, "neighbors": neighbors},
    }


PYAVD_SNIPPET = """
import json, statistics, sys, time
import pyavd
from pyavd import get_device_config
sc = json.load(open(sys.argv[1]))
text = get_device_config(sc)
times = []
for _ in range(int(sys.argv[2])):
    t = time.perf_counter()
    get_device_config(sc)
    times.append(time.perf_counter() - t)
print(json.dumps({"ms_per_device": round(statistics.median(times) * 1000, 3),
                  "lines": len(text.splitlines()), "version": pyavd.__version__}))
"""


def pyavd_per_device(repeat: int, python: str | None) -> dict[str, Any] | None:
    """pyavd ``get_device_config`` on the equivalent structured config (None: pyavd not available)."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(structured_config(), f)
        path = f.name
    try:
        exe = python or sys.executable
        r = subprocess.run(
            [exe, "-c", PYAVD_SNIPPET, path, str(repeat)], capture_output=True, text=True, check=False
        )
        if r.returncode != 0:
            print(
                f"pyavd not measured: {r.stderr.strip().splitlines()[-1] if r.stderr.strip() else r.returncode}"
            )
            return None
        result: dict[str, Any] = json.loads(r.stdout)
        return result
    finally:
        Path(path).unlink()


def main() -> None:
    """Run both measurements and print them."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=30, help="renders per per-device measurement")
    ap.add_argument("--pyavd-python", default=None, help="python of a venv with pyavd installed")
    ap.add_argument("--skip-full", action="store_true", help="only the per-device comparison")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    out: dict[str, Any] = {"cpus": os.cpu_count()}
    if not args.skip_full:
        out["full"] = full_design(args.jobs)
        print(f"full design: {json.dumps(out['full'])}")
    out["fabline_leaf64"] = ours_per_device(args.repeat)
    print(f"fabline 64-port EOS leaf: {json.dumps(out['fabline_leaf64'])}")
    avd = pyavd_per_device(args.repeat, args.pyavd_python)
    if avd is not None:
        out["pyavd_leaf64"] = avd
        out["speedup"] = round(avd["ms_per_device"] / out["fabline_leaf64"]["ms_per_device"], 1)
        print(f"pyavd 64-port EOS leaf: {json.dumps(avd)}")
        print(f"fabline is {out['speedup']}x faster per device")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
