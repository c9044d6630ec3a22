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

from .extend import service
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


class ScriptMismatch(ModelError):
    """A scripted reply does what no real model would do with the request (strict mode)."""


class ScriptedModel:
    """Plays back a script of replies (a step may carry ``"usage"`` and ``"finish_reason"``),
    keeping every request in ``.requests``. ``strict``: a step that ignores a forced
    ``tool_choice`` ends the run (False: play it, to show such a model). ``summaries``:
    replies to summary requests (None: they take the next step). ``stream``: reply as a
    live model streams; ``parse=harness.live.parse_reply``: read steps as one reads."""

    model: str = "scripted"
    context_window: int | None = None
    partial: ModelReply | None = None  # with stream=True: what arrived of a stopped reply

    def __init__(self, steps: Sequence[Step], *, strict: bool = True, stream: bool = False,
                 delay: float = 0.0, words: int = 1, parse: Callable[..., ModelReply] = parse_reply,
                 summaries: Sequence[Step] | None = None) -> None:
        if delay < 0 or words < 1:
            raise ValueError("delay must be >= 0 seconds and words >= 1")
        self.steps = list(steps)
        self.strict, self.stream, self.parse = strict, stream, parse
        self.delay, self.words = delay, words  # streaming: between chunks, words per chunk
        self.summaries = None if summaries is None else list(summaries)
        self.summarised = 0  # summaries given
        self._log: list[tuple[list[Message], int, list[dict], Any]] = []
        self._sent: list[Message] = []  # the list last sent, its copies and their size
        self._copies: list[Message] = []
        self._chars = 0
        self._tools: tuple[Any, int] = (None, 0)  # the tool list last sent, and its size
        self._requests: list[dict] = []

    @classmethod
    def from_run(cls, run: Any, **settings: Any) -> ScriptedModel:
        """Replay a recorded run's model replies, in request order, sub-agents included:
        ``run`` is a `RunResult`, the path of a saved one, or a ``harness.durable.CallLog``.
        Its summaries answer the replay's summary requests, never the agent's. Not strict
        (``strict=True`` to make it so): a live model may have ignored a forcing."""
        answers, summaries = service("runs").steps_of(run)  # harness/context/saved.py
        return cls(answers, **{"summaries": summaries, "strict": False, **settings})

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

    def assert_complete(self) -> None:
        """`AssertionError` if steps were never asked for, saying how many and which."""
        used = len(self._log)
        left = [f"#{used + i + 1} {_shown(step)}" for i, step in enumerate(self.steps[used:])]
        if left:
            shown = "; ".join(left[:5]) + ("; ..." if len(left) > 5 else "")
            raise AssertionError(f"ScriptedModel: {len(left)} of {len(self.steps)} steps were "
                                 f"not used: {shown}")

    def complete(self, messages: list[Message], tools: list[dict], tool_choice: Any = None,
                 *, report: Report | None = None, purpose: str | None = None) -> ModelReply:
        if purpose == "summary" and self.summaries is not None:
            return self._summary(messages)
        n, chars = len(self._log), self._record(messages, tools, tool_choice)
        if n >= len(self.steps):
            steps = f"{len(self.steps)} step" + "s" * (len(self.steps) != 1)
            raise ScriptExhausted(f"ScriptedModel has no step left for request #{n + 1} (the "
                                  f"script has {steps}): add a step, or lower max_turns")
        step = self.steps[n]
        if callable(step):  # a step reads copies: it can never edit the run
            copies = [copy_message(m) for m in messages]
            info = RequestInfo(list(tools or []), tool_choice)
            step = step(copies, info) if takes(step, "2 args") else step(copies)
        said = step if isinstance(step, dict) else {}
        reply = self.parse(step, said.get("usage"), estimate=estimate_tokens(chars),
                           finish_reason=said.get("finish_reason"), id_prefix=f"call_{n + 1}")
        reply.finish_reason = reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")
        if self.strict and tool_choice not in (None, "auto") and (
                wrong := unforced(tool_choice, reply)):
            raise ScriptMismatch(f"ScriptedModel step #{n + 1} {wrong}; script the call it "
                                 "forces, or make the model with strict=False to show a model "
                                 "that ignores the forcing")
        if self.stream and report is not None:  # streaming is harness.live's (lesson 12)
            service("streaming")(self, step, report)
        return reply

    def _summary(self, messages: list[Message]) -> ModelReply:
        if self.summarised >= len(self.summaries):
            raise ScriptExhausted(f"ScriptedModel has no summary left (it has "
                                  f"{len(self.summaries)})")
        step, self.summarised = self.summaries[self.summarised], self.summarised + 1
        return self.parse(step, step.get("usage"), finish_reason=step.get("finish_reason") or
                          "stop", estimate=estimate_tokens(sum(map(message_chars, messages))))

    def _record(self, messages: list[Message], tools: list[dict], tool_choice: Any) -> int:
        """Keep a copy of this request; return its size in characters. A run appends to its
        list, so only the new messages are copied and counted; any other list (a compacted
        request, or one edited in place) is copied afresh."""
        copies = self._copies
        if self._sent is not messages or len(copies) > len(messages) or (
                copies and messages[len(copies) - 1].get("content") != copies[-1].get("content")):
            copies, self._chars = [], 0  # not the same list grown (a compacted request)
        for message in messages[len(copies):]:
            copies.append(copy_message(message))
            self._chars += message_chars(message)
        self._sent, self._copies = messages, copies
        self._log.append((copies, len(messages), tools or [], tool_choice))
        if self._tools[0] is not tools:
            self._tools = (tools, len(json.dumps(tools)) if tools else 0)
        return self._chars + self._tools[1]


def unforced(tool_choice: Any, reply: ModelReply) -> str | None:
    """What ``reply`` does that ``tool_choice`` forbids, or None if it honours it."""
    names = [call["function"]["name"] for call in reply.tool_calls]
    if isinstance(tool_choice, dict):
        wanted = (tool_choice.get("function") or {}).get("name")
        if not names or set(names) != {wanted}:
            return (f"answers tool_choice forcing {wanted!r} with "
                    + (f"a call to {names}" if names else "no tool call"))
    elif tool_choice == "required" and not names:
        return 'answers tool_choice "required" without a tool call'
    elif tool_choice == "none" and names:
        return f'calls {names} though tool_choice is "none"'
    return None


def _shown(step: Step) -> str:
    """A step in a few words, for `ScriptedModel.assert_complete`."""
    if callable(step):
        return f"a function ({getattr(step, '__name__', 'step')})"
    calls = [str(c.get("function", {}).get("name")) for c in step.get("tool_calls") or ()]
    return f"calls {', '.join(calls)}" if calls else f"says {str(step.get('content'))[:40]!r}"
