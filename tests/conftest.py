"""Shared fixtures: where the real device samples live, and the repository root."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


def samples_dir() -> Path:
    """The shared real-output samples (``../shared/samples`` beside the clone, or $FABLINE_SAMPLES)."""
    env = os.environ.get("FABLINE_SAMPLES")
    path = Path(env) if env else REPO_ROOT.parent / "shared" / "samples"
    if not (path / "MANIFEST.md").is_file():
        raise RuntimeError(
            f"shared samples not found at {path}: set FABLINE_SAMPLES to the samples folder "
            "(the parser tests are written against real device output and cannot run without it)"
        )
    return path


@pytest.fixture(scope="session")
def samples() -> Path:
    return samples_dir()


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT
