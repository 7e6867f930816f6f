"""SONiC's generic config updater: ``sudo config apply-patch FILE [--dry-run]`` on CONFIG_DB.

As sonic-utilities does (``config/main.py`` ``apply_patch``, ``generic_config_updater``): the
RFC 6902 patch is applied to the running CONFIG_DB (a ``replace``/``remove`` of a missing path
fails the whole patch), the result is validated (the YANG models' ranges and references that
matter here: port MTU 68-9216, FEC ``rs``/``fc``/``none``, PFC priorities 0-7, DSCP map values 0-7,
a port's ``dscp_to_tc_map`` and a queue's ``wred_profile`` naming existing entries) and only then
written; the daemons then program the ASIC, which this simulator models as the device state
following CONFIG_DB.
"""

from __future__ import annotations

import json
from typing import Any

import jsonpatch

from fabline.sim.config.stdin import STDIN
from fabline.sim.device import SimDevice
from fabline.sim.render.common import Answer
from fabline.sim.render.sonic import config_db

_FAIL = "Failed to apply patch due to: {}\n"
_USAGE = 'Usage: config apply-patch [OPTIONS] PATCH_FILE_PATH\nTry "config apply-patch -h" for help.\n\n'


def command(dev: SimDevice, argv: list[str]) -> Answer | None:
    """``config apply-patch PATH [--dry-run]``; None for any other command."""
    if argv[:2] != ["config", "apply-patch"]:
        return None
    args = [a for a in argv[2:] if not a.startswith("-")]
    dry = "--dry-run" in argv or "-d" in argv
    if len(args) != 1:
        return Answer("", 2, _USAGE + 'Error: Missing argument "PATCH_FILE_PATH".\n')
    if args[0] != "/dev/stdin":
        return Answer("", 2, _USAGE + f"Error: [Errno 2] No such file or directory: '{args[0]}'\n")
    text = STDIN.get() or ""
    try:
        ops = json.loads(text)
        patch = jsonpatch.JsonPatch(ops)
        if not isinstance(ops, list):
            raise jsonpatch.InvalidJsonPatch("Document is not a list")
        db = config_db(dev, dev.state())
        new = patch.apply(db)
        problems = validate(new)
        if problems:
            raise ValueError("; ".join(problems))
    except (ValueError, jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as exc:
        return Answer("", 2, _FAIL.format(exc) + _USAGE + f"Error: {exc}\n")
    out = [
        "Patch Applier: localhost: Patch application starting.",
        f"Patch Applier: localhost: Patch: {json.dumps(ops)}",
        "Patch Applier: localhost: Getting current config db.",
        "Patch Applier: localhost: Simulating the target full config after applying the patch.",
        "Patch Applier: localhost: Validating target config does not have empty tables, since they do not show up in ConfigDb.",
        "Patch Applier: localhost: Sorting patch updates.",
        "Patch Applier: localhost: Applying changes in order." if not dry else "Patch Applier: localhost: Dry run: no change applied.",
        "Patch Applier: localhost: Verifying patch updates are reflected on ConfigDB.",
        "Patch Applier: localhost: Patch application completed.",
        "Patch applied successfully.",
    ]  # fmt: skip
    if not dry:
        dev.configure(lambda state: follow(state, new))
    return Answer("\n".join(out) + "\n")


def validate(db: dict[str, Any]) -> list[str]:
    """What the YANG models would refuse in the target CONFIG_DB (the fields remediation touches)."""
    problems: list[str] = []
    for port, row in db.get("PORT", {}).items():
        mtu = row.get("mtu")
        if mtu is not None and (not str(mtu).isdigit() or not 68 <= int(mtu) <= 9216):
            problems.append(f"PORT|{port} mtu {mtu!r} is not in 68..9216")
        if row.get("fec") not in (None, "rs", "fc", "none"):
            problems.append(f"PORT|{port} fec {row['fec']!r} is not one of rs, fc, none")
        if row.get("autoneg") not in (None, "on", "off"):
            problems.append(f"PORT|{port} autoneg {row['autoneg']!r} is not on or off")
    maps = db.get("DSCP_TO_TC_MAP", {})
    for name, body in maps.items():
        bad = [
            k
            for k, v in body.items()
            if not str(v).isdigit() or int(v) > 7 or not str(k).isdigit() or int(k) > 63
        ]
        if bad:
            problems.append(f"DSCP_TO_TC_MAP|{name} has invalid entries {bad}")
    for port, row in db.get("PORT_QOS_MAP", {}).items():
        if row.get("dscp_to_tc_map") is not None and row["dscp_to_tc_map"] not in maps:
            problems.append(f"PORT_QOS_MAP|{port} dscp_to_tc_map {row['dscp_to_tc_map']!r} does not exist")
        pfc = str(row.get("pfc_enable", ""))
        if pfc and not all(p.isdigit() and int(p) <= 7 for p in pfc.split(",")):
            problems.append(f"PORT_QOS_MAP|{port} pfc_enable {pfc!r} is not a list of priorities 0-7")
    for key, row in db.get("QUEUE", {}).items():
        if row.get("wred_profile") is not None and row["wred_profile"] not in db.get("WRED_PROFILE", {}):
            problems.append(f"QUEUE|{key} wred_profile {row['wred_profile']!r} does not exist")
    if any(p not in db.get("PORT", {}) for p in db.get("PORT_QOS_MAP", {})):
        problems.append("PORT_QOS_MAP names a port that is not in PORT")
    return problems


def follow(state: dict[str, Any], db: dict[str, Any]) -> None:
    """Make the device state what the new CONFIG_DB programs (the inverse of ``config_db``)."""
    ifaces = state.setdefault("interfaces", {})
    maps = db.get("DSCP_TO_TC_MAP", {})
    profiles = db.get("WRED_PROFILE", {})
    qos_map = db.get("PORT_QOS_MAP", {})
    queues = db.get("QUEUE", {})
    for port, row in db.get("PORT", {}).items():
        body = ifaces.setdefault(port, {})
        if "mtu" in row:
            body["mtu"] = int(row["mtu"])
        if "fec" in row:
            body["fec"] = row["fec"]
        if "autoneg" in row:
            body["autoneg"] = row["autoneg"] == "on"
        if "speed" in row:
            body["speed_gbps"] = int(row["speed"]) // 1000
        body["admin_up"] = row.get("admin_status") == "up"
        qos = qos_map.get(port, {})
        if "pfc_priorities" in body or "pfc_enable" in qos:
            body["pfc_priorities"] = sorted(int(p) for p in str(qos.get("pfc_enable", "")).split(",") if p)
        if qos.get("dscp_to_tc_map") in maps:
            body["dscp_to_priority"] = {k: int(v) for k, v in maps[qos["dscp_to_tc_map"]].items()}
            body["trust"] = "dscp"
        for key, q in queues.items():
            name, _, tc = key.partition("|")
            if name != port:
                continue
            prof = profiles.get(q.get("wred_profile", ""))
            ecn = body.setdefault("ecn", {}).setdefault(tc, {})
            if prof is None:
                ecn["enabled"] = False
                continue
            ecn["enabled"] = prof.get("ecn", "ecn_none") != "ecn_none"
            for leaf, field in (("min_bytes", "green_min_threshold"), ("max_bytes", "green_max_threshold"),
                                ("probability_pct", "green_drop_probability")):  # fmt: skip
                if field in prof:
                    ecn[leaf] = int(prof[field])
    wd_rows = {k: v for k, v in db.get("PFC_WD", {}).items() if k != "GLOBAL"}
    wd = state.setdefault("qos", {}).setdefault("pfc_watchdog", {})
    wd["enabled"] = bool(wd_rows)
    if wd_rows:
        first = next(iter(wd_rows.values()))
        wd["detection_ms"] = int(first.get("detection_time", 200))
        wd["restoration_ms"] = int(first.get("restoration_time", 200))
