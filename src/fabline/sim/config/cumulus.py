"""NVUE on Cumulus Linux 5.x: ``nv set``/``nv unset`` into the pending revision, ``nv config apply``.

As NVUE documents it: ``nv set``/``nv unset`` change the pending revision only (silently, exit 0);
``nv config diff`` shows the pending change; ``nv config apply`` (``-y``/``--assume-yes`` skips the
question) validates the revision and makes it the applied one, ``nv config detach`` drops it.
A value NVUE's schema refuses is an error at ``nv set``; a profile a port names that does not
exist fails the apply. Only the branches RoCE remediation uses are modelled (``interface <swp>
link``, ``interface <swp> qos``, ``qos pfc|mapping|congestion-control <profile>``).
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from fabline.platforms import get_platform
from fabline.sim.device import SimDevice
from fabline.sim.render.common import Answer
from fabline.sim.render.cumulus import nv_config

_FEC_WORDS = get_platform("cumulus").vocabulary.fec
_FEC_STATE = {word: mode for mode, word in _FEC_WORDS.items()}
_KINDS = ("pfc", "mapping", "congestion-control")

#: Leaf paths that take a value, as regular expressions over the words after ``nv set``.
_LEAVES: list[tuple[re.Pattern[str], re.Pattern[str]]] = [
    (
        re.compile(r"interface swp\S+ link mtu"),
        re.compile(r"(55[2-9]|5[6-9]\d|[6-9]\d\d|[1-8]\d{3}|9[01]\d\d|920\d|921[0-6])"),
    ),
    (re.compile(r"interface swp\S+ link fec"), re.compile("|".join(map(re.escape, sorted(_FEC_STATE))))),
    (re.compile(r"interface swp\S+ link auto-negotiate"), re.compile(r"on|off")),
    (re.compile(r"interface swp\S+ link speed"), re.compile(r"\d+G|auto")),
    (re.compile(r"interface swp\S+ description"), re.compile(r".+")),
    (re.compile(r"interface swp\S+ qos (pfc|mapping|congestion-control) profile"), re.compile(r"[\w.-]+")),
    (re.compile(r"interface swp\S+ qos pfc-watchdog state"), re.compile(r"enable|disable")),
    (re.compile(r"qos pfc \S+ (rx|tx)"), re.compile(r"enable|disable")),
    (re.compile(r"qos mapping \S+ trust"), re.compile(r"l2|l3|port")),
    (re.compile(r"qos mapping \S+ dscp ([0-9]|[1-5][0-9]|6[0-3]) switch-priority"), re.compile(r"[0-7]")),
    (re.compile(r"qos congestion-control \S+ traffic-class [0-7] ecn"), re.compile(r"enable|disable")),
    (re.compile(r"qos congestion-control \S+ traffic-class [0-7] (min|max)-threshold"), re.compile(r"\d+")),
    (
        re.compile(r"qos congestion-control \S+ traffic-class [0-7] probability"),
        re.compile(r"\d|[1-9]\d|100"),
    ),
]
#: Set members (a key without a value): ``qos pfc <profile> switch-priority N``.
_MEMBERS = re.compile(r"qos pfc \S+ switch-priority [0-7]")
_BRANCHES = re.compile(r"(interface swp\S+( (link|qos( (pfc|mapping|congestion-control|pfc-watchdog))?))?"
                       r"|qos( (pfc|mapping|congestion-control)( \S+( .*)?)?)?)")  # fmt: skip


def command(dev: SimDevice, argv: list[str]) -> Answer | None:
    """``nv set|unset ...``, ``nv config apply|diff|detach``; None for any other command."""
    if len(argv) < 2 or argv[0] != "nv" or argv[1] not in ("set", "unset", "config"):
        return None
    if argv[1] == "config" and (len(argv) < 3 or argv[2] not in ("apply", "diff", "detach")):
        return None  # `nv config show` and the rest stay with the renderer
    if argv[1] == "config":
        return _config(dev, argv[2:])
    words = argv[2:]
    if dev.pending is None:
        dev.pending = copy.deepcopy(nv_config(dev, dev.state())[1]["set"])
    path = " ".join(words)
    if argv[1] == "unset":
        if not words or (
            not _BRANCHES.fullmatch(path)
            and not any(k.fullmatch(path) for k, _ in _LEAVES)
            and not _MEMBERS.fullmatch(path)
        ):
            return Answer("", 1, f"Error: Invalid Command: nv unset {path}\n")
        _unset(dev.pending, words)
        return Answer("")
    if _MEMBERS.fullmatch(path):
        _put(dev.pending, words, {})
        return Answer("")
    for key, value in _LEAVES:
        if len(words) >= 2 and key.fullmatch(" ".join(words[:-1])):
            if not value.fullmatch(words[-1]):
                return Answer("", 1, f"Error: Invalid value '{words[-1]}' for '{words[-2]}'\n")
            raw = words[-1]
            _put(dev.pending, words[:-1], int(raw) if raw.isdigit() else raw)
            return Answer("")
    return Answer("", 1, f"Error: Invalid Command: nv set {path}\n")


def _put(tree: dict[str, Any], path: list[str], value: Any) -> None:
    for p in path[:-1]:
        nxt = tree.get(p)
        if not isinstance(nxt, dict):
            nxt = tree[p] = {}
        tree = nxt
    tree[path[-1]] = value


def _unset(tree: dict[str, Any], path: list[str]) -> None:
    for p in path[:-1]:
        nxt = tree.get(p)
        if not isinstance(nxt, dict):
            return
        tree = nxt
    tree.pop(path[-1], None)


def _config(dev: SimDevice, args: list[str]) -> Answer:
    if args[0] == "detach":
        dev.pending = None
        return Answer("")
    if args[0] == "diff":
        if dev.pending is None:
            return Answer("")
        return Answer(json.dumps(dev.pending, indent=2, sort_keys=True) + "\n")
    if args[0] == "apply":
        if dev.pending is None:
            return Answer("Warning: There is no pending configuration to apply.\n")
        problems = _check(dev.pending)
        if problems:
            return Answer("", 1, "Error: Config invalid:\n" + "".join(f"  {p}\n" for p in problems))
        tree = dev.pending
        dev.pending = None
        dev.configure(lambda state: follow(state, tree))
        return Answer("applied [rev_id: 2]\n")
    return Answer(
        "", 2, f"Error: Invalid command: nv config {' '.join(args)}\n"
    )  # not reached: see command()


def _check(tree: dict[str, Any]) -> list[str]:
    problems = []
    qos = tree.get("qos") or {}
    for name, body in (tree.get("interface") or {}).items():
        for kind in _KINDS:
            profile = ((body.get("qos") or {}).get(kind) or {}).get("profile")
            if profile is not None and profile not in (qos.get(kind) or {}):
                problems.append(f"interface {name} qos {kind} profile: '{profile}' does not exist")
    return problems


def follow(state: dict[str, Any], tree: dict[str, Any]) -> None:
    """Make the device state what the applied NVUE tree programs (the inverse of ``nv_config``)."""
    qos = tree.get("qos") or {}
    ifaces = state.setdefault("interfaces", {})
    watchdog: list[bool] = []
    for name, node in (tree.get("interface") or {}).items():
        if not isinstance(node, dict) or node.get("type", "swp") != "swp" or name not in ifaces:
            continue
        body = ifaces[name]
        link = node.get("link") or {}
        if "mtu" in link:
            body["mtu"] = int(link["mtu"])
        if "fec" in link:
            body["fec"] = _FEC_STATE.get(link["fec"], link["fec"])
        if "auto-negotiate" in link:
            body["autoneg"] = link["auto-negotiate"] == "on"
        if str(link.get("speed", "")).endswith("G"):
            body["speed_gbps"] = int(link["speed"][:-1])
        port_qos = node.get("qos") or {}

        def profile(kind: str, port_qos: dict[str, Any] = port_qos) -> dict[str, Any]:
            name_ = (port_qos.get(kind) or {}).get("profile") or "default-global"
            return dict((qos.get(kind) or {}).get(name_) or {})

        mapping = profile("mapping")
        if "dscp" in mapping:
            body["dscp_to_priority"] = {k: int(v["switch-priority"]) for k, v in mapping["dscp"].items()}
        if "trust" in mapping:
            body["trust"] = "dscp" if mapping["trust"] == "l3" else "pcp"
        if "pfc_priorities" in body:
            body["pfc_priorities"] = sorted(int(p) for p in (profile("pfc").get("switch-priority") or {}))
        cc = profile("congestion-control").get("traffic-class") or {}
        if cc:
            ecn: dict[str, Any] = {}
            for tc, row in cc.items():
                e: dict[str, Any] = {"enabled": row.get("ecn") == "enable"}
                for leaf, key in (("min_bytes", "min-threshold"), ("max_bytes", "max-threshold"),
                                  ("probability_pct", "probability")):  # fmt: skip
                    if key in row:
                        e[leaf] = int(row[key])
                ecn[str(tc)] = e
            body["ecn"] = ecn
        if body.get("pfc_priorities"):
            watchdog.append((port_qos.get("pfc-watchdog") or {}).get("state") == "enable")
    if watchdog:
        state.setdefault("qos", {}).setdefault("pfc_watchdog", {})["enabled"] = all(watchdog)
