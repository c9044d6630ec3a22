"""`LiveReply`: the reply a model is writing now, as the plan panel shows it.

Built from the run's ``model_delta`` events (a streaming model's pieces): the tail of
the reasoning while the model thinks, the answer as it is written, the call being typed.
"""

from __future__ import annotations

import re


class LiveReply:
    """The reply a model is writing now, from its ``model_delta`` events.

    Pieces are only appended (cheap, however long the reply); the tails shown are
    joined when the panel is drawn, a few times a second.
    """

    def __init__(self) -> None:
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.call: str | None = None
        self.args: list[str] = []
        self.stopped = False  # the run ended while this reply was being written

    def empty(self) -> bool:
        return not (self.text or self.reasoning or self.call)

    def so_far(self) -> dict:
        """What came before the reply was stopped (the ``model_partial`` event)."""
        return {"text": "".join(self.text), "reasoning": "".join(self.reasoning),
                "call": self.call, "arguments": "".join(self.args)}

    def add(self, kind: str, data: dict) -> None:
        if kind == "text":
            self.text.append(data["text"])
        elif kind == "reasoning":
            self.reasoning.append(data["text"])
        elif kind == "tool_call":
            if data.get("name") and data["name"] != self.call:
                self.call, self.args = data["name"], []
            self.args.append(data["text"])

    def lines(self) -> list[tuple[str, str]]:
        """Labelled tails: the reasoning while no answer comes, the answer, the call."""
        lines = []
        if self.reasoning and not self.text and self.call is None:
            lines.append(("Thinking", "…" + _tail(self.reasoning, 160)))
        if self.text:
            label = "Answer so far" + (" (stopped)" if self.stopped else "")
            lines.append((label, _tail(self.text, 400)))
        if self.call is not None:
            lines.append(("Writing", f"{self.call}({_readable(_tail(self.args, 80))}"))
        return lines


ESCAPE = re.compile(r'\\(["\\\\nt])')  # JSON's escapes, read in one pass
SHOWN = {'"': '"', "\\": "\\", "n": "⏎", "t": " "}


def _readable(arguments: str) -> str:
    """Arguments being typed are JSON: show ``\\n`` as ⏎ and ``\\"`` as ``"``."""
    return ESCAPE.sub(lambda m: SHOWN[m[1]], arguments)


def _tail(pieces: list[str], limit: int) -> str:
    """The last ``limit`` characters of the joined pieces, joining only what is needed."""
    taken, size = [], 0
    for piece in reversed(pieces):
        taken.append(piece)
        size += len(piece)
        if size >= limit:
            break
    text = "".join(reversed(taken))
    return text if len(text) <= limit else "…" + text[-limit:]
