"""Configuration on a writable simulated device: what the NOS does with the changes fabline writes.

A simulator started with ``writable=True`` accepts, per platform, the operations
``fabline remediate`` emits and changes the device's state as the real NOS would: SONiC
``config apply-patch`` (an RFC 6902 patch on CONFIG_DB, :mod:`.sonic`), Cumulus ``nv set``/``nv
unset``/``nv config apply`` (:mod:`.cumulus`), EOS and NX-OS configuration mode (:mod:`.network`) and
the GPU hosts' ``ip link``, ``mlnx_qos`` and sysfs/configfs writes (:mod:`.linux`). Every command
that shows a changed field shows the new value afterwards. fabline itself never sends these:
the closed-loop tests do, as an operator applying the reviewed change would.
"""

from __future__ import annotations

from collections.abc import Callable

from fabline.sim.config.stdin import STDIN
from fabline.sim.device import SimDevice
from fabline.sim.render.common import Answer

Configurator = Callable[[SimDevice, list[str]], "Answer | None"]


def _registry() -> dict[str, Configurator]:
    from fabline.sim.config import cumulus, linux, sonic

    return {"sonic": sonic.command, "cumulus": cumulus.command, "linux": linux.command}


_CONFIGURATORS: dict[str, Configurator] = {}


def configure_command(dev: SimDevice, argv: list[str]) -> Answer | None:
    """The answer of a writable device to a configuration command; None when ``argv`` is not one."""
    if not _CONFIGURATORS:
        _CONFIGURATORS.update(_registry())
    handler = _CONFIGURATORS.get(dev.platform)
    return None if handler is None else handler(dev, argv)


__all__ = ["STDIN", "configure_command", "wants_stdin"]


def wants_stdin(command: str) -> bool:
    """Whether an exec-channel command reads its standard input (``config apply-patch /dev/stdin``)."""
    return "/dev/stdin" in command
