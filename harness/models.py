"""Models: the one thing the loop asks a question of (messages in the OpenAI wire format).

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
# A reply's own fields; any other (a provider's reasoning, say) stays on the message as received.
PARSED = frozenset({"role", "content", "tool_calls", "usage", "finish_reason"})
WIRE = frozenset({"role", "content", "tool_calls", "tool_call_id", "name"})  # counted apart


@dataclass
class ModelReply:
    """One assistant turn. ``extra``: provider fields that go back with the message;
    ``made_ids``: the calls whose id the harness made up (the model sent none)."""

    content: str | None
    tool_calls: list[dict] = field(default_factory=list)
    usage: dict = field(default_factory=dict)
    finish_reason: str | None = None  # "stop", "tool_calls", "length" (cut off), ...
    refusal: str | None = None
    reasoning: str | None = None
    extra: dict = field(default_factory=dict)
    made_ids: tuple[int, ...] = ()

    def message(self) -> Message:
        """The assistant message exactly as it goes into the transcript."""
        if not self.tool_calls:  # the API refuses a null content without tool calls
            return {"role": "assistant", "content": self.content or "", **self.extra}
        return {"role": "assistant", "content": self.content, "tool_calls": self.tool_calls,
                **self.extra}


class ChatModel(Protocol):
    """Anything with this method can drive an `Agent`. It may also take ``report``:
    ``report(event_type, **data)`` tells the run what happens meanwhile (``model_delta``);
    ``report()`` only asks whether the run goes on. Both raise `RunOver` once it stopped."""

    def complete(
        self, messages: list[Message], tools: list[dict], tool_choice: Any = None
    ) -> ModelReply: ...


def ask(model: ChatModel, messages: list[Message], tools: list[dict], tool_choice: Any,
        report: Report, purpose: str | None = None) -> ModelReply:
    """``model.complete(...)``, with ``report`` and ``purpose`` if it takes them; whatever it
    raises becomes a `ModelError`, but a stop (`RunOver`, KeyboardInterrupt) passes through."""
    extra = {"report": report} if takes(model.complete, "report") else {}
    if purpose and takes(model.complete, "purpose"):
        extra["purpose"] = purpose
    try:
        return model.complete(messages, tools, tool_choice, **extra)
    except (ModelError, RunOver, KeyboardInterrupt):
        raise
    except BaseException as exc:
        raise ModelError(f"{type(exc).__name__}: {exc}") from exc


_TAKES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # fn: {what: bool}


def takes(fn: Callable[..., Any], what: str) -> bool:
    """Does ``fn`` take a keyword ``what``, or (``what="2 args"``) two positional ones?
    Remembered for as long as the function lives (a method's: its function's)."""
    key = getattr(fn, "__func__", fn)
    try:
        known = _TAKES.setdefault(key, {})
    except TypeError:  # cannot be weakly referenced (a builtin): work it out each time
        known = {}
    if what not in known:
        try:
            signature = inspect.signature(fn)
            if what == "2 args":
                signature.bind_partial(None, None)  # a TypeError if it cannot take two
            known[what] = what == "2 args" or what in signature.parameters
        except (TypeError, ValueError):  # it cannot, or it has no signature (a builtin)
            known[what] = False
    return known[what]


def parse_reply(message: Any, usage: dict | None = None, *, estimate: int = 0,
                id_prefix: str = "call", finish_reason: str | None = None) -> ModelReply:
    """An assistant message as a `ModelReply`. A call without an id gets ``<id_prefix>_<i>``;
    arguments are *not* parsed (the tool layer refuses bad ones in words the model can
    read). Without ``usage`` it is estimated (``estimate``: the prompt's tokens)."""
    if not isinstance(message, dict):
        raise ModelError(f"expected an assistant message dict, got {type(message).__name__}")
    content, refusal = message.get("content"), message.get("refusal")
    refusal = refusal if isinstance(refusal, str) and refusal else None
    if content is None:  # a refusal is the model's answer too
        content = refusal
    elif not isinstance(content, str):
        content = json.dumps(content, ensure_ascii=False)
    raw = message.get("tool_calls") or ()
    if not all(isinstance(call, dict) for call in raw):  # a hand-written step's slip
        raise ModelError("each tool call must be a dict: {'id', 'type': 'function', 'function': "
                         "{'name', 'arguments'}} (tool_call(name, ...) writes one)")
    calls = [{**call, "id": call.get("id") or f"{id_prefix}_{i}", "type": "function",
              "function": _function(call)} for i, call in enumerate(raw)]
    extra = {k: v for k, v in message.items() if k not in PARSED and v is not None}
    if usage:
        usage = read_usage(usage)
    else:  # the answer, the calls, and what else the model wrote (its reasoning)
        written = sum(len(c["function"]["name"]) + len(c["function"]["arguments"]) + 40
                      for c in calls) + sum(len(str(v)) for k, v in extra.items() if k != "refusal")
        completion = estimate_tokens(len(content or "") + written)
        usage = {"prompt_tokens": estimate, "completion_tokens": completion,
                 "total_tokens": estimate + completion, "estimated": True}
    made = tuple(i for i, call in enumerate(raw) if not call.get("id"))
    return ModelReply(content, calls, usage, finish_reason, refusal, None, extra, made)


def _function(call: dict) -> dict:
    fn = call.get("function") or {}
    args = fn.get("arguments", "")
    if not isinstance(args, str):  # a hand-written script may pass a dict
        args = json.dumps(args, ensure_ascii=False)
    return {"name": fn.get("name") or "", "arguments": args}


def read_usage(usage: dict) -> dict:
    """Usage as the three totals (a provider's own total kept), ``estimated: False`` and any
    other count given (``cached_tokens``...); a count that is not a number counts as 0."""
    count = {k: _count(usage.get(k)) for k in TOTALS[:2]}
    total = _count(usage.get("total_tokens")) or count["prompt_tokens"] + count["completion_tokens"]
    details = {k: v for k, v in usage.items() if k.endswith("_tokens") and k not in TOTALS
               and type(v) is int}
    return {**count, "total_tokens": total, "estimated": False, **details}


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
    for key, value in message.items():  # a provider's own fields (its reasoning) go back
        if key not in WIRE and value is not None:
            chars += len(str(value))
    return chars


def copy_message(message: Message) -> Message:
    """A copy of one message deep enough that editing it cannot touch the original."""
    copy = dict(message)
    if isinstance(copy.get("content"), list):
        copy["content"] = [dict(p) if isinstance(p, dict) else p for p in copy["content"]]
    if copy.get("tool_calls"):
        copy["tool_calls"] = [{**c, "function": dict(c.get("function") or {})}
                              for c in copy["tool_calls"]]
    return copy
