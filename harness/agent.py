"""`Agent`: a model, its tools, and the rules of the loop, checked once when it is made.

    agent = Agent(model, tools, max_turns=10, planning=True)
    result = agent.run("the task")                             # a fresh Run each time (loop.py)
    later = agent.run("and then?", messages=result.messages)   # the conversation goes on
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import fields, replace
from typing import Any

from .control import Budget, RunControl
from .extend import CORE_TOOLS, REGISTERED, discover, service
from .history import check_history
from .hooks import Hooks, Permissions
from .loop import Run
from .mechanism import Mechanism
from .models import ChatModel
from .result import RunResult
from .settings import NAMES, Settings
from .stack import build
from .tools import Tool

DEFAULT_SYSTEM = ("You are a helpful assistant. Use the tools when they help, "
                  "and answer from what they return.")


class Agent:
    """A model, its tools and its settings, checked once; each `run` is a fresh `Run`.

        @tool
        def add(a: int, b: int) -> int:
            "Add two integers."
            return a + b

        agent = Agent(ScriptedModel([tool_call("add", a=2, b=3), say("5")]), [add])
        agent.run("What is 2 + 3?").final          # '5'

    Args:
        model: anything with ``complete(messages, tools, tool_choice)`` (`ChatModel`).
        tools: your `Tool`s (`@tool` makes one); names unique, none a harness tool's.
        hooks, permissions: your code at fixed points, and allow / ask / deny (lesson 03).
        observers: objects (or functions) that see every event as it happens.
        mechanisms: your own `Mechanism` classes (or functions that make one), added to
            ``agent.stack`` before compaction; reorder the stack itself for another place.
        settings: a `Settings`; keywords override it. Every `Settings` field is a keyword
            (``max_turns=20``), and so is every extension's (``context_window=8000``,
            ``skills=``, ``mcp_servers=``: `close()` stops the servers).
    """

    def __init__(self, model: ChatModel, tools: Iterable[Tool] = (), *, hooks: Hooks | None = None,
                 permissions: Permissions | None = None, observers: Iterable[Any] = (),
                 mechanisms: Iterable[Callable[[], Mechanism]] = (),
                 settings: Settings | None = None, **options: Any) -> None:
        if set(options) - set(NAMES) or getattr(model, "context_window", None):
            discover()  # an extension's keyword, or a window: import the extensions shipped
        extensions = [e for e in REGISTERED.values() if e.settings]
        known = {f.name: e for e in extensions for f in fields(e.settings)}
        if unknown := sorted(set(options) - set(NAMES) - set(known)):
            raise TypeError(f"Agent got unknown settings {unknown}; the settings are: "
                            f"{', '.join([*NAMES, *known])} (see harness.Settings)")
        self.settings = replace(settings or Settings(),
                                **{k: v for k, v in options.items() if k in NAMES})
        self.options = {e.name: e.settings(**{k: v for k, v in options.items()
                                              if known.get(k) is e}) for e in extensions}
        self.model, self.system = model, self.settings.system or DEFAULT_SYSTEM
        self.hooks, self.permissions, self.observers = hooks or Hooks(), permissions, [*observers]
        self.tools: dict[str, Tool] = {}
        self.stack = build(self, mechanisms)
        self.tools = self._checked(tools)
        later = tuple(p for layer in self.stack for p in layer.later)  # a server's tools
        if unknown := [n for n in self.settings.subagent_tools
                       if n not in self.tools and not n.startswith(later)]:
            raise ValueError(f"subagent_tools names unknown tools {unknown}; "
                             f"known: {sorted(self.tools)}")

    def _checked(self, tools: Iterable[Tool]) -> dict[str, Tool]:
        """Your tools by name: each a `Tool`, named once, and not as a tool the harness
        makes (the core's always; an extension's when its layer is in the stack)."""
        found: dict[str, Tool] = {}
        in_stack = {name for layer in self.stack for name in layer.tools}
        for t in tools:
            if not isinstance(t, Tool):
                raise TypeError(f"{t!r} is not a Tool: decorate the function with @tool")
            if t.name in found:
                raise ValueError(f"two tools are named {t.name!r}; tool names must be unique")
            if t.name in in_stack or (t.name in CORE_TOOLS and not t.harness_tool):
                raise ValueError(f"{t.name!r} is the name of a tool the harness makes for a "
                                 "run; give your tool another name")
            found[t.name] = t
        return found

    def close(self) -> None:
        """Stop what the stack's layers started (MCP servers start again on the next run)."""
        for layer in self.stack:
            if layer.close:
                layer.close()

    def __enter__(self) -> Agent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getattr__(self, name: str) -> Any:  # agent.max_turns: every setting, an extension's too
        if name in NAMES:
            return getattr(self.__dict__["settings"], name)
        for options in self.__dict__.get("options", {}).values():
            if name in {f.name for f in fields(options)}:
                return getattr(options, name)
        raise AttributeError(f"'Agent' object has no attribute {name!r}")

    def run(self, task: str, *, cancel: Any = None, plan_first: bool = False,
            call_log: Any = None, messages: Iterable[dict] = (),
            plan: Iterable[Any] | None = None, within: RunControl | None = None) -> RunResult:
        """Run one task to an outcome; always returns a `RunResult`, whatever happened.

        ``cancel``: anything with ``is_set()``; ``call_log``: a ``harness.durable.CallLog``;
        ``messages``: an earlier result's, to go on from (checked first: a `ValueError`
        says what is wrong); with planning, the plan it holds goes on too (``plan=``
        overrides it). ``within``: the `RunControl` of the run this one is part of (a
        tool's ``control``): then this run spends from that run's budget, and stops with
        it; either way its own limits hold too. Without ``within`` a run stands alone."""
        s = self.settings
        if (plan_first or plan is not None) and not s.planning:
            raise ValueError("plan_first=True forces a todo_write call and plan= carries a plan "
                             "over; both exist only with Agent(..., planning=True)")
        history = check_history(messages)
        if s.planning and plan is None:
            from .planning import plan_in
            plan = plan_in(history)
        control = RunControl.start(s.max_turns, s.max_seconds, cancel,
                                   Budget(s.max_requests, s.max_tool_calls, s.max_input_tokens))
        if within is not None:
            control = control.within(within)
        if control.cancel is not None or control.deadline is not None:
            control = service("waiting").from_control(control)  # a hung step cannot hold it
        return Run(self, control, plan_first=plan_first, plan=list(plan or []),
                   call_log=call_log).execute(task, history)

    def for_child(self, child: Any) -> Agent:
        """The agent a sub-agent runs as: its `Child`'s tools, prompt, turns and id, without
        planning or subagents, and this agent's model, hooks, permissions and other settings."""
        settings = replace(self.settings, system=child.system, max_turns=child.max_turns,
                           agent_id=child.agent_id, planning=False, plan_from_words=False,
                           subagents=False, subagent_tools=())
        options = {f.name: getattr(o, f.name) for o in self.options.values() for f in fields(o)}
        return Agent(self.model, child.tools, hooks=self.hooks, permissions=self.permissions,
                     settings=settings, **options)

