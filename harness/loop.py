"""The agent loop: ask the model, run the tools it asks for, repeat until it answers.

    run(task) -> messages = [system, user]                            run_start event
      loop:
        ask      the budget, the tool_choice -> model.complete(messages, tools, tool_choice)
                 messages += the assistant message, exactly as the model sent it
        tools?   each call down the one path (calls.py) -> one tool message each
                 after the round, a mechanism may add a message (the reminder)
        answer?  a mechanism may push back (the stop gate); otherwise: completed
      until RunOver(outcome) is raised: by the budget, a failed request, the answer
    -> RunResult                                                      run_end event

Every message is a plain dict in the OpenAI wire format: what you see in
``result.messages`` is exactly what the model was sent. Later lessons add mechanisms
(planning, sub-agents) that the loop calls at fixed points (mechanism.py), so this
loop reads the same from lesson 01 to lesson 08. `Agent` (agent.py) holds the settings;
each ``agent.run(task)`` is one `Run`.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Iterable
from functools import partial
from typing import TYPE_CHECKING, Any

from .calls import CallPath
from .control import RunControl
from .events import TRANSIENT, Event, notify
from .mechanism import Mechanism, Note
from .models import ModelError, ModelReply, Transcript, ask, copy_message
from .planning import Planning
from .result import RunOver, RunResult, usage_of
from .subagent import INTERRUPTED, Child, Delegation, Subagents

if TYPE_CHECKING:
    from .agent import Agent

UNKNOWN = "Interrupted while running (KeyboardInterrupt): its result is unknown."

class Run:
    """One run of an agent: its messages, events and mechanisms. Read top to bottom."""

    def __init__(self, agent: Agent, control: RunControl, *, depth: int = 0,
                 sink: Any = None, plan_first: bool = False) -> None:
        self.agent, self.control, self.depth = agent, control, depth
        self.agent_id = agent.agent_id
        self.messages: list[dict] = Transcript()
        self.events: list[Event] = []
        self.sink = sink or (lambda event: agent.observers and notify(agent.observers, event))
        self.mechanisms: list[Mechanism] = []
        if agent.planning:
            self.mechanisms.append(Planning(agent.reminder_after, agent.reminder_counting,
                                            plan_first=plan_first))
        if agent.subagents and depth == 0:  # a sub-agent never delegates again
            self.mechanisms.append(Subagents([agent.tools[n] for n in agent.subagent_tools],
                                             agent.subagent_max_turns, self.run_child,
                                             self.agent_id))
        tools = {**agent.tools, **{t.name: t for m in self.mechanisms for t in m.tools()}}
        self.schemas = [t.schema() for t in tools.values()]  # fixed when the run starts
        self.calls = CallPath(tools, agent.permissions, self.emit)

    def execute(self, task: str) -> RunResult:
        """Run to an outcome and return everything the run produced, however it ended."""
        started, end = time.monotonic(), RunOver("model_error")
        try:
            with self.control.active():
                prompts = [self.agent.system, *(m.prompt() for m in self.mechanisms)]
                self.messages += [{"role": "system", "content": "\n\n".join(filter(None, prompts))},
                                  {"role": "user", "content": task}]
                self.emit("run_start", task=task)
                self.loop()
        except RunOver as over:
            end = over
        except KeyboardInterrupt:  # Kernel -> Interrupt: keep everything, say what happened
            end = RunOver("cancelled", error=INTERRUPTED)
        finally:
            usage = usage_of(self.events)
            self.emit("run_end", outcome=end.outcome, final=end.final, error=end.error,
                      usage=usage, turns=self.control.turns,
                      seconds=round(time.monotonic() - started, 3))
        planning, subagents = self._find(Planning), self._find(Subagents)
        return RunResult(end.outcome, end.final, self.messages, self.events, usage,
                         planning.plan.snapshot() if planning else [],
                         subagents.delegations if subagents else [], self.control.turns,
                         end.error)

    def loop(self) -> None:
        """Ask, run the tools asked for, repeat. The run ends when RunOver is raised."""
        while True:
            reply = self.ask()
            if reply.tool_calls:
                self.run_tools(reply.tool_calls)
            else:
                self.answer(reply)

    def ask(self) -> ModelReply:
        """One model request: check the budget, pick the tool_choice, record the reply."""
        self.control.next_turn()  # cancelled, time_limit or turn_limit end the run here
        choice = "auto" if self.schemas else None
        for mechanism in self.mechanisms:
            choice = mechanism.tool_choice() or choice  # forced todo_write (lesson 05)
        self.emit("model_request", turn=self.control.turns, n_messages=len(self.messages),
                  tool_choice=choice)
        report = partial(self.control.relay, self.report)  # streamed text, a fallback
        try:
            reply = self.control.wait(
                lambda: ask(self.agent.model, self.messages, self.schemas, choice, report))
        except (RunOver, KeyboardInterrupt):
            raise
        except BaseException as exc:  # a failed request, a model object that raised or exited
            error = str(exc) if isinstance(exc, ModelError) else f"{type(exc).__name__}: {exc}"
            raise RunOver("model_error", error=error) from None
        message = reply.message()
        self.emit("model_reply", message=copy_message(message), usage=reply.usage,
                  finish_reason=reply.finish_reason)
        self.messages.append(message)
        return reply

    def run_tools(self, calls: list[dict]) -> None:
        """One round: every call in order, each answered by exactly one tool message."""
        start, done = len(self.messages), []
        try:
            for call in calls:
                self.control.check()  # cancelled or time_limit: the rest are not run
                done.append(self.calls.run(call))
                self.tool_message(call, done[-1].result.output)
                for mechanism in self.mechanisms:
                    self.note(mechanism.after_call(done[-1]))  # a plan_update (lesson 04)
        except RunOver as over:
            self.answer_missing(calls, start, f"Not run: the run stopped ({over.outcome}).")
            raise
        except KeyboardInterrupt:  # the call that was running has an unknown result
            self.answer_missing(calls, start, UNKNOWN, "Not run: interrupted (KeyboardInterrupt).")
            raise
        for mechanism in self.mechanisms:
            self.note(mechanism.after_round(done))  # the reminder (lesson 05)

    def answer(self, reply: ModelReply) -> None:
        """The model answered without tools: a mechanism may push back, else it is over."""
        text = reply.content or ""
        facts = {key: value for m in self.mechanisms for key, value in m.facts().items()}
        self.emit("stop", final=text, turns=self.control.turns, **facts)
        if reply.refusal or reply.finish_reason == "length":  # never a silent "completed"
            raise RunOver("refused" if reply.refusal else "truncated", final=text)
        last_turn = self.control.turns_left() == 0
        for mechanism in self.mechanisms:
            if self.note(mechanism.on_answer(text, last_turn)):  # the stop gate (lesson 07)
                return  # pushed back: the next request carries why
        raise RunOver("completed", final=text)

    # -- what the loop does for the steps above ------------------------------------------

    def tool_message(self, call: dict, content: str) -> None:
        self.messages.append({"role": "tool", "tool_call_id": call["id"], "content": content})

    def answer_missing(self, calls: list[dict], start: int, first: str,
                       rest: str | None = None) -> None:
        """Answer every call of the round still unanswered, so the transcript stays valid."""
        answered = sum(m["role"] == "tool" for m in self.messages[start:])
        for i, call in enumerate(calls[answered:]):
            self.tool_message(call, rest if rest and i else first)

    def note(self, notes: Iterable[Note]) -> bool:
        """Do what a mechanism asks: tell the model (a user message), record the event."""
        count = 0
        for note in notes:
            if note.message:
                self.messages.append({"role": "user", "content": note.message})
            self.emit(note.event, **note.data)
            count += 1
        return count > 0

    def emit(self, type_: str, **data: Any) -> str | None:
        """Record an event, show it to the observers, run the hooks that listen to it.

        Returns a hook's answer: a string from ``pre_tool_use`` blocks the call.
        """
        event = Event(type_, self.agent_id, self.depth, data)
        self.events.append(event)
        self.sink(event)
        answer, errors = self.agent.hooks.fire(event)
        for hook, error in errors:  # a broken hook is reported; the run goes on
            warnings.warn(f"{hook} hook failed: {error}", RuntimeWarning, stacklevel=2)
            self.emit("hook_error", hook=hook, error=error)
        return answer

    def report(self, type_: str, **data: Any) -> None:
        """What the model tells while it answers: streamed pieces reach the observers only
        (the model_reply event keeps the whole reply); anything else is an event."""
        if type_ in TRANSIENT:
            self.sink(Event(type_, self.agent_id, self.depth, data))
        else:
            self.emit(type_, **data)

    def forward(self, event: Event) -> None:
        """A sub-agent's events join this run's list, and reach its observers."""
        if event.type not in TRANSIENT:
            self.events.append(event)
        self.sink(event)

    def run_child(self, child: Child) -> Delegation:
        """Run a sub-agent inside this run. subagent.py chose what it gets; it keeps this
        run's model, hooks, permissions, clock and cancel, and its events join ours."""
        self.emit("subagent_start", child_id=child.agent_id, task=child.task)
        result = Run(self.agent.for_child(child), self.control.child(child.max_turns),
                     depth=self.depth + 1, sink=self.forward).execute(child.task)
        done = child.record(result)
        self.emit("subagent_end", **done.to_dict())
        return done

    def _find(self, kind: type) -> Any:
        return next((m for m in self.mechanisms if isinstance(m, kind)), None)

