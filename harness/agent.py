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
from .control import RUNNING, Budget, RunControl
from .hooks import Hooks, Permissions
from .loop import Run
from .mechanism import Mechanism
from .models import ChatModel
from .result import RunResult
from .settings import NAMES, Settings
from .tools import Tool

if TYPE_CHECKING:
    from .subagent import Child

DEFAULT_SYSTEM = ("You are a helpful assistant. Use the tools when they help, "
                  "and answer from what they return.")


class Agent:
    """A model, its tools, and the rules of the loop. ``run()`` may be called many times.

    ``hooks``, ``permissions`` and ``observers`` watch and guard every call (lesson 03,
    the panel of 07); ``mechanisms``: your own `Mechanism` classes (or functions that
    make one), added to each run after the harness's; ``mcp_servers`` (`harness.mcp`)
    and ``skills`` (a folder, or `harness.skills.Skills`): tools from elsewhere (lesson
    12); ``close()`` stops the servers. Every other keyword is a setting.

    >>> agent = Agent(ScriptedModel([say("Hello!")]))
    >>> agent.run("Say hello").final
    'Hello!'
    """

    def __init__(self, model: ChatModel, tools: Iterable[Tool] = (), *,
                 hooks: Hooks | None = None, permissions: Permissions | None = None,
                 observers: Iterable[Any] = (), mechanisms: Iterable[Callable[[], Mechanism]] = (),
                 mcp_servers: Iterable[Any] = (), skills: Any = None,
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
        self.mcp_servers = list(mcp_servers)
        if self.mcp_servers:
            from .mcp import check_servers

            check_servers(self.mcp_servers)
        prefixes = tuple(server.prefix for server in self.mcp_servers)  # known when it runs
        unknown = [n for n in self.settings.subagent_tools
                   if n not in self.tools and not (prefixes and n.startswith(prefixes))]
        if unknown:
            raise ValueError(f"subagent_tools names unknown tools {unknown}; "
                             f"known: {sorted(self.tools)}")
        self.hooks, self.permissions = hooks or Hooks(), permissions
        self.observers, self.extra = list(observers), list(mechanisms)
        self.system = self.settings.system or DEFAULT_SYSTEM
        if skills is not None:
            from .skills import skills_of

            self.extra.insert(0, skills_of(skills))

    def close(self) -> None:
        """Stop this agent's MCP servers (they start again if it runs again)."""
        for server in self.mcp_servers:
            server.close()

    def __enter__(self) -> Agent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getattr__(self, name: str) -> Any:
        """``agent.max_turns`` and every other setting, read from ``agent.settings``."""
        if name in NAMES:
            return getattr(self.__dict__["settings"], name)
        raise AttributeError(f"'Agent' object has no attribute {name!r}")

    def run(self, task: str, *, cancel: Any = None, plan_first: bool = False,
            call_log: Ledger | None = None, messages: Iterable[dict] = (),
            plan: Iterable[Any] | None = None, within: RunControl | None = None) -> RunResult:
        """Run one task to an outcome. Always returns a `RunResult`, whatever happened.

        ``cancel``: anything with ``is_set()``; ``plan_first``: force ``todo_write`` on the
        first request; ``call_log``: a ``harness.durable.CallLog`` (intent on disk before
        each call runs; one that holds entries resumes that run); ``messages``: an
        earlier run's ``result.messages``, to continue that conversation (its system
        prompt is replaced by this run's); ``plan``: an earlier ``result.plan`` to start
        from (with planning; a new run starts with none); ``within``: the `RunControl` of
        a run this one is part of, whose budget, clock and cancel it then shares (an
        agent run inside a tool of another run joins that run by itself).
        """
        if plan_first and not self.planning:
            raise ValueError("plan_first=True forces a todo_write call, and todo_write exists "
                             "only with Agent(..., planning=True)")
        s = self.settings
        budget = Budget(s.max_requests, s.max_tool_calls, s.max_input_tokens)
        within = within or RUNNING.get()  # inside a tool of a run: that run's budget
        kind = RunControl
        if cancel is not None or s.max_seconds is not None:  # a hung request cannot hold it
            from .waiting import ThreadedControl

            kind = ThreadedControl
        control = (within.child(s.max_turns) if within is not None else
                   kind.start(s.max_turns, s.max_seconds, cancel, budget))
        if plan is not None and not self.planning:
            raise ValueError("plan= carries a plan over, and a plan exists only with "
                             "Agent(..., planning=True)")
        return Run(self, control, plan_first=plan_first, plan=plan, call_log=call_log).execute(
            task, list(messages))

    def about(self) -> dict[str, Any]:
        """What ``run_start`` says of the model: its name and window, when it has them."""
        return {"model": getattr(self.model, "model", None),
                "context_window": getattr(self.model, "context_window", None)}

    def mechanisms(self, run: Any, *, plan_first: bool = False, depth: int = 0,
                   plan: Iterable[Any] | None = None) -> list[Mechanism]:
        """The mechanisms of one run, made fresh for it from the settings (lessons 04-09).
        Each is imported when an agent first needs it: `import harness` builds no plan."""
        from .planning import Planning
        from .subagent import Subagents

        s, found, planning, servers = self.settings, [], None, None
        if self.mcp_servers:  # started, or read again, as the run starts
            from .mcp import ServerTools

            servers = ServerTools(self.mcp_servers, run.emit, taken=self.tools)
        if s.planning:
            found.append(planning := Planning(s.reminder_after, s.reminder_counting,
                                              plan_first=plan_first, plan=list(plan or []),
                                              from_words=s.plan_from_words))
        if s.subagents and depth == 0:  # a sub-agent never delegates again
            known = {**self.tools, **{t.name: t for t in (servers.tools() if servers else ())}}
            found.append(Subagents([known[n] for n in s.subagent_tools if n in known],
                                   s.subagent_max_turns, run.run_child, s.agent_id,
                                   system=s.subagent_system))
        if self.hooks.listening("stop"):  # a stop hook may refuse an answer (lesson 11)
            from .durable.verify import Verification

            found.append(Verification(s.max_refusals))
        if servers is not None:
            found.append(servers)
        found += [make() for make in self.extra]
        window = s.context_window or getattr(self.model, "context_window", None)
        if window:  # last: it bounds what the others made of the request (lesson 13)
            from .context import compaction_for

            found.append(compaction_for(self, run, window, planning))
        return found

    def for_child(self, child: Child) -> Agent:
        """The agent a sub-agent runs as: what subagent.py chose for it (tools, prompt,
        turns, id), with this agent's model, hooks, permissions and limits per reply."""
        s = self.settings  # its own window: it compacts like its parent
        return Agent(self.model, child.tools, hooks=self.hooks, permissions=self.permissions,
                     system=child.system, max_turns=child.max_turns, agent_id=child.agent_id,
                     max_calls_per_reply=s.max_calls_per_reply, max_refusals=s.max_refusals,
                     context_window=s.context_window, compact_at=s.compact_at,
                     summary_model=s.summary_model, keep_rounds=s.keep_rounds,
                     offload_dir=s.offload_dir)
