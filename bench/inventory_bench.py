"""Time loading and resolving a large static inventory (13,300 hosts, host ranges, group_vars).

    python bench/inventory_bench.py --runs 5

Writes the inventory of a 100k-GPU fabric's scale (12,500 GPU hosts, 768 leaves, 32 spines, written
as Ansible host ranges with group_vars and a templated password) to a temporary folder, then in
``--runs`` fresh processes measures: loading plus ``ansible-inventory --list``-shaped listing, and
resolving every device (templating each one's variables). Prints the medians as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

FILES = {
    "hosts.yml": (
        "all:\n  children:\n    fabric:\n      children:\n"
        "        spine:\n          hosts:\n            spine-[001:032]:\n"
        "        leaf:\n          hosts:\n            leaf-p[0:7]-r[0:7]-[01:12]:\n"
        "    gpu_hosts:\n      hosts:\n        gpu-[00001:12500]:\n"
        "    pod_a:\n      hosts:\n        gpu-[00001:06250]:\n        leaf-p[0:3]-r[0:7]-[01:12]:\n"
    ),
    "group_vars/all.yml": "ansible_user: admin\nansible_password: \"{{ lookup('env', 'FAB_BIG_PW') }}\"\n",
    "group_vars/gpu_hosts.yml": "fabline_role: host\nrail_interfaces: [eth0, eth1]\n",
    "group_vars/leaf.yml": "fabline_role: leaf\nfabline_platform: sonic\n",
    "group_vars/spine.yml": "fabline_role: spine\nansible_network_os: arista.eos.eos\n",
}

ONE_RUN = """
import json, sys, time
from fabline.inventory import load_inventory
t0 = time.perf_counter()
inv = load_inventory(sys.argv[1])
listing = inv.to_ansible_list()
loaded = time.perf_counter() - t0
devices = inv.devices()
total = time.perf_counter() - t0
assert len(devices) == len(listing["_meta"]["hostvars"]) == 13300
print(json.dumps({"load_and_list_s": loaded, "resolve_all_s": total}))
"""


def main() -> None:
    """Command line entry point."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="fabline-invbench-") as tmp:
        root = Path(tmp)
        for name, text in FILES.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text, "utf-8")
        env = {**os.environ, "FAB_BIG_PW": "x"}
        runs = []
        for _ in range(args.runs):
            out = subprocess.run(
                [sys.executable, "-c", ONE_RUN, str(root / "hosts.yml")],
                check=True, capture_output=True, text=True, env=env,
            )  # fmt: skip
            runs.append(json.loads(out.stdout))
    medians = {k: round(statistics.median(r[k] for r in runs), 3) for k in runs[0]}
    print(json.dumps({"hosts": 13300, "runs": args.runs, **medians}))


if __name__ == "__main__":
    main()
