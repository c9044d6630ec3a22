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
|   above prompt + completion (Gemini)             | and reasoning token counts when given     |

`parse_reply` here reads a provider's message with all of these, then hands the plain
wire-format rest to the core's (harness/models.py); the streaming reader (streaming.py)
uses them too, so a streamed reply ends up exactly as the same reply sent whole.
"""

from __future__ import annotations

import re
from typing import Any

from .. import models
from ..models import ModelReply

# Message fields a provider needs back on its own assistant turns, kept as received.
ECHOED = frozenset(models.ECHOED)
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
_LEADING_THINK = re.compile(r"\s*<think>(.*?)(?:</think>|\Z)", re.S)


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
    """``"<think>why</think>answer"`` -> ``("answer", ["why"])``; other text unchanged."""
    if THINK_OPEN not in text and THINK_CLOSE not in text:
        return text, []
    thoughts = []
    while match := _LEADING_THINK.match(text):
        thoughts.append(match.group(1).strip())
        text = text[match.end():]
    if not thoughts and THINK_CLOSE in text and THINK_OPEN not in text.split(THINK_CLOSE)[0]:
        thought, _, text = text.partition(THINK_CLOSE)
        thoughts.append(thought.strip())
    return (text.lstrip() if thoughts else text), thoughts


class ThinkSplitter:
    """Tells streamed text inside a leading ``<think>`` block from the answer after it,
    so a panel shows reasoning as reasoning; the final split is `split_think`'s."""

    def __init__(self) -> None:
        self.state, self.buffer, self.thought = "start", "", False

    def feed(self, text: str) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        self.buffer += text
        while self.buffer:
            if self.state == "text":
                out.append(("text", self.buffer))
                self.buffer = ""
            elif self.state == "think":
                end = self.buffer.find(THINK_CLOSE)
                if end < 0:  # keep what could be the start of </think>
                    keep = next((n for n in range(len(THINK_CLOSE) - 1, 0, -1)
                                 if self.buffer.endswith(THINK_CLOSE[:n])), 0)
                    out.append(("reasoning", self.buffer[:len(self.buffer) - keep]))
                    self.buffer = self.buffer[len(self.buffer) - keep:]
                    break
                out.append(("reasoning", self.buffer[:end]))
                self.buffer, self.state = self.buffer[end + len(THINK_CLOSE):], "start"
            else:  # start: does the answer open with <think>?
                head = self.buffer.lstrip()
                if head.startswith(THINK_OPEN):
                    self.buffer, self.state, self.thought = head[len(THINK_OPEN):], "think", True
                elif not head or THINK_OPEN.startswith(head):
                    break  # not decided yet: wait for more
                else:
                    self.buffer, self.state = (head if self.thought else self.buffer), "text"
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


def read_usage(usage: dict) -> dict:
    """A provider's usage in the harness's shape (models.read_usage), with the details
    providers give under their own names: cached and reasoning token counts."""
    prompt_details = usage.get("prompt_tokens_details") or {}
    cached = prompt_details.get("cached_tokens") if isinstance(prompt_details, dict) else None
    if cached is None:
        cached = usage.get("prompt_cache_hit_tokens")  # DeepSeek's name for it
    details = usage.get("completion_tokens_details") or {}
    thought = details.get("reasoning_tokens") if isinstance(details, dict) else None
    found = {key: value for key, value in (("cached_tokens", cached),
                                            ("reasoning_tokens", thought)) if value is not None}
    return models.read_usage({**usage, **found})


def parse_reply(message: Any, usage: dict | None = None, *, estimate: int = 0,
                id_prefix: str = "call", finish_reason: str | None = None) -> ModelReply:
    """A provider's assistant message as a `ModelReply`: the core's `parse_reply`, after
    the answer is told from the reasoning (fields, parts, ``<think>``) and the usage is
    read with its details. ``ScriptedModel(steps, parse=parse_reply)`` reads steps so."""
    if not isinstance(message, dict):
        return models.parse_reply(message)  # the core says what is wrong with it
    content, thought = split_content(message.get("content"))
    found = reasoning_fields(message) + thought
    plain = {**message, "content": content}
    reply = models.parse_reply(plain, read_usage(usage) if usage else None, estimate=estimate,
                               id_prefix=id_prefix, finish_reason=finish_reason)
    reply.reasoning = "\n\n".join(dict.fromkeys(found)) if found else None
    return reply
