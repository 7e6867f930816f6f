"""How each platform's login shell behaves: prompt, banner, pager, built-in commands, errors.

The Linux-based platforms (GPU hosts, SONiC, Cumulus) run bash: scripts go through
:class:`~fabline.sim.shell.Shell`. Arista EOS and Cisco NX-OS run their CLI: privileged mode,
``terminal length``/``width``, a ``--More--`` pager until ``terminal length 0``, output pipes
``| json`` (EOS) and ``| no-more``, and their own error banners.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fabline.sim.device import SimDevice
from fabline.sim.render.common import Answer
from fabline.sim.shell import Shell

#: Runs one simple command on a device with the simulator's transport faults applied.
Runner = Callable[[SimDevice, str], Answer]


@dataclass
class Session:
    """One interactive login: who, where, and the terminal settings the user changed.

    Attributes:
        dev: The device.
        user: Login name.
        privileged: EOS/NX-OS privileged (``#``) mode.
        page_lines: Pager page length (0 = no pager).
        width: Terminal width.
    """

    dev: SimDevice
    user: str
    privileged: bool = True
    page_lines: int = 24
    width: int = 80
    closed: bool = False
    extra: dict[str, str] = field(default_factory=dict)
    #: Configuration mode on a writable device (a :class:`fabline.sim.config.network.ConfigMode`).
    config: Any = None


class Dialect:
    """The login shell of a platform (base: bash on a Linux-based system)."""

    pager = False
    more = " --More-- "

    def __init__(self, platform: str) -> None:
        self.platform = platform

    def banner(self, s: Session) -> str:
        """Text printed after login, before the first prompt."""
        return ""

    def prompt(self, s: Session) -> str:
        """The prompt for the session's current mode."""
        sigil = "#" if s.user == "root" else "$"
        return f"{s.user}@{s.dev.name}:~{sigil} "

    def unknown(self, line: str) -> Answer:
        """The platform's answer to a command it does not have."""
        word = line.split(maxsplit=1)[0] if line.split() else line
        return Answer("", 127, f"-bash: {word}: command not found\n")

    def execute(self, s: Session, line: str, run: Runner) -> str:
        """Run one input line in an interactive session; returns what the terminal shows."""
        words = line.split()
        if words and words[0] in ("exit", "logout") and len(words) <= 2:
            s.closed = True
            return "logout\n"
        answer = Shell(lambda cmd: run(s.dev, cmd), self.unknown).run(line)
        return answer.err + answer.out

    def exec_channel(self, dev: SimDevice, command: str, run: Runner) -> Answer:
        """Run an exec-channel command (``ssh host 'cmd'``)."""
        return Shell(lambda cmd: run(dev, cmd), self.unknown).run(command)


class SonicDialect(Dialect):
    """SONiC: Debian bash with the sonic-utilities commands."""

    def banner(self, s: Session) -> str:
        """The SONiC login banner."""
        return (
            "Linux " + s.dev.name + " 6.1.0-11-2-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.38-4 x86_64\n"
            "You are on\n  ____   ___  _   _ _  ____\n / ___| / _ \\| \\ | (_)/ ___|\n"
            " \\___ \\| | | |  \\| | | |\n  ___) | |_| | |\\  | | |___\n |____/ \\___/|_| \\_|_|\\____|\n\n"
            "-- Software for Open Networking in the Cloud --\n\n"
            "Unauthorized access and/or use are prohibited.\nAll access and/or use are subject to monitoring.\n\n"
        )


class CumulusDialect(Dialect):
    """Cumulus Linux 5.x: bash in the management VRF, NVUE ``nv``."""

    def prompt(self, s: Session) -> str:
        """``cumulus@leaf:mgmt:~$`` (the login shell runs in the management VRF)."""
        return f"{s.user}@{s.dev.name}:mgmt:~$ "

    def banner(self, s: Session) -> str:
        """The Cumulus login banner."""
        return (
            "Linux " + s.dev.name + " 6.1.0-cl-1-amd64 #1 SMP Debian 6.1.38-4+cl5.9.1u5 x86_64\n\n"
            "Welcome to NVIDIA Cumulus (R) Linux (R)\n\n"
            "For support and online technical documentation, visit\nhttps://www.nvidia.com/en-us/support\n\n"
        )


class NetworkCliDialect(Dialect):
    """Arista EOS / Cisco NX-OS style CLI."""

    pager = True

    def prompt(self, s: Session) -> str:
        """``leaf-r2-a#`` (privileged), ``leaf-r2-a>``, or ``leaf-r2-a(config-if-Et1/1)#``."""
        if s.config is not None:
            return f"{s.dev.name}({s.config.prompt_mode()})#"
        return f"{s.dev.name}{'#' if s.privileged else '>'}"

    def unknown(self, line: str) -> Answer:
        """``% Invalid input``."""
        return Answer("% Invalid input\n", 0)

    def denied(self, line: str) -> str:
        """The answer to a configuration command (the simulator is read-only)."""
        return f"% Authorization denied for command '{line.strip()}'\n"

    def terminal(self, s: Session, words: list[str]) -> str | None:
        """``terminal length|width|pager N``; None when the line is not a terminal command."""
        if len(words) >= 2 and words[0] in ("terminal", "term"):
            if words[1] in ("length", "len", "pager") and len(words) == 3 and words[2].isdigit():
                s.page_lines = int(words[2])
                return "Pagination disabled.\n" if s.page_lines == 0 else ""
            if words[1] in ("width", "wid") and len(words) == 3 and words[2].isdigit():
                s.width = int(words[2])
                return f"Width set to {s.width} columns.\n"
            if words[1] in ("no", "monitor", "dont-ask"):
                return ""
            return self.unknown(" ".join(words)).out
        return None

    def strip_pipes(self, line: str) -> str:
        """Drop output modifiers the CLI applies itself (``| no-more``)."""
        return re.sub(r"\s*\|\s*no-more\s*", " ", line).strip()

    def execute(self, s: Session, line: str, run: Runner) -> str:
        """One CLI line: modes and terminal settings here, show commands through ``run``."""
        words = line.split()
        if not words:
            return ""
        if s.config is not None:
            out, done = s.config.line(line)
            if done:
                s.config = None
            return str(out)
        if s.dev.writable and s.privileged and words[0] in ("configure", "conf", "config"):
            return self.configure(s, words)
        if words[0] in ("exit", "logout", "quit"):
            s.closed = True
            return ""
        if words[0] in ("enable", "en"):
            s.privileged = True
            return ""
        if words[0] in ("disable",):
            s.privileged = False
            return ""
        term = self.terminal(s, words)
        if term is not None:
            return term
        if words[0] in ("configure", "conf", "config", "copy", "write", "reload", "clear", "no", "delete"):
            return self.denied(line)
        if words[0] == "end":
            return ""
        cmd = self.strip_pipes(line)
        if not s.privileged and cmd.startswith(("show run", "show start")):
            return "% Invalid input (privileged mode required)\n"
        answer = run(s.dev, cmd)
        return answer.out

    def configure(self, s: Session, words: list[str]) -> str:
        """Enter configuration mode: ``configure [terminal]`` or, on EOS, ``configure session NAME``."""
        from fabline.sim.config.network import ConfigMode

        rest = words[1:]
        if rest in ([], ["terminal"], ["t"]):
            s.config = ConfigMode(s.dev)
            return ""
        if rest[:1] == ["session"] and len(rest) == 2 and self.sessions:
            s.config = ConfigMode(s.dev, session=rest[1])
            return ""
        return self.unknown(" ".join(words)).out

    #: Configuration sessions (``configure session NAME``): EOS has them.
    sessions = True

    def exec_channel(self, dev: SimDevice, command: str, run: Runner) -> Answer:
        """An exec channel runs one CLI line without pager."""
        s = Session(dev, "", page_lines=0)
        text = self.execute(s, command, run)
        return Answer(text, 0)


class NxosDialect(NetworkCliDialect):
    """Cisco NX-OS: ``switch#`` prompt, ``% Invalid command at '^' marker.``, silent terminal commands."""

    more = " --More-- "

    sessions = False

    def prompt(self, s: Session) -> str:
        """``leaf-r3-a# `` (NX-OS leaves a space after the sigil), ``leaf-r3-a(config-if)# ``."""
        if s.config is not None:
            return f"{s.dev.name}({s.config.prompt_mode()})# "
        return f"{s.dev.name}{'#' if s.privileged else '>'} "

    def unknown(self, line: str) -> Answer:
        """NX-OS marks the first unknown word with a caret."""
        return Answer(" " * 13 + "^\n% Invalid command at '^' marker.\n", 0)

    def denied(self, line: str) -> str:
        """NX-OS role-based access: configuration is refused."""
        return "% Permission denied for the role\n"

    def terminal(self, s: Session, words: list[str]) -> str | None:
        """NX-OS sets terminal length/width silently."""
        out = super().terminal(s, words)
        if out is None:
            return None
        return "" if not out.startswith(" ") and not out.startswith("%") else out

    def banner(self, s: Session) -> str:
        """The NX-OS login banner."""
        return (
            "Cisco Nexus Operating System (NX-OS) Software\nTAC support: http://www.cisco.com/tac\n"
            "Copyright (C) 2002-2024, Cisco and/or its affiliates.\nAll rights reserved.\n"
        )


#: Platform id -> its login dialect; any other platform gets the plain :class:`Dialect` (a shell).
DIALECTS: dict[str, type[Dialect]] = {
    "sonic": SonicDialect,
    "cumulus": CumulusDialect,
    "arista_eos": NetworkCliDialect,
    "cisco_nxos": NxosDialect,
    "napalm": NetworkCliDialect,  # simulated as an EOS switch (see fabline.sim.render)
}


def dialect(platform: str) -> Dialect:
    """The dialect of a platform id."""
    return DIALECTS.get(platform, Dialect)(platform)
