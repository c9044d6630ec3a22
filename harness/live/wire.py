"""What real providers put in a reply, and what of it must go back.

The OpenAI wire format has one ``content`` string per assistant message. Real
providers add to it, and a harness that ignores the additions breaks on them:

| provider sends                                   | the harness                               |
|--------------------------------------------------|-------------------------------------------|
| ``reasoning_content`` (DeepSeek, Qwen, GLM)      | keeps it on the message: DeepSeek refuses |
| ``reasoning`` / ``reasoning_details`` (OpenRouter,| the next request of a tool-using run when |
|   Ollama, vLLM, Cerebras)                        | it is missing                             |
| ``content`` as a list of parts (Mistral thinking)| answer = the text parts; thinking parts   |
|                                                  | are reasoning, never sent back as text    |
| ``<think>…</think>`` in the text (open models)   | kept out of the answer, shown as reasoning|
| ``usage`` with ``*_details``, a ``total_tokens`` | keeps the provider's total, plus cached   |
|   above prompt + completion (Gemini); cached as  | and reasoning token counts when given     |
|   ``num_cached_tokens`` (Mistral)                |                                           |
| ``finish_reason`` by other names: ``max_tokens``,| read for what it means (`read_finish`):   |
|   ``end_turn``, ``SAFETY``, ``""``, ``"error"``   | ``"error"`` / ``"abort"`` is a ModelError |
| ``annotations`` (citations)                      | kept on the message, never sent back      |

`parse_reply` here reads a provider's message with all of these, then hands the plain
wire-format rest to the core's (harness/models.py); the streaming reader (streaming.py)
uses them too, so a streamed reply ends up exactly as the same reply sent whole.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .. import models
from ..models import ModelError, ModelReply

# Message fields a provider needs back on its own assistant turns, kept as received.
ECHOED = frozenset({"reasoning_content", "reasoning", "reasoning_details", "extra_content",
                    "refusal"})
KEPT = ("annotations",)  # kept on the transcript's message, never sent back (OpenAI refuses)
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
_SPACE = re.compile(r"\s*")
_BLOCK = re.compile(r"\s*<think>(.*?)</think>", re.S)  # one whole leading block
# Finish reasons by the names providers use, read for what they mean (lower case).
FINISHES = {
    "stop": ("stop", "end_turn", "stop_sequence", "eos", "eos_token", "end", "complete",
             "completed"),
    "tool_calls": ("tool_calls", "tool_call", "tool_use", "function_call"),
    "length": ("length", "max_tokens", "max_output_tokens", "model_length", "max_length",
               "token_limit", "model_context_window_exceeded"),
    "content_filter": ("content_filter", "safety", "recitation", "blocklist", "spii",
                       "prohibited_content", "image_safety", "refusal"),
}
FINISH = {name: meaning for meaning, names in FINISHES.items() for name in names}
FAILED = frozenset({"error", "abort", "aborted", "cancelled", "canceled", "timeout",
                    "insufficient_system_resource", "malformed_function_call", "server_error",
                    "internal_error"})
FILTERED = "the provider's content filter stopped the reply (finish_reason {!r})"


def echoed(message: dict) -> dict:
    """The provider fields of ``message`` that go back with it (``None`` is left out)."""
    return {key: value for key, value in message.items()
            if key in ECHOED and value is not None}


def reasoning_fields(message: dict) -> list[str]:
    """The reasoning text a provider put in fields of its own, in a fixed order."""
    found = [message.get("reasoning_content"), message.get("reasoning")]
    texts = [text for text in found if isinstance(text, str) and text.strip()]
    for detail in message.get("reasoning_details") or ():  # OpenRouter: a list of blocks
        if isinstance(detail, dict):
            text = detail.get("text") or detail.get("summary")
            if isinstance(text, str) and text.strip():
                texts.append(text)
    return texts


def split_content(content: Any) -> tuple[Any, list[str]]:
    """The answer text of ``content``, and the reasoning found inside it.

    A list of parts gives its text parts as the answer and its thinking parts as
    reasoning; a string loses a leading ``<think>`` block (or everything before a lone
    ``</think>``, when the chat template opened the block in the prompt).
    """
    if content is None:
        return None, []
    reasoning: list[str] = []
    if isinstance(content, list):
        texts = []
        for part in content:
            kind, text = content_part(part)
            (texts if kind == "text" else reasoning).append(text)
        content = "".join(texts) if texts else None
    if isinstance(content, str) and "think>" in content:
        content, thought = split_think(content)
        reasoning += thought
    return content, [r for r in reasoning if r.strip()] if reasoning else reasoning


def split_think(text: str) -> tuple[str, list[str]]:
    """``"<think>why</think>answer"`` -> ``("answer", ["why"])``; other text unchanged.

    Leading blocks are reasoning. A block that never closes is not: what follows its
    ``<think>`` is the answer (a model that forgot to close it, or was cut off, still
    said it, and dropping it would lose the whole reply). A lone ``</think>`` ends
    reasoning the chat template opened in the prompt. Linear in the text's length.
    """
    if THINK_OPEN not in text and THINK_CLOSE not in text:
        return text, []
    thoughts, pos = [], 0
    while block := _BLOCK.match(text, pos):
        thoughts.append(block.group(1).strip())
        pos = block.end()
    start = _SPACE.match(text, pos).end()
    if text.startswith(THINK_OPEN, start):  # never closed: its text is the answer
        return text[start + len(THINK_OPEN):].lstrip(), thoughts
    if thoughts:
        return text[pos:].lstrip(), thoughts
    head, close, rest = text.partition(THINK_CLOSE)
    if close and THINK_OPEN not in head:
        return rest.lstrip(), [head.strip()]
    return text, []


class ThinkSplitter:
    """Tells streamed text inside a leading ``<think>`` block from the answer after it,
    so a panel shows reasoning as reasoning; the final split is `split_think`'s. It holds
    back at most a tag's length (and leading whitespace), so a reply of any number of
    pieces and blocks is split in time proportional to its length."""

    def __init__(self) -> None:
        self.state, self.buffer, self.thought = "start", "", False
        self.space: list[str] = []  # whitespace before the first decision, kept for text

    def feed(self, text: str) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        buf, pos = self.buffer + text, 0  # the buffer is shorter than a tag
        while pos < len(buf):
            if self.state == "text":
                out.append(("text", buf[pos:]))
                pos = len(buf)
            elif self.state == "think":
                end = buf.find(THINK_CLOSE, pos)
                if end < 0:  # keep what could be the start of </think>
                    keep = next((n for n in range(len(THINK_CLOSE) - 1, 0, -1)
                                 if n <= len(buf) - pos and buf.endswith(THINK_CLOSE[:n])), 0)
                    out.append(("reasoning", buf[pos:len(buf) - keep]))
                    pos = len(buf) - keep
                    break
                out.append(("reasoning", buf[pos:end]))
                pos, self.state = end + len(THINK_CLOSE), "start"
            elif block := _BLOCK.match(buf, pos):  # start, and a whole block is here
                out.append(("reasoning", block.group(1)))
                pos, self.thought = block.end(), True
                self.space.clear()
            else:  # start: does the answer open with <think>?
                start = _SPACE.match(buf, pos).end()
                if start > pos and not self.thought:
                    self.space.append(buf[pos:start])
                pos = start
                if buf.startswith(THINK_OPEN, pos):
                    pos, self.state, self.thought = pos + len(THINK_OPEN), "think", True
                    self.space.clear()
                elif len(buf) - pos < len(THINK_OPEN) and THINK_OPEN.startswith(buf[pos:]):
                    break  # not decided yet: wait for more
                else:
                    out.append(("text", "".join(self.space)))
                    self.space.clear()
                    self.state = "text"
        self.buffer = buf[pos:]
        return [(kind, text) for kind, text in out if text]


def content_part(part: Any) -> tuple[str, str]:
    """One content part as ``("text" | "reasoning", its text)``."""
    if isinstance(part, str):
        return "text", part
    if not isinstance(part, dict):
        return "text", ""
    kind = part.get("type")
    if kind in ("thinking", "reasoning", "reasoning_text"):
        inner = part.get("thinking", part.get("reasoning", part.get("text", "")))
        if isinstance(inner, list):  # Mistral: thinking holds text parts of its own
            inner = "".join(content_part(p)[1] for p in inner)
        return "reasoning", inner if isinstance(inner, str) else ""
    text = part.get("text")
    return "text", text if isinstance(text, str) else ""


def chars_in(value: Any) -> int:
    """About how many characters ``value`` (JSON-like data) holds: its strings' lengths,
    one for anything else. Without recursion, in time proportional to its size."""
    total, stack = 0, [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        else:
            total += 1
    return total


def read_finish(raw: Any) -> str | None:
    """A provider's ``finish_reason`` for what it means: ``"stop"``, ``"tool_calls"``,
    ``"length"``, ``"content_filter"``, or as given when unknown; ``None`` for none
    (``""``: Snowflake). One that says the reply failed (``"error"``, ``"abort"``...)
    raises `ModelError`: what came is not an answer."""
    if not isinstance(raw, str) or not raw.strip():
        return None
    name = raw.strip().lower()
    if name in FAILED:
        raise ModelError(f"the provider ended the reply with finish_reason {raw!r}")
    return FINISH.get(name, raw)


def read_usage(usage: dict) -> dict:
    """A provider's usage in the harness's shape (models.read_usage), with the details
    providers give under their own names: cached and reasoning token counts."""
    prompt_details = usage.get("prompt_tokens_details") or {}
    cached = prompt_details.get("cached_tokens") if isinstance(prompt_details, dict) else None
    for name in ("prompt_cache_hit_tokens", "num_cached_tokens"):  # DeepSeek's, Mistral's
        if cached is None:
            cached = usage.get(name)
    details = usage.get("completion_tokens_details") or {}
    thought = details.get("reasoning_tokens") if isinstance(details, dict) else None
    found = {key: value for key, value in (("cached_tokens", cached),
                                            ("reasoning_tokens", thought)) if value is not None}
    totals = {key: usage.get(key) for key in models.TOTALS}  # a provider's own names: read above
    return models.read_usage({**totals, **found})


def wire_call(call: Any) -> dict:
    """A provider's tool call for the core's `parse_reply`: a stream's ``index`` goes, odd
    ids and names become strings (the loop refuses them), its own fields stay."""
    call = {k: v for k, v in call.items() if k != "index"} if isinstance(call, dict) else {}
    fn = dict(call["function"]) if isinstance(call.get("function"), dict) else {}
    for key, holder in (("id", call), ("name", fn)):
        if holder.get(key) and not isinstance(holder[key], str):
            holder[key] = json.dumps(holder[key])
    return {**call, "function": fn}


def parse_reply(message: Any, usage: dict | None = None, *, estimate: int = 0,
                id_prefix: str = "call", finish_reason: str | None = None) -> ModelReply:
    """A provider's assistant message as a `ModelReply`: the core's `parse_reply`, after
    the answer is told from the reasoning (fields, parts, ``<think>``), the usage is read
    with its details and the finish reason for what it means (`read_finish`: an
    ``"error"`` raises `ModelError`; a content filter marks the reply refused). An empty
    refusal is no refusal; citations (``annotations``) stay on the message.
    ``ScriptedModel(steps, parse=parse_reply)`` reads steps so."""
    if not isinstance(message, dict):
        return models.parse_reply(message)  # the core says what is wrong with it
    finish = read_finish(finish_reason)
    content, thought = split_content(message.get("content"))
    found = reasoning_fields(message) + thought
    plain = {k: v for k, v in message.items() if k in ECHOED or k == "tool_calls"}
    plain["content"] = content  # and no other field: only these go back to the provider
    if message.get("tool_calls"):
        plain["tool_calls"] = [wire_call(call) for call in message["tool_calls"]]
    refusal = plain.get("refusal")
    if not (isinstance(refusal, str) and refusal.strip()):
        plain.pop("refusal", None)  # Snowflake sends "refusal": "" with every answer
    reply = models.parse_reply(plain, read_usage(usage) if usage else None, estimate=estimate,
                               id_prefix=id_prefix, finish_reason=finish)
    reply.reasoning = "\n\n".join(dict.fromkeys(found)) if found else None
    notes = message.get("annotations")
    if isinstance(notes, list) and notes:
        reply.extra["annotations"] = notes
    if finish == "content_filter" and not reply.refusal:
        reply.refusal = FILTERED.format(finish_reason)
    return reply
