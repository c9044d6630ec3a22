"""Hooks and permissions: your code runs at fixed points of the loop, and can say no.

Every tool call takes one path, the same for your tools and the harness's own
(`calls.py`):

    lookup -> validate arguments -> pre_tool_use hooks -> permissions -> execute
           -> post_tool_use hooks -> {"role": "tool"} message

A hook is a function that receives one kind of event, the moment the loop emits it:

| hook                 | receives the event    | fires                                  |
|----------------------|-----------------------|----------------------------------------|
| `user_prompt_submit` | `run_start`           | once, before the first request         |
| `pre_tool_use`       | `tool_call`           | before each call runs (may block)      |
| `post_tool_use`      | `tool_result`         | after each call that ran               |
| `stop`               | `stop`                | when the model answers (may refuse it) |
| `subagent_stop`      | `subagent_end`        | when a delegated sub-agent finishes    |

The harness refuses an unknown tool or invalid arguments itself (their ``tool_call``
event says ``runnable=False``), so your hooks only see calls that could run. A
``pre_tool_use`` callback that returns a string blocks the call: the tool does not run
and the model reads the string. A ``stop`` callback that returns a string refuses the
answer: the model reads why and tries again (verify.py; "a tool that ran is not a task
that is done").

`Permissions` is a table ``tool name -> "allow" | "ask" | "deny"``, enforced on the
same path. The table is frozen when made: nothing a model says or a tool returns can
change it. The harness's own tools (`todo_write`, `delegate_task`) are allowed unless
the table names them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from .events import Event
from .tools import Tool

HOOKS: dict[str, tuple[str, str | None]] = {  # name: (the event it receives, fires only if)
    "user_prompt_submit": ("run_start", None),
    "pre_tool_use": ("tool_call", "runnable"),   # not for a call the harness refused itself
    "post_tool_use": ("tool_result", "ran"),     # only for a call that really ran
    "stop": ("stop", None),
    "subagent_stop": ("subagent_end", None),
}
HOOK_NAMES = tuple(HOOKS)
ANSWERING = ("pre_tool_use", "stop")  # hooks whose string answer is a "no"
FAILS_CLOSED = {"pre_tool_use": "Blocked"}  # a broken guard blocks; a broken stop hook is
# only reported (it has not refused anything)
DECISIONS = ("allow", "ask", "deny")

Approver = Callable[[str, dict], bool]


NOTHING: tuple[None, tuple] = (None, ())  # no answer, no error: what most events get


class Hooks:
    """Callbacks by lifecycle point: ``hooks.on("pre_tool_use", fn)``, or as a decorator."""

    def __init__(self) -> None:
        self._callbacks: dict[str, list[Callable[[Event], Any]]] = {n: [] for n in HOOKS}
        self._by_event = {event: (name, only_if) for name, (event, only_if) in HOOKS.items()}
        self._heard: set[str] = set()  # the event types some callback listens to

    def on(self, name: str, fn: Callable[[Event], Any] | None = None) -> Any:
        """Register ``fn(event)`` for a hook; without ``fn``, return a decorator."""
        if name not in self._callbacks:
            raise ValueError(f"unknown hook {name!r}; choose one of: {', '.join(HOOKS)}")
        if fn is None:
            return lambda f: self.on(name, f)
        self._callbacks[name].append(fn)
        self._heard.add(HOOKS[name][0])
        return fn

    def listening(self, name: str) -> bool:
        """True if any callback is registered for the hook ``name``."""
        return bool(self._callbacks[name])

    def fire(self, event: Event) -> tuple[str | None, Sequence[tuple[str, str]]]:
        """Run the callbacks of the hook that listens to ``event``, in order.

        Returns the answer (the first non-empty string of a hook that may say no;
        ``None`` otherwise) and ``(hook, error)`` for each callback that raised. A broken
        callback never takes the run down; a broken ``pre_tool_use`` guard blocks its call.
        """
        if event.type not in self._heard:  # most events: no hook listens to them
            return NOTHING
        name, only_if = self._by_event[event.type]
        if only_if and not event.data[only_if]:
            return NOTHING
        errors = []
        for fn in self._callbacks[name]:
            try:
                answer = fn(event)
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # even sys.exit() in a hook never ends the run
                errors.append((name, f"{type(exc).__name__}: {exc}"))
                if name in FAILS_CLOSED:  # a guard that cannot decide says no
                    return f"{FAILS_CLOSED[name]}: a {name} hook failed ({errors[-1][1]}).", errors
                continue
            if name in ANSWERING and isinstance(answer, str) and answer:
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

        Give the `Tool` itself for the answer a run acts on: the harness's own tools
        (made by the harness, ``harness_tool=True``) are allowed unless the table names
        them. A tool of yours with the same name gets the table's answer like any other.
        """
        name = tool if isinstance(tool, str) else tool.name
        if name in self.rules:
            return self.rules[name]
        return "allow" if getattr(tool, "harness_tool", False) else self.default

    def check(self, tool: Tool | str, arguments: dict) -> str | None:
        """``None`` if the call may run, else the reason the model will read."""
        decision = self.decide(tool)
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
