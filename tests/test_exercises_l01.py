"""Lesson 01 exercise checks: each accepts the reference solution and rejects a wrong one."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lessons"))

from exercises.l01 import check_answer_undelivered, check_run_loop
from solutions import l01 as solution

from harness import say


def test_run_loop_check_accepts_the_reference():
    assert check_run_loop(solution.run_loop) is True


def test_run_loop_check_rejects_a_loop_that_skips_unknown_tools():
    def skips_unknown(model, functions, schemas, task, max_turns=5):
        messages = [{"role": "user", "content": task}]
        for _ in range(max_turns):
            reply = model.complete(messages, schemas, "auto")
            messages.append(reply.message())
            if not reply.tool_calls:
                break
            for call in reply.tool_calls:
                fn = functions.get(call["function"]["name"])
                if fn is not None:
                    try:
                        output = str(fn())
                    except Exception as exc:
                        output = f"Error: {exc}"
                    messages.append({"role": "tool", "tool_call_id": call["id"],
                                     "content": output})
        return messages

    assert check_run_loop(skips_unknown) is False


def test_run_loop_check_rejects_a_loop_that_ignores_max_turns():
    def endless(model, functions, schemas, task, max_turns=5):
        return solution.run_loop(model, functions, schemas, task, max_turns=100)

    assert check_run_loop(endless) is False


def test_run_loop_check_rejects_a_loop_that_lets_a_tool_exception_escape():
    def no_guard(model, functions, schemas, task, max_turns=5):
        messages = [{"role": "user", "content": task}]
        for _ in range(max_turns):
            reply = model.complete(messages, schemas, "auto")
            messages.append(reply.message())
            if not reply.tool_calls:
                break
            for call in reply.tool_calls:
                fn = functions.get(call["function"]["name"])
                output = str(fn()) if fn else "Error: unknown tool"
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": output})
        return messages

    assert check_run_loop(no_guard) is False


def test_answer_undelivered_check_accepts_the_reference():
    assert check_answer_undelivered(solution.answer_undelivered) is True


def test_answer_undelivered_check_rejects_a_hard_coded_answer():
    def hard_coded(messages):
        return say("Still on the way: ORD-1003 (shipped).")

    assert check_answer_undelivered(hard_coded) is False


def test_answer_undelivered_check_rejects_reading_every_round_instead_of_the_last():
    def every_round(messages):
        records = []
        for m in messages:
            if m["role"] == "tool":
                value = json.loads(m["content"])
                records += value if isinstance(value, list) else [value]
        named = [r for r in records if isinstance(r, str)]  # ids from list_orders
        return say("On the way: " + ", ".join(named))

    assert check_answer_undelivered(every_round) is False


def test_answer_undelivered_check_rejects_reading_only_the_last_tool_message():
    def last_message_only(messages):
        record = json.loads(messages[-1]["content"])
        if record["status"] == "delivered":
            return say("All of these orders have been delivered.")
        return say(f"Still on the way: {record['id']} ({record['status']}).")

    assert check_answer_undelivered(last_message_only) is False


def test_answer_undelivered_check_reports_an_unfinished_stub(capsys):
    def stub(messages):
        raise NotImplementedError

    assert check_answer_undelivered(stub) is False
    assert "not done" in capsys.readouterr().out
