"""Mechanisms: how a lesson's piece joins the loop without growing a branch in it.

A mechanism is made fresh for each run by a layer of ``agent.stack`` (stack.py); at each
fixed point the loop asks every one, in the stack's order:

    the run starts        prompt(), tools()        planning: its paragraph, todo_write
    before each request   before_request(msgs)     compaction: what is sent (a new list;
                                                   never edit the transcript itself)
                          tool_choice()            planning: force todo_write (None: no say)
    after each call       after_call(call)         planning: plan_update (events only here)
    after each round      after_round(calls)       planning: the stale-plan reminder
    on an answer          on_answer(answer)        the stop gate; a refused answer (11)
    for the record        facts(), results()       the stop event's data; the RunResult's
    for every request     pinned()                 the plan: text compaction never drops

It answers with `Note`s, or raises `RunOver` (outcomes.py) to end the run. It acts on the
world only through ``self.door``, its run's services (door.py), so every guarantee of the
core holds for it. Add yours: ``Agent(..., mechanisms=[Mine])``, or a `stack.Layer`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .calls import Call
    from .door import Door
    from .tools import Tool


@dataclass(frozen=True)
class Answer:
    """The model answered without tools: what it said, and what the loop knows about it."""

    text: str
    last_turn: bool = False  # no request is left to answer a push back with
    refusal: str | None = None  # a stop hook's reason to refuse it (verify.py)


@dataclass
class Note:
    """An event for the loop to record, and maybe a user message the next request carries."""

    event: str
    data: dict[str, Any] = field(default_factory=dict)
    message: str | None = None


class Mechanism:
    """One lesson's piece of the loop: override only the fixed points you need."""

    door: Door

    def prompt(self) -> str:
        return ""

    def tools(self) -> list[Tool]:
        return []

    def before_request(self, messages: list[dict]) -> list[dict]:
        return messages

    def tool_choice(self) -> Any:
        return None

    def after_call(self, call: Call) -> Iterable[Note]:
        return ()

    def after_round(self, calls: list[Call]) -> Iterable[Note]:
        return ()

    def on_answer(self, answer: Answer) -> Iterable[Note]:
        return ()

    def facts(self) -> dict[str, Any]:
        return {}

    def results(self) -> dict[str, Any]:
        return {}

    def pinned(self) -> str | None:
        return None

