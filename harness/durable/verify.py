"""Checked results: a tool that ran is not a task that is done.

    def cites_a_real_policy(event):          # a stop hook: it sees every answer
        if not cited_lines_exist(event.final):
            return "the reply cites a policy line that does not exist"   # refused
    hooks.on("stop", cites_a_real_policy)

The controlled-execution article ends on this rule: a tool that ran successfully does
not mean the task is done; the final result is checked before it is kept. A ``stop``
hook sees every answer (``event.final``) and can check it against the run's real
results (the files the tools wrote, the records they read). When it returns a string,
the answer is refused: the model reads why, in a user message, and tries again. After
``max_refusals`` refusals, or when no request is left to try again with, the run ends
``unverified``, the last answer in ``final`` and the last reason in ``error``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..extend import Extension, register
from ..mechanism import Answer, Mechanism, Note
from ..outcomes import RunOver
from ..stack import Layer

REFUSED_TEXT = ("<verification>Your answer was not accepted: {reason} Check it against what "
                "the tools returned, fix it, then answer again.</verification>")


class Verification(Mechanism):
    """Counts the answers a stop hook refused; sends each back until the limit."""

    def __init__(self, max_refusals: int = 2) -> None:
        if max_refusals < 0:
            raise ValueError("max_refusals must be 0 or more")
        self.max_refusals = max_refusals
        self.refusals = 0

    def on_answer(self, answer: Answer) -> Iterator[Note]:
        if not answer.refusal:
            return
        if self.refusals >= self.max_refusals or answer.last_turn:
            raise RunOver("unverified", final=answer.text, error=answer.refusal)
        self.refusals += 1
        yield Note("answer_refused", {"reason": answer.refusal, "refusals": self.refusals},
                   message=REFUSED_TEXT.format(reason=answer.refusal.strip()))



@dataclass(frozen=True)
class VerifySettings:
    """The `Agent` keyword of checked results."""

    max_refusals: int = 2  # answers a stop hook may refuse before the run ends unverified

    def __post_init__(self) -> None:
        if self.max_refusals < 0:
            raise ValueError("max_refusals must be 0 or more")


def verification_layer(agent: Any) -> Layer | None:
    """A `Verification` in each run of an agent whose ``stop`` hooks may refuse answers
    (the stack is built when the agent is made: register stop hooks before)."""
    if not agent.hooks.listening("stop"):
        return None
    limit = agent.options["verify"].max_refusals
    return Layer("verification", lambda door: Verification(limit), order=50)


register(Extension("verify", settings=VerifySettings, layer=verification_layer,
                   events={"answer_refused": "reason, refusals"}, outcomes=("unverified",)))
