"""Reference solutions for lesson 15 (runs that wait and survive)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from harness import Agent, RunResult


def settle(agent: Agent, path: Path, person: Callable[[dict], bool]) -> RunResult:
    """Go on with the run saved at ``path`` until it no longer waits, asking ``person``
    about each waiting call; the file always holds the run as it is now."""
    result = RunResult.load(path)
    while result.outcome == "awaiting_approval":
        approvals = {call["id"]: person(call) for call in result.pending}
        result = agent.resume(result, approvals=approvals)
        result.save(path)  # a new pause, or the end: never a pause already answered
    return result


def retry_marks() -> dict[str, str]:
    """What may run again after a crash, for each of the return agent's tools."""
    return {"track_parcel": "read_only",   # it only reads: reading twice harms nobody
            "book_pickup": "idempotent",   # the courier books once per idempotency key
            "set_status": "idempotent",    # setting the same status twice = setting it once
            "add_note": "side_effects"}    # each call adds a line, and it takes no key
