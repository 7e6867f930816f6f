"""`fabline inventory --list` prints what the real `ansible-inventory --list` prints."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT


def _ansible_inventory() -> str:
    exe = Path(sys.executable).with_name("ansible-inventory")
    found = str(exe) if exe.exists() else shutil.which("ansible-inventory")
    assert found, "ansible-inventory (ansible-core, a dev dependency) is required"
    return found


@pytest.mark.parametrize("limit", [None, "spine", "fabric:!leaf-r2-a", "gpu*"])
def test_inventory_list_equals_ansible_inventory(limit: str | None, tmp_path: Path) -> None:
    inv = REPO_ROOT / "inventory" / "lab.yml"
    extra = ["--limit", limit] if limit else []
    env = {**os.environ, "ANSIBLE_LOCAL_TEMP": str(tmp_path), "ANSIBLE_HOME": str(tmp_path)}
    ours = subprocess.run(
        [sys.executable, "-m", "fabline", "inventory", "-i", str(inv), "--list", *extra],
        capture_output=True, text=True, check=True, env=env,
    )  # fmt: skip
    theirs = subprocess.run(
        [_ansible_inventory(), "-i", str(inv), "--list", *extra],
        capture_output=True, text=True, check=True, env=env,
    )  # fmt: skip
    assert json.loads(ours.stdout) == json.loads(theirs.stdout)
