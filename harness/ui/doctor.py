"""``harness.doctor()``: is this environment ready, and which model will the lessons use?

What ``harness/`` needs is checked apart from what the course adds: a project that
copied the folder needs only pydantic (openai for `OpenAIModel`, ipywidgets for the
plan panel); JupyterLab, nbval and pytest are for working through the lessons.
``doctor(live=True)`` (``python -m harness doctor --live``) also asks the configured
endpoint a few tiny questions: see probe.py. In the browser edition (JupyterLite) the
site brings everything, so the course needs nothing more there (harness/browser.py).
"""

from __future__ import annotations

import os
import sys
import textwrap
from urllib.parse import urlsplit

from .. import browser
from .display import escape

PACKAGES = {  # what harness/ itself imports: name -> what is missing without it
    "pydantic": None,  # the core: nothing works without it
    "openai": "needed for OpenAIModel",
    "ipywidgets": "needed for the plan panel",
}
COURSE = ("jupyterlab", "nbval", "pytest")  # the lessons and their tests (requirements.txt)
COURSE_HINT = "to work through the course: pip install -r requirements.txt"
BROWSER = ("for the course: nothing to install, the site brings it all (the tests, and "
           "tools that run programs, need a local install: pip install -r requirements.txt)")


def _version(name: str) -> str | None:
    from importlib import metadata  # imported here: it costs 15 ms at `import harness`

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _endpoint(url: str) -> str | None:
    """Host and port only: a ``user:password@`` or a ``?key=`` in the URL is never shown."""
    try:
        parts = urlsplit(url)
        return (parts.hostname or "") + (f":{parts.port}" if parts.port else "") or None
    except ValueError:
        return "(not a valid URL)"


def doctor(show_versions: bool = True, *, live: bool = False) -> dict:
    """Print what harness/ needs, what the course adds, what is configured; return it.

    The last line says ``ready`` when harness/ itself can run: pydantic, and openai too
    when ``HARNESS_MODEL`` asks for a live model. ``show_versions=False`` prints only what
    is missing. The API key itself is never shown: only whether one is set. With
    ``live=True`` the configured endpoint is asked what it can do (see probe.py).
    """
    report = {
        "python": sys.version.split()[0],
        "browser": browser.IN_BROWSER,
        "packages": {name: _version(name) for name in PACKAGES},
        "course": {name: _version(name) for name in COURSE},
        "model": os.environ.get("HARNESS_MODEL") or None,
        "endpoint": _endpoint(os.environ.get("OPENAI_BASE_URL", "")),
        "api_key_set": bool(os.environ.get("OPENAI_API_KEY", "").strip()),
    }
    needed = ["pydantic"] + (["openai"] if report["model"] else [])
    missing = [name for name in needed if report["packages"][name] is None]
    report["ready"] = not missing
    if show_versions:
        edition = " (the browser edition: Pyodide in JupyterLite)" if report["browser"] else ""
        print(f"python {report['python']}{edition}")
    for name, version in report["packages"].items():
        if version is None:
            why = PACKAGES[name]
            print(f"  {name:<11} MISSING: " + (f"{why} (pip install {name})" if why
                                              else f"pip install {name}"))
        elif show_versions:
            print(f"  {name:<11} {version}")
    course_missing = [name for name, version in report["course"].items()
                      if version is None and not report["browser"]]
    if report["browser"] and show_versions:
        print(textwrap.fill(BROWSER, 96, subsequent_indent="  "))
    elif show_versions or course_missing:
        print("for the course (lessons and tests):")
        for name, version in report["course"].items():
            if show_versions or version is None:
                print(f"  {name:<11} {version or 'MISSING'}")
        if course_missing:
            print(f"  {COURSE_HINT}")
    if report["model"] is None:
        print("model: offline (ScriptedModel). Set HARNESS_MODEL to use a live model.")
    else:
        where = report["endpoint"] or "api.openai.com"
        key = "set" if report["api_key_set"] else "not set (fine for a local server)"
        print(escape(f"model: live, {report['model']} at {where}; API key {key}"))
    from ..workspace.sandbox import status  # run_shell's processes: confined here, or not, and why

    report["sandbox"] = status()
    print(textwrap.fill(report["sandbox"], 96, subsequent_indent="  "))
    print("ready" if not missing else
          f"missing: {', '.join(missing)} (pip install {' '.join(missing)})")
    if live:
        report["live"] = _live()
    return report


def _live() -> dict:
    """Build the model from the environment, ask it, print the table."""
    from ..live.openai_model import OpenAIModel
    from ..live.probe import print_probe, probe

    try:
        model = OpenAIModel()
    except ValueError as exc:
        print(escape(f"live checks: cannot build the model: {exc}"))
        return {"error": str(exc)}
    checks, settings = probe(model)
    print_probe(checks, settings, model)
    return {"checks": {c.name: c.ok for c in checks}, "settings": settings}
