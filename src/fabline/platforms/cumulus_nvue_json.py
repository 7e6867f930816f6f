"""Cumulus Linux NVUE JSON (``nv show interface -o json``, ``nv config show -o json``).

Vendor semantics: :mod:`fabline.platforms.cumulus`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from fabline.platforms.base import Fragment, ParseContext, json_parser
from fabline.platforms.cumulus_values import fec_mode, flag, size_bytes, trust_fields
from fabline.platforms.loadbalance import nvue_load_balance
from fabline.platforms.routing import nvue_bgp_config
from fabline.platforms.toolkit import clip, speed_gbps
from fabline.state_types import StateBody

#: Interface types NVUE reports (``nv show interface -o json``: ``type``).
_NVUE_TYPES = frozenset(
    {"swp", "eth", "loopback", "bond", "bridge", "svi", "sub", "peerlink", "tunnel", "vxlan"}
)


# --- NVUE JSON: nv show interface -o json / nv config show -o json -------------------------------


def _link_fields(link: Any) -> dict[str, Any]:
    """Interface fields from an NVUE ``link`` object (config or operational); anything else has none."""
    out: dict[str, Any] = {}
    if not isinstance(link, Mapping):
        return out  # e.g. "link": true in a damaged answer (found by the fuzz harness)
    if isinstance(link.get("mtu"), int):
        out["mtu"] = link["mtu"]
    if link.get("speed") is not None and speed_gbps(str(link["speed"])) is not None:
        out["speed_gbps"] = speed_gbps(str(link["speed"]))
    if link.get("fec") is not None and fec_mode(str(link["fec"])):
        out["fec"] = fec_mode(str(link["fec"]))
    if link.get("auto-negotiate") is not None and flag(str(link["auto-negotiate"])) is not None:
        out["autoneg"] = flag(str(link["auto-negotiate"]))
    state = link.get("state")
    if isinstance(state, Mapping) and len(state) == 1:
        out["admin_up"] = next(iter(state)) == "up"
    elif isinstance(state, str) and flag(state) is not None:
        out["admin_up"] = flag(state)
    if link.get("admin-status") is not None and flag(str(link["admin-status"])) is not None:
        out["admin_up"] = flag(str(link["admin-status"]))
    if link.get("oper-status") is not None and flag(str(link["oper-status"])) is not None:
        out["oper_up"] = flag(str(link["oper-status"]))
    return out


@json_parser("NVUE interface JSON (an object of interfaces with link/type)")
def parse_nv_show_interface_json(doc: Any, ctx: ParseContext) -> StateBody:
    """``nv show interface -o json``: every interface's operational link state, speed, MTU."""
    if not isinstance(doc, dict) or not doc:
        raise ctx.reject("not a non-empty JSON object")
    interfaces: dict[str, Any] = {}
    for name, body in doc.items():
        if not isinstance(body, dict) or not (
            isinstance(body.get("link"), dict) or body.get("type") in _NVUE_TYPES
        ):
            raise ctx.reject(
                f"interface {clip(str(name))!r} has neither link nor type (an NVUE interface type)"
            )
        fields = _link_fields(body.get("link") or {})
        if body.get("description"):
            fields["description"] = str(body["description"])
        interfaces[name] = fields
    return {"interfaces": interfaces}


def _config_root(doc: Any) -> Mapping[str, Any] | None:
    if isinstance(doc, list):
        for item in doc:
            if isinstance(item, dict) and isinstance(item.get("set"), dict):
                return item["set"]  # type: ignore[no-any-return]
        return None
    if isinstance(doc, dict):
        return doc["set"] if isinstance(doc.get("set"), dict) else doc
    return None


def _obj(value: Any) -> Mapping[str, Any]:
    """The value if it is a JSON object, else an empty one (hostile or odd documents)."""
    return value if isinstance(value, Mapping) else {}


def _nvue_qos_profiles(qos: Mapping[str, Any], profile: Mapping[str, str]) -> dict[str, Any]:
    """Interface-shaped fields from the NVUE QoS profiles named in ``profile`` (kind -> name)."""
    out: dict[str, Any] = {}
    mapping = _obj(qos.get("mapping")).get(profile.get("mapping", ""))
    if isinstance(mapping, Mapping):
        if mapping.get("trust"):
            out.update(trust_fields([str(mapping["trust"])]))
        for key, field in (("dscp", "dscp_to_priority"), ("pcp", "pcp_to_priority")):
            table = mapping.get(key)
            if isinstance(table, Mapping) and table:
                values = {
                    str(k): int(v["switch-priority"])
                    for k, v in table.items()
                    if isinstance(v, Mapping) and str(v.get("switch-priority", "")).isdigit()
                }
                out[field] = dict(sorted(values.items(), key=lambda kv: int(kv[0])))
    pfc = _obj(qos.get("pfc")).get(profile.get("pfc", ""))
    if isinstance(pfc, Mapping):
        prios = pfc.get("switch-priority")
        if isinstance(prios, Mapping):
            out["pfc_priorities"] = sorted(int(p) for p in prios if str(p).isdigit())
        for key, field in (("rx", "pfc_rx"), ("tx", "pfc_tx")):
            if pfc.get(key) is not None and flag(str(pfc[key])) is not None:
                out[field] = flag(str(pfc[key]))
    cc = _obj(qos.get("congestion-control")).get(profile.get("congestion-control", ""))
    if isinstance(cc, Mapping) and isinstance(cc.get("traffic-class"), Mapping):
        ecn: dict[str, Any] = {}
        for tc, body in cc["traffic-class"].items():
            if not isinstance(body, Mapping):
                continue
            entry: dict[str, Any] = {}
            if body.get("ecn") is not None and flag(str(body["ecn"])) is not None:
                entry["enabled"] = flag(str(body["ecn"]))
            for key, field in (("min-threshold", "min_bytes"), ("max-threshold", "max_bytes")):
                if body.get(key) is not None and size_bytes(str(body[key])) is not None:
                    entry[field] = size_bytes(str(body[key]))
            if str(body.get("probability", "")).isdigit():
                entry["probability_pct"] = int(body["probability"])
            ecn[str(tc)] = entry
        if ecn:
            out["ecn"] = dict(sorted(ecn.items(), key=lambda kv: int(kv[0])))
    return out


@json_parser("the NVUE configuration as JSON (a 'set' document with interface/system/qos)")
def parse_nv_config_show_json(doc: Any, ctx: ParseContext) -> StateBody:
    """``nv config show -o json``: the applied NVUE configuration (configured, not operational).

    Feeds ``facts.hostname``; per interface the configured link (mtu, speed, fec, autoneg,
    admin state), description and QoS from the profiles the port names; ``qos.roce``;
    ``qos.port_defaults`` from the ``default-global`` profiles; per-port ``pfc_watchdog``.
    """
    root = _config_root(doc)
    if root is None or not any(k in root for k in ("interface", "system", "qos")):
        raise ctx.reject("no interface, system or qos section")
    fragment: Fragment = {}
    system = root.get("system")
    if isinstance(system, Mapping) and system.get("hostname"):
        fragment["facts"] = {"hostname": str(system["hostname"])}
    qos_cfg = root.get("qos") if isinstance(root.get("qos"), Mapping) else {}
    assert isinstance(qos_cfg, Mapping)
    qos: dict[str, Any] = {}
    roce = qos_cfg.get("roce")
    if isinstance(roce, Mapping):
        entry: dict[str, Any] = {}
        # 'enable: on' up to 5.14, 'state: enabled' from 5.15 (NVIDIA's "New and Changed NVUE Commands").
        switch = roce.get("state", roce.get("enable"))
        if switch is not None and flag(str(switch)) is not None:
            entry["enabled"] = flag(str(switch))
        if roce.get("mode"):
            entry["mode"] = str(roce["mode"])
            qos["buffer_mode"] = str(roce["mode"])
        qos["roce"] = entry
    global_profiles = dict.fromkeys(("mapping", "pfc", "congestion-control"), "default-global")
    defaults = _nvue_qos_profiles(qos_cfg, global_profiles)
    if defaults:
        qos["port_defaults"] = defaults
    if qos:
        fragment["qos"] = qos
    interfaces: dict[str, Any] = {}
    for name, body in _obj(root.get("interface")).items():
        if not isinstance(body, Mapping):
            continue
        fields = _link_fields(_obj(body.get("link")))
        if body.get("description"):
            fields["description"] = str(body["description"])
        port_qos = body.get("qos") if isinstance(body.get("qos"), Mapping) else {}
        assert isinstance(port_qos, Mapping)
        named = {
            kind: str(ref["profile"])
            for kind, ref in port_qos.items()
            if isinstance(ref, Mapping) and ref.get("profile")
        }
        fields.update(_nvue_qos_profiles(qos_cfg, named))
        wd = port_qos.get("pfc-watchdog")
        if isinstance(wd, Mapping) and wd.get("state") is not None and flag(str(wd["state"])) is not None:
            fields["pfc_watchdog"] = {"enabled": flag(str(wd["state"]))}
        if fields:
            interfaces[str(name)] = fields
    if interfaces:
        fragment["interfaces"] = interfaces
    fragment.update(nvue_bgp_config(root))
    fragment.update(nvue_load_balance(root))
    return cast(StateBody, fragment)
