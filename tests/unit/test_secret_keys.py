"""One secret-key rule: the checks' view of a device, its repr and ``inventory --host`` agree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from fabline.cli import main
from fabline.inventory import load_inventory
from fabline.secret_keys import is_secret_key, public_vars

SECRETS = {
    "ansible_password": "pw-1",
    "ansible_ssh_pass": "pw-2",
    "ansible_become_pass": "pw-3",
    "api_token": "tok-4",
    "vault_secret": "sec-5",
    "snmp_community": "comm-6",
    "ipsec_psk": "psk-7",
    "ansible_ssh_private_key_file": "/keys/k8",
}
PLAIN = {"rail": 1, "plane": 0, "rail_interfaces": ["eth0"]}


@pytest.mark.parametrize("name", sorted(SECRETS))
def test_every_secret_name_is_one(name: str) -> None:
    assert is_secret_key(name) and is_secret_key(name.upper())


def test_the_views_agree(tmp_path: Path) -> None:
    host = {
        "ansible_host": "127.0.0.1",
        "fabline_platform": "linux",
        "fabline_role": "host",
        **SECRETS,
        **PLAIN,
    }
    inv = tmp_path / "inv.yml"
    inv.write_text(json.dumps({"all": {"hosts": {"gpu-01": host}}}))
    device = next(iter(load_inventory(inv).devices()))
    # What checks and reports see.
    public = public_vars(device.vars)
    assert not set(SECRETS) & set(public)
    assert {k: public[k] for k in PLAIN if k != "passive_port"} == {
        k: PLAIN[k] for k in PLAIN if k != "passive_port"
    }
    # The repr of a device's variables never shows a secret value.
    shown = repr(device.vars)
    assert not [v for v in SECRETS.values() if v in shown]
    # fabline inventory --host masks the same names.
    result = CliRunner().invoke(main, ["inventory", "-i", str(inv), "--host", "gpu-01"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert (
        {k for k, v in out.items() if v == "********"} == {k for k in out if is_secret_key(k)} >= set(SECRETS)
    )
