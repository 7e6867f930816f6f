"""Collection benchmark: a simulated fabric collected end to end, against Nornir + nornir_netmiko.

    python bench/collect_bench.py [--switches 64] [--hosts 256] [--workers 32] [--runs 3] [--no-nornir] [--clean]
                                  [--compare PYTHON] [--port 2222]
    python bench/collect_bench.py --eapi [--switches 64] [--runs 3]    # EOS over SSH and over eAPI

The simulator (``fabline.sim``) serves the fabric from a separate process, so it does not share
the collector's interpreter lock; both compete for the same CPUs, as on a laptop. Each run times

  * fabline: ``collect`` (SSH, the profiles' commands, parse, write the snapshot) then ``check``
    against the default baseline, in a fresh ``fabline run`` process (end to end), and
  * nornir: Nornir 3 with nornir_netmiko (``netmiko_send_command``), the same worker count, and
    exactly the commands fabline ran on each device (read from fabline's manifest), output kept in
    memory and not parsed (so the baseline does less work than fabline).

With ``--eapi`` the fabric is ``--switches`` Arista EOS switches only (no hosts), served over SSH
and eAPI at once, and each run times the same ``fabline run`` over SSH and over eAPI
(``ansible_connection: ansible.netcommon.httpapi``, the simulator's CA pinned), one after the other.

Prints medians as a Markdown table for docs/benchmarks.md and writes bench/out/collect.json
(``--eapi``: bench/out/collect-eapi.json).
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from fabline import synthetic

HERE = Path(__file__).resolve().parent
OUT = HERE / "out" / "collect"
PASSWORD_ENV = "FABLINE_BENCH_PASSWORD"
PASSWORD = "bench-admin"
LEAF_PLATFORMS = ("sonic", "arista_eos", "cisco_nxos", "cumulus")


def bench_fabric(
    switches: int, hosts: int, rails: int = 8, leaf_platforms: tuple[str, ...] = LEAF_PLATFORMS
) -> synthetic.Fabric:
    """A rail-optimized fabric with ``switches`` switches (3/4 leaves, 1/4 spines) and ``hosts`` hosts."""
    n_spines = max(1, switches // 4)
    per_rail = max(1, (switches - n_spines) // rails)
    spines = [synthetic.DeviceSpec(f"spine-{s:02d}", "spine", "arista_eos") for s in range(n_spines)]
    nics = [synthetic.port_name("linux", r) for r in range(rails)]
    servers = [
        synthetic.DeviceSpec(f"gpu-{h:04d}", "host", "linux", ports=rails, rail_interfaces=list(nics))
        for h in range(hosts)
    ]
    per_leaf = math.ceil(hosts / per_rail)
    leaves: list[synthetic.DeviceSpec] = []
    links: list[tuple[str, str, str, str]] = []
    for rail in range(rails):
        for k in range(per_rail):
            platform_id = leaf_platforms[len(leaves) % len(leaf_platforms)]
            leaf = synthetic.DeviceSpec(f"leaf-r{rail}-{k:02d}", "leaf", platform_id, rail=rail)
            leaves.append(leaf)
            served = servers[k * per_leaf : (k + 1) * per_leaf]
            for p, server in enumerate(served):
                links.append((server.name, nics[rail], leaf.name, synthetic.port_name(platform_id, p)))
            # Enough parallel uplinks to every spine for 1:1 (no oversubscription finding).
            per_spine = max(1, math.ceil(len(served) / len(spines)))
            port = len(served)
            for spine in spines:
                for _ in range(per_spine):
                    up = synthetic.port_name(platform_id, port)
                    links.append((leaf.name, up, spine.name, synthetic.port_name("arista_eos", spine.ports)))
                    spine.ports += 1
                    port += 1
            leaf.ports = port
    return synthetic.Fabric([*spines, *leaves, *servers], links)


def serve(
    switches: int,
    hosts: int,
    inventory: Path,
    ready: Any,
    stop: Any,
    eapi: bool = False,
    sudo: bool = False,
    port: int = 2222,
) -> None:
    """Child process: serve the fabric until ``stop`` is set (``eapi``: EOS only, SSH and eAPI).

    ``sudo``: the GPU servers' inventory sets ``fabline_sudo`` (their root-only reads are sent too).
    """
    from fabline.sim import run_simulator

    fabric = (
        bench_fabric(switches, hosts, leaf_platforms=("arista_eos",))
        if eapi
        else bench_fabric(switches, hosts)
    )
    extra: dict[str, Any] = {"eapi_port": port + 1} if eapi else {}
    with run_simulator(fabric, password=PASSWORD, address_base="127.20", port=port, **extra) as sim:
        inv = sim.inventory(password_env=PASSWORD_ENV)
        for hv in (
            (inv["all"].get("children", {}).get("gpu_hosts", {}).get("hosts") or {}).values() if sudo else ()
        ):
            hv["fabline_sudo"] = True
        inventory.write_text(yaml.safe_dump(inv, sort_keys=False))
        if eapi:
            assert sim.eapi_tls is not None
            ca = inventory.with_name("eapi-ca.pem")
            ca.write_text(sim.eapi_tls.ca_pem)
            inv = sim.inventory(password_env=PASSWORD_ENV, eapi_ca_file=ca)
            inventory.with_name("inventory-eapi.yml").write_text(yaml.safe_dump(inv, sort_keys=False))
        ready.set()
        stop.wait()


def children_cpu() -> float:
    """User + system CPU seconds of this process's finished children (and theirs)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def process_cpu(pid: int) -> float:
    """User + system CPU seconds of a running process (the simulator), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_fabline(
    inventory: Path, snap: Path, workers: int, python: str = sys.executable
) -> tuple[float, int, dict[str, float]]:
    """``fabline run`` in a fresh process: (wall seconds, exit code, device statuses and figures).

    The figures are ``collect_s`` (the collection part, as ``fabline run`` prints it) and
    ``cpu_s`` (user + system CPU of the ``fabline run`` process and its finishing workers).
    """
    snap.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, PASSWORD_ENV: PASSWORD}
    cpu_before = children_cpu()
    started = time.perf_counter()
    proc = subprocess.run(
        [python, "-m", "fabline", "run", "-i", str(inventory), "-s", str(snap), "-o", str(snap.parent / "reports"),
         "-w", str(workers), "--host-key-policy", "ignore", "-q"],
        env=env, capture_output=True, text=True, check=False, cwd=snap.parent,
    )  # fmt: skip
    wall = time.perf_counter() - started
    cpu = children_cpu() - cpu_before
    if proc.returncode not in (0, 3, 4):
        raise RuntimeError(f"fabline run failed ({proc.returncode}): {proc.stderr[-800:]}")
    manifest = json.loads((snap / "manifest.json").read_text())
    statuses: dict[str, float] = {}
    for entry in manifest["devices"].values():
        statuses[entry["status"]] = statuses.get(entry["status"], 0) + 1
    found = re.search(r"collected \d+ devices in ([\d.]+) s", proc.stdout)
    statuses["collect_s"] = float(found.group(1)) if found else -1.0  # the collection part alone
    statuses["cpu_s"] = cpu
    return wall, proc.returncode, statuses


NORNIR_SCRIPT = r"""
import json, sys, time
from nornir import InitNornir
from nornir_netmiko.tasks import netmiko_send_command
cfg, plan_file = sys.argv[1], sys.argv[2]
plan = json.load(open(plan_file))
def collect(task):
    for cmd in plan[task.host.name]:
        task.run(task=netmiko_send_command, command_string=cmd, read_timeout=30)
started = time.perf_counter()
nr = InitNornir(config_file=cfg)
result = nr.run(task=collect)
wall = time.perf_counter() - started
print(json.dumps({"wall": wall, "failed": sorted(result.failed_hosts)}))
"""

NETMIKO_PLATFORM = {"sonic": "linux", "cumulus": "cumulus_linux", "arista_eos": "arista_eos",
                    "cisco_nxos": "cisco_nxos", "linux": "linux"}  # fmt: skip


def run_nornir(inventory: Path, snap: Path, workers: int, work: Path) -> tuple[float, int]:
    """Nornir + nornir_netmiko with the same commands per device: (wall seconds, failed hosts)."""
    manifest = json.loads((snap / "manifest.json").read_text())
    plan = {
        name: [c["command"] for c in entry["commands"] if c["status"] != "refused"]
        for name, entry in manifest["devices"].items()
    }
    inv = yaml.safe_load(inventory.read_text())
    hosts: dict[str, Any] = {}
    stack = [inv["all"]]
    while stack:
        group = stack.pop()
        for name, hv in (group.get("hosts") or {}).items():
            hosts[name] = {
                "hostname": hv["ansible_host"], "port": hv["ansible_port"], "username": hv["ansible_user"],
                "password": PASSWORD, "platform": NETMIKO_PLATFORM[hv["fabline_platform"]],
            }  # fmt: skip
        stack.extend((group.get("children") or {}).values())
    work.mkdir(parents=True, exist_ok=True)
    (work / "hosts.yaml").write_text(yaml.safe_dump(hosts))
    (work / "plan.json").write_text(json.dumps(plan))
    (work / "config.yaml").write_text(
        yaml.safe_dump({
            "inventory": {"plugin": "SimpleInventory", "options": {"host_file": str(work / "hosts.yaml")}},
            "runner": {"plugin": "threaded", "options": {"num_workers": workers}},
            "logging": {"enabled": False},
        })
    )  # fmt: skip
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", NORNIR_SCRIPT, str(work / "config.yaml"), str(work / "plan.json")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(f"nornir failed: {proc.stderr[-800:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    return wall, len(out["failed"])


def eapi_side_by_side(args: argparse.Namespace, inventory: Path) -> None:
    """Time ``fabline run`` over SSH and over eAPI on the same EOS switches; print the table."""
    runs_dir = args.snapshot_dir / "runs-eapi" / time.strftime("%Y%m%dT%H%M%S")
    times: dict[str, list[float]] = {"ssh": [], "eapi": []}
    collect_only: dict[str, list[float]] = {"ssh": [], "eapi": []}
    commands = 0
    for run in range(args.runs):
        for transport, inv in (("ssh", inventory), ("eapi", inventory.with_name("inventory-eapi.yml"))):
            snap = runs_dir / f"{transport}-{run + 1}" / "snapshot"
            wall, code, statuses = run_fabline(inv, snap, args.workers)
            times[transport].append(wall)
            collect_only[transport].append(statuses.pop("collect_s"))
            if statuses != {"ok": args.switches}:
                raise RuntimeError(f"{transport}: not every switch was read: {statuses}")
            manifest = json.loads((snap / "manifest.json").read_text())
            commands = sum(len(e["commands"]) for e in manifest["devices"].values())
            print(
                f"run {run + 1}: {transport} {wall:.2f} s (exit {code}, devices {statuses})", file=sys.stderr
            )
    if args.clean:
        shutil.rmtree(runs_dir, ignore_errors=True)
    result = {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "system": platform.platform()},
        "switches": args.switches, "workers": args.workers, "commands": commands,
        "fabline_s": times, "fabline_collect_s": collect_only,
    }  # fmt: skip
    (HERE / "out" / "collect-eapi.json").write_text(json.dumps(result, indent=1))
    print(f"\n{args.switches} Arista EOS switches, {commands} commands, {args.workers} workers, "
          f"{os.cpu_count()} CPUs, median of {args.runs}\n")  # fmt: skip
    print("| transport | fabline run (s) | of which collect + parse + write (s) |")
    print("|---|---|---|")
    for transport, label in (("ssh", "SSH (netmiko)"), ("eapi", "eAPI (NAPALM EOS driver, pyeapi, HTTPS)")):
        run_med, coll_med = statistics.median(times[transport]), statistics.median(collect_only[transport])
        print(f"| {label} | {run_med:.2f} | {coll_med:.2f} |")


def main() -> None:
    """Run the benchmark and print the table."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--switches", type=int, default=64)
    ap.add_argument("--hosts", type=int, default=256)
    ap.add_argument("--workers", type=int, default=32)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--no-nornir", action="store_true", help="Only time fabline.")
    ap.add_argument(
        "--warmup", type=int, default=1, help="Untimed runs first (the simulator renders on first use)."
    )
    ap.add_argument("--compare", action="append", default=[], metavar="PYTHON",
                    help="Also time the fabline installed for this interpreter (another tree's venv), "
                         "alternating with this one run by run.")  # fmt: skip
    ap.add_argument("--eapi", action="store_true", help="EOS switches only: fabline over SSH and over eAPI.")
    ap.add_argument("--clean", action="store_true", help="Delete the runs' snapshots at the end.")
    ap.add_argument("--sudo", action="store_true",
                    help="GPU servers with fabline_sudo: their root-only reads (lspci, dmidecode, one mlxconfig "
                         "per rail NIC) are sent too.")  # fmt: skip
    ap.add_argument("--port", type=int, default=2222,
                    help="The simulator's SSH port (eAPI: the next one); another on a shared machine.")  # fmt: skip
    ap.add_argument("--snapshot-dir", type=Path, default=OUT,
                    help="Where fabline writes its snapshot (e.g. /dev/shm to take the disk out).")  # fmt: skip
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    # Byte-compile fabline as installing a wheel does: with an editable install and
    # PYTHONDONTWRITEBYTECODE set (as on the machine measured), every fresh process would otherwise
    # compile fabline's modules from source again (about 0.3 s of start-up).
    for python in (sys.executable, *args.compare):
        subprocess.run([python, "-c", "import compileall, os, fabline; "
                        "compileall.compile_dir(os.path.dirname(fabline.__file__), quiet=1)"],
                       check=True, capture_output=True)  # fmt: skip
    inventory = OUT / "inventory.yml"
    ctx = mp.get_context("spawn")
    ready, stop = ctx.Event(), ctx.Event()
    if args.eapi:
        args.hosts = 0
    child = ctx.Process(
        target=serve,
        args=(args.switches, args.hosts, inventory, ready, stop, args.eapi, args.sudo, args.port),
        daemon=True,
    )
    child.start()
    if not ready.wait(120):
        raise SystemExit("simulator did not start")
    if args.eapi:
        try:
            eapi_side_by_side(args, inventory)
        finally:
            stop.set()
            child.join(30)
        return
    # A new folder per run, kept (unless --clean): ext4 does not reuse an inode freed in the last
    # 5 minutes (300 s while its table block is dirty), and its allocator scans past every such
    # inode, so creating 25k files right after deleting 25k took 8-15 s of system time instead of
    # 0.6 s (perf: recently_deleted() under __ext4_new_inode; normal again about 6 minutes after the
    # deletion). Deleting snapshots between timed runs would time that, not fabline; a nightly run
    # writes a new snapshot folder too.
    runs_dir = args.snapshot_dir / "runs" / time.strftime("%Y%m%dT%H%M%S")
    # The fabline trees timed: this one, then any --compare interpreter, alternating run by run so
    # each sees the same load on a shared machine.
    pythons = {"this": sys.executable, **{f"compare{i + 1}": py for i, py in enumerate(args.compare)}}
    figures: dict[str, dict[str, list[float]]] = {
        tree: {"wall": [], "collect": [], "cpu": [], "sim_cpu": []} for tree in pythons
    }
    nor: list[float] = []
    statuses: dict[str, float] = {}
    failed_nornir = 0
    try:
        for tree, python in pythons.items():  # the simulator renders each device once, on first use
            for w in range(args.warmup):
                run_fabline(inventory, runs_dir / f"warmup-{tree}-{w + 1}" / "snapshot", args.workers, python)
        for run in range(args.runs):
            for tree, python in pythons.items():
                snap = runs_dir / f"{tree}-{run + 1}" / "snapshot"
                sim_before = process_cpu(child.pid or 0)
                wall, code, statuses = run_fabline(inventory, snap, args.workers, python)
                sim_cpu = process_cpu(child.pid or 0) - sim_before
                got = figures[tree]
                got["wall"].append(wall)
                got["collect"].append(statuses.pop("collect_s"))
                got["cpu"].append(statuses.pop("cpu_s"))
                got["sim_cpu"].append(sim_cpu)
                print(
                    f"run {run + 1} {tree}: fabline run {wall:.2f} s, collection {got['collect'][-1]:.2f} s, "
                    f"CPU fabline {got['cpu'][-1]:.2f} s + simulator {sim_cpu:.2f} s "
                    f"(exit {code}, devices {statuses})",
                    file=sys.stderr,
                )
            if not args.no_nornir:
                nwall, failed_nornir = run_nornir(inventory, snap, args.workers, OUT / "nornir")
                nor.append(nwall)
                print(f"run {run + 1}: nornir {nwall:.2f} s ({failed_nornir} hosts failed)", file=sys.stderr)
    finally:
        stop.set()
        child.join(30)
    manifest = json.loads((snap / "manifest.json").read_text())
    commands = sum(len(e["commands"]) for e in manifest["devices"].values())
    if args.clean:
        shutil.rmtree(runs_dir, ignore_errors=True)
        print("deleted the runs' snapshots: on ext4 wait 5 minutes before timing again", file=sys.stderr)
    else:
        print(f"the runs' snapshots are in {runs_dir}: delete them when done timing (on ext4, wait 5 "
              "minutes after deleting many files before timing again)", file=sys.stderr)  # fmt: skip
    result = {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "system": platform.platform(),
                    "loadavg": os.getloadavg()},
        "switches": args.switches, "hosts": args.hosts, "workers": args.workers, "commands": commands,
        "pythons": pythons, "figures": figures,
        "fabline_s": figures["this"]["wall"], "fabline_collect_s": figures["this"]["collect"],
        "nornir_s": nor, "statuses": statuses, "nornir_failed_hosts": failed_nornir,
    }  # fmt: skip
    (HERE / "out" / "collect.json").write_text(json.dumps(result, indent=1))
    print(f"\n{args.switches} switches + {args.hosts} hosts, {commands} commands (last tree), {args.workers} "
          f"workers, {os.cpu_count()} CPUs, median of {args.runs}\n")  # fmt: skip
    print(
        "| tree | fabline run wall (s) | collection wall (s) | CPU fabline (s) | CPU simulator (s) | CPU total (s) |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for tree, got in figures.items():
        total = [a + b for a, b in zip(got["cpu"], got["sim_cpu"], strict=True)]
        print(
            f"| {tree} | {statistics.median(got['wall']):.2f} | {statistics.median(got['collect']):.2f} | "
            f"{statistics.median(got['cpu']):.2f} | {statistics.median(got['sim_cpu']):.2f} | "
            f"{statistics.median(total):.2f} |"
        )
    if nor:
        med, nmed = statistics.median(figures["this"]["wall"]), statistics.median(nor)
        print(
            f"\nNornir + nornir_netmiko (collect only): {nmed:.2f} s; ratio fabline / Nornir {med / nmed:.2f}"
        )


if __name__ == "__main__":
    main()
