"""Shared helpers of the report tests: synthetic trial files and a headless-Chromium driver.

The browser tests drive the Debian ``chromium`` package (``make test`` installs it).  Where it
is missing they are skipped with a loud reason; they never download a browser.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests._units import BROWSER_FILES, check_member, leaves

CHROMIUM = os.environ.get("TRIALSCORE_CHROMIUM", "/usr/bin/chromium")
BROWSER_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--host-resolver-rules=MAP * ~NOTFOUND",
]


def write_trials(
    path: Path,
    cases: int,
    trials: int,
    seed: int,
    targets: tuple[str, ...] = ("model-a",),
    shift: float = 0.0,
    started: str = "2025-01-06T10:00:00Z",
) -> Path:
    """A trial-record file: ``cases`` cases x ``trials`` trials per target, some errored, seeded."""
    rng = np.random.default_rng(seed)
    rates = np.clip(np.random.default_rng(7).beta(3, 1.5, size=cases) + shift, 0, 1)
    lines = []
    for target in targets:
        outcome = rng.random((cases, trials)) < rates[:, None]
        errored = rng.random((cases, trials)) < 0.02
        for case in range(cases):
            for trial in range(trials):
                error = bool(errored[case, trial])
                passed = None if error else bool(outcome[case, trial])
                verdict = "error" if error else ("pass" if passed else "fail")
                lines.append(
                    json.dumps(
                        {
                            "run_id": f"run-{seed}",
                            "suite": "synthetic",
                            "case_id": f"case-{case:04d}",
                            "trial": trial,
                            "target": target,
                            "category": f"cat-{case % 5}",
                            "passed": passed,
                            "score": None if error else float(passed),
                            "verdict": verdict,
                            "grader_results": []
                            if error
                            else [{"name": "exact", "score": float(passed), "passed": passed}],
                            "cost_usd": 0.0001,
                            "latency_s": 0.5,
                            "output": None if error else f"answer {case}",
                            "error": "timeout after 30 s" if error else None,
                            "started_at": started,
                        }
                    )
                )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def browser_available() -> bool:
    """Whether the headless browser can run here."""
    return Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK)


needs_browser = pytest.mark.skipif(
    not browser_available(),
    reason=f"BROWSER TESTS SKIPPED: {CHROMIUM} is missing; install the Debian package 'chromium' "
    "(make test does: apt-get install -y chromium)",
)


@dataclass
class Page:
    """A page in headless Chromium over the DevTools protocol: evaluate script, collect events."""

    socket: Any
    events: list[dict[str, Any]] = field(default_factory=list)
    next_id: int = 0

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        self.socket.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv(timeout=60))
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return dict(message.get("result", {}))
            self.events.append(message)

    def wait_for(self, method: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not any(event.get("method") == method for event in self.events):
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(method)
            self.events.append(json.loads(self.socket.recv(timeout=left)))

    def eval(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(str(result["exceptionDetails"]))
        return result["result"].get("value")

    def until(self, expression: str, timeout: float = 30) -> Any:
        """The value of ``expression`` once it is truthy (the page unpacks its texts asynchronously);
        a hang fails as a TimeoutError naming it."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.eval(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"hung: {expression} stayed {value!r} for {timeout} s")
            time.sleep(0.05)

    def pump(self, seconds: float) -> None:
        """Record the page's events for ``seconds`` (a live page reloading itself, say)."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                self.events.append(json.loads(self.socket.recv(timeout=left)))
            except TimeoutError:
                return

    def loads(self) -> int:
        """How many times the page has loaded so far."""
        return sum(event.get("method") == "Page.loadEventFired" for event in self.events)

    def problems(self) -> list[str]:
        """Script exceptions, console or log errors, and requests beyond the page itself."""
        out = []
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.exceptionThrown":
                out.append(f"exception: {params['exceptionDetails']}")
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                out.append(f"console.{params['type']}: {params.get('args')}")
            elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
                out.append(f"log: {params['entry'].get('text')}")
            elif method == "Network.requestWillBeSent":
                url = params["request"]["url"]
                if not url.startswith("file://"):
                    out.append(f"request: {url}")
        return out

    def requests(self) -> list[str]:
        """Every URL the page requested (the page's own file:// included)."""
        return [
            event["params"]["request"]["url"]
            for event in self.events
            if event.get("method") == "Network.requestWillBeSent"
        ]


class Browser:
    """One headless Chromium with its DevTools endpoint, started when first asked for (and again if it
    ended); each test's pages are tabs of their own (their own session storage, events and emulation),
    closed after it.  They are in the browser's default context, where a page's
    ``Browser.setDownloadBehavior`` applies."""

    def __init__(self, profile: Path) -> None:
        self.profile = profile
        self.process: subprocess.Popen[bytes] | None = None
        self.port = 0
        self.control: Page | None = None  # the browser's own endpoint (Target.* commands)
        self.connections = contextlib.ExitStack()

    def start(self) -> None:
        """Start Chromium, unless it runs."""
        from websockets.sync.client import connect

        if self.process is not None and self.process.poll() is None:
            return
        self.close()
        port_file = self.profile / "DevToolsActivePort"
        port_file.unlink(missing_ok=True)
        self.process = subprocess.Popen(
            [CHROMIUM, *BROWSER_FLAGS, f"--user-data-dir={self.profile}", "--remote-debugging-port=0"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while not (port_file.is_file() and port_file.read_text().count("\n") >= 1):
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise RuntimeError("chromium did not start its DevTools endpoint")
            time.sleep(0.1)
        port, path = port_file.read_text().splitlines()[:2]
        self.port = int(port)
        url = f"ws://127.0.0.1:{port}{path}"
        self.control = Page(self.connections.enter_context(connect(url, max_size=2**26, open_timeout=30)))

    @contextlib.contextmanager
    def tabs(self) -> Iterator[Callable[..., Page]]:
        """Tabs for one test: yields a function path, fragment -> :class:`Page` (a new tab each call, its
        events recorded from its start); the tabs are closed after."""
        from websockets.sync.client import connect

        self.start()
        assert self.control is not None
        sockets = contextlib.ExitStack()
        targets: list[str] = []

        def load(path: Path, fragment: str = "") -> Page:
            assert self.control is not None
            targets.append(self.control.send("Target.createTarget", url="about:blank")["targetId"])
            url = f"ws://127.0.0.1:{self.port}/devtools/page/{targets[-1]}"
            page = Page(sockets.enter_context(connect(url, max_size=2**26, open_timeout=30)))
            for domain in ("Page", "Runtime", "Log", "Network"):
                page.send(f"{domain}.enable")
            page.send("Page.bringToFront")  # shown, as a browser's only page is: its timers not throttled
            page.send("Page.navigate", url=path.resolve().as_uri() + fragment)
            page.wait_for("Page.loadEventFired")
            # a report unpacks its texts asynchronously: wait until that and every panel's drawing is done
            page.send(
                "Runtime.evaluate",
                expression="typeof ts === 'object' && ts.ready ? ts.ready.then(() => true) : true",
                awaitPromise=True,
            )
            return page

        try:
            yield load
        finally:
            sockets.close()
            if self.control is not None and self.process is not None and self.process.poll() is None:
                for target in targets:
                    self.control.send("Target.closeTarget", targetId=target)

    def close(self) -> None:
        """End Chromium (if it runs)."""
        self.connections.close()
        self.control = None
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.process = None


#: The process's Chromium, once a test has asked for it (see :func:`pytest_runtest_teardown`).
_BROWSERS: list[Browser] = []


@pytest.fixture(scope="session")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    """One headless Chromium for a test process's browser tests, whatever their module (started by the
    first test that asks for a page, again by the first after it was ended; each test's pages are its
    own tabs)."""
    profile = tmp_path_factory.mktemp("chromium-profile")
    chromium = Browser(profile)
    _BROWSERS.append(chromium)
    try:
        yield chromium
    finally:
        _BROWSERS.remove(chromium)
        chromium.close()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def open_page(request: pytest.FixtureRequest, browser: Browser) -> Iterator[Callable[..., Page]]:
    """Open a file in headless Chromium; yields a function path -> :class:`Page` (events recorded), each
    page a tab of this test's own in the process's browser."""
    check_member(request.node, BROWSER_FILES, "Chromium")
    with browser.tabs() as load:
        yield load


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """End Chromium after the last test of the browser files (it would idle on until the session's end)."""
    if leaves(item, nextitem, BROWSER_FILES):
        for chromium in _BROWSERS:
            chromium.close()


def write_records(path: Path, rows: list[dict[str, Any]]) -> Path:
    """Trial records, one JSON object a line (``passed`` and ``score`` follow the verdict)."""
    lines = []
    for row in rows:
        verdict = row["verdict"]
        passed = None if verdict == "error" else verdict == "pass"
        score = None if verdict == "error" else float(bool(passed))
        lines.append(json.dumps({"passed": passed, "score": score, **row}, ensure_ascii=False))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def dated_runs(
    folder: Path, cases: int, falling: int, steady_passes: int, month: int, late: bool
) -> list[Path]:
    """Ten daily runs of ``cases`` cases, 10 trials each: the first ``falling`` (category ``falling``)
    pass one trial fewer each run (10, 9, ... 1), the others (``steady``) pass ``steady_passes``;
    ``late``: the last case joins at the second run."""
    runs = []
    for index in range(10):
        rows = [
            {
                "case_id": f"case-{case}",
                "trial": trial,
                "target": "m",
                "category": "falling" if case < falling else "steady",
                "verdict": "pass" if trial < (10 - index if case < falling else steady_passes) else "fail",
                "started_at": f"2025-{month:02d}-{index + 1:02d}T09:00:00Z",
            }
            for case in range(cases - 1 if late and index == 0 else cases)
            for trial in range(10)
        ]
        runs.append(write_records(folder / f"r{index}.jsonl", rows))
    return runs


def _call(name: str, **arguments: object) -> dict[str, object]:
    return {"name": name, "arguments": arguments}


#: The agent run's trials: (case, verdict, output, error, tool calls) per trial, in trial order.
AGENT_TRIALS: dict[str, list[tuple[str, str | None, str | None, list[dict[str, object]] | None]]] = {
    "capital": [
        ("fail", "Lyon", None, None),
        ("fail", "Lyon", None, None),
        ("fail", " lyon", None, None),
        ("fail", "Marseille", None, None),
    ],
    "agent": [
        ("pass", "Booked 2 nights.", None, [_call("search", q="Paris"), _call("book", nights=2)]),
        ("fail", "Booked 3 nights.", None, [_call("search", q="Paris"), _call("book", nights=3)]),
        ("fail", "No booking.", None, [_call("search", q="Paris")]),
        ("error", None, "timeout after 30 s", None),
    ],
    "errors": [
        ("error", None, "Rate limited (429)", None),
        ("error", None, "rate limited  (429) ", None),
        ("error", None, "boom", None),
        ("pass", "ok", None, None),
    ],
    "same": [("pass", "same", None, None)] * 4,
}
#: The baseline's: every case passed every trial.
BASELINE_OUTPUTS = {"capital": "Paris", "agent": "Booked 2 nights.", "errors": "ok", "same": "same"}


def agent_runs(folder: Path) -> tuple[Path, Path]:
    """A baseline where every case passed and a run where cases regressed, became flaky, errored and
    diverged in their tool calls (see :data:`AGENT_TRIALS`)."""
    common = {"target": "m", "suite": "agents", "category": "travel"}
    now, before = [], []
    for case, trials in AGENT_TRIALS.items():
        for trial, (verdict, output, error, calls) in enumerate(trials):
            row = {"run_id": "now", "case_id": case, "trial": trial, "verdict": verdict, **common}
            row.update(output=output, error=error, started_at="2025-01-13T10:00:00Z")
            if calls is not None:
                row["tool_calls"] = calls
            now.append(row)
            first = {"run_id": "before", "case_id": case, "trial": trial, "verdict": "pass", **common}
            before.append({**first, "output": BASELINE_OUTPUTS[case], "started_at": "2025-01-06T10:00:00Z"})
    return write_records(folder / "before.jsonl", before), write_records(folder / "now.jsonl", now)
