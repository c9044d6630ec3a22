"""Tools and arguments that misbehave fail the call, never the run.

Whatever a tool does (exit the interpreter, return something that cannot become text,
raise an exception that cannot describe itself) and however deep the model nests its
arguments, ``run()`` returns: the call gets an error the model can read, the
transcript stays valid and the run goes on to its answer.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

from harness import Agent, ScriptedModel, ToolResult, say, tool, tool_call

DEEP = '{"todos": ' + "[" * 100_000 + "]" * 100_000 + "}"


class Unprintable:
    def __str__(self) -> str:
        raise ValueError("cannot show this")

    __repr__ = __str__


class Mute(Exception):
    def __str__(self) -> str:
        raise RuntimeError("cannot describe this")


def behaviour(kind: str) -> Any:
    if kind == "sys.exit":
        sys.exit(2)  # a wrapped command-line main(), or argparse refusing its input
    if kind == "unprintable":
        return Unprintable()
    if kind == "non-text result":
        return ToolResult(True, 123)
    raise Mute()


@pytest.mark.parametrize("kind", ["sys.exit", "unprintable", "non-text result", "mute error"])
def test_misbehaving_tool_fails_its_call_and_the_run_goes_on(kind: str) -> None:
    @tool
    def misbehave() -> Any:
        """Misbehave in one way."""
        return behaviour(kind)

    model = ScriptedModel([tool_call("misbehave", id="c1"), say("carried on")])
    result = Agent(model, [misbehave]).run("go")
    assert (result.outcome, result.final) == ("completed", "carried on")
    assert isinstance(result.messages[3]["content"], str)


@pytest.mark.parametrize("name", ["todo_write", "add"])
def test_deeply_nested_arguments_are_refused_not_raised(name: str) -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    plan = '{"todos": [{"content": "Keep me", "status": "in_progress"}]}'
    model = ScriptedModel([tool_call("todo_write", plan, id="p1"), tool_call(name, DEEP, id="c1"),
                           say("done"), say("done")])
    result = Agent(model, [add], planning=True).run("go")
    assert result.messages[5]["content"].startswith("Error:")
    assert [(i.content, i.status) for i in result.plan] == [("Keep me", "in_progress")]
    assert result.outcome == "open_items"
