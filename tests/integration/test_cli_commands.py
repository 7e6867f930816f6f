"""The command list: every command is listed and found, feature modules are imported on demand."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest
from click.testing import CliRunner

from fabline import cli
from tests.conftest import REPO_ROOT


def _feature_commands() -> dict[str, str]:
    """Command name -> module, from each feature module's ``COMMANDS``."""
    out = {}
    for module_name in cli._COMMAND_MODULES:
        for command in importlib.import_module(module_name).COMMANDS:
            assert command.name is not None
            out[command.name] = module_name
    return out


def test_help_lists_every_command() -> None:
    result = CliRunner().invoke(cli.main, ["--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    listed = {line.split()[0] for line in result.output.split("Commands:")[1].splitlines() if line.strip()}
    builtin = {"check", "checks", "init", "inventory", "parse", "validate"}
    assert listed == builtin | set(_feature_commands())


def test_module_hints_match_the_modules() -> None:
    """The hints name each command's own module (a stale hint only costs imports, but keep it exact)."""
    hinted = {name: module for module, names in cli._COMMAND_MODULES.items() for name in names}
    assert hinted == _feature_commands()


def test_every_feature_command_resolves_in_a_fresh_group() -> None:
    group = cli._FablineGroup(commands=[])
    ctx = cli.main.make_context("fabline", ["--help"], resilient_parsing=True)
    for name in _feature_commands():
        assert group.get_command(ctx, name) is not None, name
    assert group.get_command(ctx, "no-such-command") is None


def test_check_imports_no_ssh_stack() -> None:
    """``fabline check`` (and the CLI module) do not import what only collection and the simulator need."""
    code = (
        "import sys\n"
        "from fabline.cli import main\n"
        "try:\n"
        "    main(['check', '--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m for m in ('asyncssh', 'paramiko', 'fabline.sim.server', 'fabline.cli.collect')"
        " if m in sys.modules))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60, check=True
    )
    assert proc.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize("command", ["history", "diff", "drift"])
def test_history_commands_import_no_collection_stack(command: str) -> None:
    """``fabline history``/``diff``/``drift`` load without paramiko and the collectors (drift imports
    them only when it collects)."""
    code = (
        "import sys\n"
        "from fabline.cli import main\n"
        "try:\n"
        f"    main([{command!r}, '--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "assert 'fabline.cli.history' in sys.modules\n"
        "print(sorted(m for m in ('paramiko', 'netmiko', 'fabline.collect.transports', 'fabline.cli.collect')"
        " if m in sys.modules))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60, check=True
    )
    assert proc.stdout.strip().splitlines()[-1] == "[]"
