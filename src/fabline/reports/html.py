"""``report.html``: one self-contained page (inline CSS, SVG and a little JavaScript, no fetches).

Summary tiles, failures by check and by device, a fabric picture (spines, leaves by rail, hosts;
failing links in red) drawn from the LLDP neighbours and ``rail`` variables the runner passes in
(:class:`~fabline.record.ReportContext`), and trend charts of the run history points it passes.
A pure function of the run record and that context: nothing is read here. Sizes stay bounded on 100k-GPU fabrics: a
fabric larger than :data:`DETAIL_LEAVES` leaves is drawn per rail, hosts are summarized per rail
beyond :data:`DETAIL_HOSTS`, and tables stop at a few hundred rows (the JSON report has all).
"""

from __future__ import annotations

import html
import json
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field

from fabline.record import Report, ReportContext, TrendPoint
from fabline.reports.console import finding_checks, inspect_text, problem_count_line
from fabline.results import Result, SkipBlock, Status, block_count

DETAIL_LEAVES = 48
DETAIL_SPINES = 32
DETAIL_HOSTS = 32
MAX_PROBLEM_ROWS = 500
#: Findings listed under one problem (a plane-wide problem has thousands; report.json has them all).
MAX_FINDINGS_PER_PROBLEM = 50
MAX_DEVICE_ROWS = 100
MAX_LINK_ROWS = 50
TREND_RUNS = 30

_CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5rem;color:#1d2430;background:#f7f8fa}
h1{font-size:1.4rem;margin:0 0 .3rem}h2{font-size:1.1rem;margin:1.6rem 0 .5rem}
.meta{color:#5b6472;font-size:.85rem}.tiles{display:flex;flex-wrap:wrap;gap:.6rem;margin:1rem 0}
.tile{background:#fff;border:1px solid #dde1e7;border-radius:6px;padding:.6rem .9rem;min-width:6.5rem}
.tile .num{display:block;font-size:1.6rem;font-weight:600}.tile .lbl{font-size:.8rem;color:#5b6472}
.fail .num,.bad{color:#c62828}.error .num{color:#8e24aa}.pass .num{color:#2e7d32}.waived .num{color:#00838f}
table{border-collapse:collapse;background:#fff;font-size:.85rem;margin-bottom:.5rem}
th,td{border:1px solid #dde1e7;padding:.25rem .5rem;text-align:left;vertical-align:top}
td.n{text-align:right;font-variant-numeric:tabular-nums}.bar{background:#e57373;height:.7rem;display:inline-block}
.verdict{display:inline-block;padding:.1rem .6rem;border-radius:4px;color:#fff;font-weight:600}
.v0{background:#2e7d32}.v3{background:#8e24aa}.v4{background:#c62828}.v1,.v2{background:#555}
svg{background:#fff;border:1px solid #dde1e7;border-radius:6px;max-width:100%}
svg text{font-size:11px;fill:#1d2430}.note{color:#5b6472;font-size:.8rem}
input[type=search]{padding:.3rem;width:20rem;margin:.3rem 0}
"""

_JS = """
(function(){
  var box=document.getElementById('problem-filter');
  var rows=document.querySelectorAll('#problems tbody tr');
  var shown=document.getElementById('problems-shown');
  function apply(){
    var q=box.value.toLowerCase(), n=0;
    for(var i=0;i<rows.length;i++){
      var hit=!q||rows[i].textContent.toLowerCase().indexOf(q)>=0;
      rows[i].style.display=hit?'':'none'; if(hit){n++;}
    }
    shown.textContent=String(n);
  }
  if(box){box.addEventListener('input',apply);}
  var cells=document.querySelectorAll('[data-filter]');
  for(var j=0;j<cells.length;j++){
    cells[j].addEventListener('click',function(ev){box.value=ev.currentTarget.getAttribute('data-filter');apply();
      document.getElementById('problems').scrollIntoView();});
  }
  document.body.setAttribute('data-ready','1');
})();
"""


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


# --------------------------------------------------------------------------------------------
# the fabric picture


@dataclass
class FabricView:
    """What the picture draws: devices by role, leaves by rail, links with their state."""

    spines: list[str] = field(default_factory=list)
    leaves_by_rail: dict[str, list[str]] = field(default_factory=dict)
    hosts: list[str] = field(default_factory=list)
    host_rail: dict[str, set[str]] = field(default_factory=dict)
    links: dict[tuple[str, str], list[tuple[str, str, str, str, bool]]] = field(default_factory=dict)
    bad_devices: set[str] = field(default_factory=set)
    note: str = ""
    complete: bool = True  # every link read (False: only the failing ones, for a summarized picture)

    def failing_links(self) -> list[tuple[str, str, str, str]]:
        """Every link with a fail or error result on either end."""
        return [(a, ap, b, bp) for group in self.links.values() for a, ap, b, bp, bad in group if bad]


def devices_to_read(report: Report, rails: Mapping[str, str]) -> tuple[list[str], bool]:
    """The devices whose LLDP neighbours the picture needs, and whether that is all of them.

    A small fabric is drawn link by link: every spine's and leaf's state (switch states name both
    ends of every fabric and host link). A large one is summarized per rail, and only links with a
    failing end matter, so only the devices with failing ports are read (a 100k-GPU fabric has
    1,600 switch states). The runner reads exactly these states into the context.
    """
    roles = {d["name"]: d.get("role", "") for d in report.outcome.devices}
    spines = [n for n, role in roles.items() if role == "spine"]
    by_rail: dict[str, list[str]] = {}
    for n, role in roles.items():
        if role == "leaf":
            by_rail.setdefault(rails.get(n, "?"), []).append(n)
    leaves = [n for group in by_rail.values() for n in group]  # the picture's order: rail by rail
    if len(leaves) <= DETAIL_LEAVES and len(spines) <= DETAIL_SPINES:
        return [*spines, *leaves], True
    failing = {
        r.device
        for r in report.outcome.results.problems
        if r.status in (Status.FAIL, Status.ERROR)
        and (r.subject is not None or type(r) is SkipBlock)
        and r.device in roles
    }
    return sorted(failing), False


def fabric_view(report: Report, context: ReportContext) -> FabricView:
    """Collect the picture's data: roles from the run, rails and LLDP links from the context."""
    view = FabricView()
    roles = {d["name"]: d.get("role", "") for d in report.outcome.devices}
    rails = context.rails or {}
    failing: set[tuple[str, str]] = set()
    for r in report.outcome.results.problems:
        if r.status in (Status.FAIL, Status.ERROR):
            if r.subject is not None:
                failing.add((r.device, r.subject))
            elif type(r) is SkipBlock:  # errors on many ports: each port is marked
                failing.update((r.device, s) for s in r.subjects if s is not None)
            if r.status is Status.ERROR and r.subject is None and type(r) is not SkipBlock:
                view.bad_devices.add(r.device)
    for d in report.outcome.devices:
        if d.get("status") not in ("ok", "partial"):
            view.bad_devices.add(d["name"])
    for name, role in roles.items():
        if role == "spine":
            view.spines.append(name)
        elif role == "leaf":
            view.leaves_by_rail.setdefault(rails.get(name, "?"), []).append(name)
        elif role == "host":
            view.hosts.append(name)
    leaf_rail = {leaf: rail for rail, leaves in view.leaves_by_rail.items() for leaf in leaves}
    if context.fabric is None:
        view.note = "no LLDP links given to the report: links not drawn"
        return view
    view.complete = context.fabric.complete
    seen: set[tuple[str, str]] = set()
    for link in context.fabric.links:
        name, port, peer, peer_port = link.device, link.port, link.peer, link.peer_port
        if (name, port) in seen or peer not in roles or name not in roles:
            continue
        bad = (name, port) in failing or (peer, peer_port) in failing
        if not view.complete and not bad:
            continue
        seen.add((name, port))
        seen.add((peer, peer_port))
        role, peer_role = roles[name], roles[peer]
        if role == "spine" and peer in leaf_rail:
            key = (name, peer)
        elif role == "leaf" and peer_role == "spine":
            key = (peer, name)
        elif role == "leaf" and peer_role == "host":
            key = (name, peer)
            view.host_rail.setdefault(peer, set()).add(leaf_rail.get(name, "?"))
        elif role == "host" and peer in leaf_rail:
            key = (peer, name)
            view.host_rail.setdefault(name, set()).add(leaf_rail[peer])
        else:
            continue
        view.links.setdefault(key, []).append((name, port, peer, peer_port, bad))
    return view


def _box(x: float, y: float, w: float, h: float, label: str, bad: bool, title: str) -> str:
    fill, stroke = ("#ffebee", "#c62828") if bad else ("#e8f0fe", "#5677a8")
    return (
        f'<g><title>{_e(title)}</title><rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="4" '
        f'fill="{fill}" stroke="{stroke}"/><text x="{x + w / 2:.1f}" y="{y + h / 2 + 4:.1f}" '
        f'text-anchor="middle">{_e(label)}</text></g>'
    )


def _line(x1: float, y1: float, x2: float, y2: float, bad: bool, title: str) -> str:
    color, width = ("#c62828", 2.2) if bad else ("#9aa5b1", 0.8)
    return (
        f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{color}" '
        f'stroke-width="{width}" data-bad="{int(bad)}"><title>{_e(title)}</title></line>'
    )


def _fabric_svg(view: FabricView) -> str:
    rails = sorted(view.leaves_by_rail, key=lambda r: (not r.isdigit(), int(r) if r.isdigit() else 0, r))
    n_leaves = sum(len(v) for v in view.leaves_by_rail.values())
    if not view.spines and not n_leaves:
        return '<p class="note">no spines or leaves in this run: nothing to draw</p>'
    detailed = n_leaves <= DETAIL_LEAVES and len(view.spines) <= DETAIL_SPINES
    leaf_pos: dict[str, tuple[float, float]] = {}
    rail_pos: dict[str, tuple[float, float, float]] = {}
    parts: list[str] = []
    lines: list[str] = []
    box_w, box_h, gap = 86.0, 26.0, 10.0
    if detailed:
        columns = [(rail, leaf) for rail in rails for leaf in view.leaves_by_rail[rail]]
        width = max(len(columns), len(view.spines), 1) * (box_w + gap) + 2 * gap + 20 * len(rails)
    else:
        width = max(len(rails), 1) * 200.0 + 2 * gap
    height = 330.0
    # Spines: a row of boxes, or one box for the layer.
    spine_pos: dict[str, tuple[float, float]] = {}
    if detailed:
        sx0 = (width - len(view.spines) * (box_w + gap)) / 2
        for i, s in enumerate(view.spines):
            x = sx0 + i * (box_w + gap)
            spine_pos[s] = (x + box_w / 2, 40 + box_h)
            parts.append(_box(x, 40, box_w, box_h, s, s in view.bad_devices, f"spine {s}"))
    else:
        bad = sum(1 for s in view.spines if s in view.bad_devices)
        label = f"{len(view.spines)} spines" + (f" ({bad} unreadable)" if bad else "")
        parts.append(_box(width / 2 - 110, 40, 220, box_h, label, bad > 0, label))
        spine_pos["*"] = (width / 2, 40 + box_h)
    # Leaves by rail.
    x = gap + 10
    for rail in rails:
        leaves = view.leaves_by_rail[rail]
        if detailed:
            start = x
            for leaf in leaves:
                leaf_pos[leaf] = (x + box_w / 2, 150)
                parts.append(
                    _box(x, 150, box_w, box_h, leaf, leaf in view.bad_devices, f"leaf {leaf}, rail {rail}")
                )
                x += box_w + gap
            rail_pos[rail] = (start, x - gap, 150)
            x += 20
        else:
            bad = sum(1 for leaf in leaves if leaf in view.bad_devices)
            label = f"rail {rail}: {len(leaves)} leaves"
            parts.append(
                _box(x, 150, 180, box_h, label, bad > 0, label + (f", {bad} unreadable" if bad else ""))
            )
            rail_pos[rail] = (x, x + 180, 150)
            for leaf in leaves:
                leaf_pos[leaf] = (x + 90, 150)
            x += 200
        if detailed:  # summary boxes name their rail themselves
            lo, hi, _ = rail_pos[rail]
            parts.append(f'<text x="{(lo + hi) / 2:.1f}" y="140" text-anchor="middle">rail {_e(rail)}</text>')
    leaf_rail = {leaf: rail for rail, leaves in view.leaves_by_rail.items() for leaf in leaves}
    # Leaf-spine links: one line per pair (detailed) or per rail (summary), red when any fails.
    agg: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for (a, b), group in view.links.items():
        if a in spine_pos or (not detailed and a in view.spines):
            spine_key = a if detailed else "*"
            target = b if detailed else leaf_rail.get(b, "?")
            count = agg[(spine_key, target)]
            count[0] += len(group)
            count[1] += sum(1 for g in group if g[4])
    if not detailed:  # one line per rail, drawn even when none of its links was read (all fine)
        for rail in rails:
            agg.setdefault(("*", rail), [0, 0])
    for (s, target), (n, bad) in sorted(agg.items()):
        sx, sy = spine_pos[s]
        if detailed:
            tx, ty = leaf_pos[target]
        else:
            lo, hi, ty = rail_pos.get(target, (0.0, 0.0, 150.0))
            tx = (lo + hi) / 2
        title = f"{s if s != '*' else 'spines'} - {target}: " + (
            f"{n} links" + (f", {bad} failing" if bad else "") if view.complete else f"{bad} failing links"
        )
        lines.append(_line(sx, sy, tx, ty, bad > 0, title))
    # Hosts: each one when few, else one box per rail.
    host_links: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    per_host: dict[str, list[tuple[str, bool]]] = defaultdict(list)
    for (a, b), group in view.links.items():
        if a in leaf_rail and b in view.host_rail:
            for g in group:
                host_links[leaf_rail[a]][0] += 1
                host_links[leaf_rail[a]][1] += int(g[4])
                per_host[b].append((a, g[4]))
    if view.hosts and len(view.hosts) <= DETAIL_HOSTS and detailed:
        hx0 = (width - len(view.hosts) * (box_w + gap)) / 2
        for i, h in enumerate(view.hosts):
            hx = hx0 + i * (box_w + gap)
            parts.append(_box(hx, 270, box_w, box_h, h, h in view.bad_devices, f"host {h}"))
            for leaf, bad in per_host.get(h, []):
                lx, ly = leaf_pos[leaf]
                lines.append(_line(lx, ly + box_h, hx + box_w / 2, 270, bad, f"{leaf} - {h}"))
    elif view.hosts:
        for rail in rails:
            lo, hi, _ = rail_pos[rail]
            n, bad = host_links.get(rail, [0, 0])
            if view.complete:
                hosts_in_rail = sum(1 for rs in view.host_rail.values() if rail in rs)
            else:  # rail-optimized: every host has a NIC in every rail
                hosts_in_rail = len(view.hosts)
            label = f"{hosts_in_rail} hosts"
            cx = (lo + hi) / 2
            tip = f"rail {rail}: " + (
                f"{n} host links, {bad} failing" if view.complete else f"{bad} failing host links"
            )
            parts.append(_box(cx - 80, 270, 160, box_h, label, bad > 0, tip))
            lines.append(_line(cx, 150 + box_h, cx, 270, bad > 0, tip))
    return (
        f'<svg id="fabric" xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" role="img" aria-label="fabric picture">'
        f'<text x="{gap}" y="20">{"every device" if detailed else "summarized per rail"}; red = failing</text>'
        + "".join(lines)
        + "".join(parts)
        + "</svg>"
    )


# --------------------------------------------------------------------------------------------
# trends


def _trend_rows(report: Report, context: ReportContext) -> tuple[list[TrendPoint], str]:
    """(points oldest first, note): the history points the runner passed, else this run alone."""
    if context.trend:
        return context.trend, context.trend_note
    this = this_run_point(report)
    return [this], context.trend_note or "run history not given to the report"


def this_run_point(report: Report) -> TrendPoint:
    """This run as a trend point (the last one on the chart)."""
    return TrendPoint(
        "this run",
        report.summary["by_status"]["fail"],
        report.summary["by_status"]["error"],
        dict(Counter(r.check for r in report.outcome.results.problems if r.status is Status.FAIL)),
    )


_PALETTE = ("#c62828", "#1565c0", "#2e7d32", "#ef6c00", "#6a1b9a", "#00838f")


def _trend_svg(points: list[TrendPoint]) -> str:
    width, height, left, bottom = 640.0, 220.0, 40.0, 40.0
    top = max([max(p.fail, p.error) for p in points] + [1])
    step = (width - left - 20) / max(len(points), 1)
    out = [
        f'<svg id="trend-failures" xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" role="img" aria-label="failures per run">',
        f'<text x="4" y="14">failures per run (max {top})</text>',
    ]
    for i, p in enumerate(points):
        h = (height - bottom - 24) * p.fail / top
        x = left + i * step
        out.append(
            f'<rect x="{x:.1f}" y="{height - bottom - h:.1f}" width="{max(step - 4, 2):.1f}" height="{h:.1f}" '
            f'fill="#e57373" data-fail="{p.fail}"><title>{_e(p.label)}: {p.fail} failures, '
            f"{p.error} errors</title></rect>"
        )
    if points:
        out.append(f'<text x="{left:.1f}" y="{height - bottom + 16:.1f}">{_e(points[0].label)}</text>')
        out.append(
            f'<text x="{width - 20:.1f}" y="{height - bottom + 16:.1f}" text-anchor="end">{_e(points[-1].label)}</text>'
        )
    out.append("</svg>")
    totals: Counter[str] = Counter()
    for p in points:
        totals.update(p.by_check)
    checks = [c for c, _ in totals.most_common(len(_PALETTE))]
    if not checks:
        return "".join(out)
    ctop = max(max(p.by_check.get(c, 0) for p in points) for c in checks) or 1
    out.append(
        f'<svg id="trend-checks" xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" role="img" aria-label="failures per run by check">'
        f'<text x="4" y="14">failures per run, top checks (max {ctop})</text>'
    )
    for k, check in enumerate(checks):
        color = _PALETTE[k]
        coords = " ".join(
            f"{left + i * step + step / 2:.1f},{height - bottom - (height - bottom - 24) * p.by_check.get(check, 0) / ctop:.1f}"
            for i, p in enumerate(points)
        )
        out.append(
            f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{coords}"><title>{_e(check)}</title></polyline>'
        )
        out.append(
            f'<text x="{left + 160 * (k % 3):.1f}" y="{height - 14 + 12 * (k // 3) - 6:.1f}" fill="{color}">{_e(check)}</text>'
        )
    out.append("</svg>")
    return "".join(out)


# --------------------------------------------------------------------------------------------
# the page


def _tile(metric: str, label: str, value: int, css: str = "") -> str:
    return (
        f'<div class="tile {css}" data-metric="{_e(metric)}"><span class="num">{value}</span>'
        f'<span class="lbl">{_e(label)}</span></div>'
    )


def _problem_row(r: Result) -> str:
    return (
        f'<tr class="{r.status.value}"><td>{r.status.value}</td><td>{r.severity.label}</td><td>{_e(r.check)}</td>'
        f"<td>{_e(r.device)}</td><td>{_e(r.subject_text())}</td><td>{_e(r.message)}</td></tr>"
    )


def _problem_groups(report: Report) -> list[str]:
    """The problems table (one row per cause, its findings folded under it), first on the page."""
    problems = report.problems
    out = [f'<h2 id="problems-head">{_e(problem_count_line(report))}</h2>']
    if not problems:
        return [*out, '<p class="note">no failures and no errors</p>']
    out.append(
        '<table id="problem-groups"><thead><tr><th>severity</th><th>problem</th><th>where</th>'
        "<th>findings</th><th>next step</th></tr></thead><tbody>"
    )
    for p in problems[:MAX_PROBLEM_ROWS]:
        shown = p.findings[:MAX_FINDINGS_PER_PROBLEM]
        items = "".join(
            f"<li>{_e(r.check)} {_e(r.device)} {_e(r.subject_text())}: {_e(r.message)}</li>" for r in shown
        )
        if len(p.findings) > len(shown):
            items += f"<li>... and {len(p.findings) - len(shown)} more (see report.json)</li>"
        step = p.next_step + (f"; inspect {inspect_text(p)}" if p.inspect else "")
        out.append(
            f'<tr class="{p.status.value}" data-problem="{_e(p.id)}"><td>{p.severity.label}</td><td>{_e(p.cause)}</td>'
            f"<td>{_e(p.where)}</td><td><details><summary>{len(p.findings)}: {_e(finding_checks(p))}</summary>"
            f"<ul>{items}</ul></details></td><td>{_e(step)}</td></tr>"
        )
    out.append("</tbody></table>")
    if len(problems) > MAX_PROBLEM_ROWS:
        out.append(
            f'<p class="note">... and {len(problems) - MAX_PROBLEM_ROWS} more problems (see report.json)</p>'
        )
    return out


def _passes_by_check(report: Report) -> list[str]:
    """How many devices and results passed each check (report.json has them per device)."""
    by_check = report.passes_by_check()
    if not by_check:
        return []
    out = ['<h2>Passes by check</h2><table id="passes-by-check"><thead><tr><th>check</th><th>devices</th>'
           "<th>passes</th></tr></thead><tbody>"]  # fmt: skip
    out += [
        f'<tr data-check="{_e(check)}"><td>{_e(check)}</td><td class="n">{devices}</td><td class="n">{passes}</td></tr>'
        for check, (devices, passes) in by_check.items()
    ]
    return [*out, "</tbody></table>"]


def render(report: Report, context: ReportContext | None = None) -> str:
    """The HTML page (``context``: trend points, rails and links the runner computed)."""
    context = context or ReportContext()
    s = report.summary
    st = s["by_status"]
    verdict = {0: "PASS", 3: "ERRORS", 4: "FAIL"}.get(report.exit_code, f"EXIT {report.exit_code}")
    problems = report.findings()
    by_check: dict[str, Counter[str]] = defaultdict(Counter)
    for r in report.outcome.results.problems:
        by_check[r.check][r.status.value] += block_count(r)
    device_rows = sorted(
        ((d, c) for d, c in s["by_device"].items() if c.get("fail", 0) or c.get("error", 0)),
        key=lambda dc: (-dc[1].get("fail", 0) - dc[1].get("error", 0), dc[0]),
    )
    view = fabric_view(report, context)
    failing_links = view.failing_links()
    points, trend_note = _trend_rows(report, context)
    out: list[str] = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>fabline report: {verdict}</title><style>{_CSS}</style></head><body>",
        f'<h1>fabline compliance report <span class="verdict v{report.exit_code}" id="verdict">{verdict}</span></h1>',
        f'<p class="meta">started {_e(report.timestamp())}, {report.outcome.finished - report.outcome.started:.1f} s; '
        f"inventory <code>{_e(report.inventory)}</code>; snapshot <code>{_e(report.snapshot)}</code>; baseline "
        + ", ".join(f"<code>{_e(b)}</code>" for b in report.baselines)
        + f"; fails on {report.fail_on.label} and above; fabline {_e(report.version)}</p>",
        '<div class="tiles" id="summary">',
        _tile("total", "results", s["total"]),
        *(_tile(k, k, st[k], k) for k in ("pass", "fail", "error", "skipped", "waived")),
        _tile("devices", "devices", len(report.outcome.devices)),
        _tile(
            "devices_with_problems", "devices with problems", len(device_rows), "fail" if device_rows else ""
        ),
        "</div>",
        '<div class="tiles" id="severity">',
        *(
            _tile(f"severity_{k}", f"{k} failures", v, "fail" if v else "")
            for k, v in s["failures_by_severity"].items()
        ),
        "</div>",
    ]
    for w in [*report.outcome.warnings[:20], *context.warnings]:
        out.append(f'<p class="note">warning: {_e(w)}</p>')
    out.extend(_problem_groups(report))
    out.append("<h2>Failures by check</h2>")
    if by_check:
        top = max(c.get("fail", 0) + c.get("error", 0) for c in by_check.values()) or 1
        out.append('<table id="by-check"><thead><tr><th>check</th><th>fail</th><th>error</th><th>waived</th>'
                   "<th>skipped</th><th></th></tr></thead><tbody>")  # fmt: skip
        for check, c in sorted(by_check.items(), key=lambda kv: (-kv[1]["fail"] - kv[1]["error"], kv[0])):
            bar = 160 * (c["fail"] + c["error"]) / top
            out.append(
                f'<tr data-check="{_e(check)}"><td data-filter="{_e(check)}"><a href="#problems">{_e(check)}</a></td>'
                f'<td class="n">{c["fail"]}</td><td class="n">{c["error"]}</td><td class="n">{c["waived"]}</td>'
                f'<td class="n">{c["skipped"]}</td><td><span class="bar" style="width:{bar:.0f}px"></span></td></tr>'
            )
        out.append("</tbody></table>")
    else:
        out.append('<p class="note">no failures, errors, waivers or skips</p>')
    out.extend(_passes_by_check(report))
    out.append("<h2>Failures by device</h2>")
    if device_rows:
        out.append('<table id="by-device"><thead><tr><th>device</th><th>fail</th><th>error</th><th>pass</th>'
                   "</tr></thead><tbody>")  # fmt: skip
        for d, c in device_rows[:MAX_DEVICE_ROWS]:
            out.append(
                f'<tr data-device="{_e(d)}"><td data-filter="{_e(d)}"><a href="#problems">{_e(d)}</a></td>'
                f'<td class="n">{c.get("fail", 0)}</td><td class="n">{c.get("error", 0)}</td>'
                f'<td class="n">{c.get("pass", 0)}</td></tr>'
            )
        out.append("</tbody></table>")
        if len(device_rows) > MAX_DEVICE_ROWS:
            out.append(
                f'<p class="note">... and {len(device_rows) - MAX_DEVICE_ROWS} more devices (see report.json)</p>'
            )
    else:
        out.append('<p class="note">no device has failures or errors</p>')
    n_leaves = sum(len(v) for v in view.leaves_by_rail.values())
    out.append(
        f'<h2>Fabric</h2><p class="meta" id="fabric-counts">{len(view.spines)} spines, {n_leaves} leaves in '
        f"{len(view.leaves_by_rail)} rails, {len(view.hosts)} hosts; "
        + (f"{sum(len(g) for g in view.links.values())} links seen by LLDP, " if view.complete else "")
        + f'<span class="bad" id="failing-links">{len(failing_links)}</span> links with a failing end</p>'
    )
    if view.note:
        out.append(f'<p class="note">{_e(view.note)}</p>')
    out.append(_fabric_svg(view))
    if failing_links:
        out.append("<table id=\"failing-link-table\"><thead><tr><th>device</th><th>port</th><th>peer</th><th>peer port</th>"
                   "</tr></thead><tbody>")  # fmt: skip
        for a, ap, b, bp in failing_links[:MAX_LINK_ROWS]:
            out.append(f"<tr><td>{_e(a)}</td><td>{_e(ap)}</td><td>{_e(b)}</td><td>{_e(bp)}</td></tr>")
        out.append("</tbody></table>")
    out.append(f'<h2>Trends</h2><p class="note" id="trend-note">{_e(trend_note)}</p>')
    out.append(_trend_svg(points))
    out.append(
        f'<h2>Findings</h2><p class="meta">showing <span id="problems-shown">{min(len(problems), MAX_PROBLEM_ROWS)}'
        f'</span> of <span id="problems-total">{len(problems)}</span> (fail and error results, most severe first)</p>'
        '<input type="search" id="problem-filter" placeholder="filter: check, device, port, text" aria-label="filter">'
        '<table id="problems"><thead><tr><th>status</th><th>severity</th><th>check</th><th>device</th>'
        "<th>subject</th><th>message</th></tr></thead><tbody>"
    )
    out.extend(_problem_row(r) for r in problems[:MAX_PROBLEM_ROWS])
    out.append("</tbody></table>")
    summary_json = json.dumps({"summary": {k: v for k, v in s.items() if k != "by_device"}}, default=str)
    out.append(f'<script type="application/json" id="fabline-summary">{_e(summary_json)}</script>')
    out.append(f"<script>{_JS}</script></body></html>")
    return "\n".join(out) + "\n"
