"""Multi-site collection on a real Dask cluster (``--scheduler``), against the SSH simulator.

A real ``dask scheduler`` and real ``dask worker`` processes (one per site, a Dask resource each)
run on loopback with random ports; the fabric is served by the simulator and split into two sites
by an inventory group. Checked: the snapshot equals a single-machine collection of the same fabric;
the password is rendered on the workers and never in what crosses the scheduler; a site without a
collector, an unreachable scheduler, and a collector killed (SIGKILL) mid-collection. Every process
a test starts is stopped by it.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip("distributed")

from fabline import synthetic
from fabline.sim import TransportFault
from fabline.state import load_state_file
from tests.conftest import REPO_ROOT
from tests.integration.test_collect_sim import PASSWORD, free_port, simulator

PASSWORD_ENV = "FABLINE_TEST_DASK_PASSWORD"
CAPTURE = Path(__file__).with_name("dask_capture.py")


@dataclass
class Cluster:
    """A running scheduler and its workers (by name)."""

    address: str
    scheduler_file: Path
    workers: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def client(self) -> Any:
        from distributed import Client

        return Client(self.address, timeout=30, set_as_default=False)

    def worker_address(self, client: Any, name: str) -> str:
        for address, info in client.scheduler_info(n_workers=-1)["workers"].items():
            if info.get("name") == name:
                return str(address)
        raise AssertionError(f"worker {name} not registered")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != PASSWORD_ENV}
    env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra)
    return env


@contextlib.contextmanager
def dask_cluster(
    tmp: Path, sites: dict[str, str], capture: Path | None = None, allowed_failures: int = 0
) -> Iterator[Cluster]:
    """A scheduler and one worker per ``name -> site``; the workers hold the site's password.

    ``allowed_failures``: the scheduler's own retries of a task whose worker died (the documented
    setting is 0; Dask's default is 3).
    """
    scheduler_file = tmp / "scheduler.json"
    procs: list[subprocess.Popen[bytes]] = []
    cluster = Cluster("", scheduler_file, procs=procs)
    log = (tmp / "dask.log").open("ab")
    # No retry by the scheduler itself: a device whose collector dies is retried once by fabline.
    base = _env(DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES=str(allowed_failures))
    try:
        scheduler_env = dict(base, FABLINE_TEST_CAPTURE=str(capture)) if capture else base
        cmd = [sys.executable, "-m", "dask", "scheduler", "--host", "127.0.0.1", "--port", "0",
               "--no-dashboard", "--scheduler-file", str(scheduler_file)]  # fmt: skip
        if capture:
            cmd += ["--preload", str(CAPTURE)]
        procs.append(subprocess.Popen(cmd, env=scheduler_env, stdout=log, stderr=log, cwd=tmp))
        deadline = time.monotonic() + 60
        while not scheduler_file.exists() or not scheduler_file.read_text().strip():
            assert time.monotonic() < deadline, (tmp / "dask.log").read_text()
            assert procs[0].poll() is None, (tmp / "dask.log").read_text()
            time.sleep(0.1)
        time.sleep(0.2)  # the file is written in one go, but be sure it is complete
        cluster.address = json.loads(scheduler_file.read_text())["address"]
        for name, site in sites.items():
            wdir = tmp / name
            wdir.mkdir(exist_ok=True)
            proc = subprocess.Popen(
                [sys.executable, "-m", "dask", "worker", "--scheduler-file", str(scheduler_file),
                 "--host", "127.0.0.1", "--no-dashboard", "--no-nanny", "--nthreads", "2",
                 "--resources", f"{site}=1", "--name", name],
                env=dict(base, **{PASSWORD_ENV: PASSWORD}), stdout=log, stderr=log, cwd=wdir,
            )  # fmt: skip
            procs.append(proc)
            cluster.workers[name] = proc
        client = cluster.client()
        try:
            client.wait_for_workers(len(sites), timeout=90)
        finally:
            client.close()
        yield cluster
    finally:
        for proc in reversed(procs):
            if proc.poll() is None:
                proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        log.close()


def two_site_inventory(sim: Any, path: Path, sites: dict[str, list[str]]) -> Path:
    """The simulator's inventory plus a ``sites`` group whose children are the sites."""
    inv = sim.inventory(password_env=PASSWORD_ENV)
    inv["all"]["children"]["sites"] = {
        "children": {site: {"hosts": dict.fromkeys(names)} for site, names in sites.items()}
    }
    path.write_text(yaml.safe_dump(inv, sort_keys=False))
    return path


def fabline(*args: str | Path, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fabline", *(str(a) for a in args)],
        env=env, capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip


def states(snap: Path) -> dict[str, dict[str, Any]]:
    out = {}
    for path in sorted((snap / "state").glob("*.json")):
        doc = load_state_file(path)
        doc.pop("collected_at", None)
        out[path.stem] = doc
    return out


def manifest(snap: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((snap / "manifest.json").read_text())
    return doc


def assert_sound(snap: Path) -> None:
    """Nothing written is corrupt: every state loads, every command file is there, no temporary left."""
    man = manifest(snap)
    assert man["complete"] is True
    assert set(man["devices"]) == {p.stem for p in (snap / "state").glob("*.json")}
    for name, entry in man["devices"].items():
        assert load_state_file(snap / "state" / f"{name}.json")["status"] == entry["status"]
        for cmd in entry["commands"]:
            if cmd.get("file"):
                assert (snap / "raw" / name / cmd["file"]).is_file(), (name, cmd)
    leftovers = [p for p in snap.rglob(".*") if p.name != "manifest.json"]
    assert not leftovers, leftovers


LAB = synthetic.lab_fabric()
SITE_A = ["spine-01", "spine-02", "leaf-r0-a", "leaf-r1-a", "leaf-r2-a", "leaf-r3-a"]
SITE_B = ["gpu-001", "gpu-002"]


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The lab fabric (one device left without lldpd) and a two-site cluster that captures its tasks."""
    tmp = tmp_path_factory.mktemp("dask-lab")
    faults = [TransportFault("gpu-002", "missing_command", "lldpctl -f json")]
    capture = tmp / "capture.bin"
    with (
        simulator(LAB, faults, base="127.43") as sim,
        dask_cluster(tmp, {"collector-a": "site_a", "collector-b": "site_b"}, capture) as cluster,
    ):
        inv = two_site_inventory(sim, tmp / "inv.yml", {"site_a": SITE_A, "site_b": SITE_B})
        local = fabline("collect", "-i", inv, "-o", tmp / "local", "--known-hosts", tmp / "kh-local",
                        env=_env(**{PASSWORD_ENV: PASSWORD}))  # fmt: skip
        assert local.returncode == 0, local.stderr
        yield {
            "tmp": tmp,
            "sim": sim,
            "cluster": cluster,
            "inv": inv,
            "local": tmp / "local",
            "capture": capture,
        }


def test_distributed_snapshot_equals_local(lab: dict[str, Any]) -> None:
    tmp = lab["tmp"]
    # The client does not even have the password: the sites render it in their own environment.
    run = fabline("collect", "-i", lab["inv"], "-o", tmp / "dist", "--scheduler", lab["cluster"].address,
                  "--site-group", "sites", "--known-hosts", tmp / "kh-dist", env=_env())  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "collected 8 devices" in run.stdout
    # A shard collects on threads of its own: the collectors' 2 Dask threads do not bound the sessions.
    assert "warning" not in run.stderr
    local, dist = states(lab["local"]), states(tmp / "dist")
    assert set(dist) == {d.name for d in LAB.devices}
    assert dist == local
    assert dist["gpu-002"]["status"] == "partial"  # the missing lldpd, collected at its site
    man_local, man_dist = manifest(lab["local"]), manifest(tmp / "dist")
    assert {n: e["status"] for n, e in man_dist["devices"].items()} == {
        n: e["status"] for n, e in man_local["devices"].items()
    }
    for name, entry in man_dist["devices"].items():
        assert [c["file"] for c in entry["commands"] if "file" in c] == [
            c["file"] for c in man_local["devices"][name]["commands"] if "file" in c
        ]
        assert entry["site"] == ("site_a" if name in SITE_A else "site_b")
        assert entry["collector"].startswith("tcp://127.0.0.1:")
    assert sorted(p.name for p in (tmp / "dist" / "raw" / "gpu-001").iterdir()) == sorted(
        p.name for p in (lab["local"] / "raw" / "gpu-001").iterdir()
    )
    assert_sound(tmp / "dist")
    # The collectors (started with Dask's defaults) stopped their statistical profiler on their first task.
    client = lab["cluster"].client()
    try:
        profiling = client.run(lambda dask_worker: dask_worker.periodic_callbacks["profile"].is_running())
    finally:
        client.close()
    assert len(profiling) == 2 and not any(profiling.values()), profiling


def test_password_never_crosses_the_scheduler(lab: dict[str, Any]) -> None:
    tmp = lab["tmp"]
    lab["capture"].write_bytes(b"")
    # This time the client has the password too: what it submits must still not hold it.
    run = fabline("collect", "-i", lab["inv"], "-o", tmp / "dist-pw", "--scheduler", lab["cluster"].address,
                  "--site-group", "sites", "--known-hosts", tmp / "kh-pw", env=_env(**{PASSWORD_ENV: PASSWORD}))  # fmt: skip
    assert run.returncode == 0, run.stderr
    submitted = lab["capture"].read_bytes()
    # The capture did see the tasks: every device, and the password's inventory text, not its value.
    for device in LAB.devices:
        assert device.name.encode() in submitted
    assert PASSWORD_ENV.encode() in submitted
    assert PASSWORD.encode() not in submitted
    for path in (tmp / "dist-pw").rglob("*"):
        if path.is_file():
            assert PASSWORD not in path.read_text(errors="replace"), path


def _queues_at(cluster: Cluster) -> list[str]:
    client = cluster.client()
    try:
        return sorted(
            client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.extensions["queues"].queues))
        )
    finally:
        client.close()


def test_one_streaming_task_per_collector_and_nothing_left_at_the_scheduler(lab: dict[str, Any]) -> None:
    """A site's devices go to its collector as one task (a shard), not one each; they come back
    through a queue that the run leaves behind neither at the scheduler nor on the collectors."""
    tmp = lab["tmp"]
    lab["capture"].write_bytes(b"")
    logged = (tmp / "dask.log").stat().st_size
    run = fabline("collect", "-i", lab["inv"], "-o", tmp / "dist-shards", "--scheduler", lab["cluster"].address,
                  "--site-group", "sites", "--known-hosts", tmp / "kh-shards", env=_env())  # fmt: skip
    assert run.returncode == 0, run.stderr
    tasks = []
    with lab["capture"].open("rb") as fh:
        while fh.peek(1):
            tasks.append(pickle.dumps(pickle.load(fh)))
    # One collector per site: two tasks for the eight devices, each device in exactly one.
    assert len(tasks) == 2, len(tasks)
    for device in LAB.devices:
        assert sum(device.name.encode() in task for task in tasks) == 1, device.name
    assert states(tmp / "dist-shards") == states(lab["local"])
    assert _queues_at(lab["cluster"]) == []
    # The client reads the queue without waiting at the scheduler (a wait that times out there is
    # logged as an error with a traceback): the scheduler logged no error about the queue.
    with (tmp / "dask.log").open("rb") as fh:
        fh.seek(logged)
        assert b"Exception while handling op queue_" not in fh.read()
    client = lab["cluster"].client()
    try:
        from fabline.collect.distributed import collecting_now

        assert set(map(tuple, client.run(collecting_now).values())) == {()}
    finally:
        client.close()


def test_site_without_collector_is_error_and_run_goes_on(lab: dict[str, Any]) -> None:
    tmp = lab["tmp"]
    inv = two_site_inventory(
        lab["sim"], tmp / "inv-c.yml", {"site_a": SITE_A, "site_b": ["gpu-001"], "site_c": ["gpu-002"]}
    )
    run = fabline("collect", "-i", inv, "-o", tmp / "dist-c", "--scheduler", lab["cluster"].address,
                  "--site-group", "sites", "--known-hosts", tmp / "kh-c", env=_env())  # fmt: skip
    assert run.returncode == 3, run.stderr
    got = states(tmp / "dist-c")
    assert got["gpu-002"]["status"] == "error"
    assert got["gpu-002"]["errors"][0]["kind"] == "collector"
    assert "no collector for site site_c" in got["gpu-002"]["errors"][0]["message"]
    assert {n: s["status"] for n, s in got.items() if n != "gpu-002"} == {
        n: s["status"] for n, s in states(lab["local"]).items() if n != "gpu-002"
    }
    assert "gpu-002: error: no collector for site site_c" in run.stderr
    assert_sound(tmp / "dist-c")
    # Resumed once gpu-002 is in a site with a collector: only it is collected, the rest is kept.
    before = manifest(tmp / "dist-c")
    resumed = fabline("collect", "-i", lab["inv"], "--resume", tmp / "dist-c", "--scheduler", lab["cluster"].address,
                      "--site-group", "sites", "--known-hosts", tmp / "kh-c", env=_env())  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    assert "collected 1 devices (7 already done)" in resumed.stdout
    after = manifest(tmp / "dist-c")
    assert after["resumed_from"] == before["run_id"]
    assert after["devices"]["gpu-002"]["site"] == "site_b"
    assert states(tmp / "dist-c") == states(lab["local"])
    for name in SITE_A:
        assert after["devices"][name] == before["devices"][name]
    assert_sound(tmp / "dist-c")


def test_run_and_drift_with_scheduler_check_what_the_sites_collected(lab: dict[str, Any]) -> None:
    tmp = lab["tmp"]
    env = _env(**{PASSWORD_ENV: PASSWORD})
    site = ["--scheduler", lab["cluster"].address, "--site-group", "sites"]
    run = fabline("run", "-i", lab["inv"], "-s", tmp / "run-snap", "-o", tmp / "run-reports", "-q", "-f", "json",
                  *site, "--known-hosts", tmp / "kh-run", env=env)  # fmt: skip
    check = fabline("check", "-i", lab["inv"], "--snapshot", lab["local"], "-o", tmp / "local-reports", "-q",
                    "-f", "json", env=env)  # fmt: skip
    assert run.returncode == check.returncode, (run.stderr, check.stderr)
    got = json.loads((tmp / "run-reports" / "report.json").read_text())
    want = json.loads((tmp / "local-reports" / "report.json").read_text())
    assert got["summary"] == want["summary"]
    # drift collects through the sites too (the known_hosts default is each collector's own).
    drift = fabline("drift", "-i", lab["inv"], "--collect-to", tmp / "drift-snap", "--db", tmp / "history.db",
                    "-q", *site, env=env)  # fmt: skip
    assert drift.returncode == check.returncode, drift.stderr
    assert manifest(tmp / "drift-snap")["devices"]["gpu-001"]["site"] == "site_b"
    assert states(tmp / "drift-snap") == states(lab["local"])


@pytest.mark.parametrize("command", ["collect", "run"])
def test_unreachable_scheduler_is_one_line_exit_2(tmp_path: Path, command: str) -> None:
    inv = tmp_path / "inv.yml"
    inv.write_text(
        yaml.safe_dump({"all": {"hosts": {"gpu-1": {"fabline_role": "host", "fabline_site": "a"}}}})
    )
    address = f"tcp://127.0.0.1:{free_port()}"
    out = ["-o", tmp_path / "snap"] if command == "collect" else ["-s", tmp_path / "snap"]
    run = fabline(command, "-i", inv, *out, "--scheduler", address, "--timeout", "2", env=_env())
    assert run.returncode == 2
    assert run.stderr.strip().splitlines() == [
        f"fabline: error: cannot reach the Dask scheduler at {address}: "
        + run.stderr.split(f"{address}: ", 1)[1].strip()
    ]
    assert not (tmp_path / "snap").exists()


# ---------------------------------------------------------------------------------------------
# a collector killed mid-collection


def written(snap: Path) -> set[str]:
    """The devices whose state file the client has written so far."""
    return {p.stem for p in (snap / "state").glob("*.json")}


def in_session(client: Any, address: str, sim: Any, done: set[str]) -> set[str]:
    """The devices the collector at ``address`` is collecting now, in a session, not written yet."""
    from fabline.collect.distributed import collecting_now

    try:
        now = client.run(collecting_now, workers=[address]).get(address, [])
    except Exception:  # the worker is going away
        return set()
    return {d for d in now if sim.devices[d].sessions and d not in done}


def slow_hosts(prefix: str, n: int) -> list[synthetic.DeviceSpec]:
    return [
        synthetic.DeviceSpec(f"{prefix}-{i:02d}", "host", "linux", ports=1, rail_interfaces=["eth0"])
        for i in range(n)
    ]


def test_collector_killed_mid_collection(tmp_path: Path) -> None:
    a_hosts, b_hosts = slow_hosts("a", 12), slow_hosts("b", 6)
    fabric = synthetic.Fabric([*a_hosts, *b_hosts], [])
    # Two of each site are quick, the rest answer every session after a second: the kills land while
    # some devices are written and others are still in flight.
    faults = [TransportFault(d.name, "slow", seconds=1.0) for d in (*a_hosts[2:], *b_hosts[1:])]
    workers = {"a1": "site_a", "a2": "site_a", "b1": "site_b"}
    with simulator(fabric, faults, base="127.44") as sim, dask_cluster(tmp_path, workers) as cluster:
        inv = two_site_inventory(sim, tmp_path / "inv.yml", {
            "site_a": [d.name for d in a_hosts], "site_b": [d.name for d in b_hosts]})  # fmt: skip
        snap = tmp_path / "snap"
        proc = subprocess.Popen(
            [sys.executable, "-m", "fabline", "collect", "-i", str(inv), "-o", str(snap), "--scheduler",
             cluster.address, "--site-group", "sites", "--workers", "4", "--timeout", "3",
             "--known-hosts", str(tmp_path / "kh")],
            env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        killed: dict[str, str] = {}
        client = cluster.client()
        try:
            addresses = {name: cluster.worker_address(client, name) for name in workers}
            deadline = time.monotonic() + 120
            while len(killed) < 2 and time.monotonic() < deadline and proc.poll() is None:
                done = written(snap)
                for name, prefix in (("a1", "a-"), ("b1", "b-")):
                    if name in killed or not any(n.startswith(prefix) for n in done):
                        continue
                    # Kill only once the worker is in a session with a device it has not sent back.
                    if in_session(client, addresses[name], sim, done):
                        os.kill(cluster.workers[name].pid, signal.SIGKILL)
                        cluster.workers[name].wait()
                        killed[name] = addresses[name]
                time.sleep(0.05)
        finally:
            client.close()
        _out, err = proc.communicate(timeout=180)
        sessions = {name: dev.sessions for name, dev in sim.devices.items()}
    assert set(killed) == {"a1", "b1"}, (killed, err)
    assert proc.returncode == 3, err  # site_b lost devices
    man = manifest(snap)
    assert_sound(snap)
    entries = man["devices"]
    assert set(entries) == {d.name for d in fabric.devices}
    # site_a had a second collector: every device collected (partial: an unlinked NIC has no optic
    # to read, as in a single-machine run), those caught on a1 retried on a2.
    for d in a_hosts:
        assert entries[d.name]["status"] == "partial", entries[d.name]
        assert {e["kind"] for e in entries[d.name]["errors"]} == {"failed"}, entries[d.name]
    retried = [d.name for d in a_hosts if sessions[d.name] > 1]
    assert retried, sessions
    assert all(entries[n]["collector"] == addresses["a2"] for n in retried)
    # site_b had only b1: what it finished is kept, the rest is `error` saying why.
    b_status = {d.name: entries[d.name]["status"] for d in b_hosts}
    assert "partial" in b_status.values() and "error" in b_status.values(), b_status
    for d in b_hosts:
        if b_status[d.name] == "error":
            error = entries[d.name]["errors"][0]
            assert error["kind"] == "collector"
            assert error["message"].startswith("no collector for site site_b: its collector")
            assert killed["b1"] in error["message"]
        else:
            assert entries[d.name]["collector"] == killed["b1"]
    assert "no collector for site site_b" in err


def test_scheduler_lost_mid_collection(tmp_path: Path) -> None:
    hosts = slow_hosts("h", 8)
    fabric = synthetic.Fabric(hosts, [])
    faults = [TransportFault(d.name, "slow", seconds=1.0) for d in hosts[1:]]
    with simulator(fabric, faults, base="127.45") as sim, dask_cluster(tmp_path, {"w1": "site_a"}) as cluster:
        inv = two_site_inventory(sim, tmp_path / "inv.yml", {"site_a": [d.name for d in hosts]})
        snap = tmp_path / "snap"
        proc = subprocess.Popen(
            [sys.executable, "-m", "fabline", "collect", "-i", str(inv), "-o", str(snap), "--scheduler",
             cluster.address, "--site-group", "sites", "--workers", "2", "--timeout", "3",
             "--known-hosts", str(tmp_path / "kh")],
            env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        deadline = time.monotonic() + 120
        while not written(snap):
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)
        scheduler = cluster.procs[0]
        os.kill(scheduler.pid, signal.SIGKILL)
        scheduler.wait()
        _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 3, err
    assert_sound(snap)
    entries = manifest(snap)["devices"]
    assert set(entries) == {d.name for d in hosts}
    statuses = {n: e["status"] for n, e in entries.items()}
    assert "partial" in statuses.values() and "error" in statuses.values(), statuses
    for entry in entries.values():
        if entry["status"] == "error":
            assert entry["errors"][0]["kind"] == "collector", entry
            assert "Dask scheduler" in entry["errors"][0]["message"], entry


def test_a_device_is_retried_once_then_error(tmp_path: Path) -> None:
    """fabline's own retry (the scheduler retries nothing here): a device whose collector dies is
    submitted once more; when the collector of that retry dies too, the device is ``error``."""
    hosts = slow_hosts("r", 6)
    fabric = synthetic.Fabric(hosts, [])
    faults = [TransportFault(d.name, "slow", seconds=1.0) for d in hosts]
    workers = {"r1": "site_a", "r2": "site_a"}
    with simulator(fabric, faults, base="127.46") as sim, dask_cluster(tmp_path, workers) as cluster:
        inv = two_site_inventory(sim, tmp_path / "inv.yml", {"site_a": [d.name for d in hosts]})
        snap = tmp_path / "snap"
        proc = subprocess.Popen(
            [sys.executable, "-m", "fabline", "collect", "-i", str(inv), "-o", str(snap), "--scheduler",
             cluster.address, "--site-group", "sites", "--workers", "2", "--timeout", "3",
             "--known-hosts", str(tmp_path / "kh")],
            env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        killed: list[str] = []
        caught: set[str] = set()  # in a session on the first collector killed
        retried: set[str] = set()
        client = cluster.client()
        try:
            addresses = {name: cluster.worker_address(client, name) for name in workers}
            deadline = time.monotonic() + 120
            while len(killed) < 2 and time.monotonic() < deadline and proc.poll() is None:
                for name in workers:
                    if name in killed:
                        continue
                    # First kill: a worker in a session with a device; second kill: the other
                    # worker once it is in a session with one of those, on fabline's retry (the
                    # retry shard waits for that collector to finish its own).
                    busy = in_session(client, addresses[name], sim, written(snap))
                    if killed:
                        busy &= caught
                    if busy:
                        os.kill(cluster.workers[name].pid, signal.SIGKILL)
                        cluster.workers[name].wait()
                        killed.append(name)
                        if len(killed) == 1:
                            caught = busy
                        else:
                            retried = busy
                        break
                time.sleep(0.05)
        finally:
            client.close()
        _out, err = proc.communicate(timeout=180)
    assert len(killed) == 2, (killed, err)
    assert proc.returncode == 3, err
    assert_sound(snap)
    entries = manifest(snap)["devices"]
    assert set(entries) == {d.name for d in hosts}
    assert retried
    for name in retried:
        assert entries[name]["status"] == "error", entries[name]
        assert entries[name]["errors"][0]["kind"] == "collector"
        assert entries[name]["errors"][0]["message"] == (
            "site site_a: its collector died while collecting it, and again on fabline's one retry"
        )


def test_killed_mid_batch_with_the_schedulers_own_retry_on(tmp_path: Path) -> None:
    """A collector killed while a finished device waits to share a message with others, on a
    scheduler that retries tasks itself (Dask's default allowed-failures, 3): the device waiting
    is collected again on the site's other collector; the devices already received are not (the
    scheduler would run the whole shard again: fabline cancels that and retries only the rest)."""
    hosts = slow_hosts("m", 12)
    fabric = synthetic.Fabric(hosts, [])
    # Two quick devices, the rest answer after 1-2 s, each its own delay: finished devices wait a
    # moment on their collector for company (a message carries 2 devices at --workers 4).
    faults = [TransportFault(d.name, "slow", seconds=1.0 + 0.15 * i) for i, d in enumerate(hosts[2:])]
    workers = {"m1": "site_a", "m2": "site_a"}
    with (
        simulator(fabric, faults, base="127.47") as sim,
        dask_cluster(tmp_path, workers, allowed_failures=3) as cluster,
    ):
        inv = two_site_inventory(sim, tmp_path / "inv.yml", {"site_a": [d.name for d in hosts]})
        snap = tmp_path / "snap"
        proc = subprocess.Popen(
            [sys.executable, "-m", "fabline", "collect", "-i", str(inv), "-o", str(snap), "--scheduler",
             cluster.address, "--site-group", "sites", "--workers", "4", "--timeout", "3",
             "--known-hosts", str(tmp_path / "kh")],
            env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        from fabline.collect.distributed import sending_now

        victim: str | None = None
        unsent: set[str] = set()
        received: set[str] = set()
        client = cluster.client()
        try:
            addresses = {name: cluster.worker_address(client, name) for name in workers}
            deadline = time.monotonic() + 120
            while victim is None and time.monotonic() < deadline and proc.poll() is None:
                for name in workers:
                    try:
                        waiting = set(client.run(sending_now, workers=[addresses[name]])[addresses[name]])
                    except Exception:
                        continue
                    done = written(snap)
                    mine = {n for n, e in _entries(snap).items() if e.get("collector") == addresses[name]}
                    if waiting - done and mine:
                        os.kill(cluster.workers[name].pid, signal.SIGKILL)
                        cluster.workers[name].wait()
                        victim, unsent = name, waiting - done
                        break
                time.sleep(0.02)
        finally:
            client.close()
        received = {n for n, e in _entries(snap).items() if e.get("collector") == addresses.get(victim or "")}
        _out, err = proc.communicate(timeout=180)
        sessions = {name: dev.sessions for name, dev in sim.devices.items()}
    assert victim is not None, err
    assert proc.returncode == 0, err  # the site's other collector took over
    assert_sound(snap)
    entries = manifest(snap)["devices"]
    assert set(entries) == {d.name for d in hosts}
    assert all(e["status"] == "partial" for e in entries.values()), entries  # as a local run
    survivor = addresses[next(n for n in workers if n != victim)]
    # The devices waiting to be sent when their collector died: collected again on the other one.
    assert unsent
    for name in unsent:
        assert entries[name]["collector"] == survivor, (name, entries[name])
        assert sessions[name] == 2, (name, sessions)
    # What the client had received from the dead collector was not collected a second time (the
    # scheduler's own rerun of the whole shard was cancelled), and nothing was collected thrice.
    assert received
    for name, entry in entries.items():
        if entry["collector"] == addresses[victim]:
            assert sessions[name] == 1, (name, sessions)
        assert sessions[name] <= 2, (name, sessions)


def _entries(snap: Path) -> dict[str, dict[str, Any]]:
    """The manifest entries written beside each device's files so far (manifest.d/)."""
    out = {}
    for path in (snap / "manifest.d").glob("*.json"):
        with contextlib.suppress(ValueError, OSError):
            out[path.stem] = json.loads(path.read_text())
    return out
