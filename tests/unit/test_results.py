"""Result objects across a process boundary: what the engine's workers send back."""

from __future__ import annotations

from fabline.results import Result, Severity, Status


def test_results_pickle_as_their_constructor_arguments() -> None:
    """A worker's part pickles results compactly; every slot (and the waiver) comes back."""
    import copy
    import pickle

    from fabline.results import PassBlock, SkipBlock

    waived = SkipBlock("x", "d", Severity.MINOR, ["e1", "e2"], "m", Status.ERROR, {"a": 1}, [2])
    waived.status, waived.waiver = Status.WAIVED, "ticket 1"
    plain = Result("mtu", "leaf1", "Ethernet0", Status.FAIL, Severity.MAJOR, {"min": 9100}, 1500, "is 1500")
    one = Result("mtu", "leaf1", None, Status.WAIVED, Severity.MAJOR, None, None, "m")
    one.waiver = "why"
    for r in (plain, one, PassBlock("c", "d", Severity.INFO, ["p1", None], expected=3), waived):
        for back in (pickle.loads(pickle.dumps(r, protocol=pickle.HIGHEST_PROTOCOL)), copy.copy(r)):
            assert type(back) is type(r)
            slots = [s for cls in type(r).__mro__ for s in getattr(cls, "__slots__", ())]
            assert [getattr(back, s) for s in slots] == [getattr(r, s) for s in slots]
    assert len(pickle.dumps(plain, protocol=pickle.HIGHEST_PROTOCOL)) < 200
