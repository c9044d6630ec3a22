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

`chunks_of` goes the other way, for a test server that streams a whole reply, and
`play` streams a scripted one (`ScriptedModel(stream=True)`) through both ways;
stream_reader.py reads a live stream in a thread of its own, so cancel can close it at
once. (The panel keeps the pieces it shows: harness/ui/reply.py.)
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from typing import Any

from ..models import Report, parse_reply
from .stream_reader import ReplyTooLarge
from .wire import ThinkSplitter, chars_in, content_part

Delta = tuple[str, dict]  # (kind, data) as reported in a model_delta event
JOINED = ("text", "summary", "data", "signature")  # what pieces of one block add to


class Assembler:
    """One assistant message, built from the chunks of a streamed reply (as dicts).

    ``limit``: the most the reply may hold, in characters of what it carries (text,
    reasoning, calls), each chunk counting one more: past it `ReplyTooLarge`. Every
    piece is kept in a list and joined once, so a reply of many pieces costs time in
    proportion to its length. ``progress`` grows whenever a chunk adds to the reply: a
    chunk that carries nothing new (no text, the same usage or finish_reason again, a
    tool-call piece without arguments) is a keep-alive, however many bytes it takes.
    """

    def __init__(self, limit: int | None = None) -> None:
        self.limit = limit
        self.text: list[str] = []
        self.thinking: list[str] = []  # thinking content parts (Mistral)
        self.fields: dict[str, list[str]] = {}  # reasoning_content, reasoning, refusal
        self.details: list[dict] = []  # reasoning_details blocks (OpenRouter)
        self.pieces: list[dict[str, list[str]]] = []  # each block's text, summary, data...
        self.annotations: list[Any] = []  # citations (OpenAI search models)
        self.calls: dict[int, dict] = {}
        self.args: dict[int, list[str]] = {}  # each call's argument pieces
        self.ids: dict[Any, int] = {}  # a call's id -> its index (streams without indexes)
        self.finish_reason: str | None = None
        self.usage: dict | None = None
        self.chunks = self.size = self.progress = 0
        self._top = -1  # the highest call index so far
        self._think = ThinkSplitter()

    def feed(self, chunk: dict) -> list[Delta]:
        """Add one chunk; return what it added, for the observers."""
        self.chunks += 1
        self._grow(1, counts=False)
        groq = chunk.get("x_groq")  # older Groq streams put usage there
        self._usage(chunk.get("usage") or (groq.get("usage") if isinstance(groq, dict) else None))
        deltas: list[Delta] = []
        for choice in chunk.get("choices") or ():
            if not isinstance(choice, dict) or (choice.get("index") or 0) != 0:
                continue  # the harness asks for one choice and reads the first
            self._usage(choice.get("usage"))  # Moonshot puts it in the choice
            finish = choice.get("finish_reason")
            if finish and isinstance(finish, str) and finish != self.finish_reason:
                self.finish_reason = finish
                self.progress += 1
            delta = choice.get("delta") or {}
            if not isinstance(delta, dict):
                continue
            for key in ("reasoning_content", "reasoning"):
                if isinstance(delta.get(key), str):
                    self.fields.setdefault(key, []).append(delta[key])
                    self._grow(len(delta[key]))
                    deltas.append(("reasoning", {"text": delta[key]}))
            for detail in _list(delta.get("reasoning_details")):
                deltas += self._detail(detail)
            if isinstance(delta.get("refusal"), str) and delta["refusal"]:
                self.fields.setdefault("refusal", []).append(delta["refusal"])
                self._grow(len(delta["refusal"]))
                deltas.append(("text", {"text": delta["refusal"]}))
            deltas += self._content(delta.get("content"))
            for note in _list(delta.get("annotations")):
                self.annotations.append(note)
                self._grow(chars_in(note))
            for call in _list(delta.get("tool_calls")):
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
            message["reasoning_details"] = [
                {**block, **{key: "".join(parts) for key, parts in pieces.items()}}
                for block, pieces in zip(self.details, self.pieces, strict=True)]
        if self.annotations:
            message["annotations"] = list(self.annotations)
        if self.calls:
            message["tool_calls"] = [
                {**self.calls[i], "function": {**self.calls[i]["function"],
                                               "arguments": "".join(self.args[i])}}
                for i in sorted(self.calls)]
        return message

    def described(self) -> str:
        """What arrived, in a few words (for an error about a stream that broke off)."""
        parts = [f"{sum(map(len, self.text))} characters of text"]
        parts += [f"a call to {self.calls[i]['function']['name'] or '?'} with "
                  f"{sum(map(len, self.args[i]))} characters of arguments"
                  for i in sorted(self.calls)[:3]]
        if len(self.calls) > 3:
            parts.append(f"{len(self.calls) - 3} more calls")
        return ", ".join(parts)

    def _grow(self, chars: int, *, counts: bool = True) -> None:
        self.size += chars
        self.progress += chars if counts else 0
        if self.limit is not None and self.size > self.limit:
            raise ReplyTooLarge(f"the reply passed max_reply_chars ({self.limit:,} characters) "
                                f"after {self.described()}: no more of it was read")

    def _usage(self, usage: Any) -> None:
        if isinstance(usage, dict) and usage:
            self.progress += usage != self.usage
            self.usage = usage
            self._grow(chars_in(usage), counts=False)

    def _content(self, content: Any) -> list[Delta]:
        if isinstance(content, str):
            self.text.append(content)
            self._grow(len(content))
            return [(kind, {"text": text}) for kind, text in self._think.feed(content)]
        deltas: list[Delta] = []
        for part in _list(content):  # as a whole reply's
            kind, text = content_part(part)
            (self.thinking if kind == "reasoning" else self.text).append(text)
            self._grow(len(text))
            deltas.append((kind, {"text": text}))
        return deltas

    def _detail(self, detail: Any) -> list[Delta]:
        """OpenRouter streams reasoning_details in pieces: a piece continues the block of
        the same index, type and id (an id that arrives later completes the block), and
        adds to its text, summary, data and signature; any other piece starts a block.
        A summary and an encrypted block share an index, so the index alone is not enough."""
        if not isinstance(detail, dict):
            return []
        self._grow(chars_in(detail), counts=False)
        block = self._block_of(detail)
        self.progress += (block is None) + sum(len(v) for k, v in detail.items()
                                               if k in JOINED and isinstance(v, str))
        if block is None:
            self.details.append({k: v for k, v in detail.items()
                                 if k not in JOINED or not isinstance(v, str)})
            self.pieces.append({k: [v] for k, v in detail.items()
                                if k in JOINED and isinstance(v, str)})
        else:
            target, pieces = self.details[block], self.pieces[block]
            for key, value in detail.items():
                if key in JOINED and isinstance(value, str):
                    pieces.setdefault(key, []).append(value)  # over a null sent first
                elif target.get(key) in (None, ""):
                    target[key] = value  # an id or a format that comes later
        text = detail.get("text") or detail.get("summary")
        return [("reasoning", {"text": text})] if isinstance(text, str) else []

    def _block_of(self, detail: dict) -> int | None:
        """The block a piece continues: the last one, if it has the same index and type
        and no other id; None: the piece starts a block."""
        if not self.details or "index" not in detail:
            return None
        last = self.details[-1]
        kind, ident = detail.get("type"), detail.get("id")
        same = (last.get("index") == detail["index"] and kind in (None, last.get("type"))
                and (ident is None or last.get("id") in (None, ident)))
        return len(self.details) - 1 if same else None

    def _call(self, piece: Any) -> list[Delta]:
        """A piece of a tool call: the first names it, the rest carry argument text."""
        if not isinstance(piece, dict):
            return []
        index = piece.get("index")
        if not isinstance(index, int) or isinstance(index, bool):  # a server without one
            index = self._guess_index(piece)
        if index not in self.calls:
            self.calls[index] = {"type": "function", "function": {"name": ""}}
            self.args[index] = []
            self._top = max(self._top, index)
        call, added = self.calls[index], 0  # added: what this piece adds (progress)
        fn = piece.get("function") if isinstance(piece.get("function"), dict) else {}
        if piece.get("id") and not call.get("id"):
            call["id"] = piece["id"]
            self.ids.setdefault(_key(piece["id"]), index)
            added += 1
        if fn.get("name") and not call["function"]["name"]:
            call["function"]["name"] = fn["name"]
            added += 1
        args = fn.get("arguments")
        if isinstance(args, dict):  # a server that sends the arguments as one object
            args = json.dumps(args, ensure_ascii=False)
        if isinstance(args, str):
            self.args[index].append(args)
            added += len(args)
        extra = {k: v for k, v in piece.items() if k not in ("index", "id", "function")}
        added += any(call.get(k) != v for k, v in extra.items())
        call.update(extra)
        self._grow(len(args or "") + chars_in(fn.get("name")) + chars_in(piece.get("id"))
                   + (chars_in(extra) if extra else 0), counts=False)
        self.progress += added
        return [("tool_call", {"text": args or "", "index": index,
                               "name": call["function"]["name"]})]

    def _guess_index(self, piece: dict) -> int:
        """Without an index: a new id, or a new name after a named call, starts a call."""
        if piece.get("id") and _key(piece["id"]) in self.ids:
            return self.ids[_key(piece["id"])]
        last = self._top
        named = last in self.calls and self.calls[last]["function"]["name"]
        fn = piece.get("function") if isinstance(piece.get("function"), dict) else {}
        starts = bool(piece.get("id")) or bool(fn.get("name"))
        return last + 1 if last < 0 or (starts and named) else last


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def _key(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


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


def play(model: Any, message: dict, report: Report) -> None:
    """`ScriptedModel(stream=True)`: ``message`` cut into chunks (`chunks_of`), read back as
    a live model reads them (`Assembler`), each piece reported as it arrives, ``model.delay``
    apart. If the run stops meanwhile, ``model.partial`` keeps what had arrived."""
    built, model.partial = Assembler(), None
    try:
        for chunk in chunks_of(message, model.words):
            for kind, data in built.feed(chunk):
                report("model_delta", kind=kind, **data)
                if model.delay:
                    time.sleep(model.delay)
    except BaseException:  # the run was cancelled or ran out of time meanwhile
        model.partial = parse_reply(built.message())
        raise
