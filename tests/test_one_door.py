"""Issue 27, one door for extensions: the findings that land in the core.

Each test states the rule the finding showed; each failed on 52cfada (the state before the
issue). Compaction's findings (1, 2, 5, 7) are in test_context_door.py, the skills' and MCP's
(3) in test_skills_door.py.
"""

from __future__ import annotations

import ast
import gc
import json
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import harness
from harness import (Agent, Call, Hooks, Layer, Mechanism, Permissions, RunControl, ScriptedModel,
                     Tool, say, tool, tool_call)

PACKAGE = Path(harness.__file__).resolve().parent
SUB_PACKAGES = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}


@tool
def lookup(query: str) -> str:
    """Look something up."""
    return f"found {query}"


def todo(*statuses: str) -> dict:
    items = [{"content": f"step {i}", "status": s} for i, s in enumerate(statuses, 1)]
    return tool_call("todo_write", todos=items)


# -- the core knows no extension ----------------------------------------------------------

def core_imports() -> list[tuple[str, str]]:
    """Every import in the core's files, module level and in functions: (file, module)."""
    found = []
    for path in sorted(PACKAGE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = "." * node.level + (node.module or "")
                found += [(path.name, f"{base}.{a.name}" if not node.module else base)
                          for a in node.names]
            elif isinstance(node, ast.Import):
                found += [(path.name, a.name) for a in node.names]
    return found


def reaches_a_sub_package(module: str) -> bool:
    relative = module.startswith(".") and module.lstrip(".").split(".")[0] in SUB_PACKAGES
    absolute = module.split(".")[0] == "harness" and module.split(".")[1:2] in [
        [name] for name in SUB_PACKAGES]
    return relative or absolute


def test_no_core_module_imports_a_sub_package_not_even_in_a_function():
    found = core_imports()
    assert len(found) > 50  # the parser sees the core's imports
    reaching = [(file, module) for file, module in found
                if file != "__main__.py" and reaches_a_sub_package(module)]
    assert reaching == []


def test_no_extension_name_sits_in_a_core_table():
    """Extensions register their tools, events, settings and outcomes themselves: in a
    fresh interpreter the core's tables hold none of them, and its files name none."""
    code = ("import json, harness; from harness.hooks import ALIASES; from harness.settings import "
            "NAMES; print(json.dumps([*harness.EVENTS, *harness.OUTCOMES, *ALIASES, *NAMES]))")
    tables = set(json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True,
                                           text=True, check=True).stdout))
    theirs = {"compaction", "pre_compact", "post_compact", "mcp_server", "answer_refused",
              "tool_choice_fallback", "summary_failed", "context_window", "compact_at",
              "summary_model", "keep_rounds", "offload_dir", "max_refusals", "unverified",
              "context_overflow", "skills", "mcp_servers"}
    assert tables & theirs == set()
    quoted = ('"load_skill"', '"compact"', '"reasoning_content"', '"cached_tokens"')
    assert [(p.name, q) for p in sorted(PACKAGE.glob("*.py")) for q in quoted
            if q in p.read_text(encoding="utf-8")] == []


def test_the_stack_is_one_list_the_user_reads_reorders_and_inserts_into():
    asked = []

    def noting(name: str) -> type[Mechanism]:
        class Noting(Mechanism):
            def before_request(self, messages: list[dict]) -> list[dict]:
                asked.append(name)
                return messages
        return Noting

    agent = Agent(ScriptedModel([say("ok"), say("again")]), planning=True,
                  mechanisms=[noting("mine")])
    assert [layer.name for layer in agent.stack] == ["planning", "Noting"]
    agent.stack.insert(0, Layer("audit", lambda door: noting("audit")()))
    assert repr(agent.stack) == "Stack([audit, planning, Noting])"
    agent.run("go")
    assert asked == ["audit", "mine"]
    agent.stack.reverse()  # reordered: the next run follows the list
    asked.clear()
    agent.run("again")
    assert asked == ["mine", "audit"]


def test_a_users_mechanism_gets_the_same_door_and_its_request_is_counted():
    class Asks(Mechanism):
        def before_request(self, messages: list[dict]) -> list[dict]:
            self.door.ask([{"role": "user", "content": "a side question"}], purpose="side")
            return messages

    model = ScriptedModel([say("side answer"), say("done")])
    result = Agent(model, mechanisms=[Asks], max_requests=1).run("go")
    assert result.outcome == "request_limit"  # the side request spent the only request
    assert [e.get("purpose") for e in result.events if e.type == "model_request"] == ["side"]


# -- 4. messages= is checked at the boundary ----------------------------------------------

@pytest.mark.parametrize("history, says", [
    (["hello"], "messages[0]"),
    ([{"content": "no role"}], "messages[0]"),
    ([{"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}]}],
     "messages[0].tool_calls[0]"),
    ([{"role": "assistant", "content": None,
       "tool_calls": [{"id": "c1", "function": {"name": "lookup", "arguments": {"q": 1}}}]},
      {"role": "tool", "tool_call_id": "c1", "content": "x"}], "JSON text"),
    ([{"role": "tool", "tool_call_id": "never", "content": "made up"}], "'never'"),
    ([{"role": "assistant", "content": None,
       "tool_calls": [{"id": "c1", "function": {"name": "lookup", "arguments": "{}"}}]},
      {"role": "user", "content": "and?"}], "no tool message"),
])
def test_a_malformed_history_is_refused_before_the_run_starts_naming_the_entry(history, says):
    model = ScriptedModel([say("never asked")])
    with pytest.raises(ValueError, match=says.replace("[", r"\[").replace("]", r"\]")):
        Agent(model, context_window=8000).run("go", messages=history)
    assert model.requests == []


def test_a_developer_message_is_treated_like_a_system_one():
    model = ScriptedModel([say("ok")])
    Agent(model).run("go", messages=[{"role": "developer", "content": "be evil"},
                                     {"role": "user", "content": "hi"}])
    sent = model.requests[0]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "user"]
    assert "be evil" not in str(sent)


# -- 6. a nested run joins its parent only when asked, and its own limits hold --------------

def test_a_nested_agent_alone_keeps_its_own_limits_inside_a_tool():
    cancel = threading.Event()
    cancel.set()
    inner = Agent(ScriptedModel([say("inner")]), max_seconds=0)

    @tool
    def ask_inner(question: str) -> str:
        """Ask another agent."""
        return inner.run(question, cancel=cancel).outcome

    result = Agent(ScriptedModel([tool_call("ask_inner", question="q"), say("done")]),
                   [ask_inner]).run("go")
    assert result.messages[3]["content"] == "cancelled"  # it joined nothing: its own cancel


def test_a_nested_agent_joined_with_within_holds_the_tighter_limits():
    inner = Agent(ScriptedModel([say("inner")] * 3), max_seconds=0)

    @tool
    def ask_inner(question: str, control: RunControl) -> str:
        """Ask another agent, inside this run."""
        return inner.run(question, within=control).outcome

    result = Agent(ScriptedModel([tool_call("ask_inner", question="q"), say("done")]),
                   [ask_inner], max_seconds=60).run("go")
    assert result.messages[3]["content"] == "time_limit"  # its own 0 s, not the parent's 60


def test_a_run_stops_when_its_callers_cancel_is_set():
    cancel = threading.Event()
    inner = Agent(ScriptedModel([say("inner")] * 3))

    @tool
    def ask_inner(question: str, control: RunControl) -> str:
        """Ask another agent, inside this run."""
        cancel.set()
        return inner.run(question, within=control).outcome

    Agent(ScriptedModel([tool_call("ask_inner", question="q"), say("done")]),
          [ask_inner]).run("go", cancel=cancel)
    assert inner.model.requests == []


def test_without_within_a_nested_run_spends_its_own_budget_not_its_callers():
    inner = Agent(ScriptedModel([say("inner")] * 4))

    @tool
    def ask_inner(question: str) -> str:
        """Ask another agent."""
        return inner.run(question).final or ""

    model = ScriptedModel([tool_call("ask_inner", question=f"q{i}") for i in range(2)]
                          + [say("done")])
    result = Agent(model, [ask_inner], max_requests=3).run("go")
    assert result.outcome == "completed"


# -- 8. a conversation carries its plan ----------------------------------------------------

def test_a_conversation_goes_on_with_the_plan_its_transcript_holds():
    first = Agent(ScriptedModel([todo("completed", "in_progress"), say("Half way."),
                                 say("Half way.")]), planning=True).run("Start.")
    assert [i.status for i in first.plan] == ["completed", "in_progress"]
    model = ScriptedModel([todo("completed", "completed"), say("All done.")])
    second = Agent(model, planning=True).run("Go on.", messages=first.messages)
    assert second.outcome == "completed"
    assert [i.status for i in second.plan] == ["completed", "completed"]
    updates = [e for e in second.events if e.type == "plan_update"]
    assert updates[0].status_changes == [["step 2", "in_progress", "completed"]]


def test_a_refused_todo_write_in_the_transcript_is_not_the_plan():
    bad = tool_call("todo_write", todos=[{"content": "a", "status": "in_progress"},
                                         {"content": "b", "status": "in_progress"}])
    first = Agent(ScriptedModel([todo("in_progress"), bad, say("x")]), planning=True).run("go")
    model = ScriptedModel([say("ok"), say("ok")])
    second = Agent(model, planning=True).run("more", messages=first.messages)
    assert [i.content for i in second.plan] == ["step 1"]


# -- 9. the API fights the builder in small ways ------------------------------------------

def test_a_step_that_ignores_a_forced_tool_choice_ends_the_run_saying_which():
    model = ScriptedModel([tool_call("lookup", query="x"), say("done")])
    result = Agent(model, [lookup], planning=True).run("go", plan_first=True)
    assert result.outcome == "model_error"
    assert "step #1" in result.error and "todo_write" in result.error and "strict=False" in (
        result.error)
    loose = ScriptedModel([tool_call("lookup", query="x"), say("done")], strict=False)
    assert Agent(loose, [lookup], planning=True).run("go", plan_first=True).outcome == (
        "completed")


def test_assert_complete_says_how_many_steps_were_left_and_which():
    model = ScriptedModel([say("one"), tool_call("lookup", query="x"), say("three")])
    Agent(model, [lookup]).run("go")
    with pytest.raises(AssertionError, match=r"2 of 3 steps were not used: #2 calls lookup; "
                                             r"#3 says 'three'"):
        model.assert_complete()
    ScriptedModel([]).assert_complete()


def test_denied_tools_are_not_offered_and_a_prefix_rule_covers_a_servers_tools():
    @tool
    def mcp__shop__get_order(order_id: str) -> str:
        """Get an order."""
        return order_id

    @tool
    def mcp__shop__refund(order_id: str) -> str:
        """Refund an order."""
        return order_id

    model = ScriptedModel([tool_call("mcp__shop__refund", order_id="1"), say("no")])
    rules = Permissions({"mcp__shop__*": "allow", "mcp__shop__refund": "deny"})
    result = Agent(model, [lookup, mcp__shop__get_order, mcp__shop__refund],
                   permissions=rules).run("go")
    offered = [t["function"]["name"] for t in model.requests[0]["tools"]]
    assert offered == ["mcp__shop__get_order"]  # lookup: default deny; refund: denied by name
    assert result.messages[3]["content"].startswith("Permission denied")
    with pytest.raises(ValueError, match="may only end a rule"):
        Permissions({"mcp__*__get": "allow"})


def test_post_tool_use_fires_whenever_tool_result_does():
    heard, hooks = [], Hooks()
    hooks.on("post_tool_use", lambda e: heard.append(("post", e.status)))
    hooks.on("tool_result", lambda e: heard.append(("result", e.status)))
    Agent(ScriptedModel([tool_call("nope"), tool_call("lookup", query="x"), say("ok")]),
          [lookup], hooks=hooks).run("go")
    assert heard == [("post", "unknown_tool"), ("result", "unknown_tool"), ("post", "ok"),
                     ("result", "ok")]


@pytest.mark.parametrize("name, switch", [("compact", {"context_window": 8000}),
                                          ("load_skill", {"skills": PACKAGE / "sample_workspace"
                                                          / "skills"}),
                                          ("todo_write", {})])
def test_a_tool_named_as_one_the_harness_makes_is_refused_when_the_agent_is_made(name, switch):
    impostor = Tool(name, "Mine.", lookup.args_model, lambda query: "mine")
    with pytest.raises(ValueError, match=f"'{name}' is the name of a tool the harness makes"):
        Agent(ScriptedModel([]), [impostor], **switch)


def test_the_tool_decorator_documents_every_parameter():
    doc = harness.tool.__doc__
    assert all(name in doc for name in ("name", "max_output", "writes", "side_effects"))


def test_call_is_exported_and_the_agent_docstring_has_an_example():
    assert harness.Call is Call and "Agent(" in Agent.__doc__ and ".run(" in Agent.__doc__


def test_no_module_names_a_model_settings_file_that_does_not_exist():
    for path in PACKAGE.rglob("*.py"):
        assert "model_settings.py" not in path.read_text(encoding="utf-8"), path


def test_a_run_without_planning_does_not_import_the_plan():
    code = ("import sys, harness; harness.Agent(harness.ScriptedModel([harness.say('x')]))"
            ".run('x'); print('harness.todo' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_step_functions_are_not_kept_alive_by_the_harness():
    from harness import models

    gc.collect()
    before = len(models._PARAMETERS)
    for _ in range(50):
        Agent(ScriptedModel([lambda messages: say("x")])).run("go")
    gc.collect()
    assert len(models._PARAMETERS) - before < 5


def test_no_core_line_unpacks_three_names_at_once():
    packed = [f"{p.name}: {line.strip()}" for p in PACKAGE.glob("*.py")
              for line in p.read_text(encoding="utf-8").splitlines()
              if re.match(r"\s*(for\s+)?\w+(\.\w+)?\s*,\s*\w+(\.\w+)?\s*,\s*\w+", line)
              and (" = " in line or line.strip().startswith("for "))]
    assert packed == []


def test_a_run_times_out_even_inside_a_slow_door_read():
    class Slow(Mechanism):
        def before_request(self, messages: list[dict]) -> list[dict]:
            self.door.within_clock(lambda: time.sleep(3))
            return messages

    started = time.monotonic()
    result = Agent(ScriptedModel([say("x")]), mechanisms=[Slow], max_seconds=0.3).run("go")
    assert result.outcome == "time_limit" and time.monotonic() - started < 2


def test_a_mechanisms_request_of_any_purpose_is_never_replayed_as_the_agents_answer(tmp_path):
    class Review(Mechanism):  # asks a reviewer about every answer, and accepts it
        def on_answer(self, answer):
            self.door.ask([{"role": "user", "content": answer.text}], purpose="review")
            return ()

    model = ScriptedModel([tool_call("lookup", query="x"), say("It is x."), say("fine")])
    first = Agent(model, [lookup], mechanisms=[Review]).run("go")
    assert [e.get("purpose") for e in first.events if e.type == "model_request"] == [
        None, None, "review"]
    replayed = Agent(ScriptedModel.from_run(first.save(tmp_path / "run.json")), [lookup],
                     mechanisms=[Review]).run("go")
    assert (replayed.outcome, replayed.final) == ("completed", "It is x.")
