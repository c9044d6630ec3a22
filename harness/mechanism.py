"""Mechanisms: how a lesson's piece joins the loop without growing a branch in it.

Each run makes its mechanisms from the layers of ``agent.stack`` (stack.py) and asks every
one, in order, at each fixed point:

    the run starts        prompt(), tools()        planning: its paragraph, todo_write
    before each request   before_request(msgs)     compaction: what is sent (a new list)
                          tool_choice()            planning: force todo_write (None: no say)
    after each call       after_call(call)         planning: plan_update
    after each round      after_round(calls)       planning: the stale-plan reminder
    on an answer          on_answer(answer)        the stop gate; a refused answer (11)
    for the record        facts(), results()       the stop event's data; the RunResult's
    for every request     pinned()                 the plan: what compaction never drops

It answers with `Note`s, or raises `RunOver` to end the run. It acts on the world only
through ``self.door``, its run's `Door`: a model request (the run's clock, cancel, budget
and events), a file (checked as ``read_file`` checks it), a clock, an event.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from .extend import service

if TYPE_CHECKING:
    from .calls import Call
    from .models import ModelReply
    from .tools import Tool

T = TypeVar("T")


@dataclass(frozen=True)
class Answer:
    """The model answered without tools: what it said, and what the loop knows about it."""

    text: str
    last_turn: bool = False  # no request is left to answer a push back with
    refusal: str | None = None  # a stop hook's reason to refuse it (durable/verify.py)


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


class Door:
    """The services of one run, for its mechanisms; and what they may read of it: the
    agent's id, ``depth`` and model, ``asked`` (``run()``'s plan_first, plan, output), its tools."""

    def __init__(self, run: Any, asked: dict[str, Any]) -> None:
        self._run = run
        self.asked = asked
        self.agent_id = run.agent_id
        self.depth = run.depth
        self.model = run.agent.model  # the agent's (a sub-agent asks it too)

    def ask(self, messages: Iterable[dict], *, purpose: str, model: Any = None) -> ModelReply:
        """A request that is not the agent's turn (a summary), counted and recorded as one;
        `RunOver` when the run must stop, `ModelError` when it failed."""
        return self._run.request(list(messages), [], None, purpose=purpose, model=model)

    def read_file(self, root: Any, path: str, *, limit: int = 1_000_000) -> str:
        files = service("files")  # lent by harness/workspace: the file tools' own checks
        return self.within_clock(lambda: files.read_text(root, path, limit))

    def write_file(self, root: Any, path: str, text: str) -> None:
        files = service("files")
        self.within_clock(lambda: files.write_text(root, path, text))

    def within_clock(self, fn: Callable[[], T]) -> T:  # `RunOver` if the run stops first
        return self._run.control.wait(fn)

    def emit(self, type_: str, **data: Any) -> str | None:
        return self._run.emit(type_, **data)

    def answer(self, text: str) -> None:
        """``text`` as the model's answer (a final-answer tool's: harness/answers/): the
        ``stop`` hooks and each mechanism's on_answer; `RunOver` ends the run, else pushed back."""
        from .models import ModelReply
        self._run.answer(ModelReply(text))

    def run_child(self, child: Any, paused: Any = None) -> Any:  # a sub-agent (subagent.py)
        return self._run.agent.run_child(child, self._run, paused)

    def hold(self, call_id: str, pending: list[dict]) -> None:
        """Call ``call_id`` waits for ``pending``, a sub-agent's calls: so does the run."""
        calls = self._run.calls
        with calls.lock:
            calls.pending += pending
            calls.held.add(call_id)

    def tools(self) -> dict[str, Tool]:
        return dict(self._run.calls.tools)

    def schemas(self) -> list[dict]:  # what each request offers
        return self._run.schemas

    def pinned(self) -> list[str]:
        return [text for m in self._run.mechanisms if (text := m.pinned())]
