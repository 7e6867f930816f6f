"""The Ansible playbook that applies a plan's changes (filled in by the playbook step)."""

from __future__ import annotations

from fabline.remediate.model import Plan


def playbook(plan: Plan) -> str | None:
    """None: the playbook is not generated yet."""
    return None
