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

from .mechanism import Answer, Mechanism, Note
from .outcomes import RunOver

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

