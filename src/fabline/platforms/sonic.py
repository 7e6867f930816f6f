"""SONiC (config_db JSON and the sonic-utilities show commands): read-only commands and their parsers."""

from __future__ import annotations

from fabline.platforms.base import Command, Platform

COMMANDS: tuple[Command, ...] = ()

PLATFORM = Platform(id="sonic", description="SONiC (config_db JSON and the sonic-utilities show commands)", commands=COMMANDS)
