"""`Agent`: a model, its tools, and the rules of the loop, checked once when it is made.

    agent = Agent(model, tools, max_turns=10, planning=True, permissions=...)
    result = agent.run("the task")           # a fresh Run each time (loop.py)
    later = agent.run("and then?", messages=result.messages)   # the conversation goes on

Every rule is a field of `Settings` (settings.py), documented there. Nothing here
changes while a run goes on; each ``run()`` makes a new `Run` with fresh state
(messages, plan, reminder count) and builds the run's mechanisms from the settings.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .calls import Ledger
from .control import Budget, RunControl
from .hooks import Hooks, Permissions
from .loop import Run
from .mechanism import Mechanism
from .models import ChatModel
from .result import RunResult
from .settings import NAMES, Settings
from .tools import Tool

if TYPE_CHECKING:
    from .subagent import Child, RunChild

DEFAULT_SYSTEM = ("You are a helpful assistant. Use the tools when they help, "
                  "and answer from what they return.")


class Agent:
    """A model, its tools, and the rules of the loop. ``run()`` may be called many times.

    ``hooks``, ``permissions`` and ``observers`` watch and guard every call (lesson 03,
    the panel of 07); ``mechanisms``: your own `Mechanism` classes (or functions that
    make one), added to each run after the harness's. Every other keyword is a setting.

    >>> agent = Agent(ScriptedModel([say("Hello!")]))
    >>> agent.run("Say hello").final
    'Hello!'
    """

    def __init__(self, model: ChatModel, tools: Iterable[Tool] = (), *,
                 hooks: Hooks | None = None, permissions: Permissions | None = None,
                 observers: Iterable[Any] = (), mechanisms: Iterable[Callable[[], Mechanism]] = (),
                 settings: Settings | None = None, **options: Any) -> None:
        unknown = sorted(set(options) - set(NAMES))
        if unknown:
            raise TypeError(f"Agent got unknown settings {unknown}; the settings are: "
                            f"{', '.join(NAMES)} (see harness.Settings)")
        self.settings = replace(settings or Settings(), **options)
        self.model, self.tools = model, {}
        for t in tools:
            if not isinstance(t, Tool):
                raise TypeError(f"{t!r} is not a Tool: decorate the function with @tool")
            if t.name in self.tools:
                raise ValueError(f"two tools are named {t.name!r}; tool names must be unique")
            self.tools[t.name] = t
        for name, switch in (("todo_write", "planning"), ("delegate_task", "subagents")):
            if getattr(self.settings, switch) and name in self.tools:
                raise ValueError(f"{name} is created by the harness for every run when "
                                 f"{switch}=True; do not register a tool of that name yourself")
        unknown = [n for n in self.settings.subagent_tools if n not in self.tools]
        if unknown:
            raise ValueError(f"subagent_tools names unknown tools {unknown}; "
                             f"known: {sorted(self.tools)}")
        self.hooks, self.permissions = hooks or Hooks(), permissions
        self.observers, self.extra = list(observers), list(mechanisms)
        self.system = self.settings.system or DEFAULT_SYSTEM

    def __getattr__(self, name: str) -> Any:
        """``agent.max_turns`` and every other setting, read from ``agent.settings``."""
        if name in NAMES:
            return getattr(self.__dict__["settings"], name)
        raise AttributeError(f"'Agent' object has no attribute {name!r}")

    def run(self, task: str, *, cancel: Any = None, plan_first: bool = False,
            call_log: Ledger | None = None, messages: Iterable[dict] = (),
            within: RunControl | None = None) -> RunResult:
        """Run one task to an outcome. Always returns a `RunResult`, whatever happened.

        ``cancel``: anything with ``is_set()``; ``plan_first``: force ``todo_write`` on the
        first request; ``call_log``: a ``harness.durable.CallLog`` (intent on disk before
        each call runs; one that holds entries resumes that run); ``messages``: an
        earlier run's ``result.messages``, to continue that conversation (its system
        prompt is replaced by this run's); ``within``: the `RunControl` of a run this one
        is part of (a tool that runs an agent passes its own), whose budget, clock and
        cancel it then shares.
        """
        if plan_first and not self.planning:
            raise ValueError("plan_first=True forces a todo_write call, and todo_write exists "
                             "only with Agent(..., planning=True)")
        s = self.settings
        budget = Budget(s.max_requests, s.max_tool_calls, s.max_input_tokens)
        control = (within.child(s.max_turns) if within is not None else
                   RunControl.start(s.max_turns, s.max_seconds, cancel, budget))
        return Run(self, control, plan_first=plan_first, call_log=call_log).execute(
            task, list(messages))

    def about(self) -> dict[str, Any]:
        """What ``run_start`` says of the model: its name and window, when it has them."""
        return {"model": getattr(self.model, "model", None),
                "context_window": getattr(self.model, "context_window", None)}

    def mechanisms(self, run_child: RunChild, *, plan_first: bool = False,
                   depth: int = 0) -> list[Mechanism]:
        """The mechanisms of one run, made fresh for it from the settings (lessons 04-09).
        Each is imported when an agent first needs it: `import harness` builds no plan."""
        from . import subagent
        from .planning import Planning
        from .verify import Verification

        s, found = self.settings, []
        if s.planning:
            found.append(Planning(s.reminder_after, s.reminder_counting, plan_first=plan_first))
        if s.subagents and depth == 0:  # a sub-agent never delegates again
            found.append(subagent.Subagents([self.tools[n] for n in s.subagent_tools],
                                   s.subagent_max_turns, run_child, s.agent_id,
                                   system=s.subagent_system or subagent.SUBAGENT_SYSTEM))
        if self.hooks.listening("stop"):  # a stop hook may refuse an answer (lesson 09)
            found.append(Verification(s.max_refusals))
        return found + [make() for make in self.extra]

    def for_child(self, child: Child) -> Agent:
        """The agent a sub-agent runs as: what subagent.py chose for it (tools, prompt,
        turns, id), with this agent's model, hooks, permissions and limits per reply."""
        return Agent(self.model, child.tools, hooks=self.hooks, permissions=self.permissions,
                     system=child.system, max_turns=child.max_turns, agent_id=child.agent_id,
                     max_calls_per_reply=self.max_calls_per_reply,
                     max_refusals=self.max_refusals)
