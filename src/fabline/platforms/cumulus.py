"""NVIDIA Cumulus Linux 5.x (NVUE) and classic files: read-only commands and their parsers."""

from __future__ import annotations

from fabline.platforms.base import Command, Platform

COMMANDS: tuple[Command, ...] = ()

PLATFORM = Platform(id="cumulus", description="NVIDIA Cumulus Linux 5.x (NVUE) and classic files", commands=COMMANDS)
