"""Checks for lesson 05 (the stale-plan reminder and forced ``tool_choice``).

Both checks feed your code a table of situations and compare its answers with what the
harness's own rules say, case by case.
"""

from __future__ import annotations

from collections.abc import Callable

from course import check
from harness.reminder import forced

STALE, REFUSED, UPDATED = (["search_docs"], False), (["todo_write"], False), (["todo_write"], True)

SEQUENCES = [  # (what it shows, after, rounds, the rounds (1-based) after which it fires)
    ("six stale rounds", 3, [STALE] * 6, [3, 6]),
    ("a successful update resets the count", 3, [STALE, STALE, UPDATED, STALE, STALE, STALE],
     [6]),
    ("a refused todo_write is not an update", 3, [STALE, REFUSED, STALE, REFUSED], [3]),
    ("an update among other tools counts", 3,
     [STALE, STALE, (["read_file", "todo_write"], True), STALE, STALE], []),
    ("after=2", 2, [STALE, STALE, STALE, UPDATED, STALE, STALE], [2, 6]),
]


@check
def check_plan_reminder(reminder_class: Callable) -> str:
    """Your class fires exactly after the N-th stale round, resets, and ignores refusals."""
    for label, after, rounds, expected in SEQUENCES:
        reminder = reminder_class(after=after)
        fired = []
        for n, (tools, updated) in enumerate(rounds, 1):
            text = reminder.after_round(list(tools), updated)
            if text is not None and not (isinstance(text, str) and text.strip()):
                raise AssertionError(f"{label}: round {n} returned {text!r}; return a "
                                     "non-empty reminder text, or None")
            if text:
                fired.append(n)
        if fired != expected:
            shown = ", ".join("stale" if r is STALE else "refused todo_write" if r is REFUSED
                              else "successful update" for r in rounds)
            raise AssertionError(f"{label} (after={after}; rounds: {shown}): your reminder "
                                 f"fired after rounds {fired}, expected {expected}")
    return "it fires on the N-th stale round, resets, and a refused update keeps it counting."


POLICY_CASES = [  # (turn, plan_first, last_round_tools, expected)
    (1, True, [], forced("todo_write")),
    (1, False, [], "auto"),
    (2, True, ["todo_write"], "auto"),
    (2, True, ["search_docs"], "auto"),
    (2, False, ["delegate_task"], forced("todo_write")),
    (5, True, ["search_docs", "delegate_task"], forced("todo_write")),
    (6, False, ["delegate_task", "delegate_task"], forced("todo_write")),
    (3, False, ["read_file"], "auto"),
    (4, True, [], "auto"),
]


@check
def check_choose_tool_choice(choose_tool_choice: Callable) -> str:
    """Your policy forces todo_write first with plan_first, and right after a delegation."""
    for turn, plan_first, tools, expected in POLICY_CASES:
        got = choose_tool_choice(turn, plan_first, list(tools))
        if got != expected:
            raise AssertionError(f"turn={turn}, plan_first={plan_first}, last_round_tools="
                                 f"{tools}: you returned {got!r}, expected {expected!r}")
    return f"all {len(POLICY_CASES)} cases match the harness's policy."
