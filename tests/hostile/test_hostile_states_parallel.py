"""Corrupt values anywhere in the states of a fabric checked over forked workers.

The state schema turns every forbidden value into an ``Invalid`` marker kept in its place; the
per-device pass runs in worker processes on large fabrics and sends back results, link views and
what the fabric checks collected by pickle. Whatever a field holds, the run must finish, give the
same results as the in-line pass, and name the corrupt fields in error results.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

import pytest

from fabline import synthetic
from fabline.results import Status
from tests.helpers import checked_inline_and_forked, write_snapshot

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="forked workers: Linux only")

BASELINE = Path(__file__).resolve().parents[2] / "baseline" / "roce.yml"

#: Values of the wrong type or range for any field: a number where text belongs and the reverse,
#: a float where an integer belongs, a structure where a scalar belongs, huge and negative values.
CORRUPT: list[Any] = [7, "7", 1e308, -1, True, "false", [1, "x"], {"k": None}, "", 2**70]


def _leaves(doc: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    """Every scalar of a document with its path."""
    if isinstance(doc, dict):
        return [leaf for k, v in doc.items() for leaf in _leaves(v, (*path, k))]
    if isinstance(doc, list):
        return [leaf for i, v in enumerate(doc) for leaf in _leaves(v, (*path, i))]
    return [(path, doc)]


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> None:
    for key in path[:-1]:
        doc = doc[key]
    doc[path[-1]] = value


@pytest.mark.parametrize("seed", [1, 2])
def test_corrupt_fields_on_many_devices_give_the_same_results_in_workers(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    fabric = synthetic.rail_fabric(256, radix=32)
    docs = list(synthetic.states(fabric, []))
    planted = 0
    for doc in rng.sample(docs, len(docs) // 2):
        fields = [(p, v) for p, v in _leaves(doc) if p[0] not in ("schema", "name")]
        for path, _ in rng.sample(fields, min(len(fields), 40)):
            _set(doc, path, rng.choice(CORRUPT))
            planted += 1
    assert planted > 100
    serial, parallel = checked_inline_and_forked(fabric.devices, write_snapshot(tmp_path, docs))
    assert [r.to_dict() for r in serial.results] == [r.to_dict() for r in parallel.results]
    assert serial.devices == parallel.devices
    errors = [r for r in parallel.results if r.status is Status.ERROR and "is invalid (" in (r.message or "")]
    assert len(errors) > 20  # the corrupt fields are named, not judged
