"""The read-only allow-list of collection: which command lines may be sent to a device.

Every command line is an instance of an allow-listed template of its platform
(:class:`~fabline.platforms.base.Command`), and every parameter in it is a plain name: a hostile
interface name from device output can never add shell syntax to a command. The SSH, eAPI and
NAPALM sessions all guard with :func:`allowed` before anything is sent.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from fabline.collect.profiles import PROFILES, Profile
from fabline.errors import FablineError
from fabline.platforms import PLATFORMS
from fabline.platforms.base import Command, Releases

# Interface and RDMA-device names come from device output (or the inventory) and end up in command
# lines: only plain names pass, so a hostile name can never add shell syntax to a command.
_SAFE_PARAM = {
    "exec": re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:@+-]{0,63}"),
    "netmiko": re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:/@+-]{0,63}"),
}
# eAPI and NAPALM getters take no interface parameters today; a future one gets the CLI's rule.
_SAFE_PARAM["eapi"] = _SAFE_PARAM["napalm"] = _SAFE_PARAM["netmiko"]
#: A parameter named ``*_file`` (a file the inventory declares, e.g. an NCCL env file) is an
#: absolute path of plain characters: no spaces, quotes, globs or shell syntax, no ``..``.
_SAFE_PATH = re.compile(r"/[A-Za-z0-9_.+@/-]{1,255}")


def _param_rx(transport: str, key: str) -> re.Pattern[str]:
    """The rule a parameter value must match: a plain name, or for ``*_file`` an absolute path."""
    return _SAFE_PATH if key.endswith("_file") else _SAFE_PARAM[transport]


def root_templates(platform: str) -> frozenset[str]:
    """The only command templates of a platform that may run with ``sudo -n`` (its spec's ``root_commands``).

    Any other line starting with ``sudo`` is refused, even one the platform's command list holds.
    The collector sends them only where the inventory enables it (``fabline_sudo``).

    Example:
        >>> sorted(root_templates("linux"))[0], root_templates("sonic")
        ('sudo -n dmidecode --type bios', frozenset())
    """
    return PLATFORMS[platform].root_commands


class CommandRefused(FablineError):
    """A command line that is not on the platform's read-only allow-list; it is never sent."""


def allowed(platform: str, command: str) -> str:
    """Return the command if it is an instance of an allow-listed template, else refuse it.

    Example:
        >>> allowed("linux", "ethtool -m eth0")
        'ethtool -m eth0'
        >>> allowed("linux", "ethtool --set-fec eth0 encoding rs")
        Traceback (most recent call last):
        ...
        fabline.collect.allowlist.CommandRefused: linux: 'ethtool --set-fec eth0 encoding rs' is not on the read-only allow-list; refused
    """
    refusal = _refusal(platform, command)
    if refusal is not None:
        raise CommandRefused(refusal)
    return command


@functools.lru_cache(maxsize=16384)
def _refusal(platform: str, command: str) -> str | None:
    """Why a command line is refused, or None (kept per line: each is checked twice per device)."""
    matched = _match(platform, command)
    if matched is None:
        return f"{platform}: {command!r} is not on the read-only allow-list; refused"
    if (command.split()[:1] == ["sudo"] or matched[0].needs_root) and matched[
        0
    ].template not in root_templates(platform):
        return f"{platform}: {command!r} is not one of the read-only commands allowed to run with sudo -n; refused"
    # A template parameter matches any non-blank text ('eth0;reboot' too): only plain names pass.
    transport = PROFILES[platform].transport
    for key, value in matched[1]:
        if not _param_rx(transport, key).fullmatch(value) or ".." in value:
            return f"{platform}: {command!r}: {value!r} is not a plain name; refused"
    return None


@functools.cache
def _compiled(platform: str) -> tuple[tuple[Command, re.Pattern[str]], ...]:
    # Platform.match compiles each template's regex per call; a collection matches every command
    # line twice (refusal guard, parser choice), so the compiled allow-list is kept per platform.
    return tuple((cmd, cmd.pattern()) for cmd in PLATFORMS[platform].commands)


def match_command(platform: str, command: str) -> tuple[Command, dict[str, str]] | None:
    """The allow-listed command a concrete command line is an instance of, with its parameters.

    Example:
        >>> cmd, params = match_command("linux", "ethtool -S eth2")
        >>> cmd.template, params
        ('ethtool -S {interface}', {'interface': 'eth2'})
        >>> match_command("linux", "reboot") is None
        True
    """
    found = _match(platform, command)
    return None if found is None else (found[0], dict(found[1]))


@functools.lru_cache(maxsize=16384)
def _match(platform: str, command: str) -> tuple[Command, tuple[tuple[str, str], ...]] | None:
    # A command line is matched up to three times (plan, last guard, parser choice) and the same
    # lines recur on every device of a platform: the answer is kept per (platform, line).
    for cmd, rx in _compiled(platform):
        m = rx.match(command)
        if m:
            return cmd, tuple(m.groupdict().items())
    return None


def render(profile: Profile, template: str, **params: str) -> str:
    """A concrete command line from a profile template, refusing unsafe parameter values.

    Raises:
        CommandRefused: A parameter is not a plain name, or the result is not allow-listed.
    """
    for key, value in params.items():
        if not _param_rx(profile.transport, key).fullmatch(value) or ".." in value:
            raise CommandRefused(f"{profile.platform}: {key} {value!r} is not a plain name; refused")
    return allowed(profile.platform, template.format(**params))


@functools.cache
def _releases(platform: str) -> dict[str, Releases]:
    return {c.template: c.releases for c in PLATFORMS[platform].commands if c.releases is not None}


def releases_of(platform: str, command: str) -> Releases | None:
    """The releases that have a command (a template or a concrete line), or None when all have it.

    Example:
        >>> releases_of("cumulus", "net show interface all json").describe()
        'before 5.0'
        >>> releases_of("linux", "ethtool -S eth0") is None
        True
    """
    found = _releases(platform).get(command)
    if found is None and _releases(platform):
        matched = match_command(platform, command)
        found = _releases(platform).get(matched[0].template) if matched else None
    return found


def split_by_release(
    platform: str, templates: Iterable[str], release: str | None
) -> tuple[list[str], list[tuple[str, str]]]:
    """The templates a release has, and each one it lacks with why it is not sent.

    An unknown release (None, or no number in it) keeps every template: what the device lacks
    is then found out by running it (``unavailable``).

    Example:
        >>> keep, lacking = split_by_release("cumulus", ["decode-syseeprom", "net show interface all json"], "5.9.1")
        >>> keep, [t for t, _ in lacking]
        (['decode-syseeprom'], ['net show interface all json'])
    """
    keep: list[str] = []
    lacking: list[tuple[str, str]] = []
    for template in templates:
        rel = releases_of(platform, template)
        if rel is None or rel.has(release) is not False:
            keep.append(template)
            continue
        where = f" ({rel.source})" if rel.source else ""
        lacking.append(
            (
                template,
                f"not sent: {platform} {release} does not have it; documented for {rel.describe()}{where}",
            )
        )
    return keep, lacking


def release_restricted(platform: str, template: str) -> bool:
    """Whether only some releases have a command."""
    return releases_of(platform, template) is not None


def removed_later(platform: str, template: str) -> bool:
    """Whether a release removed the command (so it waits until the device's release is known).

    Example:
        >>> removed_later("cumulus", "net show interface all json"), removed_later("cumulus", "nv show system")
        (True, False)
    """
    rel = releases_of(platform, template)
    return rel is not None and rel.until is not None


def added_later(platform: str, template: str) -> bool:
    """Whether only newer releases have a command that does not itself tell the release.

    Such a command waits, like one a release removed, until the device's release is known: sent
    before, it would fail on every older device. A command that reports the release
    (``facts.os_version`` among its feeds, e.g. NVUE's ``nv show system``) is never held back.

    Example:
        >>> added_later("sonic", "show interfaces flap"), added_later("cumulus", "nv show system")
        (True, False)
    """
    rel = releases_of(platform, template)
    if rel is None or rel.since is None:
        return False
    matched = match_command(platform, template)
    return matched is None or "os_version" not in matched[0].feeds
