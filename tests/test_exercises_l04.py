"""Lesson 04's exercise checks accept the reference solutions and reject plausible mistakes."""

from __future__ import annotations

import sys
from pathlib import Path

LESSONS = Path(__file__).resolve().parent.parent / "lessons"
sys.path.insert(0, str(LESSONS))

from exercises.l04 import check_plan_steps, check_update_plan  # noqa: E402
from solutions import l04  # noqa: E402

from harness import say, tool_call  # noqa: E402

HARD_CODED_NOTE = tool_call(  # what the sample workspace says before the check rewrites it
    "write_file", path="notes/ORD-1003.md",
    content="ORD-1003 (Finch wireless earbuds) is shipped. Policy: Standard shipping takes "
            "3-5 business days and is free for orders over $50.\n")


def plan_of(*statuses: str) -> dict:
    return tool_call("todo_write", todos=[{"content": c, "status": s}
                                          for c, s in zip(l04.STEPS, statuses, strict=True)])


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


def test_update_plan_check_says_that_an_empty_list_clears_the_plan(capsys):
    def refuses_empty(plan, new_items):
        if not new_items:
            raise ValueError("empty")
        return l04.update_plan(plan, new_items)

    assert check_update_plan(refuses_empty) is False
    out = capsys.readouterr().out
    assert "it clears the plan" in out
    assert "your code raised" not in out


def _refuses_only(rule):
    """The reference, refusing one more thing."""
    def update_plan(plan, new_items):
        if rule(new_items):
            raise ValueError("refused")
        return l04.update_plan(plan, new_items)

    return update_plan


def test_update_plan_check_rejects_refusing_a_plan_of_exactly_twenty_items(capsys):
    at_most_19 = _refuses_only(lambda items: isinstance(items, list) and len(items) >= 20)
    assert check_update_plan(at_most_19) is False
    assert "exactly 20 items was refused" in capsys.readouterr().out


def _without_type_checks(plan, new_items):
    """Checks the fields of dict items only; takes any iterable of them."""
    if new_items is None:
        raise ValueError("todos is required")
    new = [dict(item) if isinstance(item, dict) else item for item in new_items]
    for item in new:
        if isinstance(item, dict):
            if set(item) != {"content", "status"} or not isinstance(item["content"], str) \
                    or not item["content"].strip() or item["status"] not in l04.STATUSES:
                raise ValueError("bad item")
    if len(new) > 20 or sum(isinstance(i, dict) and i["status"] == "in_progress"
                            for i in new) > 1:
        raise ValueError("bad plan")
    plan[:] = new
    return plan


def test_update_plan_check_rejects_accepting_items_that_are_strings(capsys):
    assert check_update_plan(_without_type_checks) is False
    assert "accepted it" in capsys.readouterr().out


def test_update_plan_check_rejects_accepting_a_tuple_instead_of_a_list(capsys):
    def any_sequence(plan, new_items):
        if new_items is None or isinstance(new_items, (str, dict)):
            raise ValueError("todos must be a list")
        return l04.update_plan(plan, list(new_items))

    assert check_update_plan(any_sequence) is False
    assert "a tuple, not a list: update_plan accepted it" in capsys.readouterr().out


def test_update_plan_check_reports_the_real_bug_before_accepting_a_tuple(capsys):
    def any_sequence_two_active(plan, new_items):
        if new_items is None or isinstance(new_items, (str, dict)):
            raise ValueError("todos must be a list")
        calm = [{**i, "status": "pending"} if isinstance(i, dict)
                and i.get("status") == "in_progress" else i for i in new_items]
        l04.update_plan([], list(calm))  # every rule but "one in_progress", on a throwaway
        plan[:] = [dict(i) for i in new_items]
        return plan

    assert check_update_plan(any_sequence_two_active) is False
    out = capsys.readouterr().out
    assert "two items in_progress" in out and "tuple" not in out


def test_update_plan_check_says_the_tuple_last_and_names_the_test(capsys):
    def any_sequence(plan, new_items):
        if new_items is None or isinstance(new_items, (str, dict)):
            raise ValueError("todos must be a list")
        return l04.update_plan(plan, list(new_items))

    assert check_update_plan(any_sequence) is False
    assert "Every other rule holds" in capsys.readouterr().out


def _learners(*, status_ok=lambda s: s in l04.STATUSES, blank=lambda c: not c.strip(),
              stored=dict):
    """A whole update_plan as a learner writes it, with one rule swappable."""
    def update_plan(plan, new_items):
        if not isinstance(new_items, list):
            raise ValueError("todos must be a list")
        if len(new_items) > 20:
            raise ValueError("too many")
        for item in new_items:
            if not isinstance(item, dict) or set(item) != {"content", "status"}:
                raise ValueError("content and status")
            if not isinstance(item["content"], str) or blank(item["content"]):
                raise ValueError("blank")
            if not isinstance(item["status"], str) or not status_ok(item["status"]):
                raise ValueError("status")
        if sum(i["status"] == "in_progress" for i in new_items) > 1:
            raise ValueError("one in_progress")
        plan[:] = [stored(i) for i in new_items]
        return plan

    return update_plan


def test_update_plan_check_accepts_a_learners_whole_function():
    assert check_update_plan(_learners()) is True


def test_update_plan_check_rejects_a_status_looked_up_in_a_string():
    in_a_string = _learners(status_ok=lambda s: s in "pending in_progress completed")
    assert check_update_plan(in_a_string) is False


def test_update_plan_check_rejects_a_blank_test_that_strips_only_spaces():
    assert check_update_plan(_learners(blank=lambda c: not c.strip(" "))) is False


def test_update_plan_check_rejects_storing_trimmed_content(capsys):
    trims = _learners(stored=lambda i: {**i, "content": i["content"].strip()})
    assert check_update_plan(trims) is False
    assert "store the items as sent" in capsys.readouterr().out


def test_update_plan_check_rejects_a_status_compared_without_case():
    def any_case(plan, new_items):
        lowered = [{**i, "status": i["status"].lower()} if isinstance(i, dict)
                   and isinstance(i.get("status"), str) else i for i in new_items or []]
        if new_items is None:
            raise ValueError("todos is required")
        l04.update_plan(plan, lowered)
        return plan

    assert check_update_plan(any_case) is False


def test_update_plan_check_shows_a_changed_plan_in_a_line_not_all_its_items(capsys):
    def writes_then_checks(plan, new_items):
        if not isinstance(new_items, list):
            raise ValueError("todos must be a list")
        plan[:] = [dict(i) for i in new_items]
        if len(plan) > 20:
            raise ValueError("too many")
        return plan

    assert check_update_plan(writes_then_checks) is False
    out = capsys.readouterr().out
    assert "the plan changed" in out and "step 20" not in out and len(out) < 400


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


def test_plan_steps_check_rejects_a_plan_ticked_off_only_at_the_end_and_a_hard_coded_note(capsys):
    def never_updates_while_working():
        return [plan_of("pending", "pending", "pending"),
                tool_call("read_file", path=l04.RECORD),
                tool_call("read_file", path=l04.POLICY),
                HARD_CODED_NOTE,
                plan_of("completed", "completed", "completed"),
                say("Done.")]

    assert check_plan_steps(never_updates_while_working) is False
    assert "no item was in_progress" in capsys.readouterr().out


def test_plan_steps_check_rejects_a_hard_coded_note_even_with_a_perfect_plan(capsys):
    def hard_coded_note():
        steps = l04.plan_steps()
        return [*steps[:5], HARD_CODED_NOTE, *steps[6:]]

    assert check_plan_steps(hard_coded_note) is False
    assert "the check rewrote it" in capsys.readouterr().out


def test_plan_steps_check_rejects_marking_an_item_in_progress_after_its_work(capsys):
    def updates_after_the_work():
        steps = l04.plan_steps()
        return [steps[0], steps[1], steps[3], steps[2], *steps[4:]]

    assert check_plan_steps(updates_after_the_work) is False
    assert "item 1 was still in_progress" in capsys.readouterr().out


def test_plan_steps_check_rejects_moving_on_without_completing_the_item_before():
    def skips_completion():
        steps = l04.plan_steps()
        jump = plan_of("pending", "in_progress", "pending")
        return [steps[0], steps[1], jump, *steps[3:]]

    assert check_plan_steps(skips_completion) is False


def test_plan_steps_check_says_the_work_came_in_another_order(capsys):
    def policy_first():
        steps = l04.plan_steps()
        return [steps[0], steps[3], steps[2], steps[1], *steps[4:]]

    assert check_plan_steps(policy_first) is False
    out = capsys.readouterr().out
    assert "another order" in out and "item 1 was not in_progress" not in out


def test_plan_steps_check_rejects_a_later_update_with_a_fourth_item(capsys):
    def grows_the_plan():
        steps = l04.plan_steps()
        four = tool_call("todo_write", todos=[
            *({"content": c, "status": "completed"} for c in l04.STEPS[:2]),
            {"content": l04.STEPS[2], "status": "in_progress"},
            {"content": "Tell the customer", "status": "pending"}])
        return [*steps[:4], four, *steps[5:]]

    assert check_plan_steps(grows_the_plan) is False
    assert "the plan had 4 items" in capsys.readouterr().out


def test_plan_steps_check_rejects_marking_every_item_done_before_the_work():
    def ticks_first():
        steps = l04.plan_steps()
        return [steps[0], steps[6], steps[1], steps[3], steps[5], steps[7]]

    assert check_plan_steps(ticks_first) is False
