"""Compaction: when a run outgrows its window, send less, and lose nothing.

    the fixed part of every request: system prompt, tool schemas, task, plan (never shrunk)
      checked once, at Agent() (what it knows) and at the first request (all of it):
      over half of compact_at x window    refused: ValueError / outcome context_overflow

    before each request: estimate (messages + tool schemas, ~4 characters a token)
      a huge message (half the window)    its result / call arguments -> a stub, at once
      under compact_at x window           send the transcript as it is
      over it: compact down to the low mark (halfway from the fixed part to the limit)
        1. old tool results, big call arguments  -> a stub naming where the text was kept
        2. still over 0.3 of the window          the old rounds -> a summary (a request to
           (or the low mark, if lower)           the summary model, with no tools)
        3. still over the low mark               the kept rounds' results -> stubs, oldest
                                                 first, never the last round's
        4. still over the window                 the last round's too; then context_overflow
      a step (or a compaction) that does not make the request smaller is undone
    sent = [system, task, summary, the plan verbatim, the last rounds]

The transcript itself (``result.messages``) is never edited: only what is sent changes.
A round (an assistant message, the tool messages that answer its calls, the notes after
them) is the unit: it is kept or summarised whole, so a tool call is never sent without
its result. The plan is state outside the messages: it is re-sent verbatim after every
compaction, which is why a plan tool survives a compaction that the messages do not.
After a compaction the request is under the low mark (unless its last round alone is
bigger), so the next one waits until the run has grown by half the room again:
compactions stay rare. A failed summary request is an event (``summary_failed``), and
the old rounds stay as they were: the model is never sent a summary that is not one.
Everything it does to the world goes through its run's door: the summary request (the
run's clock, cancel, budget and record) and each offloaded file (no link followed).
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..mechanism import Mechanism
from ..models import estimate_tokens, message_chars
from ..outcomes import ModelError, RunOver
from ..tools import Tool, ToolResult

SUMMARY_PROMPT = ("You summarise the earlier part of an agent's work for the agent itself. "
                  "Keep every fact, number, file name, decision and open question it will "
                  "need; drop the rest. Plain text, at most {words} words.")
STUB = ("[compacted: the result of {name} ({chars:,} characters) is not sent again; "
        "{where}]")
ARGS_STUB = "the arguments of {name} ({chars:,} characters) are not sent again; {where}"
TEXT_STUB = "[compacted: a message of {chars:,} characters is not sent again; {where}]"
OVERFLOW = "context_overflow"  # the outcome of a run whose request cannot fit its window
FIXED_SHARE = 0.5  # the fixed part may take at most this share of compact_at x window
SUMMARY_CHARS = 4000  # what is kept of a summary, at most (and a quarter of the room)
SUMMARY_AT = 0.3  # after stubbing, a request still over this share of the window summarises:
# each compaction then frees most of the window, so compactions stay rare
MIN_STUB = 300  # characters: a shorter text is sent as it is (its stub would be no smaller)
TASK_CHARS = 2000  # what a summary request quotes of the task


def request_tokens(messages: list[dict], tools: list[dict] | None = None) -> int:
    """The estimate a request is measured by (the same one `ScriptedModel` reports)."""
    return estimate_tokens(sum(map(message_chars, messages))
                           + (len(json.dumps(tools)) if tools else 0))


def check_fixed(window: int, compact_at: float, parts: Mapping[str, int]) -> None:
    """`ValueError` if the fixed part of a request (``parts``: tokens by name) leaves the
    work less than half of ``compact_at`` x ``window``: saying the figures and the fix."""
    fixed, most = sum(parts.values()), int(window * compact_at * FIXED_SHARE)
    if fixed <= most:
        return
    need = math.ceil((fixed + 1) / (compact_at * FIXED_SHARE) / 100) * 100
    shown = ", ".join(f"{name} ~{tokens:,}" for name, tokens in parts.items() if tokens)
    raise ValueError(
        f"context_window={window:,} is too small: the part of every request that compaction "
        f"cannot shrink ({shown}) takes ~{fixed:,} tokens, over half of compact_at x window "
        f"({most:,} tokens), which leaves too little room to work in. Use a context_window "
        f"of at least {need:,} tokens, or fewer tools (or a shorter system prompt or task).")


class Compaction(Mechanism):
    """Keeps every request of one run under its ``window`` (tokens), compacting at
    ``compact_at`` of it. ``offload``: a folder, relative to ``root`` (the workspace whose
    file tools the agent has, if it has them: the stub then names a path ``read_file``
    takes), where each stubbed text is written whole; ``keep_rounds``: how many of the
    last rounds are sent whole while the window allows it."""

    def __init__(self, window: int, *, compact_at: float = 0.8, summary_model: Any = None,
                 keep_rounds: int = 2, offload: str | os.PathLike | None = None,
                 root: str | os.PathLike | None = None) -> None:
        if window < 200 or not 0 < compact_at < 1 or keep_rounds < 1:
            raise ValueError("context_window must be at least 200 tokens, compact_at between "
                             "0 and 1, and keep_rounds at least 1")
        self.window = window
        self.compact_at = compact_at
        self.limit = int(window * compact_at)
        self.keep = keep_rounds
        self.summary_model = summary_model  # None: the agent's own
        self.offload = Path(offload) if offload is not None else None
        self.root = Path(root) if root is not None else None
        self.task = 0          # where the run's task is (earlier turns of a conversation before)
        self.cut = 0           # the transcript before this is in `summary`
        self.summary: str | None = None
        self.stubs: dict[int, dict] = {}  # transcript index -> the message as it is sent
        self.asked = False     # the model called `compact`
        self.sent: list[dict] | None = None  # what was sent (None: the transcript itself)
        self.synced = self.chars = 0  # transcript messages counted, their characters
        self.stubbed = 0  # every old message before this index is stubbed, if worth it
        self.compacted = 0  # the transcript's length at the last compaction
        self._schemas: tuple[Any, int] = (None, 0)
        self.tool = Tool("compact", "Compact the conversation now: old tool results are "
                         "replaced by short stubs and the oldest part by a summary. Use it "
                         "when the context is long and the old details are no longer needed.",
                         _NoArgs, self._ask, harness_tool=True)

    def tools(self) -> list[Tool]:
        return [self.tool]

    def _ask(self) -> ToolResult:
        self.asked = True
        return ToolResult(True, "The conversation will be compacted before the next request.")

    def before_request(self, messages: list[dict]) -> list[dict]:
        """The request: the transcript as it is while it fits, else the compacted one."""
        if not self.task:  # the first request: does the fixed part leave room to work?
            self.task = len(messages) - 1  # system, earlier turns (compacted too), the task
            try:
                check_fixed(self.window, self.compact_at, self.fixed(messages))
            except ValueError as exc:
                raise RunOver(OVERFLOW, error=str(exc)) from None
        self.sync(messages)
        before = self.tokens()
        if not self.due(messages, before):
            return messages if self.sent is None else self.sent
        self.door.emit("pre_compact", before_tokens=before, asked=self.asked)
        undo, self.asked = self.state(), False
        stubbed, summarised = self.compact(messages)
        if self.tokens() >= before:  # no smaller: send what would have been sent
            self.restore(undo)
            stubbed = summarised = 0
        self.compacted = len(messages)
        self.door.emit("compaction", before_tokens=before, after_tokens=self.tokens(),
                       stubbed=stubbed, summarised=summarised, window=self.window)
        if self.tokens() > self.window:  # never sent: it would not fit
            raise RunOver(OVERFLOW, error=self.overflow(messages))
        return messages if self.sent is None else self.sent

    def sync(self, messages: list[dict]) -> None:
        """Count the new messages (each once); stub a huge one at once. What is sent is
        kept between requests and only grows, so a long run costs the same per request
        as a short one; it is rebuilt only when it compacts."""
        for i in range(self.synced, len(messages)):
            if i != self.task and _huge(messages[i], self.window):
                self.stubs[i] = self._stub(messages, i)
                self.sent = None if self.sent is None else [*self.sent]  # a new list
            message = self.stubs.get(i, messages[i])
            if self.sent is not None:
                self.sent.append(message)
            self.chars += message_chars(message)
        self.synced = len(messages)
        if self.sent is None and self.stubs:  # a first stub: from now on, what is sent is composed
            self.rebuild(messages)

    def due(self, messages: list[dict], tokens: int) -> bool:
        """Compact now? When asked, over the window, or over the limit with a new round
        since the last compaction (else there is nothing new to compact)."""
        if self.asked or tokens > self.window:
            return True
        return tokens > self.limit and any(m["role"] == "assistant"
                                           for m in messages[self.compacted:])

    def compact(self, messages: list[dict]) -> tuple[int, int]:
        """Steps 1 to 4 of the module docstring; how many messages stubbed, summarised."""
        stubbed, summarised = self._stub_old(messages), 0
        self.rebuild(messages)
        low = self.low(messages)
        if self.tokens() > min(low, self.window * SUMMARY_AT):  # stubs alone: too little room
            summarised = self._summarise(messages)
        last = (self.rounds(messages, 1) or [len(messages)])[-1]
        for upto, mark in ((last, low), (len(messages), self.window)):
            while self.tokens() > mark and self._stub_next(messages, upto):
                stubbed += 1
        return stubbed, summarised

    def tokens(self) -> int:
        """The estimate of what is sent now, tool schemas included (`request_tokens`)."""
        schemas = self.door.schemas()
        if schemas is not self._schemas[0]:
            self._schemas = (schemas, len(json.dumps(schemas)) if schemas else 0)
        return estimate_tokens(self.chars + self._schemas[1])

    def fixed(self, messages: list[dict]) -> dict[str, int]:
        """The fixed part of a request, in tokens by name: what no compaction shrinks."""
        self.tokens()  # the schemas' size, measured
        return {"system prompt": estimate_tokens(message_chars(messages[0])),
                "tool schemas": estimate_tokens(self._schemas[1]),
                "task": estimate_tokens(message_chars(messages[self.task])),
                "plan": estimate_tokens(sum(len(text) + 12 for text in self.door.pinned()))}

    def low(self, messages: list[dict]) -> int:
        """Where a compaction brings the request: halfway from the fixed part to the limit."""
        fixed = sum(self.fixed(messages).values())
        return fixed + max(0, self.limit - fixed) // 2

    def overflow(self, messages: list[dict]) -> str:
        parts = ", ".join(f"{name} ~{n:,}" for name, n in self.fixed(messages).items() if n)
        return (f"the request would take ~{self.tokens():,} tokens after compaction, over "
                f"context_window={self.window:,}: its fixed part ({parts}) and the last round "
                "cannot be compacted further. Use a bigger window, fewer tools or a shorter "
                "task, or make the tools return less.")

    def rebuild(self, messages: list[dict]) -> None:
        self.sent = self.compose(messages)
        self.chars = sum(map(message_chars, self.sent))

    def state(self) -> tuple:
        return self.cut, self.summary, dict(self.stubs), self.stubbed, self.sent, self.chars

    def restore(self, state: tuple) -> None:
        self.cut, self.summary, self.stubs, self.stubbed, self.sent, self.chars = state

    # -- what is sent -------------------------------------------------------------------

    def compose(self, messages: list[dict]) -> list[dict]:
        """The request: the system prompt, the task, the summary and the plan, then what
        is left of the transcript (stubs in place of old results)."""
        start = self.start()
        body = [self.stubs.get(i, messages[i]) for i in range(start, len(messages))]
        head = [messages[0]]
        if self.summary is not None:
            head += [*([messages[self.task]] if self.task < start else []),
                     {"role": "user", "content": f"<summary>What happened before, in short:\n"
                                                 f"{self.summary}</summary>"}]
        # state outside the messages (the plan): sent again, verbatim
        note = [{"role": "user", "content": text} for text in self.door.pinned()]
        if self.task >= start:  # the task is still in the body: the plan goes after it
            at = self.task - start + 1
            return [*head, *body[:at], *note, *body[at:]]
        return [*head, *note, *body]

    def start(self) -> int:
        """The first transcript message not in the summary (1: after the system prompt)."""
        return self.cut or 1

    def rounds(self, messages: list[dict], last: int) -> list[int]:
        """Where the ``last`` rounds start (a round starts at an assistant message), newest
        last; found from the end, so it costs the same however long the run is."""
        found: list[int] = []
        for i in range(len(messages) - 1, self.start() - 1, -1):
            if messages[i]["role"] == "assistant":
                found.insert(0, i)
                if len(found) == last:
                    break
        return found

    # -- stubs --------------------------------------------------------------------------

    def _stub_old(self, messages: list[dict]) -> int:
        """Stub what is worth it in every round but the last `keep` ones."""
        starts = self.rounds(messages, self.keep + 1)
        end = starts[-self.keep] if len(starts) > self.keep else self.start()
        todo = [i for i in range(max(self.start(), self.stubbed), end)
                if i != self.task and i not in self.stubs and _worth(messages[i], self.window)]
        for i in todo:
            self.stubs[i] = self._stub(messages, i)
        self.stubbed = max(self.stubbed, end)  # everything before this is stubbed already
        return len(todo)

    def _stub_next(self, messages: list[dict], upto: int) -> bool:
        """Stub the oldest message before ``upto`` still whole; False if there is none."""
        for i in range(max(self.start(), self.stubbed), upto):
            if i != self.task and i not in self.stubs and _worth(messages[i], self.window):
                self.stubs[i] = self._stub(messages, i)
                self.rebuild(messages)
                return True
        return False

    def _stub(self, messages: list[dict], i: int) -> dict:
        """Message ``i`` as it is sent once compacted: a result, a call's arguments or a
        huge text replaced by a stub that says where the whole is (if that is smaller)."""
        stub = self._stubbed(messages, i)
        return stub if message_chars(stub) < message_chars(messages[i]) else messages[i]

    def _stubbed(self, messages: list[dict], i: int) -> dict:
        message, key = messages[i], f"{i:05d}"
        if message["role"] == "tool":
            text = str(message["content"])
            where = self._keep(f"{key}-{_safe(message['tool_call_id'])}.txt", text)
            name = _call_name(messages, i)
            return {**message, "content": STUB.format(name=name, chars=len(text), where=where)}
        stubbed = dict(message)
        text = str(message.get("content") or "")
        if len(text) > self.window * 2:
            where = self._keep(f"{key}-text.txt", text)
            stubbed["content"] = TEXT_STUB.format(chars=len(text), where=where)
        if message.get("tool_calls"):
            stubbed["tool_calls"] = [self._stub_call(c, key) for c in message["tool_calls"]]
        return stubbed

    def _stub_call(self, call: dict, key: str) -> dict:
        arguments = call["function"]["arguments"]
        if len(arguments) <= MIN_STUB:
            return call
        name = call["function"]["name"]
        where = self._keep(f"{key}-{_safe(call['id'])}-arguments.txt", arguments)
        stub = json.dumps({"compacted": ARGS_STUB.format(name=name, chars=len(arguments),
                                                         where=where)})
        return {**call, "function": {**call["function"], "arguments": stub}}

    def _keep(self, file: str, text: str) -> str:
        """Write ``text`` to the offload folder (if any); where the stub says it is."""
        if self.offload is None:
            return "it is in the run's transcript"
        shown = path = (self.offload / file).as_posix()  # as read_file takes it
        root = self.root or Path.cwd()
        if self.offload.is_absolute():  # a folder of its own, outside any workspace
            root, path = self.offload.parent, f"{self.offload.name}/{file}"
        try:  # through the door: no link followed, inside the root, within the clock
            self.door.write_file(root, path, text)
            return f'read it back with read_file("{shown}")'
        except ValueError as exc:
            return f"it could not be kept in a file ({exc})"

    # -- the summary --------------------------------------------------------------------

    def _summarise(self, messages: list[dict]) -> int:
        """Summarise every round but the last `keep` (with the summary before them); how
        many messages it replaced (0: nothing to summarise, a failure, or no smaller)."""
        starts = self.rounds(messages, self.keep + 1)
        if len(starts) <= self.keep:
            return 0
        start, end = self.start(), starts[-self.keep]
        undo, before, most = self.state(), self.tokens(), self.summary_chars(messages)
        try:  # a request like any other: the run's clock, cancel, budget and record
            reply = self.door.ask(self.summary_request(messages, start, end, most),
                                  purpose="summary", model=self.summary_model)
            summary = (reply.content or "").strip()[:most]
        except ModelError as exc:
            summary, error = "", str(exc)
        else:
            error = "the summary model answered with no text"
        if not summary:  # the old rounds stay: the model is never sent a fake summary
            self.door.emit("summary_failed", error=error, messages=end - start)
            return 0
        self.summary, self.cut = summary, end
        self.rebuild(messages)
        if self.tokens() >= before:  # a summary bigger than what it replaces: not used
            self.restore(undo)
            return 0
        return end - start

    def summary_chars(self, messages: list[dict]) -> int:
        """The longest summary kept: a quarter of the room above the fixed part."""
        room = self.limit - sum(self.fixed(messages).values())  # tokens: 4 characters each
        return max(400, min(SUMMARY_CHARS, room))

    def summary_request(self, messages: list[dict], start: int, end: int,
                        most: int) -> list[dict]:
        """The task and the earlier summary first, then what happened since, cut from the
        middle if it is too long: the request stays within half the window."""
        task = str(messages[self.task].get("content") or "")[:TASK_CHARS]
        earlier = f"Summary so far:\n{self.summary}\n\n" if self.summary else ""
        head = f"The task: {task}\n\n{earlier}What happened next:\n"
        old = "\n".join(_line(self.stubs.get(i, messages[i])) for i in range(start, end)
                        if i != self.task)  # the task is said once, above
        room = max(1000, self.window * 2 - len(head))  # characters
        prompt = SUMMARY_PROMPT.format(words=max(40, most // 7))
        return [{"role": "system", "content": prompt},
                {"role": "user", "content": head + _middle_cut(old, room)}]


class _NoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


@cache
def compact_schema() -> dict:
    """The schema of the ``compact`` tool (what it adds to every request)."""
    return Compaction(200).tool.schema()


def _huge(message: dict, window: int) -> bool:
    """Too big to send at all (over half the window): stubbed as soon as it arrives."""
    if message["role"] == "system":
        return False
    sizes = [len(str(message.get("content") or ""))]
    sizes += [len(c["function"]["arguments"]) for c in message.get("tool_calls") or ()]
    return max(sizes) > window * 2


def _worth(message: dict, window: int) -> bool:
    """Would a stub send less? A result, or a call's arguments, longer than a stub; any
    huge text."""
    if message["role"] == "tool":
        return len(str(message["content"])) > MIN_STUB
    calls = message.get("tool_calls") or ()
    return message["role"] != "system" and (
        any(len(c["function"]["arguments"]) > MIN_STUB for c in calls)
        or len(str(message.get("content") or "")) > window * 2)


def _call_name(messages: list[dict], i: int) -> str:
    """The name of the tool whose call the tool message ``i`` answers (in its round)."""
    j = i - 1
    while j > 0 and messages[j]["role"] != "assistant":
        j -= 1
    return next((c["function"]["name"] for c in messages[j].get("tool_calls") or ()
                 if c["id"] == messages[i]["tool_call_id"]), "a tool")


def _safe(call_id: str) -> str:
    """A call id is the model's text: it never becomes a path of its own."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", call_id)[:40]


def _middle_cut(text: str, room: int) -> str:
    """``text`` in at most about ``room`` characters: its start and its end, the middle cut."""
    if len(text) <= room:
        return text
    half = room // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half:,} characters cut here ...]\n{text[-half:]}"


def _line(message: dict) -> str:
    """One message of the old part, as the summary request reads it."""
    calls = "; ".join(f"{c['function']['name']}({c['function']['arguments'][:300]})"
                      for c in message.get("tool_calls") or ())
    content = str(message.get("content") or "")[:1500]
    return f"{message['role']}: {content}" + (f" [calls: {calls}]" if calls else "")
