"""The agent loop: ask the model, run the tools it asks for, repeat until it answers.

    run(task) -> messages = [system, user] -> user_prompt_submit hook
      loop, while the budget lasts (turns, seconds, cancel):
        tool_choice = todo_write if forced, else "auto"
        reply = model.complete(messages, tools, tool_choice)
        messages += the assistant message, exactly as the model sent it
        no tool calls -> stop hook, plan gate -> outcome
        each call: lookup -> validate -> pre_tool_use -> permissions -> execute
                   -> post_tool_use -> {"role": "tool", "tool_call_id", "content"}
        reminder after the round -> maybe a user message
    -> RunResult

Every message is a plain dict in the OpenAI wire format: what you see in
``result.messages`` is exactly what the model was sent.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from itertools import count
from typing import Any

from .control import RunControl, Stopped, wait
from .events import Event
from .hooks import Hooks, Permissions
from .models import ChatModel, ModelError, ModelReply
from .reminder import Reminder, forced, stop_gate_text
from .result import OUTCOMES, RunResult, add_usage, empty_usage
from .subagent import SUBAGENT_SYSTEM, Delegation, delegate_tool
from .todo import PLANNING_PROMPT, TodoList
from .tools import Tool, ToolArgumentError, ToolResult

__all__ = ["OUTCOMES", "Agent", "RunResult"]

DEFAULT_SYSTEM = ("You are a helpful assistant. Use the tools when they help, "
                  "and answer from what they return.")
HARNESS_TOOLS = ("todo_write", "delegate_task")


class Agent:
    """A model, its tools, and the rules of the loop. ``run()`` may be called many times.

    >>> agent = Agent(ScriptedModel([{"content": "Hello!"}]))
    >>> agent.run("Say hello").final
    'Hello!'
    """

    def __init__(
        self,
        model: ChatModel,
        tools: Iterable[Tool] = (),
        *,
        system: str | None = None,
        max_turns: int = 10,
        max_seconds: float | None = None,
        hooks: Hooks | None = None,
        permissions: Permissions | None = None,
        planning: bool = False,
        reminder_after: int = 3,
        reminder_counting: str = "success",
        subagents: bool = False,
        subagent_tools: Sequence[str] = (),
        subagent_max_turns: int = 10,
        observers: Iterable[Any] = (),
        agent_id: str = "main",
    ) -> None:
        self.model = model
        self.tools: dict[str, Tool] = {}
        for t in tools:
            if not isinstance(t, Tool):
                raise TypeError(f"{t!r} is not a Tool: decorate the function with @tool")
            if t.name in self.tools:
                raise ValueError(f"two tools are named {t.name!r}; tool names must be unique")
            self.tools[t.name] = t
        for name, switch in (("todo_write", planning), ("delegate_task", subagents)):
            if switch and name in self.tools:
                raise ValueError(f"{name} is created by the harness for every run when "
                                 f"{'planning' if name == 'todo_write' else 'subagents'}=True; "
                                 f"do not register a tool of that name yourself")
        if max_turns < 1 or subagent_max_turns < 1:
            raise ValueError("max_turns and subagent_max_turns must be at least 1")
        unknown = [n for n in subagent_tools if n not in self.tools]
        if unknown:
            raise ValueError(f"subagent_tools names unknown tools {unknown}; "
                             f"known: {sorted(self.tools)}")
        self.system = system or DEFAULT_SYSTEM
        self.max_turns, self.max_seconds = max_turns, max_seconds
        self.hooks, self.permissions = hooks or Hooks(), permissions
        self.planning, self.subagents = planning, subagents
        self.reminder_after, self.reminder_counting = reminder_after, reminder_counting
        Reminder(reminder_after, reminder_counting)  # fail now on a bad setting, not mid-run
        self.subagent_tools, self.subagent_max_turns = tuple(subagent_tools), subagent_max_turns
        self.observers = list(observers)
        self.agent_id = agent_id

    def run(self, task: str, *, cancel: Any = None, plan_first: bool = False) -> RunResult:
        """Run one task to an outcome. Always returns a `RunResult`, whatever happened."""
        if plan_first and not self.planning:
            raise ValueError("plan_first=True forces a todo_write call, and todo_write exists "
                             "only with Agent(..., planning=True)")
        control = RunControl.start(self.max_turns, self.max_seconds, cancel)
        return _Run(self, control, plan_first=plan_first).execute(task)


class _Run:
    """The state of one run: messages, events, usage, plan. Read top to bottom."""

    def __init__(self, agent: Agent, control: RunControl, *, plan_first: bool = False,
                 depth: int = 0, agent_id: str | None = None,
                 sink: Callable[[Event], None] | None = None) -> None:
        self.agent, self.control, self.depth = agent, control, depth
        self.agent_id = agent_id or agent.agent_id
        self.sink = sink or self._notify_observers
        self.messages: list[dict] = []
        self.events: list[Event] = []
        self.usage = empty_usage()
        self.delegations: list[Delegation] = []
        self.used_call_ids: set[str] = set()
        self.pushbacks = 0
        self.tools = dict(agent.tools)  # the catalogue is fixed when the run starts
        self.plan = TodoList() if agent.planning else None
        self.reminder = None
        if self.plan is not None:
            self.reminder = Reminder(agent.reminder_after, agent.reminder_counting)
            self.tools["todo_write"] = self.plan.as_tool()
            self.plan.subscribe(self._on_plan_update)
        if agent.subagents and depth == 0:
            self.tools["delegate_task"] = delegate_tool(self._run_subagent)
            self._child_ids = count(1)
        self.schemas = [t.schema() for t in self.tools.values()]
        self.force_next = plan_first and self.plan is not None

    # -- the story of a run ---------------------------------------------------------

    def execute(self, task: str) -> RunResult:
        start = time.monotonic()
        outcome, final, error = "model_error", None, None
        try:
            with self.control.active():
                self.messages += [{"role": "system", "content": self._system_prompt()},
                                  {"role": "user", "content": task}]
                self._fire("user_prompt_submit", self.emit("run_start", task=task))
                outcome, final, error = self._loop()
        except KeyboardInterrupt:  # Kernel -> Interrupt: keep everything, say what happened
            outcome, error = "cancelled", "interrupted (KeyboardInterrupt)"
            if self.depth > 0:
                raise  # a sub-agent: the interrupt is meant for the whole run
        finally:
            self.emit("run_end", outcome=outcome, final=final, error=error,
                      usage=dict(self.usage), turns=self.control.turns,
                      seconds=round(time.monotonic() - start, 3))
        return RunResult(outcome, final, self.messages, self.events, dict(self.usage),
                         self.plan.snapshot() if self.plan is not None else [], self.delegations,
                         self.control.turns, error)

    def _loop(self) -> tuple[str, str | None, str | None]:
        while True:
            stop = self.control.stop_reason()
            if stop:
                return stop, None, None
            if self.control.turns >= self.control.max_turns:
                return "turn_limit", None, None
            try:
                reply = self._query()
            except ModelError as exc:
                return "model_error", None, str(exc)
            except Stopped as stop:  # cancel or time out while the model was thinking
                return stop.reason, None, None
            if not reply.tool_calls:
                outcome = self._on_answer(reply.content or "")
                if outcome:
                    return outcome, reply.content or "", None
                continue
            stop = self._tool_round(reply.tool_calls)
            if stop:
                return stop, None, None

    def _query(self) -> ModelReply:
        """One model request: pick tool_choice, send, record the reply in the transcript."""
        choice = forced("todo_write") if self.force_next else ("auto" if self.schemas else None)
        self.force_next = False
        self.control.turns += 1
        self.emit("model_request", turn=self.control.turns, n_messages=len(self.messages),
                  tool_choice=choice)
        try:
            reply = wait(self.control, lambda: self.agent.model.complete(
                self.messages, self.schemas, choice))
        except (ModelError, Stopped):
            raise
        except Exception as exc:  # a model object that raised something else: same outcome
            raise ModelError(f"{type(exc).__name__}: {exc}") from exc
        add_usage(self.usage, reply.usage)
        message = reply.message()
        self.emit("model_reply", message=message, usage=reply.usage)
        self.messages.append(message)
        return reply

    def _on_answer(self, text: str) -> str | None:
        """The model answered without tools: finish, or push back once on an open plan."""
        open_items = [i.content for i in self.plan.open_items()] if self.plan is not None else []
        event = self.emit("stop", final=text, open_items=open_items, pushbacks=self.pushbacks,
                          turns=self.control.turns)
        self._fire("stop", event)
        if not open_items:
            return "completed"
        if self.pushbacks >= 1:
            return "open_items"
        self.pushbacks += 1
        self.messages.append({"role": "user", "content": stop_gate_text(open_items)})
        self.emit("stop_gate", open_items=open_items)
        return None

    def _tool_round(self, calls: list[dict]) -> str | None:
        """Run every call of one reply, in order; each gets exactly one tool message."""
        names, plan_updated, start = [], False, len(self.messages)
        for call in calls:
            stop = self.control.stop_reason()
            if stop:
                self._answer_missing(calls, start, f"Not run: the run stopped ({stop}).")
                return stop
            name = call["function"]["name"]
            try:
                result, ran = self._call_tool(call)
            except KeyboardInterrupt:  # the running call started: its result is unknown
                self._answer_missing([call], start, "Interrupted while running "
                                     "(KeyboardInterrupt): its result is unknown.")
                self._answer_missing(calls, start, "Not run: interrupted (KeyboardInterrupt).")
                raise
            names.append(name)
            plan_updated = plan_updated or (name == "todo_write" and result.ok)
            if name == "delegate_task" and ran:
                self.force_next = self.plan is not None
        if self.reminder is not None:
            text = self.reminder.after_round(names, plan_updated)
            if text:
                self.messages.append({"role": "user", "content": text})
                self.emit("reminder", text=text, rounds=self.reminder.after)
        return None

    def _call_tool(self, call: dict) -> tuple[ToolResult, bool]:
        """The one path every call takes: lookup, validate, hooks, permissions, execute.

        Returns the result and whether the tool really ran.
        """
        name, raw, call_id = call["function"]["name"], call["function"]["arguments"], call["id"]
        tool, args, status = self.tools.get(name), None, "ok"
        if call_id in self.used_call_ids:
            result, status = ToolResult(False, f"Error: call id {call_id!r} was already used; "
                                        "it is not run twice."), "duplicate_id"
        elif tool is None:
            result, status = ToolResult(False, f"Error: unknown tool '{name}'. Available: "
                                        f"{', '.join(self.tools) or 'none'}."), "unknown_tool"
        elif not tool.enabled:
            result, status = ToolResult(False, f"Error: tool '{name}' is switched off."), "disabled"
        else:
            try:
                args = tool.parse(raw)
                result = None
            except ToolArgumentError as exc:
                result, status = ToolResult(False, f"Error: {exc}"), "invalid_arguments"
        self.used_call_ids.add(call_id)
        arguments = args.model_dump(mode="json") if args is not None else raw
        event = self.emit("tool_call", call_id=call_id, tool_name=name, arguments=arguments)
        if result is None:
            block = self._pre_tool_use(event, name, arguments)
            if block:
                result, status = ToolResult(False, block), "blocked"
            else:
                result = tool.execute(args)
                status = "ok" if result.ok else "error"
        done = self.emit("tool_result", call_id=call_id, tool_name=name, ok=result.ok,
                         output=result.output, status=status)
        ran = status in ("ok", "error")
        if ran:
            self._fire("post_tool_use", done)
        self._tool_message(call, result.output)
        return result, ran

    def _pre_tool_use(self, event: Event, name: str, arguments: dict) -> str | None:
        """Hooks first, then the permission table. A string means: blocked, and why."""
        block = self._fire("pre_tool_use", event)
        if block:
            return block
        perms = self.agent.permissions
        if perms is None or (name in HARNESS_TOOLS and name not in perms.rules):
            return None
        if perms.decide(name) != "ask":
            return perms.check(name, arguments)
        self.emit("approval_request", tool_name=name, arguments=arguments)
        reason = perms.check(name, arguments)
        self.emit("approval_result", tool_name=name, approved=reason is None)
        return reason

    def _answer_missing(self, calls: list[dict], start: int, content: str) -> None:
        """Give every call still unanswered a tool message, so the transcript stays valid."""
        answered = {m.get("tool_call_id") for m in self.messages[start:]}
        for call in calls:
            if call["id"] not in answered:
                self._tool_message(call, content)

    def _tool_message(self, call: dict, content: str) -> None:
        self.messages.append({"role": "tool", "tool_call_id": call["id"], "content": content})

    # -- planning and delegation ----------------------------------------------------

    def _system_prompt(self) -> str:
        if self.plan is None:
            return self.agent.system
        return f"{self.agent.system}\n\n{PLANNING_PROMPT}"

    def _on_plan_update(self, snapshot: list, changes: dict) -> None:
        self.emit("plan_update", todos=[i.model_dump() for i in snapshot], **changes)

    def _run_subagent(self, task: str) -> Delegation:
        """Run a child agent on ``task`` alone: fresh messages, tool subset, shared rules."""
        parent = self.agent
        child_id = f"{self.agent_id}.sub{next(self._child_ids)}"
        child_agent = Agent(
            parent.model, [parent.tools[n] for n in parent.subagent_tools],
            system=SUBAGENT_SYSTEM, max_turns=parent.subagent_max_turns,
            hooks=parent.hooks, permissions=parent.permissions, agent_id=child_id,
        )
        self.emit("subagent_start", child_id=child_id, task=task)
        started = time.monotonic()
        child = _Run(child_agent, self.control.child(parent.subagent_max_turns),
                     depth=self.depth + 1, sink=self._forward)
        result = child.execute(task)
        add_usage(self.usage, result.usage)
        answer = result.final or _last_text(result.messages) or result.error
        done = Delegation(child_id, task, result.outcome, answer, dict(result.usage),
                          sum(e.type == "tool_call" for e in result.events),
                          round(time.monotonic() - started, 3))
        self.delegations.append(done)
        self._fire("subagent_stop", self.emit("subagent_end", **done.to_dict()))
        return done

    def _fire(self, name: str, event: Event) -> str | None:
        """Run the hooks of ``name``; a hook that raises never takes the run down.

        It is reported as a ``hook_error`` event and a warning, and the run goes on;
        a failed ``pre_tool_use`` guard also blocks its call (it fails closed).
        """
        try:
            return self.agent.hooks.fire(name, event)
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            self.emit("hook_error", hook=name, error=error)
            warnings.warn(f"{name} hook failed: {error}", RuntimeWarning, stacklevel=2)
            if name == "pre_tool_use":
                return f"Blocked: a pre_tool_use hook failed ({error})."
            return None

    # -- events -----------------------------------------------------------------------

    def emit(self, type_: str, **data: Any) -> Event:
        event = Event(type_, self.agent_id, self.depth, data)
        self.events.append(event)
        self.sink(event)
        return event

    def _forward(self, event: Event) -> None:
        """Events from a sub-agent join this run's list (and reach its observers)."""
        self.events.append(event)
        self.sink(event)

    def _notify_observers(self, event: Event) -> None:
        """Observers watch; a broken one is reported, and never changes the run."""
        for observer in self.agent.observers:
            try:
                (observer.on_event if hasattr(observer, "on_event") else observer)(event)
            except Exception as exc:
                warnings.warn(f"observer {observer!r} failed on a {event.type!r} event: "
                              f"{type(exc).__name__}: {exc}", RuntimeWarning, stacklevel=2)


def _last_text(messages: list[dict]) -> str | None:
    for message in reversed(messages):
        if message["role"] == "assistant" and message.get("content"):
            return message["content"]
    return None
