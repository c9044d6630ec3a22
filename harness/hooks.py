"""Hooks and permissions: your code runs at fixed points of the loop, and can say no.

Every tool call takes one path, the same for your tools and the harness's own:

    lookup -> validate arguments -> pre_tool_use hooks -> permissions -> execute
           -> post_tool_use hooks -> {"role": "tool"} message

An unknown tool or invalid arguments are refused before any hook runs;
``post_tool_use`` fires only for a tool that really ran. A ``pre_tool_use`` callback
that returns a string blocks the call: the tool does not run and the model reads the
string as the tool's result.

| hook                 | receives the event    | fires                                  |
|----------------------|-----------------------|----------------------------------------|
| `user_prompt_submit` | `run_start`           | once, before the first request         |
| `pre_tool_use`       | `tool_call`           | before each call runs (may block)      |
| `post_tool_use`      | `tool_result`         | after each call that ran               |
| `stop`               | `stop`                | when the model answers without tools   |
| `subagent_stop`      | `subagent_end`        | when a delegated sub-agent finishes    |

`Permissions` is a table ``tool name -> "allow" | "ask" | "deny"``, enforced on the
same pre-tool path. The table is frozen when made: nothing a model says or a tool
returns can change it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from .events import Event

HOOK_NAMES = ("user_prompt_submit", "pre_tool_use", "post_tool_use", "stop", "subagent_stop")
DECISIONS = ("allow", "ask", "deny")

Approver = Callable[[str, dict], bool]


class Hooks:
    """Callbacks by lifecycle point: ``hooks.on("pre_tool_use", fn)``, or as a decorator."""

    def __init__(self) -> None:
        self._callbacks: dict[str, list[Callable[[Event], Any]]] = {n: [] for n in HOOK_NAMES}

    def on(self, name: str, fn: Callable[[Event], Any] | None = None) -> Any:
        """Register ``fn(event)`` for a hook; without ``fn``, return a decorator."""
        if name not in self._callbacks:
            raise ValueError(f"unknown hook {name!r}; choose one of: {', '.join(HOOK_NAMES)}")
        if fn is None:
            return lambda f: self.on(name, f)
        self._callbacks[name].append(fn)
        return fn

    def fire(self, name: str, event: Event) -> str | None:
        """Call every callback of ``name``; return the first non-empty string (a block).

        An empty string is "no objection": the callbacks after it still run.
        """
        for fn in self._callbacks[name]:
            answer = fn(event)
            if name == "pre_tool_use" and isinstance(answer, str) and answer:
                return answer
        return None


class Permissions:
    """Allow, ask or deny, per tool name; tools not in the table get ``default``.

    ``"ask"`` calls ``approve(tool_name, arguments) -> bool``; with no approver it is
    denied, so an unattended run (a test, nbval, CI) can never hang on a question.
    Use `ask_on_stdin` as the approver for an interactive terminal or notebook.
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

    def decide(self, tool_name: str) -> str:
        """The table's answer for this tool: ``"allow"``, ``"ask"`` or ``"deny"``."""
        return self.rules.get(tool_name, self.default)

    def check(self, tool_name: str, arguments: dict) -> str | None:
        """``None`` if the call may run, else the reason the model will read."""
        decision = self.decide(tool_name)
        if decision == "allow":
            return None
        if decision == "deny":
            return f"Permission denied: '{tool_name}' is not allowed in this session."
        if self.approve is None:
            return f"Permission denied: '{tool_name}' needs approval and no one can approve here."
        try:
            approved = self.approve(tool_name, dict(arguments))
        except Exception as exc:  # a broken approver fails closed, like a broken hook
            return f"Permission denied: the approval check failed ({type(exc).__name__}: {exc})."
        if approved is True:  # only a real yes: a truthy "no" string is not approval
            return None
        return f"Permission denied: the user did not approve this '{tool_name}' call."


def ask_on_stdin(tool_name: str, arguments: dict) -> bool:
    """Ask the person at the keyboard: ``Allow shell({...})? [y/N]``. No one there means no.

    It asks in a terminal (stdin is a tty) or in a Jupyter kernel (the notebook shows an
    input box). Anything else (a pipe, a file, CI) is answered "no" without reading, and
    so is a kernel that cannot ask (nbval runs with input switched off): an unattended
    run never hangs on the question.
    """
    if not (_stdin_is_tty() or _in_kernel()):
        return False
    shown = json.dumps(arguments, ensure_ascii=False)
    if len(shown) > 200:
        shown = shown[:197] + "..."
    try:
        answer = input(f"Allow {tool_name}({shown})? [y/N] ")
    except (EOFError, OSError, RuntimeError):  # no stdin, or a kernel that cannot ask
        return False
    return answer.strip().lower() in ("y", "yes")


def _stdin_is_tty() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (AttributeError, ValueError):  # replaced by an object without isatty, or closed
        return False


def _in_kernel() -> bool:
    """True inside a running Jupyter kernel (merely importing ipykernel does not count)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return getattr(shell, "kernel", None) is not None
