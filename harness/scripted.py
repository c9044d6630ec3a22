"""`ScriptedModel`: the offline, deterministic model of the course, and its step builders.

    model = ScriptedModel([
        tool_call("add", a=2, b=3),                                  # the model's move
        lambda messages: say(f"The sum is {messages[-1]['content']}."),  # built from the tool
    ])

Each step is one assistant reply: a message dict in the wire format (the builders below
write them for you) or a function that builds one from the messages so far, so a
scripted answer can quote what a tool really returned. A function with a second
parameter also gets the request's ``tools`` and ``tool_choice`` (`RequestInfo`).

| builder                        | one assistant reply that                         |
|--------------------------------|--------------------------------------------------|
| `tool_call(name, **arguments)` | calls one tool                                   |
| `tool_call(name, '{"a": 2')`   | calls it with this raw JSON text, broken or not  |
| `say(text)`                    | answers with text                                |
| `parallel(step, step, ...)`    | makes all their calls at once (and says their text) |

A call without an ``id`` is numbered by the model: ``call_<request>_<index>``. Every
request is kept in ``.requests``, as it was when it was sent.

``ScriptedModel(steps, stream=True, delay=0.05)`` sends each reply the way a live
model streams it: a word (or 12 characters of tool-call arguments) every ``delay``
seconds, as ``model_delta`` reports, so the plan panel moves offline as it does live.
"""

from __future__ import annotations

import inspect
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .models import (
    Message,
    ModelError,
    ModelReply,
    PromptSizer,
    Report,
    Transcript,
    copy_message,
    estimate_tokens,
    parse_reply,
)
from .streaming import Assembler, chunks_of

Step = Message | Callable[..., Message]


def tool_call(name: str, arguments: dict | str | None = None, /, *, id: str | None = None,
              **kwargs: Any) -> Message:
    """One reply that calls one tool: ``tool_call("read_file", path="docs/faq.md")``.

    Give the arguments as keywords, as one dict, or as the raw JSON text a model wrote
    (``tool_call("add", '{"a": 2')`` sends exactly that text, so you can script a model
    that gets its JSON wrong).
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
    """What a step function may read besides the messages: the request's tools and choice."""

    tools: list[dict]
    tool_choice: Any


class ScriptExhausted(ModelError):
    """The scripted model was asked for more replies than its script holds."""


class ScriptedModel:
    """A model that plays back a script of replies. See the module docstring.

    A hand-written step may leave out a call's ``id`` and ``type`` and give
    ``arguments`` as a dict: they are filled in and serialised to the wire format.
    A step may carry ``"usage": {"prompt_tokens": .., "completion_tokens": ..}``; it is
    reported, never put in the transcript. Without it usage is estimated and marked
    ``"estimated": True``. A step may carry ``"finish_reason"`` too (``"length"``: an
    answer cut off); without it, a reply ends as a server's would (``"stop"`` or
    ``"tool_calls"``).

    With ``stream=True`` each reply is streamed in pieces of ``words`` words, one every
    ``delay`` seconds; a run that stops meanwhile leaves what arrived in ``.partial``.
    ``model`` and ``context_window`` are what the plan panel shows; set them to try it.
    """

    model: str = "scripted"
    context_window: int | None = None

    def __init__(self, steps: Sequence[Step], *, stream: bool = False, delay: float = 0.0,
                 words: int = 1) -> None:
        if delay < 0 or words < 1:
            raise ValueError("delay must be >= 0 seconds and words >= 1")
        self.stream, self.delay, self.words = stream, delay, words
        self.partial: ModelReply | None = None
        self.steps = list(steps)
        self._log: list[tuple[list[Message], int, list[dict], Any]] = []
        self._copies: dict[int, tuple[int, Message | None, list[Message]]] = {}
        self._requests: list[dict] = []
        self._sizer = PromptSizer()

    @classmethod
    def from_run(cls, run: Any, *, stream: bool = False, delay: float = 0.0,
                 words: int = 1) -> ScriptedModel:
        """Replay a recorded run: its model replies, in request order, sub-agents included.

        ``run`` is a `RunResult` or the path of one saved with ``RunResult.save``.
        The tools run again for real when the replayed model calls them. With
        ``stream=True`` (and a ``delay``) the replies are streamed as they were live.
        """
        if isinstance(run, (str, Path)):
            events = json.loads(Path(run).read_text(encoding="utf-8"))["events"]
        else:
            events = [e.to_dict() for e in run.events]
        steps = []
        for event in events:
            if event["type"] == "model_reply":
                step = dict(event["message"])
                if not event["usage"].get("estimated"):
                    step["usage"] = event["usage"]
                if event.get("finish_reason"):  # a cut-off answer replays cut off
                    step["finish_reason"] = event["finish_reason"]
                steps.append(step)
        return cls(steps, stream=stream, delay=delay, words=words)

    @property
    def requests(self) -> list[dict]:
        """Every request received, in order, as ``{"messages", "tools", "tool_choice"}``.

        Each ``messages`` is a copy of the list as it was at that request: what was
        appended or edited later is not in it.
        """
        for copy, length, tools, tool_choice in self._log[len(self._requests):]:
            self._requests.append(
                {"messages": copy[:length], "tools": tools, "tool_choice": tool_choice})
        return self._requests

    @property
    def remaining(self) -> int:
        """How many scripted replies are left (never below 0, even after running out)."""
        return max(0, len(self.steps) - len(self._log))

    def complete(self, messages: list[Message], tools: list[dict], tool_choice: Any = None,
                 *, report: Report | None = None) -> ModelReply:
        n = len(self._log)
        self._record(messages, tools, tool_choice)
        if n >= len(self.steps):
            total = f"{len(self.steps)} step" + ("" if len(self.steps) == 1 else "s")
            raise ScriptExhausted(
                f"ScriptedModel has no step left for request #{n + 1} "
                f"(the script has {total}): add a step, or lower max_turns"
            )
        step = self.steps[n]
        message = _play(step, messages, tools, tool_choice)
        estimate = estimate_tokens(self._sizer.chars(messages, tools))
        usage = message.get("usage") if isinstance(message, dict) else None
        finish = message.get("finish_reason") if isinstance(message, dict) else None
        # A hand-written step may leave out call ids: number them by request, so the
        # ids stay unique across the run (the loop never runs a call id twice).
        reply = parse_reply(message, usage, estimate=estimate, id_prefix=f"call_{n + 1}",
                            finish_reason=finish)
        reply.finish_reason = finish or ("tool_calls" if reply.tool_calls else "stop")
        if self.stream and report is not None:
            self._play(message, report)  # as written: thinking parts and <think> included
        return reply

    def _play(self, message: Message, report: Report) -> None:
        """Stream ``message`` as a live model would; keep what arrived if the run stops."""
        self.partial, built = None, Assembler()
        try:
            for chunk in chunks_of(message, self.words):
                for kind, data in built.feed(chunk):
                    report("model_delta", kind=kind, **data)
                if self.delay:
                    time.sleep(self.delay)
        except BaseException:  # the run was cancelled or ran out of time meanwhile
            self.partial = parse_reply(built.message())
            raise

    def _record(self, messages: list[Message], tools: list[dict], tool_choice: Any) -> None:
        """Keep a copy of this request, in O(new messages) for a harness run.

        A harness run (a `Transcript`) only ever appends, and its tool list is fixed, so
        one private copy per run, grown by the messages appended since the last request,
        gives back every request exactly. Any other list is copied whole at each request:
        its owner may have edited a message in place.
        """
        if not isinstance(messages, Transcript):
            copy, tools = [copy_message(m) for m in messages], list(tools or [])
        else:  # a run and its sub-agents take turns: keep the last few transcripts
            count, last, copy = self._copies.pop(id(messages), (0, None, []))
            if count > len(messages) or (count and messages[count - 1] is not last):
                count, copy = 0, []  # not the transcript we saw before: start again
            copy.extend(copy_message(m) for m in messages[count:])
            self._copies[id(messages)] = (len(messages), messages[-1] if messages else None,
                                          copy)
            if len(self._copies) > 4:
                del self._copies[next(iter(self._copies))]
        self._log.append((copy, len(messages), tools or [], tool_choice))


def _play(step: Step, messages: list[Message], tools: list[dict], tool_choice: Any) -> Any:
    """The reply of one step: the step itself, or what its function builds."""
    if not callable(step):
        return step
    copies = [copy_message(m) for m in messages]  # a step can read, never edit, the run
    if _wants_info(step):
        return step(copies, RequestInfo(list(tools or []), tool_choice))
    return step(copies)


def _wants_info(fn: Callable[..., Any]) -> bool:
    """True if ``fn`` takes a second positional argument (the `RequestInfo`)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: messages only
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in params)
