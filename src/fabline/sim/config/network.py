"""Configuration mode of the simulated Arista EOS and Cisco NX-OS switches.

As the CLIs behave: ``configure`` / ``configure terminal`` applies each line as it is typed;
EOS ``configure session NAME`` collects the lines and applies them all at ``commit`` (``abort``
drops them, ``show session-config diffs`` lists them). A line enters a sub-mode
(``interface X``, ``tx-queue N``, ``policy-map ...``, ``class ...``); a line the current mode does not
know is tried in the parent modes, as both CLIs do, so hier_config's indented remediation can be
pasted as it is; ``exit`` leaves a mode, ``end`` configuration mode. A line no mode knows is
``% Invalid input`` (EOS) / ``% Invalid command at '^' marker.`` (NX-OS) and changes nothing.

What a line does to the state follows the vendors' configuration guides for the RoCE settings
(MTU, FEC, speed/autonegotiation, QoS trust, PFC priorities and watchdog, ECN thresholds, the
DSCP map; NX-OS: the network-qos ``pause pfc-cos`` set, per-port ``service-policy``). EOS's default
DSCP map (``no qos map dscp``) is traffic class = DSCP / 8.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any

from fabline.platforms import get_platform
from fabline.platforms.toolkit import PCP, ValueProblem, expand_ints
from fabline.sim.device import SimDevice

_UNITS = {"bytes": 1, "kbytes": 1000, "mbytes": 1_000_000}
_EOS_FEC = {w: m for m, w in get_platform("arista_eos").vocabulary.fec.items()}
_NXOS_FEC = {w: m for m, w in get_platform("cisco_nxos").vocabulary.fec.items()}


class Invalid(Exception):
    """A line the mode does not accept (wrong value)."""


@dataclass
class ConfigMode:
    """One configuration-mode visit of an interactive session.

    Attributes:
        dev: The device.
        session: The EOS configuration session's name (None: ``configure terminal``).
        work: The state the lines change (the device's own, or the session's copy).
        stack: The sub-mode lines entered, outermost first.
        typed: The lines accepted so far (``show session-config diffs``).
        extra: Per-platform facts the lines refer to (ports with the PFC watchdog, the lossless set).
    """

    dev: SimDevice
    session: str | None = None
    work: dict[str, Any] = field(default_factory=dict)
    stack: list[str] = field(default_factory=list)
    typed: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        base = self.dev.base_state()
        self.work = copy.deepcopy(base)
        ports = _ports(self.work)
        wd = bool((self.work.get("qos") or {}).get("pfc_watchdog", {}).get("enabled"))
        self.extra["watchdog"] = {p for p, b in ports.items() if b.get("pfc_priorities") and wd}
        self.extra["lossless"] = sorted({q for b in ports.values() for q in b.get("pfc_priorities") or []})
        self.extra["pfc_on"] = {p for p, b in ports.items() if b.get("pfc_priorities")}

    @property
    def platform(self) -> str:
        """Platform id."""
        return self.dev.platform

    def prompt_mode(self) -> str:
        """The mode part of the prompt: ``config``, ``config-if-Et1/1``, ``config-s-fablin``."""
        if self.session is not None and not self.stack:
            return f"config-s-{self.session[:6]}"
        if not self.stack:
            return "config"
        top = self.stack[-1].split()
        if top[0] == "interface":
            return (
                f"config-if-{top[1].replace('Ethernet', 'Et')}"
                if self.platform != "cisco_nxos"
                else "config-if"
            )
        return {"tx-queue": "config-if-txq", "policy-map": "config-pmap", "class": "config-pmap-c"}.get(
            top[0], "config"
        )

    def line(self, text: str) -> tuple[str, bool]:
        """Run one line; the output and whether configuration mode is left."""
        words = text.split()
        if not words:
            return "", False
        if words == ["end"]:
            self._finish(commit=self.session is None)
            return "", True
        if words == ["exit"]:
            if self.stack:
                self.stack.pop()
                return "", False
            self._finish(commit=self.session is None)
            return "", True
        if self.session is not None and words == ["commit"]:
            self._finish(commit=True)
            return "", True
        if self.session is not None and words == ["abort"]:
            return "", True
        if words[:3] == ["show", "session-config", "diffs"]:
            return "".join(f"+{ln}\n" for ln in self.typed), False
        saved = list(self.stack)
        while True:
            try:
                handled = (_eos if self.platform != "cisco_nxos" else _nxos)(self, words)
            except Invalid as exc:
                self.stack = saved
                return f"% {exc}\n", False
            if handled:
                self.typed.append(text.strip())
                if self.session is None:
                    self._finish(commit=True)
                return "", False
            if not self.stack:
                self.stack = saved
                return _invalid(self.platform), False
            self.stack.pop()

    def _finish(self, commit: bool) -> None:
        if not commit:
            return
        ports = _ports(self.work)
        if self.platform != "cisco_nxos":
            on = [p for p, b in ports.items() if b.get("pfc_priorities")]
            if on:
                self.work.setdefault("qos", {}).setdefault("pfc_watchdog", {})["enabled"] = all(
                    p in self.extra["watchdog"] for p in on
                )
        new = copy.deepcopy(self.work)

        def replace(state: dict[str, Any]) -> None:
            state.clear()
            state.update(new)

        self.dev.configure(replace)


def _invalid(platform: str) -> str:
    if platform == "cisco_nxos":
        return " " * 13 + "^\n% Invalid command at '^' marker.\n"
    return "% Invalid input\n"


def _ports(state: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {n: b for n, b in (state.get("interfaces") or {}).items() if n.startswith("Ethernet")}


def _port(mode: ConfigMode) -> dict[str, Any] | None:
    for ctx in reversed(mode.stack):
        w = ctx.split()
        if w[0] == "interface":
            return _ports(mode.work).get(w[1])
    return None


def _enter(mode: ConfigMode, text: str) -> bool:
    mode.stack.append(text)
    return True


def _bytes(value: str, unit: str) -> int:
    if unit not in _UNITS or not value.isdigit():
        raise Invalid(f"Invalid input (at token: '{unit}')")
    return int(value) * _UNITS[unit]


# -------------------------------------------------------------------------------- EOS


def _eos(mode: ConfigMode, w: list[str]) -> bool:  # noqa: C901 - one branch per command, as the CLI's grammar
    text = " ".join(w)
    top = mode.stack[-1].split()[0] if mode.stack else None
    if top is None:
        if w[0] == "interface" and len(w) == 2:
            if w[1] not in _ports(mode.work):
                raise Invalid(f"Interface does not exist: {w[1]}")
            return _enter(mode, text)
        if m := re.fullmatch(r"(no )?qos map dscp ([\d ]+) to traffic-class (\d)", text):
            codes = [int(c) for c in m.group(2).split()]
            for b in _ports(mode.work).values():
                if "dscp_to_priority" in b:
                    for c in codes:
                        b["dscp_to_priority"][str(c)] = c // 8 if m.group(1) else int(m.group(3))
            return True
        return False
    port = _port(mode)
    if top == "interface" and port is not None:
        name = mode.stack[-1].split()[1]
        if w[0] == "mtu" and len(w) == 2:
            if not w[1].isdigit() or not 68 <= int(w[1]) <= 9214:
                raise Invalid("Invalid input (at token 1: '" + w[1] + "')")
            port["mtu"] = int(w[1])
            return True
        if text == "no mtu":
            port["mtu"] = 1500
            return True
        if w[:2] == ["error-correction", "encoding"] and len(w) == 3 and w[2] in _EOS_FEC:
            port["fec"] = _EOS_FEC[w[2]]
            return True
        if w[:3] == ["no", "error-correction", "encoding"]:
            port["fec"] = "none"
            return True
        if text == "speed auto":
            port["autoneg"] = True
            return True
        if w[0] == "speed" and len(w) == 2 and (m := re.fullmatch(r"(\d+)g(-\d|full)", w[1])):
            port["speed_gbps"], port["autoneg"] = int(m.group(1)), False
            return True
        if w[:2] == ["qos", "trust"] and len(w) == 3 and w[2] in ("dscp", "cos"):
            port["trust"] = "dscp" if w[2] == "dscp" else "pcp"
            return True
        if w[:3] == ["no", "qos", "trust"]:
            port["trust"] = "dscp"  # the default of a routed (no switchport) port
            return True
        if text == "priority-flow-control on":
            mode.extra["pfc_on"].add(name)
            return True
        if text == "no priority-flow-control":
            mode.extra["pfc_on"].discard(name)
            port["pfc_priorities"] = []
            return True
        if m := re.fullmatch(r"(no )?priority-flow-control priority ([0-7]) no-drop", text):
            prios = set(port.get("pfc_priorities") or [])
            prios = prios - {int(m.group(2))} if m.group(1) else prios | {int(m.group(2))}
            port["pfc_priorities"] = sorted(prios)
            return True
        if m := re.fullmatch(r"(no )?priority-flow-control pause watchdog", text):
            (mode.extra["watchdog"].discard if m.group(1) else mode.extra["watchdog"].add)(name)
            return True
        if w[0] == "tx-queue" and len(w) == 2 and w[1].isdigit():
            return _enter(mode, text)
        return False
    if top == "tx-queue" and port is not None:
        q = mode.stack[-1].split()[1]
        ecn = port.setdefault("ecn", {}).setdefault(q, {})
        m = re.fullmatch(
            r"random-detect ecn minimum-threshold (\d+) (\S+) maximum-threshold (\d+) (\S+)(?: max-mark-probability (\d+))?",
            text,
        )
        if m:
            ecn.update(
                enabled=True,
                min_bytes=_bytes(m.group(1), m.group(2)),
                max_bytes=_bytes(m.group(3), m.group(4)),
            )
            if m.group(5):
                ecn["probability_pct"] = int(m.group(5))
            return True
        if text.startswith("no random-detect ecn"):
            ecn["enabled"] = False
            return True
    return False


# -------------------------------------------------------------------------------- NX-OS


def _nxos_common(ports: dict[str, dict[str, Any]], field: str) -> Any:
    values = [b[field] for b in ports.values() if field in b]
    return max(values, key=values.count) if values else None


def _nxos(mode: ConfigMode, w: list[str]) -> bool:  # noqa: C901 - one branch per command, as the CLI's grammar
    text = " ".join(w)
    ports = _ports(mode.work)
    top = mode.stack[-1].split() if mode.stack else None
    if top is None:
        if w[0] == "interface" and len(w) == 2:
            if w[1] not in ports:
                raise Invalid(f"Invalid interface format at '^' marker: {w[1]}")
            return _enter(mode, text)
        if w[:3] in (
            ["policy-map", "type", "network-qos"],
            ["policy-map", "type", "queuing"],
            ["policy-map", "type", "qos"],
        ):
            return _enter(mode, text)
        if w[:3] == ["class-map", "type", "qos"] or text == "system qos":
            return _enter(mode, text)
        if m := re.fullmatch(r"(no )?priority-flow-control watch-dog-interval (on|off)", text):
            if not m.group(1):
                mode.work.setdefault("qos", {}).setdefault("pfc_watchdog", {})["enabled"] = m.group(2) == "on"
            return True
        return False
    if top[0] == "interface":
        port = ports[top[1]]
        if w[0] == "mtu" and len(w) == 2:
            if not w[1].isdigit() or not 576 <= int(w[1]) <= 9216:
                raise Invalid(f"Invalid number, value out of range at '^' marker: {w[1]}")
            port["mtu"] = int(w[1])
            return True
        if w[0] == "fec" and len(w) == 2 and w[1] in _NXOS_FEC:
            port["fec"] = _NXOS_FEC[w[1]]
            return True
        if w[:2] == ["no", "fec"]:
            port["fec"] = "auto"
            return True
        if text in ("negotiate auto", "no negotiate auto"):
            port["autoneg"] = text == "negotiate auto"
            return True
        if w[0] == "speed" and len(w) == 2 and w[1].isdigit():
            port["speed_gbps"] = int(w[1]) // 1000
            return True
        if w[:2] == ["priority-flow-control", "mode"] and len(w) == 3 and w[2] in ("on", "off", "auto"):
            port["pfc_priorities"] = list(mode.extra["lossless"]) if w[2] == "on" else []
            return True
        if m := re.fullmatch(r"no service-policy type (qos input|queuing output) \S+", text):
            field_ = "dscp_to_priority" if m.group(1) == "qos input" else "ecn"
            others = {p: b for p, b in ports.items() if p != top[1]}
            port[field_] = copy.deepcopy(_nxos_common(others, field_))
            return True
        return False
    if top[:3] == ["policy-map", "type", "network-qos"]:
        if w[:3] == ["class", "type", "network-qos"]:
            return _enter(mode, text)
        return False
    if top[:3] == ["class", "type", "network-qos"]:
        if m := re.fullmatch(r"(no )?pause pfc-cos ([\d,\- ]+)", text):
            try:
                cos = set(expand_ints(m.group(2), PCP))
            except ValueProblem as exc:
                raise Invalid(f"Invalid value at '^' marker: {exc}") from None
            lossless = set(mode.extra["lossless"])
            mode.extra["lossless"] = sorted(lossless - cos if m.group(1) else lossless | cos)
            for b in ports.values():
                if b.get("pfc_priorities"):
                    b["pfc_priorities"] = list(mode.extra["lossless"])
            return True
        return text.startswith(("mtu ", "pause "))
    if top[:3] == ["policy-map", "type", "queuing"]:
        if w[:3] == ["class", "type", "queuing"]:
            return _enter(mode, text)
        return False
    if top[:3] == ["class", "type", "queuing"]:
        policy = mode.stack[-2].split()[-1] if len(mode.stack) >= 2 else ""
        q = "0" if top[-1].endswith("default") else top[-1].removeprefix("c-out-8q-q")
        m = re.fullmatch(
            r"(no )?random-detect minimum-threshold (\d+) (\S+) maximum-threshold (\d+) (\S+)"
            r"(?: drop-probability (\d+))?(?: weight \d+)?( ecn)?", text
        )  # fmt: skip
        if not m:
            return text.startswith(("bandwidth ", "priority ", "no bandwidth", "no priority"))
        # The port whose own policy this is (the simulator names them QOS_EGRESS_<port>), else every
        # port on the system policy (those whose ECN is the common one).
        own = policy.removeprefix("QOS_EGRESS_").replace("_", "/")
        targets = [ports[own]] if own in ports else [
            b for b in ports.values() if b.get("ecn") == _nxos_common(ports, "ecn")
        ]  # fmt: skip
        for b in targets:
            ecn = b.setdefault("ecn", {}).setdefault(q, {})
            if m.group(1):
                ecn["enabled"] = False
                continue
            ecn.update(enabled=bool(m.group(7)), min_bytes=_bytes(m.group(2), m.group(3)),
                       max_bytes=_bytes(m.group(4), m.group(5)))  # fmt: skip
            if m.group(6):
                ecn["probability_pct"] = int(m.group(6))
        return True
    return False
