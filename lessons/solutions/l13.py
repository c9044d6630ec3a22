"""Reference solutions for lesson 13 (what the model sees when the run outgrows the window)."""

from __future__ import annotations

from harness import Mechanism


class KeepRounds(Mechanism):
    """Sends the system prompt, the task and the last ``rounds`` rounds, each whole."""

    def __init__(self, rounds: int = 2) -> None:
        self.rounds = rounds

    def before_request(self, messages: list[dict]) -> list[dict]:
        starts = [i for i in range(2, len(messages)) if messages[i]["role"] == "assistant"]
        if len(starts) < self.rounds:
            return messages
        return [messages[0], messages[1], *messages[starts[-self.rounds]:]]


class LastMessagesFixed(Mechanism):
    """The last ``keep`` messages, the cut moved back to the start of the round it falls in."""

    def __init__(self, keep: int = 6) -> None:
        self.keep = keep

    def before_request(self, messages: list[dict]) -> list[dict]:
        start = max(2, len(messages) - self.keep)
        while start > 2 and messages[start]["role"] == "tool":  # a result needs its call
            start -= 1
        return [*messages[:2], *messages[start:]]
