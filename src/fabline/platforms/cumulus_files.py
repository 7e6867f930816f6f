"""Cumulus Linux classic files and tools: ``/etc/cumulus/datapath/traffic.conf`` and ``decode-syseeprom``.

Cumulus 3.x/4.x keep QoS in ``traffic.conf`` (``key = value`` lines); every release answers
``decode-syseeprom`` with the ONIE TlvInfo EEPROM. Vendor semantics: :mod:`fabline.platforms.cumulus`.
"""

from __future__ import annotations

import copy
import re
from typing import Any, cast

from fabline.platforms.base import Fragment, ParseContext, text_parser
from fabline.platforms.cumulus_values import expand_ports, flag, trust_fields
from fabline.platforms.toolkit import DSCP, PCP, PRIORITY, int_in
from fabline.state_types import Facts, StateBody

_TLV_ROW = re.compile(
    r"^(?P<name>[A-Za-z][A-Za-z0-9 ./-]*?)\s+0x(?P<code>[0-9A-Fa-f]{2})\s+\d+\s(?P<value>.*)$"
)


@text_parser("an ONIE TlvInfo EEPROM dump (TLV Name / Code / Len / Value rows)")
def parse_decode_syseeprom(text: str, ctx: ParseContext) -> StateBody:
    """``decode-syseeprom``: model (Product Name), serial, vendor, part number, base MAC (ONIE TLVs)."""
    tlvs = {m["name"].strip(): m["value"].strip() for m in map(_TLV_ROW.match, text.splitlines()) if m}
    if not tlvs:
        raise ctx.reject("no TLV rows")
    facts: dict[str, Any] = {}
    for tlv, field in (
        ("Product Name", "model"),
        ("Serial Number", "serial"),
        ("Vendor Name", "vendor"),
        ("Part Number", "part_number"),
        ("Base MAC Address", "base_mac"),
    ):
        if tlvs.get(tlv):
            facts[field] = tlvs[tlv]
    return {"facts": cast(Facts, facts)}


# --- /etc/cumulus/datapath/traffic.conf ----------------------------------------------------------


def _conf_value(raw: str) -> Any:
    raw = raw.strip()
    if raw.startswith("[") and raw.endswith("]"):
        return [item.strip() for item in raw[1:-1].split(",") if item.strip()]
    return raw


@text_parser("a Cumulus traffic.conf (traffic.* = ... lines)")
def parse_traffic_conf(text: str, ctx: ParseContext) -> StateBody:  # noqa: C901 - one branch per traffic.conf key family
    """``cat /etc/cumulus/datapath/traffic.conf`` (Cumulus 3.x/4.x): classification, PFC, ECN.

    Classification (``packet_priority_source_set`` and the ``cos_N.priority_source`` lists) is
    switch-wide: ``qos.port_defaults``. PFC and ECN port groups name their ports
    (``port_set``): each port gets ``pfc_priorities``/``pfc_rx``/``pfc_tx`` and ``ecn`` keyed by
    the internal cos. A map whose header field is not in the source set is not in effect and
    is left out.
    """
    conf: dict[str, Any] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        conf[key.strip()] = _conf_value(value)
    if not any(k.startswith("traffic.") for k in conf):
        raise ctx.reject("no traffic.* setting")

    defaults: dict[str, Any] = {}
    sources = conf.get("traffic.packet_priority_source_set", [])
    sources = sources if isinstance(sources, list) else [sources]
    defaults.update(trust_fields(sources))
    for field, header, suffix in (
        ("pcp_to_priority", "802.1p", "8021p"),
        ("dscp_to_priority", "dscp", "dscp"),
    ):
        if header not in sources:
            continue
        mapping: dict[str, int] = {}
        for cos in range(8):
            domain = DSCP if header == "dscp" else PCP
            for value in conf.get(f"traffic.cos_{cos}.priority_source.{suffix}", []):
                if (code := int_in(value, domain)) is not None:
                    mapping[str(code)] = cos
        if mapping:
            defaults[field] = dict(sorted(mapping.items(), key=lambda kv: int(kv[0])))

    interfaces: dict[str, dict[str, Any]] = {}
    for group in conf.get("pfc.port_group_list", []):
        prefix = f"pfc.{group}."
        cos_list = sorted(
            {p for c in conf.get(prefix + "cos_list", []) if (p := int_in(c, PRIORITY)) is not None}
        )
        fields: dict[str, Any] = {"pfc_priorities": cos_list}
        for key, field in (("rx_enable", "pfc_rx"), ("tx_enable", "pfc_tx")):
            if flag(str(conf.get(prefix + key, ""))) is not None:
                fields[field] = flag(str(conf[prefix + key]))
        for port in expand_ports(str(conf.get(prefix + "port_set", ""))):
            interfaces.setdefault(port, {}).update(copy.deepcopy(fields))
    for group in conf.get("ecn_red.port_group_list", []):
        prefix = f"ecn_red.{group}."
        entry: dict[str, Any] = {}
        if flag(str(conf.get(prefix + "ecn_enable", ""))) is not None:
            entry["enabled"] = flag(str(conf[prefix + "ecn_enable"]))
        for key, field in (("min_threshold_bytes", "min_bytes"), ("max_threshold_bytes", "max_bytes")):
            if str(conf.get(prefix + key, "")).isdigit():
                entry[field] = int(conf[prefix + key])
        if str(conf.get(prefix + "probability", "")).isdigit():
            entry["probability_pct"] = int(conf[prefix + "probability"])
        if flag(str(conf.get(prefix + "red_enable", ""))) is not None:
            entry["red_enabled"] = flag(str(conf[prefix + "red_enable"]))
        for port in expand_ports(str(conf.get(prefix + "port_set", ""))):
            ecn = interfaces.setdefault(port, {}).setdefault("ecn", {})
            for cos in conf.get(prefix + "cos_list", []):
                if (queue := int_in(cos, PRIORITY)) is not None:
                    ecn[str(queue)] = dict(entry)
    fragment: Fragment = {}
    if defaults:
        fragment["qos"] = {"port_defaults": defaults}
    if interfaces:
        fragment["interfaces"] = interfaces
    if not fragment:
        raise ctx.reject("no classification, PFC or ECN settings")
    return cast(StateBody, fragment)
