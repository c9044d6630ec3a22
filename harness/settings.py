"""`Settings`: every rule of the core's loop an `Agent` takes, each documented, checked when
the agent is made: ``Agent(model, tools, max_turns=20)`` or ``settings=Settings(max_turns=20)``.
An extension's settings are its own (extend.py): ``Agent(model, context_window=8000)``."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True)
class Settings:
    """The settings of an `Agent`; a limit of ``None`` is no limit."""

    system: str | None = None
    """The system prompt (None: a short default). Mechanisms append their paragraphs."""
    max_turns: int = 10
    """Model requests this agent may send in one run (a sub-agent has its own)."""
    max_seconds: float | None = None
    """Wall-clock seconds for the whole run, sub-agents included: then ``time_limit``."""
    planning: bool = False
    """Give the run a plan: the `todo_write` tool, the reminder and the stop gate (04-07)."""
    reminder_after: int = 3
    """Tool rounds without a successful plan update before the reminder (lesson 05)."""
    reminder_counting: str = "success"
    """``"success"``: count rounds without an accepted update; ``"name"``: without a call."""
    plan_from_words: bool = False
    """Force `todo_write` first when the task asks for steps (`reminder.asks_for_steps`)."""
    subagents: bool = False
    """Give the run the `delegate_task` tool: a sub-agent with a fresh context (lesson 06)."""
    subagent_tools: tuple[str, ...] = ()
    """Names of this agent's tools a sub-agent may use (none by default)."""
    subagent_max_turns: int = 10
    """Model requests one sub-agent may send."""
    subagent_system: str | None = None
    """A sub-agent's system prompt (None: `harness.subagent.SUBAGENT_SYSTEM`)."""
    max_requests: int | None = 50
    """Model requests of the whole run, sub-agents included: then ``request_limit``."""
    max_tool_calls: int | None = 100
    """Tool calls that run, in the whole run: then ``tool_call_limit``."""
    max_calls_per_reply: int | None = 10
    """Calls one reply may make; the rest are answered "not run" (``too_many_calls``)."""
    max_input_tokens: int | None = None
    """Input tokens of the whole run (estimated before each request): then ``token_limit``."""
    max_refusals: int = 2
    """Answers a ``stop`` hook may refuse before the run ends ``unverified`` (lesson 11)."""
    agent_id: str = "main"
    """The name events carry for this agent (a sub-agent's is ``main.sub1``, ...)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "subagent_tools", tuple(self.subagent_tools))
        for name in ("max_turns", "subagent_max_turns", "reminder_after"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        for name in ("max_requests", "max_tool_calls", "max_calls_per_reply", "max_input_tokens"):
            if getattr(self, name) is not None and getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, or None for no limit")
        if self.max_seconds is not None and self.max_seconds < 0:
            raise ValueError("max_seconds must be 0 or more, or None for no limit")
        if self.reminder_counting not in ("success", "name"):
            raise ValueError("reminder_counting must be 'success' (rounds without a successful "
                             "plan update) or 'name' (rounds without a todo_write call)")
        if self.max_refusals < 0:
            raise ValueError("max_refusals must be 0 or more")
        if self.plan_from_words and not self.planning:
            raise ValueError("plan_from_words forces a todo_write call, and todo_write exists "
                             "only with planning=True")


NAMES = tuple(f.name for f in fields(Settings))
