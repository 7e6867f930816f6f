"""Built-in Python checks that every run has."""

from __future__ import annotations

from collections.abc import Iterable

from typing_extensions import override

from fabline.checks import AnyCheck, Check, DeviceContext
from fabline.checks.fabric import FABRIC_CHECKS
from fabline.results import Result, Severity, capped_join


class DeviceCollectionCheck(Check):
    """Every command of the device was collected and parsed.

    A device with missing or unparsable outputs is only partly checked: a rule that needs the
    missing data reports ``error``, which is easy to overlook among passes. This check names the
    commands that failed so the gap is visible (unreachable devices are ``error`` for every rule).
    """

    id = "device-collection"
    severity = Severity.MINOR

    @override
    def check_device(self, device: DeviceContext) -> Iterable[Result]:
        status = device.state.get("status", "ok")
        errors = device.state.get("errors") or []
        if status == "ok" and not errors:
            yield self.passed(device.name, None, expected="ok", actual="ok")
            return
        parts = []
        for err in errors:
            if isinstance(err, dict):
                cmd = err.get("command")
                parts.append(f"{cmd}: {err.get('message', '')}" if cmd else str(err.get("message", "")))
        detail = capped_join(parts, limit=5)
        yield self.failed(
            device.name,
            None,
            f"collection {status}" + (f": {detail}" if detail else ""),
            expected="ok",
            actual=status,
        )


BUILTIN_CHECKS: tuple[type[AnyCheck], ...] = (DeviceCollectionCheck, *FABRIC_CHECKS)
