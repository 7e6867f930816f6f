"""``report.prom``: Prometheus text exposition for node_exporter's textfile collector.

Point the collector's ``--collector.textfile.directory`` at the ``--out`` folder (or copy the file
there). Every metric is a gauge describing the last run. Cardinality stays bounded on a 100k-GPU
fabric: per-check series count only non-pass results, and per-interface counter rates are summed
per counter (fabric-wide) and per device for the :data:`MAX_DEVICE_SERIES` busiest devices. The
counter deltas come from the runner (:class:`~fabline.record.ReportContext`); nothing is read here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from fabline.record import Report, ReportContext
from fabline.results import Severity, Status, block_count

#: Most per-device counter-rate series written (the busiest devices first).
MAX_DEVICE_SERIES = 200


def _escape(value: str) -> str:
    r"""A label value escaped as the exposition format wants.

    Example:
        >>> _escape('a"b\\c')
        'a\\"b\\\\c'
    """
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(labels: dict[str, str]) -> str:
    if not labels:
        return ""
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in labels.items()) + "}"


def _num(value: float) -> str:
    if isinstance(value, int) or float(value).is_integer():
        return str(int(value))
    return repr(float(value))


class _Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def metric(self, name: str, help_text: str, samples: Iterable[tuple[dict[str, str], float]]) -> None:
        self.lines.append(f"# HELP {name} {help_text}")
        self.lines.append(f"# TYPE {name} gauge")
        for labels, value in samples:
            self.lines.append(f"{name}{_labels(labels)} {_num(value)}")


def render(report: Report, context: ReportContext | None = None) -> str:
    """The exposition text (``context``: counter deltas the runner computed, and its warnings)."""
    context = context or ReportContext()
    s = report.summary
    w = _Writer()
    w.metric("fabline_run_timestamp_seconds", "UNIX time the last fabline check finished.",
             [({}, round(report.outcome.finished, 3))])  # fmt: skip
    w.metric("fabline_run_duration_seconds", "Wall time of the last fabline check.",
             [({}, round(report.outcome.finished - report.outcome.started, 3))])  # fmt: skip
    w.metric("fabline_run_exit_code", "Exit code of the last fabline check (0 pass, 3 errors, 4 failures).",
             [({}, report.exit_code)])  # fmt: skip
    w.metric("fabline_results", "Results of the last run by status.",
             [({"status": st.value}, s["by_status"][st.value]) for st in Status])  # fmt: skip
    w.metric("fabline_failures", "Failed results of the last run by severity.",
             [({"severity": sev}, n) for sev, n in s["failures_by_severity"].items()])  # fmt: skip
    by_problem: Counter[tuple[str, str]] = Counter((p.severity.label, p.family) for p in report.problems)
    w.metric(
        "fabline_problems",
        "Problems (failing and error results grouped by cause) of the last run by severity and fact.",
        [({"severity": sev, "family": fam}, n) for (sev, fam), n in sorted(by_problem.items())],
    )
    by_check: Counter[tuple[str, str, str]] = Counter()
    for r in report.outcome.results.problems:
        by_check[(r.check, r.status.value, Severity(r.severity).label)] += block_count(r)
    w.metric(
        "fabline_check_results",
        "Non-pass results of the last run by check, status and severity.",
        [({"check": c, "status": st, "severity": sev}, n) for (c, st, sev), n in sorted(by_check.items())],
    )
    w.metric(
        "fabline_check_passes",
        "Passing results of the last run by check.",
        [({"check": c}, n) for c, (_, n) in sorted(report.passes_by_check().items())],
    )
    w.metric(
        "fabline_check_devices_passed",
        "Devices with at least one passing result of the last run, by check.",
        [({"check": c}, d) for c, (d, _) in sorted(report.passes_by_check().items())],
    )
    dev_status = Counter(str(d.get("status", "ok")) for d in report.outcome.devices)
    w.metric("fabline_devices", "Devices of the last run by collection status.",
             [({"status": k}, n) for k, n in sorted(dev_status.items())])  # fmt: skip
    failing = sum(1 for c in s["by_device"].values() if c.get("fail", 0) or c.get("error", 0))
    w.metric(
        "fabline_devices_with_problems", "Devices with at least one fail or error result.", [({}, failing)]
    )
    for warning in context.warnings:  # a comment line: scrapers ignore it, a reader sees it
        w.lines.append(f"# fabline warning: {warning}".replace("\n", " "))
    if context.counters is not None:
        totals, since = context.counters.totals, context.counters.since
        w.metric("fabline_counter_delta", f"Summed counter increase over all interfaces since run {since}.",
                 [({"counter": k}, v.delta) for k, v in sorted(totals.items())])  # fmt: skip
        w.metric("fabline_counter_rate_per_second", "Summed counter rate over all interfaces (per second).",
                 [({"counter": k}, round(v.per_second, 6)) for k, v in sorted(totals.items())])  # fmt: skip
        w.metric("fabline_counter_resets", "Interfaces whose counter was reset (cleared or rebooted).",
                 [({"counter": k}, v.resets) for k, v in sorted(totals.items())])  # fmt: skip
        busiest = context.counters.busiest[:MAX_DEVICE_SERIES]
        w.metric(
            "fabline_device_counter_rate_per_second",
            f"Counter rate per device, summed over its interfaces (the {MAX_DEVICE_SERIES} busiest).",
            [({"device": d, "counter": c}, round(v, 6)) for d, c, v in sorted(busiest)],
        )
    return "\n".join(w.lines) + "\n"
