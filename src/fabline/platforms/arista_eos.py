"""Arista EOS: read-only commands and their parsers."""

from __future__ import annotations

from fabline.platforms.base import Command, Platform

COMMANDS: tuple[Command, ...] = ()

PLATFORM = Platform(id="arista_eos", description="Arista EOS", commands=COMMANDS)
