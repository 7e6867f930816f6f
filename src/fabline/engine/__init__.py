"""The check engine, one module per job.

* :mod:`fabline.engine.rules`: the declarative rule compiler (templates rendered per device,
  expectations compiled into predicates) and its evaluation over one device's state;
* :mod:`fabline.engine.waivers`: waivers that turn a fail or error into ``waived``;
* :mod:`fabline.engine.parallel`: the per-device pass split over forked workers;
* :mod:`fabline.engine.core`: :class:`Engine`, the run over a snapshot, and :class:`RunOutcome`.
"""

from __future__ import annotations

from fabline.engine.core import (
    FABRIC_DEVICE,
    Engine,
    RunOutcome,
    natural_key,
)
from fabline.engine.parallel import CHUNK_DEVICES
from fabline.engine.rules import DeviceLike, RuleProgram
from fabline.engine.waivers import WaiverMatcher, apply_waivers

__all__ = [
    "CHUNK_DEVICES",
    "FABRIC_DEVICE",
    "DeviceLike",
    "Engine",
    "RuleProgram",
    "RunOutcome",
    "WaiverMatcher",
    "apply_waivers",
    "natural_key",
]
