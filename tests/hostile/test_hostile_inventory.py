"""Hostile inventories: a host name is a file name in a snapshot, so only a plain one is accepted.

Issue 11, item 1: an inventory host named ``/../../../some/dir/important`` made ``fabline collect``
rename that directory to ``.old``, remove it, and write ``important.json`` beside it, even for an
unreachable device. Every inventory path (YAML, JSON, INI, ranges, directories) now rejects such a
name at load time with ``FILE:LINE: host ...: not a valid device name`` and exit 2.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fabline.errors import ConfigError
from fabline.inventory import load_inventory
from tests.hostile.collect_support import fabline, one_line_error, write

UNSAFE_NAMES = ["a/b", "..", ".", "/abs", "a\0b", "..\\x", "-rf", "a b", "x" * 201, "\x1bred"]


def _victim(tmp_path: Path) -> Path:
    victim = tmp_path / "some" / "dir" / "important"
    victim.mkdir(parents=True)
    (victim / "keep.txt").write_text("precious\n")
    return victim


def _yaml_quoted(name: str) -> str:
    return '"' + name.replace("\\", "\\\\").replace("\0", "\\0").replace("\x1b", "\\e") + '"'


@pytest.mark.parametrize("command", ["collect", "check", "validate", "run"])
def test_the_reported_case_touches_nothing_outside(tmp_path: Path, command: str) -> None:
    victim = _victim(tmp_path)
    hostile = "/../../.." + str(victim)
    inv = write(
        tmp_path / "inv.yml",
        f"""
        all:
          children:
            leaf:
              vars: {{fabline_role: leaf, fabline_platform: sonic}}
              hosts:
                leaf1: {{ansible_host: 127.0.0.1, ansible_port: 9}}
                {hostile}: {{ansible_host: 127.0.0.1, ansible_port: 9}}
        """,
    )
    snap = tmp_path / "snap"
    snap.mkdir()
    (snap / "state").mkdir()
    args = {
        "collect": ["collect", "-i", inv, "-o", snap, "--timeout", "1", "--retries", "0"],
        "check": ["check", "-i", inv, "--snapshot", snap, "-o", tmp_path / "out"],
        "validate": ["validate", "-i", inv],
        "run": ["run", "-i", inv, "-s", snap, "-o", tmp_path / "out", "--timeout", "1", "--retries", "0"],
    }[command]
    line = one_line_error(fabline(*args, timeout=60))
    assert line == f"fabline: error: {inv}:7: host {hostile!r}: not a valid device name (it contains '/')"
    assert sorted(p.name for p in victim.iterdir()) == ["keep.txt"]
    assert (victim / "keep.txt").read_text() == "precious\n"
    assert sorted(p.name for p in victim.parent.iterdir()) == ["important"]  # no .old, no important.json
    assert not list((snap / "state").iterdir())


@pytest.mark.parametrize("name", UNSAFE_NAMES, ids=repr)
def test_yaml_host_names(tmp_path: Path, name: str) -> None:
    inv = write(tmp_path / "inv.yml", f"all:\n  hosts:\n    ok1:\n    {_yaml_quoted(name)}:\n")
    with pytest.raises(ConfigError) as err:
        load_inventory(inv)
    assert str(err.value).startswith(f"{inv}:4: host {name!r}: not a valid device name (it ")
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("name", [n for n in UNSAFE_NAMES if " " not in n and "\\" not in n], ids=repr)
def test_ini_host_names(tmp_path: Path, name: str) -> None:
    # (shlex would take a backslash and a space apart before the name rule sees them)
    inv = tmp_path / "hosts.ini"
    inv.write_bytes(b"[leaf]\nok1\n" + name.encode() + b" fabline_role=leaf\n")
    with pytest.raises(ConfigError) as err:
        load_inventory(inv)
    assert str(err.value).startswith(f"{inv}:3: host {name!r}: not a valid device name (it ")


def test_json_inventory_host_name(tmp_path: Path) -> None:
    inv = write(tmp_path / "inv.json", '{"leaf": {"hosts": {"ok1": null, "../../x": null}}}')
    with pytest.raises(ConfigError, match=r"host '\.\./\.\./x': not a valid device name"):
        load_inventory(inv)


@pytest.mark.parametrize(
    ("entry", "bad"),
    [("leaf[01:02]/x", "leaf01/x"), ("..[1:2]", "..1"), ("[a:b]/../y", "a/../y")],
)
def test_host_ranges_expand_to_checked_names(tmp_path: Path, entry: str, bad: str) -> None:
    yml = write(tmp_path / "inv.yml", f'leaf:\n  hosts:\n    "{entry}":\n')
    with pytest.raises(ConfigError) as err:
        load_inventory(yml)
    assert str(err.value).startswith(f"{yml}:3: host {bad!r}: not a valid device name")
    ini = write(tmp_path / "hosts.ini", f"[leaf]\n{entry}\n")
    with pytest.raises(ConfigError) as err:
        load_inventory(ini)
    assert str(err.value).startswith(f"{ini}:2: host {bad!r}: not a valid device name")


def test_inventory_directory_names_the_file(tmp_path: Path) -> None:
    folder = tmp_path / "inventory"
    write(folder / "10-ok.yml", "leaf:\n  hosts:\n    leaf1:\n")
    write(folder / "20-bad.ini", "[spine]\nspine1\n/etc/passwd\n")
    with pytest.raises(ConfigError) as err:
        load_inventory(folder)
    assert str(err.value) == (
        f"{folder / '20-bad.ini'}:3: host '/etc/passwd': not a valid device name (it contains '/')"
    )


def test_group_names_cannot_leave_group_vars(tmp_path: Path) -> None:
    # A group named '..' would read group_vars/.. (the inventory folder) as its variables.
    write(tmp_path / "secret.yml", "ansible_password: hunter2\n")
    inv = write(
        tmp_path / "inv" / "hosts.yml", 'all:\n  children:\n    "..":\n      hosts:\n        leaf1:\n'
    )
    (tmp_path / "inv" / "group_vars").mkdir()
    with pytest.raises(ConfigError, match=r"hosts.yml:3: group '\.\.': not a valid group name"):
        load_inventory(inv)
    ini = write(tmp_path / "inv2.ini", "[a/b]\nleaf1\n")
    with pytest.raises(ConfigError, match=r"inv2.ini:1: group 'a/b': not a valid group name"):
        load_inventory(ini)


def test_host_vars_only_for_plain_names(tmp_path: Path) -> None:
    # host_vars/<name> is looked up only for names that passed the rule; a file named like an
    # escape is simply an orphan (validate warns about it), never read.
    inv = write(tmp_path / "inv.yml", "leaf:\n  hosts:\n    leaf1:\n")
    write(tmp_path / "host_vars" / "leaf1.yml", "fabline_role: leaf\n")
    loaded = load_inventory(inv)
    assert loaded.host_vars("leaf1") == {"fabline_role": "leaf"}
    inv2 = write(tmp_path / "inv2.yml", 'leaf:\n  hosts:\n    "host_vars/../leaf1":\n')
    with pytest.raises(ConfigError, match="not a valid device name"):
        load_inventory(inv2)


@pytest.mark.parametrize(
    "name", ["leaf-01.dc1.example.com", "10.0.0.1", "gpu_node_7", "sw@pod1", "a:b", "0leaf"]
)
def test_plain_names_still_load(tmp_path: Path, name: str) -> None:
    inv = write(tmp_path / "inv.yml", f'leaf:\n  hosts:\n    "{name}":\n')
    assert list(load_inventory(inv).hosts) == [name]
