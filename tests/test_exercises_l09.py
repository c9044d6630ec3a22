"""Lesson 09 exercise checks: each accepts the reference solution and rejects a wrong one."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lessons"))

from exercises import l09
from exercises.l09 import check_cancel_after, check_restock, restock_one
from solutions import l09 as solution

import pytest

from harness import RunControl, ToolResult, tool
from harness.events import Event
from harness.outcomes import RunOver


def test_cancel_after_check_accepts_the_reference():
    assert check_cancel_after(solution.CancelAfter) is True


def test_cancel_after_check_judges_the_same_in_a_browser(monkeypatch, capsys):
    """A browser tab cannot start the commands: a Python tool does what they do."""
    monkeypatch.setattr(l09, "IN_BROWSER", True)
    assert check_cancel_after(solution.CancelAfter) is True

    class CancelOnStart(solution.CancelAfter):
        def on_event(self, event: Event) -> None:
            if event.type == "tool_call":
                self.finished += 1
                if self.finished >= self.n:
                    self.cancel.set()

    assert check_cancel_after(CancelOnStart) is False
    assert "you set cancel when the n-th call started" in capsys.readouterr().out


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


def test_cancel_after_check_rejects_raising_keyboard_interrupt(capsys):
    class Interrupts(solution.CancelAfter):
        def on_event(self, event: Event) -> None:
            if event.type == "tool_result":
                self.finished += 1
                if self.finished >= self.n:
                    raise KeyboardInterrupt   # the kernel's Interrupt, not the cancel event

    assert check_cancel_after(Interrupts) is False
    out = capsys.readouterr().out
    assert "your observer raised KeyboardInterrupt" in out
    assert "Set the cancel event you were given instead: self.cancel.set()" in out


def test_cancel_after_check_rejects_setting_cancel_and_raising_keyboard_interrupt(capsys):
    class Both(solution.CancelAfter):
        def on_event(self, event: Event) -> None:
            if event.type == "tool_result":
                self.finished += 1
                if self.finished >= self.n:
                    self.cancel.set()
                    raise KeyboardInterrupt   # on every result from the n-th on

    assert check_cancel_after(Both) is False
    assert "your observer raised KeyboardInterrupt" in capsys.readouterr().out


@pytest.mark.parametrize(("stop", "name"), [
    pytest.param(lambda: sys.exit(1), "SystemExit", id="sys.exit"),
    pytest.param(lambda: (_ for _ in ()).throw(RunOver("cancelled")), "RunOver", id="RunOver"),
])
def test_cancel_after_check_rejects_raising_to_stop_the_run(stop, name, capsys):
    class Raises(solution.CancelAfter):
        def on_event(self, event: Event) -> None:
            if event.type == "tool_result":
                self.finished += 1
                if self.finished >= self.n:
                    stop()

    assert check_cancel_after(Raises) is False
    out = capsys.readouterr().out
    assert f"your observer raised {name} (with n=2)" in out and "self.cancel.set()" in out


def test_cancel_after_check_rejects_cancelling_when_the_next_call_starts(capsys):
    class SetsItAtTheNextCall(solution.CancelAfter):
        def on_event(self, event: Event) -> None:
            if event.type == "tool_result":
                self.finished += 1
            elif event.type == "tool_call" and self.finished >= self.n:
                self.cancel.set()

    assert check_cancel_after(SetsItAtTheNextCall) is False
    assert "with n=5 the run ended 'completed'" in capsys.readouterr().out


def test_cancel_after_check_rejects_an_event_of_its_own():
    class OwnEvent(solution.CancelAfter):
        def __init__(self, n: int, cancel: threading.Event) -> None:
            super().__init__(n, threading.Event())

    assert check_cancel_after(OwnEvent) is False


# -- exercise 2: restock ----------------------------------------------------------------

def _rejected(restock: Any, capsys, hint: str) -> None:
    assert check_restock(restock) is False
    out = capsys.readouterr().out
    assert hint in out, out


def test_restock_check_accepts_the_reference():
    assert check_restock(solution.restock) is True


def test_restock_check_accepts_a_tool_that_asks_after_each_sku():
    @tool
    def restock(skus: list[str], control: RunControl) -> str:
        """Restock each SKU."""
        for done, sku in enumerate(skus, start=1):
            restock_one(sku)
            if (reason := control.stop_reason()) and done < len(skus):
                return f"Stopped ({reason}) after restocking {done} of {len(skus)} SKUs."
        return f"All {len(skus)} SKUs restocked."

    assert check_restock(restock) is True


def test_restock_check_says_the_stub_is_not_done(capsys):
    @tool
    def restock(skus: list[str], control: RunControl) -> str:
        """Restock each SKU."""
        raise NotImplementedError

    _rejected(restock, capsys, "the exercise is not done")


def test_restock_check_rejects_a_tool_that_ignores_control(capsys):
    @tool
    def restock(skus: list[str], control: RunControl) -> str:
        """Restock each SKU."""
        for sku in skus:
            restock_one(sku)
        return f"Restocked {len(skus)} of {len(skus)} SKUs."

    _rejected(restock, capsys, "went on and restocked all 8 SKUs. Before each SKU")


def test_restock_check_rejects_asking_once_before_the_loop(capsys):
    @tool
    def restock(skus: list[str], control: RunControl) -> str:
        """Restock each SKU."""
        if reason := control.stop_reason():
            return f"Stopped ({reason}) after 0 of {len(skus)} SKUs."
        for sku in skus:
            restock_one(sku)
        return f"Restocked {len(skus)} of {len(skus)} SKUs."

    _rejected(restock, capsys, "inside the loop (not once before it)")


STOP = threading.Event()  # a flag of the tool's own: the run's cancel never reaches it


def test_restock_check_rejects_a_global_event(capsys):
    @tool
    def restock(skus: list[str], control: RunControl) -> str:
        """Restock each SKU."""
        for done, sku in enumerate(skus):
            if STOP.is_set():
                return f"Stopped (cancelled) after {done} of {len(skus)} SKUs."
            restock_one(sku)
        return f"Restocked {len(skus)} of {len(skus)} SKUs."

    _rejected(restock, capsys, "not a flag of your own")


def test_restock_check_rejects_watching_only_the_cancel_event(capsys):
    @tool
    def restock(skus: list[str], control: RunControl) -> str:
        """Restock each SKU."""
        for done, sku in enumerate(skus):
            if control.cancel is not None and control.cancel.is_set():
                return f"Stopped (cancelled) after {done} of {len(skus)} SKUs."
            restock_one(sku)
        return f"Restocked {len(skus)} of {len(skus)} SKUs."

    _rejected(restock, capsys, "says 'time_limit' once the deadline has passed")


def test_restock_check_rejects_a_cancel_event_that_is_not_there(capsys):
    @tool
    def restock(skus: list[str], control: RunControl) -> str:
        """Restock each SKU."""
        for done, sku in enumerate(skus):
            if control.cancel.is_set():
                return f"Stopped (cancelled) after {done} of {len(skus)} SKUs."
            restock_one(sku)
        return f"Restocked {len(skus)} of {len(skus)} SKUs."

    _rejected(restock, capsys, "there is no cancel event (control.cancel is None)")


def test_restock_check_rejects_raising_to_stop(capsys):
    @tool
    def restock(skus: list[str], control: RunControl) -> str:
        """Restock each SKU."""
        for sku in skus:
            if reason := control.stop_reason():
                raise RuntimeError(f"stopped: {reason}")
            restock_one(sku)
        return f"Restocked {len(skus)} of {len(skus)} SKUs."

    _rejected(restock, capsys, "your tool raised")


def test_restock_check_rejects_stopping_with_the_controls_own_check(capsys):
    @tool
    def restock(skus: list[str], control: RunControl) -> str:
        """Restock each SKU."""
        for sku in skus:
            control.check()   # raises RunOver
            restock_one(sku)
        return f"Restocked {len(skus)} of {len(skus)} SKUs."

    _rejected(restock, capsys, "Return a text instead")


def test_restock_check_rejects_a_stop_that_does_not_say_how_far_it_got(capsys):
    @tool
    def restock(skus: list[str], control: RunControl) -> str:
        """Restock each SKU."""
        for sku in skus:
            if reason := control.stop_reason():
                return f"Stopped ({reason})."
            restock_one(sku)
        return f"Restocked {len(skus)} of {len(skus)} SKUs."

    _rejected(restock, capsys, "say how far it got")


def test_restock_check_rejects_a_count_one_too_high(capsys):
    @tool
    def restock(skus: list[str], control: RunControl) -> str:
        """Restock each SKU."""
        for i, sku in enumerate(skus):
            if reason := control.stop_reason():
                return f"Stopped ({reason}) after {i + 1} of {len(skus)} SKUs."
            restock_one(sku)
        return f"Restocked {len(skus)} of {len(skus)} SKUs."

    _rejected(restock, capsys, "count the SKUs done")


def test_restock_check_rejects_a_stop_that_does_not_say_why(capsys):
    @tool
    def restock(skus: list[str], control: RunControl) -> str:
        """Restock each SKU."""
        for done, sku in enumerate(skus):
            if control.stop_reason():
                return f"Stopped after {done} of {len(skus)} SKUs."
            restock_one(sku)
        return f"Restocked {len(skus)} of {len(skus)} SKUs."

    _rejected(restock, capsys, "say why it stopped")


def test_restock_check_rejects_stopping_one_sku_late(capsys):
    @tool
    def restock(skus: list[str], control: RunControl) -> str:
        """Restock each SKU."""
        for done, sku in enumerate(skus, start=1):
            reason = control.stop_reason()
            restock_one(sku)
            if reason:
                return f"Stopped ({reason}) after {done} of {len(skus)} SKUs."
        return f"Restocked {len(skus)} of {len(skus)} SKUs."

    _rejected(restock, capsys, "restocked one SKU more (4)")


def test_restock_check_rejects_stop_reason_without_its_parentheses(capsys):
    @tool
    def restock(skus: list[str], control: RunControl) -> str:
        """Restock each SKU."""
        for done, sku in enumerate(skus):
            if control.stop_reason:
                return f"Stopped ({control.stop_reason}) after {done} of {len(skus)} SKUs."
            restock_one(sku)
        return f"Restocked {len(skus)} of {len(skus)} SKUs."

    _rejected(restock, capsys, "Call control.stop_reason() with its parentheses")


def test_restock_check_rejects_an_end_that_does_not_say_all_were_done(capsys):
    @tool
    def restock(skus: list[str], control: RunControl) -> str:
        """Restock each SKU."""
        for done, sku in enumerate(skus):
            if reason := control.stop_reason():
                return f"Stopped ({reason}) after {done} of {len(skus)} SKUs."
            restock_one(sku)
        return "Done."

    _rejected(restock, capsys, "with no brake, your tool restocked all 5 SKUs but said 'Done.'")


def test_restock_check_rejects_control_typed_object(capsys):
    @tool
    def restock(skus: list[str], control: object = None) -> str:
        """Restock each SKU."""
        for done, sku in enumerate(skus):
            if reason := control.stop_reason():
                return f"Stopped ({reason}) after {done} of {len(skus)} SKUs."
            restock_one(sku)
        return f"Restocked {len(skus)} of {len(skus)} SKUs."

    _rejected(restock, capsys, "it should fill only skus. Type control as RunControl")


def test_restock_check_rejects_control_typed_any(capsys):
    @tool
    def restock(skus: list[str], control: Any) -> str:
        """Restock each SKU."""
        return solution.restock.fn(skus, control)

    _rejected(restock, capsys, "the model fills ['control', 'skus']")


def test_restock_check_rejects_a_plain_function(capsys):
    def restock(skus: list[str], control: RunControl) -> str:
        """Restock each SKU."""
        return solution.restock.fn(skus, control)

    _rejected(restock, capsys, "put @tool above the def")


def test_restock_check_rejects_a_total_written_in(capsys):
    @tool
    def restock(skus: list[str], control: RunControl) -> str:
        """Restock each SKU."""
        for done, sku in enumerate(skus):
            if reason := control.stop_reason():
                return f"Stopped ({reason}) after {done} of 8 SKUs."
            restock_one(sku)
        return "Restocked 8 of 8 SKUs."

    _rejected(restock, capsys, "your tool restocked 5 of 6 SKUs but said")


def test_restock_check_rejects_restocking_the_checks_own_list(capsys):
    @tool
    def restock(skus: list[str], control: RunControl) -> str:
        """Restock each SKU."""
        for done, sku in enumerate(l09.SKUS):
            if reason := control.stop_reason():
                return f"Stopped ({reason}) after {done} of {len(skus)} SKUs."
            restock_one(sku)
        return f"Restocked {len(skus)} of {len(skus)} SKUs."

    _rejected(restock, capsys, "restock every SKU of the call, in its order")


def test_restock_check_accepts_a_stop_returned_as_a_failed_result():
    @tool
    def restock(skus: list[str], control: RunControl) -> ToolResult:
        """Restock each SKU."""
        for done, sku in enumerate(skus):
            if reason := control.stop_reason():   # not done: a failure, as a stopped process
                return ToolResult(False, f"Stopped ({reason}) after {done} of {len(skus)} SKUs.")
            restock_one(sku)
        return ToolResult(True, f"Restocked {len(skus)} of {len(skus)} SKUs.")

    assert check_restock(restock) is True
