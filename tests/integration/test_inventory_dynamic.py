"""Dynamic inventories: `fabline inventory --list` equals the real `ansible-inventory --list`.

Each source type is checked against ansible-core itself (a dev dependency): the JSON that
`ansible-inventory --list` / `--list --export` prints (Ansible reads such a file through a script
that prints it, so that is what it is compared with), executable inventory scripts with and without
`_meta`, inventory plugin configurations handled by ansible-core's own plugins (`generator`,
`constructed`; no network), and several `-i` sources at once. Broken scripts (non-zero exit,
garbage, a hang) are one-line errors with exit status 2.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

STATIC = """\
all:
  vars:
    roce_dscp: 26
    ansible_user: admin
    ansible_password: "{{ lookup('env', 'FABLINE_TEST_SECRET') }}"
  children:
    fabric:
      children:
        leaf:
          hosts:
            leaf01: {ansible_host: 127.0.0.1, ansible_network_os: arista.eos.eos, rail: 0}
            leaf02: {ansible_host: 127.0.0.2, ansible_network_os: cisco.nxos.nxos, rail: 1}
          vars: {fabline_role: leaf, mtu: 9100}
        spine:
          hosts:
            spine01: {ansible_host: 127.0.0.3, ansible_network_os: dellemc.enterprise_sonic.sonic}
          vars: {fabline_role: spine}
    gpu:
      hosts:
        gpu-001: {ansible_host: 127.0.0.4, fabline_role: host}
"""

SCRIPT_META = {
    "_meta": {
        "hostvars": {
            "leaf11": {"ansible_host": "10.1.0.11", "ansible_network_os": "nvidia.nvue.httpapi", "rail": 0},
            "leaf12": {"ansible_host": "10.1.0.12", "ansible_network_os": "sonic", "rail": 1},
            "gpu-101": {"ansible_host": "10.1.1.1"},
        }
    },
    "all": {"children": ["ungrouped", "netbox_leaf", "netbox_gpu"], "vars": {"site": "dc2"}},
    "netbox_leaf": {"hosts": ["leaf11", "leaf12"], "vars": {"fabline_role": "leaf"}},
    "netbox_gpu": {"hosts": ["gpu-101"], "vars": {"fabline_role": "host"}},
}

GENERATOR = """\
plugin: ansible.builtin.generator
hosts:
  name: "{{ pod }}-leaf{{ rail }}"
  parents:
    - name: "{{ pod }}"
      vars:
        pod_name: "{{ pod }}"
    - name: "rail{{ rail }}"
layers:
  pod: [pod1, pod2]
  rail: ["0", "1"]
"""

CONSTRUCTED = """\
plugin: ansible.builtin.constructed
strict: false
compose:
  mgmt_address: ansible_host
groups:
  eos: ansible_network_os is defined and ansible_network_os == 'arista.eos.eos'
keyed_groups:
  - key: fabline_role
    prefix: role
"""


def _ansible_inventory() -> str:
    exe = Path(sys.executable).with_name("ansible-inventory")
    found = str(exe) if exe.exists() else shutil.which("ansible-inventory")
    assert found, "ansible-inventory (ansible-core, a dev dependency) is required"
    return found


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "ANSIBLE_LOCAL_TEMP": str(tmp_path / ".ansible-tmp"),
        "ANSIBLE_HOME": str(tmp_path / ".ansible-home"),
        "ANSIBLE_INVENTORY_UNPARSED_FAILED": "true",
        **extra,
    }


def _fabline(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fabline", *args], capture_output=True, text=True, timeout=120,
        env=_env(tmp_path, **env), cwd=tmp_path, check=False,
    )  # fmt: skip


def _theirs(tmp_path: Path, *args: str) -> dict[str, object]:
    proc = subprocess.run(
        [_ansible_inventory(), *args], capture_output=True, text=True, timeout=120,
        env=_env(tmp_path), cwd=tmp_path, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def _ours(tmp_path: Path, *args: str) -> dict[str, object]:
    proc = _fabline(tmp_path, "inventory", *args)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def _script(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def _printing(path: Path, data: dict[str, object]) -> Path:
    """A script printing ``data`` for --list (the script protocol Ansible reads saved JSON through)."""
    saved = path.with_suffix(".data.json")
    saved.write_text(json.dumps(data))
    return _script(path, f'[ "$1" = "--list" ] && exec cat "{saved}"\necho "{{}}"\n')


@pytest.fixture
def static(tmp_path: Path) -> Path:
    path = tmp_path / "static.yml"
    path.write_text(STATIC)
    return path


# ---------------------------------------------------------------------------------------------
# JSON written by ansible-inventory


@pytest.mark.parametrize("export", [False, True], ids=["list", "list-export"])
def test_saved_list_json_equals_ansible(static: Path, tmp_path: Path, export: bool) -> None:
    saved = _theirs(tmp_path, "-i", str(static), "--list", *(["--export"] if export else []))
    inv = tmp_path / "inv.json"
    inv.write_text(json.dumps(saved, indent=2))
    via_script = _printing(tmp_path / "cat-inv.sh", saved)
    assert _ours(tmp_path, "-i", str(inv), "--list") == _theirs(tmp_path, "-i", str(via_script), "--list")
    # And what was saved from the static inventory resolves to the same variables.
    assert _ours(tmp_path, "-i", str(inv), "--list") == _theirs(tmp_path, "-i", str(static), "--list")


def test_saved_json_with_limit_equals_ansible(static: Path, tmp_path: Path) -> None:
    inv = tmp_path / "inv.json"
    inv.write_text(json.dumps(_theirs(tmp_path, "-i", str(static), "--list", "--export")))
    for limit in ("leaf", "fabric:!leaf02", "gpu*"):
        ours = _ours(tmp_path, "-i", str(inv), "--list", "--limit", limit)
        assert ours == _theirs(tmp_path, "-i", str(static), "--list", "--limit", limit), limit


# ---------------------------------------------------------------------------------------------
# Executable scripts


def test_script_with_meta_equals_ansible(tmp_path: Path) -> None:
    script = _printing(tmp_path / "netbox.sh", SCRIPT_META)
    assert _ours(tmp_path, "-i", str(script), "--list") == _theirs(tmp_path, "-i", str(script), "--list")


def test_script_without_meta_is_asked_per_host(tmp_path: Path) -> None:
    """No ``_meta``: Ansible runs ``--host NAME`` for each host; so does fabline."""
    calls = tmp_path / "calls.log"
    script = _script(
        tmp_path / "old.sh",
        f"""echo "$@" >> "{calls}"
case "$1" in
  --list) echo '{{"leaf": ["leaf21", "leaf22"], "spine": {{"hosts": ["spine21"], "vars": {{"fabline_role": "spine"}}}}}}' ;;
  --host) echo "{{\\"ansible_host\\": \\"10.2.0.$(echo $2 | tr -dc 0-9)\\", \\"ansible_network_os\\": \\"eos\\"}}" ;;
esac
""",
    )
    ours = _ours(tmp_path, "-i", str(script), "--list")
    ours_calls = calls.read_text().split("\n")
    calls.unlink()
    assert ours == _theirs(tmp_path, "-i", str(script), "--list")
    assert ours["_meta"]["hostvars"]["leaf22"]["ansible_host"] == "10.2.0.22"  # type: ignore[index]
    assert sorted(c for c in ours_calls if c) == sorted(c for c in calls.read_text().split("\n") if c)


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (
            "echo 'netbox: 401 Unauthorized' >&2\nexit 3\n",
            "failed with exit status 3: netbox: 401 Unauthorized",
        ),
        ("echo '<html>502 Bad Gateway</html>'\n", "printed something that is not JSON"),
        ("echo '[1, 2, 3]'\n", "must be a JSON object, got list"),
        ('echo \'{"leaf": {"hosts": "leaf01"}}\'\n', "'hosts' of group 'leaf' must be a list"),
    ],
    ids=["exit-3", "garbage", "not-an-object", "hosts-not-a-list"],
)
def test_broken_script_is_one_line_exit_2(tmp_path: Path, body: str, says: str) -> None:
    script = _script(tmp_path / "broken.sh", body)
    for command in (["inventory", "-i", str(script), "--list"], ["validate", "-i", str(script)]):
        proc = _fabline(tmp_path, *command)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert proc.stdout == ""
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and str(script) in lines[0] and says in lines[0], proc.stderr
    # ansible-inventory refuses it too (it only warns, so make unparsed sources fatal to see it).
    theirs = subprocess.run(
        [_ansible_inventory(), "-i", str(script), "--list"], capture_output=True, text=True,
        env=_env(tmp_path, ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED="true"), cwd=tmp_path, check=False,
    )  # fmt: skip
    assert theirs.returncode != 0


def test_hanging_script_is_stopped(tmp_path: Path) -> None:
    """A script that never answers is stopped at the timeout (its children too), one line, exit 2."""
    pidfile = tmp_path / "child.pid"
    script = _script(tmp_path / "hang.sh", f'sleep 300 &\necho $! > "{pidfile}"\nwait\n')
    start = time.monotonic()
    proc = _fabline(tmp_path, "inventory", "-i", str(script), "--list", FABLINE_INVENTORY_TIMEOUT="1")
    took = time.monotonic() - start
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert str(script) in proc.stderr and "did not finish within 1 s" in proc.stderr
    assert took < 30
    child = int(pidfile.read_text())
    for _ in range(50):
        if not Path(f"/proc/{child}").exists():
            break
        time.sleep(0.1)
    assert not Path(f"/proc/{child}").exists() or "Z" in Path(f"/proc/{child}/stat").read_text().split()[2]


def test_script_source_works_with_validate_and_devices(tmp_path: Path) -> None:
    script = _printing(tmp_path / "netbox.sh", SCRIPT_META)
    assert _fabline(tmp_path, "validate", "-i", str(script)).returncode == 0
    listed = _fabline(tmp_path, "inventory", "-i", str(script), "--limit", "netbox_leaf")
    assert listed.returncode == 0, listed.stderr
    rows = [line.split("\t") for line in listed.stdout.splitlines()]
    assert [r[:3] for r in rows] == [["leaf11", "cumulus", "leaf"], ["leaf12", "sonic", "leaf"]]


# ---------------------------------------------------------------------------------------------
# Inventory plugins (ansible-core's own)


def test_generator_plugin_equals_ansible(tmp_path: Path) -> None:
    config = tmp_path / "pods.yml"
    config.write_text(GENERATOR)
    assert _ours(tmp_path, "-i", str(config), "--list") == _theirs(tmp_path, "-i", str(config), "--list")


def test_constructed_over_static_equals_ansible(static: Path, tmp_path: Path) -> None:
    config = tmp_path / "constructed.yml"
    config.write_text(CONSTRUCTED)
    args = ("-i", str(static), "-i", str(config), "--list")
    ours = _ours(tmp_path, *args)
    assert ours == _theirs(tmp_path, *args)
    assert ours["eos"] == {"hosts": ["leaf01"]}
    assert ours["_meta"]["hostvars"]["leaf02"]["mgmt_address"] == "127.0.0.2"  # type: ignore[index]


def test_failing_plugin_is_one_line(tmp_path: Path) -> None:
    config = tmp_path / "bad.yml"
    config.write_text("plugin: ansible.builtin.constructed\nstrict: true\ngroups:\n  x: undefined_var == 1\n")
    static = tmp_path / "one.yml"
    static.write_text("all:\n  hosts:\n    h1:\n")
    proc = _fabline(tmp_path, "inventory", "-i", str(static), "-i", str(config), "--list")
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and str(config) in proc.stderr, proc.stderr
    unknown = tmp_path / "nope.yml"
    unknown.write_text("plugin: example.nothing.here\n")
    proc = _fabline(tmp_path, "inventory", "-i", str(unknown), "--list")
    assert proc.returncode == 2 and "example.nothing.here" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


# ---------------------------------------------------------------------------------------------
# Several sources


def test_mixed_sources_equal_ansible(static: Path, tmp_path: Path) -> None:
    script = _printing(tmp_path / "netbox.sh", SCRIPT_META)
    generator = tmp_path / "pods.yml"
    generator.write_text(GENERATOR)
    constructed = tmp_path / "constructed.yml"
    constructed.write_text(CONSTRUCTED)
    (tmp_path / "group_vars").mkdir()
    (tmp_path / "group_vars" / "netbox_leaf.yml").write_text("pfc_priority: 3\nmtu: 9216\n")
    args = ["-i", str(static), "-i", str(script), "-i", str(generator), "-i", str(constructed)]
    assert _ours(tmp_path, *args, "--list") == _theirs(tmp_path, *args, "--list")
    for limit in ("role_leaf", "role_leaf:&netbox_leaf", "pod1:!pod1-leaf1", "rail0"):
        assert _ours(tmp_path, *args, "--list", "--limit", limit) == _theirs(
            tmp_path, *args, "--list", "--limit", limit
        ), limit


def test_later_source_overrides_host_vars_as_ansible(static: Path, tmp_path: Path) -> None:
    override = {"_meta": {"hostvars": {"leaf01": {"rail": 7}}}, "leaf": {"hosts": ["leaf01"]}}
    script = _printing(tmp_path / "fix.sh", override)
    args = ("-i", str(static), "-i", str(script), "--list")
    ours = _ours(tmp_path, *args)
    assert ours == _theirs(tmp_path, *args)
    assert ours["_meta"]["hostvars"]["leaf01"]["rail"] == 7  # type: ignore[index]


def test_secret_from_env_never_printed(static: Path, tmp_path: Path) -> None:
    """The env lookup stays a template in --list (as Ansible prints it) and is masked in --host."""
    secret = "s3cr3t-Value-42"
    script = _printing(tmp_path / "netbox.sh", SCRIPT_META)
    args = ["-i", str(static), "-i", str(script)]
    outputs = [
        _fabline(tmp_path, "inventory", *args, "--list", FABLINE_TEST_SECRET=secret),
        _fabline(tmp_path, "inventory", *args, "--host", "leaf01", FABLINE_TEST_SECRET=secret),
        _fabline(tmp_path, "validate", *args, FABLINE_TEST_SECRET=secret),
    ]
    for proc in outputs:
        assert proc.returncode == 0, proc.stderr
        assert secret not in proc.stdout + proc.stderr
    host = json.loads(outputs[1].stdout)
    assert host["ansible_password"] == "********"
