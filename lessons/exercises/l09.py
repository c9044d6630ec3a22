"""Checks for lesson 09, one budget and cancel. Each one runs the real harness on a scripted model.

The cancel check runs real shell commands, which stop the moment cancel is set, so a
cancel set one call too early shows up as a command that never ran (in a browser, which
cannot start a program, a Python tool that does the same). The restock check
gives your tool the SKUs to restock through `restock_one`, which records every SKU it
restocks and can press a brake of the check's choosing once a given number are done.
"""

from __future__ import annotations

import re
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from course import IN_BROWSER, check

from harness import (
    Agent,
    Event,
    RunControl,
    RunResult,
    ScriptedModel,
    Tool,
    ToolResult,
    Workspace,
    parallel,
    say,
    tool,
    tool_call,
)
from harness.outcomes import RunOver


def _watched(observer: Any, errors: list[BaseException]) -> Callable[[Event], None]:
    """Your observer, with what it raises kept: the harness would only warn about it. A
    KeyboardInterrupt is kept too, and raised on: it is the kernel's Interrupt button."""
    def watch(event: Event) -> None:
        try:
            observer.on_event(event)
        except KeyboardInterrupt as exc:
            errors.append(exc)
            raise
        except BaseException as exc:  # sys.exit() too: the harness only warns about it
            errors.append(exc)

    return watch


INTERRUPTED = ("your observer raised {error}{when}. {why} Set the cancel event you were "
               "given instead: self.cancel.set()")
WHY = {KeyboardInterrupt: "That is the kernel's Interrupt button: the run stops, but as if "
                          "a person had pressed it, and nothing outside the kernel can do the "
                          "same (another thread, a timer, a web request).",
       SystemExit: "An observer cannot stop a run that way: the harness only warns about it.",
       RunOver: "An observer cannot end a run by raising: the harness only warns about it, "
                "and the run goes on."}


def _stopped_by_raising(errors: list[BaseException], n: int) -> AssertionError | None:
    """The hint for an observer that raised to stop the run, or None."""
    for error in errors:
        for kind, why in WHY.items():
            if isinstance(error, kind):
                return AssertionError(INTERRUPTED.format(error=type(error).__name__,
                                                         when=f" (with n={n})", why=why))
    return None


ORDERS = ["ORD-1001", "ORD-1002", "ORD-1003", "ORD-1004", "ORD-1005"]


def _packer(root: Path) -> Tool:
    """In a browser, which cannot start a program: a Python tool that does what each
    command does, and, like a command, does not start once the run must stop."""
    @tool
    def run_shell(command: str, control: RunControl) -> ToolResult:
        """Pack one order: ``echo ORD-1001 >> packed.txt``, and ``; exit 3`` to fail."""
        if reason := control.stop_reason():
            return ToolResult(False, f"Not run: the run stopped ({reason}).")
        with (root / "packed.txt").open("a", encoding="utf-8") as packed:
            packed.write(command.split()[1] + "\n")
        failed = command.endswith("exit 3")
        return ToolResult(not failed, f"exit status {3 if failed else 0}")

    return run_shell


def _cancel_run(make_observer: Callable[[int, threading.Event], Any],
                n: int) -> tuple[RunResult, list[str]]:
    """Five real shell commands (three in one reply, then two) with your observer set to
    ``n``; each appends its order id to packed.txt, and the second then fails (exit status
    3): a failed call has finished too. Returns the result and the ids packed."""
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace.sample(tmp)
        tools = [_packer(ws.root)] if IN_BROWSER else ws.tools
        calls = [tool_call("run_shell", command=f"echo {order} >> packed.txt"
                           f"{'; exit 3' if i == 1 else ''}", id=f"call_{i}")
                 for i, order in enumerate(ORDERS)]
        model = ScriptedModel([parallel(*calls[:3]), parallel(*calls[3:]), say("All packed.")])
        cancel, errors = threading.Event(), []
        observer = make_observer(n, cancel)
        try:
            result = Agent(model, tools, observers=[_watched(observer, errors)]).run(
                "Pack every order.", cancel=cancel)
        except KeyboardInterrupt:  # raised where the run does not catch it (its last event)
            if not errors:
                raise  # a real Interrupt, pressed while the check ran
        if raised := _stopped_by_raising(errors, n):
            raise raised
        if errors:
            raise errors[0]
        if result.outcome == "cancelled" and not cancel.is_set():
            raise AssertionError(f"with n={n} the run was cancelled, but the cancel event you "
                                 "were given is still not set: the run stopped some other "
                                 "way. Set the cancel event you were given: self.cancel.set()")
        packed = ws.root / "packed.txt"
        return result, packed.read_text(encoding="utf-8").split() if packed.exists() else []


@check
def check_cancel_after(make_observer: Callable[[int, threading.Event], Any]) -> str:
    """Run five real commands with your observer at n=2, n=4 and n=5 (the last call: the
    run must not ask the model again); judge what ran and the transcript."""
    for n in (2, 4, len(ORDERS)):
        result, packed = _cancel_run(make_observer, n)
        last = (" (the n-th is the last call: set it as that call's result arrives, not "
                "when a later call starts; the run then stops before it asks the model again)"
                if n == len(ORDERS) else "")
        assert result.outcome == "cancelled", (
            f"with n={n} the run ended {result.outcome!r}, not 'cancelled': set the event "
            f"when the n-th tool call has finished{last}")
        ran = f"{len(packed)} command{'' if len(packed) == 1 else 's'}"
        assert len(packed) != n - 1, (
            f"with n={n} only {ran} ran ({', '.join(packed) or 'none'}): you set "
            "cancel when the n-th call started. A real command checks cancel and stops at "
            "once, so the n-th never ran. A call has finished when its tool_result event "
            "arrives: count those")
        assert len(packed) != n + 1, (
            f"with n={n}, {ran} ran ({', '.join(packed)}): one call too many. The second "
            "command failed (exit status 3), but a call that failed has finished too: count "
            "every tool_result event, not only the ok ones, and set cancel at the n-th")
        assert len(packed) == n, (
            f"with n={n}, {ran} ran ({', '.join(packed) or 'none'}): set the "
            "event as the n-th result arrives (count tool_result events)")
        asked = [c["id"] for m in result.messages if m["role"] == "assistant"
                 for c in m.get("tool_calls") or ()]
        answered = [m["tool_call_id"] for m in result.messages if m["role"] == "tool"]
        assert sorted(asked) == sorted(answered), "some tool call has no tool message"
        skipped = [m for m in result.messages if m["role"] == "tool"
                   and m["content"].startswith("Not run")]
        assert len(skipped) == len(asked) - n, "every call after the n-th should be 'Not run'"
    return ("exactly n real commands ran before the run stopped, and every call the model "
            "asked for has its tool message.")


# -- exercise 2: a long tool that stops with the run -----------------------------------

SKUS = ["HERON-BLK", "HERON-WHT", "WREN-BLK", "WREN-RED",
        "KITE-BLK", "KITE-BLU", "LARK-BLK", "LARK-GRN"]
ITEM_SECONDS = 0.01  # one SKU takes this long to restock


class _Shelf:
    """What `restock_one` has restocked in this run, and the check's brake: once
    ``after`` SKUs are done, ``then()`` runs (it sets cancel, or waits out the deadline)."""

    def __init__(self) -> None:
        self.reset()

    def reset(self, after: int | None = None, then: Callable[[], Any] = lambda: None) -> None:
        self.done: list[str] = []
        self.after, self.then = after, then


_shelf = _Shelf()


def restock_one(sku: str) -> str:
    """Restock one SKU. It takes a moment, and the check sees every SKU it restocked."""
    time.sleep(ITEM_SECONDS)
    _shelf.done.append(sku)
    if len(_shelf.done) == _shelf.after:
        _shelf.then()
    return f"{sku} restocked"


def _restock_run(restock: Tool, brake: str | None, after: int,
                 skus: list[str] = SKUS) -> tuple[RunResult, Event, list[str]]:
    """One run in which the model asks ``restock`` for ``skus``. ``brake``: None (the run
    never stops), "cancel" (cancel is set while the ``after``-th SKU is restocked) or
    "deadline" (the ``after``-th SKU is slow: the run's 0.5 s pass while it is restocked).
    Returns the result, the tool_result event and the SKUs really restocked."""
    cancel = threading.Event() if brake == "cancel" else None
    max_seconds = 0.5 if brake == "deadline" else None
    then = {"cancel": lambda: cancel.set(),
            "deadline": lambda: time.sleep(max_seconds + 0.1)}.get(brake, lambda: None)
    _shelf.reset(after, then)
    model = ScriptedModel([tool_call("restock", skus=skus), say("The shelves are stocked.")])
    result = Agent(model, [restock], max_seconds=max_seconds).run("Restock every SKU.",
                                                                  cancel=cancel)
    done = list(_shelf.done)
    _shelf.reset()
    events = [e for e in result.events if e.type == "tool_result" and e.tool_name == "restock"]
    assert events, f"the run made no call to restock (it ended {result.outcome!r})"
    return result, events[0], done


def _judge_stopped(event: Event, done: list[str], after: int, reason: str, how: str,
                   skus: list[str] = SKUS) -> None:
    """The tool of a run stopped (``reason``) while the ``after``-th of ``skus`` was
    restocked. A tool may return its text as a failure (``ToolResult(False, ...)``, as a
    stopped process does, lesson 10); it may not raise."""
    total = len(skus)
    if "NotImplementedError" in event.output:
        raise NotImplementedError
    if not event.ok and event.output.startswith("Error:"):  # raised, or refused
        if "RunOver" in event.output or reason in event.output:
            raise AssertionError(
                f"{how}, and your tool raised ({event.output!r}): the model reads only an "
                "error, and cannot tell how far you got. Return a text instead, such as "
                f"'Stopped ({reason}) after {after} of {total} SKUs.'")
        extra = (" In this run there is no cancel event (control.cancel is None): ask "
                 "control.stop_reason(), which checks the cancel and the deadline."
                 if reason == "time_limit" and "is_set" in event.output else "")
        raise AssertionError(f"{how}, and your tool failed with {event.output!r}.{extra}")
    if not done and not re.search("stop", event.output, re.IGNORECASE):
        raise AssertionError(f"no SKU was restocked (your tool said {event.output!r}): "
                             "restock each SKU with restock_one(sku)")
    if done != skus[:len(done)]:
        raise AssertionError(f"your tool restocked {done}, but the model asked for {skus}: "
                             "restock the skus the call gives, in their order, and only those")
    if len(done) == total:
        if reason == "time_limit":
            raise AssertionError(
                f"{how}, but your tool went on and restocked all {total} SKUs. Cancel "
                "is not the only brake: ask control.stop_reason(), which says 'time_limit' "
                "once the deadline has passed, not only the cancel event")
        raise AssertionError(
            f"{how}, but your tool went on and restocked all {total} SKUs. Before each SKU, "
            "inside the loop (not once before it), ask control.stop_reason(), and stop when "
            "it gives a reason. Ask the run's control, the RunControl parameter, not a flag "
            "of your own: the run's cancel and deadline reach only that")
    if len(done) < after:
        raise AssertionError(
            f"your tool stopped after {len(done)} SKUs, before the run was stopped ({how}). "
            "Call control.stop_reason() with its parentheses: it returns None while the run "
            "may go on, and a reason ('cancelled', 'time_limit') once it must stop")
    if len(done) == after + 1:
        raise AssertionError(
            f"{how}, and your tool restocked one SKU more ({len(done)}) before it stopped. "
            "Ask control.stop_reason() right before each restock_one, and return at once "
            "when it gives a reason, before that SKU")
    assert len(done) == after, (
        f"{how}, and your tool restocked {len(done)} SKUs: stop before the next one")
    said = re.findall(r"\b(\d+) of (\d+)\b", event.output)
    assert said, (
        f"your tool stopped at the right SKU but said only {event.output!r}: say how far it "
        f"got, e.g. 'Stopped ({reason}) after {after} of {total} SKUs.', so the model knows "
        "what is left to do")
    assert (str(after), str(total)) in said, (
        f"your tool restocked {after} of {total} SKUs but said {event.output!r}: count the "
        "SKUs done, not the position of the one you stopped before")
    assert reason in event.output, (
        f"say why it stopped: {event.output!r} does not name the reason {reason!r} that "
        "control.stop_reason() gave")


@check
def check_restock(restock: Tool) -> str:
    """Three real runs on a scripted model: a cancel, a deadline, no brake."""
    assert isinstance(restock, Tool), (
        f"restock should be a tool (put @tool above the def), not {type(restock).__name__}")
    assert restock.name == "restock", f"name the tool 'restock', not {restock.name!r}"
    params = sorted(restock.schema()["function"]["parameters"]["properties"])
    assert params == ["skus"], (
        f"the model fills {params}: it should fill only skus. Type control as RunControl "
        "(from harness import RunControl): then the call path fills it in with the run's "
        "control, and the model never sees it")
    _, event, done = _restock_run(restock, "cancel", 3)
    _judge_stopped(event, done, 3, "cancelled",
                   "the run was cancelled while the 3rd SKU was being restocked")
    six = SKUS[:6]  # each run asks for another number of SKUs: count the ones you were given
    _, event, done = _restock_run(restock, "deadline", 5, six)
    _judge_stopped(event, done, 5, "time_limit", "with max_seconds=0.5, the deadline "
                   "passed while the 5th of 6 SKUs was being restocked", six)
    five = SKUS[7:2:-1]
    total = len(five)
    _, event, done = _restock_run(restock, None, 0, five)
    if "NotImplementedError" in event.output:
        raise NotImplementedError
    assert event.ok, f"with no brake, your tool failed: {event.output!r}"
    assert done == five, (
        f"with no brake, the model asked for {five} and your tool restocked {done}: restock "
        "every SKU of the call, in its order, when the run may go on")
    stopped = re.search("stop", event.output, re.IGNORECASE)
    assert not stopped and str(total) in event.output, (
        f"with no brake, your tool restocked all {total} SKUs but said {event.output!r}: say "
        f"so, e.g. 'Restocked {total} of {total} SKUs.'")
    return ("your tool stopped at the 3rd SKU on cancel and at the 5th on the deadline, said "
            f"how far it got, and restocked all {total} of another list when nothing stopped "
            "it; the model never sees control.")
