"""Inventory features against expected values written out here (the real-Ansible comparison is in
test_inventory_ansible.py): structure, typing, precedence, patterns, devices, templating, bad input."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from fabline.errors import ConfigError
from fabline.inventory import Device, load_inventory, platform_for_network_os

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "inventory"
LAB = REPO / "inventory" / "lab.yml"


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _inv(tmp_path: Path, text: str, name: str = "hosts.yml", extra: dict[str, str] | None = None) -> Any:
    _write(tmp_path, {name: text, **(extra or {})})
    return load_inventory(tmp_path / name)


# -- structure -------------------------------------------------------------------------------------


def test_yaml_features_structure() -> None:
    inv = load_inventory(FIXTURES / "yaml_features" / "hosts.yml")
    assert list(inv.groups["leaf"].hosts) == [
        "leaf-r0-a", "leaf-r1-a", "leaf-r2-a", "leaf-r3-a", "leaf-r0-b", "leaf-r2-b",
    ]  # fmt: skip
    assert inv.groups["gpu_hosts"].hosts == [
        "gpu-a",
        "gpu-b",
        "gpu-c",
        "gpu098",
        "gpu099",
        "gpu100",
        "gpu101",
    ]
    assert inv.groups["ungrouped"].hosts == ["mgmt-01", "console-01"]
    assert inv.host_vars("console-01")["ansible_port"] == 2222
    assert inv.host_groups("leaf-r1-a") == ["fabric", "leaf", "pod_b"]
    assert inv.host_groups("mgmt-01") == ["ungrouped"]
    assert inv.groups["fabric"].children == ["spine", "leaf"]
    assert inv.groups["leaf"].depth == 2
    assert inv.groups["pod_b"].priority == 5
    assert "ansible_group_priority" not in inv.host_vars("leaf-r1-a")
    # An empty group exists and is listed under all, but ansible-inventory prints no entry for it.
    listing = inv.to_ansible_list()
    assert "maintenance" in inv.groups
    assert "maintenance" in listing["all"]["children"]
    assert "maintenance" not in listing
    assert inv.source.endswith("hosts.yml")


@pytest.mark.parametrize(
    ("host", "key", "expected"),
    [
        ("mgmt-01", "ansible_port", 22),
        ("mgmt-01", "verify", True),
        ("mgmt-01", "ansible_host", "10.0.0.5"),
        ("console-01", "ansible_port", 2222),
        ("console-01", "note", "two words"),
        # On a host line shlex removes the quotes first, so Ansible types '22' as the integer 22.
        ("console-01", "quoted", 22),
        ("leaf-r0-b", "mtu", 9216),
        ("leaf-r0-b", "ratio", 1.5),
        ("leaf-r0-b", "tags", ["a", "b"]),
        ("leaf-r0-a", "mtu", 9100),  # [fabric:vars] values are literal-evaluated too (ansible-core 2.19)
        ("leaf-r0-a", "enabled", "yes"),
        ("leaf-r0-a", "flag", False),
        ("leaf-r0-a", "text", "quoted string"),
        ("leaf-r0-a", "words", "several words here"),
        ("gpu099", "rail_count", 8),
        ("border-01", "tier", "fabric"),
    ],
)
def test_ini_values_typed_like_ansible(host: str, key: str, expected: Any) -> None:
    inv = load_inventory(FIXTURES / "ini_features" / "hosts.ini")
    value = inv.host_vars(host)[key]
    assert value == expected
    assert type(value) is type(expected)


def test_ini_children_declared_before_group() -> None:
    inv = load_inventory(FIXTURES / "ini_features" / "hosts.ini")
    assert inv.groups["fabric"].children == ["spine", "leaf", "border"]
    assert inv.host_groups("border-01") == ["border", "fabric"]
    assert inv.groups["ungrouped"].hosts == ["mgmt-01", "console-01"]


@pytest.mark.parametrize(
    ("host", "key", "expected"),
    [
        ("l1", "level", "leaf_sonic"),  # deepest group wins over parents and all
        ("l2", "level", "host-inline"),  # host vars win over groups
        ("l3", "level", "host_vars-file"),  # host_vars file wins over inventory host vars
        ("x1", "level", "all"),
        ("l1", "parent_only", "fabric"),
        ("l1", "only_all", 1),
        ("l1", "sibling", "pod_b"),  # same depth: by name, pod_z has priority 0 so sorts first
        ("l2", "sibling", "pod_a"),
        ("x1", "prio", "pod_hi"),  # ansible_group_priority 10 beats names
        ("l1", "from_file", "leaf-a"),  # group_vars/leaf/ dir beats group_vars/fabric.yml
        ("x1", "from_file", "all"),
        ("l1", "leaf_dir", "b"),  # files of a group_vars dir merge in sorted order; .txt ignored
        ("l1", "from_inv_group", "leaf"),
        ("l1", "gv_all_over_inventory_group", "all-file"),
        ("x1", "pod_a_file", "no-extension"),  # NAME is read, NAME.yml beside it is not
    ],
)
def test_precedence(host: str, key: str, expected: Any) -> None:
    inv = load_inventory(FIXTURES / "precedence" / "hosts.yml")
    assert inv.host_vars(host)[key] == expected


def test_group_vars_file_beats_deeper_inventory_group_var(tmp_path: Path) -> None:
    # Ansible applies every group_vars file after every inventory group var.
    inv = _inv(
        tmp_path,
        "all:\n  children:\n    a:\n      children:\n        b:\n          vars: {x: inventory-b}\n"
        "          hosts: {h: }\n",
        extra={"group_vars/a.yml": "x: file-a\n"},
    )
    assert inv.host_vars("h")["x"] == "file-a"


def test_edge_cases() -> None:
    inv = load_inventory(FIXTURES / "edge_cases" / "hosts.yml")
    assert inv.groups["ungrouped"].hosts == ["lonely", "solo"]
    assert inv.host_groups("early") == ["rack1", "racks"]
    assert inv.groups["racks"].children == ["rack1"]
    assert inv.groups["deepest"].depth == 3
    assert inv.host_vars("d1")["where"] == "deepest"
    assert inv.host_vars("solo")["nested"] == {"a": 9}
    assert inv.host_vars("fe80::1")["ansible_port"] == 2022
    assert "10.0.0.7" in inv.hosts


def test_directory_inventory() -> None:
    inv = load_inventory(FIXTURES / "dir_inventory")
    assert set(inv.hosts) == {
        "spine01", "spine02", "leaf01", "leaf02", "leaf03", "leaf04", "gpu-a", "gpu-b", "stor01",
    }  # fmt: skip
    assert not any(h.startswith("never") for h in inv.hosts)
    assert "ignored" not in inv.groups
    assert inv.host_vars("leaf01")["mtu"] == 9216  # group_vars/leaf/20-mtu.json after all.yml
    assert inv.host_vars("leaf02")["mtu"] == 9000  # host_vars/leaf02 (no extension)
    assert inv.host_vars("leaf03")["pod"] == "b"
    assert inv.host_vars("leaf01")["from_ini"] == 1  # [leaf:vars] in the INI file, group from YAML
    assert inv.host_vars("gpu-b")["rail_interfaces"] == ["eth0", "eth1", "eth2", "eth3"]
    assert inv.host_vars("spine01")["fabline_role"] == "spine"
    assert inv.var_origin("leaf02", "mtu") is not None
    assert inv.var_origin("leaf02", "mtu").endswith("host_vars/leaf02")
    assert inv.var_origin("leaf01", "from_ini").endswith("02-hosts.ini")
    assert inv.var_origin("leaf01", "no_such_var") is None


def test_orphan_vars_files(tmp_path: Path) -> None:
    inv = _inv(
        tmp_path,
        "leaf:\n  hosts: {l1: }\n",
        extra={
            "group_vars/leafs.yml": "a: 1\n",
            "group_vars/leaf.yml": "a: 2\n",
            "host_vars/l2.yml": "b: 1\n",
        },
    )
    assert inv.orphan_vars_files() == [f"{tmp_path}/group_vars/leafs.yml", f"{tmp_path}/host_vars/l2.yml"]
    assert inv.host_vars("l1") == {"a": 2}


def test_template_results_not_shared_between_hosts(tmp_path: Path) -> None:
    inv = _inv(
        tmp_path, "all:\n  vars:\n    fabline_role: host\n    l: '{{ [1, 2] }}'\n  hosts: {h1: , h2: }\n"
    )
    h1, h2 = inv.devices()
    assert h1.vars["l"] == [1, 2]
    assert h1.vars["l"] is not h2.vars["l"]


def test_hosts_in_ansible_order() -> None:
    inv = load_inventory(LAB)
    # `all`'s own hosts, then its children's hosts, then the next level (as ansible --list-hosts).
    assert list(inv.hosts) == [
        "gpu-001", "gpu-002", "spine-01", "spine-02", "leaf-r0-a", "leaf-r1-a", "leaf-r2-a", "leaf-r3-a",
    ]  # fmt: skip


# -- patterns --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (
            None,
            [
                "gpu-001",
                "gpu-002",
                "spine-01",
                "spine-02",
                "leaf-r0-a",
                "leaf-r1-a",
                "leaf-r2-a",
                "leaf-r3-a",
            ],
        ),
        (
            "*",
            [
                "gpu-001",
                "gpu-002",
                "spine-01",
                "spine-02",
                "leaf-r0-a",
                "leaf-r1-a",
                "leaf-r2-a",
                "leaf-r3-a",
            ],
        ),
        ("spine-01", ["spine-01"]),
        ("leaf*", ["leaf-r0-a", "leaf-r1-a", "leaf-r2-a", "leaf-r3-a"]),
        ("~leaf-r[12]", ["leaf-r1-a", "leaf-r2-a"]),
        ("spine:gpu_hosts", ["spine-01", "spine-02", "gpu-001", "gpu-002"]),
        ("spine, gpu_hosts", ["spine-01", "spine-02", "gpu-001", "gpu-002"]),
        ("fabric:&pod_a", ["leaf-r0-a", "leaf-r1-a", "leaf-r2-a", "leaf-r3-a"]),
        ("fabric:!leaf-r2-a", ["spine-01", "spine-02", "leaf-r0-a", "leaf-r1-a", "leaf-r3-a"]),
        ("!fabric", ["gpu-001", "gpu-002"]),
        ("leaf[0:1]", ["leaf-r0-a", "leaf-r1-a"]),
        ("leaf[2:]", ["leaf-r2-a", "leaf-r3-a"]),
        ("leaf[-1]", ["leaf-r3-a"]),
        ("gpu-00?", ["gpu-001", "gpu-002"]),
    ],
)
def test_select(pattern: str | None, expected: list[str]) -> None:
    assert load_inventory(LAB).select(pattern) == expected


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("lefa", "--limit term 'lefa' matches no group or host in"),
        ("lefa", "(did you mean 'leaf'?)"),
        ("spine:nosuch", "'nosuch' matches no group or host"),
        ("spine:&gpu_hosts", "--limit 'spine:&gpu_hosts' matches no host in"),
        ("~leaf(", "invalid host pattern '~leaf('"),
        ("leaf[7]", "subscript out of range (4 hosts match 'leaf')"),
    ],
)
def test_select_errors(pattern: str, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_inventory(LAB).select(pattern)
    assert message in str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("spine:nosuch", ["spine-01", "spine-02"]),  # Ansible ignores a term that matches nothing
        ("leaf*:!leaf-r9-z", ["leaf-r0-a", "leaf-r1-a", "leaf-r2-a", "leaf-r3-a"]),
        ("spine:&gpu_hosts", []),
        ("nosuch", []),
    ],
)
def test_select_lenient(pattern: str, expected: list[str]) -> None:
    assert load_inventory(LAB).select(pattern, strict=False) == expected


def test_select_lenient_still_rejects_bad_syntax() -> None:
    with pytest.raises(ConfigError, match="invalid host pattern"):
        load_inventory(LAB).select("~leaf(", strict=False)


def test_devices_limit_keeps_inventory_order() -> None:
    names = [d.name for d in load_inventory(LAB).devices("leaf-r3-a:spine-01")]
    assert names == ["spine-01", "leaf-r3-a"]


# -- devices ---------------------------------------------------------------------------------------


def test_lab_devices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FABLINE_LAB_PASSWORD", raising=False)
    devices = {d.name: d for d in load_inventory(LAB).devices()}
    assert {n: (d.platform, d.role) for n, d in devices.items()} == {
        "spine-01": ("arista_eos", "spine"),
        "spine-02": ("arista_eos", "spine"),
        "leaf-r0-a": ("sonic", "leaf"),
        "leaf-r1-a": ("cumulus", "leaf"),
        "leaf-r2-a": ("arista_eos", "leaf"),
        "leaf-r3-a": ("cisco_nxos", "leaf"),
        "gpu-001": ("linux", "host"),
        "gpu-002": ("linux", "host"),
    }
    leaf = devices["leaf-r2-a"]
    assert (leaf.host, leaf.port, leaf.user, leaf.password) == ("127.10.0.13", None, "admin", None)
    assert leaf.groups == ("fabric", "leaf", "pod_a")
    assert leaf.vars["rail"] == 2
    assert leaf.vars["plane"] == 0
    assert leaf.vars["roce_priority"] == 3
    assert leaf.vars["ansible_password"] == ""  # env unset: Ansible's env lookup gives ''
    assert devices["gpu-001"].vars["rail_interfaces"] == ["eth0", "eth1", "eth2", "eth3"]
    assert devices["gpu-001"].vars["host_mtu"] == 9000


def test_lab_password_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABLINE_LAB_PASSWORD", "lab-s3cret-value")
    device = load_inventory(LAB).device("spine-01")
    assert device.password == "lab-s3cret-value"
    assert "lab-s3cret-value" not in repr(device)
    assert "lab-s3cret-value" not in repr(device.vars)
    assert "lab-s3cret-value" not in str(device)


@pytest.mark.parametrize(
    ("host_vars", "platform"),
    [
        ("fabline_platform: sonic", "sonic"),
        ("ansible_network_os: arista.eos.eos", "arista_eos"),
        ("ansible_network_os: eos", "arista_eos"),
        ("ansible_network_os: cisco.nxos.nxos", "cisco_nxos"),
        ("ansible_network_os: nxos", "cisco_nxos"),
        ("ansible_network_os: dellemc.enterprise_sonic.sonic", "sonic"),
        ("ansible_network_os: sonic", "sonic"),
        ("ansible_network_os: nvidia.nvue.httpapi", "cumulus"),
        ("ansible_network_os: cumulus", "cumulus"),
        ("ansible_network_os: cumulus_linux", "cumulus"),
        ("ansible_network_os: linux", "linux"),
        ("{fabline_platform: cumulus, ansible_network_os: arista.eos.eos}", "cumulus"),
    ],
)
def test_platform_resolution(tmp_path: Path, host_vars: str, platform: str) -> None:
    inv = _inv(
        tmp_path,
        "leaf:\n  hosts:\n    sw1:\n  vars:\n    fabline_role: leaf\n",
        extra={"host_vars/sw1.yml": host_vars + "\n"},
    )
    assert inv.device("sw1").platform == platform


def test_host_role_defaults_to_linux(tmp_path: Path) -> None:
    inv = _inv(tmp_path, "all:\n  hosts:\n    gpu1:\n      fabline_role: host\n")
    assert inv.device("gpu1").platform == "linux"
    assert platform_for_network_os("junos") is None


@pytest.mark.parametrize(
    ("yaml_text", "vars_files", "message", "where"),
    [
        ("all:\n  hosts:\n    sw1:\n", {}, "host 'sw1' has no fabline_role", "hosts.yml"),
        (
            "leaf:\n  hosts:\n    sw1:\n",
            {"group_vars/leaf.yml": "fabline_role: lef\nfabline_platform: sonic\n"},
            "unknown role 'lef', expected one of spine, leaf, host (did you mean 'leaf'?)",
            "group_vars/leaf.yml",
        ),
        (
            "all:\n  hosts:\n    sw1: {fabline_role: leaf, fabline_platform: sonc}\n",
            {},
            "unknown platform 'sonc'",
            "hosts.yml",
        ),
        (
            "all:\n  hosts:\n    sw1: {fabline_role: leaf, fabline_platform: sonc}\n",
            {},
            "(did you mean 'sonic'?)",
            "hosts.yml",
        ),
        (
            "all:\n  hosts:\n    sw1: {fabline_role: leaf}\n",
            {},
            "host 'sw1' (leaf) has neither fabline_platform nor ansible_network_os",
            "hosts.yml",
        ),
        (
            "all:\n  hosts:\n    sw1: {fabline_role: leaf}\n",
            {"host_vars/sw1.yml": "ansible_network_os: junipernetworks.junos.junos\n"},
            "ansible_network_os 'junipernetworks.junos.junos' is not a fabline platform",
            "host_vars/sw1.yml",
        ),
        (
            "all:\n  hosts:\n    sw1: {fabline_role: leaf, fabline_platform: sonic, ansible_port: ssh}\n",
            {},
            "ansible_port must be a TCP port number",
            "hosts.yml",
        ),
        (
            "all:\n  hosts:\n    sw1: {fabline_role: leaf, fabline_platform: sonic, ansible_user: [a]}\n",
            {},
            "ansible_user must be a string",
            "hosts.yml",
        ),
    ],
)
def test_device_errors(
    tmp_path: Path, yaml_text: str, vars_files: dict[str, str], message: str, where: str
) -> None:
    inv = _inv(tmp_path, yaml_text, extra=vars_files)
    with pytest.raises(ConfigError) as err:
        inv.devices()
    assert message in str(err.value)
    assert err.value.file is not None
    assert err.value.file.endswith(where)
    assert "sw1" in str(err.value)


def test_connection_vars(tmp_path: Path) -> None:
    inv = _inv(
        tmp_path,
        "all:\n  hosts:\n    sw1:\n      fabline_role: leaf\n      fabline_platform: sonic\n"
        "      ansible_port: '2200'\n      ansible_ssh_pass: pw1\n"
        "      ansible_ssh_private_key_file: ~/.ssh/lab\n      ansible_network_os: sonic\n"
        "    sw2:2201:\n      fabline_role: leaf\n      fabline_platform: sonic\n"
        "      ansible_host: 10.1.1.1\n",
    )
    sw1, sw2 = inv.devices()
    assert (sw1.host, sw1.port, sw1.password, sw1.key_file, sw1.network_os) == (
        "sw1", 2200, "pw1", "~/.ssh/lab", "sonic",
    )  # fmt: skip
    assert (sw2.host, sw2.port, sw2.user, sw2.password) == ("10.1.1.1", 2201, None, None)
    assert isinstance(sw1, Device)


# -- templating ------------------------------------------------------------------------------------

_SW = "all:\n  hosts:\n    sw1:\n      fabline_role: leaf\n      fabline_platform: sonic\n"


@pytest.mark.parametrize(
    ("var_text", "env", "key", "expected"),
    [
        ("pw: \"{{ lookup('env', 'FAB_T_PW') }}\"", {"FAB_T_PW": "x1"}, "pw", "x1"),
        ("pw: \"{{ lookup('env', 'FAB_T_PW') }}\"", {}, "pw", ""),
        ("pw: \"{{ lookup('env', 'FAB_T_PW', default='dflt') }}\"", {}, "pw", "dflt"),
        ("pw: \"{{ lookup('ansible.builtin.env', 'FAB_T_PW') | default('d2', true) }}\"", {}, "pw", "d2"),
        (
            "pw: \"{{ query('env', 'FAB_T_PW', 'FAB_T_PW2') }}\"",
            {"FAB_T_PW": "a", "FAB_T_PW2": "b"},
            "pw",
            ["a", "b"],
        ),
        ("{a: 3, b: '{{ a }}'}", {}, "b", 3),  # one expression keeps its native type
        ("{a: 3, b: 'p{{ a }}'}", {}, "b", "p3"),
        ("{a: '{{ b }}', b: '{{ c + 1 }}', c: 41}", {}, "a", 42),
        ("{mtu: 9000, l: ['{{ mtu + 216 }}', {n: '{{ mtu }}'}]}", {}, "l", [9216, {"n": 9000}]),
        ("who: '{{ inventory_hostname }}-{{ group_names | join(\",\") }}'", {}, "who", "sw1-ungrouped"),
        ("flag: \"{{ 'yes' | bool }}\"", {}, "flag", True),
    ],
)
def test_templates(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    var_text: str,
    env: dict[str, str],
    key: str,
    expected: Any,
) -> None:
    for name in ("FAB_T_PW", "FAB_T_PW2"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    inv = _inv(tmp_path, _SW, extra={"host_vars/sw1.yml": var_text + "\n"})
    assert inv.device("sw1").vars[key] == expected
    raw = yaml.safe_load(var_text)
    assert {k: inv.host_vars("sw1")[k] for k in raw} == raw  # host_vars() stays untemplated


@pytest.mark.parametrize(
    ("var_text", "message"),
    [
        ("x: '{{ nosuch }}'", "host 'sw1': variable 'x': 'nosuch' is undefined"),
        ("{x: '{{ y }}', y: '{{ x }}'}", "refers to itself (x -> y -> x)"),
        ('x: \'{{ lookup("file", "/etc/passwd") }}\'', "lookup 'file' is not supported"),
        ("x: '{{ unclosed'", "template syntax error"),
        ("{secret: hunter2-value, x: '{{ secret | int + nosuch }}'}", "'nosuch' is undefined"),
        ("{ansible_password: hunter2-value, x: '{{ ansible_password.nope.deeper }}'}", "variable 'x'"),
        ("{ansible_password: hunter2-value, x: '{{ ansible_password / 0 }}'}", "template failed (TypeError)"),
    ],
)
def test_template_errors_name_host_and_key_never_values(tmp_path: Path, var_text: str, message: str) -> None:
    inv = _inv(tmp_path, _SW, extra={"host_vars/sw1.yml": var_text + "\n"})
    with pytest.raises(ConfigError) as err:
        inv.devices()
    text = str(err.value)
    assert message in text
    assert text.startswith(f"{tmp_path}/host_vars/sw1.yml: ")  # the file that set the variable
    assert "hunter2" not in text
    assert "\n" not in text


def test_offline_without_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FABLINE_LAB_PASSWORD", raising=False)
    assert all(d.password is None for d in load_inventory(LAB).devices())


# -- secrets ---------------------------------------------------------------------------------------


def test_secrets_never_in_reprs(tmp_path: Path) -> None:
    inv = _inv(
        tmp_path,
        "all:\n  hosts:\n    sw1:\n      fabline_role: leaf\n      fabline_platform: sonic\n"
        "      ansible_password: pw-AAA\n      ansible_become_pass: pw-BBB\n      api_token: pw-CCC\n",
    )
    device = inv.device("sw1")
    for text in (repr(device), str(device), repr(device.vars), repr(inv.hosts["sw1"]), repr(inv.groups)):
        assert "pw-" not in text
    assert device.vars["ansible_become_pass"] == "pw-BBB"  # hidden from reprs, not from code
    assert dict(device.vars)["api_token"] == "pw-CCC"


# -- bad input -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("files", "entry", "message", "where"),
    [
        ({"hosts.yml": "all:\n  hosts:\n    a: [\n"}, "hosts.yml", "malformed YAML", "hosts.yml:4"),
        ({"hosts.yml": "- a\n- b\n"}, "hosts.yml", "must be a mapping of groups, got list", "hosts.yml"),
        ({"hosts.yml": "all:\n  - a\n"}, "hosts.yml", "group 'all' must be a mapping", "hosts.yml:1"),
        (
            {"hosts.yml": "all:\n  children:\n    leaf:\n      host:\n        l1:\n"},
            "hosts.yml",
            "unknown key in group 'leaf'; expected one of vars, children, hosts (did you mean 'hosts'?)",
            "hosts.yml:4",
        ),
        (
            {"hosts.yml": "all:\n  hosts:\n    a: 5\n"},
            "hosts.yml",
            "variables of host 'a' must be a mapping",
            "hosts.yml:3",
        ),
        (
            {"hosts.yml": "all:\n  hosts:\n    10:\n"},
            "hosts.yml",
            "host name 10 in group 'all' must be a string",
            "hosts.yml:3",
        ),
        (
            {"hosts.yml": "all:\n  hosts:\n    leaf[04:01]:\n"},
            "hosts.yml",
            "must have begin <= end",
            "hosts.yml:3",
        ),
        (
            {"hosts.yml": "all:\n  hosts:\n    leaf[1:4:0]:\n"},
            "hosts.yml",
            "step of at least 1",
            "hosts.yml:3",
        ),
        ({"hosts.yml": "all:\n  hosts:\n    leaf[01:4]:\n"}, "hosts.yml", "equal-length", "hosts.yml:3"),
        (
            {"hosts.yml": "all:\n  hosts:\n    leaf[a:3]:\n"},
            "hosts.yml",
            "numeric or single letters",
            "hosts.yml:3",
        ),
        ({"hosts.yml": "all:\n  hosts:\n    leaf[1:3:x]:\n"}, "hosts.yml", "non-numeric step", "hosts.yml:3"),
        (
            {"hosts.yml": "all:\n  vars: [1]\n"},
            "hosts.yml",
            "'vars' of group 'all' must be a mapping",
            "hosts.yml:2",
        ),
        (
            {"hosts.yml": "a:\n  children:\n    b:\n      children:\n        a:\n"},
            "hosts.yml",
            "adding group 'b' as child to 'a' creates a recursive dependency loop",
            "hosts.yml:2",
        ),
        (
            {"hosts.yml": "leaf:\n  hosts:\n    leaf:\n"},
            "hosts.yml",
            "'leaf' is both a host and a group",
            "hosts.yml",
        ),
        (
            {"hosts.yml": "plugin: example.absent.cloud_inventory\n"},
            "hosts.yml",
            "inventory plugin 'example.absent.cloud_inventory' is not installed",
            "hosts.yml",
        ),
        (
            {"hosts.yml": "all:\n  vars:\n    pw: !vault |\n      $ANSIBLE_VAULT;1.1;AES256\n      6162\n"},
            "hosts.yml",
            "Ansible Vault values are not supported",
            "hosts.yml:3",
        ),
        ({"hosts.json": '{"all": {"hosts": }'}, "hosts.json", "malformed JSON", "hosts.json:1"),
        ({"hosts.ini": "[leaf:hosts2]\nl1\n"}, "hosts.ini", "unknown type 'hosts2'", "hosts.ini:1"),
        (
            {"hosts.ini": "[leaf]\nl1 mtu\n"},
            "hosts.ini",
            "expected key=value host variable, got 'mtu'",
            "hosts.ini:2",
        ),
        ({"hosts.ini": "[leaf]\nl1 x='unclosed\n"}, "hosts.ini", "cannot parse host line", "hosts.ini:2"),
        (
            {"hosts.ini": "[leaf]\nl1\n\n[spine:vars]\nx=1\n"},
            "hosts.ini",
            "[spine:vars] is for undefined group 'spine'",
            "hosts.ini:4",
        ),
        (
            {"hosts.ini": "[fabric:children]\nleaf\n"},
            "hosts.ini",
            "[fabric:children] includes undefined group 'leaf'",
            "hosts.ini:2",
        ),
        (
            {"hosts.ini": "[leaf]\nl1\n[leaf:vars]\nnovalue\n"},
            "hosts.ini",
            "expected key=value, got 'novalue'",
            "hosts.ini:4",
        ),
        ({"hosts.ini": "[leaf group]\nl1\n"}, "hosts.ini", "invalid section entry", "hosts.ini:1"),
        (
            {"hosts.ini": "[leaf]\nl1:\n"},
            "hosts.ini",
            "a trailing ':' must be followed by a port",
            "hosts.ini:2",
        ),
        ({"hosts.ini": "[leaf]\nleaf[3:1]\n"}, "hosts.ini", "must have begin <= end", "hosts.ini:2"),
        (
            {"hosts.ini": "[a:children]\nb\n[b:children]\na\n[b]\n"},
            "hosts.ini",
            "recursive dependency loop",
            "hosts.ini:4",
        ),
        ({"hosts.toml": "[all]\n"}, "hosts.toml", "TOML inventories are not supported", "hosts.toml"),
        (
            {"hosts.yml": "leaf:\n  hosts: {l1: }\n", "group_vars/leaf.yml": "a: 1\nb: [\n"},
            "hosts.yml",
            "malformed YAML",
            "group_vars/leaf.yml:3",
        ),
        (
            {"hosts.yml": "leaf:\n  hosts: {l1: }\n", "group_vars/leaf.yml": "- a\n"},
            "hosts.yml",
            "a vars file must be a mapping of variables, got list",
            "group_vars/leaf.yml",
        ),
        (
            {"hosts.yml": "leaf:\n  hosts: {l1: }\n", "host_vars/l1.json": "{nope"},
            "hosts.yml",
            "malformed JSON",
            "host_vars/l1.json:1",
        ),
        ({"inv/hosts.yml": "all:\n", "inv/broken": "[g\nx y\n"}, "inv", "malformed YAML", "inv/broken"),
        ({"hosts.yml": "all:\n"}, "missing.yml", "inventory not found", "missing.yml"),
    ],
)
def test_bad_input(tmp_path: Path, files: dict[str, str], entry: str, message: str, where: str) -> None:
    _write(tmp_path, files)
    with pytest.raises(ConfigError) as err:
        load_inventory(tmp_path / entry)
    text = str(err.value)
    assert message in text
    assert f"{tmp_path}/{where}" in text
    assert "\n" not in text


def test_script_that_is_not_executable_is_named(tmp_path: Path) -> None:
    """A script source must be executable (Ansible only runs it then); the error says so."""
    script = tmp_path / "inventory.py"
    script.write_text("#!/usr/bin/env python3\nprint('{}')\n")
    with pytest.raises(ConfigError, match=r"inventory\.py: this inventory script is not executable"):
        load_inventory(script)
    script.chmod(0o755)
    assert list(load_inventory(script).hosts) == []


def test_yaml_fallback_to_ini_like_ansible(tmp_path: Path) -> None:
    # A file without an extension is tried as YAML, then as INI (Ansible's plugin order).
    inv = _inv(tmp_path, "[leaf]\nleaf01 rail=0\n", name="hosts")
    assert inv.host_vars("leaf01") == {"rail": 0}


def test_empty_file_is_an_empty_inventory(tmp_path: Path) -> None:
    inv = _inv(tmp_path, "")
    assert inv.hosts == {}
    with pytest.raises(ConfigError, match="matches no host"):
        inv.select(None)


def test_unknown_host(tmp_path: Path) -> None:
    inv = _inv(tmp_path, "all:\n  hosts:\n    leaf01:\n")
    with pytest.raises(ConfigError, match=r"unknown host 'leaf1' \(did you mean 'leaf01'\?\)"):
        inv.host_vars("leaf1")


# -- performance -----------------------------------------------------------------------------------


def test_large_inventory_loads_and_resolves(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAB_BIG_PW", "x")
    _write(
        tmp_path,
        {
            "hosts.yml": (
                "all:\n  children:\n    fabric:\n      children:\n"
                "        spine:\n          hosts:\n            spine-[001:032]:\n"
                "        leaf:\n          hosts:\n            leaf-p[0:7]-r[0:7]-[01:12]:\n"
                "    gpu_hosts:\n      hosts:\n        gpu-[00001:12500]:\n"
                "    pod_a:\n      hosts:\n        gpu-[00001:06250]:\n        leaf-p[0:3]-r[0:7]-[01:12]:\n"
            ),
            "group_vars/all.yml": "ansible_user: admin\nansible_password: \"{{ lookup('env', 'FAB_BIG_PW') }}\"\n",
            "group_vars/gpu_hosts.yml": "fabline_role: host\nrail_interfaces: [eth0, eth1]\n",
            "group_vars/leaf.yml": "fabline_role: leaf\nfabline_platform: sonic\n",
            "group_vars/spine.yml": "fabline_role: spine\nansible_network_os: arista.eos.eos\n",
        },
    )
    inv = load_inventory(tmp_path / "hosts.yml")
    listing = inv.to_ansible_list()
    devices = inv.devices()
    assert len(inv.hosts) == 12500 + 768 + 32
    assert len(listing["_meta"]["hostvars"]) == 13300
    assert len(devices) == 13300
    assert devices[-1].password == "x"
    assert sorted(listing["pod_a"]["hosts"])[:2] == ["gpu-00001", "gpu-00002"]
    assert len(listing["pod_a"]["hosts"]) == 6250 + 384
    # How long this takes is a benchmark (bench/inventory_bench.py, docs/benchmarks.md), not a test.


def test_plugin_config_without_ansible_core_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the optional ansible-core a plugin file is one line naming fabline[ansible]."""
    from fabline.inventory import plugins

    monkeypatch.setattr(plugins, "_ansible", lambda: None)
    config = tmp_path / "netbox.yml"
    config.write_text("plugin: netbox.netbox.nb_inventory\napi_endpoint: https://netbox.example\n")
    with pytest.raises(ConfigError) as err:
        load_inventory(config)
    message = str(err.value)
    assert message.startswith(
        f"{config}: plugin: inventory plugin 'netbox.netbox.nb_inventory' needs ansible-core"
    )
    assert "fabline[ansible]" in message and "\n" not in message


def test_saved_list_json_and_script_form(tmp_path: Path) -> None:
    """The `ansible-inventory --list` form: hostvars from `_meta`, groups with lists, bare host lists."""
    saved = tmp_path / "inv.json"
    saved.write_text(
        '{"_meta": {"hostvars": {"l1": {"rail": 0}, "ghost": {"x": 1}}},'
        ' "all": {"children": ["ungrouped", "leaf"]}, "leaf": {"hosts": ["l1"], "vars": {"mtu": 9100}},'
        ' "old": ["o1"]}'
    )
    inv = load_inventory(saved)
    assert list(inv.hosts) == ["l1", "o1"]  # a host only in _meta is in no group: Ansible ignores it too
    assert inv.host_vars("l1") == {"mtu": 9100, "rail": 0}
    assert inv.host_groups("o1") == ["old"]


@pytest.mark.parametrize(
    ("host_vars", "platform"),
    [
        # arista.eos platform options: network_cli (SSH) or httpapi (eAPI on ansible_httpapi_port).
        (
            "{ansible_network_os: arista.eos.eos, ansible_connection: ansible.netcommon.network_cli}",
            "arista_eos",
        ),
        ("{ansible_network_os: arista.eos.eos, ansible_connection: ansible.netcommon.httpapi}", "arista_eos"),
        ("{ansible_network_os: cisco.nxos.nxos, ansible_connection: httpapi}", "cisco_nxos"),
        ("{ansible_network_os: dellemc.enterprise_sonic.sonic, ansible_connection: network_cli}", "sonic"),
        # The nvidia.nvue collection's examples: nvidia.nvue.httpapi over ansible.netcommon.httpapi.
        (
            "{ansible_network_os: nvidia.nvue.httpapi, ansible_connection: ansible.netcommon.httpapi}",
            "cumulus",
        ),
    ],
)
def test_api_connections_keep_the_ssh_settings(tmp_path: Path, host_vars: str, platform: str) -> None:
    """An inventory written for httpapi is read unchanged: its API port is not the SSH port."""
    inv = _inv(
        tmp_path,
        "leaf:\n  hosts:\n    sw1:\n  vars:\n    fabline_role: leaf\n",
        extra={
            "host_vars/sw1.yml": host_vars + "\n",
            "group_vars/leaf.yml": "ansible_httpapi_port: 443\nansible_httpapi_use_ssl: true\nansible_user: ro\n",
        },
    )
    device = inv.device("sw1")
    assert (device.platform, device.port, device.user) == (platform, None, "ro")


def test_nvidia_cumulus_is_not_a_collection_name() -> None:
    """Only names the collections use: there is no nvidia.cumulus collection."""
    assert platform_for_network_os("nvidia.cumulus.cumulus") is None
    assert platform_for_network_os("nvidia.nvue.httpapi") == "cumulus"


_PLAIN_CASES = [
    "a: 1\nb: [1, 2.5, .inf, .nan, ~, null, true, yes, no, on, 0o17, 0x1F, 1_000, 190:20:30, 2001-12-14,"
    " 2001-12-14t21:59:43.10-05:00, '0', \"q\", '']\nc:\nd: ''",
    "a: |\n  text\n  more\nb: >\n  folded\n  x\n",
    "x:\n  - y:\n  - \n",
    "\"k\": 1\n'j': 2\n1: int key\n2.5: f\nnull: n\ntrue: t\n2001-12-14: d",
    "a: 1\na: 2",
    "{a: 1, b: [x, y]}",
    "- 1\n- - 2\n  - 3\n- {}\n- []",
    "a: 1\n...\n",
    "? a\n? b",
    # not plain: the full loader builds (or refuses) them
    "a: &x [1]\nb: *x",
    "base: &b {x: 1}\nc:\n  <<: *b\n  y: 2",
    "a: =",
    "a: !unsafe '{{ x }}'",
    "--- 1\n--- 2",
    "",
    "# only a comment",
    "? [1]\n: 2",
    "a: b: c",
    "a: [1,\n",
    "d: 2001-13-45",
]


@pytest.mark.parametrize("text", _PLAIN_CASES)
def test_inventory_yaml_quick_path_builds_what_the_loader_builds(text: str) -> None:
    """The one-pass reader of plain inventory YAML gives what PyYAML's loader gives (types, key
    order, duplicate keys, empty values); for anything else it steps aside and the loader decides
    (value or error, as before)."""
    import math

    from fabline.inventory.files import _NOT_PLAIN, _Loader, _plain_load

    def same(a: object, b: object) -> bool:
        if type(a) is not type(b):
            return False
        if isinstance(a, dict) and isinstance(b, dict):
            return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
        if isinstance(a, list) and isinstance(b, list):
            return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
        if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
            return math.isnan(b)
        return a == b

    got = _plain_load(text)
    try:
        want: object = yaml.load(text, Loader=_Loader)
    except (yaml.YAMLError, ValueError):
        assert got is _NOT_PLAIN
        return
    assert got is _NOT_PLAIN or same(got, want), (got, want)
    plain = _PLAIN_CASES.index(text) < _PLAIN_CASES.index("a: &x [1]\nb: *x")
    assert (got is not _NOT_PLAIN) == plain


def test_inventory_yaml_quick_path_equals_the_loader_on_every_repository_yaml() -> None:
    """Every YAML file of the repository (inventories, group_vars, baselines, fixtures) reads the
    same through the quick path, when it takes it."""
    from fabline.inventory.files import _NOT_PLAIN, _Loader, _plain_load

    taken = 0
    for path in sorted(REPO.glob("**/*.y*ml")):
        if ".venv" in path.parts or not path.is_file():
            continue
        text = path.read_text("utf-8", errors="replace")
        got = _plain_load(text)
        if got is _NOT_PLAIN:
            continue
        taken += 1
        assert got == yaml.load(text, Loader=_Loader), path
    assert taken > 50
