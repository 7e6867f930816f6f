"""Example site-local check: the device's own hostname matches its inventory name.

fabline imports every ``*.py`` file in the workspace's ``checks/`` folder (files starting with ``_``
are skipped) and registers each :class:`fabline.checks.Check` subclass defined in it. The check
then runs in every ``fabline check`` with its default severity; a baseline can tune it by id::

    rules:
      - {id: hostname-matches-inventory, severity: major}
      - {id: hostname-matches-inventory, enabled: false}     # or switch it off

and waivers apply to it like to any rule. See docs/checks.md for the full interface.
"""

from __future__ import annotations

from collections.abc import Iterable

from fabline.checks import Check, DeviceContext
from fabline.results import Result, Severity


class HostnameMatchesInventoryCheck(Check):
    """The hostname a device reports equals its inventory name.

    A device whose hostname differs from the inventory (a swapped management address, a re-used
    IP after an RMA) makes LLDP-based link and rail checks pair the wrong ports.
    """

    id = "hostname-matches-inventory"
    severity = Severity.MINOR
    # Every platform reports one: switches in show version / nv show system, Linux hosts in
    # /proc/sys/kernel/hostname.

    def check_device(self, device: DeviceContext) -> Iterable[Result]:
        hostname = device.state.get("facts", {}).get("hostname")
        if hostname is None:
            yield self.error(device.name, None, "facts.hostname not collected")
        elif hostname.split(".")[0].lower() == device.name.lower():
            yield self.passed(device.name, None, expected=device.name, actual=hostname)
        else:
            yield self.failed(
                device.name, None, f"hostname is {hostname!r}, inventory name is {device.name!r}",
                expected=device.name, actual=hostname,
            )  # fmt: skip
