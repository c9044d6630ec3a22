"""Waiting that a hung call cannot hold (lesson 09): a run with a deadline or a cancel.

    Agent.run(..., cancel=...) or max_seconds=...  ->  a `ThreadedControl` for the run

The core's `RunControl` (control.py) checks cancel and the deadline between steps: before
each request, before each tool call. That is enough unless one step never ends. With
a deadline or a cancel, `Agent.run` makes a `ThreadedControl` instead, which runs

    a model request, a hook that may answer,  in a daemon thread (`wait`)
    what a mechanism does through its door
    a tool's result turned into text          in a daemon thread, within the time left

and stops waiting as soon as the cancel or the deadline fires: the run ends (or the
model reads that the result could not be read in time), and the thread is left to
finish on its own. A browser tab has no threads: there everything runs inline and is
checked between chunks (browser.py).

Each thread runs in a copy of the caller's context (`contextvars`), as the call would
inline: what the caller set in a ``ContextVar`` (a durable workflow's step counter, the
tracing span a request belongs to) is what the model request, the hook and the result's
own code see. Without it, DBOS did not record a model step made in such a thread, and
its recovery asked the model again from the start.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar

from .. import browser
from ..control import RunControl
from ..extend import Extension, register
from ..outcomes import RunOver

T = TypeVar("T")
SIMPLE = (str, int, float, bool, type(None))  # turned into text at once, nothing to wait for
TOO_LATE = "Error: the tool's result could not be turned into text before the run's time ran out"


@dataclass
class ThreadedControl(RunControl):
    """A `RunControl` whose waits stop as soon as the cancel or the deadline fires."""

    _lock: Any = field(default_factory=threading.Lock, repr=False, compare=False)
    _gave_up: bool = field(default=False, repr=False, compare=False)

    @classmethod
    def from_control(cls, control: RunControl) -> ThreadedControl:
        """The same limits, clock, cancel and budget, waited on so (`Agent.run` asks)."""
        return cls(**{f.name: getattr(control, f.name) for f in fields(RunControl)})

    def wait(self, fn: Callable[[], T]) -> T:
        """Call ``fn()`` in a daemon thread; on cancel or time out stop waiting (raising
        `RunOver`) and let the thread finish on its own."""
        self._gave_up = False
        if (self.cancel is None and self.deadline is None) or browser.IN_BROWSER:
            return fn()  # in a browser, fn's reports (`relay`) check between its chunks
        box: dict[str, Any] = {}

        def target() -> None:
            try:
                box["value"] = fn()
            except BaseException as exc:  # re-raised in the caller's thread
                box["error"] = exc

        worker = _in_context(target)
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

    def relay(self, emit: Callable[..., Any], type_: str | None = None, **data: Any) -> None:
        """As `RunControl.relay`; nothing reaches the run after `wait` has given up."""
        with self._lock:
            if self._gave_up:
                raise RunOver(self.stop_reason() or "cancelled")
            super().relay(emit, type_, **data)

    def text(self, convert: Callable[[Any], str], value: Any) -> str:
        """``convert(value)`` within the time left, when a value's own code could hang."""
        seconds = self.seconds_left()
        if seconds is None or isinstance(value, SIMPLE) or browser.IN_BROWSER:
            return convert(value)
        box: list = []
        worker = _in_context(lambda: box.append(_attempt(convert, value)))
        worker.join(seconds)
        if not box:
            return TOO_LATE
        text, error = box[0]
        if error is not None:
            raise error
        return text


def _in_context(fn: Callable[[], Any]) -> threading.Thread:
    """A daemon thread, started, that runs ``fn()`` in a copy of the caller's context."""
    worker = threading.Thread(target=contextvars.copy_context().run, args=(fn,), daemon=True,
                              name="harness-wait")
    worker.start()
    return worker


def _attempt(convert: Callable[[Any], str], value: Any) -> tuple[str | None, BaseException | None]:
    try:
        return convert(value), None
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        return None, exc


register(Extension("waiting", services={"waiting": ThreadedControl}))
