"""Collection logic with an in-memory session: plans, statuses, retries, interface choice, files.

Outputs come from the shared samples and the parser cases' constructed inputs
(``tests/parsers/local/``), never from text made up here; the fake session only decides which
command gets which file, or a failure.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from fabline.collect.allowlist import CommandRefused, allowed, render, root_templates
from fabline.collect.collector import CollectOptions, _run, collect
from fabline.collect.device import RetryPolicy, collect_device, select_interfaces
from fabline.collect.profiles import PROFILES, check_profiles
from fabline.collect.reparse import reparse_snapshot
from fabline.collect.transports import CommandFailure, ConnectFailure, Output
from fabline.collect.writer import command_slug
from fabline.errors import ConfigError
from tests.unit.test_collect_transports import LOCAL, SAMPLES, make_device

SECRET = "pw-Xy7-never-in-files"

LINUX = LOCAL / "linux"
HOST_FILES = {
    "ip -j -d link show": LINUX / "ip_-j_-d_link_show-constructed.json",
    "lsmod": LINUX / "lsmod-gpu-host-constructed.txt",
    "cat /etc/nccl.conf": LINUX / "nccl_conf-constructed.txt",
    "ibv_devinfo": SAMPLES / "linux_host" / "ibv_devinfo-cx7-roce-mlx5_2.txt",
    "lldpctl -f json": LINUX / "lldpctl_json-one-port-constructed.json",
    "show_gids": SAMPLES / "linux_host" / "show_gids-k8s-macvlan-pod-tabs.txt",
    "ethtool -i eth2": SAMPLES / "linux_host" / "ethtool_-i-mlx5_core-cx4lx.txt",
    "ethtool -I --show-fec eth2": LINUX / "ethtool_-I_--show-fec-stats-docs.txt",
    "ethtool -S eth2": LINUX / "ethtool_-S-mlx5-constructed.txt",
    "mlnx_qos -i eth2": LINUX / "mlnx_qos-eth4-netarbiter-extract.txt",
    "grep -H . /sys/class/net/eth2/ecn/roce_*/enable/*": LINUX / "ecn_enable-eth2-constructed.txt",
    "grep -H . /sys/class/net/*/device/infiniband/*/ports/*/hw_counters/*": LINUX
    / "hw_counters-eth2-constructed.txt",
    "cat /sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos": LINUX / "default_roce_tos-106.txt",
}
SONIC_FILES = {
    "show version": SAMPLES / "sonic" / "show_version-cmdref-msn2700.txt",
    "show interfaces status": SAMPLES / "sonic" / "show_interfaces_status-cmdref.txt",
    "show lldp table": SAMPLES / "sonic" / "show_lldp_table-cmdref.txt",
    "show pfc counters": SAMPLES / "sonic" / "show_pfc_counters-cmdref.txt",
    "show interfaces transceiver eeprom --dom": SAMPLES
    / "sonic"
    / "show_interfaces_transceiver_eeprom_dom-cmdref-qsfp.txt",
    "show runningconfiguration all": SAMPLES / "sonic" / "configdb-mellanox-sn2700-kvm-rsyslog-test.json",
    "show interfaces counters fec-stats": LOCAL / "sonic" / "show_interfaces_counters_fec-stats-ber-docs.txt",
}


# SONiC profile commands without a shared sample: the fake answers bash's 'command not found'.
NO_SAMPLE = {c: "unavailable" for c in PROFILES["sonic"].device_commands if c not in SONIC_FILES}


class FakeSession:
    """Answers from files; ``failures`` maps a command to the failure it raises instead."""

    def __init__(
        self,
        files: Mapping[str, Path],
        failures: Mapping[str, CommandFailure] | None = None,
        exec_style: bool = True,
        extra: Mapping[str, str] | None = None,
    ) -> None:
        self.files = files
        self.failures = failures or {}
        self.exec_style = exec_style
        self.extra = extra or {}
        self.sent: list[str] = []
        self.closed = False

    def run(self, commands: Sequence[str]) -> Iterator[tuple[str, Output | CommandFailure, float]]:
        for cmd in commands:
            self.sent.append(cmd)
            if cmd in self.failures:
                yield cmd, self.failures[cmd], 0.01
            elif cmd in self.extra:
                yield cmd, Output(self.extra[cmd], 0 if self.exec_style else None), 0.01
            elif cmd in self.files:
                yield cmd, Output(self.files[cmd].read_text(), 0 if self.exec_style else None), 0.01
            elif self.exec_style:
                yield cmd, Output("", 127, f"bash: {cmd.split()[0]}: command not found\n"), 0.01
            else:
                yield cmd, Output(f"bash: {cmd.split()[0]}: command not found"), 0.01

    def close(self) -> None:
        self.closed = True


def factory_for(session: FakeSession) -> Any:
    return lambda device, profile: session


def host(**vars: Any) -> Any:
    return make_device("gpu-1", "linux", 22, password=SECRET, **vars)


def test_every_profile_command_is_allow_listed() -> None:
    assert check_profiles() == []


def test_commands_off_the_allow_list_and_unsafe_names_are_refused() -> None:
    with pytest.raises(CommandRefused, match="not on the read-only allow-list"):
        allowed("linux", "mlnx_qos -i eth2 --pfc 0,0,0,1,0,0,0,0")
    with pytest.raises(CommandRefused, match="not on the read-only allow-list"):
        allowed("arista_eos", "configure terminal")
    with pytest.raises(CommandRefused, match="not a plain name"):
        allowed("linux", "ethtool -m eth0;reboot")
    profile = PROFILES["linux"]
    for bad in ("eth0;reboot", "eth0 && reboot", "../../etc", "$(id)", "eth0/../x"):
        with pytest.raises(CommandRefused):
            render(profile, "ethtool -m {interface}", interface=bad)
    assert render(profile, "ethtool -m {interface}", interface="ens1f0np0") == "ethtool -m ens1f0np0"


def test_hostile_interface_name_is_never_sent() -> None:
    session = FakeSession(HOST_FILES)
    result = collect_device(host(rail_interfaces=["eth2", "eth3;reboot"]), factory_for(session))
    assert not any("reboot" in c for c in session.sent)
    refused = [r for r in result.records if r.status == "refused"]
    assert refused and all("reboot" in (r.message or "") for r in refused)
    assert result.status == "partial"


def test_linux_host_rail_interfaces_and_rdma_join() -> None:
    session = FakeSession(HOST_FILES)
    result = collect_device(host(rail_interfaces=["eth2"]), factory_for(session))
    eth2 = result.state["interfaces"]["eth2"]
    # roce_tos reaches the interface only through the post-merge RDMA-device join.
    assert eth2["nic"]["rdma_device"] == "mlx5_0" and eth2["nic"]["roce_tos"] == 106
    assert eth2["nic"]["ecn_np_priorities"] == [3]
    assert result.state["host"]["gpudirect_rdma"] is True
    assert "ethtool -m eth2" in session.sent and not any("net1" in c for c in session.sent)
    assert session.closed
    # ethtool / ethtool -m have no file here: exit 127 -> unavailable, the device is partial.
    kinds = {e["command"]: e["kind"] for e in result.state["errors"]}
    assert kinds["ethtool -m eth2"] == "unavailable"
    assert result.status == "partial"


def test_linux_interfaces_from_rdma_netdevs_then_physical() -> None:
    profile = PROFILES["linux"]
    gids = {"show_gids": {"interfaces": {"net1": {"nic": {"rdma_device": "mlx5_0"}}, "lo": {}}}}
    links = {
        "ip -j -d link show": {"interfaces": {"eth0": {"nic": {"pci_address": "0000:3b:00.0"}}, "lo": {}}}
    }
    assert select_interfaces(host(), profile, {**gids, **links}) == (["net1"], "RDMA netdevs (show_gids)")
    assert select_interfaces(host(), profile, links) == (["eth0"], "physical netdevs (ip -d link)")
    assert select_interfaces(host(rail_interfaces="eth4, eth5"), profile, gids)[0] == ["eth4", "eth5"]


def test_cumulus_per_port_commands_skip_admin_down_ports() -> None:
    profile = PROFILES["cumulus"]
    frag = {
        "nv show interface -o json": {
            "interfaces": {"swp1": {"admin_up": True}, "swp2": {"admin_up": False}, "eth0": {}}
        }
    }
    names, _ = select_interfaces(make_device("leaf", "cumulus", 22), profile, frag)
    assert names == ["swp1"]


def test_switch_outputs_parse_and_banner_means_unavailable() -> None:
    session = FakeSession(
        SONIC_FILES, exec_style=False, extra={"show pfc counters": 'Error: No such command "pfc".'}
    )
    result = collect_device(make_device("leaf-1", "sonic", 22), factory_for(session))
    assert result.state["facts"]["os_version"]
    assert result.state["interfaces"]
    errors = {e["command"]: e["kind"] for e in result.state["errors"]}
    assert errors == {"show pfc counters": "unavailable", **NO_SAMPLE}
    assert result.status == "partial"


def test_garbled_output_is_a_parse_error_not_a_crash() -> None:
    session = FakeSession(SONIC_FILES, exec_style=False, extra={"show version": "\x00\x17\x99garbage\x00"})
    result = collect_device(make_device("leaf-1", "sonic", 22), factory_for(session))
    assert {e["command"]: e["kind"] for e in result.state["errors"]} == {"show version": "parse", **NO_SAMPLE}


def test_dropped_session_skips_the_rest() -> None:
    session = FakeSession(
        SONIC_FILES, exec_style=False,
        failures={"show interfaces status": CommandFailure("dropped", "session dropped", fatal=True)},
    )  # fmt: skip
    result = collect_device(make_device("leaf-1", "sonic", 22), factory_for(session))
    kinds = [e["kind"] for e in result.state["errors"]]
    after = (
        len(PROFILES["sonic"].device_commands)
        - 1
        - PROFILES["sonic"].device_commands.index("show interfaces status")
    )
    assert kinds == ["dropped"] + ["skipped"] * after
    assert "show lldp table" not in session.sent
    assert result.status == "partial"


def test_no_command_answered_is_error() -> None:
    session = FakeSession(
        {},
        exec_style=False,
        failures={"show runningconfiguration all": CommandFailure("command_timeout", "slow", fatal=True)},
    )
    result = collect_device(make_device("leaf-1", "sonic", 22), factory_for(session))
    assert result.status == "error"
    assert result.state["errors"][0]["kind"] == "timeout"


def _failing_factory(failure: ConnectFailure, calls: list[int]) -> Any:
    def factory(device: Any, profile: Any) -> Any:
        calls.append(1)
        raise failure

    return factory


def test_connect_failures_retry_with_backoff_but_auth_failures_never() -> None:
    sleeps: list[float] = []
    calls: list[int] = []
    unreachable = ConnectFailure("unreachable", "unreachable", "connection refused by x", retry=True)
    result = collect_device(
        host(), _failing_factory(unreachable, calls), RetryPolicy(retries=3, backoff_s=0.5), sleeps.append
    )
    assert (result.status, result.attempts, len(calls)) == ("unreachable", 4, 4)
    assert sleeps == [0.5, 1.0, 2.0]
    calls.clear()
    sleeps.clear()
    auth = ConnectFailure("auth_failed", "auth_failed", "authentication failed", retry=False)
    result = collect_device(host(), _failing_factory(auth, calls), RetryPolicy(retries=3), sleeps.append)
    assert (result.status, result.attempts, len(calls), sleeps) == ("auth_failed", 1, 1, [])
    assert result.state["errors"] == [
        {"command": None, "kind": "auth_failed", "message": "authentication failed"}
    ]
    assert "interfaces" not in result.state


class _Immediate:
    """A finisher that finishes at once, in the calling thread (the pool test needs no parsing)."""

    def submit(self, gathered: Any) -> Future[Any]:
        f: Future[Any] = Future()
        f.set_result(gathered)
        return f


def test_pool_never_has_more_than_workers_in_flight() -> None:
    active, peak = [0], [0]
    lock = threading.Lock()

    def gather(device: Any) -> Any:
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.01)
        with lock:
            active[0] -= 1
        return device.name

    devices = [host() for _ in range(20)]
    reported: list[Any] = []
    _run(devices, 3, gather, _Immediate(), reported.append)  # type: ignore[arg-type]
    assert len(reported) == 20
    assert peak[0] <= 3


def test_snapshot_layout_manifest_resume_and_secrets(tmp_path: Path) -> None:
    out = tmp_path / "snap"
    ok_host = host(rail_interfaces=["eth2"])
    bad = make_device("gpu-2", "linux", 22, password=SECRET)
    sessions: list[str] = []

    def factory(device: Any, profile: Any) -> Any:
        sessions.append(device.name)
        if device.name == "gpu-2":
            raise ConnectFailure("timeout", "timeout", f"no SSH banner from {device.host}", retry=True)
        # A hostile device echoing the password back: it must not reach any file.
        return FakeSession(HOST_FILES, extra={"cat /etc/nccl.conf": f"NCCL_IB_TC=106\n# {SECRET}\n"})

    summary = collect([ok_host, bad], out, CollectOptions(retries=0), session_factory=factory)
    assert summary.by_status == {"partial": 1, "timeout": 1}
    assert sorted(p.name for p in (out / "state").iterdir()) == ["gpu-1.json", "gpu-2.json"]
    assert (out / "raw" / "gpu-1" / f"{command_slug('ethtool -S eth2')}.txt").is_file()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["complete"] is True and manifest["fabline_version"]
    entry = manifest["devices"]["gpu-1"]
    by_cmd = {c["command"]: c for c in entry["commands"]}
    assert by_cmd["ethtool -S eth2"]["status"] == "ok" and by_cmd["ethtool -S eth2"]["file"]
    assert (
        by_cmd["ethtool -m eth2"]["status"] == "unavailable" and by_cmd["ethtool -m eth2"]["exit_code"] == 127
    )
    assert manifest["devices"]["gpu-2"]["status"] == "timeout"
    state2 = json.loads((out / "state" / "gpu-2.json").read_text())
    assert state2["status"] == "timeout" and state2["errors"][0]["kind"] == "timeout"

    sessions.clear()
    summary = collect([ok_host, bad], out, CollectOptions(retries=0), session_factory=factory, resume=True)
    assert sessions == ["gpu-2"] and summary.skipped_done == 1
    manifest = json.loads((out / "manifest.json").read_text())
    assert set(manifest["devices"]) == {"gpu-1", "gpu-2"}

    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert SECRET not in path.read_text(errors="replace"), path


def test_reparse_rebuilds_states_from_raw(tmp_path: Path) -> None:
    out = tmp_path / "snap"
    device = host(rail_interfaces=["eth2"])
    collect([device], out, session_factory=factory_for(FakeSession(HOST_FILES)))
    before = json.loads((out / "state" / "gpu-1.json").read_text())
    (out / "state" / "gpu-1.json").write_text("{}")
    assert reparse_snapshot(out, [device]) == 1
    after = json.loads((out / "state" / "gpu-1.json").read_text())
    assert after == before
    # A fixed raw file changes the state without logging in again.
    raw = (
        out
        / "raw"
        / "gpu-1"
        / f"{command_slug('cat /sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos')}.txt"
    )
    raw.write_text((LINUX / "default_roce_tos-104-no-ect.txt").read_text())
    reparse_snapshot(out, [device])
    assert (
        json.loads((out / "state" / "gpu-1.json").read_text())["interfaces"]["eth2"]["nic"]["roce_tos"] == 104
    )


def test_reparse_needs_a_manifest(tmp_path: Path) -> None:
    (tmp_path / "state").mkdir()
    with pytest.raises(ConfigError, match=r"manifest\.json"):
        reparse_snapshot(tmp_path, [host()])


def test_bad_options_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--workers"):
        collect([host()], tmp_path, CollectOptions(workers=0))


@pytest.mark.parametrize(
    "name", ["allowlist", "collector", "device", "hostkeys", "profiles", "transports", "writer"]
)
def test_doctests(name: str) -> None:
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(f"fabline.collect.{name}"))
    assert result.attempted > 0 and result.failed == 0


def test_progress_reporters_count_devices_and_failures() -> None:
    from fabline.collect.collector import LineProgress, RichProgress
    from fabline.collect.device import DeviceResult

    ok = DeviceResult("leaf-1", "sonic", "leaf", "ok", {"errors": []})
    bad = DeviceResult(
        "gpu-1", "linux", "host", "auth_failed", {"errors": [{"message": "authentication failed"}]}
    )
    lines: list[str] = []
    line = LineProgress(lines.append)
    line.start(2)
    line.device_done(ok)
    line.device_done(bad)
    assert lines[0].startswith("collect [1/2] leaf-1 ok")
    assert lines[1].startswith("collect [2/2] gpu-1 auth_failed") and lines[1].endswith(
        ": authentication failed"
    )
    bar = RichProgress()
    bar.start(2)
    bar.device_done(ok)
    bar.device_done(bad)
    bar.finish()
    task = bar.bar.tasks[0]
    assert (task.completed, task.fields["failed"]) == (2, 1)


def test_interrupted_run_keeps_finished_devices_and_resume_completes(tmp_path: Path) -> None:
    out = tmp_path / "snap"
    devices = [make_device(f"gpu-{i}", "linux", 22, rail_interfaces=["eth2"]) for i in range(4)]

    def interrupting(device: Any, profile: Any) -> Any:
        if device.name == "gpu-2":
            raise KeyboardInterrupt  # Ctrl-C while this device is being collected
        return FakeSession(HOST_FILES)

    with pytest.raises(KeyboardInterrupt):
        collect(devices, out, CollectOptions(workers=1), session_factory=interrupting)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["complete"] is False and set(manifest["devices"]) == {"gpu-0", "gpu-1"}
    assert sorted(p.stem for p in (out / "state").glob("*.json")) == ["gpu-0", "gpu-1"]
    assert not [p for p in (out / "raw").iterdir() if p.name.startswith(".")]  # no half-written folder

    seen: list[str] = []

    def normal(device: Any, profile: Any) -> Any:
        seen.append(device.name)
        return FakeSession(HOST_FILES)

    summary = collect(devices, out, CollectOptions(workers=1), session_factory=normal, resume=True)
    assert seen == ["gpu-2", "gpu-3"] and summary.skipped_done == 2
    assert json.loads((out / "manifest.json").read_text())["complete"] is True


def test_reparse_over_worker_processes_writes_the_same_states(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fabline import perf

    out = tmp_path / "snap"
    devices = [
        make_device(f"gpu-{i}", "linux", 22, password=SECRET, rail_interfaces=["eth2"]) for i in range(3)
    ]
    collect(devices, out, session_factory=factory_for(FakeSession(HOST_FILES)))
    serial = {d.name: json.loads((out / "state" / f"{d.name}.json").read_text()) for d in devices}
    statuses = {n: e["status"] for n, e in json.loads((out / "manifest.json").read_text())["devices"].items()}
    for d in devices:
        (out / "state" / f"{d.name}.json").write_text("{}")
    monkeypatch.setattr(perf, "PARALLEL_MIN_REPARSE", 1)
    monkeypatch.setattr(perf.os, "cpu_count", lambda: 2)
    assert reparse_snapshot(out, devices) == 3
    for d in devices:
        assert json.loads((out / "state" / f"{d.name}.json").read_text()) == serial[d.name]
    manifest = json.loads((out / "manifest.json").read_text())
    assert "reparsed_at" in manifest
    assert {n: e["status"] for n, e in manifest["devices"].items()} == statuses


def test_a_fragment_the_schema_refuses_is_left_out_and_its_command_is_a_parse_error(tmp_path: Path) -> None:
    """The device's fragments are checked against the state schema once, merged (``checked_merge``).

    One output holding a value no device has (an MTU of 99,999,999) makes that command a parse
    error naming the value; the other commands' fragments still build the state, which is valid,
    in a collection and in a re-parse of the same raw evidence alike.
    """
    from fabline.state import schema_problem

    links = json.loads(HOST_FILES["ip -j -d link show"].read_text())
    for link in links:
        if link["ifname"] == "eth2":
            link["mtu"] = 99_999_999
    session = FakeSession(HOST_FILES, extra={"ip -j -d link show": json.dumps(links)})
    device = host(rail_interfaces=["eth2"])
    result = collect_device(device, factory_for(session))
    bad = next(r for r in result.records if r.command == "ip -j -d link show")
    assert bad.status == "parse_error"
    assert "values valid in the state schema" in (bad.message or "") and "mtu" in (bad.message or "")
    assert {"command": "ip -j -d link show", "kind": "parse"}.items() <= next(
        e for e in result.state["errors"] if e["command"] == "ip -j -d link show"
    ).items()
    eth2 = result.state["interfaces"]["eth2"]
    assert "mtu" not in eth2 and eth2["nic"]["rdma_device"] == "mlx5_0"
    assert schema_problem(result.state) is None
    out = tmp_path / "snap"
    collect([device], out, session_factory=factory_for(FakeSession(HOST_FILES, extra=session.extra)))
    (out / "state" / "gpu-1.json").write_text("{}")
    assert reparse_snapshot(out, [device]) == 1
    state = json.loads((out / "state" / "gpu-1.json").read_text())
    assert "mtu" not in state["interfaces"]["eth2"] and schema_problem(state) is None
    assert [e["kind"] for e in state["errors"] if e["command"] == "ip -j -d link show"] == ["parse"]


def test_declared_nccl_env_files_are_read_after_nccl_conf_and_paths_are_checked() -> None:
    """``nccl_env_files``: each file read once after /etc/nccl.conf; its settings win, as in NCCL."""
    job = "sed -n '/NCCL_/p;$s/.*/(end of file)/p' /etc/profile.d/nccl-job.sh"
    session = FakeSession({**HOST_FILES, job: LINUX / "nccl_env_file-job-constructed.txt"})
    device = host(nccl_env_files=["/etc/profile.d/nccl-job.sh", "/etc/../shadow", "relative.env"])
    result = collect_device(device, factory_for(session))
    assert session.sent.index(job) > session.sent.index("cat /etc/nccl.conf")
    env = result.state["host"]["nccl_env"]
    assert env["NCCL_IB_TC"] == "104"  # the env file's, over nccl.conf's 106
    assert env["NCCL_IB_GID_INDEX"] == "3"  # only in nccl.conf
    assert result.state["host"]["nccl_sources"]["NCCL_IB_TC"] == "/etc/profile.d/nccl-job.sh"
    assert "NCCL_IB_GID_INDEX" not in result.state["host"]["nccl_sources"]
    refused = [r for r in result.records if r.status == "refused"]
    assert len(refused) == 2 and all("not a plain name" in (r.message or "") for r in refused)
    assert not any("shadow" in c or "relative" in c for c in session.sent)
    # a comma-separated string works as in rail_interfaces
    session = FakeSession({**HOST_FILES, job: LINUX / "nccl_env_file-job-constructed.txt"})
    collect_device(host(nccl_env_files="/etc/profile.d/nccl-job.sh"), factory_for(session))
    assert job in session.sent


# --- reads that need root: sudo -n only where the inventory enables it ---------------------------

ROOT_LINES = ("sudo -n lspci -vvv", "sudo -n dmidecode --type bios")


def test_root_reads_are_never_sent_without_fabline_sudo() -> None:
    session = FakeSession(HOST_FILES)
    result = collect_device(host(rail_interfaces=["eth2"]), factory_for(session))
    assert not [c for c in session.sent if c.startswith("sudo")]
    records = {r.command: r for r in result.records}
    for line in (*ROOT_LINES, "sudo -n mlxconfig -d mlx5_0 query"):
        assert records[line].status == "unavailable", line
        assert records[line].message == (
            "needs root: not run (fabline_sudo is not set for this device, so sudo -n is not used)"
        )
    # Not an error of the device: what only they provide is unsupported, with the reason.
    assert not [e for e in result.state["errors"] if e["command"].startswith("sudo")]
    assert result.state["unsupported"]["host.pcie_bridges"].startswith("sudo -n lspci -vvv: needs root")
    assert "host.rdma_devices.*.cc_config" in result.state["unsupported"]


def test_root_reads_are_sent_with_fabline_sudo_and_sudos_refusal_is_unavailable() -> None:
    # sudo's own words, captured on Debian 12 (sudo 1.9.13) for a user without a sudoers entry.
    refused = Output("", 1, "sudo: a password is required\n")
    session = FakeSession(HOST_FILES, failures={})
    session.run = _answer_root(session.run, dict.fromkeys(ROOT_LINES, refused))  # type: ignore[method-assign]
    result = collect_device(host(rail_interfaces=["eth2"], fabline_sudo=True), factory_for(session))
    assert set(ROOT_LINES) <= set(session.sent) and "sudo -n mlxconfig -d mlx5_0 query" in session.sent
    records = {r.command: r for r in result.records}
    for line in ROOT_LINES:
        assert (records[line].status, records[line].message) == (
            "unavailable",
            "sudo: a password is required",
        )
    # sudo runs, the tool is not installed: sudo says so (exit 1), also unavailable.
    assert records["sudo -n mlxconfig -d mlx5_0 query"].status == "unavailable"


def _answer_root(run: Any, answers: Mapping[str, Output]) -> Any:
    def wrapped(commands: Sequence[str]) -> Iterator[tuple[str, Output | CommandFailure, float]]:
        for cmd, outcome, seconds in run(commands):
            if cmd in answers:
                yield cmd, answers[cmd], seconds
            elif cmd.startswith("sudo -n "):
                yield cmd, Output("", 1, f"sudo: {cmd.split()[2]}: command not found\n"), seconds
            else:
                yield cmd, outcome, seconds

    return wrapped


def test_only_the_listed_root_reads_may_run_with_sudo() -> None:
    assert allowed("linux", "sudo -n lspci -vvv") == "sudo -n lspci -vvv"
    assert allowed("linux", "sudo -n mlxconfig -d mlx5_3 query")
    for line in (
        "sudo -n mlxconfig -d mlx5_0 set ROCE_CC_PRIO_MASK_P1=0",
        "sudo mlxconfig -d mlx5_0 query",
        "sudo -n ethtool -S eth0",
        "sudo -n cat /etc/shadow",
        "sudo -n lspci -vvv -xxxx",
        "sudo -n mlxconfig -d mlx5_0;reboot query",
    ):
        with pytest.raises(CommandRefused):
            allowed("linux", line)
    from fabline.platforms import PLATFORMS

    # Exactly these: the Linux platform's root-only templates are its spec's root_commands, no other has one.
    root = {c.template for c in PLATFORMS["linux"].commands if c.needs_root}
    assert root == PLATFORMS["linux"].root_commands == root_templates("linux")
    assert sorted(root) == [
        "sudo -n dmidecode --type bios",
        "sudo -n lspci -vvv",
        "sudo -n mlxconfig -d {rdma_device} query",
    ]
    assert not [
        c.template for p, spec in PLATFORMS.items() if p != "linux" for c in spec.commands if c.needs_root
    ]


def test_systemctl_without_systemd_is_unavailable_not_failed() -> None:
    # systemctl's words where systemd is not PID 1 (this machine's real answer, exit 1, on stderr).
    stderr = (
        "System has not been booted with systemd as init system (PID 1). Can't operate.\n"
        "Failed to connect to bus: Host is down\n"
    )
    command = "systemctl show --property=LoadState,ActiveState,SubState nvidia-fabricmanager"
    session = FakeSession(HOST_FILES)
    session.run = _answer_root(session.run, {command: Output("", 1, stderr)})  # type: ignore[method-assign]
    result = collect_device(host(rail_interfaces=["eth2"]), factory_for(session))
    record = next(r for r in result.records if r.command == command)
    assert (record.status, record.message) == (
        "unavailable",
        "System has not been booted with systemd as init system (PID 1). Can't operate.",
    )


def test_dmidecode_without_smbios_is_unavailable_despite_its_preamble() -> None:
    # dmidecode 3.4's real answer in a VM without SMBIOS (captured on this machine): a preamble on
    # stdout, the reason on stderr, exit 1.
    line = "sudo -n dmidecode --type bios"
    session = FakeSession(HOST_FILES)
    answer = Output(
        "# dmidecode 3.4\nScanning /dev/mem for entry point.\n", 1, "/dev/mem: No such file or directory\n"
    )
    session.run = _answer_root(session.run, {line: answer})  # type: ignore[method-assign]
    result = collect_device(host(rail_interfaces=["eth2"], fabline_sudo=True), factory_for(session))
    record = next(r for r in result.records if r.command == line)
    assert (record.status, record.message) == ("unavailable", "/dev/mem: No such file or directory")
