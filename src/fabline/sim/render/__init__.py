"""Renderers: one per platform, each turning a device state into that platform's command outputs.

One explicit registry maps a platform id to its renderer (and the optional fold of a state into
what the platform can show); a new platform's renderer module adds one entry below (a test proves
every registered platform has one).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from fabline.sim.render import arista_eos, cisco_nxos, cumulus, linux, sonic
from fabline.sim.render.common import Answer, SimView


class Renderer(NamedTuple):
    """How the simulator imitates one platform.

    Attributes:
        render: The answer of a device to one simple command line.
        normalize: Folds a state into what the platform can show (EOS: one switch-wide DSCP map;
            NX-OS: one lossless set), in place; None when every state is showable.
    """

    render: Callable[[SimView, str], Answer]
    normalize: Callable[[dict[str, Any]], None] | None = None


RENDERERS: dict[str, Renderer] = {
    "sonic": Renderer(sonic.render),
    "cumulus": Renderer(cumulus.render),
    "arista_eos": Renderer(arista_eos.render, arista_eos.normalize),
    "cisco_nxos": Renderer(cisco_nxos.render, cisco_nxos.normalize),
    "linux": Renderer(linux.render),
    # A simulated `napalm` device is an Arista EOS switch that NAPALM's eos driver reads over eAPI.
    "napalm": Renderer(arista_eos.render, arista_eos.normalize),
}


def register_renderer(platform: str, renderer: Renderer) -> None:
    """Add the renderer of a platform registered at run time.

    Raises:
        ValueError: The platform has a renderer already.
    """
    if platform in RENDERERS:
        raise ValueError(f"platform {platform!r} has a renderer already")
    RENDERERS[platform] = renderer


def render(dev: SimView, line: str) -> Answer:
    """The answer of ``dev`` to one simple command line."""
    entry = RENDERERS.get(dev.platform)
    if entry is None:
        return linux.not_found(line.split(maxsplit=1)[0] if line.split() else line)
    return entry.render(dev, line)


def normalize(platform: str, state: dict[str, Any]) -> None:
    """Fold a state into what the platform can show, in place."""
    entry = RENDERERS.get(platform)
    if entry is not None and entry.normalize is not None:
        entry.normalize(state)
