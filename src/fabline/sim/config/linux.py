"""GPU host configuration (filled in by the host step)."""

from __future__ import annotations

from fabline.sim.device import SimDevice
from fabline.sim.render.common import Answer


def command(dev: SimDevice, argv: list[str]) -> Answer | None:
    """None: no host configuration command is modelled yet."""
    return None
