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


def _loop_with(answer_unknown, answer_error, *, pass_arguments=True, rounds=5,
               answers_first=False):
    """The reference loop, with one of its choices made differently."""
    def run_loop(model, functions, schemas, task, max_turns=5):
        messages = [{"role": "user", "content": task}]
        for _ in range(min(max_turns, rounds)):
            reply = model.complete(messages, schemas, "auto")
            message = reply.message()
            if not reply.tool_calls:
                messages.append(message)
                break
            answers = []
            for call in reply.tool_calls:
                fn = functions.get(call["function"]["name"])
                if fn is None:
                    output = answer_unknown(call["function"]["name"])
                else:
                    try:
                        args = json.loads(call["function"]["arguments"] or "{}")
                        output = str(fn(**args) if pass_arguments else fn())
                    except Exception as exc:
                        output = answer_error(exc)
                answers.append({"role": "tool", "tool_call_id": call["id"], "content": output})
            messages += [*answers, message] if answers_first else [message, *answers]
        return messages

    return run_loop


def _unknown(name):
    return f"Error: unknown tool '{name}'"


def _raised(exc):
    return f"Error: {type(exc).__name__}: {exc}"


def test_run_loop_check_accepts_the_loop_written_with_the_test_helper():
    assert check_run_loop(_loop_with(_unknown, _raised)) is True


def test_run_loop_check_rejects_another_unknown_tool_text(capsys):
    assert check_run_loop(_loop_with(lambda name: f"Error: no tool named {name}", _raised)) is False
    assert "Error: unknown tool 'teleport'" in capsys.readouterr().out


def test_run_loop_check_rejects_an_error_without_the_exception_name(capsys):
    assert check_run_loop(_loop_with(_unknown, lambda exc: f"Error: {exc}")) is False
    assert "Error: RuntimeError: the disk is on fire" in capsys.readouterr().out


def test_run_loop_check_rejects_a_loop_that_ignores_the_arguments(capsys):
    assert check_run_loop(_loop_with(_unknown, _raised, pass_arguments=False)) is False
    assert "with the call's arguments" in capsys.readouterr().out


def test_run_loop_check_rejects_answers_before_the_assistant_message():
    assert check_run_loop(_loop_with(_unknown, _raised, answers_first=True)) is False


def test_run_loop_check_blames_a_loop_that_stops_early_not_itself(capsys):
    assert check_run_loop(_loop_with(_unknown, _raised, rounds=1)) is False
    out = capsys.readouterr().out
    assert "your code raised" not in out and "no tool message answers it" in out


def test_run_loop_check_says_the_messages_are_dicts_when_it_gets_reply_objects(capsys):
    def appends_replies(model, functions, schemas, task, max_turns=5):
        messages = [{"role": "user", "content": task}]
        messages.append(model.complete(messages, schemas, "auto"))
        return messages

    assert check_run_loop(appends_replies) is False
    out = capsys.readouterr().out
    assert "your code raised" not in out and "not a message dict" in out


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


def _answer_from(records_of):
    """Name the records ``records_of(messages)`` picks whose status is not delivered."""
    def answer(messages):
        records = [r for r in records_of(messages) if isinstance(r, dict)]
        waiting = [f"{r['id']} ({r['status']})" for r in records if r["status"] != "delivered"]
        return say("Still on the way: " + ", ".join(waiting) + ".")

    return answer


def test_answer_undelivered_check_rejects_reading_every_tool_message(capsys):
    every_message = _answer_from(lambda messages: [
        json.loads(m["content"]) for m in messages if m["role"] == "tool"])
    assert check_answer_undelivered(every_message) is False
    assert "read in an earlier round" in capsys.readouterr().out


def test_answer_undelivered_check_rejects_an_empty_list_when_all_are_delivered(capsys):
    def last_round(messages):
        last = max(i for i, m in enumerate(messages) if m["role"] == "assistant")
        return [json.loads(m["content"]) for m in messages[last + 1:]]

    assert check_answer_undelivered(_answer_from(last_round)) is False
    assert "say so" in capsys.readouterr().out


def test_answer_undelivered_check_rejects_a_status_test_on_part_of_the_word(capsys):
    def substring(messages):
        last = max(i for i, m in enumerate(messages) if m["role"] == "assistant")
        records = [json.loads(m["content"]) for m in messages[last + 1:]]
        waiting = [f"{r['id']} ({r['status']})" for r in records if "deliver" not in r["status"]]
        return say("Still on the way: " + ", ".join(waiting) + "." if waiting
                   else "All of these orders have been delivered.")

    assert check_answer_undelivered(substring) is False
    assert "out for delivery" in capsys.readouterr().out


def test_answer_undelivered_check_rejects_ids_without_their_status():
    def ids_only(messages):
        last = max(i for i, m in enumerate(messages) if m["role"] == "assistant")
        records = [json.loads(m["content"]) for m in messages[last + 1:]]
        waiting = [r["id"] for r in records if r["status"] != "delivered"]
        return say("Still on the way: " + ", ".join(waiting) + "." if waiting
                   else "All of these orders have been delivered.")

    assert check_answer_undelivered(ids_only) is False


def _loop_without_guards(model, functions, schemas, task, max_turns=5):
    """A loop that looks the tool up with functions[name] and calls it unguarded."""
    messages = [{"role": "user", "content": task}]
    for _ in range(max_turns):
        reply = model.complete(messages, schemas, "auto")
        messages.append(reply.message())
        if not reply.tool_calls:
            break
        for call in reply.tool_calls:
            fn = functions[call["function"]["name"]]
            output = fn(**json.loads(call["function"]["arguments"] or "{}"))
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": str(output)})
    return messages


def test_run_loop_hint_for_a_keyerror_names_the_unknown_tool_rule(capsys):
    assert check_run_loop(_loop_without_guards) is False
    out = capsys.readouterr().out
    assert "KeyError: 'teleport'" in out and "Error: unknown tool 'teleport'" in out
    assert "your code raised" not in out  # the hint says which rule, not only what broke


def test_run_loop_hint_for_an_escaped_tool_error_says_to_catch_it(capsys):
    def unknown_handled(model, functions, schemas, task, max_turns=5):
        known = {"teleport": lambda **_: "Error: unknown tool 'teleport'", **functions}
        return _loop_without_guards(model, known, schemas, task, max_turns)

    assert check_run_loop(unknown_handled) is False
    out = capsys.readouterr().out
    assert "escape" in out and "Error: RuntimeError: the disk is on fire" in out


def test_answer_undelivered_hint_for_the_last_message_only_says_to_read_the_round(capsys):
    def last_message_only(messages):
        record = json.loads(messages[-1]["content"])
        if record["status"] == "delivered":
            return say("All of these orders have been delivered.")
        return say(f"Still on the way: {record['id']} ({record['status']}).")

    assert check_answer_undelivered(last_message_only) is False
    out = capsys.readouterr().out
    assert "Read every tool message after the last assistant message" in out
    assert "out for delivery\" is not delivered" not in out


def _loop(parse_inside=True, to_text=str, catch=Exception, empty="{}", stop_on_text=False):
    """The reference loop, with one of its choices made the way a learner might."""
    def run_loop(model, functions, schemas, task, max_turns=5):
        messages = [{"role": "user", "content": task}]
        for _ in range(max_turns):
            reply = model.complete(messages, schemas, "auto")
            messages.append(reply.message())
            if not reply.tool_calls or (stop_on_text and reply.content):
                break
            for call in reply.tool_calls:
                name, raw = call["function"]["name"], call["function"]["arguments"]
                if name not in functions:
                    output = f"Error: unknown tool '{name}'"
                else:
                    if not parse_inside:
                        args = json.loads(raw or empty)
                    try:
                        if parse_inside:
                            args = json.loads(raw or empty)
                        output = to_text(functions[name](**args))
                    except catch as exc:
                        output = f"Error: {type(exc).__name__}: {exc}"
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": output})
        return messages

    return run_loop


def test_run_loop_check_accepts_the_learner_style_loop():
    assert check_run_loop(_loop()) is True


def test_run_loop_check_rejects_json_loads_outside_the_try(capsys):
    assert check_run_loop(_loop(parse_inside=False)) is False
    out = capsys.readouterr().out
    assert "not valid JSON" in out and "inside the try" in out


def test_run_loop_check_rejects_a_non_string_output_put_in_content(capsys):
    assert check_run_loop(_loop(to_text=lambda value: value)) is False
    assert "str(output)" in capsys.readouterr().out


def test_run_loop_check_rejects_catching_only_the_error_its_tool_raises(capsys):
    assert check_run_loop(_loop(catch=(RuntimeError, json.JSONDecodeError))) is False
    assert "catch every Exception" in capsys.readouterr().out


def test_run_loop_check_rejects_empty_arguments_not_read_as_an_empty_object(capsys):
    assert check_run_loop(_loop(empty="")) is False
    assert 'arguments ""' in capsys.readouterr().out


def test_run_loop_check_rejects_a_loop_that_stops_on_a_reply_with_text_and_calls(capsys):
    assert check_run_loop(_loop(stop_on_text=True)) is False
    assert "stop only when it has no tool calls" in capsys.readouterr().out


def test_run_loop_check_rejects_a_hard_coded_exception_name(capsys):
    def runtime_error_only(model, functions, schemas, task, max_turns=5):
        messages = solution.run_loop(model, functions, schemas, task, max_turns)
        for m in messages:
            if m["role"] == "tool" and m["content"].startswith("Error: ") and \
                    "unknown tool" not in m["content"]:
                m["content"] = "Error: RuntimeError: " + m["content"].split(": ", 2)[-1]
        return messages

    assert check_run_loop(runtime_error_only) is False
    assert "Error: TypeError:" in capsys.readouterr().out


def test_answer_undelivered_check_rejects_a_list_of_the_statuses_on_the_way(capsys):
    def expected_statuses(messages):
        last = max(i for i, m in enumerate(messages) if m["role"] == "assistant")
        records = [json.loads(m["content"]) for m in messages[last + 1:]]
        waiting = [f"{r['id']} ({r['status']})" for r in records
                   if r["status"] in ("packed", "shipped", "delayed", "out for delivery")]
        return say("Still on the way: " + ", ".join(waiting) + "." if waiting
                   else "All of these orders have been delivered.")

    assert check_answer_undelivered(expected_statuses) is False
    assert "whatever it says" in capsys.readouterr().out


def test_run_loop_check_rejects_schemas_sent_with_the_first_request_only(capsys):
    def first_request_only(model, functions, schemas, task, max_turns=5):
        sent = []

        class Once:
            requests = model.requests

            def complete(self, messages, tools, tool_choice):
                sent.append(1)
                return model.complete(messages, tools if len(sent) == 1 else [], tool_choice)

        return solution.run_loop(Once(), functions, schemas, task, max_turns)

    assert check_run_loop(first_request_only) is False
    assert "not only the first" in capsys.readouterr().out
