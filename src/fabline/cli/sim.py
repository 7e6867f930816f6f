"""``fabline sim``: serve a simulated fabric over SSH until Ctrl-C."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

import click

from fabline.errors import ConfigError

PASSWORD_ENV = "FABLINE_SIM_PASSWORD"


@click.command("sim")
@click.option(
    "--fabric",
    "fabric_name",
    type=click.Choice(["lab"]),
    default=None,
    help="The bundled lab fabric (every platform, with its planted faults). Default.",
)
@click.option(
    "--gpus",
    type=click.IntRange(min=1),
    default=None,
    help="A clean rail-optimized fabric for this many GPUs instead of the lab.",
)
@click.option(
    "--inventory-out",
    type=click.Path(path_type=Path),
    default=None,
    help="Write an Ansible inventory that reaches every simulated device.",
)
@click.option(
    "--port",
    type=click.IntRange(1, 65535),
    default=2222,
    show_default=True,
    help="TCP port of every device (each on its own 127.10.x.y address).",
)
@click.option(
    "--address-base", default="127.10", show_default=True, help="First two octets of the addresses."
)
@click.option(
    "--host-key-dir",
    type=click.Path(path_type=Path),
    default=None,
    help="Keep host keys here so they survive restarts (trust on first use stays valid).",
)
@click.option(
    "--eapi-port",
    type=click.IntRange(1, 65535),
    default=None,
    help="Also serve eAPI (HTTPS) on this port of every Arista EOS device; the inventory then uses it.",
)
@click.option(
    "--eapi-ca-out",
    type=click.Path(path_type=Path),
    default=None,
    help="Write the simulator's eAPI CA certificate here (default: beside --inventory-out).",
)
def sim(
    fabric_name: str | None,
    gpus: int | None,
    inventory_out: Path | None,
    port: int,
    address_base: str,
    host_key_dir: Path | None,
    eapi_port: int | None,
    eapi_ca_out: Path | None,
) -> None:
    """Serve a simulated RoCE fabric over real SSH until Ctrl-C.

    Every device answers its platform's real output formats on its own loopback address. The
    login is admin with the password in $FABLINE_SIM_PASSWORD (default admin); the written
    inventory reads it from that variable, so `fabline collect -i FILE` works against it.
    """
    import yaml

    from fabline import synthetic
    from fabline.sim.server import run_simulator

    if fabric_name and gpus:
        raise click.UsageError("--fabric and --gpus are alternatives")
    faults: tuple[synthetic.Fault, ...] = ()
    if gpus:
        fabric = synthetic.rail_fabric(gpus)
    else:
        fabric, faults = synthetic.lab_fabric(), synthetic.LAB_FAULTS
    password = os.environ.get(PASSWORD_ENV, "admin")
    try:
        cm = run_simulator(fabric, faults, password=password, port=port, address_base=address_base,
                           host_key_dir=host_key_dir, eapi_port=eapi_port)  # fmt: skip
        simulator = cm.__enter__()
    except OSError as exc:
        raise ConfigError(str(exc.strerror or exc)) from None
    try:
        if eapi_port is not None and simulator.eapi_tls is not None:
            if eapi_ca_out is None and inventory_out is not None:
                eapi_ca_out = inventory_out.with_name(inventory_out.stem + "-eapi-ca.pem")
            if eapi_ca_out is not None:
                eapi_ca_out.parent.mkdir(parents=True, exist_ok=True)
                eapi_ca_out.write_text(simulator.eapi_tls.ca_pem, "ascii")
                click.echo(f"eAPI CA certificate: {eapi_ca_out}")
        if inventory_out is not None:
            inventory_out.parent.mkdir(parents=True, exist_ok=True)
            inv = simulator.inventory(
                password_env=PASSWORD_ENV, eapi_ca_file=eapi_ca_out and eapi_ca_out.resolve()
            )
            inventory_out.write_text(yaml.safe_dump(inv, sort_keys=False), "utf-8")
        click.echo(f"fabline sim: {len(simulator.devices)} devices on {address_base}.x.y:{port}")
        for name, (host, p) in list(simulator.addresses.items())[:8]:
            click.echo(f"  {name:<16} {simulator.devices[name].platform:<11} ssh -p {p} admin@{host}")
        for name, (host, p) in list(simulator.eapi_addresses.items())[:4]:
            click.echo(f"  {name:<16} eAPI        https://{host}:{p}/command-api")
        if len(simulator.addresses) > 8:
            click.echo(f"  ... and {len(simulator.addresses) - 8} more")
        if inventory_out is not None:
            click.echo(f"inventory: {inventory_out} (it reads the password from ${PASSWORD_ENV})")
        click.echo("Ctrl-C stops the simulator.")
        stop = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_a: stop.set())
        try:
            while not stop.wait(1.0):
                pass
        except KeyboardInterrupt:
            pass
    finally:
        cm.__exit__(None, None, None)
    click.echo("fabline sim: stopped")


COMMANDS = [sim]
