"""Render one config per switch (and an intended-settings file per GPU server) from Jinja2 templates.

Templates live in ``TEMPLATES/<platform>/``; the one ``*.j2`` file there whose name does not start
with ``_`` is the device's config and names the output (``config_db.json.j2`` ->
``OUT/<device>/config_db.json``); ``_*.j2`` files are for ``{% include %}``/``{% import %}``.
Jinja2 runs with ``StrictUndefined``: a missing variable is a one-line error naming the template,
the line and the variable. Each template is compiled once per run; rendering is deterministic
(same design, byte-identical files) and every output is checked to load for its platform (JSON,
YAML, an EOS indented config tree).
"""

from __future__ import annotations

import json
import re
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
import yaml

from fabline.design.model import Design, SwitchSpec
from fabline.design.topology import Topology
from fabline.errors import ConfigError
from fabline.perf import can_fork, fork_pool
from fabline.platforms.base import release_key

_YAML_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def find_templates(given: Path | None) -> Path:
    """``--templates DIR``, else ``./templates``, else the packaged workspace's templates.

    Raises:
        ConfigError: The given folder does not exist.
    """
    if given is not None:
        if not given.is_dir():
            raise ConfigError("templates folder not found", file=given)
        return given
    local = Path.cwd() / "templates"
    if local.is_dir() and any(local.iterdir()):
        return local
    from fabline.baseline import packaged_workspace

    return packaged_workspace() / "templates"


def _check_json(text: str) -> None:
    json.loads(text)


def _check_yaml(text: str) -> None:
    yaml.load(text, Loader=_YAML_LOADER)


def _check_eos(text: str) -> None:
    from fabline.platforms.arista_eos_config import config_tree

    if not config_tree(text):
        raise ValueError("no configuration lines")


#: How an output is proven to load, by its file suffix.
VALIDATORS: dict[str, Callable[[str], None]] = {
    ".json": _check_json,
    ".yaml": _check_yaml,
    ".yml": _check_yaml,
    "-config": _check_eos,
    ".cfg": _check_eos,
}


def _validator(filename: str) -> Callable[[str], None] | None:
    for suffix, fn in VALIDATORS.items():
        if filename.endswith(suffix):
            return fn
    return None


def template_error(exc: Exception, fallback: str) -> ConfigError:
    """A Jinja2 error as one line: template file, line, and the variable or syntax problem."""
    if isinstance(exc, jinja2.TemplateSyntaxError):
        return ConfigError(
            f"template syntax error: {exc.message}", file=exc.filename or fallback, line=exc.lineno
        )
    file, line = fallback, None
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        name = frame.f_code.co_filename
        if name.endswith(".j2"):
            file, line = name, lineno
    message = str(exc)
    if isinstance(exc, jinja2.UndefinedError):
        m = re.search(r"'([^']+)' is undefined|has no attribute '([^']+)'", message)
        var = (m.group(1) or m.group(2)) if m else None
        message = f"undefined variable {var!r} ({exc})" if var else f"undefined variable ({exc})"
    else:
        message = f"template error: {type(exc).__name__}: {exc}"
    return ConfigError(message, file=file, line=line)


@dataclass(frozen=True)
class PlatformTemplate:
    """The compiled template of one platform and the file name it writes."""

    platform: str
    template: jinja2.Template
    output: str
    path: Path


class Renderer:
    """Renders the devices of one design; templates are compiled once and reused."""

    def __init__(self, design: Design, templates: Path) -> None:
        self.design = design
        self.topo = Topology(design)
        self.templates = templates
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(templates)),
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=True,
            autoescape=False,  # configs, not HTML
        )
        self._compiled: dict[str, PlatformTemplate] = {}
        self.design_vars = {"name": design.name, "planes": design.sizing.planes}

    def platform_template(self, platform: str) -> PlatformTemplate:
        """The (cached) main template of ``platform``.

        Raises:
            ConfigError: No folder for the platform, not exactly one main template, or a syntax error.
        """
        found = self._compiled.get(platform)
        if found is not None:
            return found
        folder = self.templates / platform
        if not folder.is_dir():
            raise ConfigError(
                f"no templates for platform {platform!r} (expected {folder}/)", file=self.templates
            )
        mains = sorted(p for p in folder.glob("*.j2") if not p.name.startswith("_"))
        if len(mains) != 1:
            raise ConfigError(
                f"expected exactly one main template (*.j2 not starting with '_'), found {len(mains)}",
                file=folder,
            )
        rel = f"{platform}/{mains[0].name}"
        try:
            template = self.env.get_template(rel)
        except jinja2.TemplateError as exc:
            raise template_error(exc, str(mains[0])) from None
        found = PlatformTemplate(platform, template, mains[0].name[: -len(".j2")], mains[0])
        self._compiled[platform] = found
        return found

    def switch_context(self, sw: SwitchSpec) -> dict[str, Any]:
        """Variables of a switch template (documented in docs/design.md)."""
        return {
            "design": self.design_vars,
            "device": {
                "name": sw.name, "role": sw.role, "platform": sw.platform, "plane": sw.plane,
                "rail": sw.rail, "index": sw.index, "asn": sw.asn, "loopback": sw.loopback,
            },
            "ports": self.topo.switch_ports(sw),
            "port_mtu": self.design.port_mtu[sw.platform],
            "qos": getattr(self.design.qos, sw.role).model_dump(),
            # The release the config is for, and its numbers for comparisons ((5, 15, 0) >= ...).
            "os_version": self.design.os_version.get(sw.platform, ""),
            "release": release_key(self.design.os_version.get(sw.platform, "")) or (0, 0, 0),
        }  # fmt: skip

    def host_context(self, h: int) -> dict[str, Any]:
        """Variables of the host template."""
        return {
            "design": self.design_vars,
            "host": {"name": self.topo.host_name(h), "platform": self.design.hosts.platform, "index": h},
            "ports": self.topo.host_ports(h),
            "qos": self.design.qos.host.model_dump(),
        }

    def _render(self, platform: str, context: dict[str, Any], device: str) -> tuple[str, str]:
        pt = self.platform_template(platform)
        try:
            text = pt.template.render(context)
        except jinja2.TemplateError as exc:
            raise template_error(exc, str(pt.path)) from None
        check = _validator(pt.output)
        if check is not None:
            try:
                check(text)
            except (ValueError, yaml.YAMLError) as exc:
                first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                raise ConfigError(
                    f"rendered {pt.output} for {device} does not load: {first}", file=pt.path
                ) from None
        return pt.output, text

    def render_switch(self, sw: SwitchSpec) -> tuple[str, str]:
        """``(file name, text)`` of one switch's config."""
        return self._render(sw.platform, self.switch_context(sw), sw.name)

    def render_host(self, h: int) -> tuple[str, str]:
        """``(file name, text)`` of GPU server ``h``'s intended settings."""
        return self._render(self.design.hosts.platform, self.host_context(h), self.topo.host_name(h))

    def write(self, out: Path, device: str, item: tuple[str, str]) -> Path:
        """Write ``OUT/<device>/<file>``."""
        folder = out / device
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / item[0]
        path.write_text(item[1], "utf-8")
        return path


# Set in the parent before forking workers (fork shares it; nothing is pickled).
_WORKER: dict[str, tuple[Renderer, Path]] = {}


def _render_chunk(jobs: Sequence[tuple[str, int]]) -> int:
    renderer, out = _WORKER["job"]
    switches = renderer.design.switches
    for kind, i in jobs:
        if kind == "switch":
            renderer.write(out, switches[i].name, renderer.render_switch(switches[i]))
        else:
            renderer.write(out, renderer.topo.host_name(i), renderer.render_host(i))
    return len(jobs)


def render_design(
    design: Design,
    templates: Path,
    out: Path,
    *,
    hosts: bool = True,
    jobs: int = 1,
    only: Iterable[str] | None = None,
) -> int:
    """Render every switch (and, with ``hosts``, every GPU server) into ``out``; returns the count.

    ``jobs`` > 1 renders in that many forked worker processes. ``only`` limits to those names.

    Raises:
        ConfigError: A template problem (file, line, variable) or an output that does not load.
    """
    renderer = Renderer(design, templates)
    # Compile (and so syntax-check) every needed template before any file is written.
    for platform in sorted({sw.platform for sw in design.switches}):
        renderer.platform_template(platform)
    if hosts:
        renderer.platform_template(design.hosts.platform)
    wanted = set(only) if only is not None else None
    work: list[tuple[str, int]] = [
        ("switch", i) for i, sw in enumerate(design.switches) if wanted is None or sw.name in wanted
    ]
    if hosts:
        work += [
            ("host", h)
            for h in range(design.hosts.count)
            if wanted is None or renderer.topo.host_name(h) in wanted
        ]
    out.mkdir(parents=True, exist_ok=True)
    _WORKER["job"] = (renderer, out)
    try:
        if jobs <= 1 or len(work) < 2 or not can_fork():
            return _render_chunk(work)
        chunks = [work[i::jobs] for i in range(jobs)]
        with fork_pool(jobs) as pool:
            return sum(pool.map(_render_chunk, chunks))
    finally:
        _WORKER.clear()
