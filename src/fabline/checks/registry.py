"""The registry of Python checks: the built-ins plus site-local checks from ``checks/*.py``.

Site-local checks are discovered at run time like an Ansible project's ``library/``: every
``*.py`` file in the workspace's ``checks/`` folder is imported and each :class:`Check` subclass
defined in it is registered. A duplicate id is an error naming both places.
"""

from __future__ import annotations

import importlib.util
import inspect
import sys
import traceback
from pathlib import Path

from fabline.checks import AnyCheck, Check
from fabline.checks.builtin import BUILTIN_CHECKS
from fabline.errors import ConfigError
from fabline.results import RULE_ID


def builtin_checks() -> dict[str, type[AnyCheck]]:
    """Built-in checks by id, in their declared order."""
    out: dict[str, type[AnyCheck]] = {}
    for cls in BUILTIN_CHECKS:
        _register(out, cls, "fabline (built-in)")
    return out


def load_checks(checks_dir: Path | None) -> dict[str, type[AnyCheck]]:
    """Built-in checks plus those found in ``checks_dir`` (if it exists).

    Raises:
        ConfigError: A check file that does not import, a bad or duplicate id.
    """
    registry = builtin_checks()
    if checks_dir is None or not checks_dir.is_dir():
        return registry
    for path in sorted(checks_dir.glob("*.py")):
        if path.name.startswith("_"):
            continue
        for cls in _classes_in(path):
            _register(registry, cls, str(path))
    return registry


def _classes_in(path: Path) -> list[type[AnyCheck]]:
    name = f"fabline_site_checks.{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ConfigError("cannot load check file", file=path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        raise ConfigError(f"syntax error: {exc.msg}", file=path, line=exc.lineno) from None
    except Exception as exc:  # a site file can raise anything at import time
        tb = traceback.extract_tb(exc.__traceback__)
        line = next((f.lineno for f in reversed(tb) if f.filename == str(path)), None)
        raise ConfigError(f"cannot import: {type(exc).__name__}: {exc}", file=path, line=line) from None
    found = []
    for _, obj in inspect.getmembers(module, inspect.isclass):
        if issubclass(obj, Check) and obj is not Check and obj.__module__ == name:
            found.append(obj)
    return found


def _register(registry: dict[str, type[AnyCheck]], cls: type[AnyCheck], where: str) -> None:
    check_id = getattr(cls, "id", None)
    if not isinstance(check_id, str) or not RULE_ID.match(check_id):
        raise ConfigError(
            f"check class {cls.__name__} needs an id (lower-case letters, digits, '-')", file=where
        )
    if not cls.description():
        raise ConfigError(f"check {check_id!r} needs a docstring: it is the check's description", file=where)
    if check_id in registry:
        other = registry[check_id]
        raise ConfigError(
            f"check id {check_id!r} is already defined by {other.__module__}.{other.__name__}", file=where
        )
    registry[check_id] = cls
