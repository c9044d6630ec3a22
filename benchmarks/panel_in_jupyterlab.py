"""The plan panel in a real JupyterLab: a 2,000-round scripted run, watched in Chromium.

    python benchmarks/panel_in_jupyterlab.py                       # this harness
    python benchmarks/panel_in_jupyterlab.py --harness /tmp/old    # another checkout's

Needs Debian's Chromium (``apt-get install -y chromium``) and ``pip install playwright``
(never ``playwright install``). A JupyterLab server starts on 127.0.0.1 with temporary
config folders (tests/e2e/conftest.py explains each setting); with ``--harness`` the
kernel imports ``harness`` from that folder instead, to measure an older version.
The notebook builds the run of panel_overhead.py, shows a `PlanPanel`, and runs it.

Measured:
- the run's time in the kernel, and the widget messages it sent (count and MB, counted
  in the kernel on their way out);
- memory: the RSS of the JupyterLab server and of the kernel, before and after;
- the browser: the longest stall of its main thread while the run and its messages
  are handled (a 50 ms timer in the page: how late it fired), the time spent in long
  tasks, and how long after the click the panel reads "completed".
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.live.openai_model import PROVIDER_VARIABLES  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--disable-dev-shm-usage"]
SETUP = r'''
import json, time
import ipywidgets.widgets.widget as _w
from harness import Agent, ScriptedModel, tool
from harness.ui import PlanPanel

OUT = {"messages": 0, "bytes": 0}
_send = _w.Widget._send
def _counted(self, msg, buffers=None):
    OUT["messages"] += 1
    OUT["bytes"] += len(json.dumps(msg, default=str))
    return _send(self, msg, buffers)
_w.Widget._send = _counted

@tool
def bump(n: int) -> int:
    """Return n + 1."""
    return n + 1

def call(name, arguments):
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"role": "assistant", "content": None, "tool_calls": [
        {"type": "function", "function": {"name": name, "arguments": raw}}]}

def plan(done, total=5):
    return {"todos": [{"content": f"Step {i + 1}", "status": "completed" if i < done else
                       "in_progress" if i == done else "pending"} for i in range(total)]}

ROUNDS = __ROUNDS__
steps = []
for i in range(ROUNDS):
    if i % 10 == 0:
        steps.append(call("todo_write", plan(min(i * 5 // ROUNDS, 4))))
    elif i % 25 == 0:
        steps.append(call("bump", '{"n": "not a number"'))
    else:
        steps.append(call("bump", {"n": i}))
steps += [call("todo_write", plan(5)), {"role": "assistant", "content": "Finished."}]
import inspect
extra = {k: None for k in ("max_requests", "max_tool_calls")
         if k in inspect.signature(Agent).parameters}
panel = PlanPanel()
agent = Agent(ScriptedModel(steps), [bump], planning=True, max_turns=ROUNDS + 2,
              observers=[panel], **extra)
'''
RUN = r'''
OUT["messages"] = OUT["bytes"] = 0
started = time.perf_counter()
result = agent.run("Count for a long time.")
OUT["seconds"] = time.perf_counter() - started
time.sleep(0.2)  # a trailing redraw, if one is due
OUT["outcome"] = result.outcome
open("measured.json", "w").write(json.dumps(OUT))  # read by the script, whatever the page shows
print("MEASURED " + json.dumps(OUT))
'''
OUTPUT = """[...document.querySelectorAll('.jp-OutputArea-output')]
    .map(e => e.textContent).find(t => t.includes('MEASURED {')) ?? null"""
PROBE = """() => {
  window.__lag = {max: 0, long: 0, samples: 0};
  let last = performance.now();
  setInterval(() => { const now = performance.now();
    window.__lag.max = Math.max(window.__lag.max, now - last - 50);
    window.__lag.samples += 1; last = now; }, 50);
  new PerformanceObserver(list => { for (const e of list.getEntries())
    window.__lag.long += e.duration; }).observe({entryTypes: ['longtask']});
}"""


def notebook(rounds: int) -> dict:
    cells = [SETUP.replace("__ROUNDS__", str(rounds)), "display(panel)", RUN]
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": {
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "cells": [{"cell_type": "code", "metadata": {}, "source": c, "outputs": [],
                   "execution_count": None, "id": f"c{i}"} for i, c in enumerate(cells)]}


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(stat.parent.name))
        except (OSError, ValueError, IndexError):
            pass
    return found


def start_lab(base: Path, harness: str | None) -> tuple[subprocess.Popen, str, str]:
    env = {k: v for k, v in os.environ.items() if k not in PROVIDER_VARIABLES}
    for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR"):
        env[name] = str(base / name.lower())
    if harness:
        env["PYTHONPATH"] = harness
    settings = base / "jupyter_config_dir/lab/user-settings/@jupyterlab"
    for name, value in {"apputils-extension/notification.jupyterlab-settings":
                        {"fetchNews": "false"},
                        "notebook-extension/tracker.jupyterlab-settings":
                        {"windowingMode": "none"}}.items():
        (settings / name).parent.mkdir(parents=True, exist_ok=True)
        (settings / name).write_text(json.dumps(value))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    token = secrets.token_hex(16)
    cmd = [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}",
           "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={token}", "--allow-root",
           "--ServerApp.port_retries=0", "--LabApp.news_url=None",
           "--LanguageServerManager.autodetect=False", f"--ServerApp.root_dir={base}"]
    log = (base / "server.log").open("w")
    server = subprocess.Popen(cmd, env=env, cwd=base, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    for _ in range(150):
        try:
            request = urllib.request.Request(f"{url}/api/status",
                                             headers={"Authorization": f"token {token}"})
            urllib.request.urlopen(request, timeout=2).read()
            return server, url, token
        except OSError:
            time.sleep(0.2)
    server.terminate()
    raise RuntimeError("JupyterLab did not start")


def measure(rounds: int, harness: str | None) -> dict:
    from playwright.sync_api import sync_playwright

    base = Path(tempfile.mkdtemp(prefix="panel-lab-"))
    (base / "run.ipynb").write_text(json.dumps(notebook(rounds)))
    server, url, token = start_lab(base, harness)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch_persistent_context(
                str(base / "profile"), executable_path=CHROMIUM, headless=True,
                args=BROWSER_ARGS, viewport={"width": 1280, "height": 1000})
            page = browser.new_page()
            page.goto(f"{url}/lab/workspaces/bench/tree/run.ipynb?reset&token={token}")
            page.wait_for_function("""() => [...document.querySelectorAll(
                '.jp-StatusBar-TextItem')].some(e => /^(?!No Kernel).+ \\| Idle$/
                .test(e.textContent.trim()))""", timeout=60_000)
            kernel = max(children(server.pid), default=server.pid)
            before = {"server": rss_mb(server.pid), "kernel": rss_mb(kernel)}
            page.evaluate(PROBE)
            clicked = time.monotonic()
            page.locator(".lm-MenuBar-itemLabel", has_text=re.compile("^Run$")).click()
            page.locator(".lm-Menu-itemLabel", has_text=re.compile("^Run All Cells$")).click()
            measured = base / "measured.json"
            while not measured.exists() and time.monotonic() - clicked < 600:
                time.sleep(0.05)
            kernel_done = time.monotonic()
            try:  # the panel's last redraw and the printed line may never arrive
                page.wait_for_function("""() => [...document.querySelectorAll(
                    '.harness-plan-panel')].some(e => e.textContent.includes('● completed'))""",
                                       timeout=60_000)
                shown: float | None = time.monotonic()
            except Exception:
                shown = None
            printed = page.evaluate(f"() => {OUTPUT}") is not None
            lag = page.evaluate("() => window.__lag")
            after = {"server": rss_mb(server.pid), "kernel": rss_mb(kernel)}
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=20)
    kernel_side = json.loads(measured.read_text())
    dropped = (base / "server.log").read_text(errors="replace").count("rate exceeded")
    return {"kernel": kernel_side, "rss_before": before, "rss_after": after, "lag": lag,
            "run_done_s": kernel_done - clicked, "printed": printed, "dropped": dropped,
            "panel_completed_s": None if shown is None else shown - clicked}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--harness", help="a folder holding another `harness` package")
    args = parser.parse_args(argv)
    if not Path(CHROMIUM).exists():
        print(f"{CHROMIUM} is missing: apt-get install -y chromium")
        return 1
    m = measure(args.rounds, args.harness)
    k = m["kernel"]
    which = f"harness from {args.harness}" if args.harness else "this harness"
    print(f"{args.rounds:,} rounds ({which}): "
          f"{k['seconds']:.2f} s in the kernel, {k['messages']:,} widget messages, "
          f"{k['bytes'] / 1e6:.2f} MB; outcome {k['outcome']}")
    print(f"memory: server {m['rss_before']['server']:.0f} -> {m['rss_after']['server']:.0f} MB, "
          f"kernel {m['rss_before']['kernel']:.0f} -> {m['rss_after']['kernel']:.0f} MB")
    shown = m["panel_completed_s"]
    print(f"browser: longest main-thread stall {m['lag']['max']:.0f} ms, long tasks "
          f"{m['lag']['long']:.0f} ms in all; run done {m['run_done_s']:.1f} s after Run All; "
          + (f"panel showing 'completed' after {shown:.1f} s" if shown is not None else
             "the panel NEVER showed 'completed' (60 s after the run)"))
    print(f"server: IOPub rate limit hit {m['dropped']} time(s) (messages dropped); the "
          f"cell's printed line {'arrived' if m['printed'] else 'was LOST'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
