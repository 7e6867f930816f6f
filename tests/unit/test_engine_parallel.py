"""The fabric checks' pass over forked processes (fabline.engine.parallel.run_fabric_checks)."""

from __future__ import annotations

import os
import sys

import pytest

from fabline import perf
from fabline.engine import parallel
from fabline.engine.parallel import FabricGroup, FabricOutcome, FabricWork, run_fabric_checks
from fabline.results import Result, ResultStore, Severity, Status

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="forked workers: Linux only")


def _work(groups: list[FabricGroup], log: list[str]) -> FabricWork:
    """Checks that say which process ran them and whether the graph was built there."""
    built = {"graph": False}

    def prepare() -> None:
        log.append(f"prepare {os.getpid()}")
        built["graph"] = True

    def run_one(i: int) -> FabricOutcome:
        store = ResultStore()
        facts = {"pid": os.getpid(), "graph": built["graph"]}
        store.append(Result(f"check-{i}", "fabric", None, Status.PASS, Severity.MINOR, None, facts))
        return FabricOutcome(store, [f"note {i}"], None)

    return FabricWork(run_one, groups, prepare)


def _facts(outcomes: list[FabricOutcome]) -> list[dict[str, object]]:
    return [next(iter(o.results)).actual for o in outcomes]


def test_groups_without_the_graph_run_beside_its_build_and_results_keep_run_order() -> None:
    log: list[str] = []
    groups = [FabricGroup([0, 3], links=False), FabricGroup([1], links=True), FabricGroup([2, 4], links=True)]
    outcomes = run_fabric_checks(_work(groups, log), jobs=2)
    assert [next(iter(o.results)).check for o in outcomes] == [f"check-{i}" for i in range(5)]
    assert [o.notes for o in outcomes] == [[f"note {i}"] for i in range(5)]
    facts = _facts(outcomes)
    me = os.getpid()
    assert log == [f"prepare {me}"]  # built once, here
    early = {facts[0]["pid"], facts[3]["pid"]}
    late = {facts[1]["pid"], facts[2]["pid"], facts[4]["pid"]}
    # the graph-free group ran in its own child, forked before the build (it never saw the graph)
    assert len(early) == 1 and me not in early and not early & late
    assert facts[0]["graph"] is False and facts[3]["graph"] is False
    # the link groups ran in workers forked after the build: they inherited it
    assert me not in late and all(facts[i]["graph"] is True for i in (1, 2, 4))


def test_an_early_child_that_dies_has_its_groups_run_here(monkeypatch: pytest.MonkeyPatch) -> None:
    def dead_child(func: object) -> perf.ForkedCall:
        return perf.fork_call(lambda: os._exit(9))  # the child dies before it sends anything

    monkeypatch.setattr(parallel, "fork_call", dead_child)
    log: list[str] = []
    groups = [FabricGroup([0], links=False), FabricGroup([1], links=True)]
    outcomes = run_fabric_checks(_work(groups, log), jobs=2)
    facts = _facts(outcomes)
    assert facts[0]["pid"] == os.getpid()  # run again in this process, after the graph's build
    assert facts[0]["graph"] is True and facts[1]["pid"] != os.getpid()


def test_no_graph_groups_at_all_means_no_build() -> None:
    log: list[str] = []
    groups = [FabricGroup([0], links=False), FabricGroup([1], links=False)]
    outcomes = run_fabric_checks(_work(groups, log), jobs=2)
    assert log == []
    assert len({f["pid"] for f in _facts(outcomes)} | {os.getpid()}) >= 2
