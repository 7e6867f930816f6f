"""The platform registry: one explicit list of built-in platforms, each one spec of data.

No discovery magic for built-ins: a new platform is a module here (ending in its
:class:`~fabline.platforms.spec.PlatformSpec`) and one entry in the tuple below; its simulator
renderer registers in ``fabline.sim.render``. Everything else (inventory tables, baseline platform
names, the state schema's platform enum, the collection run plans) derives from the registry.
"""

from __future__ import annotations

from fabline.errors import ParseError
from fabline.platforms import arista_eos, cisco_nxos, cumulus, linux, napalm, sonic
from fabline.platforms.base import Command, Fragment, ParseContext, merge_fragments
from fabline.platforms.spec import (
    PLATFORMS,
    RUN_PLANS,
    MtuKind,
    MtuSemantics,
    Platform,
    PlatformSpec,
    RunPlan,
    Vocabulary,
    host_platform,
    network_os_aliases,
    platform_for_network_os,
    platform_ids,
    register,
    registered,
    switch_platforms,
    unregister,
)

for _module in (sonic, cumulus, arista_eos, cisco_nxos, linux, napalm):
    register(_module.PLATFORM)


def get_platform(platform_id: str) -> PlatformSpec:
    """Return the spec of the platform with this id.

    Raises:
        KeyError: Unknown platform id.
    """
    return PLATFORMS[platform_id]


def parse_output(platform_id: str, command_line: str, output: str) -> Fragment:
    """Parse one command's output into a state fragment.

    Raises:
        ParseError: Unknown platform, command not on the allow-list, or output of the wrong shape.
    """
    # The dispatcher sits above this registry: it checks the state schema, whose platform enum is
    # the registry (fabline.state imports it), so it is imported when a parse runs.
    from fabline.platforms.dispatch import run_parser

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
    return run_parser(command.parser, output, ParseContext(platform_id, command_line, params))


__all__ = [
    "PLATFORMS",
    "RUN_PLANS",
    "Command",
    "Fragment",
    "MtuKind",
    "MtuSemantics",
    "ParseContext",
    "Platform",
    "PlatformSpec",
    "RunPlan",
    "Vocabulary",
    "get_platform",
    "host_platform",
    "merge_fragments",
    "network_os_aliases",
    "parse_output",
    "platform_for_network_os",
    "platform_ids",
    "register",
    "registered",
    "switch_platforms",
    "unregister",
]
