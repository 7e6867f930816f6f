"""Parse benchmark: every collected output of one 64-port leaf per switch platform and one 8-NIC host.

    python bench/parse_bench.py [--runs 5] [--repeat 20] [--clock wall|cpu]

The outputs are what the collection profiles (`fabline.collect.profiles.PROFILES`) run on each
device, rendered by the simulator's renderers (`fabline.sim.render`, the formats of the real samples)
for a clean rail-optimized fabric, without SSH. Each run parses the device as a collection does
(`fabline.collect.device`): each command line found on the allow-list by the collection's lookup
(`match_command`, kept per line), every output through the dispatcher (`run_parser`, bounds and clean
strings), the fragments merged and checked against the state schema once (`checked_merge`), the
state finished (the platform spec's `finish`: its finalize hook, then the frame sizes), `--repeat`
times; the figure is the median per-device time over `--runs` runs, in one process on one core.
`--clock cpu` measures CPU time (`time.process_time`) instead of wall time, for a loaded machine. The 100k-GPU estimate multiplies it out for 12,500 hosts and 2,400 switches (the switch figure
taken from the slowest platform), on one core; collection parses in worker threads of one process,
so one core is the honest bound.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import time
from typing import Any

from fabline import synthetic
from fabline.collect.allowlist import match_command, split_by_release
from fabline.collect.profiles import PROFILES
from fabline.platforms import PLATFORMS, ParseContext
from fabline.platforms.dispatch import checked_merge, run_parser
from fabline.sim.render import render
from fabline.sim.server import Simulator

HOSTS_100K = 12_500
SWITCHES_100K = 2_400


def outputs(sim: Simulator, name: str) -> list[tuple[str, str]]:
    """(command, output) of every profile command on the device, as the simulator answers them."""
    dev = sim.devices[name]
    profile = PROFILES[dev.platform]
    state = dev.state()
    release = state.get("facts", {}).get("os_version")

    def sent(templates: Any) -> list[str]:
        # The collection does not send a command the device's release lacks (NCLU on Cumulus 5).
        return split_by_release(dev.platform, templates, release)[0]

    lines = sent(profile.device_commands)
    ifaces = [i for i in state.get("interfaces", {}) if profile.wants_interface(i)]
    lines += [t.format(interface=i) for t in sent(profile.interface_commands) for i in ifaces]
    rdma = [
        b["nic"]["rdma_device"] for b in state["interfaces"].values() if "rdma_device" in b.get("nic", {})
    ]
    lines += [t.format(rdma_device=r) for t in sent(profile.rdma_commands) for r in rdma]
    return [(line, dev.answer(line, render).out) for line in lines]


def parse_device(platform: str, outs: list[tuple[str, str]]) -> dict[str, Any]:
    """Parse, merge (checking the merged fragments once) and finalize one device's outputs."""
    spec = PLATFORMS[platform]
    fragments = []
    for cmd, out in outs:
        matched = match_command(platform, cmd)
        assert matched is not None, cmd
        command, params = matched
        fragments.append(run_parser(command.parser, out, ParseContext(platform, cmd, params), validate=False))
    merged, refused = checked_merge(fragments)
    assert not refused, refused
    return spec.finish(merged)


def main() -> None:
    """Command line entry point."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    args = ap.parse_args()
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    rows = []
    for platform in ("sonic", "cumulus", "arista_eos", "cisco_nxos"):
        fabric = synthetic.rail_fabric(512, radix=64, leaf_platforms=(platform,), spine_platforms=(platform,))
        sim = Simulator(fabric)
        leaf = next(d.name for d in fabric.devices if d.role == "leaf")
        host = next(d.name for d in fabric.devices if d.role == "host")
        for name in (leaf, host) if platform == "sonic" else (leaf,):
            dev = sim.devices[name]
            outs = outputs(sim, name)
            n_ports = len(dev.state()["interfaces"])
            parse_device(dev.platform, outs)  # warm-up (and proof it parses)
            times = []
            for _ in range(args.runs):
                gc.collect()
                t0 = clock()
                for _ in range(args.repeat):
                    parse_device(dev.platform, outs)
                times.append((clock() - t0) / args.repeat)
            rows.append(
                {
                    "platform": dev.platform,
                    "device": f"{dev.spec.role} ({n_ports} ports)",
                    "commands": len(outs),
                    "output_kib": round(sum(len(o) for _, o in outs) / 1024),
                    "ms_per_device": round(statistics.median(times) * 1000, 2),
                }
            )
    host_ms = next(r["ms_per_device"] for r in rows if r["platform"] == "linux")
    switch_ms = max(r["ms_per_device"] for r in rows if r["platform"] != "linux")
    estimate = (HOSTS_100K * host_ms + SWITCHES_100K * switch_ms) / 1000
    print("| platform | device | commands | output (KiB) | parse + merge per device (ms) |")
    print("|---|---|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['platform']} | {r['device']} | {r['commands']} | {r['output_kib']} | {r['ms_per_device']} |"
        )
    print(
        f"\n100k GPUs ({HOSTS_100K:,} hosts x {host_ms} ms + {SWITCHES_100K:,} switches x {switch_ms} ms), "
        f"one core: {estimate:.1f} s"
    )
    print(json.dumps({"rows": rows, "estimate_100k_s": round(estimate, 1)}))


if __name__ == "__main__":
    main()
