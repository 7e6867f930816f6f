"""Collection profiles: the run plan of each registered platform, as the collector reads them.

The plans themselves live in each platform's spec (:class:`fabline.platforms.spec.RunPlan`, at the
end of ``fabline/platforms/<id>.py``); this module is the collector's view of them.
:func:`check_profiles` proves every plan command is on its platform's read-only allow-list, and
the collector refuses any concrete command line that does not match
(:func:`fabline.collect.device.allowed`).

The simulator (``fabline.sim``) answers exactly these commands; a command added to a plan needs a
renderer there.
"""

from __future__ import annotations

from collections.abc import Mapping

from fabline.platforms import PLATFORMS, RUN_PLANS, RunPlan

#: The collector's name for a run plan.
Profile = RunPlan

#: Platform id -> its run plan (a live view of the platform registry).
PROFILES: Mapping[str, Profile] = RUN_PLANS


def check_profiles() -> list[str]:
    """Every registered platform's inconsistencies, such as a plan command off its allow-list (empty when none).

    Example:
        >>> check_profiles()
        []
    """
    return [problem for spec in PLATFORMS.values() for problem in spec.problems()]


__all__ = ["PROFILES", "Profile", "check_profiles"]
