"""`import harness` stays light: no ipywidgets needed, no openai until an `OpenAIModel`.

Each check runs in a fresh interpreter, since this test process has long since
imported everything.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import harness

ROOT = Path(__file__).resolve().parent.parent
CONTRACT = ("Agent", "ScriptedModel", "OpenAIModel", "tool", "TodoList", "TodoItem", "Hooks",
            "Permissions")


def run_python(code: str) -> str:
    """Run ``code`` in a fresh interpreter from the repository root; return its stdout."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("HARNESS_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL")}
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], check=False,
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_import_harness_works_without_ipywidgets() -> None:
    out = run_python("""
        import sys
        sys.modules["ipywidgets"] = None  # any `import ipywidgets` now raises ImportError
        import harness
        print(harness.Agent.__name__)
    """)

    assert out == "Agent"


def test_openai_is_imported_only_when_an_openai_model_is_made() -> None:
    out = run_python("""
        import sys
        import harness
        before = sorted(m for m in ("openai", "ipywidgets") if m in sys.modules)
        harness.OpenAIModel(model="m", base_url="http://127.0.0.1:9/v1")
        print(before, "openai" in sys.modules)
    """)

    assert out == "[] True"


def test_every_name_in_all_is_importable() -> None:
    missing = [name for name in harness.__all__ if not hasattr(harness, name)]

    assert missing == []


def test_all_includes_the_public_contract() -> None:
    assert set(CONTRACT) <= set(harness.__all__)
