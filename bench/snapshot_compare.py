"""Compare two collected snapshots of the same fabric: same states, raw outputs and command records?

    python bench/snapshot_compare.py SNAPSHOT_A SNAPSHOT_B

For checking that a change to the collection leaves its results as they were (two runs of
``bench/collect_bench.py``, or ``fabline collect`` against the same simulator with two trees).
What differs between any two runs is left out: the time fields (``collected_at``, ``started_at``,
``duration_s``, the run's own id and times) and the state digests that follow from them. Everything
else must be equal: each device's state, status, errors and command records (command, status,
file, exit code, message), and every raw file byte for byte. Prints the differences (at most 20)
and exits 1 if there are any.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

#: Fields that differ between any two runs of the same collection.
TIMES = frozenset({"collected_at", "started_at", "duration_s", "finished_at", "run_id", "attempts"})


def _strip(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _strip(v) for k, v in node.items() if k not in TIMES and not k.startswith("state_")}
    if isinstance(node, list):
        return [_strip(v) for v in node]
    return node


def compare(a: Path, b: Path) -> list[str]:
    """The differences between two snapshots (empty when they hold the same results)."""
    problems: list[str] = []
    ma = json.loads((a / "manifest.json").read_text())["devices"]
    mb = json.loads((b / "manifest.json").read_text())["devices"]
    if sorted(ma) != sorted(mb):
        problems.append(f"devices differ: {sorted(set(ma) ^ set(mb))[:10]}")
    files = 0
    for name in sorted(set(ma) & set(mb)):
        ea, eb = _strip(ma[name]), _strip(mb[name])
        if ea != eb:
            problems.append(f"{name}: manifest entry differs")
        sa = _strip(json.loads((a / "state" / f"{name}.json").read_text()))
        sb = _strip(json.loads((b / "state" / f"{name}.json").read_text()))
        if sa != sb:
            keys = sorted(k for k in set(sa) | set(sb) if sa.get(k) != sb.get(k))
            problems.append(f"{name}: state differs in {keys}")
        ra, rb = a / "raw" / name, b / "raw" / name
        na = sorted(p.name for p in ra.iterdir()) if ra.is_dir() else []
        nb = sorted(p.name for p in rb.iterdir()) if rb.is_dir() else []
        if na != nb:
            problems.append(f"{name}: raw files differ: {sorted(set(na) ^ set(nb))[:5]}")
        for file in set(na) & set(nb):
            files += 1
            if (ra / file).read_bytes() != (rb / file).read_bytes():
                problems.append(f"{name}: raw/{file} differs")
    print(f"{len(ma)} devices, {files} raw files compared: {len(problems)} differences", file=sys.stderr)
    return problems


def main() -> None:
    """Compare the two snapshots named on the command line."""
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    problems = compare(Path(sys.argv[1]), Path(sys.argv[2]))
    for line in problems[:20]:
        print(line)
    raise SystemExit(1 if problems else 0)


if __name__ == "__main__":
    main()
