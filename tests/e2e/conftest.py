"""Browser checks: a real JupyterLab on 127.0.0.1, driven by Debian's Chromium.

    JupyterLab (temp config/data/runtime/IPython dirs, a token)  <--  Chromium (Playwright)
        serves a copy of the notebook                               Run -> Run All Cells

Playwright is imported inside the fixtures: the main suite collects (and deselects) these
tests where Playwright is not installed. Chromium comes from apt (``/usr/bin/chromium``);
``playwright install`` is never used. Stop the server by its PID, whatever happens.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.live.openai_model import PROVIDER_VARIABLES

CHROMIUM = "/usr/bin/chromium"
BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--disable-dev-shm-usage"]

USER_SETTINGS = {
    # No "Would you like to get notified about official Jupyter news?" toast over the page.
    "apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false"},
    # Every cell in the page, rendered, whether in view or not (JupyterLab 4 otherwise
    # skips the cells out of view), and no blank screen after the last cell: a test sees
    # every output, and a screenshot of the whole notebook is exactly the notebook.
    "notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none",
                                                        "scrollPastEnd": False},
}


@dataclass
class Lab:
    """A running JupyterLab: where it listens, its token, and the folder it serves."""

    url: str
    token: str
    root: Path
    log: Path

    def api(self, method: str, path: str) -> object:
        request = urllib.request.Request(f"{self.url}{path}", method=method,
                                         headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=5) as response:
            body = response.read()
        return json.loads(body) if body else None

    def delete_sessions(self) -> None:
        """Shut down every kernel session, so no earlier kernel shifts what a test sees."""
        for session in self.api("GET", "/api/sessions"):
            self.api("DELETE", f"/api/sessions/{session['id']}")

    def add_notebook(self, source: Path) -> str:
        """Serve a copy of the notebook's folder (JupyterLab autosaves what it opens), so a
        lesson finds the files next to it; return the notebook's path in the server."""
        folder = self.root / source.parent.name
        shutil.copytree(source.parent, folder, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
        return f"{folder.name}/{source.name}"

    def log_tail(self, lines: int = 30) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _write_user_settings(folder: Path) -> None:
    """JupyterLab settings a test relies on, as a learner could set them in Settings."""
    for name, settings in USER_SETTINGS.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(settings))


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    base = tmp_path_factory.mktemp("jupyter")
    root = base / "notebooks"
    root.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in PROVIDER_VARIABLES}
    for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR"):
        env[name] = str(base / name.lower())
    _write_user_settings(base / "jupyter_config_dir/lab/user-settings/@jupyterlab")
    port, token = _free_port(), secrets.token_hex(16)
    log = base / "server.log"
    cmd = [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}",
           "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={token}", "--allow-root",
           "--ServerApp.port_retries=0", "--LabApp.news_url=None",
           "--LanguageServerManager.autodetect=False", f"--ServerApp.root_dir={root}"]
    with log.open("w") as out:
        server = subprocess.Popen(cmd, env=env, cwd=root, stdout=out, stderr=subprocess.STDOUT)
    instance = Lab(f"http://127.0.0.1:{port}", token, root, log)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                instance.api("GET", "/api/status")
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not start within 30 s:\n{instance.log_tail()}")
                time.sleep(0.2)
        instance.delete_sessions()
        yield instance
        instance.delete_sessions()
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@pytest.fixture(scope="session")
def playwright_session():
    """One Playwright for the whole run: its sync API allows one per thread."""
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install -y chromium")
    with sync_playwright() as playwright:
        yield playwright


@pytest.fixture(scope="session")
def browser(tmp_path_factory: pytest.TempPathFactory, playwright_session):
    """A headless Chromium context with its profile and caches in a temp folder."""
    base = tmp_path_factory.mktemp("chromium")
    env = {**os.environ, "XDG_CONFIG_HOME": str(base / "config"),
           "XDG_CACHE_HOME": str(base / "cache")}
    context = playwright_session.chromium.launch_persistent_context(
        str(base / "profile"), executable_path=CHROMIUM, headless=True, args=BROWSER_ARGS,
        env=env, viewport={"width": 1280, "height": 1000})
    try:
        yield context
    finally:
        context.close()


@pytest.fixture(scope="session")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder for every screenshot of the run, for a human to look at afterwards."""
    return tmp_path_factory.mktemp("screenshots")
