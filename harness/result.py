"""`RunResult`: everything one run produced, for every way it can end (outcomes.py).

Nothing of the transcript is lost: ``messages`` holds every message sent and received,
``events`` every step. ``save(path)`` writes it as JSON; ``load(path)`` reads it back,
and ``ScriptedModel.from_run(path)`` replays it offline.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .events import Event
from .models import DETAILS

if TYPE_CHECKING:
    from pathlib import Path

    from .subagent import Delegation
    from .todo import TodoItem


def empty_usage() -> dict:
    return {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0, "estimated": False}


def add_usage(total: dict, usage: dict) -> None:
    """Add one reply's (or one sub-agent's) usage into a running total; a detail
    (`DETAILS`) appears once a reply has counted it."""
    for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
        total[key] += usage.get(key, 0)
    for key in DETAILS:
        if key in usage:
            total[key] = total.get(key, 0) + usage[key]
    total["estimated"] = total["estimated"] or bool(usage.get("estimated"))


def sent_as(sent: list[dict], run: Any) -> dict[str, Any]:
    """``{"sent": ...}`` for a request a mechanism shaped (nothing for the run's transcript
    as it is): each message the transcript holds as its index, any other (a stub, a
    summary, the plan) as a copy; or, when the last shaped request's messages come first,
    ``{"from": its turn, "first": how many, "then": [the rest, the same way]}``. Both the
    transcript's index and the last request are kept on the run, so a long run pays only
    for what is new in each request."""
    transcript = run.messages
    if sent is transcript:
        return {}
    seen, where, turn, last = run.__dict__.setdefault("_sent", [0, {}, 0, []])
    for i in range(seen, len(transcript)):
        where[id(transcript[i])] = i
    first = len(last) if len(sent) >= len(last) and all(
        a is b for a, b in zip(last, sent, strict=False)) else 0
    then = [where[id(m)] if id(m) in where else dict(m) for m in sent[first:]]
    run._sent = [len(transcript), where, run.control.turns, list(sent)]
    return {"sent": {"from": turn, "first": first, "then": then} if first else then}


def usage_of(events: list[Event]) -> dict:
    """The total usage of the model replies among ``events`` (a sub-agent's included)."""
    total = empty_usage()
    for event in events:
        if event.type == "model_reply":
            add_usage(total, event.data["usage"])
    return total


@dataclass
class RunResult:
    """The outcome of ``Agent.run``: final answer, transcript, events, plan, usage.

    ``turns`` counts the top agent's own model requests (what ``max_turns`` limits);
    ``requests`` counts every request of the run, its sub-agents' too, as ``usage`` does.
    """

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

    @property
    def requests(self) -> int:
        """Model requests of the whole run, sub-agents included."""
        return sum(event.type == "model_request" for event in self.events)

    def sent(self, n: int) -> list[dict]:
        """What this run's request ``n`` (from 1; a sub-agent's are not counted) sent: the
        transcript as it was, or, where a mechanism shaped it (compaction, lesson 13), the
        messages its ``model_request`` event recorded (transcript indices, new messages)."""
        asked = [e for e in self.events if e.type == "model_request" and e.depth == 0]
        if not 1 <= n <= len(asked):
            raise IndexError(f"request {n}: this run sent requests 1 to {len(asked)}")
        chain, shaped = [], asked[n - 1].get("sent")  # each: the earlier one's first, then
        while hasattr(shaped, "get"):
            chain.append(shaped)
            shaped = asked[shaped["from"] - 1].get("sent")
        if shaped is None:
            return [dict(m) for m in self.messages[:asked[n - 1].n_messages]]
        entries = list(shaped)
        for step in reversed(chain):
            entries = entries[:step["first"]] + list(step["then"])
        return [dict(self.messages[m]) if isinstance(m, int) else dict(m) for m in entries]

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
        return {
            "outcome": self.outcome, "final": self.final, "error": self.error,
            "turns": self.turns, "usage": self.usage, "messages": self.messages,
            "plan": [item.model_dump() for item in self.plan],
            "delegations": [d.to_dict() for d in self.delegations],
            "events": [e.to_dict() for e in self.events],
        }

    def save(self, path: str | os.PathLike) -> Path:
        """Write the whole run as UTF-8 JSON; replay it with ``ScriptedModel.from_run``."""
        from pathlib import Path  # here: pathlib costs `import harness` 15 ms

        text = json.dumps(self.to_dict(), ensure_ascii=False, indent=1, default=str)
        Path(path).write_text(text, encoding="utf-8", errors="backslashreplace")  # \udc80 kept
        return Path(path)

    @classmethod
    def load(cls, path: str | os.PathLike) -> RunResult:
        from .subagent import Delegation
        from .todo import TodoItem

        data = _saved(path)
        return cls(
            outcome=data["outcome"], final=data["final"], messages=data["messages"],
            events=[Event.from_dict(e) for e in data["events"]], usage=data["usage"],
            plan=[TodoItem(**i) for i in data["plan"]],
            delegations=[Delegation(**d) for d in data["delegations"]],
            turns=data["turns"], error=data["error"],
        )


def _saved(path: str | os.PathLike) -> dict:
    """The JSON of a run saved with `RunResult.save`, or an error that says what to do."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        if isinstance(data, dict) and isinstance(data.get("events"), list):
            return data
    except ValueError:  # not JSON (a call log is JSON lines), or not UTF-8
        pass
    raise ValueError(f"{os.fspath(path)!r} is not a run saved with RunResult.save; a call log "
                     "(JSON lines) replays with ScriptedModel.from_run(CallLog(path))")


def replies_of(run: Any) -> list[dict]:
    """The model replies of a run, as steps for `ScriptedModel`: a `RunResult`, the path of
    a saved one, or anything with ``replies()`` (a ``harness.durable.CallLog``)."""
    if hasattr(run, "replies"):
        return run.replies()
    events = _saved(run)["events"] if isinstance(run, (str, os.PathLike)) else [
        e.to_dict() for e in run.events]
    steps = []
    for event in events:
        if event["type"] == "model_reply":
            step = dict(event["message"])
            if not event["usage"].get("estimated"):
                step["usage"] = event["usage"]
            if event.get("finish_reason"):  # a cut-off answer replays cut off
                step["finish_reason"] = event["finish_reason"]
            steps.append(step)
    return steps
