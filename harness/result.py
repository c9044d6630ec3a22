"""`RunResult`: everything one run produced, for every way it can end.

| outcome        | meaning                                                         |
|----------------|-----------------------------------------------------------------|
| `completed`    | the model answered without calling a tool (and the plan is done) |
| `open_items`   | it answered twice while its plan still had open items            |
| `turn_limit`   | this agent's `max_turns` model requests were used up             |
| `time_limit`   | `max_seconds` ran out                                            |
| `cancelled`    | `cancel.is_set()` became true (or the kernel was interrupted)    |
| `model_error`  | a model request failed; `error` says why                        |
| `truncated`    | the answer was cut off (``finish_reason: "length"``); `final` holds what came |
| `refused`      | the model refused to answer; `final` holds its refusal           |
| `request_limit` | the run's model requests (``max_requests``) were used up        |
| `tool_call_limit` | the run's tool calls (``max_tool_calls``) were used up        |
| `token_limit`  | the run's input tokens (``max_input_tokens``) were used up      |
| `unverified`   | a ``stop`` hook kept refusing the answer; `final` is the last one, `error` why |

Nothing of the transcript is lost: ``messages`` holds every message sent and
received, ``events`` every step. ``save(path)`` writes it as JSON; ``load(path)`` reads
it back, and ``ScriptedModel.from_run(path)`` replays it offline.

Inside the harness a run ends by raising `RunOver` with its outcome, wherever the
reason is found (the budget, the stop gate, an answer); the loop turns it into the
`RunResult`, so the loop itself keeps no bookkeeping for endings.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .events import Event
from .subagent import Delegation
from .todo import TodoItem, render

OUTCOMES = ("completed", "open_items", "turn_limit", "time_limit", "cancelled", "model_error",
            "truncated", "refused", "request_limit", "tool_call_limit", "token_limit",
            "unverified")


class RunOver(Exception):
    """The run ends now, with this outcome (and the answer or the error, if any)."""

    def __init__(self, outcome: str, final: str | None = None, error: str | None = None) -> None:
        super().__init__(outcome)
        self.outcome, self.final, self.error = outcome, final, error


def empty_usage() -> dict:
    return {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0, "estimated": False}


DETAILS = ("cached_tokens", "reasoning_tokens")  # counted by some providers only


def add_usage(total: dict, usage: dict) -> None:
    """Add one reply's (or one sub-agent's) usage into a running total.

    The three totals are always there; a detail (`DETAILS`) appears in the total once
    a reply has counted it, and then sums only what the replies that counted it said.
    """
    for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
        total[key] += usage.get(key, 0)
    for key in DETAILS:
        if key in usage:
            total[key] = total.get(key, 0) + usage[key]
    total["estimated"] = total["estimated"] or bool(usage.get("estimated"))


def usage_of(events: list[Event]) -> dict:
    """The total usage of the model replies among ``events`` (a sub-agent's included)."""
    total = empty_usage()
    for event in events:
        if event.type == "model_reply":
            add_usage(total, event.data["usage"])
    return total


@dataclass
class RunResult:
    """The outcome of ``Agent.run``: final answer, transcript, events, plan, usage."""

    outcome: str
    final: str | None
    messages: list[dict]
    events: list[Event] = field(default_factory=list)
    usage: dict = field(default_factory=empty_usage)
    plan: list[TodoItem] = field(default_factory=list)
    delegations: list[Delegation] = field(default_factory=list)
    turns: int = 0
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.outcome == "completed"

    def __repr__(self) -> str:
        final = self.final
        if final is not None and len(final) >= 70:
            final = final[:67] + "..."
        tail = f", error={self.error!r}" if self.error else ""
        return (f"RunResult(outcome={self.outcome!r}, turns={self.turns}, "
                f"messages={len(self.messages)}, final={final!r}{tail})")

    def plan_text(self) -> str:
        return render(self.plan)

    def to_dict(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome, "final": self.final, "error": self.error,
            "turns": self.turns, "usage": self.usage, "messages": self.messages,
            "plan": [item.model_dump() for item in self.plan],
            "delegations": [d.to_dict() for d in self.delegations],
            "events": [e.to_dict() for e in self.events],
        }

    def save(self, path: str | Path) -> Path:
        """Write the whole run as UTF-8 JSON (replay it with ``ScriptedModel.from_run``)."""
        path = Path(path)
        path.write_text(json.dumps(self.to_dict(), ensure_ascii=False, indent=1),
                        encoding="utf-8")
        return path

    @classmethod
    def load(cls, path: str | Path) -> RunResult:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        return cls(
            outcome=data["outcome"], final=data["final"], messages=data["messages"],
            events=[Event.from_dict(e) for e in data["events"]], usage=data["usage"],
            plan=[TodoItem(**i) for i in data["plan"]],
            delegations=[Delegation(**d) for d in data["delegations"]],
            turns=data["turns"], error=data["error"],
        )
