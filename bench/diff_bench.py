"""Time ``fabline diff`` of two snapshots and recording a run into the SQLite history.

    python bench/diff_bench.py --gpus 100000 --runs 3

Uses the fabric of ``bench/generate.py`` (``bench/out/<gpus>``, generated when missing) as the
"before" snapshot and writes an "after" snapshot beside it (``after/``), as a night later: every
counter moved, 1% of host ports with their MTU changed, a few leaves with an extra PFC priority, a
few counters reset, optics readings drifted. Then, each under ``/usr/bin/time -v`` (wall, peak RSS):

* ``diff``: ``fabline diff BEFORE AFTER -f json -o FILE`` (state changes + counters), beside the
  floor of merely json-loading both snapshots in a fresh Python (``bench/run.py``'s floor), and
* ``record``: ``fabline check --history DB`` of the after snapshot, with the seconds spent in the
  recording itself measured inside the process.

Prints medians as a Markdown table (for docs/benchmarks.md) and writes bench/out/diff_results.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run import timed  # noqa: E402  (bench/run.py, beside this file)

#: The floor: a fresh Python that parses every state file of a snapshot with the parser fabline uses.
FLOOR = (
    "import sys, pathlib\n"
    "try:\n    from orjson import loads\nexcept ImportError:\n    from json import loads\n"
    "n = 0\n"
    "for p in sorted(pathlib.Path(sys.argv[1]).glob('*.json')):\n"
    "    n += len(loads(p.read_bytes()).get('interfaces', {}))\n"
    "print(n)\n"
)


def timed_output(cmd: list[str]) -> tuple[float, float, int, str]:
    """Like ``run.timed``, also returning the command's standard output."""
    proc = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True, check=False)
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", proc.stderr)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    if not wall or not rss:
        raise RuntimeError(f"cannot read /usr/bin/time output: {proc.stderr[-500:]}")
    h, m, sec = wall.groups()
    return (
        int(h or 0) * 3600 + int(m) * 60 + float(sec),
        int(rss.group(1)) / 1024,
        proc.returncode,
        proc.stdout,
    )


RECORD = """
import sys, time
from pathlib import Path
import fabline.history as h
from fabline.runner import run_check
orig = h.record
spent = []
def timed_record(report, snapshot, db):
    t0 = time.perf_counter(); run_id = orig(report, snapshot, db); spent.append(time.perf_counter() - t0)
    return run_id
h.record = timed_record
report, _ = run_check(inventory=Path(sys.argv[1]), snapshot=Path(sys.argv[2]), baselines=[Path(sys.argv[4])],
                      checks_dir=None, limit=None, out=None, formats=[], fail_on="minor", history=Path(sys.argv[3]))
print(f"RECORD_S={spent[0]:.3f} RESULTS={len(report.outcome.results)}")
"""


def make_after(before: Path, after: Path, seed: int = 11) -> dict[str, int]:
    """Write the "next night" snapshot; returns what was planted."""
    rng = random.Random(seed)
    (after / "state").mkdir(parents=True, exist_ok=True)
    planted = {"mtu": 0, "pfc": 0, "resets": 0, "devices": 0}
    for path in sorted((before / "state").glob("*.json")):
        doc = json.loads(path.read_bytes())
        doc["collected_at"] = "2026-11-30T08:00:00Z"
        host = doc.get("role") == "host"
        for i, body in enumerate(doc.get("interfaces", {}).values()):
            c = body.get("counters")
            if c:
                c["fec_corrected"] = c.get("fec_corrected", 0) + rng.randrange(1000, 100000)
                for prio in c.get("pfc_rx_pause", {}):
                    c["pfc_rx_pause"][prio] += rng.randrange(0, 500)
                c["ecn_marked"] = c.get("ecn_marked", 0) + rng.randrange(0, 10000)
                if rng.random() < 0.001:
                    c["fec_corrected"] = 3
                    planted["resets"] += 1
            optics = body.get("optics")
            if optics:
                optics["temperature_c"] = round(40 + rng.random() * 10, 1)
            if host and i == 1 and rng.random() < 0.01:
                body["mtu"] = 1500
                planted["mtu"] += 1
            if not host and i == 0 and rng.random() < 0.01:
                body["pfc_priorities"] = [3, 4]
                planted["pfc"] += 1
        (after / "state" / path.name).write_text(json.dumps(doc, separators=(",", ":")), "utf-8")
        planted["devices"] += 1
    return planted


def main() -> None:
    """Command line entry point."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpus", type=int, default=100000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--regenerate", action="store_true")
    args = ap.parse_args()
    out = HERE / "out" / str(args.gpus)
    if args.regenerate or not (out / "inventory.yml").exists():
        subprocess.run(
            [sys.executable, str(HERE / "generate.py"), "--gpus", str(args.gpus), "--out", str(out)],
            check=True,
        )
    before, after = out / "snapshot", out / "after"
    if args.regenerate or not (after / "state").is_dir():
        print(json.dumps({"planted": make_after(before, after)}))
    fabline = [sys.executable, "-m", "fabline"]
    baseline = HERE.parent / "baseline" / "roce.yml"
    diffs, records = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(args.runs):
            target = Path(tmp) / f"diff{run}.json"
            wall, rss, code = timed(
                [*fabline, "diff", str(before), str(after), "-f", "json", "-o", str(target)]
            )
            if code not in (0, 4):
                raise SystemExit(f"fabline diff exited {code}")
            doc = json.loads(target.read_text())
            floor = sum(  # both snapshots, one after the other (the diff reads both)
                timed([sys.executable, "-c", FLOOR, str(snap / "state")])[0] for snap in (before, after)
            )
            diffs.append((wall, rss, len(doc["changes"]), len(doc["counters"]), floor))
            db = Path(tmp) / f"h{run}.sqlite"
            cmd = [
                sys.executable,
                "-c",
                RECORD,
                str(out / "inventory.yml"),
                str(after),
                str(db),
                str(baseline),
            ]
            rec_wall, rec_rss, code, stdout = timed_output(cmd)
            line = next((x for x in stdout.splitlines() if x.startswith("RECORD_S=")), None)
            if line is None:
                raise SystemExit(f"check --history failed (exit {code})")
            fields = dict(part.split("=") for part in line.split())
            records.append(
                (float(fields["RECORD_S"]), rec_wall, rec_rss, int(fields["RESULTS"]), db.stat().st_size)
            )
    row = {
        "gpus": args.gpus,
        "diff_s": statistics.median(d[0] for d in diffs),
        "diff_rss_mib": statistics.median(d[1] for d in diffs),
        "floor_s": statistics.median(d[4] for d in diffs),
        "changes": diffs[0][2],
        "counters": diffs[0][3],
        "record_s": statistics.median(r[0] for r in records),
        "check_and_record_s": statistics.median(r[1] for r in records),
        "check_and_record_rss_mib": statistics.median(r[2] for r in records),
        "results": records[0][3],
        "db_mib": records[0][4] / 2**20,
    }
    # Other work on the machine inflates every figure: record how busy it was.
    result = {
        "machine": platform.platform(), "python": platform.python_version(), "row": row,
        "load_average_1m_5m_15m": os.getloadavg(),
    }  # fmt: skip
    (HERE / "out" / "diff_results.json").write_text(json.dumps(result, indent=1), "utf-8")
    print(
        "| GPUs | diff wall (s) | floor (s) | diff peak RSS (MiB) | changes | counters | record (s) "
        "| check+record (s) | results | DB (MiB) |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {row['gpus']:,} | {row['diff_s']:.1f} | {row['floor_s']:.1f} | {row['diff_rss_mib']:.0f} | "
        f"{row['changes']:,} | "
        f"{row['counters']:,} | {row['record_s']:.1f} | {row['check_and_record_s']:.1f} | {row['results']:,} | "
        f"{row['db_mib']:.0f} |"
    )
    print(f"load average (1, 5, 15 min) at the end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
