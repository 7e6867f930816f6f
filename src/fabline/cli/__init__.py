"""The ``fabline`` command line.

Errors in user input print one line (``fabline: error: FILE:LINE: KEY: problem``) and exit 2;
a bug prints one line and exits 1 (set ``FABLINE_DEBUG=1`` for the traceback).
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from fabline import __version__, perf
from fabline.cli.common import (
    baseline_option,
    baseline_paths,
    checks_dir_or_default,
    checks_option,
    fabric_inputs_options,
    fail_on_option,
    formats_option,
    friendly,
    inventory_option,
    parse_formats,
    passes_option,
)
from fabline.errors import ConfigError
from fabline.results import validation_exit_code

if TYPE_CHECKING:
    from fabline.inventory import Sources

# The commands of a feature (collection, simulator, design, history) are in their own module of this
# package and registered from it, imported only when needed: a command's module when that command runs, every
# module for the command list (``--help``) or a name not in the hints. ``fabline check`` thus never
# imports the SSH stacks. The hints only save imports; a command missing from them is still found.
_COMMAND_MODULES: dict[str, tuple[str, ...]] = {
    "fabline.cli.collect": ("collect", "run", "demo"),
    "fabline.cli.sim": ("sim",),
    "fabline.cli.design": ("design", "render"),
    "fabline.cli.history": ("history", "diff", "drift"),
    "fabline.cli.remediate": ("remediate",),
}


class _FablineGroup(click.Group):
    """The main group: built-in commands, plus feature commands registered on first use."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._loaded: set[str] = set()

    def _load(self, module_name: str) -> None:
        import importlib

        if module_name in self._loaded:
            return
        self._loaded.add(module_name)
        module = importlib.import_module(module_name)
        for command in module.COMMANDS:
            self.add_command(command)

    def _load_all(self) -> None:
        for module_name in _COMMAND_MODULES:
            self._load(module_name)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands:
            for module_name, names in _COMMAND_MODULES.items():
                if cmd_name in names:
                    self._load(module_name)
        if cmd_name not in self.commands:
            self._load_all()
        return self.commands.get(cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        self._load_all()
        return super().list_commands(ctx)

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        # No arguments: the command line of this process (the ``fabline`` script, ``python -m
        # fabline``); a caller that passes them (tests, CliRunner) keeps its process.
        perf.own_process(args is None and standalone_mode)
        return super().main(args, prog_name, complete_var, standalone_mode, **extra)


@click.group(
    cls=_FablineGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110}
)
@click.version_option(__version__, prog_name="fabline")
def main() -> None:
    """fabline: compliance and baseline checks for RoCE GPU-cluster fabrics.

    Exit codes: 0 all pass, 2 usage or configuration error, 3 some results are errors and none
    fail, 4 at least one failure at or above --fail-on, 1 internal error.
    """


@main.command()
@inventory_option
@click.option(
    "--snapshot", type=click.Path(path_type=Path), default=None, help="Snapshot folder (state/*.json)."
)
@click.option("--intended", type=click.Path(path_type=Path), default=None,
              help="Instead of a snapshot: a folder of rendered configs (fabline render), parsed as if collected.")  # fmt: skip
@click.option("--reparse", is_flag=True, help="Re-parse the snapshot's raw/ evidence into state/ first.")
@baseline_option
@checks_option
@click.option("-l", "--limit", default=None, help="Ansible host pattern, e.g. 'leaf*', 'fabric:!leaf-r2-a'.")
@click.option("-o", "--out", type=click.Path(path_type=Path), default=None, help="Folder for report files.")
@formats_option
@passes_option
@fail_on_option
@click.option("--today", type=click.DateTime(["%Y-%m-%d"]), default=None,
              help="Date waivers expire against (default: today).")  # fmt: skip
@fabric_inputs_options
@click.option("--history", "history", is_flag=False, flag_value=".fabline/history.sqlite", default=None,
              type=click.Path(path_type=Path), metavar="[DB]",
              help="Record the run in the history (default DB .fabline/history.sqlite).")  # fmt: skip
@click.option("-q", "--quiet", is_flag=True, help="No console summary.")
@friendly
def check(
    inventory: Sources,
    snapshot: Path | None,
    intended: Path | None,
    reparse: bool,
    baselines: tuple[Path, ...],
    checks_dir: Path | None,
    limit: str | None,
    out: Path | None,
    formats: str,
    passes: str,
    fail_on: str,
    today: dt.datetime | None,
    previous: Path | None,
    cabling: Path | None,
    history: Path | None,
    quiet: bool,
) -> None:
    """Check a snapshot against the baseline and write reports."""
    from fabline.runner import run_check

    fmts = parse_formats(formats)
    if (snapshot is None) == (intended is None):
        raise ConfigError("give exactly one of --snapshot DIR and --intended CONFIGS_DIR")
    report, written = run_check(
        inventory=inventory,
        snapshot=snapshot or Path(),
        intended=intended,
        reparse=reparse,
        baselines=baseline_paths(baselines),
        checks_dir=checks_dir_or_default(checks_dir),
        limit=limit,
        out=out,
        formats=fmts,
        fail_on=fail_on,
        today=today.date() if today else None,
        previous=previous,
        cabling=cabling,
        history=history,
        passes=passes,
    )
    if not quiet:
        from rich.console import Console

        from fabline.reports.console import print_summary

        console = Console(stderr=False)
        print_summary(report, console)
        for path in written:
            console.print(f"wrote {path}", highlight=False)
    perf.finish(report.exit_code)


@main.command()
@inventory_option
@baseline_option
@checks_option
@click.option("--snapshot", type=click.Path(path_type=Path), default=None,
              help="Also validate every state file against the state schema v1 JSON Schema.")  # fmt: skip
@friendly
def validate(
    inventory: Sources, baselines: tuple[Path, ...], checks_dir: Path | None, snapshot: Path | None
) -> None:
    """Lint the inventory, the baseline and site checks (and optionally a snapshot) without running."""
    from fabline.runner import validate_all

    lines, problems = validate_all(
        inventory, baseline_paths(baselines), checks_dir_or_default(checks_dir), snapshot
    )
    for line in lines:
        click.echo(line)
    for line in problems:
        click.echo(f"fabline: error: {line}", err=True)
    sys.exit(validation_exit_code(len(problems)))


@main.command("inventory")
@inventory_option
@click.option(
    "--list", "as_list", is_flag=True, help="Print the inventory as `ansible-inventory --list` does."
)
@click.option("--host", default=None, help="Print one host's variables (secrets masked).")
@click.option(
    "-l", "--limit", default=None, help="Ansible host pattern (with --list: as ansible-inventory --limit)."
)
@friendly
def inventory_cmd(inventory: Sources, as_list: bool, host: str | None, limit: str | None) -> None:
    """Show the resolved inventory."""
    from fabline.inventory import load_inventory, sources_label
    from fabline.secret_keys import public_vars

    inv = load_inventory(inventory)
    if as_list:
        click.echo(json.dumps(inv.to_ansible_list(limit), indent=4, sort_keys=False))
    elif host:
        if host not in inv.hosts:
            raise ConfigError(f"host {host!r} is not in the inventory", file=sources_label(inventory))
        variables = inv.host_vars(host)
        masked = {k: (v if k in public_vars(variables) else "********") for k, v in variables.items()}
        click.echo(json.dumps(masked, indent=4, default=str))
    else:
        for d in inv.devices(limit):
            click.echo(f"{d.name}\t{d.platform}\t{d.role}\t{d.host}")


@main.command()
@click.argument("directory", type=click.Path(path_type=Path))
@click.option("--force", is_flag=True, help="Write into a folder that is not empty.")
@friendly
def init(directory: Path, force: bool) -> None:
    """Create a fabline workspace: inventory/, baseline/, checks/, templates/, reports/, examples/."""
    from fabline.baseline import packaged_workspace

    if directory.exists() and any(directory.iterdir()) and not force:
        raise ConfigError(
            "folder is not empty (use --force to add the workspace files anyway)", file=directory
        )
    source = packaged_workspace()
    directory.mkdir(parents=True, exist_ok=True)
    for part in ("inventory", "baseline", "checks", "templates", "examples"):
        src = source / part
        if src.is_dir():
            shutil.copytree(src, directory / part, dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))  # fmt: skip
    (directory / "reports").mkdir(exist_ok=True)
    gitignore = directory / ".gitignore"
    if not gitignore.exists():
        gitignore.write_text("reports/\n.fabline/\n", "utf-8")
    click.echo(f"workspace ready in {directory}")
    click.echo(
        f"try: cd {directory} && fabline check -i inventory/lab.yml --snapshot examples/lab-snapshot --out reports/"
    )


@main.group()
def checks() -> None:
    """The checks a run applies."""


@checks.command("list")
@baseline_option
@checks_option
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@friendly
def checks_list(baselines: tuple[Path, ...], checks_dir: Path | None, as_json: bool) -> None:
    """List every rule and Python check with its severity and description."""
    from fabline.runner import build_engine

    engine = build_engine(
        baseline_paths(baselines), checks_dir_or_default(checks_dir), host_sets=lambda _p: set()
    )
    rows = engine.describe_checks()
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title="checks")
    for col in ("id", "kind", "severity", "description"):
        table.add_column(col, overflow="fold")
    for r in rows:
        table.add_row(r["id"], r["kind"], r["severity"], r["description"])
    Console().print(table)


@main.command()
@click.option(
    "--platform", "platform_id", required=True, help="sonic, cumulus, arista_eos, cisco_nxos or linux."
)
@click.option("--command", "command_line", required=True, help="The command that produced the output.")
@click.argument("file", type=click.Path(path_type=Path))
@friendly
def parse(platform_id: str, command_line: str, file: Path) -> None:
    """Parse one command's saved output and print the state fragment as JSON."""
    from fabline.platforms import parse_output

    try:
        text = file.read_text("utf-8", errors="replace")
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror}", file=file) from None
    fragment = parse_output(platform_id, command_line, text)
    click.echo(json.dumps(fragment, indent=2, sort_keys=False))
