"""The agent loop: ask the model, run the tools it asks for, repeat until it answers.

    run(task) -> messages = [system, (earlier turns), user]           run_start event
      loop:
        ask      what is sent, the tool_choice, then the request (budget, clock, events)
        tools?   each call down the one path (calls.py) -> one tool message each
        answer?  a mechanism may push back (the stop gate); otherwise: completed
      until RunOver(outcome) is raised: by the budget, a failed request, the answer
    -> RunResult                                                      run_end event

Messages are plain wire-format dicts; later lessons plug in at fixed points (mechanism.py).
"""

from __future__ import annotations

import json
import threading
import time
import warnings
from collections.abc import Iterable
from functools import partial
from typing import Any

from .calls import CallPath
from .control import RunControl
from .events import TRANSIENT, Event, notify, so_far
from .extend import service
from .hooks import offered
from .mechanism import Answer, Door, Note
from .models import ModelError, ModelReply, ask, copy_message, estimate_tokens, message_chars
from .outcomes import INTERRUPTED, RunOver
from .result import RunResult, usage_of
from .rounds import not_run, play, unique_ids


class Run:
    """One run of an agent: its messages, events and mechanisms. Read top to bottom."""

    def __init__(self, agent: Any, control: RunControl, *, depth: int = 0, sink: Any = None,
                 call_log: Any = None, **asked: Any) -> None:  # plan_first, plan, output
        self.agent = agent
        self.lock = threading.RLock()  # events, hooks, approvals: one at a time (sub-agents')
        self.control = control
        self.depth = depth
        self.agent_id = agent.agent_id
        self.messages: list[dict] = []  # the transcript: every message sent and received
        self.events: list[Event] = []
        watching = [*agent.observers, *([call_log] if call_log else [])]  # replies go in the log
        self.sink = sink or (lambda event: watching and notify(watching, event))
        self.door = Door(self, {"plan_first": False, "plan": [], "output": None, **asked})
        self.mechanisms = [m for layer in agent.stack if (m := layer.make(self.door)) is not None]
        if (output := self.door.asked["output"]) is not None:  # the run's: checked last
            self.mechanisms.append(service("answers")(output))  # (harness/answers/)
        for mechanism in self.mechanisms:  # fresh for this run, from the stack (stack.py)
            mechanism.door = self.door
        tools = {**agent.tools, **{t.name: t for m in self.mechanisms for t in m.tools()}}
        self.calls = CallPath(tools, agent.permissions, self.emit, control, log=call_log,
                              agent_id=self.agent_id, per_reply=agent.max_calls_per_reply,
                              lock=self.lock, depth=depth)
        self.schemas = [t.schema() for t in tools.values()  # fixed from now, without the
                        if offered(agent.permissions, t)]  # tools the permissions deny

    def execute(self, task: str, history: Iterable[dict] = ()) -> RunResult:
        """Run to an outcome; return everything the run produced, however it ended."""
        started, end = time.monotonic(), RunOver("model_error")
        try:
            model = self.agent.model
            prompts = [self.agent.system, *(m.prompt() for m in self.mechanisms)]
            self.messages += [{"role": "system", "content": "\n\n".join(filter(None, prompts))},
                              *history, {"role": "user", "content": task}]
            self.emit("run_start", task=task, tools=list(self.calls.tools),
                      model=getattr(model, "model", None), limits=self.control.budget.limits(),
                      context_window=getattr(model, "context_window", None))
            self.loop()
        except RunOver as over:
            end = over.with_traceback(None)  # its frames would hold this run alive
        except KeyboardInterrupt:  # Kernel -> Interrupt: keep everything, say what happened
            end = RunOver("cancelled", error=INTERRUPTED)
        finally:
            usage = usage_of(self.events)
            self.emit("run_end", outcome=end.outcome, final=end.final, error=end.error,
                      usage=usage, turns=self.control.turns,
                      seconds=round(time.monotonic() - started, 3))
        kept = {k: v for m in self.mechanisms for k, v in m.results().items()}  # plan (04)
        self.mechanisms, self.calls = [], None  # they point back here: no cycle is left over
        return RunResult(end.outcome, end.final, self.messages, self.events, usage,
                         turns=self.control.turns, error=end.error, pending=end.pending, **kept)

    def loop(self) -> None:
        """Ask, run the tools asked for, repeat. The run ends when RunOver is raised."""
        while True:
            reply = self.ask()
            if reply.tool_calls:
                self.run_tools(reply.tool_calls)
            else:
                self.answer(reply)

    def ask(self) -> ModelReply:  # the agent's turn: what is sent, the tool_choice, the request
        sent, choice = self.messages, "auto" if self.schemas else None
        for mechanism in self.mechanisms:  # what is sent: the transcript itself stays whole
            sent = mechanism.before_request(sent)
        for mechanism in self.mechanisms:  # asked once every mechanism has shaped the request
            choice = mechanism.tool_choice() or choice  # forced todo_write (lesson 05)
        return self.request(sent, self.schemas, choice)

    def request(self, sent: list[dict], tools: list[dict], choice: Any, *,
                purpose: str | None = None, model: Any = None) -> ModelReply:
        """One model request, the agent's turn or (``purpose``) a mechanism's (door.ask)."""
        estimate = 0 if self.control.budget.input_tokens is None else estimate_tokens(
            sum(map(message_chars, sent)) + len(json.dumps(tools)))
        self.control.next_turn(estimate, turn=purpose is None)  # cancel, time, budget: stop
        tag = {"purpose": purpose} if purpose else {}
        shaped = {"sent": list(sent)} if sent is not self.messages and not purpose else {}
        self.emit("model_request", turn=self.control.turns, n_messages=len(sent),
                  tool_choice=choice, **tag, **shaped)  # shaped by a mechanism (13)
        report, self.streamed = partial(self.control.relay, self.emit), []  # what came so far
        try:  # with a cancel or a deadline, a request that hangs cannot hold the run
            reply = self.control.wait(lambda: ask(model or self.agent.model, sent, tools,
                                                  choice, report, purpose))
        except ModelError as exc:  # a failed request; a mechanism's says so itself
            raise exc if purpose else RunOver("model_error", error=str(exc)) from None
        except BaseException:  # stopped mid-reply (cancel, time, Interrupt): keep what came
            if self.streamed:
                self.emit("model_partial", **so_far(self.streamed))
            raise
        self.control.budget.spend("input_tokens",  # a count below the estimate is not believed
                                  max(reply.usage.get("prompt_tokens", 0), estimate))
        message = (reply if purpose else unique_ids(self.calls, reply)).message()
        if not purpose:
            self.messages.append(message)
        self.emit("model_reply", message=copy_message(message), usage=reply.usage,
                  finish_reason=reply.finish_reason, reasoning=reply.reasoning,
                  refusal=reply.refusal, **tag)
        return reply

    def run_tools(self, calls: list[dict]) -> None:
        """One round: one tool message a call, in order; some run at once (rounds.py)."""
        start, done = len(self.messages), []
        try:
            for call, ended in play(self.calls, self.control, calls):
                done.append(ended)
                self.tool_message(call, done[-1].result.output)
                for mechanism in self.mechanisms:
                    self.note(mechanism.after_call(done[-1]))  # a plan_update (lesson 04)
        except (RunOver, KeyboardInterrupt) as stop:  # the transcript stays valid: every call
            self.messages += not_run(calls, self.messages[start:], stop)  # gets its one answer
            raise
        for mechanism in self.mechanisms:
            self.note(mechanism.after_round(done))  # the reminder (lesson 05)

    def answer(self, reply: ModelReply) -> None:
        """The model answered without tools: a mechanism may push back, else it is over."""
        text = reply.content or ""
        facts = {key: value for m in self.mechanisms for key, value in m.facts().items()}
        refusal = self.emit("stop", final=text, turns=self.control.turns, **facts)
        if reply.refusal or reply.finish_reason in ("content_filter", "length", "max_tokens"):
            cut = reply.finish_reason in ("length", "max_tokens") and not reply.refusal
            raise RunOver("truncated" if cut else "refused", final=text)  # never "completed"
        for mechanism in self.mechanisms:  # the stop gate (07), a refused answer (11)
            answer = Answer(text, self.control.turns_left() <= 0, refusal)
            if self.note(mechanism.on_answer(answer)):
                return  # pushed back: the next request carries why
        raise RunOver("completed", final=text)

    def tool_message(self, call: dict, content: str) -> None:  # one answer per call id
        self.messages.append({"role": "tool", "tool_call_id": call["id"], "content": content})

    def note(self, notes: Iterable[Note]) -> bool:
        """Do what a mechanism asks: tell the model (a user message), record the event."""
        notes = list(notes)
        for note in notes:
            if note.message:
                self.messages.append({"role": "user", "content": note.message})
            self.emit(note.event, **note.data)
        return bool(notes)

    def emit(self, type_: str, **data: Any) -> str | None:
        """Record an event, show it to observers, run its hooks; return a hook's "no"."""
        event = Event(type_, self.agent_id, self.depth, data, time.time())
        self.forward(event)
        if type_ in TRANSIENT:  # streamed text: for observers, and a stopped reply's record
            return self.streamed.append(data)
        if not self.agent.hooks.listening(type_):
            return None
        fire = partial(self.agent.hooks.fire, event)  # a slow guard or check cannot hold it
        with self.lock:  # hooks run one at a time, as approvals do, whichever call asks
            answer, errors = self.control.wait(fire) if type_ in ("tool_call", "stop") else fire()
        for hook, error in errors:  # a broken hook is reported; the run goes on
            warnings.warn(f"{hook} hook failed: {error}", RuntimeWarning, stacklevel=2)
            if event.type != "hook_error":  # a broken hook_error hook is only warned about
                self.emit("hook_error", hook=hook, error=error)
        return answer

    def forward(self, event: Event) -> None:
        """An event (a sub-agent's too) joins the run's list, and reaches its observers."""
        with self.lock:  # (uncontended unless a round's calls run at once: rounds.py)
            if event.type not in TRANSIENT:
                self.events.append(event)
            self.sink(event)

