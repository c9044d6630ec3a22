"""Hooks and permissions: your code runs at fixed points of the loop, and can say no.

A hook is ``fn(event)``, registered under an event's name (any of `events.EVENTS`, or an old
name of `ALIASES`): ``hooks.on("tool_call", fn)``. Two may answer with a string: a
``tool_call`` hook blocks the call (the model reads why), a ``stop`` hook refuses the answer.
`Permissions`: ``tool name -> "allow" | "ask" | "deny"``, frozen when made, on the same path.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from .events import EVENTS, Event
from .tools import Tool

ALIASES: dict[str, tuple[str, str | None]] = {  # old name: (its event, fires only if)
    "user_prompt_submit": ("run_start", None),  # once, before the first request
    "pre_tool_use": ("tool_call", "runnable"),  # before each call that could run (may block)
    "post_tool_use": ("tool_result", "ran"),    # after each call that really ran
    "subagent_stop": ("subagent_end", None),    # when a delegated sub-agent finishes
    "post_compact": ("compaction", None),       # after the context was compacted
}
HOOKS = {**{name: (name, None) for name in EVENTS}, "tool_call": ("tool_call", "runnable"),
         **ALIASES}  # name: (the event it receives, fires only if)
HOOK_NAMES = ("user_prompt_submit", "pre_tool_use", "post_tool_use", "stop", "subagent_stop")
ANSWERING = ("tool_call", "stop")  # events whose hooks may say no with a string
HARNESS_TOOLS = frozenset({"todo_write", "delegate_task", "compact", "load_skill"})
DECISIONS = ("allow", "ask", "deny")
NOTHING: tuple[None, tuple] = (None, ())  # no answer, no error: what most events get


class Hooks:
    """Callbacks by event: ``hooks.on("tool_call", fn)``, or ``@hooks.on("stop")``."""

    def __init__(self) -> None:
        self._callbacks: dict[str, list[tuple[str, str | None, Callable]]] = {}

    def on(self, name: str, fn: Callable[[Event], Any] | None = None) -> Any:
        """Register ``fn(event)`` for the event (or old alias) ``name``; no ``fn``: a decorator."""
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
        return bool(self._callbacks.get(HOOKS[name][0]))

    def fire(self, event: Event) -> tuple[str | None, Sequence[tuple[str, str]]]:
        """Run the callbacks of ``event``'s type in order: (the answer, ``(hook, error)`` each).
        A broken callback never ends the run; a broken tool_call guard or stop check says no."""
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
    """Allow, ask or deny, per tool name (else ``default``). ``"ask"`` calls ``approve(tool_name,
    arguments) -> bool``; with no approver it denies, so an unattended run never hangs."""

    def __init__(self, rules: Mapping[str, str], *, default: str = "deny",
                 approve: Callable[[str, dict], bool] | None = None) -> None:
        for name, decision in {**rules, "(default)": default}.items():
            if decision not in DECISIONS:
                raise ValueError(f"permission for {name!r} is {decision!r}; use one of {DECISIONS}")
        for name, value in (("rules", MappingProxyType(dict(rules))), ("default", default),
                            ("approve", approve)):
            object.__setattr__(self, name, value)  # the only time: see __setattr__

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Permissions are fixed when made; build a new Permissions "
                             f"instead of setting {name!r}")

    def __repr__(self) -> str:
        return f"Permissions({dict(self.rules)!r}, default={self.default!r})"

    def decide(self, tool: Tool | str) -> str:
        """``"allow"``, ``"ask"`` or ``"deny"``. A harness tool (by `HARNESS_TOOLS` name, or
        the `Tool` the harness made) is allowed unless named; yours by that name is not."""
        name = tool if isinstance(tool, str) else tool.name
        if name in self.rules:
            return self.rules[name]
        ours = name in HARNESS_TOOLS if isinstance(tool, str) else tool.harness_tool
        return "allow" if ours else self.default

    def check(self, tool: Tool | str, arguments: dict, decision: str | None = None) -> str | None:
        """``None`` if the call may run, else the reason the model reads."""
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
