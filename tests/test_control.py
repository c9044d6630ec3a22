"""Execution control (seed 004): command templates, the call log, the tool switch."""

from __future__ import annotations

import re

import pytest

from harness import Agent, Hooks, Permissions, ScriptedModel, say, tool, tool_call
from harness import CommandTool

ECHO = CommandTool("echo_id", "Echo a record id.", template="echo --id {record_id}",
                   params={"record_id": "the record id"})


def run_with(tool_, *arguments: dict, hooks: Hooks | None = None):
    steps = [tool_call(tool_.name, a, id=f"c{i}") for i, a in enumerate(arguments)]
    return Agent(ScriptedModel([*steps, say("done")]), [tool_], hooks=hooks).run("go")


def results(result) -> list:
    return [e for e in result.events if e.type == "tool_result"]


def test_a_template_parameter_is_one_argv_element_and_output_comes_back_as_text():
    out = results(run_with(ECHO, {"record_id": "ORD-1001"}))[0]
    assert out.ok
    assert out.output.splitlines()[0] == "exit status 0"
    assert "--id ORD-1001" in out.output


@pytest.mark.parametrize("value", [
    "x; rm -rf /", "x && id", "$(id)", "`id`", "a\nb", "--help", "-rf", "x|id", "x > f", "",
])
def test_injection_attempts_are_refused_before_anything_runs(value):
    seen = []
    hooks = Hooks()
    hooks.on("pre_tool_use", lambda e: seen.append(e.runnable))
    out = results(run_with(ECHO, {"record_id": value}, hooks=hooks))[0]
    assert not out.ok and out.status == "invalid_arguments" and not out.ran
    assert seen == [False]  # refused at validation: the hook is told it cannot run


def test_the_model_cannot_add_arguments_or_another_field():
    out = results(run_with(ECHO, {"record_id": "A-1", "command": "id"}))[0]
    assert out.status == "invalid_arguments" and "unknown field 'command'" in out.output


def test_a_template_must_use_every_parameter_and_fix_its_program():
    with pytest.raises(ValueError, match="every parameter"):
        CommandTool("t", "d", template="echo {a}", params={"a": "x", "b": "y"})
    with pytest.raises(ValueError, match="program"):
        CommandTool("t", "d", template="{prog} --x", params={"prog": "x"})


def test_a_failing_command_reports_its_exit_status_and_stderr(tmp_path):
    (tmp_path / "fail.py").write_text("import sys\nsys.stderr.write('no such record')\n"
                                      "sys.exit(3)\n", encoding="utf-8")
    failing = CommandTool("q", "d", template="python fail.py {x}", params={"x": "id"},
                          cwd=tmp_path)
    out = results(run_with(failing, {"x": "ORD-1"}))[0]
    assert not out.ok and out.status == "error"
    assert out.output.startswith("exit status 3") and "no such record" in out.output


def test_a_command_that_runs_too_long_is_killed():
    slow = CommandTool("slow", "d", template="sleep {s}", params={"s": "seconds"}, timeout=0.3)
    out = results(run_with(slow, {"s": "30"}))[0]
    assert not out.ok and "timed out" in out.output


def test_a_call_id_is_never_executed_twice():
    count = []

    @tool
    def bump() -> int:
        """Count a call."""
        count.append(1)
        return len(count)

    model = ScriptedModel([tool_call("bump", id="same"), tool_call("bump", id="same"), say("ok")])
    result = Agent(model, [bump]).run("go")
    assert count == [1]
    assert results(result)[1].status == "duplicate_id"


def test_a_switched_off_tool_is_refused_at_call_time_and_stays_in_the_catalogue():
    @tool
    def ping() -> str:
        """Ping."""
        ping.enabled = False  # switched off by the first call itself
        return "pong"

    model = ScriptedModel([tool_call("ping", id="c1"), tool_call("ping", id="c2"), say("ok")])
    result = Agent(model, [ping]).run("go")
    assert [r.status for r in results(result)] == ["ok", "disabled"]
    assert [t["function"]["name"] for t in model.requests[2]["tools"]] == ["ping"]


def test_permissions_cannot_be_changed_after_they_are_made():
    perms = Permissions({"run_shell": "deny"})
    for name, value in (("default", "allow"), ("rules", {"run_shell": "allow"}),
                        ("approve", lambda *a: True)):
        with pytest.raises(AttributeError, match="fixed"):
            setattr(perms, name, value)
    assert perms.decide("run_shell") == "deny" and perms.decide("other") == "deny"


@pytest.mark.parametrize("template, params, says", [
    ("echo {a} {b}", {"a": "first"}, "uses ['b'], which params does not describe"),
    ("echo {a}", {"a": "first", "b": "second"}, "does not use ['b']"),
    ("echo {a!r}", {"a": "first"}, "plain {name}"),
    ("echo {a:>9}", {"a": "first"}, "plain {name}"),
    ("echo {a", {"a": "first"}, "literal brace"),
    ("{a} --help", {"a": "the program"}, "must be fixed"),
])
def test_a_template_that_cannot_be_filled_fails_when_made_not_at_every_call(template, params,
                                                                            says):
    with pytest.raises(ValueError, match=re.escape(says)):
        CommandTool("echo", "Echo.", template=template, params=params)


def test_literal_braces_in_a_template_are_kept(tmp_path):
    echo = CommandTool("echo", "Echo.", template="echo {{x}} {a}", params={"a": "a word"})
    assert echo.execute(echo.parse('{"a": "hi"}')).output == "exit status 0\nstdout:\n{x} hi"
