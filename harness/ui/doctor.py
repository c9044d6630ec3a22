"""``harness.doctor()``: is this environment ready, and which model will the lessons use?

``doctor(live=True)`` (``python -m harness doctor --live``) also asks the configured
endpoint a few tiny questions: see probe.py.
"""

from __future__ import annotations

import os
import sys
import textwrap
from urllib.parse import urlsplit

PACKAGES = ("pydantic", "openai", "ipywidgets", "jupyterlab", "nbval", "pytest")


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
    """Print what the course needs and what is configured; return it as a dict.

    The API key itself is never shown: only whether one is set. With ``live=True`` the
    configured endpoint is asked what it can do (a few tiny requests; see probe.py).
    """
    report = {
        "python": sys.version.split()[0],
        "packages": {name: _version(name) for name in PACKAGES},
        "model": os.environ.get("HARNESS_MODEL") or None,
        "endpoint": _endpoint(os.environ.get("OPENAI_BASE_URL", "")),
        "api_key_set": bool(os.environ.get("OPENAI_API_KEY", "").strip()),
    }
    missing = [name for name, version in report["packages"].items() if version is None]
    if show_versions:
        print(f"python {report['python']}")
        for name, version in report["packages"].items():
            print(f"  {name:<11} {version or 'MISSING: pip install -r requirements.txt'}")
    if report["model"] is None:
        print("model: offline (ScriptedModel). Set HARNESS_MODEL to use a live model.")
    else:
        where = report["endpoint"] or "api.openai.com"
        key = "set" if report["api_key_set"] else "not set (fine for a local server)"
        print(f"model: live, {report['model']} at {where}; API key {key}")
    from ..workspace.sandbox import status  # run_shell's processes: confined here, or not, and why

    report["sandbox"] = status()
    print(textwrap.fill(report["sandbox"], 96, subsequent_indent="  "))
    print("ready" if not missing else f"missing: {', '.join(missing)}")
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
        print(f"live checks: cannot build the model: {exc}")
        return {"error": str(exc)}
    checks, settings = probe(model)
    print_probe(checks, settings, model)
    return {"checks": {c.name: c.ok for c in checks}, "settings": settings}
