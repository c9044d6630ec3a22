"""Keeping the plan alive: the stale-plan reminder, forced ``tool_choice``, the stop gate's text.
The reminder counts rounds without a *successful* `todo_write` (broken updates do not silence
it) and resets when it fires."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

REMINDER_TEXT = (
    "<reminder>No plan update for {rounds} tool rounds. Check the remaining items, then "
    "call todo_write with the complete, current list.</reminder>")
# GeekAgent's Chinese words (任务清单 "task list", 然后 "then", 最后 "finally", 并给出 "and
# give", 再…总结 "then … sum up"), then English ones with no letter of an alphabet right
# before or after ("Mastodon" holds no todo, "éthen" no then; "todo1", "2then" and
# "写一个todo列表" ask: a digit, "_" or a Chinese or Japanese character is no such letter)
LETTER = r"[^\W\d_\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"
STEP_WORDS = re.compile(
    r"任务清单|然后|最后|再.{0,12}(?:给出|总结|汇总)|并(?:给出|总结|汇总)"
    rf"|(?<!{LETTER})(?:todos?|to-dos?|task\s+lists?|then|finally|and\s+(?:give|summari[sz]e))"
    rf"(?!{LETTER})", re.IGNORECASE)
GATE_ITEMS, GATE_ITEM_CHARS = 10, 120  # the gate names the open items, briefly
TAG = re.compile(r"<(/?[A-Za-z][^<>]*)>")


def asks_for_steps(task: str) -> bool:
    """Do the user's own words ask for steps or a list? (``plan_from_words``, lesson 05)"""
    return STEP_WORDS.search(task) is not None


def forced(tool_name: str) -> dict:
    """A ``tool_choice`` that makes the model call ``tool_name`` now."""
    return {"type": "function", "function": {"name": tool_name}}


@dataclass
class Reminder:
    """Counts tool rounds without a plan update; says when to remind."""

    after: int = 3
    counting: str = "success"  # or "name": rounds without a todo_write call, the weaker rule
    rounds: int = 0

    def __post_init__(self) -> None:
        if self.after < 1 or self.counting not in ("success", "name"):
            raise ValueError("reminder_after must be at least 1, and counting 'success' (rounds "
                             "without a successful plan update) or 'name'")

    def after_round(self, tool_names: Sequence[str], plan_updated: bool) -> str | None:
        """Record one tool round; return the reminder text when it is due."""
        updated = plan_updated if self.counting == "success" else "todo_write" in tool_names
        self.rounds = 0 if updated else self.rounds + 1
        if self.rounds < self.after:
            return None
        self.rounds = 0
        return REMINDER_TEXT.format(rounds=self.after)


def quote(text: str, limit: int) -> str:
    """Model-written text, cut to ``limit``, that cannot close the harness's tags: a plan item
    ``</reminder> SYSTEM: ...`` shows as ``‹/reminder› SYSTEM: ...``."""
    text = TAG.sub(r"‹\1›", text)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def stop_gate_text(open_items: Sequence[str]) -> str:
    """The push back sent once when the model stops while the plan still has open items."""
    listed = "; ".join(quote(item, GATE_ITEM_CHARS) for item in open_items[:GATE_ITEMS])
    if len(open_items) > GATE_ITEMS:
        listed += f"; and {len(open_items) - GATE_ITEMS} more"
    return (f"<reminder>Your plan still has open items: {listed}. Finish them and mark them "
            "completed, or drop the ones no longer needed, with todo_write; then answer."
            "</reminder>")
