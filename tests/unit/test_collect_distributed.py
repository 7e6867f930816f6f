"""The client half of ``--scheduler`` without a cluster: sites, what a task carries, the password rule.

The real cluster runs are in tests/integration/test_collect_distributed.py.
"""

from __future__ import annotations

import copy
import json
import pickle
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from fabline.cli import main
from fabline.collect import distributed
from fabline.collect.collector import CollectOptions
from fabline.collect.device import CommandRecord, DeviceResult
from fabline.collect.distributed import (
    ShardAbandoned,
    ShippedResult,
    _Sender,
    _write,
    batch_size,
    queue_items,
    remote_devices,
    site_of,
)
from fabline.collect.finisher import write_result
from fabline.errors import ConfigError
from fabline.inventory import load_inventory

SECRET = "Unit-Pw-93c1"  # a test value that cannot appear by chance


def inventory(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "hosts.yml"
    path.write_text(textwrap.dedent(text))
    return path


SITES = """
all:
  vars:
    fabline_role: host
    ansible_user: admin
    ansible_password: "{{ lookup('env', pw_env) }}"
    pw_env: SITE_PW_UNIT
  children:
    sites:
      children:
        dc1: {hosts: {gpu-1: {rail_interfaces: [eth0, eth1]}, gpu-2: {}}}
        dc2: {hosts: {gpu-3: {fabline_site: elsewhere}}}
    loose:
      hosts: {gpu-4: {fabline_site: lab-b}}
"""


def test_sites_from_group_then_variable(tmp_path: Path) -> None:
    inv = load_inventory(inventory(tmp_path, SITES))
    devices = {d.name: d for d in inv.devices()}
    assert site_of(devices["gpu-1"], inv, "sites") == "dc1"
    assert site_of(devices["gpu-3"], inv, "sites") == "dc2"  # the named group wins over fabline_site
    assert site_of(devices["gpu-3"], inv, None) == "elsewhere"
    assert site_of(devices["gpu-4"], inv, "sites") == "lab-b"  # outside the group: the variable
    with pytest.raises(ConfigError, match=r"host 'gpu-1' has no site for --scheduler: .* set fabline_site"):
        site_of(devices["gpu-1"], inv, None)


def test_bad_sites_are_config_errors(tmp_path: Path) -> None:
    inv = load_inventory(inventory(tmp_path, SITES.replace("lab-b", "lab b")))
    devices = inv.devices()
    with pytest.raises(ConfigError, match=r"site 'lab b' is not a plain name"):
        remote_devices(inv, devices, "sites")
    with pytest.raises(ConfigError, match=r"--site-group nope: no such group"):
        remote_devices(inv, devices, "nope")
    two = load_inventory(
        inventory(tmp_path, SITES.replace("dc2: {hosts: {gpu-3", "dc2: {hosts: {gpu-1: {}, gpu-3"))
    )
    with pytest.raises(ConfigError, match=r"host 'gpu-1' is in 2 sites of --site-group sites \(dc1, dc2\)"):
        remote_devices(two, two.devices(), "sites")


def test_a_task_carries_the_password_recipe_not_the_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SITE_PW_UNIT", SECRET)  # the client has it too: it must still not travel
    inv = load_inventory(inventory(tmp_path, SITES))
    devices = inv.devices()
    assert devices[0].password == SECRET
    remote = remote_devices(inv, devices, "sites")
    payload = pickle.dumps(remote)
    assert SECRET.encode() not in payload
    gpu1 = remote["gpu-1"]
    assert gpu1.device.password is None
    assert dict(gpu1.device.vars) == {"rail_interfaces": ["eth0", "eth1"]}  # only what the collector reads
    assert gpu1.secret is not None
    assert dict(gpu1.secret.raw) == {
        "ansible_password": "{{ lookup('env', pw_env) }}",
        "pw_env": "SITE_PW_UNIT",  # the template's input travels, unrendered
    }
    # At the site: its own environment gives the password (here another value than the client's).
    monkeypatch.setenv("SITE_PW_UNIT", "site-value")
    site_copy = pickle.loads(payload)["gpu-1"]
    resolved = site_copy.resolve()
    assert resolved.password == "site-value"
    assert (resolved.host, resolved.user, resolved.platform) == ("gpu-1", "admin", "linux")
    monkeypatch.delenv("SITE_PW_UNIT")
    assert site_copy.resolve().password is None  # unset at the site: no password (keys/agent)


def test_a_password_in_clear_is_refused(tmp_path: Path) -> None:
    text = SITES.replace("\"{{ lookup('env', pw_env) }}\"", "'{{ pw }}'").replace(
        "pw_env: SITE_PW_UNIT", f"pw: {SECRET}"
    )
    inv = load_inventory(inventory(tmp_path, text))
    with pytest.raises(
        ConfigError, match=r"ansible_password: host 'gpu-4': ansible_password is written in the inventory"
    ):
        remote_devices(inv, inv.devices(), "sites")


def test_no_password_no_recipe(tmp_path: Path) -> None:
    inv = load_inventory(inventory(tmp_path, SITES.replace("ansible_password", "unused_var")))
    remote = remote_devices(inv, inv.devices(), "sites")
    assert all(r.secret is None for r in remote.values())


@pytest.mark.parametrize("command", ["collect", "run", "drift"])
def test_site_group_needs_scheduler(tmp_path: Path, command: str) -> None:
    inv = inventory(tmp_path, SITES)
    out = {"collect": ["-o"], "run": ["-s"], "drift": ["--db", str(tmp_path / "h.db"), "--collect-to"]}[
        command
    ]
    result = CliRunner().invoke(
        main, [command, "-i", str(inv), *out, str(tmp_path / "s"), "--site-group", "sites"]
    )
    assert result.exit_code == 2
    assert "fabline: error: --site-group needs --scheduler" in result.output
    assert not (tmp_path / "s").exists()


def test_local_collection_never_imports_dask(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    inv = tmp_path / "inv.yml"
    hosts = {"gpu-1": {"fabline_role": "host", "ansible_host": "127.0.0.1", "ansible_port": port}}
    inv.write_text(yaml.safe_dump({"all": {"hosts": hosts}}))
    code = textwrap.dedent(f"""
        import sys
        from click.testing import CliRunner
        from fabline.cli import main
        r = CliRunner().invoke(main, ["collect", "-i", {str(inv)!r}, "-o", {str(tmp_path / "snap")!r},
                                      "--timeout", "2", "--retries", "0", "--known-hosts", {str(tmp_path / "kh")!r}])
        assert r.exit_code == 3, r.output
        print(sorted(m for m in sys.modules if m.split(".")[0] in ("dask", "distributed")))
    """)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == "[]", out.stdout
    assert (tmp_path / "snap" / "state" / "gpu-1.json").is_file()  # it did collect (unreachable)


def test_a_shipped_device_is_written_as_a_local_one_is(tmp_path: Path) -> None:
    """A collector sends the state file's bytes; the client writes the very files a local run writes."""
    state = {
        "device": {"name": "leaf-1", "platform": "arista_eos"},
        "status": "partial",
        "errors": [{"command": "show lldp", "kind": "failed", "message": "exit 1: n\u00e9ighbor"}],
        "interfaces": {"Ethernet1/1": {"mtu": 9214, "speed_bps": 4e11, "description": "r\u00e4il 0"}},
    }
    raw = {"show_version.txt": "EOS 4.30\n", "show_lldp.txt": "n\u00e9ighbor\n"}

    def result() -> DeviceResult:
        return DeviceResult(
            "leaf-1", "arista_eos", "leaf", "partial", copy.deepcopy(state), dict(raw),
            [CommandRecord("show version", "ok", 0.01234, file="show_version.txt"),
             CommandRecord("show lldp", "failed", 0.5, file="show_lldp.txt", exit_code=1, message="x")],
            attempts=2, started_at="2026-12-02T10:00:00Z", duration_s=1.23456,
            extra={"site": "dc1", "collector": "tcp://10.0.0.5:40123"},
        )  # fmt: skip

    local = write_result(tmp_path / "local", result())
    shipped = pickle.loads(pickle.dumps(ShippedResult.of(result())))
    assert "interfaces" not in shipped.state  # the document itself travels as bytes only
    written = _write(tmp_path / "dist", shipped)

    def files(root: Path) -> dict[str, bytes]:
        return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}

    assert files(tmp_path / "dist") == files(tmp_path / "local")
    assert json.loads((tmp_path / "dist" / "state" / "leaf-1.json").read_text()) == state
    assert (written.status, written.state, written.manifest_entry()) == (
        local.status,
        local.state,
        local.manifest_entry(),
    )
    assert written.raw == {} and written.state_json == b""  # nothing kept once on disk
    assert shipped.records == [] and shipped.command_count == 2  # the records travel as entries
    # The digest is recorded under the schema the collector validated the state against: a
    # collector with another fabline's schema is not taken for this one (the check re-validates).
    other = ShippedResult.of(result())
    other.state_schema = "0123456789abcdef"
    _write(tmp_path / "other", other)
    entry = json.loads((tmp_path / "other" / "manifest.d" / "leaf-1.json").read_text())
    assert entry["state_schema"] == "0123456789abcdef"
    assert entry["state_sha256"] == local.state_digest["state_sha256"]


# ---------------------------------------------------------------------------------------------
# a shard's sender: several finished devices to a message, the queue bounded by the collectors


class FakeQueue:
    """A Dask queue as a shard sees it: put and qsize; the test plays the client (``take``)."""

    def __init__(self) -> None:
        self.items: list[list[str]] = []
        self.taken = 0
        self.full = False
        self.lock = threading.Lock()

    def put(self, payload: bytes) -> None:
        with self.lock:
            self.items.append([r.name for r in pickle.loads(payload)])

    def qsize(self) -> int:
        with self.lock:
            return 10**6 if self.full else len(self.items) - self.taken


def shipped(name: str) -> ShippedResult:
    return ShippedResult(name, "linux", "host", "ok", {"status": "ok", "errors": []})


def wait_until(condition: Any, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_sizes_of_the_messages_and_the_queue() -> None:
    assert [batch_size(CollectOptions(workers=w)) for w in (1, 2, 16, 32, 64)] == [1, 1, 8, 16, 16]
    # The queue holds about 4 x --workers devices: in messages of batch_size devices.
    assert queue_items(CollectOptions(workers=32)) == 8
    assert queue_items(CollectOptions(workers=1)) == 4


def test_sender_batches_at_most_batch_devices_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(distributed, "_LINGER_S", 5.0)  # only a full batch or the close sends
    fake = FakeQueue()
    sender = _Sender(fake, batch=3, limit=100, wanted=lambda: True, site="dc1")
    for i in range(7):
        sender.add(shipped(f"d{i}"))
    wait_until(lambda: len(fake.items) == 2)
    time.sleep(0.1)
    assert fake.items == [["d0", "d1", "d2"], ["d3", "d4", "d5"]]  # d6 waits for company
    started = time.monotonic()
    sender.close()  # the last, partial batch goes at once
    assert time.monotonic() - started < 2
    assert fake.items[2:] == [["d6"]] and sender.sent == 7


def test_sender_sends_a_lone_device_after_the_linger(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(distributed, "_LINGER_S", 0.3)
    fake = FakeQueue()
    sender = _Sender(fake, batch=8, limit=100, wanted=lambda: True, site="dc1")
    started = time.monotonic()
    sender.add(shipped("alone"))
    wait_until(lambda: fake.items == [["alone"]])
    assert 0.2 <= time.monotonic() - started < 5
    sender.close()
    assert sender.sent == 1


def test_sender_waits_while_the_queue_is_full_then_gives_up_when_unwanted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(distributed, "_LINGER_S", 0.0)
    monkeypatch.setattr(distributed, "_FULL_WAIT_S", 0.01)
    fake = FakeQueue()
    sender = _Sender(fake, batch=2, limit=1, wanted=lambda: True, site="dc1")
    sender.add(shipped("a"))
    wait_until(lambda: fake.items == [["a"]])
    sender.add(shipped("b"))  # the queue holds its limit: b waits on the collector
    time.sleep(0.2)
    assert fake.items == [["a"]]
    fake.taken = 1  # the client takes a
    wait_until(lambda: fake.items == [["a"], ["b"]])
    sender.close()
    # Full, and the client gave up on the shard: the sender stops, the collecting threads too.
    wanted = [True]
    fake = FakeQueue()
    fake.full = True
    sender = _Sender(fake, batch=2, limit=1, wanted=lambda: wanted[0], site="dc1")
    sender.add(shipped("c"))
    time.sleep(0.1)
    wanted[0] = False
    wait_until(lambda: sender.failure is not None)
    with pytest.raises(ShardAbandoned):
        sender.add(shipped("d"))
    with pytest.raises(ShardAbandoned):
        sender.close()
    assert fake.items == [] and sender.sent == 0
