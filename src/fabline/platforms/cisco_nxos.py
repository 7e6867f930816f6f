"""Cisco NX-OS: read-only commands and their parsers."""

from __future__ import annotations

from fabline.platforms.base import Command, Platform

COMMANDS: tuple[Command, ...] = ()

PLATFORM = Platform(id="cisco_nxos", description="Cisco NX-OS", commands=COMMANDS)
