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
from .extend import CORE_TOOLS, REGISTERED, discover, service, settings_of
from .history import check_history
from .hooks import Hooks, Permissions
from .loop import Run
from .mechanism import Mechanism
from .models import ChatModel
from .pause import Resumed, child_paused
from .result import RunResult
from .settings import NAMES, Settings
from .stack import build
from .tools import Tool

DEFAULT_SYSTEM = ("You are a helpful assistant. Use the tools when they help, "
                  "and answer from what they return.")


class Agent:
    """A model, its tools, and `Settings` as keywords (``max_turns=20``), an extension's
    too (``context_window=8000``, ``skills=``, ``mcp_servers=``: `close` stops them):

        agent = Agent(ScriptedModel([tool_call("add", a=2, b=3), say("5")]), [add])
        agent.run("What is 2 + 3?").final          # '5'

    ``hooks``, ``permissions``: your code at fixed points, allow / ask / deny (lesson 03);
    ``observers``: see every event; ``mechanisms``: yours, in ``agent.stack`` (stack.py)."""

    def __init__(self, model: ChatModel, tools: Iterable[Tool] = (), *, hooks: Hooks | None = None,
                 permissions: Permissions | None = None, observers: Iterable[Any] = (),
                 mechanisms: Iterable[Callable[[], Mechanism]] = (),
                 settings: Settings | None = None, **options: Any) -> None:
        self.hooks = hooks or Hooks()
        theirs = {k: v for k, v in options.items() if k not in NAMES}
        if theirs or getattr(model, "context_window", None) or self.hooks.listening("stop"):
            discover()  # an extension's keyword, a window, a stop hook: find the extensions
        settled = any(e.settings for e in REGISTERED.values())
        self.options = settings_of(theirs, NAMES) if theirs or settled else {}  # extensions'
        self.settings = replace(settings or Settings(),
                                **{k: v for k, v in options.items() if k in NAMES})
        self.model = model
        self.system = self.settings.system or DEFAULT_SYSTEM
        self.permissions = permissions
        self.observers = [*observers]
        self.tools = self._checked(tools)
        self.stack = build(self, mechanisms)  # its layers may read the tools (compaction)
        if taken := sorted({n for layer in self.stack for n in layer.tools} & set(self.tools)):
            raise ValueError(f"{taken[0]!r} is the name of a tool the harness makes for a run "
                             "(its layer is in the stack); give your tool another name")
        if self.settings.subagent_tools:
            self._check_subagent_tools()

    def _check_subagent_tools(self) -> None:
        later = tuple(prefix for layer in self.stack for prefix in layer.later)  # a server's
        if unknown := [n for n in self.settings.subagent_tools
                       if n not in self.tools and not n.startswith(later)]:
            raise ValueError(f"subagent_tools names unknown tools {unknown}; "
                             f"known: {sorted(self.tools)}")

    def _checked(self, tools: Iterable[Tool]) -> dict[str, Tool]:
        """Your tools by name: each a `Tool`, each name once, none named as a tool the core
        makes (an extension's: when its layer is in the stack, below)."""
        found: dict[str, Tool] = {}
        for t in tools:
            if not isinstance(t, Tool):
                raise TypeError(f"{t!r} is not a Tool: decorate the function with @tool")
            if t.name in found:
                raise ValueError(f"two tools are named {t.name!r}; tool names must be unique")
            if t.name in CORE_TOOLS and not t.harness_tool:
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
        for settings in (self.__dict__.get("settings"), *self.__dict__.get("options", {}).values()):
            if name in getattr(settings, "__dataclass_fields__", ()):
                return getattr(settings, name)
        raise AttributeError(f"'Agent' object has no attribute {name!r}")

    def run(self, task: str, *, cancel: Any = None, plan_first: bool = False,
            call_log: Any = None, messages: Iterable[dict] = (),
            plan: Iterable[Any] | None = None, within: RunControl | None = None,
            output: type | None = None) -> RunResult:
        """Run one task to an outcome; always a `RunResult`. ``messages``: an earlier run's,
        to go on from (checked), with the plan they hold; ``within``: a tool's ``control``,
        to spend that run's budget and stop with it (this run's own limits hold too);
        ``output``: a pydantic model the answer must fit (``result.output``: harness/answers/)."""
        s = self.settings
        if (plan_first or plan is not None) and not s.planning:
            raise ValueError("plan_first=True forces a todo_write call and plan= carries a plan "
                             "over; both exist only with Agent(..., planning=True)")
        history = check_history(messages) if messages else []
        if s.planning and plan is None and history:  # the plan the conversation holds
            from .planning import plan_in
            plan = plan_in(history)
        budget = Budget(s.max_requests, s.max_tool_calls, s.max_input_tokens)
        control = RunControl.start(s.max_turns, s.max_seconds, cancel, budget)
        if within is not None:
            control = control.within(within)
        if control.cancel is not None or control.deadline is not None:
            control = service("waiting").from_control(control)  # a hung step cannot hold it
        return Run(self, control, plan_first=plan_first, plan=list(plan or []),
                   call_log=call_log, output=output).execute(task, history)

    def resume(self, result: RunResult, approvals: dict[str, bool], *,
               call_log: Any = None, output: type | None = None) -> RunResult:
        """Go on with a run that ended ``awaiting_approval`` (pause.py)."""
        from .pause import resume
        return resume(self, result, approvals, call_log=call_log, output=output)

    def run_child(self, child: Any, parent: Run, paused: Any = None) -> Any:
        """Run a sub-agent (subagent.py chose what it gets) inside ``parent``: its clock,
        cancel, budget and call log; its events join the parent's. ``paused``: the
        `Delegation` of one that waited for a person, to resume (pause.py)."""
        parent.emit("subagent_start", child_id=child.agent_id, task=child.task,
                    call_id=child.call_id)
        run = (Resumed if paused else Run)(
            self.for_child(child), parent.control.child(child.max_turns), depth=parent.depth + 1,
            sink=parent.forward, call_log=parent.calls.log)
        run.lock = run.calls.lock = parent.lock  # one at a time across the family
        result = run.go_on(*child_paused(paused, parent)) if paused else run.execute(child.task)
        done = child.record(result)
        parent.emit("subagent_end", **{k: v for k, v in done.to_dict().items() if k != "paused"})
        return done

    def for_child(self, child: Any) -> Agent:
        """The agent a sub-agent runs as: its `Child`'s tools, prompt, turns and id, without
        planning or subagents, and this agent's model, hooks, permissions and other settings."""
        settings = replace(self.settings, system=child.system, max_turns=child.max_turns,
                           agent_id=child.agent_id, planning=False, plan_from_words=False,
                           subagents=False, subagent_tools=())
        options = {f.name: getattr(o, f.name) for o in self.options.values() for f in fields(o)}
        return Agent(self.model, child.tools, hooks=self.hooks, permissions=self.permissions,
                     settings=settings, **options)
