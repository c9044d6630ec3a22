"""Arguments and endings no tool expects: every one is an answer, none takes the run down.

Whatever a model sends as arguments, the call is refused with `ToolArgumentError` (the
model reads why), and whatever way a tool's code ends short of the person pressing
Ctrl-C, the call is an error result and the run goes on.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Annotated

import pytest
from pydantic import AfterValidator

from harness import Agent, ScriptedModel, say, tool, tool_call
from harness.tools import ToolArgumentError, parse_json_object

HUGE = "1" * 4301  # one digit past Python's limit for turning text into an int


@tool
def add(a: int, b: int = 0) -> int:
    """Add two integers."""
    return a + b


@pytest.mark.parametrize("raw", [
    f'{{"a": {HUGE}}}', f'{{"b": {HUGE}, "a": 1}}', f'{{"other": {HUGE}}}',
    f'{{"a": 1, "deep": [[[{HUGE}]]]}}', f'{{"a": -{HUGE}}}',
], ids=["field", "second-field", "unknown-field", "nested", "negative"])
def test_a_number_of_4301_digits_is_invalid_arguments(raw: str) -> None:
    with pytest.raises(ToolArgumentError, match="cannot be read"):
        add.parse(raw)


def test_parse_json_object_refuses_a_4301_digit_number_as_invalid_arguments() -> None:
    with pytest.raises(ToolArgumentError, match="4300 digits"):
        parse_json_object(f'{{"a": {HUGE}}}')


def test_a_run_whose_model_sends_a_4301_digit_number_returns_a_result() -> None:
    model = ScriptedModel([tool_call("add", f'{{"a": {HUGE}}}'), say("done")])
    result = Agent(model, [add]).run("add it")
    assert result.outcome == "completed"
    [done] = [e for e in result.events if e.type == "tool_result"]
    assert done.status == "invalid_arguments"
    assert result.messages[3]["content"].startswith("Error: arguments hold a value")


def picky(value: str) -> str:
    raise KeyError(value)  # not a ValueError: pydantic passes it on, unconverted


def test_a_validator_that_raises_something_odd_is_invalid_arguments() -> None:
    @tool
    def lookup(key: Annotated[str, AfterValidator(picky)]) -> str:
        """Look a key up."""
        return key

    with pytest.raises(ToolArgumentError, match=r"could not be validated.*KeyError"):
        lookup.parse('{"key": "x"}')


def raising(exc: BaseException):
    @tool(name="explode")
    def explode() -> str:
        """Always ends badly."""
        raise exc

    return explode


@pytest.mark.parametrize("exc, shown", [
    (SystemExit(3), "Error: SystemExit: 3"),
    (GeneratorExit(), "Error: GeneratorExit"),
    (asyncio.CancelledError(), "Error: CancelledError"),
], ids=["SystemExit", "GeneratorExit", "CancelledError"])
def test_a_tool_that_exits_or_is_cancelled_is_an_error_result(
        exc: BaseException, shown: str) -> None:
    model = ScriptedModel([tool_call("explode"), say("done")])
    result = Agent(model, [raising(exc)]).run("go")
    assert result.outcome == "completed"
    assert result.messages[3]["content"] == shown


def test_a_tool_that_calls_sys_exit_does_not_end_python() -> None:
    @tool
    def quit_now() -> str:
        """Leave."""
        sys.exit("bye")

    result = quit_now.execute(quit_now.parse("{}"))
    assert (result.ok, result.output) == (False, "Error: SystemExit: bye")


def test_keyboard_interrupt_from_a_tool_still_reaches_the_loop() -> None:
    model = ScriptedModel([tool_call("explode"), say("never")])
    result = Agent(model, [raising(KeyboardInterrupt())]).run("go")
    assert result.outcome == "cancelled"  # the loop's own handling: the person pressed stop
