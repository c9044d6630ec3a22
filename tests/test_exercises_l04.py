"""Lesson 04's exercise checks accept the reference solutions and reject plausible mistakes."""

from __future__ import annotations

import sys
from pathlib import Path

LESSONS = Path(__file__).resolve().parent.parent / "lessons"
sys.path.insert(0, str(LESSONS))

from exercises.l04 import check_plan_steps, check_update_plan  # noqa: E402
from solutions import l04  # noqa: E402


def test_update_plan_check_accepts_the_reference():
    assert check_update_plan(l04.update_plan) is True


def test_update_plan_check_rejects_validating_while_writing():
    def half_applied(plan, new_items):
        if new_items is None:
            raise ValueError("todos is required")
        plan.clear()
        for item in new_items:
            l04.update_plan([], [item])  # one item at a time: the rules per item
            plan.append(dict(item))
        if sum(i["status"] == "in_progress" for i in plan) > 1:
            raise ValueError("at most one item may be in_progress")
        return plan

    assert check_update_plan(half_applied) is False


def test_update_plan_check_rejects_storing_the_callers_dicts():
    def no_copies(plan, new_items):
        l04.update_plan([], new_items)  # every rule checked first, on a throwaway list
        plan[:] = new_items
        return plan

    assert check_update_plan(no_copies) is False


def test_update_plan_check_rejects_a_missing_in_progress_rule():
    def two_active_ok(plan, new_items):
        if new_items is None:
            raise ValueError("todos is required")
        calm = [{**i, "status": "pending"} if i.get("status") == "in_progress" else i
                for i in new_items]
        l04.update_plan([], calm)  # every other rule, on a throwaway list
        plan[:] = [dict(i) for i in new_items]
        return plan

    assert check_update_plan(two_active_ok) is False


def test_plan_steps_check_accepts_the_reference():
    assert check_plan_steps(l04.plan_steps) is True


def test_plan_steps_check_rejects_a_script_that_never_marks_the_last_item_done():
    def forgets_the_last_update():
        steps = l04.plan_steps()
        return steps[:6] + steps[7:]  # skips the final todo_write: the plan ends 2/3 done

    assert check_plan_steps(forgets_the_last_update) is False


def test_plan_steps_check_rejects_a_script_that_works_before_it_plans():
    def plans_late():
        steps = l04.plan_steps()
        return [steps[1], steps[0], *steps[2:]]

    assert check_plan_steps(plans_late) is False
