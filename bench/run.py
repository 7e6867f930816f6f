"""Time ``fabline check`` on generated fabrics against the floor of merely loading the states.

    python bench/run.py --sizes 1000,10000,100000 --runs 3
    python bench/run.py --sizes 100000 --fabric clos --reports json,junit,md --runs 3 [--no-planes]
    python bench/run.py --issue14 --data /path/outside/the/repo --runs 3

``--issue14`` runs bench/scale_bench.py: every figure of issue 14 in one command (reports with and
without ``plane`` variables beside the floor, wall and CPU time and peak RSS, report file sizes,
history recording and its database growth, history show, diff, drift), fabrics kept in ``--data``.

For each size: generate the fabric once (bench/out/<size>, or bench/out/clos-<size>[-noplanes] for
``--fabric clos``: the buildable multi-plane fabric of bench/generate.py, zero faults), then
alternate N runs of
  * floor: a fresh Python that loads every state file with the JSON parser and nothing else
    (stdlib json, and orjson, which fabline itself uses), and
  * check: ``fabline check -i inventory.yml --snapshot snapshot -q`` (console summary only), or
    with ``--reports FORMATS`` ``... --format FORMATS --out DIR``, the report files written and
    their sizes recorded (DIR is emptied before each run),
each under ``/usr/bin/time -v`` for wall time and peak RSS. Prints medians as a Markdown table
(the figures go into docs/benchmarks.md) and writes bench/out/results.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
FLOOR = (
    "import sys,pathlib\n"
    "import {mod} as j\n"
    "n=0\n"
    "for p in sorted(pathlib.Path(sys.argv[1]).glob('*.json')):\n"
    "    d=j.loads(p.read_bytes()); n+=len(d.get('interfaces', {{}}))\n"
    "print(n)\n"
)


def rules_only_overlay() -> Path:
    """A baseline overlay that switches off the Python fabric checks (the foundation's figure)."""
    listed = subprocess.run(
        [sys.executable, "-m", "fabline", "checks", "list", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    off = [
        r["id"] for r in json.loads(listed.stdout) if r["kind"] != "rule" and r["id"] != "device-collection"
    ]
    path = HERE / "out" / "rules-only.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("rules:\n" + "".join(f"  - {{id: {i}, enabled: false}}\n" for i in off))
    return path


def timed(cmd: list[str]) -> tuple[float, float, int]:
    """Run under /usr/bin/time -v: (wall seconds, peak RSS MiB, exit code)."""
    proc = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True, check=False)
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", proc.stderr)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    if not wall or not rss:
        raise RuntimeError(f"cannot read /usr/bin/time output for {cmd}: {proc.stderr[-500:]}")
    h, m, s = wall.groups()
    seconds = int(h or 0) * 3600 + int(m) * 60 + float(s)
    return seconds, int(rss.group(1)) / 1024, proc.returncode


def main() -> None:
    """Command line entry point."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--regenerate", action="store_true")
    ap.add_argument("--extra", default="", help="extra arguments for fabline check, e.g. '-f json -o /tmp/r'")
    ap.add_argument(
        "--fabric", choices=("rail", "clos"), default="rail", help="the fabric of bench/generate.py"
    )
    ap.add_argument("--no-planes", action="store_true", help="--fabric clos without 'plane' variables")
    ap.add_argument(
        "--radix", type=int, default=128, help="switch ports at the NIC speed (bench/generate.py)"
    )
    ap.add_argument("--reports", default="", help="write these report formats, e.g. json,junit,md")
    ap.add_argument(
        "--rules-only",
        action="store_true",
        help="switch the Python fabric checks off (declarative rules only)",
    )
    ap.add_argument("--issue14", action="store_true", help="run bench/scale_bench.py (issue 14's figures)")
    ap.add_argument("--data", default=None, help="with --issue14: where the 100k fabrics are kept (or go)")
    args = ap.parse_args()
    if args.issue14:
        sys.path.insert(0, str(HERE))
        import scale_bench

        sys.argv = [str(HERE / "scale_bench.py"), "--runs", str(args.runs)]
        sys.argv += ["--data", args.data] if args.data else []
        scale_bench.main()
        return
    rows = []
    baseline_args: list[str] = []
    if args.rules_only:
        baseline_args = ["-b", str(HERE.parent / "baseline" / "roce.yml"), "-b", str(rules_only_overlay())]
    for size in (int(s) for s in args.sizes.split(",")):
        gen_args: list[str] = [] if args.radix == 128 else ["--radix", str(args.radix)]
        name = str(size) if args.radix == 128 else f"{size}-r{args.radix}"
        if args.fabric == "clos":
            gen_args += ["--fabric", "clos", "--fault-rate", "0"] + (
                ["--no-planes"] if args.no_planes else []
            )
            name = f"clos-{name}" + ("-noplanes" if args.no_planes else "")
        out = HERE / "out" / name
        if args.regenerate or not (out / "inventory.yml").exists():
            gen = subprocess.run(
                [sys.executable, str(HERE / "generate.py"), "--gpus", str(size), "--out", str(out), *gen_args],
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            print(gen.stdout.strip(), file=sys.stderr)
        report_dir = out / "reports"
        report_args = ["--format", args.reports, "--out", str(report_dir)] if args.reports else []
        sizes: dict[str, float] = {}
        floor, floor_or, check = [], [], []
        for _ in range(args.runs):
            floor.append(
                timed([sys.executable, "-c", FLOOR.format(mod="json"), str(out / "snapshot" / "state")])
            )
            floor_or.append(
                timed([sys.executable, "-c", FLOOR.format(mod="orjson"), str(out / "snapshot" / "state")])
            )
            cmd = [sys.executable, "-m", "fabline", "check", "-i", str(out / "inventory.yml"),
                   "--snapshot", str(out / "snapshot"), "-q", *baseline_args, *report_args,
                   *args.extra.split()]  # fmt: skip
            shutil.rmtree(report_dir, ignore_errors=True)
            result = timed(cmd)
            if result[2] not in (0, 3, 4):
                raise RuntimeError(f"fabline check exited {result[2]}")
            check.append(result)
            if report_dir.is_dir():
                sizes = {p.name: p.stat().st_size / 1e6 for p in sorted(report_dir.iterdir())}
        states = len(list((out / "snapshot" / "state").glob("*.json")))
        row: dict[str, Any] = {
            "gpus": size,
            "devices": states,
            "floor_s": statistics.median(f[0] for f in floor),
            "floor_rss_mib": statistics.median(f[1] for f in floor),
            "floor_orjson_s": statistics.median(f[0] for f in floor_or),
            "check_s": statistics.median(c[0] for c in check),
            "check_rss_mib": statistics.median(c[1] for c in check),
            "fabric": name,
            "report_mb": {k: round(v, 2) for k, v in sizes.items()},
        }
        row["ratio"] = row["check_s"] / row["floor_s"]
        row["ratio_orjson"] = row["check_s"] / row["floor_orjson_s"]
        rows.append(row)
        print(json.dumps(row), file=sys.stderr)
    (HERE / "out").mkdir(exist_ok=True)
    (HERE / "out" / "results.json").write_text(
        json.dumps({"machine": platform.platform(), "python": sys.version.split()[0], "rows": rows}, indent=1)
    )
    print(
        "| fabric | GPUs | devices | floor json (s) | floor orjson (s) | check (s) | check RSS (MiB) "
        "| check / json floor | check / orjson floor | report files (MB) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        files = ", ".join(f"{k} {v:,.1f}" for k, v in r["report_mb"].items()) or "-"
        print(
            f"| {r['fabric']} | {r['gpus']:,} | {r['devices']:,} | {r['floor_s']:.2f} | {r['floor_orjson_s']:.2f} | "
            f"{r['check_s']:.2f} | {r['check_rss_mib']:.0f} | {r['ratio']:.2f} | {r['ratio_orjson']:.2f} | {files} |"
        )


if __name__ == "__main__":
    main()
