"""Hooks and permissions: your code runs at fixed points of the loop, and can say no.

Every tool call takes one path, the same for your tools and the harness's own
(`calls.py`):

    lookup -> validate arguments -> tool_call hooks -> permissions -> execute
           -> tool_result hooks -> {"role": "tool"} message

A hook is a function that receives one kind of event, the moment the loop emits it,
registered under that event's name: ``hooks.on("tool_call", fn)``. Any event type of
`events.EVENTS` can have hooks; two may answer:

| hook          | old name (alias)     | fires                                        |
|---------------|----------------------|----------------------------------------------|
| `run_start`   | `user_prompt_submit` | once, before the first request               |
| `tool_call`   | `pre_tool_use`       | before each call that could run (may block)  |
| `tool_result` | `post_tool_use`      | after each call (the alias: only if it ran)  |
| `stop`        | `stop`               | when the model answers (may refuse it)       |
| `subagent_end`| `subagent_stop`      | when a delegated sub-agent finishes          |

The harness refuses an unknown tool or invalid arguments itself (their ``tool_call``
event says ``runnable=False``), so ``tool_call`` hooks only see calls that could run. A
``tool_call`` hook that returns a string blocks the call: the tool does not run and the
model reads the string. A ``stop`` hook that returns a string refuses the answer: the
model reads why and tries again (durable/verify.py).

`Permissions` is a table ``tool name -> "allow" | "ask" | "deny"``, enforced on the
same path. The table is frozen when made: nothing a model says or a tool returns can
change it. The harness's own tools (`todo_write`, `delegate_task`) are allowed unless
the table names them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from .events import EVENTS, Event
from .tools import Tool

ALIASES: dict[str, tuple[str, str | None]] = {  # old name: (its event, fires only if)
    "user_prompt_submit": ("run_start", None),
    "pre_tool_use": ("tool_call", "runnable"),
    "post_tool_use": ("tool_result", "ran"),     # only for a call that really ran
    "subagent_stop": ("subagent_end", None),
    "post_compact": ("compaction", None),
}
HOOKS = {**{name: (name, None) for name in EVENTS}, "tool_call": ("tool_call", "runnable"),
         **ALIASES}  # name: (the event it receives, fires only if)
HOOK_NAMES = ("user_prompt_submit", "pre_tool_use", "post_tool_use", "stop", "subagent_stop")
ANSWERING = ("tool_call", "stop")  # events whose hooks may say no with a string
# the harness's own tools
HARNESS_TOOLS = frozenset({"todo_write", "delegate_task", "compact", "load_skill"})
DECISIONS = ("allow", "ask", "deny")
NOTHING: tuple[None, tuple] = (None, ())  # no answer, no error: what most events get

Approver = Callable[[str, dict], bool]


class Hooks:
    """Callbacks by event: ``hooks.on("tool_call", fn)``, or ``@hooks.on("stop")``."""

    def __init__(self) -> None:
        self._callbacks: dict[str, list[tuple[str, str | None, Callable]]] = {}

    def on(self, name: str, fn: Callable[[Event], Any] | None = None) -> Any:
        """Register ``fn(event)`` for the event ``name`` (or an old alias); without
        ``fn``, return a decorator."""
        if name not in HOOKS:
            raise ValueError(f"unknown hook {name!r}; use an event name ({', '.join(EVENTS)}) "
                             f"or an alias ({', '.join(ALIASES)})")
        if fn is None:
            return lambda f: self.on(name, f)
        event, only_if = HOOKS[name]
        self._callbacks.setdefault(event, []).append((name, only_if, fn))
        return fn

    def answers(self, event_type: str) -> bool:
        """True if hooks listen to ``event_type`` and may say no to it (tool_call, stop)."""
        return event_type in ANSWERING and bool(self._callbacks.get(event_type))

    def listening(self, name: str) -> bool:
        """True if any callback is registered for the event (or alias) ``name``."""
        return bool(self._callbacks.get(HOOKS[name][0]))

    def fire(self, event: Event) -> tuple[str | None, Sequence[tuple[str, str]]]:
        """Run the callbacks registered for ``event``'s type, in order.

        Returns the answer (the first non-empty string of a hook that may say no;
        ``None`` otherwise) and ``(hook, error)`` for each callback that raised. A broken
        callback never takes the run down; a broken ``tool_call`` guard blocks its call.
        """
        callbacks = self._callbacks.get(event.type)
        if not callbacks:  # most events: no hook listens to them
            return NOTHING
        errors = []
        for name, only_if, fn in callbacks:
            if only_if and not event.data[only_if]:
                continue
            try:
                answer = fn(event)
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # even sys.exit() in a hook never ends the run
                errors.append((name, f"{type(exc).__name__}: {exc}"))
                if event.type == "tool_call":  # a guard that cannot decide says no
                    return f"Blocked: a {name} hook failed ({errors[-1][1]}).", errors
                if event.type == "stop":  # so does a check that cannot check the answer
                    return f"it could not be checked (a stop hook failed: {errors[-1][1]}).", errors
                continue
            if event.type in ANSWERING and isinstance(answer, str) and answer:
                return answer, errors
        return None, errors


class Permissions:
    """Allow, ask or deny, per tool name; tools not in the table get ``default``.

    ``"ask"`` calls ``approve(tool_name, arguments) -> bool``; with no approver it is
    denied, so an unattended run (a test, nbval, CI) can never hang on a question.
    Use `harness.ask_on_stdin` as the approver for a terminal or a notebook.
    """

    def __init__(self, rules: Mapping[str, str], *, default: str = "deny",
                 approve: Approver | None = None) -> None:
        for name, decision in {**rules, "(default)": default}.items():
            if decision not in DECISIONS:
                raise ValueError(f"permission for {name!r} is {decision!r}; use one of {DECISIONS}")
        # Set once, here: afterwards the table is read-only (see __setattr__).
        object.__setattr__(self, "rules", MappingProxyType(dict(rules)))
        object.__setattr__(self, "default", default)
        object.__setattr__(self, "approve", approve)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Permissions are fixed when made; build a new Permissions "
                             f"instead of setting {name!r}")

    def __repr__(self) -> str:
        return f"Permissions({dict(self.rules)!r}, default={self.default!r})"

    def decide(self, tool: Tool | str) -> str:
        """The table's answer for a tool: ``"allow"``, ``"ask"`` or ``"deny"``.

        The harness's own tools (``todo_write``, ``delegate_task``: `HARNESS_TOOLS`) are
        allowed unless the table names them, given by name or as the `Tool` the harness
        made; a tool of yours with one of those names gets the table's answer.
        """
        name = tool if isinstance(tool, str) else tool.name
        if name in self.rules:
            return self.rules[name]
        ours = name in HARNESS_TOOLS if isinstance(tool, str) else tool.harness_tool
        return "allow" if ours else self.default

    def check(self, tool: Tool | str, arguments: dict, decision: str | None = None) -> str | None:
        """``None`` if the call may run, else the reason the model will read
        (``decision``: `decide`'s answer, when the caller has it already)."""
        decision = decision or self.decide(tool)
        name = tool if isinstance(tool, str) else tool.name
        if decision == "allow":
            return None
        if decision == "deny":
            return f"Permission denied: '{name}' is not allowed in this session."
        if self.approve is None:
            return f"Permission denied: '{name}' needs approval and no one can approve here."
        try:
            approved = self.approve(name, dict(arguments))
        except Exception as exc:  # a broken approver fails closed, like a broken hook
            return f"Permission denied: the approval check failed ({type(exc).__name__}: {exc})."
        if approved is True:  # only a real yes: a truthy "no" string is not approval
            return None
        return f"Permission denied: the user did not approve this '{name}' call."
