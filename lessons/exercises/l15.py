"""Checks for lesson 15 (runs that wait and survive).

`check_settle` pauses a refund run at two approvals, one after the other, saves it, and
hands your `settle` a new agent, the file and a person who says yes up to 50 EUR. It reads
what ran from the refund ledger the tool writes, and what the file held each time the
person was asked and at the end.

`check_retry_marks` runs exercise 2's return agent (durable_shop.py, next to the lesson)
on DBOS with the tools marked as you say, kills its process with SIGKILL in each of its
four calls in turn, lets a new process finish the run each time, and reads what the world
saw: the tool bodies that ran, the courier's bookings, the case notes, the order record.
The browser edition cannot run DBOS: there it applies the in-flight rule to your marks.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from course import IN_BROWSER, check

from harness import (
    Agent,
    Permissions,
    RunResult,
    ScriptedModel,
    Workspace,
    parallel,
    say,
    tool,
    tool_call,
)

__all__ = ["check_retry_marks", "check_settle"]

# -- exercise 1: answer every pause, from the file -------------------------------------------

LIMIT = 50.0  # the person says yes to a refund up to this many euros
FIRST = [("ORD-1002", 45.0), ("ORD-1003", 120.0)]  # one round, two refunds: the first pause
THEN = ("ORD-1001", 30.0)  # asked for once the first two are answered: the second pause
TASK = "Refund ORD-1002 (45 EUR) and ORD-1003 (120 EUR); then ORD-1001 (30 EUR)."


def _answer(messages: list[dict]) -> dict:
    return say(" ".join(m["content"] for m in messages if m["role"] == "tool"))


STEPS = [parallel(*(tool_call("issue_refund", order_id=o, amount_eur=a) for o, a in FIRST)),
         tool_call("issue_refund", order_id=THEN[0], amount_eur=THEN[1]), _answer]


def _refund_tool(ledger: Path) -> Any:
    @tool(side_effects=True)
    def issue_refund(order_id: str, amount_eur: float) -> str:
        """Refund an order: the money goes back to the customer. Cannot be undone."""
        with ledger.open("a", encoding="utf-8") as f:
            f.write(json.dumps({"order": order_id, "amount_eur": amount_eur}) + "\n")
        return f"Refunded {amount_eur:.2f} EUR on {order_id}."
    return issue_refund


def _refunds(ledger: Path) -> list[tuple[str, float]]:
    lines = ledger.read_text(encoding="utf-8").splitlines() if ledger.exists() else []
    return [(e["order"], e["amount_eur"]) for e in map(json.loads, lines)]


@check
def check_settle(settle: Callable[[Agent, Path, Callable[[dict], bool]], RunResult]) -> str:
    """A run paused twice, settled from its file by your code with a person's answers."""
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace.sample(Path(tmp) / "ws")
        ledger = ws.root / "data" / "refunds.jsonl"
        rules = Permissions({"read_file": "allow", "issue_refund": "ask"}, approve="pause")

        def shop(steps: list) -> Agent:
            return Agent(ScriptedModel(steps), [*ws.tools, _refund_tool(ledger)],
                         permissions=rules)

        path = shop(STEPS).run(TASK).save(Path(tmp) / "paused.json")
        ids = {}  # call id -> order, as the runs made them
        asked: list[tuple[str, list[str]]] = []  # (order asked about, what the file held)

        def person(call: dict) -> bool:
            if not isinstance(call, dict) or "arguments" not in call or "id" not in call:
                raise AssertionError(f"the person was asked about {call!r}: ask about each "
                                     "waiting call itself, an entry of result.pending")
            order = call["arguments"]["order_id"]
            ids[call["id"]] = order
            held = RunResult.load(path)
            asked.append((order, [p["id"] for p in held.pending]))
            return call["arguments"]["amount_eur"] <= LIMIT

        result = settle(shop(STEPS[1:]), path, person)
        if not isinstance(result, RunResult):
            raise AssertionError(f"settle returned {type(result).__name__}; return the last "
                                 "RunResult, the one agent.resume gave you")
        refunds = _refunds(ledger)
        if ("ORD-1003", 120.0) in refunds:
            raise AssertionError("the person said no to the 120 EUR refund of ORD-1003, and it "
                                 "ran: answer each call with what the person said about it")
        twice = sorted({order for order, _ in refunds if [o for o, _ in refunds].count(order) > 1})
        if twice:
            raise AssertionError(f"{', '.join(twice)} was refunded twice: a pause that was "
                                 "answered must never be resumed again (go on from the result "
                                 "resume returned, not from the first pause)")
        if not asked:
            raise AssertionError("the person was never asked: call person(call) for each "
                                 "call in result.pending and resume with the answers")
        if result.outcome == "awaiting_approval":
            raise AssertionError("settle returned a run that still waits (the refund of "
                                 f"{THEN[0]}): a resumed run can pause again; keep going until "
                                 "it no longer waits")
        if result.outcome != "completed":
            raise AssertionError(f"the run ended {result.outcome!r} ({result.error})")
        if sorted(refunds) != sorted([FIRST[0], THEN]):
            raise AssertionError(f"the ledger holds {refunds}; the person said yes to "
                                 f"{FIRST[0]} and {THEN}, each once")
        for order, held in asked:
            call_id = next(i for i, o in ids.items() if o == order)
            if call_id not in held:
                raise AssertionError(
                    f"when the person was asked about {order}, the file did not hold the run "
                    "that waits for it: save each run that pauses before you ask (a person "
                    "may answer tomorrow, in another process, from the file)")
        left = RunResult.load(path)
        if left.outcome == "awaiting_approval":
            raise AssertionError(
                f"settle is done, but the file still holds a run waiting for "
                f"{[p['arguments']['order_id'] for p in left.pending]}: resumed again, it would "
                "refund again. Save the run after each resume, whatever it became")
        _more_pauses_and_none(settle, shop, Path(tmp), ledger)
    return ("two pauses answered from the file: 45 and 30 EUR refunded once each, 120 EUR "
            "refused, and the file holds the finished run; a run that paused three times was "
            "settled too, and one that waited for nothing came back as it was")


MORE = ("ORD-1003", 20.0)  # a third pause: as many pauses as the run makes, not two


def _more_pauses_and_none(settle: Callable, shop: Callable[[list], Agent], tmp: Path,
                          ledger: Path) -> None:
    """The same settle on a run that pauses three times, and on one that never waits."""
    ledger.unlink(missing_ok=True)
    steps = [*STEPS[:2], tool_call("issue_refund", order_id=MORE[0], amount_eur=MORE[1]),
             _answer]
    path = shop(steps).run(TASK).save(tmp / "paused3.json")
    asked: list[str] = []

    def person(call: dict) -> bool:
        asked.append(call["arguments"]["order_id"])
        return call["arguments"]["amount_eur"] <= LIMIT

    result = settle(shop(steps[1:]), path, person)
    if not isinstance(result, RunResult) or result.outcome != "completed" or \
            RunResult.load(path).outcome != "completed":
        outcome = result.outcome if isinstance(result, RunResult) else type(result).__name__
        raise AssertionError(
            f"a run that pauses three times (a third refund, {MORE[1]:g} EUR on {MORE[0]}) "
            f"came back {outcome!r}: keep going while the run waits, however many pauses it "
            "makes (a while loop on result.outcome, not a count taken from the check)")
    if sorted(_refunds(ledger)) != sorted([FIRST[0], THEN, MORE]):
        raise AssertionError(f"a run that pauses three times left the ledger {_refunds(ledger)};"
                             f" the person said yes to {FIRST[0]}, {THEN} and {MORE}, once each")
    done = shop([say("Nothing to refund.")]).run("Is anything waiting?")
    path = done.save(tmp / "done.json")
    asked.clear()
    nothing = ("a file that holds a run that waits for nothing (it completed) should come back "
               "as it is, with no one asked: check result.outcome before you ask or resume, "
               "not after")
    try:
        result = settle(shop([]), path, person)
    except ValueError as exc:
        raise AssertionError(f"{nothing} (your code raised ValueError: {exc})") from None
    if asked or not isinstance(result, RunResult) or result.outcome != "completed":
        raise AssertionError(nothing)


# -- exercise 2: which calls may run again after a crash --------------------------------------

TOOLS = ("track_parcel", "book_pickup", "set_status", "add_note")
MARKS = ("read_only", "idempotent", "side_effects")
RUN_ID = "return-ORD-1002"


def _crash_in_each(marks: dict[str, str]) -> dict[str, Any]:
    """The return agent on DBOS, killed in each of its calls in turn and finished by a new
    process each time: what the last process reported and what the world saw."""
    from durable_shop import finished, kill_in_flight, worker

    given = json.dumps(marks)
    with tempfile.TemporaryDirectory() as tmp:
        root = Workspace.sample(Path(tmp) / "shop").root
        mode = "start"
        for name in TOOLS:
            kill_in_flight(worker(root, mode, RUN_ID, "--returns", given, "--hang", name),
                           root, name)
            mode = "finish"
        report = json.loads(finished(worker(root, "finish", RUN_ID, "--returns", given)))

        def lines(name: str) -> list[str]:
            path = root / name
            return path.read_text(encoding="utf-8").splitlines() if path.exists() else []

        ran = [line.split()[0] for line in lines("ran.log")]
        return {"status": {name: status for name, status, _ in report["calls"]},
                "ran": {name: ran.count(name) for name in TOOLS},
                "pickups": len(lines("data/pickups.jsonl")), "notes": len(lines("notes.md"))}


def _by_the_rule(marks: dict[str, str]) -> dict[str, Any]:
    """What `_crash_in_each` finds, from the rule alone (the browser edition): a tool that
    only reads, or is marked idempotent, runs again; any other with side effects is
    answered unknown. book_pickup hands its key to the courier whatever it is marked."""
    again = {name: marks[name] != "side_effects" for name in TOOLS}
    return {"status": {name: "ok" if again[name] else "unknown" for name in TOOLS},
            "ran": {name: 2 if again[name] else 1 for name in TOOLS},
            "pickups": 1, "notes": 2 if again["add_note"] else 1}


@check
def check_retry_marks(retry_marks: Callable[[], dict[str, str]]) -> str:
    """The return agent killed in each of its calls: what ran again, and what the world saw."""
    marks = retry_marks()
    if not isinstance(marks, dict) or sorted(marks) != sorted(TOOLS):
        raise AssertionError(f"retry_marks() should return a dict with the keys {list(TOOLS)}, "
                             f"not {marks!r}")
    wrong = {name: mark for name, mark in marks.items() if mark not in MARKS}
    if wrong:
        raise AssertionError(f"{wrong}: mark each tool with one of {list(MARKS)}")
    seen = _by_the_rule(marks) if IN_BROWSER else _crash_in_each(marks)
    status = seen["status"]
    if seen["notes"] > 1:
        raise AssertionError(
            f"add_note ran again after the crash: the case notes say it {seen['notes']} "
            "times. Each call adds a line and it takes no key, so it is not safe to run "
            "again: mark it side_effects (a crash then leaves it unknown, and it is added once)")
    if seen["pickups"] > 1:
        raise AssertionError(f"the courier booked {seen['pickups']} pickups; it must book one")
    if status["book_pickup"] == "unknown":
        raise AssertionError(
            "book_pickup was left unknown after the crash, though it hands idempotency_key() to "
            "the courier, who books once per key: running it again is safe. Mark it "
            "idempotent, and the run finishes knowing the pickup is booked")
    if status["set_status"] == "unknown":
        raise AssertionError(
            "set_status was left unknown after the crash, but setting the status to "
            "'returning' twice leaves the record as setting it once: it is safe to run "
            "again, with no key at all. Mark it idempotent")
    if status["track_parcel"] == "unknown":
        raise AssertionError("track_parcel was left unknown after the crash, but it only "
                             "reads: reading twice harms nobody. Mark it read_only")
    if marks["track_parcel"] != "read_only":
        raise AssertionError("track_parcel only reads: mark it read_only, so a replay (lesson "
                             "11) reads the parcel again instead of answering from the record")
    for name in ("book_pickup", "set_status"):
        if marks[name] == "read_only":
            raise AssertionError(
                f"{name} changes the world, so it is not read_only: a replay of the run "
                "(lesson 11) would run it again, outside a durable run, where it has no key. "
                "Mark it idempotent: a tool with side effects that is safe to run again")
    how = ("by the rule (the browser edition cannot run DBOS: on a local install this check "
           "kills a real run in each call)" if IN_BROWSER else
           f"in a real run killed in each call (the bodies ran {seen['ran']})")
    return (f"{how}: the read and the pickup ran again (one booking: the same key), the status "
            "was set twice to the same value, and the note was left unknown and added once")
