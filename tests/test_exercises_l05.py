"""Lesson 05's exercise checks accept the reference solutions and reject plausible mistakes."""

from __future__ import annotations

import itertools
import re
import sys
from pathlib import Path

LESSONS = Path(__file__).resolve().parent.parent / "lessons"
sys.path.insert(0, str(LESSONS))

from exercises.l05 import (  # noqa: E402
    check_choose_tool_choice,
    check_plan_reminder,
    check_wants_plan,
)
from solutions import l05  # noqa: E402

from harness.reminder import forced  # noqa: E402


def test_plan_reminder_check_accepts_the_reference():
    assert check_plan_reminder(l05.PlanReminder) is True


def test_plan_reminder_check_rejects_counting_by_tool_name():
    class ByName(l05.PlanReminder):
        def after_round(self, tool_names, plan_updated):
            return super().after_round(tool_names, "todo_write" in tool_names)

    assert check_plan_reminder(ByName) is False


def test_plan_reminder_check_rejects_a_reminder_that_does_not_reset_after_firing():
    class NoReset:
        def __init__(self, after=3):
            self.after, self.rounds = after, 0

        def after_round(self, tool_names, plan_updated):
            self.rounds = 0 if plan_updated else self.rounds + 1
            return "update your plan" if self.rounds >= self.after else None

    assert check_plan_reminder(NoReset) is False


def test_plan_reminder_check_rejects_firing_one_round_late():
    class OneLate(l05.PlanReminder):
        def __init__(self, after=3):
            super().__init__(after + 1)

    assert check_plan_reminder(OneLate) is False


def test_plan_reminder_check_rejects_firing_on_the_round_that_updated_the_plan():
    class CountsFirst:
        def __init__(self, after=3):
            self.after, self.rounds = after, 0

        def after_round(self, tool_names, plan_updated):
            self.rounds += 1
            if self.rounds >= self.after:
                self.rounds = 0
                return "update your plan"
            if plan_updated:
                self.rounds = 0
            return None

    assert check_plan_reminder(CountsFirst) is False


def test_plan_reminder_check_rejects_a_default_that_is_not_three(capsys):
    class DefaultTwo(l05.PlanReminder):
        def __init__(self, after: int = 2) -> None:
            super().__init__(after)

    assert check_plan_reminder(DefaultTwo) is False
    assert "the default is 3" in capsys.readouterr().out


def test_plan_reminder_check_rejects_a_reminder_that_cannot_fire_after_every_round():
    class AtLeastTwo(l05.PlanReminder):
        def __init__(self, after: int = 3) -> None:
            super().__init__(max(after, 2))

    assert check_plan_reminder(AtLeastTwo) is False


def test_plan_reminder_check_rejects_a_hard_coded_three():
    class AlwaysThree(l05.PlanReminder):
        def __init__(self, after=3):
            super().__init__(3)

    assert check_plan_reminder(AlwaysThree) is False


def test_choose_tool_choice_check_accepts_the_reference():
    assert check_choose_tool_choice(l05.choose_tool_choice) is True


def test_choose_tool_choice_check_rejects_forcing_every_request_with_plan_first():
    def always_with_plan_first(turn, plan_first, last_round_tools):
        forced_now = plan_first or "delegate_task" in last_round_tools
        return forced("todo_write") if forced_now else "auto"

    assert check_choose_tool_choice(always_with_plan_first) is False


def test_choose_tool_choice_check_rejects_a_delegation_test_on_the_whole_round():
    def only_a_lone_delegation(turn, plan_first, last_round_tools):
        forced_now = (turn == 1 and plan_first) or last_round_tools == ["delegate_task"]
        return forced("todo_write") if forced_now else "auto"

    assert check_choose_tool_choice(only_a_lone_delegation) is False


def test_choose_tool_choice_check_rejects_looking_only_at_the_last_tool_of_the_round(capsys):
    def last_tool(turn, plan_first, last_round_tools):
        delegated = bool(last_round_tools) and last_round_tools[-1] == "delegate_task"
        return forced("todo_write") if (turn == 1 and plan_first) or delegated else "auto"

    assert check_choose_tool_choice(last_tool) is False
    assert "['delegate_task', 'read_file']" in capsys.readouterr().out


def test_choose_tool_choice_check_rejects_no_forcing_when_the_plan_was_also_written():
    def plan_written(turn, plan_first, last_round_tools):
        if "todo_write" in last_round_tools:
            return "auto"
        return l05.choose_tool_choice(turn, plan_first, last_round_tools)

    assert check_choose_tool_choice(plan_written) is False


def test_choose_tool_choice_check_rejects_the_tool_name_instead_of_the_forced_choice():
    def name_only(turn, plan_first, last_round_tools):
        choice = l05.choose_tool_choice(turn, plan_first, last_round_tools)
        return "todo_write" if choice != "auto" else "auto"

    assert check_choose_tool_choice(name_only) is False


SINGULAR_WORDS = re.compile(
    r"(?<![a-z])(?:todo|to-do|task\s+list|then|finally|and\s+summari[sz]e)(?![a-z])",
    re.IGNORECASE)


def test_wants_plan_check_rejects_a_rule_without_the_plurals(capsys):
    assert check_wants_plan(lambda task: SINGULAR_WORDS.search(task) is not None) is False
    assert "todos" in capsys.readouterr().out


def test_wants_plan_check_rejects_two_word_phrases_with_one_space_only(capsys):
    one_space = re.compile(l05.PLAN_WORDS.pattern.replace(r"\s+", " "), re.IGNORECASE)
    assert check_wants_plan(lambda task: one_space.search(task) is not None) is False
    assert "white space" in capsys.readouterr().out


def test_wants_plan_check_rejects_to_do_with_a_space(capsys):
    spaced = re.compile(l05.PLAN_WORDS.pattern.replace("to-dos?", "to[- ]dos?"), re.IGNORECASE)
    assert check_wants_plan(lambda task: spaced.search(task) is not None) is False
    assert "'to do' is not 'to-do'" in capsys.readouterr().out


def test_wants_plan_check_rejects_a_word_start_match_only(capsys):
    starts = re.compile(r"\b(?:todos?|to-dos?|task\s+lists?|then|finally|and\s+summari[sz]e)",
                        re.IGNORECASE)
    assert check_wants_plan(lambda task: starts.search(task) is not None) is False


WORDS = r"(?:todos?|to-dos?|task\s+lists?|then|finally|and\s+summari[sz]e)"


def test_wants_plan_check_rejects_word_boundaries_where_the_rule_says_letters(capsys):
    bounded = re.compile(rf"\b{WORDS}\b", re.IGNORECASE)  # \b: digits and "_" end no word
    assert check_wants_plan(lambda task: bounded.search(task) is not None) is False
    assert "'_' is not a letter" in capsys.readouterr().out


def test_wants_plan_check_rejects_word_characters_where_the_rule_says_letters(capsys):
    no_word_char = re.compile(rf"(?<!\w){WORDS}(?!\w)", re.IGNORECASE)
    assert check_wants_plan(lambda task: no_word_char.search(task) is not None) is False
    assert "is a whole word by the rule" in capsys.readouterr().out


def test_wants_plan_check_rejects_a_boundary_only_before_that_knows_digits(capsys):
    digits_after = re.compile(rf"(?<![^\W\d_]){WORDS}(?![a-z_])", re.IGNORECASE)
    assert check_wants_plan(lambda task: digits_after.search(task) is not None) is False


def test_wants_plan_check_rejects_letters_a_to_z_only(capsys):
    ascii_letters = re.compile(rf"(?<![a-z]){WORDS}(?![a-z])", re.IGNORECASE)
    assert check_wants_plan(lambda task: ascii_letters.search(task) is not None) is False
    assert "not only a-z" in capsys.readouterr().out


def test_wants_plan_check_rejects_a_to_z_letters_after_the_word_only(capsys):
    ascii_after = re.compile(rf"(?<![^\W\d_]){WORDS}(?![a-z])", re.IGNORECASE)
    assert check_wants_plan(lambda task: ascii_after.search(task) is not None) is False
    assert "Thenéa" in capsys.readouterr().out


def test_wants_plan_check_accepts_letters_tested_with_isalpha():
    def by_hand(task: str) -> bool:
        for match in re.finditer(WORDS, task, re.IGNORECASE):
            before = task[match.start() - 1] if match.start() else " "
            after = task[match.end()] if match.end() < len(task) else " "
            if not before.isalpha() and not after.isalpha():
                return True
        return False

    assert check_wants_plan(by_hand) is True


def test_wants_plan_check_rejects_the_harness_rule_which_has_and_give(capsys):
    from harness.reminder import asks_for_steps

    assert check_wants_plan(lambda task: bool(asks_for_steps(task))) is False
    assert "'and give' is not on this exercise's list" in capsys.readouterr().out


def test_wants_plan_check_rejects_a_hyphen_between_task_and_list(capsys):
    hyphen = re.compile(l05.PLAN_WORDS.pattern.replace(r"task\s+", r"task[\s-]+"), re.I)
    assert check_wants_plan(lambda task: hyphen.search(task) is not None) is False
    assert "'task-list' has a hyphen" in capsys.readouterr().out


def test_wants_plan_check_accepts_the_reference():
    assert check_wants_plan(l05.wants_plan) is True


def test_wants_plan_check_rejects_always_planning():
    assert check_wants_plan(lambda task: True) is False


def test_wants_plan_check_rejects_then_found_inside_authentication(capsys):
    def substring(task: str) -> bool:
        words = ("todo", "to-do", "task list", "then", "finally", "and summarize",
                 "and summarise")
        return any(word in task.lower() for word in words)

    assert check_wants_plan(substring) is False
    assert "authentication" in capsys.readouterr().out


def test_wants_plan_check_rejects_a_rule_that_minds_capitals(capsys):
    def case_sensitive(task: str) -> bool:
        return re.search(r"\b(?:todo|to-do|task list|then|finally|and summari[sz]e)\b",
                         task) is not None

    assert check_wants_plan(case_sensitive) is False
    assert "compare without case" in capsys.readouterr().out


def test_wants_plan_check_rejects_words_split_on_spaces_only(capsys):
    def split_words(task: str) -> bool:
        words = task.lower().split()
        pairs = {" ".join(p) for p in itertools.pairwise(words)}
        return bool({"todo", "to-do", "then", "finally"} & set(words)
                    or {"task list", "and summarize", "and summarise"} & pairs)

    assert check_wants_plan(split_words) is False
    assert "TODO:" in capsys.readouterr().out


def test_wants_plan_check_rejects_summarize_on_its_own():
    def any_summary(task: str) -> bool:
        return l05.wants_plan(task) or "summar" in task.lower()

    assert check_wants_plan(any_summary) is False


def test_wants_plan_check_rejects_a_match_object_instead_of_a_bool():
    def match(task: str):
        return l05.PLAN_WORDS.search(task)

    assert check_wants_plan(match) is False
