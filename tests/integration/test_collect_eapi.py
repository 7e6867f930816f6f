"""Arista EOS collected over eAPI (HTTPS JSON-RPC) with NAPALM's real EOS driver, against the simulator.

The simulator serves eAPI with a certificate from its own CA; the inventory pins that CA. An EOS
device read over eAPI gives the very state it gives over SSH; every eAPI fault ends as the device
or command status SSH would give; the allow-list guard refuses a command before anything is sent;
TLS verification is on unless pinned or turned off. Network: 127.0.0.0/8 only, random ports.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabline import synthetic
from fabline.collect.allowlist import CommandRefused
from fabline.collect.eapi import TlsPolicy, _connection_class, normalize_fingerprint
from fabline.errors import ConfigError
from fabline.sim import TransportFault
from fabline.sim.eapi import fingerprint_of
from tests.conftest import REPO_ROOT
from tests.helpers import statuses
from tests.integration.test_collect_sim import LAB, PASSWORD, cli, free_port, simulator, state

EOS = [d.name for d in LAB.devices if d.platform == "arista_eos"]


def _eos(name: str) -> synthetic.DeviceSpec:
    return synthetic.DeviceSpec(name, "leaf", "arista_eos", rail=2, ports=2)


FAULTY = [_eos(n) for n in ("eos-auth", "eos-silent", "eos-refused", "eos-slow", "eos-slowcmd",
                            "eos-missing", "eos-tls", "eos-drop", "eos-pin", "eos-badpin", "eos-getfail")]  # fmt: skip
FAULTS = [
    TransportFault("eos-auth", "auth_failure"),
    TransportFault("eos-silent", "no_answer"),
    TransportFault("eos-refused", "refused"),
    TransportFault("eos-slow", "slow", seconds=30),
    TransportFault("eos-slowcmd", "slow", "show priority-flow-control", seconds=30),
    TransportFault("eos-missing", "missing_command", "show interfaces transceiver dom thresholds | json"),
    TransportFault("eos-tls", "tls_mismatch"),
    TransportFault("eos-drop", "drop", "show lldp neighbors | json"),
    TransportFault("eos-getfail", "missing_command", "show interfaces transceiver | json"),
]


@pytest.fixture(scope="module")
def eapi_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The lab plus faulty EOS switches; the EOS devices collected over SSH and over eAPI."""
    tmp = tmp_path_factory.mktemp("collect-eapi")
    fabric = synthetic.Fabric([*LAB.devices, *FAULTY], LAB.links)
    with simulator(fabric, FAULTS, base="127.52", eapi_port=free_port()) as sim:
        ca = tmp / "site-ca.pem"
        ca.write_text(sim.eapi_tls.ca_pem)
        inv = sim.inventory(password_env="FABLINE_TEST_SIM_PASSWORD", eapi_ca_file=ca)
        leaves = inv["all"]["children"]["fabric"]["children"]["leaf"]["hosts"]
        # Pinned by fingerprint instead of by CA: the right one, and a wrong one.
        leaves["eos-pin"].pop("fabline_eapi_ca_file")
        leaves["eos-pin"]["fabline_eapi_fingerprint"] = sim.eapi_tls.fingerprint
        leaves["eos-badpin"].pop("fabline_eapi_ca_file")
        leaves["eos-badpin"]["fabline_eapi_fingerprint"] = fingerprint_of(b"another certificate")
        (tmp / "eapi.yml").write_text(yaml.safe_dump(inv, sort_keys=False))
        (tmp / "ssh.yml").write_text(
            yaml.safe_dump(sim.inventory(password_env="FABLINE_TEST_SIM_PASSWORD"), sort_keys=False)
        )
        common = ["--timeout", "2", "--retries", "1", "--known-hosts", tmp / "known_hosts"]
        ssh = cli("collect", "-i", tmp / "ssh.yml", "-o", tmp / "ssh", "-l", ",".join(EOS), *common)
        names = ",".join(EOS + [d.name for d in FAULTY])
        eapi = cli("collect", "-i", tmp / "eapi.yml", "-o", tmp / "eapi", "-l", names, *common)
        yield {"tmp": tmp, "ssh": ssh, "eapi": eapi, "sim": sim, "ca": ca}


def test_eapi_collection_runs(eapi_run: dict[str, Any]) -> None:
    assert eapi_run["ssh"].exit_code == 0, eapi_run["ssh"].output
    assert eapi_run["eapi"].exit_code == 3, eapi_run["eapi"].output  # the faulty ones
    assert f"collected {len(EOS) + len(FAULTY)} devices" in eapi_run["eapi"].output


@pytest.mark.parametrize("device", [*EOS, "eos-pin"])
def test_eapi_state_equals_ssh_state(eapi_run: dict[str, Any], device: str) -> None:
    over_eapi = state(eapi_run["tmp"] / "eapi", device)
    assert over_eapi["status"] == "ok", over_eapi["errors"]
    if device == "eos-pin":  # not in the SSH run: the same rendering as any EOS leaf of the lab
        assert over_eapi["interfaces"]["Ethernet1/1"]["mtu"] == 9214
        return
    over_ssh = state(eapi_run["tmp"] / "ssh", device)
    for doc in (over_eapi, over_ssh):
        doc.pop("collected_at")
    assert over_eapi == over_ssh
    assert over_eapi["qos"]["pfc_watchdog"]["enabled"] is True


def test_eapi_evidence_is_the_json_documents(eapi_run: dict[str, Any]) -> None:
    raw = eapi_run["tmp"] / "eapi" / "raw" / EOS[0]
    version = json.loads((raw / "show_version_json.txt").read_text())
    assert version["modelName"] and version["version"]
    assert (raw / "show_running-config.txt").read_text().startswith("! Command: show running-config")
    # A re-parse of the eAPI evidence gives the same states.
    snap = eapi_run["tmp"] / "eapi"
    before = state(snap, EOS[0])
    result = cli("check", "-i", eapi_run["tmp"] / "eapi.yml", "--snapshot", snap, "--reparse",
                 "-l", EOS[0], "--out", eapi_run["tmp"] / "reports", "-q")  # fmt: skip
    assert result.exit_code in (3, 4), result.output  # peers outside --limit are 'error' link results
    after = state(snap, EOS[0])
    assert {k: v for k, v in after.items() if k != "collected_at"} == {
        k: v for k, v in before.items() if k != "collected_at"
    }


@pytest.mark.parametrize(
    ("device", "status", "kind", "words"),
    [
        ("eos-auth", "auth_failed", "auth_failed", "HTTP 401"),
        ("eos-silent", "timeout", "timeout", "no TLS handshake"),
        ("eos-refused", "unreachable", "unreachable", "connection refused"),
        ("eos-slow", "timeout", "timeout", "no eAPI answer"),
        ("eos-tls", "error", "tls", "not trusted"),
        ("eos-badpin", "error", "tls", "does not match fabline_eapi_fingerprint"),
    ],
)
def test_connect_faults_classified_as_over_ssh(
    eapi_run: dict[str, Any], device: str, status: str, kind: str, words: str
) -> None:
    got = state(eapi_run["tmp"] / "eapi", device)
    assert got["status"] == status
    assert [(e["command"], e["kind"]) for e in got["errors"]] == [(None, kind)]
    assert words in got["errors"][0]["message"]
    assert "interfaces" not in got
    attempts = json.loads((eapi_run["tmp"] / "eapi" / "manifest.json").read_text())["devices"][device][
        "attempts"
    ]
    # As over SSH: an authentication or certificate failure is never retried, a silent device is.
    assert attempts == (1 if kind in ("auth_failed", "tls") else 2)


def test_command_error_is_unavailable_and_the_rest_is_read(eapi_run: dict[str, Any]) -> None:
    got = state(eapi_run["tmp"] / "eapi", "eos-missing")
    assert got["status"] == "partial"
    errors = {e["command"]: e for e in got["errors"]}
    assert list(errors) == ["show interfaces transceiver dom thresholds | json"]
    err = errors["show interfaces transceiver dom thresholds | json"]
    assert err["kind"] == "unavailable" and "Invalid input" in err["message"]
    # The commands after it in the same eAPI request were sent again and read.
    assert got["interfaces"]["Ethernet1/1"]["counters"]["crc_errors"] == 0
    raw = (
        eapi_run["tmp"]
        / "eapi"
        / "raw"
        / "eos-missing"
        / "show_interfaces_transceiver_dom_thresholds_json.txt"
    )
    assert raw.read_text().startswith("% Invalid input (at token")


def test_timeout_and_drop_mid_session(eapi_run: dict[str, Any]) -> None:
    slow = state(eapi_run["tmp"] / "eapi", "eos-slowcmd")
    assert slow["status"] == "partial"
    # The slow command times out; the commands the run plan sends after it are skipped.
    errors = [(e["command"], e["kind"]) for e in slow["errors"]]
    assert errors[0] == ("show priority-flow-control", "timeout")
    assert {kind for _, kind in errors[1:]} <= {"skipped"}
    assert slow["interfaces"]["Ethernet1/1"]["mtu"] == 9214
    dropped = state(eapi_run["tmp"] / "eapi", "eos-drop")
    kinds = {e["command"]: e["kind"] for e in dropped["errors"]}
    # The JSON request carrying the LLDP command lost its answer: as for a cut exec script, its
    # first command is reported dropped and every later one skipped (nothing after it was sent).
    assert kinds["show version | json"] == "dropped" and kinds["show lldp neighbors | json"] == "skipped"
    assert set(kinds.values()) == {"dropped", "skipped"} and kinds["show priority-flow-control"] == "skipped"
    assert dropped["status"] == "partial"  # the running-config (an earlier request) was read


def test_no_file_holds_the_password(eapi_run: dict[str, Any]) -> None:
    for path in (eapi_run["tmp"] / "eapi").rglob("*"):
        if path.is_file():
            assert PASSWORD not in path.read_text(errors="replace"), path


def test_guard_refuses_before_anything_is_sent() -> None:
    # Port 9 on loopback: nothing listens, but the refusal comes before any connect attempt.
    conn = _connection_class("arista_eos")(host="127.0.0.1", port=free_port(), username="u", password="p",
                                           context=TlsPolicy().context(), timeout=1)  # fmt: skip
    with pytest.raises(CommandRefused, match="not on the read-only allow-list"):
        conn.execute(["show version", "configure terminal"], encoding="text")
    with pytest.raises(CommandRefused):
        conn.execute([{"cmd": "reload", "input": ""}], encoding="json")
    assert conn.transport.sock is None and conn.transport.phase == "tcp"


def test_tls_policy_from_inventory_vars(tmp_path: Path) -> None:
    from fabline.inventory import Device

    def dev(**v: Any) -> Device:
        return Device("sw1", "arista_eos", "leaf", (), "127.0.0.1", None, "admin", None, None, None, v)

    fp = "AB:" * 31 + "CD"
    assert TlsPolicy.of(dev()).verify and TlsPolicy.of(dev()).context().verify_mode.name == "CERT_REQUIRED"
    assert TlsPolicy.of(dev(fabline_eapi_fingerprint=f"SHA256:{fp}")).fingerprint == normalize_fingerprint(fp)
    assert not TlsPolicy.of(dev(ansible_httpapi_validate_certs=False)).verify
    with pytest.raises(ConfigError, match="not a SHA-256 fingerprint"):
        TlsPolicy.of(dev(fabline_eapi_fingerprint="12:34"))
    bad = tmp_path / "ca.pem"
    bad.write_text("not a certificate")
    with pytest.raises(ConfigError, match="cannot load a CA bundle"):
        TlsPolicy.of(dev(fabline_eapi_ca_file=str(bad))).context()


def test_napalm_is_imported_only_when_used() -> None:
    code = (
        "import sys, fabline.cli, fabline.collect.collector, fabline.collect.eapi, fabline.collect.getters; "
        "print(sorted(m for m in ('napalm', 'pyeapi') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT, check=True
    )
    assert out.stdout.strip() == "[]"


# --------------------------------------------------------------------------------------------
# The getter path: the same EOS endpoint read through NAPALM's getters (fabline_platform: napalm)

GETTER_DEVICES = ("spine-01", "eos-auth", "eos-getfail")
QOS_RULES = ("switch-trust-dscp", "switch-pfc-priorities", "switch-dscp-roce", "switch-dscp-cnp",
             "switch-ecn-enabled", "switch-fec-rs", "switch-autoneg-off", "switch-pfc-watchdog")  # fmt: skip


@pytest.fixture(scope="module")
def getter_run(eapi_run: dict[str, Any]) -> dict[str, Any]:
    """The lab with spine-01 (and two faulty EOS switches) as ``napalm`` devices, ``napalm_driver: eos``."""
    tmp, sim = eapi_run["tmp"], eapi_run["sim"]
    inv = sim.inventory(password_env="FABLINE_TEST_SIM_PASSWORD", eapi_ca_file=eapi_run["ca"])
    groups = inv["all"]["children"]["fabric"]["children"]
    for group in groups.values():
        for name, hv in group["hosts"].items():
            if name in GETTER_DEVICES:
                hv.update(fabline_platform="napalm", napalm_driver="eos")
    (tmp / "getters.yml").write_text(yaml.safe_dump(inv, sort_keys=False))
    names = ",".join([d.name for d in LAB.devices] + ["eos-auth", "eos-getfail"])
    common = ["--timeout", "2", "--retries", "0", "--known-hosts", tmp / "known_hosts"]
    collected = cli("collect", "-i", tmp / "getters.yml", "-o", tmp / "getters", "-l", names, *common)
    # The check leaves the two faulty leaves out: unlinked, they would break the Clos shape.
    lab = ",".join(d.name for d in LAB.devices)
    checked = cli("check", "-i", tmp / "getters.yml", "--snapshot", tmp / "getters", "-l", lab,
                  "--out", tmp / "getters-report", "-q")  # fmt: skip
    report = json.loads((tmp / "getters-report" / "report.json").read_text())
    return {"snap": tmp / "getters", "collected": collected, "checked": checked, "report": report}


def test_getter_state_is_the_documented_subset(eapi_run: dict[str, Any], getter_run: dict[str, Any]) -> None:
    got = state(getter_run["snap"], "spine-01")
    over_ssh = state(eapi_run["tmp"] / "ssh", "spine-01")
    assert got["status"] == "ok", got["errors"]
    assert got["platform"] == "napalm"
    # NAPALM's EOS driver reports the internal version (version + build).
    assert got["facts"]["os_version"].startswith(over_ssh["facts"]["os_version"] + "-")
    for key in ("hostname", "model", "serial"):
        assert got["facts"][key] == over_ssh["facts"][key]
    assert got["environment"]["temperature_max_c"] > 0 and got["environment"]["fans_failed"] == []
    for name, want in over_ssh["interfaces"].items():
        have = got["interfaces"][name]
        for key in ("admin_up", "oper_up", "mtu", "speed_gbps", "description"):
            assert have.get(key) == want.get(key), (name, key)
        if "lldp" in want:
            assert (have["lldp"]["device"], have["lldp"]["port"]) == (
                want["lldp"]["device"],
                want["lldp"]["port"],
            )
        if "optics" in want:  # get_optics on EOS: the first lane only
            assert have["optics"]["rx_power_dbm"] == want["optics"]["rx_power_dbm"][:1]
        # What the getters cannot give is absent, and declared so.
        assert not {"pfc_priorities", "dscp_to_priority", "ecn", "trust", "fec", "autoneg"} & set(have)
    assert "qos" not in got and "interfaces.*.pfc_priorities" in got["unsupported"]


def test_getter_rules_are_skipped_with_the_reason_never_pass_or_error(getter_run: dict[str, Any]) -> None:
    results = [r for r in getter_run["report"]["results"] if r["device"] == "spine-01"]
    assert results and not [r for r in results if r["status"] == "error"]
    by_rule = {
        check: st for (check, device), st in statuses(getter_run["report"]).items() if device == "spine-01"
    }
    for rule in QOS_RULES:
        assert by_rule[rule] == {"skipped"}, (rule, by_rule[rule])
    skipped = [r for r in results if r["check"] == "switch-pfc-priorities"]
    assert all("not provided (NAPALM getters report no QoS" in r["message"] for r in skipped)
    # What the getters do give is checked for real, across vendors: MTU, speed, LLDP, optics, version.
    for check in ("switch-mtu", "switch-port-up", "link-mtu", "link-speed", "link-lldp", "optics-rx-power",
                  "version-skew", "clos-shape", "hostname-matches-inventory"):  # fmt: skip
        assert by_rule[check] == {"pass"}, (check, by_rule[check])
    # The far end of a spine-01 link compares PFC with a peer that cannot say: skipped there too
    # (one message per reason, so the rows fold per device; the peer is spine-01, the only getter device).
    peer_side = [r for r in getter_run["report"]["results"]
                 if r["check"] == "link-pfc" and r["device"] != "spine-01"
                 and "not provided at the peer" in r["message"]]  # fmt: skip
    assert peer_side and {r["status"] for r in peer_side} == {"skipped"}
    assert all("NAPALM getters report no QoS" in r["message"] for r in peer_side)


def test_getter_faults(getter_run: dict[str, Any]) -> None:
    assert getter_run["collected"].exit_code == 3, getter_run["collected"].output
    auth = state(getter_run["snap"], "eos-auth")
    assert auth["status"] == "auth_failed" and auth["errors"][0]["kind"] == "auth_failed"
    failed = state(getter_run["snap"], "eos-getfail")
    assert failed["status"] == "partial"
    errors = {e["command"]: e for e in failed["errors"]}
    assert list(errors) == ["get_optics"] and errors["get_optics"]["kind"] == "failed"
    assert "CommandError" in errors["get_optics"]["message"]
    assert failed["interfaces"]["Ethernet1/1"]["mtu"] == 9214  # the other getters were read
    raw = getter_run["snap"] / "raw" / "spine-01" / "get_facts.txt"
    assert json.loads(raw.read_text())["vendor"] == "Arista"


def test_demo_over_eapi(tmp_path: Path) -> None:
    """`fabline demo --eapi`: the EOS switches answer over eAPI; the same planted faults are found."""
    env = {**os.environ, "COLUMNS": "200"}
    proc = subprocess.run(
        [sys.executable, "-m", "fabline", "demo", "--eapi", "--out", str(tmp_path / "demo")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = tmp_path / "demo"
    inv = yaml.safe_load((out / "inventory.yml").read_text())
    hosts = {
        n: hv for g in inv["all"]["children"]["fabric"]["children"].values() for n, hv in g["hosts"].items()
    }
    eos = sorted(n for n, hv in hosts.items() if hv["fabline_platform"] == "arista_eos")
    assert eos and all(hosts[n]["ansible_connection"] == "ansible.netcommon.httpapi" for n in eos)
    assert "collected over eAPI" in proc.stdout and (out / "eapi-ca.pem").is_file()
    for name in eos:  # JSON evidence as eAPI returns it (pretty-printed by fabline), state ok
        assert json.loads((out / "snapshot" / "state" / f"{name}.json").read_text())["status"] == "ok"
    report = json.loads((out / "report.json").read_text())
    failed = {(r["check"], r["device"], r["subject"]) for r in report["results"] if r["status"] == "fail"}
    assert ("switch-pfc-watchdog", "spine-02", None) in failed  # planted on an EOS spine
    assert ("switch-fec-rs", "leaf-r3-a", "Ethernet1/3") in failed


def test_eapi_answers_are_bounded_by_max_output(eapi_run: dict[str, Any]) -> None:
    """An eAPI answer over --max-output is cut off as over SSH: output_too_large, the rest skipped."""
    tmp = eapi_run["tmp"]
    result = cli("collect", "-i", tmp / "eapi.yml", "-o", tmp / "capped", "-l", EOS[0], "--max-output", "4K",
                 "--timeout", "5", "--known-hosts", tmp / "known_hosts")  # fmt: skip
    assert result.exit_code == 3, result.output
    got = state(tmp / "capped", EOS[0])
    kinds = {e["command"]: e["kind"] for e in got["errors"]}
    # The JSON request (show interfaces alone is about 13 KB) is cut off; nothing after it is sent.
    assert list(kinds.values()).count("output_too_large") == 1
    assert set(kinds.values()) == {"output_too_large", "skipped"}
    assert kinds["show interfaces | json"] in ("output_too_large", "skipped")
    assert kinds["show priority-flow-control"] == "skipped"
