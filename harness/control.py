"""Execution control: one budget for the whole run, and a way to stop it.

A run ends for one of these reasons, checked before each model request and before
each tool call:

    cancel.is_set()                  -> "cancelled"        (anything with is_set())
    time.monotonic() > deadline      -> "time_limit"       (max_seconds)
    this agent's requests used up    -> "turn_limit"       (max_turns)
    the run's requests used up       -> "request_limit"    (max_requests)
    the run's tool calls used up     -> "tool_call_limit"  (max_tool_calls)
    the run's input tokens used up   -> "token_limit"      (max_input_tokens)

The last three, the deadline and the cancel belong to the whole run: a sub-agent
spends from the same `Budget` (only its turns are its own), so stopping the parent
stops the child, and 25 delegations cannot turn ``max_turns=2`` into 100 requests.
A tool that works long takes the `RunControl` as an argument (tools.py) and asks it
``stop_reason()`` as it goes. With a deadline or a cancel, `Agent.run` makes a
`harness.waiting.ThreadedControl` instead, whose `wait` a hung request cannot hold.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from .outcomes import RunOver

T = TypeVar("T")
# The run whose tool is running now: an Agent.run started inside a tool joins its budget.
# (Tools themselves get the control by argument; only Agent.run reads this.)
RUNNING: contextvars.ContextVar[RunControl | None] = contextvars.ContextVar("harness_running",
                                                                            default=None)
LIMITS = {"requests": "request_limit", "tool_calls": "tool_call_limit",
          "input_tokens": "token_limit"}


@dataclass
class Budget:
    """What the whole run may spend, shared by every sub-agent (``None``: no limit)."""

    requests: int | None = None
    tool_calls: int | None = None
    input_tokens: int | None = None
    used: dict[str, int] = field(default_factory=lambda: dict.fromkeys(LIMITS, 0))
    exhausted: str | None = None  # once a limit has said no, it says no to every agent

    def __post_init__(self) -> None:
        for name in LIMITS:
            limit = getattr(self, name)
            if limit is not None and limit < 1:
                raise ValueError(f"max_{name} must be at least 1, or None for no limit")

    def check(self, name: str, more: int = 0) -> None:
        """Raise `RunOver` if spending ``more`` of ``name`` would go past its limit, or if
        any limit has been reached before (a sub-agent's included)."""
        limit = getattr(self, name)
        if limit is not None and self.used[name] + max(more, 1) > limit:
            self.exhausted = LIMITS[name]
        if self.exhausted:
            raise RunOver(self.exhausted)

    def spend(self, name: str, amount: int = 1) -> None:
        self.used[name] += amount

    def limits(self) -> dict[str, int | None]:
        return {name: getattr(self, name) for name in LIMITS}


@dataclass
class RunControl:
    """The budget of one (sub-)agent run: its own turns, the run's clock, cancel, budget."""

    max_turns: int
    deadline: float | None = None  # time.monotonic() value, shared with sub-agents
    cancel: Any = None
    budget: Budget = field(default_factory=Budget)  # shared with sub-agents
    turns: int = 0

    @classmethod
    def start(cls, max_turns: int, max_seconds: float | None, cancel: Any,
              budget: Budget | None = None) -> RunControl:
        if cancel is not None and not callable(getattr(cancel, "is_set", None)):
            raise TypeError("cancel must have an is_set() method, e.g. threading.Event()")
        deadline = None if max_seconds is None else time.monotonic() + max_seconds
        return cls(max_turns, deadline, cancel, budget or Budget())

    def child(self, max_turns: int) -> RunControl:
        """A budget for a sub-agent: its own turns; the run's clock, cancel and budget."""
        return type(self)(max_turns, self.deadline, self.cancel, self.budget)

    def stop_reason(self) -> str | None:
        """``"cancelled"`` or ``"time_limit"`` if the run must stop now, else ``None``."""
        if self.cancel is not None and self.cancel.is_set():
            return "cancelled"
        if self.deadline is not None and time.monotonic() >= self.deadline:
            return "time_limit"
        return None

    def check(self) -> None:
        """Raise `RunOver` if the run must stop now."""
        reason = self.stop_reason()
        if reason:
            raise RunOver(reason)

    def next_turn(self, estimate: int = 0) -> None:
        """Before a model request: stop if the run must, or if this agent or the run has
        no request left (or too few input tokens for this one: about ``estimate``)."""
        self.check()
        if self.turns >= self.max_turns:
            raise RunOver("turn_limit")
        self.budget.check("requests")
        if self.budget.input_tokens is not None:  # what this request will cost, about
            self.budget.check("input_tokens", estimate)
        self.turns += 1
        self.budget.spend("requests")

    def before_call(self) -> None:
        """Before a tool call: stop if the run must, or if it has no tool call left."""
        self.check()
        self.budget.check("tool_calls")

    def turns_left(self) -> int:
        """How many more requests this agent may send (its turns, and the run's budget)."""
        left = self.max_turns - self.turns
        if self.budget.requests is not None:
            left = min(left, self.budget.requests - self.budget.used["requests"])
        return left

    def seconds_left(self) -> float | None:
        return None if self.deadline is None else max(0.0, self.deadline - time.monotonic())

    def wait(self, fn: Callable[[], T]) -> T:
        """Call ``fn()`` (a model request, a hook that may answer) and wait for it."""
        return fn()

    def relay(self, emit: Callable[..., Any], type_: str | None = None, **data: Any) -> None:
        """Pass on what a model reports while it answers; with no ``type_`` only check.
        Raises `RunOver` once the run has stopped, so a streaming model closes its stream."""
        self.check()
        if type_ is not None:
            emit(type_, **data)

    def text(self, convert: Callable[[Any], str], value: Any) -> str:
        """``convert(value)``: a tool's result (or error) as the text the model reads."""
        return convert(value)
