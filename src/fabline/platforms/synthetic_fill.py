"""What the platforms' ``synthetic_extras`` hooks share: filling a synthetic state with defaults.

A platform spec's ``synthetic_extras`` adds to a synthetic state (:func:`fabline.synthetic.as_collected`)
what a collection of a healthy device of that platform yields on top; these helpers keep every
existing value (a planted fault), add only what is missing, and hold the RoCE DSCP map synthetic
fabrics are built with.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

_PRIORITIES = tuple(str(p) for p in range(8))


def roce_dscp_map() -> dict[str, int]:
    """The DSCP -> priority map of a synthetic RoCE fabric: RoCE (26) on 3, CNP (48) on 6, the rest 0.

    Example:
        >>> m = roce_dscp_map(); len(m), m["26"], m["48"], m["0"]
        (64, 3, 6, 0)
    """
    m = {str(d): 0 for d in range(64)}
    m["26"] = 3
    m["48"] = 6
    return m


def fill_missing(target: dict[str, Any], extra: Mapping[str, Any]) -> None:
    """Add each key of ``extra`` that ``target`` lacks (a copy of a dict or list value).

    Example:
        >>> t = {"a": 1}; fill_missing(t, {"a": 2, "b": [3]}); t
        {'a': 1, 'b': [3]}
    """
    for key, value in extra.items():
        if key not in target:
            target[key] = json.loads(json.dumps(value)) if isinstance(value, dict | list) else value


def fill_priorities(counters: dict[str, Any], key: str, value: int = 0) -> None:
    """Give the per-priority counter ``key`` every priority 0-7 it lacks (``value`` each).

    Example:
        >>> c = {"pfc_rx_pause": {"3": 7}}; fill_priorities(c, "pfc_rx_pause"); c["pfc_rx_pause"]["3"], len(c["pfc_rx_pause"])
        (7, 8)
    """
    per = counters.get(key)
    if per is None:
        per = counters[key] = {}
    if isinstance(per, dict):
        for prio in _PRIORITIES:
            per.setdefault(prio, value)
