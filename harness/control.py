"""Execution control: one budget for the whole run, and a way to stop it.

A run ends for one of these reasons, checked before each model request and before
each tool call:

    cancel.is_set()           -> "cancelled"   (anything with is_set(): threading.Event)
    time.monotonic() > limit  -> "time_limit"  (max_seconds, for the whole run)
    turns == max_turns        -> "turn_limit"  (checked before a model request)

A sub-agent gets its own turn budget but shares the parent's deadline and cancel, so
stopping the parent stops the child too. With a deadline or a cancel, a model request
is waited for in a thread, so a request that hangs cannot hold the run: cancel and
time out still end it within a fraction of a second. Tools that start processes read
the current `RunControl` (`process.py` kills a process when the run stops).
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from .result import RunOver

T = TypeVar("T")

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
    _lock: Any = field(default_factory=threading.Lock, repr=False, compare=False)
    _gave_up: bool = field(default=False, repr=False, compare=False)

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

    def check(self) -> None:
        """Raise `RunOver` if the run must stop now (before a tool call, for instance)."""
        reason = self.stop_reason()
        if reason:
            raise RunOver(reason)

    def next_turn(self) -> None:
        """Before a model request: stop if the run must, or if no turn is left; count it."""
        self.check()
        if self.turns >= self.max_turns:
            raise RunOver("turn_limit")
        self.turns += 1

    def turns_left(self) -> int:
        return self.max_turns - self.turns

    def seconds_left(self) -> float | None:
        return None if self.deadline is None else max(0.0, self.deadline - time.monotonic())

    def wait(self, fn: Callable[[], T]) -> T:
        """Call ``fn()``; with a cancel or a deadline, stop waiting as soon as one fires.

        The call then runs in a daemon thread, so a hung HTTP request cannot hold the
        run: on cancel or time out we stop waiting (raising `RunOver`) and let the thread
        finish on its own. Without either, ``fn`` simply runs here.
        """
        self._gave_up = False
        if self.cancel is None and self.deadline is None:
            return fn()
        box: dict[str, Any] = {}

        def target() -> None:
            try:
                box["value"] = fn()
            except BaseException as exc:  # re-raised in the caller's thread
                box["error"] = exc

        worker = threading.Thread(target=target, daemon=True)
        worker.start()
        try:
            while worker.is_alive():
                worker.join(0.02)
                if worker.is_alive():
                    self.check()
        except BaseException:
            with self._lock:  # from now on, what the worker reports stops it (`relay`)
                self._gave_up = True
            raise
        if "error" in box:
            raise box["error"]
        return box["value"]

    def relay(self, emit: Callable[..., Any], type_: str, **data: Any) -> None:
        """Pass on what a model reports while `wait` runs it (streamed text, a fallback).

        Raises `RunOver` once the run has stopped, so a streaming model closes its
        stream; nothing reaches the run after `wait` has given up on the request.
        """
        with self._lock:
            if self._gave_up:
                raise RunOver(self.stop_reason() or "cancelled")
            self.check()
            emit(type_, **data)

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
