"""The doctest examples of the foundation modules run (each is a small, real usage example)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "fabline.errors",
    "fabline.results",
    "fabline.state",
    "fabline.operators",
    "fabline.templating",
    "fabline.userfiles",
    "fabline.engine.core",
    "fabline.checks",
    "fabline.synthetic",
    "fabline.platforms.base",
]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0, f"{name} has no doctest example"
    assert result.failed == 0
