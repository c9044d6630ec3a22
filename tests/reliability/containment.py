"""Fixtures that run a test with the sandbox, and again without it.

``sandboxed``: bubblewrap must work here. Where it does not, the test is skipped with
the reason, except where ``HARNESS_REQUIRE_SANDBOX=1`` (CI installs bubblewrap and sets
it): there a sandbox test that cannot run is a failure, not a skip.

``unsandboxed``: bwrap hidden from the harness, as on a machine without it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import pytest

from harness.workspace import sandbox

REQUIRED = os.environ.get("HARNESS_REQUIRE_SANDBOX") == "1"


def sandbox_problem() -> str | None:
    """Why bubblewrap cannot sandbox tool processes here (None: it can)."""
    _, problem = sandbox._sandbox()
    return problem


@pytest.fixture
def sandboxed(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("HARNESS_SANDBOX", raising=False)
    problem = sandbox_problem()
    if problem:
        if REQUIRED:
            pytest.fail(f"HARNESS_REQUIRE_SANDBOX=1 but the sandbox cannot run: {problem}")
        pytest.skip(f"no sandbox here: {problem}")
    yield


@pytest.fixture
def unsandboxed(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    which = shutil.which
    monkeypatch.setattr(sandbox.shutil, "which",
                        lambda name, *a, **k: None if name == "bwrap" else which(name, *a, **k))
    monkeypatch.setattr(sandbox, "_warned", True)  # the warning has its own test
    yield


@pytest.fixture(params=["sandboxed", "unsandboxed"])
def either(request: pytest.FixtureRequest) -> str:
    """Run the test both ways: with bubblewrap, and without it."""
    request.getfixturevalue(request.param)
    return request.param
