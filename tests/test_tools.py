"""Tools: schemas from typed functions, strict argument checking, output the model reads."""

from __future__ import annotations

import datetime
import enum
import json
from pathlib import Path
from typing import Annotated

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness import Agent, ScriptedModel, Tool, ToolResult, say, tool, tool_call
from harness.tool_text import describe as _describe
from harness.tools import ToolArgumentError, cap


@tool
def add(a: int, b: int = 0) -> int:
    """Add two integers.

    Used by the tests as the plainest typed tool.

    Args:
        a: the first number.
        b: the second number,
            zero when left out.

    Returns:
        the sum.
    """
    return a + b


@tool
def ping() -> str:
    """Answer pong."""
    return "pong"


def returning(value: object, *, max_output: int = 8_000) -> Tool:
    """A tool with no arguments that returns ``value`` (to see how it is serialised)."""

    @tool(name="produce", max_output=max_output)
    def produce() -> object:
        """Return a fixed value."""
        return value

    return produce


def raising(exc: Exception) -> Tool:
    @tool(name="explode")
    def explode() -> str:
        """Always fails."""
        raise exc

    return explode


class Point(BaseModel):
    x: int
    y: int


class Colour(enum.Enum):
    red = "red"


# -- @tool builds name, description and schema -------------------------------------

def test_tool_name_is_the_function_name():
    assert add.name == "add"


def test_tool_name_can_be_given():
    @tool(name="sum_two")
    def anything(a: int) -> int:
        """Sum."""
        return a

    assert anything.name == "sum_two"
    assert anything.schema()["function"]["name"] == "sum_two"


def test_description_is_the_docstring_without_args_and_returns():
    assert add.description == "Add two integers.\n\nUsed by the tests as the plainest typed tool."


def test_schema_is_a_function_schema_with_name_and_description():
    schema = add.schema()
    assert schema["type"] == "function"
    assert schema["function"]["name"] == "add"
    assert schema["function"]["description"] == add.description


def test_schema_parameters_take_descriptions_from_args_section():
    props = add.schema()["function"]["parameters"]["properties"]
    assert props["a"] == {"type": "integer", "description": "the first number."}
    assert props["b"]["description"] == "the second number, zero when left out."


def test_schema_takes_annotated_field_descriptions():
    @tool
    def scale(factor: Annotated[float, Field(description="how much bigger")] = 1.0) -> float:
        """Scale."""
        return factor

    props = scale.schema()["function"]["parameters"]["properties"]
    assert props["factor"] == {"type": "number", "description": "how much bigger", "default": 1.0}


def test_schema_refers_to_enums_and_models_of_the_module():
    @tool
    def place(colour: Colour, at: Point) -> str:
        """Place a dot."""
        return f"{colour.name} {at.x},{at.y}"

    params = place.schema()["function"]["parameters"]
    assert params["$defs"]["Colour"] == {"type": "string", "enum": ["red"]}
    args = place.parse('{"colour": "red", "at": {"x": 1, "y": 2}}')
    assert place.execute(args).output == "red 1,2"


def test_schema_requires_only_parameters_without_default():
    params = add.schema()["function"]["parameters"]
    assert params["required"] == ["a"]
    assert params["properties"]["b"]["default"] == 0


def test_schema_forbids_additional_properties():
    assert add.schema()["function"]["parameters"]["additionalProperties"] is False


def test_schema_has_no_pydantic_title_noise():
    assert '"title"' not in json.dumps(add.schema())


def test_schema_keeps_a_parameter_named_title():
    @tool
    def create_issue(title: str) -> str:
        """Open an issue."""
        return title

    params = create_issue.schema()["function"]["parameters"]
    assert params["properties"]["title"] == {"type": "string"}
    assert params["required"] == ["title"]


def test_parameter_without_type_hint_is_refused():
    with pytest.raises(TypeError, match="needs a type hint"):
        @tool
        def untyped(a) -> str:
            """No hint."""
            return a


def test_tool_name_with_spaces_is_refused():
    with pytest.raises(ValueError, match="1-64 letters"):
        Tool("two words", "d", Point, lambda x, y: x)


def test_tool_class_takes_a_hand_written_args_model():
    class MoveArgs(BaseModel):
        model_config = ConfigDict(extra="forbid")
        dx: int = Field(description="steps to the right")

    moved = []
    move = Tool("move", "Move the cursor.", MoveArgs, lambda dx: moved.append(dx) or "moved")
    params = move.schema()["function"]["parameters"]
    assert params["properties"]["dx"] == {"type": "integer", "description": "steps to the right"}
    assert move.execute(move.parse('{"dx": 3}')) == ToolResult(True, "moved")
    assert moved == [3]


# -- strict argument checking ------------------------------------------------------

REFUSED = {
    "malformed_json": ('{"a": 1', "not valid JSON"),
    "second_json_value": ('{"a": 1} {"a": 2}', "one JSON object; found more data"),
    "json_array": ("[1, 2]", "must be a JSON object, not list"),
    "json_string": ('"a=1"', "must be a JSON object, not str"),
    "unknown_field": ('{"a": 1, "c": 2}', "unknown field 'c'"),
    "missing_field": ('{"b": 1}', "missing field 'a'"),
    "string_for_int": ('{"a": "2"}', "'a': Input should be a valid integer"),
    "bool_for_int": ('{"a": true}', "'a': Input should be a valid integer"),
    "float_for_int": ('{"a": 2.5}', "'a':"),
}


@pytest.mark.parametrize("raw, reason", REFUSED.values(), ids=REFUSED.keys())
def test_bad_arguments_are_refused_with_a_one_line_reason(raw, reason):
    with pytest.raises(ToolArgumentError) as refused:
        add.parse(raw)
    assert reason in str(refused.value)
    assert "\n" not in str(refused.value)


def test_all_problems_of_one_call_are_named_together():
    with pytest.raises(ToolArgumentError) as refused:
        add.parse('{"b": "x", "z": 1}')
    message = str(refused.value)
    assert "missing field 'a'" in message
    assert "'b':" in message
    assert "unknown field 'z'" in message


@pytest.mark.parametrize("raw", ["", "   ", None])
def test_empty_argument_string_means_no_arguments(raw):
    assert ping.parse(raw).model_dump() == {}


def test_empty_arguments_for_a_required_parameter_name_the_missing_field():
    with pytest.raises(ToolArgumentError, match="missing field 'a'"):
        add.parse("")


def test_whitespace_around_the_object_is_accepted():
    assert add.parse('\n {"a": 1}\n').a == 1


def test_arguments_the_schema_describes_as_strings_are_accepted():
    @tool
    def paint(colour: Colour, day: datetime.date, path: Path, size: tuple[int, int]) -> str:
        """Paint."""
        return f"{colour.name} {day.isoformat()} {path.name} {size[0]}x{size[1]}"

    args = paint.parse('{"colour": "red", "day": "2024-05-01", "path": "a/b.txt", '
                       '"size": [2, 3]}')
    assert paint.execute(args) == ToolResult(True, "red 2024-05-01 b.txt 2x3")


@pytest.mark.parametrize("raw, reason", REFUSED.values(), ids=REFUSED.keys())
def test_refused_call_becomes_a_tool_message_and_the_run_goes_on(raw, reason):
    ran = []

    @tool
    def record(a: int, b: int = 0) -> str:
        """Record a number."""
        ran.append(a)
        return "recorded"

    model = ScriptedModel([tool_call("record", raw, id="c1"),
                           tool_call("record", a=2, id="c2"),
                           say("done")])
    result = Agent(model, [record]).run("record two")
    assert result.outcome == "completed"
    assert ran == [2]
    refused = result.messages[3]
    assert refused["role"] == "tool" and refused["tool_call_id"] == "c1"
    assert refused["content"].startswith("Error: ") and reason in refused["content"]
    assert "\n" not in refused["content"] and "Traceback" not in refused["content"]
    outcome = [(e.ok, e.output) for e in result.events if e.type == "tool_result"]
    assert outcome == [(False, refused["content"]), (True, "recorded")]


# -- running the function ------------------------------------------------------------

def test_exception_inside_the_tool_becomes_a_one_line_error():
    boom = raising(ValueError("disk full\n  at line 3\n  in write()"))
    result = boom.execute(boom.parse(""))
    assert result == ToolResult(False, "Error: ValueError: disk full")


def test_exception_without_a_message_names_its_type():
    boom = raising(KeyError())
    assert boom.execute(boom.parse("")) == ToolResult(False, "Error: KeyError")


def test_long_exception_message_is_capped_like_output():
    @tool(max_output=100)
    def chatty() -> str:
        """Fails at length."""
        raise ValueError("x" * 1_000)

    output = chatty.execute(chatty.parse("")).output
    assert output.startswith("Error: ValueError: xxx")
    assert "characters cut" in output and len(output) < 150


def test_exception_inside_the_tool_does_not_stop_the_run():
    model = ScriptedModel([tool_call("explode", id="c1"), say("it failed")])
    result = Agent(model, [raising(RuntimeError("no network"))]).run("try")
    assert result.outcome == "completed"
    assert result.messages[3]["content"] == "Error: RuntimeError: no network"


def test_tool_is_called_with_the_validated_arguments():
    assert add.execute(add.parse('{"a": 2, "b": 3}')) == ToolResult(True, "5")


def test_default_argument_is_used_when_left_out():
    assert add.execute(add.parse('{"a": 2}')) == ToolResult(True, "2")


@pytest.mark.parametrize("value, text", [
    ({"city": "Zürich", "n": 2}, '{"city": "Zürich", "n": 2}'),
    ([1, "two", None], '[1, "two", null]'),
    (Point(x=1, y=2), '{"x":1,"y":2}'),
    ([Point(x=1, y=2)], '[{"x": 1, "y": 2}]'),
    ({"day": datetime.date(2024, 5, 1)}, '{"day": "2024-05-01"}'),
    (42, "42"),
    ("plain text", "plain text"),
], ids=["dict", "list", "pydantic_model", "list_of_models", "date_in_dict", "int", "str"])
def test_return_value_is_serialised_for_the_model(value, text):
    produce = returning(value)
    assert produce.execute(produce.parse("")) == ToolResult(True, text)


def test_tool_returning_tool_result_not_ok_passes_through():
    produce = returning(ToolResult(False, "Error: no such record"))
    assert produce.execute(produce.parse("")) == ToolResult(False, "Error: no such record")


def test_long_output_keeps_head_and_tail_and_says_how_much_was_cut():
    produce = returning("H" * 700 + "x" * 10_000 + "T" * 300, max_output=1_000)
    output = produce.execute(produce.parse("")).output
    head, marker, tail = output.split("\n")
    assert head == "H" * 644
    assert tail == "x" * 23 + "T" * 300
    assert marker == "[... 10,033 characters cut ...]"
    assert len(output) <= 1_000  # the marker counts towards the limit


def test_output_within_the_limit_is_unchanged():
    produce = returning("y" * 50, max_output=50)
    assert produce.execute(produce.parse("")).output == "y" * 50


def test_tool_result_output_is_capped_too():
    produce = returning(ToolResult(False, "e" * 5_000), max_output=300)
    result = produce.execute(produce.parse(""))
    assert result.ok is False
    assert "\n[... 4,732 characters cut ...]\n" in result.output
    assert len(result.output) <= 300


def test_cap_with_a_tiny_limit_keeps_no_more_than_the_limit():
    assert cap("abcdefghij", 2) == "ab"


def test_problems_are_listed_in_the_same_order_whatever_order_pydantic_reports():
    def error(*line_errors: dict) -> ValidationError:
        return ValidationError.from_exception_data("args", list(line_errors))

    missing = {"type": "missing", "loc": ("command",), "input": {}}
    extra = {"type": "extra_forbidden", "loc": ("cmd",), "input": "ls"}
    wrong = {"type": "int_type", "loc": ("n",), "input": "2"}
    texts = {_describe(error(*order)) for order in
             ([missing, extra, wrong], [wrong, extra, missing], [extra, missing, wrong])}
    assert texts == {"invalid arguments: missing field 'command'; unknown field 'cmd'; "
                     "'n': Input should be a valid integer"}


def test_a_call_with_many_bad_fields_gets_a_bounded_answer():
    @tool
    def one(a: int) -> int:
        """One parameter."""
        return a

    raw = json.dumps({f"field_{i}": i for i in range(5000)})
    with pytest.raises(ToolArgumentError) as refused:
        one.parse(raw)
    assert len(str(refused.value)) < 400
    assert str(refused.value).endswith("and 4996 more")


def test_a_validators_refusal_reads_in_its_own_words_without_pydantics_prefix():
    from pydantic import field_validator

    class Note(BaseModel):
        content: str

        @field_validator("content")
        @classmethod
        def not_blank(cls, value: str) -> str:
            if not value.strip():
                raise ValueError("content must not be blank")
            if len(value) >= 10:
                raise ValueError("content must be short")
            return value

    for content, said in (("  ", "'content': content must not be blank"),
                          ("x" * 20, "'content': content must be short")):
        with pytest.raises(ValidationError) as caught:
            Note(content=content)
        text = _describe(caught.value)
        assert text == f"invalid arguments: {said}"
        assert "Value error" not in text
