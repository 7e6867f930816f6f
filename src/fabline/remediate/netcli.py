"""Arista EOS and Cisco NX-OS: configuration-mode CLI from hier_config's remediation.

The collected ``show running-config`` is loaded with hier_config (the platform's driver: its
negation, idempotent-command and ordering rules). The intended configuration is that tree with
the fixes edited in (the lines of an interface section, a ``tx-queue``, the global ``qos map
dscp`` lines, NX-OS's ``system qos`` policies); hier_config's ``WorkflowRemediation`` then gives
the commands that take the running configuration there. Nothing is concatenated by hand.

One :class:`NetworkCli` per platform (:data:`EOS`, :data:`NXOS`), named by its platform spec's
``remediation``. Platform limits the change follows (as the simulator and ``docs/platforms/*.md`` describe them):
EOS maps DSCP to traffic class switch-wide (``qos map dscp``); NX-OS has one lossless set, the
``pause pfc-cos`` lines of the network-qos policy ``system qos`` names, and per-port QoS only
through a port's own ``service-policy``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from hier_config import HConfig, MatchRule, WorkflowRemediation, get_hconfig, get_hconfig_driver
from hier_config import Platform as HierPlatform
from hier_config.child import HConfigChild
from hier_config.models import IdempotentCommandsRule
from hier_config.platforms.driver_base import HConfigDriverBase

from fabline.platforms import Platform, get_platform
from fabline.remediate.common import (
    NoEvidence,
    RawReader,
    Stages,
    Tasks,
    port_changes,
    remediator,
    running_config,
    watchdog_change,
)
from fabline.remediate.model import DeviceChange

CONFIG_COMMANDS = ("show running-config",)
Section = HConfig | HConfigChild


def _replace(section: Section, prefixes: Iterable[str], lines: Iterable[str]) -> None:
    """Delete the section's lines starting with any prefix, then add ``lines``."""
    starts = tuple(prefixes)
    for child in list(section.children):
        if child.text.startswith(starts):
            child.delete()
    for line in lines:
        section.add_child(line)


def _section(parent: Section, text: str) -> HConfigChild:
    child = parent.get_child(equals=text)
    return child if child is not None else parent.add_child(text)


def _text(cfg: HConfig) -> str:
    return "\n".join(line.cisco_style_text() for line in cfg.all_children_sorted())


# -------------------------------------------------------------------------------- Arista EOS


def _eos_speed(gbps: float) -> str:
    return f"speed {int(gbps)}g-8" if int(gbps) == 400 else f"speed {int(gbps)}gfull"


def eos_edit(cfg: HConfig, before: Mapping[str, Any], after: Mapping[str, Any]) -> None:
    """Edit an EOS running-config tree into the intended one for ``before`` -> ``after``."""
    fec = {**{m: f"error-correction encoding {w}" for m, w in get_platform("arista_eos").vocabulary.fec.items()},
           "none": "no error-correction encoding"}  # fmt: skip
    changes = port_changes(before, after)
    for port, diff in changes.items():
        sec = _section(cfg, f"interface {port}")
        body = after["interfaces"][port]
        if "mtu" in diff:
            _replace(sec, ("mtu ",), [f"mtu {diff['mtu']}"])
        if "fec" in diff and diff["fec"] in fec:
            _replace(sec, ("error-correction encoding", "no error-correction encoding"), [fec[diff["fec"]]])
        if "autoneg" in diff or "speed_gbps" in diff:
            speed = "speed auto" if body.get("autoneg") else _eos_speed(body.get("speed_gbps", 400))
            _replace(sec, ("speed ",), [speed])
        if "trust" in diff:
            _replace(sec, ("qos trust",), [f"qos trust {'dscp' if diff['trust'] == 'dscp' else 'cos'}"])
        if "pfc_priorities" in diff:
            prios = diff["pfc_priorities"]
            lines = [
                "priority-flow-control on",
                *(f"priority-flow-control priority {p} no-drop" for p in prios),
            ]
            _replace(sec, ("priority-flow-control on", "priority-flow-control priority ", "no priority-flow-control"),
                     lines if prios else ["no priority-flow-control"])  # fmt: skip
        for q, e in sorted((diff.get("ecn") or {}).items()):
            tq = _section(sec, f"tx-queue {q}")
            line = []
            if e.get("enabled"):
                line = [
                    f"random-detect ecn minimum-threshold {_size(e['min_bytes'])} maximum-threshold "
                    f"{_size(e['max_bytes'])}" + (f" max-mark-probability {e['probability_pct']}" if "probability_pct" in e else "")
                ]  # fmt: skip
            _replace(tq, ("random-detect ecn",), line)
    _eos_dscp(cfg, before, after, changes)
    wd = watchdog_change(before, after)
    if wd is not None:
        for port, body in (after.get("interfaces") or {}).items():
            iface = cfg.get_child(equals=f"interface {port}")
            if iface is None or not body.get("pfc_priorities"):
                continue
            _replace(iface, ("priority-flow-control pause watchdog", "no priority-flow-control pause watchdog"),
                     ["priority-flow-control pause watchdog"] if wd else [])  # fmt: skip


def _size(n: int) -> str:
    return f"{n // 1000} kbytes" if n % 1000 == 0 else f"{n} bytes"


def _eos_dscp(
    cfg: HConfig, before: Mapping[str, Any], after: Mapping[str, Any], changes: Mapping[str, Any]
) -> None:
    changed = [p for p, d in changes.items() if "dscp_to_priority" in d]
    if not changed:
        return
    old = before["interfaces"][changed[0]].get("dscp_to_priority") or {}
    new = after["interfaces"][changed[0]].get("dscp_to_priority") or {}
    moved = {int(d): int(tc) for d, tc in new.items() if old.get(d) != tc}
    if not moved:
        return
    # Take each moved DSCP out of the line that maps it now, then map it where it belongs.
    for child in list(cfg.children):
        words = child.text.split()
        if words[:3] != ["qos", "map", "dscp"] or "to" not in words:
            continue
        cut = words.index("to")
        codes = [w for w in words[3:cut] if not (w.isdigit() and int(w) in moved)]
        if len(codes) == cut - 3:
            continue
        text = " ".join(["qos map dscp", *codes, *words[cut:]])
        child.delete()
        if codes:
            cfg.add_child(text)
    by_tc: dict[int, list[int]] = {}
    for d, tc in sorted(moved.items()):
        by_tc.setdefault(tc, []).append(d)
    for tc, dscps in sorted(by_tc.items()):
        cfg.add_child(f"qos map dscp {' '.join(str(c) for c in dscps)} to traffic-class {tc}")


# -------------------------------------------------------------------------------- Cisco NX-OS


def _system_policy(cfg: HConfig, kind: str) -> str | None:
    sysqos = cfg.get_child(equals="system qos")
    if sysqos is None:
        return None
    for child in sysqos.children:
        words = child.text.split()
        if words[:3] == ["service-policy", "type", kind]:
            return words[-1]
    return None


def nxos_edit(cfg: HConfig, before: Mapping[str, Any], after: Mapping[str, Any]) -> None:
    """Edit an NX-OS running-config tree into the intended one for ``before`` -> ``after``.

    Raises:
        NoEvidence: A change NX-OS expresses only through policies the running config lacks.
    """
    fec = get_platform("cisco_nxos").vocabulary.fec
    changes = port_changes(before, after)
    for port, diff in changes.items():
        sec = _section(cfg, f"interface {port}")
        body = after["interfaces"][port]
        if "mtu" in diff:
            _replace(sec, ("mtu ",), [f"mtu {diff['mtu']}"])
        if "fec" in diff:
            _replace(sec, ("fec ",), [f"fec {fec.get(diff['fec'], diff['fec'])}"])
        if "autoneg" in diff:
            lines = (
                ["negotiate auto"]
                if body.get("autoneg")
                else [f"speed {int(body.get('speed_gbps', 400) * 1000)}", "no negotiate auto"]
            )
            _replace(sec, ("negotiate auto", "no negotiate auto", "speed "), lines)
        if "pfc_priorities" in diff:
            _replace(
                sec,
                ("priority-flow-control mode",),
                [f"priority-flow-control mode {'on' if diff['pfc_priorities'] else 'off'}"],
            )
        for kind, field in (("qos input", "dscp_to_priority"), ("queuing output", "ecn")):
            if field in diff:
                _nxos_port_policy(cfg, sec, port, kind, field, before, after)
    _nxos_lossless(cfg, before, after, changes)
    wd = watchdog_change(before, after)
    if wd is not None:
        _replace(
            cfg,
            ("priority-flow-control watch-dog-interval",),
            [f"priority-flow-control watch-dog-interval {'on' if wd else 'off'}"],
        )


def _nxos_port_policy(
    cfg: HConfig,
    sec: HConfigChild,
    port: str,
    kind: str,
    field: str,
    before: Mapping[str, Any],
    after: Mapping[str, Any],
) -> None:
    """A port's DSCP map or ECN: back to the system policy's when that is the intended value."""
    others = [b.get(field) for p, b in (before.get("interfaces") or {}).items() if p != port and field in b]
    common = max(others, key=others.count) if others else None
    target = after["interfaces"][port][field]
    own = next((c for c in sec.children if c.text.startswith(f"service-policy type {kind} ")), None)
    if target == common and own is not None:
        own.delete()
        return
    if kind == "queuing output" and own is not None:
        policy = cfg.get_child(equals=f"policy-map type queuing {own.text.split()[-1]}")
        if policy is not None:
            _nxos_queuing(policy, target)
            return
    system = _system_policy(cfg, "queuing output" if kind == "queuing output" else "qos input")
    if (
        kind == "queuing output"
        and own is None
        and system is not None
        and all(b.get("ecn") == target for b in (after.get("interfaces") or {}).values() if "ecn" in b)
    ):
        policy = cfg.get_child(equals=f"policy-map type queuing {system}")
        if policy is not None:
            _nxos_queuing(policy, target)
            return
    raise NoEvidence(
        f"{port}: the {field} change needs a QoS policy the running config does not give this port alone; "
        "edit the class-maps by hand"
    )


def _nxos_queuing(policy: HConfigChild, ecn: Mapping[str, Any]) -> None:
    for q, e in ecn.items():
        name = "c-out-8q-q-default" if str(q) == "0" else f"c-out-8q-q{q}"
        cls = _section(policy, f"class type queuing {name}")
        line = []
        if e.get("enabled"):
            line = [
                f"random-detect minimum-threshold {_size(e['min_bytes'])} maximum-threshold {_size(e['max_bytes'])} "
                f"drop-probability {e.get('probability_pct', 100)} weight 0 ecn"
            ]
        _replace(cls, ("random-detect",), line)


def _nxos_lossless(
    cfg: HConfig, before: Mapping[str, Any], after: Mapping[str, Any], changes: Mapping[str, Any]
) -> None:
    if not any("pfc_priorities" in d for d in changes.values()):
        return
    lossless = sorted(
        {p for b in (after.get("interfaces") or {}).values() for p in b.get("pfc_priorities") or []}
    )
    was = sorted(
        {p for b in (before.get("interfaces") or {}).values() for p in b.get("pfc_priorities") or []}
    )
    if lossless == was:
        return
    name = _system_policy(cfg, "network-qos")
    policy = None if name is None else cfg.get_child(equals=f"policy-map type network-qos {name}")
    if policy is None:
        raise NoEvidence(
            "no network-qos policy under `system qos` in the running config: the lossless set cannot be changed"
        )
    for q in range(8):
        cls = _section(policy, "class type network-qos " + ("c-8q-nq-default" if q == 0 else f"c-8q-nq{q}"))
        _replace(cls, ("pause pfc-cos",), [f"pause pfc-cos {q}"] if q in lossless else [])


# -------------------------------------------------------------------------------- both


Edit = Callable[[HConfig, Mapping[str, Any], Mapping[str, Any]], None]


@dataclass(frozen=True)
class NetworkCli:
    """The change format of a configuration-mode CLI platform: hier_config's remediation of its
    collected running-config, applied with the platform's Ansible ``<os>_config`` module.

    Attributes:
        platform: Platform id.
        hier_platform: hier_config's platform (its driver).
        edit: Edits a running-config tree into the intended one for ``before`` -> ``after``.
        apply: How a person applies the change file (its header says it).
        single_valued: Interface commands that hold one value (a new line replaces the old; no
            negation first), beyond the ones hier_config's driver knows.
        single_valued_global: Global commands that hold one value.
    """

    platform: str
    hier_platform: HierPlatform
    edit: Edit
    apply: str
    single_valued: tuple[str, ...] = ()
    single_valued_global: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # A Platform member is its id, but changes and their YAML carry the plain string.
        object.__setattr__(self, "platform", str(self.platform))

    def driver(self) -> HConfigDriverBase:
        """hier_config's driver for the platform, with the single-valued RoCE commands."""
        drv = get_hconfig_driver(self.hier_platform)
        for prefix in self.single_valued:
            drv.rules.idempotent_commands.append(
                IdempotentCommandsRule(
                    match_rules=(MatchRule(startswith="interface "), MatchRule(startswith=prefix))
                )
            )
        for prefix in self.single_valued_global:
            drv.rules.idempotent_commands.append(
                IdempotentCommandsRule(match_rules=(MatchRule(startswith=prefix),))
            )
        return drv

    def remediation(self, running: str, stages: Stages) -> tuple[str, str]:
        """hier_config's remediation: the traffic-safe lines, then the traffic-interrupting ones."""
        drv = self.driver()
        current = get_hconfig(drv, running)
        safe = get_hconfig(drv, running)
        self.edit(safe, stages.before, stages.safe)
        final = get_hconfig(drv, "\n".join(line.cisco_style_text() for line in safe.all_children_sorted()))
        self.edit(final, stages.safe, stages.after)
        first = WorkflowRemediation(current, safe).remediation_config
        second = WorkflowRemediation(safe, final).remediation_config
        return _text(first), _text(second)

    def emit(self, stages: Stages, raw: RawReader) -> DeviceChange:
        """The configuration-mode change of one device.

        Raises:
            NoEvidence: No running-config in the snapshot, or a change it cannot express.
        """
        text = running_config(raw, CONFIG_COMMANDS, "running-config")
        label = get_platform(self.platform).description
        safe, risky = self.remediation(text, stages)
        name = stages.device
        change = DeviceChange(name, self.platform, list(stages.fixes))
        header = (
            f"! {name} ({label}): hier_config remediation of the collected running-config.\n"
            f"! Apply: {self.apply}.\n"
        )
        if safe:
            change.files[f"{name}.cli.txt"] = header + safe + "\n"
            change.steps += safe.splitlines()
        if risky:
            change.files[f"{name}.disruptive.cli.txt"] = (
                header
                + "! Interrupts traffic on live ports (FEC / speed / autonegotiation): apply last.\n"
                + risky
                + "\n"
            )
            change.steps += risky.splitlines()
            change.disruptive += risky.splitlines()
        return change

    def tasks(self, change: DeviceChange, disruptive: bool) -> Tasks:
        """The platform's ``<os>_config`` module with the change file as ``src``, over
        ``ansible.netcommon.network_cli`` (``--check --diff`` supported).
        """
        name = f"{change.device}.disruptive.cli.txt" if disruptive else f"{change.device}.cli.txt"
        if name not in change.files:
            return [], {}
        # The platform's Ansible name (its FQCN ansible_network_os); its config module is <name>_config.
        network_os = next(n for n in get_platform(self.platform).network_os if "." in n)
        tasks = [
            {
                "name": f"apply devices/{name} (hier_config remediation)",
                f"{network_os}_config": {"src": f"devices/{name}"},
            }
        ]
        play_vars = {"ansible_connection": "ansible.netcommon.network_cli", "ansible_network_os": network_os}
        return tasks, play_vars


#: Arista EOS (``PlatformSpec.remediation`` of ``fabline.platforms.arista_eos``). ``error-correction
#: encoding`` is not single-valued: several encodings can be allowed at once, so the old one is negated.
EOS = NetworkCli(
    Platform.ARISTA_EOS,
    HierPlatform.ARISTA_EOS,
    eos_edit,
    "configure session fabline-remediate, paste, `show session-config diffs`, then `commit` (or `abort`)",
    single_valued=("qos trust ", "speed "),
)
#: Cisco NX-OS (``PlatformSpec.remediation`` of ``fabline.platforms.cisco_nxos``): ``fec`` takes one
#: mode, ``speed`` one speed, ``priority-flow-control mode`` one mode; the global watchdog switch is
#: one line, on or off.
NXOS = NetworkCli(
    Platform.CISCO_NXOS,
    HierPlatform.CISCO_NXOS,
    nxos_edit,
    "configure terminal, paste, end; `show running-config diff` to review",
    single_valued=("fec ", "speed ", "priority-flow-control mode "),
    single_valued_global=("priority-flow-control watch-dog-interval ",),
)


def _cli(platform: str) -> NetworkCli:
    found = remediator(platform)
    if not isinstance(found, NetworkCli):
        raise ValueError(f"platform {platform!r} is not remediated as a configuration-mode CLI")
    return found


def driver(platform: str) -> HConfigDriverBase:
    """hier_config's driver for a platform, with its single-valued RoCE commands."""
    return _cli(platform).driver()


def remediation(platform: str, running: str, stages: Stages) -> tuple[str, str]:
    """hier_config's remediation on a platform: the traffic-safe lines, then the traffic-interrupting ones."""
    return _cli(platform).remediation(running, stages)
