"""The platform registry: one explicit map from platform id to its read-only command set.

No discovery magic for built-ins: a new platform is a module here and one line below.
"""

from __future__ import annotations

from fabline.errors import ParseError
from fabline.platforms import arista_eos, cisco_nxos, cumulus, linux, sonic
from fabline.platforms.base import Command, Fragment, ParseContext, Platform, merge_fragments

PLATFORMS: dict[str, Platform] = {
    p.id: p
    for p in (sonic.PLATFORM, cumulus.PLATFORM, arista_eos.PLATFORM, cisco_nxos.PLATFORM, linux.PLATFORM)
}

SWITCH_PLATFORMS = ("sonic", "cumulus", "arista_eos", "cisco_nxos")


def get_platform(platform_id: str) -> Platform:
    """Return the platform with this id.

    Raises:
        KeyError: Unknown platform id.
    """
    return PLATFORMS[platform_id]


def parse_output(platform_id: str, command_line: str, output: str) -> Fragment:
    """Parse one command's output into a state fragment.

    Raises:
        ParseError: Unknown platform, command not on the allow-list, or output of the wrong shape.
    """
    try:
        platform = PLATFORMS[platform_id]
    except KeyError:
        raise ParseError(platform_id, command_line, f"a platform among {sorted(PLATFORMS)}") from None
    try:
        command, params = platform.match(command_line)
    except KeyError:
        raise ParseError(
            platform_id, command_line, "a command on the platform's read-only allow-list"
        ) from None
    return command.parser(output, ParseContext(platform_id, command_line, params))


__all__ = [
    "PLATFORMS",
    "SWITCH_PLATFORMS",
    "Command",
    "Fragment",
    "ParseContext",
    "Platform",
    "get_platform",
    "merge_fragments",
    "parse_output",
]
