"""`RunResult`: everything one run produced, for every way it can end (outcomes.py): every
message sent and received, every event. Saving and loading it is lent by an extension
(harness/context/saved.py, the ``runs`` service: extend.py)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .events import Event
from .extend import service

if TYPE_CHECKING:
    from pathlib import Path

    from .subagent import Delegation
    from .todo import TodoItem


def usage_of(events: list[Event]) -> dict:
    """The usage of the model replies among ``events``, a sub-agent's too: every count
    (``cached_tokens`` once a reply has one) summed; estimated if any one was."""
    total = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0, "estimated": False}
    for usage in (e.data["usage"] for e in events if e.type == "model_reply"):
        total["estimated"] = total["estimated"] or bool(usage.get("estimated"))
        for key in usage.keys() - {"estimated"}:
            total[key] = total.get(key, 0) + usage[key]
    return total


@dataclass
class RunResult:
    """The outcome of ``Agent.run``. ``turns`` counts the top agent's own model requests (what
    ``max_turns`` limits); ``requests`` counts every request, its sub-agents' too."""

    outcome: str
    final: str | None
    messages: list[dict]
    events: list[Event] = field(default_factory=list)
    usage: dict = field(default_factory=lambda: usage_of([]))
    plan: list[TodoItem] = field(default_factory=list)
    delegations: list[Delegation] = field(default_factory=list)
    turns: int = 0
    error: str | None = None
    pending: list[dict] = field(default_factory=list)  # calls waiting for a person (pause.py)
    output: Any = None  # run(output=Model): the answer as its instance (harness/answers/)

    @property
    def ok(self) -> bool:
        return self.outcome == "completed"

    @property
    def requests(self) -> int:
        return sum(event.type == "model_request" for event in self.events)

    def sent(self, n: int) -> list[dict]:
        """What this run's request ``n`` (from 1; a sub-agent's and a summary's are not
        counted) sent: the transcript as it was then, or what a mechanism sent instead
        (its ``model_request`` event's ``sent``: messages, or indices into the transcript)."""
        asked = [e for e in self.events if e.type == "model_request" and e.depth == 0
                 and not e.get("purpose")]
        if not 1 <= n <= len(asked):
            raise IndexError(f"request {n}: this run sent requests 1 to {len(asked)}")
        sent = asked[n - 1].get("sent", range(asked[n - 1].n_messages))
        return [dict(self.messages[m] if isinstance(m, int) else m) for m in sent]

    def __repr__(self) -> str:
        final = self.final
        if final is not None and len(final) >= 70:
            final = final[:67] + "..."
        tail = f", error={self.error!r}" if self.error else ""
        return (f"RunResult(outcome={self.outcome!r}, turns={self.turns}, "
                f"messages={len(self.messages)}, final={final!r}{tail})")

    def plan_text(self) -> str:
        from .todo import render
        return render(self.plan)

    def to_dict(self) -> dict[str, Any]:
        return service("runs").to_dict(self)

    def save(self, path: str | os.PathLike) -> Path:
        """Write the whole run as UTF-8 JSON; replay it with ``ScriptedModel.from_run``."""
        return service("runs").save(self, path)

    @classmethod
    def load(cls, path: str | os.PathLike) -> RunResult:
        return service("runs").load(cls, path)
