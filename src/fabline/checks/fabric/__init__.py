"""Fabric-level built-in checks: links (both ends), rail cabling, Clos shape, fleet skew, health.

Each check module defines :class:`~fabline.checks.Check` subclasses; ``FABRIC_CHECKS`` lists them
in the order they run and appear in ``fabline checks list``. docs/checks.md describes each one.
"""

from __future__ import annotations

from fabline.checks import AnyCheck
from fabline.checks.fabric.fleet import FLEET_CHECKS
from fabline.checks.fabric.gpuhost import GPUHOST_CHECKS
from fabline.checks.fabric.health import HEALTH_CHECKS
from fabline.checks.fabric.hostapp import HOSTAPP_CHECKS
from fabline.checks.fabric.links import LINK_CHECKS
from fabline.checks.fabric.topology import TOPOLOGY_CHECKS
from fabline.checks.fabric.underlay import UNDERLAY_CHECKS

FABRIC_CHECKS: tuple[type[AnyCheck], ...] = (
    *LINK_CHECKS,
    *TOPOLOGY_CHECKS,
    *HOSTAPP_CHECKS,
    *GPUHOST_CHECKS,
    *FLEET_CHECKS,
    *HEALTH_CHECKS,
    *UNDERLAY_CHECKS,
)
