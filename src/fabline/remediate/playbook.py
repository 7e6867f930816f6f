"""The Ansible playbook that applies a plan's changes with the modules sites already run.

One play per device, traffic-safe plays first and the traffic-interrupting ones last (tagged
``disruptive``, so ``--skip-tags disruptive`` leaves them out). Each platform's change format
(:class:`~fabline.remediate.common.Remediator`, named by its platform spec) gives a play's tasks;
the built-in ones use modules the ``ansible`` community package ships:

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

from fabline.remediate.common import remediator
from fabline.remediate.model import DeviceChange, Plan


def _plays(change: DeviceChange, disruptive: bool) -> list[dict[str, Any]]:
    change_format = remediator(change.platform)
    if change_format is None:
        return []
    tasks, play_vars = change_format.tasks(change, disruptive)
    if not tasks:
        return []
    name = change.device
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
