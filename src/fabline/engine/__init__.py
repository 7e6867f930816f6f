"""The check engine, one module per job.

* :mod:`fabline.engine.rules`: the declarative rule compiler (templates rendered per device,
  expectations compiled into predicates) and its evaluation over one device's state;
* :mod:`fabline.engine.waivers`: waivers that turn a fail or error into ``waived``;
* :mod:`fabline.engine.parallel`: the per-device pass split over forked workers;
* :mod:`fabline.engine.core`: :class:`Engine` and the run over a snapshot, which returns a
  :class:`~fabline.record.RunOutcome` (the results layer's run record, re-exported here).
"""

from __future__ import annotations

from fabline.checks import FABRIC_DEVICE, natural_key
from fabline.engine.core import Engine
from fabline.engine.parallel import CHUNK_DEVICES
from fabline.engine.rules import DeviceLike, RuleProgram
from fabline.engine.waivers import WaiverMatcher, apply_waivers
from fabline.record import RunOutcome

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
