"""Linux GPU hosts: the commands that fix a rail NIC, and the persistent settings file.

The commands are the ones the NIC vendor documents for ConnectX on Linux: ``ip link set dev X
mtu N``; ``mlnx_qos -i X --trust dscp``, ``--pfc 0,0,0,1,0,0,0,0``, ``--dscp2prio set,DSCP,PRIO``;
RDMA-CM's default ToS through configfs (``/sys/kernel/config/rdma_cm/<dev>/ports/1/default_roce_tos``,
the directory created first, as ``cma_roce_tos`` does); DCQCN's ECN enables in sysfs
(``/sys/class/net/X/ecn/roce_np|roce_rp/enable/<prio>``); ``/etc/nccl.conf`` for ``NCCL_IB_TC``; ``modprobe nvidia_peermem`` (and its ``modules-load.d`` file) for
GPUDirect RDMA;
``ethtool --set-fec`` / ``ethtool -s X autoneg`` last (they retrain the link). None of these
survive a reboot: the host's settings file, rendered from the site's host template
(``templates/linux/host.yml.j2``, what ``fabline check --intended`` reads back) with the intended
values, is what the host's provisioning keeps.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jinja2

from fabline.remediate.common import RawReader, Remediation, Stages, Tasks, port_changes
from fabline.remediate.model import DeviceChange

_NIC_FIELDS = ("roce_tos", "ecn_np_priorities", "ecn_rp_priorities")


def _nic(state: Mapping[str, Any], port: str) -> Mapping[str, Any]:
    return ((state.get("interfaces") or {}).get(port) or {}).get("nic") or {}


def commands(before: Mapping[str, Any], after: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """The traffic-safe commands and the link-retraining ones for ``before`` -> ``after``."""
    safe: list[str] = []
    risky: list[str] = []
    changes = port_changes(before, after)
    for port in sorted(
        set(changes) | {p for p in (after.get("interfaces") or {}) if _nic_diff(before, after, p)}
    ):
        diff = changes.get(port, {})
        q = shlex.quote(port)
        if "mtu" in diff:
            safe.append(f"sudo ip link set dev {q} mtu {int(diff['mtu'])}")
        if "trust" in diff:
            safe.append(f"sudo mlnx_qos -i {q} --trust {'dscp' if diff['trust'] == 'dscp' else 'pcp'}")
        if "pfc_priorities" in diff:
            bits = ",".join("1" if p in diff["pfc_priorities"] else "0" for p in range(8))
            safe.append(f"sudo mlnx_qos -i {q} --pfc {bits}")
        if "dscp_to_priority" in diff:
            old = ((before.get("interfaces") or {}).get(port) or {}).get("dscp_to_priority") or {}
            for d, p in sorted(diff["dscp_to_priority"].items(), key=lambda kv: int(kv[0])):
                if old.get(d) != p:
                    safe.append(f"sudo mlnx_qos -i {q} --dscp2prio set,{int(d)},{int(p)}")
        new, was = _nic(after, port), _nic(before, port)
        rdma = new.get("rdma_device")
        if new.get("roce_tos") != was.get("roce_tos") and rdma:
            base = f"/sys/kernel/config/rdma_cm/{rdma}"
            safe.append(f"sudo mkdir -p {base}")
            safe.append(f"echo {int(new['roce_tos'])} | sudo tee {base}/ports/1/default_roce_tos")
        for role in ("np", "rp"):
            key = f"ecn_{role}_priorities"
            on, had = set(new.get(key) or []), set(was.get(key) or [])
            for p in sorted(on ^ had):
                safe.append(
                    f"echo {1 if p in on else 0} | sudo tee /sys/class/net/{q}/ecn/roce_{role}/enable/{p}"
                )
        if "fec" in diff:
            risky.append(f"sudo ethtool --set-fec {q} encoding {diff['fec']}")
        if "autoneg" in diff:
            risky.append(f"sudo ethtool -s {q} autoneg {'on' if diff['autoneg'] else 'off'}")
    gdr = (after.get("host") or {}).get("gpudirect_rdma")
    if gdr is True and (before.get("host") or {}).get("gpudirect_rdma") is not True:
        # GPUDirect RDMA is the nvidia_peermem module: load it now and at every boot.
        safe.append("sudo modprobe nvidia_peermem")
        safe.append("echo nvidia_peermem | sudo tee /etc/modules-load.d/nvidia-peermem.conf")
    env_new = (after.get("host") or {}).get("nccl_env")
    if isinstance(env_new, Mapping) and env_new != (before.get("host") or {}).get("nccl_env"):
        body = "".join(f"{k}={v}\\n" for k, v in env_new.items())
        safe.append(f"printf {shlex.quote(body)} | sudo tee /etc/nccl.conf")
    return safe, risky


def _nic_diff(before: Mapping[str, Any], after: Mapping[str, Any], port: str) -> bool:
    new, was = _nic(after, port), _nic(before, port)
    return any(new.get(k) != was.get(k) for k in _NIC_FIELDS)


def settings_file(name: str, after: Mapping[str, Any], templates: Path | None) -> str | None:
    """The host's settings rendered from the site's host template with the intended values.

    None when no host template is found. Values the state does not carry (the design's name,
    gateways) are left empty; the RoCEv2 address comes from the collected GID table.
    """
    if templates is None or not (templates / "linux").is_dir():
        return None
    mains = sorted(p for p in (templates / "linux").glob("*.j2") if not p.name.startswith("_"))
    if len(mains) != 1:
        return None
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates)), autoescape=False, keep_trailing_newline=True
    )
    ports = []
    for i, (port, body) in enumerate(sorted((after.get("interfaces") or {}).items())):
        nic = body.get("nic") or {}
        if not nic:
            continue
        lldp = body.get("lldp") or {}
        v2 = [g.get("ipv4") for g in nic.get("gids") or [] if g.get("version") == "v2" and g.get("ipv4")]
        ports.append({"name": port, "index": i, "peer": lldp.get("device", ""), "peer_port": lldp.get("port", ""),
                      "address": v2[0] if v2 else "", "peer_address": "", "speed_gbps": body.get("speed_gbps", 0)})  # fmt: skip
    first: Mapping[str, Any] = next((b for b in (after.get("interfaces") or {}).values() if b.get("nic")), {})
    nic = first.get("nic") or {}
    dmap = first.get("dscp_to_priority") or {}
    roce_prio = (first.get("pfc_priorities") or [3])[0]
    roce_dscp = next((int(d) for d, p in dmap.items() if p == roce_prio), 26)
    cnp = next(((int(d), p) for d, p in dmap.items() if int(d) == 48), (48, 6))
    env_vars = (after.get("host") or {}).get("nccl_env") or {}
    qos = {
        "mtu": first.get("mtu", 9000), "roce_priority": roce_prio, "roce_dscp": roce_dscp,
        "cnp_dscp": cnp[0], "cnp_priority": cnp[1], "roce_tos": nic.get("roce_tos", (roce_dscp << 2) | 2),
        "gid_index": env_vars.get("NCCL_IB_GID_INDEX", 3),
    }  # fmt: skip
    context = {"design": {"name": "(from the collected state)", "planes": 1},
               "host": {"name": name, "platform": "linux", "index": 0}, "ports": ports, "qos": qos}  # fmt: skip
    try:
        text = env.get_template(f"linux/{mains[0].name}").render(context)
    except jinja2.TemplateError as exc:
        return f"# the host template could not be rendered: {type(exc).__name__}: {exc}\n"
    return f"# {name}: rendered by fabline remediate from {mains[0]} with the intended values\n" + text


def emit(stages: Stages, raw: RawReader, templates: Path | None = None) -> DeviceChange:
    """The host change: ``<host>.sh`` (link-retraining commands last) and ``<host>.host.yml``.

    ``templates`` defaults to the workspace's (``./templates``, else the packaged ones), as
    ``fabline render`` finds them.
    """
    if templates is None:
        from fabline.design.render import find_templates

        templates = find_templates(None)
    safe, risky = commands(stages.before, stages.after)
    name = stages.device
    change = DeviceChange(name, "linux", list(stages.fixes))
    body = [f"# {name} (Linux GPU host): run as a user with sudo; none of this survives a reboot,",
            f"# {name}.host.yml is the persistent record (provisioning applies it at boot).", "set -e", *safe]  # fmt: skip
    if risky:
        body += ["# --- retrains the link (interrupts traffic on this NIC): last ---", *risky]
    change.files[f"{name}.sh"] = "\n".join(body) + "\n"
    change.steps += safe + risky
    change.disruptive += risky
    rendered = settings_file(name, stages.after, templates)
    if rendered is not None:
        change.files[f"{name}.host.yml"] = rendered
    else:
        change.notes.append(
            "no host template (templates/linux/*.j2) found: no persistent settings file written"
        )
    return change


def tasks(change: DeviceChange, disruptive: bool) -> Tasks:
    """``ansible.builtin.script`` with the host's commands (skipped in check mode); the
    link-retraining lines are at the end of the same script, so there is no disruptive play.
    """
    script = f"{change.device}.sh"
    if disruptive or script not in change.files:
        return [], {}
    return [{"name": f"run devices/{script}", "ansible.builtin.script": f"devices/{script}"}], {}


#: A Linux GPU host's change format (``PlatformSpec.remediation`` of ``fabline.platforms.linux``).
REMEDIATION = Remediation(emit, tasks)
