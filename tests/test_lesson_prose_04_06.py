"""Lessons 04 to 06 say what their outputs and the source articles say (issue 33).

Each test reads the committed notebook and pins one sentence that was wrong, missing or
silent about a change from the articles; tests/test_lesson_prose.py has the older ones.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from tests.test_lesson_prose import LESSONS, Lesson, said

sys.path.insert(0, str(LESSONS))

from exercises.l05 import PLAN_TASKS
from exercises.l06 import _scenarios

SEEDS = "/work/shared/seeds/000_d2f6747941ee44cd.txt"  # AgentHub, quoted exactly below


def test_04_gives_the_panels_budget_line_to_lesson_09():
    lesson = Lesson("04")
    said(lesson, r"the model, the tokens and the context in lessons 07 and 08, the budget in "
                 r"lesson 09")
    assert "are lesson 07's and 08's to explain" not in lesson.text()
    assert "Budget:" in lesson.output("replay.run(TASK)")


def test_04_counts_the_rows_of_the_fixed_points_table_it_shows():
    lesson = Lesson("04")
    said(lesson, r"has seven of them, one a row")
    assert "lists them all" not in lesson.text()
    table = lesson.output('__doc__.split("\\n\\n")[2]').split("\n\n")[0]
    labels = [line[:22].strip() for line in table.splitlines() if line[:22].strip()]
    assert len(labels) == 7, labels


def test_04_shows_agenthubs_plan_text_and_says_why_ours_differs():
    lesson = Lesson("04")
    text = lesson.text()
    for quoted in ('lines = append(lines, item.Status+": "+item.Content)', "当前计划为空。"):
        assert quoted in text
    said(lesson, r"one formatter, `render`, for what the model reads and what the plan panel "
                 r"shows")
    out = lesson.output("agenthub = ")
    assert "AgentHub" in out and "completed: Look up the order" in out
    assert "in_progress: Find the policy" in out and "[>] Find the policy" in out


def test_04_says_why_the_plan_has_no_lock():
    said(Lesson("04"), r"`m\.mu\.Lock\(\)` and `defer m\.mu\.Unlock\(\)`.*Ours takes none, and "
                       r"needs none")


def test_04_quotes_agenthub_exactly():
    """Every Chinese passage 04 quotes from AgentHub is in the article, character for
    character (skipped where the seeds are not on this machine)."""
    seed = Path(SEEDS)
    if not seed.exists():
        pytest.skip("the seed articles are not on this machine")
    article = seed.read_text(encoding="utf-8")
    text = Lesson("04").text()
    quoted = re.findall(r'"([\u4e00-\u9fff][^"]*)"', text)  # a quote that opens in Chinese
    assert any("草稿已经准备好时可以标记完成" in q for q in quoted)
    for passage in quoted:
        assert passage in article, passage
    for code in ('lines = append(lines, item.Status+": "+item.Content)', "m.mu.Lock()",
                 "defer m.mu.Unlock()", '"当前计划为空。"'):
        assert code in article


def test_04_says_the_500_character_and_control_character_rule_and_shows_it():
    lesson = Lesson("04")
    said(lesson, r"a rule of ours that none of the articles has")
    said(lesson, r"one line of at most 500 characters, without control characters")
    out = lesson.output('"a line break in content"')
    assert "a line break in content:" in out and "content must be one line" in out
    labels = [line for line in out.split("\nafter all that")[0].splitlines()
              if line and not line.startswith(" ")]
    assert len(labels) == 9, labels
    said(lesson, r"Nine refusals, and the plan never moved")


def test_04_teaches_tick_the_draft_item_not_the_delivery():
    lesson = Lesson("04")
    said(lesson, r"Tick the draft item, not the delivery\.")
    said(lesson, r"“整理并核对带来源的答复草稿”")


def test_04_names_the_harness_plan_apart_from_the_small_versions_list():
    lesson = Lesson("04")
    said(lesson, r"gets a name of its own, `todo_list`")
    code = [("".join(c["source"])) for c in lesson.cells if c["cell_type"] == "code"]
    assert not [src for src in code if re.search(r"^plan = TodoList\(", src, re.M)]


def test_05_exercise_forces_after_a_round_in_which_delegate_task_ran():
    lesson = Lesson("05")
    said(lesson, r"right after a round in which `delegate_task` ran")
    assert "right after a round that called `delegate_task`" not in lesson.text()


def test_05_states_what_a_letter_is_and_the_number_of_tasks_the_check_asks():
    lesson = Lesson("05")
    said(lesson, r"punctuation, digits, `_` and the ends of the text are fine\. A letter is "
                 r"any letter")
    said(lesson, rf"The check asks about {len(PLAN_TASKS)} tasks")


def test_06_exercise_says_three_customers_and_passages_of_several_files():
    lesson = Lesson("06")
    said(lesson, r"The check makes up three customers")
    said(lesson, r"each search result holds passages of several files, the best one first")
    assert _scenarios.__doc__.startswith("Three customers")


def test_06_says_what_the_human_sees_and_keeps_model_and_result_for_the_team_run():
    lesson = Lesson("06")
    said(lesson, r"That answer is what the human sees\. What the models saw")
    said(lesson, r"`model` and `result` keep this run: the cells further down give theirs other "
                 r"names")
    later = [("".join(c["source"])) for c in lesson.cells[21:] if c["cell_type"] == "code"]
    assert not [src for src in later if re.search(r"^(model|result) = ", src, re.M)]
