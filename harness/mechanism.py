"""Mechanisms: how a lesson's piece joins the loop without growing a branch in it.

The loop (`loop.py`) has six fixed points. A mechanism is an object made fresh for
each run that may act at any of them; the loop asks every mechanism, in order:

    the run starts        prompt(), tools()        planning: its paragraph, todo_write
                                                   sub-agents: delegate_task
    before each request   before_request(msgs)     what is sent (compaction), the
                                                   transcript itself unchanged
                          tool_choice()            planning: force todo_write
    after each call       after_call(call)         planning: a plan_update event
    after each round      after_round(calls)       planning: the stale-plan reminder
    on an answer          on_answer(answer)        planning: the stop gate
                                                   verification: a refused answer

What a mechanism wants done comes back as `Note`s: an event to record and, if it has
one, a user message that the next request carries. To end the run instead, it raises
`RunOver` (outcomes.py) with the outcome. Pass your own: ``Agent(..., mechanisms=[...])``
takes mechanism classes (or any function of no arguments that makes one), called once
per run.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .calls import Call
from .tools import Tool


@dataclass(frozen=True)
class Answer:
    """The model answered without tools: what it said, and what the loop knows about it."""

    text: str
    last_turn: bool = False  # no request is left to answer a push back with
    refusal: str | None = None  # a stop hook's reason to refuse it (durable/verify.py)


@dataclass
class Note:
    """An event for the loop to record, and maybe a message for the model."""

    event: str
    data: dict[str, Any] = field(default_factory=dict)
    message: str | None = None  # appended as {"role": "user", "content": message}


class Mechanism:
    """One lesson's piece of the loop. Override only the fixed points you need."""

    def prompt(self) -> str:
        """Text added to the system prompt when the run starts."""
        return ""

    def tools(self) -> list[Tool]:
        """Tools this mechanism adds to the run (made fresh for the run)."""
        return []

    def before_request(self, messages: list[dict]) -> list[dict]:
        """The messages the next request sends: ``messages`` (the transcript so far, or
        what a mechanism before this one made of it) or a new list. Never edit the
        transcript itself: the run keeps every message it produced."""
        return messages

    def tool_choice(self) -> Any:
        """The ``tool_choice`` for the next request, or ``None`` for no opinion."""
        return None

    def after_call(self, call: Call) -> Iterable[Note]:
        """After one tool call has its ``tool_result``: events only (no message may come
        between the tool messages of one reply)."""
        return ()

    def after_round(self, calls: list[Call]) -> Iterable[Note]:
        """After every call of one reply has its tool message."""
        return ()

    def on_answer(self, answer: Answer) -> Iterable[Note]:
        """The model answered without tools: a note pushes back, `RunOver` ends the run."""
        return ()

    def facts(self) -> dict[str, Any]:
        """What this mechanism knows that the ``stop`` event should carry."""
        return {}

    def results(self) -> dict[str, Any]:
        """What this mechanism adds to the `RunResult` (``plan``, ``delegations``)."""
        return {}
