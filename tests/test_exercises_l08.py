"""Lesson 08 exercise checks: each accepts the reference solution and rejects a wrong one."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lessons"))

from exercises.l08 import check_cancel_after, check_strict_query_tool
from solutions import l08 as solution

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
