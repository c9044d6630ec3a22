"""A run on disk (lessons 08 and 12): `RunResult.save` writes it as UTF-8 JSON, `RunResult.load`
reads it back, and `replies_of` hands its model replies to ``ScriptedModel.from_run``.

Nothing here imports harness.result (that would be an import cycle): `load` is given the class.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..events import Event


def to_dict(run: Any) -> dict[str, Any]:
    """The run as JSON data. What a shaped request sent (a ``model_request``'s ``sent``) is
    kept short: a message of the transcript as its index, any other (a stub) whole."""
    where = {id(m): i for i, m in enumerate(run.messages)}
    return {
        "outcome": run.outcome, "final": run.final, "error": run.error,
        "turns": run.turns, "usage": run.usage, "messages": run.messages,
        "pending": run.pending, "output": getattr(run.output, "model_dump", lambda **_: run.output)(
            mode="json"),
        "plan": [item.model_dump() for item in run.plan],
        "delegations": [d.to_dict() for d in run.delegations],
        "events": [_event(e, where) for e in run.events],
    }


def _event(event: Any, where: dict[int, int]) -> dict[str, Any]:
    data = event.to_dict()
    if isinstance(data.get("sent"), list):
        data["sent"] = [m if isinstance(m, int) else where.get(id(m), m) for m in data["sent"]]
    return data


def save(run: Any, path: str | os.PathLike) -> Path:
    text = json.dumps(run.to_dict(), ensure_ascii=False, indent=1, default=str)
    Path(path).write_text(text, encoding="utf-8", errors="backslashreplace")  # \udc80 kept
    return Path(path)


def load(cls: type, path: str | os.PathLike) -> Any:
    from ..subagent import Delegation
    from ..todo import TodoItem

    data = _saved(path)
    return cls(
        outcome=data["outcome"], final=data["final"], messages=data["messages"],
        events=[Event.from_dict(e) for e in data["events"]], usage=data["usage"],
        plan=[TodoItem(**i) for i in data["plan"]],
        delegations=[Delegation(**d) for d in data["delegations"]],
        turns=data["turns"], error=data["error"], pending=data.get("pending", []),
        output=data.get("output"),  # its data: Model.model_validate(run.output) for the instance
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
    a saved one, or anything with ``replies()`` (a ``harness.durable.CallLog``). A reply to
    a mechanism's request carries its ``purpose`` (``"summary"``)."""
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
            if event.get("purpose"):  # a summary: never replayed as the agent's answer
                step["purpose"] = event["purpose"]
            steps.append(step)
    return steps


def steps_of(run: Any) -> tuple[list[dict], list[dict]]:
    """A run's replies as `ScriptedModel` steps: the agents', and apart from them the
    replies to its mechanisms' requests (a summary, any ``purpose``)."""
    steps = replies_of(run)
    answers = [s for s in steps if not s.get("purpose")]
    others = [{k: v for k, v in s.items() if k != "purpose"} for s in steps if s.get("purpose")]
    return answers, others
