"""Every doctest example in ``src/fabline`` runs (each is a small, real usage example).

The modules are found by walking the package, so a new module's examples run without an edit here.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import fabline

MODULES = sorted(
    m.name for m in pkgutil.walk_packages(fabline.__path__, "fabline.") if m.name != "fabline.__main__"
)


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


def test_the_examples_are_many() -> None:
    """Walking the package found the modules (a broken walk would pass every test above vacuously)."""
    finder = doctest.DocTestFinder()
    with_examples = [
        name for name in MODULES if any(t.examples for t in finder.find(importlib.import_module(name)))
    ]
    assert len(MODULES) > 80 and len(with_examples) > 40, (len(MODULES), len(with_examples))
