"""Transitive group membership, as ansible-core's ``Group.get_ancestors`` computes it."""

from __future__ import annotations

from collections.abc import Mapping

from fabline.inventory.model import Group


class GroupClosure:
    """Transitive group membership (a group and all its ancestors), cached per group set."""

    def __init__(self, groups: Mapping[str, Group]) -> None:
        self._groups = groups
        self._up: dict[str, frozenset[str]] = {}
        self._sets: dict[tuple[str, ...], frozenset[str]] = {}

    def of_group(self, name: str) -> frozenset[str]:
        """The group and all its ancestors."""
        got = self._up.get(name)
        if got is None:
            acc = {name}
            for parent in self._groups[name].parents:
                acc |= self.of_group(parent)
            got = self._up[name] = frozenset(acc)
        return got

    def of_host(self, direct: list[str]) -> frozenset[str]:
        """Every group a host is in, given the groups it is directly in."""
        key = tuple(direct)
        got = self._sets.get(key)
        if got is None:
            acc: set[str] = set()
            for g in direct:
                acc |= self.of_group(g)
            got = self._sets[key] = frozenset(acc)
        return got
