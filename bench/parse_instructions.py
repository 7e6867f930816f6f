"""Parse cost in instructions (callgrind), comparable across trees and unchanged by machine load.

    python bench/parse_instructions.py outputs FILE [--bench DIR]  # the bench devices' outputs (simulator)
    valgrind --tool=callgrind --dump-before=os_getppid --callgrind-out-file=OUT/cg.%p \\
        python bench/parse_instructions.py parse FILE    # PYTHONHASHSEED=0
    python bench/parse_instructions.py count OUT         # millions of instructions per device

The devices are `bench/parse_bench.py`'s (one 64-port leaf per switch platform, one 8-NIC host).
`outputs` writes what the simulator answers each collected command (run it with an older tree on
`PYTHONPATH` and that tree's `bench/` as `--bench`, to parse the same text with every tree: newer
commands are then not counted against anyone). `parse` parses each platform's outputs as the tree's collection does, once to warm up,
then 3 times between two `os.getppid()` calls (callgrind's dump markers): a tree with the parse
dispatcher (`fabline.platforms.dispatch`) runs `run_parser(validate=False)`, `checked_merge` and the
spec's `finish`; an older one each command's parser, the merge and the profile's finalize hook.
Commands a tree does not have are left out. `count` divides each platform's dump by 3.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

PLATFORMS = ("sonic", "linux", "cumulus", "arista_eos", "cisco_nxos")


def write_outputs(target: Path, bench: Path) -> None:
    """The bench devices' outputs, as the simulator on the path answers them (``bench``: its parse_bench.py)."""
    sys.path.insert(0, str(bench))
    from parse_bench import outputs  # the collection's command list per device

    from fabline import synthetic
    from fabline.sim.server import Simulator

    found: dict[str, list[tuple[str, str]]] = {}
    for platform in ("sonic", "cumulus", "arista_eos", "cisco_nxos"):
        fabric = synthetic.rail_fabric(512, radix=64, leaf_platforms=(platform,), spine_platforms=(platform,))
        sim = Simulator(fabric)
        found[platform] = outputs(sim, next(d.name for d in fabric.devices if d.role == "leaf"))
        if platform == "sonic":
            found["linux"] = outputs(sim, next(d.name for d in fabric.devices if d.role == "host"))
    target.write_text(json.dumps(found))


def _parser_of(platform: str, outs: list[tuple[str, str]]) -> Callable[[], Any]:
    try:
        from fabline.collect.allowlist import match_command
        from fabline.platforms import PLATFORMS as SPECS
        from fabline.platforms import ParseContext
        from fabline.platforms.dispatch import checked_merge, run_parser
    except ImportError:  # a tree before the parse dispatcher (issue 11)
        return _old_parser_of(platform, outs)
    matched = [(m, cmd, out) for cmd, out in outs if (m := match_command(platform, cmd)) is not None]
    spec = SPECS[platform]

    def parse() -> Any:
        fragments = [
            run_parser(m[0].parser, out, ParseContext(platform, cmd, m[1]), validate=False)
            for m, cmd, out in matched
        ]
        return spec.finish(checked_merge(fragments)[0])

    return parse


def _old_parser_of(platform: str, outs: list[tuple[str, str]]) -> Callable[[], Any]:
    from fabline.collect.device import match_command
    from fabline.collect.profiles import PROFILES
    from fabline.platforms import ParseContext, merge_fragments

    matched = [(m, cmd, out) for cmd, out in outs if (m := match_command(platform, cmd)) is not None]
    finalize = PROFILES[platform].finalize

    def parse() -> Any:
        state = merge_fragments(
            m[0].parser(out, ParseContext(platform, cmd, m[1])) for m, cmd, out in matched
        )
        return finalize(state) if finalize else state

    return parse


def parse_outputs(source: Path) -> None:
    """Parse every platform's outputs: warm-up, then 3 parses between two dump markers each."""
    found = json.loads(source.read_text())
    parsers = {p: _parser_of(p, found[p]) for p in PLATFORMS}
    for parse in parsers.values():
        parse()
    for parse in parsers.values():
        os.getppid()  # callgrind dumps here (--dump-before=os_getppid)
        for _ in range(3):
            parse()
    os.getppid()


def count(folder: Path) -> dict[str, float]:
    """Millions of instructions per device parse, per platform, from the dumps in ``folder``."""
    dumps = {int(f.name.rsplit(".", 1)[1]): f for f in folder.glob("cg.*.*")}

    def total(f: Path) -> int:
        for line in f.read_text().splitlines():
            if line.startswith(("totals:", "summary:")):
                return int(line.split()[1])
        raise ValueError(f"{f}: no totals line")

    # Dump 1 is the imports and the warm-up; dump 2 + i is platform i's 3 parses.
    return {p: round(total(dumps[i + 2]) / 3e6, 1) for i, p in enumerate(PLATFORMS)}


def main() -> None:
    """Command line entry point."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=("outputs", "parse", "count"))
    ap.add_argument("path", type=Path)
    ap.add_argument(
        "--bench", type=Path, default=Path(__file__).resolve().parent, help="parse_bench.py's folder"
    )
    args = ap.parse_args()
    if args.what == "outputs":
        write_outputs(args.path, args.bench)
    elif args.what == "parse":
        parse_outputs(args.path)
    else:
        print(json.dumps(count(args.path)))


if __name__ == "__main__":
    main()
