"""Hostile inventories: a host name is a file name in a snapshot, so only a plain one is accepted.

Issue 11, item 1: an inventory host named ``/../../../some/dir/important`` made ``fabline collect``
rename that directory to ``.old``, remove it, and write ``important.json`` beside it, even for an
unreachable device. Every inventory path (YAML, JSON, INI, ranges, directories) now rejects such a
name at load time with ``FILE:LINE: host ...: not a valid device name`` and exit 2.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from fabline.errors import ConfigError
from fabline.inventory import load_inventory
from tests.conftest import REPO_ROOT
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


# -- item 9: YAML bombs and template bombs -------------------------------------------------------

LAB_INVENTORY = REPO_ROOT / "inventory" / "lab.yml"
LAUGHS = "".join(
    f"{c}: &{c} [" + ", ".join([f"*{p}"] * 9) + "]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True)
)
BILLION_LAUGHS = 'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n' + LAUGHS


def _inventory(tmp_path: Path, host_vars: str = "", extra: str = "") -> Path:
    return write(
        tmp_path / "inv.yml",
        f"""
        leaf:
          vars: {{fabline_role: leaf, fabline_platform: sonic}}
          hosts:
            leaf1: {{{host_vars}}}
        {extra}
        """,
    )


@pytest.mark.parametrize("command", ["validate", "inventory", "check"])
def test_billion_laughs_inventory_is_refused_at_once(tmp_path: Path, command: str) -> None:
    inv = tmp_path / "inv.yml"
    inv.write_text(
        "leaf:\n  hosts:\n    leaf1:\n  vars:\n    fabline_role: leaf\n    "
        + BILLION_LAUGHS.replace("\n", "\n    ")
    )
    args = {
        "validate": ["validate", "-i", inv],
        "inventory": ["inventory", "-i", inv, "--list"],
        "check": [
            "check",
            "-i",
            inv,
            "--snapshot",
            REPO_ROOT / "examples" / "lab-snapshot",
            "-o",
            tmp_path / "o",
        ],
    }[command]
    line = one_line_error(fabline(*args, timeout=30))
    assert f"{inv}:" in line
    assert "YAML expands to more than 10000000 nodes through its aliases (an alias bomb?)" in line


def test_billion_laughs_in_group_vars(tmp_path: Path) -> None:
    inv = _inventory(tmp_path)
    write(tmp_path / "group_vars" / "leaf.yml", BILLION_LAUGHS)
    line = one_line_error(fabline("validate", "-i", inv, timeout=30))
    assert f"{tmp_path / 'group_vars' / 'leaf.yml'}:" in line and "alias bomb" in line


@pytest.mark.parametrize("style", ["block", "flow", "json"])
def test_deep_nesting_is_refused(tmp_path: Path, style: str) -> None:
    depth = 50_000
    if style == "json":
        inv = tmp_path / "inv.json"
        inv.write_text('{"leaf": {"hosts": {"leaf1": {"x": ' + "[" * depth + "]" * depth + "}}}}")
        expected = "JSON nested too deeply"
    else:
        inv = tmp_path / "inv.yml"
        if style == "flow":
            nested = "[" * depth + "]" * depth
            expected = "nesting depth"  # libyaml's own limit (1,000) speaks first
        else:
            nested = "\n" + "".join(f"{'  ' * (i + 3)}k{i}:\n" for i in range(300))
            expected = "YAML nested deeper than 100 levels"
        inv.write_text(f"leaf:\n  hosts:\n    leaf1:\n      x: {nested}\n")
    line = one_line_error(fabline("validate", "-i", inv, timeout=30))
    assert expected in line and str(inv) in line


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("{{ 'a' * 10**10 }}", "'*' would build more than 1048576 items"),
        ("{{ range(10**9) | list | length }}", "range of 1000000000 items (at most 10000)"),
        ("{% for i in range(9999) %}{% for j in range(9999) %}{% endfor %}{% endfor %}x",
         "ranges of more than 100000 items in one render"),
        ("{% include '/etc/passwd' %}", "'{% include %}' is not allowed in fabline templates"),
        ("{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}", "'{% macro %}' is not allowed in fabline templates"),
        ("{{ 'x' | center(10**9) }}", "'center' width 1000000000 (at most 1048576)"),
        ("{{ 2 ** 100000 }}", "'**' result larger than 4096 bits"),
        ("{% for x in ('a' * 1000000) | list %}{% for y in ('a' * 1000000) | list %}{% endfor %}{% endfor %}",
         "template took longer than 2 s"),
    ],
)  # fmt: skip
def test_template_bombs_in_inventory_vars(tmp_path: Path, template: str, expected: str) -> None:
    inv = _inventory(tmp_path, f"bomb: {json.dumps(template)}")
    line = one_line_error(fabline("validate", "-i", inv, timeout=60))
    assert line.endswith(f"host 'leaf1': variable 'bomb': {expected}"), line
    assert str(inv) in line


BASELINE = """
version: 1
rules:
  - id: bomb
    description: a rule whose expected value is a template bomb
    severity: minor
    select: {{roles: [leaf]}}
    expect:
      - {{path: mtu, equals: {value}}}
"""


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("{{ 'a' * 10**10 }}", "'*' would build more than 1048576 items"),
        ("{{ range(10**9) | list | length }}", "range of 1000000000 items (at most 10000)"),
        ("{% include 'x' %}", "'{% include %}' is not allowed in fabline templates"),
        ("{{ 'a' - 1 }}", "template failed (TypeError)"),
    ],
)
@pytest.mark.parametrize("command", ["validate", "check"])
def test_template_bombs_in_baseline_values(
    tmp_path: Path, template: str, expected: str, command: str
) -> None:
    baseline = write(tmp_path / "bomb.yml", BASELINE.format(value=json.dumps(template)))
    args = ["-i", LAB_INVENTORY, "-b", baseline]
    if command == "validate":
        line = one_line_error(fabline(command, *args, timeout=60))
        assert "rules[id=bomb]" in line and expected in line, line
        return
    # check: a tag refused on sight stops it (exit 2); a limit met while rendering for a device is
    # that device's `error` result (never a pass, never a crash) and the run goes on.
    out = tmp_path / "out"
    ran = fabline(
        command, *args, "--snapshot", REPO_ROOT / "examples" / "lab-snapshot", "-o", out, "-f", "json"
    )
    if ran.code == 2:
        assert "rules[id=bomb]" in ran.err and expected in ran.err, ran.err
        return
    assert ran.code in (3, 4), ran.err[-2000:]  # (the lab snapshot also fails a Python check)
    results = [r for r in json.loads((out / "report.json").read_text())["results"] if r["check"] == "bomb"]
    assert results and {r["status"] for r in results} == {"error"}
    assert all(expected in r["message"] for r in results), results[0]


def test_yaml_bombs_in_baseline(tmp_path: Path) -> None:
    bomb = write(tmp_path / "bomb.yml", "version: 1\n" + BILLION_LAUGHS)
    line = one_line_error(fabline("validate", "-i", LAB_INVENTORY, "-b", bomb, timeout=30))
    assert f"{bomb}:" in line and "alias bomb" in line
    deep = tmp_path / "deep.yml"
    deep.write_text("version: 1\nrules: " + "[" * 50_000 + "]" * 50_000 + "\n")
    line = one_line_error(fabline("validate", "-i", LAB_INVENTORY, "-b", deep, timeout=30))
    assert f"{deep}:2: YAML nested deeper than 100 levels" in line


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "huge"])
def test_user_files_that_are_not_files(tmp_path: Path, kind: str) -> None:
    inv = tmp_path / "inv.yml"
    if kind == "fifo":
        os.mkfifo(inv)
        expected = "is not a regular file (a FIFO)"
    elif kind == "dev-zero":
        inv.symlink_to("/dev/zero")
        expected = "is not a regular file (a character device)"
    else:
        with inv.open("wb") as fh:
            fh.truncate(10 * 1024**3)
        expected = "is larger than 32 MiB (10240 MiB)"
    line = one_line_error(fabline("validate", "-i", inv, timeout=30))
    assert line == f"fabline: error: {inv}: cannot read inventory file: {expected}", line


def test_plain_templates_still_render(tmp_path: Path) -> None:
    inv = _inventory(
        tmp_path,
        'mtu: 9000, label: "{{ inventory_hostname | upper }}-{{ mtu * 2 }}", '
        'rng: "{% for i in range(3) %}{{ i }}{% endfor %}", fmt: "{{ \'%05d\' % mtu }}"',
    )
    device = load_inventory(inv).device("leaf1")
    assert device.vars["label"] == "LEAF1-18000"
    assert device.vars["rng"] == "012"
    assert device.vars["fmt"] == "09000"
