"""Keeping the plan alive: the stale-plan reminder and forced ``tool_choice``.

A model busy with tools forgets its plan. After ``after`` tool rounds in a row with no
*successful* `todo_write`, the harness appends a reminder as a user message after that
round's tool results, so the very next request carries it:

    round 1: search_docs      count 1
    round 2: todo_write (refused: two items in_progress)   count 2   <- still stale
    round 3: read_file        count 3 -> reminder, count back to 0

Why success and not the tool's name? A model that keeps sending broken updates would
otherwise never be reminded (``counting="name"`` shows the weaker rule, for contrast).
The reminder never adds a turn: if the budget ends right after it, the run ends.

Forcing: ``tool_choice`` names `todo_write` on the first request with
``plan_first=True`` (or with ``plan_from_words=True`` when the task's own words ask for
steps: `asks_for_steps`) and on the request right after a round in which a sub-agent
ran; every other request is ``"auto"``. `planning.py` decides when; this module says what.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

REMINDER_TEXT = (
    "<reminder>You have not updated your plan for {rounds} tool rounds. Check the task "
    "and the remaining items, then call todo_write with the complete, current list.</reminder>"
)


# GeekAgent's Chinese words as its regex has them (任务清单 "task list", 然后 "then",
# 最后 "finally", 并给出 "and give", 再…总结 "then … sum up"), then todo and the English
# words as whole words: no letter right before or after, so "Mastodon" holds no todo
STEP_WORDS = re.compile(
    r"任务清单|然后|最后|再.{0,12}(?:给出|总结|汇总)|并(?:给出|总结|汇总)"
    r"|(?<![a-z])(?:todos?|to-dos?|task\s+lists?|then|finally|and\s+(?:give|summari[sz]e))"
    r"(?![a-z])", re.IGNORECASE)


def asks_for_steps(task: str) -> bool:
    """True when the user's own words ask for steps or a list: then the first request is
    forced to `todo_write` (``plan_from_words``, lesson 05).

    >>> asks_for_steps("比较两种方案，并给出选择建议"), asks_for_steps("Is ORD-1003 shipped?")
    (True, False)
    """
    return STEP_WORDS.search(task) is not None


def forced(tool_name: str) -> dict:
    """A ``tool_choice`` that makes the model call ``tool_name`` now."""
    return {"type": "function", "function": {"name": tool_name}}


class Reminder:
    """Counts tool rounds without a plan update; says when to remind."""

    def __init__(self, after: int = 3, counting: str = "success") -> None:
        if after < 1:
            raise ValueError("reminder_after must be at least 1")
        if counting not in ("success", "name"):
            raise ValueError("counting must be 'success' (rounds without a successful plan "
                             "update) or 'name' (rounds without a todo_write call)")
        self.after = after
        self.counting = counting
        self.rounds = 0

    def after_round(self, tool_names: Sequence[str], plan_updated: bool) -> str | None:
        """Record one tool round; return the reminder text when it is due."""
        updated = plan_updated if self.counting == "success" else "todo_write" in tool_names
        if updated:
            self.rounds = 0
            return None
        self.rounds += 1
        if self.rounds < self.after:
            return None
        self.rounds = 0
        return REMINDER_TEXT.format(rounds=self.after)


GATE_ITEMS, GATE_ITEM_CHARS = 10, 120  # the gate names the open items, briefly
TAG = re.compile(r"<(/?[A-Za-z][^<>]*)>")


def quote(text: str, limit: int) -> str:
    """Model-written text, safe to put inside the harness's ``<reminder>`` tags.

    A plan item reading ``</reminder> SYSTEM: ...`` would otherwise close the tag and
    speak as the harness: tag-like text is shown as ``‹/reminder›``. At most ``limit``
    characters are kept.
    """
    text = TAG.sub(r"‹\1›", text)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def stop_gate_text(open_items: Sequence[str]) -> str:
    """The push back sent once when the model stops while the plan still has open items.

    It names at most ten items, each cut to 120 characters: the plan is the model's
    to read in full; the gate only has to say which items are still open.
    """
    listed = "; ".join(quote(item, GATE_ITEM_CHARS) for item in open_items[:GATE_ITEMS])
    if len(open_items) > GATE_ITEMS:
        listed += f"; and {len(open_items) - GATE_ITEMS} more"
    return (
        f"<reminder>Your plan still has open items: {listed}. Finish them and mark them "
        "completed, or drop the ones no longer needed, with todo_write; then answer.</reminder>"
    )
