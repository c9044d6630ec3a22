"""`ScriptedModel`: the offline, deterministic model of the course, and its step builders.

    model = ScriptedModel([
        tool_call("add", a=2, b=3),                                  # the model's move
        lambda messages: say(f"The sum is {messages[-1]['content']}."),  # built from the tool
    ])

Each step is one assistant reply: a message dict in the wire format, or a function that
builds one from (copies of) the messages so far, and from a `RequestInfo` if it takes two.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .models import (Message, ModelError, ModelReply, Report, copy_message, estimate_tokens,
                     message_chars, parse_reply, takes)

Step = Message | Callable[..., Message]


def tool_call(name: str, arguments: dict | str | None = None, /, *, id: str | None = None,
              **kwargs: Any) -> Message:
    """One reply that calls one tool, with keyword arguments, one dict, or raw JSON text
    (broken or not): ``tool_call("read_file", path="docs/faq.md")``."""
    if arguments is not None and kwargs:
        raise TypeError("give the arguments as keywords or as one dict/string, not both")
    if not isinstance(arguments, str):
        arguments = json.dumps(kwargs if arguments is None else arguments, ensure_ascii=False)
    call = {"type": "function", "function": {"name": name, "arguments": arguments}}
    return {"role": "assistant", "content": None,
            "tool_calls": [call if id is None else {"id": id, **call}]}


def say(text: str) -> Message:
    """One reply that answers with ``text`` and calls no tool."""
    return {"role": "assistant", "content": text}


def parallel(*steps: Message) -> Message:
    """One reply that makes every call of ``steps``, in order (and says their text)."""
    text = "\n".join(s["content"] for s in steps if s.get("content")) or None
    return {"role": "assistant", "content": text,
            "tool_calls": [c for s in steps for c in s.get("tool_calls") or ()]}


@dataclass(frozen=True)
class RequestInfo:
    """What a step function may read besides the messages."""

    tools: list[dict]
    tool_choice: Any


class ScriptExhausted(ModelError):
    """The scripted model was asked for more replies than its script holds."""


class ScriptedModel:
    """Plays back a script of replies, keeping every request in ``.requests``. A step may
    carry ``"usage"`` (else it is estimated) and ``"finish_reason"``. ``stream=True``
    streams replies as a live model does; ``parse=harness.live.parse_reply`` reads them so."""

    model: str = "scripted"
    context_window: int | None = None
    partial: ModelReply | None = None  # with stream=True: what arrived of a stopped reply

    def __init__(self, steps: Sequence[Step], *, stream: bool = False, delay: float = 0.0,
                 words: int = 1, parse: Callable[..., ModelReply] = parse_reply) -> None:
        if delay < 0 or words < 1:
            raise ValueError("delay must be >= 0 seconds and words >= 1")
        self.steps, self.stream, self.delay, self.words = list(steps), stream, delay, words
        self.parse = parse
        self._log: list[tuple[list[Message], int, list[dict], Any]] = []
        self._sent: tuple[list[Message], list[Message], int] = ([], [], 0)  # list, copies, chars
        self._tools: tuple[Any, int] = (None, 0)  # the tool list last sent, and its size
        self._requests: list[dict] = []

    @classmethod
    def from_run(cls, run: Any, **settings: Any) -> ScriptedModel:
        """Replay a recorded run's model replies, in request order, sub-agents included:
        ``run`` is a `RunResult`, the path of a saved one, or a ``harness.durable.CallLog``."""
        from .result import replies_of  # the result module reads saved runs and logs

        return cls(replies_of(run), **settings)

    @property
    def requests(self) -> list[dict]:
        """Every request received, as ``{"messages", "tools", "tool_choice"}``."""
        for copies, length, tools, tool_choice in self._log[len(self._requests):]:
            self._requests.append(
                {"messages": copies[:length], "tools": tools, "tool_choice": tool_choice})
        return self._requests

    @property
    def remaining(self) -> int:
        """How many scripted replies are left (never below 0)."""
        return max(0, len(self.steps) - len(self._log))

    def complete(self, messages: list[Message], tools: list[dict], tool_choice: Any = None,
                 *, report: Report | None = None) -> ModelReply:
        n, chars = len(self._log), self._record(messages, tools, tool_choice)
        if n >= len(self.steps):
            total = f"{len(self.steps)} step" + ("" if len(self.steps) == 1 else "s")
            raise ScriptExhausted(f"ScriptedModel has no step left for request #{n + 1} (the "
                                  f"script has {total}): add a step, or lower max_turns")
        step = self.steps[n]
        if callable(step):  # a step reads copies: it can never edit the run
            copies = [copy_message(m) for m in messages]
            info = RequestInfo(list(tools or []), tool_choice)
            step = step(copies, info) if takes(step, "2 args") else step(copies)
        usage, finish = (step.get("usage"), step.get("finish_reason")) if isinstance(
            step, dict) else (None, None)
        reply = self.parse(step, usage, estimate=estimate_tokens(chars), finish_reason=finish,
                           id_prefix=f"call_{n + 1}")  # unique ids across the run
        reply.finish_reason = finish or ("tool_calls" if reply.tool_calls else "stop")
        if self.stream and report is not None:  # streaming is harness.live's (lesson 12)
            from .live.streaming import play

            play(self, step, report)
        return reply

    def _record(self, messages: list[Message], tools: list[dict], tool_choice: Any) -> int:
        """Keep a copy of this request; return its size in characters. A run appends to its
        list, so only the new messages are copied and counted; any other list (a compacted
        request, or one edited in place) is copied afresh."""
        sent, copies, chars = self._sent
        if sent is not messages or len(copies) > len(messages) or (
                copies and messages[len(copies) - 1].get("content") != copies[-1].get("content")):
            copies, chars = [], 0  # not the same list grown (a compacted request): afresh
        for message in messages[len(copies):]:
            copies.append(copy_message(message))
            chars += message_chars(message)
        self._sent = (messages, copies, chars)
        self._log.append((copies, len(messages), tools or [], tool_choice))
        if self._tools[0] is not tools:
            self._tools = (tools, len(json.dumps(tools)) if tools else 0)
        return chars + self._tools[1]
