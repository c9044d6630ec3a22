"""Streamed replies, in pieces: how a whole reply is cut as a server streams it
(`ScriptedModel(stream=True)` plays a script this way), and what had arrived of a reply
that was stopped mid-way (the loop's ``model_partial`` event).

    {"content": "The answer is 5."} -> ("text", "The "), ("text", "answer "), ...
    a tool call                     -> ("tool_call", name, ""), then its arguments
                                       12 characters at a time
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from .models import Message


def pieces(message: Message, words: int = 1) -> Iterator[tuple[str, dict]]:
    """A reply cut as a server streams it: reasoning and text a few words at a time, each
    tool call named first, then its arguments 12 characters at a time."""
    for key in ("reasoning_content", "reasoning"):
        for piece in _words(message.get(key), words):
            yield "reasoning", {"text": piece}
    content = message.get("content")
    for part in content if isinstance(content, list) else [content]:
        kind = "reasoning" if isinstance(part, dict) and part.get("type") == "thinking" else "text"
        text = part.get("text", part.get("thinking")) if isinstance(part, dict) else part
        for piece in _words(text, words):
            yield kind, {"text": piece}
    for index, call in enumerate(message.get("tool_calls") or ()):
        fn = call.get("function") or {}
        name, args = fn.get("name") or "", fn.get("arguments") or ""
        args = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
        yield "tool_call", {"text": "", "index": index, "name": name}
        for start in range(0, len(args), 12):
            yield "tool_call", {"text": args[start:start + 12], "index": index, "name": name}


def _words(text: Any, words: int) -> list[str]:
    """``text`` in pieces of ``words`` words, each with the space after it."""
    found = (re.findall(r"\s*\S+\s*", text) or [text]) if isinstance(text, str) and text else []
    return ["".join(found[i:i + words]) for i in range(0, len(found), words)]


def so_far(deltas: list[dict]) -> dict[str, Any]:
    """What had streamed of a reply that was stopped: its text, reasoning, the call it was
    writing and that call's arguments."""
    text, reasoning, args = ("".join(d["text"] for d in deltas if d.get("kind") == kind)
                             for kind in ("text", "reasoning", "tool_call"))
    call = next((d.get("name") for d in reversed(deltas) if d.get("name")), None)
    return {"text": text, "reasoning": reasoning, "call": call, "arguments": args}
