"""Checks for lesson 01, the agent loop. Each one runs a scripted model against real tools.

The tools here return values made up when the check runs (a random code, random order
records), so a loop or an answer can only pass by passing on what really came back.
"""

from __future__ import annotations

import json
import random
import secrets
from collections.abc import Callable

from course import check

from harness import Agent, ModelError, ScriptedModel, parallel, say, tool, tool_call

TASK = "Fetch the code, then answer."


def _schema(name: str, description: str) -> dict:
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": {}, "additionalProperties": False}}}


def _check_shape(messages: object) -> None:
    """What the loop returned is a list of message dicts the check can read."""
    assert isinstance(messages, list), f"run_loop should return the messages, got {messages!r}"
    for i, msg in enumerate(messages):
        assert isinstance(msg, dict) and isinstance(msg.get("role"), str), (
            f"message {i} is {msg!r:.80}, not a message dict: append dicts like "
            "{'role': 'assistant', 'content': reply.content} (with 'tool_calls' when the "
            "reply has them), not the reply object itself")
        if msg.get("role") == "tool":
            content = msg.get("content")
            assert isinstance(content, str), (
                f"message {i} (the answer to {msg.get('tool_call_id')}) has content "
                f"{content!r:.60}, a {type(content).__name__}: a tool message's content is "
                "text, so put str(output) in it, whatever the function returned")
        calls = msg.get("tool_calls")
        assert calls is None or (isinstance(calls, list) and all(
            isinstance(c, dict) and "id" in c and isinstance(c.get("function"), dict)
            for c in calls)), (
            f"message {i} has tool_calls {calls!r:.80}: copy reply.tool_calls as they are")


def _answers(messages: list[dict], call_id: str) -> list[dict]:
    return [m for m in messages if m.get("role") == "tool" and m.get("tool_call_id") == call_id]


def _answer(messages: list[dict], call_id: str, name: str) -> str:
    """The one tool message for ``call_id``, or a hint that there is none."""
    found = _answers(messages, call_id)
    assert found, (
        f"the model called {name} ({call_id}), but no tool message answers it: keep asking "
        "the model until a reply has no tool calls, and answer every call it makes")
    return str(found[0].get("content"))


def _check_every_call_answered(messages: list[dict]) -> None:
    """Each tool call gets exactly one tool message, right after its assistant message."""
    for i, msg in enumerate(messages):
        calls = (msg.get("tool_calls") or []) if msg.get("role") == "assistant" else []
        for k, call in enumerate(calls):
            found = _answers(messages, call["id"])
            assert len(found) == 1, (
                f"tool call {call['id']} ({call['function'].get('name')}) got {len(found)} "
                "tool messages; every call needs exactly one, even an unknown tool or a tool "
                "that fails")
            after = messages[i + 1 + k] if i + 1 + k < len(messages) else {}
            assert after.get("tool_call_id") == call["id"], (
                f"the tool message for {call['id']} is not where it belongs: put the answers "
                "right after the assistant message, in the order of its calls")


def _run(run_loop: Callable, model: ScriptedModel, functions: dict, schemas: list,
         max_turns: int) -> list[dict]:
    try:
        messages = run_loop(model, functions, schemas, TASK, max_turns)
    except ModelError:
        raise AssertionError(
            f"your loop asked the model more often than it should ({len(model.requests)} "
            f"requests, max_turns={max_turns}): stop when a reply has no tool calls, and "
            "after max_turns requests") from None
    except KeyError as exc:
        if exc.args and exc.args[0] not in functions:  # the model named a tool that is not there
            raise AssertionError(
                f"your loop raised KeyError: {exc.args[0]!r} when the model called a tool "
                f"that does not exist: answer that call with the tool message \"Error: "
                f"unknown tool {exc.args[0]!r}\" and go on") from None
        raise
    except json.JSONDecodeError as exc:  # json.loads outside the try: broken arguments
        raise AssertionError(
            f"your loop raised JSONDecodeError ({exc.msg}) on a call whose arguments are not "
            "valid JSON: parse the arguments inside the try (catching Exception), so the "
            "call is answered \"Error: JSONDecodeError: ...\" and the loop goes on") from None
    except TypeError as exc:
        if "unexpected keyword" in str(exc) or "missing" in str(exc):
            raise AssertionError(
                f"your loop let a TypeError ({exc}) escape when a call's arguments did not fit "
                "the function: catch every Exception, not one kind, and answer the call with "
                "\"Error: TypeError: ...\"") from None
        raise
    except Exception as exc:
        if "the disk is on fire" in str(exc):  # a tool raised, and the loop let it through
            raise AssertionError(
                f"your loop let the tool's {type(exc).__name__}({str(exc)!r}) escape: catch "
                f"it and answer the call with \"Error: {type(exc).__name__}: {exc}\"") from None
        raise
    _check_shape(messages)
    return messages


def _said(what: str, got: str, want: str) -> None:
    assert got.strip() == want, (
        f"{what} was answered {got!r}; the exercise asks for exactly {want!r}")


@check
def check_run_loop(run_loop: Callable) -> str:
    """Judge ``run_loop(model, functions, schemas, task, max_turns) -> messages``."""
    code, word = secrets.token_hex(4), secrets.token_hex(3)
    stock = random.SystemRandom().randrange(10, 10_000)

    def fetch_code() -> str:
        return code

    def count_stock() -> int:  # not a string: the tool message holds its text
        return stock

    def echo(text: str) -> str:
        return f"echo: {text}"

    def explode() -> str:
        raise RuntimeError("the disk is on fire")

    functions = {"fetch_code": fetch_code, "echo": echo, "explode": explode,
                 "count_stock": count_stock}
    schemas = [_schema("fetch_code", "Fetch the code."), _schema("explode", "Always fails."),
               _schema("count_stock", "Count the units in stock."),
               {"type": "function", "function": {
                   "name": "echo", "description": "Say the text back.",
                   "parameters": {"type": "object", "properties": {"text": {"type": "string"}},
                                  "required": ["text"], "additionalProperties": False}}}]
    model = ScriptedModel([
        parallel(tool_call("fetch_code", id="call_a"),
                 tool_call("teleport", where="moon", id="call_b"),
                 tool_call("echo", text=word, id="call_d")),
        tool_call("explode", id="call_c"),
        parallel(tool_call("echo", '{"text": "' + word, id="call_e"),  # cut off: not JSON
                 tool_call("echo", words=word, id="call_f"),  # a name echo does not take
                 tool_call("count_stock", "", id="call_g"),  # no arguments at all: ""
                 {"role": "assistant", "content": "Checking the stock too.", "tool_calls": [
                     {"id": "call_h", "type": "function",
                      "function": {"name": "count_stock", "arguments": "{}"}}]}),
        lambda messages: say("Done."),
        say("a reply the loop should never ask for"),
    ])
    messages = _run(run_loop, model, functions, schemas, max_turns=5)

    assert model.requests, "your loop never called model.complete(messages, schemas, 'auto')"
    for n, request in enumerate(model.requests, 1):
        assert request["tools"] == schemas, (
            f"request {n} was sent with tools={request['tools']!r:.60}; send the schemas with "
            "every request, not only the first: model.complete(messages, schemas, 'auto')")
    stopped = messages[-1] if messages else {}
    if stopped.get("role") == "assistant" and stopped.get("tool_calls") and stopped.get("content"):
        raise AssertionError(
            f"your loop stopped on a reply with text ({stopped.get('content')!r}) and "
            f"{len(stopped['tool_calls'])} tool calls, without answering them: a reply can "
            "hold both; stop only when it has no tool calls")
    first_user = next((m for m in messages if m.get("role") == "user"), {})
    assert first_user.get("content") == TASK, "the task should be the first user message"
    _check_every_call_answered(messages)
    assert _answer(messages, "call_a", "fetch_code") == code, (
        "the tool message for fetch_code should hold exactly what the function returned")
    echoed = _answer(messages, "call_d", "echo")
    assert echoed == f"echo: {word}", (
        f"echo(text={word!r}) was answered {echoed!r}: call the function with the call's "
        "arguments, json.loads(call['function']['arguments']), as keyword arguments")
    _said("the call to the unknown tool 'teleport'", _answer(messages, "call_b", "teleport"),
          "Error: unknown tool 'teleport'")
    _said("the call to explode, which raised RuntimeError('the disk is on fire'),",
          _answer(messages, "call_c", "explode"), "Error: RuntimeError: the disk is on fire")
    broken = _answer(messages, "call_e", "echo")
    assert broken.startswith("Error"), (
        f"echo was called with arguments that are not valid JSON, and answered {broken!r}: "
        "answer \"Error: JSONDecodeError: ...\" (parse the arguments inside the try)")
    misnamed = _answer(messages, "call_f", "echo")
    assert misnamed.startswith("Error: TypeError: "), (
        f"echo was called with words=... (it takes text), and answered {misnamed!r}; the "
        "function raised TypeError: answer \"Error: TypeError: <its message>\"")
    for call_id, how in (("call_g", 'arguments "" (no arguments at all: read them as {})'),
                         ("call_h", "arguments {}, in a reply that also has text")):
        counted = _answer(messages, call_id, "count_stock")
        assert counted == str(stock), (
            f"count_stock, called with {how}, returned the int {stock}, but your loop "
            f"answered {counted!r}: run it, and put str(output) in the tool message"
            + (' (json.loads(arguments or "{}"))' if call_id == "call_g" else ""))
    assert len(model.requests) > 1 and any(
        m.get("content") == code for m in model.requests[1]["messages"]), (
        "the second request should carry the tool results: append them to messages")
    assert len(model.requests) == 4, (
        f"the model answered on request 4, but your loop made {len(model.requests)} requests:"
        " stop only when a reply has no tool calls (one with text and calls goes on)")
    last = messages[-1] if messages else {}
    assert last.get("role") == "assistant" and last.get("content") == "Done.", (
        "the final answer should be the last message")
    empty = [m for m in messages if "tool_calls" in m and not m["tool_calls"]]
    assert not empty, ("an assistant message without tool calls should leave the "
                       "'tool_calls' key out: the API refuses an empty list")

    def ask_again(messages: list[dict]) -> dict:
        n = sum(m.get("role") == "assistant" for m in messages) + 1
        return tool_call("fetch_code", id=f"again_{n}")

    stubborn = ScriptedModel([ask_again] * 10)
    messages = _run(run_loop, stubborn, functions, schemas, max_turns=3)
    assert len(stubborn.requests) == 3, (
        f"with max_turns=3 your loop made {len(stubborn.requests)} model requests; "
        "max_turns counts requests to the model")
    _check_every_call_answered(messages)
    return ("every call got exactly one answer, the loop stopped on the final answer, "
            "and max_turns capped the requests")


def _record(order_id: str, status: str) -> dict:
    return {"id": order_id, "item": "Heron over-ear headphones", "status": status}


@check
def check_answer_undelivered(answer_undelivered: Callable) -> str:
    """Judge a scripted step that names the orders of the last round not yet delivered."""
    rng = random.SystemRandom()
    ids = [f"ORD-{n}" for n in rng.sample(range(2000, 9999), 7)]
    statuses = ["delivered", rng.choice(["packed", "shipped", "delayed"]), "delivered",
                "out for delivery",  # "deliver" is in it, but it is not delivered
                rng.choice(["held at customs", "awaiting pickup", "lost in transit"])]
    records = {i: _record(i, s) for i, s in zip(ids[:5], statuses, strict=True)}
    records[ids[5]] = _record(ids[5], "delivered")
    records[ids[6]] = _record(ids[6], rng.choice(["packed", "at the depot"]))

    @tool
    def read_record(order_id: str) -> str:
        """Read one order record as JSON."""
        return json.dumps(records[order_id])

    @tool
    def list_orders() -> str:
        """List the open order ids."""
        return json.dumps(ids)

    def run(*rounds: list[str]) -> str:
        """List the orders, read each round's records (one call each), then your answer."""
        model = ScriptedModel([
            tool_call("list_orders", id="call_0"),
            *(parallel(*(tool_call("read_record", order_id=i, id=f"call_{n}_{k}")
                         for k, i in enumerate(calls, 1))) for n, calls in enumerate(rounds, 1)),
            answer_undelivered,
        ])
        result = Agent(model, [read_record, list_orders]).run("Which orders are on the way?")
        if (result.error or "").startswith("NotImplementedError"):
            raise NotImplementedError
        assert result.outcome == "completed", (
            f"the run ended with {result.outcome!r} ({result.error}); your step should return "
            "an answer without tool calls: say('...')")
        assert isinstance(result.final, str) and result.final.strip(), (
            f"your answer is {result.final!r}: say(...) the answer as text")
        return result.final

    final = run(ids[:5])
    for order_id in ids[:5]:
        status = records[order_id]["status"]
        if status == "delivered":
            assert order_id not in final, (
                f"{order_id} was delivered, but your answer names it: {final!r}")
        elif order_id not in final or status not in final:
            why = ("Name its status too, as the tool wrote it" if order_id in final else
                   "Compare the status with \"delivered\" exactly: \"out for delivery\" is "
                   "not delivered" if status == "out for delivery" else
                   "Name every order whose status is not \"delivered\", whatever it says, "
                   "not only the statuses you expect" if status == statuses[4] else
                   "Read every tool message after the last assistant message: that round "
                   "read five records, one message each")
            raise AssertionError(f"{order_id} is '{status}' in the tool output, but your "
                                 f"answer does not say so: {final!r}. {why}")
    earlier = [ids[6], ids[3]]
    final = run(earlier, [ids[0], ids[2], ids[5]])
    named = [i for i in ids if i in final]
    assert not set(named) & set(earlier), (
        f"your answer names {named}, read in an earlier round; read only the tool messages "
        f"after the last assistant message: {final!r}")
    assert not named and "delivered" in final.lower(), (
        f"every order of the last round is delivered: say so (\"All of these orders have "
        f"been delivered.\"), naming none; your answer: {final!r}")
    return "your answers were built from the records the tool really returned"
