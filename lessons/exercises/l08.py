"""Checks for lesson 08, execution control. Each one runs the real harness on a scripted model.

The cancel check runs real shell commands, which stop the moment cancel is set, so a
cancel set one call too early shows up as a command that never ran.
"""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from course import check

from harness import (
    Agent,
    Event,
    RunResult,
    ScriptedModel,
    Tool,
    Workspace,
    parallel,
    say,
    tool_call,
)

GOOD_IDS = ("ORD-1001", "ORD-1003")
BAD_IDS = (  # (value, why it must be refused)
    ("ORD-1001; rm -rf /", "a second command"),
    ("$(whoami)", "command substitution"),
    ("`id`", "backticks"),
    ("ORD-1001\nORD-1002", "a newline"),
    ("-h", "an option"),
    ("ORD-1001 --verbose", "a smuggled flag after a space"),
    ("../records/ORD-1001", "a path"),
    ("ORD-10011", "five digits: exactly four, {4}"),
    ("ORD-100", "three digits: exactly four, {4}"),
    ("ord-1001", "lower case: only capital ORD-, no case-insensitive flag"),
    ("Ord-1001", "mixed case: only capital ORD-, no case-insensitive flag"),
    ("ABC-1001", "another prefix: only ORD-, not any capitals"),
    ("ORD_1001", "an underscore for the dash: a '.' in a pattern matches any character"),
    ("ORD1001", "no dash"),
    ("ORD-\u0661\u0662\u0663\u0664", "Arabic-Indic digits: \\d matches any Unicode digit, "
     "[0-9] only 0 to 9"),
    ("ORD-\uff11\uff10\uff10\uff11", "full-width digits: \\d matches any Unicode digit, "
     "[0-9] only 0 to 9"),
    ("ORD-1001\n", "a trailing newline"),
    ("ORD-1001 ", "a trailing space"),
    ("xORD-1001", "text before the id"),
    ("order ORD-1001 please", "the id inside longer text"),
)


@check
def check_strict_query_tool(make_query_tool: Callable[[Path], Tool]) -> str:
    """Give your tool valid ids and injection attempts through a real run."""
    values = GOOD_IDS + tuple(value for value, _ in BAD_IDS)
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace.sample(tmp)
        query = make_query_tool(ws.root)
        assert isinstance(query, Tool), f"return a CommandTool, not {type(query).__name__}"
        assert query.name == "query_record", f"name the tool 'query_record', not {query.name!r}"
        params = sorted(query.schema()["function"]["parameters"]["properties"])
        assert params == ["record_id"], f"the model should fill only record_id, not {params}"
        calls = [tool_call("query_record", record_id=v, id=f"call_{i}")
                 for i, v in enumerate(values)]
        model = ScriptedModel([  # a few calls a reply: a reply may hold at most 10
            *(parallel(*calls[k:k + 8]) for k in range(0, len(calls), 8)),
            say("Done."),
        ])
        result = Agent(model, [query]).run("Look up these orders.")
    results = {e.call_id: e for e in result.events if e.type == "tool_result"}
    for i, value in enumerate(GOOD_IDS):
        event = results[f"call_{i}"]
        assert event.ok and f'"id": "{value}"' in event.output, (
            f"{value} should print its record, but got: {event.output[:200]}")
    for i, (value, why) in enumerate(BAD_IDS, start=len(GOOD_IDS)):
        event = results[f"call_{i}"]
        assert event.status == "invalid_arguments", (
            f"{value!r} ({why}) got past your pattern and was stopped only later "
            f"({event.status}: {(event.output.splitlines() or [''])[-1][:120]!r}). Refuse it "
            "before anything runs, with a pattern that accepts only ORD- and four digits "
            "from 0 to 9, and nothing before or after them")
    return (f"{len(GOOD_IDS)} valid ids printed their records; all {len(BAD_IDS)} injection "
            "attempts and near-miss ids were refused before any process started.")


def _watched(observer: Any, errors: list[BaseException]) -> Callable[[Event], None]:
    """Your observer, with what it raises kept: the harness would only warn about it."""
    def watch(event: Event) -> None:
        try:
            observer.on_event(event)
        except Exception as exc:
            errors.append(exc)

    return watch


ORDERS = ["ORD-1001", "ORD-1002", "ORD-1003", "ORD-1004", "ORD-1005"]


def _cancel_run(make_observer: Callable[[int, threading.Event], Any],
                n: int) -> tuple[RunResult, list[str]]:
    """Five real shell commands (three in one reply, then two) with your observer set to
    ``n``; each appends its order id to packed.txt, and the second then fails (exit status
    3): a failed call has finished too. Returns the result and the ids packed."""
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace.sample(tmp)
        calls = [tool_call("run_shell", command=f"echo {order} >> packed.txt"
                           f"{'; exit 3' if i == 1 else ''}", id=f"call_{i}")
                 for i, order in enumerate(ORDERS)]
        model = ScriptedModel([parallel(*calls[:3]), parallel(*calls[3:]), say("All packed.")])
        cancel, errors = threading.Event(), []
        observer = make_observer(n, cancel)
        result = Agent(model, ws.tools, observers=[_watched(observer, errors)]).run(
            "Pack every order.", cancel=cancel)
        if errors:
            raise errors[0]
        packed = ws.root / "packed.txt"
        return result, packed.read_text(encoding="utf-8").split() if packed.exists() else []


@check
def check_cancel_after(make_observer: Callable[[int, threading.Event], Any]) -> str:
    """Run five real commands with your observer at n=2 and n=4; judge what ran and the
    transcript."""
    for n in (2, 4):
        result, packed = _cancel_run(make_observer, n)
        assert result.outcome == "cancelled", (
            f"with n={n} the run ended {result.outcome!r}, not 'cancelled': set the event "
            "when the n-th tool call has finished")
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
