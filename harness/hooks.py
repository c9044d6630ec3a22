"""Hooks and permissions: your code runs at fixed points of the loop, and can say no.

A hook is ``fn(event)``, registered under the name of the event it receives (any of
`events.EVENTS`) or under one of the names Claude Code uses, which are aliases of events
(`ALIASES`; an extension adds its own) and fire exactly when their events do:
``hooks.on("pre_tool_use", fn)`` is ``hooks.on("tool_call", fn)``. Two may answer with a
string: a ``tool_call`` hook blocks the call (the model reads why; a call the harness
refused already, ``event.runnable`` False, stays refused), a ``stop`` hook refuses the answer.
`Permissions`: ``tool name (or prefix*) -> "allow" | "ask" | "deny"``, frozen when made.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from .events import EVENTS, Event
from .extend import CORE_TOOLS, REGISTERED, discover
from .tools import Tool

ALIASES = {  # Claude Code's hook names: the events they are
    "user_prompt_submit": "run_start",  # once, before the first request
    "pre_tool_use": "tool_call",  # before each call (may block it)
    "post_tool_use": "tool_result",  # after each call, however it ended
    "subagent_stop": "subagent_end",  # when a delegated sub-agent finishes
}
HOOK_NAMES = ("user_prompt_submit", "pre_tool_use", "post_tool_use", "stop", "subagent_stop")
ANSWERING = ("tool_call", "stop")  # events whose hooks may say no with a string
DECISIONS = ("allow", "ask", "deny")


class Hooks:
    """Callbacks by event: ``hooks.on("tool_call", fn)``, or ``@hooks.on("stop")``."""

    def __init__(self) -> None:
        self._callbacks: dict[str, list[tuple[str, Callable]]] = {}

    def on(self, name: str, fn: Callable[[Event], Any] | None = None) -> Any:
        """Register ``fn(event)`` for the event (or alias) ``name``; no ``fn``: a decorator."""
        event = event_of(name)
        if fn is None:
            return lambda f: self.on(name, f)
        self._callbacks.setdefault(event, []).append((name, fn))
        return fn

    def listening(self, event_type: str) -> bool:
        """Does a hook listen to events of this type (an event's name, not an alias)?"""
        return event_type in self._callbacks

    def fire(self, event: Event) -> tuple[str | None, list[tuple[str, str]]]:
        """Run the callbacks of ``event``'s type in order: (the answer, ``(hook, error)`` each).
        A broken callback never ends the run; a broken tool_call guard or stop check says no."""
        errors = []
        for name, fn in self._callbacks.get(event.type, ()):
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


def event_of(name: str) -> str:
    """The event a hook named ``name`` receives (an event's own name, or an alias's)."""
    def aliases() -> dict[str, str]:  # Claude Code's names, and an extension's own
        return {**ALIASES, **{k: v for e in REGISTERED.values() for k, v in e.hooks.items()}}
    discover(until=lambda: name in EVENTS or name in aliases())  # maybe an extension's
    if name in EVENTS:
        return name
    if name in aliases():
        return aliases()[name]
    raise ValueError(f"unknown hook {name!r}; use an event name ({', '.join(EVENTS)}) "
                     f"or an alias ({', '.join(aliases())})")


def offered(permissions: Permissions | None, tool: Tool) -> bool:
    """Is ``tool`` offered to the model? Not when it is denied: its schema would cost
    tokens in every request, for a call that can only be refused."""
    return permissions is None or permissions.decide(tool) != "deny"


class Permissions:
    """Allow, ask or deny, per tool name (else ``default``); a rule ending in ``*`` covers
    every name it starts (``"mcp__shop__*"``), and the longest rule that matches wins.
    ``"ask"`` calls ``approve(tool_name, arguments) -> bool``; with no approver it denies,
    so an unattended run never hangs; ``approve="pause"`` ends the run waiting for a person
    (``agent.resume``: pause.py). A denied tool is not offered to the model."""

    def __init__(self, rules: Mapping[str, str], *, default: str = "deny",
                 approve: Callable[[str, dict], bool] | None = None) -> None:
        if not (approve is None or approve == "pause" or callable(approve)):
            raise TypeError(f"approve is a function (tool_name, arguments) -> bool, \"pause\" "
                            f"or None, not {approve!r}")
        for name, decision in {**rules, "(default)": default}.items():
            if decision not in DECISIONS:
                raise ValueError(f"permission for {name!r} is {decision!r}; use one of {DECISIONS}")
            if "*" in name.rstrip("*") or name.endswith("**"):
                raise ValueError(f"permission rule {name!r}: a '*' may only end a rule "
                                 "('mcp__shop__*' covers every tool of the server shop)")
        for name, value in (("rules", MappingProxyType(dict(rules))), ("default", default),
                            ("approve", approve)):
            object.__setattr__(self, name, value)  # the only time: see __setattr__

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Permissions are fixed when made; build a new Permissions "
                             f"instead of setting {name!r}")

    def __repr__(self) -> str:
        return f"Permissions({dict(self.rules)!r}, default={self.default!r})"

    def decide(self, tool: Tool | str) -> str:
        """``"allow"``, ``"ask"`` or ``"deny"``: the rule for the name, the longest prefix
        rule, else a harness tool (by name, or the `Tool` the harness made) is allowed and
        any other gets the default. A tool of yours under a harness tool's name is not."""
        name = tool if isinstance(tool, str) else tool.name
        if name in self.rules:
            return self.rules[name]
        prefixes = [rule for rule in self.rules if rule.endswith("*")
                    and name.startswith(rule[:-1])]
        if prefixes:
            return self.rules[max(prefixes, key=len)]
        made = {*CORE_TOOLS, *(n for e in REGISTERED.values() for n in e.tools)}
        ours = name in made if isinstance(tool, str) else tool.harness_tool
        return "allow" if ours else self.default

    def check(self, tool: Tool | str, arguments: dict, decision: str | None = None) -> str | None:
        """``None`` if the call may run, else the reason the model reads."""
        decision = decision or self.decide(tool)
        name = tool if isinstance(tool, str) else tool.name
        if decision == "allow":
            return None
        if decision == "deny":
            return f"Permission denied: '{name}' is not allowed in this session."
        if self.approve is None or self.approve == "pause":  # (pausing: calls.py)
            return f"Permission denied: '{name}' needs approval and no one can approve here."
        try:
            approved = self.approve(name, dict(arguments))
        except Exception as exc:  # a broken approver fails closed, like a broken hook
            return f"Permission denied: the approval check failed ({type(exc).__name__}: {exc})."
        if approved is True:  # only a real yes: a truthy "no" string is not approval
            return None
        return self.refusal(name)

    @staticmethod
    def refusal(name: str) -> str:
        return f"Permission denied: the user did not approve this '{name}' call."
