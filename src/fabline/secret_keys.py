"""The one rule for which variable names hold secrets (never shown, logged or reported).

Used wherever inventory variables leave the inventory: the checks' and reports' view of a device
(:func:`public_vars`), a ``Device``'s repr, ``fabline inventory --list``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

#: A variable whose name contains one of these (any case) holds a secret: passwords
#: (``ansible_password``, ``ansible_ssh_pass``, ``ansible_become_pass``), secrets, tokens, private
#: keys and their paths (``ansible_ssh_private_key_file``), SNMP communities, pre-shared keys.
SECRET_KEY = re.compile(r"pass|secret|token|private_key|community|psk", re.IGNORECASE)


@functools.lru_cache(maxsize=1 << 12)
def is_secret_key(name: str) -> bool:
    """Whether a variable of this name holds a secret.

    Example:
        >>> [is_secret_key(k) for k in ("ansible_password", "snmp_community", "wifi_psk", "rail")]
        [True, True, True, False]
    """
    return SECRET_KEY.search(name) is not None


def public_vars(variables: Mapping[str, Any]) -> dict[str, Any]:
    """Variables without secrets.

    Example:
        >>> public_vars({"rail": 1, "ansible_password": "x", "ansible_ssh_private_key_file": "~/.ssh/k"})
        {'rail': 1}
    """
    # A fleet has a few dozen variable names: each is searched once (15,000 devices x 2 per check).
    secret = is_secret_key
    return {k: v for k, v in variables.items() if not secret(k)}


__all__ = ["SECRET_KEY", "is_secret_key", "public_vars"]
