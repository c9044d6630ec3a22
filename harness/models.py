"""Models: what the loop asks, in the OpenAI wire format, and the reply it reads back.

    messages, tools, tool_choice --> model.complete(...) --> ModelReply(content, tool_calls, usage)
"""

from __future__ import annotations

import inspect
import json
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from .outcomes import ModelError, RunOver

Message = dict[str, Any]
Report = Callable[..., None]
TOTALS = ("prompt_tokens", "completion_tokens", "total_tokens")
OWN = frozenset({"role", "content", "tool_calls", "usage", "finish_reason"})  # a reply's own
WIRE = frozenset({"role", "content", "tool_calls", "tool_call_id", "name"})  # a message's own
_PARAMETERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # fn: its parameters


@dataclass
class ModelReply:
    """One assistant turn, as the loop reads it."""

    content: str | None
    tool_calls: list[dict] = field(default_factory=list)
    usage: dict = field(default_factory=dict)
    finish_reason: str | None = None  # "stop", "tool_calls", "length" (cut off), ...
    refusal: str | None = None
    reasoning: str | None = None
    extra: dict = field(default_factory=dict)  # provider fields sent back (DeepSeek's reasoning)
    made_ids: tuple[int, ...] = ()  # the calls whose id the harness made up

    def message(self) -> Message:
        """The message for the transcript (never a null answer: the API refuses one)."""
        calls = {"tool_calls": self.tool_calls} if self.tool_calls else {}
        content = self.content if calls else self.content or ""
        return {"role": "assistant", "content": content, **calls, **self.extra}


class ChatModel(Protocol):
    """Anything with this method can drive an `Agent`. It may also take ``purpose`` and
    ``report``: ``report(event_type, **data)`` tells the run what happens meanwhile,
    ``report()`` asks whether it goes on; both raise `RunOver` once it stopped."""

    def complete(self, messages: list[Message], tools: list[dict],
                 tool_choice: Any = None) -> ModelReply: ...


def ask(model: ChatModel, messages: list[Message], tools: list[dict], tool_choice: Any,
        report: Report, purpose: str | None = None) -> ModelReply:
    """``model.complete(...)``; what it raises becomes a `ModelError`, but a stop passes."""
    given = {"report": report, "purpose": purpose}
    given = {k: v for k, v in given.items() if v and takes(model.complete, k)}
    try:
        return model.complete(messages, tools, tool_choice, **given)
    except (ModelError, RunOver, KeyboardInterrupt):
        raise
    except BaseException as exc:
        raise ModelError(f"{type(exc).__name__}: {exc}") from exc


def takes(fn: Callable[..., Any], what: str) -> bool:
    """Does ``fn`` take a keyword ``what``, or (``"2 args"``) two positional arguments?"""
    key = getattr(fn, "__func__", fn)  # a method's function (remembered while it lives)
    try:
        if key not in _PARAMETERS:
            _PARAMETERS[key] = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # no signature (a builtin), or not weakly referable
        return False
    params = _PARAMETERS[key]
    if what != "2 args":
        return what in params or any(p.kind == p.VAR_KEYWORD for p in params.values())
    positional = [p for p in params.values() if p.kind <= p.VAR_POSITIONAL]  # *args: any number
    return len(positional) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in positional)


def parse_reply(message: Any, usage: dict | None = None, *, estimate: int = 0,
                id_prefix: str = "call", finish_reason: str | None = None) -> ModelReply:
    """An assistant message as a `ModelReply`: a call without an id gets ``<id_prefix>_<i>``,
    arguments stay text (the call path refuses bad ones in words the model reads), and
    without ``usage`` it is estimated (``estimate``: the prompt's tokens)."""
    if not isinstance(message, dict):
        raise ModelError(f"expected an assistant message dict, got {type(message).__name__}")
    refusal = message.get("refusal") if isinstance(message.get("refusal"), str) else None
    content = message.get("content")
    content = refusal or None if content is None else content  # a refusal is an answer too
    if not isinstance(content, (str, type(None))):  # content parts
        content = json.dumps(content, ensure_ascii=False)
    raw = message.get("tool_calls") or ()
    if not all(isinstance(call, dict) for call in raw):  # a hand-written step's slip
        raise ModelError("each tool call must be a dict: {'id', 'type': 'function', 'function': "
                         "{'name', 'arguments'}} (tool_call(name, ...) writes one)")
    calls = [{**call, "id": call.get("id") or f"{id_prefix}_{i}", "type": "function",
              "function": _function(call)} for i, call in enumerate(raw)]
    extra = {k: v for k, v in message.items() if k not in OWN and v is not None}
    if usage is None:  # what the model wrote: the answer, the calls, the rest (its reasoning)
        written = len(content or "") + sum(len(str(v)) for k, v in extra.items() if k != "refusal")
        written += sum(len(c["function"]["name"] + c["function"]["arguments"]) + 40 for c in calls)
        tokens = estimate_tokens(written)
        usage = {"prompt_tokens": estimate, "completion_tokens": tokens,
                 "total_tokens": estimate + tokens, "estimated": True}
    made = tuple(i for i, call in enumerate(raw) if not call.get("id"))
    usage = usage if usage.get("estimated") else read_usage(usage)
    return ModelReply(content, calls, usage, finish_reason, refusal or None, None, extra, made)


def _function(call: dict) -> dict:
    fn = call.get("function") or {}
    args = fn.get("arguments", "")
    args = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)  # a dict
    return {"name": fn.get("name") or "", "arguments": args}


def read_usage(usage: dict) -> dict:
    """Usage as the three totals (a provider's own total kept), ``estimated``, and any other
    whole count it gives (``cached_tokens``...); a count that is not a number counts as 0."""
    count = {k: _count(usage.get(k)) for k in TOTALS}
    if not count["total_tokens"]:
        count["total_tokens"] = count["prompt_tokens"] + count["completion_tokens"]
    details = {k: v for k, v in usage.items() if k.endswith("_tokens") and k not in TOTALS
               and type(v) is int}
    return {**count, "estimated": bool(usage.get("estimated")), **details}


def _count(value: Any) -> int:
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError, OverflowError):
        return 0


def estimate_tokens(chars: int) -> int:
    """A rough token estimate (about four characters a token), labelled as such in usage."""
    return (chars + 3) // 4


def message_chars(message: Message) -> int:
    """About how many characters one message costs in a request (the estimate's unit)."""
    chars = len(str(message.get("content") or "")) + 12
    for call in message.get("tool_calls") or ():
        chars += len(call["function"]["arguments"]) + 40
    return chars + sum(len(str(v)) for k, v in message.items() if k not in WIRE and v is not None)


def copy_message(message: Message) -> Message:
    """A copy of one message deep enough that editing it cannot touch the original."""
    copy = dict(message)
    if isinstance(copy.get("content"), list):
        copy["content"] = [dict(p) if isinstance(p, dict) else p for p in copy["content"]]
    if copy.get("tool_calls"):
        copy["tool_calls"] = [{**c, "function": dict(c.get("function") or {})}
                              for c in copy["tool_calls"]]
    return copy
