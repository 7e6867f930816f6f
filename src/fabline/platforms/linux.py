"""Linux GPU hosts with NVIDIA ConnectX NICs: read-only commands and their parsers."""

from __future__ import annotations

from fabline.platforms.base import Command, Platform

COMMANDS: tuple[Command, ...] = ()

PLATFORM = Platform(id="linux", description="Linux GPU hosts with NVIDIA ConnectX NICs", commands=COMMANDS)
