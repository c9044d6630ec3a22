"""`Settings`: every rule of the core's loop, checked when the agent is made:
``Agent(model, tools, max_turns=20)`` or ``settings=Settings(max_turns=20)``. An
extension's settings are its own keywords (``context_window=``: harness/context/)."""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True)
class Settings:
    """The settings of an `Agent`; a limit of ``None`` is no limit."""

    system: str | None = None  # the system prompt (None: a short default); mechanisms add theirs
    max_turns: int = 10  # model requests this agent may send in one run (a sub-agent: its own)
    max_seconds: float | None = None  # wall-clock seconds of the whole run: then time_limit
    planning: bool = False  # a plan: todo_write, the reminder and the stop gate (04-07)
    reminder_after: int = 3  # tool rounds without a plan update before the reminder (05)
    reminder_counting: str = "success"  # count rounds without an accepted update; "name": a call
    plan_from_words: bool = False  # force todo_write first when the task asks for steps (05)
    subagents: bool = False  # the delegate_task tool: a sub-agent, a fresh context (06)
    subagent_tools: tuple[str, ...] = ()  # the names of this agent's tools a sub-agent may use
    subagent_max_turns: int = 10  # model requests one sub-agent may send
    subagent_system: str | None = None  # a sub-agent's prompt (None: subagent.SUBAGENT_SYSTEM)
    max_requests: int | None = 50  # model requests of the whole run: then request_limit
    max_tool_calls: int | None = 100  # tool calls that run, in the whole run: tool_call_limit
    max_calls_per_reply: int | None = 10  # calls one reply may make; the rest are not run
    max_input_tokens: int | None = None  # input tokens of the whole run (estimated): token_limit
    agent_id: str = "main"  # the name events carry (a sub-agent's: main.sub1, ...)

    def __post_init__(self) -> None:
        object.__setattr__(self, "subagent_tools", tuple(self.subagent_tools))
        for name in ("max_turns", "subagent_max_turns", "reminder_after", *LIMITS):
            value = getattr(self, name)
            if (value is None and name not in LIMITS) or (value is not None and value < 1):
                raise ValueError(f"{name} must be at least 1"
                                 + (", or None for no limit" if name in LIMITS else ""))
        if (self.max_seconds or 0) < 0:
            raise ValueError("max_seconds must be 0 or more, or None for no limit")
        if self.reminder_counting not in ("success", "name"):
            raise ValueError("reminder_counting must be 'success' (rounds without a successful "
                             "plan update) or 'name' (rounds without a todo_write call)")
        if self.plan_from_words and not self.planning:
            raise ValueError("plan_from_words forces a todo_write call, and todo_write exists "
                             "only with planning=True")


LIMITS = ("max_requests", "max_tool_calls", "max_calls_per_reply", "max_input_tokens")
NAMES = tuple(f.name for f in fields(Settings))
