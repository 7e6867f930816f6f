"""States fabline validated when it wrote them skip the schema pass; every other file gets it.

A collection (and ``--reparse``, and ``bench/generate.py``) records each state's SHA-256 and the
state schema it was valid in (manifest entry, ``state-digests.json``); ``Snapshot.load`` skips the
schema pass only for a file whose bytes still have that digest under this fabline's schema. An
edited state, a digest recorded under another schema, or a missing, broken or hostile index means
the full pass, so a forbidden value is still marked invalid and judged ``error``.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from fabline import state as state_mod
from fabline.collect.collector import CollectOptions, collect
from fabline.collect.reparse import reparse_snapshot
from fabline.runner import run_check
from fabline.snapshot import DIGESTS, Snapshot, read_digests
from fabline.state import Invalid, schema_fingerprint
from tests.unit.test_collect_device import HOST_FILES, FakeSession, factory_for, host

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def schema_passes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Records every schema pass ``parse_state`` runs (by device name)."""
    seen: list[str] = []
    real = state_mod.mark_invalid

    def spy(doc: dict[str, Any]) -> list[str]:
        seen.append(doc.get("name", "?"))
        return real(doc)

    monkeypatch.setattr(state_mod, "mark_invalid", spy)
    return seen


def _collected(tmp_path: Path) -> tuple[Path, list[Any]]:
    """A collected snapshot of one GPU host, ``gpu-1`` (the collection tests' fake session)."""
    out = tmp_path / "snap"
    devices = [host(rail_interfaces=["eth2"])]
    collect(devices, out, CollectOptions(workers=1), session_factory=factory_for(FakeSession(HOST_FILES)))
    return out, devices


def test_a_collection_records_each_states_digest_and_the_check_trusts_only_those_bytes(
    tmp_path: Path, schema_passes: list[str]
) -> None:
    out, _ = _collected(tmp_path)
    data = (out / "state" / "gpu-1.json").read_bytes()
    entry = json.loads((out / "manifest.json").read_text())["devices"]["gpu-1"]
    assert entry["state_sha256"] == hashlib.sha256(data).hexdigest()
    assert entry["state_schema"] == schema_fingerprint()
    assert (
        json.loads((out / "manifest.d" / "gpu-1.json").read_text())["state_sha256"] == entry["state_sha256"]
    )
    assert read_digests(out) == {"gpu-1": entry["state_sha256"]}

    schema_passes.clear()
    trusted = Snapshot(out).load("gpu-1")
    assert schema_passes == []
    assert trusted is not None and trusted["interfaces"]["eth2"]["frame_bytes"]  # derived fields still added
    # The same document through the full pass is the same document.
    assert Snapshot(out).load("gpu-1") == state_mod.parse_state(out / "x.json", data)

    # Tampered: one value the schema forbids, digest left as it was -> the full pass marks it.
    doc = json.loads(data)
    doc["interfaces"]["eth2"]["mtu"] = "jumbo"
    (out / "state" / "gpu-1.json").write_text(json.dumps(doc))
    schema_passes.clear()
    loaded = Snapshot(out).load("gpu-1")
    assert schema_passes == ["gpu-1"]
    assert loaded is not None and type(loaded["interfaces"]["eth2"]["mtu"]) is Invalid


def test_the_check_of_a_tampered_state_is_the_check_without_digests(tmp_path: Path) -> None:
    out, _ = _collected(tmp_path)
    path = out / "state" / "gpu-1.json"
    doc = json.loads(path.read_text())
    doc["interfaces"]["eth2"]["mtu"] = 9000.5  # not an integer: `error` naming the field, never a pass
    path.write_text(json.dumps(doc))
    inventory = tmp_path / "inv.yml"
    inventory.write_text(
        "all:\n  hosts:\n    gpu-1:\n      fabline_platform: linux\n      fabline_role: host\n"
        "      rail_interfaces: [eth2]\n"
    )
    kw: dict[str, Any] = {
        "inventory": inventory, "baselines": [REPO / "baseline" / "roce.yml"], "checks_dir": None,
        "limit": None, "out": None, "formats": [], "fail_on": "minor",
    }  # fmt: skip
    with_index = run_check(snapshot=out, **kw)[0]
    (out / DIGESTS).unlink()
    without = run_check(snapshot=out, **kw)[0]
    mtu_errors = [
        r
        for r in with_index.outcome.results.problems
        if "interfaces.eth2.mtu is invalid" in (r.message or "")
    ]
    assert mtu_errors
    assert [r.to_dict() for r in with_index.outcome.results.problems] == [
        r.to_dict() for r in without.outcome.results.problems
    ]


def test_digests_recorded_under_another_schema_or_a_broken_index_mean_the_full_pass(
    tmp_path: Path, schema_passes: list[str]
) -> None:
    out, _ = _collected(tmp_path)
    index = json.loads((out / DIGESTS).read_text())
    (theirs,) = index["states"].values()
    # A newer or older fabline's schema: its digests say nothing about this schema.
    (out / DIGESTS).write_text(json.dumps({**index, "states": {"0" * 16: theirs}}))
    schema_passes.clear()
    Snapshot(out).load("gpu-1")
    assert schema_passes == ["gpu-1"]
    for broken in (
        b"{not json",
        b"[]",
        json.dumps({**index, "schema": "other/1"}).encode(),
        json.dumps({**index, "algorithm": "md5"}).encode(),
        json.dumps({**index, "states": {schema_fingerprint(): {"gpu-1": 7}}}).encode(),
        json.dumps({**index, "states": {schema_fingerprint(): ["gpu-1"]}}).encode(),
    ):
        (out / DIGESTS).write_bytes(broken)
        assert read_digests(out) == {}
        schema_passes.clear()
        assert Snapshot(out).load("gpu-1") is not None
        assert schema_passes == ["gpu-1"]


@pytest.mark.skipif(sys.platform == "win32", reason="symbolic links")
def test_an_index_that_is_a_link_out_of_the_snapshot_is_not_read(tmp_path: Path) -> None:
    out, _ = _collected(tmp_path)
    outside = tmp_path / "outside.json"
    outside.write_bytes((out / DIGESTS).read_bytes())
    (out / DIGESTS).unlink()
    (out / DIGESTS).symlink_to(outside)
    assert read_digests(out) == {}


def test_resume_and_reparse_keep_the_index_true(tmp_path: Path) -> None:
    out, devices = _collected(tmp_path)
    first = read_digests(out)
    # --resume keeps the usable state and its digest.
    collect(
        devices,
        out,
        CollectOptions(workers=1),
        session_factory=factory_for(FakeSession(HOST_FILES)),
        resume=True,
    )
    assert read_digests(out) == first
    # --reparse rewrites the state: the index follows the new bytes.
    path = out / "state" / "gpu-1.json"
    path.write_text("{}")
    assert reparse_snapshot(out, devices) == 1
    assert read_digests(out) == {"gpu-1": hashlib.sha256(path.read_bytes()).hexdigest()}
    entry = json.loads((out / "manifest.json").read_text())["devices"]["gpu-1"]
    assert entry["state_sha256"] == read_digests(out)["gpu-1"]


def test_a_state_without_digest_index_is_checked_in_full(tmp_path: Path, schema_passes: list[str]) -> None:
    out, _ = _collected(tmp_path)
    (out / DIGESTS).unlink()
    schema_passes.clear()
    Snapshot(out).load("gpu-1")
    assert schema_passes == ["gpu-1"]
