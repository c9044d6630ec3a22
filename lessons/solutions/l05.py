"""Reference solutions for lesson 05 (the stale-plan reminder and forced ``tool_choice``)."""

from __future__ import annotations

import re

from harness.reminder import forced


class PlanReminder:
    """Counts tool rounds without a successful plan update; reminds after ``after`` of them."""

    def __init__(self, after: int = 3) -> None:
        self.after = after
        self.rounds = 0

    def after_round(self, tool_names: list[str], plan_updated: bool) -> str | None:
        if plan_updated:
            self.rounds = 0
            return None
        self.rounds += 1
        if self.rounds < self.after:
            return None
        self.rounds = 0
        return f"<reminder>{self.after} tool rounds without a plan update: update it.</reminder>"


def choose_tool_choice(turn: int, plan_first: bool, last_round_tools: list[str]) -> str | dict:
    """The tool_choice of the next request."""
    if (turn == 1 and plan_first) or "delegate_task" in last_round_tools:
        return forced("todo_write")
    return "auto"


# GeekAgent's words, in English: whole words (no letter right before or after), any case.
# A letter is [^\W\d_]: a word character that is not a digit or "_", so é and ß count too
# (\b would also stop at digits and "_"; [a-z] would miss é).
PLAN_WORDS = re.compile(
    r"(?<![^\W\d_])(?:todos?|to-dos?|task\s+lists?|then|finally|and\s+summari[sz]e)"
    r"(?![^\W\d_])", re.IGNORECASE)


def wants_plan(task: str) -> bool:
    """True when the user's own words ask for steps: then force todo_write first."""
    return PLAN_WORDS.search(task) is not None
