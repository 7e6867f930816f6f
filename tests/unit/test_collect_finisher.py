"""The finishing step of a collection: parsing off the SSH threads, in a forked worker or a thread.

Outputs come from the shared samples and constructed parser inputs (see test_collect_device).
"""

from __future__ import annotations

import json
import os
import pickle
import signal
from pathlib import Path
from typing import Any

import pytest

from fabline.collect import device as device_mod
from fabline.collect.collector import CollectOptions, collect
from fabline.collect.device import collect_device, finish_device, gather_device
from fabline.collect.finisher import Finisher
from fabline.collect.transports import AEAD_FIRST, _transport
from tests.unit.test_collect_device import HOST_FILES, SECRET, FakeSession, factory_for, host
from tests.unit.test_collect_transports import make_device


def test_gathered_device_carries_no_credentials_and_finishes_like_a_direct_collection() -> None:
    session = FakeSession(HOST_FILES, extra={"cat /etc/nccl.conf": f"NCCL_IB_TC=106\n# {SECRET}\n"})
    gathered = gather_device(host(rail_interfaces=["eth2"]), factory_for(session))
    blob = pickle.dumps(gathered)
    assert SECRET.encode() not in blob  # what crosses to the worker process holds no password
    # Only what the plan reads was parsed on the collecting thread: the RDMA sources, not ethtool.
    parsed = {gathered.records[i].command for i in gathered.fragments}
    assert "show_gids" in parsed and "ethtool -S eth2" not in parsed
    result = finish_device(pickle.loads(blob))
    assert result.status == "partial"
    iface = result.state["interfaces"]["eth2"]
    assert iface["nic"]["rdma_device"] == "mlx5_0" and iface["nic"]["roce_tos"] == 106
    # The same state as gathering and finishing in one go on this thread.
    direct = collect_device(host(rail_interfaces=["eth2"]), factory_for(session))
    assert {**result.state, "collected_at": None} == {**direct.state, "collected_at": None}


@pytest.mark.parametrize("use_processes", [True, False])
def test_finisher_writes_each_device_in_a_process_or_a_thread(tmp_path: Path, use_processes: bool) -> None:
    finisher = Finisher(tmp_path, use_processes=use_processes)
    assert finisher.in_process is (not use_processes)
    session = FakeSession(HOST_FILES)
    futures = [finisher.submit(gather_device(host(rail_interfaces=["eth2"]), factory_for(session)))]
    result = futures[0].result(timeout=60)
    finisher.close()
    assert result.raw == {}  # the raw text stays on disk, it is not sent back
    state = json.loads((tmp_path / "state" / "gpu-1.json").read_text())
    assert state["status"] == result.status == "partial"
    assert {r.file for r in result.records if r.file} == {
        p.name for p in (tmp_path / "raw" / "gpu-1").iterdir()
    }


def test_a_dead_worker_process_loses_nothing(tmp_path: Path) -> None:
    finisher = Finisher(tmp_path, use_processes=True)
    if finisher.in_process:
        pytest.skip("no fork on this platform")
    pool: Any = finisher._pool
    for pid in list(pool._processes):
        os.kill(pid, signal.SIGKILL)  # the worker dies (out of memory, killed by an operator)
    session = FakeSession(HOST_FILES)
    result = finisher.submit(gather_device(host(rail_interfaces=["eth2"]), factory_for(session))).result(60)
    finisher.close()
    assert result.status == "partial" and finisher.in_process
    assert finisher.lost_worker and "died" in finisher.lost_worker
    assert (tmp_path / "state" / "gpu-1.json").is_file()


def test_a_parser_bug_is_a_parse_error_and_the_evidence_stays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = device_mod.match_command

    def buggy(platform: str, command: str) -> Any:
        found = real(platform, command)
        if found is not None and command == "lsmod":

            def broken(_text: str, _ctx: Any) -> Any:
                raise KeyError("module")

            return type(found[0])(found[0].template, broken, ""), found[1]
        return found

    monkeypatch.setattr(device_mod, "match_command", buggy)
    out = tmp_path / "snap"
    # In-process finishing, so the patched parser is the one used.
    monkeypatch.setattr("fabline.collect.collector.Finisher", lambda o: Finisher(o, use_processes=False))
    collect(
        [host(rail_interfaces=["eth2"])],
        out,
        CollectOptions(),
        session_factory=factory_for(FakeSession(HOST_FILES)),
    )
    manifest = json.loads((out / "manifest.json").read_text())
    lsmod = next(c for c in manifest["devices"]["gpu-1"]["commands"] if c["command"] == "lsmod")
    assert lsmod["status"] == "parse_error" and "parser failed: KeyError" in lsmod["message"]
    assert (out / "raw" / "gpu-1" / lsmod["file"]).read_text() == HOST_FILES["lsmod"].read_text()


def test_the_transport_prefers_aead_ciphers_and_keeps_the_rest() -> None:
    import socket

    a, b = socket.socketpair()
    try:
        t = _transport(a)
        ciphers = t.get_security_options().ciphers
        assert ciphers[: len(AEAD_FIRST)] == AEAD_FIRST
        assert "aes128-ctr" in ciphers  # a device without GCM still negotiates
    finally:
        a.close()
        b.close()


def test_a_snapshot_that_cannot_be_written_stops_the_run_with_that_error(tmp_path: Path) -> None:
    out = tmp_path / "snap"
    out.mkdir()
    (out / "raw").write_text("a file where the raw folder goes")
    devices = [host(rail_interfaces=["eth2"])]
    with pytest.raises(OSError):
        collect(devices, out, CollectOptions(), session_factory=factory_for(FakeSession(HOST_FILES)))
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["complete"] is False and manifest["devices"] == {}


def test_cli_names_the_unwritable_snapshot_path_in_one_line(tmp_path: Path) -> None:
    import socket

    from click.testing import CliRunner

    from fabline.cli import main

    with socket.socket() as s:  # a closed port on loopback: the device is unreachable at once
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    inv = tmp_path / "inv.yml"
    inv.write_text(
        "all:\n  hosts:\n    gpu-x:\n      ansible_host: 127.0.0.1\n"
        f"      ansible_port: {port}\n      fabline_platform: linux\n      fabline_role: host\n"
    )
    out = tmp_path / "snap"
    out.mkdir()
    (out / "raw").write_text("in the way")
    result = CliRunner().invoke(main, ["collect", "-i", str(inv), "-o", str(out), "--retries", "0"])
    assert result.exit_code == 2, result.output
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert lines == [f"fabline: error: {out / 'raw'}: File exists"], lines


def test_collection_leaves_the_garbage_collector_as_it_found_it(tmp_path: Path) -> None:
    import gc

    from fabline import perf

    assert gc.isenabled()
    devices = [make_device(f"gpu-{i}", "linux", 22, rail_interfaces=["eth2"]) for i in range(5)]
    original = perf.GcSweeper.EVERY
    perf.GcSweeper.EVERY = 2  # sweep (collect + freeze) during this small run
    try:
        collect(devices, tmp_path / "snap", session_factory=factory_for(FakeSession(HOST_FILES)))
    finally:
        perf.GcSweeper.EVERY = original
    assert gc.isenabled() and gc.get_freeze_count() == 0
    assert len(list((tmp_path / "snap" / "state").glob("*.json"))) == 5


def test_recollecting_into_a_snapshot_replaces_raw_folders_and_leaves_no_temporary_folder(
    tmp_path: Path,
) -> None:
    out = tmp_path / "snap"
    device = host(rail_interfaces=["eth2"])
    first = FakeSession(HOST_FILES, extra={"cat /etc/nccl.conf": "NCCL_IB_TC=106\n"})
    collect([device], out, session_factory=factory_for(first))
    second = FakeSession(HOST_FILES, extra={"cat /etc/nccl.conf": "NCCL_IB_TC=104\n"})
    collect([device], out, session_factory=factory_for(second))
    raw = out / "raw" / "gpu-1"
    assert (raw / "cat_etc_nccl.conf.txt").read_text() == "NCCL_IB_TC=104\n"  # the new evidence
    assert sorted(p.name for p in (out / "raw").iterdir()) == ["gpu-1"]  # no old or temporary folder
    state = json.loads((out / "state" / "gpu-1.json").read_text())
    assert state["host"]["nccl_env"]["NCCL_IB_TC"] == "104"


def test_a_worker_dying_mid_run_is_a_warning_and_every_device_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fabline.collect import collector

    class Dying(Finisher):
        def __init__(self, out: Path) -> None:
            super().__init__(out)
            for pid in list(getattr(self._pool, "_processes", {})):
                os.kill(pid, signal.SIGKILL)

    probe = Finisher(tmp_path / "probe")
    probe.close()
    if probe.in_process:
        pytest.skip("no fork on this platform")
    monkeypatch.setattr(collector, "Finisher", Dying)
    devices = [make_device(f"gpu-{i}", "linux", 22, rail_interfaces=["eth2"]) for i in range(4)]
    summary = collect(devices, tmp_path / "snap", session_factory=factory_for(FakeSession(HOST_FILES)))
    assert summary.collected == 4 and len(list((tmp_path / "snap" / "state").glob("*.json"))) == 4
    assert summary.warnings == [
        "the finishing worker process died (killed, or out of memory?); "
        "the rest was parsed and written in this process"
    ]
