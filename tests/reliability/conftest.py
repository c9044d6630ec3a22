"""Every run in this folder is checked: each transcript, sub-agents' included, must be valid.

The check wraps the loop's run object, so a sub-agent's own conversation is checked
as well as the parent's, and a test cannot forget to call it. The fixtures
``sandboxed``, ``unsandboxed`` and ``either`` (containment.py) run a test with the
tool sandbox, without it, or both ways.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from harness import loop

from .containment import either, sandboxed, unsandboxed  # noqa: F401 (fixtures, by name)
from .file_tools import outside  # noqa: F401 (a fixture, by name)
from .transcript import assert_valid_transcript


@pytest.fixture(autouse=True)
def every_transcript_is_valid(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    execute = loop.Run.execute

    def checked(self: loop.Run, task: str, history: list = ()) -> loop.RunResult:
        result = execute(self, task, history)
        assert_valid_transcript(result.messages)
        return result

    monkeypatch.setattr(loop.Run, "execute", checked)
    yield
