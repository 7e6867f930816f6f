"""The check's per-device pass in instructions (callgrind): comparable across trees, unchanged by machine load.

    python bench/pass_instructions.py --data DIR/clos-100k [--every 200] [--runs 1]

The machine this project is measured on moves its speed by a quarter or more within minutes (the
same 100k check took 17.7 s and 23.1 s ten minutes apart), more than most changes to the pass
save. Instructions do not move: this runs the pass of ``fabline check`` (``Engine.check_range``,
what each forked worker runs: read, parse, rules, projection, Python checks, per-device collects)
in one process under ``valgrind --tool=callgrind`` over every ``--every``-th device of a fabric
of ``bench/generate.py`` (the inventory's order: hosts, leaves, spines alike), once to warm up
(compiled rules, remembered values, as a worker has after its first units), then once between
two ``os.getppid()`` calls (callgrind's dump markers). Prints the millions of instructions per
device of that second round. ``PYTHONHASHSEED=0``; the tree is the one this script imports
``fabline`` from (``PYTHONPATH``), the workspace the current folder (its ``baseline/``, its
``checks/``): run it from each tree to compare two.

Needs ``valgrind`` (Debian's package). About 2.5 minutes at ``--every 200`` (76 devices of the
100k fabric); most of it is loading the inventory under valgrind.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


def inner(data: Path, every: int) -> None:
    """The pass over every ``every``-th device: a warm-up round, then one between dump markers."""
    from fabline.cli.common import baseline_paths, checks_dir_or_default
    from fabline.engine.parallel import Work
    from fabline.inventory import load_inventory
    from fabline.perf import paused_gc
    from fabline.runner import prepare_engine
    from fabline.snapshot import Snapshot

    inventory = load_inventory(data / "inventory.yml")
    devices = inventory.devices(None)
    engine = prepare_engine(baseline_paths(()), checks_dir_or_default(None), inventory)
    sample = devices[::every]
    roles = {d.name.lower(): d.role for d in devices}
    snapshot = Snapshot(data / "snapshot")
    with paused_gc():  # as the engine's workers run
        for marked in (False, True):
            work = Work(engine, sample, snapshot, None, roles)
            if marked:
                os.getppid()  # callgrind dumps here (--dump-before=os_getppid)
            part = engine.check_range(work, 0, len(sample))
            part.results.count_passes()
            del part, work
            if marked:
                os.getppid()
    print(len(sample))


def _total(dump: Path) -> int:
    for line in dump.read_text().splitlines():
        if line.startswith(("totals:", "summary:")):
            return int(line.split()[1])
    raise ValueError(f"{dump}: no totals line")


def measure(data: Path, every: int) -> float:
    """Millions of instructions per device of one warm round."""
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            [
                "valgrind", "--tool=callgrind", "--dump-before=os_getppid",
                f"--callgrind-out-file={tmp}/cg.%p", sys.executable, __file__,
                "--inner", "--data", str(data), "--every", str(every),
            ],
            capture_output=True, text=True, check=True, env={**os.environ, "PYTHONHASHSEED": "0"},
        )  # fmt: skip
        devices = int(out.stdout.split()[-1])
        dumps = {int(f.name.rsplit(".", 1)[1]): f for f in Path(tmp).glob("cg.*.*")}
        # dump 1: imports, inventory, warm-up; dump 2: the measured round; dump 3: the rest
        return _total(dumps[2]) / devices / 1e6


def main() -> None:
    """Command line entry point."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, required=True, help="a fabric of bench/generate.py")
    ap.add_argument("--every", type=int, default=200, help="check every N-th device (default 200)")
    ap.add_argument("--runs", type=int, default=1, help="measurements (they agree to 0.1 %%)")
    ap.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.inner:
        inner(args.data, args.every)
        return
    figures = [measure(args.data, args.every) for _ in range(args.runs)]
    print(
        f"{statistics.median(figures):.3f} M instructions per device (per-device pass, every "
        f"{args.every}th device of {args.data}; runs: {', '.join(f'{x:.3f}' for x in figures)})"
    )


if __name__ == "__main__":
    main()
