"""The per-device projection for the link graph, and the inventory variables the engine reads."""

from __future__ import annotations

from typing import Any

from fabline.checks.linkgraph import Projector
from fabline.inventory.model import HostVars


class _Device:
    role = "leaf"
    vars: dict[str, Any] = {}  # noqa: RUF012 - read only

    def __init__(self, interfaces: dict[str, Any]) -> None:
        self.interfaces = interfaces
        self.state = {"interfaces": interfaces}


class _Before(Projector):
    """The projection as it was before the previous-map shortcut (the reference)."""

    def _dscp(self, value: Any) -> Any:
        if type(value) is not dict:
            return None
        raw = (tuple(value), tuple(value.values()))
        hit = self._dscp_seen.get(raw)
        if hit is not None:
            return hit
        items = sorted((int(k), v) for k, v in value.items() if isinstance(v, int) and str(k).isdigit())
        canon = self._intern(tuple(items))
        self._dscp_seen[raw] = canon
        return canon


def test_dscp_maps_projected_as_before_whatever_came_before() -> None:
    """The previous port's map is reused only when keys and values are the same, in the same order."""
    base = {str(d): 3 if d == 26 else 0 for d in range(64)}
    maps: list[Any] = [
        base, dict(base), {**base, "26": 4}, dict(reversed(list(base.items()))), base,
        {**base, "26": 3.0}, {**base, "26": True}, {"26": 3}, {}, {"x": None}, None, "bad", base,
        {**base, "26": 4},
    ]  # fmt: skip
    ports = {f"Ethernet{i}": {"dscp_to_priority": m, "lldp": {"device": "x"}} for i, m in enumerate(maps)}
    now = Projector().project(_Device(ports)).ports
    before = _Before().project(_Device(ports)).ports
    assert [p[15] for p in now] == [p[15] for p in before]
    assert [[type(v) for pair in p[15] or () for v in pair] for p in now] == [
        [type(v) for pair in p[15] or () for v in pair] for p in before
    ]
    assert now[0][15] is now[1][15] is now[4][15] and now[2][15] is now[13][15]
    assert now[2][15] != now[0][15] and now[7][15] == ((26, 3),)


def test_host_vars_get_and_in_are_the_dicts() -> None:
    hv = HostVars({"a": 1, "b": None, "ansible_password": "s3cret"})
    assert hv.get("a") == 1 and hv.get("b", 5) is None and hv.get("c") is None and hv.get("c", 7) == 7
    assert "b" in hv and "c" not in hv and 1 not in hv
    assert dict(hv) == {"a": 1, "b": None, "ansible_password": "s3cret"} and "s3cret" not in repr(hv)
