"""What each request sent, recorded on its ``model_request`` event (`sent_as`) where a
mechanism shaped it (compaction, lesson 13), and rebuilt from there (`sent`, lesson 08)."""

from __future__ import annotations

from typing import Any


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


def sent(run: Any, n: int) -> list[dict]:
    """What ``run``'s request ``n`` (from 1; a sub-agent's are not counted) sent: the
    transcript as it was, or the messages its ``model_request`` event recorded."""
    asked = [e for e in run.events if e.type == "model_request" and e.depth == 0]
    if not 1 <= n <= len(asked):
        raise IndexError(f"request {n}: this run sent requests 1 to {len(asked)}")
    chain, shaped = [], asked[n - 1].get("sent")  # each: the earlier one's first, then
    while hasattr(shaped, "get"):
        chain.append(shaped)
        shaped = asked[shaped["from"] - 1].get("sent")
    if shaped is None:
        return [dict(m) for m in run.messages[:asked[n - 1].n_messages]]
    entries = list(shaped)
    for step in reversed(chain):
        entries = entries[:step["first"]] + list(step["then"])
    return [dict(run.messages[m]) if isinstance(m, int) else dict(m) for m in entries]
