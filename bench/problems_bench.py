"""Time grouping a run's findings into problems (``fabline.problems``) on a large fabric.

    python bench/generate.py --gpus 100000 --out bench/out/100k-plane --plane-fault
    python bench/problems_bench.py --fabric bench/out/100k-plane --runs 3

Runs the real check in-process (``fabline.runner.run_check``, default baseline, no report files)
``--runs`` times and measures, inside each run, the step that turns the findings into problems
(the facts lookup plus :func:`fabline.problems.group`): what grouping adds to the check. Prints
the medians and the problems found.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path
from typing import Any

from fabline.runner import run_check

try:  # the engine's home of the grouping step (a package since issue 12's split)
    from fabline.engine import core as engine
except ImportError:  # pragma: no cover - before the split
    from fabline import engine  # type: ignore[no-redef]

REPO = Path(__file__).resolve().parents[1]


def one_run(fabric: Path) -> dict[str, Any]:
    """One check run: total seconds, grouping seconds, findings and problems."""
    spent: list[float] = []
    cpu: list[float] = []
    inner = engine._group_problems

    def timed(*args: Any) -> Any:
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            return inner(*args)
        finally:
            spent.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)

    engine._group_problems = timed  # type: ignore[assignment]
    try:
        t0 = time.perf_counter()
        report, _ = run_check(
            inventory=fabric / "inventory.yml", snapshot=fabric / "snapshot",
            baselines=[REPO / "baseline" / "roce.yml"], checks_dir=None, limit=None, out=None, formats=[],
            fail_on="minor",
        )  # fmt: skip
        total = time.perf_counter() - t0
    finally:
        engine._group_problems = inner  # type: ignore[assignment]
    problems = report.outcome.problems
    return {
        "check_s": total,
        "group_s": spent[0],
        "group_cpu_s": cpu[0],
        "findings": sum(len(p.findings) for p in problems),
        "problems": [f"{p.severity.label} {p.cause}" for p in problems[:10]],
        "n_problems": len(problems),
    }


def main() -> None:
    """Command line entry point."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fabric", type=Path, required=True, help="a bench/generate.py output folder")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    runs = [one_run(args.fabric) for _ in range(args.runs)]
    out = {
        "fabric": str(args.fabric),
        "python": platform.python_version(),
        "check_s_median": round(statistics.median(r["check_s"] for r in runs), 2),
        "group_s_median": round(statistics.median(r["group_s"] for r in runs), 3),
        "group_s_runs": [round(r["group_s"], 3) for r in runs],
        "group_cpu_s_median": round(statistics.median(r["group_cpu_s"] for r in runs), 3),
        "findings": runs[0]["findings"],
        "n_problems": runs[0]["n_problems"],
        "problems": runs[0]["problems"],
    }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
