"""Compaction: when a run outgrows its window, send less, and lose nothing.

    before each request: estimate (messages + tool schemas, ~4 characters a token)
      under compact_at x window        send the transcript as it is
      over it, cheap first             old tool results -> a stub naming the call and
                                       where its full output was written
      still over 0.3 of the window     the oldest part -> a summary (a request to the
                                       summary model, with no tools)
    sent = [system, task, summary, the plan verbatim, the last rounds whole]

The transcript itself (``result.messages``) is never edited: only what is sent changes.
A round (an assistant message, the tool messages that answer its calls, the notes after
them) is the unit: it is kept, stubbed or summarised whole, so a tool call is never sent
without its result. A single result bigger than half the window is stubbed as soon as it
arrives. The plan is state outside the messages: it is re-sent verbatim after every
compaction, which is why a plan tool survives a compaction that the messages do not.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..mechanism import Mechanism
from ..models import estimate_tokens, message_chars
from ..outcomes import ModelError
from ..tools import Tool, ToolResult

SUMMARY_PROMPT = ("You summarise the earlier part of an agent's work for the agent itself. "
                  "Keep every fact, number, file name, decision and open question it will "
                  "need; drop the rest. Plain text, at most 250 words.")
STUB = ("[compacted: the result of {name} ({chars:,} characters) is not sent again; "
        "{where}]")
SUMMARY_CHARS = 4000  # what is kept of a summary, at most
SUMMARY_AT = 0.3  # after stubbing, a request still over this share of the window summarises:
# each compaction then frees most of the window, so compactions stay rare


def request_tokens(messages: list[dict], tools: list[dict] | None = None) -> int:
    """The estimate a request is measured by (the same one `ScriptedModel` reports)."""
    return estimate_tokens(sum(map(message_chars, messages))
                           + (len(json.dumps(tools)) if tools else 0))


class Compaction(Mechanism):
    """Keeps every request of one run under its ``window`` (tokens), compacting at
    ``compact_at`` of it. ``offload``: a folder, relative to ``root`` (the workspace whose
    file tools the agent has, if it has them: the stub then names a path ``read_file``
    takes), where each stubbed result is written whole; ``keep_rounds``: how many of the
    last rounds are always sent whole."""

    def __init__(self, window: int, *, compact_at: float = 0.8, summary_model: Any = None,
                 keep_rounds: int = 2, offload: str | os.PathLike | None = None,
                 root: str | os.PathLike | None = None) -> None:
        if window < 200 or not 0 < compact_at < 1 or keep_rounds < 1:
            raise ValueError("context_window must be at least 200 tokens, compact_at between "
                             "0 and 1, and keep_rounds at least 1")
        self.window = window
        self.limit = int(window * compact_at)
        self.keep = keep_rounds
        self.summary_model = summary_model  # None: the agent's own
        self.offload = Path(offload) if offload is not None else None
        self.root = Path(root) if root is not None else None
        self.task = 0          # where the run's task is (earlier turns of a conversation before)
        self.cut = 0           # the transcript before this is in `summary`
        self.summary: str | None = None
        self.stubs: dict[int, dict] = {}  # transcript index -> the stubbed tool message
        self.asked = False     # the model called `compact`
        self.sent: list[dict] | None = None  # what was sent (None: the transcript itself)
        self.synced = self.chars = 0  # transcript messages counted, their characters
        self.stubbed = 0  # every old result before this index is a stub already
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
        """The request: the transcript as it is while it fits, else the compacted one.

        What is sent is kept between requests and only grows by the new messages (each
        counted once), so a long run costs the same per request as a short one; it is
        rebuilt only when it compacts.
        """
        if not self.task:
            self.task = len(messages) - 1  # system, earlier turns (compacted too), the task
        for i in range(self.synced, len(messages)):
            if _is_huge(messages[i], self.window):  # a result too big to send at all
                self.stubs[i] = self._stub(messages, i)
                self.sent = None if self.sent is None else [*self.sent]  # a new list
            message = self.stubs.get(i, messages[i])
            if self.sent is not None:
                self.sent.append(message)
            self.chars += message_chars(message)
        if self.sent is None and any(i in self.stubs for i in range(self.synced, len(messages))):
            self.sent = self.compose(messages)
        self.synced = len(messages)
        before = self.tokens()
        if before <= self.limit and not self.asked:
            return messages if self.sent is None else self.sent
        self.door.emit("pre_compact", before_tokens=before, asked=self.asked)
        self.asked, stubbed, summarised = False, self._stub_old(messages), 0
        self.rebuild(messages)
        if self.tokens() > self.window * SUMMARY_AT:  # stubs alone left too little room
            summarised = self._summarise(messages)
            self.rebuild(messages)
        while self.tokens() > self.window and self._stub_any(messages):
            self.rebuild(messages)  # the last rounds themselves are too big
        self.door.emit("compaction", before_tokens=before, after_tokens=self.tokens(),
                  stubbed=stubbed, summarised=summarised, window=self.window)
        return self.sent

    def tokens(self) -> int:
        """The estimate of what is sent now, tool schemas included (`request_tokens`)."""
        schemas = self.door.schemas()
        if schemas is not self._schemas[0]:
            self._schemas = (schemas, len(json.dumps(schemas)) if schemas else 0)
        return estimate_tokens(self.chars + self._schemas[1])

    def rebuild(self, messages: list[dict]) -> None:
        self.sent = self.compose(messages)
        self.chars = sum(map(message_chars, self.sent))

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

    def _stub_old(self, messages: list[dict]) -> int:
        """Stub the tool results of every round but the last `keep` ones."""
        starts = self.rounds(messages, self.keep + 1)
        end = starts[-self.keep] if len(starts) > self.keep else self.start()
        todo = [i for i in range(max(self.start(), self.stubbed), end)
                if messages[i]["role"] == "tool" and i not in self.stubs]
        for i in todo:
            self.stubs[i] = self._stub(messages, i)
        self.stubbed = max(self.stubbed, end)  # everything before this is stubbed already
        return len(todo)

    def _stub_any(self, messages: list[dict]) -> bool:
        """Stub the oldest result still whole (all but the very last round's); False if none."""
        starts = self.rounds(messages, 1)
        last = starts[-1] if starts else len(messages)
        for i in range(max(self.start(), self.stubbed), last):
            if messages[i]["role"] == "tool" and i not in self.stubs:
                self.stubs[i] = self._stub(messages, i)
                return True
        return False

    def _stub(self, messages: list[dict], i: int) -> dict:
        message = messages[i]
        j = i - 1
        while j > 0 and messages[j]["role"] != "assistant":  # the call is in its round
            j -= 1
        name = next((c["function"]["name"] for c in messages[j].get("tool_calls") or ()
                     if c["id"] == message["tool_call_id"]), "a tool")
        where = "it is in the run's transcript"
        if self.offload is not None:
            # the call id is the model's text: it never becomes a path of its own
            file = f"{i:05d}-{re.sub(r'[^A-Za-z0-9_-]', '_', message['tool_call_id'])[:40]}.txt"
            shown = path = (self.offload / file).as_posix()  # as read_file takes it
            root = self.root or Path.cwd()
            if self.offload.is_absolute():  # a folder of its own, outside any workspace
                root, path = self.offload.parent, f"{self.offload.name}/{file}"
            try:  # through the door: no link followed, inside the root, within the clock
                self.door.write_file(root, path, str(message["content"]))
                where = f'read it back with read_file("{shown}")'
            except ValueError as exc:
                where = f"it could not be kept in a file ({exc})"
        text = STUB.format(name=name, chars=len(str(message["content"])), where=where)
        return {**message, "content": text}

    # -- the summary --------------------------------------------------------------------

    def _summarise(self, messages: list[dict]) -> int:
        """Summarise every round but the last `keep` (with the summary before them)."""
        starts = self.rounds(messages, self.keep + 1)
        if len(starts) <= self.keep:
            return 0
        start, end = self.start(), starts[-self.keep]
        room = self.window * 2  # characters: the summary request stays well inside the window
        old = "\n".join(_line(self.stubs.get(i, messages[i])) for i in range(start, end)
                        if i != self.task)  # the task is said once, below
        earlier = f"Summary so far:\n{self.summary}\n\n" if self.summary else ""
        task = messages[self.task].get("content") or ""
        text = f"The task: {str(task)[:2000]}\n\n{earlier}What happened next:\n{old}"
        request = [{"role": "system", "content": SUMMARY_PROMPT},
                   {"role": "user", "content": text[-room:]}]
        try:  # a request like any other: the run's clock, cancel, budget and record
            reply = self.door.ask(request, purpose="summary", model=self.summary_model)
            summary = (reply.content or "").strip()[:SUMMARY_CHARS]
        except ModelError as exc:  # no summary: say so, and still drop what cannot fit
            summary = f"(the summary request failed: {exc})"
        self.summary, self.cut = summary or "(empty summary)", end
        return end - start


class _NoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _is_huge(message: dict, window: int) -> bool:
    return message["role"] == "tool" and len(str(message["content"])) > window * 2


def _line(message: dict) -> str:
    """One message of the old part, as the summary request reads it."""
    calls = "; ".join(f"{c['function']['name']}({c['function']['arguments'][:300]})"
                      for c in message.get("tool_calls") or ())
    content = str(message.get("content") or "")[:1500]
    return f"{message['role']}: {content}" + (f" [calls: {calls}]" if calls else "")
