"""Rendered configs -> a snapshot of *intended* states (``fabline check --intended CONFIGS``).

Each device's rendered file (``CONFIGS/<device>/<file>``, the one file in that folder) is parsed by
the platform's own parser, as if it had been collected:

- SONiC ``config_db.json`` as ``show runningconfiguration all``;
- Cumulus NVUE ``startup.yaml`` (a YAML list of ``header`` and ``set`` documents) is loaded and
  re-serialised as JSON, the shape ``nv config show -o json`` prints, then parsed by that command's
  parser; switch-wide QoS is copied onto the ports with :func:`cumulus.apply_port_defaults`;
- Arista EOS ``startup-config`` as ``show running-config``;
- the GPU server file ``host.yml`` (fabline's own format, see ``docs/design.md``) directly.

What an intended state holds, and what it does not:

- Configuration only. Operational fields (``oper_up``, optics, counters) stay **absent**: they
  are not in a config. Rules about them either do not select such ports (``interfaces: {oper_up:
  true}``) or need a precondition (see ``docs/design.md``, "Closed loop").
- ``lldp`` is the **planned** neighbour, read from the port description every bundled template
  writes (``<peer device> <peer port>``, kept only when the first word is an inventory device), so
  the rail, Clos and both-ends link checks verify the design's cabling and settings.
- Cumulus reports no switch-wide PFC watchdog; a config that enables it on every admin-up
  ``swp`` port is recorded as ``qos.pfc_watchdog.enabled: true`` (false when one port lacks it).
- The state carries the added top-level ``source: "intended"``.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from fabline.collect.writer import state_bytes
from fabline.errors import ConfigError, ParseError
from fabline.inventory import Device
from fabline.platforms import merge_fragments, parse_output
from fabline.platforms.spec import PLATFORMS
from fabline.state import SCHEMA_ID
from fabline.userfiles import _LineLoader, check_yaml_bounds, config_error_from

_YAML: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class HostNic(_Strict):
    """One rail NIC of a host settings file."""

    rail: int | None = None
    description: str | None = None
    address: str | None = None
    gateway: str | None = None
    mtu: int = Field(ge=68)
    speed_gbps: float | None = None
    fec: str | None = None
    autoneg: bool | None = None
    trust: str | None = None
    pfc_priorities: list[int] | None = None
    dscp_to_priority: dict[str, int] | None = None
    roce_tos: int | None = Field(None, ge=0, le=255)
    ecn_np_priorities: list[int] | None = None
    ecn_rp_priorities: list[int] | None = None
    rdma_device: str | None = None


class HostSettings(_Strict):
    """A host intended-settings file (``host.yml``, rendered from ``templates/linux/``)."""

    fabline_host_settings: int = Field(1, ge=1, le=1)
    hostname: str
    gpudirect_rdma: bool | None = None
    nccl_env: dict[str, str] | None = None
    interfaces: dict[str, HostNic]


_NIC_FIELDS = ("roce_tos", "ecn_np_priorities", "ecn_rp_priorities", "rdma_device")


def parse_host_settings(text: str, path: Path) -> dict[str, Any]:
    """A host settings file as a state body (facts, host, interfaces).

    Raises:
        ConfigError: Malformed YAML or a field that is unknown or of the wrong type (file: key).
    """
    check_yaml_bounds(text, path)
    try:
        # The line-keeping loader, so a bad key is reported with its line.
        raw = yaml.load(text, Loader=_LineLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise ConfigError("malformed YAML", file=path, line=mark.line + 1 if mark else None) from None
    try:
        settings = HostSettings.model_validate(raw)
    except ValidationError as exc:
        raise config_error_from(exc, raw, path, HostSettings) from None
    host: dict[str, Any] = {}
    if settings.gpudirect_rdma is not None:
        host["gpudirect_rdma"] = settings.gpudirect_rdma
    if settings.nccl_env is not None:
        host["nccl_env"] = dict(settings.nccl_env)
    interfaces: dict[str, Any] = {}
    for name, nic in settings.interfaces.items():
        body: dict[str, Any] = {"admin_up": True}
        for key, value in nic.model_dump(exclude_none=True).items():
            if key in ("rail", "address", "gateway"):
                continue
            if key in _NIC_FIELDS:
                body.setdefault("nic", {})[key] = value
            else:
                body[key] = value
        interfaces[name] = body
    out: dict[str, Any] = {"facts": {"hostname": settings.hostname}, "interfaces": interfaces}
    if host:
        out["host"] = host
    return out


def _config_file(folder: Path) -> Path:
    if not folder.is_dir():
        raise FileNotFoundError(f"no rendered config folder {folder}")
    files = sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))
    if len(files) != 1:
        raise FileNotFoundError(f"expected one rendered config in {folder}, found {len(files)}")
    return files[0]


def parse_config(platform: str, path: Path) -> dict[str, Any]:
    """Parse one rendered config into a state body with the platform's parser.

    Raises:
        ParseError: The platform parser refused the text.
        ConfigError: A host settings file is invalid, or the platform has no config parser.
    """
    text = path.read_text("utf-8")
    spec = PLATFORMS.get(platform)
    if spec is not None and spec.kind == "host":
        return parse_host_settings(text, path)
    if spec is None or spec.config_command is None:
        raise ConfigError(f"no config parser for platform {platform!r}", file=path)
    if spec.read_config is not None:
        return spec.read_config(text)
    return merge_fragments([parse_output(platform, spec.config_command, text)])


def planned_lldp(state: dict[str, Any], names: set[str]) -> None:
    """Set ``lldp`` from descriptions ``<device> <port>`` that name a known device.

    Example:
        >>> s = {"interfaces": {"swp1": {"description": "gpu-01 eth0"}, "swp2": {"description": "unused"}}}
        >>> planned_lldp(s, {"gpu-01"}); s["interfaces"]["swp1"]["lldp"], "lldp" in s["interfaces"]["swp2"]
        ({'device': 'gpu-01', 'port': 'eth0'}, False)
    """
    for body in (state.get("interfaces") or {}).values():
        if not isinstance(body, dict):
            continue
        words = str(body.get("description") or "").split()
        if len(words) == 2 and words[0] in names:
            body["lldp"] = {"device": words[0], "port": words[1]}


def intended_state(device: Device, configs_dir: Path, names: set[str], collected_at: str) -> dict[str, Any]:
    """The intended state document of one device (``status: error`` when its config cannot be read)."""
    doc: dict[str, Any] = {
        "schema": SCHEMA_ID,
        "name": device.name,
        "platform": device.platform,
        "role": device.role,
        "status": "ok",
        "errors": [],
        "collected_at": collected_at,
        "source": "intended",
    }
    try:
        path = _config_file(configs_dir / device.name)
        body = parse_config(device.platform, path)
    except FileNotFoundError as exc:
        doc.update(status="error", errors=[{"command": None, "kind": "missing", "message": str(exc)}])
        return doc
    except ParseError as exc:
        doc.update(
            status="error", errors=[{"command": exc_command(exc), "kind": "parse", "message": str(exc)}]
        )
        return doc
    except ConfigError as exc:
        doc.update(status="error", errors=[{"command": None, "kind": "config", "message": str(exc)}])
        return doc
    planned_lldp(body, names)
    for key, value in body.items():
        if key not in doc:
            doc[key] = value
    return doc


def exc_command(exc: ParseError) -> str | None:
    """The command a ParseError names, if it carries one."""
    command = getattr(exc, "command", None)
    return str(command) if command is not None else None


def intended_snapshot(configs_dir: Path, devices: list[Device], out: Path) -> Path:
    """Parse the rendered configs of ``devices`` into ``OUT/state/<device>.json``; returns OUT.

    The caller owns ``out`` (``fabline check --intended`` gives a temporary folder it removes after
    the run). A device whose config is missing or does not parse gets a state with ``status:
    error`` (its rules become ``error`` results; the run goes on).

    Raises:
        ConfigError: ``configs_dir`` is not a folder.
    """
    if not configs_dir.is_dir():
        raise ConfigError("rendered configs folder not found (fabline render --out DIR)", file=configs_dir)
    root = out
    state_dir = root / "state"
    state_dir.mkdir(parents=True, exist_ok=True)
    names = {d.name for d in devices}
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    for device in devices:
        doc = intended_state(device, configs_dir, names, now)
        (state_dir / f"{device.name}.json").write_bytes(state_bytes(doc))  # as a collection writes it
    return root


def load_states(snapshot: Path) -> Mapping[str, dict[str, Any]]:
    """Every ``state/*.json`` of a snapshot by device name (for the diff)."""
    out: dict[str, dict[str, Any]] = {}
    for path in sorted((snapshot / "state").glob("*.json")):
        try:
            out[path.stem] = json.loads(path.read_text("utf-8"))
        except ValueError as exc:
            raise ConfigError(f"invalid state JSON: {exc}", file=path) from None
    return out
