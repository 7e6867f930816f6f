"""Distributed collection benchmark: one machine against a Dask scheduler plus two site collectors.

    python bench/distributed_bench.py [--switches 256] [--hosts 1024] [--workers 32] [--runs 3] [--no-defaults]

The simulator (``fabline.sim``) serves the fabric of ``bench/collect_bench.py`` (1,280 devices by
default) from its own process; the inventory splits it into two sites (``site_a``: switches and
the first half of the hosts, ``site_b``: the rest, about 640 devices each). A real ``dask
scheduler`` and two ``dask worker`` processes (``--resources site_a=1`` / ``site_b=1``,
``--no-nanny``) run on the same machine, twice: once with the collector settings of
docs/scale-out.md (:data:`COLLECTOR_ENV`: Dask's statistical profiler off, its housekeeping
timers at 0.5-2 s), once with Dask's defaults (skipped with ``--no-defaults``). Each run times,
alternately, in fresh ``fabline`` processes:

  * local: ``fabline collect -w W`` (collect, parse, write the snapshot on this machine);
  * distributed: ``fabline collect --scheduler ... --site-group sites -w W/2`` on each cluster
    (each of the two collectors runs W/2 devices at once, so every path has W sessions in flight).

It records the wall time, the collection time fabline prints, and the CPU seconds (user + system)
of every process: the fabline process and its children, the scheduler, the workers (each
cluster's own, so an idle cluster's housekeeping is not charged to another path), the simulator.
The overhead of the distributed path is measured in CPU: client + scheduler + workers against the
local fabline process (the simulator, the devices' side, is left out of both), because on a shared
machine wall time measures the load more than fabline. CPU time inflates with the load too on this
kind of shared virtual machine (the same local run: 36.5 s of CPU at load 0.3, 41-60 s at load
8-12), and so does the simulator's, which does the same work on every path: each run's fabline
CPU divided by the simulator's CPU of that run is printed beside it as a load-corrected figure. It prints the medians as Markdown tables
ready for docs/benchmarks.md (with the date, the load average before and after, the commit), and a
projection for 15,000 devices over N site collectors from the measured per-device costs. Writes
bench/out/distributed.json. Snapshots go to ``--snapshot-dir`` (default /dev/shm, deleted at the
end).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil
import yaml
from collect_bench import PASSWORD, PASSWORD_ENV, bench_fabric

HERE = Path(__file__).resolve().parent
OUT = HERE / "out" / "distributed"

#: The site-collector settings docs/scale-out.md recommends (scheduler and workers): Dask's
#: statistical profiler off (it samples every busy task thread 100 times a second) and its
#: housekeeping timers (event-loop tick 20 ms, memory monitor 100 ms, system monitor 500 ms) slowed
#: down; a collector's event loop then serves results instead.
COLLECTOR_ENV = {
    "DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False",
    "DASK_DISTRIBUTED__ADMIN__TICK__INTERVAL": "500ms",
    "DASK_DISTRIBUTED__WORKER__MEMORY__MONITOR_INTERVAL": "1s",
    "DASK_DISTRIBUTED__ADMIN__SYSTEM_MONITOR__INTERVAL": "2s",
}


def serve(switches: int, hosts: int, inventory: Path, ready: Any, stop: Any) -> None:
    """Child process: serve the fabric until ``stop`` is set; the inventory splits it into two sites."""
    from fabline.sim import run_simulator

    fabric = bench_fabric(switches, hosts)
    with run_simulator(fabric, password=PASSWORD, address_base="127.21", port=2222) as sim:
        inv = sim.inventory(password_env=PASSWORD_ENV)
        gpus = [d.name for d in fabric.devices if d.role == "host"]
        site_b = set(gpus[len(gpus) // 2 :])
        site_a = [d.name for d in fabric.devices if d.name not in site_b]
        inv["all"]["children"]["sites"] = {
            "children": {
                "site_a": {"hosts": dict.fromkeys(site_a)},
                "site_b": {"hosts": dict.fromkeys(sorted(site_b))},
            }
        }
        inventory.write_text(yaml.safe_dump(inv, sort_keys=False))
        ready.set()
        stop.wait()


def start_cluster(
    work: Path, log: Any, settings: dict[str, str]
) -> tuple[str, list[subprocess.Popen[bytes]]]:
    """A scheduler and one worker per site on loopback (random ports), with these Dask settings: (address, processes)."""
    env = {**os.environ, "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "0", **settings}
    work.mkdir(parents=True, exist_ok=True)
    sched_file = work / "scheduler.json"
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "dask", "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
             "--scheduler-file", str(sched_file)],
            env=env, stdout=log, stderr=log,
        )
    ]  # fmt: skip
    deadline = time.monotonic() + 60
    while not sched_file.exists() or not sched_file.read_text().strip():
        if time.monotonic() > deadline or procs[0].poll() is not None:
            raise SystemExit("the Dask scheduler did not start")
        time.sleep(0.1)
    time.sleep(0.2)
    address = json.loads(sched_file.read_text())["address"]
    for site in ("site_a", "site_b"):
        wdir = work / site
        wdir.mkdir(exist_ok=True)
        procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "dask", "worker", address, "--host", "127.0.0.1", "--no-dashboard",
                 "--no-nanny", "--nthreads", "64", "--resources", f"{site}=1", "--name", site],
                env={**env, PASSWORD_ENV: PASSWORD}, stdout=log, stderr=log, cwd=wdir,
            )
        )  # fmt: skip
    from distributed import Client

    client = Client(address, timeout=60, set_as_default=False)
    try:
        client.wait_for_workers(2, timeout=120)
    finally:
        client.close()
    return address, procs


def cpu(procs: list[psutil.Process]) -> float:
    """User + system CPU seconds of these processes so far."""
    total = 0.0
    for p in procs:
        t = p.cpu_times()
        total += t.user + t.system
    return total


def run_collect(args: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, float, str]:
    """``fabline collect`` in a fresh process: (wall s, collection s it printed, its CPU s incl. children, stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "fabline", "collect", *args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"fabline collect failed ({proc.returncode}): {proc.stderr[-1500:]}")
    found = re.search(r"collected \d+ devices in ([\d.]+) s", proc.stdout)
    collected = float(found.group(1)) if found else -1.0
    used = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, collected, used, proc.stdout.strip()


def git_head() -> str:
    """The commit the benchmark runs (with ``+dirty`` when the tree has changes), or '?'."""
    try:
        head = subprocess.run(
            ["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(HERE.parent), "status", "--porcelain", "--", "src", "bench"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"
    return head + ("+dirty" if dirty else "")  # fmt: skip


PATHS = {
    "local": "one machine, `fabline collect -w W`",
    "tuned": "scheduler + two site collectors, collector settings of scale-out.md",
    "defaults": "scheduler + two site collectors, Dask's default settings",
    "compared": "the same, fabline from --compare-src",
}


def main() -> None:
    """Run the benchmark and print the tables."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--switches", type=int, default=256)
    ap.add_argument("--hosts", type=int, default=1024)
    ap.add_argument(
        "--workers", type=int, default=32, help="Sessions in flight in all (split over the collectors)."
    )
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument(
        "--no-defaults", action="store_true", help="Skip the cluster with Dask's default settings."
    )
    ap.add_argument(
        "--compare-src",
        type=Path,
        help="Also time the distributed path of another fabline source tree (its src/ folder, e.g. main's), "
        "interleaved with this one's, on a cluster of its own: an A/B of two versions under the same load.",
    )
    ap.add_argument(
        "--snapshot-dir", type=Path, default=Path("/dev/shm") if Path("/dev/shm").is_dir() else OUT
    )
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(HERE.parent / "src" / "fabline")],
                   check=True, capture_output=True)  # fmt: skip
    load_before = os.getloadavg()
    started_at = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    work = Path(tempfile.mkdtemp(prefix="fabline-dbench-", dir=args.snapshot_dir))
    inventory = work / "inventory.yml"
    ctx = mp.get_context("spawn")
    ready, stop = ctx.Event(), ctx.Event()
    child = ctx.Process(target=serve, args=(args.switches, args.hosts, inventory, ready, stop), daemon=True)
    child.start()
    log = (OUT / "dask.log").open("ab")
    clusters = {"tuned": COLLECTOR_ENV} if args.no_defaults else {"tuned": COLLECTOR_ENV, "defaults": {}}
    if args.compare_src:
        # Everything of that path (client, scheduler, collectors) imports fabline from that tree.
        src = str(args.compare_src.resolve())
        clusters["compared"] = {
            **COLLECTOR_ENV,
            "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", ""),
        }
    procs: dict[str, list[subprocess.Popen[bytes]]] = {}
    results: dict[str, list[dict[str, float]]] = {"local": [], **{name: [] for name in clusters}}
    devices = 0
    try:
        if not ready.wait(300):
            raise SystemExit("simulator did not start")
        addresses = {}
        for name, settings in clusters.items():
            addresses[name], procs[name] = start_cluster(work / name, log, settings)
        sim = psutil.Process(child.pid)
        env = {**os.environ, PASSWORD_ENV: PASSWORD}
        common = ["-i", str(inventory), "--host-key-policy", "ignore"]
        half = max(1, args.workers // 2)
        modes = {"local": ["-w", str(args.workers)]}
        envs = dict.fromkeys(("local", *addresses), env)
        for name, address in addresses.items():
            modes[name] = ["-w", str(half), "--scheduler", address, "--site-group", "sites"]
            if "PYTHONPATH" in clusters[name]:
                envs[name] = {**env, "PYTHONPATH": clusters[name]["PYTHONPATH"]}
        # One untimed run of each first: the simulator renders each device's outputs on first use,
        # the collectors import fabline's collector on their first task.
        for mode, extra in modes.items():
            run_collect([*common, "-o", str(work / f"warm-up-{mode}"), *extra], envs[mode], work)
            shutil.rmtree(work / f"warm-up-{mode}")
        for run in range(args.runs):
            for mode, extra in modes.items():
                snap = work / f"{mode}-{run + 1}"
                mine = [psutil.Process(p.pid) for p in procs.get(mode, [])]
                sched_before = cpu(mine[:1])
                workers_before = cpu(mine[1:])
                sim_before = cpu([sim])
                wall, collected, own, line = run_collect([*common, "-o", str(snap), *extra], envs[mode], work)
                row = {
                    "wall_s": wall, "collect_s": collected, "client_cpu_s": own,
                    "scheduler_cpu_s": cpu(mine[:1]) - sched_before, "workers_cpu_s": cpu(mine[1:]) - workers_before,
                    "simulator_cpu_s": cpu([sim]) - sim_before, "load": os.getloadavg()[0],
                }  # fmt: skip
                row["fabline_cpu_s"] = row["client_cpu_s"] + row["scheduler_cpu_s"] + row["workers_cpu_s"]
                row["per_sim_cpu"] = row["fabline_cpu_s"] / max(row["simulator_cpu_s"], 1e-9)
                results[mode].append(row)
                print(f"run {run + 1} {mode}: {line.splitlines()[-1] if line else ''} | "
                      + ", ".join(f"{k} {v:.2f}" for k, v in row.items()), file=sys.stderr, flush=True)  # fmt: skip
                manifest = json.loads((snap / "manifest.json").read_text())
                devices = len(manifest["devices"])
                bad = {n: e["status"] for n, e in manifest["devices"].items() if e["status"] != "ok"}
                if bad:
                    raise RuntimeError(f"{mode}: devices not ok: {list(bad.items())[:5]}")
                shutil.rmtree(snap)
    finally:
        every = [p for group in procs.values() for p in group]
        for p in reversed(every):
            if p.poll() is None:
                p.terminate()
        for p in every:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()
        stop.set()
        child.join(30)
        log.close()
        shutil.rmtree(work, ignore_errors=True)
    report(args, results, devices, load_before, started_at)


def report(
    args: argparse.Namespace,
    results: dict[str, list[dict[str, float]]],
    devices: int,
    load_before: tuple[float, float, float],
    started_at: str,
) -> None:
    """Medians, the CPU overhead of the distributed path and the 15,000-device projection, as Markdown."""
    med = {
        mode: {k: statistics.median(r[k] for r in rows) for k in rows[0]} for mode, rows in results.items()
    }
    load = os.getloadavg()
    local = med["local"]["fabline_cpu_s"]
    overhead = {mode: m["fabline_cpu_s"] / local - 1 for mode, m in med.items() if mode != "local"}
    # The same, each run's fabline CPU divided by the simulator's CPU of that run (see the module doc).
    by_sim = {
        mode: m["per_sim_cpu"] / med["local"]["per_sim_cpu"] - 1 for mode, m in med.items() if mode != "local"
    }
    commit = git_head()
    doc = {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "system": platform.platform(),
                    "loadavg_before": load_before, "loadavg_after": load},
        "date": started_at, "commit": commit, "collector_env": COLLECTOR_ENV,
        "devices": devices, "workers": args.workers, "runs": results, "median": med, "cpu_overhead": overhead,
        "cpu_overhead_per_simulator_cpu": by_sim,
    }  # fmt: skip
    (HERE / "out" / "distributed.json").write_text(json.dumps(doc, indent=1))
    print(f"\n{started_at}, commit {commit}: {devices} devices, {args.workers} sessions in flight, "
          f"{os.cpu_count()} CPUs, Python {platform.python_version()}, median of {args.runs} (alternating); "
          f"load average {load_before[0]:.1f} before, {load[0]:.1f} after\n")  # fmt: skip
    print("| path | CPU: client (s) | scheduler (s) | collectors (s) | **fabline in all (s)** | CPU overhead | "
          "simulator CPU (s) | fabline / simulator CPU | overhead on that | collection (s) | wall (s) |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for mode, m in med.items():
        extra = "" if mode == "local" else f"{overhead[mode] * 100:+.0f} %"
        extra_sim = "" if mode == "local" else f"{by_sim[mode] * 100:+.0f} %"
        sched = "" if mode == "local" else f"{m['scheduler_cpu_s']:.1f}"
        coll = "" if mode == "local" else f"{m['workers_cpu_s']:.1f}"
        print(f"| {PATHS[mode]} | {m['client_cpu_s']:.1f} | {sched} | {coll} | **{m['fabline_cpu_s']:.1f}** | "
              f"{extra} | {m['simulator_cpu_s']:.1f} | {m['per_sim_cpu']:.2f} | {extra_sim} | {m['collect_s']:.1f} | "
              f"{m['wall_s']:.1f} |")  # fmt: skip
    print("\nruns, fabline CPU in all (s): " + "; ".join(
        f"{mode} " + ", ".join(f"{r['fabline_cpu_s']:.1f}" for r in rows) for mode, rows in results.items()))  # fmt: skip
    print("runs, fabline / simulator CPU: " + "; ".join(
        f"{mode} " + ", ".join(f"{r['per_sim_cpu']:.2f}" for r in rows) for mode, rows in results.items()))  # fmt: skip
    d = med["tuned"]
    per_collector = d["workers_cpu_s"] / devices  # a collector's CPU per device (SSH, parse, Dask's share)
    per_client = d["client_cpu_s"] / devices  # the client's CPU per device (receive + write)
    per_scheduler = d["scheduler_cpu_s"] / devices
    print(f"\nper device (collector settings): collectors {per_collector * 1000:.1f} ms CPU, client "
          f"{per_client * 1000:.1f} ms, scheduler {per_scheduler * 1000:.1f} ms; one machine "
          f"{local / devices * 1000:.1f} ms")  # fmt: skip
    print("\n| site collectors (one core each) | 15,000 devices (s) | bound by |")
    print("|---:|---:|---|")
    for n in (1, 2, 4, 8, 16):
        collectors = 15000 / n * per_collector
        client = 15000 * per_client
        print(
            f"| {n} | {max(collectors, client):.0f} | {'the collectors' if collectors >= client else 'the client'} |"
        )


if __name__ == "__main__":
    main()
