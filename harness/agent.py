"""`Agent`: a model, its tools, and the rules of the loop, checked once when it is made.

    agent = Agent(model, tools, max_turns=10, planning=True)
    result = agent.run("the task")                             # a fresh Run each time (loop.py)
    later = agent.run("and then?", messages=result.messages)   # the conversation goes on
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from .control import RUNNING, Budget, RunControl
from .hooks import Hooks, Permissions
from .loop import Run
from .mechanism import Mechanism
from .models import ChatModel
from .result import RunResult
from .settings import NAMES, Settings
from .tools import Tool

DEFAULT_SYSTEM = ("You are a helpful assistant. Use the tools when they help, "
                  "and answer from what they return.")


class Agent:
    """A model, its tools and `Settings` (as keywords, or ``settings=``); ``mechanisms``: your
    own `Mechanism` classes (or functions that make one), added to each run; ``mcp_servers``
    and ``skills``: tools from elsewhere (lesson 14), whose servers ``close()`` stops."""

    def __init__(self, model: ChatModel, tools: Iterable[Tool] = (), *, hooks: Hooks | None = None,
                 permissions: Permissions | None = None, observers: Iterable[Any] = (),
                 mechanisms: Iterable[Callable[[], Mechanism]] = (), mcp_servers: Iterable = (),
                 skills: Any = None, settings: Settings | None = None, **options: Any) -> None:
        if unknown := sorted(set(options) - set(NAMES)):
            raise TypeError(f"Agent got unknown settings {unknown}; the settings are: "
                            f"{', '.join(NAMES)} (see harness.Settings)")
        self.settings = s = replace(settings or Settings(), **options)
        self.model, self.tools, self.system = model, {}, s.system or DEFAULT_SYSTEM
        self.hooks, self.permissions, self.observers = hooks or Hooks(), permissions, [*observers]
        for t in tools:
            if not isinstance(t, Tool):
                raise TypeError(f"{t!r} is not a Tool: decorate the function with @tool")
            if t.name in self.tools:
                raise ValueError(f"two tools are named {t.name!r}; tool names must be unique")
            switch = {"todo_write": "planning", "delegate_task": "subagents"}.get(t.name)
            if switch and getattr(s, switch):
                raise ValueError(f"{t.name} is created by the harness for every run when "
                                 f"{switch}=True; do not register a tool of that name yourself")
            self.tools[t.name] = t
        self.extra, self.joined = list(mechanisms), None
        if mcp_servers or skills is not None:  # checked now, joined to each run (lesson 14)
            from .skills.joined import Joined

            self.joined = Joined(list(mcp_servers), skills)
        later = self.joined.prefixes if self.joined else ()  # a server's tools, listed later
        if unknown := [n for n in s.subagent_tools if n not in self.tools
                       and not n.startswith(later)]:
            raise ValueError(f"subagent_tools names unknown tools {unknown}; "
                             f"known: {sorted(self.tools)}")

    def close(self) -> None:
        """Stop this agent's MCP servers (they start again if it runs again)."""
        if self.joined:
            self.joined.close()

    def __enter__(self) -> Agent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getattr__(self, name: str) -> Any:  # agent.max_turns: every setting, from .settings
        if name in NAMES:
            return getattr(self.__dict__["settings"], name)
        raise AttributeError(f"'Agent' object has no attribute {name!r}")

    def run(self, task: str, *, cancel: Any = None, plan_first: bool = False,
            call_log: Any = None, messages: Iterable[dict] = (),
            plan: Iterable[Any] | None = None, within: RunControl | None = None) -> RunResult:
        """Run one task to an outcome; always returns a `RunResult`, whatever happened.

        ``cancel``: anything with ``is_set()``; ``call_log``: a ``harness.durable.CallLog``;
        ``messages`` and ``plan``: an earlier result's, to go on from; ``within``: the
        `RunControl` of a run this one is part of (inside a tool of a run, that run's)."""
        s = self.settings
        if (plan_first or plan is not None) and not s.planning:
            raise ValueError("plan_first=True forces a todo_write call and plan= carries a plan "
                             "over; both exist only with Agent(..., planning=True)")
        within = within or RUNNING.get()
        kind = RunControl
        if within is None and (cancel is not None or s.max_seconds is not None):
            from .waiting import ThreadedControl  # a hung request cannot hold this run

            kind = ThreadedControl
        control = within.child(s.max_turns) if within else kind.start(
            s.max_turns, s.max_seconds, cancel,
            Budget(s.max_requests, s.max_tool_calls, s.max_input_tokens))
        return Run(self, control, plan_first=plan_first, plan=plan, call_log=call_log).execute(
            task, list(messages))

    def mechanisms(self, run: Any, *, plan_first: bool = False, depth: int = 0,
                   plan: Iterable[Any] | None = None) -> list[Mechanism]:
        """The mechanisms of one run, made fresh from the settings, in the order they act."""
        from .planning import Planning
        from .subagent import Subagents

        s, found, planning = self.settings, [], None
        joined = self.joined.mechanisms(run.emit, self.tools) if self.joined else []
        if s.planning:
            found.append(planning := Planning(s.reminder_after, s.reminder_counting,
                                              plan_first=plan_first, plan=list(plan or []),
                                              from_words=s.plan_from_words))
        if s.subagents and depth == 0:  # a sub-agent never delegates again
            known = {**self.tools, **{t.name: t for m in joined for t in m.tools()}}
            found.append(Subagents([known[n] for n in s.subagent_tools if n in known],
                                   s.subagent_max_turns, run.run_child, s.agent_id,
                                   system=s.subagent_system))
        found += joined
        if self.hooks.listening("stop"):  # a stop hook may refuse an answer (lesson 11)
            from .durable.verify import Verification

            found.append(Verification(s.max_refusals))
        found += [make() for make in self.extra]
        if window := s.context_window or getattr(self.model, "context_window", None):
            from .context import compaction_for  # last: it bounds what the others sent

            found.append(compaction_for(self, run, window, planning))
        return found

    def for_child(self, child: Any) -> Agent:
        """The agent a sub-agent runs as: its `Child`'s tools, prompt, turns and id, without
        planning or subagents, and this agent's model, hooks, permissions and other settings."""
        settings = replace(self.settings, system=child.system, max_turns=child.max_turns,
                           agent_id=child.agent_id, planning=False, plan_from_words=False,
                           subagents=False, subagent_tools=())
        return Agent(self.model, child.tools, hooks=self.hooks, permissions=self.permissions,
                     settings=settings)
