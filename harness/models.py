"""Models: the one thing the loop asks a question of.

    messages, tools, tool_choice --> model.complete(...) --> ModelReply(content, tool_calls, usage)

A model takes the conversation so far (OpenAI chat-completions wire format) plus the
tool schemas and answers with one assistant message: text, tool calls, or both. This
module holds what every model shares: the `ChatModel` protocol, `ModelReply`, and
`parse_reply`, which reads one assistant message in the wire format. The models:

- `ScriptedModel` (scripted.py) plays back replies you write. Offline, deterministic.
- `OpenAIModel` (harness.live) calls any OpenAI-compatible server through the `openai`
  SDK; what real providers add to a reply is read there (harness/live/wire.py).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from .outcomes import ModelError, RunOver

Message = dict[str, Any]
Report = Callable[..., None]
# Message fields a provider needs back on its own assistant turns, kept as received.
DETAILS = ("cached_tokens", "reasoning_tokens")  # counted by some providers only
ECHOED = ("reasoning_content", "reasoning", "reasoning_details", "extra_content", "refusal")


@dataclass
class ModelReply:
    """One assistant turn: what the model said, which tools it wants, what it cost.

    ``finish_reason`` is the provider's (``"stop"``, ``"tool_calls"``, ``"length"``: cut
    off, ...); ``refusal`` is set when the model declined. ``extra`` holds provider fields
    that must go back with the message (DeepSeek's ``reasoning_content``). ``made_ids``
    lists the calls whose id the harness made up, because the model sent none.
    """

    content: str | None
    tool_calls: list[dict] = field(default_factory=list)
    usage: dict = field(default_factory=dict)
    finish_reason: str | None = None
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
    """Anything with this method can drive an `Agent`.

    A model may also take ``report``: ``report(event_type, **data)`` tells the run what
    happens while it answers (streamed text as ``model_delta``, a ``tool_choice``
    fallback); ``report()`` with no event only asks whether the run goes on. Either
    raises `RunOver` once the run has stopped: stop answering then.
    """

    def complete(
        self, messages: list[Message], tools: list[dict], tool_choice: Any = None
    ) -> ModelReply: ...


def ask(model: ChatModel, messages: list[Message], tools: list[dict], tool_choice: Any,
        report: Report) -> ModelReply:
    """``model.complete(...)``, with ``report`` for a model whose ``complete`` takes it.

    Whatever a model object raises or exits with becomes a `ModelError` saying so; only
    a stop (`RunOver`: cancel, time; KeyboardInterrupt) passes through as it is.
    """
    try:
        if takes(model.complete, "report"):
            return model.complete(messages, tools, tool_choice, report=report)
        return model.complete(messages, tools, tool_choice)
    except (ModelError, RunOver, KeyboardInterrupt):
        raise
    except BaseException as exc:
        raise ModelError(f"{type(exc).__name__}: {exc}") from exc


_TAKES: dict[tuple[Any, str], bool] = {}


def takes(fn: Callable[..., Any], what: str) -> bool:
    """Does ``fn`` take a keyword ``what``, or (``what="2 args"``) two positional ones?"""
    key = (getattr(fn, "__func__", fn), what)
    if key not in _TAKES:
        try:
            params = list(inspect.signature(fn).parameters.values())
        except (TypeError, ValueError):  # a builtin without a signature
            params = []
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY,
                                                      p.POSITIONAL_OR_KEYWORD)]
        _TAKES[key] = (len(positional) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in params)
                       if what == "2 args" else any(p.name == what for p in params))
    return _TAKES[key]


def parse_reply(message: Any, usage: dict | None = None, *, estimate: int = 0,
                id_prefix: str = "call", finish_reason: str | None = None) -> ModelReply:
    """Turn an assistant message dict in the wire format into a `ModelReply`.

    Tool calls are normalised: ``id``, ``type: "function"`` and ``function: {name,
    arguments}`` with ``arguments`` a string; a call without an id gets
    ``<id_prefix>_<index>``. Arguments are *not* parsed here: a malformed string reaches
    the tool layer, which refuses it in a way the model can read. Without ``usage`` the
    tokens are estimated (``estimate``: the prompt's) and marked ``"estimated": True``.
    """
    if not isinstance(message, dict):
        raise ModelError(f"expected an assistant message dict, got {type(message).__name__}")
    content, refusal = message.get("content"), message.get("refusal")
    refusal = refusal if isinstance(refusal, str) and refusal else None
    if content is None and refusal:  # a refusal is the model's answer too
        content = refusal
    if content is not None and not isinstance(content, str):
        content = json.dumps(content, ensure_ascii=False)
    raw = message.get("tool_calls") or []
    calls = [_wire_call(call, i, id_prefix) for i, call in enumerate(raw)]
    reasoning = next((message[k] for k in ("reasoning_content", "reasoning")
                      if isinstance(message.get(k), str) and message[k]), None)
    if usage:
        usage = read_usage(usage)
    else:
        written = sum(len(c["function"]["name"]) + len(c["function"]["arguments"]) + 40
                      for c in calls)
        completion = estimate_tokens(len(content or "") + len(reasoning or "") + written)
        usage = {"prompt_tokens": estimate, "completion_tokens": completion,
                 "total_tokens": estimate + completion, "estimated": True}
    made = tuple(i for i, call in enumerate(raw) if not (isinstance(call, dict) and call.get("id")))
    extra = {k: message[k] for k in ECHOED if message.get(k) is not None}
    return ModelReply(content, calls, usage, finish_reason, refusal, reasoning, extra, made)


def _wire_call(call: Any, index: int, id_prefix: str) -> dict:
    """One tool call in the wire format; fields a provider added (Gemini's
    ``extra_content``) stay, a stream's ``index`` goes."""
    call = call if isinstance(call, dict) else {}
    fn = call.get("function") or {}
    args = fn.get("arguments", "")
    if not isinstance(args, str):  # a hand-written script may pass a dict
        args = json.dumps(args, ensure_ascii=False)
    call_id, name = call.get("id") or f"{id_prefix}_{index}", fn.get("name") or ""
    extra = {k: v for k, v in call.items() if k not in ("id", "type", "function", "index")}
    return {"id": call_id if isinstance(call_id, str) else json.dumps(call_id),
            "type": "function",  # odd ids and names become strings: the loop refuses them
            "function": {"name": name if isinstance(name, str) else json.dumps(name),
                         "arguments": args}, **extra}


def read_usage(usage: dict) -> dict:
    """Usage in the harness's shape: the three totals and ``estimated: False`` (a total
    above prompt + completion is the provider's own, kept), plus the details given as
    ``cached_tokens`` / ``reasoning_tokens`` (harness.live reads providers' own names)."""
    count = {k: _count(usage.get(k)) for k in ("prompt_tokens", "completion_tokens",
                                               "total_tokens", *DETAILS) if k in usage}
    prompt, completion = count.get("prompt_tokens", 0), count.get("completion_tokens", 0)
    return {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": count.get("total_tokens") or prompt + completion, "estimated": False,
            **{k: count[k] for k in DETAILS if k in count}}


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
    calls, echoed = message.get("tool_calls") or (), (message.get(k) for k in ECHOED[:3])
    return len(str(message.get("content") or "")) + 12 + sum(
        len(c["function"]["arguments"]) + 40 for c in calls) + sum(len(str(e)) for e in echoed if e)


def copy_message(message: Message) -> Message:
    """A copy of one wire-format message deep enough that editing it cannot touch the
    original (its tool calls and content parts are copied too)."""
    copy = dict(message)
    if isinstance(copy.get("content"), list):
        copy["content"] = [dict(p) if isinstance(p, dict) else p for p in copy["content"]]
    if copy.get("tool_calls"):
        copy["tool_calls"] = [{**c, "function": dict(c.get("function") or {})}
                              for c in copy["tool_calls"]]
    return copy
