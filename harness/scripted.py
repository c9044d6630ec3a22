"""`ScriptedModel`: the offline, deterministic model of the course, and its step builders.

    model = ScriptedModel([
        tool_call("add", a=2, b=3),                                  # the model's move
        lambda messages: say(f"The sum is {messages[-1]['content']}."),  # built from the tool
    ])

Each step is one assistant reply: a message dict in the wire format (the builders below
write them) or a function that builds one from the messages so far, so a scripted answer
can quote what a tool really returned (a second parameter gets a `RequestInfo`).

| builder                        | one assistant reply that                            |
|--------------------------------|-----------------------------------------------------|
| `tool_call(name, **arguments)` | calls one tool                                      |
| `tool_call(name, '{"a": 2')`   | calls it with this raw JSON text, broken or not     |
| `say(text)`                    | answers with text                                   |
| `parallel(step, step, ...)`    | makes all their calls at once (and says their text) |

A call without an ``id`` is numbered ``call_<request>_<index>``. Every request is kept
in ``.requests``. With ``stream=True`` replies arrive as a live model streams them.
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
    """One reply that calls one tool: ``tool_call("read_file", path="docs/faq.md")``.

    Give the arguments as keywords, as one dict, or as the raw JSON text a model wrote.
    """
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
    """One reply that makes every call of ``steps``, in order (parallel tool calls)."""
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
    """A model that plays back a script of replies. See the module docstring.

    A step may carry ``"usage"`` (else it is estimated) and ``"finish_reason"``
    (``"length"``: cut off). ``parse`` reads each step: the core's `parse_reply`, or
    ``harness.live.parse_reply`` to read provider fields as a live model does.
    """

    model: str = "scripted"
    context_window: int | None = None

    def __init__(self, steps: Sequence[Step], *, stream: bool = False, delay: float = 0.0,
                 words: int = 1, parse: Callable[..., ModelReply] = parse_reply) -> None:
        if delay < 0 or words < 1:
            raise ValueError("delay must be >= 0 seconds and words >= 1")
        self.steps, self.stream, self.delay, self.words = list(steps), stream, delay, words
        self.parse, self.partial = parse, None  # partial: what arrived of a stopped reply
        self._log: list[tuple[list[Message], int, list[dict], Any]] = []
        self._seen: tuple[Any, list[Message], int] = (None, [], 0)  # list, copies, chars
        self._tools: tuple[Any, int] = (None, 0)  # the tool list last sent, and its size
        self._copied: dict[int, tuple[Message, Message]] = {}  # id -> (message, its copy)
        self._requests: list[dict] = []

    @classmethod
    def from_run(cls, run: Any, **settings: Any) -> ScriptedModel:
        """Replay a recorded run: its model replies, in request order, sub-agents included.

        ``run`` is a `RunResult`, the path of one saved with ``RunResult.save``, or a
        ``harness.durable.CallLog`` (a crashed run's replies); ``settings`` as above.
        """
        from .result import replies_of  # the result module reads saved runs and logs

        return cls(replies_of(run), **settings)

    @property
    def requests(self) -> list[dict]:
        """Every request received, in order, as ``{"messages", "tools", "tool_choice"}``,
        each ``messages`` as the list was at that request."""
        for copy, length, tools, tool_choice in self._log[len(self._requests):]:
            self._requests.append(
                {"messages": copy[:length], "tools": tools, "tool_choice": tool_choice})
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
        usage = step.get("usage") if isinstance(step, dict) else None
        finish = step.get("finish_reason") if isinstance(step, dict) else None
        reply = self.parse(step, usage, estimate=estimate_tokens(chars), finish_reason=finish,
                           id_prefix=f"call_{n + 1}")  # unique ids across the run
        reply.finish_reason = finish or ("tool_calls" if reply.tool_calls else "stop")
        if self.stream and report is not None:  # streaming is harness.live's (lesson 12)
            from .live.streaming import play

            play(self, step, report)
        return reply

    def _record(self, messages: list[Message], tools: list[dict], tool_choice: Any) -> int:
        """Keep a copy of this request; return its size in characters. A run only appends
        to its list, so each message is copied and counted once (a long run costs the same
        per request as a short one); a new list (a compacted request) reuses the copies of
        the messages it shares with earlier ones."""
        seen, copies, chars = self._seen
        if seen is not messages or len(copies) > len(messages) or (
                copies and messages[len(copies) - 1].get("content") != copies[-1].get("content")):
            copies, chars = [], 0
        for message in messages[len(copies):]:
            known = self._copied.get(id(message))
            if known is None or known[0] is not message or known[1] != message:  # edited?
                self._copied[id(message)] = known = (message, copy_message(message))
            copies.append(known[1])
            chars += message_chars(message)
        self._seen = (messages, copies, chars)
        self._log.append((copies, len(messages), tools or [], tool_choice))
        if self._tools[0] is not tools:
            self._tools = (tools, len(json.dumps(tools)) if tools else 0)
        return chars + self._tools[1]
