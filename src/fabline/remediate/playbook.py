"""The Ansible playbook that applies a plan's changes with the modules sites already run.

One play per device, traffic-safe plays first and the traffic-interrupting ones last (tagged
``disruptive``, so ``--skip-tags disruptive`` leaves them out). Modules, all shipped by the
``ansible`` community package:

- SONiC: ``ansible.builtin.copy`` of the patch, ``config apply-patch --dry-run`` then ``config
  apply-patch`` (``ansible.builtin.command``; only the dry run in check mode);
- Cumulus: ``ansible.builtin.command`` per ``nv set``/``nv unset``, ``nv config diff``, then ``nv config
  apply`` (in check mode the lines are shown, nothing is staged);
- Arista EOS / Cisco NX-OS: ``arista.eos.eos_config`` / ``cisco.nxos.nxos_config`` with the change
  file as ``src`` over ``ansible.netcommon.network_cli`` (both modules support ``--check --diff``;
  EOS uses a configuration session);
- Linux hosts: ``ansible.builtin.script`` with the host's commands (skipped in check mode).
"""

from __future__ import annotations

from typing import Any

import yaml

from fabline.remediate.model import DeviceChange, Plan

PATCH_DEST = "/tmp/fabline-remediate.patch.json"


def _sonic(change: DeviceChange, name: str, disruptive: bool) -> list[dict[str, Any]]:
    return [
        {"name": f"copy {name}", "ansible.builtin.copy": {"src": f"devices/{name}", "dest": PATCH_DEST, "mode": "0600"}},
        {"name": f"validate {name} (config apply-patch --dry-run)", "ansible.builtin.command": f"config apply-patch --dry-run {PATCH_DEST}",
         "become": True, "check_mode": False, "changed_when": False},
        {"name": f"apply {name}" + (" (interrupts traffic)" if disruptive else ""), "ansible.builtin.command": f"config apply-patch {PATCH_DEST}",
         "become": True, "when": "not ansible_check_mode"},
    ]  # fmt: skip


def _cumulus(lines: list[str], label: str) -> list[dict[str, Any]]:
    nv = [ln for ln in lines if ln.startswith(("nv set ", "nv unset "))]
    return [
        {"name": f"show the {label} NVUE change", "ansible.builtin.debug": {"msg": nv}},
        {"name": f"stage the {label} NVUE change", "ansible.builtin.command": "{{ item }}", "loop": nv,
         "when": "not ansible_check_mode"},
        {"name": "nv config diff", "ansible.builtin.command": "nv config diff", "changed_when": False,
         "when": "not ansible_check_mode"},
        {"name": "nv config apply", "ansible.builtin.command": "nv config apply --assume-yes",
         "when": "not ansible_check_mode"},
    ]  # fmt: skip


_NETWORK = {
    "arista_eos": ("arista.eos.eos_config", "arista.eos.eos"),
    "cisco_nxos": ("cisco.nxos.nxos_config", "cisco.nxos.nxos"),
}


def _plays(change: DeviceChange, disruptive: bool) -> list[dict[str, Any]]:
    name = change.device
    tasks: list[dict[str, Any]] = []
    play_vars: dict[str, Any] = {}
    if change.platform == "sonic":
        f = f"{name}.disruptive.patch.json" if disruptive else f"{name}.patch.json"
        if f in change.files:
            tasks = _sonic(change, f, disruptive)
    elif change.platform == "cumulus":
        lines = change.disruptive if disruptive else [s for s in change.steps if s not in change.disruptive]
        if any(ln.startswith(("nv set", "nv unset")) for ln in lines):
            tasks = _cumulus(lines, "traffic-interrupting" if disruptive else "traffic-safe")
    elif change.platform in _NETWORK:
        f = f"{name}.disruptive.cli.txt" if disruptive else f"{name}.cli.txt"
        module, network_os = _NETWORK[change.platform]
        if f in change.files:
            tasks = [
                {"name": f"apply devices/{f} (hier_config remediation)", module: {"src": f"devices/{f}"}}
            ]
            play_vars = {
                "ansible_connection": "ansible.netcommon.network_cli",
                "ansible_network_os": network_os,
            }
    elif change.platform == "linux" and not disruptive and f"{name}.sh" in change.files:
        tasks = [{"name": f"run devices/{name}.sh", "ansible.builtin.script": f"devices/{name}.sh"}]
    if not tasks:
        return []
    play: dict[str, Any] = {
        "name": f"{name} ({change.platform})" + (": interrupts traffic on live ports" if disruptive else ""),
        "hosts": name,
        "gather_facts": False,
    }
    if play_vars:
        play["vars"] = play_vars
    if disruptive:
        play["tags"] = ["disruptive"]
    play["tasks"] = tasks
    return [play]


def playbook(plan: Plan) -> str | None:
    """``playbook.yml`` for the plan's changes; None when there is nothing to change."""
    if not plan.changes:
        return None
    plays: list[dict[str, Any]] = []
    for change in plan.changes:
        plays += _plays(change, disruptive=False)
    for change in plan.changes:
        if change.disruptive:
            plays += _plays(change, disruptive=True)
    header = (
        "# fabline remediation playbook (fabline applied nothing). Review plan.md first, then:\n"
        "#   ansible-playbook -i INVENTORY playbook.yml --check --diff      # dry run\n"
        "#   ansible-playbook -i INVENTORY playbook.yml --skip-tags disruptive\n"
        "#   ansible-playbook -i INVENTORY playbook.yml --tags disruptive     # in a maintenance window\n"
        "# Host names are the inventory's; EOS/NX-OS plays connect with ansible.netcommon.network_cli.\n"
    )
    return header + yaml.safe_dump(plays, sort_keys=False, width=120)
