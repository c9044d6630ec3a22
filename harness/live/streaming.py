"""Streaming: a reply read piece by piece, shown as it is written, assembled exactly.

    chunks (server-sent events) --> Assembler.feed --> deltas: report("model_delta", ...)
                                          |
                                          +--> .message()  the same dict a whole reply gives

With ``stream=True`` a server sends the reply in chunks: text, reasoning, and tool
calls whose JSON arguments arrive a few characters at a time, each call keyed by its
``index``. `Assembler` joins them back into the one assistant message a non-streamed
request would have returned, so `parse_reply` reads both the same way; and for each
chunk it says what was added, so a panel or a terminal can show it at once:

    report("model_delta", kind="text",      text="The ans")
    report("model_delta", kind="reasoning", text="Let me check")
    report("model_delta", kind="tool_call", text='{"a": 2', index=0, name="add")

`chunks_of` goes the other way, for a test server that streams a whole reply;
stream_reader.py reads a live stream in a thread of its own, so cancel can close it at
once. (The panel keeps the pieces it shows: harness/ui/reply.py.)
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from .wire import ThinkSplitter, content_part

Delta = tuple[str, dict]  # (kind, data) as reported in a model_delta event


class Assembler:
    """One assistant message, built from the chunks of a streamed reply (as dicts)."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.thinking: list[str] = []  # thinking content parts (Mistral)
        self.fields: dict[str, list[str]] = {}  # reasoning_content, reasoning, refusal
        self.details: list[dict] = []  # reasoning_details (OpenRouter)
        self.calls: dict[int, dict] = {}
        self.finish_reason: str | None = None
        self.usage: dict | None = None
        self.chunks = 0
        self._think = ThinkSplitter()

    def feed(self, chunk: dict) -> list[Delta]:
        """Add one chunk; return what it added, for the observers."""
        self.chunks += 1
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        deltas: list[Delta] = []
        for choice in chunk.get("choices") or ():
            if choice.get("index", 0) != 0:
                continue  # the harness asks for one choice and reads the first
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
            delta = choice.get("delta") or {}
            for key in ("reasoning_content", "reasoning"):
                if isinstance(delta.get(key), str):
                    self.fields.setdefault(key, []).append(delta[key])
                    deltas.append(("reasoning", {"text": delta[key]}))
            for detail in delta.get("reasoning_details") or ():
                deltas += self._detail(detail)
            if isinstance(delta.get("refusal"), str):
                self.fields.setdefault("refusal", []).append(delta["refusal"])
                deltas.append(("text", {"text": delta["refusal"]}))
            deltas += self._content(delta.get("content"))
            for call in delta.get("tool_calls") or ():
                deltas += self._call(call)
        return [(kind, data) for kind, data in deltas if data["text"] or kind == "tool_call"]

    def message(self) -> dict:
        """The assistant message as a non-streamed reply would have carried it."""
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.text) or None}
        if self.thinking:  # the same parts a whole reply has, so parse_reply splits them alike
            message["content"] = [{"type": "thinking", "thinking": "".join(self.thinking)},
                                  {"type": "text", "text": message["content"] or ""}]
        message.update({key: "".join(pieces) for key, pieces in self.fields.items()})
        if self.details:
            message["reasoning_details"] = self.details
        if self.calls:
            message["tool_calls"] = [self.calls[i] for i in sorted(self.calls)]
        return message

    def described(self) -> str:
        """What arrived, in a few words (for an error about a stream that broke off)."""
        parts = [f"{len(''.join(self.text))} characters of text"]
        parts += [f"a call to {c['function']['name'] or '?'} with "
                  f"{len(c['function']['arguments'])} characters of arguments"
                  for c in self.calls.values()]
        return ", ".join(parts)

    def _content(self, content: Any) -> list[Delta]:
        if isinstance(content, str):
            self.text.append(content)
            return [(kind, {"text": text}) for kind, text in self._think.feed(content)]
        deltas: list[Delta] = []
        for part in content if isinstance(content, list) else ():  # as a whole reply's
            kind, text = content_part(part)
            (self.thinking if kind == "reasoning" else self.text).append(text)
            deltas.append((kind, {"text": text}))
        return deltas

    def _detail(self, detail: Any) -> list[Delta]:
        """OpenRouter streams reasoning_details pieces; pieces of one block share an index."""
        if not isinstance(detail, dict):
            return []
        last = self.details[-1] if self.details else None
        if last is not None and "index" in detail and last.get("index") == detail["index"]:
            for key in ("text", "summary", "data"):
                if isinstance(detail.get(key), str):
                    last[key] = last.get(key, "") + detail[key]
        else:
            self.details.append(dict(detail))
        text = detail.get("text") or detail.get("summary")
        return [("reasoning", {"text": text})] if isinstance(text, str) else []

    def _call(self, piece: dict) -> list[Delta]:
        """A piece of a tool call: the first names it, the rest carry argument text."""
        index = piece.get("index")
        if not isinstance(index, int):  # a server that leaves out the index
            index = self._guess_index(piece)
        call = self.calls.setdefault(index, {"type": "function",
                                             "function": {"name": "", "arguments": ""}})
        fn = piece.get("function") or {}
        if piece.get("id") and not call.get("id"):
            call["id"] = piece["id"]
        if fn.get("name") and not call["function"]["name"]:
            call["function"]["name"] = fn["name"]
        args = fn.get("arguments")
        if isinstance(args, dict):  # a server that sends the arguments as one object
            args = json.dumps(args, ensure_ascii=False)
        if isinstance(args, str):
            call["function"]["arguments"] += args
        call.update({k: v for k, v in piece.items() if k not in ("index", "id", "function")})
        return [("tool_call", {"text": args or "", "index": index,
                               "name": call["function"]["name"]})]

    def _guess_index(self, piece: dict) -> int:
        """Without an index: a new id, or a new name after a named call, starts a call."""
        ids = {c["id"]: i for i, c in self.calls.items() if c.get("id")}
        if piece.get("id") in ids:
            return ids[piece["id"]]
        last = max(self.calls, default=-1)
        named = last >= 0 and self.calls[last]["function"]["name"]
        starts = bool(piece.get("id")) or bool((piece.get("function") or {}).get("name"))
        return last + 1 if last < 0 or (starts and named) else last


def chunks_of(message: dict, words: int = 1) -> Iterator[dict]:
    """A whole assistant message cut into the chunks a server would stream: text and
    reasoning a few words at a time, each tool call named first, then its arguments in
    pieces. `ScriptedModel(stream=True)` plays a scripted reply this way."""
    def chunk(delta: dict, finish: str | None = None) -> dict:
        return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    for key in ("reasoning_content", "reasoning"):
        for piece in _pieces(message.get(key), words):
            yield chunk({key: piece})
    content = message.get("content")
    for part in content if isinstance(content, list) else [content]:
        if isinstance(part, dict) and part.get("type") == "thinking":
            yield chunk({"content": [part]})
        else:
            text = part.get("text") if isinstance(part, dict) else part
            for piece in _pieces(text, words):
                yield chunk({"content": piece})
    for index, call in enumerate(message.get("tool_calls") or ()):
        fn = call.get("function") or {}
        head = {k: v for k, v in call.items() if k != "function"}
        yield chunk({"tool_calls": [{**head, "index": index,
                                     "function": {"name": fn.get("name"), "arguments": ""}}]})
        args = fn.get("arguments")
        args = args if isinstance(args, str) else json.dumps(args or {}, ensure_ascii=False)
        for start in range(0, len(args), 12):
            yield chunk({"tool_calls": [{"index": index,
                                         "function": {"arguments": args[start:start + 12]}}]})
    yield chunk({}, "tool_calls" if message.get("tool_calls") else "stop")


def _pieces(text: Any, words: int) -> list[str]:
    """``text`` in pieces of ``words`` words, each with the space after it."""
    if not isinstance(text, str) or not text:
        return []
    found = re.findall(r"\s*\S+\s*", text) or [text]
    return ["".join(found[i:i + words]) for i in range(0, len(found), words)]
