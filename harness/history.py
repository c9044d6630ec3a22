"""An earlier conversation handed to ``Agent.run(task, messages=...)``, checked once.

What the loop assumes of every message it sends is checked here, before the run starts:
a dict with a known role; an assistant's tool calls each with an id and a function with
a name and JSON text arguments; each tool message right after the message that made its
call, once; no call left without its answer. A history that fails is refused with a
`ValueError` naming the entry and the fix. System (and ``developer``) messages are left
out: the run's own system prompt goes first.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .models import copy_message

ROLES = ("system", "developer", "user", "assistant", "tool")


def check_history(messages: Iterable[Any]) -> list[dict]:
    """Copies of ``messages`` as the run will send them, or `ValueError`."""
    if isinstance(messages, (str, dict)) or not isinstance(messages, Iterable):
        raise ValueError("messages must be a list of message dicts: an earlier "
                         "result's .messages")
    kept: list[dict] = []
    waiting: dict[str, int] = {}  # call ids of the last assistant message still unanswered
    for i, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role not in ROLES:
            what = f"has role {role!r}" if isinstance(message, dict) else (
                f"is a {type(message).__name__}, not a message dict")
            raise ValueError(f"messages[{i}] {what}; each message is a dict whose role is "
                             f"one of {', '.join(ROLES)} (pass an earlier result's .messages)")
        if role == "tool":
            _answer(i, message, waiting)
        elif waiting:
            raise ValueError(f"messages[{i}]: the tool calls {sorted(waiting)} of "
                             f"messages[{min(waiting.values())}] have no tool message before "
                             "it; answer each call, or leave the call out")
        if role == "assistant":
            waiting = {_call_id(i, n, call): i for n, call in enumerate(_calls(i, message))}
        if role not in ("system", "developer"):
            kept.append(copy_message(message))
    if waiting:
        raise ValueError(f"the tool calls {sorted(waiting)} of messages[{min(waiting.values())}] "
                         "have no tool message; answer each call, or leave the call out")
    return kept


def _calls(i: int, message: dict) -> list:
    calls = message.get("tool_calls") or []
    if not isinstance(calls, list):
        raise ValueError(f"messages[{i}]: tool_calls must be a list of calls")
    return calls


def _call_id(i: int, n: int, call: Any) -> str:
    """The id of a well-formed call (its function named, its arguments JSON text)."""
    fn = call.get("function") if isinstance(call, dict) else None
    where = f"messages[{i}].tool_calls[{n}]"
    if not isinstance(fn, dict) or not isinstance(fn.get("name"), str) or not fn["name"]:
        raise ValueError(f"{where} has no function name; a call is {{'id', 'type': 'function', "
                         "'function': {'name', 'arguments'}}")
    if not isinstance(fn.get("arguments"), str):
        raise ValueError(f"{where}: arguments must be JSON text (json.dumps(...)), not "
                         f"{type(fn.get('arguments')).__name__}")
    if not isinstance(call.get("id"), str) or not call["id"]:
        raise ValueError(f"{where} has no id; its tool message names it in tool_call_id")
    return call["id"]


def _answer(i: int, message: dict, waiting: dict[str, int]) -> None:
    """A tool message answers one call of the assistant message before it, once."""
    call_id = message.get("tool_call_id")
    if not isinstance(call_id, str) or call_id not in waiting:
        raise ValueError(f"messages[{i}] is a tool message for {call_id!r}, which no "
                         "assistant message just before it called (or it was answered "
                         "already); leave it out")
    del waiting[call_id]
