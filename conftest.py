"""Test configuration for the whole repository: unit tests and every lesson notebook.

It lives at the repository root, not in tests/, because pytest loads a conftest.py
only for the folders it collects from: one in tests/ is not loaded by `pytest lessons`.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.live.openai_model import PROVIDER_VARIABLES

ROOT = Path(__file__).resolve().parent

# A learner's live-model settings (harness.live.openai_model.PROVIDER_VARIABLES) are removed,
# so tests and notebook kernels always run offline on the scripted model.

def pytest_configure(config: pytest.Config) -> None:
    for name in PROVIDER_VARIABLES:
        os.environ.pop(name, None)
    # nbval opens the sanitize file relative to the current folder; an absolute path
    # lets pytest run from anywhere. An explicit --nbval-sanitize-with still wins.
    if getattr(config.option, "nbval_sanitize_with", "absent") is None:
        config.option.nbval_sanitize_with = str(ROOT / "tests" / "nbval_sanitize.cfg")
