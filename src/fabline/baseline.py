"""The baseline language: rules with selectors and typed expectations, overlays and waivers.

A baseline is one or more YAML files. Each holds ``vars`` (defaults for ``{{ name }}`` references,
overridden per device by inventory variables), ``rules`` and ``waivers``. Later files overlay
earlier ones by rule id: an overlay entry may give only the keys it changes
(``{id: fec-rs, enabled: false}``). Rules without ``expect`` tune the built-in or site-local
Python check of the same id.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

from fabline.errors import ConfigError
from fabline.operators import OPERATORS, OperandError, compile_operators
from fabline.platforms.spec import platform_ids
from fabline.results import RULE_ID, Severity
from fabline.state import ROLES
from fabline.userfiles import LineDict, LineList, choice, line_of, load_yaml, validate

_TEMPLATE = re.compile(r"\{\{.*?\}\}|\{%.*?%\}", re.DOTALL)


#: A platform id named in a baseline: one of the registry's (read at validation time).
PlatformName = Annotated[str, BeforeValidator(lambda value: choice(value, platform_ids()))]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class InterfaceSelector(_Strict):
    """Which interfaces of a selected device a rule applies to (all conditions must hold)."""

    name: str | None = Field(None, description="regex, full match on the interface name")
    exclude: str | None = Field(None, description="regex; matching names are left out")
    facing: Literal["host", "fabric", "any"] = Field(
        "any", description="by role of the LLDP peer: host (a GPU server), fabric (a switch)"
    )
    in_var: str | None = Field(None, description="inventory variable holding a list of interface names")
    admin_up: bool | None = None
    oper_up: bool | None = None

    @field_validator("name", "exclude")
    @classmethod
    def _regex(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"invalid regex {value!r}: {exc}") from None
        return value


class Selector(_Strict):
    """Which devices (and interfaces) a rule applies to. Empty means every device."""

    roles: list[Literal["spine", "leaf", "host"]] | None = None
    platforms: list[PlatformName] | None = None
    groups: list[str] | None = None
    hosts: str | None = Field(None, description="Ansible host pattern, e.g. 'leaf*:!leaf-r2-a'")
    interfaces: InterfaceSelector | None = None


class Expectation(_Strict):
    """One typed expectation on a state path (relative to the interface or the device)."""

    path: str
    equals: Any = None
    not_equals: Any = None
    one_of: list[Any] | str | None = None
    min: int | float | str | None = None
    max: int | float | str | None = None
    range: list[int | float | str] | str | None = None
    regex: str | None = None
    contains: list[Any] | str | None = None
    exactly: list[Any] | str | None = None
    absent: Literal[True] | None = None
    present: Literal[True] | None = None
    maps_only: dict[str, Any] | None = None
    each: dict[str, Any] | None = None
    on_missing: Literal["error", "fail", "skip"] = Field(
        "error", description="outcome when the path was not collected"
    )

    @model_validator(mode="before")
    @classmethod
    def _one_operator(cls, data: Any) -> Any:
        if isinstance(data, dict):
            ops = [k for k in data if k in OPERATORS]
            if not ops and not (set(data) - {"path", "on_missing"}):
                raise ValueError(f"expectation needs an operator: one of {', '.join(OPERATORS)}")
            if "each" in data and isinstance(data["each"], dict):
                bad = [k for k in data["each"] if k not in OPERATORS or k in ("each", "absent", "present")]
                if bad:
                    raise ValueError(f"each: unknown operator {bad[0]!r}")
        return data

    def operators(self) -> dict[str, Any]:
        """The operators set on this expectation, operand as written."""
        return {k: getattr(self, k) for k in OPERATORS if k in self.model_fields_set}


class Rule(_Strict):
    """A fully merged rule. Declarative when it has ``expect``; else it tunes a Python check."""

    id: str
    description: str = ""
    severity: Literal["critical", "major", "minor", "info"] | None = None
    select: Selector = Selector()
    when: list[Expectation] = []
    expect: list[Expectation] | None = None
    params: dict[str, Any] = {}
    enabled: bool = True
    tags: list[str] = []

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        if not RULE_ID.match(value):
            raise ValueError(f"rule id {value!r} must be lower-case letters, digits, '-', '_' or '.'")
        return value

    @model_validator(mode="after")
    def _complete(self) -> Rule:
        if self.expect is not None:
            if not self.expect:
                raise ValueError("expect must list at least one expectation")
            if not self.description.strip():
                raise ValueError("a rule needs a description that says why it matters")
            if self.severity is None:
                raise ValueError("a rule needs a severity: critical, major, minor or info")
        return self


class Waiver(_Strict):
    """An accepted deviation: rule id + device/subject pattern + reason + expiry."""

    rule: str = Field(description="rule id or glob")
    devices: str = Field("*", description="glob on device names")
    subject: str | None = Field(None, description="glob on the subject (interface); omitted = any")
    reason: str
    expires: dt.date | None = None
    owner: str | None = None
    ticket: str | None = None

    @field_validator("reason")
    @classmethod
    def _reason(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("a waiver needs a reason")
        return value


class _RulePatch(_Strict):
    """A rule as written in one file: every key optional (overlays give only what they change)."""

    id: str
    description: str | None = None
    severity: Literal["critical", "major", "minor", "info"] | None = None
    select: Selector | None = None
    when: list[Expectation] | None = None
    expect: list[Expectation] | None = None
    params: dict[str, Any] | None = None
    enabled: bool | None = None
    tags: list[str] | None = None


class BaselineFile(_Strict):
    """The top level of one baseline file."""

    version: Literal[1] = 1
    description: str | None = None
    vars: dict[str, Any] = {}
    rules: list[_RulePatch] = []
    waivers: list[Waiver] = []


@dataclass
class Baseline:
    """Merged baseline: rules in first-seen order, vars, waivers, and where each rule came from."""

    files: list[Path]
    vars: dict[str, Any]
    rules: list[Rule]
    waivers: list[tuple[Waiver, Path]]
    rule_source: dict[str, Path] = field(default_factory=dict)

    def rule(self, rule_id: str) -> Rule | None:
        """The merged rule with this id, if any."""
        return next((r for r in self.rules if r.id == rule_id), None)


def default_baseline_path(workspace: Path | None = None) -> Path:
    """The baseline used without ``-b``: ``./baseline/roce.yml`` if present, else the packaged one."""
    local = (workspace or Path()) / "baseline" / "roce.yml"
    if local.is_file():
        return local
    return packaged_workspace() / "baseline" / "roce.yml"


def packaged_workspace() -> Path:
    """The workspace template shipped in the wheel (falls back to the source checkout)."""
    packaged = Path(str(resources.files("fabline"))) / "_workspace"
    if packaged.is_dir():
        return packaged
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "baseline" / "roce.yml").is_file():
        return checkout
    raise ConfigError("fabline's packaged workspace is missing: reinstall fabline")


def load_baseline(paths: Sequence[Path]) -> Baseline:
    """Load and merge baseline files; later files overlay earlier ones by rule id.

    Raises:
        ConfigError: Naming file, line and key for any problem, before any work starts.
    """
    merged: dict[str, dict[str, Any]] = {}
    sources: dict[str, Path] = {}
    lines: dict[str, int | None] = {}
    all_vars: dict[str, Any] = {}
    waivers: list[tuple[Waiver, Path]] = []
    for path in paths:
        raw = load_yaml(path, "baseline")
        if raw is None:
            raw = LineDict()
        if not isinstance(raw, dict):
            raise ConfigError(
                "a baseline file is a mapping with 'rules' (and optionally vars, waivers)", file=path
            )
        doc: BaselineFile = validate(BaselineFile, raw, path)
        all_vars.update(doc.vars)
        raw_rules = raw.get("rules") or LineList()
        seen_here: set[str] = set()
        for i, patch in enumerate(doc.rules):
            if patch.id in seen_here:
                raise ConfigError(
                    f"duplicate rule id {patch.id!r} in one file",
                    file=path,
                    line=line_of(raw, ("rules", i, "id")),
                    key=f"rules[{i}].id",
                )
            seen_here.add(patch.id)
            given = dict(raw_rules[i])
            merged.setdefault(patch.id, {}).update(given)
            sources[patch.id] = path
            lines[patch.id] = line_of(raw, ("rules", i))
        waivers.extend((w, path) for w in doc.waivers)
    rules: list[Rule] = []
    for rule_id, body in merged.items():
        rule = validate(Rule, body, sources[rule_id], base_loc=(f"rules[id={rule_id}]",))
        if rule.expect is not None:
            _precheck_operands(rule, all_vars, sources[rule_id], lines[rule_id])
        rules.append(rule)
    return Baseline(files=list(paths), vars=all_vars, rules=rules, waivers=waivers, rule_source=sources)


def has_template(value: Any) -> bool:
    """Whether a value (or anything inside it) holds a Jinja2 expression."""
    if isinstance(value, str):
        return bool(_TEMPLATE.search(value))
    if isinstance(value, dict):
        return any(has_template(k) or has_template(v) for k, v in value.items())
    if isinstance(value, list):
        return any(has_template(v) for v in value)
    return False


def _precheck_operands(rule: Rule, base_vars: dict[str, Any], path: Path, line: int | None) -> None:
    """Compile template-free operands now so a bad operand fails at load time."""
    for group_name, exps in (("expect", rule.expect or []), ("when", rule.when)):
        for i, exp in enumerate(exps):
            ops = exp.operators()
            if has_template(ops) or has_template(exp.path):
                continue
            try:
                compile_operators(ops)
            except OperandError as exc:
                raise ConfigError(
                    str(exc), file=path, line=line, key=f"rules[id={rule.id}].{group_name}[{i}]"
                ) from None


def severity_of(rule: Rule, default: Severity) -> Severity:
    """The rule's severity, or the check's default when the rule does not set one."""
    return Severity.parse(rule.severity) if rule.severity else default


__all__ = [
    "ROLES",
    "Baseline",
    "Expectation",
    "InterfaceSelector",
    "Rule",
    "Selector",
    "Waiver",
    "default_baseline_path",
    "load_baseline",
    "packaged_workspace",
]
