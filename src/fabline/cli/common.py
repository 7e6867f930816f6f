"""Pieces shared by every ``fabline`` command module: error handling, common options, parsing.

The main group lives in :mod:`fabline.cli`; feature modules (collection, simulator, design,
history) import what they share from here, so any of them can be imported on its own.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from fabline.errors import ConfigError, FablineError
from fabline.reports import FORMATS as REPORT_FORMATS
from fabline.reports.jsonreport import PASS_MODES
from fabline.results import ExitCode

F = TypeVar("F", bound=Callable[..., Any])

#: Report formats, from the one format registry.
FORMATS = tuple(REPORT_FORMATS)
SEVERITIES = ("critical", "major", "minor", "info")


def friendly(func: F) -> F:
    """Turn fabline errors and unusable files into one line + exit 2, and bugs into one line + exit 1."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except FablineError as exc:
            click.echo(f"fabline: error: {exc}", err=True)
            sys.exit(ExitCode.USAGE)
        except (click.exceptions.Exit, click.ClickException, click.exceptions.Abort, SystemExit):
            raise
        except KeyboardInterrupt:
            click.echo("fabline: interrupted", err=True)
            sys.exit(ExitCode.INTERRUPTED)
        except Exception as exc:
            if os.environ.get("FABLINE_DEBUG"):
                raise
            if isinstance(exc, OSError) and exc.filename is not None:
                # A file or folder fabline was told to read or write: the user's to fix, not a bug.
                target = f"{exc.filename}" + (f" -> {exc.filename2}" if exc.filename2 else "")
                click.echo(f"fabline: error: {target}: {exc.strerror or type(exc).__name__}", err=True)
                sys.exit(ExitCode.USAGE)
            click.echo(
                f"fabline: internal error: {type(exc).__name__}: {exc} (set FABLINE_DEBUG=1 for a traceback)",
                err=True,
            )
            sys.exit(ExitCode.INTERNAL)

    return wrapper  # type: ignore[return-value]


def inventory_option(func: F) -> F:
    """``-i/--inventory SOURCE`` (required, repeatable: sources are merged in order, as Ansible does)."""
    return click.option(
        "-i", "--inventory", "inventory", required=True, multiple=True, type=click.Path(path_type=Path),
        help="Ansible inventory source: a YAML/INI/JSON file or a directory of them, an executable "
        "inventory script, or an inventory plugin configuration (needs fabline[ansible]). Repeatable.",
    )(func)  # fmt: skip


def baseline_option(func: F) -> F:
    """``-b/--baseline FILE`` (repeatable)."""
    return click.option(
        "-b", "--baseline", "baselines", multiple=True, type=click.Path(path_type=Path),
        help="Baseline file (repeatable; later files overlay earlier ones by rule id). "
        "Default: ./baseline/roce.yml if present, else the packaged default.",
    )(func)  # fmt: skip


def checks_option(func: F) -> F:
    """``--checks DIR``: site-local Python checks."""
    return click.option(
        "--checks", "checks_dir", type=click.Path(path_type=Path), default=None,
        help="Folder of site-local Python checks (default: ./checks if present).",
    )(func)  # fmt: skip


def baseline_paths(given: tuple[Path, ...]) -> list[Path]:
    """The baseline files given, or the default one."""
    from fabline.baseline import default_baseline_path

    return list(given) if given else [default_baseline_path()]


def checks_dir_or_default(given: Path | None) -> Path | None:
    """The site checks folder given (it must exist), else ``./checks`` if present."""
    if given is not None:
        if not given.is_dir():
            raise ConfigError("checks folder not found", file=given)
        return given
    local = Path.cwd() / "checks"
    return local if local.is_dir() else None


def parse_formats(value: str) -> list[str]:
    """Report formats from ``json,junit,md``; an unknown one is a usage error."""
    fmts = [f.strip() for f in value.split(",") if f.strip()]
    for f in fmts:
        if f not in FORMATS:
            raise click.BadParameter(f"unknown format {f!r}; choose from {', '.join(FORMATS)}")
    return fmts


def formats_option(func: F) -> F:
    """``-f/--format json,junit,md``: the report files written with ``--out``."""
    return click.option(
        "-f", "--format", "formats", default="json,junit,md", show_default=True,
        help=f"Report files to write with --out: comma-separated {', '.join(FORMATS)}.",
    )(func)  # fmt: skip


def passes_option(func: F) -> F:
    """``--passes counts|subjects|results``: how report.json records the passes."""
    return click.option(
        "--passes", "passes", type=click.Choice(PASS_MODES), default="counts", show_default=True,
        help="Passes in report.json: counts per check and device; subjects (the passing subjects too, "
        "compact); results (every pass as its own result, for audits: large on big fabrics).",
    )(func)  # fmt: skip


def fail_on_option(func: F) -> F:
    """``--fail-on SEVERITY``: the lowest failure severity that makes the exit code 4."""
    return click.option(
        "--fail-on", type=click.Choice(SEVERITIES), default="minor", show_default=True,
        help="Lowest severity of a failure that makes the exit code 4.",
    )(func)  # fmt: skip


def fabric_inputs_options(func: F) -> F:
    """``--previous SNAPDIR`` and ``--cabling CSV``: run-wide inputs of the fabric checks."""
    func = click.option(
        "--cabling", type=click.Path(path_type=Path), default=None,
        help="Cabling plan CSV (expected links) for the rail and Clos checks.",
    )(func)  # fmt: skip
    return click.option(
        "--previous", type=click.Path(path_type=Path), default=None,
        help="An earlier snapshot: counter checks judge deltas between the two.",
    )(func)  # fmt: skip
