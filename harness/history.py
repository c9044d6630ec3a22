"""An earlier conversation handed to ``Agent.run(task, messages=...)``, checked once, before
the run starts, into the shape the loop assumes: dicts with a known role; an assistant's
calls each with an id and a function with a name and JSON text arguments; each tool message
right after the message that made its call, once; no call left unanswered. A history that
fails is refused with a `ValueError` naming the entry and the fix. System (and
``developer``) messages are left out: the run's own system prompt goes first."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .models import copy_message

ROLES = ("system", "developer", "user", "assistant", "tool")
CALL = "{'id', 'type': 'function', 'function': {'name', 'arguments': <JSON text>}}"


def check_history(messages: Iterable[Any]) -> list[dict]:
    """Copies of ``messages`` as the run will send them, or `ValueError`."""
    if isinstance(messages, (str, dict)) or not isinstance(messages, Iterable):
        raise ValueError("messages must be a list of message dicts (an earlier result's "
                         ".messages)")
    kept: list[dict] = []
    waiting: dict[str, int] = {}  # the last assistant message's calls still unanswered
    for i, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role not in ROLES:
            raise ValueError(f"messages[{i}] is not a message dict with a role among {ROLES} "
                             "(pass an earlier result's .messages)")
        answers = message.get("tool_call_id") if role == "tool" else None
        if role == "tool" and (not isinstance(answers, str) or waiting.pop(answers, None) is None):
            raise ValueError(f"messages[{i}] answers {answers!r}, which no assistant message "
                             "just before it called (or it was answered); leave it out")
        if role != "tool" and waiting:
            raise unanswered(waiting)
        if role == "assistant":
            waiting = {call_id(i, n, call): i for n, call in enumerate(message.get("tool_calls")
                                                                       or ())}
        if role not in ("system", "developer"):
            kept.append(copy_message(message))
    if waiting:
        raise unanswered(waiting)
    return kept


def unanswered(waiting: dict[str, int]) -> ValueError:
    return ValueError(f"the tool calls {sorted(waiting)} of messages[{min(waiting.values())}] "
                      "have no tool message; answer each call, or leave the call out")


def call_id(i: int, n: int, call: Any) -> str:
    """The id of a well-formed call of messages[i] (its function named, its arguments text)."""
    fn = call.get("function") if isinstance(call, dict) else None
    if not (isinstance(fn, dict) and fn.get("name") and isinstance(fn["name"], str)
            and isinstance(fn.get("arguments"), str) and isinstance(call.get("id"), str)
            and call["id"]):
        raise ValueError(f"messages[{i}].tool_calls[{n}] is not a call {CALL}: give it an id, "
                         "a function name, and its arguments as JSON text (json.dumps)")
    return call["id"]
