"""``fabline design`` (sizing, design files) and ``fabline render`` (configs, intended vs running)."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import click

from fabline.cli.common import friendly
from fabline.errors import ConfigError
from fabline.inventory import Device
from fabline.results import verdict_exit_code

#: A design's platforms are those with bundled templates (design.model.template_platforms()).
_PLATFORM_HELP = "A switch platform with bundled config templates (templates/<platform>/; another is refused, naming them)."


@click.command()
@click.argument("design_file", required=False, type=click.Path(path_type=Path))
@click.option("--gpus", type=int, default=None, help="GPUs to connect (one compute NIC each).")
@click.option("--gpus-per-server", type=int, default=8, show_default=True, help="GPUs (= rails) per server.")
@click.option("--nic-speed", type=int, default=400, show_default=True, help="NIC bandwidth per GPU, Gb/s.")
@click.option("--switch-ports", type=int, default=64, show_default=True,
              help="Switch radix R at the per-plane link speed.")  # fmt: skip
@click.option("--planes", type=int, default=1, show_default=True,
              help="Two-tier planes; every GPU gets one link (nic-speed / planes) in each.")  # fmt: skip
@click.option(
    "--oversubscription", type=int, default=1, show_default=True, help="o of o:1 at the leaf (1 = 1:1)."
)
@click.option("--leaf-platform", default="sonic", show_default=True, help=_PLATFORM_HELP)
@click.option("--spine-platform", default="arista_eos", show_default=True, help=_PLATFORM_HELP)
@click.option("--name", default="fabric", show_default=True, help="Design name (written into configs).")
@click.option("-b", "--baseline", "baselines", multiple=True, type=click.Path(path_type=Path),
              help="Baseline whose vars give the QoS values (default: as fabline check).")  # fmt: skip
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Write design.yml, inventory.yml and cabling.csv into this folder.")  # fmt: skip
@friendly
def design(
    design_file: Path | None,
    gpus: int | None,
    gpus_per_server: int,
    nic_speed: int,
    switch_ports: int,
    planes: int,
    oversubscription: int,
    leaf_platform: str,
    spine_platform: str,
    name: str,
    baselines: tuple[Path, ...],
    fmt: str,
    out: Path | None,
) -> None:
    """Size a rail-optimized two-tier fabric and write its design, inventory and cabling plan.

    Either options (``--gpus N ...``) or an existing DESIGN_FILE (edited design.yml: its sizing is
    checked and ``--out`` rewrites the inventory and cabling plan from it). Exit 0 when the
    fabric is feasible, 4 when it is not (the output says why and what would work).
    """
    from fabline.design.model import generate, load_design
    from fabline.design.plans import write_plans
    from fabline.design.sizing import SizingInput, render_text, size

    if (design_file is None) == (gpus is None):
        raise ConfigError("give either --gpus N or a DESIGN_FILE")
    if design_file is not None:
        model = load_design(design_file)
        sizing = model.sized()
    else:
        assert gpus is not None
        request = SizingInput(gpus, gpus_per_server, nic_speed, switch_ports, planes, oversubscription)
        sizing = size(request)
        model = None
        if sizing.feasible and out is not None:
            model = generate(
                request, leaf_platform=leaf_platform, spine_platform=spine_platform, name=name,
                qos_vars=_baseline_vars(baselines),
            )  # fmt: skip
    if fmt == "json":
        click.echo(json.dumps(sizing.to_dict(), indent=2))
    else:
        click.echo(render_text(sizing))
    if out is not None and model is not None:
        written = write_plans(model, out)
        if fmt == "text":
            click.echo("wrote " + ", ".join(str(p) for p in written))
    sys.exit(verdict_exit_code(sizing.feasible))


def _baseline_vars(given: tuple[Path, ...]) -> dict[str, object]:
    from fabline.baseline import default_baseline_path, load_baseline

    paths = list(given) if given else [default_baseline_path()]
    return dict(load_baseline(paths).vars)


@click.command()
@click.argument("design_file", type=click.Path(path_type=Path))
@click.option("--templates", type=click.Path(path_type=Path), default=None,
              help="Templates folder (<platform>/*.j2). Default: ./templates, else the packaged ones.")  # fmt: skip
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Folder for the configs (OUT/<device>/<file>). Required unless --diff.")  # fmt: skip
@click.option("--no-hosts", is_flag=True, help="Render switch configs only (no GPU server settings files).")
@click.option("-j", "--jobs", type=int, default=1, show_default=True, help="Worker processes.")
@click.option("--diff", "running", type=click.Path(path_type=Path), default=None,
              help="A collected snapshot: show per device what differs between intended and running.")  # fmt: skip
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="Output of --diff.")  # fmt: skip
@friendly
def render(
    design_file: Path,
    templates: Path | None,
    out: Path | None,
    no_hosts: bool,
    jobs: int,
    running: Path | None,
    fmt: str,
) -> None:
    """Render one config per switch (and a settings file per GPU server) from DESIGN_FILE.

    With --diff SNAPSHOT the rendered configs are parsed like collected ones and compared with the
    snapshot's states, per device and feature (exit 0 in sync, 4 drift, 3 devices not compared).
    """
    from fabline.design.model import load_design
    from fabline.design.render import find_templates, render_design

    model = load_design(design_file)
    folder = find_templates(templates)
    if out is None and running is None:
        raise ConfigError("give --out DIR (and/or --diff SNAPSHOT)")
    with tempfile.TemporaryDirectory(prefix="fabline-render-") as tmp:
        target = out if out is not None else Path(tmp) / "configs"
        count = render_design(model, folder, target, hosts=not no_hosts, jobs=jobs)
        if running is None:
            click.echo(f"rendered {count} configs into {target}")
            return
        code = _diff(model, target, running, fmt, hosts=not no_hosts)
    sys.exit(code)


def _diff(model: object, configs: Path, running: Path, fmt: str, *, hosts: bool) -> int:
    from fabline.design.diff import diff_exit_code, diff_states, render_diff_text
    from fabline.design.intended import intended_snapshot, load_states
    from fabline.design.model import Design

    assert isinstance(model, Design)
    if not (running / "state").is_dir():
        raise ConfigError("snapshot has no state/ folder (expected state/<device>.json)", file=running)
    devices = [_device(sw.name, sw.platform, sw.role) for sw in model.switches]
    if hosts:
        devices += [
            _device(model.hosts.name(h), model.hosts.platform, "host") for h in range(model.hosts.count)
        ]
    with tempfile.TemporaryDirectory(prefix="fabline-intended-") as tmp:
        snap = intended_snapshot(configs, devices, Path(tmp))
        result = diff_states(load_states(snap), load_states(running))
    click.echo(json.dumps(result, indent=2) if fmt == "json" else render_diff_text(result))
    return diff_exit_code(result)


def _device(name: str, platform: str, role: str) -> Device:
    return Device(name, platform, role, (), name, None, None, None, None, None, {})


COMMANDS = [design, render]
