"""Renderers: one per platform, each turning a device state into that platform's command outputs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fabline.sim.render import arista_eos, cisco_nxos, cumulus, linux, sonic
from fabline.sim.render.common import Answer

if TYPE_CHECKING:
    from fabline.sim.device import SimDevice

_RENDERERS = {
    "linux": linux.render,
    "sonic": sonic.render,
    "arista_eos": arista_eos.render,
    "cumulus": cumulus.render,
    "cisco_nxos": cisco_nxos.render,
}


def render(dev: SimDevice, line: str) -> Answer:
    """The answer of ``dev`` to one simple command line."""
    fn = _RENDERERS.get(dev.platform)
    if fn is None:
        return linux.not_found(line.split(maxsplit=1)[0] if line.split() else line)
    return fn(dev, line)


def normalize(platform: str, state: dict[str, Any]) -> None:
    """Fold a state into what the platform can show (EOS: one switch-wide DSCP map; NX-OS: one lossless set)."""
    if platform == "arista_eos":
        arista_eos.normalize(state)
    elif platform == "cisco_nxos":
        cisco_nxos.normalize(state)
