"""Resume a crashed run against a live model: its logged replies first, then the model.

    log = CallLog("calls.jsonl")                   # what the crashed run left
    agent = Agent(resumed(log, OpenAIModel()), tools)
    agent.run(task, call_log=log)

A live model gives its tool calls new ids every time it answers, and a record answers
only the same call (calllog.py: same agent, id, tool, arguments). So a resumed run does
not ask the live model again for what it already answered: the logged replies are
replayed, in request order (sub-agents included), each of their calls is answered from
the log (never run twice; one that was running is ``unknown``), and the live model
takes over at the first request the crashed run never made, with the whole conversation
in front of it.
"""

from __future__ import annotations

from typing import Any

from ..models import ModelReply, ask
from ..scripted import ScriptedModel


class Resumed:
    """A model that replays ``log``'s replies, then asks ``model`` (any `ChatModel`)."""

    def __init__(self, log: Any, model: Any) -> None:
        self.recorded, self.live = ScriptedModel.from_run(log), model
        self.model = getattr(model, "model", None)  # what run_start says of the model
        self.context_window = getattr(model, "context_window", None)

    @property
    def replayed(self) -> int:
        """How many requests were answered from the log so far."""
        return len(self.recorded.requests)

    def complete(self, messages: list[dict], tools: list[dict], tool_choice: Any = None,
                 *, report: Any = None, purpose: str | None = None) -> ModelReply:
        """The next logged reply while there is one (a mechanism's request, a summary: the
        next logged reply to one), then the live model."""
        summaries = self.recorded.summaries or []
        if purpose and self.recorded.summarised < len(summaries):
            return self.recorded.complete(messages, tools, tool_choice, purpose=purpose)
        if not purpose and self.recorded.remaining:
            return self.recorded.complete(messages, tools, tool_choice, report=report)
        return ask(self.live, messages, tools, tool_choice, report or _nothing, purpose)


def resumed(log: Any, model: Any) -> Resumed:
    """``log``'s replies (a `CallLog`), then ``model``: resume a crashed live run."""
    return Resumed(log, model)


def _nothing(*args: Any, **kwargs: Any) -> None:
    return None
