"""The collection options of ``collect``, ``run`` and ``drift``, without the collection stack.

Building them imports nothing but click and :mod:`fabline.collect.defaults`, so ``fabline drift``
(and every history command, which shares its module) starts without paramiko and netmiko; the
stack is imported only when a command collects (:func:`fabline.cli.collect.do_collect`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from fabline.collect.defaults import DEFAULT_COMMAND_TIMEOUT, HOST_KEY_POLICIES

F = TypeVar("F", bound=Callable[..., Any])

#: Where ``accept-new`` records first-seen host keys unless ``--known-hosts`` says otherwise.
DEFAULT_KNOWN_HOSTS = Path(".fabline") / "known_hosts"


def collect_options(func: F) -> F:
    """The collection options of ``collect``, ``run`` and ``drift`` (passed on to
    :func:`fabline.cli.collect.do_collect`).
    """
    options = [
        click.option("-l", "--limit", default=None, help="Ansible host pattern, e.g. 'leaf*', 'fabric:!leaf-r2-a'."),
        click.option("-w", "--workers", type=int, default=32, show_default=True, help="Devices collected at once."),
        click.option("--timeout", type=float, default=30.0, show_default=True,
                     help="Seconds for the whole login (connect to first prompt), and the most a command may stay silent."),
        click.option("--command-timeout", type=float, default=DEFAULT_COMMAND_TIMEOUT, show_default=True,
                     help="Total seconds one command may take, however much it prints (inventory: fabline_command_timeout)."),
        click.option("--max-output", default="16M", show_default=True,
                     help="Most bytes one command (or batch sent together) may print, e.g. 16M (inventory: fabline_max_output)."),
        click.option("--retries", type=int, default=2, show_default=True,
                     help="Extra connect attempts after a connect failure (never after an authentication failure)."),
        click.option("--pace", type=float, default=0.0, show_default=True,
                     help="Minimum seconds between two commands on one device (TACACS/RADIUS-backed fleets)."),
        click.option("--host-key-policy", type=click.Choice(HOST_KEY_POLICIES), default="accept-new", show_default=True,
                     help="accept-new: trust on first use, refuse changed keys; strict: only known hosts; ignore: no checks."),
        click.option("--known-hosts", type=click.Path(path_type=Path), default=None,
                     help=f"known_hosts file (default: ./{DEFAULT_KNOWN_HOSTS}; with --scheduler, on each collector)."),
        *distributed_options,
    ]  # fmt: skip
    for option in reversed(options):
        func = option(func)
    return func


#: ``--scheduler`` and ``--site-group`` (collect, run, drift): see docs/scale-out.md.
distributed_options = [
    click.option("--scheduler", default=None, metavar="ADDRESS",
                 help="Collect on Dask site collectors via this scheduler (tcp://HOST:8786); needs fabline[distributed]."),
    click.option("--site-group", default=None, metavar="GROUP",
                 help="With --scheduler: the inventory group whose child groups are the sites (else fabline_site)."),
]  # fmt: skip
