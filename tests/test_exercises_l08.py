"""Lesson 08 exercise checks: each accepts the reference solution and rejects a wrong one."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lessons"))

from exercises.l08 import check_cancel_after, check_strict_query_tool
from solutions import l08 as solution

import pytest

from harness import CommandTool
from harness.events import Event


def test_strict_query_tool_check_accepts_the_reference():
    assert check_strict_query_tool(solution.make_query_tool) is True


def test_strict_query_tool_check_rejects_the_default_pattern():
    def default_pattern(root: Path) -> CommandTool:
        return CommandTool("query_record", "Print one order record.",
                           template="python tools/query_record.py --id {record_id}",
                           params={"record_id": "the order id"}, cwd=root)

    assert check_strict_query_tool(default_pattern) is False


def test_strict_query_tool_check_rejects_a_pattern_without_a_length():
    def any_digits(root: Path) -> CommandTool:
        return CommandTool("query_record", "Print one order record.",
                           template="python tools/query_record.py --id {record_id}",
                           params={"record_id": "the order id"}, cwd=root, pattern=r"ORD-\d+")

    assert check_strict_query_tool(any_digits) is False


def _query_tool(pattern: str, name: str = "query_record"):
    def make_query_tool(root: Path) -> CommandTool:
        return CommandTool(name, "Print one order record.",
                           template="python tools/query_record.py --id {record_id}",
                           params={"record_id": "the order id"}, cwd=root, pattern=pattern)

    return make_query_tool


@pytest.mark.parametrize(("pattern", "hint"), [
    (r"ORD-[0-9]{3,4}", "three digits"),
    (r"[A-Z]+-\d{4}", "another prefix"),
    (r"(?i)ORD-[0-9]{4}", "lower case"),
    (r"ORD-\d{4}", "Arabic-Indic digits"),
    (r"ORD.[0-9]{4}", "an underscore for the dash"),
    (r"ORD-?[0-9]{4}", "no dash"),
    (r"ORD-[0-9]{4}\s?", "a trailing"),
    (r"[a-z]*ORD-[0-9]{4}", "text before the id"),
    (r"[O][R][D]-[0-9]{4}[0-9]?", "five digits"),
])
def test_strict_query_tool_check_rejects_a_pattern_that_lets_a_near_miss_through(
        pattern, hint, capsys):
    assert check_strict_query_tool(_query_tool(pattern)) is False
    assert hint in capsys.readouterr().out


def test_strict_query_tool_check_rejects_another_tool_name(capsys):
    assert check_strict_query_tool(_query_tool(r"ORD-[0-9]{4}", name="lookup_record")) is False
    assert "name the tool 'query_record'" in capsys.readouterr().out


def test_cancel_after_check_accepts_the_reference():
    assert check_cancel_after(solution.CancelAfter) is True


def test_cancel_after_check_rejects_counting_calls_when_they_start(capsys):
    class CancelOnStart(solution.CancelAfter):
        def on_event(self, event: Event) -> None:
            if event.type == "tool_call":
                self.finished += 1
                if self.finished >= self.n:
                    self.cancel.set()

    assert check_cancel_after(CancelOnStart) is False
    assert "you set cancel when the n-th call started" in capsys.readouterr().out


def test_cancel_after_check_rejects_an_off_by_one():
    class CancelOneLate(solution.CancelAfter):
        def on_event(self, event: Event) -> None:
            if event.type == "tool_result":
                self.finished += 1
                if self.finished > self.n:
                    self.cancel.set()

    assert check_cancel_after(CancelOneLate) is False


def test_cancel_after_check_rejects_counting_every_event():
    class CountsEverything:
        def __init__(self, n: int, cancel: threading.Event) -> None:
            self.n, self.cancel, self.seen = n, cancel, 0

        def on_event(self, event: Event) -> None:
            self.seen += 1
            if self.seen >= self.n:
                self.cancel.set()

    assert check_cancel_after(CountsEverything) is False


def test_cancel_after_check_rejects_counting_only_the_calls_that_succeeded(capsys):
    class CountsSuccesses(solution.CancelAfter):
        def on_event(self, event: Event) -> None:
            if event.type == "tool_result" and event.ok:
                self.finished += 1
                if self.finished >= self.n:
                    self.cancel.set()

    assert check_cancel_after(CountsSuccesses) is False
    assert "a call that failed has finished too" in capsys.readouterr().out


def test_cancel_after_check_rejects_a_count_shared_by_every_observer():
    class SharedCount:
        finished: list = []  # noqa: RUF012 - on the class: the second run starts where one ended

        def __init__(self, n: int, cancel: threading.Event) -> None:
            self.n, self.cancel = n, cancel

        def on_event(self, event: Event) -> None:
            if event.type == "tool_result":
                self.finished.append(event.call_id)
                if len(self.finished) >= self.n:
                    self.cancel.set()

    assert check_cancel_after(SharedCount) is False
