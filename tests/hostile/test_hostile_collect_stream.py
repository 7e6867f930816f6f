"""Devices that never stop talking, or take forever to log in, over real SSH (the simulator).

Issue 11, item 2: a Linux host whose command streamed without end kept ``fabline collect`` running
past ``--timeout`` (which only bounded silence) while its memory grew to 23 GB; an EOS login took
15 s with ``--timeout 3``; Ctrl-C did not stop the run. Now every command has a total deadline
(``--command-timeout``) and a byte cap (``--max-output``), the login is held to ``--timeout``, and
Ctrl-C closes every session at once.

The collector runs in a child process with an address-space limit and a wall-clock timeout, so
a regression fails here instead of hanging CI; its peak resident memory is read from its own
``/proc/self/status`` (``VmHWM``) when the run is over. These are containment bounds, far from
both the correct behaviour and the failure, not speed measurements.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabline import synthetic
from fabline.sim import TransportFault
from tests.hostile.collect_support import CHILD_MEMORY
from tests.integration.test_collect_sim import PASSWORD, PASSWORD_ENV, simulator, write_inventory

FABRIC = synthetic.Fabric(
    [
        synthetic.DeviceSpec("gpu-ok", "host", "linux", ports=1, rail_interfaces=["eth0"]),
        synthetic.DeviceSpec("gpu-stream", "host", "linux", ports=1, rail_interfaces=["eth0"]),
        synthetic.DeviceSpec("gpu-trickle", "host", "linux", ports=1, rail_interfaces=["eth0"]),
        synthetic.DeviceSpec("gpu-slow", "host", "linux", ports=1, rail_interfaces=["eth0"]),
        synthetic.DeviceSpec("leaf-stream", "leaf", "arista_eos", rail=0, ports=2),
        synthetic.DeviceSpec("leaf-sonic-stream", "leaf", "sonic", rail=1, ports=2),
        synthetic.DeviceSpec("leaf-slow", "leaf", "arista_eos", rail=2, ports=2),
    ],
    [],
)
FAULTS = [
    TransportFault("gpu-stream", "stream_forever", "uname -r"),
    TransportFault("gpu-trickle", "trickle_forever", "cat /etc/os-release", seconds=0.2),
    TransportFault("gpu-slow", "slow_login", seconds=60),
    TransportFault("leaf-stream", "stream_forever", "show version | json"),
    TransportFault("leaf-sonic-stream", "stream_forever", "show version"),
    TransportFault("leaf-slow", "slow_login", seconds=60),
]
#: Peak resident memory the collecting process may reach. A correct run stays near 150 MB; the
#: unbounded collector grew by gigabytes per minute.
MEMORY_BOUND_KB = 700 * 1024

# The child: the real CLI in one process, then its own peak RSS (VmHWM) and exit code on stderr.
CHILD = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (AS_BYTES, AS_BYTES))
from fabline.cli import main
code = 0
try:
    main(sys.argv[1:], prog_name="fabline")
except SystemExit as exc:
    code = exc.code if isinstance(exc.code, int) else 1
except KeyboardInterrupt:
    code = 130
hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print("FABLINE-MEMORY " + json.dumps({"code": code, "hwm_kb": hwm, "children_kb": kids}), file=sys.stderr)
sys.exit(code)
""".replace("AS_BYTES", str(CHILD_MEMORY))


def _start(*args: str | Path) -> subprocess.Popen[str]:
    env = {**os.environ, PASSWORD_ENV: PASSWORD, "COLUMNS": "200"}
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, *map(str, args)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip


def _finish(proc: subprocess.Popen[str], timeout: float) -> tuple[dict[str, Any], str]:
    """Wait for the child: its exit code and peak memory, and what it printed (stderr, then stdout)."""
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise AssertionError(f"the collection did not end within {timeout} s") from None
    line = next((x for x in err.splitlines() if x.startswith("FABLINE-MEMORY ")), None)
    assert line is not None, err[-3000:]
    return json.loads(line.split(" ", 1)[1]), err + out


@pytest.fixture(scope="module")
def sim() -> Iterator[Any]:
    with simulator(FABRIC, FAULTS, base="127.43") as running:
        yield running


@pytest.fixture(scope="module")
def streamed(sim: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One collection of the whole hostile fabric with short, explicit bounds."""
    tmp = tmp_path_factory.mktemp("stream")
    inv = write_inventory(sim, tmp / "inv.yml")
    snap = tmp / "snap"
    started = time.monotonic()
    proc = _start(
        "collect", "-i", inv, "-o", snap, "--timeout", "3", "--command-timeout", "8", "--retries", "0",
        "--known-hosts", tmp / "known_hosts",
    )  # fmt: skip
    memory, err = _finish(proc, timeout=150)
    manifest = json.loads((snap / "manifest.json").read_text())
    return {
        "memory": memory,
        "err": err,
        "seconds": time.monotonic() - started,
        "manifest": manifest,
        "snap": snap,
    }


def _records(streamed: dict[str, Any], device: str) -> list[dict[str, Any]]:
    return list(streamed["manifest"]["devices"][device]["commands"])


def test_the_run_ends_and_its_memory_stays_bounded(streamed: dict[str, Any]) -> None:
    memory = streamed["memory"]
    assert memory["code"] == 3, streamed["err"][-3000:]
    assert memory["hwm_kb"] < MEMORY_BOUND_KB, memory
    assert memory["children_kb"] < MEMORY_BOUND_KB, memory  # the finishing worker process
    assert streamed["manifest"]["complete"] is True
    # (the simulated host has no optics module on eth0: 'ethtool -m' fails there, as on a real one)
    clean = streamed["manifest"]["devices"]["gpu-ok"]
    assert clean["status"] in ("ok", "partial"), streamed["err"]
    assert not [r for r in clean["commands"] if r["status"] in ("command_timeout", "output_too_large")]


def test_a_linux_command_streaming_forever_is_output_too_large(streamed: dict[str, Any]) -> None:
    by_command = {r["command"]: r for r in _records(streamed, "gpu-stream")}
    cut = by_command["uname -r"]
    assert cut["status"] == "output_too_large"
    assert cut["message"] == "output too large: more than 16 MiB, cut off (--max-output)"
    assert by_command["cat /proc/sys/kernel/hostname"]["status"] == "ok"  # before it in the same script
    state = json.loads((streamed["snap"] / "state" / "gpu-stream.json").read_text())
    assert state["status"] == "partial"
    assert {"command": "uname -r", "kind": "output_too_large", "message": cut["message"]} in state["errors"]
    raw = streamed["snap"] / "raw" / "gpu-stream"
    assert sum(p.stat().st_size for p in raw.iterdir()) < 16 * 1024 * 1024


def test_a_linux_command_trickling_forever_hits_its_deadline(streamed: dict[str, Any]) -> None:
    by_command = {r["command"]: r for r in _records(streamed, "gpu-trickle")}
    late = by_command["cat /etc/os-release"]
    assert late["status"] == "command_timeout"
    assert late["message"] == "not finished within 8 s (--command-timeout)"
    assert by_command["cat /proc/sys/kernel/hostname"]["status"] == "ok"


@pytest.mark.parametrize("device", ["leaf-stream", "leaf-sonic-stream"])
def test_a_switch_cli_streaming_forever_is_cut(streamed: dict[str, Any], device: str) -> None:
    records = _records(streamed, device)
    cut = [r for r in records if r["status"] in ("output_too_large", "command_timeout")]
    assert len(cut) == 1, records
    assert cut[0]["command"] in ("show version | json", "show version")
    assert streamed["manifest"]["devices"][device]["status"] in ("partial", "error")


@pytest.mark.parametrize("device", ["leaf-slow", "gpu-slow"])
def test_a_slow_login_is_held_to_the_timeout(streamed: dict[str, Any], device: str) -> None:
    entry = streamed["manifest"]["devices"][device]
    assert entry["status"] == "timeout", entry
    # The device answers after 60 s; --timeout 3 ends the login at 3 s (the rest is the SSH
    # library noticing its socket was shut down, on a loaded machine).
    assert entry["duration_s"] < 15, entry
    state = json.loads((streamed["snap"] / "state" / f"{device}.json").read_text())
    [error] = state["errors"]
    assert error["kind"] == "timeout"
    assert re.fullmatch(r"login to 127\.43\.0\.\d+:\d+ not finished within 3 s", error["message"]), error


def test_the_output_cap_and_deadline_come_from_the_inventory(sim: Any, tmp_path: Path) -> None:
    inv = write_inventory(sim, tmp_path / "inv.yml")
    doc = yaml.safe_load(inv.read_text())
    hosts = doc["all"]["children"]["gpu_hosts"]["hosts"]
    hosts["gpu-stream"]["fabline_max_output"] = "64K"
    hosts["gpu-trickle"]["fabline_command_timeout"] = 2
    inv.write_text(yaml.safe_dump(doc))
    proc = _start(
        "collect", "-i", inv, "-o", tmp_path / "snap", "-l", "gpu-stream,gpu-trickle", "--timeout", "3",
        "--retries", "0", "--known-hosts", tmp_path / "known_hosts",
    )  # fmt: skip
    memory, err = _finish(proc, timeout=90)
    assert memory["code"] == 0, err[-2000:]  # both devices are partial: read, with errors
    manifest = json.loads((tmp_path / "snap" / "manifest.json").read_text())
    stream = {r["command"]: r for r in manifest["devices"]["gpu-stream"]["commands"]}
    assert stream["uname -r"]["message"] == "output too large: more than 64 KiB, cut off (--max-output)"
    trickle = {r["command"]: r for r in manifest["devices"]["gpu-trickle"]["commands"]}
    assert trickle["cat /etc/os-release"]["message"] == "not finished within 2 s (--command-timeout)"


def test_ctrl_c_closes_sessions_at_once(sim: Any, tmp_path: Path) -> None:
    inv = write_inventory(sim, tmp_path / "inv.yml")
    snap = tmp_path / "snap"
    proc = _start(
        "collect", "-i", inv, "-o", snap, "-l", "gpu-ok,gpu-trickle", "--timeout", "30",
        "--command-timeout", "600", "--known-hosts", tmp_path / "known_hosts",
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not (snap / "state" / "gpu-ok.json").exists():  # gpu-ok done: gpu-trickle is in flight
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[1][-2000:]
        time.sleep(0.1)
    time.sleep(1.0)
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    memory, err = _finish(proc, timeout=30)
    stopped = time.monotonic() - sent
    assert memory["code"] == 130, err[-2000:]
    assert "fabline: interrupted" in err
    assert stopped < 10, stopped  # --command-timeout 600 would have kept it for ten minutes
    manifest = json.loads((snap / "manifest.json").read_text())
    assert manifest["complete"] is False
    assert list(manifest["devices"]) == ["gpu-ok"]  # the interrupted device is left for --resume
    assert not (snap / "state" / "gpu-trickle.json").exists()


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--timeout", "nan", "--timeout must be a positive, finite number of seconds, got nan"),
        ("--timeout", "inf", "--timeout must be a positive, finite number of seconds, got inf"),
        ("--timeout", "0", "--timeout must be a positive, finite number of seconds, got 0"),
        ("--timeout", "-3", "--timeout must be a positive, finite number of seconds, got -3"),
        (
            "--command-timeout",
            "nan",
            "--command-timeout must be a positive, finite number of seconds, got nan",
        ),
        (
            "--command-timeout",
            "-inf",
            "--command-timeout must be a positive, finite number of seconds, got -inf",
        ),
        ("--pace", "-1", "--pace must be 0 or a positive, finite number of seconds, got -1"),
        ("--pace", "nan", "--pace must be 0 or a positive, finite number of seconds, got nan"),
        ("--workers", "0", "--workers must be at least 1, got 0"),
        ("--retries", "-1", "--retries must be 0 or more, got -1"),
        ("--max-output", "0", "--max-output must be at least 4096 bytes, got 0"),
        ("--max-output", "lots", "--max-output: not a byte count: 'lots' (use e.g. 16M or 1048576)"),
        (
            "--max-output",
            "99999999999999999999G",
            "--max-output: not a byte count: '99999999999999999999G' (use e.g. 16M or 1048576)",
        ),
    ],
)
@pytest.mark.parametrize("command", ["collect", "run"])
def test_options_that_disable_a_bound_are_refused(
    tmp_path: Path, command: str, option: str, value: str, message: str
) -> None:
    from tests.hostile.collect_support import fabline, one_line_error

    out = ["-o", tmp_path / "snap"] if command == "collect" else ["-s", tmp_path / "snap"]
    # The inventory does not exist: the option is refused before anything is read.
    ran = fabline(command, "-i", tmp_path / "missing.yml", *out, option, value, timeout=60)
    assert one_line_error(ran) == f"fabline: error: {message}"
    assert not (tmp_path / "snap").exists()


def test_inventory_bounds_are_checked_before_any_session(tmp_path: Path) -> None:
    from tests.hostile.collect_support import fabline, one_line_error, write

    inv = write(
        tmp_path / "inv.yml",
        """
        leaf:
          vars: {fabline_role: leaf, fabline_platform: sonic}
          hosts:
            leaf1: {ansible_host: 127.0.0.1, ansible_port: 9, fabline_command_timeout: .nan}
        """,
    )
    ran = fabline("collect", "-i", inv, "-o", tmp_path / "snap", timeout=60)
    assert one_line_error(ran) == (
        "fabline: error: fabline_command_timeout: host 'leaf1': fabline_command_timeout must be a positive, "
        "finite number of seconds, got nan"
    )
