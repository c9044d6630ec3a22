"""`Agent`: a model, its tools, and the rules of the loop, checked once when it is made.

    agent = Agent(model, tools, max_turns=10, planning=True, permissions=...)
    result = agent.run("the task")           # a fresh Run each time (loop.py)

Everything a run may need is a setting here; nothing here changes while a run goes on.
Each ``run()`` makes a new `Run` with fresh state (messages, plan, reminder count).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from .calllog import CallLog
from .control import Budget, RunControl
from .hooks import Hooks, Permissions
from .loop import Run
from .mechanism import Mechanism
from .models import ChatModel
from .planning import Planning
from .reminder import Reminder
from .result import RunResult
from .subagent import Child, RunChild, Subagents
from .tools import Tool
from .verify import Verification

DEFAULT_SYSTEM = ("You are a helpful assistant. Use the tools when they help, "
                  "and answer from what they return.")


class Agent:
    """A model, its tools, and the rules of the loop. ``run()`` may be called many times.

    >>> agent = Agent(ScriptedModel([say("Hello!")]))
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
        max_requests: int | None = 50,
        max_tool_calls: int | None = 100,
        max_calls_per_reply: int | None = 10,
        max_input_tokens: int | None = None,
        max_refusals: int = 2,
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
        for name, switch, on in (("todo_write", "planning", planning),
                                 ("delegate_task", "subagents", subagents)):
            if on and name in self.tools:
                raise ValueError(f"{name} is created by the harness for every run when "
                                 f"{switch}=True; do not register a tool of that name yourself")
        if max_turns < 1 or subagent_max_turns < 1:
            raise ValueError("max_turns and subagent_max_turns must be at least 1")
        unknown = [n for n in subagent_tools if n not in self.tools]
        if unknown:
            raise ValueError(f"subagent_tools names unknown tools {unknown}; "
                             f"known: {sorted(self.tools)}")
        Reminder(reminder_after, reminder_counting)  # fail now on a bad setting, not mid-run
        Budget(max_requests, max_tool_calls, max_input_tokens)
        Verification(max_refusals)
        if max_calls_per_reply is not None and max_calls_per_reply < 1:
            raise ValueError("max_calls_per_reply must be at least 1, or None for no limit")
        self.max_requests, self.max_tool_calls = max_requests, max_tool_calls
        self.max_input_tokens = max_input_tokens
        self.max_calls_per_reply, self.max_refusals = max_calls_per_reply, max_refusals
        self.system = system or DEFAULT_SYSTEM
        self.max_turns, self.max_seconds = max_turns, max_seconds
        self.hooks, self.permissions = hooks or Hooks(), permissions
        self.planning, self.subagents = planning, subagents
        self.reminder_after, self.reminder_counting = reminder_after, reminder_counting
        self.subagent_tools, self.subagent_max_turns = tuple(subagent_tools), subagent_max_turns
        self.observers = list(observers)
        self.agent_id = agent_id

    def run(self, task: str, *, cancel: Any = None, plan_first: bool = False,
            call_log: CallLog | None = None) -> RunResult:
        """Run one task to an outcome. Always returns a `RunResult`, whatever happened.

        ``cancel``: anything with ``is_set()``; ``plan_first``: force ``todo_write`` on the
        first request; ``call_log``: a `CallLog` (intent on disk before each call runs; one
        that holds entries resumes that run).
        """
        if plan_first and not self.planning:
            raise ValueError("plan_first=True forces a todo_write call, and todo_write exists "
                             "only with Agent(..., planning=True)")
        budget = Budget(self.max_requests, self.max_tool_calls, self.max_input_tokens)
        control = RunControl.start(self.max_turns, self.max_seconds, cancel, budget)
        return Run(self, control, plan_first=plan_first, call_log=call_log).execute(task)

    def about(self) -> dict[str, Any]:
        """What ``run_start`` says of the model: its name and window, when it has them."""
        return {"model": getattr(self.model, "model", None),
                "context_window": getattr(self.model, "context_window", None)}

    def mechanisms(self, run_child: RunChild, *, plan_first: bool = False,
                   depth: int = 0) -> list[Mechanism]:
        """The mechanisms of one run, made fresh for it (lessons 04 to 08)."""
        found: list[Mechanism] = []
        if self.planning:
            found.append(Planning(self.reminder_after, self.reminder_counting,
                                  plan_first=plan_first))
        if self.subagents and depth == 0:  # a sub-agent never delegates again
            found.append(Subagents([self.tools[n] for n in self.subagent_tools],
                                   self.subagent_max_turns, run_child, self.agent_id))
        if self.hooks.listening("stop"):  # a stop hook may refuse an answer (lesson 09)
            found.append(Verification(self.max_refusals))
        return found

    def for_child(self, child: Child) -> Agent:
        """The agent a sub-agent runs as: what subagent.py chose for it (tools, prompt,
        turns, id), with this agent's model, hooks, permissions and limits per reply."""
        return Agent(self.model, child.tools, system=child.system, max_turns=child.max_turns,
                     hooks=self.hooks, permissions=self.permissions, agent_id=child.agent_id,
                     max_calls_per_reply=self.max_calls_per_reply,
                     max_refusals=self.max_refusals)
