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


def _fill(store: object, device: str, checks: list[str], fold: bool = False) -> None:
    """Blocks of passes with problems among them, and a Python check's results, on one device."""
    from fabline.results import PassBlock, ResultStore

    assert isinstance(store, ResultStore)
    for k, check in enumerate(checks):
        subjects = tuple(f"e{i}" for i in range(5))
        problems = (
            {1: Result(check, device, "e1", Status.FAIL, Severity.MAJOR, 1, 2, "bad")} if k % 2 else None
        )
        store.add_block(check, device, Severity.MAJOR, 9100, subjects, problems)
    store.extend([PassBlock("py", device, Severity.MINOR, ["a", "b"])])
    store.append(Result("py", device, "c", Status.ERROR, Severity.MINOR, None, None, "no data"))
    if fold:  # folds into a SkipBlock with the error just before it
        store.append(Result("py", device, "d", Status.ERROR, Severity.MINOR, None, None, "no data"))


def test_passes_counted_ahead_in_parts_tally_like_one_walk() -> None:
    """Parts that counted their passes (in the workers) merge into a store whose tally, and its
    order of devices and checks, is what walking every block gives; later blocks, folds and a
    replaced result are counted too."""
    import pickle

    from fabline.results import ResultStore

    def build(counted: bool) -> ResultStore:
        main = ResultStore()
        for p, devices in enumerate([["d1", "d2"], ["d3"], ["d2", "d4"]]):
            part = ResultStore()
            for d in devices:
                _fill(part, d, [f"r{(p + i) % 4}" for i in range(4)], fold=d == "d3")
            if counted:
                part.count_passes()
            main.merge(pickle.loads(pickle.dumps(part)))  # as a worker's part arrives
        # fabric checks' results after the parts, then a fold into the last block
        main.append(Result("fab", "d5", None, Status.PASS, Severity.MINOR, None, None, None))
        _fill(main, "d1", ["r9"], fold=True)
        return main

    walked, counted = build(False), build(True)
    assert counted._counted is not None and walked._counted is None
    assert counted.tally() == walked.tally()
    assert list(counted.tally()[0]["by_device"]) == list(walked.tally()[0]["by_device"])
    assert list(counted.tally()[1]) == list(walked.tally()[1])
    assert counted.tally()[1]["r1"] == {"d1": 4, "d2": 8, "d3": 5, "d4": 4}  # d2 in two parts
    assert counted.tally() == counted.tally()  # tallying twice counts nothing twice
    # a waiver splitting a problem drops the counts ahead: the next tally walks everything
    old = next(r for r in counted.problems if r.check == "py" and r.device == "d1")  # a block of its own
    waived = Result(
        old.check, old.device, old.subject, Status.WAIVED, old.severity, old.expected, old.actual, "w"
    )
    for store in (counted, walked):
        store.replace(next(r for r in store.problems if r.to_dict() == old.to_dict()), [waived])
    assert counted._counted is None and counted.tally() == walked.tally()
