"""The browser edition, served and driven: the built site on 127.0.0.1, a Chromium
context that may reach nothing else, and a notebook run the learner's way.

    site folder (scripts/build_site.py) --> StaticSite (counts the bytes it sends)
                                              ^ the only origin the context may reach
    Chromium: /lab/index.html?path=NN_x.ipynb --> kernel idle --> clear, Run All --> cells
              (`run_lessons`: each notebook in a fresh context, two at a time)

Used by tests/e2e/test_site_browser.py and benchmarks/site_load.py. Playwright is imported
only inside functions, so the main suite imports this without it.
"""

from __future__ import annotations

import configparser
import functools
import http.server
import os
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

ROOT = Path(__file__).resolve().parents[2]
SITE_ENV = "HARNESS_SITE_DIR"  # a site built already (CI builds it once, before the tests)
BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--disable-dev-shm-usage"]
KERNEL_IDLE = """() => [...document.querySelectorAll('.jp-StatusBar-TextItem')]
    .some(e => /^(?!No Kernel).*Pyodide.* \\| Idle$/.test(e.textContent.trim()))"""
NOTEBOOK = "window.jupyterapp.shell.currentWidget"
# Every code cell has run, and the kernel is idle; or a cell failed (Run All stops there).
FINISHED = f"""() => {{
    const panel = {NOTEBOOK}, kernel = panel && panel.sessionContext.session?.kernel;
    if (!kernel || kernel.status !== 'idle') return false;
    const cells = panel.content.model.toJSON().cells.filter(c => c.cell_type === 'code');
    return cells.every(c => c.execution_count !== null)
        || cells.some(c => c.outputs.some(o => o.output_type === 'error'));
}}"""


def build(dest: Path, *, floor: bool = False) -> Path:
    """Build the site (or the floor site) into ``dest`` with scripts/build_site.py."""
    argv = [sys.executable, str(ROOT / "scripts" / "build_site.py"), str(dest)]
    subprocess.run(argv + (["--floor"] if floor else []), check=True)
    return dest


class StaticSite:
    """Serves ``folder`` on 127.0.0.1 (threads: the browser asks for many files at once),
    counting the bytes of every body it sends, and which files they were."""

    def __init__(self, folder: Path) -> None:
        site = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            extensions_map: ClassVar[dict[str, str]] = {
                **http.server.SimpleHTTPRequestHandler.extensions_map,
                ".wasm": "application/wasm", ".mjs": "text/javascript",
                ".js": "text/javascript", ".json": "application/json",
                ".whl": "application/zip"}

            def copyfile(self, source, outputfile) -> None:  # type: ignore[override]
                while chunk := source.read(1 << 16):
                    outputfile.write(chunk)
                    with site.lock:
                        site.sent += len(chunk)
                with site.lock:
                    site.files.append(self.translate_path(self.path))

            def log_message(self, *args: object) -> None:
                pass

        self.lock, self.sent, self.files = threading.Lock(), 0, []  # bodies: bytes, paths
        self.server = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(Handler, directory=str(folder)))
        self.server.daemon_threads = True
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> StaticSite:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def launch(playwright):
    """Headless Debian Chromium (never ``playwright install``)."""
    return playwright.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                      args=BROWSER_ARGS)


def offline_context(browser, origin: str):
    """A fresh context (no cache, no storage) that may reach only ``origin``: every other
    request is refused and kept in ``context.outside``, for the test to show."""
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    context.outside = []

    def route(route) -> None:
        if route.request.url.startswith(origin):
            route.continue_()
        else:
            context.outside.append(route.request.url)
            route.abort()

    context.route("**/*", route)
    return context


def open_notebook(context, origin: str, name: str, timeout_s: float = 240):
    """Open ``name`` in JupyterLab and wait for its Pyodide kernel to be idle; the page
    and the seconds it took."""
    page = context.new_page()
    started = time.monotonic()
    page.goto(f"{origin}/lab/index.html?path={name}")
    page.wait_for_function(KERNEL_IDLE, timeout=timeout_s * 1000)
    seconds = time.monotonic() - started
    opened = page.evaluate(f"() => {NOTEBOOK}?.context?.path")
    if opened != name:
        raise AssertionError(f"JupyterLite shows {opened!r}, not {name!r}")
    return page, seconds


# Records each plan panel's distinct texts while the cells run (by the panel's place).
WATCH_PANELS = """() => { window.panelTexts = [];
    setInterval(() => document.querySelectorAll('.harness-plan-panel').forEach((p, i) => {
        (window.panelTexts[i] = window.panelTexts[i] || new Set()).add(p.textContent); }), 50);
}"""


@dataclass
class LessonRun:
    """One notebook run in the site from a cold start: what a test looks at afterwards."""

    name: str
    kernel_seconds: float | None = None
    cells: list[dict] = field(default_factory=list)  # as nbformat dicts, after Run All
    panel_texts: list[int] = field(default_factory=list)  # distinct texts seen, per panel
    outside: list[str] = field(default_factory=list)  # requests refused: not the site's
    problem: str | None = None  # the notebook did not open, or did not finish


def run_lessons(browser, origin: str, names: list[str], *, at_once: int = 2,
                timeout_s: float = 420) -> dict[str, LessonRun]:
    """Run each notebook the learner's way, each in a fresh context, ``at_once`` at a time
    (a kernel's start is mostly one busy thread: two share a 2-core machine well)."""
    waiting, active, runs = list(names), [], {}
    while waiting or active:
        while waiting and len(active) < at_once:
            run, context = LessonRun(waiting.pop(0)), offline_context(browser, origin)
            page = context.new_page()
            page.goto(f"{origin}/lab/index.html?path={run.name}")
            active.append([run, context, page, time.monotonic(), "starting"])
        time.sleep(0.5)
        for slot in list(active):
            run, context, page, started, state = slot
            if state == "starting" and page.evaluate(KERNEL_IDLE):
                run.kernel_seconds = time.monotonic() - started
                opened = page.evaluate(f"() => {NOTEBOOK}?.context?.path")
                if opened != run.name:
                    run.problem = f"JupyterLite shows {opened!r}, not {run.name!r}"
                else:
                    page.evaluate(WATCH_PANELS)
                    page.evaluate("() => window.jupyterapp.commands.execute("
                                  "'notebook:clear-all-cell-outputs')")
                    page.evaluate("() => window.jupyterapp.commands.execute("
                                  "'notebook:run-all-cells')")
                    slot[4] = "running"
                    continue
            elif state == "running" and time.monotonic() - started > 2 + (
                    run.kernel_seconds or 0) and page.evaluate(FINISHED):
                run.cells = page.evaluate(f"() => {NOTEBOOK}.content.model.toJSON().cells")
                run.panel_texts = page.evaluate("() => window.panelTexts.map(s => s.size)")
            elif time.monotonic() - started > timeout_s:
                run.problem = f"not finished within {timeout_s:.0f} s ({state})"
            else:
                continue
            run.outside = list(context.outside)
            context.close()
            active.remove(slot)
            runs[run.name] = run
    return runs


# -- comparing outputs with the committed ones, as nbval does -------------------------------

def _sanitizers() -> list[tuple[re.Pattern, str]]:
    config = configparser.ConfigParser()
    config.read(ROOT / "tests" / "nbval_sanitize.cfg", encoding="utf-8")
    return [(re.compile(config[s]["regex"]), config[s]["replace"]) for s in config.sections()]


SANITIZE = _sanitizers()


def _text(value: object) -> str:
    return "".join(value) if isinstance(value, list) else str(value or "")


def shown(outputs: list[dict]) -> list[tuple[str, str]]:
    """What a cell's outputs say, as nbval compares them: streams (joined by name),
    text/plain of results, errors; a widget counts as one, whatever its id."""
    said: list[tuple[str, str]] = []
    for output in outputs:
        kind = output["output_type"]
        if kind == "stream":
            item = (output["name"], _text(output["text"]))
        elif kind == "error":
            item = ("error", f"{output['ename']}: {output['evalue']}")
        elif "application/vnd.jupyter.widget-view+json" in output.get("data", {}):
            item = ("widget", "")
        else:
            item = ("result", _text(output.get("data", {}).get("text/plain")))
        if said and said[-1][0] == item[0] and item[0] in ("stdout", "stderr"):
            said[-1] = (item[0], said[-1][1] + item[1])
        else:
            said.append(item)
    return [(kind, _sanitize(text)) for kind, text in said]


def _sanitize(text: str) -> str:
    for pattern, replacement in SANITIZE:
        text = pattern.sub(replacement, text)
    return text


def site_folder(tmp: Path) -> Path:
    """The site to test: ``HARNESS_SITE_DIR`` if set (built already), else built in ``tmp``."""
    given = os.environ.get(SITE_ENV)
    return Path(given) if given else build(tmp / "site")
