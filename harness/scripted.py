"""`ScriptedModel`: the course's offline model, and builders for its steps. A step is one
assistant reply: a message dict, or a function that builds one from copies of the messages.

    model = ScriptedModel([
        tool_call("add", a=2, b=3),                                      # the model's move
        lambda messages: say(f"The sum is {messages[-1]['content']}."),  # from the result
    ])
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
    """A reply that calls one tool, with keywords, one dict, or JSON text (broken or not)."""
    if arguments is not None and kwargs:
        raise TypeError("give the arguments as keywords or as one dict/string, not both")
    if not isinstance(arguments, str):
        arguments = json.dumps(kwargs if arguments is None else arguments, ensure_ascii=False)
    call = {"type": "function", "function": {"name": name, "arguments": arguments}}
    calls = [call if id is None else {"id": id, **call}]
    return {"role": "assistant", "content": None, "tool_calls": calls}


def say(text: str) -> Message:
    """A reply that answers with ``text`` and calls no tool."""
    return {"role": "assistant", "content": text}


def parallel(*steps: Message) -> Message:
    """A reply that makes every call of ``steps``, in order (and says their text)."""
    text = "\n".join(s["content"] for s in steps if s.get("content")) or None
    return {"role": "assistant", "content": text,
            "tool_calls": [c for s in steps for c in s.get("tool_calls") or ()]}


@dataclass(frozen=True)
class RequestInfo:
    """What a step function that takes two arguments gets besides the messages."""

    tools: list[dict]
    tool_choice: Any


class ScriptExhausted(ModelError):
    """The scripted model was asked for more replies than its script holds."""


class ScriptMismatch(ModelError):
    """A strict script's reply ignores a forced ``tool_choice``, as no real model would."""


class ScriptedModel:
    """Plays its steps back, one a request, and keeps each request in ``.requests``. A step
    may carry ``"usage"`` and ``"finish_reason"``."""

    model: str = "scripted"
    context_window: int | None = None
    serial = True  # its steps go in the order asked: sub-agents never ask at the same time
    partial: ModelReply | None = None  # with stream=True: what arrived of a stopped reply

    def __init__(self, steps: Sequence[Step], *, strict: bool = True, stream: bool = False,
                 delay: float = 0.0, words: int = 1, parse: Callable[..., ModelReply] = parse_reply,
                 summaries: Sequence[Step] | None = None) -> None:
        if delay < 0 or words < 1:
            raise ValueError("delay must be >= 0 seconds and words >= 1")
        self.steps = list(steps)
        self.strict = strict  # a step that ignores a forced tool_choice ends the run
        self.stream = stream  # reply as a live model streams: `words` a chunk, `delay` apart
        self.delay = delay
        self.words = words
        self.parse = parse  # harness.live.parse_reply: read steps as a live model's replies
        # replies to a mechanism's requests (door.ask: a summary); None: they take the next step
        self.summaries = None if summaries is None else list(summaries)
        self.summarised = 0  # summaries given
        self._log: list[tuple[dict, int]] = []  # each request, and how many copies it saw
        self._sent: list[Message] = []  # the list last sent, its copies and their size
        self._copies: list[Message] = []
        self._chars = 0
        self._tools: tuple[Any, int] = (None, 0)  # the tool list last sent, and its size

    @classmethod
    def from_run(cls, run: Any, **settings: Any) -> ScriptedModel:
        """Replay a run's model replies in request order, sub-agents included (``run``: a
        `RunResult`, a saved one's path, a ``CallLog``); what its mechanisms asked (summaries)
        answers theirs only. Not strict unless asked: the live model may have ignored a forcing."""
        answers, summaries = service("runs").steps_of(run)  # harness/context/saved.py
        return cls(answers, **{"summaries": summaries, "strict": False, **settings})

    @property
    def requests(self) -> list[dict]:
        """Every request received, as ``{"messages", "tools", "tool_choice"}``."""
        return [{**request, "messages": request["messages"][:seen]} for request, seen in self._log]

    @property
    def remaining(self) -> int:
        """How many scripted replies are left (never below 0)."""
        return max(0, len(self.steps) - len(self._log))

    def assert_complete(self) -> None:
        """`AssertionError` if steps were never asked for, saying how many and which."""
        used = len(self._log)
        left = [f"#{i} {_shown(step)}" for i, step in enumerate(self.steps[used:], used + 1)]
        if left:
            shown = "; ".join(left[:5]) + ("; ..." if len(left) > 5 else "")
            raise AssertionError(f"ScriptedModel: {len(left)} of {len(self.steps)} steps were "
                                 f"not used: {shown}")

    def complete(self, messages: list[Message], tools: list[dict], tool_choice: Any = None,
                 *, report: Report | None = None, purpose: str | None = None) -> ModelReply:
        if purpose and self.summaries is not None:  # a mechanism's request, not the agent's
            return self._summary(messages)
        n = len(self._log) + 1  # this request's number
        chars = self._record(messages, tools, tool_choice)
        if n > len(self.steps):
            raise ScriptExhausted(f"ScriptedModel has no step left for request #{n} (the script "
                                  f"has {len(self.steps)} step{'s' * (len(self.steps) != 1)}): "
                                  "add a step, or lower max_turns")
        step = self.steps[n - 1]
        if callable(step):  # it gets copies: a step can never edit the run
            copies = [copy_message(m) for m in messages]
            info = RequestInfo(list(tools or []), tool_choice)
            step = step(copies, info) if takes(step, "2 args") else step(copies)
        said = step if isinstance(step, dict) else {}
        finish = said.get("finish_reason") or ("tool_calls" if said.get("tool_calls") else "stop")
        reply = self.parse(step, said.get("usage"), estimate=estimate_tokens(chars),
                           finish_reason=finish, id_prefix=f"call_{n}")
        if self.strict and tool_choice not in (None, "auto"):
            _check_forcing(n, tool_choice, reply)
        if self.stream and report is not None:  # streaming is harness.live's (lesson 12)
            service("streaming")(self, step, report)
        return reply

    def _summary(self, messages: list[Message]) -> ModelReply:
        if self.summarised >= len(self.summaries):
            raise ScriptExhausted(f"ScriptedModel has no summary left for a mechanism (it has "
                                  f"{len(self.summaries)})")
        step = self.summaries[self.summarised]
        self.summarised += 1
        chars = sum(map(message_chars, messages))
        return self.parse(step, step.get("usage"), estimate=estimate_tokens(chars),
                          finish_reason=step.get("finish_reason") or "stop")

    def _record(self, messages: list[Message], tools: list[dict], tool_choice: Any) -> int:
        """Keep a copy of this request; return its size in characters. Of a list that grew,
        only the new messages are copied (another list, or one edited: all of it)."""
        copies = self._copies
        end = len(copies)
        if self._sent is not messages or messages[end - 1:end] != copies[-1:]:
            copies = []
            self._chars = 0
        for message in messages[len(copies):]:
            copies.append(copy_message(message))
            self._chars += message_chars(message)
        self._sent = messages
        self._copies = copies
        request = {"messages": copies, "tools": tools or [], "tool_choice": tool_choice}
        self._log.append((request, len(messages)))  # it saw the first len(messages) copies
        if self._tools[0] is not tools:
            self._tools = (tools, len(json.dumps(tools)) if tools else 0)
        return self._chars + self._tools[1]


def _check_forcing(step: int, tool_choice: Any, reply: ModelReply) -> None:
    """`ScriptMismatch` if ``reply`` does not do what a forced ``tool_choice`` asks."""
    names = {call["function"]["name"] for call in reply.tool_calls}
    if isinstance(tool_choice, dict):  # one named function
        honoured = names == {(tool_choice.get("function") or {}).get("name")}
    else:
        honoured = {"required": bool(names), "none": not names}.get(tool_choice, True)
    if not honoured:
        raise ScriptMismatch(f"ScriptedModel step #{step} {_shown(reply.message())} though "
                             f"tool_choice is {tool_choice!r}; script the call it forces, or make "
                             "the model with strict=False to show a model that ignores forcing")


def _shown(step: Step) -> str:
    """A step in a few words: what it calls, or says."""
    if callable(step):
        return f"a function ({getattr(step, '__name__', 'step')})"
    calls = [str(c.get("function", {}).get("name")) for c in step.get("tool_calls") or ()]
    return f"calls {', '.join(calls)}" if calls else f"says {str(step.get('content'))[:40]!r}"
