"""Checks for lesson 05 (the stale-plan reminder and forced ``tool_choice``).

Each check feeds your code a table of situations and compares its answers with the
rule, case by case; the last one also runs an agent with your rule deciding
``plan_first``, and looks at the first request it sent.
"""

from __future__ import annotations

from collections.abc import Callable

from course import check
from harness import Agent, ScriptedModel, say, tool_call
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
    ("after=1", 1, [STALE, UPDATED, STALE, STALE], [1, 3, 4]),
    ("no after given: the default is 3", None, [STALE] * 4, [3]),
]


@check
def check_plan_reminder(reminder_class: Callable) -> str:
    """Your class fires exactly after the N-th stale round, resets, and ignores refusals."""
    for label, after, rounds, expected in SEQUENCES:
        reminder = reminder_class() if after is None else reminder_class(after=after)
        after = 3 if after is None else after
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
    (3, False, ["delegate_task", "read_file"], forced("todo_write")),
    (2, True, ["todo_write", "delegate_task"], forced("todo_write")),
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


ANY_SPACE = "allow any white space between the two words (\\s+ in a regex)"
PLAN_TASKS = [  # (task, does it ask for steps?, why, for a wrong answer)
    ("Make a todo list for the returns audit.", True, "it says 'todo'"),
    ("TODO: check ORD-1003 and write a note.", True,
     "'TODO:' is the word todo in capitals, followed by a colon: compare without case, "
     "and let punctuation end a word"),
    ("What is on my to-do list?", True, "'to-do' is spelled with a hyphen too"),
    ("Give me a task list for the warranty claims.", True, "it says 'task list'"),
    ("Read the shipping policy, then check ORD-1003.", True, "it says 'then'"),
    ("Check ORD-1003 first. Then write the note.", True,
     "'Then' starts a sentence: compare without case"),
    ("Read the warranty policy. Finally, email Ada.", True,
     "'Finally,' is the word finally followed by a comma"),
    ("Read docs/faq.md and summarize it.", True, "it says 'and summarize'"),
    ("Compare the two policies and summarise the differences.", True,
     "'and summarise' is the British spelling of 'and summarize'"),
    ("What is the return window for opened headphones?", False,
     "one question, no step words: the model decides for itself"),
    ("Is ORD-1003 shipped yet?", False, "one question, no step words"),
    ("Fix the authentication bug in src/orders.py.", False,
     "'then' inside 'authentication' is not the word then: match whole words only"),
    ("Strengthen the wording of the shipping note.", False,
     "'strengthen' ends in 'then', but it is not the word then: match whole words only"),
    ("Find our Mastodon link in the FAQ.", False,
     "'todo' inside 'Mastodon' is not the word todo: match whole words only"),
    ("Summarize the warranty policy.", False,
     "'summarize' alone is one step; only 'and summarize' adds a step to other work"),
    ("Finalize the reply to Ada.", False, "'finalize' is not 'finally'"),
    ("List the tasks in the README.", False, "'tasks' is not 'task list'"),
    ("Write the todos for the returns audit.", True, "'todos' is on the list too: todo and todos"),
    ("Update my To-Dos for Monday.", True, "'to-dos' is on the list too, in any capitalisation"),
    ("Merge the two task lists.", True, "'task lists' is on the list too"),
    ("Make a task\tlist for the claims.", True,
     "a tab is white space too: " + ANY_SPACE),
    ("Read docs/faq.md and\nsummarize it.", True,
     "a line break is white space too: " + ANY_SPACE),
    ("Give me a task  list, please.", True,
     "two spaces are white space too: " + ANY_SPACE),
    ("Sync the tasklist with the board.", False,
     "'tasklist' is one word: 'task list' has white space between its words"),
    ("Open the todoist export.", False,
     "'todo' inside 'todoist' is not the word todo: match whole words only"),
    ("Tell me what to do about ORD-1003.", False, "'to do' is not 'to-do'"),
    ("Ship the reply to Athens.", False,
     "'then' inside 'Athens' is not the word then: match whole words only"),
    ("Ada read the policy and summarized it.", False,
     "'summarized' is not 'summarize': match whole words only"),
    ("Compare the two policies and give Ada the answer.", False,
     "'and give' is not on this exercise's list: write the rule it states, not asks_for_steps"),
    ("Update the task-list page.", False,
     "'task-list' has a hyphen: the two-word ones are separated by white space"),
    ("Open notes/todo_list.md and add the claims.", True,
     "'_' is not a letter, so 'todo' in 'todo_list' is a whole word by the rule (\\b treats "
     "'_' as part of a word: test for a letter, [^\\W\\d_], instead)"),
    ("Check todo1 in the tracker.", True,
     "a digit is not a letter, so 'todo' in 'todo1' is a whole word by the rule (\\b treats "
     "digits as part of a word: test for a letter, [^\\W\\d_], instead)"),
    ("Step 1: read the policy. Step 2then: write the note.", True,
     "a digit is not a letter, so 'then' in '2then' is a whole word by the rule"),
    ("Translate the método section of the FAQ.", False,
     "'é' is a letter too, so 'todo' inside 'método' is not a whole word: a letter is any "
     "letter, not only a-z ([^\\W\\d_] in a regex, or str.isalpha())"),
    ("Quote the warranty of the Thenéa speaker.", False,
     "'é' is a letter too, so 'Then' in 'Thenéa' is not a whole word: a letter is any "
     "letter, not only a-z ([^\\W\\d_] in a regex, or str.isalpha())"),
]


@check
def check_wants_plan(wants_plan: Callable[[str], bool]) -> str:
    """Your rule on a table of tasks, then in a run: plan_first=wants_plan(task)."""
    for task, expected, why in PLAN_TASKS:
        got = wants_plan(task)
        if not isinstance(got, bool):
            raise AssertionError(f"wants_plan({task!r}) returned {got!r}; return True or False "
                                 "(wrap a regex match in bool(...))")
        if got != expected:
            raise AssertionError(f"wants_plan({task!r}) returned {got}, expected {expected}: "
                                 f"{why}")
    shown = []
    for task in ("Read the shipping policy, then check ORD-1003.",
                 "What is the return window for opened headphones?"):
        model = ScriptedModel([
            tool_call("todo_write", todos=[{"content": "Answer", "status": "completed"}]),
            say("Done."),
        ])
        Agent(model, planning=True).run(task, plan_first=wants_plan(task))
        choice = model.requests[0]["tool_choice"]
        want = forced("todo_write") if wants_plan(task) else "auto"
        if choice != want:
            raise AssertionError(f"the first request of {task!r} had tool_choice {choice!r}, "
                                 f"expected {want!r}")
        shown.append(f"{task!r} {'forced todo_write' if choice != 'auto' else 'left it auto'}")
    return (f"all {len(PLAN_TASKS)} tasks are judged right. In a run, the first request of "
            + "; of ".join(shown) + ".")
