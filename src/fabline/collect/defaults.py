"""Collection defaults the command line shows, in a module that imports nothing.

The CLI builds the collection options of ``collect``, ``run`` and ``drift`` from these without
importing the SSH stacks (paramiko, netmiko), so a ``fabline history`` or ``fabline diff`` starts
quickly. :mod:`fabline.collect.hostkeys` and :mod:`fabline.collect.transports` use the same values.
"""

from __future__ import annotations

#: ``--host-key-policy`` choices: trust on first use, only known hosts, no checks.
HOST_KEY_POLICIES = ("accept-new", "strict", "ignore")
#: Default total seconds one command may take (``--command-timeout``, ``fabline_command_timeout``).
DEFAULT_COMMAND_TIMEOUT = 60.0
