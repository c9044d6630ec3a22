"""Lesson 07 exercise checks: each accepts the reference solution and rejects a wrong one."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lessons"))

from exercises.l07 import (
    check_fixed_script,
    check_tool_call_counter,
    run_with_panel,
)
from solutions import l07 as solution
from solutions.l07 import reply, save_note, warranty_plan

import pytest

from harness import say, tool_call


def test_fixed_script_check_accepts_the_reference():
    assert check_fixed_script(solution.fixed_script) is True


def test_reference_script_finishes_with_every_item_done_on_the_panel():
    result, panel = run_with_panel(solution.fixed_script())
    assert result.outcome == "completed"
    assert "Progress: 3/3 done [##########]" in panel.text()


def test_fixed_script_check_rejects_the_lessons_broken_script():
    def broken() -> list:
        return [warranty_plan("in_progress", "pending", "pending"),
                tool_call("read_file", path="data/records/ORD-1001.json"),
                warranty_plan("completed", "in_progress", "in_progress"),
                tool_call("search_docs", query="warranty year claim", max_results=2),
                save_note, reply, reply]

    assert check_fixed_script(broken) is False


def test_fixed_script_check_rejects_a_refused_update_even_when_the_run_completes():
    def one_refusal() -> list:
        steps = solution.fixed_script()
        return [*steps[:2], warranty_plan("completed", "in_progress", "in_progress"), *steps[2:]]

    assert run_with_panel(one_refusal())[0].outcome == "completed"
    assert check_fixed_script(one_refusal) is False


def test_fixed_script_check_rejects_a_plan_ticked_off_without_any_work():
    def no_work() -> list:
        return [warranty_plan("in_progress", "pending", "pending"),
                warranty_plan("completed", "completed", "completed"),
                say("All done.")]

    assert check_fixed_script(no_work) is False


def _search() -> dict:
    return tool_call("search_docs", query="warranty year claim", max_results=2)


def _read_order() -> dict:
    return tool_call("read_file", path="data/records/ORD-1001.json")


def test_fixed_script_check_rejects_a_script_that_never_saves_the_note(capsys):
    def no_note() -> list:
        return [warranty_plan("in_progress", "pending", "pending"), _read_order(),
                warranty_plan("completed", "in_progress", "pending"), _search(),
                warranty_plan("completed", "completed", "completed"), reply]

    assert run_with_panel(no_note())[0].outcome == "completed"
    assert check_fixed_script(no_note) is False
    assert "never called write_file with path 'notes/ORD-1001.md'" in capsys.readouterr().out


def test_fixed_script_check_rejects_a_script_that_never_reads_the_order(capsys):
    def no_order() -> list:
        return [warranty_plan("in_progress", "pending", "pending"),
                warranty_plan("completed", "in_progress", "pending"), _search(),
                warranty_plan("completed", "completed", "in_progress"), save_note,
                warranty_plan("completed", "completed", "completed"), reply]

    assert run_with_panel(no_order())[0].outcome == "completed"
    assert check_fixed_script(no_order) is False
    assert "never called read_file with path 'data/records/ORD-1001.json'" in \
        capsys.readouterr().out


def test_fixed_script_check_rejects_ticking_everything_before_the_work(capsys):
    def ticks_first() -> list:
        return [warranty_plan("in_progress", "pending", "pending"),
                warranty_plan("completed", "completed", "completed"),
                _read_order(), _search(), save_note, reply]

    assert run_with_panel(ticks_first())[0].outcome == "completed"
    assert check_fixed_script(ticks_first) is False
    assert "no item was in_progress" in capsys.readouterr().out


def test_fixed_script_check_rejects_a_plan_updated_only_at_the_end(capsys):
    def updates_at_the_end() -> list:
        return [warranty_plan("in_progress", "pending", "pending"), _read_order(), _search(),
                save_note, warranty_plan("completed", "completed", "completed"), reply]

    assert run_with_panel(updates_at_the_end())[0].outcome == "completed"
    assert check_fixed_script(updates_at_the_end) is False
    assert "item 1 was still in_progress" in capsys.readouterr().out


def test_fixed_script_check_rejects_an_answer_without_sources(capsys):
    def no_sources() -> list:
        return [*solution.fixed_script()[:-1], say("Done: the note is saved.")]

    assert run_with_panel(no_sources())[0].outcome == "completed"
    assert check_fixed_script(no_sources) is False
    assert "cites no source" in capsys.readouterr().out


def test_fixed_script_check_rejects_the_work_in_another_order(capsys):
    def search_first() -> list:
        return [warranty_plan("in_progress", "pending", "pending"), _search(),
                warranty_plan("completed", "in_progress", "pending"), _read_order(),
                warranty_plan("completed", "completed", "in_progress"), save_note,
                warranty_plan("completed", "completed", "completed"), reply]

    assert run_with_panel(search_first())[0].outcome == "completed"
    assert check_fixed_script(search_first) is False
    assert "another order" in capsys.readouterr().out


def test_fixed_script_check_rejects_a_note_saved_elsewhere():
    def elsewhere(messages: list[dict]) -> dict:
        return {**save_note(messages), "tool_calls": [
            {**call, "function": {**call["function"], "arguments": call["function"][
                "arguments"].replace("notes/ORD-1001.md", "notes/warranty.md")}}
            for call in save_note(messages)["tool_calls"]]}

    def wrong_path() -> list:
        steps = solution.fixed_script()
        return [*steps[:6], elsewhere, *steps[7:]]

    assert run_with_panel(wrong_path())[0].outcome == "completed"
    assert check_fixed_script(wrong_path) is False


def _read_policy() -> dict:
    return tool_call("read_file", path="docs/policies/warranty.md")


def test_fixed_script_check_rejects_a_script_that_never_reads_the_warranty_policy(capsys):
    def search_only() -> list:  # the task's work for item 2 is a search AND a read
        return [warranty_plan("in_progress", "pending", "pending"), _read_order(),
                warranty_plan("completed", "in_progress", "pending"), _search(),
                warranty_plan("completed", "completed", "in_progress"), save_note,
                warranty_plan("completed", "completed", "completed"), reply]

    assert run_with_panel(search_only())[0].outcome == "completed"
    assert check_fixed_script(search_only) is False
    out = capsys.readouterr().out
    assert "never called read_file with path 'docs/policies/warranty.md'" in out
    assert "every call of it" in out


def test_fixed_script_check_rejects_reading_the_policy_during_another_item(capsys):
    def read_late() -> list:
        return [warranty_plan("in_progress", "pending", "pending"), _read_order(),
                warranty_plan("completed", "in_progress", "pending"), _search(),
                warranty_plan("completed", "completed", "in_progress"), _read_policy(),
                save_note, warranty_plan("completed", "completed", "completed"), reply]

    assert run_with_panel(read_late())[0].outcome == "completed"
    assert check_fixed_script(read_late) is False
    assert "the item in_progress was [3], not 2" in capsys.readouterr().out


def test_fixed_script_check_accepts_the_policy_read_before_the_search():
    def read_first() -> list:
        steps = solution.fixed_script()
        return [*steps[:3], steps[4], steps[3], *steps[5:]]

    assert check_fixed_script(read_first) is True


def test_fixed_script_check_rejects_an_answer_the_stop_gate_pushed_back(capsys):
    def answers_early() -> list:  # the broken script's two replies, with the plan between
        steps = solution.fixed_script()
        return [*steps[:7], reply, steps[7], reply]

    assert run_with_panel(answers_early())[0].outcome == "completed"
    assert check_fixed_script(answers_early) is False
    assert "the stop gate pushed back an answer" in capsys.readouterr().out


def test_fixed_script_check_rejects_a_note_that_holds_nothing_found(capsys):
    def placeholder() -> list:
        steps = solution.fixed_script()
        return [*steps[:6], tool_call("write_file", path="notes/ORD-1001.md", content="TODO"),
                *steps[7:]]

    assert run_with_panel(placeholder())[0].outcome == "completed"
    assert check_fixed_script(placeholder) is False
    assert "says nothing of the warranty" in capsys.readouterr().out


@pytest.mark.parametrize(("cited", "hint"), [
    ("docs/policies/warranty.md:99", "no line of the shop's files"),
    ("docs/policies/warranty-policy.md:5", "no line of the shop's files"),
    ("docs/policies/returns.md:23", "the warranty rules are in docs/policies/warranty.md"),
])
def test_fixed_script_check_rejects_a_source_that_is_not_the_policys_line(cited, hint,
                                                                           capsys):
    def cites_by_hand() -> list:
        return [*solution.fixed_script()[:-1],
                say(f"Every product has a 1-year warranty ({cited}).")]

    assert run_with_panel(cites_by_hand())[0].outcome == "completed"
    assert check_fixed_script(cites_by_hand) is False
    assert hint in capsys.readouterr().out


def test_tool_call_counter_check_accepts_the_reference():
    assert check_tool_call_counter(solution.ToolCallCounter) is True


def test_tool_call_counter_check_rejects_a_counter_that_sees_only_the_main_agent():
    class MainOnly(solution.ToolCallCounter):
        def on_event(self, event) -> None:
            if event.depth == 0:
                super().on_event(event)

    assert check_tool_call_counter(MainOnly) is False


def test_tool_call_counter_check_rejects_counts_keyed_by_depth():
    class ByDepth(solution.ToolCallCounter):
        def on_event(self, event) -> None:
            if event.type == "tool_call":
                self.counts[event.depth] = self.counts.get(event.depth, 0) + 1

    assert check_tool_call_counter(ByDepth) is False


def test_tool_call_counter_check_rejects_counting_only_successful_results(capsys):
    class SuccessesOnly(solution.ToolCallCounter):
        def on_event(self, event) -> None:
            if event.type == "tool_result" and event.ok:
                self.counts[event.agent_id] = self.counts.get(event.agent_id, 0) + 1

    assert check_tool_call_counter(SuccessesOnly) is False
    assert "only the calls that succeeded" in capsys.readouterr().out


def test_tool_call_counter_check_rejects_counting_only_calls_that_ran(capsys):
    class RanOnly(solution.ToolCallCounter):
        def on_event(self, event) -> None:
            if event.type == "tool_result" and event.ran:
                self.counts[event.agent_id] = self.counts.get(event.agent_id, 0) + 1

    assert check_tool_call_counter(RanOnly) is False
    assert "only the calls that ran" in capsys.readouterr().out


def test_tool_call_counter_check_rejects_leaving_out_calls_the_harness_refused(capsys):
    class RunnableOnly(solution.ToolCallCounter):
        def on_event(self, event) -> None:
            if event.type == "tool_call" and event.runnable:
                super().on_event(event)

    assert check_tool_call_counter(RunnableOnly) is False
    assert "runnable=False" in capsys.readouterr().out


def test_tool_call_counter_check_rejects_counting_calls_and_results(capsys):
    class Both(solution.ToolCallCounter):
        def on_event(self, event) -> None:
            if event.type in ("tool_call", "tool_result"):
                self.counts[event.agent_id] = self.counts.get(event.agent_id, 0) + 1

    assert check_tool_call_counter(Both) is False
    assert "doubled" in capsys.readouterr().out


def test_tool_call_counter_check_rejects_leaving_out_the_harness_tools():
    class WorkspaceToolsOnly(solution.ToolCallCounter):
        def on_event(self, event) -> None:
            if event.type == "tool_call" and event.tool_name not in ("todo_write",
                                                                     "delegate_task"):
                super().on_event(event)

    assert check_tool_call_counter(WorkspaceToolsOnly) is False


def test_tool_call_counter_check_rejects_counts_shared_by_every_counter():
    class SharedCounts:
        # one dict on the class: a second counter starts where the first one ended
        counts: dict = {}  # noqa: RUF012

        def on_event(self, event):
            if event.type == "tool_call":
                self.counts[event.agent_id] = self.counts.get(event.agent_id, 0) + 1

    assert check_tool_call_counter(SharedCounts) is False


def test_tool_call_counter_check_rejects_counting_a_delegation_twice():
    class DelegationTwice(solution.ToolCallCounter):
        def on_event(self, event):
            super().on_event(event)
            if event.type == "subagent_start":  # the delegate_task call was counted already
                self.counts[event.agent_id] = self.counts.get(event.agent_id, 0) + 1

    assert check_tool_call_counter(DelegationTwice) is False
