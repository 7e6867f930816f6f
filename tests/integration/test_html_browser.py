"""report.html in a real headless browser (Debian's chromium, driven over the DevTools pipe).

The page must load with no console errors, no exceptions and no network requests, and show the
numbers of the JSON report of the same run. Chromium is installed by ``.ci/run``; without it the
tests fail (CI must not silently skip the browser).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from fabline import synthetic
from fabline.reports import html, jsonreport
from fabline.runner import report_context, run_check

REPO = Path(__file__).resolve().parents[2]
BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")


class Browser:
    """Minimal Chrome DevTools Protocol client over ``--remote-debugging-pipe`` (fds 3 and 4)."""

    def __init__(self, profile: Path) -> None:
        if BROWSER is None:
            pytest.fail("chromium is not installed (apt-get install -y chromium; .ci/run does it)")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # The browser reads commands on fd 3 and writes answers on fd 4. Copies above fd 10 first,
        # so that moving them onto 3 and 4 in the child cannot overwrite one with the other.
        high_r = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD_CLOEXEC, 10)
        high_w = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD_CLOEXEC, 10)

        def child_fds() -> None:
            os.dup2(high_r, 3)  # dup2 clears close-on-exec on the copy
            os.dup2(high_w, 4)

        self.proc = subprocess.Popen(
            [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
             "--no-first-run", "--disable-extensions", f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            close_fds=False, preexec_fn=child_fds,  # noqa: PLW1509 - single-threaded test process
        )  # fmt: skip
        os.close(high_r)
        os.close(high_w)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buf = b""
        self._next = 0
        self.events: list[dict[str, Any]] = []

    def close(self) -> None:
        with contextlib.suppress(Exception):  # already gone: nothing to close
            self.send("Browser.close", timeout=5)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        os.close(self._to_browser)
        os.close(self._from_browser)

    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buf:
            if time.monotonic() > deadline:
                raise TimeoutError("no answer from chromium")
            chunk = os.read(self._from_browser, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)  # type: ignore[no-any-return]

    def send(
        self, method: str, session: str | None = None, timeout: float = 30, **params: Any
    ) -> dict[str, Any]:
        self._next += 1
        msg: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if session:
            msg["sessionId"] = session
        os.write(self._to_browser, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            answer = self._read_message(deadline)
            if answer.get("id") == self._next:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer.get("result", {})  # type: ignore[no-any-return]
            self.events.append(answer)

    def wait_event(self, method: str, session: str, since: int = 0, timeout: float = 30) -> dict[str, Any]:
        """The first ``method`` event of ``session`` received at or after index ``since``."""
        for e in self.events[since:]:
            if e.get("method") == method and e.get("sessionId") == session:
                return e
        deadline = time.monotonic() + timeout
        while True:
            e = self._read_message(deadline)
            self.events.append(e)
            if e.get("method") == method and e.get("sessionId") == session:
                return e

    def open(self, url: str) -> str:
        """Open ``url`` in a new page; returns the page's session id once it has loaded."""
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        session = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable", session)
        mark = len(self.events)  # a late load event of about:blank must not count
        self.send("Page.navigate", session, url=url)
        deadline = time.monotonic() + 30
        while True:
            self.wait_event(
                "Page.loadEventFired", session, mark, timeout=max(deadline - time.monotonic(), 0.1)
            )
            if self.evaluate(session, "location.href + ' ' + document.readyState") == f"{url} complete":
                return session
            mark = len(self.events)

    def evaluate(self, session: str, expression: str) -> Any:
        answer = self.send("Runtime.evaluate", session, expression=expression, returnByValue=True)
        if "exceptionDetails" in answer:
            raise RuntimeError(f"evaluating {expression!r}: {answer['exceptionDetails']}")
        return answer["result"].get("value")

    def problems(self) -> list[str]:
        """Console errors, uncaught exceptions, log errors and any request that left file://."""
        out = []
        for e in self.events:
            method, params = e.get("method"), e.get("params", {})
            if method == "Runtime.exceptionThrown":
                out.append(f"exception: {params['exceptionDetails']}")
            elif method == "Runtime.consoleAPICalled" and params.get("type") in (
                "error",
                "warning",
                "assert",
            ):
                out.append(f"console.{params['type']}: {params.get('args')}")
            elif method == "Log.entryAdded" and params["entry"]["level"] in ("error", "warning"):
                out.append(f"log {params['entry']['level']}: {params['entry'].get('text')}")
            elif method == "Network.requestWillBeSent":
                url = params["request"]["url"]
                if not url.startswith(("file://", "about:", "data:")):
                    out.append(f"network request: {url}")
        return out


@pytest.fixture
def browser(tmp_path: Path):  # type: ignore[no-untyped-def]
    b = Browser(tmp_path / "chromium-profile")
    try:
        yield b
    finally:
        b.close()


def _write(report: Any, out: Path) -> tuple[Path, dict[str, Any]]:
    out.mkdir(parents=True, exist_ok=True)
    page = out / "report.html"
    page.write_text(html.render(report, report_context(report, ["html"])), "utf-8")
    return page, json.loads(jsonreport.render(report))


def _numbers(browser: Browser, session: str) -> dict[str, Any]:
    return browser.evaluate(  # type: ignore[no-any-return]
        session,
        """(() => {
          const tiles = {};
          document.querySelectorAll('[data-metric]').forEach(t => {
            tiles[t.getAttribute('data-metric')] = Number(t.querySelector('.num').textContent); });
          const byCheck = {};
          document.querySelectorAll('#by-check tbody tr').forEach(tr => {
            const c = tr.querySelectorAll('td');
            byCheck[tr.getAttribute('data-check')] = [Number(c[1].textContent), Number(c[2].textContent)]; });
          const passes = {};
          document.querySelectorAll('#passes-by-check tbody tr').forEach(tr => {
            const c = tr.querySelectorAll('td');
            passes[tr.getAttribute('data-check')] = [Number(c[1].textContent), Number(c[2].textContent)]; });
          const byDevice = {};
          document.querySelectorAll('#by-device tbody tr').forEach(tr => {
            const c = tr.querySelectorAll('td');
            byDevice[tr.getAttribute('data-device')] = [Number(c[1].textContent), Number(c[2].textContent)]; });
          return {tiles, byCheck, passes, byDevice,
                  verdict: document.getElementById('verdict').textContent,
                  ready: document.body.getAttribute('data-ready'),
                  problemRows: document.querySelectorAll('#problems tbody tr').length,
                  groupRows: Array.from(document.querySelectorAll('#problem-groups tbody tr'))
                    .map(tr => tr.getAttribute('data-problem')),
                  groupHead: document.getElementById('problems-head').textContent,
                  problemsTotal: Number(document.getElementById('problems-total').textContent),
                  redLinks: document.querySelectorAll('#fabric line[data-bad="1"]').length,
                  failingLinks: Number(document.getElementById('failing-links').textContent),
                  trendBars: document.querySelectorAll('#trend-failures rect').length};
        })()""",
    )


def _check(snapshot: Path, **kwargs: Any) -> Any:
    report, _ = run_check(
        inventory=REPO / "inventory" / "lab.yml", snapshot=snapshot, baselines=[REPO / "baseline" / "roce.yml"],
        checks_dir=None, limit=None, out=None, formats=[], fail_on="minor", **kwargs,
    )  # fmt: skip
    return report


def test_lab_report_in_chromium_shows_the_json_numbers(browser: Browser, tmp_path: Path) -> None:
    report = _check(REPO / "examples" / "lab-snapshot")
    page, doc = _write(report, tmp_path / "out")
    session = browser.open(page.as_uri())
    seen = _numbers(browser, session)
    assert browser.problems() == []
    assert seen["ready"] == "1"  # the page's script ran to its end
    summary = doc["summary"]
    assert seen["tiles"]["total"] == summary["total"]
    for status, n in summary["by_status"].items():
        assert seen["tiles"][status] == n
    for sev, n in summary["failures_by_severity"].items():
        assert seen["tiles"][f"severity_{sev}"] == n
    assert seen["tiles"]["devices"] == len(doc["devices"])
    expected_checks: dict[str, list[int]] = {}
    for r in doc["results"]:
        if r["status"] != "pass":
            row = expected_checks.setdefault(r["check"], [0, 0])
            row[0] += r["status"] == "fail"
            row[1] += r["status"] == "error"
    assert seen["byCheck"] == expected_checks
    assert seen["passes"] == {c: [len(by), sum(by.values())] for c, by in doc["passes"].items()}
    expected_devices = {
        d: [c["fail"], c["error"]] for d, c in summary["by_device"].items() if c["fail"] or c["error"]
    }
    assert seen["byDevice"] == expected_devices
    problems = [r for r in doc["results"] if r["status"] in ("fail", "error")]
    assert seen["problemsTotal"] == seen["problemRows"] == len(problems)
    # the problems (findings grouped by cause) come first, as many as report.json has
    assert seen["groupRows"] == [p["id"] for p in doc["problems"]]
    assert seen["groupHead"] == f"{len(doc['problems'])} problems ({len(problems)} findings)"
    assert seen["verdict"] == "FAIL"
    # Planted link faults (PFC, DSCP map, FEC, host MTU) show as red links.
    assert seen["redLinks"] > 0 and seen["failingLinks"] > 0
    assert seen["trendBars"] == 1  # no history: only this run


def test_filter_box_filters_problem_rows(browser: Browser, tmp_path: Path) -> None:
    report = _check(REPO / "examples" / "lab-snapshot")
    page, doc = _write(report, tmp_path / "out")
    session = browser.open(page.as_uri())
    shown = browser.evaluate(
        session,
        """(() => { const box = document.getElementById('problem-filter'); box.value = 'host-mtu';
                   box.dispatchEvent(new Event('input'));
                   return Number(document.getElementById('problems-shown').textContent); })()""",
    )
    assert shown == sum(
        1 for r in doc["results"] if r["check"] == "host-mtu" and r["status"] in ("fail", "error")
    )
    assert browser.problems() == []


def test_trends_from_the_history(browser: Browser, tmp_path: Path) -> None:
    fabric = synthetic.lab_fabric()
    db = tmp_path / "history.sqlite"
    faults = list(synthetic.LAB_FAULTS)
    for night in range(3):
        snap = tmp_path / f"night{night}"
        synthetic.write_snapshot(
            fabric, snap, faults[: 3 * night + 1], collected_at=f"2026-11-2{night}T02:00:00Z"
        )
        report = _check(snap, history=db)
    page, doc = _write(report, tmp_path / "out")
    session = browser.open(page.as_uri())
    bars = browser.evaluate(
        session,
        "Array.from(document.querySelectorAll('#trend-failures rect')).map(r => Number(r.dataset.fail))",
    )
    assert browser.problems() == []
    assert len(bars) == 3 and bars[-1] == doc["summary"]["by_status"]["fail"]
    assert bars == sorted(bars) and bars[0] < bars[-1]
    assert browser.evaluate(session, "document.querySelectorAll('#trend-checks polyline').length") >= 1


def test_large_fabric_is_summarized_per_rail(browser: Browser, tmp_path: Path) -> None:
    fabric = synthetic.rail_fabric(4096, radix=64)
    snap = tmp_path / "snap"
    host = next(d for d in fabric.devices if d.role == "host")
    synthetic.write_snapshot(fabric, snap, [synthetic.Fault(host.name, "mtu", 1500, host.rail_interfaces[0])])
    inv = tmp_path / "inventory.yml"
    import yaml

    inv.write_text(yaml.safe_dump(synthetic.inventory(fabric)), "utf-8")
    report, _ = run_check(
        inventory=inv, snapshot=snap, baselines=[REPO / "baseline" / "roce.yml"], checks_dir=None, limit=None,
        out=None, formats=[], fail_on="minor",
    )  # fmt: skip
    text = html.render(report, report_context(report, ["html"]))
    assert len(text) < 2_000_000
    page, doc = _write(report, tmp_path / "out")
    session = browser.open(page.as_uri())
    seen = _numbers(browser, session)
    assert browser.problems() == []
    assert seen["tiles"]["fail"] == doc["summary"]["by_status"]["fail"]
    boxes = browser.evaluate(session, "document.querySelectorAll('#fabric rect').length")
    # One spine box, one box per rail of leaves, one box per rail of hosts.
    assert boxes == 1 + 8 + 8
    assert seen["redLinks"] == 1


def test_the_harness_sees_console_errors_and_exceptions(browser: Browser, tmp_path: Path) -> None:
    page = tmp_path / "bad.html"
    page.write_text(
        "<!DOCTYPE html><html><body><script>console.error('boom'); undefinedThing();</script></body></html>"
    )
    browser.open(page.as_uri())
    found = browser.problems()
    assert any("console.error" in p and "boom" in p for p in found)
    assert any(p.startswith("exception:") and "undefinedThing" in p for p in found)


def test_device_text_is_escaped(tmp_path: Path) -> None:
    from fabline.record import Report, RunOutcome
    from fabline.results import Result, ResultStore, Severity, Status

    store = ResultStore()
    store.append(
        Result(
            "mtu",
            "leaf<1>",
            "Ethernet0",
            Status.FAIL,
            Severity.MAJOR,
            None,
            None,
            "<script>alert(1)</script>",
        )
    )
    outcome = RunOutcome(store, [{"name": "leaf<1>", "platform": "sonic", "role": "leaf", "status": "ok"}])
    report = Report(outcome, "inv.yml", ["b.yml"], str(tmp_path / "none"), Severity.MINOR, 4)
    text = html.render(report)
    assert "<script>alert(1)</script>" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text and "leaf&lt;1&gt;" in text
    assert "links not drawn" in text  # no links given: said on the page, not skipped silently
