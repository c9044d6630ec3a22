"""``harness.doctor()``: is this environment ready, and which model will the lessons use?"""

from __future__ import annotations

import os
import sys
from urllib.parse import urlsplit

PACKAGES = ("pydantic", "openai", "ipywidgets", "jupyterlab", "nbval", "pytest")


def _version(name: str) -> str | None:
    from importlib import metadata  # imported here: it costs 15 ms at `import harness`

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def doctor(show_versions: bool = True) -> dict:
    """Print what the course needs and what is configured; return it as a dict.

    The API key itself is never shown: only whether one is set.
    """
    report = {
        "python": sys.version.split()[0],
        "packages": {name: _version(name) for name in PACKAGES},
        "model": os.environ.get("HARNESS_MODEL") or None,
        "endpoint": urlsplit(os.environ.get("OPENAI_BASE_URL", "")).netloc or None,
        "api_key_set": bool(os.environ.get("OPENAI_API_KEY")),
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
    print("ready" if not missing else f"missing: {', '.join(missing)}")
    return report
