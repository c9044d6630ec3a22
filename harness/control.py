"""Execution control: one budget for the whole run, and a way to stop it.

A run ends for one of these reasons, checked before each model request and before
each tool call:

    cancel.is_set()           -> "cancelled"   (anything with is_set(): threading.Event)
    time.monotonic() > limit  -> "time_limit"  (max_seconds, for the whole run)
    turns == max_turns        -> "turn_limit"  (checked before a model request)

A sub-agent gets its own turn budget but shares the parent's deadline and cancel, so
stopping the parent stops the child too. Tools that run for a while (``run_shell``,
command templates) read the current `RunControl` to stop early and kill their
children.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

_current: contextvars.ContextVar[RunControl | None] = contextvars.ContextVar(
    "harness_run_control", default=None
)


@dataclass
class RunControl:
    """The budget of one (sub-)agent run."""

    max_turns: int
    deadline: float | None = None  # time.monotonic() value, shared with sub-agents
    cancel: Any = None
    turns: int = 0

    @classmethod
    def start(cls, max_turns: int, max_seconds: float | None, cancel: Any) -> RunControl:
        if max_turns < 1:
            raise ValueError("max_turns must be at least 1")
        if cancel is not None and not callable(getattr(cancel, "is_set", None)):
            raise TypeError("cancel must have an is_set() method, e.g. threading.Event()")
        deadline = None if max_seconds is None else time.monotonic() + max_seconds
        return cls(max_turns, deadline, cancel)

    def child(self, max_turns: int) -> RunControl:
        """A budget for a sub-agent: its own turns, the parent's clock and cancel."""
        return RunControl(max_turns, self.deadline, self.cancel)

    def stop_reason(self) -> str | None:
        """``"cancelled"`` or ``"time_limit"`` if the run must stop now, else ``None``."""
        if self.cancel is not None and self.cancel.is_set():
            return "cancelled"
        if self.deadline is not None and time.monotonic() >= self.deadline:
            return "time_limit"
        return None

    def seconds_left(self) -> float | None:
        return None if self.deadline is None else max(0.0, self.deadline - time.monotonic())

    @contextmanager
    def active(self) -> Iterator[RunControl]:
        """Make this the `current()` control while a run executes."""
        token = _current.set(self)
        try:
            yield self
        finally:
            _current.reset(token)


def current() -> RunControl | None:
    """The control of the run whose tool is executing now (``None`` outside a run)."""
    return _current.get()
