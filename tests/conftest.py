"""Shared fixtures: where the real device samples live, and the repository root."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
#: The real device outputs, carried in the repository (provenance: tests/samples/MANIFEST.md).
SAMPLES = REPO_ROOT / "tests" / "samples"
#: Folders of tests/samples that hold licence texts, not device outputs.
_NOT_SAMPLES = frozenset({"LICENSES"})


def samples_dir() -> Path:
    """The real-output samples folder, ``tests/samples`` in the repository (nothing outside it)."""
    return SAMPLES


def sample_files() -> list[str]:
    """Every device output in ``tests/samples`` as ``<platform>/<file>``, sorted.

    The samples are the files of the platform folders; ``MANIFEST.md``, ``NOTICE.md`` and the licence
    texts in ``LICENSES/`` are the samples' paperwork, not outputs.
    """
    return sorted(
        path.relative_to(SAMPLES).as_posix()
        for folder in SAMPLES.iterdir()
        if folder.is_dir() and folder.name not in _NOT_SAMPLES
        for path in folder.rglob("*")
        if path.is_file()
    )


@pytest.fixture(scope="session")
def samples() -> Path:
    return samples_dir()


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT
