"""Execution control, checked before each model request and each tool call: a cancel, the
deadline, this agent's turns, then the run's `Budget` (requests, tool calls, input tokens).
All but the turns belong to the whole run: a sub-agent spends from the same `Budget`.
A run started inside a tool joins its caller only when asked (``Agent.run(within=...)``),
and then the tighter of its own limits and its caller's hold (`RunControl.within`)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .outcomes import RunOver

LIMITS = {"requests": "request_limit", "tool_calls": "tool_call_limit",
          "input_tokens": "token_limit"}
SPENDING = threading.Lock()  # a budget is checked and spent by one thread at a time


@dataclass
class Budget:
    """What the whole run may spend, shared by every sub-agent (``None``: no limit)."""

    requests: int | None = None
    tool_calls: int | None = None
    input_tokens: int | None = None
    used: dict[str, int] = field(default_factory=lambda: dict.fromkeys(LIMITS, 0))
    exhausted: str | None = None  # once a limit has said no, it says no to every agent
    parent: Budget | None = None  # a caller's budget (within=): spent from too

    def check(self, name: str, more: int = 0) -> None:
        """`RunOver` if spending ``more`` of ``name`` passes its limit (or one did before)."""
        limit = getattr(self, name)
        if limit is not None and self.used[name] + max(more, 1) > limit:
            self.exhausted = LIMITS[name]
        if self.exhausted:
            raise RunOver(self.exhausted)
        if self.parent is not None:
            self.parent.check(name, more)

    def spend(self, name: str, amount: int = 1) -> None:
        with SPENDING:
            self._add(name, amount)

    def take(self, name: str, amount: int = 1) -> None:
        """`check` and `spend` as one step: calls and sub-agents running at the same time
        cannot both take the last one."""
        with SPENDING:
            self.check(name, amount)
            self._add(name, amount)

    def _add(self, name: str, amount: int) -> None:
        self.used[name] += amount
        if self.parent is not None:
            self.parent._add(name, amount)

    def limits(self) -> dict[str, int | None]:
        return {name: getattr(self, name) for name in LIMITS}


@dataclass
class RunControl:
    """One (sub-)agent's turns, and the run's clock, cancel and budget (a long tool asks it
    ``stop_reason()`` as it goes)."""

    max_turns: int
    deadline: float | None = None  # a time.monotonic() value
    cancel: Any = None  # anything with is_set()
    budget: Budget = field(default_factory=Budget)
    turns: int = 0

    @classmethod
    def start(cls, max_turns: int, max_seconds: float | None, cancel: Any,
              budget: Budget | None = None) -> RunControl:
        if cancel is not None and not callable(getattr(cancel, "is_set", None)):
            raise TypeError("cancel must have an is_set() method, e.g. threading.Event()")
        deadline = None if max_seconds is None else time.monotonic() + max_seconds
        return cls(max_turns, deadline, cancel, budget or Budget())

    def child(self, max_turns: int) -> RunControl:
        """A sub-agent's: its own turns, the run's clock, cancel and budget."""
        return type(self)(max_turns, self.deadline, self.cancel, self.budget)

    def within(self, caller: RunControl) -> RunControl:
        """This control joined to ``caller``'s run: the earlier deadline, either cancel,
        and this budget spending from the caller's too."""
        deadlines = [d for d in (self.deadline, caller.deadline) if d is not None]
        cancels = [c for c in (self.cancel, caller.cancel) if c is not None]
        self.deadline = min(deadlines, default=None)
        self.cancel = Either(*cancels) if len(cancels) == 2 else next(iter(cancels), None)
        self.budget.parent = caller.budget
        return self

    def stop_reason(self) -> str | None:
        """``"cancelled"`` or ``"time_limit"`` if the run must stop now, else ``None``."""
        if self.cancel is not None and self.cancel.is_set():
            return "cancelled"
        if self.deadline is not None and time.monotonic() >= self.deadline:
            return "time_limit"
        return None

    def check(self) -> None:
        if reason := self.stop_reason():
            raise RunOver(reason)

    def next_turn(self, estimate: int = 0, *, turn: bool = True) -> None:
        """Before a model request of about ``estimate`` input tokens: stop, or count it
        (``turn=False``: a request that is not this agent's turn spends only the budget)."""
        self.check()
        if turn and self.turns >= self.max_turns:
            raise RunOver("turn_limit")
        with SPENDING:  # sub-agents running at the same time: one takes the last request
            self.budget.check("requests")
            self.budget.check("input_tokens", estimate)
            self.budget._add("requests", 1)
        self.turns += turn

    def before_call(self) -> None:
        """Before a tool call: stop if the run must, or if it has no tool call left."""
        self.check()
        self.budget.check("tool_calls")

    def turns_left(self) -> int:  # this agent's turns, within the run's requests
        limit, used = self.budget.requests, self.budget.used["requests"]
        return min(self.max_turns - self.turns, self.max_turns if limit is None else limit - used)

    def seconds_left(self) -> float | None:
        return None if self.deadline is None else max(0.0, self.deadline - time.monotonic())

    # Waiting, here inline: harness.waiting.ThreadedControl (a run with a deadline or a
    # cancel) stops waiting as soon as either fires.
    def wait(self, fn: Callable[[], Any]) -> Any:  # a model request, a hook that may answer
        return fn()

    def relay(self, emit: Callable[..., Any], type_: str | None = None, **data: Any) -> None:
        """Pass on what a model reports as it answers; `RunOver` once the run has stopped."""
        self.check()
        if type_ is not None:
            emit(type_, **data)

    def text(self, convert: Callable[[Any], str], value: Any) -> str:  # a tool's result
        return convert(value)


@dataclass(frozen=True)
class Either:
    """Two cancels as one: set when either is."""

    first: Any
    second: Any

    def is_set(self) -> bool:
        return self.first.is_set() or self.second.is_set()
