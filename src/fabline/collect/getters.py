"""The NAPALM getter transport: any NAPALM driver, its getters as the platform's commands.

For the ``napalm`` platform (:mod:`fabline.platforms.napalm`): the inventory names the driver
(``napalm_driver: junos``) and may add its ``optional_args`` (``napalm_args: {...}``). A session
opens the driver and each "command" is a getter name from the platform's allow-list
(``get_facts``, ``get_interfaces``, ...); the getter's return value, NAPALM's vendor-neutral model,
is the command's output, as JSON. Getters only read (NAPALM's contract); fabline calls no other
driver method (no ``cli``, no configuration method). What a driver sends to get there is its own:
on EOS, ``show`` commands over eAPI.

``napalm_driver: eos`` goes over eAPI with fabline's HTTPS connection (:mod:`fabline.collect.eapi`):
TLS verification, CA or fingerprint pinning and the fault classification are the eAPI ones. Other
drivers connect their own way (SSH, NETCONF): their connect failures are classified as SSH ones.

NAPALM is imported when the first session opens.
"""

from __future__ import annotations

import contextlib
import json
import socket
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from fabline.collect.eapi import (
    AnswerTooLarge,
    TlsPolicy,
    _connection_class,
    classify_eapi_error,
    eapi_port,
)
from fabline.collect.transports import (
    CommandFailure,
    ConnectFailure,
    ConnectOptions,
    Output,
    _too_large,
    classify_connect_error,
    exception_chain,
)
from fabline.errors import ConfigError
from fabline.inventory import Device
from fabline.platforms.napalm import NOT_IMPLEMENTED


def driver_name(device: Device) -> str:
    """The device's ``napalm_driver``, checked to be an installed NAPALM driver.

    Raises:
        ConfigError: Unset, or no such driver.
    """
    from napalm import get_network_driver
    from napalm.base.exceptions import ModuleImportError

    name = device.vars.get("napalm_driver")
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(
            f"host {device.name!r}: fabline_platform napalm needs napalm_driver (junos, eos, iosxr, nxos, ...)",
            key="napalm_driver",
        )
    try:
        get_network_driver(name.strip())
    except ModuleImportError:
        raise ConfigError(
            f"host {device.name!r}: napalm_driver {name!r} is not an installed NAPALM driver",
            key="napalm_driver",
        ) from None
    args = device.vars.get("napalm_args", {})
    if not isinstance(args, Mapping):
        raise ConfigError(f"host {device.name!r}: napalm_args must be a mapping", key="napalm_args")
    return name.strip()


def classify_driver_error(exc: BaseException, where: str, timeout: float) -> ConnectFailure:
    """A non-EOS driver's failure to open: authentication by the exception's name, the rest as SSH."""
    for e in exception_chain(exc):
        if "auth" in type(e).__name__.lower():
            return ConnectFailure(
                "auth_failed", "auth_failed", f"authentication failed at {where} (not retried)", retry=False
            )
    return classify_connect_error(exc, where, timeout)


class NapalmSession:
    """A NAPALM driver, opened; :meth:`run` calls allow-listed getters.

    Raises:
        ConnectFailure: The driver could not open the device.
    """

    def __init__(self, device: Device, options: ConnectOptions) -> None:
        from napalm import get_network_driver

        self.options = options
        self.name = driver_name(device)
        args: dict[str, Any] = dict(device.vars.get("napalm_args") or {})
        if self.name == "eos":
            port = eapi_port(device)
            tls = TlsPolicy.of(device)
            # The getters send NAPALM's own show commands: the allow-list here is the getter names.
            args.update(transport=_connection_class(None), port=port, context=tls.context(),
                        fingerprint=tls.fingerprint, force_no_enable=True)  # fmt: skip
        else:
            port = int(args.setdefault("port", device.port or options.default_port))
        self.where = f"{device.host}:{port}"
        driver = get_network_driver(self.name)(
            device.host, device.user or "admin", device.password or "", timeout=int(max(1, options.timeout)),
            optional_args=args,
        )  # fmt: skip
        try:
            driver.open()
        except Exception as exc:
            if self.name == "eos":
                connection = getattr(getattr(driver, "device", None), "connection", None)
                raise classify_eapi_error(exc, connection, self.where, options.timeout) from None
            raise classify_driver_error(exc, self.where, options.timeout) from None
        self.driver = driver
        https = getattr(getattr(getattr(driver, "device", None), "connection", None), "transport", None)
        if self.name == "eos" and https is not None:  # each eAPI answer bounded as over SSH
            https.max_output = options.max_output

    def run(self, commands: Sequence[str]) -> Iterator[tuple[str, Output | CommandFailure, float]]:
        """Call each getter in order; its result (JSON) is the command's output."""
        for i, getter in enumerate(commands):
            if i and self.options.pace > 0:
                time.sleep(self.options.pace)
            started = time.monotonic()
            outcome = self._call(getter.strip())
            yield getter, outcome, time.monotonic() - started
            if isinstance(outcome, CommandFailure) and outcome.fatal:
                return

    def _call(self, getter: str) -> Output | CommandFailure:
        method = getattr(self.driver, getter, None) if getter.startswith("get_") else None
        if method is None:
            return Output(f"{NOT_IMPLEMENTED} NAPALM driver {self.name!r} has no {getter}\n")
        try:
            result = method()
        except NotImplementedError:
            return Output(f"{NOT_IMPLEMENTED} NAPALM driver {self.name!r} does not implement {getter}\n")
        except Exception as exc:
            causes = list(exception_chain(exc))
            inner = getattr(
                getattr(getattr(self.driver, "device", None), "connection", None), "socket_error", None
            )
            if isinstance(inner, BaseException):
                causes.insert(0, inner)
            if any(isinstance(e, AnswerTooLarge) for e in causes):
                return _too_large(self.options.max_output, fatal=True)
            if any(isinstance(e, (socket.timeout, TimeoutError)) for e in causes):
                return CommandFailure(
                    "command_timeout", f"no answer within {self.options.timeout:g} s", fatal=True
                )
            if any(isinstance(e, (OSError, EOFError)) for e in causes):
                return CommandFailure("dropped", "connection lost during the getter", fatal=True)
            first = (str(exc).splitlines() or [""])[0][:160]
            return Output("", exit_code=1, stderr=f"{getter} failed: {type(exc).__name__}: {first}")
        return Output(json.dumps(result, indent=2, default=str) + "\n")

    def close(self) -> None:
        """Close the driver (never raises)."""
        with contextlib.suppress(Exception):
            self.driver.close()
