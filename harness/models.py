"""Models: the one thing the loop asks a question of.

A model takes the conversation so far (OpenAI chat-completions wire format) plus the
tool schemas and answers with one assistant message: text, tool calls, or both.

    messages, tools, tool_choice --> model.complete(...) --> ModelReply(content, tool_calls, usage)

This module holds what every model shares: the `ChatModel` protocol, `ModelReply` and
the one reply parser, `parse_reply`. The two models of the course live next to it:

- `ScriptedModel` (scripted.py) plays back assistant messages you write, or build with a
  function from what the tools really returned. Offline, deterministic, and it keeps
  every request it received, so you can look at exactly what was sent.
- `OpenAIModel` (openai_model.py) calls any OpenAI-compatible server through the
  `openai` SDK (OpenAI, DeepSeek, GLM, Ollama, vLLM, OpenRouter).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from .result import RunOver
from .wire import ECHOED, echoed, read_usage, reasoning_fields, split_content

Message = dict[str, Any]


class ModelError(RuntimeError):
    """A model request failed. The loop turns it into the outcome ``"model_error"``."""


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


Report = Callable[..., None]


class ChatModel(Protocol):
    """Anything with this method can drive an `Agent`.

    A model may also take ``report``: ``report(event_type, **data)`` tells the run what
    happens while it answers (streamed text as ``model_delta``, a ``tool_choice``
    fallback). It raises `RunOver` when the run has stopped: stop streaming then.
    """

    def complete(
        self, messages: list[Message], tools: list[dict], tool_choice: Any = None
    ) -> ModelReply: ...


_TAKES_REPORT: dict[type, bool] = {}


def ask(model: ChatModel, messages: list[Message], tools: list[dict], tool_choice: Any,
        report: Report) -> ModelReply:
    """``model.complete(...)``, with ``report`` for a model whose ``complete`` takes it.

    Whatever a model object raises or exits with becomes a `ModelError` saying so; only
    a stop (`RunOver`: cancel, time; KeyboardInterrupt) passes through as it is.
    """
    try:
        return _complete(model, messages, tools, tool_choice, report)
    except (ModelError, RunOver, KeyboardInterrupt):
        raise
    except BaseException as exc:
        raise ModelError(f"{type(exc).__name__}: {exc}") from exc


def _complete(model: ChatModel, messages: list[Message], tools: list[dict], tool_choice: Any,
              report: Report) -> ModelReply:
    kind = type(model)
    if kind not in _TAKES_REPORT:
        try:
            params = inspect.signature(model.complete).parameters
        except (TypeError, ValueError):
            params = {}
        _TAKES_REPORT[kind] = "report" in params
    if _TAKES_REPORT[kind]:
        return model.complete(messages, tools, tool_choice, report=report)
    return model.complete(messages, tools, tool_choice)


def parse_reply(message: Any, usage: dict | None = None, *, estimate: int = 0,
                id_prefix: str = "call", finish_reason: str | None = None) -> ModelReply:
    """Turn an assistant message dict (from a script or from the SDK) into a `ModelReply`.

    Tool calls are normalised to the wire format: ``id``, ``type: "function"`` and
    ``function: {name, arguments}`` with ``arguments`` a string. A call without an id
    gets ``<id_prefix>_<index>``. Arguments are *not* parsed here: a malformed string
    reaches the tool layer, which refuses it in a way the model can read. What real
    providers add (reasoning, content parts, ``<think>``, usage details) is read by
    wire.py: see its table.
    """
    if not isinstance(message, dict):
        raise ModelError(f"expected an assistant message dict, got {type(message).__name__}")
    content, thought = split_content(message.get("content"))
    plain = ECHOED.isdisjoint(message)  # no provider fields: the common case, made quick
    refusal = None if plain or not isinstance(message.get("refusal"), str) else message["refusal"]
    if content is None and refusal:  # a refusal is the model's answer too
        content = refusal
    if content is not None and not isinstance(content, str):
        content = json.dumps(content, ensure_ascii=False)
    calls = [_wire_call(call, i, id_prefix) for i, call in enumerate(message.get("tool_calls")
                                                                    or [])]
    found = thought if plain else reasoning_fields(message) + thought
    reasoning = "\n\n".join(dict.fromkeys(found)) if found else None
    if usage:
        report = read_usage(usage)
    else:
        written = sum(len(c["function"]["name"]) + len(c["function"]["arguments"]) + 40
                      for c in calls)
        completion = estimate_tokens(len(content or "") + len(reasoning or "") + written)
        report = {"prompt_tokens": estimate, "completion_tokens": completion,
                  "total_tokens": estimate + completion, "estimated": True}
    made = () if not calls else tuple(
        i for i, call in enumerate(message["tool_calls"])
        if not (isinstance(call, dict) and call.get("id")))
    return ModelReply(content, calls, report, finish_reason, refusal or None, reasoning,
                      {} if plain else echoed(message), made)


def _wire_call(call: Any, index: int, id_prefix: str) -> dict:
    """One tool call in the wire format. Fields a provider added to the call (Gemini's
    ``extra_content``) stay; a stream's ``index`` goes."""
    call = call if isinstance(call, dict) else {}
    fn = call.get("function") or {}
    args = fn.get("arguments", "")
    if not isinstance(args, str):  # a hand-written script may pass a dict
        args = json.dumps(args, ensure_ascii=False)
    call_id, name = call.get("id") or f"{id_prefix}_{index}", fn.get("name") or ""
    extra = {} if len(call) <= 3 else {k: v for k, v in call.items()
                                        if k not in ("id", "type", "function", "index")}
    return {  # odd ids and names become strings: the loop refuses them cleanly
        "id": call_id if isinstance(call_id, str) else json.dumps(call_id),
        "type": "function",
        "function": {"name": name if isinstance(name, str) else json.dumps(name),
                     "arguments": args},
        **extra,
    }


def estimate_tokens(chars: int) -> int:
    """A rough token estimate (about four characters a token), labelled as such in usage."""
    return (chars + 3) // 4


class PromptSizer:
    """Estimates the prompt size of a growing transcript in O(new messages) per request.

    Re-counting the whole history on every request would make a long run quadratic,
    so it remembers how far it had counted in each message list. It remembers only
    the last few lists (a run and its sub-agents), so a model used for many runs does
    not hold on to every transcript it ever saw.
    """

    KEEP = 8

    def __init__(self) -> None:
        self._seen: dict[int, tuple[int, int, Message | None]] = {}
        self._tools: tuple[list[dict] | None, int] = (None, 0)

    def chars(self, messages: list[Message], tools: list[dict]) -> int:
        count, total, last = self._seen.pop(id(messages), (0, 0, None))
        if count > len(messages) or (count and messages[count - 1] is not last):
            count, total = 0, 0  # not the list we counted before: start again
        for msg in messages[count:]:
            total += len(str(msg.get("content") or "")) + 12
            total += sum(len(c["function"]["arguments"]) + 40 for c in msg.get("tool_calls") or ())
        if messages:
            self._seen[id(messages)] = (len(messages), total, messages[-1])
            if len(self._seen) > self.KEEP:  # forget the list used longest ago
                del self._seen[next(iter(self._seen))]
        return total + self._tools_chars(tools)

    def _tools_chars(self, tools: list[dict]) -> int:
        if not tools:
            return 0
        if self._tools[0] is not tools:
            self._tools = (tools, len(json.dumps(tools)))
        return self._tools[1]


class Transcript(list):
    """The messages of one harness run. The loop only ever appends to it, and never
    edits a message it has sent, so a model may record it message by message."""


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


def __getattr__(name: str) -> Any:
    """``harness.models.ScriptedModel`` and ``.OpenAIModel`` still work: they now live in
    modules of their own (imported here on first use, so no import runs in a circle)."""
    if name in ("ScriptedModel", "ScriptExhausted"):
        from . import scripted
        return getattr(scripted, name)
    if name == "OpenAIModel":
        from .openai_model import OpenAIModel
        return OpenAIModel
    raise AttributeError(f"module 'harness.models' has no attribute {name!r}")
