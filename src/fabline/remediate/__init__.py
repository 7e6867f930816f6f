"""``fabline remediate``: from failing results to reviewable changes per device, work orders and a
playbook. fabline never applies anything (docs/remediation.md).
"""
